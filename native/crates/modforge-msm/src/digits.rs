//! Signed-digit decomposition of the scalars, all windows at once.
//!
//! A c-bit window digit d in [0, 2^c) becomes d - 2^c with a carry into the next window when
//! d > 2^(c-1), so |digit| <= 2^(c-1) and a window needs 2^(c-1) buckets.  With enough windows to
//! cover 254 bits (one more than r's 253) the top window receives at most a carry on top of c - 1
//! bits and never produces one.  A digit is stored in 16 bits as (((|d| - 1) << 1) | sign) + 1, 0
//! meaning no addition: positive digits reach 2^(c-1) and negative ones 2^(c-1) - 1, so windows up to
//! 16 bits fit (the largest code, 0xffff, is +2^15).

/// Bits the windows cover: r has 253 bits and the signed form may carry once more.
pub const COVERED_BITS: usize = 254;
pub const MAX_WINDOW: usize = 16;

pub fn window_count(c: usize) -> usize {
    COVERED_BITS.div_ceil(c)
}

#[inline(always)]
fn bits_at(s: &[u64; 4], offset: usize, c: usize) -> u64 {
    let word = offset / 64;
    let shift = offset % 64;
    if word >= 4 {
        return 0;
    }
    let mut v = s[word] >> shift;
    if shift + c > 64 && word + 1 < 4 {
        v |= s[word + 1] << (64 - shift);
    }
    v & ((1u64 << c) - 1)
}

/// The signed digits of one scalar (< 2^253) for c-bit windows (c < 64), window by window:
/// calls `f(w, d)` for every non-zero digit d, |d| <= 2^(c-1).
#[inline(always)]
pub fn for_each_signed_digit(s: &[u64; 4], c: usize, mut f: impl FnMut(usize, i64)) {
    let windows = window_count(c);
    let half = 1u64 << (c - 1);
    let mut carry = 0u64;
    for w in 0..windows {
        let d = bits_at(s, w * c, c) + carry;
        carry = 0;
        if d == 0 {
            continue;
        }
        if d <= half || w == windows - 1 {
            debug_assert!(d <= half);
            f(w, d as i64);
        } else {
            carry = 1;
            let m = (1u64 << c) - d; // |d - 2^c|
            if m != 0 {
                f(w, -(m as i64));
            }
        }
    }
}

/// The signed digits of one scalar (< 2^253), window by window, in the 16-bit encoding.
#[inline]
pub fn encode_scalar(s: &[u64; 4], c: usize, out: &mut [u16]) {
    let windows = window_count(c);
    debug_assert!(c <= MAX_WINDOW && out.len() >= windows);
    out[..windows].fill(0);
    for_each_signed_digit(s, c, |w, d| out[w] = encode(d.unsigned_abs(), d < 0));
}

/// The code of a non-zero digit of magnitude m.
#[inline(always)]
fn encode(m: u64, negative: bool) -> u16 {
    ((((m - 1) << 1) | negative as u64) + 1) as u16
}

/// Bucket index and sign of a non-zero code.
#[inline(always)]
pub fn bucket_and_sign(code: u16) -> (usize, bool) {
    let v = code - 1;
    ((v >> 1) as usize, v & 1 == 1)
}

/// Decode one 16-bit digit to its value (for tests and the model comparison).
pub fn decode(d: u16) -> i64 {
    if d == 0 {
        0
    } else {
        let (b, negative) = bucket_and_sign(d);
        let m = b as i64 + 1;
        if negative {
            -m
        } else {
            m
        }
    }
}
