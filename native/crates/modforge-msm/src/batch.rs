//! Bucket accumulation in batch-affine form.
//!
//! Buckets are affine points.  Additions into distinct buckets are gathered into a batch; the batch
//! computes every slope (y2 - y1)/(x2 - x1) with one field inversion by Montgomery's trick (3
//! multiplications per element instead of an inversion each), then 1M + 1S + 1M per element for
//! the new point: about 6 multiplications per addition against 10 for an XYZZ mixed addition.
//!
//! A point whose bucket is already in the current batch (a conflict) waits in a queue and joins a
//! later batch; when the queue is full it goes to the fallback: a second set of buckets in XYZZ
//! coordinates.  The fallback also takes the cases the affine formula cannot do: P + P (doubling)
//! and P + (-P).  A bucket's value is its affine part plus its XYZZ part.

use modforge_bls12_377::{Fq, G1Affine, G1Xyzz};

pub struct BatchBuckets {
    pub affine: Vec<G1Affine>,
    pub fallback: Vec<G1Xyzz>,
    used_fallback: bool,
    /// batch number in which a bucket was last scheduled (a bucket is busy when equal to `epoch`)
    busy: Vec<u32>,
    epoch: u32,
    batch_bucket: Vec<u32>,
    batch_point: Vec<G1Affine>,
    scratch: Vec<Fq>,
    queue: Vec<(u32, G1Affine)>,
    batch_size: usize,
    queue_size: usize,
    pub stats: BatchStats,
}

#[derive(Default, Clone, Copy, Debug)]
pub struct BatchStats {
    pub batched: u64,
    pub batches: u64,
    pub queued: u64,
    pub fallback: u64,
    pub direct: u64,
}

impl BatchBuckets {
    pub fn new(buckets: usize, batch_size: usize) -> Self {
        let batch_size = batch_size.max(1);
        Self {
            affine: vec![G1Affine::IDENTITY; buckets],
            fallback: vec![G1Xyzz::IDENTITY; buckets],
            used_fallback: false,
            busy: vec![0; buckets],
            epoch: 1,
            batch_bucket: Vec::with_capacity(batch_size),
            batch_point: Vec::with_capacity(batch_size),
            scratch: Vec::with_capacity(batch_size),
            queue: Vec::with_capacity(batch_size),
            batch_size,
            queue_size: batch_size,
            stats: BatchStats::default(),
        }
    }

    /// Empty every bucket for the next window (the allocations are kept).
    pub fn reset(&mut self) {
        self.affine.fill(G1Affine::IDENTITY);
        if self.used_fallback {
            self.fallback.fill(G1Xyzz::IDENTITY);
            self.used_fallback = false;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.busy.fill(0);
            self.epoch = 1;
        }
    }

    /// bucket[b] += p straight into the XYZZ buckets: for windows with too few reachable buckets
    /// to fill a batch without conflicts (the top window).
    #[inline(always)]
    pub fn add_direct(&mut self, b: usize, p: &G1Affine) {
        self.fallback[b] = self.fallback[b].add_affine(p);
        self.used_fallback = true;
        self.stats.direct += 1;
    }

    fn to_fallback(&mut self, b: usize, p: &G1Affine) {
        self.fallback[b] = self.fallback[b].add_affine(p);
        self.used_fallback = true;
        self.stats.fallback += 1;
    }

    /// Try to schedule bucket[b] += p; false if b is already in the batch.
    #[inline(always)]
    fn try_schedule(&mut self, b: usize, p: &G1Affine) -> bool {
        if self.busy[b] == self.epoch {
            return false;
        }
        // the bucket itself is read only when the batch runs (an empty bucket, P + P and P - P are
        // sorted out there), so its cache miss overlaps with the scheduling of the next points
        prefetch(&self.affine[b]);
        self.busy[b] = self.epoch;
        self.batch_bucket.push(b as u32);
        self.batch_point.push(*p);
        if self.batch_bucket.len() == self.batch_size {
            self.flush();
        }
        true
    }

