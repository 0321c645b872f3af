//! The MSM against the naive sum, over the edge cases and seeded random instances, for every
//! window width and several batch sizes (small ones force conflicts, the queue and the fallback).

use crate::digits::{decode, encode_scalar, window_count};
use crate::{msm_with_stats, naive_msm, reduce_scalar, MsmConfig};
use modforge_bls12_377::{Fr, G1Affine, G1Jacobian, GENERATOR};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn scalar(&mut self) -> [u64; 4] {
        reduce_scalar(&[self.next(), self.next(), self.next(), self.next() >> 3])
    }
}

fn points(n: usize, rng: &mut Rng) -> Vec<G1Affine> {
    // consecutive sums of two random multiples of G (cheap, distinct)
    let mut a = GENERATOR.mul(&rng.scalar()).to_affine();
    let mut b = GENERATOR.mul(&rng.scalar()).to_affine();
    (0..n)
        .map(|_| {
            let out = a;
            let c = G1Jacobian::from(a).add_affine(&b).to_affine();
            a = b;
            b = c;
            out
        })
        .collect()
}

fn r_minus(k: u64) -> [u64; 4] {
    let mut v = Fr::MODULUS;
    v[0] -= k;
    v
}

#[test]
fn digits_reconstruct_the_scalar() {
    let mut rng = Rng(11);
    let mut cases = vec![[0u64; 4], [1, 0, 0, 0], r_minus(1), r_minus(2)];
    for _ in 0..200 {
        cases.push(rng.scalar());
    }
    for c in 2..=crate::digits::MAX_WINDOW {
        let windows = window_count(c);
        let mut out = vec![0u16; windows];
        for s in &cases {
            encode_scalar(s, c, &mut out);
            // sum d_w 2^(c w) as a signed 320-bit number in i128 pieces: check word by word with carries
            let mut acc = [0i128; 6];
            for (w, d) in out.iter().enumerate() {
                let v = decode(*d);
                assert!(v.unsigned_abs() <= 1 << (c - 1));
                let bit = w * c;
                acc[bit / 64] += (v as i128) << (bit % 64);
            }
            let mut words = [0u64; 5];
            let mut carry: i128 = 0;
            for k in 0..5 {
                let t = acc[k] + carry;
                words[k] = t as u64;
                carry = t >> 64;
            }
            assert_eq!(&words[..4], &s[..], "c={c}");
            assert_eq!(words[4], 0);
        }
    }
}

fn check(points: &[G1Affine], scalars: &[[u64; 4]], what: &str) {
    let expect = naive_msm(points, scalars).to_affine();
    for c in [2usize, 5, 8, 11, 15, 16] {
        for (batch, threads) in [(None, 1), (Some(1), 1), (Some(3), 2), (None, 3)] {
            let cfg = MsmConfig { threads, window: Some(c), batch_size: batch, ..Default::default() };
            let (got, _) = msm_with_stats(points, scalars, &cfg);
            assert_eq!(got.to_affine(), expect, "{what}: c={c} batch={batch:?} threads={threads}");
        }
    }
}

#[test]
fn edge_cases() {
    let mut rng = Rng(26);
    let p = points(8, &mut rng);
    let (a, b) = (p[0], p[1]);
    check(&[], &[], "empty");
    check(&[a], &[[12345, 0, 0, 0]], "one point");
    check(&p[..3], &[[0; 4]; 3], "zero scalars");
    check(&[a, b], &[r_minus(1), [1, 0, 0, 0]], "scalar r-1");
    let same = rng.scalar();
    check(&p, &[same; 8], "all scalars equal");
    check(&[a, a, a, b, b], &[[3, 0, 0, 0], [5, 0, 0, 0], r_minus(7), [11, 0, 0, 0], [3, 0, 0, 0]], "repeated points");
    check(&[a, a.neg(), b], &[[99, 0, 0, 0], [99, 0, 0, 0], [2, 0, 0, 0]], "P beside -P");
    check(&[a, G1Affine::IDENTITY, b], &[[5, 0, 0, 0], [6, 0, 0, 0], [7, 0, 0, 0]], "infinity among inputs");
    check(&[a, a], &[[1, 0, 0, 0], [1, 0, 0, 0]], "P + P in one bucket (the doubling fallback)");
    check(&p[..7], &(0..7).map(|k| r_minus(k + 1)).collect::<Vec<_>>(), "not a power of two");
}

#[test]
fn random_instances() {
    let seed = 0x5eed_0003;
    let mut rng = Rng(seed);
    let pool = points(300, &mut rng);
    for round in 0..12 {
        let n = 1 + (rng.next() % 300) as usize;
        let scalars: Vec<[u64; 4]> = (0..n).map(|_| rng.scalar()).collect();
        let pts = &pool[..n];
        let expect = naive_msm(pts, &scalars).to_affine();
        for threads in [1, 2] {
            let cfg = MsmConfig { threads, ..Default::default() };
            assert_eq!(msm_with_stats(pts, &scalars, &cfg).0.to_affine(), expect, "seed={seed} round={round} n={n}");
        }
    }
}

#[test]
fn cost_model_grows_the_window_with_n() {
    let small = crate::choose_window(1 << 10, 1);
    let mid = crate::choose_window(1 << 16, 1);
    let big = crate::choose_window(1 << 20, 1);
    assert!(small < mid && mid <= big, "{small} {mid} {big}");
}

