//! Per-size constants of a transform, made once and cached: the 4-step split, the sub-transforms'
//! twiddle tables, the bit-reversal tables and the scaling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use modforge_goldilocks::{root_of_unity, scalar};

/// Below this size a transform is one radix-2 pass per column (the 4-step needs n1, n2 >= 8).
pub const MIN_FOUR_STEP_LOG: u32 = 6;
/// Bytes of a pass-2 block (n2 rows of `lanes` elements) that keep it in this CPU's L2 with room for the
/// twiddles; the split n = n1 * n2 is chosen from it.
pub const BLOCK_BYTES: usize = 256 << 10;

/// Everything about one (size, direction, split).
#[derive(Debug)]
pub struct Plan {
    pub log_n: u32,
    pub log_n1: u32,
    pub log_n2: u32,
    /// The inverse transform (its w_4 is -2^48).
    pub inverse: bool,
    /// w_n, or w_n^-1 for the inverse.
    pub root: u64,
    /// 1, or 1/n for the inverse.
    pub scale: u64,
    /// root^(n2 j) for j < n1: the twiddles of the size-n1 sub-transforms (radix 4 reads up to 3n1/4).
    pub twiddles1: Vec<u64>,
    /// root^(n1 j) for j < n2.
    pub twiddles2: Vec<u64>,
    /// root^k1 for k1 < n1: the ratio of consecutive 4-step twiddles in row k1.
    pub row_roots: Vec<u64>,
    /// bitrev of 0..n1 and 0..n2 in log_n1 and log_n2 bits.
    pub bitrev1: Vec<u32>,
    pub bitrev2: Vec<u32>,
    /// Pass 2's twiddles for one column, made on first use (sizes up to 2^[`MAX_TABLE_LOG`]): see
    /// [`Plan::group_twiddles`].
    group_table: OnceLock<Option<(usize, Vec<u64>)>>,
}

/// Largest size whose pass-2 twiddles are tabulated (8 bytes a point: 32 MiB at 2^22).  Above it the
/// table would come from DRAM every transform, and computing the twiddles is no slower than reading them.
pub const MAX_TABLE_LOG: u32 = 22;

fn powers(x: u64, count: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(count);
    let mut acc = 1u64;
    for _ in 0..count {
        out.push(acc);
        acc = scalar::mul(acc, x);
    }
    out
}

fn bitrev_table(bits: u32) -> Vec<u32> {
    (0..1u64 << bits).map(|i| if bits == 0 { 0 } else { (i.reverse_bits() >> (64 - bits)) as u32 }).collect()
}

/// log2 of n2 for a transform of 2^log_n points whose pass-2 blocks are `lanes` wide: the balanced
/// split, n2 the larger half, shrunk until a block fits [`BLOCK_BYTES`].
pub fn split_log_n2(log_n: u32, lanes: usize) -> u32 {
    if log_n < MIN_FOUR_STEP_LOG {
        return 0;
    }
    let mut log_n2 = log_n.div_ceil(2);
    while log_n2 > 3 && (lanes << log_n2) * 8 > BLOCK_BYTES {
        log_n2 -= 1;
    }
    log_n2
}

impl Plan {
    pub fn new(log_n: u32, log_n2: u32, inverse: bool) -> Plan {
        let log_n1 = log_n - log_n2;
        let w = root_of_unity(log_n);
        let root = if inverse { scalar::inverse(w) } else { w };
        let scale = if inverse { scalar::inverse(1u64 << log_n) } else { 1 };
        let (n1, n2) = (1usize << log_n1, 1usize << log_n2);
        Plan {
            log_n,
            log_n1,
            log_n2,
            inverse,
            root,
            scale,
            twiddles1: powers(scalar::pow(root, n2 as u64), n1),
            twiddles2: powers(scalar::pow(root, n1 as u64), n2),
            row_roots: if log_n2 > 0 { powers(root, n1) } else { Vec::new() },
            bitrev1: bitrev_table(log_n1),
            bitrev2: bitrev_table(log_n2),
            group_table: OnceLock::new(),
        }
    }

    /// The table of w^(j2 k1) * scale laid out as pass 2 reads it for groups of `rows` rows of one
    /// column: entry ((k1 / rows) * n2 + j2) * rows + k1 % rows.  One product per twiddle in pass 2
    /// instead of two (the twiddle's own step and its use).  None above [`MAX_TABLE_LOG`] or for
    /// another group size than the first asked for.
    pub fn group_twiddles(&self, rows: usize) -> Option<&[u64]> {
        if self.log_n > MAX_TABLE_LOG || self.log_n2 == 0 {
            return None;
        }
        let built = self.group_table.get_or_init(|| {
            let (n1, n2) = (1usize << self.log_n1, 1usize << self.log_n2);
            let mut table = vec![0u64; n1 * n2];
            for k1 in 0..n1 {
                let mut t = self.scale;
                let base = (k1 / rows) * n2 * rows + k1 % rows;
                for j2 in 0..n2 {
                    table[base + j2 * rows] = t;
                    t = scalar::mul(t, self.row_roots[k1]);
                }
            }
            Some((rows, table))
        });
        built.as_ref().filter(|(r, _)| *r == rows).map(|(_, t)| t.as_slice())
    }
}

/// The plan for (log_n, log_n2, inverse), made on first use and kept for the life of the process.
pub fn cached_plan_split(log_n: u32, log_n2: u32, inverse: bool) -> Arc<Plan> {
    static PLANS: OnceLock<Mutex<HashMap<(u32, u32, bool), Arc<Plan>>>> = OnceLock::new();
    let mut plans = PLANS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    plans.entry((log_n, log_n2, inverse)).or_insert_with(|| Arc::new(Plan::new(log_n, log_n2, inverse))).clone()
}

/// The cached plan for one column (or a batch whose pass-2 blocks are 8 lanes wide).
pub fn cached_plan(log_n: u32, inverse: bool) -> Arc<Plan> {
    cached_plan_split(log_n, split_log_n2(log_n, 8), inverse)
}
