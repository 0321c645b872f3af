//! Unit tests of the backends against `num-bigint`: every backend this CPU
//! runs, named edge operands first, then seeded random ones; canary words
//! around outputs and scratch; aliasing (in-place squaring, `mul(x, x)`);
//! the fold's redundant bounds from worst-case digit vectors; and the IFMA
//! kernel's digits against its portable twin, bit for bit.

use num_bigint::BigUint;

use crate::dispatch;
use crate::fold::{self, FoldPlan, LANES};
#[cfg(target_arch = "x86_64")]
use crate::fold::FoldPortableKernel;
use crate::kernel::{self, MontCtx};
#[cfg(target_arch = "x86_64")]
use crate::kernel::Kernel;
use crate::portable;

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn limbs(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.next()).collect()
    }
}

fn big(x: &[u64]) -> BigUint {
    let mut bytes = Vec::with_capacity(8 * x.len());
    for w in x {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    BigUint::from_bytes_le(&bytes)
}

fn limbs(x: &BigUint, n: usize) -> Vec<u64> {
    let mut v = x.to_u64_digits();
    assert!(v.len() <= n);
    v.resize(n, 0);
    v
}

/// An odd modulus of exactly `bits` bits.
fn modulus(rng: &mut Rng, bits: usize) -> Vec<u64> {
    let n = bits.div_ceil(64);
    let mut m = rng.limbs(n);
    let top = bits - 64 * (n - 1);
    if top < 64 {
        m[n - 1] &= (1u64 << top) - 1;
    }
    m[n - 1] |= 1u64 << (top - 1);
    m[0] |= 1;
    m
}

/// Says that a test of a CPU-specific kernel did not run here, and why.
/// libtest has no run-time skip: the line goes to the test's captured output,
/// which `make test` shows (`-- --show-output`), so a skip is never a silent
/// "ok".  `this_cpu_runs_these_backends` prints the summary.
pub(crate) fn skipped(why: &str) {
    println!("SKIPPED on this CPU: {why}");
}

/// What the backend tests exercise on this CPU, and what they cannot: the
/// one line `make test` prints for the Rust side.
#[test]
fn this_cpu_runs_these_backends() {
    let (ran, not): (Vec<&str>, Vec<&str>) = dispatch::BACKENDS.iter().partition(|b| dispatch::supported(b));
    let features: Vec<String> =
        dispatch::cpu_features().iter().map(|(f, on)| format!("{f}{}", if *on { "" } else { " no" })).collect();
    println!("Rust backend tests ran on: {}; not on this CPU: {} ({})", ran.join(", "),
             if not.is_empty() { "none".to_string() } else { not.join(", ") }, features.join(", "));
    assert!(ran.contains(&"portable"), "the portable backend runs everywhere");
}

fn supported_backends() -> Vec<&'static str> {
    dispatch::BACKENDS
        .iter()
        .copied()
        .filter(|b| dispatch::supported(b))
        .collect()
}

/// Named operands: 0, 1, 2, N-1, N-2, (N-1)/2, all-ones low limbs, powers of
/// two near N, R mod N.
fn edge_operands(m: &[u64]) -> Vec<BigUint> {
    let n = m.len();
    let bm = big(m);
    let one = BigUint::from(1u32);
    let bits = bm.bits() as usize;
    let mut ops = vec![
        BigUint::from(0u32),
        one.clone(),
        BigUint::from(2u32),
        &bm - 1u32,
        &bm - 2u32,
        &bm >> 1,
    ];
    for k in [1, n / 2, n.saturating_sub(1)] {
        if k > 0 {
            ops.push(((&one << (64 * k)) - 1u32) % &bm);
        }
    }
    ops.push((&one << (bits - 1)) % &bm);
    ops.push(((&one << bits) - 1u32) % &bm);
    ops.push((&one << (64 * n)) % &bm);
    ops
}

fn check_backend(name: &str, m: &[u64], ops: &[BigUint], what: &str) {
    let kern = dispatch::build(name, m).unwrap_or_else(|e| panic!("{name}: {e}"));
    let n = m.len();
    let bm = big(m);
    for (i, a) in ops.iter().enumerate() {
        let al = limbs(a, n);
        let b = &ops[(i * 7 + 3) % ops.len()];
        let bl = limbs(b, n);
        let ctx = || {
            format!(
                "{what}: backend {name}, {} bits, a={a:#x}, b={b:#x}",
                bm.bits()
            )
        };
        assert_eq!(
            big(&kernel::mul(kern.as_ref(), &al, &bl)),
            (a * b) % &bm,
            "mul {}",
            ctx()
        );
        for k in [0u64, 1, 2, 3, 17] {
            let want = a.modpow(&(BigUint::from(1u32) << k), &bm);
            assert_eq!(
                big(&kernel::sqr_n(kern.as_ref(), &al, k)),
                want,
                "sqr_n k={k} {}",
                ctx()
            );
        }
        // A full-width exponent for every operand; for the first, every window
        // width (`kernel::pow_window`: 1 bit up to 6) and windows that
        // straddle limbs.
        let full = (b >> 3u32) + 5u32;
        let short = [1u64, 2, 3, 6, 255, 65537, u64::MAX].map(BigUint::from);
        let wide = [(BigUint::from(1u32) << 128u32) - 1u32, (BigUint::from(3u32) << 640u32) + 1u32];
        let exponents: Vec<&BigUint> =
            if i == 0 { short.iter().chain(&wide).chain([&full]).collect() } else { vec![&full] };
        for e in exponents {
            assert_eq!(
                big(&kernel::pow(kern.as_ref(), &al, &e.to_u64_digits())),
                a.modpow(e, &bm),
                "pow e={e:#x} {}",
                ctx()
            );
        }
    }
}

