//! Native engine of modforge.
//!
//! [`portable`] holds the arithmetic as plain slice-based functions on `u64`
//! limbs (tested by `cargo test`, no Python involved).  The `python` feature,
//! which maturin turns on, adds the extension module `modforge._native` that
//! converts Python integers to limbs, checks the inputs and calls them.

pub mod portable;

#[cfg(feature = "python")]
mod python;
