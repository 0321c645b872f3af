//! The CRT halves of an RSA private-key operation, constant time in the
//! secrets (`c`'s residues, `p`, `q`, `dp`, `dq`): the kernel behind
//! `modforge.native.rsa_crt_halves` (contract: docs/rsa.md, "The kernel
//! contract").
//!
//! Per half (modulus `p` of `n` limbs, exponent processed at exactly
//! `exp_bits` bits):
//!
//! 1. Constants without division and without data-dependent branches:
//!    `-p^-1 mod 2^64` by Newton (fixed 4 steps); `R mod p` (`R = 2^(64n)`)
//!    by 64 masked doublings of `2^(64(n-1)) < p`; `2^64 R` and `2^50 R` by
//!    more masked doublings; `R^2 mod p` as the Montgomery power
//!    `(2^64)^n` (square-and-multiply on the public limb count `n`).
//! 2. `c mod p` by Montgomery products of its `n`-limb chunks with
//!    `R^k mod p`, added with masked subtractions (no division).
//! 3. The fold plan of [`crate::fold`] (rows `2^(50(K+r)) mod p`, each one
//!    product by `2^50` from the previous) and the fold kernel: `ifma` when
//!    the CPU has it, else `fold-portable`.  The fold loop has no comparison
//!    and no conditional subtraction at all (its value bound is a fixed
//!    point, docs/native.md).
//! 4. Fixed windows of `w` bits: `w` squarings and one product per window,
//!    zero digits included; the table entry is chosen by reading all `2^w`
//!    entries with a mask.
//! 5. Out of the loop form in constant time ([`crate::single::fold_leave`]).
//! 6. Secret buffers on the heap are overwritten with zeros before they are
//!    freed (the kernels' stack scratch is not).
//!
//! Public: the limb counts of `p`, `q`, `c`, `exp_bits`, and the bit lengths
//! of `p` and `q` (they fix the fold's digit count `K`; for an RSA key they
//! follow from the key size, and `exp_bits` already discloses the larger).

use crate::fold::{to_digits, FoldPlan, FoldPortableKernel, Lane8, LANES, MAX_VECTORS};
use crate::kernel::{Kernel, MontCtx};
use crate::single::{ct_sub_if_ge, fold_leave, opaque_u64, Mont};

