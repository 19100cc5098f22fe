//! PyO3 bindings: the only crate that knows Python. Each area registers its functions in its own
//! module file; errors of every crate map to Python exceptions in `errors.rs`.
use pyo3::prelude::*;

mod arrow_c;
mod errors;
mod export;
mod sim;
mod metrics;
mod chunks;
mod summary;
mod capture;
mod testbed;
mod units;
mod parquet_concat;
mod parquet_write;
mod parquet_int;
mod native_table;
mod procs;
mod digest;
mod prepared;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    sim::register(m)?;
    metrics::register(m)?;
    summary::register(m)?;
    capture::register(m)?;
    testbed::register(m)?;
    units::register(m)?;
    parquet_concat::register(m)?;
    parquet_write::register(m)?;
    native_table::register(m)?;
    procs::register(m)?;
    digest::register(m)?;
    prepared::register(m)?;
    Ok(())
}
