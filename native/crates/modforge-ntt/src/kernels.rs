//! The two passes of the 4-step, written once over [`Packed`] and instantiated per backend.  The
//! functions behind [`Kernels`] are the only ones compiled for an instruction set; [`Kernels::for_backend`]
//! is where the crate picks them, from the backend the caller checked with `Backend::supported`.

use std::sync::atomic::{AtomicBool, Ordering};

use modforge_goldilocks::scalar::{self, Portable4};
use modforge_goldilocks::{Backend, Packed, P};
use rayon::prelude::*;

use crate::plan::{cached_plan_split, split_log_n2, Plan, MIN_FOUR_STEP_LOG};

/// Lanes of a pass-1 strip (adjacent columns of the n1 x (n2 * columns) view).
const STRIP_LANES: usize = 16;

/// What both passes read: the plan, the buffers and the shape.  Raw pointers because strips (pass 1) and
/// row groups (pass 2) of one buffer go to different threads; they never overlap.
struct Ctx<'a> {
    plan: &'a Plan,
    /// Pass 1 reads `source` and writes `middle` (the same strip positions); pass 2 reads `middle` and
    /// writes `output`.  `source` may be `middle` (pass 1 in place) or `output` (the whole transform in
    /// place in `output`, with `middle` as scratch).
    source: *mut u64,
    middle: *mut u64,
    output: *mut u64,
    columns: usize,
    /// Pass 1: lanes per strip.  Pass 2: rows per group and lanes (= rows * columns).
    strip_lanes: usize,
    group_rows: usize,
    group_lanes: usize,
    /// Adjacent strips (pass 1) and row groups (pass 2) done by one task: see [`tasks_of`].
    strips_per_task: usize,
    groups_per_task: usize,
    /// Forward coset: (shift, shift^n2).
    shift: Option<(u64, u64)>,
    /// Pass 1 checks that every element it reads is canonical (< p), and sets `non_canonical` if not:
    /// the check costs nothing beside the gather, where a separate scan is a serial pass over memory.
    check: bool,
    non_canonical: AtomicBool,
}

// SAFETY: the pointers are only dereferenced at disjoint strips / row groups, one task each.
unsafe impl Sync for Ctx<'_> {}

type PassFn = unsafe fn(&Ctx, usize, &mut [u64]);

struct Kernels {
    strip: PassFn,
    group: PassFn,
}

