//! Fixed-modulus table fold in redundant radix `2^r` (`r` = 26 to 28) with
//! 32-bit digit products: the plan shared by the AVX-512F kernel
//! (`crate::avx512f`, `vpmuludq`, for x86 CPUs without IFMA) and its portable
//! twin here ([`Fold32PortableKernel`], the same digits one product at a
//! time).
//!
//! It is the fold of [`crate::fold`] (Ozturk's table reduction, seed 000)
//! for a multiplier that returns the whole 64-bit product of two 32-bit
//! inputs instead of IFMA's two 52-bit halves.  A column then sums whole
//! products, about `2r + log2(L)` bits, so one parallel carry step has to
//! reach two digits up, and the digit width is chosen so that the sums fit
//! their 64-bit lanes ([`crate::fold32_shape`], bounds (B1)-(B5)).
//!
//! # Representation
//!
//! `K` table digits ([`fold32_shape::table_digits`]); a loop value is
//! `L = K + 1` digits `x_j` in 64-bit lanes, `X = sum x_j 2^(rj)`, congruent
//! to the true value mod `N`, with
//!
//! * (I1) `x_j < E = 2^(r+1) + 2^(64-2r)`;
//! * (I2) `X < 2^(rL)`.
//!
//! # One step (squaring; a product is the same with `x_i y_j`)
//!
//! 1. Columns.  `C_c = sum_(i<j, i+j=c) x_i (2 x_j) + x_(c/2)^2`, exact
//!    (B2).  `sum C_c 2^(rc) = X^2`.
//! 2. Carry pass from column `P` on (`P = K - 1` where (B5) holds, else 0:
//!    [`fold32_shape::first_carried_column`]).  `e_c = (C_c mod 2^r) +
//!    ((C'_(c-1) >> r) mod 2^r) + (C'_(c-2) >> 2r)` for `c >= P`, where `C'`
//!    is `C` with the columns below `P` taken as 0; `e_c = C_c` below `P`.
//!    `sum e_c 2^(rc) = X^2` still, and `e_c < E` from `P` on.  Since
//!    `X^2 < 2^(2rL)`, `e_(2L) = 0`: the digits are `e_0 .. e_(2K+1)`.
//! 3. Fold.  `R_j = e_j + sum_(c=0..H-1) e_(K+c) T_(c,j)` for `j < K`, with
//!    the table `T_c = 2^(r(K+c)) mod N` in `K` canonical digits (`H = K + 2`
//!    rows).  All `H K` products are independent; no lane overflows (B3;
//!    (B5) for the raw columns).
//! 4. Carry pass on `R` (`K` lanes): the next `x`, `L` digits (I1).
//!
//! # Why (I2) is a fixed point
//!
//! `R = sum_(j<K) e_j 2^(rj) + sum_c e_(K+c) T_c`.  The first sum is below
//! `(E / (2^r - 1)) 2^(rK) < 3 * 2^(rK)` (as `64 - 3r < -1`), plus, with raw
//! columns below `K - 1`, at most `2^64 * 2^(r(K-2)) (1 + 2^(1-r)) <
//! 2^(rK + 65 - 2r)`; the second sum is below
//! `H E N < 2^(bitlen(H) + r + 1) * 1.25 * 2^bits <= 1.25 * 2^(rK + r - 2)` by
//! (B4).  Together they are below `2^(rK + r) = 2^(rL)` for `r >= 22`,
//! whatever `X` was: no comparison, no second fold, no final subtraction in
//! the loop, and the carry out of `R_(K-1)` into digit `K + 1` is zero.
//! `tests.rs` runs steps from the extreme states (every digit `E - 1`).

use crate::fold::{radix_digits, radix_value, Lane8};
use crate::fold32_shape::{self, bounds_hold, digit_bound};
use crate::kernel::{Kernel, MontCtx};

/// Lanes per AVX-512 vector.
pub const LANES: usize = 8;

/// Everything the 32-bit-product fold needs for one modulus.
#[derive(Clone, Debug)]
pub struct Fold32Plan {
    /// Digit bits `r`.
    pub r: u32,
    /// Table digits `K`.
    pub k: usize,
    /// The table, two rows per lane: vector `v` of row pair `p` holds
    /// `T_(2p, 8v+l) + 2^32 T_(2p+1, 8v+l)` in lane `l` (`vk` vectors per
    /// pair, `ceil(H/2)` pairs, then one zero vector).  `vpmuludq` reads the
    /// low 32 bits of each lane, so row `2p` is the vector at its address and
    /// row `2p+1` the same vector read 4 bytes later (the zero vector keeps
    /// that read of the last pair inside the table).  Half the bytes of one
    /// row per lane: at 2048 bits the table fits the 32 KiB L1 cache.
    pub table: Vec<Lane8>,
    /// Montgomery constants, used to make results canonical.
    pub ctx: MontCtx,
}

