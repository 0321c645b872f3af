//! G1 of BLS12-377, y^2 = x^3 + 1 over Fq: affine, Jacobian and XYZZ coordinates.
//!
//! The formulas are the Explicit-Formulas Database ones for a = 0 (named per function), the same
//! as the Python model's (python/modforge/zk/bls12_377.py), which the tests compare against.

use crate::fields::{Fq, BLS_X};

/// A cube root of unity in Fq such that (x, y) -> (BETA x, y) is [-x^2] on G1 (the model derives it).
pub const BETA: Fq = Fq::from_hex(
    "0x01ae3a4617c510eabc8756ba8f8c524eb8882a75cc9bc8e359064ee822fb5bffd1e945779fffffffffffffffffffffff",
);

/// The published generator (arkworks and gnark-crypto use the same one).
pub const GENERATOR: G1Affine = G1Affine {
    x: Fq::from_hex(
        "0x008848defe740a67c8fc6225bf87ff5485951e2caa9d41bb188282c8bd37cb5cd5481512ffcd394eeab9b16eb21be9ef",
    ),
    y: Fq::from_hex(
        "0x01914a69c5102eff1f674f5d30afeec4bd7fb348ca3e52d96d182ad44fb82305c2fe3d3634a9591afd82de55559c8ea6",
    ),
    infinity: false,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct G1Affine {
    pub x: Fq,
    pub y: Fq,
    pub infinity: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct G1Jacobian {
    pub x: Fq,
    pub y: Fq,
    pub z: Fq,
}

/// x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; the identity has ZZ = 0.
#[derive(Clone, Copy, Debug)]
pub struct G1Xyzz {
    pub x: Fq,
    pub y: Fq,
    pub zz: Fq,
    pub zzz: Fq,
}

impl G1Affine {
    pub const IDENTITY: Self = Self { x: Fq::ZERO, y: Fq::ZERO, infinity: true };

    pub fn new(x: Fq, y: Fq) -> Self {
        Self { x, y, infinity: false }
    }

    pub fn is_on_curve(&self) -> bool {
        self.infinity || self.y.square() == self.x.square().mul(&self.x).add(&Fq::ONE)
    }

    pub fn neg(&self) -> Self {
        Self { x: self.x, y: self.y.neg(), infinity: self.infinity }
    }

    /// G1 membership for a point on the curve: phi(P) == [-x^2] P (Scott 2021), two 64-bit
    /// multiplications instead of one by r, compared in Jacobian coordinates (no inversion).
    pub fn is_in_subgroup(&self) -> bool {
        if self.infinity {
            return true;
        }
        let x2p = G1Jacobian::from(*self).mul_u64(BLS_X).mul_u64(BLS_X);
        if x2p.is_identity() {
            return false;
        }
        // (beta x, y) == -(X/Z^2, Y/Z^3)
        let z2 = x2p.z.square();
        let z3 = z2.mul(&x2p.z);
        x2p.x == BETA.mul(&self.x).mul(&z2) && x2p.y.neg() == self.y.mul(&z3)
    }

    /// [k] self for k given as little-endian words (variable time: public scalars only).
    pub fn mul(&self, k: &[u64]) -> G1Jacobian {
        let mut acc = G1Jacobian::IDENTITY;
        for w in k.iter().rev() {
            for bit in (0..64).rev() {
                acc = acc.double();
                if (w >> bit) & 1 == 1 {
                    acc = acc.add_affine(self);
                }
            }
        }
        acc
    }
}

impl From<G1Affine> for G1Jacobian {
    fn from(p: G1Affine) -> Self {
        if p.infinity {
            Self::IDENTITY
        } else {
            Self { x: p.x, y: p.y, z: Fq::ONE }
        }
    }
}

impl G1Jacobian {
    pub const IDENTITY: Self = Self { x: Fq::ONE, y: Fq::ONE, z: Fq::ZERO };

    pub fn is_identity(&self) -> bool {
        self.z.is_zero()
    }

    /// dbl-2009-l.
    pub fn double(&self) -> Self {
        if self.is_identity() || self.y.is_zero() {
            return Self::IDENTITY;
        }
        let a = self.x.square();
        let b = self.y.square();
        let c = b.square();
        let d = self.x.add(&b).square().sub(&a).sub(&c).double();
        let e = a.double().add(&a);
        let f = e.square();
        let x3 = f.sub(&d.double());
        let y3 = e.mul(&d.sub(&x3)).sub(&c.double().double().double());
        let z3 = self.y.mul(&self.z).double();
        Self { x: x3, y: y3, z: z3 }
    }

    /// madd-2007-bl.
    pub fn add_affine(&self, p: &G1Affine) -> Self {
        if p.infinity {
            return *self;
        }
        if self.is_identity() {
            return Self::from(*p);
        }
        let z1z1 = self.z.square();
        let u2 = p.x.mul(&z1z1);
        let s2 = p.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y).double();
        if h.is_zero() {
            return if r.is_zero() { self.double() } else { Self::IDENTITY };
        }
        let hh = h.square();
        let i = hh.double().double();
        let j = h.mul(&i);
        let v = self.x.mul(&i);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&self.y.mul(&j).double());
        let z3 = self.z.add(&h).square().sub(&z1z1).sub(&hh);
        Self { x: x3, y: y3, z: z3 }
    }

    /// add-2007-bl.
    pub fn add(&self, o: &Self) -> Self {
        if self.is_identity() {
            return *o;
        }
        if o.is_identity() {
            return *self;
        }
        let z1z1 = self.z.square();
        let z2z2 = o.z.square();
        let u1 = self.x.mul(&z2z2);
        let u2 = o.x.mul(&z1z1);
        let s1 = self.y.mul(&o.z).mul(&z2z2);
        let s2 = o.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&u1);
        let r = s2.sub(&s1).double();
        if h.is_zero() {
            return if r.is_zero() { self.double() } else { Self::IDENTITY };
        }
        let i = h.double().square();
        let j = h.mul(&i);
        let v = u1.mul(&i);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&s1.mul(&j).double());
        let z3 = self.z.add(&o.z).square().sub(&z1z1).sub(&z2z2).mul(&h);
        Self { x: x3, y: y3, z: z3 }
    }

    pub fn neg(&self) -> Self {
        Self { x: self.x, y: self.y.neg(), z: self.z }
    }

    pub fn mul_u64(&self, k: u64) -> Self {
        let mut acc = Self::IDENTITY;
        for bit in (0..64).rev() {
            acc = acc.double();
            if (k >> bit) & 1 == 1 {
                acc = acc.add(self);
            }
        }
        acc
    }

    /// Many points to affine with one inversion (Montgomery's trick).
    pub fn batch_to_affine(points: &[Self]) -> Vec<G1Affine> {
        let mut prefix = Vec::with_capacity(points.len());
        let mut acc = Fq::ONE;
        for p in points {
            prefix.push(acc);
            if !p.is_identity() {
                acc = acc.mul(&p.z);
            }
        }
        let mut inv = acc.inverse();
        let mut out = vec![G1Affine::IDENTITY; points.len()];
        for (k, p) in points.iter().enumerate().rev() {
            if p.is_identity() {
                continue;
            }
            let zi = inv.mul(&prefix[k]);
            inv = inv.mul(&p.z);
            let zi2 = zi.square();
            out[k] = G1Affine::new(p.x.mul(&zi2), p.y.mul(&zi2).mul(&zi));
        }
        out
    }

    pub fn to_affine(&self) -> G1Affine {
        if self.is_identity() {
            return G1Affine::IDENTITY;
        }
        let zi = self.z.inverse();
        let zi2 = zi.square();
        G1Affine::new(self.x.mul(&zi2), self.y.mul(&zi2).mul(&zi))
    }
}

