//! The portable twin: canonical `u64` elements, `u128` products.

use crate::{EPSILON, P};

/// The seed's reduction of a 128-bit value to a canonical element (see the crate docs).
#[inline(always)]
pub fn reduce128(x: u128) -> u64 {
    let x_lo = x as u64;
    let x_hi = (x >> 64) as u64;
    let x_mid = x_hi & EPSILON; // bits 64..95
    let x_top = x_hi >> 32; // bits 96..127, worth -1 each
    let (mut t0, borrow) = x_lo.overflowing_sub(x_top);
    if borrow {
        t0 = t0.wrapping_sub(EPSILON); // the wrapped word is 2^64 too much; 2^64 = EPSILON
    }
    let t1 = (x_mid << 32) - x_mid; // x_mid * EPSILON < 2^64
    let (mut t2, carry) = t0.overflowing_add(t1);
    if carry {
        t2 = t2.wrapping_add(EPSILON); // cannot carry again: t2 < t1 here
    }
    if t2 >= P {
        t2 - P
    } else {
        t2
    }
}

/// a * b mod p.
#[inline(always)]
pub fn mul(a: u64, b: u64) -> u64 {
    reduce128(a as u128 * b as u128)
}

/// a + b mod p for canonical a, b.
#[inline(always)]
pub fn add(a: u64, b: u64) -> u64 {
    let (s, carry) = a.overflowing_add(b);
    let s = if carry { s.wrapping_add(EPSILON) } else { s };
    if s >= P {
        s - P
    } else {
        s
    }
}

/// a - b mod p for canonical a, b.
#[inline(always)]
pub fn sub(a: u64, b: u64) -> u64 {
    let (d, borrow) = a.overflowing_sub(b);
    if borrow {
        d.wrapping_sub(EPSILON)
    } else {
        d
    }
}

/// a^e mod p.
pub fn pow(a: u64, mut e: u64) -> u64 {
    let (mut result, mut base) = (1u64, a);
    while e > 0 {
        if e & 1 == 1 {
            result = mul(result, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    result
}

/// a^-1 mod p (Fermat); zero maps to zero.
pub fn inverse(a: u64) -> u64 {
    pow(a, P - 2)
}

/// x mod p for any u64 (the only non-canonical input the API takes).
#[inline(always)]
pub fn reduce64(x: u64) -> u64 {
    if x >= P {
        x - P
    } else {
        x
    }
}

/// Four lanes of the scalar code behind the [`crate::Packed`] interface: the portable twin of
/// [`crate::avx2::Avx2`], and what a kernel runs on a CPU without AVX2.
#[derive(Clone, Copy, Debug)]
pub struct Portable4;

impl crate::Packed for Portable4 {
    const WIDTH: usize = 4;
    type V = [u64; 4];
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> [u64; 4] {
        // SAFETY: the caller provides 4 readable elements.
        unsafe { ptr.cast::<[u64; 4]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(ptr: *mut u64, v: [u64; 4]) {
        // SAFETY: the caller provides 4 writable elements.
        unsafe { ptr.cast::<[u64; 4]>().write_unaligned(v) }
    }
    #[inline(always)]
    unsafe fn splat(x: u64) -> [u64; 4] {
        [x; 4]
    }
    #[inline(always)]
    unsafe fn add(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
        std::array::from_fn(|i| add(a[i], b[i]))
    }
    #[inline(always)]
    unsafe fn sub(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
        std::array::from_fn(|i| sub(a[i], b[i]))
    }
    #[inline(always)]
    unsafe fn mul(a: [u64; 4], b: [u64; 4]) -> [u64; 4] {
        std::array::from_fn(|i| mul(a[i], b[i]))
    }
    #[inline(always)]
    unsafe fn mul_omega4(a: [u64; 4]) -> [u64; 4] {
        std::array::from_fn(|i| mul(a[i], 1 << 48))
    }
}
