//! AVX-512 IFMA almost-Montgomery backend in radix 2^52 (x86-64 only), the
//! Montgomery side of the comparison with the table fold of [`crate::ifma`].
//!
//! Values are in Montgomery form `a*R mod N` with `R = 2^(52 n)`,
//! `n = ceil((bits + 2) / 52)` digits (so `4N <= R`), kept below `2N` and
//! normalised to digits `< 2^52` between products.  One product is
//! word-serial almost-Montgomery (AMM): for each digit `b_i`, the
//! accumulator gains `a*b_i`, then `q*N` with `q = A_0*m' mod 2^52` (so
//! digit 0 cancels), and moves down one lane; high halves are kept one
//! column up so that the move down lines them up.  With `a, b < 2N` the
//! result is `< (4N^2 + R N)/R <= 2N` (almost-Montgomery, no subtraction).
//!
//! Each of the `n` steps waits for the previous one (lane 0 -> scalar `q`
//! -> broadcast -> IFMA -> shift): a latency chain of about 15-20 cycles per
//! digit, which is why the fold, whose products are all independent, wins.

#![cfg(target_arch = "x86_64")]

use core::arch::x86_64::*;
// Test builds on CPUs without IFMA: the two IFMA instructions in software.
#[cfg(feature = "ifma-emulated")]
use crate::ifma_emulated::{_mm512_madd52hi_epu64, _mm512_madd52lo_epu64};

use crate::fold::{Lane8, LANES};
use crate::kernel::{Kernel, MontCtx};
use crate::portable;

const M52: u64 = (1 << 52) - 1;
/// Vectors for 4096-bit moduli: 79 digits.
const MAX_V: usize = 10;

/// The IFMA Montgomery backend.
pub struct MontIfmaKernel {
    ctx: MontCtx,
    /// Digits of the radix-2^52 representation.
    n52: usize,
    v: usize,
    /// N in `v` vectors of 52-bit digits.
    m: Vec<Lane8>,
    /// `-N^-1 mod 2^52`.
    m52inv: u64,
}

fn to_d52(x: &[u64], count: usize) -> Vec<u64> {
    (0..count)
        .map(|j| {
            let bit = 52 * j;
            let (w, b) = (bit / 64, bit % 64);
            let lo = x.get(w).copied().unwrap_or(0) >> b;
            let hi = if b > 12 {
                x.get(w + 1).copied().unwrap_or(0) << (64 - b)
            } else {
                0
            };
            (lo | hi) & M52
        })
        .collect()
}

fn from_d52(d: &[u64], limbs: usize) -> Vec<u64> {
    // Digits are normalised (< 2^52) here.
    let mut out = vec![0u64; limbs];
    for (j, &digit) in d.iter().enumerate() {
        let bit = 52 * j;
        let (w, b) = (bit / 64, bit % 64);
        let wide = (digit as u128) << b;
        if w < limbs {
            out[w] |= wide as u64;
        }
        if w + 1 < limbs {
            out[w + 1] |= (wide >> 64) as u64;
        }
    }
    out
}

impl MontIfmaKernel {
    /// # Safety
    /// The CPU must support AVX-512F and AVX-512 IFMA.
    pub unsafe fn new_unchecked(m: &[u64]) -> Self {
        let ctx = MontCtx::new(m);
        let n = m.len();
        let bits = 64 * n - m[n - 1].leading_zeros() as usize;
        let n52 = (bits + 2).div_ceil(52);
        let v = n52.div_ceil(LANES);
        assert!(v <= MAX_V);
        let digits = to_d52(m, LANES * v);
        let mv = digits
            .chunks(LANES)
            .map(|c| Lane8(c.try_into().unwrap()))
            .collect();
        let inv64 = portable::neg_inv_u64(m[0]);
        MontIfmaKernel {
            ctx,
            n52,
            v,
            m: mv,
            m52inv: inv64 & M52,
        }
    }

    /// `x * 2^(52 n52) mod N`, canonical limbs.
    fn to_mont(&self, x: &[u64]) -> Vec<u64> {
        let n = self.ctx.n();
        let shift = 52 * self.n52;
        let mut wide = vec![0u64; 3 * n];
        for (j, &w) in x.iter().enumerate() {
            let bit = 64 * j + shift;
            wide[bit / 64] |= w << (bit % 64);
            if !bit.is_multiple_of(64) {
                wide[bit / 64 + 1] |= w >> (64 - bit % 64);
            }
        }
        self.ctx.reduce(&wide)
    }
}