    /// bucket[b] += p (p not at infinity).
    #[inline(always)]
    pub fn add(&mut self, b: usize, p: &G1Affine) {
        if !self.try_schedule(b, p) {
            if self.queue.len() >= self.queue_size {
                self.to_fallback(b, p);
            } else {
                self.queue.push((b as u32, *p));
                self.stats.queued += 1;
            }
        }
    }

    /// Run the pending batch, then retry the queue against the emptied batch.
    pub fn flush(&mut self) {
        self.run_batch();
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.busy.fill(0);
            self.epoch = 1;
        }
        if !self.queue.is_empty() {
            let waiting = std::mem::take(&mut self.queue);
            let mut keep = Vec::with_capacity(self.queue_size);
            for (b, p) in waiting.iter() {
                // a flush triggered from inside try_schedule re-enters here with an empty queue
                if !self.try_schedule(*b as usize, p) {
                    keep.push((*b, *p));
                }
            }
            keep.extend(self.queue.drain(..));
            self.queue = keep;
        }
    }

    /// Finish: run batches until the queue is empty.
    pub fn finish(&mut self) {
        loop {
            self.flush();
            if self.queue.is_empty() && self.batch_bucket.is_empty() {
                break;
            }
        }
    }

    fn run_batch(&mut self) {
        let n = self.batch_bucket.len();
        if n == 0 {
            return;
        }
        self.stats.batches += 1;
        self.stats.batched += n as u64;
        // prefix products of the x differences; an empty bucket takes the point, a bucket with the
        // point's x (P + P or P - P, no affine chord) goes to the fallback: both leave the product
        self.scratch.clear();
        let mut acc = Fq::ONE;
        for k in 0..n {
            self.scratch.push(acc);
            let b = self.batch_bucket[k] as usize;
            let q = self.affine[b];
            let p = self.batch_point[k];
            if q.infinity {
                self.affine[b] = p;
                self.batch_bucket[k] = u32::MAX;
            } else if q.x == p.x {
                self.to_fallback(b, &p);
                self.batch_bucket[k] = u32::MAX;
            } else {
                acc = acc.mul(&p.x.sub(&q.x));
            }
        }
        let mut inv = acc.inverse();
        for k in (0..n).rev() {
            if self.batch_bucket[k] == u32::MAX {
                continue;
            }
            let b = self.batch_bucket[k] as usize;
            let p = self.batch_point[k];
            let q = self.affine[b];
            let dx = p.x.sub(&q.x);
            let inv_k = inv.mul(&self.scratch[k]);
            inv = inv.mul(&dx);
            let slope = p.y.sub(&q.y).mul(&inv_k);
            let x3 = slope.square().sub(&q.x).sub(&p.x);
            let y3 = slope.mul(&q.x.sub(&x3)).sub(&q.y);
            self.affine[b] = G1Affine::new(x3, y3);
        }
        self.batch_bucket.clear();
        self.batch_point.clear();
    }

    /// sum_k (k + 1) bucket[k] by two running sums from the top bucket down.
    pub fn reduce(&self) -> G1Xyzz {
        self.reduce_parts().0
    }

    /// (sum_k (k + 1) bucket[k], sum_k bucket[k]): the second is the last running sum, which a
    /// caller holding buckets lo.. of a larger set needs to add lo times.
    pub fn reduce_parts(&self) -> (G1Xyzz, G1Xyzz) {
        let mut running = G1Xyzz::IDENTITY;
        let mut total = G1Xyzz::IDENTITY;
        for k in (0..self.affine.len()).rev() {
            running = running.add_affine(&self.affine[k]);
            if self.used_fallback && !self.fallback[k].is_identity() {
                running = running.add(&self.fallback[k]);
            }
            total = total.add(&running);
        }
        (total, running)
    }
}

/// Ask for the cache lines of a bucket ahead of its use (a hint: a no-op where not available).
#[inline(always)]
fn prefetch(p: &G1Affine) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = p as *const G1Affine as *const i8;
        // SAFETY: prefetching is a hint that never faults; the addresses lie inside *p (104 bytes, so
        // these three reach every cache line it spans)
        unsafe {
            _mm_prefetch(start, _MM_HINT_T0);
            _mm_prefetch(start.add(64), _MM_HINT_T0);
            _mm_prefetch(start.add(std::mem::size_of::<G1Affine>() - 1), _MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
