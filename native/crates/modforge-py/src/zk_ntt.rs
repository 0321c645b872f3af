//! The NTT over Goldilocks for Python: in place on any writable C-contiguous buffer of u64 (a NumPy
//! ``uint64`` array), through the buffer protocol, so no element is copied across the boundary.  Errors
//! are ``ValueError("<param>: <problem>")`` like the rest of the module.  The transform runs without
//! the GIL.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use modforge_goldilocks::Backend;
use modforge_ntt::{NttError, Options, Order};

fn value_error(param: &str, problem: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{param}: {problem}"))
}

fn ntt_error(e: NttError) -> PyErr {
    let param = match e {
        NttError::BadLength(_) | NttError::LengthMismatch { .. } => "length",
        NttError::BadColumns { .. } => "columns",
        NttError::NotCanonical(_) => "a",
        NttError::BadShift(_) => "coset_shift",
        NttError::Unsupported(_) => "backend",
        NttError::BadBlowup(_) => "blowup",
    };
    value_error(param, e)
}

fn writable_u64(obj: &Bound<'_, PyAny>, param: &str) -> PyResult<PyBuffer<u64>> {
    let buffer = PyBuffer::<u64>::get(obj).map_err(|e| value_error(param, format!("not a buffer of u64: {e}")))?;
    if !buffer.is_c_contiguous() {
        return Err(value_error(param, "must be C-contiguous"));
    }
    if buffer.readonly() {
        return Err(value_error(param, "must be writable"));
    }
    Ok(buffer)
}

fn backend_named(name: Option<&str>) -> PyResult<Option<Backend>> {
    name.map(|n| Backend::from_name(n).ok_or_else(|| value_error("backend", format!("unknown NTT backend {n:?}"))))
        .transpose()
}

fn order(bit_reversed: bool) -> Order {
    if bit_reversed {
        Order::BitReversed
    } else {
        Order::Natural
    }
}

/// Transform ``data`` (a writable C-contiguous u64 buffer: ``columns`` columns, row-major) in place.
/// Forward: ``out[k] = sum_j in[j] w_n^(jk)`` with Plonky3's roots; ``inverse``: its exact inverse (1/n
/// included).  ``coset_shift``: evaluate on shift * <w_n> (and its inverse).  ``threads`` 0 = all.
#[pyfunction]
#[pyo3(signature = (data, columns=1, inverse=false, input_bit_reversed=false, output_bit_reversed=false,
                    coset_shift=None, threads=0, backend=None))]
#[allow(clippy::too_many_arguments)]
pub fn ntt_transform(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    columns: usize,
    inverse: bool,
    input_bit_reversed: bool,
    output_bit_reversed: bool,
    coset_shift: Option<u64>,
    threads: usize,
    backend: Option<&str>,
) -> PyResult<()> {
    let buffer = writable_u64(data, "a")?;
    let options = Options {
        inverse,
        columns,
        input_order: order(input_bit_reversed),
        output_order: order(output_bit_reversed),
        coset_shift,
        threads,
        backend: backend_named(backend)?,
    };
    let (ptr, len) = (buffer.buf_ptr() as usize, buffer.item_count());
    py.detach(move || {
        // SAFETY: the buffer is C-contiguous, writable and holds `len` u64; `buffer` keeps it alive and
        // exported (NumPy refuses to resize it) until this call returns.
        let slice = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u64, len) };
        modforge_ntt::transform(slice, &options)
    })
    .map_err(ntt_error)
}

/// Low-degree extension: ``out`` (n * blowup rows) receives the evaluations on shift * <w_(n blowup)>
/// of the polynomials whose evaluations on <w_n> are ``evaluations`` (n rows); both row-major with
/// ``columns`` columns.
#[pyfunction]
#[pyo3(signature = (evaluations, out, columns=1, blowup=2, shift=7, threads=0, backend=None))]
#[allow(clippy::too_many_arguments)]
pub fn ntt_lde(
    py: Python<'_>,
    evaluations: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    columns: usize,
    blowup: usize,
    shift: u64,
    threads: usize,
    backend: Option<&str>,
) -> PyResult<()> {
    let input = PyBuffer::<u64>::get(evaluations).map_err(|e| value_error("evaluations", e))?;
    if !input.is_c_contiguous() {
        return Err(value_error("evaluations", "must be C-contiguous"));
    }
    let output = writable_u64(out, "out")?;
    if output.item_count() != input.item_count() * blowup {
        return Err(value_error("out", format!("must hold {} elements", input.item_count() * blowup)));
    }
    let backend = backend_named(backend)?;
    let (ip, il, op, ol) = (input.buf_ptr() as usize, input.item_count(), output.buf_ptr() as usize, output.item_count());
    py.detach(move || {
        // SAFETY: both buffers are C-contiguous u64 of the stated lengths, kept alive by the PyBuffers.
        let (src, dst) = unsafe {
            (std::slice::from_raw_parts(ip as *const u64, il), std::slice::from_raw_parts_mut(op as *mut u64, ol))
        };
        let result = modforge_ntt::lde(src, columns, blowup, shift, threads, backend)?;
        dst.copy_from_slice(&result);
        Ok(())
    })
    .map_err(ntt_error)
}

/// The NTT backends this CPU runs, fastest last.
#[pyfunction]
pub fn ntt_backends() -> Vec<&'static str> {
    Backend::ALL.iter().filter(|b| b.supported()).map(|b| b.name()).collect()
}

/// Add the NTT functions to ``modforge._native``.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ntt_transform, m)?)?;
    m.add_function(wrap_pyfunction!(ntt_lde, m)?)?;
    m.add_function(wrap_pyfunction!(ntt_backends, m)?)?;
    Ok(())
}
