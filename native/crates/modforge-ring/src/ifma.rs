//! AVX-512 IFMA kernels (x86-64 only).  Every function here carries
//! `#[target_feature(enable = "avx512f,avx512ifma")]` and is reached only
//! through [`crate::dispatch`], which checks the CPU first.
//!
//! [`FoldIfmaKernel`] is the table fold of [`crate::fold`] with vectors: the
//! loop value lives in `V` zmm registers (8 digits each); one step forms the
//! columns of the square (symmetric, shifted operand windows), carries the
//! high columns once, folds them with the precomputed table and carries once
//! more.  The digits it produces are exactly those of the portable twin
//! [`crate::fold::FoldPortableKernel`]; the tests compare the two.
//!
//! Data flow of one squaring (`V` vectors, `K` table digits, `L = K + 1`):
//!
//! * the digits are stored once to a zero-padded buffer `xs`, the doubled
//!   digits `D = 2x` to another (`ds`); the row of `x_i` is a broadcast of
//!   `xs[i]` (a load, no shuffle), and the operand window of block `b` and
//!   row `i` (digits `8b-i ..` of `D`) is one `valignq` of two registers of
//!   `D` or, for the rows that can wait about 15 cycles for the stores to
//!   reach the cache, an unaligned load from `ds` (no port-5 uop);
//! * output block `b` (columns `8b .. 8b+7`) accumulates its rows in two
//!   registers, low halves at their column and high halves one column up
//!   (so one window serves both); the four rows of quad `b` (`i = 4b ..
//!   4b+3`) take windows of `D` with the quad's own digits undoubled and the
//!   lower ones zeroed, which gives the quad's square whole (both orders of
//!   each pair, the diagonal once) without masks or a diagonal product.
//!   The top blocks, where rows would run past digit `L`, take the mirror
//!   image instead (broadcasts of `D`, windows of `x`: "column form").
//!   This part is straight-line code generated per digit count by
//!   `build/build_ifma.rs` (`sq_high_L`, `sq_low_L`);
//! * the high columns are carried once and stored for broadcasting; the fold
//!   streams the table row by row into `2V` accumulators (times 1 to 4
//!   interleaved sets, [`FOLD_SETS`]; the first starts from the square's
//!   low columns of the high phase, the second from the low phase's halves);
//!   where the table's last vector holds at most a few digits, most rows
//!   leave it out and its digits are taken column-wise ([`fold_rows`]); one
//!   more carry step gives the digits;
//! * two independent chains of one shape (the RSA halves) run interleaved
//!   ([`pow_pair_windows_with`]): each operation's column phase with the
//!   other chain's previous fold threaded through it, which fills the
//!   waits one chain leaves idle (docs/native.md, item 30).
//!
//! Choices measured (`cargo test --release bench_variants -- --ignored
//! --nocapture`, and `sqr_n` of two builds side by side; see
//! docs/native.md): a fused, fully unrolled step (fold rows interleaved with
//! the column blocks) spilled and lost; the fold's row loop unrolls once the
//! digit buffer is hidden from the optimiser (before, it forwarded the
//! stores into port-5 shuffles: 24% slower); a second, shifted table for the
//! high halves was not better; neither were the quad windows from a stored
//! copy (stored inside the square: 50% slower), masked broadcasts instead of
//! masked windows, or the top table vector's rows last.

#![cfg(target_arch = "x86_64")]

use core::arch::x86_64::*;
// Test builds on CPUs without IFMA: the two IFMA instructions in software.
#[cfg(feature = "ifma-emulated")]
use crate::ifma_emulated::{_mm512_madd52hi_epu64, _mm512_madd52lo_epu64};

use crate::fold::{
    tail_chunks, tail_columns, tail_first_row, FoldPlan, LANES, MAX_VECTORS, TAIL_COLUMNS_MAX,
};
use crate::kernel::Kernel;

/// Zero lanes below the digits in the window buffers (row windows start
/// at most 7 lanes below digit 0).
const PAD: usize = 16;
/// Lanes of a window buffer: padding, 2 * 8 * V columns, slack.
const BUF: usize = PAD + 2 * LANES * MAX_VECTORS + 2 * LANES;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Buf([u64; BUF]);

const M50: i64 = (1 << 50) - 1;

/// `LOW_LANES.0[n]`: all ones in the lanes below `n`, zero above.
#[repr(C, align(64))]
struct LaneMasks([[i64; LANES]; LANES]);

static LOW_LANES: LaneMasks = {
    let mut m = [[0i64; LANES]; LANES];
    let mut n = 0;
    while n < LANES {
        let mut lane = 0;
        while lane < n {
            m[n][lane] = -1;
            lane += 1;
        }
        n += 1;
    }
    LaneMasks(m)
};

/// `a + (b << 2)` one lane up: the high halves of block `b`, whose lanes
/// hold columns `8b+1 .. 8b+8`, moved to columns `8b .. 8b+7` (`prev` is the
/// block below) and weighted 4.
#[inline(always)]
unsafe fn add_high(lo: __m512i, hi: __m512i, hi_prev: __m512i) -> __m512i {
    _mm512_add_epi64(
        lo,
        _mm512_slli_epi64::<2>(_mm512_alignr_epi64::<7>(hi, hi_prev)),
    )
}

/// One parallel carry step on block `c` (previous block `prev`):
/// `(c mod 2^50) + (c_prev_lane >> 50)`.
#[inline(always)]
unsafe fn carry(c: __m512i, prev: __m512i) -> __m512i {
    let m = _mm512_set1_epi64(M50);
    _mm512_add_epi64(
        _mm512_and_si512(c, m),
        _mm512_alignr_epi64::<7>(_mm512_srli_epi64::<50>(c), _mm512_srli_epi64::<50>(prev)),
    )
}

/// Steps 2-4 of [`crate::fold`]: high digits, fold, carry.  `cols` holds the
/// `2V` column blocks (the low ones possibly incomplete), `low()` the rest
/// of the low columns as low and high halves (high halves one column up,
/// like the fold's); `dbuf` is scratch for the broadcasts.  `k` is
/// `plan.k`, passed as a literal by the generated loops so that the block
/// bounds and masks below fold into constants (measured: about 5% faster at
/// 1024 bits, with the row loop kept a loop).
#[inline(always)]
unsafe fn fold_tail<const V: usize, const V2: usize>(
    plan: &FoldPlan,
    k: usize,
    cols: &[__m512i; V2],
    low: impl FnOnce() -> ([__m512i; V], [__m512i; V]),
    dbuf: &mut Buf,
    sets: usize,
) -> [__m512i; V] {
    let prepared = fold_prepare::<V, V2>(plan, k, cols, low, dbuf);
    fold_finish::<V>(plan, k, &prepared, dbuf, sets)
}

