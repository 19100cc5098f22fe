//! Python bindings of the simulator: one call runs a scenario and returns its tables as Arrow
//! record batches (`arrow_c`: the core's column vectors moved to pyarrow, no per-packet Python
//! objects, no per-column conversion in Python). The GIL is released while the simulation runs.
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use jitterlab_sim::record::{ChannelInfo, FlowCounters, FlowInfo, Tables};
use jitterlab_sim::scenario;

use crate::arrow_c::{ArrowBatch, Batch, Col};
use crate::errors::ScenarioError;
use crate::native_table::NativeTable;
use crate::prepared::parse_json;

/// Runs the scenario given as a JSON string with `seed`; returns a dict of its tables (each an
/// `ArrowBatch` for `pyarrow.record_batch`, `run_id` a column of each), the channel names, and the
/// run totals. Raises ScenarioError naming the key path for a bad scenario.
/// With `pcap_dir`, the packets of the nodes named in `output.pcap` are written there as
/// `<node>.pcap` (the dict's "pcap" entry maps node name to path).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed, run_id, pcap_dir=None))]
fn simulate_tables<'py>(py: Python<'py>, scenario_json: &str, seed: u64, run_id: i64, pcap_dir: Option<String>) -> PyResult<Bound<'py, PyDict>> {
    let v = parse_json(scenario_json)?;
    if pcap_dir.is_some() {
        // a node's name becomes `<dir>/<name>.pcap`: checked before the run, not after it
        if let Some(list) = v.pointer("/output/pcap").and_then(|p| p.as_array()) {
            for (i, n) in list.iter().enumerate() {
                if let Some(why) = n.as_str().and_then(crate::export::file_name_problem) {
                    return Err(ScenarioError::new_err(format!("output.pcap[{i}]: node name {:?} {why}", n.as_str().unwrap_or_default())));
                }
            }
        }
    }
    let res = py.detach(|| scenario::run(&v, seed));
    let mut t = res.map_err(|e| ScenarioError::new_err(e.to_string()))?;
    let pcaps = PyDict::new(py);
    if let Some(dir) = pcap_dir {
        let taps = std::mem::take(&mut t.taps);
        let names = t.nodes.clone();
        let tt = jitterlab_sim::record::Tables { taps, pcap_snaplen: t.pcap_snaplen, ..Default::default() };
        let written = py
            .detach(|| crate::export::write_taps(&tt, &names, std::path::Path::new(&dir)))
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::InvalidInput => ScenarioError::new_err(format!("output.pcap: {e}")),
                std::io::ErrorKind::StorageFull => pyo3::exceptions::PyOSError::new_err(format!("{dir}: cannot write pcap: no space left on the device")),
                _ => pyo3::exceptions::PyOSError::new_err(format!("{dir}: cannot write pcap: {e}")),
            })?;
        for (name, path) in written {
            pcaps.set_item(name, path.to_string_lossy().to_string())?;
        }
    }
    let out = tables_to_py(py, t, run_id, false)?;
    out.set_item("pcap", pcaps)?;
    out.set_item("pcap_epoch_ns", crate::export::EPOCH_NS)?;
    Ok(out)
}

fn rid(n: usize, run_id: i64) -> Col { Col::i64(vec![run_id; n]) }

/// A time column whose NULL_NS rows are null.
fn nullable_ns(v: Vec<i64>) -> Col { Col::i64_null_where(v, |x| x == jitterlab_sim::record::NULL_NS) }

/// Runs the scenario (JSON) with `seed` as `simulate_tables` does, without captures, and returns
/// each core table as a `NativeTable` (kept native until read: issue 31), the channel names and
/// the run totals.
/// `scenario` is JSON text or a `PreparedScenario` (a sweep's run: nothing parsed again).
#[pyfunction]
fn simulate_native<'py>(py: Python<'py>, scenario: &Bound<'py, PyAny>, seed: u64, run_id: i64) -> PyResult<Bound<'py, PyDict>> {
    let v = crate::prepared::scenario_of(scenario)?;
    let t = py.detach(|| scenario::run(&v, seed)).map_err(|e| ScenarioError::new_err(e.to_string()))?;
    tables_to_py(py, t, run_id, true)
}

