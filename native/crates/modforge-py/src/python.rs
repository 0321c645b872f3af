//! The extension module `modforge._native`: Python integers in and out,
//! checked here, arithmetic in [`modforge_ring::portable`] (`mont_mul`) and in the
//! backends built by [`modforge_ring::dispatch`] (class `Ring`).
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

use modforge_ring::dispatch;
use modforge_ring::kernel::{self, Kernel};
use modforge_ring::portable;
use modforge_ring::single::{self, Mont};

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


/// `x` as exactly `n` little-endian limbs, if it is an exact `int` with
/// `0 <= x < 2^(64n)`; `None` otherwise (the caller then takes the slow,
/// fully checked path, which produces the error message).  One
/// `_PyLong_AsByteArray` (`PyLong_AsNativeBytes` from Python 3.13, which
/// hides the former) into the limb buffer: no intermediate big integer.
fn fast_limbs(obj: &Bound<'_, PyAny>, n: usize) -> Option<Vec<u64>> {
    if !obj.is_exact_instance_of::<PyInt>() {
        return None;
    }
    let mut out = vec![0u64; n];
    // SAFETY: `obj` is an exact int; the buffer holds `8n` bytes.
    #[cfg(not(Py_3_13))]
    let fits = unsafe {
        pyo3::ffi::_PyLong_AsByteArray(obj.as_ptr().cast(), out.as_mut_ptr().cast(), 8 * n, 1, 0) >= 0
    };
    // It returns the bytes the value needs (more than the buffer: truncated),
    // or -1 with an exception for a negative value.
    #[cfg(Py_3_13)]
    let fits = unsafe {
        let needed = pyo3::ffi::PyLong_AsNativeBytes(
            obj.as_ptr(),
            out.as_mut_ptr().cast(),
            (8 * n) as pyo3::ffi::Py_ssize_t,
            pyo3::ffi::Py_ASNATIVEBYTES_LITTLE_ENDIAN
                | pyo3::ffi::Py_ASNATIVEBYTES_UNSIGNED_BUFFER
                | pyo3::ffi::Py_ASNATIVEBYTES_REJECT_NEGATIVE,
        );
        needed >= 0 && needed as usize <= 8 * n
    };
    if !fits {
        // Negative or too large: clear the exception if any, report slowly.
        let _ = PyErr::take(obj.py());
        return None;
    }
    for w in out.iter_mut() {
        *w = u64::from_le(*w);
    }
    Some(out)
}

/// Little-endian limbs as a Python `int` (one `_PyLong_FromByteArray`, or
/// `PyLong_FromUnsignedNativeBytes` from Python 3.13).
fn limbs_to_int<'py>(py: Python<'py>, limbs: &[u64]) -> PyResult<Bound<'py, PyAny>> {
    let bytes: Vec<u8> = limbs.iter().flat_map(|w| w.to_le_bytes()).collect();
    // SAFETY: the buffer is valid for its length; a new reference or NULL
    // with an exception set comes back.
    unsafe {
        #[cfg(not(Py_3_13))]
        let obj = pyo3::ffi::_PyLong_FromByteArray(bytes.as_ptr(), bytes.len(), 1, 0);
        #[cfg(Py_3_13)]
        let obj = pyo3::ffi::PyLong_FromUnsignedNativeBytes(
            bytes.as_ptr().cast(),
            bytes.len(),
            pyo3::ffi::Py_ASNATIVEBYTES_LITTLE_ENDIAN,
        );
        Bound::from_owned_ptr_or_err(py, obj)
    }
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
///
/// Everything per modulus is computed once here: the kernel (with its
/// tables), the scalar Montgomery helper and ``R^2 mod modulus`` for the
/// single operations, which are one or two scalar Montgomery products and
/// keep the GIL (releasing it costs more than the work).
#[pyclass(frozen, module = "modforge._native")]
pub struct Ring {
    kernel: Box<dyn Kernel>,
    modulus: BigUint,
    limbs: usize,
    mont: Mont,
    /// `R^2 mod modulus`, `R = 2^(64 * limbs)`, canonical.
    r2: Vec<u64>,
    /// The modulus prepared for long division (leaving the fold's digits).
    div: single::Divisor,
}

