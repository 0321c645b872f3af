//! x86-64 MULX/ADX backend: the Montgomery backend of [`crate::kernel`]
//! with its inner loop in assembly.
//!
//! Every row of the square and every REDC step is `t[0..n] += q * m[0..n]`
//! ([`addmul_asm`]): `mulx` forms each product without touching the flags, and
//! two independent carry chains run side by side, `adcx` (CF) adding the
//! previous product's high half and `adox` (OF) adding the limb of `t`.  The
//! square doubles its cross products and adds the diagonal in one more pass
//! of the same kind ([`double_add_diagonal`]).  The
//! results are those of [`crate::portable::amm_sqr`] / [`crate::portable::amm_mul`]
//! bit for bit (the almost-Montgomery result `(T + QN)/R`, minus N when it
//! reaches R, is unique), which the tests check.  Reached only through
//! [`crate::dispatch`], which checks BMI2 and ADX first.

#![cfg(target_arch = "x86_64")]

use crate::kernel::{Kernel, MontCtx};
use crate::portable;

/// The assembly of `t[0..n] += rdx * m[0..n]` with `m` at `rsi`, `t` at
/// `rdi`, `n / 4` in `rcx` and `n mod 4` in the low byte of `r11`: `mulx`
/// forms each product without touching the flags, and two carry chains run
/// side by side, `adcx` (CF) adding the previous product's high half (in
/// `r10`/`r9`) and `adox` (OF) adding the limb of `t`; four limbs per
/// iteration, then the leftover ones.  Leaves the limb that belongs at
/// `t[n]` in `r10` (the sum fits `n + 1` limbs), `r8` zero, and `rsi`,
/// `rdi` past the ends.  Numeric labels 2 to 5.
macro_rules! addmul_asm {
    () => {
        concat!(
            // xor clears CF and OF.
            "xor r10d, r10d\n",
            "jrcxz 3f\n",
            "2:\n",
            "mulx r9, r8, qword ptr [rsi]\n",
            "adcx r8, r10\n",
            "adox r8, qword ptr [rdi]\n",
            "mov qword ptr [rdi], r8\n",
            "mulx r10, r8, qword ptr [rsi + 8]\n",
            "adcx r8, r9\n",
            "adox r8, qword ptr [rdi + 8]\n",
            "mov qword ptr [rdi + 8], r8\n",
            "mulx r9, r8, qword ptr [rsi + 16]\n",
            "adcx r8, r10\n",
            "adox r8, qword ptr [rdi + 16]\n",
            "mov qword ptr [rdi + 16], r8\n",
            "mulx r10, r8, qword ptr [rsi + 24]\n",
            "adcx r8, r9\n",
            "adox r8, qword ptr [rdi + 24]\n",
            "mov qword ptr [rdi + 24], r8\n",
            "lea rsi, [rsi + 32]\n",
            "lea rdi, [rdi + 32]\n",
            "lea rcx, [rcx - 1]\n",
            "jrcxz 3f\n",
            "jmp 2b\n",
            "3:\n",
            // movzx keeps the flags.
            "movzx ecx, r11b\n",
            "jrcxz 5f\n",
            "4:\n",
            "mulx r9, r8, qword ptr [rsi]\n",
            "adcx r8, r10\n",
            "adox r8, qword ptr [rdi]\n",
            "mov qword ptr [rdi], r8\n",
            "mov r10, r9\n",
            "lea rsi, [rsi + 8]\n",
            "lea rdi, [rdi + 8]\n",
            "lea rcx, [rcx - 1]\n",
            "jrcxz 5f\n",
            "jmp 4b\n",
            "5:\n",
            // The last high half plus both pending carries (mov keeps the flags).
            "mov r8d, 0\n",
            "adcx r10, r8\n",
            "adox r10, r8\n",
        )
    };
}

