//! Reproducible random instances and gnark-crypto's raw encoding (the benchmark's exchange format).
//!
//! The instance for (n, seed): a splitmix64 stream gives 253-bit words below r; the first two are
//! a and b, then the n scalars; point i is [(a + i b) mod r] G, computed as a running sum and
//! normalised with one inversion.  python/modforge/zk/msm_api.py generates the same instance.
//!
//! Raw encoding: a point is x || y, 48 bytes each, big-endian, the top three bits of the first
//! byte reserved for flags (0b000 uncompressed, 0b010 infinity: gnark-crypto's `mUncompressed` and
//! `mUncompressedInfinity`); a scalar is 32 bytes big-endian.

use modforge_bls12_377::{Fq, Fr, G1Affine, G1Jacobian, GENERATOR};

pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    /// A uniform integer below r by rejection: four words, the top one cut to 61 bits (253 in all).
    pub fn scalar(&mut self) -> [u64; 4] {
        loop {
            let s = [self.next(), self.next(), self.next(), self.next() >> 3];
            if !modforge_bls12_377::arith::geq(&s, &Fr::MODULUS) {
                return s;
            }
        }
    }
}

pub fn random_instance(n: usize, seed: u64) -> (Vec<G1Affine>, Vec<[u64; 4]>) {
    let mut rng = SplitMix(seed);
    let a = rng.scalar();
    let b = rng.scalar();
    let scalars: Vec<[u64; 4]> = (0..n).map(|_| rng.scalar()).collect();
    let step = GENERATOR.mul(&b).to_affine();
    let mut acc = GENERATOR.mul(&a);
    // normalised a block at a time: a Jacobian copy of all n points would add 144 bytes a point
    const BLOCK: usize = 1 << 16;
    let mut points = Vec::with_capacity(n);
    let mut jac = Vec::with_capacity(BLOCK.min(n));
    while points.len() < n {
        jac.clear();
        for _ in 0..BLOCK.min(n - points.len()) {
            jac.push(acc);
            acc = acc.add_affine(&step);
        }
        points.extend(G1Jacobian::batch_to_affine(&jac));
    }
    (points, scalars)
}

fn be_words<const N: usize>(bytes: &[u8]) -> [u64; N] {
    let mut out = [0u64; N];
    for (k, chunk) in bytes.rchunks(8).enumerate() {
        let mut w = [0u8; 8];
        w[8 - chunk.len()..].copy_from_slice(chunk);
        out[k] = u64::from_be_bytes(w);
    }
    out
}

fn words_be<const N: usize>(w: &[u64; N], out: &mut [u8]) {
    let len = out.len();
    for (k, word) in w.iter().enumerate() {
        let bytes = word.to_be_bytes();
        for (j, b) in bytes.iter().enumerate() {
            let pos = len as isize - 8 * (k as isize + 1) + j as isize;
            if pos >= 0 {
                out[pos as usize] = *b;
            }
        }
    }
}

pub const RAW_POINT: usize = 96;
pub const RAW_SCALAR: usize = 32;

pub fn encode_points(points: &[G1Affine]) -> Vec<u8> {
    let mut out = vec![0u8; points.len() * RAW_POINT];
    for (p, chunk) in points.iter().zip(out.chunks_mut(RAW_POINT)) {
        if p.infinity {
            chunk[0] = 0x40;
            continue;
        }
        words_be(&p.x.to_canonical(), &mut chunk[..48]);
        words_be(&p.y.to_canonical(), &mut chunk[48..]);
    }
    out
}

pub fn encode_scalars(scalars: &[[u64; 4]]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * RAW_SCALAR];
    for (s, chunk) in scalars.iter().zip(out.chunks_mut(RAW_SCALAR)) {
        words_be(s, chunk);
    }
    out
}

/// Decode one raw point (96 bytes); Err is the reason (no subgroup check: see the caller).
pub fn decode_point(chunk: &[u8], check_curve: bool) -> Result<G1Affine, &'static str> {
    let flags = chunk[0] >> 5;
    if flags == 0b010 {
        return Ok(G1Affine::IDENTITY);
    }
    if flags != 0 {
        return Err("flags are not those of an uncompressed point");
    }
    let x = Fq::from_canonical(be_words::<6>(&chunk[..48])).ok_or("x is not below q")?;
    let y = Fq::from_canonical(be_words::<6>(&chunk[48..])).ok_or("y is not below q")?;
    let p = G1Affine::new(x, y);
    if check_curve && !p.is_on_curve() {
        return Err("not on the curve");
    }
    Ok(p)
}

/// Decode raw points; Err names the index and the reason (no subgroup check: see the caller).
pub fn decode_points(bytes: &[u8], check_curve: bool) -> Result<Vec<G1Affine>, String> {
    if bytes.len() % RAW_POINT != 0 {
        return Err(format!("{} bytes is not a whole number of {RAW_POINT}-byte points", bytes.len()));
    }
    bytes
        .chunks(RAW_POINT)
        .enumerate()
        .map(|(i, chunk)| decode_point(chunk, check_curve).map_err(|why| format!("point {i}: {why}")))
        .collect()
}

pub fn decode_scalars(bytes: &[u8]) -> Result<Vec<[u64; 4]>, String> {
    if bytes.len() % RAW_SCALAR != 0 {
        return Err(format!("{} bytes is not a whole number of {RAW_SCALAR}-byte scalars", bytes.len()));
    }
    Ok(bytes.chunks(RAW_SCALAR).map(be_words::<4>).collect())
}