#[test]
fn every_backend_edges_and_random_at_the_standard_widths() {
    let mut rng = Rng(0x5EED_0001);
    for bits in [256usize, 512, 1000, 1024, 1536, 2047, 2048, 3072, 4096] {
        let m = modulus(&mut rng, bits);
        let mut ops = edge_operands(&m);
        let bm = big(&m);
        for _ in 0..4 {
            ops.push(big(&rng.limbs(m.len() + 1)) % &bm);
        }
        for name in supported_backends() {
            check_backend(name, &m, &ops, &format!("seed 0x5EED0001 bits {bits}"));
        }
    }
}

#[test]
fn special_moduli() {
    // All-ones limbs, 2^k + 1, a low limb of 1 with all-ones above.
    for n in [4usize, 8, 16, 32, 64] {
        let mut all_ones = vec![u64::MAX; n];
        let mut two_k_plus_1 = vec![0u64; n];
        two_k_plus_1[0] = 1;
        two_k_plus_1[n - 1] = 1 << 63;
        let mut low_one = vec![u64::MAX; n];
        low_one[0] = 1;
        all_ones[0] |= 1;
        for m in [all_ones, two_k_plus_1, low_one] {
            let ops = edge_operands(&m);
            for name in supported_backends() {
                check_backend(name, &m, &ops, "special modulus");
            }
        }
    }
}

#[test]
fn every_width_from_256_to_4096_bits() {
    // One modulus per width step (all generated IFMA kernels are reached).
    let mut rng = Rng(0x5EED_0002);
    let mut bits = 256;
    while bits <= 4096 {
        let m = modulus(&mut rng, bits);
        let bm = big(&m);
        let x = big(&rng.limbs(m.len())) % &bm;
        let want = x.modpow(&(BigUint::from(1u32) << 40u32), &bm);
        for name in supported_backends() {
            let kern = dispatch::build(name, &m).unwrap();
            let got = kernel::sqr_n(kern.as_ref(), &limbs(&x, m.len()), 40);
            assert_eq!(
                big(&got),
                want,
                "backend {name}, {bits} bits, seed 0x5EED0002"
            );
        }
        bits += 37;
    }
}

#[test]
fn small_moduli_on_the_portable_backends() {
    for m in (3u64..200).step_by(2) {
        for name in ["portable", "fold-portable"] {
            let kern = dispatch::build(name, &[m]).unwrap();
            for x in 0..m {
                let got = kernel::sqr_n(kern.as_ref(), &[x], 3)[0];
                let want = (0..3).fold(x as u128, |a, _| a * a % m as u128) as u64;
                assert_eq!(got, want, "{name}: m={m} x={x}");
            }
        }
    }
}

#[test]
fn build_errors_name_the_parameter() {
    let e = dispatch::build("nope", &[7]).err().unwrap();
    assert_eq!(e.param, "backend");
    assert!(e.problem.contains("unknown native backend"));
    let e = dispatch::build("portable", &[8]).err().unwrap();
    assert_eq!((e.param, e.problem.contains("odd")), ("modulus", true));
    let mut wide = vec![u64::MAX; 65];
    wide[0] = 1;
    let e = dispatch::build("portable", &wide).err().unwrap();
    assert_eq!(
        e.to_string(),
        "modulus: backend \"portable\" takes moduli of 2 to 4096 bits, got 4160 bits"
    );
    for fast in ["adx", "ifma", "ifma-mont", "avx2"] {
        // The width is checked before the CPU, so the message is the same
        // on every machine.
        let e = dispatch::build(fast, &[0xFFFF_FFFF_FFFF_FFC5])
            .err()
            .unwrap();
        assert_eq!(e.param, "modulus");
        assert!(e.problem.contains("256 to 4096 bits"), "{e}");
    }
}

/// Canary words around the output and scratch of the slice kernels, and
/// dirty scratch on entry.
#[test]
fn portable_kernels_stay_inside_their_buffers() {
    const CANARY: u64 = 0xC0FF_EE00_DEAD_BEEF;
    let mut rng = Rng(0x5EED_0003);
    for n in [1usize, 2, 5, 16, 33, 64] {
        let m = modulus(&mut rng, 64 * n);
        let ctx = MontCtx::new(&m);
        let bm = big(&m);
        let rinv = (BigUint::from(1u32) << (64 * n)).modinv(&bm).unwrap();
        for _ in 0..8 {
            let a = rng.limbs(n); // any value < R
            let b = rng.limbs(n);
            let mut out = vec![CANARY; n + 2];
            let mut t = vec![CANARY; 2 * n + 3];
            for w in &mut t[1..2 * n + 2] {
                *w = rng.next();
            }
            portable::amm_sqr(&mut out[1..n + 1], &a, &m, ctx.m0inv, &mut t[1..2 * n + 2]);
            assert_eq!(
                (out[0], out[n + 1], t[0], t[2 * n + 2]),
                (CANARY, CANARY, CANARY, CANARY),
                "amm_sqr n={n}"
            );
            let r = big(&out[1..n + 1]);
            assert_eq!(
                r.clone() % &bm,
                (big(&a) * big(&a) * &rinv) % &bm,
                "amm_sqr value n={n}"
            );
            let mut out2 = vec![CANARY; n + 2];
            let mut t2 = vec![CANARY; n + 4];
            portable::amm_mul(
                &mut out2[1..n + 1],
                &a,
                &b,
                &m,
                ctx.m0inv,
                &mut t2[1..n + 3],
            );
            assert_eq!(
                (out2[0], out2[n + 1], t2[0], t2[n + 3]),
                (CANARY, CANARY, CANARY, CANARY),
                "amm_mul n={n}"
            );
            assert_eq!(
                big(&out2[1..n + 1]) % &bm,
                (big(&a) * big(&b) * &rinv) % &bm,
                "amm_mul value n={n}"
            );
            let mut out3 = vec![CANARY; n + 2];
            portable::redc_canonical(&mut out3[1..n + 1], &a, &m, ctx.m0inv, &mut t[1..2 * n + 2]);
            assert_eq!((out3[0], out3[n + 1]), (CANARY, CANARY), "redc n={n}");
            assert_eq!(
                big(&out3[1..n + 1]),
                (big(&a) * &rinv) % &bm,
                "redc value n={n}"
            );
        }
    }
}

