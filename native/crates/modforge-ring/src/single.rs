//! Scalar Montgomery arithmetic with everything precomputed per modulus:
//! the fast path of single operations (`Ring.mul`, `Ring.sqr`, short
//! `sqr_n`, leaving the fold's digits) and the building block of the RSA
//! kernel (the `modforge-rsa` crate).
//!
//! Every function here is constant time in the data: loop counts depend only
//! on the limb count, and the only conditional operations are masked
//! subtractions.  The MULX/ADX inner loop of [`crate::adx`] is used when the
//! dispatcher says the CPU has it ([`crate::dispatch::scalar_mont`]).

use modforge_ct::{ct_sub_if_ge, opaque_u64};

use crate::fold::{FoldPlan, DIGIT_BITS, DIGIT_MASK};
use crate::portable;

/// `-m^-1 mod 2^64` and the modulus, with the choice of inner loop.
#[derive(Clone, Debug)]
pub struct Mont {
    pub m: Vec<u64>,
    pub m0inv: u64,
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // the MULX/ADX loop exists only on x86-64
    adx: bool,
}

#[inline(always)]
fn mac(acc: u64, x: u64, y: u64, carry: u64) -> (u64, u64) {
    let w = acc as u128 + (x as u128) * (y as u128) + carry as u128;
    (w as u64, (w >> 64) as u64)
}

impl Mont {
    /// `adx` must only be true when the CPU has BMI2 and ADX (the dispatcher
    /// decides; see [`crate::dispatch::scalar_mont`]).
    pub fn new(m: &[u64], adx: bool) -> Self {
        Mont { m: m.to_vec(), m0inv: portable::neg_inv_u64(m[0]), adx }
    }

    pub fn n(&self) -> usize {
        self.m.len()
    }

    /// Scratch for every function below: `2n + 1` limbs.
    pub fn scratch(&self) -> Vec<u64> {
        vec![0u64; 2 * self.n() + 1]
    }

    /// Almost-Montgomery product `a*b/R (+ m)`, `< R` for `a, b < R`;
    /// `< 2m` when also `b < m`.
    pub fn amm(&self, out: &mut [u64], a: &[u64], b: &[u64], t: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.adx {
            // SAFETY: `adx` is set only when the CPU has BMI2 and ADX.
            unsafe { crate::adx::amm_mul_raw(out, a, b, &self.m, self.m0inv, t) };
            return;
        }
        let n = self.n();
        portable::amm_mul(out, a, b, &self.m, self.m0inv, &mut t[..n + 2]);
    }

    /// Almost-Montgomery square, as [`Mont::amm`] with `b = a`.
    pub fn amm_sqr(&self, out: &mut [u64], a: &[u64], t: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.adx {
            // SAFETY: as above.
            unsafe { crate::adx::amm_sqr_raw(out, a, &self.m, self.m0inv, t) };
            return;
        }
        portable::amm_sqr(out, a, &self.m, self.m0inv, t);
    }

    /// REDC of the `2n`-limb value in `t[..2n]` (`t` has `2n + 1` limbs and
    /// is clobbered): `(T + QN)/R`, minus `m` (masked) when it reaches `R`,
    /// so `< R` for every `T < R^2`.
    pub fn redc(&self, out: &mut [u64], t: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.adx {
            // SAFETY: as above.
            unsafe { crate::adx::redc_amm_raw(out, t, &self.m, self.m0inv) };
            return;
        }
        let n = self.n();
        let m = &self.m;
        let mut carry = 0u64;
        for i in 0..n {
            let q = t[i].wrapping_mul(self.m0inv);
            let mut c = 0u64;
            for j in 0..n {
                (t[i + j], c) = mac(t[i + j], q, m[j], c);
            }
            let w = t[i + n] as u128 + c as u128 + carry as u128;
            t[i + n] = w as u64;
            carry = (w >> 64) as u64;
        }
        let mask = opaque_u64(carry.wrapping_neg());
        let mut borrow = 0u64;
        for j in 0..n {
            let w = (t[n + j] as u128).wrapping_sub((m[j] & mask) as u128).wrapping_sub(borrow as u128);
            out[j] = w as u64;
            borrow = (w >> 127) as u64;
        }
    }

    /// Canonical `a*b/R mod m` for `a < R`, `b < m`: the product is `< 2m`,
    /// one masked subtraction.
    pub fn mul_canon(&self, out: &mut [u64], a: &[u64], b: &[u64], t: &mut [u64]) {
        self.amm(out, a, b, t);
        ct_sub_if_ge(out, &self.m);
    }
}

/// The exact value of fold digits (each `< 2^64`, value `< 2^(64 * limbs)`)
/// as `limbs` limbs, in constant time: one carry pass over the digits (fixed
/// length, no data-dependent loop), then the 50-bit digits are packed.
pub fn digits_to_limbs(d: &[u64], limbs: usize) -> Vec<u64> {
    let mut norm = vec![0u64; d.len() + 2];
    let mut carry = 0u64;
    for (j, &x) in d.iter().enumerate() {
        let v = x as u128 + carry as u128;
        norm[j] = (v as u64) & DIGIT_MASK;
        carry = (v >> DIGIT_BITS) as u64;
    }
    norm[d.len()] = carry & DIGIT_MASK;
    norm[d.len() + 1] = carry >> DIGIT_BITS;
    let mut out = vec![0u64; limbs];
    for (j, &x) in norm.iter().enumerate() {
        let bit = DIGIT_BITS as usize * j;
        let (w, b) = (bit / 64, bit % 64);
        if w < limbs {
            out[w] |= x << b;
        }
        if b > 14 && w + 1 < limbs {
            out[w + 1] |= x >> (64 - b);
        }
    }
    out
}

