//! Part of the build script (`build/build_ifma.rs` calls [`generate`]): writes
//! the AVX2 kernel of `src/avx2.rs`, the 32-bit-product table fold of
//! `src/fold32.rs` with 256-bit `vpmuludq`, as one `asm!` block per shape for
//! every `(r, K)` that `fold32_shape::shape` gives from 256 to 4096 bits (the
//! shapes of `build_avx512f.rs`: the digits, the bounds and the packed table
//! are the same, only the vectors are half as wide).  The algorithm is
//! documented in `src/fold32.rs`; this file lays it out in instructions.
//!
//! Assembly, not intrinsics, for the reason `build_avx512f.rs` gives: every
//! product is one `vpmuludq` with its window as the memory operand, every sum
//! one `vpaddq`, and the compiler cannot hoist windows into the 16 `ymm`
//! registers and spill them.
//!
//! Per squaring: the column blocks of the square (4 columns each) in groups
//! of up to 14 accumulators `ymm0-13` (`ymm14` the broadcast digit, `ymm15`
//! the product), stored to `C`; the first carry pass over `C` in place from
//! the vector holding column `K - 1` (below it the columns stay raw where
//! `fold32_shape::raw_low_columns` allows); the fold, the packed table
//! streamed into up to 14 accumulators per pass, stored to `R`; the carry
//! pass from `R` to the digits `X` and the doubled digits `D`.
//!
//! Without AVX-512's masks the square's two rows per block that meet the
//! diagonal (rows `2b` and `2b + 1` of block `b`) take a window assembled
//! from `X` and `D` by `vpblendd`: `(x_2b, 2x_2b+1, 2x_2b+2, 2x_2b+3)` and
//! `(0, 0, x_2b+1, 2x_2b+2)`, which yield the diagonal squares and the pairs
//! above them exactly once.  The carry pass moves pieces one and two lanes up
//! with `vperm2i128` and `vpalignr` (no `valignq` in AVX2).

#[path = "../src/fold32_shape.rs"]
#[allow(dead_code)]
mod fold32_shape;

use super::build_avx512f::{lookups, shapes};
use fold32_shape::first_carried_column;
use std::fmt::Write as _;

/// Largest loop value, in 4-lane vectors (4096 bits: `L = 154`).
const MAX_VL4: usize = 39;
/// Zero lanes around `X` and `D` (windows reach 3 lanes below digit 0 and 3
/// past the last vector; the product's windows 3 below and 7 above).
const PAD: usize = 8;

/// Scratch layout, in 64-bit lanes from the scratch's start (all offsets
/// multiples of 4: every vector access to a region start is aligned).
/// `CONST`: the digit mask, then lane masks (see `constants` in src/avx2.rs).
const CONST: usize = 0;
const CONST_LANES: usize = 32;
/// The digit mask `2^r - 1` in every lane.
const DIGIT_MASK: usize = CONST;
/// Lanes `< n` all ones (n = 1..3) at `KEEP_LOW + 4 (n - 1)`.
const KEEP_LOW: usize = CONST + 4;
/// Lanes `>= n` all ones (n = 1..3) at `KEEP_HIGH + 4 (n - 1)`.
const KEEP_HIGH: usize = CONST + 16;
/// Lanes of `X` or `D` with padding: 8 lanes per 8-lane vector of the plan's
/// loop form (the inputs' length) plus padding both sides.
const REGION: usize = 2 * PAD + 4 * (MAX_VL4 + 1);
/// `X`: the digits (a product's first operand; the result).
const X_DIG: usize = CONST_LANES + PAD;
/// `D`: the doubled digits (a product's second operand).
const D_DIG: usize = CONST_LANES + REGION + PAD;
/// `C`: the columns (a product's `2 vl + 1` column vectors), carried in place.
const C: usize = CONST_LANES + 2 * REGION;
/// `R`: the fold's sums.
const R: usize = C + 4 * (2 * MAX_VL4 + 2);
const SCRATCH_LANES: usize = R + 4 * (MAX_VL4 + 1);