/// The kernels of one backend for the lane counts compiled as constants (8, 16) and any other (0).
#[cfg(target_arch = "x86_64")]
macro_rules! backend_kernels {
    ($module:ident, $packed:ty, $feature:literal) => {
        mod $module {
            use super::*;
            #[target_feature(enable = $feature)]
            pub unsafe fn strip<const L: usize>(ctx: &Ctx, s: usize, block: &mut [u64]) {
                // SAFETY: the instruction set is enabled here; forwarded contract.
                unsafe { super::strip::<$packed, L>(ctx, s, block) }
            }
            #[target_feature(enable = $feature)]
            pub unsafe fn group<const L: usize>(ctx: &Ctx, g: usize, block: &mut [u64]) {
                // SAFETY: the instruction set is enabled here; forwarded contract.
                unsafe { super::group::<$packed, L>(ctx, g, block) }
            }
            pub fn kernels(strip_lanes: usize, group_lanes: usize) -> Kernels {
                Kernels {
                    strip: match strip_lanes {
                        8 => strip::<8>,
                        16 => strip::<16>,
                        _ => strip::<0>,
                    },
                    group: match group_lanes {
                        8 => group::<8>,
                        16 => group::<16>,
                        _ => group::<0>,
                    },
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
backend_kernels!(avx2, modforge_goldilocks::avx2::Avx2, "avx2");
#[cfg(target_arch = "x86_64")]
backend_kernels!(avx512, modforge_goldilocks::avx512::Avx512, "avx512f");

mod portable {
    use super::*;
    unsafe fn strip<const L: usize>(ctx: &Ctx, s: usize, block: &mut [u64]) {
        // SAFETY: forwarded contract.
        unsafe { super::strip::<Portable4, L>(ctx, s, block) }
    }
    unsafe fn group<const L: usize>(ctx: &Ctx, g: usize, block: &mut [u64]) {
        // SAFETY: forwarded contract.
        unsafe { super::group::<Portable4, L>(ctx, g, block) }
    }
    pub fn kernels(_strip_lanes: usize, _group_lanes: usize) -> Kernels {
        Kernels { strip: strip::<0>, group: group::<0> }
    }
}

impl Kernels {
    /// The one place the crate picks compiled code for a backend (checked supported by the caller).
    fn for_backend(backend: Backend, strip_lanes: usize, group_lanes: usize) -> Kernels {
        match backend {
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::kernels(strip_lanes, group_lanes),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::kernels(strip_lanes, group_lanes),
            _ => portable::kernels(strip_lanes, group_lanes),
        }
    }
}

/// One radix-2 DIF stage of half-size `half` over the rows of `block`; `twiddles[j * stride]` = w_(2 half)^j.
#[inline(always)]
unsafe fn dif_stage2<K: Packed>(block: *mut u64, m: usize, half: usize, stride: usize, lanes: usize, twiddles: &[u64]) {
    for base in (0..m).step_by(2 * half) {
        for j in 0..half {
            // SAFETY: rows base + j and base + j + half are < m; lanes are in the row.
            unsafe {
                let u_row = block.add((base + j) * lanes);
                let v_row = block.add((base + j + half) * lanes);
                let w = K::splat(*twiddles.get_unchecked(j * stride));
                for l in (0..lanes).step_by(K::WIDTH) {
                    let (u, v) = (K::load(u_row.add(l)), K::load(v_row.add(l)));
                    K::store(u_row.add(l), K::add(u, v));
                    K::store(v_row.add(l), K::mul(K::sub(u, v), w));
                }
            }
        }
    }
}

/// Two radix-2 DIF stages at once (half-sizes 2q and q) as a radix-4 butterfly: with W = w_(4q),
/// d = a0 - a2 and e = w_4 (a1 - a3), the rows become
///
/// ```text
/// (a0 + a2) + (a1 + a3),  ((a0 + a2) - (a1 + a3)) W^2j,  (d + e) W^j,  (d - e) W^3j,
/// ```
///
/// exactly the two radix-2 stages' outputs, with three general products and one by w_4 = 2^48 (shifts
/// and a reduction) instead of four general ones; for j = 0 only the one by w_4.  The inverse transform's
/// w_4 is -2^48: `NEG` swaps the subtraction instead.  Four rows are loaded and stored once.
#[inline(always)]
unsafe fn dif_stage4<K: Packed, const NEG: bool>(block: *mut u64, m: usize, q: usize, stride: usize, lanes: usize,
                                                  twiddles: &[u64]) {
    for base in (0..m).step_by(4 * q) {
        for j in 0..q {
            // SAFETY: rows base + j + {0, q, 2q, 3q} are < m; lanes are in the row; 3 j stride < m.
            unsafe {
                let r0 = block.add((base + j) * lanes);
                let r1 = block.add((base + j + q) * lanes);
                let r2 = block.add((base + j + 2 * q) * lanes);
                let r3 = block.add((base + j + 3 * q) * lanes);
                let twiddled = j != 0;
                let w1 = K::splat(*twiddles.get_unchecked(j * stride));
                let w2 = K::splat(*twiddles.get_unchecked(2 * j * stride));
                let w3 = K::splat(*twiddles.get_unchecked(3 * j * stride));
                for l in (0..lanes).step_by(K::WIDTH) {
                    let (a0, a1, a2, a3) = (K::load(r0.add(l)), K::load(r1.add(l)), K::load(r2.add(l)), K::load(r3.add(l)));
                    let (x0, x1, d) = (K::add(a0, a2), K::add(a1, a3), K::sub(a0, a2));
                    let e = K::mul_omega4(if NEG { K::sub(a3, a1) } else { K::sub(a1, a3) });
                    let (y1, y2, y3) = (K::sub(x0, x1), K::add(d, e), K::sub(d, e));
                    K::store(r0.add(l), K::add(x0, x1));
                    if twiddled {
                        K::store(r1.add(l), K::mul(y1, w2));
                        K::store(r2.add(l), K::mul(y2, w1));
                        K::store(r3.add(l), K::mul(y3, w3));
                    } else {
                        K::store(r1.add(l), y1);
                        K::store(r2.add(l), y2);
                        K::store(r3.add(l), y3);
                    }
                }
            }
        }
    }
}

/// Radix-2 DIF over the `2^log_m` rows of `block` (row stride `lanes`, a multiple of K::WIDTH): natural
/// order in, bit-reversed out; `twiddles[j]` = w_m^j for j < m.  Stages go two at a time, one alone
/// first when their number is odd.
#[inline(always)]
unsafe fn dif_rows<K: Packed, const NEG: bool>(block: *mut u64, log_m: u32, lanes: usize, twiddles: &[u64]) {
    let m = 1usize << log_m;
    let mut half = m >> 1;
    let mut stride = 1usize;
    if log_m % 2 == 1 {
        // SAFETY: forwarded.
        unsafe { dif_stage2::<K>(block, m, half, stride, lanes, twiddles) };
        half >>= 1;
        stride <<= 1;
    }
    while half >= 2 {
        // SAFETY: forwarded.
        unsafe { dif_stage4::<K, NEG>(block, m, half / 2, stride, lanes, twiddles) };
        half >>= 2;
        stride <<= 2;
    }
}

/// [`dif_rows`] for the plan's direction.
#[inline(always)]
unsafe fn dif_rows_for<K: Packed>(plan: &Plan, block: *mut u64, log_m: u32, lanes: usize, twiddles: &[u64]) {
    // SAFETY: forwarded.
    unsafe {
        if plan.inverse {
            dif_rows::<K, true>(block, log_m, lanes, twiddles)
        } else {
            dif_rows::<K, false>(block, log_m, lanes, twiddles)
        }
    }
}

/// Pass 1 on task `s`: strips s * per .. s * per + per - 1 (`per` = `ctx.strips_per_task` adjacent strips,
/// so that each input row is read, and each middle row written, as one run of per * lanes elements:
/// fewer DRAM row openings and TLB misses per byte than one strip's two cache lines).  Each strip is
/// gathered as n1 rows x lanes (times shift^j for a coset) into its own part of the block, transformed
/// along the rows, and its row bitrev(r) written back to row r of the strip.
///
/// # Safety
/// `block` holds per * n1 * lanes; the task's strips exist; no other task touches them.
#[inline(always)]
unsafe fn strip<K: Packed, const L: usize>(ctx: &Ctx, s: usize, block: &mut [u64]) {
    let plan = ctx.plan;
    let (n1, n2) = (1usize << plan.log_n1, 1usize << plan.log_n2);
    let width = n2 * ctx.columns;
    // A compile-time lane count (L > 0) turns every row copy into a few vector moves; with a runtime
    // count LLVM makes each a call to memcpy, which cost a quarter of the time.
    let lanes = if L > 0 { L } else { ctx.strip_lanes };
    let per = ctx.strips_per_task;
    let run = per * lanes;
    let first = s * run;
    let sub = n1 * lanes;
    let b = block.as_mut_ptr();
    // OR of (x >= p) over the strips; a vectorised compare of each row while it is in L1.
    let mut non_canonical = false;
    // SAFETY: rows j1 < n1 of the strips lie inside the input; the block holds per * n1 * lanes.
    unsafe {
        match ctx.shift {
            None => {
                for j1 in 0..n1 {
                    let src = ctx.source.add(j1 * width + first);
                    for t in 0..per {
                        let dst = b.add(t * sub + j1 * lanes);
                        for l in (0..lanes).step_by(K::WIDTH) {
                            K::store(dst.add(l), K::load(src.add(t * lanes + l)));
                        }
                    }
                    if ctx.check {
                        non_canonical |= std::slice::from_raw_parts(src, run).iter().fold(false, |a, &x| a | (x >= P));
                    }
                }
            }
            Some((shift, shift_n2)) => {
                // factor[i] = shift^(n2 j1 + j2(i)) for element i of the run, stepped by shift^n2 per row.
                let mut factors: Vec<u64> =
                    (0..run).map(|i| scalar::pow(shift, ((first + i) / ctx.columns) as u64)).collect();
                let step = K::splat(shift_n2);
                let f = factors.as_mut_ptr();
                for j1 in 0..n1 {
                    let src = ctx.source.add(j1 * width + first);
                    if ctx.check {
                        non_canonical |= std::slice::from_raw_parts(src, run).iter().fold(false, |a, &x| a | (x >= P));
                    }
                    for t in 0..per {
                        let dst = b.add(t * sub + j1 * lanes);
                        for l in (0..lanes).step_by(K::WIDTH) {
                            let i = t * lanes + l;
                            let factor = K::load(f.add(i));
                            K::store(dst.add(l), K::mul(K::load(src.add(i)), factor));
                            K::store(f.add(i), K::mul(factor, step));
                        }
                    }
                }
            }
        }
        if non_canonical {
            ctx.non_canonical.store(true, Ordering::Relaxed);
        }
        for t in 0..per {
            dif_rows_for::<K>(plan, b.add(t * sub), plan.log_n1, lanes, &plan.twiddles1);
        }
        for r in 0..n1 {
            let k1 = *plan.bitrev1.get_unchecked(r) as usize;
            let dst = ctx.middle.add(k1 * width + first);
            for t in 0..per {
                let src = b.add(t * sub + r * lanes);
                for l in (0..lanes).step_by(K::WIDTH) {
                    K::store(dst.add(t * lanes + l), K::load(src.add(l)));
                }
            }
        }
    }
}

/// Pass 2 on task `g`: row groups g * per .. g * per + per - 1 (`per` = `ctx.groups_per_task` adjacent
/// groups, so that each output row receives one run of per * lanes elements instead of one cache line),
/// each transformed by [`group_block`] into its part of the block; then block row r of each goes to
/// output rows k1 + n1 * bitrev(r).
///
/// # Safety
/// `block` holds per * (n2 + 2) * group_lanes; the task's groups exist; no other task writes their
/// output rows.
#[inline(always)]
unsafe fn group<K: Packed, const L: usize>(ctx: &Ctx, g: usize, block: &mut [u64]) {
    let plan = ctx.plan;
    let (n1, n2) = (1usize << plan.log_n1, 1usize << plan.log_n2);
    let lanes = if L > 0 { L } else { ctx.group_lanes };
    let per = ctx.groups_per_task;
    let sub = (n2 + 2) * lanes;
    for t in 0..per {
        // SAFETY: forwarded; sub-block t holds (n2 + 2) * lanes.
        unsafe { group_block::<K, L>(ctx, g * per + t, &mut block[t * sub..(t + 1) * sub]) };
    }
    let first = g * per * ctx.group_rows * ctx.columns;
    let b = block.as_ptr();
    // SAFETY: output rows k1 + n1 k2 of the task's groups hold per * lanes elements from `first` on.
    unsafe {
        for r in 0..n2 {
            let k2 = *plan.bitrev2.get_unchecked(r) as usize;
            let dst = ctx.output.add(first + n1 * k2 * ctx.columns);
            for t in 0..per {
                let src = b.add(t * sub + r * lanes);
                for l in (0..lanes).step_by(K::WIDTH) {
                    K::store(dst.add(t * lanes + l), K::load(src.add(l)));
                }
            }
        }
    }
}

/// One row group `g` of pass 2 (rows k1 = g * group_rows ..): gather the n2 x (rows x columns) block,
/// multiply row j2 by the twiddles w^(j2 k1) (times the scale), transform along j2; block row r then
/// belongs at output rows k1 + n1 * bitrev(r) ([`group`] writes it).
///
/// # Safety
/// `block` holds n2 * group_lanes plus 2 * group_lanes of twiddle state; group `g` exists.
#[inline(always)]
unsafe fn group_block<K: Packed, const L: usize>(ctx: &Ctx, g: usize, block: &mut [u64]) {
    let plan = ctx.plan;
    let n2 = 1usize << plan.log_n2;
    let columns = ctx.columns;
    let width = n2 * columns;
    let (rows, lanes) = (ctx.group_rows, if L > 0 { L } else { ctx.group_lanes });
    let k1_first = g * rows;
    let (data, state) = block.split_at_mut(n2 * lanes);
    let (factor, ratio) = state.split_at_mut(lanes);
    // The twiddles w^(j2 k1) (times the scale) of row j2, one of three ways, fewest products first:
    // read from the plan's table (one column, sizes it is made for); one scalar power per input row
    // k1, stepped by w^k1 per j2, when a vector never spans two rows; else a vector of powers per lane.
    let table = if columns == 1 && lanes == rows { plan.group_twiddles(rows) } else { None };
    let per_row = table.is_none() && columns % K::WIDTH == 0;
    for l in 0..lanes {
        factor[l] = plan.scale;
        ratio[l] = plan.row_roots[k1_first + l / columns];
    }
    let b = data.as_mut_ptr();
    let (f, q) = (factor.as_mut_ptr(), ratio.as_ptr());
    // SAFETY: every index stays in its row of the input / block / output (see the shapes above).
    unsafe {
        for j2 in 0..n2 {
            let dst = b.add(j2 * lanes);
            // Element copies, not memcpy calls: a row of the block takes `columns` elements from each of
            // `rows` input rows, a handful of words each time.
            if columns == 1 {
                for r in 0..rows {
                    *dst.add(r) = *ctx.middle.add((k1_first + r) * width + j2);
                }
            } else {
                for r in 0..rows {
                    let src = ctx.middle.add((k1_first + r) * width + j2 * columns);
                    for c in 0..columns {
                        *dst.add(r * columns + c) = *src.add(c);
                    }
                }
            }
            if let Some(table) = table {
                let t = table.as_ptr().add((g * n2 + j2) * rows);
                for l in (0..lanes).step_by(K::WIDTH) {
                    K::store(dst.add(l), K::mul(K::load(dst.add(l)), K::load(t.add(l))));
                }
            } else if per_row {
                for r in 0..rows {
                    let t = K::splat(factor[r * columns]);
                    for c in (0..columns).step_by(K::WIDTH) {
                        let at = dst.add(r * columns + c);
                        K::store(at, K::mul(K::load(at), t));
                    }
                    factor[r * columns] = scalar::mul(factor[r * columns], ratio[r * columns]);
                }
            } else {
                for l in (0..lanes).step_by(K::WIDTH) {
                    let t = K::load(f.add(l));
                    K::store(dst.add(l), K::mul(K::load(dst.add(l)), t));
                    K::store(f.add(l), K::mul(t, K::load(q.add(l))));
                }
            }
        }
        dif_rows_for::<K>(plan, b, plan.log_n2, lanes, &plan.twiddles2);
    }
}

/// One radix-2 transform per column, for sizes below the 4-step's.
fn small(plan: &Plan, input: &[u64], output: &mut [u64], columns: usize, shift: Option<u64>) {
    let n = 1usize << plan.log_n;
    let mut column = vec![0u64; n];
    for c in 0..columns {
        let mut factor = 1u64;
        for j in 0..n {
            column[j] = scalar::mul(input[j * columns + c], factor);
            if let Some(s) = shift {
                factor = scalar::mul(factor, s);
            }
        }
        let mut half = n >> 1;
        let mut stride = 1;
        while half >= 1 {
            for base in (0..n).step_by(2 * half) {
                for j in 0..half {
                    let (u, v) = (column[base + j], column[base + j + half]);
                    column[base + j] = scalar::add(u, v);
                    column[base + j + half] = scalar::mul(scalar::sub(u, v), plan.twiddles1[j * stride]);
                }
            }
            half >>= 1;
            stride <<= 1;
        }
        for r in 0..n {
            output[plan.bitrev1[r] as usize * columns + c] = scalar::mul(column[r], plan.scale);
        }
    }
}

/// Strips or groups per task out of `count`: four adjacent ones (a run of 4 x 128 bytes per row in
/// pass 1, 4 x 64 in pass 2, where one strip or group reads or writes one or two cache lines per row)
/// when that leaves at least 8 tasks to spread over the threads, else one.
fn tasks_of(count: usize) -> usize {
    const PER_TASK: usize = 4;
    if count.is_multiple_of(PER_TASK) && count / PER_TASK >= 8 {
        PER_TASK
    } else {
        1
    }
}

/// Rows of a pass-2 group: enough that rows * columns is a multiple of 8 lanes (and at least 8).
fn group_rows_for(columns: usize) -> usize {
    let mut rows = 1;
    while (rows * columns) % 8 != 0 {
        rows *= 2;
    }
    rows
}

thread_local! {
    /// Each worker's block (and twiddle state), kept between tasks and calls: no allocation and no page
    /// faults on the hot path.
    static BLOCK: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn with_block<R>(len: usize, f: impl FnOnce(&mut [u64]) -> R) -> R {
    BLOCK.with(|cell| {
        let mut block = cell.borrow_mut();
        if block.len() < len {
            block.resize(len, 0);
        }
        f(&mut block[..len])
    })
}

/// Where the passes read and write: see [`Ctx`].
pub(crate) enum Buffers<'a> {
    /// `input` is clobbered (pass 1 in place), the result goes to `output`.
    Into { input: &'a mut [u64], output: &'a mut [u64] },
    /// The result replaces `data`; `scratch` (same length) holds the middle of the transform.
    InPlace { data: &'a mut [u64], scratch: &'a mut [u64] },
}

/// The transform; shapes and backend already checked.  With `check`, the input's elements are checked
/// canonical on the way (in pass 1, before anything is written to the output): false, with the output
/// not written, if one is not.
pub(crate) fn run(log_n: u32, inverse: bool, backend: Backend, buffers: Buffers<'_>, columns: usize, shift: Option<u64>,
                  check: bool) -> bool {
    let group_rows = group_rows_for(columns);
    let group_lanes = group_rows * columns;
    let log_n2 = split_log_n2(log_n, group_lanes);
    let plan = cached_plan_split(log_n, log_n2, inverse);
    let (source, middle, output) = match buffers {
        Buffers::Into { input, output } => {
            if log_n < MIN_FOUR_STEP_LOG {
                if check && crate::first_not_canonical(input).is_some() {
                    return false;
                }
                small(&plan, input, output, columns, shift);
                return true;
            }
            (input.as_mut_ptr(), input.as_mut_ptr(), output.as_mut_ptr())
        }
        Buffers::InPlace { data, scratch } => {
            if log_n < MIN_FOUR_STEP_LOG {
                if check && crate::first_not_canonical(data).is_some() {
                    return false;
                }
                scratch.copy_from_slice(data);
                small(&plan, scratch, data, columns, shift);
                return true;
            }
            (data.as_mut_ptr(), scratch.as_mut_ptr(), data.as_mut_ptr())
        }
    };
    let (n1, n2) = (1usize << plan.log_n1, 1usize << plan.log_n2);
    let width = n2 * columns;
    // 16-lane strips (two whole cache lines per row); measured faster than 8 lanes even at 2^24, where
    // the 512 KiB block fills this CPU's L2.
    let strip_lanes = if width % STRIP_LANES == 0 { STRIP_LANES } else { 8 };
    let (strips_per_task, groups_per_task) = (tasks_of(width / strip_lanes), tasks_of(n1 / group_rows));
    let ctx = Ctx {
        plan: &plan,
        source,
        middle,
        output,
        columns,
        strip_lanes,
        group_rows,
        group_lanes,
        shift: shift.map(|s| (s, scalar::pow(s, n2 as u64))),
        strips_per_task,
        groups_per_task,
        check,
        non_canonical: AtomicBool::new(false),
    };
    let kernels = Kernels::for_backend(backend, strip_lanes, group_lanes);
    let strip_block = strips_per_task * n1 * strip_lanes;
    let group_block = groups_per_task * (n2 + 2) * group_lanes;
    // SAFETY (both loops): each strip / group index runs once; the block has the size the kernel needs;
    // the backend was checked by the caller; pass 2 starts after every strip of pass 1 is written.
    (0..width / strip_lanes / strips_per_task)
        .into_par_iter()
        .for_each(|s| with_block(strip_block, |block| unsafe { (kernels.strip)(&ctx, s, block) }));
    if ctx.non_canonical.load(Ordering::Relaxed) {
        return false;
    }
    (0..n1 / group_rows / groups_per_task)
        .into_par_iter()
        .for_each(|g| with_block(group_block, |block| unsafe { (kernels.group)(&ctx, g, block) }));
    true
}
