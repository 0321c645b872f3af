//! The engine against a naive O(n^2) DFT (small sizes) and against itself across backends, splits,
//! thread counts and batch shapes.

use crate::*;
use modforge_goldilocks::{root_of_unity, scalar, Backend, P};

fn stream(seed: u64, count: usize) -> Vec<u64> {
    let mut s = seed;
    (0..count)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % P
        })
        .collect()
}

fn naive(a: &[u64], columns: usize, inverse: bool, shift: u64) -> Vec<u64> {
    let n = a.len() / columns;
    let w = root_of_unity(n.trailing_zeros());
    let w = if inverse { scalar::inverse(w) } else { w };
    let mut out = vec![0u64; a.len()];
    for c in 0..columns {
        for k in 0..n {
            let x = scalar::mul(shift, scalar::pow(w, k as u64));
            let mut acc = 0u64;
            for j in (0..n).rev() {
                acc = scalar::add(scalar::mul(acc, x), a[j * columns + c]);
            }
            out[k * columns + c] = if inverse { scalar::mul(acc, scalar::inverse(n as u64)) } else { acc };
        }
    }
    out
}

fn backends() -> Vec<Backend> {
    Backend::ALL.into_iter().filter(|b| b.supported()).collect()
}

#[test]
fn equals_naive_dft_every_size_to_2_10() {
    for log_n in 0..=10u32 {
        for columns in [1usize, 3, 8] {
            if (columns << log_n) > 4096 && columns > 1 {
                continue;
            }
            let a = stream(log_n as u64 * 31 + columns as u64, columns << log_n);
            let expected = naive(&a, columns, false, 1);
            for backend in backends() {
                for threads in [1, 2] {
                    let mut got = a.clone();
                    let options = Options { columns, threads, backend: Some(backend), ..Options::default() };
                    transform(&mut got, &options).unwrap();
                    assert_eq!(got, expected, "n=2^{log_n} columns={columns} {backend:?} threads={threads}");
                    transform(&mut got, &Options { inverse: true, ..options }).unwrap();
                    assert_eq!(got, a, "inverse n=2^{log_n} columns={columns} {backend:?}");
                }
            }
        }
    }
}

#[test]
fn named_cases() {
    let n = 1 << 9;
    let cases: Vec<Vec<u64>> = vec![
        vec![0; n],
        vec![P - 1; n],
        (0..n).map(|i| (i == 0) as u64).collect(),
        (0..n).map(|i| (i == 77) as u64).collect(),
        (0..n).map(|i| P - 1 - (i as u64 % 4)).collect(),
    ];
    for a in cases {
        let expected = naive(&a, 1, false, 1);
        for backend in backends() {
            let mut got = a.clone();
            transform(&mut got, &Options { backend: Some(backend), ..Options::default() }).unwrap();
            assert_eq!(got, expected, "{backend:?}");
        }
    }
}

#[test]
fn coset_and_orders() {
    let (log_n, columns, shift) = (7u32, 2usize, 7u64);
    let a = stream(5, columns << log_n);
    let expected = naive(&a, columns, false, shift);
    let mut got = a.clone();
    let options = Options { columns, coset_shift: Some(shift), ..Options::default() };
    transform(&mut got, &options).unwrap();
    assert_eq!(got, expected);
    transform(&mut got, &Options { inverse: true, ..options.clone() }).unwrap();
    assert_eq!(got, a);
    // Bit-reversed output, then bit-reversed input to the inverse, gives the input back.
    let mut got = a.clone();
    transform(&mut got, &Options { columns, output_order: Order::BitReversed, ..Options::default() }).unwrap();
    let n = 1usize << log_n;
    for k in 0..n {
        let r = k.reverse_bits() >> (usize::BITS - log_n);
        assert_eq!(got[r * columns..(r + 1) * columns], naive(&a, columns, false, 1)[k * columns..(k + 1) * columns]);
    }
    transform(&mut got, &Options { columns, inverse: true, input_order: Order::BitReversed, ..Options::default() })
        .unwrap();
    assert_eq!(got, a);
}