impl G1Xyzz {
    pub const IDENTITY: Self = Self { x: Fq::ONE, y: Fq::ONE, zz: Fq::ZERO, zzz: Fq::ZERO };

    pub fn is_identity(&self) -> bool {
        self.zz.is_zero()
    }

    pub fn from_affine(p: &G1Affine) -> Self {
        if p.infinity {
            Self::IDENTITY
        } else {
            Self { x: p.x, y: p.y, zz: Fq::ONE, zzz: Fq::ONE }
        }
    }

    /// dbl-2008-s-1.
    pub fn double(&self) -> Self {
        if self.is_identity() || self.y.is_zero() {
            return Self::IDENTITY;
        }
        let u = self.y.double();
        let v = u.square();
        let w = u.mul(&v);
        let s = self.x.mul(&v);
        let x2 = self.x.square();
        let m = x2.double().add(&x2);
        let x3 = m.square().sub(&s.double());
        let y3 = m.mul(&s.sub(&x3)).sub(&w.mul(&self.y));
        Self { x: x3, y: y3, zz: v.mul(&self.zz), zzz: w.mul(&self.zzz) }
    }

    /// The doubling of an affine point into XYZZ (mdbl-2008-s-1).
    pub fn double_affine(p: &G1Affine) -> Self {
        if p.infinity || p.y.is_zero() {
            return Self::IDENTITY;
        }
        let u = p.y.double();
        let v = u.square();
        let w = u.mul(&v);
        let s = p.x.mul(&v);
        let x2 = p.x.square();
        let m = x2.double().add(&x2);
        let x3 = m.square().sub(&s.double());
        let y3 = m.mul(&s.sub(&x3)).sub(&w.mul(&p.y));
        Self { x: x3, y: y3, zz: v, zzz: w }
    }