/// The square's side of [`fold_tail`]: the high digits carried and stored
/// to `dbuf`; returns the kept low columns and the low phase's low and high
/// halves, which start the fold's first and second accumulator sets.
#[inline(always)]
unsafe fn fold_prepare<const V: usize, const V2: usize>(
    plan: &FoldPlan,
    k: usize,
    cols: &[__m512i; V2],
    low: impl FnOnce() -> ([__m512i; V], [__m512i; V]),
    dbuf: &mut Buf,
) -> [[__m512i; V]; 3] {
    debug_assert_eq!(k, plan.k);
    let zero = _mm512_setzero_si512();
    // High digits d_c, c >= K, into dbuf[c]; low columns kept in rl.
    let kb = k / LANES;
    let split: __mmask8 = (0xFFu32 << (k % LANES)) as u8; // lanes >= K in block kb
    let high = |b: usize| {
        if b == kb {
            _mm512_maskz_mov_epi64(split, cols[b])
        } else {
            cols[b]
        }
    };
    // Top block first, as the square computes them and the fold reads them.
    for b in (kb..V2).rev() {
        let prev = if b == kb { zero } else { high(b - 1) };
        let d = carry(high(b), prev);
        _mm512_store_epi64(dbuf.0.as_mut_ptr().add(LANES * b) as *mut i64, d);
    }
    let mut rl = [zero; V];
    for v in 0..V {
        rl[v] = if v < kb {
            cols[v]
        } else if v == kb {
            // An AND with a lane mask the optimiser cannot see: as a masked
            // move with a constant mask it became a `vpexpandq` (two port-5 uops).
            _mm512_and_si512(cols[v], _mm512_load_epi64(opaque(LOW_LANES.0[k % LANES].as_ptr())))
        } else {
            zero
        };
    }
    // The rest of the low columns, placed before the fold rows in program
    // order: the rows wait for the high digits and would otherwise fill the
    // scheduler, keeping this independent work out of it (measured: ~3%
    // faster at 1024 bits than after the rows).  They start the fold's
    // second accumulator set, so they cost no extra adds.
    let (ll, lh) = low();
    [rl, ll, lh]
}

/// The fold's side of [`fold_tail`]: the rows from the digits in `dbuf`
/// (after [`fold_prepare`]), then one carry step.
#[inline(always)]
unsafe fn fold_finish<const V: usize>(
    plan: &FoldPlan,
    k: usize,
    prepared: &[[__m512i; V]; 3],
    dbuf: &Buf,
    sets: usize,
) -> [__m512i; V] {
    // The row count is a constant: the rows unroll completely at 1024 bits
    // and above keep a loop with a known trip count, without leftover code
    // (measured: 2048 bits 1-2% and 4096 bits 5% faster, 1024 and 3072
    // bits within 1%).  Unrolled, it lost 24% before `dp` was laundered.
    let h = k + 2;
    let zero = _mm512_setzero_si512();
    let [rl, ll, lh] = *prepared;
    let table = plan.table.as_ptr() as *const i64;
    // Laundered like `xp`: once the rows unroll, the optimiser would
    // otherwise forward the digit stores and broadcast by `vpermq` (port 5).
    let dp = opaque(dbuf.0.as_ptr().add(k) as *const i64) as *const u64;
    // Independent accumulator sets shorten the dependency chains (H rows
    // deep with one set); more sets than registers allow would spill.
    let tail = plan.tail.as_ptr() as *const i64;
    let [rl, rh] = match sets {
        1 => fold_rows::<V, 1>(table, tail, k, dp, h, [rl, [zero; V]], [ll, lh]),
        2 => fold_rows::<V, 2>(table, tail, k, dp, h, [rl, [zero; V]], [ll, lh]),
        3 => fold_rows::<V, 3>(table, tail, k, dp, h, [rl, [zero; V]], [ll, lh]),
        _ => fold_rows::<V, 4>(table, tail, k, dp, h, [rl, [zero; V]], [ll, lh]),
    };
    carried_digits(&rl, &rh)
}

/// `R = low + 4 * high` one lane up, then one carry step: the next loop
/// value.  (A second table shifted one lane, so that the high halves land
/// in place, was measured slower: the extra loads cost more than the saved
/// shuffle.)
#[inline(always)]
unsafe fn carried_digits<const V: usize>(rl: &[__m512i; V], rh: &[__m512i; V]) -> [__m512i; V] {
    let zero = _mm512_setzero_si512();
    let mut x = [zero; V];
    let mut hprev = zero;
    let mut rprev = zero;
    for v in 0..V {
        let r = add_high(rl[v], rh[v], hprev);
        hprev = rh[v];
        x[v] = carry(r, rprev);
        rprev = r;
    }
    x
}

/// Variants of the squaring loop (const generic `VAR`), for
/// `bench_variants` only: `TWO_CHAINS` runs two independent chains in one
/// loop, `INDEPENDENT` squares the same value every step (if the step were
/// latency-bound, either would be faster per step; neither is), and
/// `VAR >> SETS_SHIFT`, when not zero, overrides [`FOLD_SETS`].
const TWO_CHAINS: u32 = 1;
const INDEPENDENT: u32 = 2;
const SETS_SHIFT: u32 = 4;
/// The variant the kernels use.
const KERNEL: u32 = 0;

/// Accumulator sets of the fold per vector count (measured; see
/// `bench_variants`), and the digit count from which three vectors take
/// two sets instead of three.
struct FoldSets([usize; MAX_VECTORS + 1], usize);

impl FoldSets {
    /// Sets for `v` vectors of `l` loop digits.  At three vectors two sets
    /// leave 6 adds out, and from 20 digits up their chains (half the
    /// `l + 1` rows each) are still short enough: 1024 bits 1.1-1.7% fewer
    /// IFMA slots (`bench_variants`), 1.5-2.7% faster side by side, 900 and
    /// 1000 bits 1-4%; 17 digits (768 bits) was 2-3% slower with two, 18
    /// (800 bits) even (2026-11-23).
    const fn with(&self, v: usize, l: usize) -> usize {
        if v == 3 && l >= self.1 {
            2
        } else {
            self.0[v]
        }
    }
}

const FOLD_SETS: FoldSets = FoldSets([1, 4, 4, 3, 2, 2, 1, 1, 1, 1, 1, 1], 20);

