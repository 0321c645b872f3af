//! Part of the build script (`build/build_ifma.rs` calls [`generate`]):
//! writes the FP64-FMA kernel of `src/fma.rs`, one `asm!` block per digit
//! count `L` for the squaring loop and one for the product.  The algorithm
//! (the radix-2^50 table fold) is documented in `src/fold.rs`, the exact
//! product split in `src/fma.rs`; this file lays them out in AVX2 + FMA
//! instructions and registers.
//!
//! Why assembly: the split needs the rounding mode set toward zero, and
//! only code the compiler cannot see may run under a rounding mode other
//! than the default (an `asm!` block must restore it before it ends, which
//! this one does).  It also keeps the accumulators in registers: written
//! with intrinsics, the probe of issue 30 lost a third to spills.
//!
//! One product of a digit `a` (broadcast, `bc`) by four digits `w` (a
//! window in memory), `ph` and `s` temporaries, `C = 2^104`:
//!
//! ```text
//! vmovupd     t, w
//! vmovapd     ph, C
//! vfmadd231pd ph, bc, t        ; ph = a w + 2^104 = 2^104 + hi 2^52 (toward zero)
//! vpaddq      acc_hi, acc_hi, ph   ; + bits(2^104) + hi
//! vsubpd      ph, ph, K        ; s = (hi - 1) 2^52, exact   (K = 2^104 + 2^52)
//! vfmsub231pd ph, bc, t        ; s = a w - s = 2^52 + lo, exact
//! vpaddq      acc_lo, acc_lo, ph   ; + bits(2^52) + lo
//! ```
//!
//! The accumulators start at minus the bit patterns they will collect (one
//! per product, a count known here), so they end as the exact sums of the
//! halves, modulo 2^64 and hence exactly (fold.rs bounds them below 2^61).
//!
//! Registers.  Square and product: `ymm0-9` accumulators (five column
//! blocks: low halves at their columns, high halves one column up),
//! `ymm10` the previous block's rotated high halves, `ymm11` the window,
//! `ymm12` `ph` then `s`, `ymm13` the broadcast, `ymm14` `K`, `ymm15` `C`.
//! Fold: `ymm0-11` accumulators (six result vectors), `ymm12` the
//! broadcast row digit, `ymm13` the table window, `ymm14` `ph` then `s`,
//! `ymm15` `C`, `K` from memory.  General
//! registers: `r10` the scratch, `r11` the table, `r12` the squaring count,
//! `rax rcx rdx rsi rdi r8 r9` temporaries.

#[path = "../src/fma_layout.rs"]
#[allow(dead_code)]
mod fma_layout;

use fma_layout::*;
use std::fmt::Write as _;

/// Column blocks the square keeps in registers at once.
const SQ_GROUP: usize = 5;
/// Result vectors the fold keeps in registers at once.
const FOLD_GROUP: usize = 6;

struct Asm {
    lines: Vec<String>,
}

/// Memory operand of lane `lane` of the scratch.
fn sc(lane: usize) -> String {
    format!("[r10 + {}]", 8 * lane)
}

impl Asm {
    fn op(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }

    /// `ymm{r}` set to the 64-bit constant `value` in every lane.
    fn splat(&mut self, r: usize, value: u64) {
        self.op(format!("mov rax, {value:#x}"));
        self.op(format!("vmovq xmm{r}, rax"));
        self.op(format!("vpbroadcastq ymm{r}, xmm{r}"));
    }

    /// One exact product into `lo` / `hi` (see the module comment), with
    /// two temporaries: the window is loaded once into `t` (Zen 3 has two
    /// 256-bit load ports), and `ph` becomes `s` once its high half is
    /// added, which leaves registers for five column blocks or six fold
    /// vectors.  `k` is `K` in a register or in memory.
    fn product(&mut self, bc: &str, window: &str, lo: usize, hi: usize, t: &str, ph: &str, k: &str) {
        self.op(format!("vmovupd {t}, ymmword ptr {window}"));
        self.op(format!("vmovapd {ph}, ymm15"));
        self.op(format!("vfmadd231pd {ph}, {bc}, {t}"));
        self.op(format!("vpaddq ymm{hi}, ymm{hi}, {ph}"));
        self.op(format!("vsubpd {ph}, {ph}, {k}"));
        self.op(format!("vfmsub231pd {ph}, {bc}, {t}"));
        self.op(format!("vpaddq ymm{lo}, ymm{lo}, {ph}"));
    }
}

