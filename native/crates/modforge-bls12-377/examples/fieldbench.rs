//! ns per Fq product, the dispatched kernel and the portable twin (a quick look, not the benchmark).
use modforge_bls12_377::{arith, Fq};
use std::time::Instant;

fn main() {
    let n = 20_000_000u64;
    let mut a = Fq::from_u64(3).inverse();
    let b = Fq::from_u64(7).inverse();
    let t = Instant::now();
    for _ in 0..n {
        a = a.mul(&b);
    }
    println!("dispatched (adx={}): {:.2} ns {:?}", arith::uses_adx(), t.elapsed().as_nanos() as f64 / n as f64, a.0[0] & 1);
    let t = Instant::now();
    let mut c = a.0;
    for _ in 0..n {
        c = arith::mont_mul_portable(&c, &b.0, &Fq::MODULUS, Fq::INV);
    }
    println!("portable: {:.2} ns {}", t.elapsed().as_nanos() as f64 / n as f64, c[0] & 1);
    let t = Instant::now();
    for _ in 0..n {
        a = a.add(&b);
    }
    println!("add: {:.2} ns {}", t.elapsed().as_nanos() as f64 / n as f64, a.0[0] & 1);
}
