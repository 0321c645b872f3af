//! Build script (`build = "build/build_ifma.rs"` in Cargo.toml): generates the
//! straight-line AVX-512 IFMA squaring code of `src/ifma.rs`.
//!
//! For every digit count `L` the fold kernel uses (7 for 256-bit moduli up to
//! 84 for 4096-bit ones) it writes `sq_high_L` and `sq_low_L`, the column
//! blocks of the square of the `L` digits (each block in row or column form,
//! see `block_code`: broadcasts from the stored digits `xp` or doubled digits
//! `dp`, windows from registers or from the other stored copy),
//! with every row, window offset and load a constant, so that the
//! accumulators stay in registers and no loop control is left; and
//! `sqr_n_L` and `pow_L`, the loops around them.  The algorithm is documented in
//! `src/fold.rs` and `src/ifma.rs`; this file only unrolls it.  Output:
//! `$OUT_DIR/ifma_gen.rs`, included by `src/ifma.rs`.  It also writes the
//! MULX/ADX rows of `src/adx.rs` (`build/build_adx.rs`) and the AVX-512F
//! kernel of `src/avx512f.rs` (`build/build_avx512f.rs`).

use std::fmt::Write as _;
use std::path::PathBuf;

mod build_adx;
mod build_avx512f;
mod build_fma;
mod build_avx2;

const MIN_L: usize = 7;
const MAX_L: usize = 84;
/// Blocks with more rows than this accumulate in two chains per half.
const SPLIT_ROWS: usize = 8;

/// Code binding `lo{b}` and `hi{b}`: the low halves (at their columns) and
/// high halves (one column up) of the products of column block `b` of the
/// square of `l` digits (broadcasts from `xp` and `dp`, digits in `x`,
/// doubled digits in `d`; the windows `memory_ok` allows are loaded from the
/// stored copies at `xp` and `dp`).
///
/// Every vector product of a block is one digit broadcast times a window of
/// eight consecutive digits, lane `k` landing in column `8b + k`.  A block
/// has two ways to cover the pairs `i <= j` of its columns, and takes the one
/// with fewer products (`row_vectors`, `column_vectors`):
///
/// * rows: broadcast `x_i` for the rows `i < 4b`, windows of `D = 2x` (all
///   their pairs have `j > i`), and the four rows of quad `b`, `i = 4b ..
///   4b+3`, with windows of `Y`: `D` with the digits below `4b` zeroed and
///   those of quad `b` undoubled.  In those rows a pair inside the quad
///   appears twice, `x_i x_j` and `x_j x_i`, and its diagonal once, so the
///   quad's own square comes out whole and no lane needs a mask; pairs with a
///   higher digit see `2 x_j` as usual, lower digits see 0.  (This replaced
///   masked windows plus one diagonal product per block: one product and
///   about one port-5 uop fewer per block.)
/// * columns, the mirror image: broadcast `d_j = 2 x_j` for `j > 4b+3`,
///   windows of `x` (every lane's `i = 8b + k - j` is below `j`), and the
///   quad's four `j` broadcast undoubled with windows of `Y'`: `D` below the
///   quad, `x` in it, zero above.  Near the top of the square the rows run
///   past digit `L` and leave lanes empty, the columns do not: at 1024 bits
///   the three top blocks take 10, 6 and 2 products instead of 13, 9 and 3.
///
/// Both forms compute every pair as the same integer product (`x_i * 2x_j`
/// across quads, `x_i x_j` twice inside one, `x_i^2`), so the columns are
/// bit for bit those of the portable twin (`fold::square_columns`).
fn block_code(l: usize, b: usize, memory_ok: &dyn Fn(isize) -> bool) -> String {
    if column_vectors(l, b) < row_vectors(l, b) {
        column_block(l, b, memory_ok)
    } else {
        row_block(l, b, memory_ok)
    }
}