/// Accumulators a group or pass keeps in registers (`ymm0-13`).
const MAX_ACC: usize = 14;

/// `[{sp} + byte offset of lane `lane`]`.
fn at(lane: isize) -> String {
    let d = 8 * lane;
    if d == 0 {
        "[{sp}]".to_string()
    } else if d < 0 {
        format!("[{{sp}} - {}]", -d)
    } else {
        format!("[{{sp}} + {d}]")
    }
}

fn x(digit: isize) -> String {
    at(X_DIG as isize + digit)
}
fn d(digit: isize) -> String {
    at(D_DIG as isize + digit)
}

/// `vpblendd` immediate taking 64-bit lanes `lanes` from the second source.
fn blend_lanes(lanes: impl Iterator<Item = usize>) -> u32 {
    lanes.map(|l| 3u32 << (2 * l)).sum()
}

struct Asm {
    lines: Vec<String>,
}

impl Asm {
    fn op(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }

    /// `acc += a * b` where `b` is a register or memory operand; the first
    /// product of an accumulator writes it instead.
    fn mac(&mut self, acc: usize, started: &mut [bool], a: &str, b: &str) {
        if started[acc] {
            self.op(format!("vpmuludq ymm15, {a}, {b}"));
            self.op(format!("vpaddq ymm{acc}, ymm{acc}, ymm15"));
        } else {
            self.op(format!("vpmuludq ymm{acc}, {a}, {b}"));
            started[acc] = true;
        }
    }

    /// A carry pass over vectors `v0 .. v1` of the columns at lane `src`:
    /// `e = (c & M) + ((c_1_lane_below >> r) & M) + (c_2_lanes_below >> 2r)`,
    /// the pieces of vector `v0 - 1` taken as zero; lanes below `raw` of
    /// vector `v0` stay as they are and carry nothing.  Each result is
    /// stored at `dst` and, when `double` is given, doubled there too.
    fn carry(&mut self, r: u32, src: usize, dst: usize, double: Option<usize>, v0: usize, v1: usize, raw: usize) {
        // ymm0 column, ymm1/ymm2 this vector's pieces, ymm3/ymm4 the previous
        // vector's, ymm5/ymm6 temporaries.
        let (mut pm, mut ph, mut cm, mut ch) = ("ymm3", "ymm4", "ymm1", "ymm2");
        self.op("vpxor ymm3, ymm3, ymm3");
        self.op("vpxor ymm4, ymm4, ymm4");
        for v in v0..v1 {
            let lane = (4 * v) as isize;
            self.op(format!("vmovdqa ymm0, ymmword ptr {}", at(src as isize + lane)));
            self.op(format!("vpsrlq {cm}, ymm0, {r}"));
            self.op(format!("vpsrlq {ch}, ymm0, {}", 2 * r));
            self.op(format!("vpand {cm}, {cm}, ymmword ptr {}", at(DIGIT_MASK as isize)));
            if v == v0 && raw > 0 {
                let keep = at((KEEP_HIGH + 4 * (raw - 1)) as isize);
                self.op(format!("vpand {cm}, {cm}, ymmword ptr {keep}"));
                self.op(format!("vpand {ch}, {ch}, ymmword ptr {keep}"));
            }
            self.op(format!("vpand ymm5, ymm0, ymmword ptr {}", at(DIGIT_MASK as isize)));
            self.op(format!("vperm2i128 ymm6, {pm}, {cm}, 0x21"));
            self.op(format!("vpalignr ymm6, {cm}, ymm6, 8"));
            self.op("vpaddq ymm5, ymm5, ymm6");
            self.op(format!("vperm2i128 ymm6, {ph}, {ch}, 0x21"));
            self.op("vpaddq ymm5, ymm5, ymm6");
            if v == v0 && raw > 0 {
                self.op(format!("vpblendd ymm5, ymm5, ymm0, {:#x}", blend_lanes(0..raw)));
            }
            self.op(format!("vmovdqa ymmword ptr {}, ymm5", at(dst as isize + lane)));
            if let Some(dd) = double {
                self.op("vpaddq ymm5, ymm5, ymm5");
                self.op(format!("vmovdqa ymmword ptr {}, ymm5", at(dd as isize + lane)));
            }
            std::mem::swap(&mut pm, &mut cm);
            std::mem::swap(&mut ph, &mut ch);
        }
    }