impl Ring {
    fn operand(&self, name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        if let Some(x) = fast_limbs(obj, self.limbs) {
            if portable::less_than(&x, &self.mont.m) {
                return Ok(x);
            }
        }
        Ok(to_limbs(&check_operand(name, obj, &self.modulus)?, self.limbs))
    }

    /// Canonical `x*y mod modulus`: `amm(x, y) = xy/R`, then times `R^2`.
    fn mul_limbs(&self, x: &[u64], y: &[u64], square: bool) -> Vec<u64> {
        let n = self.limbs;
        if self.kernel.fold_plan().is_some() && self.kernel.name() == "ifma" {
            // One IFMA fold product (~0.2 us at 2048 bits), then long division
            // of the redundant result: cheaper than two scalar products.
            let mut s = self.kernel.enter(x);
            if square {
                self.kernel.sqr_n_internal(&mut s, 1);
            } else {
                s = self.kernel.mul_internal(&s, &self.kernel.enter(y));
            }
            return self.leave(&s);
        }
        let mut t = self.mont.scratch();
        let mut a = vec![0u64; n];
        if square {
            self.mont.amm_sqr(&mut a, x, &mut t);
        } else {
            self.mont.amm(&mut a, x, y, &mut t);
        }
        let mut out = vec![0u64; n];
        self.mont.mul_canon(&mut out, &a, &self.r2, &mut t);
        out
    }

    /// `k` squarings of the loop form `s`: short runs with the GIL (releasing
    /// it costs more than the work), longer ones without it in stretches that
    /// start at `FIRST_CHUNK` and double while a stretch takes under
    /// `CHUNK_TIME`, with a signal check between stretches.
    fn squarings(&self, py: Python<'_>, s: &mut Vec<u64>, k: u64) -> PyResult<()> {
        let kernel = self.kernel.as_ref();
        if k < DETACH_MIN_K {
            kernel.sqr_n_internal(s, k);
            return Ok(());
        }
        let mut left = k;
        let mut chunk = FIRST_CHUNK;
        while left > 0 {
            let c = chunk.min(left);
            let start = Instant::now();
            py.detach(|| kernel.sqr_n_internal(s, c));
            left -= c;
            if left > 0 {
                py.check_signals()?;
                if start.elapsed() < CHUNK_TIME {
                    chunk = chunk.saturating_mul(2);
                }
            }
        }
        Ok(())
    }

    /// The canonical value of a kernel loop form.
    fn leave(&self, s: &[u64]) -> Vec<u64> {
        // The folds' loop values are below 2^(radix * digits), a few bits over
        // N: one long division (about a microsecond) beats their generic
        // `leave`, a Montgomery reduction that derives its constants afresh.
        let wide = 2 * self.limbs + 1;
        match (self.kernel.fold_plan(), self.kernel.fold32_plan()) {
            (Some(_), _) => self.div.reduce(&single::digits_to_limbs(s, wide)),
            (None, Some(plan)) => self.div.reduce(&modforge_ring::fold32::digits_to_limbs(s, wide, plan.r)),
            (None, None) => self.kernel.leave(s),
        }
    }
}

/// `sqr_n` keeps the GIL below this many squarings.
const DETACH_MIN_K: u64 = 64;

/// Squarings per GIL-free stretch start here and double while a stretch
/// takes less than this; between stretches Ctrl-C is honoured.
const FIRST_CHUNK: u64 = 256;
const CHUNK_TIME: Duration = Duration::from_millis(25);
/// `sqr_n_trace` steps of at least this many squarings go through `squarings`
/// one by one; shorter ones are batched into stretches.
const CHUNK_SQUARINGS: u64 = 1 << 16;

#[pymethods]
impl Ring {
    #[new]
    #[pyo3(signature = (modulus, backend = "portable"))]
    fn new(modulus: &Bound<'_, PyAny>, backend: &str) -> PyResult<Self> {
        let m = require_modulus(modulus)?;
        let limbs = portable::limbs_for_bits(m.bits());
        let ml = to_limbs(&m, limbs);
        let kernel = dispatch::build(backend, &ml).map_err(|e| param_error(e.param, e.problem))?;
        let mont = dispatch::scalar_mont(&ml);
        let r2 = kernel::MontCtx::new(&ml).r2;
        let div = single::Divisor::new(&ml);
        Ok(Ring { kernel, modulus: m, limbs, mont, r2, div })
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

    /// ``x*x mod modulus`` (two scalar Montgomery products, GIL kept).
    fn sqr<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let x = self.operand("x", x)?;
        limbs_to_int(py, &self.mul_limbs(&x, &x, true))
    }

