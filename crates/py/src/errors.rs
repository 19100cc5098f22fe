//! One place where Rust errors become Python exceptions.
use pyo3::prelude::*;

pyo3::create_exception!(_native, JitterlabError, pyo3::exceptions::PyException, "Base class of jitterlab errors.");
pyo3::create_exception!(_native, ScenarioError, JitterlabError, "A scenario is malformed or impossible; the message names the key path.");
pyo3::create_exception!(_native, TableError, JitterlabError, "A table lacks a column, has a wrong dtype or impossible values; the message names the column.");
pyo3::create_exception!(_native, CaptureError, JitterlabError, "A capture file is damaged or unsupported; the message names the byte offset.");

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("JitterlabError", py.get_type::<JitterlabError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("TableError", py.get_type::<TableError>())?;
    m.add("CaptureError", py.get_type::<CaptureError>())?;
    Ok(())
}
