//! The arkworks anchor of `modforge bench msm` (ours).
//!
//!   msm-ark POINTS SCALARS THREADS REPEATS
//!
//! Same files and output as the gnark-crypto anchor: 96-byte raw points (x || y big-endian, 0x40
//! in the first byte for infinity), 32-byte big-endian scalars; prints `ms T` per repeat, then
//! `x 0x..` and `y 0x..` (or `infinity`).

use ark_bls12_377::{Fq, Fr, G1Affine, G1Projective};
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{BigInteger, PrimeField};
use std::time::Instant;

fn die(msg: &str) -> ! {
    eprintln!("msm-ark: {msg}");
    std::process::exit(2)
}

fn hex(v: &Fq) -> String {
    let bytes = v.into_bigint().to_bytes_be();
    let s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("0x{s}")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        die("usage: msm-ark POINTS SCALARS THREADS REPEATS");
    }
    let pb = std::fs::read(&args[1]).unwrap_or_else(|e| die(&e.to_string()));
    let sb = std::fs::read(&args[2]).unwrap_or_else(|e| die(&e.to_string()));
    let threads: usize = args[3].parse().unwrap_or_else(|_| die("bad THREADS"));
    let repeats: usize = args[4].parse().unwrap_or_else(|_| die("bad REPEATS"));
    if pb.len() % 96 != 0 || sb.len() % 32 != 0 || pb.len() / 96 != sb.len() / 32 {
        die("file sizes do not match");
    }
    let points: Vec<G1Affine> = pb
        .chunks(96)
        .enumerate()
        .map(|(i, b)| {
            if b[0] & 0xe0 == 0x40 {
                return G1Affine::zero();
            }
            let x = Fq::from_be_bytes_mod_order(&b[..48]);
            let y = Fq::from_be_bytes_mod_order(&b[48..]);
            let p = G1Affine::new_unchecked(x, y);
            if !p.is_on_curve() {
                die(&format!("point {i} is not on the curve"));
            }
            p
        })
        .collect();
    let scalars: Vec<Fr> = sb.chunks(32).map(Fr::from_be_bytes_mod_order).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut result = G1Projective::default();
    for _ in 0..repeats {
        let t = Instant::now();
        result = pool.install(|| G1Projective::msm(&points, &scalars).unwrap());
        println!("ms {:.3}", t.elapsed().as_secs_f64() * 1e3);
    }
    let a = result.into_affine();
    if a.is_zero() {
        println!("infinity");
    } else {
        println!("x {}", hex(&a.x));
        println!("y {}", hex(&a.y));
    }
}