// ---------------------------------------------------------------------------------------------------
// fixed-base tables

use crate::fixed::{FixedBaseTable, TABLE_HEADER};
use crate::instance::RAW_POINT;

fn check_table(points: &[G1Affine], scalars: &[[u64; 4]], what: &str) {
    let expect = naive_msm(points, scalars).to_affine();
    for c in [2usize, 3, 7, 13, 17] {
        let table = FixedBaseTable::precompute(points, Some(c), 2).unwrap();
        for threads in [1, 2, 3] {
            assert_eq!(table.msm(scalars, threads).to_affine(), expect, "{what}: c={c} threads={threads}");
        }
    }
}

#[test]
fn table_edge_cases() {
    let mut rng = Rng(0x7ab1e);
    let p = points(8, &mut rng);
    let (a, b) = (p[0], p[1]);
    check_table(&[], &[], "empty");
    check_table(&[a], &[rng.scalar()], "one point");
    check_table(&p[..3], &[[0; 4]; 3], "zero scalars");
    check_table(&[a, b], &[r_minus(1), [1, 0, 0, 0]], "scalar r-1");
    let same = rng.scalar();
    check_table(&p, &[same; 8], "all scalars equal");
    check_table(&[a, a, a, b], &[[3, 0, 0, 0], [5, 0, 0, 0], r_minus(7), same], "repeated points");
    check_table(&[a, a.neg(), b], &[[99, 0, 0, 0], [99, 0, 0, 0], [2, 0, 0, 0]], "P beside -P");
    check_table(&[a, G1Affine::IDENTITY, b], &[[5, 0, 0, 0], rng.scalar(), [7, 0, 0, 0]], "infinity among inputs");
    check_table(&p[..7], &(0..7).map(|_| rng.scalar()).collect::<Vec<_>>(), "not a power of two");
}

#[test]
fn table_random_instances_match_the_variable_base_msm() {
    let seed = 0x5eed_f1ed;
    let mut rng = Rng(seed);
    let pool = points(600, &mut rng);
    for round in 0..10 {
        let n = 1 + (rng.next() % 600) as usize;
        let scalars: Vec<[u64; 4]> = (0..n).map(|_| rng.scalar()).collect();
        let pts = &pool[..n];
        let expect = msm_with_stats(pts, &scalars, &MsmConfig::default()).0.to_affine();
        let table = FixedBaseTable::precompute(pts, None, 0).unwrap();
        for threads in [1, 2] {
            assert_eq!(table.msm(&scalars, threads).to_affine(), expect, "seed={seed} round={round} n={n}");
        }
    }
}

#[test]
fn table_file_round_trip_and_rejections() {
    let mut rng = Rng(0xf11e);
    let pts = points(20, &mut rng);
    let scalars: Vec<[u64; 4]> = (0..20).map(|_| rng.scalar()).collect();
    let table = FixedBaseTable::precompute(&pts, Some(11), 1).unwrap();
    let bytes = table.to_bytes();
    assert_eq!(bytes.len(), TABLE_HEADER + 20 * 24 * RAW_POINT, "11-bit windows: 24 of them over 254 bits");
    let back = FixedBaseTable::from_bytes(&bytes, 2).unwrap();
    assert_eq!(back.msm(&scalars, 1).to_affine(), naive_msm(&pts, &scalars).to_affine());
    assert_eq!(back.first_outside_subgroup(2), None);

    let reject = |b: &[u8], why: &str| {
        let err = FixedBaseTable::from_bytes(b, 2).err().unwrap_or_else(|| panic!("accepted: {why}"));
        assert!(err.contains(why), "{err:?} should say {why:?}");
    };
    reject(&bytes[..20], "shorter than the 32-byte header");
    let mut bad = bytes.clone();
    bad[0] = b'X';
    reject(&bad, "bad magic");
    let mut bad = bytes.clone();
    bad[8] = 2;
    reject(&bad, "version 2");
    let mut bad = bytes.clone();
    bad[12] = 40;
    reject(&bad, "window 40 is outside");
    let mut bad = bytes.clone();
    bad[16] = 23;
    reject(&bad, "23 windows do not match window 11");
    let mut bad = bytes.clone();
    bad[20] = 1;
    reject(&bad, "entry encoding 1");
    reject(&bytes[..bytes.len() - 1], "points x 24 windows need");
    let mut longer = bytes.clone();
    longer.push(0);
    reject(&longer, "points x 24 windows need");
    let mut bad = bytes.clone();
    bad[24] = 21;
    reject(&bad, "21 points x 24 windows need");
    // entry 3 * 24 + 5: x = q + something (above q), then a coordinate change that leaves the curve
    let entry = |i: usize, w: usize| TABLE_HEADER + (i * 24 + w) * RAW_POINT;
    let mut bad = bytes.clone();
    bad[entry(3, 5)..entry(3, 5) + 48].fill(0x1f);
    reject(&bad, "entry of point 3, window 5: x is not below q");
    let mut bad = bytes.clone();
    bad[entry(19, 23) + 95] ^= 1;
    reject(&bad, "entry of point 19, window 23: not on the curve");
    // a valid point in the wrong place: the spot check re-derives point 0's windows
    let mut bad = bytes.clone();
    bad.copy_within(entry(1, 4)..entry(1, 5), entry(0, 4));
    reject(&bad, "entry of point 0, window 4: not 2^11 times window 3's");
}
