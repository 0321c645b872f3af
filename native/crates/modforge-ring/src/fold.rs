//! Fixed-modulus table fold in redundant radix 2^50: the plan shared by the
//! AVX-512 IFMA kernel (`crate::ifma`) and its portable twin here.
//!
//! # Representation
//!
//! A loop value is `L = K + 1` digits `x_j` in 64-bit lanes, value
//! `X = sum x_j 2^(50j)`, with the invariant
//!
//! * (I1) every digit `x_j < 2^50 + 2^14`, so `2*x_j < 2^52`: a valid IFMA
//!   input even after the doubling of symmetric squaring;
//! * (I2) `X < 2^(50L)`.
//!
//! `X` is congruent to the true value modulo `N` but not reduced; only
//! [`FoldPlan::leave`] makes it canonical.
//!
//! # One step (squaring; a product is the same with `x_i*y_j`)
//!
//! 1. Columns.  `C_c = sum lo52(x_i*2x_j) [i<j, i+j=c, different quads] +
//!    2 lo52(x_i*x_j) [i<j, i+j=c, same quad] + lo52(x_i^2) [2i=c] +
//!    4*(the same hi52 parts of column c-1)`, where the quads are the digit
//!    groups `4q .. 4q+3` (the kernel forms each quad's square whole, both
//!    orders of a pair, instead of masking; see `build_ifma.rs`).  So
//!    `sum C_c 2^(50c) = X^2` exactly (radix 2^50, so a product's high half,
//!    which IFMA returns at weight 2^52, counts 4x at the next column).  Each
//!    column sums at most `L/2 + 3` low halves `< 2^52` and as many high
//!    halves `< 2^51` times 4: `C_c < (L/2 + 3) * 2^54 <= 2^60` for `L <= 88`
//!    (4096-bit moduli need 84).
//! 2. High digits.  Columns `c >= K` get one parallel carry step,
//!    `d_K = C_K mod 2^50`, `d_c = (C_c mod 2^50) + (C_(c-1) >> 50)`, so
//!    `d_c < 2^50 + 2^10`.  Columns below `K` stay as they are.  No digit
//!    above column `2K+1` exists: `X^2 < 2^(100L) = 2^(50(2K+2))`.
//! 3. Fold.  `R = sum_(c<K) C_c 2^(50c) + sum_(c=K..2K+1) d_c T_c` with the
//!    table `T_c = 2^(50c) mod N` in `K` canonical digits (`H = K + 2` rows).
//!    As columns, `R_j = C_j [j<K] + sum lo52(d_c T_(c,j)) + 4 sum
//!    hi52(d_c T_(c,j-1))`, each `< 2^60 + H*2^53 < 2^61`: no lane overflows.
//! 4. Carry.  `x'_j = (R_j mod 2^50) + (R_(j-1) >> 50)`: digits
//!    `< 2^50 + 2^11`, which is (I1).
//!
//! # Why (I2) is a fixed point
//!
//! `K` is the least digit count with `bits(N) + 1 + bitlen(H) <= 50K`, so
//! that `2 H N <= 2^(50K)`.  The low columns add
//! `sum_(c<K) C_c 2^(50c) < 2^60 * 2^(50(K-1)) * (1 + 2^-49) < 2^(50K+11)`;
//! the fold adds `sum d_c T_c < H (2^50 + 2^10) N <= 2^(50K+49) (1 + 2^-40)`.
//! Their sum is below `2^(50K+50) = 2^(50L)`, so `R` satisfies (I2) again,
//! whatever `X` was.  Hence the loop needs no comparison, no second fold and
//! no final subtraction; a digit `x'_(K+1) = R_K >> 50` would be worth
//! `2^(50L)` and is therefore 0.

use crate::kernel::{Kernel, MontCtx};

/// Digit width of the redundant representation.
pub const DIGIT_BITS: u32 = 50;
/// `2^50 - 1`.
pub const DIGIT_MASK: u64 = (1 << DIGIT_BITS) - 1;
/// IFMA multiplies the low 52 bits of its inputs.
pub const IFMA_MASK: u64 = (1 << 52) - 1;
/// Lanes per AVX-512 vector.
pub const LANES: usize = 8;
/// Largest vector count the kernels are instantiated for (4096-bit moduli
/// need 11: `K = 83`, `L = 84` digits).
pub const MAX_VECTORS: usize = 11;

/// A 64-byte aligned vector of eight lanes (one zmm register).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct Lane8(pub [u64; LANES]);