/// Bias that makes an accumulator of `n` collected bit patterns `bits`
/// end at the plain sum.
fn bias(n: usize, bits: u64) -> u64 {
    0u64.wrapping_sub((n as u64).wrapping_mul(bits))
}

/// The window of row `i` for column block `b` of the square of `l` digits,
/// as a memory operand, or `None` when every lane is zero.  Row `i` (quad
/// `q = i / 4`) sees digit `j` with weight 0 below quad `q`, 1 inside it
/// (both orders of a pair are formed, and the diagonal once) and 2 above:
/// the products of `fold::square_columns`, so the columns agree bit for bit.
fn square_window(l: usize, b: usize, i: usize) -> Option<String> {
    let s = 4 * b as isize - i as isize;
    let q = (i / 4) as isize;
    if s + 3 < 4 * q || s >= l as isize {
        return None;
    }
    Some(if s >= 4 * q + 4 {
        if s % 4 == 0 {
            sc(DD + s as usize)
        } else {
            sc(DDW + 4 * s as usize)
        }
    } else {
        match (s - 4 * q + 4) as usize {
            4 => sc(XD + 4 * q as usize),
            o => sc(YQW + 32 * q as usize + 4 * o),
        }
    })
}

/// The square's windows (`DDW`, `YQW`) from the digits at `XD` and `DD`,
/// each built from two aligned vectors by two shuffles at most: for vectors
/// `A`, `B`, the window at offset 2 is `vperm2f128(A, B, 0x21)` (its two
/// middle lanes), at 1 `vpalignr` of that and `A`, at 3 of `B` and that.
fn square_windows(a: &mut Asm, l: usize) {
    let nr = l.div_ceil(4);
    a.op("vxorpd ymm13, ymm13, ymm13");
    let shifts = |a: &mut Asm, lo: &str, hi: &str, at: &dyn Fn(usize) -> usize| {
        a.op(format!("vperm2f128 ymm2, {lo}, {hi}, 0x21"));
        a.op(format!("vpalignr ymm3, ymm2, {lo}, 8"));
        a.op(format!("vpalignr ymm4, {hi}, ymm2, 8"));
        a.op(format!("vmovapd ymmword ptr {}, ymm3", sc(at(1))));
        a.op(format!("vmovapd ymmword ptr {}, ymm2", sc(at(2))));
        a.op(format!("vmovapd ymmword ptr {}, ymm4", sc(at(3))));
    };
    for u in 0..nr {
        a.op(format!("vmovapd ymm0, ymmword ptr {}", sc(DD + 4 * u)));
        a.op(format!("vmovapd ymm1, ymmword ptr {}", sc(DD + 4 * u + 4)));
        a.op(format!("vmovapd ymm5, ymmword ptr {}", sc(XD + 4 * u)));
        shifts(a, "ymm0", "ymm1", &|t| DDW + 4 * (4 * u + t));
        shifts(a, "ymm13", "ymm5", &|t| YQW + 32 * u + 4 * t);
        shifts(a, "ymm5", "ymm1", &|t| YQW + 32 * u + 4 * (4 + t));
    }
}

/// The window of row `i` for column block `b` of a product of `l` digits.
fn product_window(l: usize, b: usize, i: usize) -> Option<String> {
    let s = 4 * b as isize - i as isize;
    if s + 3 < 0 || s >= l as isize {
        return None;
    }
    Some(sc((YB as isize + 4 + s) as usize))
}