    /// Steps 2-4 from the exact columns at `C`: the first carry pass, the
    /// fold into `R`, the carry pass into `X` and `D`.  Scratch registers
    /// `tp`, `ep`, `rc`.
    fn finish(&mut self, r: u32, k: usize) {
        let (l, h) = (k + 1, k + 2);
        let nb = (2 * l).div_ceil(4);
        let (vk, vl, vk8) = (k.div_ceil(4), l.div_ceil(4), k.div_ceil(8));
        let from = first_carried_column(r, k);
        self.carry(r, C, C, None, from / 4, nb, from % 4);
        let passes = vk.div_ceil(MAX_ACC);
        let per = vk.div_ceil(passes);
        for v0 in (0..vk).step_by(per) {
            let v1 = vk.min(v0 + per);
            for v in v0..v1 {
                let j = v - v0;
                self.op(format!("vmovdqa ymm{j}, ymmword ptr {}", at((C + 4 * v) as isize)));
                if v == vk - 1 && k % 4 != 0 {
                    let keep = at((KEEP_LOW + 4 * (k % 4 - 1)) as isize);
                    self.op(format!("vpand ymm{j}, ymm{j}, ymmword ptr {keep}"));
                }
            }
            self.op(format!("lea {{tp}}, [{{tb}} + {}]", 32 * v0));
            self.op(format!("lea {{ep}}, {}", at((C + k) as isize)));
            self.op(format!("mov {{rc:e}}, {}", h / 2));
            self.op("3:");
            for half in 0..2usize {
                self.op(format!("vpbroadcastq ymm14, qword ptr [{{ep}} + {}]", 8 * half));
                for j in 0..v1 - v0 {
                    self.op(format!("vpmuludq ymm15, ymm14, ymmword ptr [{{tp}} + {}]", 32 * j + 4 * half));
                    self.op(format!("vpaddq ymm{j}, ymm{j}, ymm15"));
                }
            }
            self.op(format!("add {{tp}}, {}", 64 * vk8));
            self.op("add {ep}, 16");
            self.op("dec {rc:e}");
            self.op("jnz 3b");
            if h % 2 == 1 {
                self.op("vpbroadcastq ymm14, qword ptr [{ep}]");
                for j in 0..v1 - v0 {
                    self.op(format!("vpmuludq ymm15, ymm14, ymmword ptr [{{tp}} + {}]", 32 * j));
                    self.op(format!("vpaddq ymm{j}, ymm{j}, ymm15"));
                }
            }
            for v in v0..v1 {
                self.op(format!("vmovdqa ymmword ptr {}, ymm{}", at((R + 4 * v) as isize), v - v0));
            }
        }
        if vl > vk {
            self.op("vpxor ymm0, ymm0, ymm0");
            for v in vk..vl {
                self.op(format!("vmovdqa ymmword ptr {}, ymm0", at((R + 4 * v) as isize)));
            }
        }
        self.carry(r, R, X_DIG, Some(D_DIG), 0, vl, 0);
    }

    fn body(&self) -> String {
        let mut s = String::new();
        for line in &self.lines {
            writeln!(s, "        \"{line}\",").unwrap();
        }
        s
    }
}

/// Rows `i` block `b` (columns `4b .. 4b+3`) of the square of `l` digits
/// takes: those with a lane `j = 4b + lane - i` in `i <= j < l`.
fn square_rows(l: usize, b: usize) -> std::ops::RangeInclusive<usize> {
    (4 * b + 1).saturating_sub(l)..=(l - 1).min(2 * b + 1)
}

