//! Test builds only (cargo feature `ifma-emulated`): the two AVX-512 IFMA
//! instructions the IFMA kernels use, `vpmadd52luq` and `vpmadd52huq`, in
//! software under the intrinsics' names.
//!
//! Why: most AVX-512 CPUs in service (Skylake-SP, Cascade Lake: most cloud
//! Xeons of 2017-2021) have AVX-512F but not IFMA, and on them the `ifma`
//! and `ifma-mont` kernels' tests used to return at once.  With this feature
//! `src/ifma.rs` and `src/ifma_mont.rs` import these two functions in place of
//! `core::arch`'s (an explicit import shadows the glob), their functions are
//! compiled for AVX-512F alone (so the compiler cannot emit an IFMA
//! instruction anywhere), and [`crate::dispatch::supported`] offers `ifma` on
//! any AVX-512F CPU.  Every other instruction of the kernels is the real one,
//! so the tests check the kernels' data flow (digits, windows, masks, carries,
//! folds, the generated code for every shape) against their portable twins
//! and num-bigint; only timing is meaningless.  `make test` runs the Rust
//! tests once more in this mode on such CPUs.  Never enable it in a build that
//! serves (each product is an out-of-line scalar call).
//!
//! The emulation itself is checked against the hardware instructions where
//! the CPU has them (`tests::emulated_ifma_matches_the_instructions`).

#![cfg(all(target_arch = "x86_64", feature = "ifma-emulated"))]

use core::arch::x86_64::__m512i;

const LOW52: u64 = (1 << 52) - 1;

/// The full 104-bit products of the low 52 bits of `b` and `c`, per lane.
fn products(b: __m512i, c: __m512i) -> [u128; 8] {
    // SAFETY: __m512i is 64 bytes of plain data, as is [u64; 8].
    let (b, c): ([u64; 8], [u64; 8]) = unsafe { (core::mem::transmute(b), core::mem::transmute(c)) };
    core::array::from_fn(|i| (b[i] & LOW52) as u128 * (c[i] & LOW52) as u128)
}

/// Per lane, `a` plus `f` of the product, wrapping at 64 bits.
fn accumulate(a: __m512i, p: [u128; 8], f: impl Fn(u128) -> u64) -> __m512i {
    // SAFETY: as above.
    let a: [u64; 8] = unsafe { core::mem::transmute(a) };
    let out: [u64; 8] = core::array::from_fn(|i| a[i].wrapping_add(f(p[i])));
    // SAFETY: as above.
    unsafe { core::mem::transmute(out) }
}

/// `vpmadd52luq`: per 64-bit lane, `a + ((b mod 2^52) (c mod 2^52) mod 2^52)`.
#[inline(never)]
#[allow(non_snake_case)]
pub fn _mm512_madd52lo_epu64(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    accumulate(a, products(b, c), |p| p as u64 & LOW52)
}

/// `vpmadd52huq`: per 64-bit lane, `a + floor((b mod 2^52) (c mod 2^52) / 2^52)`.
#[inline(never)]
#[allow(non_snake_case)]
pub fn _mm512_madd52hi_epu64(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    accumulate(a, products(b, c), |p| (p >> 52) as u64)
}
