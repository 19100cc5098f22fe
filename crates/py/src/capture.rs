//! Python bindings of the capture area: `analyze_pair` (the GIL is released while the files are
//! read; progress is reported through an optional Python callable) and a `PcapWriter` class.
use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;

use numpy::IntoPyArray;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use jitterlab_capture as cap;
use jitterlab_capture::analyze::{Analysis, Options};

use crate::errors::CaptureError;

/// Every variant (damaged file, bad selector, bad option) is a user-facing CaptureError whose
/// message names the byte offset where there is one.
fn to_py_err(e: cap::CaptureError) -> PyErr { CaptureError::new_err(e.to_string()) }

/// Analyses one capture pair. Returns a dict: `media_packets`, `tcp_flows` (dicts of columns),
/// `rtp_streams`, `media_flows` (lists of dicts), `run` (dict), `warnings` (dict of lists).
#[pyfunction]
#[pyo3(signature = (sender, receiver, media="auto", clock_offset_ns=0, t0_ns=None, tcp_start_ns=None,
    clock_rate=None, spike_ns=3_000_000_000, loss_run=50, reorder_min=1, duplicate_min=1, progress=None))]
#[allow(clippy::too_many_arguments)]
fn analyze_pair<'py>(
    py: Python<'py>,
    sender: &str,
    receiver: &str,
    media: &str,
    clock_offset_ns: i64,
    t0_ns: Option<i64>,
    tcp_start_ns: Option<i64>,
    clock_rate: Option<u32>,
    spike_ns: i64,
    loss_run: u64,
    reorder_min: u64,
    duplicate_min: u64,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let opt = Options {
        media: media.parse().map_err(to_py_err)?,
        clock_offset_ns,
        t0_ns,
        tcp_start_ns,
        clock_rate,
        spike_ns,
        loss_run,
        reorder_min,
        duplicate_min,
    };
    let (s, r) = (sender.to_string(), receiver.to_string());
    let res = py.detach(move || {
        let mut cb = |phase: &str, done: u64, total: u64| {
            if let Some(p) = &progress {
                Python::attach(|py| {
                    // A failing progress callback must not abort the analysis.
                    let _ = p.call1(py, (phase, done, total));
                });
            }
        };
        cap::analyze(&s, &r, &opt, Some(&mut cb))
    });
    analysis_to_py(py, res.map_err(to_py_err)?)
}

fn opt_list<'py, T: IntoPyObject<'py> + Copy>(py: Python<'py>, v: &[Option<T>]) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, v.iter().copied())
}

