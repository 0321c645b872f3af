//! Arithmetic modulo a fixed odd N, the engine under modforge's squaring
//! chains (VDFs, time-lock puzzles) and its RSA kernel: one [`kernel::Kernel`]
//! per backend, chosen for the CPU at run time by [`dispatch`], the one place
//! that checks CPU features.
//!
//! * [`portable`]: slice-based `u64`-limb Montgomery arithmetic (CIOS,
//!   dedicated squaring, conversions), no dependency beyond `core`.
//! * [`kernel`]: the [`kernel::Kernel`] contract every backend meets, the
//!   generic `sqr_n` / `mul` / `pow` over it, and the portable backend.
//! * [`fold`]: the redundant radix-2^50 table fold (plan, bounds, the portable
//!   twin of the IFMA kernel).
//! * [`fold32`], [`fold32_shape`]: the same fold in radix 2^26-2^28 with 32-bit
//!   digit products (plan, bounds, the portable twin of the AVX-512F kernel).
//! * `adx`, `ifma`, `ifma_mont`, `avx512f`, `avx2`, `fma` (x86-64): the
//!   fast backends (`avx2`: the fold of `avx512f` on 256-bit vectors; `fma`:
//!   the radix-2^50 fold with FP64 fused multiply-adds, scratch layout in
//!   `fma_layout`; both for CPUs without AVX-512);
//!   `ifma_emulated` (test builds with the `ifma-emulated` feature): IFMA's two
//!   instructions in software, so the IFMA kernels' tests run without IFMA.
//! * [`dispatch`]: the one place that checks CPU features and builds kernels.
//!
//! This crate knows neither RSA (`modforge-rsa` builds on it) nor Python
//! (`modforge-py` binds it); its one modforge dependency is `modforge-ct`.
//!
//! `x^(2^k) mod N` on every backend this CPU runs, against `num-bigint`'s
//! `modpow` with the exponent `2^k` written out:
//!
//! ```
//! use modforge_ring::{dispatch, kernel};
//! use num_bigint::BigUint;
//!
//! // A 256-bit odd modulus and x, as little-endian 64-bit limbs.
//! let n = [0x9e37_79b9_7f4a_7c15, 0xf39c_c060_5ced_c835, 0x1082_276b_f3a2_7251, 0xc2b2_ae3d_27d4_eb4f];
//! let x = [3, 0, 0, 0];
//! let k = 1000;
//! let big = |limbs: &[u64]| BigUint::from_slice(&limbs.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]).collect::<Vec<_>>());
//! let expected = big(&x).modpow(&(BigUint::from(1u32) << k), &big(&n));
//!
//! for &backend in dispatch::BACKENDS.iter().filter(|b| dispatch::supported(b)) {
//!     let ring = dispatch::build(backend, &n).unwrap();
//!     let y = kernel::sqr_n(ring.as_ref(), &x, k as u64);
//!     assert_eq!(big(&y), expected, "{backend}");
//! }
//! //! ```

pub mod dispatch;
pub mod fold;
pub mod fold32;
pub mod fold32_shape;
pub mod kernel;
pub mod portable;
pub mod single;

#[cfg(target_arch = "x86_64")]
pub mod adx;
#[cfg(target_arch = "x86_64")]
pub mod avx512f;
#[cfg(target_arch = "x86_64")]
pub mod fma;
#[cfg(target_arch = "x86_64")]
pub mod fma_layout;
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod ifma;
#[cfg(target_arch = "x86_64")]
pub mod ifma_mont;
#[cfg(all(target_arch = "x86_64", feature = "ifma-emulated"))]
pub mod ifma_emulated;

/// Whether the IFMA instructions are emulated (the `ifma-emulated` test
/// feature): the binding crate refuses to build a Python extension so.
pub const IFMA_EMULATED: bool = cfg!(feature = "ifma-emulated");

#[cfg(test)]
mod tests;
