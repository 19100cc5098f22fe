//! Python bindings of the simulator: one call runs a scenario and returns its tables as numpy
//! columns (no per-packet Python objects). The GIL is released while the simulation runs.
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;

use crate::errors::ScenarioError;

/// Runs the scenario given as a JSON string with `seed`; returns a dict of tables (dicts of numpy
/// arrays) and run totals. Raises ScenarioError naming the key path for a bad scenario.
/// With `pcap_dir`, the packets of the nodes named in `output.pcap` are written there as
/// `<node>.pcap` (the dict's "pcap" entry maps node name to path).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, pcap_dir=None))]
fn simulate_json<'py>(py: Python<'py>, scenario_json: &str, seed: u64, pcap_dir: Option<String>) -> PyResult<Bound<'py, PyDict>> {
    let v: serde_json::Value = serde_json::from_str(scenario_json).map_err(|e| ScenarioError::new_err(format!("<scenario>: not valid JSON: {e}")))?;
    let res = py.detach(|| scenario::run(&v, seed));
    let mut t = res.map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let pcaps = PyDict::new(py);
    if let Some(dir) = pcap_dir {
        let taps = std::mem::take(&mut t.taps);
        let names = t.nodes.clone();
        let tt = jitterlab_sim::record::Tables { taps, pcap_snaplen: t.pcap_snaplen, ..Default::default() };
        let written = py
            .detach(|| crate::export::write_taps(&tt, &names, std::path::Path::new(&dir)))
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{dir}: cannot write pcap: {e}")))?;
        for (name, path) in written {
            pcaps.set_item(name, path.to_string_lossy().to_string())?;
        }
    }
    let out = tables_to_py(py, t)?;
    out.set_item("pcap", pcaps)?;
    out.set_item("pcap_epoch_ns", crate::export::EPOCH_NS)?;
    Ok(out)
}