/// Everything the fold kernels need for one modulus.
#[derive(Clone, Debug)]
pub struct FoldPlan {
    /// Table digits `K` (digits of `T_c`); loop values have `K + 1`.
    pub k: usize,
    /// Vectors per loop value: `ceil((K + 1) / 8)`.
    pub v: usize,
    /// Table rows `H = K + 2`: row `r` is `T_(K+r) = 2^(50(K+r)) mod N` in
    /// `v` vectors (lanes `>= K` zero).
    pub table: Vec<Lane8>,
    /// The table's last vector taken column-wise (see [`tail_columns`]):
    /// chunk `q`, column `c` is the vector of digit `8(v-1) + c` of the
    /// rows `tail_first_row(k) + 8q ..` (zero past row `H`); empty when the
    /// rule takes no columns.
    pub tail: Vec<Lane8>,
    /// Montgomery constants, used once per call to make results canonical.
    pub ctx: MontCtx,
}

/// Most table digits the IFMA fold takes column-wise.
pub const TAIL_COLUMNS_MAX: usize = 3;

/// The table digits of the last vector, `8(v-1) .. K-1`, that the IFMA fold
/// takes column-wise: their count when it is `1 ..= TAIL_COLUMNS_MAX` and
/// measured to pay (below), else 0 (the last vector stays in the rows).
///
/// Row-wise, every row spends one vector product per half on that vector,
/// whatever its live lanes (2048 bits: digits 40 and 41 of 48, and digit 41
/// of `T_c < N < 2^2048` is always 0).  Column-wise, a product is eight
/// rows' digits times eight table digits of one column, summed across
/// lanes at the end: at 2048 bits the 38 rows from row 6 take 20 IFMAs
/// there instead of 76 (see `ifma::fold_rows`).  With more columns the sum across
/// lanes costs more than it saves.
pub const fn tail_columns(k: usize, v: usize) -> usize {
    let t = k - LANES * (v - 1);
    // Measured side by side (AMD Zen 4, 2026-11-23), against the row form:
    // one or two columns 5-12 % faster from 800 to 4050 bits; three
    // columns 2-6 % faster from 1300 to 3700 bits (4 to 10 vectors), but
    // 15 % slower at 900 bits, 3 % at 512 and 2 % at 4096 (eleven vectors
    // of accumulators leave no registers for the columns).  One vector
    // (moduli up to 350 bits) keeps the row form.
    let columns_pay = t <= 2 || (t == 3 && v >= 4 && v <= 10);
    if v >= 2 && t <= TAIL_COLUMNS_MAX && columns_pay {
        t
    } else {
        0
    }
}

/// The first row the column-wise part takes: the least row `r` with `K + r`
/// a multiple of 8, so that eight high digits are one aligned vector of the
/// digit buffer (loaded from a single store, which forwards).
pub const fn tail_first_row(k: usize) -> usize {
    (LANES - k % LANES) % LANES
}

/// [`FoldPlan::tail`] for the table rows `table` (`K + 2` rows of `v`
/// vectors).
pub fn tail_table(k: usize, v: usize, table: &[Lane8]) -> Vec<Lane8> {
    let (t, first, h) = (tail_columns(k, v), tail_first_row(k), k + 2);
    let mut tail = vec![Lane8::default(); tail_chunks(k, v) * t];
    for (q, chunk) in tail.chunks_mut(t.max(1)).enumerate() {
        for (c, column) in chunk.iter_mut().enumerate() {
            for (lane, digit) in column.0.iter_mut().enumerate() {
                let r = first + LANES * q + lane;
                if r < h {
                    *digit = table[r * v + v - 1].0[c];
                }
            }
        }
    }
    tail
}

/// Chunks of eight rows the column-wise part takes: rows `tail_first_row ..
/// H`, rounded up (the rows past `H` have zero table digits).
pub const fn tail_chunks(k: usize, v: usize) -> usize {
    if tail_columns(k, v) == 0 {
        0
    } else {
        (k + 2 - tail_first_row(k)).div_ceil(LANES)
    }
}

/// Digits of a little-endian limb value in radix 2^50 (`count` digits).
pub fn to_digits(x: &[u64], count: usize) -> Vec<u64> {
    radix_digits(x, count, DIGIT_BITS)
}

/// The value of (possibly redundant) radix-2^50 digits as limbs.
pub fn from_digits(d: &[u64], limbs: usize) -> Vec<u64> {
    radix_value(d, limbs, DIGIT_BITS)
}