fn analysis_to_py(py: Python<'_>, a: Analysis) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    let m = PyDict::new(py);
    let media = a.media;
    m.set_item("flow_id", media.flow_id.into_pyarray(py))?;
    m.set_item("seq", media.seq.into_pyarray(py))?;
    m.set_item("send_ns", media.send_ns.into_pyarray(py))?;
    m.set_item("recv_ns", media.recv_ns.into_pyarray(py))?;
    m.set_item("size", media.size.into_pyarray(py))?;
    m.set_item("ce", media.ce.into_pyarray(py))?;
    out.set_item("media_packets", m)?;

    let t = a.tcp;
    let f = PyDict::new(py);
    f.set_item("flow_id", t.flow_id.into_pyarray(py))?;
    f.set_item("src", PyList::new(py, t.src)?)?;
    f.set_item("dst", PyList::new(py, t.dst)?)?;
    f.set_item("sport", t.sport.into_pyarray(py))?;
    f.set_item("dport", t.dport.into_pyarray(py))?;
    f.set_item("iw", opt_list(py, &t.iw)?)?;
    f.set_item("syn_ns", opt_list(py, &t.syn_ns)?)?;
    f.set_item("first_data_ns", opt_list(py, &t.first_data_ns)?)?;
    f.set_item("end_ns", opt_list(py, &t.end_ns)?)?;
    f.set_item("last_data_ns", opt_list(py, &t.last_data_ns)?)?;
    f.set_item("last_ns", t.last_ns.into_pyarray(py))?;
    f.set_item("bytes", t.bytes.into_pyarray(py))?;
    f.set_item("bytes_acked", t.bytes_acked.into_pyarray(py))?;
    f.set_item("segments_sent", t.segments_sent.into_pyarray(py))?;
    f.set_item("retransmits", t.retransmits.into_pyarray(py))?;
    f.set_item("ecn_marks", t.ecn_marks.into_pyarray(py))?;
    out.set_item("tcp_flows", f)?;

    let streams = PyList::empty(py);
    for s in &a.rtp_streams {
        let d = PyDict::new(py);
        d.set_item("side", s.side)?;
        d.set_item("flow_id", s.flow_id)?;
        d.set_item("ssrc", s.ssrc)?;
        d.set_item("src", &s.src)?;
        d.set_item("dst", &s.dst)?;
        d.set_item("sport", s.sport)?;
        d.set_item("dport", s.dport)?;
        d.set_item("payload_type", s.payload_type)?;
        d.set_item("packets", s.packets)?;
        d.set_item("expected", s.expected)?;
        d.set_item("lost", s.lost)?;
        d.set_item("min_jitter_ms", s.min_jitter_s * 1e3)?;
        d.set_item("max_jitter_ms", s.max_jitter_s * 1e3)?;
        d.set_item("mean_jitter_ms", s.mean_jitter_s * 1e3)?;
        d.set_item("min_delta_ms", s.min_delta_ns.map(|x| x as f64 / 1e6))?;
        d.set_item("mean_delta_ms", s.mean_delta_ns / 1e6)?;
        d.set_item("max_delta_ms", s.max_delta_ns.map(|x| x as f64 / 1e6))?;
        streams.append(d)?;
    }
    out.set_item("rtp_streams", streams)?;

    let flows = PyList::empty(py);
    for (i, fl) in a.media_flows.iter().enumerate() {
        let d = PyDict::new(py);
        d.set_item("flow_id", i)?;
        d.set_item("ssrc", fl.ssrc)?;
        d.set_item("src", cap::wire::addr_to_string(&fl.src))?;
        d.set_item("dst", cap::wire::addr_to_string(&fl.dst))?;
        d.set_item("sport", fl.sport)?;
        d.set_item("dport", fl.dport)?;
        d.set_item("payload_type", fl.payload_type)?;
        flows.append(d)?;
    }
    out.set_item("media_flows", flows)?;

    let r = &a.run;
    let d = PyDict::new(py);
    d.set_item("t0_epoch_ns", r.t0_epoch_ns)?;
    d.set_item("tcp_start_ns", r.tcp_start_ns)?;
    d.set_item("tcp_end_ns", r.tcp_end_ns)?;
    d.set_item("media_sent", r.media_sent)?;
    d.set_item("media_received", r.media_received)?;
    d.set_item("media_lost", r.media_lost)?;
    d.set_item("duplicates", r.duplicates)?;
    d.set_item("reordered", r.reordered)?;
    d.set_item("unmatched", r.unmatched)?;
    d.set_item("sender_duplicates", r.sender_duplicates)?;
    d.set_item("max_loss_run", r.max_loss_run)?;
    d.set_item("min_owd_ns", r.min_owd_ns)?;
    d.set_item("max_owd_ns", r.max_owd_ns)?;
    d.set_item("clock_offset_ns", r.clock_offset_ns)?;
    d.set_item("clock_offset_bound_ns", r.clock_offset_bound_ns)?;
    d.set_item("flag_delay_spike", r.flag_delay_spike)?;
    d.set_item("flag_loss_run", r.flag_loss_run)?;
    d.set_item("flag_reordering", r.flag_reordering)?;
    d.set_item("flag_duplication", r.flag_duplication)?;
    d.set_item("anomalous", r.anomalous)?;
    d.set_item("sender_frames", r.sender_frames)?;
    d.set_item("receiver_frames", r.receiver_frames)?;
    d.set_item("sender_bytes", r.sender_bytes)?;
    d.set_item("receiver_bytes", r.receiver_bytes)?;
    out.set_item("run", d)?;

    let w = PyDict::new(py);
    w.set_item("sender", PyList::new(py, a.sender_warnings.messages())?)?;
    w.set_item("receiver", PyList::new(py, a.receiver_warnings.messages())?)?;
    w.set_item("notes", PyList::new(py, a.notes)?)?;
    // the first damage of each file (None: none), which `analyze` refuses unless told to accept it
    let damage = PyDict::new(py);
    let cut = |w: &jitterlab_capture::error::Warnings| w.damage().filter(|e| e.kind() != "unsupported_linktype").map(|e| e.to_string());
    damage.set_item("sender", cut(&a.sender_warnings))?;
    damage.set_item("receiver", cut(&a.receiver_warnings))?;
    w.set_item("damage", damage)?;
    out.set_item("warnings", w)?;
    Ok(out)
}

