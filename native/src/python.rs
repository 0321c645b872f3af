//! The extension module `modforge._native`: Python integers in and out,
//! checked here, arithmetic in [`crate::portable`] (`mont_mul`) and in the
//! backends built by [`crate::dispatch`] (class `Ring`).
//!
//! Errors follow `modforge.arith.base.ParameterError`'s wording: a
//! `ValueError` whose message starts with the name of the offending
//! parameter, `"<name>: <problem>"` (the Python face `modforge.native` turns
//! it into a `ParameterError`).

use num_bigint::{BigInt, BigUint, Sign};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

use std::time::{Duration, Instant};

use crate::dispatch;
use crate::kernel::{self, Kernel};
use crate::portable;

fn param_error(name: &str, problem: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{name}: {problem}"))
}

/// A Python `int` (not a `bool`) as a `BigInt`.
fn require_int(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<BigInt> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        let type_name = obj.get_type().name()?;
        return Err(param_error(name, format!("must be an integer, got {type_name}")));
    }
    obj.extract::<BigInt>()
}

/// An odd modulus >= 3.
fn require_modulus(obj: &Bound<'_, PyAny>) -> PyResult<BigUint> {
    const NAME: &str = "modulus";
    let m = require_int(NAME, obj)?;
    if m < BigInt::from(3) {
        let got = if m.bits() <= 64 { m.to_string() } else { format!("a negative value of {} bits", m.bits()) };
        return Err(param_error(NAME, format!("must be at least 3, got {got}")));
    }
    let m = m.into_parts().1;
    if !m.bit(0) {
        return Err(param_error(
            NAME,
            format!(
                "must be odd for Montgomery reduction (it needs an inverse modulo a power of two), \
                 got an even value of {} bits",
                m.bits()
            ),
        ));
    }
    Ok(m)
}

/// An operand with `0 <= value < modulus`.
fn check_operand(name: &str, obj: &Bound<'_, PyAny>, modulus: &BigUint) -> PyResult<BigUint> {
    let value = require_int(name, obj)?;
    let (sign, magnitude) = value.into_parts();
    if sign == Sign::Minus || &magnitude >= modulus {
        let got = if sign == Sign::Minus {
            "a negative value".to_string()
        } else {
            format!("a value of {} bits", magnitude.bits())
        };
        return Err(param_error(
            name,
            format!("operand out of range: need 0 <= {name} < modulus, got {got}"),
        ));
    }
    Ok(magnitude)
}

fn to_limbs(x: &BigUint, n: usize) -> Vec<u64> {
    let mut limbs = x.to_u64_digits();
    debug_assert!(limbs.len() <= n);
    limbs.resize(n, 0);
    limbs
}

fn from_limbs(limbs: &[u64]) -> BigUint {
    let mut digits = Vec::with_capacity(2 * limbs.len());
    for &limb in limbs {
        digits.push(limb as u32);
        digits.push((limb >> 32) as u32);
    }
    BigUint::new(digits)
}


/// A non-negative integer argument that fits in 64 bits (`k`).
fn require_u64(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let v = require_int(name, obj)?;
    if v.sign() == Sign::Minus {
        return Err(param_error(name, format!("must be non-negative, got {v}")));
    }
    let (_, mag) = v.into_parts();
    let digits = mag.to_u64_digits();
    match digits.len() {
        0 => Ok(0),
        1 => Ok(digits[0]),
        _ => Err(param_error(name, format!("must be below 2**64, got a value of {} bits", mag.bits()))),
    }
}

/// Arithmetic modulo a fixed odd modulus on one native backend.
///
/// ``Ring(modulus, backend="portable")``; ``backend`` is one of
/// ``backends()`` that this CPU supports (``supported_backends()``).  All
/// methods take and return canonical integers in ``[0, modulus)``.
#[pyclass(frozen, module = "modforge._native")]
pub struct Ring {
    kernel: Box<dyn Kernel>,
    modulus: BigUint,
    limbs: usize,
}

impl Ring {
    fn operand(&self, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        Ok(to_limbs(&check_operand(name, obj, &self.modulus)?, self.limbs))
    }
}

/// Squarings per GIL-free stretch start here and double while a stretch
/// takes less than this; between stretches Ctrl-C is honoured.
const FIRST_CHUNK: u64 = 256;
const CHUNK_TIME: Duration = Duration::from_millis(25);

#[pymethods]
impl Ring {
    #[new]
    #[pyo3(signature = (modulus, backend = "portable"))]
    fn new(modulus: &Bound<'_, PyAny>, backend: &str) -> PyResult<Self> {
        let m = require_modulus(modulus)?;
        let limbs = portable::limbs_for_bits(m.bits());
        let kernel = dispatch::build(backend, &to_limbs(&m, limbs))
            .map_err(|e| param_error(e.param, e.problem))?;
        Ok(Ring { kernel, modulus: m, limbs })
    }

