//! TCP workloads through the scenario reader: web pages split over n connections, bulk with a
//! random start, FTP flows with staggered starts, and key errors that name their path.
use jitterlab_sim::record::{Tables, NULL_NS, NULL_SIZE};
use jitterlab_sim::scenario;
use serde_json::{json, Value};

fn access(traffic: Value, duration: &str) -> Value {
    json!({
        "name": "t",
        "duration": duration,
        "access": {
            "core_rate": "100Mbit", "core_delay": "5ms",
            "down_rate": "4Mbit", "down_delay": "20ms", "down_queue": {"kind": "droptail", "limit": "500pkt"},
            "up_rate": "4Mbit", "up_delay": "20ms"
        },
        "traffic": traffic,
    })
}

fn run(v: &Value) -> Tables {
    let t = scenario::run(v, 7).expect("valid scenario");
    t.check_conservation().unwrap();
    t
}

/// PAM 2013's web workload: 372 kB over n = 6 connections with IW3, all starting together.
#[test]
fn web_page_splits_size_over_parallel_connections() {
    let v = access(json!([{"kind": "web", "from": "server", "to": "client", "size": "372kB", "flows": 6, "iw": 3, "start": "1s"}]), "10s");
    let t = run(&v);
    let f = &t.tcp_flows;
    assert_eq!(f.flow_id.len(), 6);
    assert_eq!(f.bytes.iter().sum::<u64>(), 372_000);
    assert!(f.bytes.iter().all(|&b| b == 62_000));
    // finished: delivered = acknowledged = planned
    assert_eq!((f.bytes_acked.clone(), f.size.clone()), (f.bytes.clone(), vec![62_000; 6]));
    assert!(f.syn_ns.iter().all(|&s| s == 1_000_000_000));
    assert!(f.end_ns.iter().all(|&e| e != NULL_NS));
    assert!(f.role.iter().all(|r| r == "web") && f.iw.iter().all(|&i| i == 3));
    assert_eq!(t.tcp_start_ns, 1_000_000_000);
    assert_eq!(t.tcp_end_ns, *f.end_ns.iter().max().unwrap());
    // 372 kB at 4 Mbit/s take at least 0.744 s of serialisation.
    assert!(t.tcp_end_ns - t.tcp_start_ns > 744_000_000);
}

/// An uneven split: 10 bytes over 3 connections = 4 + 3 + 3.
#[test]
fn web_remainder_goes_to_the_first_connections() {
    let v = access(json!([{"kind": "web", "from": "server", "to": "client", "size": "10B", "flows": 3}]), "2s");
    let t = run(&v);
    assert_eq!(t.tcp_flows.bytes, vec![4, 3, 3]);
}

/// Bulk starting at U(10, 12) s: the draw lies in the interval, and changes with the seed.
#[test]
fn bulk_with_random_start() {
    let v = access(json!([{"kind": "bulk", "from": "server", "to": "client", "size": "200kB", "start": {"dist": "uniform", "min": "10s", "max": "12s"}}]), "15s");
    let a = run(&v);
    let s = a.tcp_flows.syn_ns[0];
    assert!((10_000_000_000..12_000_000_000).contains(&s), "{s}");
    let b = scenario::run(&v, 8).unwrap();
    assert_ne!(b.tcp_flows.syn_ns[0], s);
    assert_eq!(a.tcp_flows.bytes_acked[0], 200_000);
}

/// `rwnd = "20pkt"` (Chodorek's receiver window of 20 packets) caps each flow at 20 MSS in flight.
#[test]
fn rwnd_in_packets() {
    let v = access(json!([{"kind": "ftp", "from": "server", "to": "client", "mss": "960B", "rwnd": "20pkt", "cc": "reno", "series": true}]), "3s");
    let t = run(&v);
    let max = t.tcp_series.inflight.iter().max().copied().unwrap();
    // "20pkt" = 20 · MSS = 19 200 B; the timestamps option leaves 948 B of payload per segment,
    // so 20 segments fit (18 960 B) and a 21st would not.
    assert_eq!(max, 20 * (960 - 12));
}

/// FTP flows never finish; staggered starts are distinct and after `start`.
#[test]
fn ftp_flows_with_stagger() {
    let v = access(json!([{"kind": "ftp", "from": "server", "to": "client", "flows": 4, "start": "1s", "stagger": {"dist": "exponential", "mean": "500ms"}, "cc": "reno"}]), "5s");
    let t = run(&v);
    let f = &t.tcp_flows;
    assert_eq!(f.flow_id.len(), 4);
    assert!(f.end_ns.iter().all(|&e| e == NULL_NS));
    assert!(f.syn_ns.iter().all(|&s| s >= 1_000_000_000));
    let mut s = f.syn_ns.clone();
    s.dedup();
    assert_eq!(s.len(), 4);
    // Together they fill the 4 Mbit/s downlink: > 90 % of the payload rate after the first second.
    let acked: u64 = f.bytes_acked.iter().sum();
    assert!(acked as f64 > 0.9 * 4e6 / 8.0 * 3.0 * 1460.0 / 1500.0, "{acked}");
    assert_eq!(t.tcp_end_ns, 5_000_000_000);
    // FTP has no planned size
    assert!(f.size.iter().all(|&s| s == NULL_SIZE));
    assert!(f.bytes.iter().zip(&f.bytes_acked).all(|(b, a)| b >= a));
}