/// The cross products `a[i] a[j]`, `i < j`, into the zeroed `t`: row `i`
/// adds `a[i] a[i+1..n]` at limb `2i+1` ([`addmul_asm`]) and sets `t[i+n]`
/// to its last limb; all `n - 1` rows in one `asm!` block (measured: 2-4.5%
/// faster than a loop of one-row calls, 1024 to 4096 bits).
///
/// # Safety
/// BMI2 and ADX; `t` valid for `2n` limbs and zero, `a` for `n`, `n >= 2`.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn cross_rows(t: *mut u64, a: *const u64, n: usize) {
    core::arch::asm!(
        "6:",
        "mov rdx, qword ptr [r15]",
        "lea rsi, [r15 + 8]",
        "mov rdi, r12",
        "mov rcx, r13",
        "shr rcx, 2",
        "mov r11, r13",
        "and r11, 3",
        addmul_asm!(),
        "mov qword ptr [rdi], r10",
        "lea r15, [r15 + 8]",
        "lea r12, [r12 + 16]",
        "dec r13",
        "jnz 6b",
        // Row i: multiplier a[i] at r15, output from t + 2i + 1 at r12, length
        // n - 1 - i in r13 (the loop ends after the row of length 1).
        inout("r15") a => _,
        inout("r12") t.add(1) => _,
        inout("r13") n - 1 => _,
        clobber_abi("C"),
        options(nostack),
    );
}

/// `t = a b` into the zeroed `t` (`2n` limbs), operand scanning: row `i`
/// adds `b[i] a[0..n]` at limb `i` ([`addmul_asm`]) and sets `t[i+n]` to its
/// last limb, all rows in one `asm!` block like [`cross_rows`].
///
/// # Safety
/// BMI2 and ADX; `t` valid for `2n` limbs and zero, `a` and `b` for `n`,
/// `n >= 1`.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn product_rows(t: *mut u64, a: *const u64, b: *const u64, n: usize) {
    core::arch::asm!(
        "6:",
        "mov rdx, qword ptr [r15]",
        "mov rsi, rax",
        "mov rdi, r12",
        "mov rcx, r11",
        "shr rcx, 8",
        addmul_asm!(),
        "mov qword ptr [rdi], r10",
        "lea r15, [r15 + 8]",
        "lea r12, [r12 + 8]",
        "dec r14",
        "jnz 6b",
        // Row i: multiplier b[i] at r15, output from t + i at r12.
        inout("r15") b => _,
        inout("r12") t => _,
        in("rax") a,
        // n / 4 for the loop of four (shifted out), n mod 4 in the low byte.
        in("r11") ((n / 4) << 8) | (n % 4),
        inout("r14") n => _,
        clobber_abi("C"),
        options(nostack),
    );
}

/// `t[0..2n] = 2 t[0..2n] + sum a[i]^2 2^(128 i)`: the cross products
/// doubled and the diagonal added in one pass, two carry chains side by side
/// (`adcx` doubles limb pairs, the shifted-out bit riding in CF; `adox` adds
/// the square).  The result fits `2n` limbs (it is `a^2`), so both chains end
/// at zero.
///
/// # Safety
/// BMI2 and ADX; `t` valid for `2n` limbs, `a` for `n`, `n >= 1`.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn double_add_diagonal(t: *mut u64, a: *const u64, n: usize) {
    core::arch::asm!(
        "xor r8d, r8d",
        "2:",
        "mov rdx, qword ptr [rsi]",
        "mulx r9, r8, rdx",
        "mov r10, qword ptr [rdi]",
        "mov r11, qword ptr [rdi + 8]",
        "adcx r10, r10",
        "adcx r11, r11",
        "adox r10, r8",
        "adox r11, r9",
        "mov qword ptr [rdi], r10",
        "mov qword ptr [rdi + 8], r11",
        "lea rsi, [rsi + 8]",
        "lea rdi, [rdi + 16]",
        "lea rcx, [rcx - 1]",
        "jrcxz 3f",
        "jmp 2b",
        "3:",
        inout("rsi") a => _,
        inout("rdi") t => _,
        inout("rcx") n => _,
        clobber_abi("C"),
        options(nostack),
    );
}

