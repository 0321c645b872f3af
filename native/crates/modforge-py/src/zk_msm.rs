//! The MSM over BLS12-377 G1 for Python (`modforge.zk.msm_api` calls it).
//!
//! `msm_bls12_377(points, scalars, threads)`: points in gnark-crypto's raw encoding (96 bytes each,
//! checked to be on the curve; G1 membership is the caller's check), scalars 32 bytes big-endian
//! (reduced mod r); returns None for the point at infinity, else the affine (x, y) as hex strings.
//! Runs without the GIL.  `g1_first_invalid(points, threads)` is the file readers' fast curve and
//! subgroup check.  `msm_bls12_377_random(n, seed, threads, progress)` generates the reproducible
//! instance (modforge_msm::instance) and runs it in Rust, calling `progress(done, total)` every fifth
//! of a second from the calling thread.  `MsmTable` is the fixed-base table (modforge_msm::fixed).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use modforge_bls12_377::G1Jacobian;
use modforge_msm::instance::{decode_points, decode_scalars, random_instance};
use modforge_msm::{msm, reduce_scalar, FixedBaseTable, MsmConfig};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

fn hex(words: &[u64; 6]) -> String {
    let mut s = String::from("0x");
    for w in words.iter().rev() {
        s.push_str(&format!("{w:016x}"));
    }
    s
}

#[pyfunction]
#[pyo3(signature = (points, scalars, threads=0))]
fn msm_bls12_377(py: Python<'_>, points: &[u8], scalars: &[u8], threads: usize) -> PyResult<Option<(String, String)>> {
    let pts = decode_points(points, true).map_err(|e| PyValueError::new_err(format!("points: {e}")))?;
    let scs = decode_scalars(scalars).map_err(|e| PyValueError::new_err(format!("scalars: {e}")))?;
    if pts.len() != scs.len() {
        return Err(PyValueError::new_err(format!("{} points but {} scalars", pts.len(), scs.len())));
    }
    let cfg = MsmConfig { threads, ..Default::default() };
    let result = py.detach(|| {
        let reduced: Vec<[u64; 4]> = scs.iter().map(reduce_scalar).collect();
        msm(&pts, &reduced, &cfg)
    });
    Ok(affine_hex(&result))
}

fn affine_hex(p: &G1Jacobian) -> Option<(String, String)> {
    let a = p.to_affine();
    if a.infinity {
        None
    } else {
        Some((hex(&a.x.to_canonical()), hex(&a.y.to_canonical())))
    }
}

/// The reproducible random instance of n points (the same as `msm_api.random_instance`), generated
/// and multiplied in Rust: nothing per point crosses into Python, so 2^24 points take about 2.5 GB.
/// `progress(done, total)` counts the generation as one step and then the windows.
#[pyfunction]
#[pyo3(signature = (n, seed, threads=0, progress=None))]
fn msm_bls12_377_random(
    py: Python<'_>,
    n: usize,
    seed: u64,
    threads: usize,
    progress: Option<Py<PyAny>>,
) -> PyResult<Option<(String, String)>> {
    let done = Arc::new(AtomicUsize::new(0));
    let cfg = MsmConfig { threads, progress: Some(done.clone()), ..Default::default() };
    let total = 1 + cfg.windows_for(n);
    let result = py.detach(|| {
        std::thread::scope(|s| {
            let job = s.spawn(|| {
                let (points, scalars) = random_instance(n, seed);
                done.fetch_add(1, Ordering::Relaxed);
                msm(&points, &scalars, &cfg)
            });
            let mut failure = None;
            while !job.is_finished() {
                std::thread::sleep(Duration::from_millis(200));
                if let (Some(cb), None) = (&progress, &failure) {
                    let shown = done.load(Ordering::Relaxed).min(total);
                    failure = Python::attach(|py| cb.call1(py, (shown, total)).err());
                }
            }
            (job.join().unwrap(), failure)
        })
    });
    if let Some(err) = result.1 {
        return Err(err);
    }
    Ok(affine_hex(&result.0))
}

/// A fixed-base table: the points' shifted copies [2^(c w)] P, so that every window of an MSM over
/// these points shares one bucket set (modforge_msm::fixed; the file format is in docs/zk-msm.md).
#[pyclass(frozen, module = "modforge._native")]
pub struct MsmTable {
    table: FixedBaseTable,
}