/// The run's tables as a dict (`ArrowBatch`es, or with `native` `NativeTable`s), the channel
/// names and the totals.
fn tables_to_py<'py>(py: Python<'py>, t: Tables, run_id: i64, native: bool) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let names: Vec<String> = t.channels.iter().map(|c| c.name.clone()).collect();
    let totals = totals(py, &t)?;
    for (name, b) in core_batches(t, &names, run_id)? {
        if native {
            out.set_item(name, NativeTable::from_batch(b)?)?;
        } else {
            out.set_item(name, ArrowBatch::new(b))?;
        }
    }
    out.set_item("channel_names", PyList::new(py, &names)?)?;
    out.set_item("totals", totals)?;
    Ok(out)
}

fn totals<'py>(py: Python<'py>, t: &Tables) -> PyResult<Bound<'py, PyDict>> {
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
    Ok(totals)
}

/// The core's tables by name, in the order the dict had them.
fn core_batches(t: Tables, names: &[String], run_id: i64) -> PyResult<Vec<(&'static str, Batch)>> {
    let mut out = Vec::with_capacity(8);

    let m = t.media;
    let mut b = Batch::default();
    b.push("run_id", rid(m.len(), run_id))
        .push("flow_id", Col::from_u32(&m.flow_id))
        .push("seq", Col::from_u64(m.seq))
        .push("send_ns", Col::i64(m.send_ns))
        .push("recv_ns", nullable_ns(m.recv_ns))
        .push("size", Col::from_u32(&m.size))
        // a gather (a negative index gives a null name)
        .push("lost_where", Col::take_strings(names, m.lost_where.iter().map(|&i| i64::from(i)))?)
        .push("ce", Col::bools(&m.ce));
    out.push(("media_packets", b));

    let f = t.tcp_flows;
    let mut b = Batch::default();
    b.push("run_id", rid(f.flow_id.len(), run_id))
        .push("flow_id", Col::from_u32(&f.flow_id))
        .push("role", Col::strings(f.role.iter().map(String::as_str))?)
        .push("iw", Col::from_u32(&f.iw))
        .push("cc", Col::strings(f.cc.iter().map(String::as_str))?)
        .push("syn_ns", nullable_ns(f.syn_ns))
        .push("first_data_ns", nullable_ns(f.first_data_ns))
        .push("end_ns", nullable_ns(f.end_ns))
        .push("bytes", Col::from_u64(f.bytes))
        .push("bytes_acked", Col::from_u64(f.bytes_acked))
        .push("size", Col::i64_null_where(f.size, |x| x == jitterlab_sim::record::NULL_SIZE))
        .push("segments_sent", Col::from_u64(f.segments_sent))
        .push("retransmits", Col::from_u64(f.retransmits))
        .push("drops", Col::from_u64(f.drops))
        .push("ecn_marks", Col::from_u64(f.ecn_marks))
        .push("timeouts", Col::from_u64(f.timeouts));
    out.push(("tcp_flows", b));

    let q = t.queue_samples;
    let mut b = Batch::default();
    b.push("run_id", rid(q.t_ns.len(), run_id))
        .push("t_ns", Col::i64(q.t_ns))
        .push("queue", Col::take_strings(names, q.queue.iter().map(|&i| i64::from(i)))?)
        .push("backlog_pkts", Col::from_u64(q.backlog_pkts))
        .push("backlog_bytes", Col::from_u64(q.backlog_bytes))
        .push("drops", Col::from_u64(q.drops))
        .push("marks", Col::from_u64(q.marks));
    out.push(("queue_samples", b));

    let s = t.tcp_series;
    // the core's "unset" ssthresh (u64::MAX / 4) is null; values capped at 2^62 as before
    const UNSET: u64 = u64::MAX / 4;
    let ssth: Vec<i64> = s.ssthresh.iter().map(|&x| x.min(1 << 62) as i64).collect();
    let mut b = Batch::default();
    b.push("run_id", rid(s.t_ns.len(), run_id))
        .push("t_ns", Col::i64(s.t_ns))
        .push("flow_id", Col::from_u32(&s.flow_id))
        .push("cwnd", Col::from_u64(s.cwnd))
        .push("ssthresh", Col::i64_valid(ssth, s.ssthresh.iter().map(|&x| x < UNSET)))
        .push("srtt_ns", nullable_ns(s.srtt_ns))
        .push("inflight", Col::from_u64(s.inflight));
    out.push(("tcp_series", b));

    // adaptive media (docs/tables.md); rates and the controller state rounded to whole bit/s, bytes
    let f = t.rtc_frames;
    let mut b = Batch::default();
    b.push("run_id", rid(f.len(), run_id))
        .push("flow_id", Col::from_u32(&f.flow_id))
        .push("frame", Col::from_u64(f.frame))
        .push("capture_ns", Col::i64(f.capture_ns))
        .push("bytes", Col::from_u64(f.bytes))
        .push("packets", Col::from_u32(&f.packets))
        .push("first_seq", Col::from_u64(f.first_seq))
        .push("key", Col::bools(&f.key));
    out.push(("rtc_frames", b));
    let s = t.rtc_series;
    let round = |v: &[f64]| -> Col { Col::i64_valid(v.iter().map(|x| if x.is_finite() { x.round() as i64 } else { 0 }).collect(), v.iter().map(|x| x.is_finite())) };
    let mut b = Batch::default();
    b.push("run_id", rid(s.len(), run_id))
        .push("t_ns", Col::i64(s.t_ns))
        .push("flow_id", Col::from_u32(&s.flow_id))
        .push("target_bps", round(&s.target_bps))
        .push("encoder_bps", round(&s.encoder_bps))
        .push("rtt_ns", nullable_ns(s.rtt_ns))
        .push("in_flight_bytes", Col::from_u64(s.in_flight_bytes))
        .push("queue_bytes", Col::from_u64(s.queue_bytes))
        .push("state", round(&s.state));
    out.push(("rtc_series", b));

    // a run without channels or flows: a table of its run_id column alone, no rows
    out.push(("channels", channels_batch(&t.channels, run_id)?));
    out.push(("flows", flows_batch(&t.flows, &t.flow_counters, run_id)?));
    Ok(out)
}