/// Digits of a little-endian limb value in radix `2^r` (`count` digits).
pub fn radix_digits(x: &[u64], count: usize, r: u32) -> Vec<u64> {
    let mask = (1u64 << r) - 1;
    (0..count)
        .map(|j| {
            let bit = r as usize * j;
            let (w, b) = (bit / 64, bit % 64);
            let lo = x.get(w).copied().unwrap_or(0) >> b;
            let hi = if b + r as usize > 64 {
                x.get(w + 1).copied().unwrap_or(0) << (64 - b)
            } else {
                0
            };
            (lo | hi) & mask
        })
        .collect()
}

/// The value of (possibly redundant) radix-`2^r` digits as `limbs` limbs.
pub fn radix_value(d: &[u64], limbs: usize, r: u32) -> Vec<u64> {
    let mut out = vec![0u64; limbs];
    for (j, &digit) in d.iter().enumerate() {
        let bit = r as usize * j;
        let (w, b) = (bit / 64, bit % 64);
        let wide = (digit as u128) << b;
        let mut carry = 0u128;
        for (i, p) in [wide as u64, (wide >> 64) as u64].into_iter().enumerate() {
            if w + i < limbs {
                let s = out[w + i] as u128 + p as u128 + carry;
                out[w + i] = s as u64;
                carry = s >> 64;
            } else {
                assert!(p == 0 && carry == 0, "radix_value: value does not fit");
            }
        }
        let mut i = w + 2;
        while carry != 0 {
            assert!(i < limbs, "radix_value: value does not fit");
            let s = out[i] as u128 + carry;
            out[i] = s as u64;
            carry = s >> 64;
            i += 1;
        }
    }
    out
}

impl FoldPlan {
    /// The plan for an odd modulus `m` (limbs, top limb non-zero) of at most
    /// 4096 bits.
    pub fn new(m: &[u64]) -> Self {
        let n = m.len();
        let bits = 64 * n - m[n - 1].leading_zeros() as usize;
        // Least K with 2*H*N <= 2^(50K), H = K + 2; N < 2^bits, so
        // bits + 1 + bitlen(H) <= 50K suffices.
        let mut k = 1usize;
        while bits + 1 + (usize::BITS - (k + 2).leading_zeros()) as usize > 50 * k {
            k += 1;
        }
        let v = (k + 1).div_ceil(LANES);
        assert!(v <= MAX_VECTORS, "FoldPlan: modulus too wide ({bits} bits)");
        let ctx = MontCtx::new(m);
        let h = k + 2;
        let mut table = vec![Lane8::default(); h * v];
        // T_c for c = K .. 2K+1: start from 2^(50K) mod N, multiply by 2^50.
        let mut wide = vec![0u64; (50 * k) / 64 + 1];
        wide[(50 * k) / 64] = 1 << ((50 * k) % 64);
        let mut t = ctx.reduce(&wide);
        for r in 0..h {
            let digits = to_digits(&t, k);
            for (j, &d) in digits.iter().enumerate() {
                table[r * v + j / LANES].0[j % LANES] = d;
            }
            // t = t * 2^50 mod N
            let mut shifted = vec![0u64; n + 1];
            let mut carry = 0u64;
            for j in 0..n {
                shifted[j] = (t[j] << 50) | carry;
                carry = t[j] >> 14;
            }
            shifted[n] = carry;
            t = ctx.reduce(&shifted);
        }
        let tail = tail_table(k, v, &table);
        FoldPlan { k, v, table, tail, ctx }
    }

    /// Digits per loop value, `K + 1`.
    pub fn l(&self) -> usize {
        self.k + 1
    }

    /// Table rows, `K + 2`.
    pub fn h(&self) -> usize {
        self.k + 2
    }

    /// Loop form of a canonical value: its `8v` digits (lanes `>= K` zero).
    pub fn enter(&self, x: &[u64]) -> Vec<u64> {
        to_digits(x, LANES * self.v)
    }

    /// The canonical value of a loop form.
    pub fn leave(&self, s: &[u64]) -> Vec<u64> {
        let n = self.ctx.n();
        let wide = from_digits(s, 3 * n);
        self.ctx.reduce(&wide)
    }

    /// Row `r` of the table as `K` digits.
    pub fn row(&self, r: usize) -> &[Lane8] {
        &self.table[r * self.v..(r + 1) * self.v]
    }

