//! The CRT halves of an RSA private-key operation, constant time in the
//! secrets (`c`'s residues, `p`, `q`, `dp`, `dq`): the kernel behind
//! `modforge.native.rsa_crt_halves` (contract: docs/rsa.md, "The kernel
//! contract").
//!
//! Per half (modulus `p` of `n` limbs, exponent processed at exactly
//! `exp_bits` bits):
//!
//! 1. Constants without division and without data-dependent branches:
//!    `-p^-1 mod 2^64` by Newton (fixed 4 steps); `R mod p` (`R = 2^(64n)`)
//!    by 64 masked doublings of `2^(64(n-1)) < p`; `2^64 R` and `2^50 R` by
//!    more masked doublings; `R^2 mod p` as the Montgomery power
//!    `(2^64)^n` (square-and-multiply on the public limb count `n`).
//! 2. `c mod p` by Montgomery products of its `n`-limb chunks with
//!    `R^k mod p`, added with masked subtractions (no division).
//! 3. The kernel ([`HalfKernel`]): where the CPU has IFMA, the fold plan of
//!    [`modforge_ring::fold`] (rows `2^(50(K+r)) mod p`, each one product by `2^50`
//!    from the previous) and the `ifma` fold kernel, whose loop has no
//!    comparison and no conditional subtraction at all (its value bound is a
//!    fixed point, docs/native.md); where it has AVX-512F only, the
//!    32-bit-product fold of [`modforge_ring::fold32`] (rows one product by `2^r`
//!    each) on the `avx512f` kernel; elsewhere [`MontHalfKernel`], the
//!    scalar almost-Montgomery products of [`Mont`] (MULX/ADX rows when the
//!    CPU has them), whose only conditional step is a masked subtraction.
//!    (The folds' portable twins also run here, for the tests and the
//!    valgrind check; they are far too slow to serve.)
//! 4. Fixed windows of `w` bits: `w` squarings and one product per window,
//!    zero digits included; the table entry is chosen by reading all `2^w`
//!    entries with a mask.
//! 5. Out of the loop form in constant time ([`modforge_ring::single::fold_leave`],
//!    or one Montgomery product by 1 and a masked subtraction).
//! 6. Secret buffers on the heap are overwritten with zeros before they are
//!    freed; the Python entry points run each secret operation through
//!    [`modforge_ct::scrub_after`], which zeroes the stack it used (the compiler's spills
//!    included) and the vector registers.
//!
//! Public: the limb counts of `p`, `q`, `c`, `exp_bits`, and the bit lengths
//! of `p` and `q` (they fix the fold's digit count `K`; for an RSA key they
//! follow from the key size, and `exp_bits` already discloses the larger).
//!
//! The crate sits on `modforge-ring` (the kernels) and `modforge-ct` (the
//! masked selection and scrubbing); nothing in either knows RSA.
//!
//! The two halves for 64-bit primes, against square-and-multiply on 128-bit
//! integers:
//!
//! ```
//! use modforge_rsa::crt_halves;
//!
//! let (p, q) = (0xffff_ffff_ffff_ffc5u64, 0x7fff_ffff_ffff_ffe7u64); // 2^64 - 59, 2^63 - 25
//! let c = [0x0123_4567_89ab_cdef_u64, 0x0fed_cba9_8765_4321]; // below p*q, little-endian limbs
//! let (dp, dq) = (0xdead_beef_1234_5677u64, 0x1357_9bdf_0246_8ace);
//! let (xp, xq) = crt_halves(&c, &[p], &[dp], &[q], &[dq], 64);
//!
//! let pow = |base: u128, mut e: u64, m: u64| {
//!     let (m, mut b, mut acc) = (m as u128, base % m as u128, 1u128);
//!     while e > 0 {
//!         if e & 1 == 1 {
//!             acc = acc * b % m;
//!         }
//!         b = b * b % m;
//!         e >>= 1;
//!     }
//!     acc as u64
//! };
//! let c128 = (c[1] as u128) << 64 | c[0] as u128;
//! assert_eq!(xp, vec![pow(c128, dp, p)]);
//! assert_eq!(xq, vec![pow(c128, dq, q)]);
//! ```

use modforge_ring::fold::{tail_table, to_digits, FoldPlan, FoldPortableKernel, Lane8, LANES, MAX_VECTORS};
use modforge_ring::kernel::{Kernel, MontCtx};
use modforge_ring::fold32::{Fold32Plan, Fold32PortableKernel};
use modforge_ring::fold32_shape;
use modforge_ring::single::{fold32_leave, fold_leave, Mont};
use modforge_ct::{bits_at, ct_select, ct_sub_if_ge, opaque_u64, zeroize};

