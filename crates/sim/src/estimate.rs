//! What a scenario will cost before it runs: events, rows of the recorded tables, memory.
//!
//! Read from the scenario as written (JSON of the TOML), without building it: building a 10,000-pair
//! dumbbell already needs its n² routing table, so the estimate has to come first. Unreadable
//! values are skipped here; the build that follows reports them with their key.
//!
//! The model, per traffic source, over its active time `T` (start to stop, or to `duration`), as
//! each kind's `cost` in `crate::traffic` gives it (a kind without one makes the estimate an error):
//! - CBR media (audio, video): `packets = T · packet rate` (audio: 1/interval; video: bit rate /
//!   (8 · packet size)), each one row of `media_packets`.
//! - TCP (bulk, web, ftp): `segments = min(bytes / MSS, C · T / (8 · (MSS + 40)))` where `C` is the
//!   smallest capacity on the path (fixed rate, or a trace's mean rate), i.e. a transfer cannot
//!   outrun its bottleneck; ftp has no size, so only the capacity bound applies. `acks = segments`
//!   (one per segment, an upper bound: delayed ACKs halve it).
//! - Events: every packet costs an arrival event per hop ([`EVENTS_PER_HOP`]), plus a
//!   transmission-done event on the hops where another packet waits behind it (bursty video on
//!   its first two hops, TCP data at the bottleneck) unless the hop's discipline is a FIFO
//!   (DropTail, RED: their links fix departures at enqueue), plus one at the source ([`EVENTS_PER_SEND`]:
//!   the CBR timer — one per frame for bursty video —, TCP's send/ACK processing and timers); the
//!   queue sampler is one event per interval.
//! - Queue samples: `duration / interval` rows per sampled channel.
//! - Memory: rows × bytes per row (the Rust columns, their growth slack, the Arrow and pandas
//!   copies made while the tables are handed out and written), the routing table
//!   (`nodes² · 8` bytes), and each queue full of MTU packets (the worst case the event queue holds).
//!
//! The estimate is checked against measured event counts and row counts of the shipped scenarios
//! (tests/test_hardening.py, within a factor of [`STATED_FACTOR`]).
use std::collections::{BTreeMap, HashMap, VecDeque};

use serde_json::Value;

use crate::config::{duration_ns, rate_bps, size_value, ConfigError};
use crate::traffic::{self, Entry, Kind, Path};
pub use crate::traffic::tcp_entry::QUEUED_HOPS_TCP;
pub use crate::traffic::video::QUEUED_HOPS_BURSTY;

/// Events per packet per hop: its arrival at the channel's far end. The channel's end of
/// transmission is an event only when another packet waits behind it (the engine leaves it out
/// otherwise): see [`QUEUED_HOPS_BURSTY`] and [`QUEUED_HOPS_TCP`].
pub const EVENTS_PER_HOP: f64 = 1.0;
/// (A link driven by delivery opportunities — a trace, the cellular model — makes one event per
/// packet it sends, queue or not: counted per opportunity-driven hop of a media packet's path.)
/// Events per packet at its source (timer or transmission scheduling).
pub const EVENTS_PER_SEND: f64 = 1.0;
/// Peak bytes per `media_packets` row: 37 B of Rust columns with Vec growth slack, then the Arrow
/// copy and the Parquet encoder's buffers. Calibrated on `scenarios/audio-bulk-access.toml`
/// (`sim.simulate` then `sim.write`, peak RSS of the process): at `duration=30000s` (1.5 M media
/// rows, 6 M queue samples) 743 MB measured, 905 MB estimated with these constants; at 10000 s
/// 289 MB measured, 405 MB estimated (tests/test_hardening.py holds it within 1–1.6×).
pub const BYTES_PER_MEDIA_ROW: f64 = 160.0;
/// Peak bytes per `tcp_series` row (7 columns of 8 B, the same copies; not calibrated separately,
/// so taken above the per-column cost of the media rows).
pub const BYTES_PER_SERIES_ROW: f64 = 160.0;
/// Peak bytes per `queue_samples` row (6 columns of 8 B, same copies, and the queue's name
/// gathered into a string column; calibrated as above).
pub const BYTES_PER_SAMPLE_ROW: f64 = 85.0;
/// Bytes per captured packet of a pcap tap beyond its captured bytes (record header, Vec slack).
pub const TAP_OVERHEAD: f64 = 48.0;
/// A fixed base: the interpreter, numpy, pyarrow, pandas and the module (measured peak RSS of a
/// 15 s run of the scenario above: 84 MB, with pandas imported lazily).
pub const BASE_BYTES: f64 = 150e6;
/// The factor within which tests hold the estimate to measured counts (measured / 2 <= estimate <=
/// measured · 4: it over-estimates when TCP sources share a bottleneck, each bounded by all of it).
pub const STATED_FACTOR: f64 = 4.0;
/// Capacity assumed for a channel whose capacity this estimate cannot read (e.g. a model it does
/// not know): 1 Gbit/s, generous so that the estimate errs towards refusing.
pub const UNKNOWN_RATE_BPS: f64 = 1e9;