    /// Steps 2-4 on the columns `c` (`2 * 8v` lanes, exact 64-bit sums):
    /// the next loop value.  Portable; the IFMA kernel does the same with
    /// vectors and must produce the same digits.
    pub fn fold_columns(&self, c: &[u64]) -> Vec<u64> {
        let (k, lanes) = (self.k, LANES * self.v);
        // High digits d_K .. d_(2K+1).
        let mut d = vec![0u64; self.h()];
        for (r, dr) in d.iter_mut().enumerate() {
            let col = k + r;
            let carry = if r == 0 { 0 } else { c[col - 1] >> DIGIT_BITS };
            *dr = (c[col] & DIGIT_MASK) + carry;
        }
        debug_assert_eq!(c.get(2 * k + 2).copied().unwrap_or(0), 0);
        debug_assert_eq!(
            c[2 * k + 1] >> DIGIT_BITS,
            0,
            "(I2) violated: a digit above column 2K+1"
        );
        // Fold: columns of R.
        let mut r = vec![0u64; lanes];
        r[..k].copy_from_slice(&c[..k]);
        for (row, &dr) in d.iter().enumerate() {
            let t = self.row(row);
            for j in 0..k {
                let tj = t[j / LANES].0[j % LANES];
                r[j] += lo52(dr, tj);
                r[j + 1] += 4 * hi52(dr, tj);
            }
        }
        // Carry step.
        let mut x = vec![0u64; lanes];
        for j in 0..lanes {
            let carry = if j == 0 { 0 } else { r[j - 1] >> DIGIT_BITS };
            x[j] = (r[j] & DIGIT_MASK) + carry;
        }
        debug_assert_eq!(r[lanes - 1] >> DIGIT_BITS, 0);
        debug_assert_eq!(
            x[k + 1..].iter().filter(|&&w| w != 0).count(),
            0,
            "(I2) violated: digit K+1"
        );
        x
    }
}

/// Low 52 bits of the product of the low 52 bits of `a` and `b` (IFMA's
/// `vpmadd52luq` without the addend).
#[inline(always)]
pub fn lo52(a: u64, b: u64) -> u64 {
    (((a & IFMA_MASK) as u128 * (b & IFMA_MASK) as u128) as u64) & IFMA_MASK
}

/// Bits 52..103 of the same product (`vpmadd52huq`).
#[inline(always)]
pub fn hi52(a: u64, b: u64) -> u64 {
    (((a & IFMA_MASK) as u128 * (b & IFMA_MASK) as u128) >> 52) as u64
}

/// Columns of `x^2` exactly as the IFMA kernel forms them (step 1): a pair
/// of digits in different quads (`i/4 != j/4`) is one product with the
/// doubled operand; inside a quad both orders are formed, `x_i x_j` and
/// `x_j x_i`, and the diagonal once (the quad's square, computed whole).
pub fn square_columns(x: &[u64], lanes: usize) -> Vec<u64> {
    let mut c = vec![0u64; 2 * lanes + 1];
    for i in 0..lanes {
        for j in i..lanes {
            let products: &[u64] = if i == j {
                &[x[j]]
            } else if i / 4 == j / 4 {
                &[x[j], x[j]]
            } else {
                &[2 * x[j]]
            };
            for &y in products {
                c[i + j] += lo52(x[i], y);
                c[i + j + 1] += 4 * hi52(x[i], y);
            }
        }
    }
    c.truncate(2 * lanes);
    c
}

/// Columns of `x*y` (general product).
pub fn mul_columns(x: &[u64], y: &[u64], lanes: usize) -> Vec<u64> {
    let mut c = vec![0u64; 2 * lanes + 1];
    for i in 0..lanes {
        for j in 0..lanes {
            c[i + j] += lo52(x[i], y[j]);
            c[i + j + 1] += 4 * hi52(x[i], y[j]);
        }
    }
    c.truncate(2 * lanes);
    c
}

/// The portable twin of the IFMA fold kernel: the same digits, one scalar
/// product at a time.  A backend in its own right for tests and for machines
/// without IFMA (slower than [`crate::kernel::PortableKernel`]).
pub struct FoldPortableKernel {
    pub plan: FoldPlan,
}

impl FoldPortableKernel {
    pub fn new(m: &[u64]) -> Self {
        FoldPortableKernel {
            plan: FoldPlan::new(m),
        }
    }
}

impl Kernel for FoldPortableKernel {
    fn name(&self) -> &'static str {
        "fold-portable"
    }
    fn modulus(&self) -> &[u64] {
        &self.plan.ctx.m
    }
    fn fold_plan(&self) -> Option<&FoldPlan> {
        Some(&self.plan)
    }
    fn into_fold_plan(self: Box<Self>) -> Option<FoldPlan> {
        Some(self.plan)
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        self.plan.enter(x)
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        self.plan.leave(s)
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        let lanes = LANES * self.plan.v;
        for _ in 0..k {
            let c = square_columns(s, lanes);
            let x = self.plan.fold_columns(&c);
            s.copy_from_slice(&x);
        }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let lanes = LANES * self.plan.v;
        self.plan.fold_columns(&mul_columns(a, b, lanes))
    }
}