    /// madd-2008-s: the bucket step.
    pub fn add_affine(&self, p: &G1Affine) -> Self {
        if p.infinity {
            return *self;
        }
        if self.is_identity() {
            return Self::from_affine(p);
        }
        let u2 = p.x.mul(&self.zz);
        let s2 = p.y.mul(&self.zzz);
        let pp_ = u2.sub(&self.x);
        let r = s2.sub(&self.y);
        if pp_.is_zero() {
            return if r.is_zero() { Self::double_affine(p) } else { Self::IDENTITY };
        }
        let pp = pp_.square();
        let ppp = pp_.mul(&pp);
        let q = self.x.mul(&pp);
        let x3 = r.square().sub(&ppp).sub(&q.double());
        let y3 = r.mul(&q.sub(&x3)).sub(&self.y.mul(&ppp));
        Self { x: x3, y: y3, zz: self.zz.mul(&pp), zzz: self.zzz.mul(&ppp) }
    }

    /// add-2008-s.
    pub fn add(&self, o: &Self) -> Self {
        if self.is_identity() {
            return *o;
        }
        if o.is_identity() {
            return *self;
        }
        let u1 = self.x.mul(&o.zz);
        let u2 = o.x.mul(&self.zz);
        let s1 = self.y.mul(&o.zzz);
        let s2 = o.y.mul(&self.zzz);
        let pp_ = u2.sub(&u1);
        let r = s2.sub(&s1);
        if pp_.is_zero() {
            return if r.is_zero() { self.double() } else { Self::IDENTITY };
        }
        let pp = pp_.square();
        let ppp = pp_.mul(&pp);
        let q = u1.mul(&pp);
        let x3 = r.square().sub(&ppp).sub(&q.double());
        let y3 = r.mul(&q.sub(&x3)).sub(&s1.mul(&ppp));
        Self { x: x3, y: y3, zz: self.zz.mul(&o.zz).mul(&pp), zzz: self.zzz.mul(&o.zzz).mul(&ppp) }
    }

    pub fn neg(&self) -> Self {
        Self { x: self.x, y: self.y.neg(), zz: self.zz, zzz: self.zzz }
    }

    /// With Z = ZZZ/ZZ: 1/ZZ = (ZZ/ZZZ)^2, one inversion.
    pub fn to_affine(&self) -> G1Affine {
        if self.is_identity() {
            return G1Affine::IDENTITY;
        }
        let zzzi = self.zzz.inverse();
        let zzi = self.zz.mul(&zzzi).square();
        G1Affine::new(self.x.mul(&zzi), self.y.mul(&zzzi))
    }

    /// Jacobian with Z' = ZZ ZZZ, X' = X ZZ ZZZ^2, Y' = Y ZZ^3 ZZZ^2: no inversion.
    pub fn to_jacobian(&self) -> G1Jacobian {
        if self.is_identity() {
            return G1Jacobian::IDENTITY;
        }
        let z = self.zz.mul(&self.zzz);
        let z2 = z.square();
        let x = self.x.mul(&self.zz).mul(&self.zzz.square());
        let y = self.y.mul(&self.zz).mul(&z2);
        G1Jacobian { x, y, z }
    }
}