/// The `n` REDC rows over `t` (`2n` limbs): row `i` adds `q_i m` at limb `i`
/// (`q_i = t[i] m0inv mod 2^64`, which zeroes limb `i`) and its last limb
/// into `t[i+n]` with the carry left by row `i-1`.  Returns the carry out of
/// `t[2n-1]` (0 or 1).  One `asm!` block for all rows, so that nothing
/// between rows leaves the registers (measured: 1.5-2% faster at 1024 bits
/// than a loop of one-row calls, within 1% at 2048 and 4096); each
/// row is [`addmul_asm`].  (Rows fully unrolled per limb count, generated,
/// were 5% faster at 2048 bits but 2-3% slower at 1024: not kept.)
///
/// # Safety
/// BMI2 and ADX; `t` valid for `2n` limbs, `m` for `n`, `n >= 1`.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn redc_rows(t: *mut u64, m: *const u64, n: usize, m0inv: u64) -> u64 {
    let carry: u64;
    core::arch::asm!(
        "xor r13d, r13d",
        "6:",
        "mov rdx, qword ptr [r15]",
        "imul rdx, r12",
        "mov rdi, r15",
        "mov rsi, rax",
        "mov rcx, r11",
        "shr rcx, 8",
        addmul_asm!(),
        // r10 goes into t[i+n] (now at rdi) with the carry of the row before.
        "mov r9, qword ptr [rdi]",
        "add r9, r10",
        "adc r8, 0",
        "add r9, r13",
        "adc r8, 0",
        "mov qword ptr [rdi], r9",
        "mov r13, r8",
        "lea r15, [r15 + 8]",
        "dec r14",
        "jnz 6b",
        inout("r15") t => _,
        in("rax") m,
        // n / 4 for the loop of four (shifted out), n mod 4 in the low byte.
        in("r11") ((n / 4) << 8) | (n % 4),
        in("r12") m0inv,
        inout("r14") n => _,
        out("r13") carry,
        clobber_abi("C"),
        options(nostack),
    );
    carry
}

/// REDC of the `2n`-limb `t` (scratch `2n + 1` limbs) into `out`, almost
/// Montgomery: `(T + QN)/R`, minus N (masked) when it reaches R.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn redc_amm(out: &mut [u64], t: &mut [u64], m: &[u64], m0inv: u64) {
    let n = m.len();
    debug_assert!(n >= 1 && t.len() > 2 * n);
    let carry = match redc_generated(n) {
        Some(rows) => rows(t.as_mut_ptr(), m.as_ptr(), m0inv),
        None => redc_rows(t.as_mut_ptr(), m.as_ptr(), n, m0inv),
    };
    let mask = carry.wrapping_neg();
    let mut borrow = 0u64;
    for j in 0..n {
        let (d1, b1) = t[n + j].overflowing_sub(m[j] & mask);
        let (d2, b2) = d1.overflowing_sub(borrow);
        out[j] = d2;
        borrow = (b1 | b2) as u64;
    }
}

// `sqr_rows_N`, `redc_N`, `mul_rows_N` and their lookups `sqr_rows_generated`,
// `redc_generated`, `mul_rows_generated` (see `build/build_adx.rs`).
include!(concat!(env!("OUT_DIR"), "/adx_gen.rs"));

/// `t[h..2n] += 2 p`, `p` of `2h` limbs, `n = 2h` (a square's middle
/// term): two carry chains side by side, `adcx` doubling `p` (the
/// shifted-out bit riding in CF) and `adox` adding `t`, then both carries
/// carried through `t[3h..2n]`.  The caller's sum fits `2n` limbs, so both
/// chains end at zero.  No branch depends on the data.
///
/// # Safety
/// BMI2 and ADX; `t` valid for `2n` limbs, `p` for `2h`, `h >= 1`.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn add_doubled_middle(t: *mut u64, p: *const u64, h: usize) {
    core::arch::asm!(
        // xor clears CF and OF.
        "xor r8d, r8d",
        "2:",
        "mov r10, qword ptr [rsi]",
        "adcx r10, r10",
        "adox r10, qword ptr [rdi]",
        "mov qword ptr [rdi], r10",
        "lea rsi, [rsi + 8]",
        "lea rdi, [rdi + 8]",
        "lea rcx, [rcx - 1]",
        "jrcxz 3f",
        "jmp 2b",
        "3:",
        "mov rcx, r9",
        "4:",
        "mov r10, qword ptr [rdi]",
        "adcx r10, r8",
        "adox r10, r8",
        "mov qword ptr [rdi], r10",
        "lea rdi, [rdi + 8]",
        "lea rcx, [rcx - 1]",
        "jrcxz 5f",
        "jmp 4b",
        "5:",
        inout("rdi") t.add(h) => _,
        inout("rsi") p => _,
        inout("rcx") 2 * h => _,
        in("r9") h,
        out("r8") _,
        out("r10") _,
        options(nostack),
    );
}