/// Canonical value of a fold loop form: the digits as `2n` limbs, one REDC
/// (`X/R`, `< R`), then one product with `R^2 mod m` (`X mod m`, `< 2m`) and
/// a masked subtraction.  About 1.5 scalar products, constant time.
pub fn fold_leave(plan: &FoldPlan, mont: &Mont, r2: &[u64], s: &[u64]) -> Vec<u64> {
    let n = mont.n();
    let mut t = digits_to_limbs(s, 2 * n + 1);
    let mut a = vec![0u64; n];
    mont.redc(&mut a, &mut t);
    let mut out = vec![0u64; n];
    mont.mul_canon(&mut out, &a, r2, &mut t);
    debug_assert_eq!(plan.ctx.m, mont.m);
    out
}

/// Canonical value of a 32-bit-product fold loop form, as [`fold_leave`]:
/// the digits as `2n + 1` limbs (a loop value is below `2^(rL)`, well
/// under `R^2`), one REDC, one product with `R^2 mod m`, a masked
/// subtraction.  Constant time.
pub fn fold32_leave(plan: &crate::fold32::Fold32Plan, mont: &Mont, r2: &[u64], s: &[u64]) -> Vec<u64> {
    let n = mont.n();
    let mut t = crate::fold32::digits_to_limbs(s, 2 * n + 1, plan.r);
    let mut a = vec![0u64; n];
    mont.redc(&mut a, &mut t);
    let mut out = vec![0u64; n];
    mont.mul_canon(&mut out, &a, r2, &mut t);
    modforge_ct::zeroize(&mut a);
    modforge_ct::zeroize(&mut t);
    out
}

/// A modulus prepared for [`Divisor::reduce`]: shifted left so that its top
/// bit is set.  Not constant time (quotient estimates are corrected in
/// data-dependent loops): for public data only (the rings' single
/// operations), never for the RSA kernel.
#[derive(Clone, Debug)]
pub struct Divisor {
    shift: u32,
    /// `m << shift`, `n` limbs, top bit set.
    norm: Vec<u64>,
}

impl Divisor {
    pub fn new(m: &[u64]) -> Self {
        let n = m.len();
        let shift = m[n - 1].leading_zeros();
        Divisor { shift, norm: shl(m, shift, n) }
    }

    /// `x mod m`, canonical (`n` limbs), for `x` of any length: long
    /// division one 64-bit quotient digit at a time, each digit an
    /// underestimate from the top 128 bits (divided by the top limb plus
    /// one), subtracted, and repeated until the top limb clears; at most one
    /// subtraction at the end.  About `(len(x) - n)` passes of `n` limbs.
    pub fn reduce(&self, x: &[u64]) -> Vec<u64> {
        let n = self.norm.len();
        let mut r = shl(x, self.shift, x.len().max(n) + 1);
        let d = self.norm[n - 1] as u128 + 1;
        let mut i = r.len() - 1;
        while i >= n {
            while r[i] != 0 {
                let top = ((r[i] as u128) << 64) | r[i - 1] as u128;
                let q = (top / d).min(u64::MAX as u128) as u64;
                submul(&mut r[i - n..=i], &self.norm, q.max(1));
            }
            i -= 1;
        }
        let r = &mut r[..n];
        while !portable::less_than(r, &self.norm) {
            submul(r, &self.norm, 1);
        }
        // Undo the shift.
        let mut out = vec![0u64; n];
        for j in 0..n {
            let hi = if self.shift > 0 && j + 1 < n { r[j + 1] << (64 - self.shift) } else { 0 };
            out[j] = (r[j] >> self.shift) | hi;
        }
        out
    }
}

/// `x << s` (`s < 64`) in `len` limbs.
fn shl(x: &[u64], s: u32, len: usize) -> Vec<u64> {
    let mut out = vec![0u64; len];
    let mut carry = 0u64;
    for (j, &w) in x.iter().enumerate() {
        out[j] = (w << s) | carry;
        carry = if s > 0 { w >> (64 - s) } else { 0 };
    }
    if x.len() < len {
        out[x.len()] = carry;
    }
    out
}

/// `r -= q * m` where `r` has one limb more than `m` and the result is
/// non-negative.
fn submul(r: &mut [u64], m: &[u64], q: u64) {
    let mut borrow = 0u128; // product high part + borrow
    for j in 0..m.len() {
        let p = (m[j] as u128) * (q as u128) + borrow;
        let (d, b) = r[j].overflowing_sub(p as u64);
        r[j] = d;
        borrow = (p >> 64) + b as u128;
    }
    let last = r.len() - 1;
    if last >= m.len() {
        r[m.len()] = r[m.len()].wrapping_sub(borrow as u64);
    }
}
