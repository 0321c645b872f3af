//! Part of the build script (`build/build_ifma.rs` calls [`generate`]): writes
//! the AVX-512F kernel of `src/avx512f.rs` as one `asm!` block per shape, for
//! every `(r, K)` that [`fold32_shape::shape`] gives from 256 to 4096 bits.
//! The algorithm is documented in `src/fold32.rs`; this file only lays it out
//! in instructions and registers.
//!
//! Why assembly: written with intrinsics, LLVM narrowed every broadcast to a
//! 32-bit load plus a shuffle (it knows `vpmuludq` reads 32 bits) and turned
//! each masked product into a product and an `and`, both on the two vector
//! ports the products need; it also kept the square's windows in registers
//! and spilled them.  Here every product is one `vpmuludq` with its window
//! as the memory operand and every sum one `vpaddq`.
//!
//! Registers: `zmm0-23` accumulators (column blocks of the square, the fold's
//! `ceil(K/8)` vectors), `zmm24-27` the carry pass's shifted pieces, `zmm28`
//! a carry temporary, `zmm29` the digit mask, `zmm30` the broadcast digit,
//! `zmm31` the product.  `k1-k4` mask the lanes at and below the diagonal in
//! the square's row form (`k1-k3` are reloaded with the column form's masks
//! for the top blocks), `k5` (0x55) spreads the diagonal squares to even
//! columns, `k6` keeps the fold's `K mod 8` live lanes, `k7` the carried lanes
//! of the vector where the first carry pass starts (column `K - 1`, below
//! which the columns enter the fold raw: `fold32_shape::raw_low_columns`).

#[path = "../src/fold32_shape.rs"]
#[allow(dead_code)]
mod fold32_shape;

use fold32_shape::{first_carried_column, shape, COLS, D_DIG, E, MAX_FAST_BITS, MIN_FAST_BITS, SQ, X_DIG};
use std::fmt::Write as _;

/// Column blocks whose accumulators the square keeps in registers at once.
const GROUP_BLOCKS: usize = 24;

