//! Native engine of modforge: arithmetic modulo a fixed odd N.
//!
//! * [`portable`]: slice-based `u64`-limb Montgomery arithmetic (CIOS,
//!   dedicated squaring, conversions), no dependency beyond `core`.
//! * [`kernel`]: the [`kernel::Kernel`] contract every backend meets, the
//!   generic `sqr_n` / `mul` / `pow` over it, and the portable backend.
//! * [`fold`]: the redundant radix-2^50 table fold (plan, bounds, the portable
//!   twin of the IFMA kernel).
//! * `adx`, `ifma`, `ifma_mont` (x86-64): the fast backends.
//! * [`dispatch`]: the one place that checks CPU features and builds kernels.
//!
//! The `python` feature, which maturin turns on, adds the extension module
//! `modforge._native` (see `python.rs`).

pub mod dispatch;
pub mod fold;
pub mod kernel;
pub mod portable;
pub mod single;
pub mod rsa;

#[cfg(target_arch = "x86_64")]
pub mod adx;
#[cfg(target_arch = "x86_64")]
pub mod ifma;
#[cfg(target_arch = "x86_64")]
pub mod ifma_mont;

#[cfg(feature = "python")]
mod python;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod ct_tests;
