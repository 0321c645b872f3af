//! Pippenger's bucket method with signed digits, batch-affine buckets and threads over windows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use modforge_bls12_377::{Fr, G1Affine, G1Jacobian, G1Xyzz};

use crate::batch::{BatchBuckets, BatchStats};
use crate::digits::{bucket_and_sign, encode_scalar, window_count, MAX_WINDOW};

/// Field multiplications per operation, the unit of the cost model (a squaring counts as one).
pub mod costs {
    /// batch-affine addition: Montgomery's trick 3M, slope 1M, x 1S, y 1M
    pub const BATCH_ADD: f64 = 6.0;
    /// one field inversion by Fermat: ~377 squarings and ~190 products
    pub const INVERSION: f64 = 570.0;
    /// running sums per bucket: one mixed XYZZ addition (8M + 2S) and one XYZZ addition (12M + 2S)
    pub const BUCKET_REDUCTION: f64 = 24.0;
}

#[derive(Clone, Debug, Default)]
pub struct MsmConfig {
    /// worker threads (0: all available cores)
    pub threads: usize,
    /// window width in bits (None: the cost model's choice)
    pub window: Option<usize>,
    /// additions per shared inversion (None: derived from the window)
    pub batch_size: Option<usize>,
    /// windows finished so far, for a caller showing progress from another thread
    pub progress: Option<Arc<AtomicUsize>>,
}

impl MsmConfig {
    pub fn threads(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        } else {
            self.threads
        }
    }

    /// The windows an n-point MSM runs with this configuration (the total of `progress`).
    pub fn windows_for(&self, n: usize) -> usize {
        window_count(self.window.unwrap_or_else(|| choose_window(n, self.threads())).clamp(2, MAX_WINDOW))
    }
}

/// Batch size for c-bit windows: small against the 2^(c-1) buckets so conflicts stay rare, large
/// enough that the inversion is spread thin.
pub fn batch_size_for(c: usize) -> usize {
    ((1usize << (c - 1)) / 8).clamp(16, 2048)
}

/// Modelled cost, in field multiplications on the busiest thread, of an n-point MSM with c-bit
/// windows on `threads` threads (windows are shared out whole).
pub fn cost(n: usize, c: usize, threads: usize) -> f64 {
    let windows = window_count(c);
    let rounds = windows.div_ceil(threads.max(1)) as f64;
    let buckets = (1usize << (c - 1)) as f64;
    let batch = batch_size_for(c) as f64;
    let per_point = costs::BATCH_ADD + costs::INVERSION / batch;
    rounds * (n as f64 * per_point + buckets * costs::BUCKET_REDUCTION)
}

/// The window the cost model picks for n points and `threads` threads.
pub fn choose_window(n: usize, threads: usize) -> usize {
    (2..=MAX_WINDOW)
        .min_by(|&a, &b| cost(n, a, threads).partial_cmp(&cost(n, b, threads)).unwrap())
        .unwrap()
}

/// s mod r for any 256-bit s (little-endian words).
pub fn reduce_scalar(s: &[u64; 4]) -> [u64; 4] {
    let mut v = *s;
    while modforge_bls12_377::arith::geq(&v, &Fr::MODULUS) {
        v = modforge_bls12_377::arith::sub_words(&v, &Fr::MODULUS).0;
    }
    v
}

#[derive(Clone, Copy, Debug, Default)]
pub struct MsmStats {
    pub window: usize,
    pub windows: usize,
    pub threads: usize,
    pub batch: BatchStats,
}

/// sum s_i P_i; scalars are integers below r (little-endian words), points affine (identity allowed).
pub fn msm(points: &[G1Affine], scalars: &[[u64; 4]], cfg: &MsmConfig) -> G1Jacobian {
    msm_with_stats(points, scalars, cfg).0
}