/// `t[0..2n] = a^2`: the generated rows where there are some, else the loops.
/// Above `MAX_SQR_LIMBS` limbs (2048 bits) the straight-line square no
/// longer fits the caches, so an even `n = 2h` up to twice that
/// takes its halves' squares and their product from the generated code:
/// `a^2 = lo^2 + hi^2 R^2 + 2 lo hi R` (`R = 2^(64h)`), the same
/// products in the same `2n` limbs (measured on Zen 4 against the loops:
/// 3072 bits 633 -> 548 ns, 4096 bits 1081 -> 1027 ns).
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn square_rows(t: &mut [u64], a: &[u64], n: usize) {
    if let Some(rows) = sqr_rows_generated(n) {
        rows(t.as_mut_ptr(), a.as_ptr());
        return;
    }
    if n % 2 == 0 {
        if let (Some(half_square), Some(half_product)) = (sqr_rows_generated(n / 2), mul_rows_generated(n / 2)) {
            let h = n / 2;
            let mut middle = [0u64; 2 * MAX_SQR_LIMBS];
            debug_assert!(h <= MAX_SQR_LIMBS && t.len() >= 2 * n);
            half_square(t.as_mut_ptr(), a.as_ptr());
            half_square(t.as_mut_ptr().add(2 * h), a.as_ptr().add(h));
            half_product(middle.as_mut_ptr(), a.as_ptr(), a.as_ptr().add(h));
            add_doubled_middle(t.as_mut_ptr(), middle.as_ptr(), h);
            // Secret-derived limbs of RSA operands must not stay on the stack.
            core::ptr::write_volatile(&mut middle, [0u64; 2 * MAX_SQR_LIMBS]);
            return;
        }
    }
    t.fill(0);
    if n > 1 {
        cross_rows(t.as_mut_ptr(), a.as_ptr(), n);
    }
    double_add_diagonal(t.as_mut_ptr(), a.as_ptr(), n);
}

/// `t[0..2n] = a b`: the generated rows where there are some, else the loop.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn multiply_rows(t: &mut [u64], a: &[u64], b: &[u64], n: usize) {
    if let Some(rows) = mul_rows_generated(n) {
        rows(t.as_mut_ptr(), a.as_ptr(), b.as_ptr());
        return;
    }
    t.fill(0);
    product_rows(t.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n);
}

/// Almost-Montgomery square, as [`crate::portable::amm_sqr`].
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn amm_sqr(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    square_rows(t, a, m.len());
    redc_amm(out, t, m, m0inv);
}

/// Almost-Montgomery product (operand scanning, then REDC): the same value
/// as [`crate::portable::amm_mul`].
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn amm_mul(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    multiply_rows(t, a, b, m.len());
    redc_amm(out, t, m, m0inv);
}

/// `k` almost-Montgomery squarings of `s` (values `< R` throughout).
#[target_feature(enable = "bmi2,adx")]
unsafe fn sqr_n_adx(ctx: &MontCtx, s: &mut [u64], k: u64) {
    let n = ctx.n();
    let mut t = vec![0u64; 2 * n + 1];
    let (mut a, mut b) = (s.to_vec(), vec![0u64; n]);
    for _ in 0..k {
        amm_sqr(&mut b, &a, &ctx.m, ctx.m0inv, &mut t);
        std::mem::swap(&mut a, &mut b);
    }
    s.copy_from_slice(&a);
}

#[target_feature(enable = "bmi2,adx")]
unsafe fn amm_mul_adx(ctx: &MontCtx, out: &mut [u64], a: &[u64], b: &[u64]) {
    let mut t = vec![0u64; 2 * ctx.n() + 1];
    amm_mul(out, a, b, &ctx.m, ctx.m0inv, &mut t);
}

/// [`amm_mul`] for [`crate::single::Mont`]: scratch `t` of `2n + 1` limbs.
///
/// # Safety
/// The CPU must support BMI2 and ADX; slices as for [`amm_mul`].
pub(crate) unsafe fn amm_mul_raw(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    amm_mul(out, a, b, m, m0inv, t)
}

/// [`amm_sqr`] for [`crate::single::Mont`].
///
/// # Safety
/// As [`amm_mul_raw`].
pub(crate) unsafe fn amm_sqr_raw(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    amm_sqr(out, a, m, m0inv, t)
}

