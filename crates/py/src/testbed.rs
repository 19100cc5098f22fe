//! Python entry points of the testbed's real-time loops (Linux only). Each call blocks with the GIL
//! released until its schedule ends or the process gets SIGTERM/SIGINT; the testbed driver runs
//! them in worker processes inside network namespaces (`python -m jitterlab.testbed.worker`).
use std::net::Ipv4Addr;

use numpy::IntoPyArray;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;

use jitterlab_sim::link::Jitter;
use jitterlab_testbed::linkqueue::Limit;
use jitterlab_testbed::{delayline, media, rtc, Error};

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Invalid(m) => PyValueError::new_err(m),
        Error::Os { .. } => PyOSError::new_err(e.to_string()),
    }
}

fn bad(m: impl Into<String>) -> PyErr {
    PyValueError::new_err(m.into())
}

fn f64_of(v: &Value, k: &str) -> PyResult<f64> {
    v.get(k).and_then(Value::as_f64).ok_or_else(|| bad(format!("jitter.{k}: missing number")))
}

fn jitter_of(v: &Value) -> PyResult<Option<Jitter>> {
    if v.is_null() {
        return Ok(None);
    }
    Ok(Some(match v.get("dist").and_then(Value::as_str) {
        Some("uniform") => Jitter::Uniform { lo: f64_of(v, "min")?, hi: f64_of(v, "max")? },
        Some("exponential") => Jitter::Exponential { mean: f64_of(v, "mean")? },
        Some("normal") => Jitter::Normal { mean: f64_of(v, "mean")?, sd: f64_of(v, "sd")? },
        Some("pareto") => Jitter::Pareto { mean: f64_of(v, "mean")?, shape: f64_of(v, "shape")? },
        d => return Err(bad(format!("jitter.dist: uniform, exponential, normal or pareto, got {d:?}"))),
    }))
}

fn link_config(j: &str) -> PyResult<delayline::Config> {
    let v: Value = serde_json::from_str(j).map_err(|e| bad(format!("userspace link config: {e}")))?;
    let u = |x: &Value, k: &str| x.get(k).and_then(Value::as_u64).ok_or_else(|| bad(format!("{k}: missing whole number")));
    let i = |x: &Value, k: &str| x.get(k).and_then(Value::as_i64).ok_or_else(|| bad(format!("{k}: missing whole number")));
    let arr = |x: &Value, k: &str| x.get(k).and_then(Value::as_array).cloned().ok_or_else(|| bad(format!("{k}: missing list")));
    let mut rules = Vec::new();
    for r in arr(&v, "rules")? {
        let a: Vec<u64> = r.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default();
        if a.len() != 5 {
            return Err(bad("rules: each is [src, src_mask, dst, dst_mask, class]"));
        }
        rules.push(delayline::Rule { src: a[0] as u32, src_mask: a[1] as u32, dst: a[2] as u32, dst_mask: a[3] as u32, class: a[4] as usize });
    }
    let mut classes = Vec::new();
    for c in arr(&v, "classes")? {
        let mut steps = Vec::new();
        for s in c.as_array().cloned().unwrap_or_default() {
            let kind = s.get(0).and_then(Value::as_str);
            let ch = s.get(1).and_then(Value::as_u64).ok_or_else(|| bad("classes: each step is [\"link\"|\"delay\", channel]"))? as usize;
            steps.push(match kind {
                Some("link") => delayline::Step::Link(ch),
                Some("delay") => delayline::Step::Delay(ch),
                _ => return Err(bad("classes: each step is [\"link\"|\"delay\", channel]")),
            });
        }
        classes.push(steps);
    }
    let mut channels = Vec::new();
    for c in arr(&v, "channels")? {
        let trace = match c.get("trace") {
            None | Some(Value::Null) => None,
            Some(t) => {
                let sched: Vec<u64> = arr(t, "schedule_ms")?.iter().filter_map(Value::as_u64).collect();
                let limit = match (t.get("limit_pkts").and_then(Value::as_u64), t.get("limit_bytes").and_then(Value::as_u64)) {
                    (Some(n), _) => Limit::Packets(n),
                    (None, Some(b)) => Limit::Bytes(b),
                    _ => Limit::Unlimited,
                };
                Some((sched, limit))
            }
        };
        let qdisc = match c.get("qdisc") {
            None | Some(Value::Null) => None,
            Some(q) => Some(delayline::QdiscCfg {
                table: q.get("table").cloned().ok_or_else(|| bad("qdisc.table: missing"))?,
                path: q.get("path").and_then(Value::as_str).unwrap_or("queue").to_string(),
                rate_bps: u(q, "rate_bps")?,
                overhead: q.get("overhead").and_then(Value::as_u64).unwrap_or(0) as u32,
                schedule_ms: match q.get("schedule_ms") {
                    None | Some(Value::Null) => None,
                    Some(_) => Some(arr(q, "schedule_ms")?.iter().filter_map(Value::as_u64).collect()),
                },
            }),
        };
        channels.push(delayline::ChannelCfg {
            name: c.get("name").and_then(Value::as_str).unwrap_or("?").to_string(),
            delay_ns: i(&c, "delay_ns")?,
            jitter: jitter_of(c.get("jitter").unwrap_or(&Value::Null))?,
            reorder: c.get("reorder").and_then(Value::as_bool).unwrap_or(false),
            loss: c.get("loss").and_then(Value::as_f64).unwrap_or(0.0),
            loss_burst_ns: c.get("loss_burst_ns").and_then(Value::as_i64),
            sim_name: c.get("sim_name").and_then(Value::as_str).or(c.get("name").and_then(Value::as_str)).unwrap_or("?").to_string(),
            trace,
            qdisc,
        });
    }
    Ok(delayline::Config {
        tun: v.get("tun").and_then(Value::as_str).ok_or_else(|| bad("tun: missing"))?.to_string(),
        rules,
        classes,
        channels,
        seed: u(&v, "seed")?,
        max_held: v.get("max_held").and_then(Value::as_u64).unwrap_or(200_000) as usize,
        max_samples: v.get("max_samples").and_then(Value::as_u64).unwrap_or(2_000_000) as usize,
        fifo_prio: v.get("fifo_prio").and_then(Value::as_i64).unwrap_or(50) as i32,
        ctl_fd: v.get("ctl_fd").and_then(Value::as_i64).unwrap_or(-1) as i32,
    })
}