fn tables_to_py<'py>(py: Python<'py>, t: Tables) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);

    let m = PyDict::new(py);
    let media = t.media;
    m.set_item("flow_id", media.flow_id.into_pyarray(py))?;
    m.set_item("seq", media.seq.into_pyarray(py))?;
    m.set_item("send_ns", media.send_ns.into_pyarray(py))?;
    m.set_item("recv_ns", media.recv_ns.into_pyarray(py))?;
    m.set_item("size", media.size.into_pyarray(py))?;
    m.set_item("lost_where", media.lost_where.into_pyarray(py))?;
    m.set_item("ce", media.ce.into_pyarray(py))?;
    out.set_item("media_packets", m)?;

    let q = PyDict::new(py);
    let qs = t.queue_samples;
    q.set_item("t_ns", qs.t_ns.into_pyarray(py))?;
    q.set_item("queue", qs.queue.into_pyarray(py))?;
    q.set_item("backlog_pkts", qs.backlog_pkts.into_pyarray(py))?;
    q.set_item("backlog_bytes", qs.backlog_bytes.into_pyarray(py))?;
    q.set_item("drops", qs.drops.into_pyarray(py))?;
    q.set_item("marks", qs.marks.into_pyarray(py))?;
    out.set_item("queue_samples", q)?;

    let f = PyDict::new(py);
    let tf = t.tcp_flows;
    f.set_item("flow_id", tf.flow_id.into_pyarray(py))?;
    f.set_item("role", PyList::new(py, tf.role)?)?;
    f.set_item("iw", tf.iw.into_pyarray(py))?;
    f.set_item("cc", PyList::new(py, tf.cc)?)?;
    f.set_item("syn_ns", tf.syn_ns.into_pyarray(py))?;
    f.set_item("first_data_ns", tf.first_data_ns.into_pyarray(py))?;
    f.set_item("end_ns", tf.end_ns.into_pyarray(py))?;
    f.set_item("bytes", tf.bytes.into_pyarray(py))?;
    f.set_item("bytes_acked", tf.bytes_acked.into_pyarray(py))?;
    f.set_item("segments_sent", tf.segments_sent.into_pyarray(py))?;
    f.set_item("retransmits", tf.retransmits.into_pyarray(py))?;
    f.set_item("drops", tf.drops.into_pyarray(py))?;
    f.set_item("ecn_marks", tf.ecn_marks.into_pyarray(py))?;
    f.set_item("timeouts", tf.timeouts.into_pyarray(py))?;
    out.set_item("tcp_flows", f)?;

    let ts = PyDict::new(py);
    let series = t.tcp_series;
    ts.set_item("t_ns", series.t_ns.into_pyarray(py))?;
    ts.set_item("flow_id", series.flow_id.into_pyarray(py))?;
    ts.set_item("cwnd", series.cwnd.into_pyarray(py))?;
    ts.set_item("ssthresh", series.ssthresh.into_pyarray(py))?;
    ts.set_item("srtt_ns", series.srtt_ns.into_pyarray(py))?;
    ts.set_item("inflight", series.inflight.into_pyarray(py))?;
    out.set_item("tcp_series", ts)?;

    // column-major, as the Arrow tables are built: one array a column, not a dict a row
    let ch = &t.channels;
    let chans = PyDict::new(py);
    chans.set_item("name", PyList::new(py, ch.iter().map(|c| c.name.as_str()))?)?;
    chans.set_item("from", PyList::new(py, ch.iter().map(|c| c.from.as_str()))?)?;
    chans.set_item("to", PyList::new(py, ch.iter().map(|c| c.to.as_str()))?)?;
    chans.set_item("qdisc", PyList::new(py, ch.iter().map(|c| c.qdisc.as_str()))?)?;
    let int_col = |name: &str, f: &dyn Fn(&jitterlab_sim::record::ChannelInfo) -> u64| -> PyResult<()> {
        chans.set_item(name, int64(name, ch.iter().map(f))?.into_pyarray(py))
    };
    int_col("rate_bps", &|c| c.rate_bps)?;
    chans.set_item("delay_ns", ch.iter().map(|c| c.delay_ns).collect::<Vec<i64>>().into_pyarray(py))?;
    int_col("arrived_pkts", &|c| c.stats.arrived_pkts)?;
    int_col("enqueued_pkts", &|c| c.stats.enqueued_pkts)?;
    int_col("dequeued_pkts", &|c| c.stats.dequeued_pkts)?;
    int_col("dropped_pkts", &|c| c.stats.dropped_pkts())?;
    int_col("dropped_bytes", &|c| c.stats.dropped_bytes())?;
    for r in jitterlab_sim::qdisc::DropReason::ALL {
        int_col(&format!("drops_{}", r.name()), &|c| c.stats.drops_by_reason[r.index()])?;
    }
    int_col("marked_pkts", &|c| c.stats.marked_pkts)?;
    int_col("backlog_pkts", &|c| c.backlog_pkts)?;
    int_col("backlog_bytes", &|c| c.backlog_bytes)?;
    int_col("tx_pkts", &|c| c.tx_pkts)?;
    int_col("tx_bytes", &|c| c.tx_bytes)?;
    int_col("link_lost_pkts", &|c| c.lost_pkts)?;
    out.set_item("channels", chans)?;

    let flows = PyDict::new(py);
    let counters: Vec<_> = t.flows.iter().map(|fl| t.flow_counters.get(fl.flow_id as usize).copied().unwrap_or_default()).collect();
    flows.set_item("flow_id", t.flows.iter().map(|fl| i64::from(fl.flow_id)).collect::<Vec<i64>>().into_pyarray(py))?;
    flows.set_item("name", PyList::new(py, t.flows.iter().map(|fl| fl.name.as_str()))?)?;
    flows.set_item("kind", PyList::new(py, t.flows.iter().map(|fl| fl.kind.as_str()))?)?;
    let flow_col = |name: &str, f: &dyn Fn(&jitterlab_sim::record::FlowCounters) -> u64| -> PyResult<()> {
        flows.set_item(name, int64(name, counters.iter().map(f))?.into_pyarray(py))
    };
    flow_col("sent_pkts", &|c| c.sent_pkts)?;
    flow_col("sent_bytes", &|c| c.sent_bytes)?;
    flow_col("delivered_pkts", &|c| c.delivered_pkts)?;
    flow_col("delivered_bytes", &|c| c.delivered_bytes)?;
    flow_col("dropped_pkts", &|c| c.dropped_pkts)?;
    flow_col("dropped_bytes", &|c| c.dropped_bytes)?;
    out.set_item("flows", flows)?;

    let totals = PyDict::new(py);
    totals.set_item("tcp_start_ns", t.tcp_start_ns)?;
    totals.set_item("tcp_end_ns", t.tcp_end_ns)?;
    totals.set_item("sent_pkts", t.sent_pkts)?;
    totals.set_item("sent_bytes", t.sent_bytes)?;
    totals.set_item("delivered_pkts", t.delivered_pkts)?;
    totals.set_item("delivered_bytes", t.delivered_bytes)?;
    totals.set_item("dropped_pkts", t.dropped_pkts)?;
    totals.set_item("dropped_bytes", t.dropped_bytes)?;
    totals.set_item("in_flight_pkts", t.in_flight_pkts)?;
    totals.set_item("in_flight_bytes", t.in_flight_bytes)?;
    totals.set_item("events", t.events)?;
    totals.set_item("end_ns", t.end_ns)?;
    out.set_item("totals", totals)?;
    Ok(out)
}