/// A 100 MB download cut off by a 3 s run: `bytes` is what arrived (bounded by the 4 Mbit/s
/// downlink over the 3 s), not the planned 100 MB, which `size` keeps.
#[test]
fn unfinished_transfer_reports_delivered_bytes() {
    let v = access(json!([{"kind": "bulk", "from": "server", "to": "client", "size": "100MB"}]), "3s");
    let t = run(&v);
    let f = &t.tcp_flows;
    assert_eq!((f.end_ns[0], f.size[0]), (NULL_NS, 100_000_000));
    let (b, a) = (f.bytes[0], f.bytes_acked[0]);
    // at most the link's 3 s (1.5 MB of IP packets), and at least 70 % of its last 2 s of payload
    assert!(b <= 1_500_000 && b as f64 >= 0.7 * 1_000_000.0 * 1448.0 / 1500.0, "{b}");
    // what is still unacknowledged is at most a bandwidth-delay product plus the queue (500 packets)
    assert!(a <= b && b - a <= 500 * 1500 + 50_000, "acked {a} delivered {b}");
}

#[test]
fn errors_name_the_key() {
    let bad = |extra: Value, want: &str| {
        let mut tr = json!({"kind": "bulk", "from": "server", "to": "client", "size": "1MB"});
        for (k, v) in extra.as_object().unwrap() {
            tr[k] = v.clone();
        }
        let e = scenario::run(&access(json!([tr]), "1s"), 1).unwrap_err().to_string();
        assert!(e.contains(want), "{e} does not contain {want}");
    };
    bad(json!({"cc": "vegas"}), "traffic[0].cc");
    bad(json!({"iw": 0}), "traffic[0].iw");
    bad(json!({"delack": "2s"}), "traffic[0].delack");
    bad(json!({"rcvbuf": "1MB", "wscale": false}), "traffic[0].rcvbuf");
    bad(json!({"start": {"dist": "uniform", "min": "2s", "max": "1s"}}), "traffic[0].start.max");
    bad(json!({"abc": 0}), "traffic[0].abc");
    bad(json!({"colour": "red"}), "traffic[0].colour");
    bad(json!({"rwnd": "20pkt", "rcvbuf": "1MB"}), "traffic[0].rwnd");
    bad(json!({"rwnd": "100B"}), "traffic[0].rwnd");
    bad(json!({"sack": true, "recovery": "sack"}), "traffic[0].sack");
    bad(json!({"wscale": 15}), "traffic[0].wscale");
    bad(json!({"delack": 0}), "traffic[0].delack");
    bad(json!({"to": "nowhere"}), "traffic[0].to");
}