    /// ``x*y mod modulus`` (two scalar Montgomery products, GIL kept).
    fn mul<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        y: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = self.operand("x", x)?;
        let y = self.operand("y", y)?;
        limbs_to_int(py, &self.mul_limbs(&x, &y, false))
    }

    /// ``x**(2**k) mod modulus``: ``k`` squarings in native code, without the
    /// GIL (other Python threads run meanwhile); Ctrl-C is honoured between
    /// stretches of about 25 ms.
    fn sqr_n<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        k: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = self.operand("x", x)?;
        let k = require_u64("k", k)?;
        let kernel = self.kernel.as_ref();
        if k == 0 {
            return limbs_to_int(py, &x);
        }
        if k == 1 {
            return limbs_to_int(py, &self.mul_limbs(&x, &x, true));
        }
        let mut s = kernel.enter(&x);
        self.squarings(py, &mut s, k)?;
        limbs_to_int(py, &self.leave(&s))
    }

    /// ``[x**(2**step), x**(2**(2*step)), ..., x**(2**(count*step))] mod modulus``:
    /// a run of ``count * step`` squarings that keeps every ``step``-th value,
    /// in one call (a VDF evaluation's checkpoints; one ``sqr_n`` call per
    /// checkpoint costs several microseconds of conversions and GIL
    /// switches).  Without the GIL, Ctrl-C honoured as in ``sqr_n``.
    fn sqr_n_trace<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        step: &Bound<'py, PyAny>,
        count: &Bound<'py, PyAny>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let x = self.operand("x", x)?;
        let step = require_u64("step", step)?;
        let count = require_u64("count", count)?;
        if step == 0 {
            return Err(param_error("step", "must be at least 1"));
        }
        if count > (1 << 24) {
            return Err(param_error("count", format!("at most 2^24 values per call, got {count}")));
        }
        let kernel = self.kernel.as_ref();
        let mut s = kernel.enter(&x);
        let mut kept: Vec<Vec<u64>> = Vec::with_capacity(count as usize);
        if step >= CHUNK_SQUARINGS {
            for _ in 0..count {
                self.squarings(py, &mut s, step)?;
                kept.push(s.clone());
            }
        } else {
            // Short steps: many checkpoints per GIL-free stretch of about CHUNK_TIME.
            while (kept.len() as u64) < count {
                let start = Instant::now();
                py.detach(|| {
                    while (kept.len() as u64) < count && start.elapsed() < CHUNK_TIME {
                        kernel.sqr_n_internal(&mut s, step);
                        kept.push(s.clone());
                    }
                });
                py.check_signals()?;
            }
        }
        let canonical: Vec<Vec<u64>> = py.detach(|| kept.iter().map(|v| self.leave(v)).collect());
        canonical.iter().map(|v| limbs_to_int(py, v)).collect()
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
        // In the loop form, left through `Ring::leave` (the folds' fast way out).
        let out = py.detach(|| kernel::pow_internal(kernel, &x, &e).map(|acc| self.leave(&acc)));
        Ok(out.map_or_else(|| BigUint::from(1u32), |v| from_limbs(&v)))
    }

    /// ``prod(b**e for b, e in zip(bases, exponents)) % modulus`` (Straus's
    /// interleaved windows, Pippenger's buckets above 64 bases; without the
    /// GIL).  Bases in ``[0, modulus)``, exponents ``>= 0``; equal lengths.
    /// ``threads > 1`` splits the exponent bits among that many threads.
    #[pyo3(signature = (bases, exponents, threads = None))]
    fn multiexp<'py>(
        &self,
        py: Python<'py>,
        bases: &Bound<'py, PyAny>,
        exponents: &Bound<'py, PyAny>,
        threads: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // Checked like every other integer argument (a bool, a float or -1 named, not a conversion error).
        let threads = match threads {
            Some(obj) => require_u64("threads", obj)?,
            None => 1,
        };
        if !(1..=256).contains(&threads) {
            return Err(param_error("threads", format!("must be between 1 and 256, got {threads}")));
        }
        let threads = threads as usize;
        let bases: Vec<Bound<'py, PyAny>> = bases.try_iter()?.collect::<PyResult<_>>()?;
        let exps: Vec<Bound<'py, PyAny>> = exponents.try_iter()?.collect::<PyResult<_>>()?;
        if bases.len() != exps.len() {
            return Err(param_error(
                "exponents",
                format!("need as many exponents as bases, got {} and {}", exps.len(), bases.len()),
            ));
        }
        let xs = bases.iter().map(|b| self.operand("bases", b)).collect::<PyResult<Vec<_>>>()?;
        let es = exps
            .iter()
            .map(|e| {
                let v = require_int("exponents", e)?;
                if v.sign() == Sign::Minus {
                    return Err(param_error("exponents", "must be non-negative"));
                }
                Ok(v.into_parts().1.to_u64_digits())
            })
            .collect::<PyResult<Vec<_>>>()?;
        let kernel = self.kernel.as_ref();
        let s = py.detach(|| kernel::multiexp_threads(kernel, &xs, &es, threads));
        limbs_to_int(py, &self.leave(&s))
    }

    fn __repr__(&self) -> String {
        format!("Ring({}-bit modulus, backend={:?})", self.modulus.bits(), self.kernel.name())
    }
}

