//! Tests of [`crate::rsa`] and [`modforge_ring::single`] against num-bigint, and the
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

use crate as rsa;
use modforge_ring::single::{Divisor, Mont};

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

/// Every half kernel this CPU runs.
fn half_kernels() -> Vec<rsa::HalfKernel> {
    let mut kinds = vec![rsa::HalfKernel::Mont, rsa::HalfKernel::FoldPortable, rsa::HalfKernel::Fold32Portable];
    if modforge_ring::dispatch::fold_ifma_supported() {
        kinds.push(rsa::HalfKernel::Ifma);
    }
    if modforge_ring::dispatch::supported("avx512f") {
        kinds.push(rsa::HalfKernel::Avx512f);
    }
    if modforge_ring::dispatch::supported("fma") {
        kinds.push(rsa::HalfKernel::Fma);
    }
    kinds
}

/// Odd moduli stand in for primes: the kernel never uses primality.
#[test]
fn rsa_halves_match_modpow() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let adx = modforge_ring::dispatch::supported("adx");
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
            for kind in half_kernels() {
                let cl = limbs(&c, np + nq);
                let xp = rsa::half(&cl, &limbs(&p, np), &limbs(&dp, ne), eb, adx, kind);
                let xq = rsa::half(&cl, &limbs(&q, nq), &limbs(&dq, ne), eb, false, kind);
                assert_eq!(xp, limbs(&c.modpow(&dp, &p), np), "{kind:?}: p {pb} bits, trial {trial}");
                assert_eq!(xq, limbs(&c.modpow(&dq, &q), nq), "{kind:?}: q {qb} bits, trial {trial}");
            }
        }
    }
}

fn gcd(a: &BigUint, b: &BigUint) -> BigUint {
    let (mut a, mut b) = (a.clone(), b.clone());
    while b != BigUint::from(0u32) {
        let r = &a % &b;
        a = b;
        b = r;
    }
    a
}

/// The prepared key: halves, Garner and the public check against
/// num-bigint, with prime sizes equal and unequal, edge messages first, and
/// an injected fault in either half withheld.
#[test]
fn rsa_ctx_private_matches_modpow() {
    let mut rng = Rng(0xC0FF_EE00_1234_5678);
    let e = BigUint::from(65537u32);
    for &(pb, qb) in &[(512usize, 512usize), (1024, 1024), (1536, 1536), (520, 700), (700, 520)] {
        // Odd coprime moduli suffice here (no d exists without primes):
        // halves against modpow, Garner against x itself, the check on
        // pairs (x, x^e mod n).
        let p = rng.big(pb) | BigUint::from(1u32);
        let mut q = rng.big(qb) | BigUint::from(1u32);
        while gcd(&p, &q) != BigUint::from(1u32) {
            q += 2u32;
        }
        let n = &p * &q;
        let (np, nq) = (pb.div_ceil(64), qb.div_ceil(64));
        let qinv = q.modinv(&p).expect("coprime");
        let ctx = rsa::RsaCtx::new(&limbs(&p, np), &limbs(&q, nq), &limbs(&qinv, np), &limbs(&e, 1));
        let one = BigUint::from(1u32);
        for trial in 0..5 {
            let x = match trial {
                0 => BigUint::from(0u32),
                1 => one.clone(),
                2 => &n - &one,
                _ => rng.big(pb + qb - 1) % &n,
            };
            // Halves of x itself (exponent 1) must recombine to x.
            let xl = limbs(&x, np + nq);
            let (xp, xq) = ctx.halves(&xl, &[1], &[1], 1);
            assert_eq!(xp, limbs(&(&x % &p), np), "{pb}/{qb} trial {trial}");
            assert_eq!(xq, limbs(&(&x % &q), nq), "{pb}/{qb} trial {trial}");
            assert_eq!(ctx.recombine(&xp, &xq), xl, "Garner {pb}/{qb} trial {trial}");
            // The check: x^e == c exactly when c is x^e mod n.
            let c = limbs(&x.modpow(&e, &n), np + nq);
            assert!(ctx.check(&xl, &c), "check {pb}/{qb} trial {trial}");
            let mut wrong = c.clone();
            wrong[0] ^= 2;
            assert!(!ctx.check(&xl, &wrong), "check must reject {pb}/{qb} trial {trial}");
            // Exponentiation with random exponents.
            let eb = pb.max(qb) + 64;
            let ne = eb.div_ceil(64);
            let dp = rng.big(eb);
            let dq = rng.big(eb - 5);
            let (yp, yq) = ctx.halves(&xl, &limbs(&dp, ne), &limbs(&dq, ne), eb);
            assert_eq!(yp, limbs(&x.modpow(&dp, &p), np));
            assert_eq!(yq, limbs(&x.modpow(&dq, &q), nq));
        }
    }
}

