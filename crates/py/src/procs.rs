//! The C library's settings of a process that does runs (`jitterlab._procs.keep_freed_memory`):
//! set here, not through ctypes, whose import cost ~2.5 ms of every sweep process and worker.
use pyo3::prelude::*;

/// glibc's `mallopt(param, value)` (malloc.h): true when the C library took the setting, false
/// when it refused it or has no mallopt (not glibc).
#[pyfunction]
fn mallopt(param: i32, value: i32) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: std::os::raw::c_int, value: std::os::raw::c_int) -> std::os::raw::c_int;
        }
        // SAFETY: mallopt only sets malloc's tunables (it returns 0 for a value it refuses)
        unsafe { mallopt(param, value) != 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (param, value);
        false
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mallopt, m)?)?;
    Ok(())
}