/// An RSA prime as the kernels take it: odd, 3 .. 2048 bits.
fn rsa_prime(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<BigUint> {
    let v = require_int(name, obj)?;
    let (sign, mag) = v.into_parts();
    if sign == Sign::Minus || mag < BigUint::from(3u32) || !mag.bit(0) {
        return Err(param_error(name, "must be an odd integer >= 3"));
    }
    if mag.bits() > 2048 {
        return Err(param_error(name, format!("at most 2048 bits, got {} bits", mag.bits())));
    }
    Ok(mag)
}

/// The per-operation inputs of the RSA kernels, checked and as limbs
/// (zeroed on drop: the exponents and `c` are secret).
struct RsaOperands {
    c: Vec<u64>,
    dp: Vec<u64>,
    dq: Vec<u64>,
    exp_bits: usize,
}

impl RsaOperands {
    /// `0 <= c < n`; `0 <= dp, dq < 2**exp_bits`; `exp_bits <= prime_bits + 256`.
    fn read(
        c: &Bound<'_, PyAny>,
        dp: &Bound<'_, PyAny>,
        dq: &Bound<'_, PyAny>,
        exp_bits: &Bound<'_, PyAny>,
        n: &BigUint,
        prime_bits: u64,
        c_limbs: usize,
    ) -> PyResult<Self> {
        let eb = require_u64("exp_bits", exp_bits)?;
        let max_eb = prime_bits + 256;
        if eb > max_eb {
            return Err(param_error("exp_bits", format!("at most max(bits(p), bits(q)) + 256 = {max_eb}, got {eb}")));
        }
        let cv = require_int("c", c)?;
        let (sign, cv) = cv.into_parts();
        if sign == Sign::Minus || &cv >= n {
            return Err(param_error("c", "out of range: need 0 <= c < p*q"));
        }
        let exponent = |name: &str, obj: &Bound<'_, PyAny>| -> PyResult<BigUint> {
            let v = require_int(name, obj)?;
            let (sign, mag) = v.into_parts();
            if sign == Sign::Minus || mag.bits() > eb {
                return Err(param_error(name, format!("out of range: need 0 <= {name} < 2**exp_bits")));
            }
            Ok(mag)
        };
        let ne = (eb as usize).div_ceil(64).max(1);
        let dp = to_limbs(&exponent("dp", dp)?, ne);
        let dq = to_limbs(&exponent("dq", dq)?, ne);
        Ok(RsaOperands { c: to_limbs(&cv, c_limbs), dp, dq, exp_bits: eb as usize })
    }
}

impl Drop for RsaOperands {
    fn drop(&mut self) {
        for buf in [&mut self.c, &mut self.dp, &mut self.dq] {
            modforge_ct::zeroize(buf);
        }
    }
}

/// An RSA private key prepared once for the constant-time CRT kernel.
///
/// ``RsaKey(p, q, qinv, e)`` derives, per prime, the Montgomery constants,
/// the fold table and the kernel (about 50 us at 2048 bits, which a one-shot
/// ``rsa_crt_halves`` pays on every call), and a kernel modulo ``n = p*q``
/// for the public check.  The derived secrets are zeroed when the object is
/// freed.  Methods release the GIL.
#[pyclass(frozen, module = "modforge._native")]
pub struct RsaKey {
    ctx: modforge_rsa::RsaCtx,
    n: BigUint,
    prime_bits: u64,
    np: usize,
    nq: usize,
}

