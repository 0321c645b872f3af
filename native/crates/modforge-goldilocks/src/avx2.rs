//! Four canonical elements per 256-bit register (AVX2).
//!
//! AVX2 has no 64-bit unsigned compare and no 64x64-bit product, so: unsigned comparisons flip the sign
//! bit of both sides and use the signed `vpcmpgtq`; the 128-bit product is assembled from four 32x32-bit
//! `vpmuludq` products, arranged so that no partial sum can carry; the reduction is then the scalar one
//! (crate docs) with masks in place of branches.

// Every helper here is a register-to-register intrinsic sequence whose only precondition is the CPU
// feature, which the module's contract (crate::Packed) already states.
#![allow(unsafe_op_in_unsafe_fn)]

use core::arch::x86_64::*;

use crate::{Packed, EPSILON, P};

/// The AVX2 implementation of [`Packed`].
#[derive(Clone, Copy, Debug)]
pub struct Avx2;

const SIGN_BIT: i64 = i64::MIN;

#[inline(always)]
unsafe fn splat(x: u64) -> __m256i {
    _mm256_set1_epi64x(x as i64)
}

/// All-ones lanes where a < b (unsigned).
#[inline(always)]
unsafe fn less_than(a: __m256i, b: __m256i) -> __m256i {
    let sign = _mm256_set1_epi64x(SIGN_BIT);
    _mm256_cmpgt_epi64(_mm256_xor_si256(b, sign), _mm256_xor_si256(a, sign))
}

/// a + b mod p for canonical a, b: with nb = p - b (no wrap), a + b >= p exactly when a >= nb, and then
/// the sum is a - nb; one compare and a blend, no canonicalisation pass.
#[inline(always)]
unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
    let nb = _mm256_sub_epi64(splat(P), b);
    let below = less_than(a, nb);
    _mm256_blendv_epi8(_mm256_sub_epi64(a, nb), _mm256_add_epi64(a, b), below)
}

#[inline(always)]
unsafe fn sub(a: __m256i, b: __m256i) -> __m256i {
    let d = _mm256_sub_epi64(a, b);
    let borrowed = less_than(a, b);
    _mm256_sub_epi64(d, _mm256_and_si256(borrowed, splat(EPSILON)))
}

/// The high 32 bits of each lane moved to the low half (the multiplier reads only the low 32 bits): a
/// shuffle, which runs beside the shifts and multiplies rather than competing with them.
#[inline(always)]
unsafe fn high_halves(x: __m256i) -> __m256i {
    _mm256_castps_si256(_mm256_movehdup_ps(_mm256_castsi256_ps(x)))
}

/// The exact 128-bit products a * b as (high words, low words).
#[inline(always)]
unsafe fn mul_wide(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    let a_hi = high_halves(a);
    let b_hi = high_halves(b);
    let lo_lo = _mm256_mul_epu32(a, b);
    let lo_hi = _mm256_mul_epu32(a, b_hi);
    let hi_lo = _mm256_mul_epu32(a_hi, b);
    let hi_hi = _mm256_mul_epu32(a_hi, b_hi);
    // hi_lo + (lo_lo >> 32) <= (2^32-1)^2 + 2^32 - 1 < 2^64: no carry.
    let t = _mm256_add_epi64(hi_lo, _mm256_srli_epi64::<32>(lo_lo));
    // lo_hi + (t mod 2^32) < 2^64 likewise.
    let u = _mm256_add_epi64(lo_hi, _mm256_and_si256(t, splat(EPSILON)));
    // low = (u mod 2^32) * 2^32 + (lo_lo mod 2^32): a blend of 32-bit halves.
    let low = _mm256_blend_epi32::<0b1010_1010>(lo_lo, _mm256_slli_epi64::<32>(u));
    let high = _mm256_add_epi64(hi_hi, _mm256_add_epi64(_mm256_srli_epi64::<32>(t), _mm256_srli_epi64::<32>(u)));
    (high, low)
}