/// `count` squarings (`count >= 1`) of the digits at `X` (doubled at `D`).
fn sqr_n(r: u32, k: usize) -> String {
    let l = k + 1;
    let nb = (2 * l).div_ceil(4);
    let mut a = Asm { lines: Vec::new() };
    a.op("2:");
    for g0 in (0..nb).step_by(MAX_ACC) {
        let blocks: Vec<usize> = (g0..nb.min(g0 + MAX_ACC)).collect();
        let mut started = [false; MAX_ACC];
        for i in 0..l {
            let row: Vec<usize> = blocks.iter().copied().filter(|&b| square_rows(l, b).contains(&i)).collect();
            if row.is_empty() {
                continue;
            }
            a.op(format!("vpbroadcastq ymm14, qword ptr {}", x(i as isize)));
            for &b in &row {
                let acc = b - g0;
                let w = (4 * b) as isize - i as isize;
                // The windows at digit w of D and of X.
                let (dw, xw) = (d(w), x(w));
                if i < 2 * b {
                    // Every lane j = w + lane is above i: the doubled digits.
                    a.mac(acc, &mut started, "ymm14", &format!("ymmword ptr {dw}"));
                } else if i == 2 * b {
                    // (x_i, 2x_(i+1), 2x_(i+2), 2x_(i+3)): the square, then pairs.
                    a.op(format!("vmovdqu ymm15, ymmword ptr {dw}"));
                    a.op(format!("vpblendd ymm15, ymm15, ymmword ptr {xw}, 0x03"));
                    a.op("vpmuludq ymm15, ymm15, ymm14");
                    a.mac_product(acc, &mut started);
                } else {
                    // i = 2b + 1, lanes j = i-2 .. i+1: (0, 0, x_i, 2x_(i+1)).
                    a.op(format!("vmovdqu ymm15, ymmword ptr {xw}"));
                    a.op(format!("vpblendd ymm15, ymm15, ymmword ptr {dw}, 0xc0"));
                    a.op(format!("vpand ymm15, ymm15, ymmword ptr {}", at((KEEP_HIGH + 4) as isize)));
                    a.op("vpmuludq ymm15, ymm15, ymm14");
                    a.mac_product(acc, &mut started);
                }
            }
        }
        for &b in &blocks {
            a.op(format!("vmovdqa ymmword ptr {}, ymm{}", at((C + 4 * b) as isize), b - g0));
        }
    }
    a.finish(r, k);
    a.op("dec {count}");
    a.op("jnz 2b");
    kernel_fn(
        &format!("/// `count` (>= 1) squarings, radix 2^{r}, K = {k} (L = {l}); see `build_avx2.rs`."),
        &format!("sqr_n_{r}_{k}(scratch: *mut u64, table: *const u64, count: u64)"),
        &a,
        "count = inout(reg) count => _,",
    )
}

impl Asm {
    /// `acc += ymm15` (or `acc = ymm15` for its first product).
    fn mac_product(&mut self, acc: usize, started: &mut [bool]) {
        if started[acc] {
            self.op(format!("vpaddq ymm{acc}, ymm{acc}, ymm15"));
        } else {
            self.op(format!("vmovdqa ymm{acc}, ymm15"));
            started[acc] = true;
        }
    }
}

