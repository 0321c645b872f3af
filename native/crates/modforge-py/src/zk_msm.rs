//! The MSM over BLS12-377 G1 for Python (`modforge.zk.msm_api` calls it).
//!
//! `msm_bls12_377(points, scalars, threads)`: points in gnark-crypto's raw encoding (96 bytes each,
//! checked to be on the curve; G1 membership is the caller's check), scalars 32 bytes big-endian
//! (reduced mod r); returns None for the point at infinity, else the affine (x, y) as hex strings.
//! Runs without the GIL.

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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(msm_bls12_377, m)?)
}