/// Products of one fixed-window exponentiation (as `window_cost` in
/// python/modforge/rsa/exp.py).
pub fn window_cost(exp_bits: usize, w: usize) -> usize {
    (1usize << w) - 2 + exp_bits.div_ceil(w) * (w + 1)
}

/// The window width minimising the estimated cost in squaring-equivalents:
/// a fold product costs about 1.9 squarings and the masked scan about 1/30
/// of a squaring per table entry per window (measured with `perf` on the
/// IFMA fold at 1024 bits: 63 ns, 119 ns, ~2 ns).  Re-checked 2026-11-22 after
/// the product got four accumulator chains (~1.65 squarings): the model's
/// w = 4 still beats w = 5 (226 against 232 us per 2048-bit operation).
pub fn default_window(exp_bits: usize) -> usize {
    let cost = |w: usize| {
        let windows = exp_bits.div_ceil(w) as f64;
        let entries = (1usize << w) as f64;
        exp_bits as f64 + 1.9 * (entries - 2.0 + windows) + entries * windows / 30.0
    };
    (1..=7).min_by(|&a, &b| cost(a).partial_cmp(&cost(b)).unwrap()).unwrap()
}

/// `x = 2x mod p` for `x < p` (`x`, `pe`: `n + 1` limbs, `pe` = p, 0).
fn dbl_mod(x: &mut [u64], pe: &[u64]) {
    let mut top = 0u64;
    for w in x.iter_mut() {
        let v = *w;
        *w = (v << 1) | top;
        top = v >> 63;
    }
    ct_sub_if_ge(x, pe);
}

/// `acc = acc + y mod p` for `acc, y < p` (`acc`, `pe`: `n + 1` limbs).
fn add_mod(acc: &mut [u64], y: &[u64], pe: &[u64]) {
    let mut c = 0u64;
    for j in 0..acc.len() {
        let v = acc[j] as u128 + *y.get(j).unwrap_or(&0) as u128 + c as u128;
        acc[j] = v as u64;
        c = (v >> 64) as u64;
    }
    ct_sub_if_ge(acc, pe);
}

/// The 32-bit-product fold plan of the prime `p` (`mont`, `pe` = `p` with a
/// zero limb on top, `r1` = `R mod p`), in constant time in `p`: the shape
/// from its bit length (public), `2^r R` by masked doublings, `2^(rK)` as a
/// Montgomery power on the public `K`, each row one product by `2^r R` from
/// the previous.
fn fold32_plan(mont: &Mont, pe: &[u64], r1: &[u64], bits: usize, ctx: MontCtx, t: &mut [u64]) -> Fold32Plan {
    let n = mont.n();
    let (r, k) = fold32_shape::shape(bits).expect("a 32-bit fold shape for every prime the kernel takes");
    let mut cr = r1.to_vec();
    cr.push(0);
    for _ in 0..r {
        dbl_mod(&mut cr, pe);
    }
    cr.truncate(n);
    let mut z = r1.to_vec();
    let mut tmp = vec![0u64; n];
    for bit in (0..usize::BITS - k.leading_zeros()).rev() {
        mont.mul_canon(&mut tmp, &z, &z, t);
        std::mem::swap(&mut z, &mut tmp);
        if (k >> bit) & 1 == 1 {
            // public: the digit count
            mont.mul_canon(&mut tmp, &z, &cr, t);
            std::mem::swap(&mut z, &mut tmp);
        }
    }
    let mut one = vec![0u64; n];
    one[0] = 1;
    mont.mul_canon(&mut tmp, &z, &one, t);
    let first = tmp.clone();
    let table = {
        let mut scratch = mont.scratch();
        let next = |row: &[u64]| {
            let mut out = vec![0u64; n];
            let mut s = scratch.clone();
            mont.mul_canon(&mut out, row, &cr, &mut s);
            zeroize(&mut s);
            out
        };
        let table = Fold32Plan::pack_table(r, k, first, next);
        zeroize(&mut scratch);
        table
    };
    for buf in [&mut cr, &mut z, &mut tmp] {
        zeroize(buf);
    }
    Fold32Plan { r, k, table, ctx }
}

/// Which kernel a half runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HalfKernel {
    /// The IFMA fold (only where the CPU has AVX-512 IFMA).
    Ifma,
    /// The fold's portable twin: the IFMA loop's digits one product at a
    /// time (tests and the valgrind check only: about 15x slower than
    /// `Mont` at 1024 bits).
    FoldPortable,
    /// Scalar almost-Montgomery products ([`MontHalfKernel`]).
    Mont,
    /// The 32-bit-product fold with `vpmuludq` (only where the CPU has
    /// AVX-512F; primes of 256 to 4096 bits, else `Mont`).
    Avx512f,
    /// Its portable twin (tests and the valgrind check only).
    Fold32Portable,
    /// The radix-2^50 fold of `Ifma` with FP64 fused multiply-adds (only
    /// where the CPU has AVX2 and FMA; primes of 256 to 4096 bits, else
    /// `Mont`).  Its twin is `FoldPortable`.
    Fma,
}