/// With real primes: `private` returns `c^d mod n`, and withholds the value
/// when either half is faulted.
#[test]
fn rsa_ctx_private_and_faults() {
    let mut rng = Rng(99);
    // Probable primes by a Fermat test to four bases (test data only).
    let prime = |rng: &mut Rng, bits: usize| -> BigUint {
        loop {
            let c = rng.big(bits) | BigUint::from(1u32);
            if [2u32, 3, 5, 7].iter().all(|&a| BigUint::from(a).modpow(&(&c - 1u32), &c) == BigUint::from(1u32)) {
                return c;
            }
        }
    };
    let e = BigUint::from(65537u32);
    for bits in [384usize, 512] {
        let (p, q) = loop {
            let (p, q) = (prime(&mut rng, bits), prime(&mut rng, bits));
            let g = |a: &BigUint| gcd(&(a - 1u32), &e) == BigUint::from(1u32);
            if p != q && g(&p) && g(&q) {
                break (p, q);
            }
        };
        let n = &p * &q;
        let (p1, q1) = (&p - 1u32, &q - 1u32);
        let lam = &p1 / gcd(&p1, &q1) * &q1;
        let d = e.modinv(&lam).expect("e invertible");
        let (dp, dq) = (&d % (&p - 1u32), &d % (&q - 1u32));
        let (np, nq) = (bits / 64, bits / 64);
        let qinv = q.modinv(&p).unwrap();
        let ctx = rsa::RsaCtx::new(&limbs(&p, np), &limbs(&q, nq), &limbs(&qinv, np), &limbs(&e, 1));
        let eb = bits + 64;
        let ne = eb.div_ceil(64);
        // Blinded exponents: dp + r(p-1) gives the same result.
        let r = rng.big(64);
        let (dpb, dqb) = (&dp + &r * (&p - 1u32), &dq + &r * (&q - 1u32));
        for trial in 0..4 {
            let c = match trial {
                0 => BigUint::from(0u32),
                1 => BigUint::from(1u32),
                2 => &n - 1u32,
                _ => rng.big(2 * bits - 1) % &n,
            };
            let cl = limbs(&c, np + nq);
            match ctx.private(&cl, &limbs(&dpb, ne), &limbs(&dqb, ne), eb, 0) {
                rsa::Private::Ok(x) => assert_eq!(x, limbs(&c.modpow(&d, &n), np + nq), "{bits} trial {trial}"),
                rsa::Private::Fault => panic!("spurious fault at {bits} bits, trial {trial}"),
            }
            for fault in [1u8, 2] {
                assert!(
                    matches!(ctx.private(&cl, &limbs(&dpb, ne), &limbs(&dqb, ne), eb, fault), rsa::Private::Fault),
                    "fault {fault} not caught at {bits} bits, trial {trial}"
                );
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
        for adx in [false, modforge_ring::dispatch::supported("adx")] {
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
    // The fold loops too (through their portable twins: valgrind has no
    // AVX-512), which crt_halves takes only where the CPU has IFMA or
    // AVX-512F.
    let adx = modforge_ring::dispatch::supported("adx");
    let mut fp = rsa::half(&c, &pl, &dp, eb, adx, rsa::HalfKernel::FoldPortable);
    let mut fp32 = rsa::half(&c, &pl, &dp, eb, adx, rsa::HalfKernel::Fold32Portable);
    let mut mont = rsa::half(&c, &pl, &dp, eb, adx, rsa::HalfKernel::Mont);
    // The prepared key: halves and Garner's recombination, secrets marked
    // (the public check on the released result is not part of it).
    let qinv = q.modinv(&p).expect("coprime");
    let ctx = rsa::RsaCtx::new(&pl, &ql, &limbs(&qinv, np), &[65537]);
    let (mut yp, mut yq) = ctx.halves(&c, &dp, &dq, eb);
    let mut x = ctx.recombine(&yp, &yq);
    // Declassify the outputs only to check them.
    for out in [&xp, &xq, &yp, &yq, &x, &fp, &fp32, &mont] {
        mark(out, true);
    }
    for secret in [&c, &dp, &dq] {
        mark(secret, true);
    }
    let cb = BigUint::from_bytes_le(&c.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
    let dpb = BigUint::from_bytes_le(&dp.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
    let want_p = limbs(&cb.modpow(&dpb, &p), np);
    assert_eq!(mont, want_p, "the Montgomery half");
    assert_eq!(fp, want_p, "the fold twin");
    assert_eq!(fp32, want_p, "the 32-bit fold twin");
    // valgrind 3.19 rounds fused multiply-adds to nearest whatever MXCSR
    // says, so under it the fma kernel (the production kernel on AVX2 CPUs
    // without AVX-512) computes wrong values; its branches and addresses,
    // which are what this check is about, are the kernel's own.  Its
    // values are checked natively by every other test.
    if rsa::HalfKernel::best() != rsa::HalfKernel::Fma {
        assert_eq!(xp, want_p);
        assert_eq!((&yp, &yq), (&xp, &xq));
        let dqb = BigUint::from_bytes_le(&dq.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>());
        let (bp, bq) = (cb.modpow(&dpb, &p), cb.modpow(&dqb, &q));
        let h = ((&bp + &p - (&bq % &p)) * &qinv) % &p;
        assert_eq!(x, limbs(&(&bq + &q * h), np + nq));
    }
    for buf in [&mut xp, &mut xq, &mut yp, &mut yq, &mut x, &mut fp, &mut fp32, &mut mont] {
        modforge_ct::zeroize(buf);
    }
}

/// Fill the `8 * words` bytes below the stack pointer with `pattern`.
/// Inlined, so "the stack pointer" is the calling test's.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn paint_stack(words: usize, pattern: u64) {
    core::arch::asm!(
        "mov rdi, rsp",
        "sub rdi, {bytes}",
        "rep stosq",
        bytes = in(reg) words * 8,
        inout("rcx") words => _,
        in("rax") pattern,
        out("rdi") _,
        options(nostack),
    );
}

/// As the x86-64 one, a word at a time upwards (`words` > 0), leaving no copy
/// of the pattern in the register that held it.
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn paint_stack(words: usize, pattern: u64) {
    core::arch::asm!(
        "mov {p}, sp",
        "sub {p}, {p}, {bytes}",
        "2:",
        "str {pattern}, [{p}], #8",
        "subs {n}, {n}, #1",
        "b.ne 2b",
        "mov {pattern}, xzr",
        bytes = in(reg) words * 8,
        pattern = inout(reg) pattern => _,
        n = inout(reg) words => _,
        p = out(reg) _,
        options(nostack),
    );
}

/// Zero the callee-saved registers the compiler may have left a test value in
/// (x20-x28; x19 is LLVM's): every function that saves one would write that
/// value below the caller's frame, where it would pass for data the scrub
/// missed.  Nothing to do on x86-64, where the test passes without it.
#[inline(always)]
fn clear_callee_saved_registers() {
    #[cfg(target_arch = "aarch64")]
    // SAFETY: only registers declared as outputs are written.
    unsafe {
        core::arch::asm!(
            "mov x20, xzr", "mov x21, xzr", "mov x22, xzr", "mov x23, xzr", "mov x24, xzr",
            "mov x25, xzr", "mov x26, xzr", "mov x27, xzr", "mov x28, xzr",
            out("x20") _, out("x21") _, out("x22") _, out("x23") _, out("x24") _,
            out("x25") _, out("x26") _, out("x27") _, out("x28") _,
            options(nostack, nomem),
        )
    };
}

/// Copy the `out.len()` words below the stack pointer into `out`, lowest
/// address first (`out[i]` lies `8 * (out.len() - i)` bytes below it).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn read_stack(out: &mut [u64]) {
    core::arch::asm!(
        "mov rsi, rsp",
        "sub rsi, {bytes}",
        "rep movsq",
        bytes = in(reg) out.len() * 8,
        inout("rcx") out.len() => _,
        inout("rdi") out.as_mut_ptr() => _,
        out("rsi") _,
        options(nostack),
    );
}

/// As the x86-64 one, a word at a time (`out` not empty).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn read_stack(out: &mut [u64]) {
    core::arch::asm!(
        "mov {src}, sp",
        "sub {src}, {src}, {bytes}",
        "2:",
        "ldr {word}, [{src}], #8",
        "str {word}, [{dst}], #8",
        "subs {n}, {n}, #1",
        "b.ne 2b",
        bytes = in(reg) out.len() * 8,
        n = inout(reg) out.len() => _,
        dst = inout(reg) out.as_mut_ptr() => _,
        src = out(reg) _,
        word = out(reg) _,
        options(nostack),
    );
}

/// The secret work (key preparation, both halves, Garner, the check) stays
/// within `STACK_SCRUB_BYTES` of its caller's stack, and `scrub_after` leaves
/// nothing but zeros there.  The stack is painted with a pattern first:
/// unscrubbed, the deepest overwritten word gives the depth; scrubbed, every
/// word of the area must be zero (the pattern is not), so a scrub that
/// missed part of it, or work that outgrew it, fails here.
#[test]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn secret_work_leaves_no_stack_behind() {
    const PATTERN: u64 = 0x5A5A_A5A5_5A5A_A5A5;
    // Below the scrubbed area too, to see work that goes deeper.
    let words = (modforge_ct::STACK_SCRUB_BYTES + 64 * 1024) / 8;
    // Offsets, in bytes below the test's stack pointer, of the scrubbed area's
    // part that lies below the frame of `scrub_after` itself (its return
    // address, saved registers and the value it returns).
    let (top, bottom) = (256usize, modforge_ct::STACK_SCRUB_BYTES);
    let offset = |i: usize| 8 * (words - i);
    let mut rng = Rng(0x5C2B);
    let e = BigUint::from(65537u32);
    // 1920 bits: the widest halves that run paired (`Kernel::pow_windows_pair`, six buffers).
    for bits in [256usize, 512, 1024, 1536, 1920, 2048] {
        let p = rng.big(bits) | BigUint::from(1u32);
        let mut q = rng.big(bits) | BigUint::from(1u32);
        while gcd(&p, &q) != BigUint::from(1u32) {
            q += 2u32;
        }
        let n = bits / 64;
        let qinv = q.modinv(&p).expect("coprime");
        let (pl, ql, qil, el) = (limbs(&p, n), limbs(&q, n), limbs(&qinv, n), limbs(&e, 1));
        let eb = bits + 64;
        let (dp, dq) = (limbs(&rng.big(eb), eb.div_ceil(64)), limbs(&rng.big(eb), eb.div_ceil(64)));
        let c = limbs(&(rng.big(2 * bits - 1) % (&p * &q)), 2 * n);
        // Every fast kernel this CPU has (the portable twins are test oracles).
        let fast = |k: &rsa::HalfKernel| !matches!(k, rsa::HalfKernel::FoldPortable | rsa::HalfKernel::Fold32Portable);
        for kind in half_kernels().into_iter().filter(fast) {
            // Odd coprime moduli, not primes: the check fails (a "fault"), after
            // running every part of the operation.
            let work = || {
                let ctx = rsa::RsaCtx::on(&pl, &ql, &qil, &el, kind);
                let out = ctx.private(&c, &dp, &dq, eb, 0);
                let halves = rsa::crt_halves(&c, &pl, &dp, &ql, &dq, eb);
                (matches!(out, rsa::Private::Ok(_)), halves)
            };
            let mut stack = vec![0u64; words];

            unsafe { paint_stack(words, PATTERN) };
            let out = core::hint::black_box(work());
            unsafe { read_stack(&mut stack) };
            drop(out);
            let deepest = stack.iter().position(|&w| w != PATTERN).map(offset).unwrap_or(0);
            assert!(deepest > top, "{bits}-bit halves on {kind:?}: the work left no trace on the stack? ({deepest})");
            assert!(
                deepest <= bottom - 4096,
                "{bits}-bit halves on {kind:?} use {deepest} bytes of stack: raise modforge_ct::STACK_SCRUB_BYTES ({bottom})"
            );

            unsafe { paint_stack(words, PATTERN) };
            let out = core::hint::black_box(modforge_ct::scrub_after(work));
            unsafe { read_stack(&mut stack) };
            drop(out);
            let left: Vec<usize> =
                (0..words).filter(|&i| (top..=bottom).contains(&offset(i)) && stack[i] != 0).map(offset).collect();
            let some = &left[..left.len().min(4)];
            assert!(left.is_empty(), "{bits}-bit halves on {kind:?}: {} words not scrubbed, e.g. at -{some:?}", left.len());

            // A panic after the work (unwinding through `scrub_after`) scrubs too.
            // The unwinder's own frames run after the scrub and write below it, so
            // the area is not all zeros then; but no word of the pattern survives
            // (the scrub went over all of it, so over the work's frames too).
            // Here `catch_unwind` and its closure put their frames above
            // `scrub_after`'s, so the scrub starts further down than `top`: their
            // unused slots (no secret is ever there) may keep the pattern: a
            // build after the workspace split left two such words in range.
            // On aarch64 the test's own pattern, dead in a callee-saved register
            // after the painting, was saved to the stack by the panic's frames (three
            // words 2-5 KiB down): not the work's, so those registers are cleared.
            let top_under_catch = 1024usize;
            unsafe { paint_stack(words, PATTERN) };
            clear_callee_saved_registers();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                modforge_ct::scrub_after(|| {
                    core::hint::black_box(work());
                    panic!("deliberate panic after the secret work (test)");
                })
            }));
            unsafe { read_stack(&mut stack) };
            assert!(caught.is_err());
            let left: Vec<usize> =
                (0..words).filter(|&i| (top_under_catch..=bottom).contains(&offset(i)) && stack[i] == PATTERN).map(offset).collect();
            let some = &left[..left.len().min(4)];
            assert!(left.is_empty(), "{bits}-bit halves on {kind:?}: {} words not scrubbed after a panic, e.g. at -{some:?}", left.len());
        }
    }
}

