//! The FP64-FMA kernel (x86-64 with AVX2 and FMA, no AVX-512 needed): the
//! radix-2^50 table fold of [`crate::fold`] with its digit products formed
//! by the double-precision fused multiply-add units, which on most x86 CPUs
//! without AVX-512 (AMD Zen 2-4 client parts, Intel from Haswell, Alder Lake
//! on) carry more multiplier bits per cycle than MULX.  Reached only through
//! [`crate::dispatch`], which checks the CPU first.
//!
//! # The exact split
//!
//! The loop forms are those of the IFMA kernel and of its portable twin
//! [`crate::fold::FoldPortableKernel`]: digits below `2^52`, and each
//! product `p = a b` wanted as IFMA returns it, `lo = p mod 2^52` and
//! `hi = floor(p / 2^52)`.  With the rounding mode set toward zero:
//!
//! * `ph = fma(a, b, 2^104)`: `2^104 + p` lies in `[2^104, 2^105)` (as `p <
//!   2^104`), where doubles are `2^52` apart, so truncation gives exactly
//!   `2^104 + hi 2^52`; its bit pattern is that of `2^104` plus `hi`.
//! * `s = ph - (2^104 + 2^52) = (hi - 1) 2^52`: exact (a multiple of `2^52`
//!   below `2^104` in magnitude; `2^104 + 2^52` is a double).
//! * `pl = fma(a, b, -s) = 2^52 + lo`: exact (in `[2^52, 2^53)`); its bit
//!   pattern is that of `2^52` plus `lo`.
//!
//! The bit patterns go straight into 64-bit integer lanes, and the known sum
//! of the anchors' patterns comes off once per accumulator: no conversion
//! between doubles and integers.  Inputs are exact doubles (digits `<
//! 2^52`), so the products, hence the columns, the fold and the next
//! digits, are bit for bit those of the portable twin (the tests compare
//! them after every step).
//!
//! The rounding mode is changed only inside the generated `asm!` blocks
//! (`build/build_fma.rs`), which restore the caller's MXCSR before they end,
//! as Rust requires of inline assembly: no code the compiler emits runs
//! toward zero.
//!
//! Constant time: the instruction stream depends on the digit count only;
//! floating-point latencies on x86 vary only for subnormal operands or
//! results, and every operand and result here is zero or a normal double of
//! at least `2^52` in magnitude, or an integer digit below `2^52`, whose
//! products and sums are exact.

#![cfg(target_arch = "x86_64")]

use core::arch::asm;
use core::mem::MaybeUninit;

use crate::fma_layout::*;
use crate::fold::{FoldPlan, LANES};
use crate::kernel::Kernel;

include!(concat!(env!("OUT_DIR"), "/fma_gen.rs"));

/// A 32-byte aligned vector of four lanes (one ymm register).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Lane4(pub [u64; 4]);

/// The kernel's working memory (about 7 KiB, on the stack).
#[repr(C, align(32))]
struct Scratch([u64; SCRATCH_LANES]);

/// The fold table as doubles: row `r` (`T_(K+r)`, `H = K + 2` rows) in
/// `ceil(K/4)` vectors, lanes `>= K` zero.
fn table_doubles(plan: &FoldPlan) -> Vec<Lane4> {
    let (k, nt) = (plan.k, plan.k.div_ceil(4));
    let mut out = vec![Lane4::default(); plan.h() * nt];
    for r in 0..plan.h() {
        let row = plan.row(r);
        for j in 0..k {
            let d = row[j / LANES].0[j % LANES];
            out[r * nt + j / 4].0[j % 4] = (d as i64 as f64).to_bits();
        }
    }
    out
}

/// Fills what the kernel reads before writing it, for `l`-digit loop forms
/// `x` (and `y`, the product's second operand): constants, `X`, `XD`, `DD`
/// and, for products, `YB`, each with the zero padding its windows reach
/// (the square builds its windows from `XD` and `DD` itself).  Returns the scratch's first lane.
fn fill(s: &mut MaybeUninit<Scratch>, l: usize, x: &[u64], y: Option<&[u64]>) -> *mut u64 {
    let nr = l.div_ceil(4);
    assert!(x.len() <= 4 * MAX_NR + 4 && x.len() >= 4 * nr && y.map_or(true, |y| y.len() == x.len()));
    let p = s.as_mut_ptr() as *mut u64;
    // Digits are below 2^52: the signed conversion is exact and branch-free.
    let f = |v: u64| (v as i64 as f64).to_bits();
    // SAFETY: every index below is inside the scratch (the layout's regions
    // have room for MAX_NR vectors plus their padding; checked above).
    unsafe {
        let put = |lane: usize, v: u64| *p.add(lane) = v;
        for lane in 0..4 {
            put(C104 + lane, BITS_TWO104);
            put(C104_52 + lane, (2f64.powi(104) + 2f64.powi(52)).to_bits());
            put(TWO52 + lane, BITS_TWO52);
            put(MASK50 + lane, (1 << 50) - 1);
        }
        for j in 0..4 * MAX_NR + 4 {
            let v = x.get(j).copied().unwrap_or(0);
            put(X + j, v);
            put(XD + j, if j < 4 * nr { f(v) } else { 0 });
            put(DD + j, if j < 4 * nr { f(2 * v) } else { 0 });
        }
        if let Some(y) = y {
            for j in 0..4 * nr + 8 {
                let v = if (4..4 + 4 * nr).contains(&j) { f(y[j - 4]) } else { 0 };
                put(YB + j, v);
            }
        }
    }
    p
}