impl Fold32Plan {
    /// The plan for an odd modulus `m` (limbs, top limb non-zero).
    pub fn new(m: &[u64]) -> Self {
        let n = m.len();
        let bits = 64 * n - m[n - 1].leading_zeros() as usize;
        let (r, k) = fold32_shape::shape(bits).expect("Fold32Plan: modulus too wide");
        debug_assert!(bounds_hold(r, k));
        let ctx = MontCtx::new(m);
        // T_c for c = 0 .. H-1: start from 2^(rK) mod N, multiply by 2^r.
        let top = r as usize * k;
        let mut wide = vec![0u64; top / 64 + 1];
        wide[top / 64] = 1 << (top % 64);
        let first = ctx.reduce(&wide);
        let next = |t: &[u64]| {
            let mut shifted = vec![0u64; n + 1];
            let mut carry = 0u64;
            for j in 0..n {
                shifted[j] = (t[j] << r) | carry;
                carry = t[j] >> (64 - r);
            }
            shifted[n] = carry;
            ctx.reduce(&shifted)
        };
        let table = Self::pack_table(r, k, first, next);
        Fold32Plan { r, k, table, ctx }
    }

    /// The packed table from its first row `T_0 = 2^(rK) mod N` (canonical
    /// limbs) and a map from `T_c` to `T_(c+1) = 2^r T_c mod N`.  Constant
    /// time when `next` is (the RSA kernel builds its plan so, from a secret
    /// prime); the rows are wiped as they are packed.
    pub fn pack_table(r: u32, k: usize, first: Vec<u64>, next: impl Fn(&[u64]) -> Vec<u64>) -> Vec<Lane8> {
        let (h, vk) = (k + 2, k.div_ceil(LANES));
        let mut table = vec![Lane8::default(); h.div_ceil(2) * vk + 1];
        let mut t = first;
        for c in 0..h {
            let mut digits = radix_digits(&t, k, r);
            for (j, &d) in digits.iter().enumerate() {
                table[(c / 2) * vk + j / LANES].0[j % LANES] |= d << (32 * (c % 2));
            }
            modforge_ct::zeroize(&mut digits);
            let mut following = next(&t);
            std::mem::swap(&mut t, &mut following);
            modforge_ct::zeroize(&mut following);
        }
        modforge_ct::zeroize(&mut t);
        table
    }

    /// Overwrite the table and the constants with zeros (the RSA kernel's
    /// plans are functions of a secret prime).
    pub fn wipe(&mut self) {
        for lane in self.table.iter_mut() {
            modforge_ct::zeroize(&mut lane.0);
        }
        for buf in [&mut self.ctx.m, &mut self.ctx.r2, &mut self.ctx.r3] {
            modforge_ct::zeroize(buf);
        }
        modforge_ct::zeroize(core::slice::from_mut(&mut self.ctx.m0inv));
    }

    /// Loop digits `L = K + 1`.
    pub fn l(&self) -> usize {
        self.k + 1
    }
    /// Table rows `H = K + 2`.
    pub fn h(&self) -> usize {
        self.k + 2
    }
    /// Vectors of the fold's accumulators, `ceil(K/8)`.
    pub fn vk(&self) -> usize {
        self.k.div_ceil(LANES)
    }
    /// Vectors of a loop value, `ceil(L/8)`.
    pub fn vl(&self) -> usize {
        self.l().div_ceil(LANES)
    }
    /// Lanes of a loop form (`8 vl`; lanes `>= L` are zero).
    pub fn lanes(&self) -> usize {
        LANES * self.vl()
    }
    /// The digit mask `2^r - 1`.
    pub fn mask(&self) -> u64 {
        (1 << self.r) - 1
    }
    /// The strict digit bound `E` of (I1).
    pub fn digit_bound(&self) -> u64 {
        digit_bound(self.r) as u64
    }

    /// Digit `j` of table row `c`.
    pub fn table_digit(&self, c: usize, j: usize) -> u64 {
        let lane = self.table[(c / 2) * self.vk() + j / LANES].0[j % LANES];
        (lane >> (32 * (c % 2))) & 0xFFFF_FFFF
    }

    /// Loop form of a canonical value.
    pub fn enter(&self, x: &[u64]) -> Vec<u64> {
        radix_digits(x, self.lanes(), self.r)
    }

    /// The canonical value of a loop form (not constant time in the value's
    /// size: public data only).
    pub fn leave(&self, s: &[u64]) -> Vec<u64> {
        let n = self.ctx.n();
        self.ctx.reduce(&radix_value(s, 3 * n, self.r))
    }

    /// The first column step 2 carries (`K - 1` with raw low columns).
    pub fn first_carried(&self) -> usize {
        fold32_shape::first_carried_column(self.r, self.k)
    }

