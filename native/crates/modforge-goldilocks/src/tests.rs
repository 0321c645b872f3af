//! Every path against u128 arithmetic `% P`, named edge cases first, then a seeded stream.

use crate::*;

fn edges() -> Vec<u64> {
    vec![0, 1, 2, P - 1, P - 2, EPSILON, EPSILON + 1, 1 << 63, (1 << 63) - 1, P >> 1, 0xffff_ffff_0000_0000]
}

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

fn pairs() -> (Vec<u64>, Vec<u64>) {
    let e = edges();
    let (mut a, mut b) = (vec![], vec![]);
    for &x in &e {
        for &y in &e {
            a.push(x);
            b.push(y);
        }
    }
    a.extend(stream(1, 4096));
    b.extend(stream(2, 4096));
    while a.len() % 8 != 0 {
        a.push(P - 1);
        b.push(P - 1);
    }
    (a, b)
}

#[test]
fn scalar_against_u128() {
    let (a, b) = pairs();
    for (&x, &y) in a.iter().zip(&b) {
        let (xw, yw, pw) = (x as u128, y as u128, P as u128);
        assert_eq!(scalar::mul(x, y) as u128, xw * yw % pw, "{x:#x} * {y:#x}");
        assert_eq!(scalar::add(x, y) as u128, (xw + yw) % pw, "{x:#x} + {y:#x}");
        assert_eq!(scalar::sub(x, y) as u128, (xw + pw - yw) % pw, "{x:#x} - {y:#x}");
    }
    for x in [0u128, 1, u64::MAX as u128, u128::MAX, (P as u128 - 1) * (P as u128 - 1), 1 << 96, (1 << 96) - 1] {
        assert_eq!(scalar::reduce128(x) as u128, x % P as u128, "{x:#x}");
    }
}

fn check_packed<K: Packed>(a: &[u64], b: &[u64]) {
    for i in (0..a.len()).step_by(K::WIDTH) {
        let mut out = vec![0u64; K::WIDTH];
        // SAFETY: the caller checked the backend is supported; the slices hold WIDTH elements from i.
        unsafe {
            let (x, y) = (K::load(a.as_ptr().add(i)), K::load(b.as_ptr().add(i)));
            for (op, f) in [("mul", scalar::mul as fn(u64, u64) -> u64), ("add", scalar::add), ("sub", scalar::sub)] {
                let v = match op {
                    "mul" => K::mul(x, y),
                    "add" => K::add(x, y),
                    _ => K::sub(x, y),
                };
                K::store(out.as_mut_ptr(), v);
                for l in 0..K::WIDTH {
                    assert_eq!(out[l], f(a[i + l], b[i + l]), "{op} {:#x} {:#x}", a[i + l], b[i + l]);
                }
            }
            K::store(out.as_mut_ptr(), K::mul_omega4(x));
            for l in 0..K::WIDTH {
                assert_eq!(out[l], scalar::mul(a[i + l], 1 << 48), "omega4 {:#x}", a[i + l]);
            }
        }
    }
}

#[test]
fn packed_paths_against_scalar() {
    let (a, b) = pairs();
    check_packed::<scalar::Portable4>(&a, &b);
    #[cfg(target_arch = "x86_64")]
    {
        if Backend::Avx2.supported() {
            #[target_feature(enable = "avx2")]
            unsafe fn run(a: &[u64], b: &[u64]) {
                check_packed::<avx2::Avx2>(a, b)
            }
            // SAFETY: AVX2 is supported.
            unsafe { run(&a, &b) }
        }
        if Backend::Avx512.supported() {
            #[target_feature(enable = "avx512f")]
            unsafe fn run(a: &[u64], b: &[u64]) {
                check_packed::<avx512::Avx512>(a, b)
            }
            // SAFETY: AVX-512F is supported.
            unsafe { run(&a, &b) }
        } else {
            eprintln!("note: no AVX-512F on this CPU, its path is compiled but not run");
        }
    }
}

#[test]
fn roots_match_plonky3_table() {
    assert_eq!(root_of_unity(0), 1);
    assert_eq!(root_of_unity(1), P - 1);
    assert_eq!(root_of_unity(2), 1 << 48); // what Packed::mul_omega4 multiplies by
    assert_eq!(root_of_unity(32), 0x1856_29dc_da58_878c);
    assert_eq!(TWO_ADICITY, 32);
}
