//! Runs one scenario (JSON on stdin) and prints a JSON summary of what TCP validation and the TCP
//! benchmark compare: per TCP flow goodput and counters, per channel drops, per media flow loss,
//! the cwnd sawtooth (from `tcp_series` when the flows record it), wall time and events/s.
//! Used by `validation/ns2/compare.py` and `bench/bench_tcp.py`. Usage:
//! `cargo run --release -p jitterlab-sim --example tcp_run -- [seed [series.csv]] < scenario.json`
use std::io::Read;
use std::time::Instant;

use jitterlab_sim::record::NULL_NS;
use jitterlab_sim::scenario;
use serde_json::{json, Value};

fn main() {
    let seed: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    // Optional second argument: write tcp_series as CSV there (t_ns,flow_id,cwnd,ssthresh,srtt_ns,inflight).
    let series_csv = std::env::args().nth(2);
    let mut s = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut s) {
        eprintln!("cannot read stdin: {e}");
        std::process::exit(2);
    }
    let v: Value = match serde_json::from_str(&s) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("stdin is not JSON: {e}");
            std::process::exit(2);
        }
    };
    let t0 = Instant::now();
    let t = match scenario::run(&v, seed) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("scenario error: {e}");
            std::process::exit(2);
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    if let Some(path) = series_csv {
        let s = &t.tcp_series;
        let mut out = String::from("t_ns,flow_id,cwnd,ssthresh,srtt_ns,inflight\n");
        for k in 0..s.len() {
            out.push_str(&format!("{},{},{},{},{},{}\n", s.t_ns[k], s.flow_id[k], s.cwnd[k], s.ssthresh[k], s.srtt_ns[k], s.inflight[k]));
        }
        if let Err(e) = std::fs::write(&path, out) {
            eprintln!("cannot write {path}: {e}");
            std::process::exit(2);
        }
    }
    let dur = t.end_ns as f64 * 1e-9;
    let f = &t.tcp_flows;
    let mut flows = vec![];
    for i in 0..f.flow_id.len() {
        let id = f.flow_id[i];
        // cwnd reductions (> 25 % drop between consecutive rows) and their times.
        let s = &t.tcp_series;
        let mut cuts = vec![];
        let mut last: Option<u64> = None;
        for k in 0..s.len() {
            if s.flow_id[k] != id {
                continue;
            }
            if let Some(p) = last {
                if (s.cwnd[k] as f64) < 0.75 * p as f64 {
                    cuts.push(s.t_ns[k] as f64 * 1e-9);
                }
            }
            last = Some(s.cwnd[k]);
        }
        let c = t.counters(id);
        flows.push(json!({
            "flow": id,
            "name": t.flows[id as usize].name,
            "bytes_acked": f.bytes_acked[i],
            "goodput_bps": f.bytes_acked[i] as f64 * 8.0 / dur,
            "segments_sent": f.segments_sent[i],
            "retransmits": f.retransmits[i],
            "timeouts": f.timeouts[i],
            "drops": f.drops[i],
            "ecn_marks": f.ecn_marks[i],
            "end_s": if f.end_ns[i] == NULL_NS { Value::Null } else { json!(f.end_ns[i] as f64 * 1e-9) },
            "sent_pkts": c.sent_pkts,
            "cwnd_cuts": cuts,
        }));
    }
    let media: Vec<Value> = t
        .flows
        .iter()
        .filter(|fl| fl.kind == "audio" || fl.kind == "video")
        .map(|fl| {
            let c = t.counters(fl.flow_id);
            // One-way delays (ms) of this flow's received packets sent while TCP was active.
            let m = &t.media;
            let (a, b) = (t.tcp_start_ns, t.tcp_end_ns);
            let mut owd: Vec<f64> = (0..m.len())
                .filter(|&k| m.flow_id[k] == fl.flow_id && m.recv_ns[k] != NULL_NS && (a == NULL_NS || (m.send_ns[k] >= a && m.send_ns[k] <= b)))
                .map(|k| (m.recv_ns[k] - m.send_ns[k]) as f64 * 1e-6)
                .collect();
            owd.sort_by(|x, y| x.total_cmp(y));
            let q = |p: f64| if owd.is_empty() { Value::Null } else { json!(owd[((owd.len() - 1) as f64 * p).round() as usize]) };
            json!({"flow": fl.flow_id, "name": fl.name, "sent": c.sent_pkts, "dropped": c.dropped_pkts, "delivered_bytes": c.delivered_bytes,
                   "loss": if c.sent_pkts > 0 { c.dropped_pkts as f64 / c.sent_pkts as f64 } else { 0.0 },
                   "owd_ms_during_tcp": {"min": q(0.0), "p10": q(0.1), "p50": q(0.5), "p90": q(0.9), "max": q(1.0)}})
        })
        .collect();
    let chans: Vec<Value> = t
        .channels
        .iter()
        .map(|c| {
            let by: serde_json::Map<String, Value> = jitterlab_sim::qdisc::DropReason::ALL.iter().map(|r| (r.name().to_string(), json!(c.stats.drops_by_reason[r.index()]))).collect();
            json!({"name": c.name, "drops": c.stats.dropped_pkts(), "arrived": c.stats.arrived_pkts, "marks": c.stats.marked_pkts, "drops_by_reason": by})
        })
        .collect();
    let out = json!({
        "duration_s": dur,
        "wall_s": wall,
        "events": t.events,
        "events_per_s": t.events as f64 / wall,
        "tcp": flows,
        "media": media,
        "channels": chans,
    });
    println!("{out}");
}