/// [`redc_amm`] of the `2n` limbs in `t` (`2n + 1` limbs, clobbered).
///
/// # Safety
/// As [`amm_mul_raw`].
pub(crate) unsafe fn redc_amm_raw(out: &mut [u64], t: &mut [u64], m: &[u64], m0inv: u64) {
    redc_amm(out, t, m, m0inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded xorshift64 stream.
    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Bit-for-bit agreement with the portable loops, including values >= N.
    #[test]
    fn same_results_as_portable() {
        if !(is_x86_feature_detected!("bmi2") && is_x86_feature_detected!("adx")) {
            crate::tests::skipped("no BMI2/ADX");
            return;
        }
        let mut next = xorshift(0x1234_5678_9ABC_DEF1);
        for n in [1usize, 2, 3, 4, 5, 7, 8, 9, 16, 17, 32, 33, 64] {
            for _ in 0..20 {
                let mut m: Vec<u64> = (0..n).map(|_| next()).collect();
                m[0] |= 1;
                let inv = crate::portable::neg_inv_u64(m[0]);
                let a: Vec<u64> = (0..n).map(|_| next()).collect();
                let b: Vec<u64> = (0..n).map(|_| next()).collect();
                let (mut p1, mut p2) = (vec![0u64; n], vec![0u64; n]);
                let mut t1 = vec![0u64; 2 * n + 1];
                let mut t2 = vec![0u64; 2 * n + 1];
                portable::amm_sqr(&mut p1, &a, &m, inv, &mut t1);
                unsafe { amm_sqr(&mut p2, &a, &m, inv, &mut t2) };
                assert_eq!(p1, p2, "sqr n={n}");
                let mut t3 = vec![0u64; n + 2];
                portable::amm_mul(&mut p1, &a, &b, &m, inv, &mut t3);
                unsafe { amm_mul(&mut p2, &a, &b, &m, inv, &mut t2) };
                assert_eq!(p1, p2, "mul n={n}");
            }
        }
    }

    /// The generated rows against the loops they replace, limb for limb over
    /// the whole scratch (and the REDC's carry), at every limb count with
    /// and without generated code: the edge operands first (zero, one, all
    /// ones, the modulus minus one, only the top limb set), then seeded
    /// random ones.
    #[test]
    fn generated_rows_match_the_loops() {
        if !(is_x86_feature_detected!("bmi2") && is_x86_feature_detected!("adx")) {
            crate::tests::skipped("no BMI2/ADX");
            return;
        }
        let seed = 0x5EED_ADC5_u64;
        let mut next = xorshift(seed);
        for n in 1..=MAX_ROW_LIMBS + 2 {
            let mut m: Vec<u64> = (0..n).map(|_| next()).collect();
            m[0] |= 1;
            let inv = crate::portable::neg_inv_u64(m[0]);
            let mut operands: Vec<Vec<u64>> = vec![
                vec![0; n],
                std::iter::once(1).chain(std::iter::repeat(0)).take(n).collect(),
                vec![u64::MAX; n],
                std::iter::once(m[0] - 1).chain(m[1..].iter().copied()).collect(),
                (0..n).map(|i| if i + 1 == n { u64::MAX } else { 0 }).collect(),
            ];
            for _ in 0..6 {
                operands.push((0..n).map(|_| next()).collect());
            }
            for (k, a) in operands.iter().enumerate() {
                let b = &operands[(k + 3) % operands.len()];
                let ctx = format!("n={n} operand {k} (seed {seed:#x})");
                // Square rows.
                let mut want = vec![0u64; 2 * n + 1];
                let mut got = vec![0xA5A5_A5A5_A5A5_A5A5u64; 2 * n + 1];
                unsafe {
                    if n > 1 {
                        cross_rows(want.as_mut_ptr(), a.as_ptr(), n);
                    }
                    double_add_diagonal(want.as_mut_ptr(), a.as_ptr(), n);
                    square_rows(&mut got, a, n);
                }
                assert_eq!(want[..2 * n], got[..2 * n], "square rows, {ctx}");
                // Product rows.
                let mut want = vec![0u64; 2 * n + 1];
                let mut got = vec![0x5A5A_5A5A_5A5A_5A5Au64; 2 * n + 1];
                unsafe {
                    product_rows(want.as_mut_ptr(), a.as_ptr(), b.as_ptr(), n);
                    multiply_rows(&mut got, a, b, n);
                }
                assert_eq!(want[..2 * n], got[..2 * n], "product rows, {ctx}");
                // REDC rows, on any 2n limbs (all ones included: the longest carries).
                let t0: Vec<u64> = a.iter().chain(b.iter()).copied().chain(std::iter::once(0)).collect();
                let (mut want, mut got) = (t0.clone(), t0.clone());
                let c1 = unsafe { redc_rows(want.as_mut_ptr(), m.as_ptr(), n, inv) };
                let c2 = unsafe {
                    match redc_generated(n) {
                        Some(rows) => rows(got.as_mut_ptr(), m.as_ptr(), inv),
                        None => redc_rows(got.as_mut_ptr(), m.as_ptr(), n, inv),
                    }
                };
                assert_eq!((c1, &want[..2 * n]), (c2, &got[..2 * n]), "REDC rows, {ctx}");
                // And the whole operations against the portable loops.
                let (mut p1, mut p2) = (vec![0u64; n], vec![0u64; n]);
                let mut t1 = vec![0u64; 2 * n + 1];
                let mut t2 = vec![0u64; 2 * n + 1];
                portable::amm_sqr(&mut p1, a, &m, inv, &mut t1);
                unsafe { amm_sqr(&mut p2, a, &m, inv, &mut t2) };
                assert_eq!(p1, p2, "amm_sqr, {ctx}");
                let mut t3 = vec![0u64; n + 2];
                portable::amm_mul(&mut p1, a, b, &m, inv, &mut t3);
                unsafe { amm_mul(&mut p2, a, b, &m, inv, &mut t2) };
                assert_eq!(p1, p2, "amm_mul, {ctx}");
            }
        }
    }

    /// Which limb counts have generated code: exactly the ones the build
    /// script was asked for (a lookup that fell out would only be slower).
    #[test]
    fn generated_limb_counts() {
        for n in 0..=MAX_ROW_LIMBS + 2 {
            assert_eq!(sqr_rows_generated(n).is_some(), (2..=MAX_SQR_LIMBS).contains(&n), "n={n}");
            assert_eq!(redc_generated(n).is_some(), (2..=MAX_ROW_LIMBS).contains(&n), "n={n}");
            assert_eq!(mul_rows_generated(n).is_some(), (2..=MAX_ROW_LIMBS).contains(&n), "n={n}");
        }
    }
}

/// The MULX/ADX backend.
pub struct AdxKernel {
    ctx: MontCtx,
}

impl AdxKernel {
    /// # Safety
    /// The CPU must support BMI2 and ADX.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        AdxKernel {
            ctx: MontCtx::new(m),
        }
    }
}