/// The in-place loop writes exactly its `s` slice; `mul(x, x)` (the same
/// slice twice) equals a squaring.
#[test]
fn kernels_in_place_and_aliased_operands() {
    const CANARY: u64 = 0x5A5A_A5A5_0F0F_F0F0;
    let mut rng = Rng(0x5EED_0004);
    for bits in [256usize, 1024, 2048, 4096] {
        let m = modulus(&mut rng, bits);
        let bm = big(&m);
        for name in supported_backends() {
            let kern = dispatch::build(name, &m).unwrap();
            let x = limbs(&(big(&rng.limbs(m.len())) % &bm), m.len());
            let s = kern.enter(&x);
            let mut buf = vec![CANARY; s.len() + 2];
            buf[1..s.len() + 1].copy_from_slice(&s);
            kern.sqr_n_internal(&mut buf[1..s.len() + 1], 5);
            assert_eq!(
                (buf[0], buf[s.len() + 1]),
                (CANARY, CANARY),
                "{name} {bits}: canary"
            );
            let got = kern.leave(&buf[1..s.len() + 1]);
            assert_eq!(
                big(&got),
                big(&x).modpow(&BigUint::from(32u32), &bm),
                "{name} {bits}"
            );
            let sq = kern.mul_internal(&s, &s);
            let mut s1 = s.clone();
            kern.sqr_n_internal(&mut s1, 1);
            assert_eq!(
                kern.leave(&sq),
                kern.leave(&s1),
                "{name} {bits}: mul(x, x) vs sqr"
            );
            // In place: a <- a * b with canaries around a, then a <- a * a.
            let y = limbs(&(big(&rng.limbs(m.len())) % &bm), m.len());
            let t = kern.enter(&y);
            let mut buf = vec![CANARY; s.len() + 2];
            buf[1..s.len() + 1].copy_from_slice(&s);
            kern.mul_assign(&mut buf[1..s.len() + 1], &t);
            assert_eq!((buf[0], buf[s.len() + 1]), (CANARY, CANARY), "{name} {bits}: mul_assign canary");
            assert_eq!(buf[1..s.len() + 1], kern.mul_internal(&s, &t)[..], "{name} {bits}: mul_assign");
            assert_eq!(
                big(&kern.leave(&buf[1..s.len() + 1])),
                big(&x) * big(&y) % &bm,
                "{name} {bits}: mul_assign value"
            );
            let mut a = s.clone();
            let a_copy = a.clone();
            kern.mul_assign(&mut a, &a_copy);
            assert_eq!(kern.leave(&a), kern.leave(&s1), "{name} {bits}: mul_assign(x, x) vs sqr");
        }
    }
}

/// The backends whose loop forms are the radix-2^50 fold's digits
/// (`ifma`, `fma`) that this CPU runs; prints a SKIPPED line for the others.
#[cfg(target_arch = "x86_64")]
fn fold_digit_backends() -> Vec<&'static str> {
    let mut out = Vec::new();
    for (name, needs) in [("ifma", "no AVX-512 IFMA"), ("fma", "no AVX2 + FMA")] {
        if dispatch::supported(name) {
            out.push(name);
        } else {
            skipped(&format!("{name} digits against the fold's twin: {needs}"));
        }
    }
    out
}

/// The largest loop value of the radix-2^50 fold for the modulus `m` and
/// `l` digits: every digit below `K = l - 1` at its (I1) maximum, digit `K`
/// as large as (I2) leaves room for.
#[cfg(target_arch = "x86_64")]
fn largest_fold_value(m: &[u64], l: usize) -> Vec<u64> {
    let (k, lanes) = (l - 1, l.div_ceil(LANES) * LANES);
    let max_digit = (1u64 << 50) + (1 << 14) - 1;
    let limit = BigUint::from(1u32) << (50 * l);
    let mut extreme = vec![0u64; lanes];
    extreme[..k].fill(max_digit);
    let low = big(&fold::from_digits(&extreme, 3 * m.len()));
    let room = (&limit - 1u32 - &low) >> (50 * k);
    extreme[k] = room.to_u64_digits().first().copied().unwrap_or(0).min(max_digit);
    assert!(big(&fold::from_digits(&extreme, 3 * m.len())) < limit);
    extreme
}

