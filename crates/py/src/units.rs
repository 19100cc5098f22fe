//! The scenario's unit parsers and cost estimate, for Python: CLI options and capture options use
//! the same rules as scenario keys (crates/sim/src/config.rs), and `simulate` refuses a scenario
//! whose estimate exceeds the limits before it runs.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use jitterlab_sim::config;

use crate::errors::ScenarioError;

/// A duration string ("25ms", "-1.5ms", "1sec") in integer nanoseconds. Raises ValueError.
#[pyfunction]
fn parse_duration_ns(s: &str) -> PyResult<i64> { config::duration_ns(s).map_err(PyValueError::new_err) }

/// A rate string ("4Mbit", "100kbit/s") in bits per second. Raises ValueError ("4Mbps" included:
/// tc(8) reads it as bytes per second).
#[pyfunction]
fn parse_rate_bps(s: &str) -> PyResult<u64> { config::rate_bps(s).map_err(PyValueError::new_err) }

/// A size string as (value, "B" | "pkt"): "372kB" -> (372000, "B"), "500pkt" -> (500, "pkt").
#[pyfunction]
fn parse_size(s: &str) -> PyResult<(u64, &'static str)> {
    config::size_value(s).map(|(n, p)| (n, if p { "pkt" } else { "B" })).map_err(PyValueError::new_err)
}

/// The cost of a scenario (JSON text or a `PreparedScenario`, traces inlined) before it runs:
/// events, rows, memory in bytes.
#[pyfunction]
fn estimate_json<'py>(py: Python<'py>, scenario: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let v = crate::prepared::scenario_of(scenario)?;
    let e = jitterlab_sim::estimate::estimate(&v).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("duration_ns", e.duration_ns)?;
    d.set_item("nodes", e.nodes)?;
    d.set_item("channels", e.channels)?;
    d.set_item("flows", e.flows)?;
    d.set_item("media_rows", e.media_rows)?;
    d.set_item("tcp_segments", e.tcp_segments)?;
    d.set_item("series_rows", e.series_rows)?;
    d.set_item("sample_rows", e.sample_rows)?;
    d.set_item("tap_bytes", e.tap_bytes)?;
    d.set_item("events", e.events)?;
    d.set_item("memory_bytes", e.memory_bytes)?;
    d.set_item("stated_factor", jitterlab_sim::estimate::STATED_FACTOR)?;
    Ok(d)
}

/// Reads a capture file through to its end (or only its header with `full = False`) and raises the
/// CaptureError that reading it gives, if any; lets an error of a pair be pinned on one of its files.
/// Damage inside the file that the analysis tolerates (records after the damage are skipped) is not
/// an error here either.
#[pyfunction]
#[pyo3(signature = (path, full=true))]
fn capture_check(py: Python<'_>, path: &str, full: bool) -> PyResult<()> {
    let path = path.to_string();
    let res = py.detach(move || -> Result<(), jitterlab_capture::CaptureError> {
        let mut r = jitterlab_capture::CaptureReader::open(&path)?;
        if full {
            loop {
                match r.next_frame() {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e @ jitterlab_capture::CaptureError::Io { .. }) => return Err(e),
                    Err(_) => break,
                }
            }
        }
        Ok(())
    });
    res.map_err(|e| crate::errors::CaptureError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(capture_check, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration_ns, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rate_bps, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_json, m)?)?;
    Ok(())
}