/// Runs the userspace link (jitterlab_testbed::delayline) on a TUN device until SIGTERM.
/// `config_json`: {"tun", "rules": [[src, src_mask, dst, dst_mask, class]], "classes": [[["link"|"delay",
/// channel], ...]] (class 0 = default), "channels": [{"name", "delay_ns", "jitter": null|{"dist", ... in
/// seconds}, "reorder", "loss", "trace": null|{"schedule_ms", "limit_pkts"|"limit_bytes"}, "qdisc":
/// null|{"table" (the scenario's queue table as written), "path", "rate_bps", "overhead",
/// "schedule_ms"|null}}], "seed",
/// "fifo_prio", "ctl_fd"}. Returns statistics incl. the release lateness samples (ns) and per channel
/// counters.
#[pyfunction]
fn testbed_link<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let cfg = link_config(config_json)?;
    let s = py.detach(|| delayline::run(&cfg)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("packets", s.packets)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("non_ipv4", s.non_ipv4)?;
    d.set_item("write_errors", s.write_errors)?;
    d.set_item("overflow_drops", s.overflow_drops)?;
    d.set_item("max_held", s.max_held)?;
    d.set_item("realtime", s.realtime)?;
    d.set_item("t0_realtime_ns", s.t0_realtime_ns)?;
    let chans = PyList::empty(py);
    for c in &s.channels {
        let cd = PyDict::new(py);
        cd.set_item("name", &c.name)?;
        cd.set_item("lost", c.lost)?;
        cd.set_item("before_t0", c.before_t0)?;
        cd.set_item("mean_bps", c.mean_bps)?;
        if let Some(l) = c.link {
            cd.set_item("arrived", l.arrived)?;
            cd.set_item("dropped", l.dropped)?;
            cd.set_item("dropped_bytes", l.dropped_bytes)?;
            cd.set_item("accepted", l.accepted)?;
            cd.set_item("accepted_bytes", l.accepted_bytes)?;
            cd.set_item("max_backlog", l.max_backlog)?;
        }
        if let Some((kind, q)) = &c.qdisc {
            cd.set_item("qdisc", *kind)?;
            cd.set_item("arrived", q.arrived_pkts)?;
            cd.set_item("accepted", q.enqueued_pkts)?;
            cd.set_item("accepted_bytes", q.enqueued_bytes)?;
            cd.set_item("dequeued", q.dequeued_pkts)?;
            cd.set_item("dropped", q.dropped_pkts())?;
            cd.set_item("dropped_bytes", q.dropped_bytes())?;
            cd.set_item("marked", q.marked_pkts)?;
            cd.set_item("ce_written", c.ce_written)?;
            for r in jitterlab_sim::qdisc::DropReason::ALL {
                cd.set_item(format!("drops_{}", r.name()), q.drops_by_reason[r.index()])?;
            }
        }
        chans.append(cd)?;
    }
    d.set_item("channels", chans)?;
    d.set_item("lateness_ns", s.lateness_ns.into_pyarray(py))?;
    Ok(d)
}