    /// A carry pass from column `from` on: `out_len` lanes of the exact
    /// columns `c`, those below `from` left as they are (and carrying
    /// nothing up).
    pub fn carry(&self, c: &[u64], out_len: usize, from: usize) -> Vec<u64> {
        let (r, mask) = (self.r, self.mask());
        let at = |i: isize| -> u64 {
            if i < from as isize {
                0
            } else {
                c.get(i as usize).copied().unwrap_or(0)
            }
        };
        (0..out_len as isize)
            .map(|j| {
                if j < from as isize {
                    c.get(j as usize).copied().unwrap_or(0)
                } else {
                    (at(j) & mask) + ((at(j - 1) >> r) & mask) + (at(j - 2) >> (2 * r))
                }
            })
            .collect()
    }

    /// Steps 2-4 on the exact columns `c` of a square or product: the next
    /// loop value (`8 vl` lanes).
    pub fn fold_columns(&self, c: &[u64]) -> Vec<u64> {
        let (k, l, h) = (self.k, self.l(), self.h());
        let e = self.carry(c, 2 * l + 1, self.first_carried());
        debug_assert_eq!(e[2 * l], 0, "(I2) violated: a digit above column 2K+1");
        let mut acc = e[..k].to_vec();
        for row in 0..h {
            let d = e[k + row];
            for (j, a) in acc.iter_mut().enumerate() {
                *a += d * self.table_digit(row, j);
            }
        }
        let mut x = self.carry(&acc, self.lanes().max(k + 2), 0);
        debug_assert!(x[l..].iter().all(|&d| d == 0), "(I2) violated: digit K+1");
        x.truncate(self.lanes());
        x
    }

    /// Step 1 of a squaring: the exact columns of `x^2` (`x`: `L` digits
    /// below `E`).
    pub fn square_columns(&self, x: &[u64]) -> Vec<u64> {
        let l = self.l();
        let mut c = vec![0u64; 2 * l];
        for i in 0..l {
            c[2 * i] += x[i] * x[i];
            for j in i + 1..l {
                c[i + j] += x[i] * (2 * x[j]);
            }
        }
        c
    }

    /// Step 1 of a product.
    pub fn mul_columns(&self, x: &[u64], y: &[u64]) -> Vec<u64> {
        let l = self.l();
        let mut c = vec![0u64; 2 * l];
        for i in 0..l {
            for j in 0..l {
                c[i + j] += x[i] * y[j];
            }
        }
        c
    }
}

/// The value of (possibly redundant) radix-`2^r` digits (each below `2^63`)
/// as `limbs` limbs, in constant time: one carry pass to canonical digits,
/// then shifts by public amounts.  The value must fit.
pub fn digits_to_limbs(d: &[u64], limbs: usize, r: u32) -> Vec<u64> {
    let mask = (1u64 << r) - 1;
    let mut norm = Vec::with_capacity(d.len() + 3);
    let mut carry = 0u64;
    for &x in d {
        let v = x + carry;
        norm.push(v & mask);
        carry = v >> r;
    }
    while norm.len() < d.len() + 3 {
        norm.push(carry & mask);
        carry >>= r;
    }
    let mut out = vec![0u64; limbs];
    for (j, &x) in norm.iter().enumerate() {
        let bit = r as usize * j;
        let (w, b) = (bit / 64, bit % 64);
        if w < limbs {
            out[w] |= x << b;
        }
        if b + r as usize > 64 && w + 1 < limbs {
            out[w + 1] |= x >> (64 - b);
        }
    }
    modforge_ct::zeroize(&mut norm);
    out
}

/// The portable twin of the AVX-512F kernel: the same digits, one scalar
/// product at a time.  A backend in its own right for the tests and for
/// machines without AVX-512 (slow).
pub struct Fold32PortableKernel {
    pub plan: Fold32Plan,
}

impl Fold32PortableKernel {
    pub fn new(m: &[u64]) -> Self {
        Fold32PortableKernel {
            plan: Fold32Plan::new(m),
        }
    }
}

impl Drop for Fold32PortableKernel {
    fn drop(&mut self) {
        self.plan.wipe();
    }
}

impl Kernel for Fold32PortableKernel {
    fn name(&self) -> &'static str {
        "fold32-portable"
    }
    fn fold32_plan(&self) -> Option<&Fold32Plan> {
        Some(&self.plan)
    }
    fn modulus(&self) -> &[u64] {
        &self.plan.ctx.m
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        self.plan.enter(x)
    }
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        self.plan.leave(s)
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        for _ in 0..k {
            let x = self.plan.fold_columns(&self.plan.square_columns(s));
            s.copy_from_slice(&x);
        }
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        self.plan.fold_columns(&self.plan.mul_columns(a, b))
    }
}
