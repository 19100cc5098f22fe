//! Python entry points of the testbed's real-time loops (Linux only). Each call blocks with the GIL
//! released until its schedule ends or the process gets SIGTERM/SIGINT; the testbed driver runs
//! them in worker processes inside network namespaces (`python -m jitterlab.testbed_worker`).
use std::net::Ipv4Addr;

use numpy::IntoPyArray;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use jitterlab_testbed::{delayline, media, Error};

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Invalid(m) => PyValueError::new_err(m),
        Error::Os { .. } => PyOSError::new_err(e.to_string()),
    }
}

/// Runs the delay line on TUN device `tun` until SIGTERM. `rules` are (src, src_mask, dst,
/// dst_mask, delay_ns) with IPv4 addresses as integers; the first match wins, else
/// `default_delay_ns`. Returns statistics incl. the release lateness samples (ns).
#[pyfunction]
#[pyo3(signature = (tun, rules, default_delay_ns, fifo_prio=50, max_held=200_000, max_samples=2_000_000))]
fn testbed_delay_line<'py>(
    py: Python<'py>,
    tun: String,
    rules: Vec<(u32, u32, u32, u32, i64)>,
    default_delay_ns: i64,
    fifo_prio: i32,
    max_held: usize,
    max_samples: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = delayline::Config {
        tun,
        rules: rules
            .into_iter()
            .map(|(src, src_mask, dst, dst_mask, delay_ns)| delayline::Rule { src, src_mask, dst, dst_mask, delay_ns })
            .collect(),
        default_delay_ns,
        max_held,
        max_samples,
        fifo_prio,
    };
    let s = py.detach(|| delayline::run(&cfg)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("packets", s.packets)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("non_ipv4", s.non_ipv4)?;
    d.set_item("write_errors", s.write_errors)?;
    d.set_item("overflow_drops", s.overflow_drops)?;
    d.set_item("max_held", s.max_held)?;
    d.set_item("realtime", s.realtime)?;
    d.set_item("lateness_ns", s.lateness_ns.into_pyarray(py))?;
    Ok(d)
}

/// Sends RTP/UDP packets on the schedule start_ns + k*interval_ns + j*spacing_ns (j < per_tick)
/// until stop_ns; returns seq, sched_ns, send_ns, size arrays.
#[pyfunction]
#[pyo3(signature = (dst, dst_port, start_ns, stop_ns, interval_ns, ip_size, per_tick=1, spacing_ns=0, src_port=0, ssrc=1, payload_type=0, clock_rate=8000, tos=0, fifo_prio=60))]
#[allow(clippy::too_many_arguments)]
fn testbed_media_send<'py>(
    py: Python<'py>,
    dst: &str,
    dst_port: u16,
    start_ns: i64,
    stop_ns: i64,
    interval_ns: i64,
    ip_size: usize,
    per_tick: u32,
    spacing_ns: i64,
    src_port: u16,
    ssrc: u32,
    payload_type: u8,
    clock_rate: u32,
    tos: u8,
    fifo_prio: i32,
) -> PyResult<Bound<'py, PyDict>> {
    let dst: Ipv4Addr = dst.parse().map_err(|_| PyValueError::new_err(format!("dst: not an IPv4 address: {dst:?}")))?;
    let cfg = media::SendConfig {
        dst, dst_port, src_port, start_ns, stop_ns, interval_ns, per_tick, spacing_ns, ip_size, ssrc, payload_type, clock_rate, tos, fifo_prio,
    };
    let l = py.detach(|| media::send(&cfg)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("seq", l.seq.into_pyarray(py))?;
    d.set_item("sched_ns", l.sched_ns.into_pyarray(py))?;
    d.set_item("send_ns", l.send_ns.into_pyarray(py))?;
    d.set_item("size", l.size.into_pyarray(py))?;
    d.set_item("send_errors", l.send_errors)?;
    d.set_item("realtime", l.realtime)?;
    Ok(d)
}

/// Receives media packets on UDP `port` until stop_ns; returns seq, send_ns, recv_ns (kernel
/// receive time), size arrays.
#[pyfunction]
#[pyo3(signature = (port, stop_ns, fifo_prio=60))]
fn testbed_media_recv<'py>(py: Python<'py>, port: u16, stop_ns: i64, fifo_prio: i32) -> PyResult<Bound<'py, PyDict>> {
    let cfg = media::RecvConfig { port, stop_ns, fifo_prio };
    let l = py.detach(|| media::receive(&cfg)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("seq", l.seq.into_pyarray(py))?;
    d.set_item("send_ns", l.send_ns.into_pyarray(py))?;
    d.set_item("recv_ns", l.recv_ns.into_pyarray(py))?;
    d.set_item("size", l.size.into_pyarray(py))?;
    d.set_item("malformed", l.malformed)?;
    d.set_item("realtime", l.realtime)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(testbed_delay_line, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_media_send, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_media_recv, m)?)?;
    Ok(())
}