/// Puts the calling thread under SCHED_FIFO at `prio` and locks memory (before a worker says
/// "ready", so that mlockall's page faults never delay its schedule). Returns whether it worked.
#[pyfunction]
fn testbed_set_realtime(prio: i32) -> bool {
    jitterlab_testbed::rt::set_fifo(prio).is_ok()
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

/// Receives media packets on UDP `port` (or on the bound socket `fd`, duplicated) until stop_ns; returns seq, send_ns, recv_ns (kernel
/// receive time), size arrays.
#[pyfunction]
#[pyo3(signature = (port, stop_ns, fifo_prio=60, fd=None))]
fn testbed_media_recv<'py>(py: Python<'py>, port: u16, stop_ns: i64, fifo_prio: i32, fd: Option<i32>) -> PyResult<Bound<'py, PyDict>> {
    let cfg = media::RecvConfig { port, stop_ns, fifo_prio, fd };
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

fn cfg_val<'a>(v: &'a Value, k: &str) -> PyResult<&'a Value> { v.get(k).ok_or_else(|| bad(format!("rtc config: {k}: missing"))) }
fn cfg_i64(v: &Value, k: &str) -> PyResult<i64> { cfg_val(v, k)?.as_i64().ok_or_else(|| bad(format!("rtc config: {k}: not a whole number"))) }
fn cfg_f64(v: &Value, k: &str) -> PyResult<f64> { cfg_val(v, k)?.as_f64().ok_or_else(|| bad(format!("rtc config: {k}: not a number"))) }
fn cfg_str(v: &Value, k: &str) -> PyResult<String> { Ok(cfg_val(v, k)?.as_str().ok_or_else(|| bad(format!("rtc config: {k}: not a string")))?.to_string()) }
fn cfg_ip(v: &Value, k: &str) -> PyResult<Ipv4Addr> { cfg_str(v, k)?.parse().map_err(|_| bad(format!("rtc config: {k}: not an IPv4 address"))) }