const MTU: f64 = 1500.0;

/// The estimate of one scenario.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    pub duration_ns: f64,
    pub nodes: u64,
    pub channels: u64,
    pub flows: u64,
    pub media_rows: f64,
    pub tcp_segments: f64,
    pub series_rows: f64,
    pub sample_rows: f64,
    pub tap_bytes: f64,
    pub events: f64,
    pub memory_bytes: f64,
}

#[derive(Clone)]
struct Chan {
    from: String,
    to: String,
    bps: f64,
    queue_bytes: f64,
    /// Driven by delivery opportunities (trace, cellular): one event per packet it sends.
    opp: bool,
    /// A packet queued behind another costs a transmission-done event: the discipline is not a
    /// plain FIFO (DropTail and RED fix departures at enqueue: `Qdisc::fifo_departures`).
    txdone: bool,
}

fn s<'a>(t: &'a Value, k: &str) -> Option<&'a str> { t.get(k).and_then(Value::as_str) }
fn dur(t: &Value, k: &str) -> Option<f64> { s(t, k).and_then(|x| duration_ns(x).ok()).map(|n| n as f64) }
fn rate(t: &Value, k: &str) -> Option<f64> { s(t, k).and_then(|x| rate_bps(x).ok()).map(|b| b as f64) }

/// Mean capacity of a Mahimahi trace, read by the links' own parser (None when it does not parse:
/// the build reports that error, naming the key).
fn trace_bps(text: &str) -> Option<f64> { crate::trace::Trace::parse(text).ok().map(|t| t.mean_bps()) }

/// Capacity of one direction written with prefix `p` ("" for `rate`, "down_" for `down_rate` …).
fn capacity(t: &Value, p: &str) -> Option<f64> {
    if let Some(r) = rate(t, &format!("{p}rate")) {
        return Some(r);
    }
    // A trace arrives from the Python front as {"path", "data"} (scenario.to_json inlines the file).
    if let Some(b) = t.get(format!("{p}trace")).and_then(|v| v.get("data").and_then(Value::as_str).or(v.as_str())).and_then(trace_bps) {
        return Some(b);
    }
    // The cellular model: its mean rate as written, else the model's default mean.
    if let Some(c) = t.get(format!("{p}cellular")) {
        return Some(rate(c, "mean_rate").unwrap_or(crate::cellular::DEFAULTS.mean_bps));
    }
    None
}

/// Whether the direction written with prefix `p` runs on delivery opportunities (a trace or the
/// cellular model), whose link schedules an event per packet even with nothing queued.
fn is_opp(t: &Value, p: &str) -> bool { t.get(format!("{p}trace")).is_some() || t.get(format!("{p}cellular")).is_some() }

fn queue_bytes(q: Option<&Value>) -> f64 {
    let limit = q.and_then(|q| s(q, "limit")).and_then(|x| size_value(x).ok());
    match limit {
        Some((n, true)) => n as f64 * MTU,
        Some((n, false)) => n as f64,
        None => crate::scenario::DEFAULT_QUEUE_PKTS as f64 * MTU,
    }
}