/// The `channels` table: one row per channel, its configuration and its queue's counters.
fn channels_batch(ch: &[ChannelInfo], run_id: i64) -> PyResult<Batch> {
    let mut b = Batch::default();
    b.push("run_id", rid(ch.len(), run_id));
    if !ch.is_empty() {
        b.push("name", Col::strings(ch.iter().map(|c| c.name.as_str()))?)
            .push("from", Col::strings(ch.iter().map(|c| c.from.as_str()))?)
            .push("to", Col::strings(ch.iter().map(|c| c.to.as_str()))?)
            .push("qdisc", Col::strings(ch.iter().map(|c| c.qdisc.as_str()))?)
            .push("rate_bps", Col::i64(int64("rate_bps", ch.iter().map(|c| c.rate_bps))?))
            .push("delay_ns", Col::i64(ch.iter().map(|c| c.delay_ns).collect()))
            .push("arrived_pkts", Col::i64(int64("arrived_pkts", ch.iter().map(|c| c.stats.arrived_pkts))?))
            .push("enqueued_pkts", Col::i64(int64("enqueued_pkts", ch.iter().map(|c| c.stats.enqueued_pkts))?))
            .push("dequeued_pkts", Col::i64(int64("dequeued_pkts", ch.iter().map(|c| c.stats.dequeued_pkts))?))
            .push("dropped_pkts", Col::i64(int64("dropped_pkts", ch.iter().map(|c| c.stats.dropped_pkts()))?))
            .push("dropped_bytes", Col::i64(int64("dropped_bytes", ch.iter().map(|c| c.stats.dropped_bytes()))?));
        for r in jitterlab_sim::qdisc::DropReason::ALL {
            let name = format!("drops_{}", r.name());
            let col = Col::i64(int64(&name, ch.iter().map(|c| c.stats.drops_by_reason[r.index()]))?);
            b.push(name, col);
        }
        b.push("marked_pkts", Col::i64(int64("marked_pkts", ch.iter().map(|c| c.stats.marked_pkts))?))
            .push("backlog_pkts", Col::i64(int64("backlog_pkts", ch.iter().map(|c| c.backlog_pkts))?))
            .push("backlog_bytes", Col::i64(int64("backlog_bytes", ch.iter().map(|c| c.backlog_bytes))?))
            .push("tx_pkts", Col::i64(int64("tx_pkts", ch.iter().map(|c| c.tx_pkts))?))
            .push("tx_bytes", Col::i64(int64("tx_bytes", ch.iter().map(|c| c.tx_bytes))?))
            .push("link_lost_pkts", Col::i64(int64("link_lost_pkts", ch.iter().map(|c| c.lost_pkts))?));
    }
    Ok(b)
}