impl HalfKernel {
    /// The fastest this CPU runs: `Ifma` where it has IFMA, else `Avx512f`
    /// where it has AVX-512F, else `Mont`.
    pub fn best() -> Self {
        if modforge_ring::dispatch::fold_ifma_supported() {
            HalfKernel::Ifma
        } else if modforge_ring::dispatch::supported("avx512f") {
            HalfKernel::Avx512f
        } else if modforge_ring::dispatch::supported("fma") {
            HalfKernel::Fma
        } else {
            HalfKernel::Mont
        }
    }
}

/// A half's kernel on CPUs without IFMA: the values in almost-Montgomery
/// form (`a R mod p`, any `n`-limb value below `R`), squarings and products
/// by [`Mont::amm_sqr`] / [`Mont::amm`] (the MULX/ADX rows where the CPU has
/// them).  Constant time: loop counts depend on `n` only and the only
/// conditional step is the products' masked subtraction.  Holds `p` and
/// `R^2 mod p`, zeroed on drop.
pub struct MontHalfKernel {
    mont: Mont,
    r2: Vec<u64>,
}

impl Kernel for MontHalfKernel {
    fn name(&self) -> &'static str {
        "mont-half"
    }
    fn modulus(&self) -> &[u64] {
        &self.mont.m
    }
    /// `amm(x, R^2) = x R mod p`, below `R`.
    fn enter(&self, x: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.mont.n()];
        let mut t = self.mont.scratch();
        self.mont.amm(&mut out, x, &self.r2, &mut t);
        zeroize(&mut t);
        out
    }
    /// `amm(s, 1) = s / R mod p`, below `p + 1`, then one masked subtraction.
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        let n = self.mont.n();
        let mut one = vec![0u64; n];
        one[0] = 1;
        let mut out = vec![0u64; n];
        let mut t = self.mont.scratch();
        self.mont.mul_canon(&mut out, s, &one, &mut t);
        zeroize(&mut t);
        out
    }
    fn sqr_n_internal(&self, s: &mut [u64], k: u64) {
        let mut t = self.mont.scratch();
        let mut next = vec![0u64; self.mont.n()];
        for _ in 0..k {
            self.mont.amm_sqr(&mut next, s, &mut t);
            s.copy_from_slice(&next);
        }
        zeroize(&mut t);
        zeroize(&mut next);
    }
    fn mul_internal(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let mut out = vec![0u64; self.mont.n()];
        let mut t = self.mont.scratch();
        self.mont.amm(&mut out, a, b, &mut t);
        zeroize(&mut t);
        out
    }
    /// [`pow_windows_generic`] without its allocations: one scratch, one
    /// selected entry and one product buffer for the whole loop (at 1024
    /// bits the per-window allocations and wipes were about a tenth of the
    /// time).  Same masked entry selection, same operations in the same order.
    fn pow_windows(&self, s: &mut [u64], table: &[u64], e: &[u64], windows: usize, w: usize) {
        let len = s.len();
        assert!(windows >= 1 && table.len() == len << w, "pow_windows: table of 2^w entries");
        let mut t = self.mont.scratch();
        let mut sel = vec![0u64; len];
        let mut next = vec![0u64; len];
        ct_select(s, table, len, bits_at(e, (windows - 1) * w, w));
        for j in (0..windows - 1).rev() {
            for _ in 0..w {
                self.mont.amm_sqr(&mut next, s, &mut t);
                s.copy_from_slice(&next);
            }
            let digit = bits_at(e, j * w, w);
            ct_select(&mut sel, table, len, digit);
            // The deliberate leak of the valgrind check (test builds only).
            #[cfg(feature = "ct-leak-test")]
            if digit == 0 {
                continue;
            }
            self.mont.amm(&mut next, s, &sel, &mut t);
            s.copy_from_slice(&next);
        }
        for buf in [&mut t, &mut sel, &mut next] {
            zeroize(buf);
        }
    }
}

impl Drop for MontHalfKernel {
    fn drop(&mut self) {
        zeroize(&mut self.mont.m);
        zeroize(core::slice::from_mut(&mut self.mont.m0inv));
        zeroize(&mut self.r2);
    }
}

