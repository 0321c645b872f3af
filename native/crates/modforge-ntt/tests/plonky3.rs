//! The engine against Plonky3 (p3-dft 0.8.0 `Radix2DFTSmallBatch` over p3-goldilocks), the library the
//! benchmark compares with, at 2^12, 2^14, ..., 2^22 points: every transform the crate offers, on the
//! named inputs first and then on seeded random ones.
//!
//! **How the two conventions map.**  Plonky3's `dft_batch` evaluates each column (coefficients) at the
//! powers of `Goldilocks::two_adic_generator(log_n)` = `TWO_ADIC_GENERATORS[log_n]`, in natural row order
//! (`Radix2DFTSmallBatch` bit-reverses its result back before returning it; `Radix2DitParallel` returns a
//! `BitReversedMatrixView` whose natural-order view is the same matrix).  Our forward transform uses
//! `root_of_unity(log_n)`, which [`roots_are_plonky3s`] checks is the same table entry for every log_n,
//! so `transform` = `dft_batch` entry for entry.  `idft_batch` includes the factor 1/n, as our inverse
//! does; `coset_dft_batch(m, s)` evaluates on s<w_n> (= `coset_shift: Some(s)`); `coset_idft_batch` is
//! its inverse (= inverse with `coset_shift`); `coset_lde_batch(m, bits, s)` takes evaluations on <w_n>
//! to evaluations on s<w_(n 2^bits)>, natural order (= our `lde` with blow-up 2^bits).  Our bit-reversed
//! orders are checked against Plonky3's natural result with its rows permuted by Plonky3's own
//! `reverse_matrix_index_bits`.  The ZPrize-convention transform is the forward one (docs/zk-ntt.md), so
//! it is covered by the forward checks.
//!
//! Debug builds stop at 2^16 (Plonky3 unoptimised takes minutes at 2^22); `make test` runs release.

use modforge_goldilocks::{root_of_unity, Backend, P, TWO_ADICITY};
use modforge_ntt::{lde, transform, Options, Order};
use p3_dft::{Radix2DFTSmallBatch, TwoAdicSubgroupDft};
use p3_field::{PrimeField64, TwoAdicField};
use p3_goldilocks::Goldilocks;
use p3_matrix::dense::RowMajorMatrix;
use p3_matrix::util::reverse_matrix_index_bits;
use p3_matrix::Matrix;

const MAX_LOG_N: u32 = if cfg!(debug_assertions) { 16 } else { 22 };
const SIZES: [u32; 6] = [12, 14, 16, 18, 20, 22];

/// Column counts of the random inputs per size: several at the small sizes, fewer at the large ones to
/// keep the test short.
fn column_counts(log_n: u32) -> &'static [usize] {
    match log_n {
        12..=14 => &[1, 3, 8],
        16..=18 => &[1, 8],
        20 => &[1, 4],
        _ => &[1],
    }
}

/// Above this size the named cases run as the columns of one batch (each column is transformed on its
/// own, so each is still checked whole) instead of one at a time: half the cost at 2^20 and 2^22.
const NAMED_ALONE_MAX_LOG_N: u32 = 18;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn random(len: usize, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..len).map(|_| splitmix64(&mut state) % P).collect()
}

/// The named inputs of the acceptance line, `rows` x `columns` elements each.
fn named_cases(rows: usize, columns: usize) -> Vec<(&'static str, Vec<u64>)> {
    let len = rows * columns;
    vec![
        ("all zeros", vec![0; len]),
        ("all p-1", vec![P - 1; len]),
        ("a single 1 at 0", (0..len).map(|i| (i == 0) as u64).collect()),
        // A single 1 in row 1 of the first column: its transform is the powers of the root, which pins the
        // root and the output order.
        ("a single 1 in row 1", (0..len).map(|i| (i == columns) as u64).collect()),
        ("values just below p", (0..len).map(|i| P - 1 - (i as u64 % 7)).collect()),
    ]
}

fn to_p3(values: &[u64], columns: usize) -> RowMajorMatrix<Goldilocks> {
    RowMajorMatrix::new(values.iter().map(|&v| Goldilocks::new(v)).collect(), columns)
}

fn from_p3(m: impl Matrix<Goldilocks>) -> Vec<u64> {
    m.to_row_major_matrix().values.iter().map(|v| v.as_canonical_u64()).collect()
}

fn ours(input: &[u64], options: &Options) -> Vec<u64> {
    let mut out = input.to_vec();
    transform(&mut out, options).unwrap();
    out
}

/// Equality of two row-major batches; a failure names the first differing (row, column), not 2^22 values.
fn assert_same(got: &[u64], expected: &[u64], columns: usize, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
        let (row, column, g, e) = (i / columns, i % columns, got[i], expected[i]);
        panic!("{what}: first difference at row {row}, column {column}: ours {g:#x}, Plonky3 {e:#x}");
    }
}

