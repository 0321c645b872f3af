//! The extension module `modforge._native`: Python integers in and out,
//! checked here, arithmetic in [`crate::portable`].
//!
//! Errors follow `modforge.arith.base.ParameterError`'s wording: a
//! `ValueError` whose message starts with the name of the offending
//! parameter, `"<name>: <problem>"` (the Python face `modforge.native` turns
//! it into a `ParameterError`).

use num_bigint::{BigInt, BigUint, Sign};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

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

    #[pymodule_init]
    fn init(module: &Bound<'_, PyModule>) -> PyResult<()> {
        module.add("LIMB_BITS", portable::LIMB_BITS)?;
        module.add("__version__", env!("CARGO_PKG_VERSION"))?;
        Ok(())
    }
}
