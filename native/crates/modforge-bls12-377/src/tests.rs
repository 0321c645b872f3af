//! Oracles: num-bigint arithmetic for the fields, affine chord-and-tangent for the curve forms.

use crate::arith;
use crate::fields::{Fq, Fr, BLS_X};
use crate::g1::{G1Affine, G1Jacobian, G1Xyzz, GENERATOR};
use num_bigint::BigUint;

fn big<const N: usize>(w: &[u64; N]) -> BigUint {
    let mut out = BigUint::default();
    for x in w.iter().rev() {
        out = (out << 64u32) + BigUint::from(*x);
    }
    out
}

fn words<const N: usize>(v: &BigUint) -> [u64; N] {
    let digits = v.to_u64_digits();
    let mut out = [0u64; N];
    out[..digits.len()].copy_from_slice(&digits);
    out
}

/// xorshift64*: a small seeded generator (the seed is printed by the failing assertion).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn below<const N: usize>(&mut self, m: &[u64; N]) -> [u64; N] {
        loop {
            let mut w = [0u64; N];
            for x in w.iter_mut() {
                *x = self.next();
            }
            w[N - 1] &= (1u64 << (64 - m[N - 1].leading_zeros())) - 1;
            if !arith::geq(&w, m) {
                return w;
            }
        }
    }
}

#[test]
fn moduli_are_the_bls12_polynomials_of_x() {
    let x = BigUint::from(BLS_X);
    let r = &x * &x * &x * &x - &x * &x + 1u32;
    let q = (&x - 1u32) * (&x - 1u32) * &r / 3u32 + &x;
    assert_eq!(big(&Fq::MODULUS), q);
    assert_eq!(big(&Fr::MODULUS), r);
    assert_eq!(q.bits(), 377);
    assert_eq!(r.bits(), 253);
}

#[test]
fn derived_montgomery_constants() {
    let q = big(&Fq::MODULUS);
    assert_eq!(big(&Fq::R), (BigUint::from(1u32) << 384u32) % &q);
    assert_eq!(big(&Fq::R2), (BigUint::from(1u32) << 768u32) % &q);
    assert_eq!(Fq::MODULUS[0].wrapping_mul(Fq::INV), u64::MAX);
    let r = big(&Fr::MODULUS);
    assert_eq!(big(&Fr::R2), (BigUint::from(1u32) << 512u32) % &r);
    assert_eq!(Fr::MODULUS[0].wrapping_mul(Fr::INV), u64::MAX);
}

fn check_field_ops<const N: usize>(
    m: &[u64; N],
    from: impl Fn([u64; N]) -> Option<[u64; N]>,
    op: impl Fn(&[u64; N], &[u64; N], u8) -> [u64; N],
    seed: u64,
) {
    let mb = big(m);
    let mut rng = Rng(seed);
    let mut cases: Vec<[u64; N]> = vec![[0; N], words(&BigUint::from(1u32)), words(&(&mb - 1u32)), words(&(&mb >> 1u32))];
    let mut all_ones = [u64::MAX; N];
    all_ones[N - 1] = 0;
    cases.push(all_ones);
    for _ in 0..200 {
        cases.push(rng.below(m));
    }
    assert!(from(*m).is_none(), "the modulus itself must be refused");
    for a in &cases {
        for b in cases.iter().take(12) {
            let (ab, bb) = (big(a), big(b));
            assert_eq!(big(&op(a, b, 0)), &ab * &bb % &mb, "mul seed={seed}");
            assert_eq!(big(&op(a, b, 1)), (&ab + &bb) % &mb, "add seed={seed}");
            assert_eq!(big(&op(a, b, 2)), (&ab + &mb - &bb) % &mb, "sub seed={seed}");
        }
    }
}

fn fq_op(a: &[u64; 6], b: &[u64; 6], which: u8) -> [u64; 6] {
    let (x, y) = (Fq::from_canonical(*a).unwrap(), Fq::from_canonical(*b).unwrap());
    match which {
        0 => x.mul(&y),
        1 => x.add(&y),
        _ => x.sub(&y),
    }
    .to_canonical()
}

fn fr_op(a: &[u64; 4], b: &[u64; 4], which: u8) -> [u64; 4] {
    let (x, y) = (Fr::from_canonical(*a).unwrap(), Fr::from_canonical(*b).unwrap());
    match which {
        0 => x.mul(&y),
        1 => x.add(&y),
        _ => x.sub(&y),
    }
    .to_canonical()
}

#[test]
fn fq_matches_bigint() {
    check_field_ops(&Fq::MODULUS, |w| Fq::from_canonical(w).map(|v| v.to_canonical()), fq_op, 0x377);
}

#[test]
fn fr_matches_bigint() {
    check_field_ops(&Fr::MODULUS, |w| Fr::from_canonical(w).map(|v| v.to_canonical()), fr_op, 0x253);
}