fn ip(s: &str) -> PyResult<Ipv4Addr> { s.parse().map_err(|_| PyValueError::new_err(format!("not an IPv4 address: {s:?}"))) }
fn os_err(e: std::io::Error) -> PyErr { PyOSError::new_err(e.to_string()) }

/// pcap writer (Ethernet + IPv4, nanosecond timestamps by default). Use as a context manager or
/// call `close()`.
#[pyclass(name = "PcapWriter", module = "jitterlab._native")]
struct PyPcapWriter {
    w: Option<cap::PcapWriter<BufWriter<File>>>,
}

impl PyPcapWriter {
    fn get(&mut self) -> PyResult<&mut cap::PcapWriter<BufWriter<File>>> {
        self.w.as_mut().ok_or_else(|| PyValueError::new_err("the PcapWriter is closed"))
    }
}

#[pymethods]
impl PyPcapWriter {
    #[new]
    #[pyo3(signature = (path, snaplen=65535, nanos=true))]
    fn new(path: &str, snaplen: u32, nanos: bool) -> PyResult<Self> {
        let f = File::create(path).map_err(os_err)?;
        let w = cap::PcapWriter::with_resolution(BufWriter::with_capacity(1 << 20, f), snaplen, nanos).map_err(os_err)?;
        Ok(PyPcapWriter { w: Some(w) })
    }

    #[pyo3(signature = (ts_ns, src, dst, sport, dport, ssrc, seq, rtp_ts, ip_len, payload_type=0, marker=false, ecn=0))]
    #[allow(clippy::too_many_arguments)]
    fn write_rtp(&mut self, ts_ns: i64, src: &str, dst: &str, sport: u16, dport: u16, ssrc: u32, seq: u16, rtp_ts: u32, ip_len: u32, payload_type: u8, marker: bool, ecn: u8) -> PyResult<()> {
        let ep = cap::Endpoints { src: ip(src)?, dst: ip(dst)?, sport, dport };
        let p = cap::RtpPacket { ts_ns, ep, ecn, ssrc, seq, rtp_ts, payload_type, marker, ip_len };
        self.get()?.write_rtp(&p).map_err(os_err)
    }

    #[pyo3(signature = (ts_ns, src, dst, sport, dport, payload, ecn=0))]
    #[allow(clippy::too_many_arguments)]
    fn write_udp(&mut self, ts_ns: i64, src: &str, dst: &str, sport: u16, dport: u16, payload: &[u8], ecn: u8) -> PyResult<()> {
        let ep = cap::Endpoints { src: ip(src)?, dst: ip(dst)?, sport, dport };
        self.get()?.write_udp(&cap::UdpPacket { ts_ns, ep, ecn, payload }).map_err(os_err)
    }

    #[pyo3(signature = (ts_ns, src, dst, sport, dport, seq, ack, flags, payload_len=0, window=65535, ecn=0,
        mss=None, wscale=None, sack_permitted=false, timestamps=None, sack=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn write_tcp(
        &mut self,
        ts_ns: i64,
        src: &str,
        dst: &str,
        sport: u16,
        dport: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        payload_len: u32,
        window: u16,
        ecn: u8,
        mss: Option<u16>,
        wscale: Option<u8>,
        sack_permitted: bool,
        timestamps: Option<(u32, u32)>,
        sack: Vec<(u32, u32)>,
    ) -> PyResult<()> {
        let ep = cap::Endpoints { src: ip(src)?, dst: ip(dst)?, sport, dport };
        let options = cap::TcpOptions { mss, wscale, sack_permitted, timestamps, sack: &sack };
        let p = cap::TcpPacket { ts_ns, ep, ecn, seq, ack, flags, window, options, payload_len };
        self.get()?.write_tcp(&p).map_err(os_err)
    }

    /// Frames written so far.
    #[getter]
    fn frames(&self) -> u64 { self.w.as_ref().map_or(0, |w| w.frames) }

    fn close(&mut self) -> PyResult<()> {
        if let Some(w) = self.w.take() {
            w.finish().map_err(os_err)?;
        }
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> { slf }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_pair, m)?)?;
    m.add_class::<PyPcapWriter>()?;
    Ok(())
}