/// The fold backends and their portable twin produce the same redundant
/// digits step after step (not just the same residues).
#[test]
#[cfg(target_arch = "x86_64")]
fn fold_backend_digits_match_the_portable_twin() {
    for name in fold_digit_backends() {
        let mut rng = Rng(0x5EED_0005);
        for bits in [256usize, 300, 511, 1024, 1500, 2048, 2900, 3072, 4000, 4096] {
            let m = modulus(&mut rng, bits);
            let twin = FoldPortableKernel::new(&m);
            let fast = dispatch::build(name, &m).unwrap();
            let x = limbs(&(big(&rng.limbs(m.len())) % big(&m)), m.len());
            let mut a = twin.enter(&x);
            let mut b = fast.enter(&x);
            assert_eq!(a, b);
            for step in 0..20 {
                twin.sqr_n_internal(&mut a, 1);
                fast.sqr_n_internal(&mut b, 1);
                assert_eq!(a, b, "{name}: {bits} bits, step {step}: digits differ (seed 0x5EED0005)");
            }
            let mut a5 = a.clone();
            let mut b5 = b.clone();
            twin.sqr_n_internal(&mut a5, 5);
            fast.sqr_n_internal(&mut b5, 5);
            assert_eq!(a5, b5, "{name}: {bits} bits: five squarings in one call differ");
            let y = twin.enter(&limbs(&(big(&rng.limbs(m.len())) % big(&m)), m.len()));
            assert_eq!(
                twin.mul_internal(&a, &y),
                fast.mul_internal(&b, &y),
                "{name}: {bits} bits: mul digits differ (seed 0x5EED0005)"
            );
        }
    }
}

/// The FP64-FMA kernel at every generated digit count, bit for bit against
/// the portable twin: squarings and products of random loop values and of
/// the largest one the invariants allow (every digit below K at its (I1)
/// maximum, digit K filling what (I2) leaves), where the exact split's
/// bounds are tightest (products near 2^104, column sums near 2^60).
#[test]
#[cfg(target_arch = "x86_64")]
fn fma_matches_the_twin_at_every_digit_count_and_extreme_states() {
    if !dispatch::supported("fma") {
        skipped("fma at every digit count: no AVX2 + FMA");
        return;
    }
    let mut rng = Rng(0x5EED_000F);
    let mut seen = std::collections::BTreeSet::new();
    for bits in (256usize..=4096).step_by(23).chain([4096]) {
        let m = modulus(&mut rng, bits);
        let twin = FoldPortableKernel::new(&m);
        let l = FoldPlan::new(&m).l();
        if !seen.insert(l) {
            continue;
        }
        let fast = dispatch::build("fma", &m).unwrap();
        let extreme = largest_fold_value(&m, l);
        let random = |rng: &mut Rng| twin.enter(&limbs(&(big(&rng.limbs(m.len())) % big(&m)), m.len()));
        let operands = [random(&mut rng), random(&mut rng), extreme];
        for a in &operands {
            for b in &operands {
                assert_eq!(
                    fast.mul_internal(a, b),
                    twin.mul_internal(a, b),
                    "L = {l} ({bits} bits): fma product differs from the twin (seed 0x5EED000F)"
                );
            }
            let (mut s1, mut s2) = (a.clone(), a.clone());
            fast.sqr_n_internal(&mut s1, 3);
            twin.sqr_n_internal(&mut s2, 3);
            assert_eq!(s1, s2, "L = {l} ({bits} bits): fma squarings differ from the twin (seed 0x5EED000F)");
        }
    }
    assert_eq!(seen, (7..=84).collect(), "every generated digit count exercised");
}

/// The generated products (`mul_high_L` / `mul_low_L`) at every digit count
/// against the loop form and the portable twin, bit for bit, on random
/// operands and on the largest loop value the invariants allow (every digit
/// below K at its (I1) maximum, digit K filling what (I2) leaves), in place
/// and not.
#[test]
#[cfg(target_arch = "x86_64")]
fn ifma_generated_products_match_the_loop_and_the_twin_at_every_digit_count() {
    use std::sync::atomic::Ordering::Relaxed;
    if !dispatch::supported("ifma") {
        skipped("no AVX-512 IFMA");
        return;
    }
    let mut rng = Rng(0x5EED_0009);
    let mut seen = std::collections::BTreeSet::new();
    for bits in (256usize..=4096).step_by(23).chain([4096]) {
        let m = modulus(&mut rng, bits);
        let twin = FoldPortableKernel::new(&m);
        let l = FoldPlan::new(&m).l();
        if !seen.insert(l) {
            continue;
        }
        let fast = dispatch::build("ifma", &m).unwrap();
        let extreme = largest_fold_value(&m, l);
        let random = |rng: &mut Rng| twin.enter(&limbs(&(big(&rng.limbs(m.len())) % big(&m)), m.len()));
        let operands = [random(&mut rng), random(&mut rng), extreme.clone()];
        for a in &operands {
            for b in &operands {
                let want = twin.mul_internal(a, b);
                let generated = fast.mul_internal(a, b);
                crate::ifma::LOOP_PRODUCT.store(true, Relaxed);
                let looped = fast.mul_internal(a, b);
                crate::ifma::LOOP_PRODUCT.store(false, Relaxed);
                assert_eq!(generated, want, "L = {l} ({bits} bits): generated product differs from the twin");
                assert_eq!(looped, want, "L = {l} ({bits} bits): loop product differs from the twin");
                let mut in_place = a.clone();
                fast.mul_assign(&mut in_place, b);
                assert_eq!(in_place, want, "L = {l} ({bits} bits): in-place product differs");
            }
        }
    }
    assert_eq!(seen, (7..=84).collect(), "every generated digit count exercised");
}