/// Everything one prime's half needs, derived once per key (OpenSSL keeps
/// the same in its `BN_MONT_CTX`): the Montgomery constants, the fold table
/// `2^(50(K+r)) mod p` and the kernel.  Secret (it is a function of `p`);
/// zeroed on drop.
pub struct HalfCtx {
    mont: Mont,
    /// `p` with one zero limb on top, for the masked modular additions.
    pe: Vec<u64>,
    /// `R mod p`, `R^2 mod p` (`R = 2^(64n)`).
    r1: Vec<u64>,
    r2: Vec<u64>,
    kernel: Option<Box<dyn Kernel>>,
}

impl HalfCtx {
    /// The context of the odd `p` (limbs, top limb non-zero) on the kernel
    /// `kind` (`Ifma` only where the CPU has it; below 256 bits it falls back
    /// to `FoldPortable`).  Constant time in `p` (see the module doc for what
    /// is public).
    pub fn new(p: &[u64], adx: bool, kind: HalfKernel) -> Self {
        let n = p.len();
        assert!(n >= 1 && p[0] & 1 == 1 && p[n - 1] != 0, "rsa::HalfCtx: p must be odd with a non-zero top limb");
        let mont = Mont::new(p, adx);
        let mut t = mont.scratch();
        let mut pe = p.to_vec();
        pe.push(0);

        // R mod p, 2^64 R mod p, 2^50 R mod p by masked doublings.
        let mut x = vec![0u64; n + 1];
        x[n - 1] = 1;
        for _ in 0..64 {
            dbl_mod(&mut x, &pe);
        }
        let r1 = x[..n].to_vec();
        let mut c50 = x.clone();
        for _ in 0..50 {
            dbl_mod(&mut c50, &pe);
        }
        for _ in 0..64 {
            dbl_mod(&mut x, &pe);
        }
        let mut d64 = x[..n].to_vec();
        c50.truncate(n);
        // R^2 = Montgomery form of 2^(64n): (2^64 R)^n in the Montgomery domain.
        let mut r2 = r1.clone();
        let mut tmp = vec![0u64; n];
        for bit in (0..usize::BITS - n.leading_zeros()).rev() {
            mont.mul_canon(&mut tmp, &r2, &r2, &mut t);
            std::mem::swap(&mut r2, &mut tmp);
            if (n >> bit) & 1 == 1 {
                // public: the limb count
                mont.mul_canon(&mut tmp, &r2, &d64, &mut t);
                std::mem::swap(&mut r2, &mut tmp);
            }
        }

        let bits = 64 * n - p[n - 1].leading_zeros() as usize;
        let fast_width = bits >= modforge_ring::dispatch::MIN_FAST_BITS as usize;
        let kind = match kind {
            HalfKernel::Avx512f if !(fast_width && modforge_ring::dispatch::supported("avx512f")) => HalfKernel::Mont,
            HalfKernel::Fma if !(fast_width && modforge_ring::dispatch::supported("fma")) => HalfKernel::Mont,
            other => other,
        };
        if matches!(kind, HalfKernel::Avx512f | HalfKernel::Fold32Portable) {
            let mut r3 = vec![0u64; n];
            mont.mul_canon(&mut r3, &r2, &r2, &mut t);
            let ctx = MontCtx { m: p.to_vec(), m0inv: mont.m0inv, r2: r2.clone(), r3 };
            let plan = fold32_plan(&mont, &pe, &r1, bits, ctx, &mut t);
            let kernel: Box<dyn Kernel> = match kind {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: avx512f was checked above; p has 256 to 4096 bits (a factor of a
                // modulus of at most 4096 bits), whose shapes are all generated.
                HalfKernel::Avx512f => Box::new(unsafe { modforge_ring::avx512f::Avx512fKernel::from_plan(plan, true) }),
                _ => Box::new(Fold32PortableKernel { plan }),
            };
            for buf in [&mut c50, &mut d64, &mut tmp, &mut t, &mut x] {
                zeroize(buf);
            }
            return HalfCtx { mont, pe, r1, r2, kernel: Some(kernel) };
        }
        if kind == HalfKernel::Mont {
            for buf in [&mut c50, &mut d64, &mut tmp, &mut t, &mut x] {
                zeroize(buf);
            }
            let kernel = MontHalfKernel { mont: mont.clone(), r2: r2.clone() };
            return HalfCtx { mont, pe, r1, r2, kernel: Some(Box::new(kernel)) };
        }
        // The fold plan: K from the bit length of p (public), rows by products.
        let mut k = 1usize;
        while bits + 1 + (usize::BITS - (k + 2).leading_zeros()) as usize > 50 * k {
            k += 1;
        }
        let v = (k + 1).div_ceil(LANES);
        assert!(v <= MAX_VECTORS);
        let h = k + 2;
        // 2^(50K): Montgomery power of 2^50 R, then out of the domain.
        let mut z = r1.clone();
        for bit in (0..usize::BITS - k.leading_zeros()).rev() {
            mont.mul_canon(&mut tmp, &z, &z, &mut t);
            std::mem::swap(&mut z, &mut tmp);
            if (k >> bit) & 1 == 1 {
                mont.mul_canon(&mut tmp, &z, &c50, &mut t);
                std::mem::swap(&mut z, &mut tmp);
            }
        }
        let mut one = vec![0u64; n];
        one[0] = 1;
        mont.mul_canon(&mut tmp, &z, &one, &mut t);
        std::mem::swap(&mut z, &mut tmp);
        let mut table = vec![Lane8::default(); h * v];
        for r in 0..h {
            let mut digits = to_digits(&z, k);
            for (j, &d) in digits.iter().enumerate() {
                table[r * v + j / LANES].0[j % LANES] = d;
            }
            zeroize(&mut digits);
            // z = z * 2^50 mod p = amm(z, 2^50 R)
            mont.mul_canon(&mut tmp, &z, &c50, &mut t);
            std::mem::swap(&mut z, &mut tmp);
        }
        let mut r3 = vec![0u64; n];
        mont.mul_canon(&mut r3, &r2, &r2, &mut t);
        let tail = tail_table(k, v, &table);
        let plan = FoldPlan { k, v, table, tail, ctx: MontCtx { m: p.to_vec(), m0inv: mont.m0inv, r2: r2.clone(), r3 } };
        #[cfg(target_arch = "x86_64")]
        if kind == HalfKernel::Fma {
            for buf in [&mut c50, &mut d64, &mut tmp, &mut z, &mut t, &mut x] {
                zeroize(buf);
            }
            // SAFETY: avx2 and fma were checked above; p has 256 to 4096 bits.
            let kernel = unsafe { modforge_ring::fma::FmaKernel::from_plan(plan, true) };
            return HalfCtx { mont, pe, r1, r2, kernel: Some(Box::new(kernel)) };
        }
        let kernel: Box<dyn Kernel> = if kind == HalfKernel::Ifma && fast_width {
            #[cfg(target_arch = "x86_64")]
            {
                Box::new(modforge_ring::ifma::FoldIfmaKernel { plan })
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                Box::new(FoldPortableKernel { plan })
            }
        } else {
            Box::new(FoldPortableKernel { plan })
        };
        for buf in [&mut c50, &mut d64, &mut tmp, &mut z, &mut t, &mut x] {
            zeroize(buf);
        }
        HalfCtx { mont, pe, r1, r2, kernel: Some(kernel) }
    }

    fn kernel(&self) -> &dyn Kernel {
        self.kernel.as_deref().expect("a kernel until drop")
    }

    /// Limbs of `p`.
    pub fn n(&self) -> usize {
        self.mont.n()
    }

    /// `c mod p`, canonical, for `c` of any limb count: the sum over `n`-limb
    /// chunks `Y_k` of `amm(Y_k, R^(k+1)) = Y_k R^k`, added with masked
    /// subtractions (no division).
    pub fn reduce(&self, c: &[u64]) -> Vec<u64> {
        let n = self.n();
        let mont = &self.mont;
        let mut t = mont.scratch();
        let mut acc = vec![0u64; n + 1];
        let mut rpow = self.r1.clone();
        let mut chunk = vec![0u64; n];
        let mut tmp = vec![0u64; n];
        for (k, ys) in c.chunks(n).enumerate() {
            chunk.fill(0);
            chunk[..ys.len()].copy_from_slice(ys);
            if k > 0 {
                mont.mul_canon(&mut tmp, &rpow, &self.r2, &mut t);
                std::mem::swap(&mut rpow, &mut tmp);
            }
            mont.mul_canon(&mut tmp, &chunk, &rpow, &mut t);
            add_mod(&mut acc, &tmp, &self.pe);
        }
        let out = acc[..n].to_vec();
        for buf in [&mut acc, &mut rpow, &mut chunk, &mut tmp, &mut t] {
            zeroize(buf);
        }
        out
    }

    /// `c^e mod p`, canonical; `e` processed at exactly `exp_bits` bits in
    /// fixed windows of `w` bits ([`default_window`] when `None`).
    pub fn pow(&self, c: &[u64], e: &[u64], exp_bits: usize, w: Option<usize>) -> Vec<u64> {
        let mut run = self.pow_start(c, exp_bits, w);
        self.kernel().pow_windows(&mut run.acc, &run.table, e, run.windows, run.w);
        self.pow_end(run)
    }

    /// The window table of `c` in loop form (`base^0 .. base^(2^w - 1)`) and
    /// a zero accumulator: everything of [`HalfCtx::pow`] before its loop.
    fn pow_start(&self, c: &[u64], exp_bits: usize, w: Option<usize>) -> PowRun {
        let kernel = self.kernel();
        let n = self.n();
        let mut cm = self.reduce(c);
        let w = w.unwrap_or_else(|| default_window(exp_bits));
        assert!((1..=8).contains(&w), "rsa::HalfCtx::pow: window of 1 to 8 bits");
        let entries = 1usize << w;
        let mut one = vec![0u64; n];
        one[0] = 1;
        // Entry 0, 1 in loop form (the fold's digits of 1; R mod p for Mont).
        let first = kernel.enter(&one);
        let lanes = first.len();
        let mut wt = vec![0u64; entries * lanes];
        wt[..lanes].copy_from_slice(&first);
        let mut base = kernel.enter(&cm);
        wt[lanes..2 * lanes].copy_from_slice(&base);
        for i in 2..entries {
            let mut next = kernel.mul_internal(&wt[(i - 1) * lanes..i * lanes], &base);
            wt[i * lanes..(i + 1) * lanes].copy_from_slice(&next);
            zeroize(&mut next);
        }
        #[cfg(target_arch = "x86_64")]
        modforge_ring::ifma::clear_mul_scratch();
        zeroize(&mut cm);
        zeroize(&mut base);
        PowRun { table: wt, acc: vec![0u64; lanes], windows: exp_bits.div_ceil(w).max(1), w }
    }

    /// The canonical result of a run's accumulator; the run's buffers are
    /// zeroed.
    fn pow_end(&self, mut run: PowRun) -> Vec<u64> {
        let kernel = self.kernel();
        let out = match (kernel.fold_plan(), kernel.fold32_plan()) {
            (Some(plan), _) => fold_leave(plan, &self.mont, &self.r2, &run.acc),
            (None, Some(plan)) => fold32_leave(plan, &self.mont, &self.r2, &run.acc),
            (None, None) => kernel.leave(&run.acc),
        };
        zeroize(&mut run.table);
        zeroize(&mut run.acc);
        out
    }

    /// `x * y mod p` for canonical `x`, `y` (constant time).
    pub fn mul_mod(&self, x: &[u64], y: &[u64]) -> Vec<u64> {
        let n = self.n();
        let mut t = self.mont.scratch();
        let mut a = vec![0u64; n];
        self.mont.mul_canon(&mut a, x, &self.r2, &mut t);
        let mut out = vec![0u64; n];
        self.mont.mul_canon(&mut out, &a, y, &mut t);
        zeroize(&mut a);
        zeroize(&mut t);
        out
    }

    /// `(a - b) mod p` for canonical `a`, `b` (constant time).
    pub fn sub_mod(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        let n = self.n();
        let mut out = vec![0u64; n];
        let mut borrow = 0u64;
        for j in 0..n {
            let w = (a[j] as u128).wrapping_sub(b[j] as u128).wrapping_sub(borrow as u128);
            out[j] = w as u64;
            borrow = (w >> 127) as u64;
        }
        let mask = opaque_u64(borrow.wrapping_neg());
        let mut carry = 0u64;
        for j in 0..n {
            let w = out[j] as u128 + (self.mont.m[j] & mask) as u128 + carry as u128;
            out[j] = w as u64;
            carry = (w >> 64) as u64;
        }
        out
    }
}

impl Drop for HalfCtx {
    fn drop(&mut self) {
        for buf in [&mut self.pe, &mut self.r1, &mut self.r2, &mut self.mont.m] {
            zeroize(buf);
        }
        // -p^-1 mod 2^64 gives away p mod 2^64.
        zeroize(core::slice::from_mut(&mut self.mont.m0inv));
        if let Some(kernel) = self.kernel.take() {
            if let Some(mut plan) = kernel.into_fold_plan() {
                for lane in plan.table.iter_mut().chain(plan.tail.iter_mut()) {
                    zeroize(&mut lane.0);
                }
                zeroize(&mut plan.ctx.m);
                zeroize(core::slice::from_mut(&mut plan.ctx.m0inv));
                zeroize(&mut plan.ctx.r2);
                zeroize(&mut plan.ctx.r3);
            }
        }
    }
}

/// One exponentiation between [`HalfCtx::pow_start`] and
/// [`HalfCtx::pow_end`]: the secret window table, the accumulator, and the
/// window count and width.
struct PowRun {
    table: Vec<u64>,
    acc: Vec<u64>,
    windows: usize,
    w: usize,
}

/// One half: `c^e mod p`, canonical.  `c` has any number of limbs, `e` is
/// processed at exactly `exp_bits` bits, on the kernel `kind`.
pub fn half(c: &[u64], p: &[u64], e: &[u64], exp_bits: usize, adx: bool, kind: HalfKernel) -> Vec<u64> {
    HalfCtx::new(p, adx, kind).pow(c, e, exp_bits, None)
}

/// `a * b` (schoolbook, fixed trip counts), `a.len() + b.len()` limbs.
fn mul_wide(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; a.len() + b.len()];
    for (i, &ai) in a.iter().enumerate() {
        let mut carry = 0u64;
        for (j, &bj) in b.iter().enumerate() {
            let w = out[i + j] as u128 + (ai as u128) * (bj as u128) + carry as u128;
            out[i + j] = w as u64;
            carry = (w >> 64) as u64;
        }
        out[i + b.len()] = carry;
    }
    out
}

