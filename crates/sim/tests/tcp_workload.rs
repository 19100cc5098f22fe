//! TCP workloads through the scenario reader: web pages split over n connections, bulk with a
//! random start, FTP flows with staggered starts, and key errors that name their path.
use jitterlab_sim::record::{Tables, NULL_NS};
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
    assert_eq!(max, 20 * 960);
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
    bad(json!({"to": "nowhere"}), "traffic[0].to");
}