/// The fold's invariants from the worst states they allow: every digit at
/// its largest (I1) value with the value just below 2^(50L) (I2), and other
/// extreme patterns.  Each step must keep (I1), (I2) and the residue.
#[test]
fn fold_bounds_hold_from_extreme_states() {
    let mut rng = Rng(0x5EED_0006);
    let max_digit = (1u64 << 50) + (1 << 14) - 1;
    for bits in [256usize, 1024, 1049, 1050, 2048, 3072, 4096] {
        let m = modulus(&mut rng, bits);
        let plan = FoldPlan::new(&m);
        let (k, l, lanes) = (plan.k, plan.l(), LANES * plan.v);
        let bm = big(&m);
        let limit = BigUint::from(1u32) << (50 * l);
        let mut states: Vec<Vec<u64>> = Vec::new();
        // All digits maximal below K, digit K as large as (I2) allows.
        let mut s = vec![0u64; lanes];
        s[..k].fill(max_digit);
        let low = big(&fold::from_digits(&s, 3 * m.len()));
        let room = (&limit - 1u32 - &low) >> (50 * k);
        s[k] = room
            .to_u64_digits()
            .first()
            .copied()
            .unwrap_or(0)
            .min(max_digit);
        states.push(s.clone());
        // Alternating extremes, and a single maximal top digit.
        let mut alt = vec![0u64; lanes];
        for j in 0..k {
            alt[j] = if j % 2 == 0 { max_digit } else { 0 };
        }
        states.push(alt);
        let mut top = vec![0u64; lanes];
        top[k] = s[k];
        states.push(top);
        for _ in 0..4 {
            let mut r = vec![0u64; lanes];
            for j in 0..k {
                r[j] = rng.next() % (max_digit + 1);
            }
            states.push(r);
        }
        for st in states {
            let value = big(&fold::from_digits(&st, 3 * m.len()));
            assert!(value < limit);
            let next = plan.fold_columns(&fold::square_columns(&st, lanes));
            for (j, &d) in next.iter().enumerate() {
                assert!(
                    d <= max_digit,
                    "{bits} bits: digit {j} = {d:#x} breaks (I1)"
                );
                if j > k {
                    assert_eq!(d, 0, "{bits} bits: digit {j} above K");
                }
            }
            let nv = big(&fold::from_digits(&next, 3 * m.len()));
            assert!(nv < limit, "{bits} bits: (I2) broken");
            assert_eq!(
                nv % &bm,
                (&value * &value) % &bm,
                "{bits} bits: wrong residue"
            );
            #[cfg(target_arch = "x86_64")]
            if dispatch::supported("ifma") {
                let fast = dispatch::build("ifma", &m).unwrap();
                let mut f = st.clone();
                fast.sqr_n_internal(&mut f, 1);
                assert_eq!(
                    f, next,
                    "{bits} bits: IFMA digits differ from the twin on an extreme state"
                );
            }
        }
    }
}

/// A long run against BigUint, and the loop invariants on the way.
#[test]
fn long_run_matches_biguint() {
    let mut rng = Rng(0x5EED_0007);
    for bits in [1024usize, 2048] {
        let m = modulus(&mut rng, bits);
        let bm = big(&m);
        let mut want = BigUint::from(2u32);
        let t = 1u64 << 12;
        for _ in 0..t {
            want = (&want * &want) % &bm;
        }
        let two = limbs(&BigUint::from(2u32), m.len());
        for name in supported_backends() {
            let kern = dispatch::build(name, &m).unwrap();
            assert_eq!(
                big(&kernel::sqr_n(kern.as_ref(), &two, t)),
                want,
                "{name} {bits} bits"
            );
        }
    }
}

/// Timings of the pieces of a proof's multi-exponentiation (ignored; run with
/// `cargo test --release bench_multiexp -- --ignored --nocapture`).
#[test]
#[ignore]
fn bench_multiexp() {
    use std::time::Instant;
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for (name, bits) in [("adx", 2048), ("ifma", 1024), ("ifma", 2048), ("ifma", 4096)] {
        if !supported_backends().contains(&name) {
            continue;
        }
        let m = modulus(&mut rng, bits);
        let k = dispatch::build(name, &m).unwrap();
        let x = k.enter(&rng.limbs(m.len()));
        let count = (200_000 * 2048 * 2048 / (bits * bits)) as u64;
        let mut s = x.clone();
        let t = Instant::now();
        k.sqr_n_internal(&mut s, count);
        let sq = t.elapsed().as_secs_f64() * 1e9 / count as f64;
        let y = k.enter(&rng.limbs(m.len()));
        let mut a = x.clone();
        let t = Instant::now();
        for _ in 0..count {
            k.mul_assign(&mut a, &y);
        }
        let mul = t.elapsed().as_secs_f64() * 1e9 / count as f64;
        let n = 16384;
        let bases: Vec<Vec<u64>> = (0..n).map(|_| rng.limbs(m.len())).collect();
        let bases: Vec<Vec<u64>> = bases.iter().map(|b| limbs(&(big(b) % big(&m)), m.len())).collect();
        let exps: Vec<Vec<u64>> = (0..n).map(|_| rng.limbs(16)).collect();
        let mut best = f64::MAX;
        for _ in 0..3 {
            let t = Instant::now();
            let r = kernel::multiexp_threads(k.as_ref(), &bases, &exps, 1);
            best = best.min(t.elapsed().as_secs_f64());
            std::hint::black_box(r);
        }
        println!("{name} {bits} bits: sqr {sq:.1} ns, mul {mul:.1} ns ({:.2} sqr), multiexp {n} x 1024 bits on one thread \
                  {:.1} ms = {:.2}M sqr", mul / sq, best * 1e3, best * 1e9 / sq / 1e6);
    }
}

