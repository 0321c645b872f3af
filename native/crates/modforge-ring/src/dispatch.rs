//! The one dispatch point: which backends exist, which this CPU runs, and
//! building a [`Kernel`] for a modulus.  Every fast path is reached only
//! through [`build`], after [`supported`] said yes; nothing else in the crate
//! tests CPU features.

use crate::fold::FoldPortableKernel;
use crate::fold32::Fold32PortableKernel;
use crate::kernel::{Kernel, PortableKernel};

/// Every backend compiled into this crate, fastest-capable last.
///
/// * `portable`: Montgomery form, CIOS products, dedicated squaring (u64
///   limbs, u128 products); any CPU.
/// * `fold-portable`: the scalar twin of `ifma` (same digits); any CPU, slow.
/// * `adx`: the Montgomery backend with MULX/ADCX/ADOX (x86-64 BMI2 + ADX).
/// * `ifma`: AVX-512 IFMA, redundant radix 2^50 with the table fold.
/// * `ifma-mont`: AVX-512 IFMA, radix 2^52 almost-Montgomery (kept for the
///   comparison; slower than `ifma` at every width measured).
/// * `fold32-portable`: the scalar twin of `avx512f` (same digits); any CPU,
///   slow.
/// * `avx512f`: AVX-512F without IFMA, redundant radix 2^27 or 2^28 with the
///   table fold and 32-bit products (`vpmuludq`).
/// * `fma`: AVX2 + FMA, the radix-2^50 table fold of `ifma` (the same
///   digits) with each 52-bit product split exactly by two FP64 fused
///   multiply-adds rounded toward zero; for CPUs without AVX-512.
/// * `avx2`: the same fold and digits as `avx512f` with 256-bit `vpmuludq`
///   (x86-64 AVX2, for CPUs without AVX-512).
pub const BACKENDS: &[&str] = &[
    "portable",
    "fold-portable",
    "adx",
    "ifma",
    "ifma-mont",
    "fold32-portable",
    "avx512f",
    "fma",
    "avx2",
];

/// The scalar backends: any CPU, any odd modulus from 3 up to `MAX_BITS`.
pub const PORTABLE_BACKENDS: &[&str] = &["portable", "fold-portable", "fold32-portable"];

/// Smallest and largest modulus widths (bits) of the fast backends; the
/// portable ones take any odd modulus >= 3 up to `MAX_BITS`.
pub const MIN_FAST_BITS: u64 = 256;
pub const MAX_BITS: u64 = 4096;

/// CPU features the backends look at, as `(name, present)`.
pub fn cpu_features() -> Vec<(&'static str, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        vec![
            ("bmi2", std::arch::is_x86_feature_detected!("bmi2")),
            ("adx", std::arch::is_x86_feature_detected!("adx")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            (
                "avx512ifma",
                std::arch::is_x86_feature_detected!("avx512ifma"),
            ),
            ("avx512vl", std::arch::is_x86_feature_detected!("avx512vl")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
        ]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

/// Whether this CPU runs backend `name` (false for unknown names).
pub fn supported(name: &str) -> bool {
    match name {
        "portable" | "fold-portable" | "fold32-portable" => true,
        #[cfg(target_arch = "x86_64")]
        "adx" => {
            std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("adx")
        }
        #[cfg(target_arch = "x86_64")]
        "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
        #[cfg(target_arch = "x86_64")]
        "fma" => std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"),
        #[cfg(target_arch = "x86_64")]
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        #[cfg(target_arch = "x86_64")]
        "ifma" | "ifma-mont" => {
            std::arch::is_x86_feature_detected!("avx512f")
                && (cfg!(feature = "ifma-emulated") || std::arch::is_x86_feature_detected!("avx512ifma"))
        }
        _ => false,
    }
}

/// Why a kernel could not be built: the parameter at fault and the problem
/// (rendered `"<param>: <problem>"` by the Python binding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    pub param: &'static str,
    pub problem: String,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.param, self.problem)
    }
}

fn bits_of(m: &[u64]) -> u64 {
    match m.iter().rposition(|&w| w != 0) {
        Some(i) => 64 * i as u64 + 64 - m[i].leading_zeros() as u64,
        None => 0,
    }
}

/// Build backend `name` for the odd modulus `m` (little-endian limbs; high
/// zero limbs are dropped).
pub fn build(name: &str, m: &[u64]) -> Result<Box<dyn Kernel>, BuildError> {
    let err = |param: &'static str, problem: String| Err(BuildError { param, problem });
    if !BACKENDS.contains(&name) {
        return err(
            "backend",
            format!(
                "unknown native backend {name:?}; choose one of: {}",
                BACKENDS.join(", ")
            ),
        );
    }
    let bits = bits_of(m);
    let m = &m[..bits.div_ceil(64).max(1) as usize];
    if bits < 2 || m[0] & 1 == 0 {
        return err(
            "modulus",
            format!("must be an odd integer >= 3, got a value of {bits} bits"),
        );
    }
    let fast = !PORTABLE_BACKENDS.contains(&name);
    let min_bits = if fast { MIN_FAST_BITS } else { 2 };
    if bits < min_bits || bits > MAX_BITS {
        return err(
            "modulus",
            format!(
                "backend {name:?} takes moduli of {min_bits} to {MAX_BITS} bits, got {bits} bits"
            ),
        );
    }
    if !supported(name) {
        return err("backend", format!("{name:?} is not supported on this CPU"));
    }
    Ok(match name {
        "portable" => Box::new(PortableKernel::new(m)),
        "fold-portable" => Box::new(FoldPortableKernel::new(m)),
        "fold32-portable" => Box::new(Fold32PortableKernel::new(m)),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: supported() checked bmi2 and adx.
        "adx" => Box::new(unsafe { crate::adx::AdxKernel::new_unchecked(m) }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: supported() checked avx512f and avx512ifma (or, in test builds
        // with `ifma-emulated`, that the kernels need AVX-512F only).
        "ifma" => Box::new(unsafe { crate::ifma::FoldIfmaKernel::new_unchecked(m) }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as above.
        "ifma-mont" => Box::new(unsafe { crate::ifma_mont::MontIfmaKernel::new_unchecked(m) }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: supported() checked avx512f; the width check is above.
        "avx512f" => Box::new(unsafe { crate::avx512f::Avx512fKernel::new_unchecked(m) }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: supported() checked avx2 and fma; the width check is above.
        "fma" => Box::new(unsafe { crate::fma::FmaKernel::new_unchecked(m) }),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: supported() checked avx2; the width check is above.
        "avx2" => Box::new(unsafe { crate::avx2::Avx2Kernel::new_unchecked(m) }),
        _ => unreachable!(),
    })
}

/// The scalar Montgomery helper of [`crate::single`] for the odd modulus `m`
/// (limbs, top limb non-zero): with the MULX/ADX loop when this CPU has it.
pub fn scalar_mont(m: &[u64]) -> crate::single::Mont {
    crate::single::Mont::new(m, supported("adx"))
}

/// Whether the IFMA fold kernel runs here (the RSA kernel's choice).
pub fn fold_ifma_supported() -> bool {
    supported("ifma")
}