/// `dst = table[idx]` (entries of `vecs` vectors), reading every entry
/// under a mask: no branch or address depends on `idx`.  A scalar
/// `ct_select` of the digits took longer than the window's product at 1536
/// bits (64 entries of 32 lanes).
#[target_feature(enable = "avx2")]
unsafe fn select_into(dst: *mut u64, table: &[Lane4], vecs: usize, idx: u64) {
    use core::arch::x86_64::*;
    let entries = table.len() / vecs;
    for v in 0..vecs {
        let mut acc = _mm256_setzero_si256();
        for i in 0..entries {
            let mask = _mm256_set1_epi64x(modforge_ct::eq_mask(i as u64, idx) as i64);
            let entry = _mm256_load_si256(table.as_ptr().add(i * vecs + v) as *const __m256i);
            acc = _mm256_or_si256(acc, _mm256_and_si256(entry, mask));
        }
        _mm256_storeu_si256(dst.add(4 * v) as *mut __m256i, acc);
    }
}

/// The FP64-FMA fold backend for one modulus.
pub struct FmaKernel {
    plan: FoldPlan,
    table: Vec<Lane4>,
    sqr: unsafe fn(*mut u64, *const u64, u64),
    mul: unsafe fn(*mut u64, *const u64),
    /// Zero the scratch after each call (the RSA kernel's values are secret).
    secret: bool,
}

impl FmaKernel {
    /// # Safety
    /// The CPU must support AVX2 and FMA (checked by [`crate::dispatch`]),
    /// and `m` must be odd, of 256 to 4096 bits.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        Self::from_plan(FoldPlan::new(m), false)
    }

    /// The kernel over a fold plan built elsewhere (the RSA kernel builds
    /// its own, in constant time, and sets `secret`).
    ///
    /// # Safety
    /// As [`FmaKernel::new_unchecked`]; the plan's digit count must be one
    /// the generator emitted (256- to 4096-bit moduli).
    pub unsafe fn from_plan(plan: FoldPlan, secret: bool) -> Self {
        let l = plan.l();
        let sqr = fma_sqr_n_generated(l).expect("a generated squaring for every fast width");
        let mul = fma_mul_generated(l).expect("a generated product for every fast width");
        let table = table_doubles(&plan);
        FmaKernel { plan, table, sqr, mul, secret }
    }

    fn lanes(&self) -> usize {
        LANES * self.plan.v
    }

}