/// A private key prepared once (seed 004 Sec. 3.1: CRT): both halves'
/// contexts, Garner's constant `qinv R mod p`, and a kernel for the public
/// check `x^e mod n`.  Zeroed on drop.
pub struct RsaCtx {
    hp: HalfCtx,
    hq: HalfCtx,
    q: Vec<u64>,
    /// `qinv * R mod p` (Montgomery form of `q^-1 mod p`).
    qinv_r: Vec<u64>,
    /// The public side: `n`, `e` and a kernel modulo `n`.
    n: Vec<u64>,
    e: Vec<u64>,
    n_kernel: Box<dyn Kernel>,
}

/// What [`RsaCtx::private`] hands back.
pub enum Private {
    /// The checked result `c^d mod n` (`np + nq` limbs).
    Ok(Vec<u64>),
    /// The public-exponent check failed: a fault; no value is released.
    Fault,
}

impl RsaCtx {
    /// `p`, `q` odd (limbs, top limbs non-zero), `qinv = q^-1 mod p`
    /// (canonical, `p`'s limb count), `e` the public exponent.
    pub fn new(p: &[u64], q: &[u64], qinv: &[u64], e: &[u64]) -> Self {
        Self::on(p, q, qinv, e, HalfKernel::best())
    }

    /// As [`RsaCtx::new`], on the half kernel `kind` (the tests run every
    /// kernel the CPU has; `Ifma` and `Avx512f` only where it has them).
    pub fn on(p: &[u64], q: &[u64], qinv: &[u64], e: &[u64], kind: HalfKernel) -> Self {
        let adx = modforge_ring::dispatch::supported("adx");
        let hp = HalfCtx::new(p, adx, kind);
        let hq = HalfCtx::new(q, adx, kind);
        let mut t = hp.mont.scratch();
        let mut qinv_r = vec![0u64; hp.n()];
        hp.mont.mul_canon(&mut qinv_r, qinv, &hp.r2, &mut t);
        zeroize(&mut t);
        let mut n = mul_wide(p, q);
        while n.len() > 1 && n[n.len() - 1] == 0 {
            n.pop();
        }
        let nbits = 64 * n.len() as u64 - n[n.len() - 1].leading_zeros() as u64;
        // The check runs on public data: any correct backend; the fastest here.
        let name = if modforge_ring::dispatch::supported("ifma") && nbits >= modforge_ring::dispatch::MIN_FAST_BITS {
            "ifma"
        } else if modforge_ring::dispatch::supported("adx") && nbits >= modforge_ring::dispatch::MIN_FAST_BITS {
            "adx"
        } else {
            "portable"
        };
        let n_kernel = modforge_ring::dispatch::build(name, &n).expect("a kernel for n = p*q");
        let mut e = e.to_vec();
        while e.len() > 1 && e[e.len() - 1] == 0 {
            e.pop();
        }
        RsaCtx { hp, hq, q: q.to_vec(), qinv_r, n, e, n_kernel }
    }