#[allow(clippy::too_many_arguments)]
fn link(out: &mut Vec<Chan>, from: &str, to: &str, fwd: Option<f64>, rev: Option<f64>, qf: f64, qr: f64, (of, or): (bool, bool)) {
    let f = fwd.unwrap_or(UNKNOWN_RATE_BPS);
    out.push(Chan { from: from.into(), to: to.into(), bps: f, queue_bytes: qf, opp: of, txdone: false });
    out.push(Chan { from: to.into(), to: from.into(), bps: rev.unwrap_or(f), queue_bytes: qr, opp: or, txdone: false });
}

/// Whether the discipline of a queue table (None: the default DropTail) makes a transmission-done
/// event per queued packet (not a FIFO: see `Chan::txdone`; a FIFO link with loss or a shaper
/// still makes them, a detail the estimate leaves out).
fn txdone(q: Option<&Value>) -> bool { !matches!(q.and_then(|q| s(q, "kind")).unwrap_or("droptail"), "droptail" | "red") }

/// Marks the two channels `link` just added with their disciplines' `txdone`.
fn mark_txdone(out: &mut [Chan], fwd: Option<&Value>, rev: Option<&Value>) {
    let n = out.len();
    out[n - 2].txdone = txdone(fwd);
    out[n - 1].txdone = txdone(rev);
}

/// Pairs of a dumbbell laid out as channels; the rest are counted (the builder refuses more than
/// 10,000 anyway, and a path never needs more than the pairs the traffic names).
const DUMBBELL_ENUMERATED: u64 = 10_000;

/// The channels, plus nodes, channels and queue bytes counted but not laid out.
fn channels(v: &Value) -> (Vec<Chan>, f64, f64, f64) {
    let mut out = vec![];
    let (mut more_nodes, mut more_chans, mut more_queue) = (0.0, 0.0, 0.0);
    if let Some(Value::Object(links)) = v.get("links") {
        for l in links.values() {
            let (Some(a), Some(b)) = (s(l, "from"), s(l, "to")) else { continue };
            let fwd = capacity(l, "");
            let rev = l.get("reverse").and_then(|r| capacity(r, "")).or(fwd);
            let q = queue_bytes(l.get("queue"));
            let qr = l.get("reverse").and_then(|r| r.get("queue")).map(|x| queue_bytes(Some(x))).unwrap_or(q);
            let of = is_opp(l, "");
            let or = match l.get("reverse") {
                Some(r) if capacity(r, "").is_some() => is_opp(r, ""),
                _ => of,
            };
            link(&mut out, a, b, fwd, rev, q, qr, (of, or));
            let rq = l.get("reverse").and_then(|r| r.get("queue")).or(l.get("queue"));
            mark_txdone(&mut out, l.get("queue"), rq);
        }
    }
    if let Some(a) = v.get("access") {
        let server = s(a, "server").unwrap_or("server");
        let router = s(a, "router").unwrap_or("router");
        let client = s(a, "client").unwrap_or("client");
        let qc = queue_bytes(a.get("core_queue"));
        let oc = is_opp(a, "core_");
        link(&mut out, server, router, capacity(a, "core_"), None, qc, qc, (oc, oc));
        mark_txdone(&mut out, a.get("core_queue"), a.get("core_queue"));
        let down = capacity(a, "down_");
        let qd = queue_bytes(a.get("down_queue"));
        let od = is_opp(a, "down_");
        let ou = if capacity(a, "up_").is_some() { is_opp(a, "up_") } else { od };
        // with `ingress_*` keys the bottleneck ends at the cpe node, and an ingress link follows
        let ingress = ["ingress_rate", "ingress_trace", "ingress_cellular", "ingress_delay", "ingress_queue"].iter().any(|k| a.get(k).is_some());
        let to = if ingress { s(a, "cpe").unwrap_or("cpe") } else { client };
        link(&mut out, router, to, down, capacity(a, "up_").or(down), qd, a.get("up_queue").map(|q| queue_bytes(Some(q))).unwrap_or(qd), (od, ou));
        mark_txdone(&mut out, a.get("down_queue"), a.get("up_queue").or(a.get("down_queue")));
        if ingress {
            let qi = queue_bytes(a.get("ingress_queue"));
            let oi = is_opp(a, "ingress_");
            link(&mut out, to, client, capacity(a, "ingress_"), None, qi, queue_bytes(None), (oi, oi));
            mark_txdone(&mut out, a.get("ingress_queue"), None);
        }
    }
    if let Some(d) = v.get("dumbbell") {
        let pairs = d.get("pairs").and_then(Value::as_u64).unwrap_or(1);
        let n = pairs.min(DUMBBELL_ENUMERATED);
        let acc = capacity(d, "access_");
        let qa = queue_bytes(d.get("access_queue"));
        let rest = (pairs - n) as f64;
        more_nodes += 2.0 * rest;
        more_chans += 4.0 * rest;
        more_queue += 4.0 * rest * qa;
        let oa = is_opp(d, "access_");
        for i in 1..=n {
            link(&mut out, &format!("s{i}"), "r1", acc, acc, qa, qa, (oa, oa));
            mark_txdone(&mut out, d.get("access_queue"), d.get("access_queue"));
            link(&mut out, "r2", &format!("d{i}"), acc, acc, qa, qa, (oa, oa));
            mark_txdone(&mut out, d.get("access_queue"), d.get("access_queue"));
        }
        let q = queue_bytes(d.get("queue"));
        let ob = is_opp(d, "bottleneck_");
        link(&mut out, "r1", "r2", capacity(d, "bottleneck_"), None, q, q, (ob, ob));
        mark_txdone(&mut out, d.get("queue"), d.get("queue"));
    }
    (out, more_nodes, more_chans, more_queue)
}