/// The interleaved pair of exponentiations (`pow_windows_pair`, the RSA
/// halves) against two separate `pow_windows` calls, digit for digit, at
/// every digit count up to 2048-bit halves: windows of 1 to 6 bits, one
/// window only, exponents all zeros, all ones and random, tables holding
/// the extreme loop state.  It pairs exactly where `pairs_interleave` says,
/// never with another backend or another shape.
#[test]
#[cfg(target_arch = "x86_64")]
fn ifma_paired_exponentiations_match_two_single_ones() {
    if !dispatch::supported("ifma") {
        skipped("no AVX-512 IFMA");
        return;
    }
    let seed = 0x5EED_0030;
    let mut rng = Rng(seed);
    let mut paired_digit_counts = std::collections::BTreeSet::new();
    let mut seen = std::collections::BTreeSet::new();
    for bits in (256usize..=2100).step_by(7) {
        let (m1, m2) = (modulus(&mut rng, bits), modulus(&mut rng, bits));
        let (p1, p2) = (FoldPlan::new(&m1), FoldPlan::new(&m2));
        if p1.l() != p2.l() || !seen.insert(p1.l()) {
            continue;
        }
        let (l, v) = (p1.l(), p1.v);
        let (k1, k2) = (dispatch::build("ifma", &m1).unwrap(), dispatch::build("ifma", &m2).unwrap());
        let lanes = LANES * v;
        let max_digit = (1u64 << 50) + (1 << 14) - 1;
        for (w, windows, pattern) in [(1usize, 9usize, 0u8), (4, 1, 1), (5, 7, 2), (6, 4, 1), (3, 11, 0)] {
            let entries = 1 << w;
            // Loop forms: random residues, plus one entry at the largest digits (I1) allows below K.
            let table = |kern: &dyn Kernel, m: &[u64], rng: &mut Rng| -> Vec<u64> {
                let mut t = Vec::with_capacity(entries * lanes);
                for i in 0..entries {
                    if i == 1 {
                        let mut extreme = vec![0u64; lanes];
                        extreme[..l - 1].fill(max_digit);
                        t.extend_from_slice(&extreme);
                    } else {
                        t.extend(kern.enter(&limbs(&(big(&rng.limbs(m.len())) % big(m)), m.len())));
                    }
                }
                t
            };
            let (t1, t2) = (table(&*k1, &m1, &mut rng), table(&*k2, &m2, &mut rng));
            let ne = (windows * w).div_ceil(64) + 1;
            let exponent = |rng: &mut Rng| -> Vec<u64> {
                match pattern {
                    0 => rng.limbs(ne),
                    1 => vec![u64::MAX; ne],
                    _ => vec![0; ne],
                }
            };
            let (e1, e2) = (exponent(&mut rng), rng.limbs(ne));
            let (mut want1, mut want2) = (vec![0u64; lanes], vec![0u64; lanes]);
            k1.pow_windows(&mut want1, &t1, &e1, windows, w);
            k2.pow_windows(&mut want2, &t2, &e2, windows, w);
            let (mut got1, mut got2) = (vec![7u64; lanes], vec![7u64; lanes]);
            let paired = k1.pow_windows_pair(&*k2, &mut got1, &t1, &e1, &mut got2, &t2, &e2, windows, w);
            let expected = crate::ifma::pairs_interleave(l - 1, v);
            assert_eq!(paired, expected, "L = {l}: pairs where pairs_interleave says (seed {seed:#x})");
            if paired {
                paired_digit_counts.insert(l);
                assert_eq!(got1, want1, "L = {l}, w = {w}, {windows} windows: first chain (seed {seed:#x})");
                assert_eq!(got2, want2, "L = {l}, w = {w}, {windows} windows: second chain (seed {seed:#x})");
            } else {
                assert!(got1.iter().chain(&got2).all(|&d| d == 7), "L = {l}: an unpaired call wrote");
            }
        }
        // Another backend or another shape never pairs.
        let portable = dispatch::build("fold-portable", &m1).unwrap();
        let other = dispatch::build("ifma", &modulus(&mut rng, bits + 60)).unwrap();
        let t = vec![0u64; 2 * lanes];
        let (mut a, mut b) = (vec![0u64; lanes], vec![0u64; lanes]);
        assert!(!k1.pow_windows_pair(&*portable, &mut a, &t, &[1], &mut b, &t, &[1], 1, 1));
        if other.fold_plan().unwrap().l() != l {
            let mut c = vec![0u64; LANES * other.fold_plan().unwrap().v];
            let t2 = vec![0u64; 2 * c.len()];
            assert!(!k1.pow_windows_pair(&*other, &mut a, &t, &[1], &mut c, &t2, &[1], 1, 1));
        }
    }
    assert!(paired_digit_counts.contains(&22), "1024-bit halves pair");
    assert!(paired_digit_counts.len() >= 20, "pairs at {paired_digit_counts:?}");
    // The build script's restatement of the shape rule agrees with the crate's.
    for l in 7..=84usize {
        let v = l.div_ceil(LANES);
        let generated = crate::ifma::pow_pair_exists(l);
        assert_eq!(generated, l <= 44 && crate::ifma::pairs_interleave(l - 1, v), "L = {l}");
    }
}

