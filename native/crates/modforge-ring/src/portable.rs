//! Portable Montgomery multiplication on little-endian `u64` limbs.
//!
//! Plain slice-based functions with no dependency beyond `core`: `u64` limbs,
//! `u128` products, word-serial CIOS ("coarsely integrated operand
//! scanning", Koç, Acar & Kaliski 1996).  A number of `n` limbs is a slice
//! `x` with value `sum(x[i] * 2^(64*i))`, least significant limb first.
//!
//! For an odd modulus `m` of `n` limbs the Montgomery radix is
//! `R = 2^(64*n)`, and [`mont_mul`] returns `a*b*R^-1 mod m`, canonical (in
//! `[0, m)`), for operands `0 <= a, b < m`.

/// Bits per limb.
pub const LIMB_BITS: u32 = 64;

/// `-m0^-1 mod 2^64` for an odd `m0` (the CIOS constant `m'`), by Newton
/// iteration.
///
/// `x = 3*m0 XOR 2` is an inverse of `m0` modulo `2^5` (Montgomery's trick),
/// and each step `x <- x*(2 - m0*x)` doubles the number of correct low bits:
/// 5, 10, 20, 40, 80 >= 64.
///
/// # Panics
/// If `m0` is even (no inverse exists).
pub fn neg_inv_u64(m0: u64) -> u64 {
    assert!(m0 & 1 == 1, "neg_inv_u64: m0 must be odd");
    let mut x = m0.wrapping_mul(3) ^ 2;
    for _ in 0..4 {
        x = x.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(x)));
    }
    debug_assert_eq!(m0.wrapping_mul(x), 1);
    x.wrapping_neg()
}

/// `acc + x*y + carry` as `(low, high)` words; never overflows `u128`:
/// `(2^64-1) + (2^64-1)^2 + (2^64-1) = 2^128 - 1`.
#[inline(always)]
fn mac(acc: u64, x: u64, y: u64, carry: u64) -> (u64, u64) {
    let w = acc as u128 + (x as u128) * (y as u128) + carry as u128;
    (w as u64, (w >> 64) as u64)
}

/// `x + y + carry` as `(sum, carry_out)`.
#[inline(always)]
fn adc(x: u64, y: u64, carry: u64) -> (u64, u64) {
    let w = x as u128 + y as u128 + carry as u128;
    (w as u64, (w >> 64) as u64)
}

/// `x - y - borrow` as `(difference, borrow_out)` with `borrow` in `{0, 1}`.
#[inline(always)]
fn sbb(x: u64, y: u64, borrow: u64) -> (u64, u64) {
    let w = (x as u128).wrapping_sub(y as u128).wrapping_sub(borrow as u128);
    (w as u64, (w >> 127) as u64)
}

/// Number of `u64` limbs of a value of `bits` bits (at least one).
pub fn limbs_for_bits(bits: u64) -> usize {
    (bits.max(1)).div_ceil(LIMB_BITS as u64) as usize
}

/// `out = a*b*R^-1 mod m`, canonical, with `R = 2^(64*n)`, `n = m.len()`.
///
/// Allocates its scratch; see [`mont_mul_with_scratch`] for loops.
///
/// Preconditions (the callers check them; only the lengths are asserted
/// here): `m` odd, `m0inv == neg_inv_u64(m[0])`, all slices `n` limbs long,
/// and `a*b < m*R`, which `a, b < m` guarantees.  The result is then
/// canonical; larger operands would leave it congruent but possibly `>= m`.
pub fn mont_mul(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64) {
    let mut t = vec![0u64; m.len() + 2];
    mont_mul_with_scratch(out, a, b, m, m0inv, &mut t);
}

