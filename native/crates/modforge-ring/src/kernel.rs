//! The contract every backend meets, the generic operations built on it, and
//! the portable backend.
//!
//! A backend is a [`Kernel`] for one fixed odd modulus `m` of `n` 64-bit
//! limbs.  It keeps values in an *internal form* of its own (Montgomery form,
//! redundant radix-2^50 digits, ...), entered from and left to canonical
//! little-endian limbs in `[0, m)`.  [`sqr_n`], [`mul`] and [`pow`] are
//! written once, here, over that interface; a backend only supplies the
//! conversions and its two hot loops (`k` squarings, one product).

use crate::portable;
use modforge_ct::{bits_at, ct_select, zeroize};

/// One backend bound to one modulus.  Inputs of `enter` are canonical `n`-limb
/// values; internal forms are whatever the same kernel produced.
pub trait Kernel: Send + Sync {
    /// The backend's name (`"portable"`, `"adx"`, `"ifma"`, ...).
    fn name(&self) -> &'static str;
    /// The modulus as `n` little-endian limbs.
    fn modulus(&self) -> &[u64];
    /// Internal form of the canonical value `x` (`n` limbs).
    fn enter(&self, x: &[u64]) -> Vec<u64>;
    /// The canonical value (`n` limbs, in `[0, m)`) of an internal form.
    fn leave(&self, s: &[u64]) -> Vec<u64>;
    /// `s <- s^(2^k)`, in internal form, without leaving native code.
    fn sqr_n_internal(&self, s: &mut [u64], k: u64);
    /// The product of two internal forms, as an internal form.
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64>;
    /// `a <- a * b` in internal form.  Backends override it to skip the
    /// allocation (`ifma`: the multi-exponentiations run millions of them).
    fn mul_assign(&self, a: &mut [u64], b: &[u64]) {
        let r = self.mul_internal(a, b);
        a.copy_from_slice(&r);
    }
    /// Fixed-window exponentiation in internal form (the RSA kernel's loop):
    /// `s <- table[d_(windows-1)]`, then for each lower window `j`
    /// `s <- s^(2^w) * table[d_j]`, where `d_j` is bits `jw .. jw+w` of `e`
    /// and `table` holds `2^w` internal forms of `s.len()` limbs.  Every
    /// entry is read with a mask, so no branch or address depends on `e`.
    /// Backends with a fused loop override this (`ifma`).
    fn pow_windows(&self, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {
        pow_windows_generic(self, s, table, e, windows, w)
    }
    /// Two fixed-window exponentiations at once, `self`'s (`s`, `table`,
    /// `e`) and `other`'s (`s2`, `table2`, `e2`), both of `windows` windows
    /// of `w` bits, with the results of two [`Kernel::pow_windows`] calls.
    /// Returns false, touching nothing, when this backend cannot pair with
    /// `other` (the caller then makes the two calls): `ifma` pairs with
    /// another `ifma` kernel of the same shape and interleaves the two
    /// chains, which one chain alone cannot keep the core busy with.
    #[allow(clippy::too_many_arguments)]
    fn pow_windows_pair(
        &self,
        _other: &dyn Kernel,
        _s: &mut [u64],
        _table: &[u64],
        _e: &[u64],
        _s2: &mut [u64],
        _table2: &[u64],
        _e2: &[u64],
        _windows: usize,
        _w: usize,
    ) -> bool {
        false
    }
    /// The fold plan, for the fold backends (`ifma`, `fold-portable`), whose
    /// loop forms are radix-2^50 digits: callers may then leave the loop form
    /// with [`crate::single::fold_leave`] instead of [`Kernel::leave`].
    fn fold_plan(&self) -> Option<&crate::fold::FoldPlan> {
        None
    }
    /// The fold plan, by value (to zero it: the RSA kernel's tables are secret).
    fn into_fold_plan(self: Box<Self>) -> Option<crate::fold::FoldPlan> {
        None
    }
    /// The 32-bit-product fold plan, for `avx512f` and `fold32-portable`
    /// (radix-2^r loop forms; the RSA kernel leaves them with
    /// [`crate::single::fold32_leave`]).
    fn fold32_plan(&self) -> Option<&crate::fold32::Fold32Plan> {
        None
    }
}

/// `x^(2^k) mod m`, canonical.
pub fn sqr_n(kernel: &dyn Kernel, x: &[u64], k: u64) -> Vec<u64> {
    let mut s = kernel.enter(x);
    kernel.sqr_n_internal(&mut s, k);
    kernel.leave(&s)
}

/// `a*b mod m`, canonical.
pub fn mul(kernel: &dyn Kernel, a: &[u64], b: &[u64]) -> Vec<u64> {
    let (sa, sb) = (kernel.enter(a), kernel.enter(b));
    kernel.leave(&kernel.mul_internal(&sa, &sb))
}

/// `x^e mod m`, canonical, `e` as little-endian limbs (any length).
///
/// Left-to-right fixed windows of `w` bits ([`pow_window`]) over a table of
/// `x^0 .. x^(2^w - 1)`: per window `w` squarings (one `sqr_n_internal`
/// call) and one product unless the digit is zero.
pub fn pow(kernel: &dyn Kernel, x: &[u64], e: &[u64]) -> Vec<u64> {
    match pow_internal(kernel, x, e) {
        Some(acc) => kernel.leave(&acc),
        None => {
            // x^0 = 1 (canonical 1 mod m; m >= 3).
            let mut one = vec![0u64; kernel.modulus().len()];
            one[0] = 1;
            one
        }
    }
}

/// The window width for an exponent of `bits` bits: the `w` that minimises
/// the products, `2^w - 2` for the table and one per window (so a short
/// exponent, such as the 128-bit ones of the VDF proofs or 65537, builds no
/// table it does not use).
pub fn pow_window(bits: usize) -> usize {
    (1..=6).min_by_key(|&w| (1usize << w) - 2 + bits.div_ceil(w)).unwrap_or(1)
}

/// `x^e` in the kernel's internal form (fixed windows of [`pow_window`]
/// bits; not constant time), or `None` for `e = 0`.
pub fn pow_internal(kernel: &dyn Kernel, x: &[u64], e: &[u64]) -> Option<Vec<u64>> {
    let n = kernel.modulus().len();
    let bits = e
        .iter()
        .rposition(|&w| w != 0)
        .map_or(0, |i| 64 * i + 64 - e[i].leading_zeros() as usize);
    if bits == 0 {
        return None;
    }
    let w = pow_window(bits);
    let mut one = vec![0u64; n];
    one[0] = 1;
    let base = kernel.enter(x);
    let mut table = Vec::with_capacity(1 << w);
    table.push(kernel.enter(&one));
    table.push(base.clone());
    for i in 2..1usize << w {
        let next = kernel.mul_internal(&table[i - 1], &base);
        table.push(next);
    }
    // Bits w i .. w i + w - 1 of e (a window may straddle two limbs).
    let window = |i: usize| -> usize {
        let (word, b) = ((w * i) / 64, (w * i) % 64);
        let mut d = e[word] >> b;
        if b + w > 64 && word + 1 < e.len() {
            d |= e[word + 1] << (64 - b);
        }
        (d & ((1 << w) - 1)) as usize
    };
    let windows = bits.div_ceil(w);
    let mut acc = table[window(windows - 1)].clone();
    for i in (0..windows - 1).rev() {
        kernel.sqr_n_internal(&mut acc, w as u64);
        let d = window(i);
        if d != 0 {
            acc = kernel.mul_internal(&acc, &table[d]);
        }
    }
    Some(acc)
}

/// `prod_i x_i^(e_i) mod m` in the kernel's internal form (Straus /
/// interleaved fixed windows): one table `x_i^0 .. x_i^(2^w - 1)` per base,
/// then for each `w`-bit window from the top, `w` shared squarings and one
/// product per base whose digit is non-zero.  Not constant time (the
/// exponents are public in the VDF uses).  `xs` are canonical `n`-limb
/// values, `es` little-endian limbs (any length); returns an internal form.
pub fn multiexp_internal(kernel: &dyn Kernel, xs: &[Vec<u64>], es: &[Vec<u64>]) -> Vec<u64> {
    let n = kernel.modulus().len();
    let bits_of = |e: &[u64]| {
        e.iter().rposition(|&w| w != 0).map_or(0, |i| 64 * i + 64 - e[i].leading_zeros() as usize)
    };
    let max_bits = es.iter().map(|e| bits_of(e)).max().unwrap_or(0);
    if es.iter().filter(|e| bits_of(e) > 0).count() > BUCKET_MIN_BASES {
        return multiexp_buckets(kernel, xs, es);
    }
    let mut one = vec![0u64; n];
    one[0] = 1;
    let one = kernel.enter(&one);
    if max_bits == 0 {
        return one;
    }
    // Window width by the longest exponent (table 2^w - 2 products per base).
    let w = match max_bits {
        0..=24 => 1,
        25..=80 => 2,
        81..=240 => 3,
        241..=672 => 4,
        673..=1792 => 5,
        _ => 6,
    };
    let tables: Vec<Vec<Vec<u64>>> = xs
        .iter()
        .zip(es)
        .filter(|(_, e)| bits_of(e) > 0)
        .map(|(x, _)| {
            let base = kernel.enter(x);
            let mut t = Vec::with_capacity(1 << w);
            t.push(one.clone());
            t.push(base.clone());
            for i in 2..(1usize << w) {
                let next = kernel.mul_internal(&t[i - 1], &base);
                t.push(next);
            }
            t
        })
        .collect();
    let live: Vec<&Vec<u64>> = es.iter().filter(|e| bits_of(e) > 0).collect();
    let digit = |e: &[u64], i: usize| -> usize {
        let mut d = 0usize;
        for b in (0..w).rev() {
            let bit = w * i + b;
            let limb = e.get(bit / 64).copied().unwrap_or(0);
            d = (d << 1) | ((limb >> (bit % 64)) & 1) as usize;
        }
        d
    };
    let windows = max_bits.div_ceil(w);
    let mut acc: Option<Vec<u64>> = None;
    for i in (0..windows).rev() {
        if let Some(a) = acc.as_mut() {
            kernel.sqr_n_internal(a, w as u64);
        }
        for (t, e) in tables.iter().zip(&live) {
            let d = digit(e, i);
            if d != 0 {
                acc = Some(match acc {
                    None => t[d].clone(),
                    Some(a) => kernel.mul_internal(&a, &t[d]),
                });
            }
        }
    }
    acc.unwrap_or(one)
}

/// [`multiexp_internal`] on `threads` threads: the exponent bits are cut into
/// `threads` slices of about equal width, thread `j` computes
/// `prod_i x_i^(bits lo_j .. hi_j of e_i)` over all bases (its buckets span
/// only its own windows, so no bucket sum is repeated), and the parts are
/// combined as `prod_j part_j^(2^lo_j)` by Horner from the top slice.
pub fn multiexp_threads(kernel: &dyn Kernel, xs: &[Vec<u64>], es: &[Vec<u64>], threads: usize) -> Vec<u64> {
    let bits_of = |e: &[u64]| {
        e.iter().rposition(|&w| w != 0).map_or(0, |i| 64 * i + 64 - e[i].leading_zeros() as usize)
    };
    let max_bits = es.iter().map(|e| bits_of(e)).max().unwrap_or(0);
    let threads = threads.clamp(1, max_bits.max(1));
    if threads == 1 {
        return multiexp_internal(kernel, xs, es);
    }
    let edges: Vec<usize> = (0..=threads).map(|j| max_bits * j / threads).collect();
    // Bits lo .. hi of e, as limbs.
    let slice = |e: &[u64], lo: usize, hi: usize| -> Vec<u64> {
        let limb = |i: usize| e.get(i).copied().unwrap_or(0);
        let (q, r) = (lo / 64, lo % 64);
        let mut out: Vec<u64> = (0..(hi - lo).div_ceil(64))
            .map(|k| if r == 0 { limb(q + k) } else { (limb(q + k) >> r) | (limb(q + k + 1) << (64 - r)) })
            .collect();
        let top = (hi - lo) % 64;
        if top != 0 {
            *out.last_mut().expect("hi > lo") &= (1u64 << top) - 1;
        }
        out
    };
    let parts: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|j| {
                let (lo, hi) = (edges[j], edges[j + 1]);
                scope.spawn(move || {
                    let sliced: Vec<Vec<u64>> = es.iter().map(|e| slice(e, lo, hi)).collect();
                    multiexp_internal(kernel, xs, &sliced)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a multiexp thread")).collect()
    });
    let mut acc = parts[threads - 1].clone();
    for j in (0..threads - 1).rev() {
        kernel.sqr_n_internal(&mut acc, (edges[j + 1] - edges[j]) as u64);
        acc = kernel.mul_internal(&acc, &parts[j]);
    }
    acc
}

/// Above this many bases the bucket method beats per-base tables: Straus pays
/// `2^w - 2` table products per base, the buckets `2^(w+1)` per window for all
/// bases together.
const BUCKET_MIN_BASES: usize = 64;

/// `prod_i x_i^(e_i) mod m` by Pippenger's bucket method, for many bases (the
/// Wesolowski proof multiplies thousands of checkpoints by short exponents).
/// Per `w`-bit window from the top: `w` squarings of the accumulator, one
/// product per base into the bucket of its digit, then `sum_d d * bucket_d`
/// by running products (`2 * 2^w` products).  `w` minimises
/// `windows * (bases + 2^(w+1))`.  Not constant time; returns an internal form.
pub fn multiexp_buckets(kernel: &dyn Kernel, xs: &[Vec<u64>], es: &[Vec<u64>]) -> Vec<u64> {
    let n = kernel.modulus().len();
    let bits_of = |e: &[u64]| {
        e.iter().rposition(|&w| w != 0).map_or(0, |i| 64 * i + 64 - e[i].leading_zeros() as usize)
    };
    let live: Vec<(&Vec<u64>, &Vec<u64>)> = xs.iter().zip(es).filter(|(_, e)| bits_of(e) > 0).collect();
    let mut one = vec![0u64; n];
    one[0] = 1;
    let max_bits = live.iter().map(|(_, e)| bits_of(e)).max().unwrap_or(0);
    if max_bits == 0 {
        return kernel.enter(&one);
    }
    let count = live.len();
    let w = (1..=16usize)
        .min_by_key(|&w| max_bits.div_ceil(w) * (count + (2usize << w)))
        .unwrap_or(1);
    let bases: Vec<Vec<u64>> = live.iter().map(|(x, _)| kernel.enter(x)).collect();
    // Bits w*i .. w*i+w of e (w <= 16), from at most two limbs.
    let digit = |e: &[u64], i: usize| -> usize {
        let (limb, off) = ((w * i) / 64, (w * i) % 64);
        let lo = e.get(limb).copied().unwrap_or(0) >> off;
        let hi = if off + w > 64 { e.get(limb + 1).copied().unwrap_or(0) << (64 - off) } else { 0 };
        ((lo | hi) & ((1u64 << w) - 1)) as usize
    };
    let times = |acc: Option<Vec<u64>>, y: &[u64]| -> Vec<u64> {
        match acc {
            None => y.to_vec(),
            Some(mut a) => {
                kernel.mul_assign(&mut a, y);
                a
            }
        }
    };
    let mut acc: Option<Vec<u64>> = None;
    for i in (0..max_bits.div_ceil(w)).rev() {
        if let Some(a) = acc.as_mut() {
            kernel.sqr_n_internal(a, w as u64);
        }
        let mut buckets: Vec<Option<Vec<u64>>> = vec![None; 1 << w];
        for (base, (_, e)) in bases.iter().zip(&live) {
            let d = digit(e, i);
            if d != 0 {
                buckets[d] = Some(times(buckets[d].take(), base));
            }
        }
        let mut running: Option<Vec<u64>> = None;
        let mut total: Option<Vec<u64>> = None;
        for bucket in buckets.iter_mut().skip(1).rev() {
            if let Some(b) = bucket.take() {
                running = Some(times(running, &b));
            }
            if let Some(r) = running.as_ref() {
                total = Some(times(total, r));
            }
        }
        if let Some(t) = total {
            acc = Some(times(acc, &t));
        }
    }
    acc.unwrap_or_else(|| kernel.enter(&one))
}

/// Montgomery constants of a modulus, shared by the Montgomery backends.
#[derive(Clone, Debug)]
pub struct MontCtx {
    /// The modulus, `n` limbs.
    pub m: Vec<u64>,
    /// `-m^-1 mod 2^64`.
    pub m0inv: u64,
    /// `R^2 mod m`, `R = 2^(64n)`.
    pub r2: Vec<u64>,
    /// `R^3 mod m`.
    pub r3: Vec<u64>,
}

/// `acc = (acc + y) mod m` for `acc, y < m`; `acc` and `m_ext` have one limb
/// more than `y` (the carry).
fn add_mod(acc: &mut [u64], y: &[u64], m_ext: &[u64]) {
    let mut c = 0u128;
    for j in 0..acc.len() {
        let v = acc[j] as u128 + *y.get(j).unwrap_or(&0) as u128 + c;
        acc[j] = v as u64;
        c = v >> 64;
    }
    portable::sub_if_ge(acc, m_ext);
}

impl MontCtx {
    /// Constants for an odd `m` (`n` limbs, top limb non-zero or `n == 1`).
    pub fn new(m: &[u64]) -> Self {
        assert!(
            !m.is_empty() && m[0] & 1 == 1,
            "MontCtx: the modulus must be odd"
        );
        let n = m.len();
        let mut r2_wide = vec![0u64; 2 * n + 1];
        r2_wide[2 * n] = 1;
        let r2 = portable::reduce_wide(&r2_wide, m);
        let m0inv = portable::neg_inv_u64(m[0]);
        // R^3 mod m = mont_mul(R^2, R^2), canonical.
        let mut r3 = vec![0u64; n];
        portable::mont_mul(&mut r3, &r2, &r2, m, m0inv);
        MontCtx {
            m: m.to_vec(),
            m0inv,
            r2,
            r3,
        }
    }

    /// `x mod m`, canonical, for a value of at most `3n` limbs.
    ///
    /// `x = Y0 + Y1*R + Y2*R^2` in `n`-limb chunks; one Montgomery product
    /// with `R^(k+2) mod m` brings chunk `k` to `Yk*R^(k+1) mod m` (canonical,
    /// since `Yk < R` and the constant is `< m`), the residues are added
    /// modulo `m`, and a final reduction divides the sum `x*R` by `R`.
    pub fn reduce(&self, x: &[u64]) -> Vec<u64> {
        let n = self.n();
        assert!(x.len() <= 3 * n, "MontCtx::reduce: at most 3n limbs");
        let mut acc = vec![0u64; n + 1];
        let mut m_ext = self.m.clone();
        m_ext.push(0);
        let mut chunk = vec![0u64; n];
        let mut prod = vec![0u64; n];
        for (k, ys) in x.chunks(n).enumerate() {
            chunk.fill(0);
            chunk[..ys.len()].copy_from_slice(ys);
            let c = match k {
                0 => &self.r2, // mont_mul(Y0, R^2) = Y0*R
                1 => &self.r3,
                _ => {
                    // R^4 = mont_mul(R^3, R^2); only reached for 3 chunks.
                    let mut r4 = vec![0u64; n];
                    portable::mont_mul(&mut r4, &self.r3, &self.r2, &self.m, self.m0inv);
                    portable::mont_mul(&mut prod, &chunk, &r4, &self.m, self.m0inv);
                    add_mod(&mut acc, &prod, &m_ext);
                    continue;
                }
            };
            portable::mont_mul(&mut prod, &chunk, c, &self.m, self.m0inv);
            add_mod(&mut acc, &prod, &m_ext);
        }
        // acc = sum of Yk*R^(k+1) mod m; one more Montgomery step divides by R.
        let mut t = vec![0u64; 2 * n + 1];
        let mut out = vec![0u64; n];
        portable::redc_canonical(&mut out, &acc[..n], &self.m, self.m0inv, &mut t);
        out
    }

    pub fn n(&self) -> usize {
        self.m.len()
    }
}

/// The portable backend: Montgomery form with values `< R` between steps
/// (almost-Montgomery), CIOS products and a dedicated squaring.
pub struct PortableKernel {
    ctx: MontCtx,
}

impl PortableKernel {
    pub fn new(m: &[u64]) -> Self {
        PortableKernel {
            ctx: MontCtx::new(m),
        }
    }
}

impl Kernel for PortableKernel {
    fn name(&self) -> &'static str {
        "portable"
    }
    fn modulus(&self) -> &[u64] {
        &self.ctx.m
    }
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        let n = self.ctx.n();
        let mut out = vec![0u64; n];
        let mut t = vec![0u64; n + 2];
        portable::amm_mul(
            &mut out,
            x,
            &self.ctx.r2,
            &self.ctx.m,
            self.ctx.m0inv,
            &mut t,
        );
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
        let n = self.ctx.n();
        let mut t = vec![0u64; 2 * n + 1];
        let (mut a, mut b) = (s.to_vec(), vec![0u64; n]);
        for _ in 0..k {
            portable::amm_sqr(&mut b, &a, &self.ctx.m, self.ctx.m0inv, &mut t);
            std::mem::swap(&mut a, &mut b);
        }
        s.copy_from_slice(&a);
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let n = self.ctx.n();
        let mut out = vec![0u64; n];
        let mut t = vec![0u64; n + 2];
        portable::amm_mul(&mut out, a, b, &self.ctx.m, self.ctx.m0inv, &mut t);
        out
    }
}

/// The generic loop of [`Kernel::pow_windows`]: one `sqr_n_internal` and
/// one `mul_internal` per window, the entry read by [`ct_select`].
pub fn pow_windows_generic<K: Kernel + ?Sized>(
    kernel: &K,
    s: &mut [u64],
    table: &[u64],
    e: &[u64],
    windows: usize,
    w: usize,
) {
    let len = s.len();
    assert!(windows >= 1 && table.len() == len << w, "pow_windows: table of 2^w entries");
    ct_select(s, table, len, bits_at(e, (windows - 1) * w, w));
    let mut sel = vec![0u64; len];
    for j in (0..windows - 1).rev() {
        kernel.sqr_n_internal(s, w as u64);
        let digit = bits_at(e, j * w, w);
        ct_select(&mut sel, table, len, digit);
        // The deliberate leak of the valgrind check (test builds only).
        #[cfg(feature = "ct-leak-test")]
        if digit == 0 {
            continue;
        }
        let mut next = kernel.mul_internal(s, &sel);
        s.copy_from_slice(&next);
        zeroize(&mut next);
    }
    zeroize(&mut sel);
}
