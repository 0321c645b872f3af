//! The MSM over BLS12-377 G1 for Python (`modforge.zk.msm_api` calls it).
//!
//! `msm_bls12_377(points, scalars, threads)`: points in gnark-crypto's raw encoding (96 bytes each,
//! checked to be on the curve; G1 membership is the caller's check), scalars 32 bytes big-endian
//! (reduced mod r); returns None for the point at infinity, else the affine (x, y) as hex strings.
//! Runs without the GIL.  `g1_first_invalid(points, threads)` is the file readers' fast curve and
//! subgroup check.

use modforge_msm::instance::{decode_points, decode_scalars};
use modforge_msm::{msm, reduce_scalar, MsmConfig};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

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
    let cfg = MsmConfig { threads, window: None, batch_size: None };
    let result = py.detach(|| {
        let reduced: Vec<[u64; 4]> = scs.iter().map(reduce_scalar).collect();
        msm(&pts, &reduced, &cfg).to_affine()
    });
    Ok(if result.infinity {
        None
    } else {
        Some((hex(&result.x.to_canonical()), hex(&result.y.to_canonical())))
    })
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
    m.add_function(wrap_pyfunction!(g1_first_invalid, m)?)
}
