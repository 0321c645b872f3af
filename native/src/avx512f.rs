//! The AVX-512F kernel (x86-64 only): the 32-bit-product table fold of
//! [`crate::fold32`] with `vpmuludq`, for CPUs that have AVX-512F but not
//! IFMA (Skylake-SP, Cascade Lake, Cooper Lake: most cloud Xeons of
//! 2017-2021).  Reached only through [`crate::dispatch`], which checks the CPU
//! first; its digits are exactly those of the portable twin
//! [`crate::fold32::Fold32PortableKernel`] (the tests compare the two).
//!
//! One squaring (code generated per shape by `src/build_avx512f.rs`, one
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
//! * the columns are carried once (two digits up) and stored; the fold
//!   streams the table, two rows per 64-bit lane, into `ceil(K/8)`
//!   accumulators; one more carry pass gives the next digits.
//!
//! Measured choices (docs/native.md, "The AVX-512F backend"): intrinsics lost
//! to LLVM's narrowing of the broadcasts and masked products; the table with
//! one row per lane does not fit L1 at 2048 bits (28 % slower there).

#![cfg(target_arch = "x86_64")]

use core::arch::asm;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

use crate::fold32::Fold32Plan;
use crate::fold32_shape::{D_DIG, MAX_VL, PAD, SCRATCH_LANES, SQ, X_DIG};
use crate::kernel::Kernel;

include!(concat!(env!("OUT_DIR"), "/avx512f_gen.rs"));

/// The kernel's working memory (about 9.5 KiB, on the stack).
#[repr(C, align(64))]
struct Scratch([u64; SCRATCH_LANES]);

/// Lanes the kernel may read before it writes them: the padded `X` and
/// `D` and the diagonal squares `SQ` (the expand of the top block reads
/// past the last square).  `E` and `COLS` are written first.
const READ_FIRST: usize = SQ + 8 * MAX_VL + 8;

/// Fills `s` with `x` at `X` and `y` (or `2x` when `y` is `None`) at `D`,
/// everything else the kernel reads first zero; returns its first lane.
fn fill(s: &mut MaybeUninit<Scratch>, x: &[u64], y: Option<&[u64]>) -> *mut u64 {
    let p = s.as_mut_ptr() as *mut u64;
    // SAFETY: READ_FIRST <= SCRATCH_LANES, and the copies stay inside X and D
    // (`x`, `y` have at most 8 * MAX_VL lanes, asserted by the callers).
    unsafe {
        core::ptr::write_bytes(p, 0, READ_FIRST);
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

/// The AVX-512F fold backend for one modulus.
pub struct Avx512fKernel {
    plan: Fold32Plan,
    sqr: unsafe fn(*mut u64, *const u64, u64),
    mul: unsafe fn(*mut u64, *const u64),
}

impl Avx512fKernel {
    /// # Safety
    /// The CPU must support AVX-512F (checked by [`crate::dispatch`]), and
    /// `m` must be odd, of 256 to 4096 bits.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        let plan = Fold32Plan::new(m);
        let sqr = sqr_n_generated(plan.r, plan.k).expect("a generated squaring for every fast width");
        let mul = mul_generated(plan.r, plan.k).expect("a generated product for every fast width");
        Avx512fKernel { plan, sqr, mul }
    }

    /// The plan (tests compare digits with the portable twin).
    pub fn plan(&self) -> &Fold32Plan {
        &self.plan
    }
}

// The scratch's regions must hold the widest shape the generator emits.
const _: () = assert!(PAD >= 8 && SQ >= D_DIG + 8 * MAX_VL + PAD && READ_FIRST <= SCRATCH_LANES);

impl Kernel for Avx512fKernel {
    fn name(&self) -> &'static str {
        "avx512f"
    }
    fn modulus(&self) -> &[u64] {
        &self.plan.ctx.m
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
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let lanes = self.plan.lanes();
        assert!(a.len() == lanes && b.len() == lanes, "avx512f: a loop form has {lanes} lanes");
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, a, Some(b));
        // SAFETY: as in sqr_n_internal.
        unsafe { (self.mul)(p, self.plan.table.as_ptr() as *const u64) };
        x_lanes(&scratch, lanes).to_vec()
    }
}