#[test]
#[cfg(target_arch = "x86_64")]
fn adx_kernel_equals_the_portable_twin() {
    if !arith::uses_adx() {
        eprintln!("no ADX on this CPU: only the portable product runs");
        return;
    }
    let mut rng = Rng(0xadc);
    let m = Fq::MODULUS;
    let mut cases = vec![[0u64; 6], Fq::R, words(&(big(&m) - 1u32))];
    for _ in 0..2000 {
        cases.push(rng.below(&m));
    }
    for a in &cases {
        for b in cases.iter().take(20) {
            let fast = unsafe { crate::adx::mont_mul6(a, b, &m, Fq::INV) };
            assert_eq!(fast, arith::mont_mul_portable(a, b, &m, Fq::INV));
        }
    }
}

#[test]
fn inverse_and_pow() {
    let mut rng = Rng(7);
    for _ in 0..20 {
        let a = Fq::from_canonical(rng.below(&Fq::MODULUS)).unwrap();
        if !a.is_zero() {
            assert_eq!(a.mul(&a.inverse()), Fq::ONE);
        }
    }
    assert_eq!(Fq::ZERO.inverse(), Fq::ZERO);
}

fn affine_add(a: &G1Affine, b: &G1Affine) -> G1Affine {
    if a.infinity {
        return *b;
    }
    if b.infinity {
        return *a;
    }
    let slope = if a.x == b.x {
        if a.y.add(&b.y).is_zero() {
            return G1Affine::IDENTITY;
        }
        let x2 = a.x.square();
        x2.double().add(&x2).mul(&a.y.double().inverse())
    } else {
        b.y.sub(&a.y).mul(&b.x.sub(&a.x).inverse())
    };
    let x3 = slope.square().sub(&a.x).sub(&b.x);
    G1Affine::new(x3, slope.mul(&a.x.sub(&x3)).sub(&a.y))
}

#[test]
fn generator_on_curve_of_order_r_in_subgroup() {
    assert!(GENERATOR.is_on_curve());
    assert!(GENERATOR.mul(&Fr::MODULUS).is_identity());
    assert!(GENERATOR.is_in_subgroup());
}

#[test]
fn curve_forms_match_affine_addition() {
    let a = GENERATOR.mul(&[12345]).to_affine();
    let b = GENERATOR.mul(&[0xdead_beef, 77]).to_affine();
    let pairs = [
        (a, b),
        (a, a),
        (a, a.neg()),
        (a, G1Affine::IDENTITY),
        (G1Affine::IDENTITY, a),
        (G1Affine::IDENTITY, G1Affine::IDENTITY),
    ];
    for (p, q) in pairs {
        let expect = affine_add(&p, &q);
        assert_eq!(G1Jacobian::from(p).add_affine(&q).to_affine(), expect);
        assert_eq!(G1Jacobian::from(p).add(&G1Jacobian::from(q)).to_affine(), expect);
        assert_eq!(G1Xyzz::from_affine(&p).add_affine(&q).to_affine(), expect);
        assert_eq!(G1Xyzz::from_affine(&p).add(&G1Xyzz::from_affine(&q)).to_affine(), expect);
        // from a non-trivial Z
        let p3 = G1Xyzz::from_affine(&p).double().add_affine(&p.neg());
        assert_eq!(p3.add_affine(&q).to_affine(), expect);
        assert_eq!(p3.to_jacobian().add_affine(&q).to_affine(), expect);
        let j3 = G1Jacobian::from(p).double().add_affine(&p.neg());
        assert_eq!(j3.add_affine(&q).to_affine(), expect);
        assert_eq!(G1Xyzz::from_affine(&p).double().to_affine(), affine_add(&p, &p));
        assert_eq!(G1Xyzz::double_affine(&p).to_affine(), affine_add(&p, &p));
    }
}

#[test]
fn subgroup_check_rejects_points_outside_g1() {
    // x = 2: 2^3 + 1 = 9 = 3^2, so (2, 3) is on the curve; its order is not r
    let p = G1Affine::new(Fq::from_u64(2), Fq::from_u64(3));
    assert!(p.is_on_curve());
    assert!(!p.mul(&Fr::MODULUS).is_identity());
    assert!(!p.is_in_subgroup());
    // clearing the cofactor (x-1)^2/3 puts it in G1
    let h: u128 = (BLS_X as u128 - 1) * (BLS_X as u128 - 1) / 3;
    let cleared = p.mul(&[h as u64, (h >> 64) as u64]).to_affine();
    assert!(cleared.is_in_subgroup() && cleared.mul(&Fr::MODULUS).is_identity());
}

#[test]
fn batch_to_affine_matches_one_by_one() {
    let g = G1Jacobian::from(GENERATOR);
    let pts = vec![g.double(), G1Jacobian::IDENTITY, g.double().add_affine(&GENERATOR), g, G1Jacobian::IDENTITY];
    let one_by_one: Vec<G1Affine> = pts.iter().map(|p| p.to_affine()).collect();
    assert_eq!(G1Jacobian::batch_to_affine(&pts), one_by_one);
}
