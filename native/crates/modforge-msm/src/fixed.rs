//! Fixed-base MSM: when the same points serve many MSMs (a prover's proving key, the ZPrize setting),
//! precompute for every point P_i and window w its shifted copy [2^(c w)] P_i once.  Then
//!
//!   sum_i s_i P_i = sum_i sum_w d_(i,w) [2^(c w)] P_i
//!
//! is one Pippenger window over n * W points with c-bit digits: every window shares ONE set of
//! 2^(c-1) buckets, there are no doublings between windows and one bucket reduction instead of W.
//! In multiplications the reductions saved would let c grow (20 bits at 2^20 points against 16 without
//! a table, 13 windows instead of 16), but measured, bucket sets that large lose more to cache misses
//! than they save (see [`DEFAULT_MAX_FIXED_WINDOW`]), so the gain at this machine's cache sizes is
//! the W - 1 reductions saved, a few per cent at 2^20.  The price is memory: the table holds
//! W = ceil(254 / c) points per input point (16 x at c = 16).
//!
//! Threads split the bucket range (not the points): each scans every digit, keeps those of its
//! buckets and reduces its own range, so the reduction is shared too.  A range starting at bucket lo
//! adds lo times its bucket sum to its running-sum result.
//!
//! The table file (docs/zk-msm.md, "Table file"): a 32-byte little-endian header, then the entries in
//! gnark-crypto's raw 96-byte encoding, point-major.
//!
//! ```text
//!   0  8  magic "MFMSMFB\0"      16  4  windows W = ceil(254 / c)
//!   8  4  version (1)            20  4  entry encoding (0: gnark raw, 96 bytes)
//!  12  4  window c               24  8  n (points)
//!  32  n * W * 96 bytes          entry i * W + w = [2^(c w)] P_i
//! ```

use modforge_bls12_377::{G1Affine, G1Jacobian};

use crate::batch::BatchBuckets;
use crate::digits::{for_each_signed_digit, window_count};
use crate::instance::{decode_point, encode_points, RAW_POINT};
use crate::pippenger::{batch_size_for, costs, reachable_buckets};

/// Widest window for a table: 2^21 buckets per thread (about 600 MiB with the XYZZ fallback set).
pub const MAX_FIXED_WINDOW: usize = 22;
pub const MIN_FIXED_WINDOW: usize = 2;
pub const TABLE_MAGIC: &[u8; 8] = b"MFMSMFB\0";
pub const TABLE_VERSION: u32 = 1;
pub const TABLE_HEADER: usize = 32;
/// Entry encoding 0: gnark-crypto's raw uncompressed point (instance.rs).
const ENCODING_RAW: u32 = 0;
/// Points whose windows the loader re-derives by doublings (a structural spot check).
const SPOT_CHECKS: usize = 8;

/// Modelled cost of a table MSM in field multiplications: n * W batch-affine additions and one
/// reduction of 2^(c-1) buckets (the thread count divides both, so it does not move the choice).
pub fn fixed_cost(n: usize, c: usize) -> f64 {
    let per_point = costs::BATCH_ADD + costs::INVERSION / batch_size_for(c) as f64;
    (n * window_count(c)) as f64 * per_point + (1usize << (c - 1)) as f64 * costs::BUCKET_REDUCTION
}

/// Widest window the cost model may pick.  The model counts multiplications only; measured on Zen 3
/// (thread CPU time, 2^16 points, 1 thread: c = 13 / 16 / 18 / 20 took 0.66-0.74 / 0.66-0.70 /
/// 0.86-1.08 / 1.43-1.60 s) bucket sets beyond 2^15 points (3.4 MB) lose more to cache misses than
/// the saved windows win, so the default stays at 16; a wider window is an explicit choice.
pub const DEFAULT_MAX_FIXED_WINDOW: usize = 16;

/// The window a table for n points is built with.
pub fn choose_fixed_window(n: usize) -> usize {
    (4..=DEFAULT_MAX_FIXED_WINDOW)
        .min_by(|&a, &b| fixed_cost(n, a).partial_cmp(&fixed_cost(n, b)).unwrap())
        .unwrap()
}

pub struct FixedBaseTable {
    window: usize,
    windows: usize,
    n: usize,
    /// point-major: entries[i * windows + w] = [2^(c w)] P_i
    entries: Vec<G1Affine>,
}

fn thread_count(threads: usize) -> usize {
    crate::MsmConfig { threads, ..Default::default() }.threads().max(1)
}