/// The fold proper: low / high halves of `d_r * table row r` for the `h`
/// high digits at `dp`, in `S` interleaved accumulator sets, the first set
/// starting from `init0` and the second from `init1` (added to the first
/// when `S = 1`).  Returns the summed low and high halves.  Rows go from the
/// top down: the square finishes its top blocks first, and the last rows
/// (the leftovers) then wait for the block that finishes last.
///
/// The table's last vector holds few digits at some widths (2048 bits: 2 of
/// 8, one of them always 0).  Then (`t = tail_columns(k, V)` of them) the
/// rows `first .. first + 8 * chunks` leave that vector out, and their
/// products with it are formed column-wise instead: eight consecutive high
/// digits (one aligned vector of the digit buffer) times the same column of
/// eight table rows (`tail`, see [`FoldPlan::tail`]), summed across lanes
/// at the end ([`lane_sums`]).  Each column's total is the same integer as
/// row-wise, so the digits are those of the portable twin.  When the last
/// vector holds no table digit at all (`K` a multiple of 8), every row
/// leaves it out.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn fold_rows<const V: usize, const S: usize>(
    table: *const i64,
    tail: *const i64,
    k: usize,
    dp: *const u64,
    h: usize,
    init0: [[__m512i; V]; 2],
    init1: [[__m512i; V]; 2],
) -> [[__m512i; V]; 2] {
    let zero = _mm512_setzero_si512();
    let mut al = [[zero; V]; S];
    let mut ah = [[zero; V]; S];
    al[0] = init0[0];
    ah[0] = init0[1];
    if S >= 2 {
        al[1] = init1[0];
        ah[1] = init1[1];
    } else {
        for v in 0..V {
            al[0][v] = _mm512_add_epi64(al[0][v], init1[0][v]);
            ah[0][v] = _mm512_add_epi64(ah[0][v], init1[1][v]);
        }
    }
    // Rows `narrow` take V - 1 vectors; all rows when the last vector of
    // the table is empty (then `t` is 0: no column-wise part).
    let t = tail_columns(k, V);
    let empty_last = k == LANES * (V - 1);
    let first = tail_first_row(k);
    let chunks = tail_chunks(k, V);
    let narrow = if empty_last {
        0..h
    } else if t > 0 {
        first..(first + LANES * chunks).min(h)
    } else {
        0..0
    };
    // In `r`, rows counted from the top: rows above `narrow`, `narrow`,
    // rows below it.
    let (above, below) = (h - narrow.end.max(narrow.start), h - narrow.start);
    fold_row_run::<V, S>(table, dp, h, 0, above, V, &mut al, &mut ah);
    let nv = if narrow.is_empty() { V } else { V - 1 };
    fold_row_run::<V, S>(table, dp, h, above, below, nv, &mut al, &mut ah);
    // The column-wise part, before the last rows (which wait for the last
    // high digits): column c's low halves and, one column up, high halves.
    let mut tail_sum = zero;
    if t > 0 {
        let mut lo = [zero; TAIL_COLUMNS_MAX];
        let mut hi = [zero; TAIL_COLUMNS_MAX];
        for q in 0..chunks {
            let d = _mm512_load_epi64(dp.add(first + LANES * q) as *const i64);
            for c in 0..t {
                let a = _mm512_load_epi64(tail.add(LANES * (q * t + c)));
                lo[c] = _mm512_madd52lo_epu64(lo[c], d, a);
                hi[c] = _mm512_madd52hi_epu64(hi[c], d, a);
            }
        }
        // Lane c of the last vector gets column c's low halves and column
        // c-1's high halves (times 4, radix 2^50).
        let mut e = [zero; TAIL_COLUMNS_MAX + 1];
        for c in 0..=t {
            let l = if c < t { lo[c] } else { zero };
            e[c] = if c == 0 {
                l
            } else {
                _mm512_add_epi64(l, _mm512_slli_epi64::<2>(hi[c - 1]))
            };
        }
        tail_sum = lane_sums(e);
    }
    fold_row_run::<V, S>(table, dp, h, below, h, V, &mut al, &mut ah);
    // The leftover rows' sets finish last: add them last.
    let mut out = [[zero; V]; 2];
    for v in 0..V {
        out[0][v] = al[S - 1][v];
        out[1][v] = ah[S - 1][v];
        for set in (0..S - 1).rev() {
            out[0][v] = _mm512_add_epi64(al[set][v], out[0][v]);
            out[1][v] = _mm512_add_epi64(ah[set][v], out[1][v]);
        }
    }
    if t > 0 {
        out[0][V - 1] = _mm512_mask_add_epi64(
            out[0][V - 1],
            ((1u32 << (t + 1)) - 1) as __mmask8,
            out[0][V - 1],
            tail_sum,
        );
    }
    out
}

/// Fold rows `h-1-r` for `r` in `from .. to` (counted from the top), `nv`
/// vectors each, `S` at a time into the sets `al`, `ah`; leftovers one to a
/// set, so that no chain ends more than one row after the others.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn fold_row_run<const V: usize, const S: usize>(
    table: *const i64,
    dp: *const u64,
    h: usize,
    from: usize,
    to: usize,
    nv: usize,
    al: &mut [[__m512i; V]; S],
    ah: &mut [[__m512i; V]; S],
) {
    let mut r = from;
    while r + S <= to {
        for set in 0..S {
            fold_row::<V, S>(table, dp, h - 1 - (r + set), nv, set, al, ah);
        }
        r += S;
    }
    for set in 0..S {
        if r + set >= to {
            break;
        }
        fold_row::<V, S>(table, dp, h - 1 - (r + set), nv, set, al, ah);
    }
}

/// Row `row` of the fold (`nv` vectors) into set `set`.
#[inline(always)]
unsafe fn fold_row<const V: usize, const S: usize>(
    table: *const i64,
    dp: *const u64,
    row: usize,
    nv: usize,
    set: usize,
    al: &mut [[__m512i; V]; S],
    ah: &mut [[__m512i; V]; S],
) {
    let d = _mm512_set1_epi64(*dp.add(row) as i64);
    let entry = table.add(LANES * V * row);
    for v in 0..nv {
        let a = _mm512_load_epi64(entry.add(LANES * v));
        al[set][v] = _mm512_madd52lo_epu64(al[set][v], d, a);
        ah[set][v] = _mm512_madd52hi_epu64(ah[set][v], d, a);
    }
}

/// The sums of the eight lanes of `e[0] .. e[3]`, in lanes 0 .. 3 (and
/// again in 4 .. 7): pairs of lanes, then of 128-bit blocks, then of
/// 256-bit halves, eight shuffles and four adds in all.
#[inline(always)]
unsafe fn lane_sums(e: [__m512i; TAIL_COLUMNS_MAX + 1]) -> __m512i {
    let pair = |a: __m512i, b: __m512i| {
        _mm512_add_epi64(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b))
    };
    // Lanes 2m, 2m+1: partial sums of a and b.
    let p01 = pair(e[0], e[1]);
    let p23 = pair(e[2], e[3]);
    // Blocks [e0 e1 | e0 e1 | e2 e3 | e2 e3], each a half's sum.
    let w = _mm512_add_epi64(
        _mm512_shuffle_i64x2::<0b10_00_10_00>(p01, p23),
        _mm512_shuffle_i64x2::<0b11_01_11_01>(p01, p23),
    );
    _mm512_add_epi64(
        _mm512_shuffle_i64x2::<0b10_00_10_00>(w, w),
        _mm512_shuffle_i64x2::<0b11_01_11_01>(w, w),
    )
}

/// Columns of a general product `x*y` from the digits of `x` in `xs` and of
/// `y` in `ys`: the loop form, kept as the reference the generated product
/// (`mul_high_L` / `mul_low_L`) is tested against.
#[cfg(test)]
#[inline(always)]
unsafe fn mul_cols<const V: usize, const V2: usize>(l: usize, xs: &Buf, ys: &Buf) -> [__m512i; V2] {
    let zero = _mm512_setzero_si512();
    let mut cols = [zero; V2];
    let xp = xs.0.as_ptr().add(PAD) as *const i64;
    let yp = ys.0.as_ptr().add(PAD) as *const i64;
    let mut hi_prev = zero;
    for b in 0..V2 {
        // Up to L rows per block: four independent accumulator chains per
        // half, or the IFMA latency (4 cycles per row in one chain) bounds
        // the product (measured: 2.0 squarings per product with one chain).
        let mut lo = [zero; 4];
        let mut hi = [zero; 4];
        let base = (LANES * b) as isize;
        let i_first = (LANES * b + 1).saturating_sub(l);
        let i_last = (l - 1).min(LANES * b + 7);
        let mut i = i_first;
        while i + 4 <= i_last + 1 {
            for c in 0..4 {
                let xi = _mm512_set1_epi64(*xp.add(i + c));
                let w = _mm512_loadu_epi64(yp.offset(base - (i + c) as isize));
                lo[c] = _mm512_madd52lo_epu64(lo[c], xi, w);
                hi[c] = _mm512_madd52hi_epu64(hi[c], xi, w);
            }
            i += 4;
        }
        while i <= i_last {
            let xi = _mm512_set1_epi64(*xp.add(i));
            let w = _mm512_loadu_epi64(yp.offset(base - i as isize));
            lo[0] = _mm512_madd52lo_epu64(lo[0], xi, w);
            hi[0] = _mm512_madd52hi_epu64(hi[0], xi, w);
            i += 1;
        }
        let lo = _mm512_add_epi64(_mm512_add_epi64(lo[0], lo[1]), _mm512_add_epi64(lo[2], lo[3]));
        let hi = _mm512_add_epi64(_mm512_add_epi64(hi[0], hi[1]), _mm512_add_epi64(hi[2], hi[3]));
        cols[b] = add_high(lo, hi, hi_prev);
        hi_prev = hi;
    }
    cols
}