/// Every transform of `input` (`columns` columns) against Plonky3; `label` names the input (and its
/// seed) in a failure.
fn check_all(dft: &Radix2DFTSmallBatch<Goldilocks>, input: &[u64], columns: usize, label: &str, lde_bits: usize) {
    let log_n = (input.len() / columns).trailing_zeros();
    let what = |t: &str| format!("{t}, 2^{log_n} x {columns} columns, {label}");
    let base = Options { columns, threads: 2, ..Options::default() };
    let shift = 7 + log_n as u64 * 1_000_003; // a nonzero canonical element, different per size

    let forward = from_p3(dft.dft_batch(to_p3(input, columns)));
    // Every backend this CPU runs (the portable one only to 2^16: it is slow, and the crate's unit tests
    // compare it with the vector ones), at 1 and 2 threads.
    let backends = Backend::ALL.into_iter().filter(|b| b.supported() && (log_n <= 16 || *b == Backend::detect()));
    for backend in backends {
        for threads in [1, 2] {
            let got = ours(input, &Options { backend: Some(backend), threads, ..base.clone() });
            assert_same(&got, &forward, columns, &what(&format!("forward ({backend:?}, {threads} threads)")));
        }
    }

    let mut forward_bitrev = RowMajorMatrix::new(forward.clone(), columns);
    reverse_matrix_index_bits(&mut forward_bitrev);
    let got = ours(input, &Options { output_order: Order::BitReversed, ..base.clone() });
    assert_same(&got, &forward_bitrev.values, columns, &what("forward, bit-reversed output"));

    let mut input_bitrev = RowMajorMatrix::new(input.to_vec(), columns);
    reverse_matrix_index_bits(&mut input_bitrev);
    let got = ours(&input_bitrev.values, &Options { input_order: Order::BitReversed, ..base.clone() });
    assert_same(&got, &forward, columns, &what("forward, bit-reversed input"));

    let inverse = from_p3(dft.idft_batch(to_p3(input, columns)));
    let got = ours(input, &Options { inverse: true, ..base.clone() });
    assert_same(&got, &inverse, columns, &what("inverse (1/n included)"));

    let coset = from_p3(dft.coset_dft_batch(to_p3(input, columns), Goldilocks::new(shift)));
    let got = ours(input, &Options { coset_shift: Some(shift), ..base.clone() });
    assert_same(&got, &coset, columns, &what(&format!("coset forward (shift {shift})")));

    let coset_inverse = from_p3(dft.coset_idft_batch(to_p3(input, columns), Goldilocks::new(shift)));
    let got = ours(input, &Options { inverse: true, coset_shift: Some(shift), ..base.clone() });
    assert_same(&got, &coset_inverse, columns, &what(&format!("coset inverse (shift {shift})")));

    let extended = from_p3(dft.coset_lde_batch(to_p3(input, columns), lde_bits, Goldilocks::new(shift)));
    let got = lde(input, columns, 1 << lde_bits, shift, 2, None).unwrap();
    assert_same(&got, &extended, columns, &what(&format!("LDE, blow-up {} (shift {shift})", 1 << lde_bits)));
}

#[test]
fn roots_are_plonky3s() {
    for log_n in 0..=TWO_ADICITY {
        assert_eq!(root_of_unity(log_n), Goldilocks::two_adic_generator(log_n as usize).as_canonical_u64(),
                   "w_(2^{log_n})");
    }
}

#[test]
fn named_cases_equal_plonky3() {
    let dft = Radix2DFTSmallBatch::<Goldilocks>::default();
    for log_n in SIZES.into_iter().filter(|&l| l <= MAX_LOG_N) {
        let rows = 1usize << log_n;
        if log_n <= NAMED_ALONE_MAX_LOG_N {
            for (name, input) in named_cases(rows, 1) {
                check_all(&dft, &input, 1, name, 1);
            }
        }
        // All of them side by side, column c holding case c.
        let cases = named_cases(rows, 1);
        let columns = cases.len();
        let batch: Vec<u64> = (0..rows * columns).map(|i| cases[i % columns].1[i / columns]).collect();
        let names: Vec<&str> = cases.iter().map(|(name, _)| *name).collect();
        check_all(&dft, &batch, columns, &format!("named cases as columns: {}", names.join(", ")), 1);
    }
}

#[test]
fn random_inputs_equal_plonky3() {
    let dft = Radix2DFTSmallBatch::<Goldilocks>::default();
    for log_n in SIZES.into_iter().filter(|&l| l <= MAX_LOG_N) {
        for &columns in column_counts(log_n) {
            let seed = 0x5eed_0000 + ((log_n as u64) << 8) + columns as u64;
            let input = random(columns << log_n, seed);
            // Blow-ups 2, 4 and 8 in turn across the sizes.
            let lde_bits = 1 + (log_n as usize / 2) % 3;
            let t = std::time::Instant::now();
            check_all(&dft, &input, columns, &format!("random input, seed {seed:#x}"), lde_bits);
            eprintln!("TIME random 2^{log_n} x{columns}: {:?}", t.elapsed());
        }
    }
}