#[pymethods]
impl MsmTable {
    /// Build the table of gnark-raw `points` (checked to be on the curve, not for G1 membership).
    #[staticmethod]
    #[pyo3(signature = (points, window=None, threads=0))]
    fn precompute(py: Python<'_>, points: &[u8], window: Option<usize>, threads: usize) -> PyResult<Self> {
        let pts = decode_points(points, true).map_err(|e| PyValueError::new_err(format!("points: {e}")))?;
        let table = py.detach(|| FixedBaseTable::precompute(&pts, window, threads)).map_err(PyValueError::new_err)?;
        Ok(Self { table })
    }

    /// Parse a table file's bytes (header, length, every entry on the curve, a structural spot check).
    #[staticmethod]
    #[pyo3(signature = (data, threads=0))]
    fn from_bytes(py: Python<'_>, data: &[u8], threads: usize) -> PyResult<Self> {
        let table = py.detach(|| FixedBaseTable::from_bytes(data, threads)).map_err(PyValueError::new_err)?;
        Ok(Self { table })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.table.to_bytes())
    }

    /// The index of the first table point outside G1, or None.
    #[pyo3(signature = (threads=0))]
    fn first_outside_subgroup(&self, py: Python<'_>, threads: usize) -> Option<usize> {
        py.detach(|| self.table.first_outside_subgroup(threads))
    }

    /// sum s_i P_i for 32-byte big-endian scalars (reduced mod r), one per table point.
    #[pyo3(signature = (scalars, threads=0))]
    fn msm(&self, py: Python<'_>, scalars: &[u8], threads: usize) -> PyResult<Option<(String, String)>> {
        let scs = decode_scalars(scalars).map_err(|e| PyValueError::new_err(format!("scalars: {e}")))?;
        if scs.len() != self.table.n() {
            return Err(PyValueError::new_err(format!("{} scalars for a table of {} points", scs.len(), self.table.n())));
        }
        let result = py.detach(|| {
            let reduced: Vec<[u64; 4]> = scs.iter().map(reduce_scalar).collect();
            self.table.msm(&reduced, threads)
        });
        Ok(affine_hex(&result))
    }

    #[getter]
    fn n(&self) -> usize {
        self.table.n()
    }

    #[getter]
    fn window(&self) -> usize {
        self.table.window()
    }

    #[getter]
    fn windows(&self) -> usize {
        self.table.windows()
    }

    #[getter]
    fn memory_bytes(&self) -> usize {
        self.table.memory_bytes()
    }
}

/// The first invalid point of a gnark-raw byte string, as (index, reason), or None when every point is
/// on the curve and in G1 (the endomorphism test); `threads` workers (0: every core).  Without the GIL.
#[pyfunction]
#[pyo3(signature = (points, threads=0))]
fn g1_first_invalid(py: Python<'_>, points: &[u8], threads: usize) -> PyResult<Option<(usize, String)>> {
    if let Err(e) = decode_points(points, false) {
        return Err(PyValueError::new_err(format!("points: {e}")));
    }
    let pts = decode_points(points, false).unwrap_or_default();
    let threads = MsmConfig { threads, ..Default::default() }.threads().max(1);
    let first = py.detach(|| {
        let chunk = pts.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = pts
                .chunks(chunk)
                .enumerate()
                .map(|(k, part)| {
                    s.spawn(move || {
                        part.iter().enumerate().find_map(|(i, p)| {
                            if !p.is_on_curve() {
                                Some((k * chunk + i, "not on the curve".to_string()))
                            } else if !p.is_in_subgroup() {
                                Some((k * chunk + i, "not in the prime-order subgroup G1".to_string()))
                            } else {
                                None
                            }
                        })
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().unwrap()).min_by_key(|(i, _)| *i)
        })
    });
    Ok(first)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(msm_bls12_377, m)?)?;
    m.add_function(wrap_pyfunction!(msm_bls12_377_random, m)?)?;
    m.add_class::<MsmTable>()?;
    m.add_function(wrap_pyfunction!(g1_first_invalid, m)?)
}