/// A counter column as int64 (the tables' type); a counter past 2^63 - 1 is an error, not a wrap.
fn int64(name: &str, v: impl Iterator<Item = u64>) -> PyResult<Vec<i64>> {
    v.map(|x| i64::try_from(x).map_err(|_| pyo3::exceptions::PyOverflowError::new_err(format!("{name}: {x} exceeds int64"))))
        .collect()
}

fn parse_json(scenario_json: &str) -> PyResult<serde_json::Value> {
    serde_json::from_str(scenario_json).map_err(|e| ScenarioError::new_err(format!("<scenario>: not valid JSON: {e}")))
}

/// The scenario validated and expanded by the Rust parser (the one place where keys, units and
/// defaults are interpreted), as JSON: links with each direction's capacity, delay, queue, jitter,
/// loss and reordering in base units, traffic with units normalised. Raises ScenarioError.
#[pyfunction]
fn expand_scenario(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let v = parse_json(scenario_json)?;
    let out = py.detach(|| scenario::expand(&v)).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    Ok(out.to_string())
}

/// (ms stamps, period_ms) of the delivery opportunities that channel `channel` runs on in the run
/// of this scenario with `seed` (a trace's, or the cellular model's for this seed and channel).
#[pyfunction]
fn channel_opportunities(py: Python<'_>, scenario_json: &str, seed: u64, channel: &str) -> PyResult<(Vec<u64>, u64)> {
    let v = parse_json(scenario_json)?;
    py.detach(|| scenario::channel_opportunities(&v, seed, channel)).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// The loss bursts [(start_ns, end_ns)] of channel `channel` in the run with `seed` (a link with
/// `loss_burst`); empty for independent or no loss.
#[pyfunction]
fn channel_loss_periods(py: Python<'_>, scenario_json: &str, seed: u64, channel: &str) -> PyResult<Vec<(u64, u64)>> {
    let v = parse_json(scenario_json)?;
    py.detach(|| scenario::channel_loss_periods(&v, seed, channel)).map_err(|e| ScenarioError::new_err(e.to_string()))
}

/// The Mahimahi trace (ms stamps) the cellular model `model_json` (a table of its keys) produces
/// for `duration` (a string with a unit) with `seed` on channel `channel` (stream
/// `cellular:<channel>`), and the model's mean rate in bit/s.
#[pyfunction]
fn cellular_trace(py: Python<'_>, model_json: &str, duration: &str, seed: u64, channel: &str) -> PyResult<(Vec<u64>, f64)> {
    let secs = jitterlab_sim::config::parse_duration(duration).map_err(|m| ScenarioError::new_err(format!("--duration: {m}")))?;
    if !(secs > 0.0) || secs > 366.0 * 86400.0 {
        return Err(ScenarioError::new_err(format!("--duration: must be > 0 and at most a year, got {duration:?}")));
    }
    let duration_ns = jitterlab_sim::Time::from_secs_f64(secs).ns();
    let v = parse_json(model_json)?;
    let mut p = jitterlab_sim::config::Params::new("", &v).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let params = jitterlab_sim::cellular::CellularParams::parse(&mut p).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    p.finish().map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let horizon = duration_ns.div_ceil(1_000_000);
    jitterlab_sim::cellular::check_horizon(&params, horizon).map_err(|m| ScenarioError::new_err(format!("--duration: {m}")))?;
    let mean = params.mean_bps;
    Ok((py.detach(|| jitterlab_sim::cellular::stamps(&params, seed, channel, horizon)), mean))
}

/// Queue disciplines, congestion controls and traffic kinds the simulator knows (its registries).
#[pyfunction]
fn sim_registry<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("queues", PyList::new(py, jitterlab_sim::qdisc::kinds())?)?;
    d.set_item("cc", PyList::new(py, jitterlab_sim::tcp::cc::kinds())?)?;
    d.set_item("traffic", PyList::new(py, jitterlab_sim::scenario::TRAFFIC.iter().map(|(k, _)| *k))?)?;
    Ok(d)
}

