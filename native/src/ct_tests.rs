//! Tests of [`crate::rsa`] and [`crate::single`] against num-bigint, and the
//! valgrind constant-time check of the RSA kernel.
//!
//! `ct_valgrind_target` (ignored by default) runs the kernel with the secret
//! exponents and `c` marked undefined through memcheck's client request
//! `VALGRIND_MAKE_MEM_UNDEFINED` (hand-written: the magic preamble is a
//! no-op outside valgrind).  Memcheck then reports every conditional jump and
//! every memory address that depends on them.  `native/ct/valgrind_ct.sh`
//! runs it under valgrind, once as is (must be clean) and once built with
//! the cargo feature `ct-leak-test`, which adds a branch on the exponent
//! digit to the window loop (must be reported).

use num_bigint::BigUint;

use crate::rsa;
use crate::single::{Divisor, Mont};

fn limbs(x: &BigUint, n: usize) -> Vec<u64> {
    let mut v = x.to_u64_digits();
    v.resize(n, 0);
    v
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn big(&mut self, bits: usize) -> BigUint {
        let n = bits.div_ceil(64);
        let mut v: Vec<u64> = (0..n).map(|_| self.next()).collect();
        let top = bits - 64 * (n - 1);
        if top < 64 {
            v[n - 1] &= (1u64 << top) - 1;
        }
        v[n - 1] |= 1u64 << (top - 1);
        BigUint::from_bytes_le(&v.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>())
    }
}

/// Odd moduli stand in for primes: the kernel never uses primality.
#[test]
fn rsa_halves_match_modpow() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let adx = crate::dispatch::supported("adx");
    for &(pb, qb) in &[(512usize, 512usize), (1024, 1024), (1536, 1536), (2048, 2048), (700, 512), (65, 300), (3, 130)] {
        let p = rng.big(pb) | BigUint::from(1u32);
        let q = rng.big(qb) | BigUint::from(1u32);
        let n = &p * &q;
        let (np, nq) = (pb.div_ceil(64), qb.div_ceil(64));
        let eb = pb.max(qb) + 64;
        for trial in 0..3 {
            let c = match trial {
                0 => &n - BigUint::from(1u32),
                1 => p.clone(),
                _ => rng.big(pb + qb - 1) % &n,
            };
            let dp = rng.big(eb);
            let dq = rng.big(eb - 3);
            let ne = eb.div_ceil(64);
            for ifma in [false, crate::dispatch::fold_ifma_supported()] {
                let cl = limbs(&c, np + nq);
                let xp = rsa::half(&cl, &limbs(&p, np), &limbs(&dp, ne), eb, adx, ifma);
                let xq = rsa::half(&cl, &limbs(&q, nq), &limbs(&dq, ne), eb, false, ifma);
                assert_eq!(xp, limbs(&c.modpow(&dp, &p), np), "p {pb} bits, trial {trial}");
                assert_eq!(xq, limbs(&c.modpow(&dq, &q), nq), "q {qb} bits, trial {trial}");
            }
        }
    }
}

#[test]
fn divisor_and_fold_leave() {
    let mut rng = Rng(12345);
    for bits in [64usize, 65, 128, 255, 1024, 2047, 4096] {
        let m = rng.big(bits) | BigUint::from(1u32);
        let n = bits.div_ceil(64);
        let ml = limbs(&m, n);
        let d = Divisor::new(&ml);
        for xb in [1usize, bits - 1, bits, bits + 1, 2 * bits, 2 * bits + 70] {
            let x = rng.big(xb);
            let xl = limbs(&x, xb.div_ceil(64));
            assert_eq!(d.reduce(&xl), limbs(&(&x % &m), n), "{bits} / {xb}");
        }
        let all = vec![u64::MAX; 2 * n + 1];
        let x = BigUint::from_bytes_le(&all.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
        assert_eq!(d.reduce(&all), limbs(&(&x % &m), n));
        // Scalar Montgomery helper: mul_canon(amm(x, y), R^2) = x*y mod m.
        for adx in [false, crate::dispatch::supported("adx")] {
            let mont = Mont::new(&ml, adx);
            let r2 = limbs(&((BigUint::from(1u32) << (128 * n)) % &m), n);
            let (x, y) = (rng.big(bits) % &m, rng.big(bits - 1) % &m);
            let mut t = mont.scratch();
            let mut a = vec![0u64; n];
            mont.amm(&mut a, &limbs(&x, n), &limbs(&y, n), &mut t);
            let mut out = vec![0u64; n];
            mont.mul_canon(&mut out, &a, &r2, &mut t);
            assert_eq!(out, limbs(&(&x * &y % &m), n));
        }
    }
}

/// memcheck's client request (valgrind.h, amd64): `rax` points at
/// `[request, a1..a5]`, the result comes back in `rdx`.  Outside valgrind
/// the rotations sum to 128 bits and `xchg rbx, rbx` does nothing.
#[cfg(target_arch = "x86_64")]
fn vg_request(args: [u64; 6]) -> u64 {
    let mut res = 0u64;
    // SAFETY: only reads `args`; registers restored (rdi rotated by 128).
    unsafe {
        core::arch::asm!(
            "rol rdi, 3", "rol rdi, 13", "rol rdi, 61", "rol rdi, 51", "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") res,
            inout("rdi") 0u64 => _,
            options(nostack),
        );
    }
    res
}

/// `VALGRIND_MAKE_MEM_UNDEFINED(x)` / `..._DEFINED(x)`.
#[cfg(target_arch = "x86_64")]
fn mark(x: &[u64], defined: bool) {
    const MC_BASE: u64 = ((b'M' as u64) << 24) | ((b'C' as u64) << 16);
    let req = MC_BASE + if defined { 2 } else { 1 };
    vg_request([req, x.as_ptr() as u64, 8 * x.len() as u64, 0, 0, 0]);
}

/// Run the kernel with secret exponents and message undefined (see the
/// module doc).  Ignored: meaningful only under valgrind.
#[cfg(target_arch = "x86_64")]
#[test]
#[ignore]
fn ct_valgrind_target() {
    let mut rng = Rng(777);
    let (pb, qb) = (512usize, 512usize);
    let p = rng.big(pb) | BigUint::from(1u32);
    let q = rng.big(qb) | BigUint::from(1u32);
    let n = &p * &q;
    let eb = pb + 64;
    let (np, nq, ne) = (pb / 64, qb / 64, eb.div_ceil(64));
    let c = limbs(&(rng.big(pb + qb - 1) % &n), np + nq);
    let dp = limbs(&rng.big(eb), ne);
    let dq = limbs(&rng.big(eb - 1), ne);
    let (pl, ql) = (limbs(&p, np), limbs(&q, nq));
    for secret in [&c, &dp, &dq] {
        mark(secret, false);
    }
    let (mut xp, mut xq) = rsa::crt_halves(&c, &pl, &dp, &ql, &dq, eb);
    // Declassify the outputs only to check them.
    mark(&xp, true);
    mark(&xq, true);
    for secret in [&c, &dp, &dq] {
        mark(secret, true);
    }
    let cb = BigUint::from_bytes_le(&c.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
    let dpb = BigUint::from_bytes_le(&dp.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
    assert_eq!(xp, limbs(&cb.modpow(&dpb, &p), np));
    rsa::zeroize(&mut xp);
    rsa::zeroize(&mut xq);
}
