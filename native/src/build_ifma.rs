//! Build script (`build = "src/build_ifma.rs"` in Cargo.toml, kept under
//! src/ so that the Makefile's native stamp sees it): generates the
//! straight-line AVX-512 IFMA squaring code of `src/ifma.rs`.
//!
//! For every digit count `L` the fold kernel uses (7 for 256-bit moduli up to
//! 84 for 4096-bit ones) it writes `sq_cols_L(xp, d)`, the column blocks of
//! the square of the `L` digits broadcast from `xp` (doubled, in the
//! registers `d`), with every row, window offset and mask a constant, so
//! that the accumulators stay in registers and no loop control is left; and
//! `sqr_n_L`, the squaring loop around it.  The algorithm is documented in
//! `src/fold.rs` and `src/ifma.rs`; this file only unrolls it.  Output:
//! `$OUT_DIR/ifma_gen.rs`, included by `src/ifma.rs`.

use std::fmt::Write as _;
use std::path::PathBuf;

const MIN_L: usize = 7;
const MAX_L: usize = 84;
/// Blocks with more rows than this accumulate in two chains per half.
const SPLIT_ROWS: usize = 8;

/// Code binding `lo{b}` and `hi{b}`: the low halves (at their columns) and
/// high halves (one column up) of the products of column block `b` of the
/// square of `l` digits (broadcasts from `xp`, doubled digits in `d`).
fn block_code(l: usize, b: usize) -> String {
    let v = l.div_ceil(8);
    let mut s = String::new();
    let i_first = (8 * b + 1).saturating_sub(l);
    let i_last = (l - 1).min(4 * b + 3);
    if i_first > i_last && 4 * b >= l {
        writeln!(s, "    let (lo{b}, hi{b}) = (z, z);").unwrap();
        return s;
    }
    // Rows 4b..4b+3 keep only the lanes holding pairs i < j.
    let mask_of = |i: usize| -> u8 {
        if i < 4 * b {
            0xFF
        } else {
            (0xFEu32 << (2 * (i - 4 * b))) as u8
        }
    };
    // A row is useful if some unmasked lane holds a digit j = 8b + lane - i
    // below L (the digits above L are zero, so such rows add nothing).
    let useful = |i: usize| -> bool {
        (0..8).any(|lane| mask_of(i) >> lane & 1 == 1 && 8 * b + lane < l + i)
    };
    let row_list: Vec<usize> = (i_first..=i_last).filter(|&i| useful(i)).collect();
    if row_list.is_empty() && 4 * b >= l {
        writeln!(s, "    let (lo{b}, hi{b}) = (z, z);").unwrap();
        return s;
    }
    writeln!(s, "    let (lo{b}, hi{b}) = {{").unwrap();
    // Long blocks get two chains per half (even / odd rows), which shortens
    // the dependency chain at the price of one add per half.
    let rows = row_list.len() + 1;
    let split = rows > SPLIT_ROWS;
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
    for &i in &row_list {
        let off = 8 * b as isize - i as isize;
        let mask = mask_of(i);
        // Window starting at digit `off` of D: lanes sh.. of d[u], then d[u+1].
        let u = off.div_euclid(8);
        let sh = off.rem_euclid(8);
        let vec = |k: isize| {
            if k >= 0 && (k as usize) < v {
                format!("d[{k}]")
            } else {
                "z".to_string()
            }
        };
        let window = match (sh, mask) {
            (0, 0xFF) => vec(u),
            (0, m) => format!("_mm512_maskz_mov_epi64({m:#04x}, {})", vec(u)),
            (sh, 0xFF) => format!("_mm512_alignr_epi64::<{sh}>({}, {})", vec(u + 1), vec(u)),
            (sh, m) => format!(
                "_mm512_maskz_alignr_epi64::<{sh}>({m:#04x}, {}, {})",
                vec(u + 1),
                vec(u)
            ),
        };
        writeln!(
            s,
            "        {{ let xi = _mm512_set1_epi64(*xp.add({i})); let w = {window}; \
             lo{parity} = _mm512_madd52lo_epu64(lo{parity}, xi, w); \
             hi{parity} = _mm512_madd52hi_epu64(hi{parity}, xi, w); }}"
        )
        .unwrap();
        if split {
            parity ^= 1;
        }
    }
    if 4 * b < l {
        // Diagonal x_(4b+t)^2: four digits expanded into the even lanes
        // (the high halves are kept one column up, like all high halves).
        writeln!(
            s,
            "        {{ let e = _mm512_maskz_expandloadu_epi64(0x55, xp.add({})); \
             lo{parity} = _mm512_madd52lo_epu64(lo{parity}, e, e); \
             hi{parity} = _mm512_madd52hi_epu64(hi{parity}, e, e); }}",
            4 * b
        )
        .unwrap();
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

/// `sq_high_{l}` and `sq_low_{l}`: the column blocks of the square in two
/// phases.  The high phase gives blocks `start ..` (the fold needs them
/// first; block `start` without the high halves from below, which only reach
/// a low column); the low phase gives blocks `.. start` and, at index
/// `start`, that missing contribution.  The kernel runs the low phase after
/// the fold rows in program order, so it fills the fold's latency.
fn square_cols(l: usize) -> String {
    let v = l.div_ceil(8);
    let v2 = 2 * v;
    let start = high_start(l);
    let mut s = String::new();
    writeln!(s, "#[inline(always)]").unwrap();
    writeln!(
        s,
        "unsafe fn sq_high_{l}(xp: *const i64, d: &[__m512i; {v}]) -> [__m512i; {v2}] {{"
    )
    .unwrap();
    writeln!(s, "    let z = _mm512_setzero_si512();").unwrap();
    for b in start..v2 {
        s.push_str(&block_code(l, b));
    }
    write!(s, "    [").unwrap();
    for b in 0..v2 {
        if b < start {
            write!(s, "z, ").unwrap();
        } else {
            let prev = if b == start {
                "z".to_string()
            } else {
                format!("hi{}", b - 1)
            };
            write!(s, "add_high(lo{b}, hi{b}, {prev}), ").unwrap();
        }
    }
    writeln!(s, "]").unwrap();
    writeln!(s, "}}").unwrap();
    writeln!(s, "#[inline(always)]").unwrap();
    writeln!(
        s,
        "unsafe fn sq_low_{l}(xp: *const i64, d: &[__m512i; {v}]) -> [__m512i; {v}] {{"
    )
    .unwrap();
    writeln!(s, "    let z = _mm512_setzero_si512();").unwrap();
    writeln!(s, "    let _ = (xp, d);").unwrap();
    for b in 0..start {
        s.push_str(&block_code(l, b));
    }
    write!(s, "    [").unwrap();
    for b in 0..v {
        if b < start {
            let prev = if b == 0 {
                "z".to_string()
            } else {
                format!("hi{}", b - 1)
            };
            write!(s, "add_high(lo{b}, hi{b}, {prev}), ").unwrap();
        } else if b == start && start > 0 {
            write!(s, "add_high(z, z, hi{}), ", b - 1).unwrap();
        } else {
            write!(s, "z, ").unwrap();
        }
    }
    writeln!(s, "]").unwrap();
    writeln!(s, "}}").unwrap();
    s
}

fn main() {
    println!("cargo:rerun-if-changed=src/build_ifma.rs");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("ifma_gen.rs");
    let mut s = String::new();
    writeln!(s, "// Generated by native/src/build_ifma.rs; do not edit.").unwrap();
    for l in MIN_L..=MAX_L {
        let v = l.div_ceil(8);
        s.push_str(&square_cols(l));
        {
            writeln!(
                s,
                "#[target_feature(enable = \"avx512f,avx512ifma\")]\n\
                 unsafe fn sqr_n_{l}(plan: &FoldPlan, s: &mut [u64], count: u64) {{\n\
                 \x20   sqr_n_with::<{v}, {v2}>(plan, {k}, s, count, |xp, d| sq_high_{l}(xp, d), |xp, d| sq_low_{l}(xp, d))\n\
                 }}",
                v2 = 2 * v,
                k = l - 1
            )
            .unwrap();
            writeln!(
                s,
                "#[target_feature(enable = \"avx512f,avx512ifma\")]\n\
                 unsafe fn pow_{l}(plan: &FoldPlan, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {{\n\
                 \x20   pow_windows_with::<{v}, {v2}>(plan, {k}, s, table, e, windows, w, |xp, d| sq_high_{l}(xp, d), |xp, d| sq_low_{l}(xp, d))\n\
                 }}",
                v2 = 2 * v,
                k = l - 1
            )
            .unwrap();
        }
    }
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
}
