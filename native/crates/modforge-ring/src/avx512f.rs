//! The AVX-512F kernel (x86-64 only): the 32-bit-product table fold of
//! [`crate::fold32`] with `vpmuludq`, for CPUs that have AVX-512F but not
//! IFMA (Skylake-SP, Cascade Lake, Cooper Lake: most cloud Xeons of
//! 2017-2021).  Reached only through [`crate::dispatch`], which checks the CPU
//! first; its digits are exactly those of the portable twin
//! [`crate::fold32::Fold32PortableKernel`] (the tests compare the two).
//!
//! One squaring (code generated per shape by `build/build_avx512f.rs`, one
//! `asm!` block around the whole loop):
//!
//! * the digits `x` and `D = 2x` sit in a zero-padded scratch; the diagonal
//!   squares `x_q^2` are formed a vector at a time and spread to the even
//!   columns with one masked expand per block;
//! * output block `b` (columns `8b .. 8b+7`) accumulates, for each row `i`,
//!   the broadcast `x_i` times the window of `D` at digit `8b - i` (the
//!   product's memory operand, so no shuffle and no separate load), the
//!   lanes at and below the diagonal masked off; the row's windows come from
//!   eight base registers, one per `i mod 8`, so every offset is a multiple
//!   of 64 and encodes in one byte;
//! * the columns are carried once (two digits up; below column `K - 1` only
//!   where a lane cannot hold them raw through the fold) and stored; the fold
//!   streams the table, two rows per 64-bit lane, into `ceil(K/8)`
//!   accumulators; one more carry pass gives the next digits.
//!
//! Measured choices (docs/native.md, "The AVX-512F backend"): intrinsics lost
//! to LLVM's narrowing of the broadcasts and masked products; the table with
//! one row per lane does not fit L1 at 2048 bits (930-1,080 ns a squaring
//! there against 643-648 packed).

#![cfg(target_arch = "x86_64")]

use core::arch::asm;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use crate::fold32::Fold32Plan;
use crate::fold32_shape::{COLS, D_DIG, E, MAX_VL, PAD, SCRATCH_LANES, SQ, X_DIG};
use crate::kernel::Kernel;

include!(concat!(env!("OUT_DIR"), "/avx512f_gen.rs"));

/// The kernel's working memory (about 9.5 KiB, on the stack).
#[repr(C, align(64))]
struct Scratch([u64; SCRATCH_LANES]);

/// Zeroes what the kernel reads before it writes it, for loop forms of
/// `lanes` lanes: `X` and `D` with their padding (windows reach 7 lanes
/// below digit 0 and past the last vector) and `SQ` (the top block's
/// expand reads past the last square).  `E` and `COLS` are written first.
///
/// # Safety
/// `p` points to a [`Scratch`]; `lanes <= 8 * MAX_VL`.
unsafe fn zero_read_first(p: *mut u64, lanes: usize) {
    core::ptr::write_bytes(p, 0, X_DIG + lanes + PAD);
    core::ptr::write_bytes(p.add(D_DIG - PAD), 0, 2 * PAD + lanes);
    core::ptr::write_bytes(p.add(SQ), 0, lanes + 8);
}

