//! Part of the build script (`build/build_ifma.rs` declares it): generates the
//! MULX/ADX row code of `src/adx.rs`, every offset a constant, so that no
//! inner loop control or leftover-limb handling is left.  Output:
//! `$OUT_DIR/adx_gen.rs`, included by `src/adx.rs`.
//!
//! Three shapes, each the same arithmetic as the loop it replaces there (so
//! the `2n` limbs of the result come out identical, which `adx.rs`'s tests
//! check; the scratch's spare top limb is left as it was, not zeroed):
//!
//! * `sqr_rows_N` (`N` up to [`MAX_SQR_LIMBS`]): the square's cross rows,
//!   each row written out at its own length, then the doubling and the
//!   diagonal.  Straight-line: measured on AMD Zen 4 against the loops,
//!   1024 bits 101 -> 76 ns, 1536 bits 193 -> 136, 2048 bits 304 -> 229;
//!   at 3072 and 4096 bits the code (20 and 36 KB) no longer fits the
//!   caches and was 9-12 % slower, so `adx.rs` squares those by halves
//!   with the code of half the limbs.
//! * `redc_N` and `mul_rows_N` (`N` up to [`MAX_LIMBS`]): every row has
//!   `N` limbs, so one row is written out and the rows loop.  REDC rows on
//!   Zen 4: 1024 bits 142 -> 109 ns, 2048 bits 503 -> 399, 4096 bits
//!   1982 -> 1589 (all rows written out was 103 ns at 1024 bits but
//!   slower than the loop at 2048).  The REDC keeps the limb that the next
//!   row's `q` is made from in a register instead of reading it back from
//!   the store just made.

use std::fmt::Write as _;

/// Largest limb count with a generated square (2048 bits).
pub const MAX_SQR_LIMBS: usize = 32;
/// Largest limb count with generated REDC and product rows (4096 bits).
pub const MAX_LIMBS: usize = 64;

/// The lines of one row, `t[t_off + j] (+)= rdx * src[src_off + j]` for `j`
/// in `0..len`, with `mulx` for the products, `adcx` (CF) adding the previous
/// high half and, when `accumulate`, `adox` (OF) adding the limb of `t`.
/// Starts by clearing both flags; returns the register that holds the limb
/// for `t[t_off + len]` (the last high half plus both pending carries).
/// With `save_second`, the new `t[t_off + 1]` is also copied to `r11`.
fn row(out: &mut Vec<String>, src: &str, src_off: usize, t: &str, t_off: usize, len: usize, accumulate: bool,
       save_second: bool) -> &'static str {
    // xor clears CF and OF; r10 = 0 is the "previous high half" of limb 0.
    out.push("xor r10d, r10d".into());
    let highs = ["r9", "r10"];
    let mut prev = "r10";
    for j in 0..len {
        let h = highs[j % 2];
        out.push(format!("mulx {h}, r8, qword ptr [{{{src}}} + {}]", 8 * (src_off + j)));
        out.push(format!("adcx r8, {prev}"));
        if accumulate {
            out.push(format!("adox r8, qword ptr [{{{t}}} + {}]", 8 * (t_off + j)));
        }
        out.push(format!("mov qword ptr [{{{t}}} + {}], r8", 8 * (t_off + j)));
        if save_second && j == 1 {
            out.push("mov r11, r8".into());
        }
        prev = h;
    }
    // mov keeps the flags.
    out.push("mov r8d, 0".into());
    out.push(format!("adcx {prev}, r8"));
    if accumulate {
        out.push(format!("adox {prev}, r8"));
    }
    prev
}