#[test]
fn lde_is_the_interpolant_on_the_coset() {
    for (log_n, blowup, columns) in [(3u32, 2usize, 1usize), (6, 4, 2), (7, 8, 1)] {
        let evaluations = stream(9 + log_n as u64, columns << log_n);
        let coefficients = naive(&evaluations, columns, true, 1);
        let mut padded = vec![0u64; evaluations.len() * blowup];
        padded[..coefficients.len()].copy_from_slice(&coefficients);
        let expected = naive(&padded, columns, false, 7);
        assert_eq!(lde(&evaluations, columns, blowup, 7, 0, None).unwrap(), expected, "n=2^{log_n} b={blowup}");
    }
}

#[test]
fn large_sizes_agree_across_backends_threads_and_splits() {
    for (log_n, columns) in [(14u32, 1usize), (12, 8), (13, 5)] {
        let a = stream(log_n as u64, columns << log_n);
        let mut reference = a.clone();
        transform(&mut reference, &Options { columns, backend: Some(Backend::Portable), threads: 1, ..Options::default() })
            .unwrap();
        for backend in backends() {
            let mut got = a.clone();
            transform(&mut got, &Options { columns, backend: Some(backend), threads: 2, ..Options::default() }).unwrap();
            assert_eq!(got, reference, "n=2^{log_n} columns={columns} {backend:?}");
        }
        // A different split of the same size gives the same transform.
        let plan = cached_plan_split(log_n, 4, false);
        assert_eq!(plan.log_n1 + plan.log_n2, log_n);
        // Spot-check a few outputs against the definition.
        let w = root_of_unity(log_n);
        for k in [0usize, 1, 12345 % (1 << log_n)] {
            let x = scalar::pow(w, k as u64);
            let mut acc = 0u64;
            for j in (0..1usize << log_n).rev() {
                acc = scalar::add(scalar::mul(acc, x), a[j * columns]);
            }
            assert_eq!(reference[k * columns], acc, "n=2^{log_n} k={k}");
        }
    }
}

#[test]
fn refusals() {
    let mut a = vec![0u64; 6];
    assert_eq!(transform(&mut a, &Options::default()), Err(NttError::BadLength(6)));
    let mut a = vec![0u64, P, 0, 0];
    assert_eq!(transform(&mut a, &Options::default()), Err(NttError::NotCanonical(1)));
    let mut a = vec![0u64; 6];
    assert_eq!(transform(&mut a, &Options { columns: 4, ..Options::default() }),
               Err(NttError::BadColumns { len: 6, columns: 4 }));
    let mut a = vec![0u64; 4];
    assert_eq!(transform(&mut a, &Options { coset_shift: Some(0), ..Options::default() }), Err(NttError::BadShift(0)));
}

#[test]
fn non_canonical_input_is_refused_and_left_as_it_was() {
    // Small sizes (one pass), the 4-step (checked inside pass 1), a coset, a bit-reversed input (checked
    // before), every backend; the bad element first, in the middle, last, and two of them.
    for (log_n, columns) in [(3u32, 1usize), (12, 1), (12, 3), (14, 8)] {
        let len = columns << log_n;
        for bad in [vec![0usize], vec![len / 2 + 1], vec![len - 1], vec![len - 2, len / 3]] {
            let mut a = stream(log_n as u64 + 100, len);
            for (k, &i) in bad.iter().enumerate() {
                a[i] = if k == 0 { P } else { u64::MAX };
            }
            let first = *bad.iter().min().unwrap();
            for backend in backends() {
                for options in [
                    Options { columns, backend: Some(backend), ..Options::default() },
                    Options { columns, backend: Some(backend), coset_shift: Some(7), threads: 2, ..Options::default() },
                    Options { columns, backend: Some(backend), inverse: true, ..Options::default() },
                    Options { columns, backend: Some(backend), input_order: Order::BitReversed, ..Options::default() },
                ] {
                    let mut got = a.clone();
                    assert_eq!(transform(&mut got, &options), Err(NttError::NotCanonical(first)),
                               "2^{log_n} x{columns} bad at {bad:?} {options:?}");
                    assert!(got == a, "2^{log_n} x{columns}: the input was changed by a refused transform {options:?}");
                }
            }
        }
    }
    assert_eq!(first_not_canonical(&[0, 1, P - 1]), None);
    let mut long = vec![P - 1; 5000];
    long[4321] = P;
    long[4999] = P + 5;
    assert_eq!(first_not_canonical(&long), Some(4321));
}