impl RsaKey {
    fn limbs_below(&self, name: &str, obj: &Bound<'_, PyAny>, bound: &BigUint, limbs: usize) -> PyResult<Vec<u64>> {
        let v = require_int(name, obj)?;
        let (sign, mag) = v.into_parts();
        if sign == Sign::Minus || &mag >= bound {
            return Err(param_error(name, "out of range"));
        }
        Ok(to_limbs(&mag, limbs))
    }
}

#[pymethods]
impl RsaKey {
    #[new]
    #[pyo3(signature = (p, q, qinv, e))]
    fn new(p: &Bound<'_, PyAny>, q: &Bound<'_, PyAny>, qinv: &Bound<'_, PyAny>, e: &Bound<'_, PyAny>) -> PyResult<Self> {
        let p = rsa_prime("p", p)?;
        let q = rsa_prime("q", q)?;
        if p == q {
            return Err(param_error("q", "must differ from p"));
        }
        let (np, nq) = (portable::limbs_for_bits(p.bits()), portable::limbs_for_bits(q.bits()));
        let qi = require_int("qinv", qinv)?;
        let (sign, qi) = qi.into_parts();
        if sign == Sign::Minus || qi >= p || (&qi * &q) % &p != BigUint::from(1u32) {
            return Err(param_error("qinv", "must be q^-1 mod p"));
        }
        let ev = require_int("e", e)?;
        let (sign, ev) = ev.into_parts();
        let n = &p * &q;
        if sign == Sign::Minus || ev < BigUint::from(3u32) || ev >= n {
            return Err(param_error("e", "must satisfy 3 <= e < n"));
        }
        let (mut pl, mut ql, mut qil) = (to_limbs(&p, np), to_limbs(&q, nq), to_limbs(&qi, np));
        let el = to_limbs(&ev, portable::limbs_for_bits(ev.bits()).max(1));
        let ctx = modforge_ct::scrub_after(|| modforge_rsa::RsaCtx::new(&pl, &ql, &qil, &el));
        for buf in [&mut pl, &mut ql, &mut qil] {
            modforge_ct::zeroize(buf);
        }
        Ok(RsaKey { ctx, prime_bits: p.bits().max(q.bits()), n, np, nq })
    }