/// Columns of the square (`window = square_window`) or product, stored at
/// `COLS` as exact integers: blocks in groups of `SQ_GROUP`, each group
/// broadcasting every row it needs once.
fn columns(a: &mut Asm, l: usize, window: &dyn Fn(usize, usize, usize) -> Option<String>, square: bool) {
    let nb = (2 * l).div_ceil(4);
    if square {
        square_windows(a, l);
    }
    a.op(format!("vmovapd ymm14, ymmword ptr {}", sc(C104_52)));
    a.op("vpxor ymm10, ymm10, ymm10");
    for g0 in (0..nb).step_by(SQ_GROUP) {
        let blocks: Vec<usize> = (g0..nb.min(g0 + SQ_GROUP)).collect();
        for &b in &blocks {
            let n = (0..l).filter(|&i| window(l, b, i).is_some()).count();
            let (lo, hi) = (2 * (b - g0), 2 * (b - g0) + 1);
            a.splat(lo, bias(n, BITS_TWO52));
            a.splat(hi, bias(n, BITS_TWO104));
        }
        for i in 0..l {
            let row: Vec<(usize, String)> =
                blocks.iter().filter_map(|&b| window(l, b, i).map(|w| (b, w))).collect();
            if row.is_empty() {
                continue;
            }
            a.op(format!("vbroadcastsd ymm13, qword ptr {}", sc(XD + i)));
            for (b, w) in row {
                let (lo, hi) = (2 * (b - g0), 2 * (b - g0) + 1);
                a.product("ymm13", &w, lo, hi, "ymm11", "ymm12", "ymm14");
            }
        }
        // Column c = low halves of c + 4 * high halves of c - 1.
        for &b in &blocks {
            let (lo, hi) = (2 * (b - g0), 2 * (b - g0) + 1);
            a.op(format!("vpermq ymm{hi}, ymm{hi}, 0x93"));
            a.op(format!("vpblendd ymm11, ymm{hi}, ymm10, 0x03"));
            a.op(format!("vmovdqa ymm10, ymm{hi}"));
            a.op("vpsllq ymm11, ymm11, 2");
            a.op(format!("vpaddq ymm{lo}, ymm{lo}, ymm11"));
            a.op(format!("vmovdqa ymmword ptr {}, ymm{lo}", sc(COLS + 4 * b)));
        }
    }
}