impl FixedBaseTable {
    /// Build the table of `points` for c-bit windows (None: [`choose_fixed_window`]).
    pub fn precompute(points: &[G1Affine], window: Option<usize>, threads: usize) -> Result<Self, String> {
        let n = points.len();
        let c = window.unwrap_or_else(|| choose_fixed_window(n));
        if !(MIN_FIXED_WINDOW..=MAX_FIXED_WINDOW).contains(&c) {
            return Err(format!("window {c} is outside {MIN_FIXED_WINDOW}..={MAX_FIXED_WINDOW}"));
        }
        let windows = window_count(c);
        let mut entries = vec![G1Affine::IDENTITY; n * windows];
        let threads = thread_count(threads);
        // blocks of points, each normalised with one inversion; threads take blocks in turn
        const BLOCK: usize = 2048;
        let blocks: Vec<(&[G1Affine], &mut [G1Affine])> =
            points.chunks(BLOCK).zip(entries.chunks_mut(BLOCK * windows)).collect();
        let per_thread = blocks.len().div_ceil(threads).max(1);
        let mut groups: Vec<Vec<(&[G1Affine], &mut [G1Affine])>> = Vec::new();
        let mut it = blocks.into_iter().peekable();
        while it.peek().is_some() {
            groups.push(it.by_ref().take(per_thread).collect());
        }
        std::thread::scope(|s| {
            for group in groups {
                s.spawn(move || {
                    let mut jac = Vec::with_capacity(BLOCK * windows);
                    for (pts, out) in group {
                        jac.clear();
                        for p in pts {
                            let mut q = G1Jacobian::from(*p);
                            for w in 0..windows {
                                jac.push(q);
                                if w + 1 < windows {
                                    for _ in 0..c {
                                        q = q.double();
                                    }
                                }
                            }
                        }
                        out.copy_from_slice(&G1Jacobian::batch_to_affine(&jac));
                    }
                });
            }
        });
        Ok(Self { window: c, windows, n, entries })
    }

    pub fn n(&self) -> usize {
        self.n
    }

    pub fn window(&self) -> usize {
        self.window
    }

    pub fn windows(&self) -> usize {
        self.windows
    }

    /// [2^(c w)] P_i.
    pub fn entry(&self, i: usize, w: usize) -> &G1Affine {
        &self.entries[i * self.windows + w]
    }