/// The `flows` table: one row per flow, its name, kind and packet counters.
fn flows_batch(flows: &[FlowInfo], counters_by_id: &[FlowCounters], run_id: i64) -> PyResult<Batch> {
    let counters: Vec<_> = flows.iter().map(|fl| counters_by_id.get(fl.flow_id as usize).copied().unwrap_or_default()).collect();
    let mut b = Batch::default();
    b.push("run_id", rid(flows.len(), run_id));
    if !flows.is_empty() {
        b.push("flow_id", Col::i64(flows.iter().map(|fl| i64::from(fl.flow_id)).collect()))
            .push("name", Col::strings(flows.iter().map(|fl| fl.name.as_str()))?)
            .push("kind", Col::strings(flows.iter().map(|fl| fl.kind.as_str()))?);
        type Counter = fn(&FlowCounters) -> u64;
        let cols: [(&str, Counter); 6] = [
            ("sent_pkts", |c| c.sent_pkts),
            ("sent_bytes", |c| c.sent_bytes),
            ("delivered_pkts", |c| c.delivered_pkts),
            ("delivered_bytes", |c| c.delivered_bytes),
            ("dropped_pkts", |c| c.dropped_pkts),
            ("dropped_bytes", |c| c.dropped_bytes),
        ];
        for (name, f) in cols {
            b.push(name, Col::i64(int64(name, counters.iter().map(f))?));
        }
    }
    Ok(b)
}

/// A counter column as int64 (the tables' type); a counter past 2^63 - 1 is an error, not a wrap.
fn int64(name: &str, v: impl Iterator<Item = u64>) -> PyResult<Vec<i64>> {
    v.map(|x| i64::try_from(x).map_err(|_| pyo3::exceptions::PyOverflowError::new_err(format!("{name}: {x} exceeds int64"))))
        .collect()
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

/// The scenario format's JSON Schema as JSON text, generated by walking the Rust parser
/// (`jitterlab_sim::schema`): keys, types, units and choices of every table.
#[pyfunction]
fn scenario_schema(py: Python<'_>) -> String { py.detach(|| jitterlab_sim::schema::scenario_schema().to_string()) }

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
// `!(secs > 0.0)` on purpose: NaN is refused too.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
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
    if params.iub_cycle_ms > 0 {
        return Err(ScenarioError::new_err(jitterlab_sim::cellular::NO_TRACE_FORM.to_string()));
    }
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
    d.set_item("traffic", PyList::new(py, jitterlab_sim::traffic::kinds())?)?;
    d.set_item("stacks", PyList::new(py, jitterlab_sim::tcp::profile::names())?)?;
    Ok(d)
}

/// The TCP stack profiles as JSON: {"default": NAME, "profiles": [{name, summary, switches: {key:
/// value}, sources: {key: source}}]} (`tcp/profile.rs`; docs/tcp.md's table is made from it).
#[pyfunction]
fn stack_profiles() -> String {
    use jitterlab_sim::tcp::profile;
    let profiles: Vec<serde_json::Value> = profile::PROFILES
        .iter()
        .map(|p| {
            let sources: serde_json::Map<String, serde_json::Value> = p.sources.iter().map(|(k, s)| (k.to_string(), serde_json::json!(s))).collect();
            serde_json::json!({"name": p.name, "summary": p.summary, "switches": profile::describe_json(&(p.config)()), "sources": sources})
        })
        .collect();
    serde_json::json!({"default": profile::DEFAULT, "profiles": profiles}).to_string()
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
    m.add_function(wrap_pyfunction!(simulate_tables, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_native, m)?)?;
    m.add_class::<ArrowBatch>()?;
    m.add_function(wrap_pyfunction!(take_strings, m)?)?;
    m.add_function(wrap_pyfunction!(sim_registry, m)?)?;
    m.add_function(wrap_pyfunction!(stack_profiles, m)?)?;
    m.add_function(wrap_pyfunction!(expand_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(channel_opportunities, m)?)?;
    m.add_function(wrap_pyfunction!(cellular_trace, m)?)?;
    m.add_function(wrap_pyfunction!(channel_loss_periods, m)?)?;
    Ok(())
}