/// The seed's reduction of (high, low) to canonical elements.
///
/// The intermediate sums are kept "shifted" (xor 2^63), where an unsigned carry or borrow is a signed
/// comparison of the result with the operand: one `vpcmpgtq` each instead of two xors and a compare.
/// A mask of all ones shifted right by 32 is EPSILON, the correction either way.
#[inline(always)]
unsafe fn reduce128(high: __m256i, low: __m256i) -> __m256i {
    let sign = _mm256_set1_epi64x(SIGN_BIT);
    let eps = splat(EPSILON);
    let low_s = _mm256_xor_si256(low, sign);
    let x_top = _mm256_srli_epi64::<32>(high);
    // low - x_top; a borrow (the shifted result above the shifted operand) is worth -EPSILON.
    let t0_s = _mm256_sub_epi64(low_s, x_top);
    let borrow = _mm256_cmpgt_epi64(t0_s, low_s);
    let t0_s = _mm256_sub_epi64(t0_s, _mm256_srli_epi64::<32>(borrow));
    // + x_mid * EPSILON (the low 32 bits of `high` only); a carry is worth +EPSILON.
    let t1 = _mm256_mul_epu32(high, eps);
    let t2_s = _mm256_add_epi64(t0_s, t1);
    let carry = _mm256_cmpgt_epi64(t0_s, t2_s);
    let t2_s = _mm256_add_epi64(t2_s, _mm256_srli_epi64::<32>(carry));
    // Canonical: subtract p (add EPSILON, wrapping) where t2 >= p.
    let below_p = _mm256_cmpgt_epi64(_mm256_set1_epi64x((P ^ (1 << 63)) as i64), t2_s);
    let t3_s = _mm256_add_epi64(t2_s, _mm256_andnot_si256(below_p, eps));
    _mm256_xor_si256(t3_s, sign)
}

#[inline(always)]
unsafe fn mul(a: __m256i, b: __m256i) -> __m256i {
    let (high, low) = mul_wide(a, b);
    reduce128(high, low)
}

/// a * 2^48 (the 4th root of unity w_4): the 112-bit product is two shifts, then the reduction.
#[inline(always)]
unsafe fn mul_omega4(a: __m256i) -> __m256i {
    reduce128(_mm256_srli_epi64::<16>(a), _mm256_slli_epi64::<48>(a))
}

impl Packed for Avx2 {
    const WIDTH: usize = 4;
    type V = __m256i;
    #[inline(always)]
    unsafe fn load(ptr: *const u64) -> __m256i {
        // SAFETY: the caller provides 4 readable elements and runs on an AVX2 CPU.
        unsafe { _mm256_loadu_si256(ptr.cast()) }
    }
    #[inline(always)]
    unsafe fn store(ptr: *mut u64, v: __m256i) {
        // SAFETY: the caller provides 4 writable elements and runs on an AVX2 CPU.
        unsafe { _mm256_storeu_si256(ptr.cast(), v) }
    }
    #[inline(always)]
    unsafe fn splat(x: u64) -> __m256i {
        unsafe { splat(x) }
    }
    #[inline(always)]
    unsafe fn add(a: __m256i, b: __m256i) -> __m256i {
        unsafe { add(a, b) }
    }
    #[inline(always)]
    unsafe fn sub(a: __m256i, b: __m256i) -> __m256i {
        unsafe { sub(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: __m256i, b: __m256i) -> __m256i {
        unsafe { mul(a, b) }
    }
    #[inline(always)]
    unsafe fn mul_omega4(a: __m256i) -> __m256i {
        unsafe { mul_omega4(a) }
    }
}

/// Lane-wise products of `a` and `b` into `out` (lengths equal, a multiple of 4): a slice entry point
/// for tests and callers without a kernel of their own.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub unsafe fn mul_slices(a: &[u64], b: &[u64], out: &mut [u64]) {
    assert!(a.len() == b.len() && a.len() == out.len() && a.len() % 4 == 0);
    for i in (0..a.len()).step_by(4) {
        // SAFETY: i + 4 <= len for all three slices; AVX2 is enabled for this function.
        unsafe { Avx2::store(out.as_mut_ptr().add(i), mul(Avx2::load(a.as_ptr().add(i)), Avx2::load(b.as_ptr().add(i)))) }
    }
}