/// Zeroes everything the kernel may have written for `lanes`-lane forms
/// (the RSA kernel's values are secret): the regions above, `E` (at most
/// `2 vl` vectors) and `COLS` (`2 vl + 1`).
///
/// # Safety
/// As [`zero_read_first`].
unsafe fn wipe(p: *mut u64, lanes: usize) {
    zero_read_first(p, lanes);
    core::ptr::write_bytes(p.add(E), 0, 2 * lanes + 8);
    core::ptr::write_bytes(p.add(COLS), 0, 2 * lanes + 8);
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Fills `s` with `x` at `X` and `y` (or `2x` when `y` is `None`) at `D`,
/// everything else the kernel reads first zero; returns its first lane.
fn fill(s: &mut MaybeUninit<Scratch>, x: &[u64], y: Option<&[u64]>) -> *mut u64 {
    let p = s.as_mut_ptr() as *mut u64;
    assert!(x.len() <= 8 * MAX_VL && y.map_or(true, |y| y.len() == x.len()));
    // SAFETY: the lengths are checked above; the copies stay inside X and D.
    unsafe {
        zero_read_first(p, x.len());
        core::ptr::copy_nonoverlapping(x.as_ptr(), p.add(X_DIG), x.len());
        match y {
            Some(y) => core::ptr::copy_nonoverlapping(y.as_ptr(), p.add(D_DIG), y.len()),
            None => {
                for (j, &v) in x.iter().enumerate() {
                    *p.add(D_DIG + j) = 2 * v;
                }
            }
        }
    }
    p
}

/// The `lanes` lanes at `X` of a scratch the kernel has run on.
fn x_lanes(s: &MaybeUninit<Scratch>, lanes: usize) -> &[u64] {
    // SAFETY: X was zeroed by fill and written by the kernel only.
    unsafe { core::slice::from_raw_parts((s.as_ptr() as *const u64).add(X_DIG), lanes) }
}

/// `dst = table[idx]` (entries of `lanes` lanes, a multiple of 8), reading
/// every entry under a mask: no branch or address depends on `idx`.
#[target_feature(enable = "avx512f")]
unsafe fn select_into(dst: *mut u64, table: &[u64], lanes: usize, idx: u64) {
    let entries = table.len() / lanes;
    for v in (0..lanes).step_by(8) {
        let mut acc = _mm512_setzero_si512();
        for i in 0..entries {
            let mask = _mm512_set1_epi64(modforge_ct::eq_mask(i as u64, idx) as i64);
            let entry = _mm512_loadu_si512(table.as_ptr().add(i * lanes + v) as *const _);
            acc = _mm512_or_si512(acc, _mm512_and_si512(entry, mask));
        }
        _mm512_storeu_si512(dst.add(v) as *mut _, acc);
    }
}

/// `dst = 2 src` over `lanes` lanes (the square's doubled digits).
#[target_feature(enable = "avx512f")]
unsafe fn double_into(dst: *mut u64, src: *const u64, lanes: usize) {
    for v in (0..lanes).step_by(8) {
        let x = _mm512_loadu_si512(src.add(v) as *const _);
        _mm512_storeu_si512(dst.add(v) as *mut _, _mm512_add_epi64(x, x));
    }
}

/// The AVX-512F fold backend for one modulus.
pub struct Avx512fKernel {
    plan: Fold32Plan,
    sqr: unsafe fn(*mut u64, *const u64, u64),
    mul: unsafe fn(*mut u64, *const u64),
    /// Zero the scratch after each call (the RSA kernel's values are secret).
    secret: bool,
}

impl Avx512fKernel {
    /// # Safety
    /// The CPU must support AVX-512F (checked by [`crate::dispatch`]), and
    /// `m` must be odd, of 256 to 4096 bits.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        Self::from_plan(Fold32Plan::new(m), false)
    }

    /// The kernel over a plan built elsewhere (the RSA kernel builds its own,
    /// in constant time, and sets `secret`: every call then zeroes the
    /// scratch it used).
    ///
    /// # Safety
    /// As [`Avx512fKernel::new_unchecked`]; the plan's shape must be one of
    /// 256 to 4096 bits.
    pub unsafe fn from_plan(plan: Fold32Plan, secret: bool) -> Self {
        let sqr = sqr_n_generated(plan.r, plan.k).expect("a generated squaring for every fast width");
        let mul = mul_generated(plan.r, plan.k).expect("a generated product for every fast width");
        Avx512fKernel { plan, sqr, mul, secret }
    }

    /// The plan (tests compare digits with the portable twin).
    pub fn plan(&self) -> &Fold32Plan {
        &self.plan
    }
}