    /// Limbs of `n`.
    pub fn n_limbs(&self) -> usize {
        self.n.len()
    }

    /// `p` and `q` as limbs.
    pub fn p_limbs(&self) -> &[u64] {
        &self.hp.mont.m
    }
    pub fn q_limbs(&self) -> &[u64] {
        &self.q
    }

    /// `(c^dp mod p, c^dq mod q)`, exponents processed at `exp_bits` bits.
    /// Both halves run at once where the kernels pair
    /// ([`Kernel::pow_windows_pair`]: `ifma` with `p` and `q` of one shape,
    /// e.g. every 2048-bit key), else one after the other.
    pub fn halves(&self, c: &[u64], dp: &[u64], dq: &[u64], exp_bits: usize) -> (Vec<u64>, Vec<u64>) {
        let mut rp = self.hp.pow_start(c, exp_bits, None);
        let mut rq = self.hq.pow_start(c, exp_bits, None);
        debug_assert!(rp.windows == rq.windows && rp.w == rq.w);
        let (kp, kq) = (self.hp.kernel(), self.hq.kernel());
        let paired = kp.pow_windows_pair(
            kq, &mut rp.acc, &rp.table, dp, &mut rq.acc, &rq.table, dq, rp.windows, rp.w,
        );
        if !paired {
            kp.pow_windows(&mut rp.acc, &rp.table, dp, rp.windows, rp.w);
            kq.pow_windows(&mut rq.acc, &rq.table, dq, rq.windows, rq.w);
        }
        (self.hp.pow_end(rp), self.hq.pow_end(rq))
    }

