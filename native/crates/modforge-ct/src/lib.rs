//! Constant-time helpers shared by modforge's ring kernels and its RSA
//! private-key code: what secret-dependent work needs so that neither its
//! branches nor its memory addresses depend on the secret, and so that no
//! copy of a secret outlives the operation.
//!
//! * [`eq_mask`], [`ct_select`], [`bits_at`]: masked selection of a table
//!   entry by a secret index (every entry is read), and exponent digits;
//! * [`opaque_u64`], [`ct_sub_if_ge`]: masks the optimiser cannot turn back
//!   into branches;
//! * [`zeroize`], [`scrub_after`]: secret buffers overwritten before they are
//!   freed, and the stack and vector registers a secret computation used.
//!
//! The small helpers are `#[inline]`: they sit in the kernels' hot loops and
//! must inline across the crate boundary as they did inside one crate.
//!
//! The crate depends on nothing but `core` and `std`; everything above it
//! (the ring kernels, RSA) may depend on it, and it on nothing of modforge.
//!
//! ```
//! use modforge_ct::{bits_at, ct_select};
//!
//! // Four entries of two limbs each; the secret index 2 picks the third.
//! let table = [10, 11, 20, 21, 30, 31, 40, 41];
//! let mut out = [0u64; 2];
//! ct_select(&mut out, &table, 2, 2);
//! assert_eq!(out, [30, 31]);
//!
//! // Window digits of an exponent, across a limb boundary.
//! let e = [0xF000_0000_0000_0000u64, 0x5];
//! assert_eq!(bits_at(&e, 60, 8), 0x5F);
//! ```