#[inline(always)]
unsafe fn load_digits<const V: usize>(s: &[u64]) -> [__m512i; V] {
    let mut x = [_mm512_setzero_si512(); V];
    for v in 0..V {
        x[v] = _mm512_loadu_epi64(s.as_ptr().add(LANES * v) as *const i64);
    }
    x
}

#[inline(always)]
unsafe fn save_digits<const V: usize>(x: &[__m512i; V], s: &mut [u64]) {
    for v in 0..V {
        _mm512_storeu_epi64(s.as_mut_ptr().add(LANES * v) as *mut i64, x[v]);
    }
}

/// `p`, as far as the optimiser knows read and written by someone else.
#[inline(always)]
fn opaque(p: *const i64) -> *const i64 {
    let mut q = p;
    // SAFETY: an empty asm statement; it only launders the pointer.
    unsafe { core::arch::asm!("/* {0} */", inout(reg) q, options(nostack, preserves_flags)) };
    q
}

/// The squaring loop around a generated column function `cols` (one per
/// digit count, see `build/build_ifma.rs`).
#[inline(always)]
unsafe fn sqr_n_with<const V: usize, const V2: usize, const VAR: u32>(
    plan: &FoldPlan,
    k: usize,
    s: &mut [u64],
    count: u64,
    high: impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> [__m512i; V2],
    low: impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) {
    debug_assert!(V2 == 2 * V && plan.v == V && s.len() == LANES * V);
    let mut xs = Buf([0; BUF]);
    let mut ds = Buf([0; BUF]);
    let mut dbuf = Buf([0; BUF]);
    let mut x = load_digits::<V>(s);
    let sets = if VAR >> SETS_SHIFT != 0 { (VAR >> SETS_SHIFT) as usize } else { FOLD_SETS.with(V, k + 1) };
    if VAR & TWO_CHAINS != 0 {
        // Benchmark only: two independent chains, the second from x + 1.
        let mut ys = Buf([0; BUF]);
        let mut ebuf = Buf([0; BUF]);
        let mut es = Buf([0; BUF]);
        let mut y = x;
        y[0] = _mm512_add_epi64(y[0], _mm512_set1_epi64(1));
        for _ in 0..count / 2 {
            x = sqr_step::<V, V2>(plan, k, &x, &mut xs, &mut ds, &mut dbuf, sets, &high, &low);
            y = sqr_step::<V, V2>(plan, k, &y, &mut ys, &mut es, &mut ebuf, sets, &high, &low);
        }
        x[0] = _mm512_add_epi64(x[0], y[0]);
    } else if VAR & INDEPENDENT != 0 {
        // Benchmark only: every step squares the same value, so steps do not
        // wait for each other (throughput without the loop's dependency).
        let mut sink = _mm512_setzero_si512();
        for _ in 0..count {
            let y = sqr_step::<V, V2>(plan, k, &x, &mut xs, &mut ds, &mut dbuf, sets, &high, &low);
            for v in 0..V {
                sink = _mm512_xor_si512(sink, y[v]);
            }
        }
        x[0] = _mm512_xor_si512(x[0], sink);
    } else {
        for _ in 0..count {
            x = sqr_step::<V, V2>(plan, k, &x, &mut xs, &mut ds, &mut dbuf, sets, &high, &low);
        }
    }
    save_digits(&x, s);
}

/// One squaring of the loop value `x` (the body of [`sqr_n_with`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn sqr_step<const V: usize, const V2: usize>(
    plan: &FoldPlan,
    k: usize,
    x: &[__m512i; V],
    xs: &mut Buf,
    ds: &mut Buf,
    dbuf: &mut Buf,
    sets: usize,
    high: &impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> [__m512i; V2],
    low: &impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) -> [__m512i; V] {
    let (xp, dp, d) = square_operands(x, xs, ds);
    let c = high(xp, dp, x, &d);
    fold_tail::<V, V2>(plan, k, &c, || low(xp, dp, x, &d), dbuf, sets)
}

/// The square's operands: the digits stored for the row broadcasts (`xp`),
/// the doubled digits `d` in registers for the windows and stored for the
/// windows read from memory (`dp`).
#[inline(always)]
unsafe fn square_operands<const V: usize>(
    x: &[__m512i; V],
    xs: &mut Buf,
    ds: &mut Buf,
) -> (*const i64, *const i64, [__m512i; V]) {
    for v in 0..V {
        _mm512_store_epi64(xs.0.as_mut_ptr().add(PAD + LANES * v) as *mut i64, x[v]);
    }
    // Hide the stores from the optimiser: it would otherwise forward
    // them and turn the broadcasts into shuffles (port 5, shared with
    // IFMA) instead of loads (free ports).
    let xp = opaque(xs.0.as_ptr().add(PAD) as *const i64);
    let mut d = *x;
    for v in 0..V {
        d[v] = _mm512_add_epi64(x[v], x[v]);
    }
    // A copy of the doubled digits for the windows read from memory.
    for (v, dv) in d.iter().enumerate() {
        _mm512_store_epi64(ds.0.as_mut_ptr().add(PAD + LANES * v) as *mut i64, *dv);
    }
    (xp, opaque(ds.0.as_ptr().add(PAD) as *const i64), d)
}

/// Whether a paired exponentiation is generated for `l` digits (tests).
#[cfg(test)]
pub(crate) fn pow_pair_exists(l: usize) -> bool {
    pow_pair_generated(l).is_some()
}

/// Whether two chains of `k` table digits in `v` vectors can run
/// interleaved ([`pow_pair_windows_with`]): every fold row spans all `v`
/// vectors (no column-wise tail, no empty last vector), so the rows split
/// anywhere.
pub(crate) fn pairs_interleave(k: usize, v: usize) -> bool {
    v >= 1 && tail_columns(k, v) == 0 && k != LANES * (v - 1)
}


/// The other chain's fold, threaded through one chain's column phase
/// ([`FoldThread::rows`] between its parts): both are independent, so the
/// core runs the rows while the columns wait on their own chains, and the
/// reverse; one chain alone has no such work (docs/native.md, item 30).
/// The digits are those [`fold_finish`] gives.
struct FoldThread<const V: usize, const S: usize> {
    al: [[__m512i; V]; S],
    ah: [[__m512i; V]; S],
    table: *const i64,
    dp: *const u64,
    h: usize,
    /// Where the rows are cut: before the columns' high phase, between it
    /// and its carry, after (1024 bits, 23 rows: 11 / 11 / 1 was the fastest
    /// cut measured; 6 / 6 / 11 and 8 / 8 / 7 were 2-4 % slower).
    cuts: [usize; 2],
}

impl<const V: usize, const S: usize> FoldThread<V, S> {
    #[inline(always)]
    unsafe fn new(plan: &FoldPlan, k: usize, prepared: &[[__m512i; V]; 3], dbuf: &Buf) -> Self {
        debug_assert!(pairs_interleave(k, V) && plan.k == k);
        let zero = _mm512_setzero_si512();
        let [rl, ll, lh] = *prepared;
        let mut al = [[zero; V]; S];
        let mut ah = [[zero; V]; S];
        al[0] = rl;
        if S >= 2 {
            al[1] = ll;
            ah[1] = lh;
        } else {
            for v in 0..V {
                al[0][v] = _mm512_add_epi64(al[0][v], ll[v]);
                ah[0][v] = _mm512_add_epi64(ah[0][v], lh[v]);
            }
        }
        let h = k + 2;
        FoldThread {
            al,
            ah,
            table: plan.table.as_ptr() as *const i64,
            dp: opaque(dbuf.0.as_ptr().add(k) as *const i64) as *const u64,
            h,
            cuts: [h / 2, h - 1],
        }
    }