/// Sanity check against the testbed notes (shared/testbed-notes.md): a CUBIC download over 4 Mbit/s,
/// 20 ms each way, pfifo 500 kept the queue between ~0.9 and 1.43 s (median audio OWD 1.1–1.19 s)
/// and took ~60 s for 28 MB. With the Linux-like defaults the simulator's audio OWD while the
/// transfer runs has p10 ≈ 1.00 s, median ≈ 1.19 s and never exceeds the 500-packet queue plus the
/// path (the first slow start's overshoot fills the queue with data: max 1.51 s, 1.42 s before the
/// receiver's ACK on window growth); no timeout (the overshoot is recovered by SACK).
/// `hystart = false`: these are the numbers of plain RFC 5681 slow start quoted in docs/tcp.md
/// (with HyStart the queue fills only ≈ 12 s into the transfer, see tests/tcp_hystart.rs), with
/// RFC 6675 loss detection (`rack = false`): with RACK the losses of data sent during the first
/// recovery start further recoveries at once, as Linux's `tcp_time_to_recover` does, and p10
/// falls to ≈ 0.6 s (docs/tcp.md, "RACK-TLP"). Also RFC 9438's look-ahead W_cubic(t + SRTT)
/// (`cubic_delay_min = false`): with Linux's t + min RTT the regrowth after each reduction is
/// slower under this 1 s standing queue and p10 falls to ≈ 0.80 s (median 1.17 s, max 1.51 s);
/// and RFC 9438's Reno-friendly α switch (`cubic_linux_friendliness = false`): with Linux's
/// α ≈ 8/15 throughout, p10 is 0.83 s.
#[test]
fn cubic_bulk_fills_the_deep_buffer_like_linux() {
    let v = json!({
        "name": "tb", "duration": "75s",
        "access": {"core_rate": "100Mbit", "core_delay": "1ms", "down_rate": "4Mbit", "down_delay": "20ms",
                   "up_rate": "4Mbit", "up_delay": "20ms", "down_queue": {"kind": "droptail", "limit": "500pkt"}},
        "traffic": [{"kind": "audio", "name": "audio", "from": "server", "to": "client"},
                    {"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "28MB", "start": "2s", "mss": "1460B", "hystart": false, "rack": false, "tlp": false, "cubic_delay_min": false, "cubic_linux_friendliness": false}],
    });
    let t = run(&v);
    let f = &t.tcp_flows;
    assert_eq!(f.cc[0], "cubic");
    assert_eq!(f.timeouts[0], 0);
    let secs = (f.end_ns[0] - f.syn_ns[0]) as f64 * 1e-9;
    assert!((56.0..62.0).contains(&secs), "transfer took {secs} s");
    let m = &t.media;
    let mut owd: Vec<f64> = (0..m.len())
        .filter(|&k| m.recv_ns[k] != NULL_NS && m.send_ns[k] >= t.tcp_start_ns && m.send_ns[k] <= t.tcp_end_ns)
        .map(|k| (m.recv_ns[k] - m.send_ns[k]) as f64 * 1e-9)
        .collect();
    owd.sort_by(|a, b| a.total_cmp(b));
    let q = |p: f64| owd[((owd.len() - 1) as f64 * p) as usize];
    assert!(q(0.5) > 1.05 && q(0.5) < 1.25, "median {}", q(0.5));
    assert!(q(0.1) > 0.85, "p10 {}", q(0.1));
    // at most a queue of 500 full packets (500 · 1500 B at 4 Mbit/s = 1.5 s) plus the 21 ms path
    assert!(q(1.0) < 1.521, "max {}", q(1.0));
}

/// The short forms of the TCP keys: `sack = false` (NewReno), `delack = 200` (ms), `wscale = 2`.
/// Shift 2 caps the window at 65535·4 = 262 140 B although the buffer is 1 MB; the 500-packet
/// queue would let an unlimited flow reach ≈ 750 kB in flight, so the cap is what binds.
#[test]
fn short_key_forms() {
    let v = access(json!([{"kind": "ftp", "from": "server", "to": "client", "sack": false, "delack": 200, "wscale": 2, "rcvbuf": "1MB", "cc": "reno", "series": true}]), "20s");
    let t = run(&v);
    let max = t.tcp_series.inflight.iter().max().copied().unwrap();
    assert!((250_000..=262_140).contains(&max), "{max}");
}

/// ECN end to end through a marking RED queue: a Reno flow over 10 Mbit/s is slowed by marks
/// alone — no segment lost, no retransmission. With RED holding ≈ 5–15 packets against a
/// bandwidth-delay product of ≈ 35, Reno's halving idles the link for part of each cycle
/// (W from ≈ 25 to ≈ 50 packets: ≈ 94 % utilisation in steady state), so more than 80 % of the
/// payload rate over the 30 s, slow start included.
#[test]
fn ecn_through_marking_red() {
    // Linux 6.18's slow start (every ACKed segment counts, a 32 MiB receive buffer) overshoots
    // RED's 2·maxthresh before the first marks take effect and gentle RED then drops even
    // ECN-capable packets; after slow start ECN replaces every drop.
    let v = json!({
        "name": "ecn", "duration": "30s",
        "links": {
            "access": {"from": "server", "to": "router", "rate": "100Mbit", "delay": "1ms"},
            "bottleneck": {"from": "router", "to": "client", "rate": "10Mbit", "delay": "20ms",
                           "queue": {"kind": "red", "limit": "1000pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002,
                                     "linterm": 10, "gentle": true, "ecn": true, "use_mark_p": false}},
        },
        "traffic": [{"kind": "ftp", "name": "f", "from": "server", "to": "client", "cc": "reno", "ecn": true, "stack": "linux-6.18"}],
        "output": {"queue_sample_interval": "1s", "queues": ["bottleneck"]},
    });
    let t = run(&v);
    let f = &t.tcp_flows;
    let bn = t.channels.iter().find(|c| c.name == "bottleneck").unwrap();
    assert!(bn.stats.marked_pkts > 0);
    assert!(f.ecn_marks[0] > 0);
    let q = &t.queue_samples;
    let drops_at = |s: i64| q.t_ns.iter().zip(&q.drops).filter(|(t, _)| **t <= s * 1_000_000_000).map(|(_, d)| *d).max().unwrap_or(0);
    let total = bn.stats.dropped_pkts();
    assert_eq!(drops_at(5), total, "drops after slow start: {} of {total}", total - drops_at(5));
    // Every drop is retransmitted once; nothing else is (no spurious retransmission).
    assert_eq!(f.retransmits[0], total);
    let gp = f.bytes_acked[0] as f64 * 8.0 / 30.0;
    assert!(gp > 0.8 * 10e6 * 1460.0 / 1500.0, "{gp}");
}