/// The rows `i` block `b` takes in the row form (those with a nonzero lane).
fn block_rows(l: usize, b: usize) -> Vec<usize> {
    let i_first = (8 * b + 1).saturating_sub(l);
    let i_last = (l - 1).min(4 * b + 3);
    // Digit j of the row operand of row i: nonzero only for j < L, and for
    // quad rows only from 4b up.
    let nonzero = |i: usize, j: isize| -> bool {
        j >= 0 && (j as usize) < l && (i < 4 * b || j as usize >= 4 * b)
    };
    (i_first..=i_last)
        .filter(|&i| (0..8).any(|lane| nonzero(i, 8 * b as isize + lane - i as isize)))
        .collect()
}

fn row_vectors(l: usize, b: usize) -> usize {
    block_rows(l, b).len()
}

/// The broadcasts `j` block `b` takes in the column form: the quad's and
/// every higher digit that reaches a column of the block.
fn block_columns(l: usize, b: usize) -> std::ops::Range<usize> {
    (4 * b).min(l)..l.min(8 * b + 8)
}

fn column_vectors(l: usize, b: usize) -> usize {
    block_columns(l, b).len()
}

/// The window of vectors `vec(u)`, `vec(u+1)` starting at digit `off`
/// (`u = floor(off / 8)`): an aligned vector, or one `valignq`.
fn register_window(off: isize, vec: &dyn Fn(isize) -> String) -> String {
    let u = off.div_euclid(8);
    let sh = off.rem_euclid(8);
    if sh == 0 {
        vec(u)
    } else {
        format!("_mm512_alignr_epi64::<{sh}>({}, {})", vec(u + 1), vec(u))
    }
}

/// The row form of block `b` (see [`block_code`]).
fn row_block(l: usize, b: usize, memory_ok: &dyn Fn(isize) -> bool) -> String {
    let v = l.div_ceil(8);
    let row_list = block_rows(l, b);
    // Rows whose (unaligned) window of D is loaded from memory.
    let memory = |i: usize| -> bool {
        let off = 8 * b as isize - i as isize;
        i < 4 * b && off.rem_euclid(8) != 0 && memory_ok(off)
    };
    // The vector of Y holding quad b (the ones below it are zero, the ones
    // above equal D).
    let quad_vec = 4 * b / 8;
    let mut prelude = String::new();
    if 4 * b < l && !row_list.is_empty() {
        let y = if (4 * b).is_multiple_of(8) {
            format!("_mm512_mask_blend_epi64(0xF0, x[{quad_vec}], d[{quad_vec}])")
        } else {
            format!("_mm512_maskz_mov_epi64(0xF0, x[{quad_vec}])")
        };
        writeln!(prelude, "        let yq = {y};").unwrap();
    }
    let term = |i: usize| -> (String, String) {
        let off = 8 * b as isize - i as isize;
        let quad_row = i >= 4 * b;
        let vec = |k: isize| {
            if k < 0 || k as usize >= v || (quad_row && (k as usize) < quad_vec) {
                "z".to_string()
            } else if quad_row && k as usize == quad_vec {
                "yq".to_string()
            } else {
                format!("d[{k}]")
            }
        };
        let window = if memory(i) {
            format!("_mm512_loadu_si512(dp.offset({off}) as *const _)")
        } else {
            register_window(off, &vec)
        };
        (format!("*xp.add({i})"), window)
    };
    let terms: Vec<Term> = row_list.iter().map(|&i| (term(i), memory(i))).collect();
    accumulate(b, &prelude, terms)
}