    /// The backend's name.
    #[getter]
    fn backend(&self) -> &'static str {
        self.kernel.name()
    }

    #[getter]
    fn modulus(&self) -> BigUint {
        self.modulus.clone()
    }

    /// ``x*x mod modulus``.
    fn sqr(&self, x: &Bound<'_, PyAny>) -> PyResult<BigUint> {
        let x = self.operand("x", x)?;
        Ok(from_limbs(&kernel::sqr_n(self.kernel.as_ref(), &x, 1)))
    }

    /// ``x*y mod modulus``.
    fn mul(&self, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<BigUint> {
        let x = self.operand("x", x)?;
        let y = self.operand("y", y)?;
        Ok(from_limbs(&kernel::mul(self.kernel.as_ref(), &x, &y)))
    }

    /// ``x**(2**k) mod modulus``: ``k`` squarings in native code, without the
    /// GIL (other Python threads run meanwhile); Ctrl-C is honoured between
    /// stretches of about 25 ms.
    fn sqr_n(&self, py: Python<'_>, x: &Bound<'_, PyAny>, k: &Bound<'_, PyAny>) -> PyResult<BigUint> {
        let x = self.operand("x", x)?;
        let k = require_u64("k", k)?;
        let kernel = self.kernel.as_ref();
        let mut s = kernel.enter(&x);
        let mut left = k;
        let mut chunk = FIRST_CHUNK;
        while left > 0 {
            let c = chunk.min(left);
            let start = Instant::now();
            py.detach(|| kernel.sqr_n_internal(&mut s, c));
            left -= c;
            if left > 0 {
                py.check_signals()?;
                if start.elapsed() < CHUNK_TIME {
                    chunk = chunk.saturating_mul(2);
                }
            }
        }
        Ok(from_limbs(&kernel.leave(&s)))
    }

    /// ``x**e mod modulus`` for ``e >= 0`` (without the GIL).
    fn pow(&self, py: Python<'_>, x: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> PyResult<BigUint> {
        let x = self.operand("x", x)?;
        let e = require_int("e", e)?;
        if e.sign() == Sign::Minus {
            return Err(param_error("e", "must be non-negative (negative exponents are not supported)"));
        }
        let e = e.into_parts().1.to_u64_digits();
        let kernel = self.kernel.as_ref();
        let out = py.detach(|| kernel::pow(kernel, &x, &e));
        Ok(from_limbs(&out))
    }

    fn __repr__(&self) -> String {
        format!("Ring({}-bit modulus, backend={:?})", self.modulus.bits(), self.kernel.name())
    }
}

#[pymodule(name = "_native", gil_used = false)]
mod native_module {
    use super::*;

    /// Montgomery product ``a*b*R**-1 mod m``, canonical (in ``[0, m)``).
    ///
    /// ``R = 2**(64*L)`` with ``L`` the number of 64-bit limbs of ``m``
    /// (``limb_count(m)``).  Portable word-serial CIOS on u64 limbs with u128
    /// products.  ``m`` must be an odd integer >= 3 and ``0 <= a, b < m``;
    /// otherwise ``ValueError`` naming the parameter (``modulus``, ``a``,
    /// ``b``).
    #[pyfunction]
    #[pyo3(signature = (a, b, m))]
    fn mont_mul(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, m: &Bound<'_, PyAny>) -> PyResult<BigUint> {
        let m = require_modulus(m)?;
        let a = check_operand("a", a, &m)?;
        let b = check_operand("b", b, &m)?;
        let n = portable::limbs_for_bits(m.bits());
        let ml = to_limbs(&m, n);
        let mut out = vec![0u64; n];
        portable::mont_mul(&mut out, &to_limbs(&a, n), &to_limbs(&b, n), &ml, portable::neg_inv_u64(ml[0]));
        Ok(from_limbs(&out))
    }

    /// Number of 64-bit limbs ``L`` of the odd modulus ``m`` (so ``R = 2**(64*L)``).
    #[pyfunction]
    #[pyo3(signature = (m))]
    fn limb_count(m: &Bound<'_, PyAny>) -> PyResult<usize> {
        let m = require_modulus(m)?;
        Ok(portable::limbs_for_bits(m.bits()))
    }

    #[pymodule_export]
    use super::Ring;

    /// Every backend compiled in (``supported_backends()``: those this CPU runs).
    #[pyfunction]
    fn backends() -> Vec<&'static str> {
        dispatch::BACKENDS.to_vec()
    }

    /// The compiled backends this CPU runs.
    #[pyfunction]
    fn supported_backends() -> Vec<&'static str> {
        dispatch::BACKENDS.iter().copied().filter(|b| dispatch::supported(b)).collect()
    }

    /// Whether this CPU runs backend ``name``.
    #[pyfunction]
    fn backend_supported(name: &str) -> bool {
        dispatch::supported(name)
    }

    /// The CPU features the backends use: ``{"bmi2": True, ...}``.
    #[pyfunction]
    fn cpu_features() -> std::collections::BTreeMap<&'static str, bool> {
        dispatch::cpu_features().into_iter().collect()
    }

    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        module.add("LIMB_BITS", portable::LIMB_BITS)?;
        module.add("__version__", env!("CARGO_PKG_VERSION"))?;
        module.add("MIN_FAST_BITS", dispatch::MIN_FAST_BITS)?;
        module.add("MAX_BITS", dispatch::MAX_BITS)?;
        Ok(())
    }
}