/// Shortest-hop paths (as the simulator routes) from one node: per destination, (hops, min
/// capacity, opportunity-driven hops, hops whose queued packets cost a transmission-done event).
type Hops = (u32, f64, u32, u32);
fn paths_from(src: &str, adj: &HashMap<&str, Vec<usize>>, chans: &[Chan]) -> HashMap<String, Hops> {
    let mut best: HashMap<String, Hops> = HashMap::new();
    best.insert(src.to_string(), (0, f64::INFINITY, 0, 0));
    let mut q = VecDeque::from([src.to_string()]);
    while let Some(u) = q.pop_front() {
        let (h, c, o, x) = best[&u];
        for &ci in adj.get(u.as_str()).map(|v| v.as_slice()).unwrap_or(&[]) {
            let ch = &chans[ci];
            if !best.contains_key(&ch.to) {
                best.insert(ch.to.clone(), (h + 1, c.min(ch.bps), o + ch.opp as u32, x + ch.txdone as u32));
                q.push_back(ch.to.clone());
            }
        }
    }
    best
}

/// Estimates `v` (the scenario as JSON, after file references are inlined). Errors when an entry's
/// kind cannot say what it costs (naming the entry and the kind).
pub fn estimate(v: &Value) -> Result<Estimate, ConfigError> { estimate_with(v, traffic::KINDS) }