    /// Part `part` (0, 1, 2) of the rows.
    #[inline(always)]
    unsafe fn rows(&mut self, part: usize) {
        let from = if part == 0 { 0 } else { self.cuts[part - 1] };
        let to = if part == 2 { self.h } else { self.cuts[part] };
        fold_row_run::<V, S>(self.table, self.dp, self.h, from, to, V, &mut self.al, &mut self.ah);
    }

    /// The next loop value.
    #[inline(always)]
    unsafe fn digits(&self) -> [__m512i; V] {
        let mut rl = self.al[S - 1];
        let mut rh = self.ah[S - 1];
        for set in (0..S - 1).rev() {
            for v in 0..V {
                rl[v] = _mm512_add_epi64(self.al[set][v], rl[v]);
                rh[v] = _mm512_add_epi64(self.ah[set][v], rh[v]);
            }
        }
        carried_digits(&rl, &rh)
    }
}

/// One squaring's column phase of `x` (its buffers `xs`, `ds`, digits to
/// `dbuf`), with the fold `thread` of the other chain, if any, run through
/// it.  Returns the squaring's prepared fold.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn square_columns_threaded<const V: usize, const V2: usize, const S: usize>(
    plan: &FoldPlan,
    k: usize,
    x: &[__m512i; V],
    xs: &mut Buf,
    ds: &mut Buf,
    dbuf: &mut Buf,
    thread: &mut Option<FoldThread<V, S>>,
    high: &impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> [__m512i; V2],
    low: &impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) -> [[__m512i; V]; 3] {
    if let Some(t) = thread.as_mut() {
        t.rows(0);
    }
    let (xp, dp, d) = square_operands(x, xs, ds);
    let c = high(xp, dp, x, &d);
    if let Some(t) = thread.as_mut() {
        t.rows(1);
    }
    let prepared = fold_prepare::<V, V2>(plan, k, &c, || low(xp, dp, x, &d), dbuf);
    if let Some(t) = thread.as_mut() {
        t.rows(2);
    }
    prepared
}

/// One product's column phase (`x * y`, `x` broadcast from `xs`), like
/// [`square_columns_threaded`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn product_columns_threaded<const V: usize, const V2: usize, const S: usize>(
    plan: &FoldPlan,
    k: usize,
    x: &[__m512i; V],
    y: &[__m512i; V],
    xs: &mut Buf,
    dbuf: &mut Buf,
    thread: &mut Option<FoldThread<V, S>>,
    mul_high: &impl Fn(*const i64, &[__m512i; V]) -> [__m512i; V2],
    mul_low: &impl Fn(*const i64, &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) -> [[__m512i; V]; 3] {
    if let Some(t) = thread.as_mut() {
        t.rows(0);
    }
    for v in 0..V {
        _mm512_store_epi64(xs.0.as_mut_ptr().add(PAD + LANES * v) as *mut i64, x[v]);
    }
    let xp = opaque(xs.0.as_ptr().add(PAD) as *const i64);
    let c = mul_high(xp, y);
    if let Some(t) = thread.as_mut() {
        t.rows(1);
    }
    let prepared = fold_prepare::<V, V2>(plan, k, &c, || mul_low(xp, y), dbuf);
    if let Some(t) = thread.as_mut() {
        t.rows(2);
    }
    prepared
}

/// The entry `digit` of a table of `entries` loop values (`8V` digits
/// each), read by scanning every entry with a mask: no address depends on
/// `digit`.
#[inline(always)]
unsafe fn ct_select_entry<const V: usize>(table: &[u64], entries: usize, digit: u64) -> [__m512i; V] {
    debug_assert!(table.len() >= entries * LANES * V);
    let mut acc = [_mm512_setzero_si512(); V];
    for i in 0..entries {
        let mask = _mm512_set1_epi64(modforge_ct::eq_mask(i as u64, digit) as i64);
        let entry = table.as_ptr().add(i * LANES * V) as *const i64;
        for v in 0..V {
            let e = _mm512_loadu_epi64(entry.add(LANES * v));
            acc[v] = _mm512_or_si512(acc[v], _mm512_and_si512(e, mask));
        }
    }
    acc
}

/// Fixed-window exponentiation in loop form, everything in one call (the
/// RSA kernel's loop, [`crate::kernel::Kernel::pow_windows`]): `s <-
/// table[top digit]`, then per lower window `w` squarings and one product
/// with the masked-selected entry.  The operand buffers are set up once
/// per call (per-product setup was a third of the product's cost) and
/// zeroed before returning: they held secret digits.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pow_windows_with<const V: usize, const V2: usize>(
    plan: &FoldPlan,
    k: usize,
    s: &mut [u64],
    table: &[u64],
    e: &[u64],
    windows: usize,
    w: usize,
    high: impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> [__m512i; V2],
    low: impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
    mul_high: impl Fn(*const i64, &[__m512i; V]) -> [__m512i; V2],
    mul_low: impl Fn(*const i64, &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) {
    debug_assert!(V2 == 2 * V && plan.v == V && s.len() == LANES * V && windows >= 1);
    let entries = 1usize << w;
    assert!(table.len() == entries * LANES * V, "pow_windows: table of 2^w entries of 8V digits");
    let mut xs = Buf([0; BUF]);
    let mut ds = Buf([0; BUF]);
    let mut dbuf = Buf([0; BUF]);
    let sets = FOLD_SETS.with(V, k + 1);
    let mut x = ct_select_entry::<V>(table, entries, modforge_ct::bits_at(e, (windows - 1) * w, w));
    for j in (0..windows - 1).rev() {
        for _ in 0..w {
            x = sqr_step::<V, V2>(plan, k, &x, &mut xs, &mut ds, &mut dbuf, sets, &high, &low);
        }
        let digit = modforge_ct::bits_at(e, j * w, w);
        let y = ct_select_entry::<V>(table, entries, digit);
        // The deliberate leak of the constant-time checks (test builds only).
        #[cfg(feature = "ct-leak-test")]
        if digit == 0 {
            continue;
        }
        // The generated product (`mul_high_L` / `mul_low_L`): x's digits broadcast from memory, the
        // entry's vectors as they came out of the masked selection.
        for v in 0..V {
            _mm512_store_epi64(xs.0.as_mut_ptr().add(PAD + LANES * v) as *mut i64, x[v]);
        }
        let xp = opaque(xs.0.as_ptr().add(PAD) as *const i64);
        let cols = mul_high(xp, &y);
        x = fold_tail::<V, V2>(plan, k, &cols, || mul_low(xp, &y), &mut dbuf, sets);
    }
    save_digits(&x, s);
    for buf in [&mut xs, &mut ds, &mut dbuf] {
        modforge_ct::zeroize(&mut buf.0);
    }
}