/// [`mont_mul`] with caller-provided scratch `t` of `m.len() + 2` limbs.
///
/// Word-serial CIOS: for each limb `b[i]`, `t += a*b[i]`, then add
/// `q*m` with `q = t[0]*m' mod 2^64` so that the low limb cancels, and shift
/// `t` down one limb.  With `a, b < m` the running value stays `< 2m`, so the
/// top of `t` is at most one bit and one conditional subtraction (done
/// without a branch on the data) makes the result canonical.
///
/// # Panics
/// If the slice lengths disagree or `m` is empty.
pub fn mont_mul_with_scratch(
    out: &mut [u64],
    a: &[u64],
    b: &[u64],
    m: &[u64],
    m0inv: u64,
    t: &mut [u64],
) {
    let n = m.len();
    assert!(n > 0, "mont_mul: empty modulus");
    assert!(
        a.len() == n && b.len() == n && out.len() == n,
        "mont_mul: operands and output must have as many limbs as the modulus"
    );
    assert!(t.len() == n + 2, "mont_mul: scratch must have n + 2 limbs");
    debug_assert_eq!(m[0].wrapping_mul(m0inv), u64::MAX, "m0inv is not -m^-1 mod 2^64");

    t.fill(0);
    for &bi in b {
        // t += a * b[i]
        let mut c = 0u64;
        for j in 0..n {
            (t[j], c) = mac(t[j], a[j], bi, c);
        }
        let (s, c2) = adc(t[n], c, 0);
        t[n] = s;
        t[n + 1] = c2;

        // t = (t + q*m) / 2^64, with q chosen so that the low limb is zero
        let q = t[0].wrapping_mul(m0inv);
        let (_, mut c) = mac(t[0], q, m[0], 0);
        for j in 1..n {
            (t[j - 1], c) = mac(t[j], q, m[j], c);
        }
        let (s, c2) = adc(t[n], c, 0);
        t[n - 1] = s;
        t[n] = t[n + 1] + c2;
    }

    // Final conditional subtraction: out = t - m if t >= m, else t, where t
    // is the (n+1)-limb value t[0..=n].  Compute d = t - m into out, then
    // keep d unless the subtraction borrowed out of the top limb.
    let mut borrow = 0u64;
    for j in 0..n {
        (out[j], borrow) = sbb(t[j], m[j], borrow);
    }
    let (_, borrow) = sbb(t[n], 0, borrow);
    // borrow == 1 <=> t < m: keep t.  mask is all ones when keeping t.
    let keep_t = borrow.wrapping_neg();
    for j in 0..n {
        out[j] = (t[j] & keep_t) | (out[j] & !keep_t);
    }
}

/// Almost-Montgomery product (Gueron's AMM) with CIOS: `out = a*b*R^-1 + e*m`
/// with `e` in `{0, 1}` chosen so that `out < R`, for any `a, b < R`.
///
/// The CIOS value after the last step is `t = (a*b + Q*m)/R < (R*R + R*m)/R
/// = R + m`, so it has at most one bit above the `n` limbs; when that bit is
/// set, subtracting `m` once leaves `t - m < R`.  The subtraction is done
/// with a mask (no branch on the data).  `out` may alias neither `a` nor `b`
/// (Rust's borrow rules already forbid it); scratch `t` has `n + 2` limbs.
#[inline(always)]
pub fn amm_mul(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    let n = m.len();
    assert!(a.len() == n && b.len() == n && out.len() == n && t.len() == n + 2, "amm_mul: lengths");
    t.fill(0);
    for &bi in b {
        let mut c = 0u64;
        for j in 0..n {
            (t[j], c) = mac(t[j], a[j], bi, c);
        }
        let (s, c2) = adc(t[n], c, 0);
        t[n] = s;
        t[n + 1] = c2;
        let q = t[0].wrapping_mul(m0inv);
        let (_, mut c) = mac(t[0], q, m[0], 0);
        for j in 1..n {
            (t[j - 1], c) = mac(t[j], q, m[j], c);
        }
        let (s, c2) = adc(t[n], c, 0);
        t[n - 1] = s;
        t[n] = t[n + 1] + c2;
    }
    let mask = t[n].wrapping_neg();
    let mut borrow = 0u64;
    for j in 0..n {
        (out[j], borrow) = sbb(t[j], m[j] & mask, borrow);
    }
}

