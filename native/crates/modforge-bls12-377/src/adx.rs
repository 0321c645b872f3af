//! The 6-word Montgomery product with MULX, ADCX and ADOX (x86-64 with BMI2 and ADX).
//!
//! Same CIOS schedule as `arith::mont_mul_portable`, but every row runs two independent carry
//! chains: ADOX adds the low halves of the products, ADCX the high halves, so the row's six
//! multiplications issue back to back.  t lives in r8..r14 (seven words: one row's overflow),
//! the multiplier in rdx, the low and high halves in rax and r15; the modulus and -m^-1 are read
//! from one array [m0..m5, inv] behind rcx.

#[cfg(target_arch = "x86_64")]
macro_rules! row {
    // t += rdx * w[0..6] (w behind `$base`), two chains, t6 (r14) collecting both carries
    ($base:literal) => {
        concat!(
            "mulx r15, rax, [", $base, "]\n",
            "adox r8, rax\n",
            "adcx r9, r15\n",
            "mulx r15, rax, [", $base, " + 8]\n",
            "adox r9, rax\n",
            "adcx r10, r15\n",
            "mulx r15, rax, [", $base, " + 16]\n",
            "adox r10, rax\n",
            "adcx r11, r15\n",
            "mulx r15, rax, [", $base, " + 24]\n",
            "adox r11, rax\n",
            "adcx r12, r15\n",
            "mulx r15, rax, [", $base, " + 32]\n",
            "adox r12, rax\n",
            "adcx r13, r15\n",
            "mulx r15, rax, [", $base, " + 40]\n",
            "adox r13, rax\n",
            "adcx r14, r15\n",
            "mov eax, 0\n",
            "adox r14, rax\n",
        )
    };
}

#[cfg(target_arch = "x86_64")]
macro_rules! step {
    // one CIOS iteration for multiplier word b[$off / 8]
    ($off:literal) => {
        concat!(
            "mov rdx, [rdi + ", $off, "]\n",
            "xor r14d, r14d\n", // t6 = 0, CF = OF = 0
            row!("rsi"),
            "mov rdx, r8\n",
            "imul rdx, [rcx + 48]\n", // k = t0 * (-m^-1) mod 2^64
            "xor eax, eax\n",
            row!("rcx"),
            // t0 is now zero: shift down one word
            "mov r8, r9\n",
            "mov r9, r10\n",
            "mov r10, r11\n",
            "mov r11, r12\n",
            "mov r12, r13\n",
            "mov r13, r14\n",
        )
    };
}

/// a b 2^-384 mod m for a, b < m < 2^383 (top bit of m clear), `inv` = -m^-1 mod 2^64.
///
/// # Safety
/// The CPU must support BMI2 (MULX) and ADX (ADCX, ADOX).
#[cfg(target_arch = "x86_64")]
#[inline]
pub unsafe fn mont_mul6(a: &[u64; 6], b: &[u64; 6], m: &[u64; 6], inv: u64) -> [u64; 6] {
    let mi: [u64; 7] = [m[0], m[1], m[2], m[3], m[4], m[5], inv];
    let (t0, t1, t2, t3, t4, t5): (u64, u64, u64, u64, u64, u64);
    core::arch::asm!(
        "xor r8d, r8d",
        "xor r9d, r9d",
        "xor r10d, r10d",
        "xor r11d, r11d",
        "xor r12d, r12d",
        "xor r13d, r13d",
        step!("0"),
        step!("8"),
        step!("16"),
        step!("24"),
        step!("32"),
        step!("40"),
        // conditional final subtraction of m
        "mov rax, r8",
        "sub rax, [rcx]",
        "mov r15, r9",
        "sbb r15, [rcx + 8]",
        "mov rdx, r10",
        "sbb rdx, [rcx + 16]",
        "mov rsi, r11",
        "sbb rsi, [rcx + 24]",
        "mov rdi, r12",
        "sbb rdi, [rcx + 32]",
        "mov r14, r13",
        "sbb r14, [rcx + 40]",
        "cmovnc r8, rax",
        "cmovnc r9, r15",
        "cmovnc r10, rdx",
        "cmovnc r11, rsi",
        "cmovnc r12, rdi",
        "cmovnc r13, r14",
        inout("rsi") a.as_ptr() => _,
        inout("rdi") b.as_ptr() => _,
        in("rcx") mi.as_ptr(),
        out("r8") t0,
        out("r9") t1,
        out("r10") t2,
        out("r11") t3,
        out("r12") t4,
        out("r13") t5,
        out("r14") _,
        out("r15") _,
        out("rax") _,
        out("rdx") _,
        options(pure, readonly, nostack),
    );
    [t0, t1, t2, t3, t4, t5]
}