/// Copies the digits at `X` of a scratch the kernel ran on for `l`-digit
/// values to `out`, then, if it held secrets (`wipe`), zeroes every region
/// the kernel writes or `fill` filled for that digit count (not the whole
/// 15 KiB: the RSA kernel's table of powers makes dozens of products).
fn finish(scratch: &mut MaybeUninit<Scratch>, l: usize, out: &mut [u64], wipe: bool) {
    let p = scratch.as_mut_ptr() as *mut u64;
    let (nr, nb) = (l.div_ceil(4), (2 * l).div_ceil(4));
    // SAFETY: X was filled by `fill` and written by the kernel only; every
    // range below is inside the scratch for l <= MAX_L.
    unsafe {
        out.copy_from_slice(core::slice::from_raw_parts(p.add(X), out.len()));
        if wipe {
            for (start, len) in [
                (LAST_HI, 2),
                (X, 4 * MAX_NR + 4),
                (XD, 4 * MAX_NR + 4),
                (DD, 4 * MAX_NR + 4),
                (YB, 4 * nr + 8),
                (DDW, 16 * nr),
                (YQW, 32 * nr),
                (COLS, 4 * nb),
                (DR, l + 1),
            ] {
                core::ptr::write_bytes(p.add(start), 0, len);
            }
            core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl Drop for FmaKernel {
    /// The tables and the Montgomery constants are functions of the modulus,
    /// secret in the RSA kernel (which wipes the copy `into_fold_plan` hands
    /// it; this is the kernel's own).
    fn drop(&mut self) {
        use modforge_ct::zeroize;
        for lane in self.table.iter_mut() {
            zeroize(&mut lane.0);
        }
        for lane in self.plan.table.iter_mut().chain(self.plan.tail.iter_mut()) {
            zeroize(&mut lane.0);
        }
        let ctx = &mut self.plan.ctx;
        zeroize(&mut ctx.m);
        zeroize(core::slice::from_mut(&mut ctx.m0inv));
        zeroize(&mut ctx.r2);
        zeroize(&mut ctx.r3);
    }
}

impl Kernel for FmaKernel {
    fn name(&self) -> &'static str {
        "fma"
    }
    fn modulus(&self) -> &[u64] {
        &self.plan.ctx.m
    }
    fn fold_plan(&self) -> Option<&FoldPlan> {
        Some(&self.plan)
    }
    fn into_fold_plan(self: Box<Self>) -> Option<FoldPlan> {
        Some(self.plan.clone())
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        self.plan.enter(x)
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        self.plan.leave(s)
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        let lanes = self.lanes();
        assert_eq!(s.len(), lanes, "fma: a loop form has {lanes} lanes");
        if k == 0 {
            return;
        }
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, self.plan.l(), s, None);
        // SAFETY: built by dispatch after the AVX2 + FMA check; the scratch
        // has the layout the generated code addresses, the table the plan's.
        unsafe { (self.sqr)(p, self.table.as_ptr() as *const u64, k) };
        finish(&mut scratch, self.plan.l(), s, self.secret);
    }
    /// The RSA kernel's fixed-window loop in one scratch: the accumulator
    /// stays in the kernel's digits (integers at `X`, doubles at `XD` and
    /// `DD`) from window to window, and each window's entry is
    /// selected under a mask and written as doubles straight into `YB`, the
    /// product's second operand; the generic loop refilled the whole
    /// scratch twice per window.  Constant time as the generic loop (same
    /// operations, no branch or address on `e`); the scratch is zeroed at
    /// the end.
    fn pow_windows(&self, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {
        use modforge_ct::{bits_at, ct_select, zeroize};
        let lanes = self.lanes();
        let l = self.plan.l();
        assert!(
            s.len() == lanes && windows >= 1 && table.len() == lanes << w,
            "pow_windows: a {lanes}-lane accumulator and a table of 2^w entries"
        );
        let tb = self.table.as_ptr() as *const u64;
        // The entries as doubles, once (digits below 2^52: exact), so that a
        // window's selection writes the product's operand directly.
        let vecs = l.div_ceil(4);
        let entries = 1usize << w;
        let mut doubles = vec![Lane4::default(); entries * vecs];
        for (i, entry) in table.chunks(lanes).enumerate() {
            for j in 0..4 * vecs {
                doubles[i * vecs + j / 4].0[j % 4] = (entry[j] as i64 as f64).to_bits();
            }
        }
        let mut acc = vec![0u64; lanes];
        ct_select(&mut acc, table, lanes, bits_at(e, (windows - 1) * w, w));
        let mut sel = vec![0u64; lanes];
        let mut scratch = MaybeUninit::<Scratch>::uninit();
        let p = fill(&mut scratch, l, &acc, Some(&sel));
        for j in (0..windows - 1).rev() {
            // SAFETY: built by dispatch (or the RSA kernel) after the AVX2 +
            // FMA check; the scratch was filled for this digit count.
            unsafe { (self.sqr)(p, tb, w as u64) };
            let digit = bits_at(e, j * w, w);
            // The deliberate leak of the valgrind check (test builds only).
            #[cfg(feature = "ct-leak-test")]
            if digit == 0 {
                continue;
            }
            // SAFETY: YB has room for 4 ceil(L/4) digits after its padding;
            // the CPU has AVX2 (as above).
            unsafe {
                select_into(p.add(YB + 4), &doubles, vecs, digit);
                (self.mul)(p, tb);
            }
        }
        for lane in doubles.iter_mut() {
            zeroize(&mut lane.0);
        }
        zeroize(&mut acc);
        zeroize(&mut sel);
        finish(&mut scratch, l, s, true);
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let lanes = self.lanes();
        assert!(a.len() == lanes && b.len() == lanes, "fma: a loop form has {lanes} lanes");
        let mut scratch = MaybeUninit::uninit();
        let p = fill(&mut scratch, self.plan.l(), a, Some(b));
        // SAFETY: as in sqr_n_internal.
        unsafe { (self.mul)(p, self.table.as_ptr() as *const u64) };
        let mut out = vec![0u64; lanes];
        finish(&mut scratch, self.plan.l(), &mut out, self.secret);
        out
    }
}