/// Time per half (one `c^d mod p`) on every half kernel this CPU runs, at
/// the prime sizes of RSA-2048, -3072 and -4096: the measurement behind
/// [`rsa::HalfKernel::best`].  `cargo test --release -p modforge-rsa
/// bench_half_kernels -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_half_kernels() {
    let mut rng = Rng(0xBE4C_4A1F);
    let adx = modforge_ring::dispatch::supported("adx");
    for bits in [1024usize, 1536, 2048] {
        let p = rng.big(bits) | BigUint::from(1u32);
        let n = bits / 64;
        let eb = bits + 64;
        let d = limbs(&rng.big(eb), eb.div_ceil(64));
        let c = limbs(&(rng.big(2 * bits - 1) % &p), n);
        let pl = limbs(&p, n);
        for kind in half_kernels().into_iter().filter(|k| !matches!(k, rsa::HalfKernel::FoldPortable | rsa::HalfKernel::Fold32Portable)) {
            let ctx = rsa::HalfCtx::new(&pl, adx, kind);
            let mut times = Vec::new();
            for _ in 0..15 {
                let t = std::time::Instant::now();
                std::hint::black_box(ctx.pow(&c, &d, eb, None));
                times.push(t.elapsed().as_secs_f64() * 1e6);
            }
            times.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!("{bits}-bit half on {kind:?}: median {:.0} us, best {:.0} us", times[7], times[0]);
        }
    }
}

