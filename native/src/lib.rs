//! Native engine of modforge: arithmetic modulo a fixed odd N.
//!
//! * [`portable`]: slice-based `u64`-limb Montgomery arithmetic (CIOS,
//!   dedicated squaring, conversions), no dependency beyond `core`.
//! * [`kernel`]: the [`kernel::Kernel`] contract every backend meets, the
//!   generic `sqr_n` / `mul` / `pow` over it, and the portable backend.
//! * [`fold`]: the redundant radix-2^50 table fold (plan, bounds, the portable
//!   twin of the IFMA kernel).
//! * [`fold32`], [`fold32_shape`]: the same fold in radix 2^26-2^28 with 32-bit
//!   digit products (plan, bounds, the portable twin of the AVX-512F kernel).
//! * `adx`, `ifma`, `ifma_mont`, `avx512f` (x86-64): the fast backends;
//!   `ifma_emulated` (test builds with the `ifma-emulated` feature): IFMA's two
//!   instructions in software, so the IFMA kernels' tests run without IFMA.
//! * [`dispatch`]: the one place that checks CPU features and builds kernels.
//!
//! The `python` feature, which maturin turns on, adds the extension module
//! `modforge._native` (see `python.rs`).

pub mod dispatch;
pub mod fold;
pub mod fold32;
pub mod fold32_shape;
pub mod kernel;
pub mod portable;
pub mod single;
pub mod rsa;

#[cfg(target_arch = "x86_64")]
pub mod adx;
#[cfg(target_arch = "x86_64")]
pub mod avx512f;
#[cfg(target_arch = "x86_64")]
pub mod ifma;
#[cfg(target_arch = "x86_64")]
pub mod ifma_mont;
#[cfg(all(target_arch = "x86_64", feature = "ifma-emulated"))]
pub mod ifma_emulated;

// The emulated IFMA is for tests: a Python extension built with it would
// offer a slow `ifma` on CPUs without IFMA.
#[cfg(all(feature = "python", feature = "ifma-emulated"))]
compile_error!("the `ifma-emulated` feature is for `cargo test` only, not for the Python extension");

#[cfg(feature = "python")]
mod python;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod ct_tests;
