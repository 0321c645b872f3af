//! Multi-scalar multiplication over BLS12-377 G1 (seed 003's workload) for modforge.
//!
//! [`msm`] computes sum s_i P_i by Pippenger's bucket method:
//!
//! * scalars are cut into signed c-bit digits ([`digits`]), so a window needs 2^(c-1) buckets;
//! * c comes from a cost model per size and thread count ([`pippenger::choose_window`]);
//! * buckets accumulate in batch-affine form ([`batch`]): many independent affine additions share
//!   one inversion by Montgomery's trick; a point whose bucket is already in the batch waits in a
//!   queue, then falls back to XYZZ buckets;
//! * each window's buckets are reduced by running sums and the windows combined by doublings;
//! * threads take whole windows.
//!
//! [`fixed::FixedBaseTable`] is the fixed-base setting: shifted copies of the points precomputed
//! once, so that every window shares one bucket set.
//!
//! Scalars are integers below r as little-endian words; the MSM is variable time in the scalars
//! (bucket indices are memory addresses): do not use it where the scalars must stay secret from a
//! co-located attacker.
//!
//! ```
//! use modforge_bls12_377::{G1Affine, GENERATOR};
//! use modforge_msm::{msm, naive_msm, MsmConfig};
//! let points: Vec<G1Affine> = (1..=5u64).map(|k| GENERATOR.mul(&[k]).to_affine()).collect();
//! let scalars: Vec<[u64; 4]> = (0..5u64).map(|k| [k * 1000 + 7, k, 0, 0]).collect();
//! let fast = msm(&points, &scalars, &MsmConfig::default()).to_affine();
//! assert_eq!(fast, naive_msm(&points, &scalars).to_affine());
//! ```

pub mod batch;
pub mod digits;
pub mod fixed;
pub mod instance;
pub mod pippenger;

pub use fixed::{choose_fixed_window, FixedBaseTable};
pub use pippenger::{choose_window, cost, msm, msm_with_stats, naive_msm, reduce_scalar, MsmConfig, MsmStats};

#[cfg(test)]
mod tests;
