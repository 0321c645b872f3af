//! Eight canonical elements per 512-bit register (AVX-512F).
//!
//! The same arithmetic as [`crate::avx2`], with AVX-512's unsigned compares into mask registers and
//! masked adds/subtracts in place of the AND-with-a-constant corrections.  (This machine has no AVX-512:
//! the path is compiled everywhere and tested against the portable twin where the CPU has it.)

// Every helper here is a register-to-register intrinsic sequence whose only precondition is the CPU
// feature, which the module's contract (crate::Packed) already states.
#![allow(unsafe_op_in_unsafe_fn)]

use core::arch::x86_64::*;

use crate::{Packed, EPSILON, P};

/// The AVX-512F implementation of [`Packed`].
#[derive(Clone, Copy, Debug)]
pub struct Avx512;

#[inline(always)]
unsafe fn splat(x: u64) -> __m512i {
    _mm512_set1_epi64(x as i64)
}

#[inline(always)]
unsafe fn canonicalize(x: __m512i) -> __m512i {
    let p = splat(P);
    _mm512_mask_sub_epi64(x, _mm512_cmpge_epu64_mask(x, p), x, p)
}

#[inline(always)]
unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
    let s = _mm512_add_epi64(a, b);
    let carried = _mm512_cmplt_epu64_mask(s, a);
    canonicalize(_mm512_mask_add_epi64(s, carried, s, splat(EPSILON)))
}

#[inline(always)]
unsafe fn sub(a: __m512i, b: __m512i) -> __m512i {
    let d = _mm512_sub_epi64(a, b);
    _mm512_mask_sub_epi64(d, _mm512_cmplt_epu64_mask(a, b), d, splat(EPSILON))
}

#[inline(always)]
unsafe fn mul(a: __m512i, b: __m512i) -> __m512i {
    let a_hi = _mm512_srli_epi64::<32>(a);
    let b_hi = _mm512_srli_epi64::<32>(b);
    let lo_lo = _mm512_mul_epu32(a, b);
    let lo_hi = _mm512_mul_epu32(a, b_hi);
    let hi_lo = _mm512_mul_epu32(a_hi, b);
    let hi_hi = _mm512_mul_epu32(a_hi, b_hi);
    let eps = splat(EPSILON);
    let t = _mm512_add_epi64(hi_lo, _mm512_srli_epi64::<32>(lo_lo));
    let u = _mm512_add_epi64(lo_hi, _mm512_and_si512(t, eps));
    let low = _mm512_or_si512(_mm512_slli_epi64::<32>(u), _mm512_and_si512(lo_lo, eps));
    let high = _mm512_add_epi64(hi_hi, _mm512_add_epi64(_mm512_srli_epi64::<32>(t), _mm512_srli_epi64::<32>(u)));
    // The seed's reduction (crate docs).
    let x_top = _mm512_srli_epi64::<32>(high);
    let t0 = _mm512_sub_epi64(low, x_top);
    let t0 = _mm512_mask_sub_epi64(t0, _mm512_cmplt_epu64_mask(low, x_top), t0, eps);
    let t1 = _mm512_mul_epu32(high, eps);
    let t2 = _mm512_add_epi64(t0, t1);
    let t2 = _mm512_mask_add_epi64(t2, _mm512_cmplt_epu64_mask(t2, t1), t2, eps);
    canonicalize(t2)
}

#[inline(always)]
unsafe fn mul_omega4(a: __m512i) -> __m512i {
    // a * 2^48 as (a >> 16, a << 48), reduced like a product.
    let (high, low) = (_mm512_srli_epi64::<16>(a), _mm512_slli_epi64::<48>(a));
    let eps = splat(EPSILON);
    let x_top = _mm512_srli_epi64::<32>(high);
    let t0 = _mm512_sub_epi64(low, x_top);
    let t0 = _mm512_mask_sub_epi64(t0, _mm512_cmplt_epu64_mask(low, x_top), t0, eps);
    let t1 = _mm512_mul_epu32(high, eps);
    let t2 = _mm512_add_epi64(t0, t1);
    let t2 = _mm512_mask_add_epi64(t2, _mm512_cmplt_epu64_mask(t2, t1), t2, eps);
    canonicalize(t2)
}

impl Packed for Avx512 {
    const WIDTH: usize = 8;
    type V = __m512i;
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> __m512i {
        // SAFETY: the caller provides 8 readable elements and runs on an AVX-512F CPU.
        unsafe { _mm512_loadu_si512(ptr.cast()) }
    }
    #[inline(always)]
    unsafe fn store(ptr: *mut u64, v: __m512i) {
        // SAFETY: the caller provides 8 writable elements and runs on an AVX-512F CPU.
        unsafe { _mm512_storeu_si512(ptr.cast(), v) }
    }
    #[inline(always)]
    unsafe fn splat(x: u64) -> __m512i {
        unsafe { splat(x) }
    }
    #[inline(always)]
    unsafe fn add(a: __m512i, b: __m512i) -> __m512i {
        unsafe { add(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: __m512i, b: __m512i) -> __m512i {
        unsafe { sub(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: __m512i, b: __m512i) -> __m512i {
        unsafe { mul(a, b) }
    }
    #[inline(always)]
    unsafe fn mul_omega4(a: __m512i) -> __m512i {
        unsafe { mul_omega4(a) }
    }
}

/// Lane-wise products of `a` and `b` into `out` (lengths equal, a multiple of 8).
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub unsafe fn mul_slices(a: &[u64], b: &[u64], out: &mut [u64]) {
    assert!(a.len() == b.len() && a.len() == out.len() && a.len() % 8 == 0);
    for i in (0..a.len()).step_by(8) {
        // SAFETY: i + 8 <= len for all three slices; AVX-512F is enabled for this function.
        unsafe { Avx512::store(out.as_mut_ptr().add(i), mul(Avx512::load(a.as_ptr().add(i)), Avx512::load(b.as_ptr().add(i)))) }
    }
}