/// One AMM product of normalised digit vectors `a`, `b` (`n52` digits used,
/// `V` vectors), normalised result into `out`.
#[inline(always)]
unsafe fn amm<const V: usize>(k: &MontIfmaKernel, a: &[u64], b: &[u64], out: &mut [u64]) {
    let zero = _mm512_setzero_si512();
    let mut av = [zero; V];
    let mut mv = [zero; V];
    for v in 0..V {
        av[v] = _mm512_loadu_epi64(a.as_ptr().add(LANES * v) as *const i64);
        mv[v] = _mm512_load_epi64(k.m[v].0.as_ptr() as *const i64);
    }
    let mut acc = [zero; V];
    let m52 = _mm512_set1_epi64(M52 as i64);
    for i in 0..k.n52 {
        let bi = _mm512_set1_epi64(b[i] as i64);
        let mut hi = [zero; V];
        for v in 0..V {
            acc[v] = _mm512_madd52lo_epu64(acc[v], av[v], bi);
            hi[v] = _mm512_madd52hi_epu64(zero, av[v], bi);
        }
        let a0 = _mm_cvtsi128_si64(_mm512_castsi512_si128(acc[0])) as u64;
        let q = _mm512_set1_epi64((a0.wrapping_mul(k.m52inv) & M52) as i64);
        for v in 0..V {
            acc[v] = _mm512_madd52lo_epu64(acc[v], mv[v], q);
            hi[v] = _mm512_madd52hi_epu64(hi[v], mv[v], q);
        }
        // Lane 0 is now 0 mod 2^52: its carry joins lane 1, then all lanes
        // move down one, and the high halves (kept one column up) line up.
        let c0 = _mm512_maskz_mov_epi64(1, _mm512_srli_epi64::<52>(acc[0]));
        for v in 0..V {
            let next = if v + 1 < V { acc[v + 1] } else { zero };
            acc[v] = _mm512_add_epi64(_mm512_alignr_epi64::<1>(next, acc[v]), hi[v]);
        }
        acc[0] = _mm512_add_epi64(acc[0], c0);
    }
    let _ = m52;
    // Normalise (serial carry over the digits).
    let mut buf = [0u64; LANES * MAX_V];
    for v in 0..V {
        _mm512_storeu_epi64(buf.as_mut_ptr().add(LANES * v) as *mut i64, acc[v]);
    }
    let mut c = 0u64;
    for j in 0..LANES * V {
        let t = buf[j] + c;
        out[j] = t & M52;
        c = t >> 52;
    }
    debug_assert_eq!(c, 0);
}

#[cfg_attr(not(feature = "ifma-emulated"), target_feature(enable = "avx512f,avx512ifma"))]
#[cfg_attr(feature = "ifma-emulated", target_feature(enable = "avx512f"))]
unsafe fn sqr_n_mont<const V: usize>(k: &MontIfmaKernel, s: &mut [u64], count: u64) {
    let mut other = vec![0u64; LANES * V];
    for _ in 0..count {
        amm::<V>(k, s, s, &mut other);
        s.copy_from_slice(&other);
    }
}

#[cfg_attr(not(feature = "ifma-emulated"), target_feature(enable = "avx512f,avx512ifma"))]
#[cfg_attr(feature = "ifma-emulated", target_feature(enable = "avx512f"))]
unsafe fn mul_mont<const V: usize>(k: &MontIfmaKernel, a: &[u64], b: &[u64], out: &mut [u64]) {
    amm::<V>(k, a, b, out);
}

macro_rules! by_v {
    ($v:expr, $f:ident, $($arg:expr),*) => {
        match $v {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            8 => $f::<8>($($arg),*),
            9 => $f::<9>($($arg),*),
            10 => $f::<10>($($arg),*),
            v => unreachable!("no IFMA Montgomery kernel for {v} vectors"),
        }
    };
}

impl Kernel for MontIfmaKernel {
    fn name(&self) -> &'static str {
        "ifma-mont"
    }
    fn modulus(&self) -> &[u64] {
        &self.ctx.m
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        to_d52(&self.to_mont(x), LANES * self.v)
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        // AMM(s, 1) = s/R mod N, at most N; then one conditional subtraction.
        let mut one = vec![0u64; LANES * self.v];
        one[0] = 1;
        let mut d = vec![0u64; LANES * self.v];
        // SAFETY: the kernel exists only if the CPU has the features.
        unsafe { by_v!(self.v, mul_mont, self, s, &one, &mut d) };
        let n = self.ctx.n();
        let mut x = from_d52(&d, n + 1);
        let mut m_ext = self.ctx.m.clone();
        m_ext.push(0);
        portable::sub_if_ge(&mut x, &m_ext);
        x.truncate(n);
        x
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        // SAFETY: as above.
        unsafe { by_v!(self.v, sqr_n_mont, self, s, k) }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; LANES * self.v];
        // SAFETY: as above.
        unsafe { by_v!(self.v, mul_mont, self, a, b, &mut out) };
        out
    }
}