    /// Bytes of the table in memory (the entries) and in its file.
    pub fn memory_bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<G1Affine>()
    }

    pub fn file_bytes(n: usize, windows: usize) -> Option<usize> {
        n.checked_mul(windows)?.checked_mul(RAW_POINT)?.checked_add(TABLE_HEADER)
    }

    /// sum_i s_i P_i for scalars below r (little-endian words), one per point of the table.
    pub fn msm(&self, scalars: &[[u64; 4]], threads: usize) -> G1Jacobian {
        assert_eq!(scalars.len(), self.n, "one scalar per point of the table");
        let c = self.window;
        let bounds = self.bucket_ranges(thread_count(threads));
        let batch = batch_size_for(c);
        let worker = |lo: usize, hi: usize| -> G1Jacobian {
            let mut buckets = BatchBuckets::new(hi - lo, batch);
            for (s, row) in scalars.iter().zip(self.entries.chunks_exact(self.windows)) {
                for_each_signed_digit(s, c, |w, d| {
                    let b = (d.unsigned_abs() - 1) as usize;
                    let p = &row[w];
                    if b < lo || b >= hi || p.infinity {
                        return;
                    }
                    buckets.add(b - lo, &if d < 0 { p.neg() } else { *p });
                });
            }
            buckets.finish();
            let (weighted, sum) = buckets.reduce_parts();
            // bucket lo + k holds digit magnitude lo + k + 1; reduce_parts weighted it k + 1
            weighted.to_jacobian().add(&sum.to_jacobian().mul_u64(lo as u64))
        };
        if bounds.len() == 2 {
            return worker(bounds[0], bounds[1]);
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = bounds.windows(2).map(|r| s.spawn(move || worker(r[0], r[1]))).collect();
            handles.into_iter().fold(G1Jacobian::IDENTITY, |acc, h| acc.add(&h.join().unwrap()))
        })
    }

    /// Cut the 2^(c-1) buckets into `threads` contiguous ranges of equal expected work: every window
    /// but the top one spreads over all buckets, the top one (scalars < 2^253) only over its
    /// reachable low buckets.
    fn bucket_ranges(&self, threads: usize) -> Vec<usize> {
        let buckets = 1usize << (self.window - 1);
        let threads = threads.clamp(1, buckets);
        let top = reachable_buckets(self.window, self.windows - 1).max(1);
        let weight = |b: usize| (self.windows - 1) as f64 / buckets as f64 + if b < top { 1.0 / top as f64 } else { 0.0 };
        let total: f64 = (self.windows - 1) as f64 + 1.0;
        let mut bounds = vec![0];
        let mut acc = 0.0;
        for b in 0..buckets {
            acc += weight(b);
            if bounds.len() < threads && acc >= total * bounds.len() as f64 / threads as f64 {
                bounds.push(b + 1);
            }
        }
        while bounds.len() < threads {
            bounds.push(buckets);
        }
        bounds.push(buckets);
        bounds.dedup();
        bounds
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::file_bytes(self.n, self.windows).unwrap());
        out.extend_from_slice(TABLE_MAGIC);
        out.extend_from_slice(&TABLE_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.window as u32).to_le_bytes());
        out.extend_from_slice(&(self.windows as u32).to_le_bytes());
        out.extend_from_slice(&ENCODING_RAW.to_le_bytes());
        out.extend_from_slice(&(self.n as u64).to_le_bytes());
        out.extend_from_slice(&encode_points(&self.entries));
        out
    }

    /// Parse a table file: the header's fields and the length are checked, every entry must be on the
    /// curve with coordinates below q, and for a few points every window must be 2^c times the
    /// previous one.  (G1 membership of the points: [`Self::first_outside_subgroup`].)
    pub fn from_bytes(bytes: &[u8], threads: usize) -> Result<Self, String> {
        if bytes.len() < TABLE_HEADER {
            return Err(format!("{} bytes is shorter than the {TABLE_HEADER}-byte header", bytes.len()));
        }
        if &bytes[..8] != TABLE_MAGIC {
            return Err("not a modforge MSM table (bad magic)".into());
        }
        let u32_at = |k: usize| u32::from_le_bytes(bytes[k..k + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != TABLE_VERSION {
            return Err(format!("table version {version} (this modforge reads version {TABLE_VERSION})"));
        }
        let c = u32_at(12) as usize;
        if !(MIN_FIXED_WINDOW..=MAX_FIXED_WINDOW).contains(&c) {
            return Err(format!("window {c} is outside {MIN_FIXED_WINDOW}..={MAX_FIXED_WINDOW}"));
        }
        let windows = u32_at(16) as usize;
        if windows != window_count(c) {
            return Err(format!("{windows} windows do not match window {c} (expected {})", window_count(c)));
        }
        let encoding = u32_at(20);
        if encoding != ENCODING_RAW {
            return Err(format!("entry encoding {encoding} is unknown"));
        }
        let n = u64::from_le_bytes(bytes[24..32].try_into().unwrap());
        let expect = usize::try_from(n).ok().and_then(|n| Self::file_bytes(n, windows));
        if expect != Some(bytes.len()) {
            return Err(format!("{} bytes, but {n} points x {windows} windows need {}", bytes.len(),
                               expect.map_or("more than memory".to_string(), |e| e.to_string())));
        }
        let n = n as usize;
        let body = &bytes[TABLE_HEADER..];
        // decode in parallel, by whole entries; an error names the entry as (point, window)
        let threads = thread_count(threads);
        let per = (n * windows).div_ceil(threads).max(1);
        let parts: Vec<Result<Vec<G1Affine>, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = body
                .chunks(per * RAW_POINT)
                .enumerate()
                .map(|(t, part)| {
                    s.spawn(move || {
                        part.chunks(RAW_POINT)
                            .enumerate()
                            .map(|(j, chunk)| {
                                decode_point(chunk, true).map_err(|why| {
                                    let k = t * per + j;
                                    format!("entry of point {}, window {}: {why}", k / windows, k % windows)
                                })
                            })
                            .collect()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut entries = Vec::with_capacity(n * windows);
        for part in parts {
            entries.extend(part?);
        }
        let table = Self { window: c, windows, n, entries };
        for k in 0..SPOT_CHECKS.min(n) {
            let i = k * n / SPOT_CHECKS.min(n);
            for w in 0..windows - 1 {
                let mut q = G1Jacobian::from(*table.entry(i, w));
                for _ in 0..c {
                    q = q.double();
                }
                if q.to_affine() != *table.entry(i, w + 1) {
                    return Err(format!("entry of point {i}, window {}: not 2^{c} times window {w}'s (a corrupt table)", w + 1));
                }
            }
        }
        Ok(table)
    }

    /// The first point of the table (window 0) outside G1, if any.
    pub fn first_outside_subgroup(&self, threads: usize) -> Option<usize> {
        let threads = thread_count(threads);
        let per = self.n.div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.n)
                .step_by(per)
                .map(|start| {
                    s.spawn(move || (start..(start + per).min(self.n)).find(|&i| !self.entry(i, 0).is_in_subgroup()))
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().unwrap()).min()
        })
    }
}