/// Every shape the kernel needs, `(r, K)`, in width order.
pub fn shapes() -> Vec<(u32, usize)> {
    let mut out: Vec<(u32, usize)> = Vec::new();
    for bits in MIN_FAST_BITS..=MAX_FAST_BITS {
        let s = shape(bits).expect("a shape for every fast width");
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Byte offset of lane `lane` from digit 0 of `X` (the base register `xb`).
fn from_x(lane: usize) -> isize {
    8 * (lane as isize - X_DIG as isize)
}

/// The asm lines of one kernel, and the registers they name.
struct Asm {
    lines: Vec<String>,
}

impl Asm {
    fn new() -> Self {
        Asm { lines: Vec::new() }
    }
    fn op(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }
    /// `{{kN}}{{z}}`: a zeroing mask in a Rust asm template.
    fn zmask(k: &str) -> String {
        format!("{{{{{k}}}}}{{{{z}}}}")
    }
    fn memory(base: &str, disp: isize) -> String {
        match disp {
            0 => format!("[{{{base}}}]"),
            d if d < 0 => format!("[{{{base}}} - {}]", -d),
            d => format!("[{{{base}}} + {d}]"),
        }
    }

    /// The carry pass over the accumulators `regs` (in place): `e = (c & M) +
    /// ((c_prev_lane >> r) & M) + (c_2_lanes_below >> 2r)`; `zmm24/25` hold
    /// the previous vector's shifted pieces and carry over between calls
    /// (`reset` clears them first).  `first_raw`: the lanes of the first
    /// vector that stay raw (`k7` holds the others): they keep their column
    /// and carry nothing up.
    fn carry(&mut self, r: u32, regs: &[usize], reset: bool, first_raw: bool) {
        let (mut pm, mut ph, mut cm, mut ch) = ("zmm24", "zmm25", "zmm26", "zmm27");
        if reset {
            self.op("vpxorq zmm24, zmm24, zmm24");
            self.op("vpxorq zmm25, zmm25, zmm25");
        }
        for (i, &q) in regs.iter().enumerate() {
            let a = format!("zmm{q}");
            let (z, merge) = if i == 0 && first_raw {
                (Self::zmask("k7"), "{{k7}}".to_string())
            } else {
                (String::new(), String::new())
            };
            self.op(format!("vpsrlq {cm}{z}, {a}, {r}"));
            self.op(format!("vpsrlq {ch}{z}, {a}, {}", 2 * r));
            self.op(format!("vpandq {cm}, {cm}, zmm29"));
            self.op(format!("vpandq {a}{merge}, {a}, zmm29"));
            self.op(format!("valignq zmm28, {cm}, {pm}, 7"));
            self.op(format!("vpaddq {a}, {a}, zmm28"));
            self.op(format!("valignq zmm28, {ch}, {ph}, 6"));
            self.op(format!("vpaddq {a}, {a}, zmm28"));
            std::mem::swap(&mut pm, &mut cm);
            std::mem::swap(&mut ph, &mut ch);
        }
        // The pieces of the last vector must be where the next call looks.
        if pm != "zmm24" {
            self.op("vmovdqa64 zmm24, zmm26");
            self.op("vmovdqa64 zmm25, zmm27");
        }
    }

    /// Steps 3 and 4 for table digits `k`: the fold of `E` with the packed
    /// table, then the carry pass; the next digits end in `zmm0 ..
    /// zmm(vl-1)`.  Uses `tp`, `ep`, `rc` as scratch registers.
    fn fold(&mut self, r: u32, k: usize, tp: &str, ep: &str, rc: &str) {
        let (l, h) = (k + 1, k + 2);
        let (vk, vl) = (k.div_ceil(8), l.div_ceil(8));
        for v in 0..vk {
            let src = Self::memory("xb", from_x(E + 8 * v));
            if v == vk - 1 && k % 8 != 0 {
                self.op(format!("vmovdqa64 zmm{v}{}, zmmword ptr {src}", Self::zmask("k6")));
            } else {
                self.op(format!("vmovdqa64 zmm{v}, zmmword ptr {src}"));
            }
        }
        self.op(format!("mov {{{tp}}}, {{tb}}"));
        self.op(format!("lea {{{ep}}}, {}", Self::memory("xb", from_x(E + k))));
        self.op(format!("mov {{{rc}:e}}, {}", h / 2));
        self.op("3:");
        for half in 0..2isize {
            self.op(format!("vpbroadcastq zmm30, qword ptr {}", Self::memory(ep, 8 * half)));
            for v in 0..vk {
                let t = Self::memory(tp, 64 * v as isize + 4 * half);
                self.op(format!("vpmuludq zmm31, zmm30, zmmword ptr {t}"));
                self.op(format!("vpaddq zmm{v}, zmm{v}, zmm31"));
            }
        }
        self.op(format!("add {{{tp}}}, {}", 64 * vk));
        self.op(format!("add {{{ep}}}, 16"));
        self.op(format!("dec {{{rc}:e}}"));
        self.op("jnz 3b");
        if h % 2 == 1 {
            self.op(format!("vpbroadcastq zmm30, qword ptr {}", Self::memory(ep, 0)));
            for v in 0..vk {
                let t = Self::memory(tp, 64 * v as isize);
                self.op(format!("vpmuludq zmm31, zmm30, zmmword ptr {t}"));
                self.op(format!("vpaddq zmm{v}, zmm{v}, zmm31"));
            }
        }
        let nv = vl.max(vk);
        for v in vk..nv {
            self.op(format!("vpxorq zmm{v}, zmm{v}, zmm{v}"));
        }
        self.carry(r, &(0..nv).collect::<Vec<_>>(), true, false);
    }

    /// The first carry pass over `blocks` (column vectors `blocks[j]` in
    /// `zmm(blocks[j] - g0)`): only the vectors from the one holding column
    /// `from` (`first_carried_column`) on; the first of them keeps its lanes
    /// below `from` raw.  `started` says whether an earlier group already
    /// began the pass.
    fn first_carry(&mut self, r: u32, blocks: &[usize], g0: usize, from: usize, started: &mut bool) {
        let regs: Vec<usize> = blocks.iter().filter(|&&b| 8 * b + 7 >= from).map(|b| b - g0).collect();
        if regs.is_empty() {
            return;
        }
        let boundary = blocks.iter().any(|&b| b == from / 8) && from % 8 != 0;
        self.carry(r, &regs, !*started, boundary);
        *started = true;
    }

    /// The first carry pass over a group of column blocks, then the blocks
    /// stored at `E`, where the fold reads them.
    fn carry_to_e(&mut self, r: u32, blocks: &[usize], g0: usize, from: usize, started: &mut bool) {
        self.first_carry(r, blocks, g0, from, started);
        for &b in blocks {
            let dst = Self::memory("xb", from_x(E + 8 * b));
            self.op(format!("vmovdqa64 zmmword ptr {dst}, zmm{}", b - g0));
        }
    }

    /// `zmm{acc} += zmm30 * window`, lanes outside `mask` zero.
    fn product(&mut self, acc: usize, window: &str, mask: Option<&str>) {
        let m = mask.map(Self::zmask).unwrap_or_default();
        self.op(format!("vpmuludq zmm31{m}, zmm30, zmmword ptr {window}"));
        self.op(format!("vpaddq zmm{acc}, zmm{acc}, zmm31"));
    }

    /// Loads constant masks.
    fn set_masks(&mut self, masks: &[(&str, u32)]) {
        for (reg, value) in masks {
            self.op(format!("mov {{t:e}}, {value:#x}"));
            self.op(format!("kmovw {reg}, {{t:e}}"));
        }
    }

    /// The set-up every kernel starts with: the masks and the digit mask.
    fn masks(&mut self, r: u32, k: usize) {
        let live = if k % 8 == 0 { 0xFF } else { (1u32 << (k % 8)) - 1 };
        let carried = 0xFFu32 << (first_carried_column(r, k) % 8) & 0xFF;
        for (reg, value) in [
            ("k1", 0xFEu32),
            ("k2", 0xF8),
            ("k3", 0xE0),
            ("k4", 0x80),
            ("k5", 0x55),
            ("k6", live),
            ("k7", carried),
        ] {
            self.op(format!("mov {{t:e}}, {value:#x}"));
            self.op(format!("kmovw {reg}, {{t:e}}"));
        }
    }

    fn body(&self) -> String {
        let mut s = String::new();
        for line in &self.lines {
            writeln!(s, "        \"{line}\",").unwrap();
        }
        s
    }
}

/// The rows `i` that block `b` of the square of `l` digits takes in the row
/// form: those with a lane `j = 8b + lane - i` in `i < j < l`.
fn square_rows(l: usize, b: usize) -> std::ops::RangeInclusive<usize> {
    (8 * b + 1).saturating_sub(l)..=(l - 1).min(4 * b + 3)
}

/// The columns `j` it takes in the column form: those with a lane
/// `i = 8b + lane - j` in `0 <= i < j`.  Near the top of the square the rows
/// leave lanes past digit `l` empty and the columns do not (4 products fewer
/// per top block); low down it is the other way round.
fn square_columns(l: usize, b: usize) -> std::ops::RangeInclusive<usize> {
    (4 * b + 1)..=(l - 1).min(8 * b + 7)
}

/// `count` squarings (`count >= 1`) of the digits at `X` (doubled at `D`).
fn sqr_n(r: u32, k: usize) -> String {
    let l = k + 1;
    let vl = l.div_ceil(8);
    let nb = (2 * l).div_ceil(8);
    let mut a = Asm::new();
    a.masks(r, k);
    let from = first_carried_column(r, k);
    a.op("2:");
    // Window bases: w_m = &D[digit -m], so that the window of row i and
    // block b, digits 8b-i .., sits at a multiple of 64 bytes from w_(i mod 8).
    for m in 1..8 {
        a.op(format!("lea {{w{m}}}, [{{w0}} - {}]", 8 * m));
    }
    // The diagonal: x_q^2 per lane, spread to even columns below.
    for q in 0..vl {
        a.op(format!("vmovdqa64 zmm31, zmmword ptr {}", Asm::memory("xb", 64 * q as isize)));
        a.op("vpmuludq zmm31, zmm31, zmm31");
        a.op(format!("vmovdqa64 zmmword ptr {}, zmm31", Asm::memory("xb", from_x(SQ + 8 * q))));
    }
    let mut started = false;
    for g0 in (0..nb).step_by(GROUP_BLOCKS) {
        let blocks: Vec<usize> = (g0..nb.min(g0 + GROUP_BLOCKS)).collect();
        for &b in &blocks {
            let src = Asm::memory("xb", from_x(SQ + 4 * b));
            a.op(format!("vpexpandq zmm{}{}, zmmword ptr {src}", b - g0, Asm::zmask("k5")));
        }
        let (by_rows, by_columns): (Vec<usize>, Vec<usize>) =
            blocks.iter().partition(|&&b| square_rows(l, b).count() <= square_columns(l, b).count());
        // Row form: broadcast x_i, windows of D at digit 8b - i, lanes j <= i masked.
        a.set_masks(&[("k1", 0xFE), ("k2", 0xF8), ("k3", 0xE0), ("k4", 0x80)]);
        for i in 0..l {
            let row: Vec<usize> = by_rows.iter().copied().filter(|&b| square_rows(l, b).contains(&i)).collect();
            if row.is_empty() {
                continue;
            }
            a.op(format!("vpbroadcastq zmm30, qword ptr {}", Asm::memory("xb", 8 * i as isize)));
            let m = i % 8;
            for &b in &row {
                let window = Asm::memory(&format!("w{m}"), 64 * b as isize - 8 * (i - m) as isize);
                // Lanes up to 2i - 8b are the diagonal and below.
                let mask = match (2 * i + 1).checked_sub(8 * b) {
                    Some(1) => Some("k1"),
                    Some(3) => Some("k2"),
                    Some(5) => Some("k3"),
                    Some(7) => Some("k4"),
                    _ => None,
                };
                a.product(b - g0, &window, mask);
            }
        }
        // Column form (the top blocks, where rows would run past digit L):
        // broadcast d_j = 2 x_j, windows of X at digit 8b - j, lanes i >= j
        // masked.  X sits D_DIG - X_DIG lanes below D, so the same bases serve.
        if !by_columns.is_empty() {
            a.set_masks(&[("k1", 0x03), ("k2", 0x0F), ("k3", 0x3F)]);
        }
        for j in 0..l {
            let column: Vec<usize> =
                by_columns.iter().copied().filter(|&b| square_columns(l, b).contains(&j)).collect();
            if column.is_empty() {
                continue;
            }
            a.op(format!("vpbroadcastq zmm30, qword ptr {}", Asm::memory("w0", 8 * j as isize)));
            let m = j % 8;
            let below = 8 * (D_DIG - X_DIG) as isize;
            for &b in &column {
                let window = Asm::memory(&format!("w{m}"), 64 * b as isize - 8 * (j - m) as isize - below);
                let mask = match (2 * j).checked_sub(8 * b) {
                    Some(2) => Some("k1"),
                    Some(4) => Some("k2"),
                    Some(6) => Some("k3"),
                    _ => None,
                };
                a.product(b - g0, &window, mask);
            }
        }
        a.carry_to_e(r, &blocks, g0, from, &mut started);
    }
    a.fold(r, k, "w1", "w2", "w3");
    for q in 0..vl {
        a.op(format!("vmovdqa64 zmmword ptr {}, zmm{q}", Asm::memory("xb", 64 * q as isize)));
        a.op(format!("vpaddq zmm31, zmm{q}, zmm{q}"));
        a.op(format!("vmovdqa64 zmmword ptr {}, zmm31", Asm::memory("w0", 64 * q as isize)));
    }
    a.op("dec {count}");
    a.op("jnz 2b");
    kernel_fn(
        &format!("/// `count` (>= 1) squarings, radix 2^{r}, K = {k} (L = {l}); see `build_avx512f.rs`."),
        &format!("sqr_n_{r}_{k}(scratch: *mut u64, table: *const u64, count: u64)"),
        r,
        &a,
        &format!(
            "xb = in(reg) scratch.add({X_DIG}), w0 = in(reg) scratch.add({D_DIG}), tb = in(reg) table, \
             count = inout(reg) count => _, t = out(reg) _, w1 = out(reg) _, w2 = out(reg) _, w3 = out(reg) _, \
             w4 = out(reg) _, w5 = out(reg) _, w6 = out(reg) _, w7 = out(reg) _,"
        ),
    )
}

/// One product of the digits at `X` and `D`, result at `X`: rows in groups
/// of eight, each group adding into `vl + 1` column blocks kept at `COLS`
/// (a loop, not straight-line code: products matter less than squarings,
/// and this keeps the code small), then the same fold.
fn mul(r: u32, k: usize) -> String {
    let l = k + 1;
    let vl = l.div_ceil(8);
    let mut a = Asm::new();
    a.masks(r, k);
    let from = first_carried_column(r, k);
    a.op("vpxorq zmm31, zmm31, zmm31");
    for v in 0..2 * vl + 1 {
        a.op(format!("vmovdqa64 zmmword ptr {}, zmm31", Asm::memory("xb", from_x(COLS + 8 * v))));
    }
    a.op("mov {ap}, {xb}");
    a.op(format!("lea {{cp}}, {}", Asm::memory("xb", from_x(COLS))));
    a.op(format!("mov {{rc:e}}, {vl}"));
    a.op("2:");
    for q in 0..=vl {
        a.op(format!("vmovdqa64 zmm{q}, zmmword ptr {}", Asm::memory("cp", 64 * q as isize)));
    }
    for m in 0..8isize {
        a.op(format!("vpbroadcastq zmm30, qword ptr {}", Asm::memory("ap", 8 * m)));
        for q in 0..=vl as isize {
            let window = Asm::memory("bp", 64 * q - 8 * m);
            a.op(format!("vpmuludq zmm31, zmm30, zmmword ptr {window}"));
            a.op(format!("vpaddq zmm{q}, zmm{q}, zmm31"));
        }
    }
    for q in 0..=vl {
        a.op(format!("vmovdqa64 zmmword ptr {}, zmm{q}", Asm::memory("cp", 64 * q as isize)));
    }
    a.op("add {ap}, 64");
    a.op("add {cp}, 64");
    a.op("dec {rc:e}");
    a.op("jnz 2b");
    // Carry the 2 vl column vectors into E, GROUP_BLOCKS at a time.
    let nb = 2 * vl;
    let mut started = false;
    for g0 in (0..nb).step_by(GROUP_BLOCKS) {
        let blocks: Vec<usize> = (g0..nb.min(g0 + GROUP_BLOCKS)).collect();
        for &b in &blocks {
            let src = Asm::memory("xb", from_x(COLS + 8 * b));
            a.op(format!("vmovdqa64 zmm{}, zmmword ptr {src}", b - g0));
        }
        a.carry_to_e(r, &blocks, g0, from, &mut started);
    }
    a.fold(r, k, "ap", "cp", "rc");
    for q in 0..vl {
        a.op(format!("vmovdqa64 zmmword ptr {}, zmm{q}", Asm::memory("xb", 64 * q as isize)));
    }
    kernel_fn(
        &format!("/// One product, radix 2^{r}, K = {k} (L = {l}); see `build_avx512f.rs`."),
        &format!("mul_{r}_{k}(scratch: *mut u64, table: *const u64)"),
        r,
        &a,
        &format!(
            "xb = in(reg) scratch.add({X_DIG}), bp = in(reg) scratch.add({D_DIG}), tb = in(reg) table, \
             t = out(reg) _, ap = out(reg) _, cp = out(reg) _, rc = out(reg) _,"
        ),
    )
}

/// One generated kernel: `doc`, then `unsafe fn {signature}` around one
/// `asm!` block of `a`'s lines with the named `operands`, the digit mask of
/// radix `2^r` in `zmm29`, and every other vector and mask register
/// clobbered.
fn kernel_fn(doc: &str, signature: &str, r: u32, a: &Asm, operands: &str) -> String {
    let mut s = String::new();
    writeln!(
        s,
        "{doc}\n\
         #[target_feature(enable = \"avx512f\")]\n\
         unsafe fn {signature} {{\n\
         \x20   let mask = _mm512_set1_epi64({mask});\n\
         \x20   asm!(",
        mask = (1u64 << r) - 1
    )
    .unwrap();
    s.push_str(&a.body());
    writeln!(
        s,
        "        {operands}\n\
         \x20       in(\"zmm29\") mask,\n\
         {clobbers}\n\
         \x20       options(nostack),\n\
         \x20   );\n\
         }}",
        clobbers = clobbers()
    )
    .unwrap();
    s
}

fn clobbers() -> String {
    let mut s = String::from("        ");
    for k in 1..=7 {
        write!(s, "out(\"k{k}\") _, ").unwrap();
    }
    for z in (0..32).filter(|&z| z != 29) {
        write!(s, "out(\"zmm{z}\") _, ").unwrap();
    }
    s
}

/// The generated file: every kernel and the two lookups.
pub fn generate() -> String {
    let mut s = String::new();
    writeln!(s, "// Generated by native/crates/modforge-ring/build/build_avx512f.rs; do not edit.").unwrap();
    let all = shapes();
    for &(r, k) in &all {
        s.push_str(&sqr_n(r, k));
        s.push_str(&mul(r, k));
    }
    s.push_str(&lookups(&all));
    s
}

/// The two lookups of a generated fold32 kernel file (`sqr_n_{r}_{k}` and
/// `mul_{r}_{k}` for every shape in `all`); `build_avx2.rs` uses them too.
pub fn lookups(all: &[(u32, usize)]) -> String {
    let mut s = String::new();
    writeln!(s, "/// The generated squaring loop for radix 2^r and K table digits.").unwrap();
    writeln!(s, "fn sqr_n_generated(r: u32, k: usize) -> Option<unsafe fn(*mut u64, *const u64, u64)> {{").unwrap();
    writeln!(s, "    Some(match (r, k) {{").unwrap();
    for &(r, k) in all {
        writeln!(s, "        ({r}, {k}) => sqr_n_{r}_{k},").unwrap();
    }
    writeln!(s, "        _ => return None,\n    }})\n}}").unwrap();
    writeln!(s, "/// The generated product for radix 2^r and K table digits.").unwrap();
    writeln!(s, "fn mul_generated(r: u32, k: usize) -> Option<unsafe fn(*mut u64, *const u64)> {{").unwrap();
    writeln!(s, "    Some(match (r, k) {{").unwrap();
    for &(r, k) in all {
        writeln!(s, "        ({r}, {k}) => mul_{r}_{k},").unwrap();
    }
    writeln!(s, "        _ => return None,\n    }})\n}}").unwrap();
    s
}
