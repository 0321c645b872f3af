//! The AVX2 kernel (x86-64 only): the 32-bit-product table fold of
//! [`crate::fold32`] with 256-bit `vpmuludq`, for the CPUs without AVX-512
//! (AMD Zen 1-3, Intel client cores from Alder Lake on, many cloud VMs).
//! Reached only through [`crate::dispatch`], which checks the CPU first.
//!
//! The digits, the bounds (B1)-(B5) and the packed table are exactly those of
//! the AVX-512F kernel and of the portable twin
//! [`crate::fold32::Fold32PortableKernel`] (the tests compare the digits, bit
//! for bit): the bounds depend on the digit width `r`, the table digits `K`
//! and the number of products in a lane, never on the vector width.  The
//! table (two rows per 64-bit lane, eight lanes per 64-byte line) is read as
//! two 256-bit halves per line, so one packing serves both kernels and the
//! 2048-bit table still fits the 32 KiB L1.
//!
//! One squaring is generated per shape by `build/build_avx2.rs` (one `asm!`
//! block around the whole loop): the square's column blocks of four lanes,
//! the two carry passes and the fold, through a scratch of about 7 KiB.

#![cfg(target_arch = "x86_64")]

use core::arch::asm;
use core::mem::MaybeUninit;

use crate::fold32::Fold32Plan;
use crate::kernel::Kernel;

include!(concat!(env!("OUT_DIR"), "/avx2_gen.rs"));

/// The kernel's working memory (on the stack).
#[repr(C, align(64))]
struct Scratch([u64; SCRATCH_LANES]);

/// Writes the constants and zeroes `X` and `D` with their padding (windows
/// reach past both ends); `C` and `R` are written before they are read.
/// Returns the scratch's first lane.
fn fill(s: &mut MaybeUninit<Scratch>, r: u32, x: &[u64], y: Option<&[u64]>) -> *mut u64 {
    let p = s.as_mut_ptr() as *mut u64;
    assert!(x.len() <= REGION - 2 * PAD && y.map_or(true, |y| y.len() == x.len()));
    let mut constants = [0u64; X_DIG - PAD];
    constants[DIGIT_MASK..DIGIT_MASK + 4].fill((1 << r) - 1);
    for n in 1..=3 {
        constants[KEEP_LOW + 4 * (n - 1)..][..n].fill(u64::MAX);
        constants[KEEP_HIGH + 4 * (n - 1) + n..][..4 - n].fill(u64::MAX);
    }
    // SAFETY: the regions lie inside the scratch (SCRATCH_LANES > D_DIG +
    // REGION - PAD) and the copies inside X and D (length checked above).
    unsafe {
        core::ptr::copy_nonoverlapping(constants.as_ptr(), p, constants.len());
        core::ptr::write_bytes(p.add(X_DIG - PAD), 0, 2 * REGION);
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

/// Zeroes everything the kernel wrote (the values of a secret-modulus plan).
///
/// # Safety
/// `p` points to a [`Scratch`].
unsafe fn wipe(p: *mut u64) {
    core::ptr::write_bytes(p, 0, SCRATCH_LANES);
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// The `lanes` lanes at `X` of a scratch the kernel has run on.
fn x_lanes(s: &MaybeUninit<Scratch>, lanes: usize) -> &[u64] {
    // SAFETY: X was zeroed by fill and written by the kernel only.
    unsafe { core::slice::from_raw_parts((s.as_ptr() as *const u64).add(X_DIG), lanes) }
}

// The regions must hold the widest shape (checked again per shape by the
// build script) and not overlap.
const _: () = assert!(X_DIG + REGION <= D_DIG + PAD && D_DIG + REGION - PAD <= C && R < SCRATCH_LANES);

/// The AVX2 fold backend for one modulus.
pub struct Avx2Kernel {
    plan: Fold32Plan,
    sqr: unsafe fn(*mut u64, *const u64, u64),
    mul: unsafe fn(*mut u64, *const u64),
    /// Zero the scratch after each call (for plans of a secret modulus).
    secret: bool,
}

impl Avx2Kernel {
    /// # Safety
    /// The CPU must support AVX2 (checked by [`crate::dispatch`]), and `m`
    /// must be odd, of 256 to 4096 bits.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        Self::from_plan(Fold32Plan::new(m), false)
    }

    /// The kernel over a plan built elsewhere; with `secret`, every call
    /// zeroes the scratch it used.
    ///
    /// # Safety
    /// As [`Avx2Kernel::new_unchecked`]; the plan's shape must be one of 256
    /// to 4096 bits.
    pub unsafe fn from_plan(plan: Fold32Plan, secret: bool) -> Self {
        let sqr = sqr_n_generated(plan.r, plan.k).expect("a generated squaring for every fast width");
        let mul = mul_generated(plan.r, plan.k).expect("a generated product for every fast width");
        Avx2Kernel { plan, sqr, mul, secret }
    }

    /// The plan (tests compare digits with the portable twin).
    pub fn plan(&self) -> &Fold32Plan {
        &self.plan
    }
}

impl Drop for Avx2Kernel {
    /// The table is a function of the modulus (secret in the RSA kernel).
    fn drop(&mut self) {
        self.plan.wipe();
    }
}

impl Kernel for Avx2Kernel {
    fn name(&self) -> &'static str {
        "avx2"
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
        assert_eq!(s.len(), lanes, "avx2: a loop form has {lanes} lanes");
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, self.plan.r, s, None);
        // SAFETY: built by dispatch after the AVX2 check; the scratch has the
        // layout the generated code addresses, and the table is the plan's.
        unsafe { (self.sqr)(p, self.plan.table.as_ptr() as *const u64, k) };
        s.copy_from_slice(x_lanes(&scratch, lanes));
        if self.secret {
            // SAFETY: p is the scratch filled above.
            unsafe { wipe(p) };
        }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let lanes = self.plan.lanes();
        assert!(a.len() == lanes && b.len() == lanes, "avx2: a loop form has {lanes} lanes");
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, self.plan.r, a, Some(b));
        // SAFETY: as in sqr_n_internal.
        unsafe { (self.mul)(p, self.plan.table.as_ptr() as *const u64) };
        let out = x_lanes(&scratch, lanes).to_vec();
        if self.secret {
            // SAFETY: as above.
            unsafe { wipe(p) };
        }
        out
    }
}