/// Steps 2-4 of the fold (`fold::FoldPlan::fold_columns`) on the columns at
/// `COLS`: the next digits at `X`, and for the next squaring as doubles at
/// `XD` and doubled at `DD`.
fn fold(a: &mut Asm, l: usize) {
    let k = l - 1;
    let h = k + 2;
    let (nr, nt) = (l.div_ceil(4), k.div_ceil(4));
    // Row digits d_r = (C_(K+r) mod 2^50) + (C_(K+r-1) >> 50), r >= 1; as
    // 2^52 + d_r doubles (d_r < 2^51).
    a.op(format!("mov r8, {:#x}", (1u64 << 50) - 1));
    a.op(format!("mov r9, {BITS_TWO52:#x}"));
    a.op("xor ecx, ecx");
    for r in 0..h {
        a.op(format!("mov rax, qword ptr {}", sc(COLS + k + r)));
        a.op("mov rdx, rax");
        a.op("shr rdx, 50");
        a.op("and rax, r8");
        a.op("add rax, rcx");
        a.op("or rax, r9");
        a.op(format!("mov qword ptr {}, rax", sc(DR + r)));
        a.op("mov rcx, rdx");
    }
    a.op("xor eax, eax");
    a.op(format!("mov qword ptr {}, rax", sc(LAST_HI)));
    a.op(format!("mov qword ptr {}, rax", sc(LAST_CARRY)));
    let groups = nr.div_ceil(FOLD_GROUP);
    let size = nr.div_ceil(groups);
    for u0 in (0..nr).step_by(size) {
        let us: Vec<usize> = (u0..nr.min(u0 + size)).collect();
        let live: Vec<usize> = us.iter().copied().filter(|&u| u < nt).collect();
        for &u in &us {
            let (lo, hi) = (2 * (u - u0), 2 * (u - u0) + 1);
            if u < nt {
                a.splat(lo, bias(h, BITS_TWO52));
                a.splat(hi, bias(h, BITS_TWO104));
            } else {
                a.op(format!("vpxor ymm{lo}, ymm{lo}, ymm{lo}"));
                a.op(format!("vpxor ymm{hi}, ymm{hi}, ymm{hi}"));
            }
        }
        if !live.is_empty() {
            a.op(format!("lea rsi, {}", sc(DR)));
            a.op(format!("lea rdi, [r11 + {}]", 32 * u0));
            a.op(format!("mov ecx, {h}"));
            a.op("2:");
            a.op("vbroadcastsd ymm12, qword ptr [rsi]");
            a.op(format!("vsubpd ymm12, ymm12, ymmword ptr {}", sc(TWO52)));
            let kmem = format!("ymmword ptr {}", sc(C104_52));
            for &u in &live {
                let (lo, hi) = (2 * (u - u0), 2 * (u - u0) + 1);
                let w = format!("[rdi + {}]", 32 * (u - u0));
                a.product("ymm12", &w, lo, hi, "ymm13", "ymm14", &kmem);
            }
            a.op("add rsi, 8");
            a.op(format!("add rdi, {}", 32 * nt));
            a.op("dec ecx");
            a.op("jnz 2b");
        }
        for &u in &us {
            let (lo, hi) = (2 * (u - u0), 2 * (u - u0) + 1);
            // R = low halves + 4 * high halves one lane up + low columns.
            a.op(format!("vpermq ymm{hi}, ymm{hi}, 0x93"));
            a.op(format!("vpbroadcastq ymm13, qword ptr {}", sc(LAST_HI)));
            a.op(format!("vpblendd ymm13, ymm{hi}, ymm13, 0x03"));
            a.op(format!("vmovq qword ptr {}, xmm{hi}", sc(LAST_HI)));
            a.op("vpsllq ymm13, ymm13, 2");
            a.op(format!("vpaddq ymm{lo}, ymm{lo}, ymm13"));
            if 4 * u + 4 <= k {
                a.op(format!("vpaddq ymm{lo}, ymm{lo}, ymmword ptr {}", sc(COLS + 4 * u)));
            } else if 4 * u < k {
                let lanes = k - 4 * u;
                a.op("vpxor ymm13, ymm13, ymm13");
                a.op(format!(
                    "vpblendd ymm13, ymm13, ymmword ptr {}, {:#x}",
                    sc(COLS + 4 * u),
                    (1u32 << (2 * lanes)) - 1
                ));
                a.op(format!("vpaddq ymm{lo}, ymm{lo}, ymm13"));
            }
            // x = (R mod 2^50) + (R one lane down >> 50).
            a.op(format!("vpsrlq ymm13, ymm{lo}, 50"));
            a.op(format!("vpand ymm{lo}, ymm{lo}, ymmword ptr {}", sc(MASK50)));
            a.op("vpermq ymm13, ymm13, 0x93");
            a.op(format!("vpbroadcastq ymm14, qword ptr {}", sc(LAST_CARRY)));
            a.op("vpblendd ymm14, ymm13, ymm14, 0x03");
            a.op(format!("vmovq qword ptr {}, xmm13", sc(LAST_CARRY)));
            a.op(format!("vpaddq ymm{lo}, ymm{lo}, ymm14"));
            a.op(format!("vmovdqa ymmword ptr {}, ymm{lo}", sc(X + 4 * u)));
            // As doubles: the bits of 2^52 + x, minus 2^52 (x < 2^51).
            a.op(format!("vpaddq ymm13, ymm{lo}, ymmword ptr {}", sc(TWO52)));
            a.op(format!("vsubpd ymm13, ymm13, ymmword ptr {}", sc(TWO52)));
            a.op(format!("vmovapd ymmword ptr {}, ymm13", sc(XD + 4 * u)));
            a.op("vaddpd ymm14, ymm13, ymm13");
            a.op(format!("vmovapd ymmword ptr {}, ymm14", sc(DD + 4 * u)));
        }
    }
}

