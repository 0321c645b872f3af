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
}

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
        }
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