/// Overwrite with zeros in a way the optimiser keeps.
pub fn zeroize(x: &mut [u64]) {
    for w in x.iter_mut() {
        // SAFETY: a valid, aligned `&mut u64`.
        unsafe { core::ptr::write_volatile(w, 0) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// All ones when `a == b`, else zero, without a branch.
#[inline(always)]
fn eq_mask(a: u64, b: u64) -> u64 {
    let d = a ^ b;
    opaque_u64(((d | d.wrapping_neg()) >> 63).wrapping_sub(1))
}

/// `out = table[idx]` (entries of `len` limbs), reading every entry.
pub fn ct_select(out: &mut [u64], table: &[u64], len: usize, idx: u64) {
    out.fill(0);
    for (i, entry) in table.chunks_exact(len).enumerate() {
        let mask = eq_mask(i as u64, idx);
        for (o, &e) in out.iter_mut().zip(entry) {
            *o |= e & mask;
        }
    }
}

/// [`ct_select`] with AVX-512 (entries a multiple of 8 limbs).
///
/// # Safety
/// The CPU must support AVX-512F; `len % 8 == 0`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn ct_select_avx512(out: &mut [u64], table: &[u64], len: usize, idx: u64) {
    use core::arch::x86_64::*;
    let vecs = len / LANES;
    debug_assert!(vecs <= MAX_VECTORS && len % LANES == 0);
    let mut acc = [_mm512_setzero_si512(); MAX_VECTORS];
    for (i, entry) in table.chunks_exact(len).enumerate() {
        let mask = _mm512_set1_epi64(eq_mask(i as u64, idx) as i64);
        for v in 0..vecs {
            let e = _mm512_loadu_epi64(entry.as_ptr().add(LANES * v) as *const i64);
            acc[v] = _mm512_or_si512(acc[v], _mm512_and_si512(e, mask));
        }
    }
    for v in 0..vecs {
        _mm512_storeu_epi64(out.as_mut_ptr().add(LANES * v) as *mut i64, acc[v]);
        acc[v] = _mm512_setzero_si512();
    }
}

/// Bits `pos .. pos + w` of `e` (limbs; bits past the end are zero).
fn bits_at(e: &[u64], pos: usize, w: usize) -> u64 {
    let (i, b) = (pos / 64, pos % 64);
    let lo = e.get(i).copied().unwrap_or(0) >> b;
    let hi = if b > 0 { e.get(i + 1).copied().unwrap_or(0) << (64 - b) } else { 0 };
    (lo | hi) & ((1u64 << w) - 1)
}

/// Products of one fixed-window exponentiation (as `window_cost` in
/// python/modforge/rsa/exp.py).
pub fn window_cost(exp_bits: usize, w: usize) -> usize {
    (1usize << w) - 2 + exp_bits.div_ceil(w) * (w + 1)
}

/// The window width minimising the estimated cost in squaring-equivalents:
/// a fold product costs about 1.9 squarings and the masked scan about 1/30
/// of a squaring per table entry per window (measured with `perf` on the
/// IFMA fold at 1024 bits: 63 ns, 119 ns, ~2 ns).
pub fn default_window(exp_bits: usize) -> usize {
    let cost = |w: usize| {
        let windows = exp_bits.div_ceil(w) as f64;
        let entries = (1usize << w) as f64;
        exp_bits as f64 + 1.9 * (entries - 2.0 + windows) + entries * windows / 30.0
    };
    (1..=7).min_by(|&a, &b| cost(a).partial_cmp(&cost(b)).unwrap()).unwrap()
}

/// `x = 2x mod p` for `x < p` (`x`, `pe`: `n + 1` limbs, `pe` = p, 0).
fn dbl_mod(x: &mut [u64], pe: &[u64]) {
    let mut top = 0u64;
    for w in x.iter_mut() {
        let v = *w;
        *w = (v << 1) | top;
        top = v >> 63;
    }
    ct_sub_if_ge(x, pe);
}

/// `acc = acc + y mod p` for `acc, y < p` (`acc`, `pe`: `n + 1` limbs).
fn add_mod(acc: &mut [u64], y: &[u64], pe: &[u64]) {
    let mut c = 0u64;
    for j in 0..acc.len() {
        let v = acc[j] as u128 + *y.get(j).unwrap_or(&0) as u128 + c as u128;
        acc[j] = v as u64;
        c = (v >> 64) as u64;
    }
    ct_sub_if_ge(acc, pe);
}

/// One half: `c^e mod p`, canonical.  `c` has any number of limbs, `e` is
/// processed at exactly `exp_bits` bits; `fold_ifma` picks the kernel.
pub fn half(c: &[u64], p: &[u64], e: &[u64], exp_bits: usize, adx: bool, fold_ifma: bool) -> Vec<u64> {
    let n = p.len();
    assert!(n >= 1 && p[0] & 1 == 1 && p[n - 1] != 0, "rsa::half: p must be odd with a non-zero top limb");
    let mont = Mont::new(p, adx);
    let mut t = mont.scratch();
    let mut pe = p.to_vec();
    pe.push(0);

    // R mod p, 2^64 R mod p, 2^50 R mod p by masked doublings.
    let mut x = vec![0u64; n + 1];
    x[n - 1] = 1;
    for _ in 0..64 {
        dbl_mod(&mut x, &pe);
    }
    let mut r1 = x[..n].to_vec();
    let mut c50 = x.clone();
    for _ in 0..50 {
        dbl_mod(&mut c50, &pe);
    }
    for _ in 0..64 {
        dbl_mod(&mut x, &pe);
    }
    let mut d64 = x[..n].to_vec();
    c50.truncate(n);
    // R^2 = Montgomery form of 2^(64n): (2^64 R)^n in the Montgomery domain.
    let mut r2 = r1.clone();
    let mut tmp = vec![0u64; n];
    for bit in (0..usize::BITS - n.leading_zeros()).rev() {
        mont.mul_canon(&mut tmp, &r2, &r2, &mut t);
        std::mem::swap(&mut r2, &mut tmp);
        if (n >> bit) & 1 == 1 {
            // public: the limb count
            mont.mul_canon(&mut tmp, &r2, &d64, &mut t);
            std::mem::swap(&mut r2, &mut tmp);
        }
    }

    // c mod p = sum over n-limb chunks Y_k of amm(Y_k, R^(k+1)) = Y_k R^k.
    let mut acc = vec![0u64; n + 1];
    let mut rpow = r1.clone();
    let mut chunk = vec![0u64; n];
    for (k, ys) in c.chunks(n).enumerate() {
        chunk.fill(0);
        chunk[..ys.len()].copy_from_slice(ys);
        if k > 0 {
            mont.mul_canon(&mut tmp, &rpow, &r2, &mut t);
            std::mem::swap(&mut rpow, &mut tmp);
        }
        mont.mul_canon(&mut tmp, &chunk, &rpow, &mut t);
        add_mod(&mut acc, &tmp, &pe);
    }
    let mut cm = acc[..n].to_vec();

    // The fold plan: K from the bit length of p (public), rows by products.
    let bits = 64 * n - p[n - 1].leading_zeros() as usize;
    let mut k = 1usize;
    while bits + 1 + (usize::BITS - (k + 2).leading_zeros()) as usize > 50 * k {
        k += 1;
    }
    let v = (k + 1).div_ceil(LANES);
    assert!(v <= MAX_VECTORS);
    let h = k + 2;
    // 2^(50K): Montgomery power of 2^50 R, then out of the domain.
    let mut z = r1.clone();
    for bit in (0..usize::BITS - k.leading_zeros()).rev() {
        mont.mul_canon(&mut tmp, &z, &z, &mut t);
        std::mem::swap(&mut z, &mut tmp);
        if (k >> bit) & 1 == 1 {
            mont.mul_canon(&mut tmp, &z, &c50, &mut t);
            std::mem::swap(&mut z, &mut tmp);
        }
    }
    let mut one = vec![0u64; n];
    one[0] = 1;
    mont.mul_canon(&mut tmp, &z, &one, &mut t);
    std::mem::swap(&mut z, &mut tmp);
    let mut table = vec![Lane8::default(); h * v];
    for r in 0..h {
        let mut digits = to_digits(&z, k);
        for (j, &d) in digits.iter().enumerate() {
            table[r * v + j / LANES].0[j % LANES] = d;
        }
        zeroize(&mut digits);
        // z = z * 2^50 mod p = amm(z, 2^50 R)
        mont.mul_canon(&mut tmp, &z, &c50, &mut t);
        std::mem::swap(&mut z, &mut tmp);
    }
    let mut r3 = vec![0u64; n];
    mont.mul_canon(&mut r3, &r2, &r2, &mut t);
    let plan = FoldPlan {
        k,
        v,
        table,
        ctx: MontCtx { m: p.to_vec(), m0inv: mont.m0inv, r2: r2.clone(), r3 },
    };
    let kernel: Box<dyn Kernel> = if fold_ifma && bits >= crate::dispatch::MIN_FAST_BITS as usize {
        #[cfg(target_arch = "x86_64")]
        {
            Box::new(crate::ifma::FoldIfmaKernel { plan })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            Box::new(FoldPortableKernel { plan })
        }
    } else {
        Box::new(FoldPortableKernel { plan })
    };
    let plan = kernel.fold_plan().expect("a fold kernel");

    // The window table in loop form: base^0 .. base^(2^w - 1).
    let lanes = LANES * v;
    let w = default_window(exp_bits);
    let entries = 1usize << w;
    let mut wt = vec![0u64; entries * lanes];
    wt[..lanes].copy_from_slice(&to_digits(&one, lanes));
    let mut base = kernel.enter(&cm);
    wt[lanes..2 * lanes].copy_from_slice(&base);
    for i in 2..entries {
        let mut next = kernel.mul_internal(&wt[(i - 1) * lanes..i * lanes], &base);
        wt[i * lanes..(i + 1) * lanes].copy_from_slice(&next);
        zeroize(&mut next);
    }

    // Fixed windows from the top; every window w squarings and one product.
    let windows = exp_bits.div_ceil(w).max(1);
    let mut accd = vec![0u64; lanes];
    let select = |out: &mut [u64], idx: u64| {
        #[cfg(target_arch = "x86_64")]
        if fold_ifma {
            // SAFETY: IFMA support implies AVX-512F; entries are 8v limbs.
            unsafe { ct_select_avx512(out, &wt, lanes, idx) };
            return;
        }
        ct_select(out, &wt, lanes, idx);
    };
    select(&mut accd, bits_at(e, (windows - 1) * w, w));
    let mut sel = vec![0u64; lanes];
    for j in (0..windows - 1).rev() {
        kernel.sqr_n_internal(&mut accd, w as u64);
        let digit = bits_at(e, j * w, w);
        select(&mut sel, digit);
        // The deliberate leak of the valgrind check (test builds only).
        #[cfg(feature = "ct-leak-test")]
        if digit == 0 {
            continue;
        }
        let mut next = kernel.mul_internal(&accd, &sel);
        accd.copy_from_slice(&next);
        zeroize(&mut next);
    }
    let out = fold_leave(plan, &mont, &r2, &accd);

    // Zero the secrets we own.
    for buf in [&mut r1, &mut c50, &mut d64, &mut r2, &mut tmp, &mut acc, &mut cm, &mut chunk, &mut rpow, &mut z, &mut t, &mut wt, &mut accd, &mut sel, &mut base, &mut x, &mut pe] {
        zeroize(buf);
    }
    if let Some(mut plan) = kernel.into_fold_plan() {
        for lane in plan.table.iter_mut() {
            zeroize(&mut lane.0);
        }
        zeroize(&mut plan.ctx.m);
        zeroize(&mut plan.ctx.r2);
        zeroize(&mut plan.ctx.r3);
    }
    out
}

/// Both halves: `(c^dp mod p, c^dq mod q)`, one after the other.
pub fn crt_halves(
    c: &[u64],
    p: &[u64],
    dp: &[u64],
    q: &[u64],
    dq: &[u64],
    exp_bits: usize,
) -> (Vec<u64>, Vec<u64>) {
    let adx = crate::dispatch::supported("adx");
    let ifma = crate::dispatch::fold_ifma_supported();
    let xp = half(c, p, dp, exp_bits, adx, ifma);
    let xq = half(c, q, dq, exp_bits, adx, ifma);
    (xp, xq)
}