/// Sets the rounding mode toward zero, saving the caller's MXCSR.
fn round_toward_zero(a: &mut Asm) {
    a.op(format!("vstmxcsr dword ptr {}", sc(MXCSR_SAVED)));
    a.op(format!("mov eax, dword ptr {}", sc(MXCSR_SAVED)));
    a.op("or eax, 0x6000");
    a.op(format!("mov dword ptr {}, eax", sc(MXCSR_KERNEL)));
    a.op(format!("vldmxcsr dword ptr {}", sc(MXCSR_KERNEL)));
    a.op(format!("vmovapd ymm15, ymmword ptr {}", sc(C104)));
}

/// Restores the caller's MXCSR (rounding mode and flags).
fn restore_rounding(a: &mut Asm) {
    a.op(format!("vldmxcsr dword ptr {}", sc(MXCSR_SAVED)));
    a.op("vzeroupper");
}

fn kernel_fn(doc: &str, signature: &str, a: &Asm, operands: &str) -> String {
    let mut s = String::new();
    writeln!(s, "{doc}\n#[target_feature(enable = \"avx2,fma\")]\nunsafe fn {signature} {{\n    asm!(").unwrap();
    for line in &a.lines {
        writeln!(s, "        \"{line}\",").unwrap();
    }
    write!(s, "        {operands}\n        ").unwrap();
    for r in ["rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9"] {
        write!(s, "out(\"{r}\") _, ").unwrap();
    }
    for y in 0..16 {
        write!(s, "out(\"ymm{y}\") _, ").unwrap();
    }
    writeln!(s, "\n        options(nostack),\n    );\n}}").unwrap();
    s
}

fn sqr_n(l: usize) -> String {
    let mut a = Asm { lines: Vec::new() };
    round_toward_zero(&mut a);
    a.op("3:");
    columns(&mut a, l, &square_window, true);
    fold(&mut a, l);
    a.op("dec r12");
    a.op("jnz 3b");
    restore_rounding(&mut a);
    kernel_fn(
        &format!("/// `count` (>= 1) squarings of the {l}-digit value at `X`; see `build_fma.rs`."),
        &format!("fma_sqr_n_{l}(scratch: *mut u64, table: *const u64, count: u64)"),
        &a,
        "in(\"r10\") scratch, in(\"r11\") table, inout(\"r12\") count => _,",
    )
}

fn mul(l: usize) -> String {
    let mut a = Asm { lines: Vec::new() };
    round_toward_zero(&mut a);
    columns(&mut a, l, &product_window, false);
    fold(&mut a, l);
    restore_rounding(&mut a);
    kernel_fn(
        &format!("/// The product of the {l}-digit values at `XD` and `YB`, to `X`; see `build_fma.rs`."),
        &format!("fma_mul_{l}(scratch: *mut u64, table: *const u64)"),
        &a,
        "in(\"r10\") scratch, in(\"r11\") table,",
    )
}

/// The generated file: every kernel and the two lookups by digit count.
pub fn generate() -> String {
    let mut s = String::new();
    writeln!(s, "// Generated by native/crates/modforge-ring/build/build_fma.rs; do not edit.").unwrap();
    for l in MIN_L..=MAX_L {
        s.push_str(&sqr_n(l));
        s.push_str(&mul(l));
    }
    writeln!(s, "/// The generated squaring loop for `l` digits.").unwrap();
    writeln!(s, "fn fma_sqr_n_generated(l: usize) -> Option<unsafe fn(*mut u64, *const u64, u64)> {{\n    Some(match l {{").unwrap();
    for l in MIN_L..=MAX_L {
        writeln!(s, "        {l} => fma_sqr_n_{l},").unwrap();
    }
    writeln!(s, "        _ => return None,\n    }})\n}}").unwrap();
    writeln!(s, "/// The generated product for `l` digits.").unwrap();
    writeln!(s, "fn fma_mul_generated(l: usize) -> Option<unsafe fn(*mut u64, *const u64)> {{\n    Some(match l {{").unwrap();
    for l in MIN_L..=MAX_L {
        writeln!(s, "        {l} => fma_mul_{l},").unwrap();
    }
    writeln!(s, "        _ => return None,\n    }})\n}}").unwrap();
    s
}