/// Almost-Montgomery square: `out = a^2*R^-1 + e*m < R` for any `a < R`
/// (the dedicated squaring of the portable backend).
///
/// The square is formed first (`n(n-1)/2` cross products, doubled by a shift,
/// plus the `n` diagonal squares: about half of a general product), then
/// reduced word by word (separated REDC): `n` steps each add `q*m*2^(64i)`
/// with `q = t[i]*m'` so that limb `i` cancels.  The result
/// `(a^2 + Q*m)/R < R + m` takes one masked subtraction, as in [`amm_mul`].
/// Scratch `t` has `2n + 1` limbs; `out` may not alias `a`.
#[inline(always)]
pub fn amm_sqr(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    let n = m.len();
    assert!(a.len() == n && out.len() == n && t.len() == 2 * n + 1, "amm_sqr: lengths");
    t.fill(0);
    // Cross products a[i]*a[j], i < j.
    for i in 0..n {
        let ai = a[i];
        let mut c = 0u64;
        for j in i + 1..n {
            (t[i + j], c) = mac(t[i + j], ai, a[j], c);
        }
        t[i + n] = c;
    }
    // Double (a^2 < R^2, so nothing leaves limb 2n-1) and add the diagonal.
    let mut top = 0u64;
    for w in t[..2 * n].iter_mut() {
        let v = *w;
        *w = (v << 1) | top;
        top = v >> 63;
    }
    let mut c = 0u64;
    for i in 0..n {
        let sq = (a[i] as u128) * (a[i] as u128);
        let (lo, c1) = adc(t[2 * i], sq as u64, c);
        let (hi, c2) = adc(t[2 * i + 1], (sq >> 64) as u64, c1);
        t[2 * i] = lo;
        t[2 * i + 1] = hi;
        c = c2;
    }
    // Separated REDC; `carry` is the bit pending above limb i + n.
    let mut carry = 0u64;
    for i in 0..n {
        let q = t[i].wrapping_mul(m0inv);
        let mut c = 0u64;
        for j in 0..n {
            (t[i + j], c) = mac(t[i + j], q, m[j], c);
        }
        let (s, c2) = adc(t[i + n], c, carry);
        t[i + n] = s;
        carry = c2;
    }
    let mask = carry.wrapping_neg();
    let mut borrow = 0u64;
    for j in 0..n {
        (out[j], borrow) = sbb(t[n + j], m[j] & mask, borrow);
    }
}

/// Montgomery reduction of a single-width value: `out = a*R^-1 mod m`,
/// canonical, for any `a < R` (leaving the Montgomery domain).
///
/// `(a + Q*m)/R < (R + R*m)/R = m + 1`, so the only non-canonical outcome is
/// `m` itself, which happens exactly when `a` is a multiple of `m`: one
/// masked subtraction.
pub fn redc_canonical(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    let n = m.len();
    assert!(a.len() == n && out.len() == n && t.len() == 2 * n + 1, "redc: lengths");
    t.fill(0);
    t[..n].copy_from_slice(a);
    let mut carry = 0u64;
    for i in 0..n {
        let q = t[i].wrapping_mul(m0inv);
        let mut c = 0u64;
        for j in 0..n {
            (t[i + j], c) = mac(t[i + j], q, m[j], c);
        }
        let (s, c2) = adc(t[i + n], c, carry);
        t[i + n] = s;
        carry = c2;
    }
    debug_assert_eq!(carry, 0);
    out.copy_from_slice(&t[n..2 * n]);
    sub_if_ge(out, m);
}

/// `x = x - m` when `x >= m` (masked, no branch on the data); `x` and `m`
/// have the same length.
pub fn sub_if_ge(x: &mut [u64], m: &[u64]) {
    let n = m.len();
    let mut borrow = 0u64;
    for j in 0..n {
        (_, borrow) = sbb(x[j], m[j], borrow);
    }
    // No borrow <=> x >= m: subtract m, else subtract 0.
    let mask = (borrow ^ 1).wrapping_neg();
    let mut borrow = 0u64;
    for j in 0..n {
        (x[j], borrow) = sbb(x[j], m[j] & mask, borrow);
    }
}