/// The column form of block `b` (see [`block_code`]).
fn column_block(l: usize, b: usize, memory_ok: &dyn Fn(isize) -> bool) -> String {
    let v = l.div_ceil(8);
    let quad_end = 4 * b + 4;
    // Columns whose (unaligned) window of x is loaded from memory.
    let memory = |j: usize| -> bool {
        let off = 8 * b as isize - j as isize;
        j >= quad_end && off.rem_euclid(8) != 0 && memory_ok(off)
    };
    // The vector of Y' holding quad b (D below it, zero above).
    let quad_vec = 4 * b / 8;
    let prelude = if (4 * b).is_multiple_of(8) {
        format!("        let yq = _mm512_maskz_mov_epi64(0x0F, x[{quad_vec}]);\n")
    } else {
        format!("        let yq = _mm512_mask_blend_epi64(0xF0, d[{quad_vec}], x[{quad_vec}]);\n")
    };
    let term = |j: usize| -> (String, String) {
        let off = 8 * b as isize - j as isize;
        if j < quad_end {
            let vec = |k: isize| {
                if k < 0 || k as usize > quad_vec {
                    "z".to_string()
                } else if k as usize == quad_vec {
                    "yq".to_string()
                } else {
                    format!("d[{k}]")
                }
            };
            (format!("*xp.add({j})"), register_window(off, &vec))
        } else if memory(j) {
            (
                format!("*dp.add({j})"),
                format!("_mm512_loadu_si512(xp.offset({off}) as *const _)"),
            )
        } else {
            let vec = |k: isize| {
                if k < 0 || k as usize >= v {
                    "z".to_string()
                } else {
                    format!("x[{k}]")
                }
            };
            (format!("*dp.add({j})"), register_window(off, &vec))
        }
    };
    let terms: Vec<Term> = block_columns(l, b).map(|j| (term(j), memory(j))).collect();
    accumulate(b, &prelude, terms)
}

/// One vector product of a block: `(broadcast, window)` code, and whether
/// the window is loaded from memory.
type Term = ((String, String), bool);

/// `let (lo{b}, hi{b}) = ...`: the sums of the low and high halves of
/// `broadcast * window` over `terms`, after the `prelude` lines.
fn accumulate(b: usize, prelude: &str, mut terms: Vec<Term>) -> String {
    // Windows from memory wait for the stores to reach the cache (they
    // cannot be forwarded to a load that spans two of them), so their
    // products come last in the block (a stable sort keeps the order else).
    terms.sort_by_key(|&(_, memory)| memory);
    let mut s = String::new();
    if terms.is_empty() {
        writeln!(s, "    let (lo{b}, hi{b}) = (z, z);").unwrap();
        return s;
    }
    writeln!(s, "    let (lo{b}, hi{b}) = {{").unwrap();
    s.push_str(prelude);
    // Long blocks get two chains per half (even / odd terms), which
    // shortens the dependency chain at the price of one add per half.
    let split = terms.len() > SPLIT_ROWS;
    if split {
        writeln!(
            s,
            "        let (mut lo0, mut hi0, mut lo1, mut hi1) = (z, z, z, z);"
        )
        .unwrap();
    } else {
        writeln!(s, "        let (mut lo0, mut hi0) = (z, z);").unwrap();
    }
    let mut parity = 0;
    for ((broadcast, window), _) in &terms {
        writeln!(
            s,
            "        {{ let xi = _mm512_set1_epi64({broadcast}); let w = {window}; \
             lo{parity} = _mm512_madd52lo_epu64(lo{parity}, xi, w); \
             hi{parity} = _mm512_madd52hi_epu64(hi{parity}, xi, w); }}"
        )
        .unwrap();
        if split {
            parity ^= 1;
        }
    }
    if split {
        writeln!(
            s,
            "        (_mm512_add_epi64(lo0, lo1), _mm512_add_epi64(hi0, hi1))"
        )
        .unwrap();
    } else {
        writeln!(s, "        (lo0, hi0)").unwrap();
    }
    writeln!(s, "    }};").unwrap();
    s
}

/// Which operand windows of the square are loaded from the stored copy of
/// the doubled digits (the rest are `valignq`s on port 5).
#[derive(Clone, Copy, PartialEq, Eq)]
enum MemoryWindows {
    None,
    /// Every unaligned window of D (the quad rows keep theirs in registers).
    All,
    /// Those of the low phase and those the first high block does not use.
    Late,
}

/// The first column block the high phase computes: the block holding column
/// `K`, or the one below when `K` starts a block (its high halves reach
/// column `K`).
fn high_start(l: usize) -> usize {
    let k = l - 1;
    if k.is_multiple_of(8) {
        k / 8 - 1
    } else {
        k / 8
    }
}