/// [`pow_windows_with`] for two chains at once (the two halves of an RSA
/// private operation): chain `i` has the plan `plans[i]`, state `s[i]`,
/// window table `tables[i]` and exponent `es[i]`; both run `windows`
/// windows of `w` bits.  Their operations alternate (chain 0's squaring,
/// chain 1's, ..., chain 0's product, chain 1's), software-pipelined: each
/// one's column phase runs with the previous one's fold threaded through
/// it, and each waits only for the operation two places back, of its own
/// chain.  Results are those of two separate calls.  Nothing branches on
/// the exponents, and the buffers are zeroed before returning.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pow_pair_windows_with<const V: usize, const V2: usize, const S: usize>(
    plans: [&FoldPlan; 2],
    k: usize,
    s: [&mut [u64]; 2],
    tables: [&[u64]; 2],
    es: [&[u64]; 2],
    windows: usize,
    w: usize,
    high: impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> [__m512i; V2],
    low: impl Fn(*const i64, *const i64, &[__m512i; V], &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
    mul_high: impl Fn(*const i64, &[__m512i; V]) -> [__m512i; V2],
    mul_low: impl Fn(*const i64, &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) {
    let entries = 1usize << w;
    for i in 0..2 {
        assert!(V2 == 2 * V && plans[i].v == V && plans[i].k == k && s[i].len() == LANES * V);
        assert!(tables[i].len() == entries * LANES * V, "pow_pair_windows: tables of 2^w entries of 8V digits");
    }
    assert!(windows >= 1 && w >= 1 && pairs_interleave(k, V));
    // Operand, doubled-digit and digit buffers of chain 0, then of chain 1.
    let mut bufs = [Buf([0; BUF]); 6];
    // Every buffer reference below comes from this one pointer: the fold in
    // flight reads one chain's digit buffer while the other chain's are
    // written (disjoint elements).
    let base = bufs.as_mut_ptr();
    let top = (windows - 1) * w;
    let mut x = [
        ct_select_entry::<V>(tables[0], entries, modforge_ct::bits_at(es[0], top, w)),
        ct_select_entry::<V>(tables[1], entries, modforge_ct::bits_at(es[1], top, w)),
    ];
    // The fold in flight: always the other chain's (operations alternate).
    let mut thread: Option<FoldThread<V, S>> = None;
    for j in (0..windows - 1).rev() {
        for op in 0..=w {
            // w squarings, then the product with the window's entry.
            let ys = if op == w {
                let digits = [modforge_ct::bits_at(es[0], j * w, w), modforge_ct::bits_at(es[1], j * w, w)];
                // The deliberate leak of the constant-time checks (test builds only).
                #[cfg(feature = "ct-leak-test")]
                if digits[0] == 0 {
                    core::hint::black_box(&x);
                }
                Some([
                    ct_select_entry::<V>(tables[0], entries, digits[0]),
                    ct_select_entry::<V>(tables[1], entries, digits[1]),
                ])
            } else {
                None
            };
            for i in 0..2 {
                let (xs, ds, dbuf) = (&mut *base.add(3 * i), &mut *base.add(3 * i + 1), &mut *base.add(3 * i + 2));
                let prepared = match &ys {
                    None => square_columns_threaded::<V, V2, S>(plans[i], k, &x[i], xs, ds, dbuf, &mut thread, &high, &low),
                    Some(y) => product_columns_threaded::<V, V2, S>(
                        plans[i], k, &x[i], &y[i], xs, dbuf, &mut thread, &mul_high, &mul_low,
                    ),
                };
                if let Some(t) = thread.take() {
                    x[1 - i] = t.digits();
                }
                thread = Some(FoldThread::new(plans[i], k, &prepared, &*base.add(3 * i + 2)));
            }
        }
    }
    // The last fold in flight (chain 1's product), alone.
    if let Some(mut t) = thread.take() {
        for part in 0..3 {
            t.rows(part);
        }
        x[1] = t.digits();
    }
    let [s0, s1] = s;
    save_digits(&x[0], s0);
    save_digits(&x[1], s1);
    for buf in bufs.iter_mut() {
        modforge_ct::zeroize(&mut buf.0);
    }
}

include!(concat!(env!("OUT_DIR"), "/ifma_gen.rs"));

std::thread_local! {
    /// Scratch of the products, one set per thread: the fold's digit buffer
    /// (`[2]`, used by every product; fresh zeroed buffers per product cost
    /// about a tenth of a 2048-bit product in the multi-exponentiations), and
    /// the operand copies of the test-only loop form (`[0]`, `[1]`).
    static MUL_SCRATCH: core::cell::RefCell<Box<[Buf; 3]>> =
        core::cell::RefCell::new(Box::new([Buf([0; BUF]); 3]));
}

/// Zero this thread's product scratch (the RSA kernel calls it: the window
/// tables it builds with products are secret).
pub fn clear_mul_scratch() {
    MUL_SCRATCH.with(|cell| {
        for buf in cell.borrow_mut().iter_mut() {
            modforge_ct::zeroize(&mut buf.0);
        }
    });
}

/// `out <- a * b` (`8V` digits each) in the loop form (tests only); `out` may
/// be `a` (the operands are copied into the scratch buffers before anything is
/// written).
#[cfg(test)]
#[cfg_attr(not(feature = "ifma-emulated"), target_feature(enable = "avx512f,avx512ifma"))]
#[cfg_attr(feature = "ifma-emulated", target_feature(enable = "avx512f"))]
unsafe fn mul_fold<const V: usize, const V2: usize>(
    plan: &FoldPlan,
    a: *const u64,
    b: &[u64],
    out: *mut u64,
) {
    let (xs, ys, dbuf) = (scratch_buf(0), scratch_buf(1), scratch_buf(2));
    let a = core::slice::from_raw_parts(a, LANES * V);
    // Lanes PAD .. PAD + 8V + 8 are read beyond the zero padding below
    // PAD (never written): the digits, then one zero vector (a call with
    // more vectors may have left digits there).
    for (buf, src) in [(&mut *xs, a), (&mut *ys, b)] {
        buf.0[PAD..PAD + LANES * V].copy_from_slice(&src[..LANES * V]);
        buf.0[PAD + LANES * V..PAD + LANES * (V + 1)].fill(0);
    }
    // `dbuf` needs no clearing: `fold_tail` writes every lane it reads.
    let cols = mul_cols::<V, V2>(plan.k + 1, xs, ys);
    let zero = [_mm512_setzero_si512(); V];
    let x = fold_tail::<V, V2>(plan, plan.k, &cols, || (zero, zero), dbuf, FOLD_SETS.with(V, plan.k + 1));
    save_digits(&x, core::slice::from_raw_parts_mut(out, LANES * V));
}

/// `out <- a * b` (`8V` digits each) with the generated column blocks
/// (`mul_high_L`, `mul_low_L`), arranged like a squaring step ([`sqr_step`]):
/// the high blocks first, for the fold's high digits, the low ones beside the
/// fold's rows.  `a`'s digits are broadcast from where they are and `b`'s
/// vectors loaded once, so neither is copied (in the loop form, `mul_fold`,
/// now test-only, the copies' stores held up the window loads).  `out` may be `a`: every
/// digit of `a` is read before `out` is written.
#[inline(always)]
unsafe fn mul_fold_with<const V: usize, const V2: usize>(
    plan: &FoldPlan,
    k: usize,
    a: *const u64,
    b: &[u64],
    out: *mut u64,
    high: impl Fn(*const i64, &[__m512i; V]) -> [__m512i; V2],
    low: impl Fn(*const i64, &[__m512i; V]) -> ([__m512i; V], [__m512i; V]),
) {
    assert!(b.len() >= LANES * V);
    let y = load_digits::<V>(b);
    // Laundered, as in the square: else the optimiser loads `a` into general registers and broadcasts
    // from them (port 5, shared with IFMA).
    let xp = opaque(a as *const i64);
    let cols = high(xp, &y);
    // The fold runs here, not in a closure given to `with`: a closure does
    // not inherit this function's target features, so the compiler kept it
    // out of line and called every intrinsic in it as a function (rustc
    // 1.95: 2.5 us per 1024-bit product instead of about 0.1;
    // `tests/native/test_codegen.py` checks that no kernel calls one).
    let dbuf = scratch_buf(2);
    let x = fold_tail::<V, V2>(plan, k, &cols, || low(xp, &y), dbuf, FOLD_SETS.with(V, k + 1));
    save_digits(&x, core::slice::from_raw_parts_mut(out, LANES * V));
}

/// This thread's product scratch buffer `i` of [`MUL_SCRATCH`].
///
/// # Safety
/// The caller must not hold another reference to that buffer (nothing on
/// this thread re-enters a product while one runs; [`clear_mul_scratch`]
/// runs between products).
#[inline(always)]
unsafe fn scratch_buf<'a>(i: usize) -> &'a mut Buf {
    // The pointer outlives `with`: the thread-local, and the box it holds,
    // live as long as the thread.
    let bufs = MUL_SCRATCH.with(|cell| cell.as_ptr());
    &mut (**bufs)[i]
}

#[cfg(test)]
macro_rules! by_vectors {
    ($v:expr, $f:ident, $($arg:expr),*) => {
        match $v {
            1 => $f::<1, 2>($($arg),*),
            2 => $f::<2, 4>($($arg),*),
            3 => $f::<3, 6>($($arg),*),
            4 => $f::<4, 8>($($arg),*),
            5 => $f::<5, 10>($($arg),*),
            6 => $f::<6, 12>($($arg),*),
            7 => $f::<7, 14>($($arg),*),
            8 => $f::<8, 16>($($arg),*),
            9 => $f::<9, 18>($($arg),*),
            10 => $f::<10, 20>($($arg),*),
            11 => $f::<11, 22>($($arg),*),
            v => unreachable!("no IFMA kernel for {v} vectors"),
        }
    };
}

/// The AVX-512 IFMA table-fold backend.  Build it only through
/// [`crate::dispatch`] (which checks `avx512f` and `avx512ifma`).
pub struct FoldIfmaKernel {
    pub plan: FoldPlan,
}

impl FoldIfmaKernel {
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512 IFMA.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        FoldIfmaKernel {
            plan: FoldPlan::new(m),
        }
    }

    /// `out <- a * b`: the generated product for this digit count.
    ///
    /// # Safety
    /// `a` and `out` valid for `8V` digits (they may be equal), `b.len() >= 8V`.
    unsafe fn mul_raw(&self, a: *const u64, b: &[u64], out: *mut u64) {
        #[cfg(test)]
        if LOOP_PRODUCT.load(core::sync::atomic::Ordering::Relaxed) {
            return by_vectors!(self.plan.v, mul_fold, &self.plan, a, b, out);
        }
        let f = mul_generated(self.plan.k + 1).expect("a generated product for every width from 256 to 4096 bits");
        f(&self.plan, a, b, out)
    }
}