/// `x mod m` for a value `x` of any number of limbs, canonical, `m.len()`
/// limbs.  Plain shift-and-subtract long division, one bit at a time: meant
/// for conversions at the edges (a few thousand bits at most), never for
/// loops.
pub fn reduce_wide(x: &[u64], m: &[u64]) -> Vec<u64> {
    let n = m.len();
    // r < 2m always holds before the subtraction, so n + 1 limbs suffice.
    let mut r = vec![0u64; n + 1];
    let mut mm = m.to_vec();
    mm.push(0);
    for i in (0..64 * x.len()).rev() {
        let bit = (x[i / 64] >> (i % 64)) & 1;
        // r = 2r + bit
        let mut top = bit;
        for w in r.iter_mut() {
            let v = *w;
            *w = (v << 1) | top;
            top = v >> 63;
        }
        sub_if_ge(&mut r, &mm);
    }
    r.truncate(n);
    r
}

/// `x < y` for equal-length limb slices.
pub fn less_than(x: &[u64], y: &[u64]) -> bool {
    debug_assert_eq!(x.len(), y.len());
    for j in (0..x.len()).rev() {
        if x[j] != y[j] {
            return x[j] < y[j];
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    /// xorshift64*: a deterministic, dependency-free generator for tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn limbs(&mut self, n: usize) -> Vec<u64> {
            (0..n).map(|_| self.next()).collect()
        }
        /// Uniform-ish value below `m` (reduce a random value of n+1 limbs).
        fn below(&mut self, m: &[u64]) -> Vec<u64> {
            let x = big(&self.limbs(m.len() + 1)) % big(m);
            limbs_of(&x, m.len())
        }
    }

    fn big(x: &[u64]) -> BigUint {
        let mut bytes = Vec::with_capacity(8 * x.len());
        for limb in x {
            bytes.extend_from_slice(&limb.to_le_bytes());
        }
        BigUint::from_bytes_le(&bytes)
    }

    fn limbs_of(x: &BigUint, n: usize) -> Vec<u64> {
        let mut v = x.to_u64_digits();
        assert!(v.len() <= n);
        v.resize(n, 0);
        v
    }

    /// Check `r == a*b*R^-1 mod m` as `r < m` and `r*R == a*b (mod m)`,
    /// which needs no modular inverse in the oracle.
    fn check(a: &[u64], b: &[u64], m: &[u64], what: &str) {
        let n = m.len();
        let mut r = vec![0u64; n];
        mont_mul(&mut r, a, b, m, neg_inv_u64(m[0]));
        let (ab, bm, br) = (big(a), big(b), big(&r));
        let bigm = big(m);
        assert!(br < bigm, "{what}: result not canonical: m={m:x?} a={a:x?} b={b:x?} r={r:x?}");
        assert_eq!(
            (&br << (64 * n)) % &bigm,
            (&ab * &bm) % &bigm,
            "{what}: wrong residue: m={m:x?} a={a:x?} b={b:x?} r={r:x?}"
        );
    }

    #[test]
    fn neg_inv_is_minus_inverse() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut values = vec![1u64, 3, 5, 7, 0xFF, u64::MAX, u64::MAX - 2, 1 << 63 | 1];
        values.extend((0..10_000).map(|_| rng.next() | 1));
        for m0 in values {
            assert_eq!(m0.wrapping_mul(neg_inv_u64(m0)), u64::MAX, "m0 = {m0:#x}");
        }
    }

    #[test]
    #[should_panic(expected = "m0 must be odd")]
    fn neg_inv_rejects_even() {
        neg_inv_u64(10);
    }

    #[test]
    fn one_limb_exhaustive_small_moduli() {
        // R = 2^64 and every operand pair for every odd m < 64: checked with
        // u128 arithmetic only.
        for m in (3u64..64).step_by(2) {
            let r_mod_m = ((1u128 << 64) % m as u128) as u64;
            let m0inv = neg_inv_u64(m);
            for a in 0..m {
                for b in 0..m {
                    let mut r = [0u64];
                    mont_mul(&mut r, &[a], &[b], &[m], m0inv);
                    assert!(r[0] < m);
                    assert_eq!((r[0] as u128 * r_mod_m as u128) % m as u128, (a * b % m) as u128,
                               "m={m} a={a} b={b}");
                }
            }
        }
    }

    #[test]
    fn named_edges() {
        let mut moduli: Vec<Vec<u64>> = vec![vec![3], vec![5], vec![u64::MAX], vec![u64::MAX - 2], vec![1 << 63 | 1]];
        for n in [2usize, 3, 4, 8, 16, 32, 64] {
            moduli.push(vec![u64::MAX; n]); // 2^(64n) - 1
            let mut p = vec![0u64; n]; // 2^(64(n-1)) + 1
            p[0] = 1;
            p[n - 1] = 1;
            moduli.push(p);
            let mut q = vec![0u64; n]; // 2^(64n-1) + 1
            q[0] = 1;
            q[n - 1] = 1 << 63;
            moduli.push(q);
            let mut s = vec![u64::MAX; n]; // 2^(64n) - 2^64 + 1: low limb 1, rest ones
            s[0] = 1;
            moduli.push(s);
        }
        for m in &moduli {
            let n = m.len();
            let bigm = big(m);
            let one = BigUint::from(1u32);
            let mut ops: Vec<BigUint> = vec![BigUint::from(0u32), one.clone(), BigUint::from(2u32),
                                             &bigm - &one, &bigm >> 1];
            for k in 1..n {
                ops.push(((&one << (64 * k)) - &one) % &bigm); // all-ones low limbs
                ops.push((&one << (64 * k)) % &bigm);
            }
            ops.push((&one << (64 * n)) % &bigm); // R mod m
            ops.push((&one << (128 * n)) % &bigm); // R^2 mod m
            for x in &ops {
                for y in &ops {
                    check(&limbs_of(x, n), &limbs_of(y, n), m, "edge");
                }
            }
        }
    }

    #[test]
    fn random_multi_limb() {
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        for n in 1..=64usize {
            for _ in 0..8 {
                let mut m = rng.limbs(n);
                // Vary the top limb width, including a top limb of 1.
                let shift = rng.next() % 64;
                m[n - 1] = (m[n - 1] >> shift).max(1);
                m[0] |= 1;
                if n == 1 && m[0] == 1 {
                    m[0] = 3;
                }
                let m0inv = neg_inv_u64(m[0]);
                let mut t = vec![0u64; n + 2];
                for _ in 0..8 {
                    let (a, b) = (rng.below(&m), rng.below(&m));
                    check(&a, &b, &m, "random");
                    // The scratch variant must agree and tolerate dirty scratch.
                    let mut r1 = vec![0u64; n];
                    let mut r2 = vec![0u64; n];
                    mont_mul(&mut r1, &a, &b, &m, m0inv);
                    t.iter_mut().for_each(|w| *w = rng.next());
                    mont_mul_with_scratch(&mut r2, &a, &b, &m, m0inv, &mut t);
                    assert_eq!(r1, r2);
                }
            }
        }
    }

    #[test]
    fn round_trip_through_montgomery_form() {
        // to_mont(x) = mont_mul(x, R^2 mod m); from_mont(y) = mont_mul(y, 1).
        let mut rng = Rng(42);
        for n in [1usize, 2, 5, 17, 64] {
            let mut m = rng.limbs(n);
            m[0] |= 1;
            m[n - 1] |= 1 << 63;
            let bigm = big(&m);
            let r2 = limbs_of(&((BigUint::from(1u32) << (128 * n)) % &bigm), n);
            let mut one = vec![0u64; n];
            one[0] = 1;
            let m0inv = neg_inv_u64(m[0]);
            for _ in 0..32 {
                let x = rng.below(&m);
                let mut xm = vec![0u64; n];
                let mut back = vec![0u64; n];
                mont_mul(&mut xm, &x, &r2, &m, m0inv);
                mont_mul(&mut back, &xm, &one, &m, m0inv);
                assert_eq!(back, x);
            }
        }
    }

    #[test]
    fn helpers() {
        assert_eq!(limbs_for_bits(0), 1);
        assert_eq!(limbs_for_bits(1), 1);
        assert_eq!(limbs_for_bits(64), 1);
        assert_eq!(limbs_for_bits(65), 2);
        assert_eq!(limbs_for_bits(4096), 64);
        assert!(less_than(&[5, 1], &[4, 2]));
        assert!(!less_than(&[4, 2], &[4, 2]));
        assert!(!less_than(&[0, 3], &[u64::MAX, 2]));
    }
}