/// The end of a high-phase function (`sq_high_{l}`, `mul_high_{l}`): blocks
/// `start ..` combined (`lo + 4 hi` one column up; block `start` without the
/// high halves from below, which only reach a low column), zero below.
fn high_phase_result(v2: usize, start: usize) -> String {
    let mut s = String::from("    [");
    for b in 0..v2 {
        if b < start {
            s.push_str("z, ");
        } else {
            let prev = if b == start { "z".to_string() } else { format!("hi{}", b - 1) };
            write!(s, "add_high(lo{b}, hi{b}, {prev}), ").unwrap();
        }
    }
    s.push_str("]\n}\n");
    s
}

/// The end of a low-phase function (`sq_low_{l}`, `mul_low_{l}`): blocks
/// `.. start` as separate low and high halves, zero above.
fn low_phase_result(v: usize, start: usize) -> String {
    let mut s = String::new();
    for half in ["lo", "hi"] {
        write!(s, "    let {half} = [").unwrap();
        for b in 0..v {
            if b < start {
                write!(s, "{half}{b}, ").unwrap();
            } else {
                s.push_str("z, ");
            }
        }
        s.push_str("];\n");
    }
    s.push_str("    (lo, hi)\n}\n");
    s
}

/// `sq_high_{l}` and `sq_low_{l}`: the column blocks of the square in two
/// phases.  The high phase gives blocks `start ..`, combined (the fold needs
/// them first, carried; block `start` without the high halves from below,
/// which only reach a low column); the low phase gives blocks `.. start` as
/// separate low and high halves, which start the fold's second accumulator
/// set, so that the final alignment of the fold's high halves also places
/// theirs (including that missing contribution).  The kernel emits the low
/// phase before the fold rows, which wait for the high digits.
fn square_cols(l: usize) -> String {
    let v = l.div_ceil(8);
    let v2 = 2 * v;
    let start = high_start(l);
    let mut s = String::new();
    writeln!(s, "#[inline(always)]").unwrap();
    writeln!(
        s,
        "unsafe fn sq_high_{l}(xp: *const i64, dp: *const i64, x: &[__m512i; {v}], d: &[__m512i; {v}]) -> [__m512i; {v2}] {{"
    )
    .unwrap();
    writeln!(s, "    let z = _mm512_setzero_si512();").unwrap();
    writeln!(s, "    let _ = (x, dp);").unwrap();
    // Which windows of D come from memory (see `block_code`), measured
    // against none: up to two vectors all of them; up to six all but the
    // first high block's, whose rows the fold waits for first (2048 bits:
    // all of them was 6% slower, this rule 0-1% faster); above, none (3072
    // bits: 4-5% slower with this rule).  At three vectors all of them
    // (1024 bits: 385 IFMA slots per step against 405 for none) gave way to
    // this rule on 2026-11-23, after the fold's two sets: 14 port-0/5 uops
    // more (324), but 3.6-5.9 % faster in `sqr_n` side by side (six runs,
    // also with both loops 64-byte aligned), 1100 bits 5 %, 800-900 bits
    // 0-4 %: the loads of that block's windows wait for the digit stores,
    // and the fold waits for that block.
    let first_offsets: Vec<isize> = (0..l).map(|i| 8 * start as isize - i as isize).collect();
    let memory_windows = if v <= 2 {
        MemoryWindows::All
    } else if v <= 6 {
        MemoryWindows::Late
    } else {
        MemoryWindows::None
    };
    let high_ok = |off: isize| match memory_windows {
        MemoryWindows::None => false,
        MemoryWindows::All => true,
        MemoryWindows::Late => !first_offsets.contains(&off),
    };
    // Top block first: its digits' fold rows come first (`fold_rows`).
    for b in (start..v2).rev() {
        s.push_str(&block_code(l, b, &high_ok));
    }
    s.push_str(&high_phase_result(v2, start));
    writeln!(s, "#[inline(always)]").unwrap();
    writeln!(
        s,
        "unsafe fn sq_low_{l}(xp: *const i64, dp: *const i64, x: &[__m512i; {v}], d: &[__m512i; {v}]) -> ([__m512i; {v}], [__m512i; {v}]) {{"
    )
    .unwrap();
    writeln!(s, "    let z = _mm512_setzero_si512();").unwrap();
    writeln!(s, "    let _ = (xp, dp, x, d);").unwrap();
    let low_ok = |_: isize| memory_windows != MemoryWindows::None;
    for b in 0..start {
        s.push_str(&block_code(l, b, &low_ok));
    }
    // Low and high halves stay apart: the fold's accumulators take them as
    // they are, and one final shift lines up all high halves at once.
    s.push_str(&low_phase_result(v, start));
    s
}