impl Kernel for AdxKernel {
    fn name(&self) -> &'static str {
        "adx"
    }
    fn modulus(&self) -> &[u64] {
        &self.ctx.m
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.ctx.n()];
        // SAFETY: the kernel exists only if the CPU has the features.
        unsafe { amm_mul_adx(&self.ctx, &mut out, x, &self.ctx.r2) };
        out
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        let n = self.ctx.n();
        let mut out = vec![0u64; n];
        let mut t = vec![0u64; 2 * n + 1];
        portable::redc_canonical(&mut out, s, &self.ctx.m, self.ctx.m0inv, &mut t);
        out
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        // SAFETY: as above.
        unsafe { sqr_n_adx(&self.ctx, s, k) }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.ctx.n()];
        // SAFETY: as above.
        unsafe { amm_mul_adx(&self.ctx, &mut out, a, b) };
        out
    }
}

#[cfg(test)]
mod bench_parts {
    use super::*;

    /// `cargo test --release bench_adx_square -- --ignored --nocapture`: the
    /// square's rows as loops against `square_rows` (generated, or by
    /// halves), best of seven runs, ns.
    #[test]
    #[ignore]
    fn bench_adx_square() {
        for n in [16usize, 32, 48, 64] {
            let a: Vec<u64> = (0..n as u64).map(|i| 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(i + 1)).collect();
            let mut t = vec![0u64; 2 * n + 1];
            let reps = 2_000_000 / n;
            let time = |f: &mut dyn FnMut()| {
                let mut best = f64::MAX;
                for _ in 0..7 {
                    let s = std::time::Instant::now();
                    for _ in 0..reps { f(); }
                    best = best.min(s.elapsed().as_secs_f64() * 1e9 / reps as f64);
                }
                best
            };
            let lp = time(&mut || unsafe {
                t.fill(0);
                cross_rows(t.as_mut_ptr(), a.as_ptr(), n);
                double_add_diagonal(t.as_mut_ptr(), a.as_ptr(), n);
            });
            let g = time(&mut || unsafe { square_rows(&mut t, &a, n) });
            println!("n={n}: square loops {lp:.1} ns, square_rows {g:.1} ns");
        }
    }
}