/// `names[idx]` as an Arrow string column's buffers, null where `idx` is negative or past the
/// names: (validity bitmap, LSB first, or None when nothing is null; int32 offsets; UTF-8 data;
/// null count). A gather over a few names into millions of rows (a channel per queue sample, the
/// link a media packet was lost on), without the per-row Python or the Arrow compute module (whose
/// import alone costs a sweep worker ~50 ms).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn take_strings<'py>(
    py: Python<'py>,
    names: Vec<String>,
    idx: numpy::PyReadonlyArray1<'py, i64>,
) -> PyResult<(Option<Bound<'py, numpy::PyArray1<u8>>>, Bound<'py, numpy::PyArray1<i32>>, Bound<'py, numpy::PyArray1<u8>>, usize)> {
    let idx = idx.as_slice()?;
    let n = idx.len();
    let pick = |i: i64| usize::try_from(i).ok().and_then(|i| names.get(i));
    let total: usize = idx.iter().map(|&i| pick(i).map_or(0, |s| s.len())).sum();
    if total > i32::MAX as usize {
        return Err(pyo3::exceptions::PyValueError::new_err(format!("take_strings: {total} bytes exceed a string column's int32 offsets")));
    }
    let mut offsets = Vec::with_capacity(n + 1);
    let mut data = Vec::with_capacity(total);
    let mut bitmap = vec![0u8; n.div_ceil(8)];
    let mut nulls = 0usize;
    offsets.push(0i32);
    for (r, &i) in idx.iter().enumerate() {
        match pick(i) {
            Some(s) => {
                data.extend_from_slice(s.as_bytes());
                bitmap[r / 8] |= 1 << (r % 8);
            }
            None => nulls += 1,
        }
        offsets.push(data.len() as i32);
    }
    let bitmap = (nulls > 0).then(|| bitmap.into_pyarray(py));
    Ok((bitmap, offsets.into_pyarray(py), data.into_pyarray(py), nulls))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(take_strings, m)?)?;
    m.add_function(wrap_pyfunction!(sim_registry, m)?)?;
    m.add_function(wrap_pyfunction!(expand_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(channel_opportunities, m)?)?;
    m.add_function(wrap_pyfunction!(cellular_trace, m)?)?;
    m.add_function(wrap_pyfunction!(channel_loss_periods, m)?)?;
    Ok(())
}