/// Overwrite with zeros in a way the optimiser keeps.
#[inline]
pub fn zeroize(x: &mut [u64]) {
    for w in x.iter_mut() {
        // SAFETY: a valid, aligned `&mut u64`.
        unsafe { core::ptr::write_volatile(w, 0) };
    }
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Bytes of stack [`scrub_after`] overwrites: well over what the RSA
/// kernel's secret work uses below its caller.  Measured by
/// `modforge-rsa`'s `ct_tests::secret_work_leaves_no_stack_behind` (which fails if the work
/// outgrows it): 11.4 KiB at the deepest (2048-bit halves on `ifma`) in the
/// release build, about 470 KiB unoptimised.
pub const STACK_SCRUB_BYTES: usize = if cfg!(debug_assertions) { 1024 * 1024 } else { 32 * 1024 };

/// Run `f` (work on secrets) one frame down, then overwrite the stack it
/// used with zeros and clear the vector registers.  The kernels zero their
/// own scratch buffers, but not what the compiler spills: the generated IFMA
/// products and squares spill accumulators at 2048 bits and above, and those
/// copies of secret-derived values would otherwise stay below the stack
/// pointer until something else overwrites them.  Costs a 32 KiB `memset`,
/// well under 1% of a 2048-bit private operation.
#[inline(never)]
pub fn scrub_after<T>(f: impl FnOnce() -> T) -> T {
    // The scrub runs when the guard is dropped: after `f` returns, and also
    // when it panics (during unwinding).  Both calls start their frames at
    // the same stack pointer, so the scrub's area lies over every frame `f`
    // used (down to its size).
    let _scrub = ScrubOnDrop;
    run_one_frame_down(f)
}

struct ScrubOnDrop;

impl Drop for ScrubOnDrop {
    #[inline(always)]
    fn drop(&mut self) {
        scrub_stack();
        clear_vector_registers();
    }
}

#[inline(never)]
fn run_one_frame_down<T>(f: impl FnOnce() -> T) -> T {
    f()
}

#[inline(never)]
fn scrub_stack() {
    let mut area = core::mem::MaybeUninit::<[u8; STACK_SCRUB_BYTES]>::uninit();
    let p = area.as_mut_ptr() as *mut u8;
    // SAFETY: writes within the local array.
    unsafe { core::ptr::write_bytes(p, 0, STACK_SCRUB_BYTES) };
    // The area is dead after this; keep the stores.
    core::hint::black_box(p);
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

/// Zero every vector register the kernels use (all are caller-saved, so
/// nothing live is lost).
fn clear_vector_registers() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F; the registers are declared clobbered.
            unsafe { clear_zmm() };
        } else if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU has AVX.
            unsafe { core::arch::asm!("vzeroall", clobber_abi("C"), options(nostack, preserves_flags)) };
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn clear_zmm() {
    // vzeroall clears zmm0-15 whole; zmm16-31 need their own.
    core::arch::asm!(
        "vzeroall",
        "vpxord zmm16, zmm16, zmm16", "vpxord zmm17, zmm17, zmm17",
        "vpxord zmm18, zmm18, zmm18", "vpxord zmm19, zmm19, zmm19",
        "vpxord zmm20, zmm20, zmm20", "vpxord zmm21, zmm21, zmm21",
        "vpxord zmm22, zmm22, zmm22", "vpxord zmm23, zmm23, zmm23",
        "vpxord zmm24, zmm24, zmm24", "vpxord zmm25, zmm25, zmm25",
        "vpxord zmm26, zmm26, zmm26", "vpxord zmm27, zmm27, zmm27",
        "vpxord zmm28, zmm28, zmm28", "vpxord zmm29, zmm29, zmm29",
        "vpxord zmm30, zmm30, zmm30", "vpxord zmm31, zmm31, zmm31",
        clobber_abi("C"),
        options(nostack, preserves_flags),
    );
}

/// All ones when `a == b`, else zero, without a branch.
#[inline(always)]
pub fn eq_mask(a: u64, b: u64) -> u64 {
    let d = a ^ b;
    opaque_u64(((d | d.wrapping_neg()) >> 63).wrapping_sub(1))
}

/// `out = table[idx]` (entries of `len` limbs), reading every entry.
#[inline]
pub fn ct_select(out: &mut [u64], table: &[u64], len: usize, idx: u64) {
    // The deliberate secret-indexed read of the valgrind check (test builds
    // only): the one-line mistake a masked scan exists to prevent.
    #[cfg(feature = "ct-leak-index")]
    {
        let i = idx as usize * len;
        out.copy_from_slice(&table[i..i + len]);
        return;
    }
    #[allow(unreachable_code)]
    out.fill(0);
    for (i, entry) in table.chunks_exact(len).enumerate() {
        let mask = eq_mask(i as u64, idx);
        for (o, &e) in out.iter_mut().zip(entry) {
            *o |= e & mask;
        }
    }
}

/// Bits `pos .. pos + w` of `e` (limbs; bits past the end are zero).
#[inline]
pub fn bits_at(e: &[u64], pos: usize, w: usize) -> u64 {
    let (i, b) = (pos / 64, pos % 64);
    let lo = e.get(i).copied().unwrap_or(0) >> b;
    let hi = if b > 0 { e.get(i + 1).copied().unwrap_or(0) << (64 - b) } else { 0 };
    (lo | hi) & ((1u64 << w) - 1)
}


/// An optimisation barrier: the optimiser cannot see the value, so it cannot
/// turn masked code back into a branch on it.
#[inline(always)]
pub fn opaque_u64(x: u64) -> u64 {
    let mut y = x;
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: an empty asm statement (a comment in either assembler).
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) y, options(nomem, nostack, preserves_flags))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        y = core::hint::black_box(y);
    }
    y
}

/// `x = x - m` when `x >= m`, with the mask hidden from the optimiser
/// (the ring crate's `portable::sub_if_ge` was compiled into a branch on it: the
/// valgrind check of the RSA kernel found it).  `x` and `m` equal length.
#[inline]
pub fn ct_sub_if_ge(x: &mut [u64], m: &[u64]) {
    let n = m.len();
    let mut borrow = 0u64;
    for j in 0..n {
        let w = (x[j] as u128).wrapping_sub(m[j] as u128).wrapping_sub(borrow as u128);
        borrow = (w >> 127) as u64;
    }
    let mask = opaque_u64((borrow ^ 1).wrapping_neg());
    let mut borrow = 0u64;
    for j in 0..n {
        let w = (x[j] as u128).wrapping_sub((m[j] & mask) as u128).wrapping_sub(borrow as u128);
        x[j] = w as u64;
        borrow = (w >> 127) as u64;
    }
}