pub fn msm_with_stats(points: &[G1Affine], scalars: &[[u64; 4]], cfg: &MsmConfig) -> (G1Jacobian, MsmStats) {
    assert_eq!(points.len(), scalars.len(), "as many points as scalars");
    let n = points.len();
    let threads = cfg.threads();
    let c = cfg.window.unwrap_or_else(|| choose_window(n, threads)).clamp(2, MAX_WINDOW);
    let windows = window_count(c);
    let mut stats = MsmStats { window: c, windows, threads, ..Default::default() };
    if n == 0 {
        return (G1Jacobian::IDENTITY, stats);
    }
    let digits = signed_digits(scalars, c, threads);
    let batch = cfg.batch_size.unwrap_or_else(|| batch_size_for(c));
    let next = AtomicUsize::new(0);
    let sums: Mutex<Vec<G1Xyzz>> = Mutex::new(vec![G1Xyzz::IDENTITY; windows]);
    let total: Mutex<BatchStats> = Mutex::new(BatchStats::default());
    let worker = || {
        let mut buckets = BatchBuckets::new(1 << (c - 1), batch);
        loop {
            let w = next.fetch_add(1, Ordering::Relaxed);
            if w >= windows {
                break;
            }
            buckets.reset();
            let row = &digits[w * n..(w + 1) * n];
            // scalars below r < 2^253 reach only the low buckets of the top windows: too few for
            // conflict-free batches, so those windows accumulate in XYZZ directly
            let reachable = reachable_buckets(c, w);
            let direct = reachable < 4 * batch;
            for (d, p) in row.iter().zip(points) {
                if *d == 0 || p.infinity {
                    continue;
                }
                let (b, negative) = bucket_and_sign(*d);
                let q = if negative { p.neg() } else { *p };
                if direct {
                    buckets.add_direct(b, &q);
                } else {
                    buckets.add(b, &q);
                }
            }
            buckets.finish();
            let s = buckets.reduce();
            sums.lock().unwrap()[w] = s;
            if let Some(done) = &cfg.progress {
                done.fetch_add(1, Ordering::Relaxed);
            }
        }
        let mut t = total.lock().unwrap();
        t.batched += buckets.stats.batched;
        t.batches += buckets.stats.batches;
        t.queued += buckets.stats.queued;
        t.fallback += buckets.stats.fallback;
        t.direct += buckets.stats.direct;
    };
    if threads <= 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads.min(windows) {
                s.spawn(worker);
            }
        });
    }
    stats.batch = *total.lock().unwrap();
    let sums = sums.into_inner().unwrap();
    // Horner over the windows: acc = 2^c acc + W_w from the top
    let mut acc = sums[windows - 1];
    for w in (0..windows - 1).rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc = acc.add(&sums[w]);
    }
    (acc.to_jacobian(), stats)
}

/// How many buckets window w can reach for scalars below 2^253: the digit magnitude is at most
/// the window's value plus a carry, and at most 2^(c-1).
pub fn reachable_buckets(c: usize, w: usize) -> usize {
    let offset = w * c;
    let top_bits = 253usize.saturating_sub(offset);
    if top_bits >= c {
        1 << (c - 1)
    } else {
        ((1usize << top_bits) + 1).min(1 << (c - 1))
    }
}

/// Window-major digit table (digits[w * n + i]), filled by `threads` threads over point ranges.
fn signed_digits(scalars: &[[u64; 4]], c: usize, threads: usize) -> Vec<u16> {
    let n = scalars.len();
    let windows = window_count(c);
    let mut digits = vec![0u16; windows * n];
    let chunk = n.div_ceil(threads.max(1)).max(1);
    // each thread fills its own range of points in every window row
    let rows: Vec<&mut [u16]> = digits.chunks_mut(n).collect();
    let mut per_thread: Vec<Vec<&mut [u16]>> = (0..n.div_ceil(chunk)).map(|_| Vec::new()).collect();
    for row in rows {
        for (t, part) in row.chunks_mut(chunk).enumerate() {
            per_thread[t].push(part);
        }
    }
    std::thread::scope(|s| {
        for (t, mut parts) in per_thread.into_iter().enumerate() {
            let start = t * chunk;
            let mut job = move || {
                let mut tmp = [0u16; 128];
                for (k, s) in scalars[start..(start + chunk).min(n)].iter().enumerate() {
                    encode_scalar(s, c, &mut tmp);
                    for (w, part) in parts.iter_mut().enumerate() {
                        part[k] = tmp[w];
                    }
                }
            };
            if threads <= 1 {
                job();
            } else {
                s.spawn(job);
            }
        }
    });
    digits
}

/// The oracle: sum of [s_i] P_i by double-and-add.
pub fn naive_msm(points: &[G1Affine], scalars: &[[u64; 4]]) -> G1Jacobian {
    points
        .iter()
        .zip(scalars)
        .fold(G1Jacobian::IDENTITY, |acc, (p, s)| acc.add(&p.mul(s)))
}