/// Tests only: products by the loop form ([`mul_fold`]).
#[cfg(test)]
pub(crate) static LOOP_PRODUCT: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

impl Kernel for FoldIfmaKernel {
    fn name(&self) -> &'static str {
        "ifma"
    }
    fn modulus(&self) -> &[u64] {
        &self.plan.ctx.m
    }
    fn fold_plan(&self) -> Option<&FoldPlan> {
        Some(&self.plan)
    }
    fn into_fold_plan(self: Box<Self>) -> Option<FoldPlan> {
        Some(self.plan)
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        self.plan.enter(x)
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        self.plan.leave(s)
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        // SAFETY: the kernel exists only if the CPU has the features.
        let f = sqr_n_generated(self.plan.k + 1)
            .expect("a generated kernel for every width from 256 to 4096 bits");
        unsafe { f(&self.plan, s, k) }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; LANES * self.plan.v];
        assert!(a.len() >= out.len() && b.len() >= out.len());
        // SAFETY: as above; `a` and `out` hold 8V digits.
        unsafe { self.mul_raw(a.as_ptr(), b, out.as_mut_ptr()) };
        out
    }
    fn mul_assign(&self, a: &mut [u64], b: &[u64]) {
        let n = LANES * self.plan.v;
        assert!(a.len() == n && b.len() >= n);
        // SAFETY: as above; both products read all of `a` before writing it.
        let p = a.as_mut_ptr();
        unsafe { self.mul_raw(p, b, p) };
    }
    fn pow_windows_pair(
        &self,
        other: &dyn Kernel,
        s: &mut [u64],
        table: &[u64],
        e: &[u64],
        s2: &mut [u64],
        table2: &[u64],
        e2: &[u64],
        windows: usize,
        w: usize,
    ) -> bool {
        // Only another IFMA fold kernel (so its plan is an IFMA plan) of the
        // same shape.
        let Some(plan2) = other.fold_plan().filter(|_| other.name() == "ifma") else {
            return false;
        };
        let (k, v) = (self.plan.k, self.plan.v);
        if plan2.k != k || plan2.v != v || !pairs_interleave(k, v) || windows == 0 || !(1..=8).contains(&w) {
            return false;
        }
        let Some(f) = pow_pair_generated(k + 1) else {
            return false;
        };
        // SAFETY: the kernel exists only if the CPU has the features; both
        // plans have this shape (the generated function asserts the sizes).
        unsafe { f([&self.plan, plan2], [s, s2], [table, table2], [e, e2], windows, w) };
        true
    }
    fn pow_windows(&self, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {
        let f = pow_generated(self.plan.k + 1)
            .expect("a generated kernel for every width from 256 to 4096 bits");
        // SAFETY: the kernel exists only if the CPU has the features.
        unsafe { f(&self.plan, s, table, e, windows, w) }
    }
}

#[cfg(test)]
#[cfg_attr(not(feature = "ifma-emulated"), target_feature(enable = "avx512f,avx512ifma"))]
#[cfg_attr(feature = "ifma-emulated", target_feature(enable = "avx512f"))]
unsafe fn phase_bench(plan: &FoldPlan, s: &mut [u64], count: u64, square: bool, sets: usize) {
    macro_rules! go {
        ($v:literal, $v2:literal, $l:literal) => {{
            let mut xs = Buf([0; BUF]);
            let mut dbuf = Buf([0; BUF]);
            let mut x = load_digits::<$v>(s);
            let m = _mm512_set1_epi64((1 << 50) - 1);
            let xp = xs.0.as_ptr().add(PAD) as *const i64;
            for _ in 0..count {
                if square {
                    for v in 0..$v {
                        _mm512_store_epi64(
                            xs.0.as_mut_ptr().add(PAD + LANES * v) as *mut i64,
                            x[v],
                        );
                    }
                    let xp = opaque(xp);
                    let mut d = x;
                    for v in 0..$v {
                        d[v] = _mm512_add_epi64(x[v], x[v]);
                    }
                    let c = generated_cols(&x, &d, xp);
                    for v in 0..$v {
                        x[v] = _mm512_and_si512(c[v + $v], m);
                    }
                } else {
                    let mut c = [_mm512_setzero_si512(); $v2];
                    for v in 0..$v {
                        c[v] = x[v];
                        c[v + $v] = x[v];
                    }
                    x = fold_tail::<$v, $v2>(
                        plan,
                        plan.k,
                        &c,
                        || ([_mm512_setzero_si512(); $v], [_mm512_setzero_si512(); $v]),
                        &mut dbuf,
                        sets,
                    );
                }
            }
            save_digits(&x, s);
        }};
    }
    match plan.k + 1 {
        22 => {
            #[inline(always)]
            unsafe fn generated_cols(x: &[__m512i; 3], d: &[__m512i; 3], xp: *const i64) -> [__m512i; 6] {
                let mut c = sq_high_22(xp, xp, x, d);
                let (lo, hi) = sq_low_22(xp, xp, x, d);
                for v in 0..lo.len() {
                    c[v] = _mm512_add_epi64(c[v], _mm512_add_epi64(lo[v], hi[v]));
                }
                c
            }
            go!(3, 6, 22)
        }
        43 => {
            #[inline(always)]
            unsafe fn generated_cols(x: &[__m512i; 6], d: &[__m512i; 6], xp: *const i64) -> [__m512i; 12] {
                let mut c = sq_high_43(xp, xp, x, d);
                let (lo, hi) = sq_low_43(xp, xp, x, d);
                for v in 0..lo.len() {
                    c[v] = _mm512_add_epi64(c[v], _mm512_add_epi64(lo[v], hi[v]));
                }
                c
            }
            go!(6, 12, 43)
        }
        63 => {
            #[inline(always)]
            unsafe fn generated_cols(x: &[__m512i; 8], d: &[__m512i; 8], xp: *const i64) -> [__m512i; 16] {
                let mut c = sq_high_63(xp, xp, x, d);
                let (lo, hi) = sq_low_63(xp, xp, x, d);
                for v in 0..lo.len() {
                    c[v] = _mm512_add_epi64(c[v], _mm512_add_epi64(lo[v], hi[v]));
                }
                c
            }
            go!(8, 16, 63)
        }
        84 => {
            #[inline(always)]
            unsafe fn generated_cols(x: &[__m512i; 11], d: &[__m512i; 11], xp: *const i64) -> [__m512i; 22] {
                let mut c = sq_high_84(xp, xp, x, d);
                let (lo, hi) = sq_low_84(xp, xp, x, d);
                for v in 0..lo.len() {
                    c[v] = _mm512_add_epi64(c[v], _mm512_add_epi64(lo[v], hi[v]));
                }
                c
            }
            go!(11, 22, 84)
        }
        _ => {}
    }
}