/// The 32-bit-product fold (`fold32`) from the worst states its invariants
/// allow, at every shape the AVX-512F kernel is generated for (one modulus
/// per `(r, K)` from 256 to 4096 bits): every column, fold sum and digit is
/// checked in 128-bit arithmetic against the bounds (B2)-(B3), (I1) and (I2)
/// of `fold32.rs`, the residue against num-bigint, and, where the CPU runs
/// them, the AVX-512F and AVX2 kernels' digits against the twin's, bit for
/// bit (one squaring, five in one call, and the products of every pair of
/// states).
#[test]
fn fold32_extreme_states_at_every_shape() {
    use crate::fold32::Fold32Plan;
    #[cfg(target_arch = "x86_64")]
    use crate::fold32::Fold32PortableKernel;
    use crate::fold32_shape;
    let mut rng = Rng(0x5EED_0032);
    let mut seen = Vec::new();
    // The kernels over the same digits (avx2: the same fold in 256-bit vectors).
    let fast_here: Vec<&str> = ["avx512f", "avx2"].into_iter().filter(|b| dispatch::supported(b)).collect();
    for missing in ["avx512f", "avx2"].iter().filter(|b| !fast_here.contains(b)) {
        skipped(&format!("no {missing}: the fold32 twin's bounds checked, not that kernel"));
    }
    for bits in fold32_shape::MIN_FAST_BITS..=fold32_shape::MAX_FAST_BITS {
        let shape = fold32_shape::shape(bits).unwrap();
        if seen.contains(&shape) {
            continue;
        }
        seen.push(shape);
        let m = modulus(&mut rng, bits);
        let plan = Fold32Plan::new(&m);
        assert_eq!((plan.r, plan.k), shape);
        let (r, k, l, lanes, h) = (plan.r, plan.k, plan.l(), plan.lanes(), plan.h());
        let e_bound = plan.digit_bound();
        let bm = big(&m);
        let limit = BigUint::from(1u32) << (r as usize * l);
        let value = |d: &[u64]| big(&fold::radix_value(d, 3 * m.len(), r));
        // Digits below L-1 at E-1, the top one as large as (I2) leaves room for.
        let mut extreme = vec![0u64; lanes];
        extreme[..l - 1].fill(e_bound - 1);
        let room = (&limit - 1u32 - value(&extreme)) >> (r as usize * (l - 1));
        extreme[l - 1] = room.to_u64_digits().first().copied().unwrap_or(0).min(e_bound - 1);
        let mut all_ones = vec![0u64; lanes];
        all_ones[..l].fill(plan.mask());
        let mut alternating = vec![0u64; lanes];
        for j in (0..l - 1).step_by(2) {
            alternating[j] = e_bound - 1;
        }
        let mut states = vec![extreme, all_ones, alternating];
        for _ in 0..2 {
            let mut s = vec![0u64; lanes];
            for d in s.iter_mut().take(l - 1) {
                *d = rng.next() % e_bound;
            }
            states.push(s);
        }
        let ctx = |what: &str| format!("{bits} bits (r = {r}, K = {k}), seed 0x5EED0032: {what}");
        for s in &states {
            assert!(value(s) < limit, "{}", ctx("a test state breaks (I2)"));
            // Columns of the square, exactly.
            let mut cols = vec![0u128; 2 * l];
            for i in 0..l {
                for j in 0..l {
                    cols[i + j] += s[i] as u128 * s[j] as u128;
                }
            }
            assert!(cols.iter().all(|&c| c < 1 << 64), "{}", ctx("a square column overflows"));
            let c64: Vec<u64> = cols.iter().map(|&c| c as u64).collect();
            assert_eq!(plan.square_columns(s), c64, "{}", ctx("square columns"));
            let from = plan.first_carried();
            let e = plan.carry(&c64, 2 * l + 1, from);
            assert!(e[from..].iter().all(|&d| d < e_bound) && e[2 * l] == 0, "{}", ctx("carry pass"));
            assert_eq!(&e[..from], &c64[..from], "{}", ctx("raw low columns"));
            let mut fold_sums = vec![0u128; k];
            for (j, f) in fold_sums.iter_mut().enumerate() {
                *f = e[j] as u128 + (0..h).map(|c| e[k + c] as u128 * plan.table_digit(c, j) as u128).sum::<u128>();
            }
            assert!(fold_sums.iter().all(|&f| f < 1 << 64), "{}", ctx("a fold column overflows"));
            let next = plan.fold_columns(&c64);
            assert!(next.iter().all(|&d| d < e_bound), "{}", ctx("(I1) broken"));
            assert!(next[l..].iter().all(|&d| d == 0), "{}", ctx("a digit above L"));
            assert!(value(&next) < limit, "{}", ctx("(I2) broken"));
            assert_eq!(value(&next) % &bm, value(s) * value(s) % &bm, "{}", ctx("wrong residue"));
            for &name in &fast_here {
                let fast = dispatch::build(name, &m).unwrap();
                let twin = Fold32PortableKernel::new(&m);
                let mut f = s.clone();
                fast.sqr_n_internal(&mut f, 1);
                assert_eq!(f, next, "{}", ctx(&format!("{name} digits differ from the twin after one squaring")));
                let (mut f5, mut t5) = (s.clone(), s.clone());
                fast.sqr_n_internal(&mut f5, 5);
                twin.sqr_n_internal(&mut t5, 5);
                assert_eq!(f5, t5, "{}", ctx(&format!("{name} digits differ from the twin after five squarings")));
                for b in &states {
                    assert_eq!(
                        fast.mul_internal(s, b),
                        twin.mul_internal(s, b),
                        "{}",
                        ctx(&format!("{name} product digits differ from the twin"))
                    );
                }
            }
        }
    }
    // Every shape the build script generates was reached.
    let mut shapes: Vec<(u32, usize)> = Vec::new();
    for bits in fold32_shape::MIN_FAST_BITS..=fold32_shape::MAX_FAST_BITS {
        let s = fold32_shape::shape(bits).unwrap();
        if !shapes.contains(&s) {
            shapes.push(s);
        }
    }
    assert_eq!(seen, shapes);
}