/// `mul_high_{l}` and `mul_low_{l}`: the column blocks of a general product
/// `x y` of `l` digits each, split like `sq_high_{l}` / `sq_low_{l}` (the
/// high blocks combined, for the fold's high digits; the low ones as separate
/// low and high halves, which start the fold's second accumulator set), with
/// `x` broadcast from memory at `xp` and `y` in registers.  Window-major: each
/// window of `y` (digits `o .. o+7`, one `valignq` of two vectors of `y`, or
/// a vector itself) is built once and serves every block `b` of the pass with
/// a row `i = 8b - o`, so the operand windows cost about `l` shuffles per pass
/// instead of one load per row (the loop form, [`mul_fold`] in ifma.rs, was
/// bound by its window loads, most of them split across cache lines).  Passes
/// of at most `MUL_PASS_BLOCKS` blocks bound the live accumulators (in
/// registers at 1024 bits; LLVM spills some at larger widths).
/// Every pair `x_i y_j` is one product in column `i + j`: the columns are
/// those of `fold::mul_columns`.
fn mul_cols(l: usize) -> String {
    let v = l.div_ceil(8);
    let v2 = 2 * v;
    let start = high_start(l);
    let vec = |u: isize| {
        if u < 0 || u as usize >= v {
            "z".to_string()
        } else {
            format!("y[{u}]")
        }
    };
    // The products of blocks first..last, window by window.
    let blocks = |first: usize, last: usize| -> String {
        let mut s = String::new();
        for b in first..last {
            // Block b has a row when some i < l meets a window starting below l: 8b <= 2l - 2.
            let m = if 8 * b + 2 <= 2 * l { "mut " } else { "" };
            writeln!(s, "    let ({m}lo{b}, {m}hi{b}) = (z, z);").unwrap();
        }
        let mut from = first;
        while from < last {
            let to = (from + MUL_PASS_BLOCKS).min(last);
            for o in -7..l as isize {
                let rows: Vec<(usize, usize)> = (from..to)
                    .filter_map(|b| {
                        let i = 8 * b as isize - o;
                        (i >= 0 && (i as usize) < l).then_some((b, i as usize))
                    })
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                write!(s, "    {{ let w = {};", register_window(o, &vec)).unwrap();
                for (b, i) in rows {
                    write!(
                        s,
                        " let xi = _mm512_set1_epi64(*xp.add({i})); \
                         lo{b} = _mm512_madd52lo_epu64(lo{b}, xi, w); \
                         hi{b} = _mm512_madd52hi_epu64(hi{b}, xi, w);"
                    )
                    .unwrap();
                }
                writeln!(s, " }}").unwrap();
            }
            from = to;
        }
        s
    };
    let mut s = String::new();
    writeln!(s, "#[inline(always)]").unwrap();
    writeln!(
        s,
        "unsafe fn mul_high_{l}(xp: *const i64, y: &[__m512i; {v}]) -> [__m512i; {v2}] {{"
    )
    .unwrap();
    writeln!(s, "    let z = _mm512_setzero_si512();").unwrap();
    s.push_str(&blocks(start, v2));
    s.push_str(&high_phase_result(v2, start));
    writeln!(s, "#[inline(always)]").unwrap();
    writeln!(
        s,
        "unsafe fn mul_low_{l}(xp: *const i64, y: &[__m512i; {v}]) -> ([__m512i; {v}], [__m512i; {v}]) {{"
    )
    .unwrap();
    writeln!(s, "    let z = _mm512_setzero_si512();").unwrap();
    writeln!(s, "    let _ = (xp, y);").unwrap();
    s.push_str(&blocks(0, start));
    s.push_str(&low_phase_result(v, start));
    s
}

/// The largest digit count with an interleaved pair of exponentiations
/// (`pow_pair_{l}`): 2048-bit RSA halves, which is 43 digits.
const MAX_PAIR_L: usize = 44;