    /// Garner: the `x < n` with `x = xp (mod p)`, `x = xq (mod q)`, as
    /// `xq + q * ((xp - xq) qinv mod p)`, in constant time (`np + nq` limbs).
    pub fn recombine(&self, xp: &[u64], xq: &[u64]) -> Vec<u64> {
        let mut xqp = self.hp.reduce(xq);
        let mut diff = self.hp.sub_mod(xp, &xqp);
        let mut t = self.hp.mont.scratch();
        let mut h = vec![0u64; self.hp.n()];
        // amm(diff, qinv R) = diff * qinv mod p (< 2p), then canonical.
        self.hp.mont.mul_canon(&mut h, &diff, &self.qinv_r, &mut t);
        let mut x = mul_wide(&self.q, &h);
        let mut carry = 0u64;
        for j in 0..x.len() {
            let add = if j < xq.len() { xq[j] } else { 0 };
            let w = x[j] as u128 + add as u128 + carry as u128;
            x[j] = w as u64;
            carry = (w >> 64) as u64;
        }
        for buf in [&mut xqp, &mut diff, &mut t, &mut h] {
            zeroize(buf);
        }
        x
    }

    /// Whether `x^e mod n == c` (public data: `x` is the result to release).
    pub fn check(&self, x: &[u64], c: &[u64]) -> bool {
        let nl = self.n.len();
        if x[nl..].iter().any(|&w| w != 0) || c[nl..].iter().any(|&w| w != 0) {
            return false;
        }
        let (x, c) = (&x[..nl], &c[..nl]);
        // x < n (a fault could break the bound).
        let mut borrow = 0u64;
        for j in 0..nl {
            let w = (x[j] as u128).wrapping_sub(self.n[j] as u128).wrapping_sub(borrow as u128);
            borrow = (w >> 127) as u64;
        }
        if borrow == 0 {
            return false;
        }
        let k = &*self.n_kernel;
        let mut s = k.enter(x);
        let base = s.clone();
        let top = 64 * self.e.len() - self.e[self.e.len() - 1].leading_zeros() as usize;
        for bit in (0..top.saturating_sub(1)).rev() {
            k.sqr_n_internal(&mut s, 1);
            if (self.e[bit / 64] >> (bit % 64)) & 1 == 1 {
                s = k.mul_internal(&s, &base);
            }
        }
        let y = if top == 0 {
            let mut one = vec![0u64; nl];
            one[0] = 1;
            one
        } else {
            k.leave(&s)
        };
        y == c
    }

