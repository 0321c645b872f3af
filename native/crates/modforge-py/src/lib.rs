//! The Python binding of modforge's native engine: the extension module
//! `modforge._native`, built by maturin with the `python` feature (see
//! `python.rs`; its Python face is `python/modforge/native.py`).
//!
//! The only crate of the workspace that knows Python.  It binds
//! `modforge-ring` (class `Ring`, `mont_mul`, the backend list) and
//! `modforge-rsa` (`rsa_crt_halves`, class `RsaKey`) and `modforge-ntt` (`ntt_transform`, `ntt_lde`,
//! `ntt_backends`, in `zk_ntt.rs`); none depends on it.
//! Without the `python` feature (`cargo test --workspace`) it is empty, so
//! the Rust tests neither compile PyO3 nor link libpython.

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod zk_ntt;
#[cfg(feature = "python")]
mod zk_msm;

// The emulated IFMA is for tests: a Python extension built with it would
// offer a slow `ifma` on CPUs without IFMA.
#[cfg(feature = "python")]
const _: () = assert!(
    !modforge_ring::IFMA_EMULATED,
    "the `ifma-emulated` feature is for `cargo test` only, not for the Python extension"
);