fn asm_fn(s: &mut String, doc: &str, signature: &str, lines: &[String], operands: &str, ret: Option<&str>) {
    writeln!(s, "{doc}\n#[inline]\n#[target_feature(enable = \"bmi2,adx\")]\nunsafe fn {signature} {{").unwrap();
    if let Some(r) = ret {
        writeln!(s, "    let {r}: u64;").unwrap();
    }
    writeln!(s, "    core::arch::asm!(").unwrap();
    for l in lines {
        writeln!(s, "        \"{l}\",").unwrap();
    }
    writeln!(s, "        {operands}\n        options(nostack),\n    );").unwrap();
    if let Some(r) = ret {
        writeln!(s, "    {r}").unwrap();
    }
    writeln!(s, "}}").unwrap();
}

/// `t[0..2n] = a^2`: cross rows (row 0 stores, the others add), then each
/// pair of limbs doubled with the square of `a[i]` added, as
/// `cross_rows` + `double_add_diagonal`.
fn sqr_rows(s: &mut String, n: usize) {
    let mut l = Vec::new();
    // The limbs no cross row writes, read by the doubling pass.
    l.push("mov qword ptr [{t}], 0".to_string());
    l.push(format!("mov qword ptr [{{t}} + {}], 0", 8 * (2 * n - 1)));
    for i in 0..n - 1 {
        l.push(format!("mov rdx, qword ptr [{{a}} + {}]", 8 * i));
        let top = row(&mut l, "a", i + 1, "t", 2 * i + 1, n - 1 - i, i > 0, false);
        l.push(format!("mov qword ptr [{{t}} + {}], {top}", 8 * (i + n)));
    }
    // Doubling (adcx, the shifted-out bit riding in CF) and the diagonal (adox).
    l.push("xor r8d, r8d".into());
    for i in 0..n {
        l.push(format!("mov rdx, qword ptr [{{a}} + {}]", 8 * i));
        l.push("mulx r9, r8, rdx".into());
        l.push(format!("mov r10, qword ptr [{{t}} + {}]", 16 * i));
        l.push(format!("mov r11, qword ptr [{{t}} + {}]", 16 * i + 8));
        l.push("adcx r10, r10".into());
        l.push("adcx r11, r11".into());
        l.push("adox r10, r8".into());
        l.push("adox r11, r9".into());
        l.push(format!("mov qword ptr [{{t}} + {}], r10", 16 * i));
        l.push(format!("mov qword ptr [{{t}} + {}], r11", 16 * i + 8));
    }
    asm_fn(
        s,
        &format!("/// `t[0..{}] = a^2` for {n} limbs (generated).", 2 * n),
        &format!("sqr_rows_{n}(t: *mut u64, a: *const u64)"),
        &l,
        "t = in(reg) t, a = in(reg) a,\n        out(\"rdx\") _, out(\"r8\") _, out(\"r9\") _, out(\"r10\") _, out(\"r11\") _,",
        None,
    );
}

/// The `n` REDC rows of `redc_rows`, one row written out, the rows looped.
fn redc(s: &mut String, n: usize) {
    let mut l = vec![
        "xor r13d, r13d".to_string(),
        "mov r11, qword ptr [{t}]".to_string(),
        format!("mov r14d, {n}"),
        "2:".to_string(),
        // q = t[i] * m0inv, t[i] kept in r11 by the row before.
        "mov rdx, r11".to_string(),
        "imul rdx, {minv}".to_string(),
    ];
    let top = row(&mut l, "m", 0, "t", 0, n, true, true);
    // t[i+n] += the row's top limb + the carry of the row before.
    let acc = if top == "r9" { "r12" } else { "r9" };
    l.push(format!("mov {acc}, qword ptr [{{t}} + {}]", 8 * n));
    l.push(format!("add {acc}, {top}"));
    l.push("adc r8, 0".into());
    l.push(format!("add {acc}, r13"));
    l.push("adc r8, 0".into());
    l.push(format!("mov qword ptr [{{t}} + {}], {acc}", 8 * n));
    l.push("mov r13, r8".into());
    l.push("lea {t}, [{t} + 8]".into());
    l.push("dec r14".into());
    l.push("jnz 2b".into());
    asm_fn(
        s,
        &format!("/// The REDC rows for {n} limbs (generated); returns the carry out of `t[{}]`.", 2 * n - 1),
        &format!("redc_{n}(t: *mut u64, m: *const u64, m0inv: u64) -> u64"),
        &l,
        "t = inout(reg) t => _, m = in(reg) m, minv = in(reg) m0inv,\n        out(\"rdx\") _, out(\"r8\") _, out(\"r9\") _, out(\"r10\") _, out(\"r11\") _, out(\"r12\") _,\n        out(\"r13\") carry, out(\"r14\") _,",
        Some("carry"),
    );
}

