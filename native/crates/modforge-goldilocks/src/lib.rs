//! Arithmetic in the Goldilocks field, p = 2^64 - 2^32 + 1 (seed 003, "NTT").
//!
//! Elements are `u64` in canonical form (`< p`) everywhere in the public API.  A product is reduced with
//! the seed's identities 2^64 = 2^32 - 1 and 2^96 = -1 (mod p): the 128-bit product
//! x = x_lo + 2^64 x_mid + 2^96 x_hi becomes x_lo - x_hi + (2^32 - 1) x_mid, with one conditional
//! correction after the subtraction and one after the addition, as in the Python model
//! `modforge.zk.goldilocks.reduce128`.
//!
//! Three implementations of the same operations:
//!
//! * [`scalar`]: portable Rust on `u64`/`u128` (the twin every packed path is tested against),
//! * [`avx2`]: four lanes in a 256-bit register (x86-64 with AVX2),
//! * [`avx512`]: eight lanes in a 512-bit register (x86-64 with AVX-512F).
//!
//! [`Backend::detect`] is the one place that asks the CPU which of them it runs; callers pick their
//! kernel from its answer once, not per operation.
//!
//! ```
//! use modforge_goldilocks::{scalar, root_of_unity, P};
//! let w = root_of_unity(3);                      // order 8
//! assert_eq!(scalar::pow(w, 8), 1);
//! assert_eq!(scalar::pow(w, 4), P - 1);
//! assert_eq!(scalar::mul(P - 1, P - 1), 1);      // (-1)^2
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

pub mod scalar;
#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;

/// The modulus, 2^64 - 2^32 + 1.
pub const P: u64 = 0u64.wrapping_sub(1 << 32).wrapping_add(1);
/// 2^64 mod p = 2^32 - 1: what a carry out of the 64-bit word is worth.
pub const EPSILON: u64 = (1 << 32) - 1;
/// The largest s with 2^s | p - 1.
pub const TWO_ADICITY: u32 = (P - 1).trailing_zeros();
/// The generator of the multiplicative group used by Plonky3 and plonky2.
pub const MULTIPLICATIVE_GENERATOR: u64 = 7;

/// The generator of the subgroup of order 2^32: 7^((p-1)/2^32), the top of Plonky3's
/// `TWO_ADIC_GENERATORS` table (and of the ZPrize harness's root table).
pub fn two_adic_generator() -> u64 {
    scalar::pow(MULTIPLICATIVE_GENERATOR, (P - 1) >> TWO_ADICITY)
}

/// w_n for n = 2^log_n: `TWO_ADIC_GENERATORS[log_n]` (each entry the square of the next).
///
/// # Panics
/// If `log_n > 32`.
pub fn root_of_unity(log_n: u32) -> u64 {
    assert!(log_n <= TWO_ADICITY, "no root of unity of order 2^{log_n} in Goldilocks");
    scalar::pow(two_adic_generator(), 1u64 << (TWO_ADICITY - log_n))
}

/// Lanes of canonical elements operated on together: the one interface of [`scalar::Portable4`],
/// [`avx2::Avx2`] and [`avx512::Avx512`], so that a kernel is written once, generic over it.
///
/// # Safety
/// The methods of a SIMD implementation may only run on a CPU that supports it ([`Backend::supported`]),
/// inside a function compiled for that instruction set; `load`/`store` need `WIDTH` valid elements.
pub trait Packed: Copy {
    /// Elements per vector.
    const WIDTH: usize;
    /// The register type.
    type V: Copy;
    /// WIDTH elements from `ptr` (unaligned).
    unsafe fn load(ptr: *const u64) -> Self::V;
    /// WIDTH elements to `ptr` (unaligned).
    unsafe fn store(ptr: *mut u64, v: Self::V);
    /// `x` in every lane.
    unsafe fn splat(x: u64) -> Self::V;
    /// Lane-wise a + b mod p.
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise a - b mod p.
    unsafe fn sub(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise a * b mod p.
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
    /// Lane-wise a * 2^48 mod p (2^48 is w_4, the 4th root of unity of the table): cheaper than `mul`.
    unsafe fn mul_omega4(a: Self::V) -> Self::V;
}

/// The instruction sets a packed kernel can use, fastest last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Backend {
    /// Scalar `u64`/`u128` code; any CPU.
    Portable,
    /// Four lanes per 256-bit register.
    Avx2,
    /// Eight lanes per 512-bit register.
    Avx512,
}

impl Backend {
    /// Every backend compiled in, in order.
    pub const ALL: [Backend; 3] = [Backend::Portable, Backend::Avx2, Backend::Avx512];

    /// The name used by the CLI and the benchmark.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }

    /// Whether this CPU runs the backend.  The only CPU feature test in the field and NTT crates.
    pub fn supported(self) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The fastest backend this CPU runs.
    pub fn detect() -> Backend {
        *Backend::ALL.iter().rev().find(|b| b.supported()).unwrap_or(&Backend::Portable)
    }

    /// Parse a name from [`Backend::name`].
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }
}

#[cfg(test)]
mod tests;
