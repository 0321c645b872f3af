//! The arkworks anchor of `modforge bench msm` (ours).
//!
//!   msm-ark POINTS SCALARS THREADS REPEATS [raw|ark]
//!
//! `raw` (default), the files of the gnark-crypto anchor: 96-byte raw points (x || y big-endian,
//! 0x40 in the first byte for infinity), 32-byte big-endian scalars.  `ark`: arkworks'
//! `CanonicalSerialize` of a `Vec` of points (compressed or not, told by the size) and of a `Vec`
//! of scalars, read with arkworks' own `CanonicalDeserialize` (with its validation), which makes
//! this program the oracle of modforge's ark-format reader.  Prints `ms T` per repeat, then
//! `x 0x..` and `y 0x..` (or `infinity`).

use ark_bls12_377::{Fq, Fr, G1Affine, G1Projective};
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{BigInteger, PrimeField};
use ark_serialize::CanonicalDeserialize;
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
    if args.len() != 5 && args.len() != 6 {
        die("usage: msm-ark POINTS SCALARS THREADS REPEATS [raw|ark]");
    }
    let ark_format = args.get(5).map(String::as_str) == Some("ark");
    let pb = std::fs::read(&args[1]).unwrap_or_else(|e| die(&e.to_string()));
    let sb = std::fs::read(&args[2]).unwrap_or_else(|e| die(&e.to_string()));
    let threads: usize = args[3].parse().unwrap_or_else(|_| die("bad THREADS"));
    let repeats: usize = args[4].parse().unwrap_or_else(|_| die("bad REPEATS"));
    let (points, scalars) = if ark_format { read_ark(&pb, &sb) } else { read_raw(&pb, &sb) };
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

fn read_ark(pb: &[u8], sb: &[u8]) -> (Vec<G1Affine>, Vec<Fr>) {
    let n = u64::from_le_bytes(pb.get(..8).unwrap_or_else(|| die("points: too short")).try_into().unwrap()) as usize;
    let points = if pb.len() == 8 + 48 * n {
        Vec::<G1Affine>::deserialize_compressed(pb)
    } else {
        Vec::<G1Affine>::deserialize_uncompressed(pb)
    }
    .unwrap_or_else(|e| die(&format!("points: {e}")));
    let scalars = Vec::<Fr>::deserialize_uncompressed(sb).unwrap_or_else(|e| die(&format!("scalars: {e}")));
    if points.len() != scalars.len() {
        die("as many points as scalars");
    }
    (points, scalars)
}

fn read_raw(pb: &[u8], sb: &[u8]) -> (Vec<G1Affine>, Vec<Fr>) {
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
    (points, scalars)
}