/// `t[0..2n] = a * b` as `product_rows` on a zeroed `t`: row 0 stores, the
/// other rows add and loop.
fn mul_rows(s: &mut String, n: usize) {
    let mut l = vec!["mov rdx, qword ptr [{b}]".to_string()];
    let top = row(&mut l, "a", 0, "t", 0, n, false, false);
    l.push(format!("mov qword ptr [{{t}} + {}], {top}", 8 * n));
    l.push(format!("mov r14d, {}", n - 1));
    l.push("2:".into());
    l.push("lea {t}, [{t} + 8]".into());
    l.push("lea {b}, [{b} + 8]".into());
    l.push("mov rdx, qword ptr [{b}]".into());
    let top = row(&mut l, "a", 0, "t", 0, n, true, false);
    l.push(format!("mov qword ptr [{{t}} + {}], {top}", 8 * n));
    l.push("dec r14".into());
    l.push("jnz 2b".into());
    asm_fn(
        s,
        &format!("/// `t[0..{}] = a * b` for {n} limbs (generated).", 2 * n),
        &format!("mul_rows_{n}(t: *mut u64, a: *const u64, b: *const u64)"),
        &l,
        "t = inout(reg) t => _, a = in(reg) a, b = inout(reg) b => _,\n        out(\"rdx\") _, out(\"r8\") _, out(\"r9\") _, out(\"r10\") _, out(\"r14\") _,",
        None,
    );
}

fn table(s: &mut String, name: &str, ty: &str, prefix: &str, limbs: std::ops::RangeInclusive<usize>) {
    writeln!(s, "/// The generated `{prefix}N` for `n` limbs, if there is one.").unwrap();
    writeln!(s, "fn {name}(n: usize) -> Option<{ty}> {{\n    Some(match n {{").unwrap();
    for n in limbs {
        writeln!(s, "        {n} => {prefix}{n},").unwrap();
    }
    writeln!(s, "        _ => return None,\n    }})\n}}").unwrap();
}

/// The whole of `adx_gen.rs`.
pub fn generate() -> String {
    let mut s = String::from("// Generated by native/crates/modforge-ring/build/build_adx.rs; do not edit.\n");
    writeln!(s, "/// The largest limb count with a `sqr_rows_N`.\nconst MAX_SQR_LIMBS: usize = {MAX_SQR_LIMBS};").unwrap();
    writeln!(s, "/// The largest limb count with a `redc_N` and a `mul_rows_N` (for the tests).\n#[cfg(test)]\nconst MAX_ROW_LIMBS: usize = {MAX_LIMBS};").unwrap();
    for n in 2..=MAX_SQR_LIMBS {
        sqr_rows(&mut s, n);
    }
    for n in 2..=MAX_LIMBS {
        redc(&mut s, n);
        mul_rows(&mut s, n);
    }
    table(&mut s, "sqr_rows_generated", "unsafe fn(*mut u64, *const u64)", "sqr_rows_", 2..=MAX_SQR_LIMBS);
    table(&mut s, "redc_generated", "unsafe fn(*mut u64, *const u64, u64) -> u64", "redc_", 2..=MAX_LIMBS);
    table(&mut s, "mul_rows_generated", "unsafe fn(*mut u64, *const u64, *const u64)", "mul_rows_", 2..=MAX_LIMBS);
    s
}