    /// ``(c**dp % p, c**dq % q)`` (as ``rsa_crt_halves``, with the per-key work done once).
    #[pyo3(signature = (c, dp, dq, exp_bits))]
    fn halves<'py>(
        &self,
        py: Python<'py>,
        c: &Bound<'py, PyAny>,
        dp: &Bound<'py, PyAny>,
        dq: &Bound<'py, PyAny>,
        exp_bits: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let ops = RsaOperands::read(c, dp, dq, exp_bits, &self.n, self.prime_bits, self.np + self.nq)?;
        let (mut xp, mut xq) =
            py.detach(|| modforge_ct::scrub_after(|| self.ctx.halves(&ops.c, &ops.dp, &ops.dq, ops.exp_bits)));
        let out = (limbs_to_int(py, &xp)?, limbs_to_int(py, &xq)?);
        modforge_ct::zeroize(&mut xp);
        modforge_ct::zeroize(&mut xq);
        Ok(out)
    }

    /// Garner's recombination of ``0 <= xp < p``, ``0 <= xq < q``: the ``x < n``
    /// congruent to both.  The recombination is constant time; the range
    /// checks of the arguments are not (``private`` never goes through them).
    fn recombine(&self, py: Python<'_>, xp: &Bound<'_, PyAny>, xq: &Bound<'_, PyAny>) -> PyResult<BigUint> {
        let p = from_limbs(self.ctx.p_limbs());
        let q = from_limbs(self.ctx.q_limbs());
        let mut xpl = self.limbs_below("xp", xp, &p, self.np)?;
        let mut xql = self.limbs_below("xq", xq, &q, self.nq)?;
        let mut x = py.detach(|| modforge_ct::scrub_after(|| self.ctx.recombine(&xpl, &xql)));
        let out = from_limbs(&x);
        for buf in [&mut xpl, &mut xql, &mut x] {
            modforge_ct::zeroize(buf);
        }
        Ok(out)
    }

    /// Whether ``x**e % n == c`` (public data).
    fn check(&self, x: &Bound<'_, PyAny>, c: &Bound<'_, PyAny>) -> PyResult<bool> {
        let limbs = self.np + self.nq;
        let (Ok(xl), Ok(cl)) = (self.limbs_below("x", x, &self.n, limbs), self.limbs_below("c", c, &self.n, limbs)) else {
            return Ok(false);
        };
        Ok(self.ctx.check(&xl, &cl))
    }

    /// The checked private operation ``c**d % n``: both halves, Garner, and
    /// ``x**e % n == c`` before release; ``None`` when the check fails (a
    /// fault: the value never leaves native code).  ``_fault`` (tests only)
    /// flips a bit of the p (1) or q (2) half before recombination.
    #[pyo3(signature = (c, dp, dq, exp_bits, _fault = 0))]
    fn private(
        &self,
        py: Python<'_>,
        c: &Bound<'_, PyAny>,
        dp: &Bound<'_, PyAny>,
        dq: &Bound<'_, PyAny>,
        exp_bits: &Bound<'_, PyAny>,
        _fault: u8,
    ) -> PyResult<Option<BigUint>> {
        let ops = RsaOperands::read(c, dp, dq, exp_bits, &self.n, self.prime_bits, self.np + self.nq)?;
        match py.detach(|| modforge_ct::scrub_after(|| self.ctx.private(&ops.c, &ops.dp, &ops.dq, ops.exp_bits, _fault))) {
            modforge_rsa::Private::Ok(mut x) => {
                let out = from_limbs(&x);
                modforge_ct::zeroize(&mut x);
                Ok(Some(out))
            }
            modforge_rsa::Private::Fault => Ok(None),
        }
    }

    /// Bits of ``n``.
    #[getter]
    fn bits(&self) -> u64 {
        self.n.bits()
    }

    fn __repr__(&self) -> String {
        format!("RsaKey(bits={})", self.n.bits())
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

    /// ``(c**dp % p, c**dq % q)``: the two CRT halves of an RSA private-key
    /// operation, constant time in ``c``, ``p``, ``q``, ``dp``, ``dq``
    /// (contract: docs/rsa.md).  ``p``, ``q`` odd, 3 .. 2048 bits;
    /// ``0 <= c < p*q``; ``0 <= dp, dq < 2**exp_bits``;
    /// ``exp_bits <= max(bits(p), bits(q)) + 256``.  Without the GIL.
    #[pyfunction]
    #[pyo3(signature = (c, p, dp, q, dq, exp_bits))]
    fn rsa_crt_halves<'py>(
        py: Python<'py>,
        c: &Bound<'py, PyAny>,
        p: &Bound<'py, PyAny>,
        dp: &Bound<'py, PyAny>,
        q: &Bound<'py, PyAny>,
        dq: &Bound<'py, PyAny>,
        exp_bits: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let p = super::rsa_prime("p", p)?;
        let q = super::rsa_prime("q", q)?;
        let n = &p * &q;
        let (np, nq) = (portable::limbs_for_bits(p.bits()), portable::limbs_for_bits(q.bits()));
        let ops = super::RsaOperands::read(c, dp, dq, exp_bits, &n, p.bits().max(q.bits()), np + nq)?;
        let (mut pl, mut ql) = (to_limbs(&p, np), to_limbs(&q, nq));
        let (mut xp, mut xq) = py.detach(|| {
            modforge_ct::scrub_after(|| modforge_rsa::crt_halves(&ops.c, &pl, &ops.dp, &ql, &ops.dq, ops.exp_bits))
        });
        let out = (limbs_to_int(py, &xp)?, limbs_to_int(py, &xq)?);
        for buf in [&mut pl, &mut ql, &mut xp, &mut xq] {
            modforge_ct::zeroize(buf);
        }
        Ok(out)
    }

    #[pymodule_export]
    use super::RsaKey;

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
        // Whether this is an optimised build (a debug build calls the SIMD intrinsics as functions).
        module.add("RELEASE_BUILD", !cfg!(debug_assertions))?;
        crate::zk_ntt::register(module)?;
        crate::zk_msm::register(module)?;
        Ok(())
    }
}