/// The squaring loop at 1024 and 2048 bits in variant `VAR` (benchmarks).
#[cfg(test)]
#[cfg_attr(not(feature = "ifma-emulated"), target_feature(enable = "avx512f,avx512ifma"))]
#[cfg_attr(feature = "ifma-emulated", target_feature(enable = "avx512f"))]
unsafe fn variant_sqr_n<const VAR: u32>(plan: &FoldPlan, s: &mut [u64], count: u64) {
    match plan.k + 1 {
        22 => sqr_n_with::<3, 6, VAR>(plan, 21, s, count, |xp, dp, x, d| sq_high_22(xp, dp, x, d), |xp, dp, x, d| sq_low_22(xp, dp, x, d)),
        43 => sqr_n_with::<6, 12, VAR>(plan, 42, s, count, |xp, dp, x, d| sq_high_43(xp, dp, x, d), |xp, dp, x, d| sq_low_43(xp, dp, x, d)),
        _ => unreachable!(),
    }
}

/// Reference for the benchmarks: ns per IFMA instruction at full
/// throughput (12 independent register accumulators).
#[cfg(test)]
#[cfg_attr(not(feature = "ifma-emulated"), target_feature(enable = "avx512f,avx512ifma"))]
#[cfg_attr(feature = "ifma-emulated", target_feature(enable = "avx512f"))]
unsafe fn ifma_reference(n: u64) -> f64 {
    let mut a = [_mm512_set1_epi64(1); 12];
    let b = std::hint::black_box(_mm512_set1_epi64(3));
    let c = std::hint::black_box(_mm512_set1_epi64(5));
    let t = std::time::Instant::now();
    for _ in 0..n {
        for j in 0..12 {
            a[j] = _mm512_madd52lo_epu64(a[j], b, c);
        }
    }
    std::hint::black_box(a);
    t.elapsed().as_secs_f64() * 1e9 / (12 * n) as f64
}

#[cfg(test)]
mod bench {
    use super::*;
    use std::time::Instant;

    /// `cargo test --release bench_variants -- --ignored --nocapture`:
    /// interleaved timings (minimum of many short runs) of the generated
    /// squaring variants, ns per squaring.
    /// `run()` (returning its operation count) `rounds` times, each between
    /// two IFMA reference timings: the medians of ns per operation and of
    /// its ratio to the reference's ns per IFMA.
    fn slots_of(rounds: usize, mut run: impl FnMut() -> f64) -> (f64, f64) {
        let mut ns = Vec::with_capacity(rounds);
        let mut ratio = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let before = unsafe { ifma_reference(20_000) };
            let t = Instant::now();
            let ops = run();
            let per_op = t.elapsed().as_secs_f64() * 1e9 / ops;
            let after = unsafe { ifma_reference(20_000) };
            ns.push(per_op);
            ratio.push(per_op / (0.5 * (before + after)));
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v[v.len() / 2]
        };
        (median(&mut ns), median(&mut ratio))
    }

    #[test]
    #[ignore]
    fn bench_variants() {
        if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma")) {
            return;
        }
        for bits in [1024usize, 2048, 3072, 4096] {
            let n = bits / 64;
            let mut m: Vec<u64> = (0..n as u64)
                .map(|i| 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i + 1))
                .collect();
            m[0] |= 1;
            m[n - 1] |= 1 << 63;
            let plan = FoldPlan::new(&m);
            let l = plan.k + 1;
            let x = plan.enter(&m.iter().map(|w| w >> 1).collect::<Vec<_>>());
            let count = (20_000_000 / (bits * bits / 1024)) as u64;
            let f = sqr_n_generated(l).unwrap();
            // Every timing is divided by the IFMA reference measured right
            // before and after it (same clock frequency; the host moves it
            // by several percent between runs), and the median of those
            // ratios is reported: "slots" = IFMA instructions' worth of
            // time, at 2 per cycle.
            let (step_ns, step_slots) = slots_of(60, || {
                let mut s = x.clone();
                unsafe { f(&plan, &mut s, count / 4) };
                (count / 4) as f64
            });
            // Phase timings: squaring only, fold only (garbage values, same shapes).
            let mut best_sq = f64::MAX;
            let mut best_fold = [f64::MAX; 5];
            for _ in 0..30 {
                let mut s = x.clone();
                let t = Instant::now();
                unsafe { phase_bench(&plan, &mut s, count, true, 0) };
                best_sq = best_sq.min(t.elapsed().as_secs_f64() * 1e9 / count as f64);
                for sets in 1..=4 {
                    let t = Instant::now();
                    unsafe { phase_bench(&plan, &mut s, count, false, sets) };
                    best_fold[sets] =
                        best_fold[sets].min(t.elapsed().as_secs_f64() * 1e9 / count as f64);
                }
            }
            println!(
                "{bits} bits: squaring only {best_sq:.1} ns, fold only with 1..4 sets {:.1?} ns",
                &best_fold[1..]
            );
            println!("{bits} bits (L = {l}): full step {step_ns:.1} ns, {step_slots:.1} IFMA slots (medians)");
            if bits <= 2048 {
                // The step's variants, each timed like the kernel above.
                type Loop = unsafe fn(&FoldPlan, &mut [u64], u64);
                let runs: [(&str, Loop); 5] = [
                    ("kernel", variant_sqr_n::<KERNEL>),
                    ("independent steps", variant_sqr_n::<INDEPENDENT>),
                    ("two chains", variant_sqr_n::<TWO_CHAINS>),
                    ("2 sets", variant_sqr_n::<{ 2 << SETS_SHIFT }>),
                    ("3 sets", variant_sqr_n::<{ 3 << SETS_SHIFT }>),
                ];
                for (name, f) in runs {
                    let (ns, slots) = slots_of(40, || {
                        let mut s = x.clone();
                        unsafe { f(&plan, &mut s, count / 4) };
                        (count / 4) as f64
                    });
                    println!("    variant {name}: {ns:.1} ns, {slots:.1} slots");
                }
            }
        }
    }
}