/// Both halves of one private operation (two primes of one size), paired
/// ([`Kernel::pow_windows_pair`]) against one after the other, alternating
/// the two in one run: the measurement behind pairing on each half kernel
/// this CPU runs.  `cargo test --release -p modforge-rsa bench_paired_halves
/// -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_paired_halves() {
    use modforge_ring::kernel::Kernel as _;
    let mut rng = Rng(0xBE4C_4A20);
    let adx = modforge_ring::dispatch::supported("adx");
    for bits in [512usize, 1024, 1536, 2048] {
        let n = bits / 64;
        let eb = bits + 64;
        let primes: Vec<Vec<u64>> = (0..2).map(|_| limbs(&(rng.big(bits) | BigUint::from(1u32)), n)).collect();
        let d: Vec<Vec<u64>> = (0..2).map(|_| limbs(&rng.big(eb), eb.div_ceil(64))).collect();
        let c = limbs(&rng.big(bits - 1), n);
        for kind in half_kernels().into_iter().filter(|k| !matches!(k, rsa::HalfKernel::FoldPortable | rsa::HalfKernel::Fold32Portable)) {
            let (hp, hq) = (rsa::HalfCtx::new(&primes[0], adx, kind), rsa::HalfCtx::new(&primes[1], adx, kind));
            let (mut paired, mut single) = (Vec::new(), Vec::new());
            let mut pairs = false;
            for _ in 0..15 {
                let (mut rp, mut rq) = (hp.pow_start(&c, eb, None), hq.pow_start(&c, eb, None));
                let t = std::time::Instant::now();
                pairs = hp.kernel().pow_windows_pair(
                    hq.kernel(), &mut rp.acc, &rp.table, &d[0], &mut rq.acc, &rq.table, &d[1], rp.windows, rp.w,
                );
                paired.push(t.elapsed().as_secs_f64() * 1e6);
                let t = std::time::Instant::now();
                hp.kernel().pow_windows(&mut rp.acc, &rp.table, &d[0], rp.windows, rp.w);
                hq.kernel().pow_windows(&mut rq.acc, &rq.table, &d[1], rq.windows, rq.w);
                single.push(t.elapsed().as_secs_f64() * 1e6);
            }
            if !pairs {
                println!("{bits}-bit halves on {kind:?}: no pairing");
                continue;
            }
            for v in [&mut paired, &mut single] {
                v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            }
            println!(
                "{bits}-bit halves on {kind:?}: paired median {:.0} us (best {:.0}), one after the other {:.0} us (best {:.0}): {:.2}x",
                paired[7], paired[0], single[7], single[0], single[7] / paired[7]
            );
        }
    }
}