    /// The whole private operation: halves, Garner, the public check.
    /// `fault` (tests only) flips one bit of the `p` (1) or `q` (2) half
    /// before recombination, to show that the check withholds the value.
    pub fn private(&self, c: &[u64], dp: &[u64], dq: &[u64], exp_bits: usize, fault: u8) -> Private {
        let (mut xp, mut xq) = self.halves(c, dp, dq, exp_bits);
        match fault {
            1 => xp[0] ^= 1,
            2 => xq[0] ^= 1,
            _ => {}
        }
        let mut x = self.recombine(&xp, &xq);
        zeroize(&mut xp);
        zeroize(&mut xq);
        if self.check(&x, c) {
            Private::Ok(x)
        } else {
            zeroize(&mut x);
            Private::Fault
        }
    }
}

impl Drop for RsaCtx {
    fn drop(&mut self) {
        zeroize(&mut self.q);
        zeroize(&mut self.qinv_r);
    }
}

/// Both halves: `(c^dp mod p, c^dq mod q)`, one after the other.
pub fn crt_halves(
    c: &[u64],
    p: &[u64],
    dp: &[u64],
    q: &[u64],
    dq: &[u64],
    exp_bits: usize,
) -> (Vec<u64>, Vec<u64>) {
    let adx = modforge_ring::dispatch::supported("adx");
    let kind = HalfKernel::best();
    let xp = half(c, p, dp, exp_bits, adx, kind);
    let xq = half(c, q, dq, exp_bits, adx, kind);
    (xp, xq)
}

#[cfg(test)]
mod ct_tests;