/// One product of the digits at `X` and `D`, result at `X` (and doubled at
/// `D`): rows in groups of four, each group adding into the `vl + 1` column
/// vectors from its own at `C` (a loop: products matter less than
/// squarings), then the same steps as a squaring.
fn mul(r: u32, k: usize) -> String {
    let l = k + 1;
    let vl = l.div_ceil(4);
    let mut a = Asm { lines: Vec::new() };
    a.op("vpxor ymm0, ymm0, ymm0");
    for v in 0..2 * vl + 2 {
        a.op(format!("vmovdqa ymmword ptr {}, ymm0", at((C + 4 * v) as isize)));
    }
    a.op(format!("lea {{ap}}, {}", x(0)));
    a.op(format!("lea {{cp}}, {}", at(C as isize)));
    a.op(format!("mov {{rc:e}}, {vl}"));
    a.op("2:");
    let chunks = (vl + 1).div_ceil(MAX_ACC);
    let per = (vl + 1).div_ceil(chunks);
    for q0 in (0..=vl).step_by(per) {
        let q1 = (vl + 1).min(q0 + per);
        for q in q0..q1 {
            a.op(format!("vmovdqa ymm{}, ymmword ptr [{{cp}} + {}]", q - q0, 32 * q));
        }
        for m in 0..4isize {
            a.op(format!("vpbroadcastq ymm14, qword ptr [{{ap}} + {}]", 8 * m));
            for q in q0..q1 {
                let window = d(4 * q as isize - m);
                a.op(format!("vpmuludq ymm15, ymm14, ymmword ptr {window}"));
                a.op(format!("vpaddq ymm{0}, ymm{0}, ymm15", q - q0));
            }
        }
        for q in q0..q1 {
            a.op(format!("vmovdqa ymmword ptr [{{cp}} + {}], ymm{}", 32 * q, q - q0));
        }
    }
    // Next group: rows and columns 4 further; the windows of D, at digit
    // 4q - m for row 4g + m and column vector g + q, stay where they are.
    a.op("add {ap}, 32");
    a.op("add {cp}, 32");
    a.op("dec {rc:e}");
    a.op("jnz 2b");
    a.finish(r, k);
    kernel_fn(
        &format!("/// One product, radix 2^{r}, K = {k} (L = {l}); see `build_avx2.rs`."),
        &format!("mul_{r}_{k}(scratch: *mut u64, table: *const u64)"),
        &a,
        "ap = out(reg) _, cp = out(reg) _,",
    )
}

/// One generated kernel: `doc`, then `unsafe fn {signature}` around one
/// `asm!` block of `a`'s lines (`sp` the scratch, `tb` the table, `tp`, `ep`,
/// `rc` scratch registers, the named `operands`) with every `ymm` register
/// clobbered.
fn kernel_fn(doc: &str, signature: &str, a: &Asm, operands: &str) -> String {
    let mut s = String::new();
    writeln!(s, "{doc}\n#[target_feature(enable = \"avx2\")]\nunsafe fn {signature} {{\n    asm!(").unwrap();
    s.push_str(&a.body());
    write!(s, "        sp = in(reg) scratch, tb = in(reg) table, tp = out(reg) _, ep = out(reg) _, rc = out(reg) _, {operands}\n        ").unwrap();
    for z in 0..16 {
        write!(s, "out(\"ymm{z}\") _, ").unwrap();
    }
    writeln!(s, "\n        options(nostack),\n    );\n}}").unwrap();
    s
}

/// The generated file: the scratch layout, every kernel and the two lookups.
pub fn generate() -> String {
    let mut s = String::new();
    writeln!(s, "// Generated by native/crates/modforge-ring/build/build_avx2.rs; do not edit.").unwrap();
    for (name, value, doc) in [
        ("DIGIT_MASK", DIGIT_MASK, "Scratch lane of the digit mask (4 lanes)."),
        ("KEEP_LOW", KEEP_LOW, "Scratch lane of the masks keeping lanes < n, n = 1..3 (4 lanes each)."),
        ("KEEP_HIGH", KEEP_HIGH, "Scratch lane of the masks keeping lanes >= n, n = 1..3."),
        ("PAD", PAD, "Zero lanes around X and D."),
        ("X_DIG", X_DIG, "Scratch lane of digit 0 of X."),
        ("D_DIG", D_DIG, "Scratch lane of digit 0 of D."),
        ("REGION", REGION, "Lanes of X or D with their padding."),
        ("C", C, "Scratch lane of the columns."),
        ("R", R, "Scratch lane of the fold's sums."),
        ("SCRATCH_LANES", SCRATCH_LANES, "Scratch lanes in all."),
    ] {
        writeln!(s, "/// {doc}\nconst {name}: usize = {value};").unwrap();
    }
    let all = shapes();
    for &(r, k) in &all {
        assert!((k + 1).div_ceil(4) <= MAX_VL4);
        s.push_str(&sqr_n(r, k));
        s.push_str(&mul(r, k));
    }
    s.push_str(&lookups(&all));
    s
}