impl Drop for Avx512fKernel {
    /// The table is a function of the modulus, which is secret in the RSA
    /// kernel: wiped (a few microseconds; public moduli pay it too).
    fn drop(&mut self) {
        self.plan.wipe();
    }
}

// The scratch's regions must hold the widest shape the generator emits.
const _: () = assert!(PAD >= 8 && SQ >= D_DIG + 8 * MAX_VL + PAD && COLS + 16 * MAX_VL + 8 <= SCRATCH_LANES);

impl Kernel for Avx512fKernel {
    fn name(&self) -> &'static str {
        "avx512f"
    }
    fn modulus(&self) -> &[u64] {
        &self.plan.ctx.m
    }
    fn fold32_plan(&self) -> Option<&Fold32Plan> {
        Some(&self.plan)
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        self.plan.enter(x)
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        self.plan.leave(s)
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        if k == 0 {
            return;
        }
        let lanes = self.plan.lanes();
        assert_eq!(s.len(), lanes, "avx512f: a loop form has {lanes} lanes");
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, s, None);
        // SAFETY: built by dispatch after the AVX-512F check; the scratch has
        // the layout the generated code addresses, and the table is the plan's.
        unsafe { (self.sqr)(p, self.plan.table.as_ptr() as *const u64, k) };
        s.copy_from_slice(x_lanes(&scratch, lanes));
        if self.secret {
            // SAFETY: p is the scratch filled above.
            unsafe { wipe(p, lanes) };
        }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let lanes = self.plan.lanes();
        assert!(a.len() == lanes && b.len() == lanes, "avx512f: a loop form has {lanes} lanes");
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, a, Some(b));
        // SAFETY: as in sqr_n_internal.
        unsafe { (self.mul)(p, self.plan.table.as_ptr() as *const u64) };
        let out = x_lanes(&scratch, lanes).to_vec();
        if self.secret {
            // SAFETY: as above.
            unsafe { wipe(p, lanes) };
        }
        out
    }
    /// The RSA kernel's fixed-window loop in one scratch: the accumulator
    /// stays at `X` (doubled at `D`) from window to window, each window's
    /// entry is selected under a mask straight into `D`, the product's
    /// second operand, and `D` is doubled again after it.  The generic loop
    /// refilled the scratch twice per window and selected in scalar code:
    /// about a third of a 2048-bit operation's time.  Constant time as the
    /// generic loop (same operations, no branch or address on `e`); the
    /// scratch is zeroed at the end.
    fn pow_windows(&self, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {
        use modforge_ct::bits_at;
        let lanes = self.plan.lanes();
        assert!(
            s.len() == lanes && windows >= 1 && table.len() == lanes << w,
            "pow_windows: a {lanes}-lane accumulator and a table of 2^w entries"
        );
        let tb = self.plan.table.as_ptr() as *const u64;
        let mut scratch = MaybeUninit::<Scratch>::uninit();
        let p = scratch.as_mut_ptr() as *mut u64;
        // SAFETY: built by dispatch after the AVX-512F check (or by the RSA
        // kernel after the same check); every pointer stays in the scratch.
        unsafe {
            zero_read_first(p, lanes);
            select_into(p.add(X_DIG), table, lanes, bits_at(e, (windows - 1) * w, w));
            double_into(p.add(D_DIG), p.add(X_DIG), lanes);
            for j in (0..windows - 1).rev() {
                (self.sqr)(p, tb, w as u64);
                let digit = bits_at(e, j * w, w);
                // The deliberate leak of the valgrind check (test builds only).
                #[cfg(feature = "ct-leak-test")]
                if digit == 0 {
                    continue;
                }
                select_into(p.add(D_DIG), table, lanes, digit);
                (self.mul)(p, tb);
                double_into(p.add(D_DIG), p.add(X_DIG), lanes);
            }
            s.copy_from_slice(x_lanes(&scratch, lanes));
            wipe(p, lanes);
        }
    }
}