/// Runs the adaptive media sender (jitterlab_testbed::rtc::send: the simulator's controller,
/// encoder and pacer on CLOCK_REALTIME). `config_json`: {"dst", "dst_port", "port", "epoch_ns",
/// "start_ns", "stop_ns", "end_ns", "interval_ns", "cc", "min_bps", "max_bps", "start_bps", "video",
/// "key_interval_ns" (null: none), "pauses_ns" ([[from, to], …] from epoch_ns), "mtu", "seed", "name", "ssrc", "pt", "clock_rate", "tos",
/// "fifo_prio"}. Returns the packets sent (seq, send_ns, size), `frames` and `series` (rows of the
/// rtc_frames / rtc_series columns, times in CLOCK_REALTIME ns) and counters.
#[pyfunction]
fn testbed_rtc_send<'py>(py: Python<'py>, config_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let v: Value = serde_json::from_str(config_json).map_err(|e| bad(format!("rtc config: {e}")))?;
    let cfg = rtc::SendConfig {
        dst: cfg_ip(&v, "dst")?,
        dst_port: cfg_i64(&v, "dst_port")? as u16,
        port: cfg_i64(&v, "port")? as u16,
        epoch_ns: cfg_i64(&v, "epoch_ns")?,
        start_ns: cfg_i64(&v, "start_ns")?,
        stop_ns: cfg_i64(&v, "stop_ns")?,
        end_ns: cfg_i64(&v, "end_ns")?,
        interval_ns: cfg_i64(&v, "interval_ns")?,
        cc: cfg_str(&v, "cc")?,
        limits: jitterlab_sim::rtc::Limits { min_bps: cfg_f64(&v, "min_bps")?, max_bps: cfg_f64(&v, "max_bps")?, start_bps: cfg_f64(&v, "start_bps")? },
        video: cfg_val(&v, "video")?.as_bool().unwrap_or(true),
        key_interval_ns: v.get("key_interval_ns").and_then(Value::as_i64),
        pauses_ns: match v.get("pauses_ns") {
            None | Some(Value::Null) => vec![],
            Some(p) => p
                .as_array()
                .ok_or_else(|| bad("rtc config: pauses_ns: not a list"))?
                .iter()
                .map(|w| match w.as_array().map(|a| (a.first().and_then(Value::as_i64), a.get(1).and_then(Value::as_i64))) {
                    Some((Some(a), Some(b))) => Ok((a, b)),
                    _ => Err(bad("rtc config: pauses_ns: each is [from_ns, to_ns]")),
                })
                .collect::<PyResult<Vec<_>>>()?,
        },
        mtu: cfg_i64(&v, "mtu")? as u32,
        seed: cfg_val(&v, "seed")?.as_u64().ok_or_else(|| bad("rtc config: seed: not a whole number"))?,
        name: cfg_str(&v, "name")?,
        ssrc: cfg_i64(&v, "ssrc")? as u32,
        payload_type: cfg_i64(&v, "pt")? as u8,
        clock_rate: cfg_i64(&v, "clock_rate")? as u32,
        tos: cfg_i64(&v, "tos")? as u8,
        fifo_prio: cfg_i64(&v, "fifo_prio")? as i32,
    };
    let l = py.detach(|| rtc::send(&cfg)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("seq", l.seq.into_pyarray(py))?;
    d.set_item("send_ns", l.send_ns.into_pyarray(py))?;
    d.set_item("size", l.size.into_pyarray(py))?;
    let f = &l.frames;
    d.set_item("frame", f.iter().map(|r| r.0 as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("capture_ns", f.iter().map(|r| r.1).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("bytes", f.iter().map(|r| r.2 as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("packets", f.iter().map(|r| r.3 as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("first_seq", f.iter().map(|r| r.4 as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("key", f.iter().map(|r| r.5).collect::<Vec<_>>().into_pyarray(py))?;
    let s = &l.series;
    d.set_item("t_ns", s.iter().map(|r| r.0).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("target_bps", s.iter().map(|r| r.1).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("encoder_bps", s.iter().map(|r| r.2).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("rtt_ns", s.iter().map(|r| r.3).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("in_flight_bytes", s.iter().map(|r| r.4 as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("queue_bytes", s.iter().map(|r| r.5 as i64).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("state", s.iter().map(|r| r.6).collect::<Vec<_>>().into_pyarray(py))?;
    d.set_item("reports", l.reports)?;
    d.set_item("malformed", l.malformed)?;
    d.set_item("send_errors", l.send_errors)?;
    d.set_item("discarded", l.discarded)?;
    d.set_item("realtime", l.realtime)?;
    Ok(d)
}

/// Runs the adaptive media receiver (jitterlab_testbed::rtc::receive): records arrivals, sends a
/// report every `interval_ns` to fb_dst:fb_port. `config_json`: {"port", "fb_dst", "fb_port",
/// "epoch_ns", "until_ns", "stop_ns", "format" ("rfc8888" | "twcc"), "interval_ns", "fifo_prio"};
/// `fd`: a socket already bound to `port`.
#[pyfunction]
#[pyo3(signature = (config_json, fd=None))]
fn testbed_rtc_recv<'py>(py: Python<'py>, config_json: &str, fd: Option<i32>) -> PyResult<Bound<'py, PyDict>> {
    use jitterlab_sim::rtc::feedback::Format;
    let v: Value = serde_json::from_str(config_json).map_err(|e| bad(format!("rtc config: {e}")))?;
    let fmt = cfg_str(&v, "format")?;
    let cfg = rtc::RecvConfig {
        port: cfg_i64(&v, "port")? as u16,
        fb_dst: cfg_ip(&v, "fb_dst")?,
        fb_port: cfg_i64(&v, "fb_port")? as u16,
        epoch_ns: cfg_i64(&v, "epoch_ns")?,
        until_ns: cfg_i64(&v, "until_ns")?,
        stop_ns: cfg_i64(&v, "stop_ns")?,
        format: Format::parse(&fmt).ok_or_else(|| bad(format!("rtc config: format: {} , got {fmt:?}", Format::NAMES.join(" or "))))?,
        interval_ns: cfg_i64(&v, "interval_ns")?,
        fifo_prio: cfg_i64(&v, "fifo_prio")? as i32,
        fd,
    };
    let l = py.detach(|| rtc::receive(&cfg)).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("seq", l.seq.into_pyarray(py))?;
    d.set_item("send_ns", l.send_ns.into_pyarray(py))?;
    d.set_item("recv_ns", l.recv_ns.into_pyarray(py))?;
    d.set_item("size", l.size.into_pyarray(py))?;
    d.set_item("ce", l.ce.into_pyarray(py))?;
    d.set_item("reports", l.reports)?;
    d.set_item("report_bytes", l.report_bytes)?;
    d.set_item("malformed", l.malformed)?;
    d.set_item("realtime", l.realtime)?;
    Ok(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(testbed_link, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_set_realtime, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_media_send, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_media_recv, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_rtc_send, m)?)?;
    m.add_function(wrap_pyfunction!(testbed_rtc_recv, m)?)?;
    Ok(())
}