/// The software IFMA of test builds (`src/ifma_emulated.rs`): known answers
/// worked out by hand, then every edge lane against the instructions where
/// the CPU has them.
#[test]
#[cfg(all(target_arch = "x86_64", feature = "ifma-emulated"))]
fn emulated_ifma_matches_the_instructions() {
    use crate::ifma_emulated as emu;
    use core::arch::x86_64::__m512i;
    let v = |x: [u64; 8]| -> __m512i { unsafe { core::mem::transmute(x) } };
    let u = |x: __m512i| -> [u64; 8] { unsafe { core::mem::transmute(x) } };
    let low52 = (1u64 << 52) - 1;
    // (2^52 - 1)^2 = 2^104 - 2^53 + 1: low half 1, high half 2^52 - 2.  Bits
    // above 52 of the inputs are ignored; the sum wraps at 64 bits.
    let (a, b, c) = ([0, u64::MAX, 5, 0, 0, 0, 0, 0], [low52, low52, u64::MAX, 1 << 52, 3, 0, 7, 1], [low52; 8]);
    assert_eq!(u(emu::_mm512_madd52lo_epu64(v(a), v(b), v(c))), [1, 0, 6, 0, low52 - 2, 0, low52 - 6, low52]);
    assert_eq!(u(emu::_mm512_madd52hi_epu64(v(a), v(b), v(c))), [low52 - 1, low52 - 2, 5 + low52 - 1, 0, 2, 0, 6, 0]);

    if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma")) {
        skipped("emulated IFMA checked by known answers only (no AVX-512 IFMA to compare with)");
        return;
    }
    #[target_feature(enable = "avx512f,avx512ifma")]
    unsafe fn hardware(a: __m512i, b: __m512i, c: __m512i) -> (__m512i, __m512i) {
        use core::arch::x86_64::{_mm512_madd52hi_epu64, _mm512_madd52lo_epu64};
        (_mm512_madd52lo_epu64(a, b, c), _mm512_madd52hi_epu64(a, b, c))
    }
    let edges = [0, 1, 2, low52 - 1, low52, 1 << 52, (1 << 52) + 1, 1 << 63, u64::MAX - 1, u64::MAX];
    let seed = 0x1F3A_0001u64;
    let mut rng = Rng(seed);
    for round in 0..2000 {
        let mut pick = || -> [u64; 8] {
            core::array::from_fn(|_| {
                let r = rng.next();
                if round < 1000 { edges[(r % edges.len() as u64) as usize] } else { r }
            })
        };
        let (a, b, c) = (pick(), pick(), pick());
        // SAFETY: the CPU has AVX-512F and IFMA (checked above).
        let (lo, hi) = unsafe { hardware(v(a), v(b), v(c)) };
        let msg = format!("seed {seed:#x}, round {round}: a {a:x?} b {b:x?} c {c:x?}");
        assert_eq!(u(emu::_mm512_madd52lo_epu64(v(a), v(b), v(c))), u(lo), "madd52lo, {msg}");
        assert_eq!(u(emu::_mm512_madd52hi_epu64(v(a), v(b), v(c))), u(hi), "madd52hi, {msg}");
    }
}

/// ns per squaring of the fold32 kernels beside `adx`, interleaved rounds,
/// medians (ignored; `cargo test --release -p modforge-ring bench_fold32_kernels
/// -- --ignored --nocapture`).
#[test]
#[ignore]
fn bench_fold32_kernels() {
    use std::time::Instant;
    let mut rng = Rng(0x5EED_0B2C);
    let names: Vec<&str> = ["adx", "avx2", "avx512f"].into_iter().filter(|b| dispatch::supported(b)).collect();
    // The core clock, from a chain of dependent adds (one cycle each).
    #[cfg(target_arch = "x86_64")]
    let ghz = {
        let mut best = f64::MAX;
        for _ in 0..20 {
            let (iters, t) = (1_000_000u64, Instant::now());
            let mut x = 0u64;
            // SAFETY: register arithmetic only.
            unsafe {
                core::arch::asm!("2:", "add {x}, {n}", "add {x}, {n}", "add {x}, {n}", "add {x}, {n}",
                                 "add {x}, {n}", "add {x}, {n}", "add {x}, {n}", "add {x}, {n}",
                                 "dec {n}", "jnz 2b", x = inout(reg) x, n = inout(reg) iters => _);
            }
            std::hint::black_box(x);
            best = best.min(t.elapsed().as_secs_f64());
        }
        8.0 * 1e6 / best / 1e9
    };
    #[cfg(not(target_arch = "x86_64"))]
    let ghz = 0.0;
    println!("core clock about {ghz:.2} GHz (best of 20 dependent-add chains)");
    for bits in [1024usize, 2048, 3072, 4096] {
        let m = modulus(&mut rng, bits);
        let kernels: Vec<_> = names.iter().map(|n| dispatch::build(n, &m).unwrap()).collect();
        let x = limbs(&(big(&rng.limbs(m.len())) % big(&m)), m.len());
        let count = (8_000 * 1024 * 1024 / (bits * bits)) as u64;
        let mut ns = vec![Vec::new(); names.len()];
        for round in 0..41 {
            for i in 0..names.len() {
                let j = (i + round) % names.len();
                let mut s = kernels[j].enter(&x);
                let t = Instant::now();
                kernels[j].sqr_n_internal(&mut s, count);
                ns[j].push(t.elapsed().as_secs_f64() * 1e9 / count as f64);
                std::hint::black_box(&s);
            }
        }
        let line: Vec<String> = names
            .iter()
            .zip(ns.iter_mut())
            .map(|(n, v)| {
                v.sort_by(f64::total_cmp);
                format!("{n} {:.1} (min {:.1} = {:.0} cycles)", v[v.len() / 2], v[0], v[0] * ghz)
            })
            .collect();
        println!("{bits} bits: {}", line.join(", "));
    }
}
