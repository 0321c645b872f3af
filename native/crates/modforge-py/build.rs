//! `Py_3_13` etc. for the binding (`src/python.rs` converts ints through
//! `PyLong_AsNativeBytes` from 3.13, `_PyLong_AsByteArray` before), set only
//! when the binding is built.
fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