/// [`estimate`] with the traffic kinds of `registry`.
pub fn estimate_with(v: &Value, registry: &[Kind]) -> Result<Estimate, ConfigError> {
    let duration = dur(v, "duration").unwrap_or(0.0).max(0.0);
    let (chans, more_nodes, more_chans, more_queue) = channels(v);
    let mut nodes: BTreeMap<&str, ()> = BTreeMap::new();
    let mut adj: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in chans.iter().enumerate() {
        nodes.insert(&c.from, ());
        nodes.insert(&c.to, ());
        adj.entry(c.from.as_str()).or_default().push(i);
    }
    let max_bps = chans.iter().map(|c| c.bps).fold(0.0, f64::max);
    let mut cache: HashMap<String, HashMap<String, Hops>> = HashMap::new();
    // Paths are searched per distinct source node; past this many searches the bound falls back to
    // the fastest channel and the diameter of the graph (over-estimating, never under).
    const MAX_SEARCHES: usize = 64;
    let any_opp = chans.iter().any(|c| c.opp) as u32 as f64;
    let any_txd = chans.iter().any(|c| c.txdone) as u32 as f64;
    let mut path = |a: &str, b: &str| -> (f64, f64, f64, f64) {
        if !cache.contains_key(a) && cache.len() >= MAX_SEARCHES {
            let d = nodes.len().min(64) as f64;
            return (d, max_bps, any_opp, d * any_txd);
        }
        let p = cache.entry(a.to_string()).or_insert_with(|| paths_from(a, &adj, &chans));
        p.get(b).map(|(h, c, o, x)| (*h as f64, *c, *o as f64, *x as f64)).unwrap_or((1.0, max_bps, any_opp, any_txd))
    };

    let n_nodes = nodes.len() as f64 + more_nodes;
    let n_chans = chans.len() as f64 + more_chans;
    let mut e = Estimate { duration_ns: duration, nodes: n_nodes as u64, channels: n_chans as u64, ..Default::default() };
    let mut pkt_hops = 0.0;
    let mut sends = 0.0;
    let mut queued = 0.0;
    if let Some(Value::Array(tr)) = v.get("traffic") {
        for (i, t) in tr.iter().enumerate() {
            if t.get("enabled").and_then(Value::as_bool) == Some(false) {
                continue;
            }
            // An unknown kind is left to the build, which refuses it with the list of known ones.
            let Some(kind) = s(t, "kind").and_then(|k| traffic::find(registry, k)) else { continue };
            let Some(cost) = kind.cost else {
                return Err(ConfigError::new(format!("traffic[{i}].kind"), format!("traffic kind {:?} cannot estimate its cost (its registry entry has no `cost`)", kind.name)));
            };
            let (Some(a), Some(b)) = (s(t, "from"), s(t, "to")) else { continue };
            let start = dur(t, "start").unwrap_or(0.0).min(duration);
            let stop = dur(t, "stop").unwrap_or(duration).min(duration);
            let active_s = (stop - start).max(0.0) * 1e-9;
            let (hops, cap, opp_hops, txd_hops) = path(a, b);
            let cap = if cap.is_finite() && cap > 0.0 { cap } else { UNKNOWN_RATE_BPS };
            let c = cost(&Entry { table: t, active_s }, &Path { hops, capacity_bps: cap, opp_hops, txd_hops });
            e.flows += c.flows;
            e.media_rows += c.media_rows;
            e.tcp_segments += c.tcp_segments;
            e.series_rows += c.series_rows;
            pkt_hops += c.pkt_hops;
            sends += c.sends;
            queued += c.queued;
        }
    }
    let out = v.get("output");
    let mut sample_events = 0.0;
    if let Some(iv) = out.and_then(|o| dur(o, "queue_sample_interval")).filter(|x| *x > 0.0) {
        let sampled = match out.and_then(|o| o.get("queues")).and_then(Value::as_array) {
            Some(q) => q.len() as f64,
            None => n_chans / 2.0,
        };
        e.sample_rows = (duration / iv + 1.0) * sampled;
        // one sampling event per interval, whatever the number of queues sampled
        sample_events = duration / iv + 1.0;
    }
    if let Some(taps) = out.and_then(|o| o.get("pcap")).and_then(Value::as_array) {
        if !taps.is_empty() {
            // every packet crossing a tapped node is kept until the run ends; bounded by all packets
            let snap = out.and_then(|o| o.get("pcap_snaplen")).and_then(Value::as_f64).unwrap_or(65535.0).min(MTU);
            let tap_pkts = sends.min(pkt_hops) * (taps.len() as f64).min(2.0);
            e.tap_bytes = tap_pkts * (snap + TAP_OVERHEAD);
        }
    }
    e.events = pkt_hops * EVENTS_PER_HOP + queued + sends * EVENTS_PER_SEND + sample_events;
    let n = n_nodes;
    let queues: f64 = chans.iter().map(|c| c.queue_bytes.min(1e12)).sum::<f64>() + more_queue.min(1e15);
    e.memory_bytes = BASE_BYTES
        + e.media_rows * BYTES_PER_MEDIA_ROW
        + e.series_rows * BYTES_PER_SERIES_ROW
        + e.sample_rows * BYTES_PER_SAMPLE_ROW
        + e.tap_bytes
        + n * n * 8.0
        + queues
        + n_chans * 2_000.0
        + e.flows as f64 * 4_000.0;
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sc(extra: Value) -> Value {
        let mut v = json!({"duration": "10s",
            "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms"}},
            "traffic": [{"kind": "audio", "from": "a", "to": "b"}]});
        if let (Value::Object(m), Value::Object(x)) = (&mut v, extra) {
            m.extend(x);
        }
        v
    }

    #[test]
    fn bursty_video_costs_transmission_ends_only_behind_a_non_fifo_queue() {
        // 1 Mbit/s of 1000 B packets in 40 ms frames for 10 s: 1250 packets, 5 a frame, 250 frames;
        // one hop: 1250 arrivals + 250 frame timers, plus 4 of every 5 packets' transmission end
        // (1000) when the discipline decides at dequeue (CoDel); none behind DropTail (the
        // default) or RED, whose link fixes departures at enqueue (engine_events counts the same).
        let video = |queue: Value| {
            let mut link = json!({"from": "a", "to": "b", "rate": "10Mbit", "delay": "10ms"});
            if !queue.is_null() {
                link["queue"] = queue;
            }
            estimate(&sc(json!({"links": {"l": link}, "traffic": [{"kind": "video", "from": "a", "to": "b", "rate": "1Mbit", "mode": "bursty"}]}))).unwrap().events
        };
        assert_eq!(video(Value::Null), 1500.0);
        assert_eq!(video(json!({"kind": "red", "limit": "100pkt"})), 1500.0);
        assert_eq!(video(json!({"kind": "codel"})), 2500.0);
    }

    #[test]
    fn audio_rows_and_events_by_hand() {
        // 10 s at one packet per 20 ms = 500 packets, one hop, no queue: 500·(1·1 + 1) = 1000 events
        let e = estimate(&sc(json!({}))).unwrap();
        assert_eq!(e.media_rows, 500.0);
        assert_eq!(e.events, 1000.0);
        assert_eq!((e.nodes, e.channels, e.flows), (2, 2, 1));
    }

    #[test]
    fn tcp_is_bounded_by_the_path_capacity() {
        // ftp for 10 s over 1 Mbit/s: 1e7 / (8·1500) = 833.3 segments (+4 for the handshake)
        let e = estimate(&sc(json!({"traffic": [{"kind": "ftp", "from": "a", "to": "b"}]}))).unwrap();
        assert!((e.tcp_segments - (1e7 / 12000.0 + 4.0)).abs() < 1e-6, "{}", e.tcp_segments);
        // a 14600-byte bulk transfer is 10 segments, whatever the capacity
        let e = estimate(&sc(json!({"traffic": [{"kind": "bulk", "from": "a", "to": "b", "size": "14600B"}]}))).unwrap();
        assert!((e.tcp_segments - 14.0).abs() < 1e-9);
    }

    #[test]
    fn long_durations_and_big_topologies_cost_memory() {
        let e = estimate(&sc(json!({"duration": "1000000s"}))).unwrap();
        // 5e7 media rows
        assert!(e.memory_bytes > 5e7 * BYTES_PER_MEDIA_ROW);
        let d = json!({"duration": "1s", "dumbbell": {"pairs": 10000, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms",
            "access_rate": "100Mbit", "access_delay": "1us"}});
        let e = estimate(&d).unwrap();
        assert_eq!(e.nodes, 20002);
        // the routing table alone: 20002² · 8 B = 3.2 GB
        assert!(e.memory_bytes > 3.2e9);
    }

    #[test]
    fn adaptive_media_counts_its_ceiling_and_reports() {
        // 10 s of video up to 1.16 Mbit/s in 1200-byte packets (1160 B payload): 1250 packets,
        // plus ≤ one packet-sized remainder per frame (300 frames); 100 reports; 2 flows
        let e = estimate(&sc(json!({"traffic": [{"kind": "video", "from": "a", "to": "b", "cc": "gcc", "max_rate": "1.16Mbit"}]}))).unwrap();
        assert!((e.media_rows - 1550.0).abs() < 1.0, "{}", e.media_rows);
        assert_eq!(e.flows, 2);
        // an adaptive audio flow: one packet per 20 ms, as the CBR one, plus its reports
        let a = estimate(&sc(json!({"traffic": [{"kind": "audio", "from": "a", "to": "b", "cc": "nada"}]}))).unwrap();
        assert_eq!(a.media_rows, 500.0);
        assert_eq!(a.events, 2.0 * (500.0 + 100.0));
    }

    #[test]
    fn trace_capacity_is_its_mean() {
        // two 1504-byte opportunities in 2 ms = 12.032 Mbit/s
        assert_eq!(trace_bps("1\n2\n"), Some(2.0 * 1504.0 * 8.0 / 2e-3));
    }
}