/// `ifma.rs`'s `pairs_interleave` on the build side: the fold's rows span
/// all `v` vectors, i.e. no column-wise tail (`fold::tail_columns`, restated
/// here because the build script cannot use the crate) and no empty last
/// vector.  `tests::ifma_paired_exponentiations_match_two_single_ones`
/// checks that the two rules agree at every digit count.
fn pair_shape(k: usize, v: usize) -> bool {
    let t = k - 8 * (v - 1);
    let columns_pay = t <= 2 || (t == 3 && (4..=10).contains(&v));
    let tail_columns = if v >= 2 && t <= 3 && columns_pay { t } else { 0 };
    tail_columns == 0 && t != 0
}

/// Column blocks per pass of `mul_high_{l}` / `mul_low_{l}`: two accumulators each, which
/// with the vectors of `y`, a window and a broadcast stay within the 32
/// vector registers.
const MUL_PASS_BLOCKS: usize = 8;

fn main() {
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=src/fold32_shape.rs");
    println!("cargo:rerun-if-changed=src/fma_layout.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("ifma_gen.rs");
    // The kernels' target features: without IFMA when its two instructions are
    // emulated (test builds, `src/ifma_emulated.rs`), so that none is emitted.
    let tf = if std::env::var_os("CARGO_FEATURE_IFMA_EMULATED").is_some() {
        "avx512f"
    } else {
        "avx512f,avx512ifma"
    };
    let mut s = String::new();
    writeln!(s, "// Generated by native/crates/modforge-ring/build/build_ifma.rs; do not edit.").unwrap();
    for l in MIN_L..=MAX_L {
        let v = l.div_ceil(8);
        s.push_str(&square_cols(l));
        s.push_str(&mul_cols(l));
        writeln!(
            s,
            "#[target_feature(enable = \"{tf}\")]\n\
             unsafe fn mul_{l}(plan: &FoldPlan, a: *const u64, b: &[u64], out: *mut u64) {{\n\
             \x20   mul_fold_with::<{v}, {v2}>(plan, {k}, a, b, out, |xp, y| mul_high_{l}(xp, y), |xp, y| mul_low_{l}(xp, y))\n\
             }}",
            v2 = 2 * v,
            k = l - 1
        )
        .unwrap();
        {
            writeln!(
                s,
                "#[target_feature(enable = \"{tf}\")]\n\
                 unsafe fn sqr_n_{l}(plan: &FoldPlan, s: &mut [u64], count: u64) {{\n\
                 \x20   sqr_n_with::<{v}, {v2}, KERNEL>(plan, {k}, s, count, |xp, dp, x, d| sq_high_{l}(xp, dp, x, d), |xp, dp, x, d| sq_low_{l}(xp, dp, x, d))\n\
                 }}",
                v2 = 2 * v,
                k = l - 1
            )
            .unwrap();
            writeln!(
                s,
                "#[target_feature(enable = \"{tf}\")]\n\
                 unsafe fn pow_{l}(plan: &FoldPlan, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {{\n\
                 \x20   pow_windows_with::<{v}, {v2}>(plan, {k}, s, table, e, windows, w, |xp, dp, x, d| sq_high_{l}(xp, dp, x, d), |xp, dp, x, d| sq_low_{l}(xp, dp, x, d), |xp, y| mul_high_{l}(xp, y), |xp, y| mul_low_{l}(xp, y))\n\
                 }}",
                v2 = 2 * v,
                k = l - 1
            )
            .unwrap();
        }
    }
    // Two interleaved exponentiations (RSA halves) up to 2048-bit halves,
    // only for the shapes whose fold rows all span every vector
    // (`pairs_interleave` in ifma.rs, checked again at dispatch).
    for l in MIN_L..=MAX_PAIR_L {
        let v = l.div_ceil(8);
        let k = l - 1;
        if !pair_shape(k, v) {
            continue;
        }
        writeln!(
            s,
            "#[target_feature(enable = \"{tf}\")]\n\
             unsafe fn pow_pair_{l}(plans: [&FoldPlan; 2], s: [&mut [u64]; 2], tables: [&[u64]; 2], es: [&[u64]; 2], windows: usize, w: usize) {{\n\
             \x20   macro_rules! go {{ ($sets:literal) => {{ pow_pair_windows_with::<{v}, {v2}, $sets>(plans, {k}, s, tables, es, windows, w, |xp, dp, x, d| sq_high_{l}(xp, dp, x, d), |xp, dp, x, d| sq_low_{l}(xp, dp, x, d), |xp, y| mul_high_{l}(xp, y), |xp, y| mul_low_{l}(xp, y)) }} }}\n\
             \x20   match FOLD_SETS.with({v}, {l}) {{ 1 => go!(1), 2 => go!(2), 3 => go!(3), _ => go!(4) }}\n\
             }}",
            v2 = 2 * v,
        )
        .unwrap();
    }
    writeln!(s, "/// The generated pair of exponentiations for `l` digits, if there is one.").unwrap();
    writeln!(
        s,
        "#[allow(clippy::type_complexity)]\n\
         fn pow_pair_generated(l: usize) -> Option<unsafe fn([&FoldPlan; 2], [&mut [u64]; 2], [&[u64]; 2], [&[u64]; 2], usize, usize)> {{"
    )
    .unwrap();
    writeln!(s, "    Some(match l {{").unwrap();
    for l in MIN_L..=MAX_PAIR_L {
        if pair_shape(l - 1, l.div_ceil(8)) {
            writeln!(s, "        {l} => pow_pair_{l},").unwrap();
        }
    }
    writeln!(s, "        _ => return None,").unwrap();
    writeln!(s, "    }})").unwrap();
    writeln!(s, "}}").unwrap();
    writeln!(s, "/// The generated product for `l` digits, if there is one.").unwrap();
    writeln!(
        s,
        "#[allow(clippy::type_complexity)]\n\
         fn mul_generated(l: usize) -> Option<unsafe fn(&FoldPlan, *const u64, &[u64], *mut u64)> {{"
    )
    .unwrap();
    writeln!(s, "    Some(match l {{").unwrap();
    for l in MIN_L..=MAX_L {
        writeln!(s, "        {l} => mul_{l},").unwrap();
    }
    writeln!(s, "        _ => return None,").unwrap();
    writeln!(s, "    }})").unwrap();
    writeln!(s, "}}").unwrap();
    writeln!(s, "/// The generated fixed-window exponentiation for `l` digits, if there is one.").unwrap();
    writeln!(
        s,
        "#[allow(clippy::type_complexity)]\n\
         fn pow_generated(l: usize) -> Option<unsafe fn(&FoldPlan, &mut [u64], &[u64], &[u64], usize, usize)> {{"
    )
    .unwrap();
    writeln!(s, "    Some(match l {{").unwrap();
    for l in MIN_L..=MAX_L {
        writeln!(s, "        {l} => pow_{l},").unwrap();
    }
    writeln!(s, "        _ => return None,").unwrap();
    writeln!(s, "    }})").unwrap();
    writeln!(s, "}}").unwrap();
    writeln!(
        s,
        "/// The generated squaring loop for `l` digits, if there is one."
    )
    .unwrap();
    writeln!(
        s,
        "fn sqr_n_generated(l: usize) -> Option<unsafe fn(&FoldPlan, &mut [u64], u64)> {{"
    )
    .unwrap();
    writeln!(s, "    Some(match l {{").unwrap();
    for l in MIN_L..=MAX_L {
        writeln!(s, "        {l} => sqr_n_{l},").unwrap();
    }
    writeln!(s, "        _ => return None,").unwrap();
    writeln!(s, "    }})").unwrap();
    writeln!(s, "}}").unwrap();
    std::fs::write(out, s).unwrap();
    let adx = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("adx_gen.rs");
    std::fs::write(adx, build_adx::generate()).unwrap();
    let avx512f = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("avx512f_gen.rs");
    std::fs::write(avx512f, build_avx512f::generate()).unwrap();
    let fma = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("fma_gen.rs");
    std::fs::write(fma, build_fma::generate()).unwrap();
    let avx2 = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("avx2_gen.rs");
    std::fs::write(avx2, build_avx2::generate()).unwrap();
}
