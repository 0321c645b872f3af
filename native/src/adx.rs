//! x86-64 MULX/ADX backend: the Montgomery backend of [`crate::kernel`]
//! with its inner loop in assembly.
//!
//! Every row of the square and every REDC step is `t[0..n] += q * m[0..n]`
//! ([`addmul_1`]): `mulx` forms each product without touching the flags, and
//! two independent carry chains run side by side, `adcx` (CF) adding the
//! previous product's high half and `adox` (OF) adding the limb of `t`.  The
//! results are those of [`crate::portable::amm_sqr`] / [`crate::portable::amm_mul`]
//! bit for bit (the almost-Montgomery result `(T + QN)/R`, minus N when it
//! reaches R, is unique), which the tests check.  Reached only through
//! [`crate::dispatch`], which checks BMI2 and ADX first.

#![cfg(target_arch = "x86_64")]

use crate::kernel::{Kernel, MontCtx};
use crate::portable;

/// `t[0..n] += q * m[0..n]`; returns the limb that belongs at `t[n]` (the
/// sum fits `n + 1` limbs, so it cannot overflow).
///
/// # Safety
/// BMI2 and ADX; `t` and `m` valid for `n` limbs.
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn addmul_1(t: *mut u64, m: *const u64, n: usize, q: u64) -> u64 {
    let carry: u64;
    core::arch::asm!(
        // r10: high half of the previous product; xor clears CF and OF.
        "xor r10d, r10d",
        "jrcxz 3f",
        "2:",
        "mulx r9, r8, qword ptr [rsi]",
        "adcx r8, r10",
        "adox r8, qword ptr [rdi]",
        "mov qword ptr [rdi], r8",
        "mulx r10, r8, qword ptr [rsi + 8]",
        "adcx r8, r9",
        "adox r8, qword ptr [rdi + 8]",
        "mov qword ptr [rdi + 8], r8",
        "mulx r9, r8, qword ptr [rsi + 16]",
        "adcx r8, r10",
        "adox r8, qword ptr [rdi + 16]",
        "mov qword ptr [rdi + 16], r8",
        "mulx r10, r8, qword ptr [rsi + 24]",
        "adcx r8, r9",
        "adox r8, qword ptr [rdi + 24]",
        "mov qword ptr [rdi + 24], r8",
        "lea rsi, [rsi + 32]",
        "lea rdi, [rdi + 32]",
        "lea rcx, [rcx - 1]",
        "jrcxz 3f",
        "jmp 2b",
        "3:",
        "mov rcx, r11",
        "jrcxz 5f",
        "4:",
        "mulx r9, r8, qword ptr [rsi]",
        "adcx r8, r10",
        "adox r8, qword ptr [rdi]",
        "mov qword ptr [rdi], r8",
        "mov r10, r9",
        "lea rsi, [rsi + 8]",
        "lea rdi, [rdi + 8]",
        "lea rcx, [rcx - 1]",
        "jrcxz 5f",
        "jmp 4b",
        "5:",
        // The last high half plus both pending carries (mov keeps the flags).
        "mov r8d, 0",
        "adcx r10, r8",
        "adox r10, r8",
        in("rdx") q,
        inout("rsi") m => _,
        inout("rdi") t => _,
        inout("rcx") n / 4 => _,
        in("r11") n % 4,
        out("r8") _,
        out("r9") _,
        out("r10") carry,
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
    let mut carry = 0u64;
    for i in 0..n {
        let q = t[i].wrapping_mul(m0inv);
        let c = addmul_1(t.as_mut_ptr().add(i), m.as_ptr(), n, q);
        let (s1, o1) = t[i + n].overflowing_add(c);
        let (s2, o2) = s1.overflowing_add(carry);
        t[i + n] = s2;
        carry = (o1 | o2) as u64;
    }
    let mask = carry.wrapping_neg();
    let mut borrow = 0u64;
    for j in 0..n {
        let (d1, b1) = t[n + j].overflowing_sub(m[j] & mask);
        let (d2, b2) = d1.overflowing_sub(borrow);
        out[j] = d2;
        borrow = (b1 | b2) as u64;
    }
}

/// Almost-Montgomery square, as [`crate::portable::amm_sqr`].
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn amm_sqr(out: &mut [u64], a: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    let n = m.len();
    t.fill(0);
    // Cross products a[i]*a[j], i < j: row i adds a[i]*a[i+1..n] at limb 2i+1.
    for i in 0..n - 1 {
        let c = addmul_1(
            t.as_mut_ptr().add(2 * i + 1),
            a.as_ptr().add(i + 1),
            n - 1 - i,
            a[i],
        );
        t[i + n] = c;
    }
    // Double, then add the diagonal squares.
    let mut top = 0u64;
    for w in t[..2 * n].iter_mut() {
        let v = *w;
        *w = (v << 1) | top;
        top = v >> 63;
    }
    let mut c = 0u64;
    for i in 0..n {
        let sq = (a[i] as u128) * (a[i] as u128);
        let lo = t[2 * i] as u128 + (sq as u64) as u128 + c as u128;
        let hi = t[2 * i + 1] as u128 + (sq >> 64) + (lo >> 64);
        t[2 * i] = lo as u64;
        t[2 * i + 1] = hi as u64;
        c = (hi >> 64) as u64;
    }
    redc_amm(out, t, m, m0inv);
}

/// Almost-Montgomery product (operand scanning, then REDC): the same value
/// as [`crate::portable::amm_mul`].
#[inline]
#[target_feature(enable = "bmi2,adx")]
unsafe fn amm_mul(out: &mut [u64], a: &[u64], b: &[u64], m: &[u64], m0inv: u64, t: &mut [u64]) {
    let n = m.len();
    t.fill(0);
    for i in 0..n {
        let c = addmul_1(t.as_mut_ptr().add(i), a.as_ptr(), n, b[i]);
        t[i + n] = c;
    }
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

    /// Bit-for-bit agreement with the portable loops, including values >= N.
    #[test]
    fn same_results_as_portable() {
        if !(is_x86_feature_detected!("bmi2") && is_x86_feature_detected!("adx")) {
            return;
        }
        let mut x = 0x1234_5678_9ABC_DEF1u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
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
