//! TCP Small Queues (`src/tcp/tsq.rs`): six IW10 connections that start together at one host leave
//! it interleaved, each holding at most Linux's limit below TCP, and the last one's first segment
//! no longer waits behind five whole bursts at the bottleneck.
mod common;

use common::{pass, path_sim, Path};
use jitterlab_sim::packet::Body;
use jitterlab_sim::record::Tables;
use jitterlab_sim::tcp::tsq;
use jitterlab_sim::tcp::{add_connection, ConnSpec, TcpConfig};
use jitterlab_sim::{Rate, Time};

const FLOWS: u32 = 6;
/// Linux's MSS on a 1500-byte MTU; with the timestamps option each segment carries 1448 B.
const MSS: u32 = 1460;
const PAYLOAD: u32 = 1448;

/// The umts-web shape on a fixed link: server —100 Mbit/s— router —2 Mbit/s, 10 ms, 500 packets—
/// client, six CUBIC IW10 connections of 62 kB starting at t = 0, delayed ACKs as Linux.
fn run(tsq_on: bool) -> Tables {
    let path = Path { access_rate: Rate::mbps(100), access_delay: Time::from_ms(5), rate: Rate::mbps(2), delay: Time::from_ms(10), limit: 500 };
    let (mut sim, s, d, _log) = path_sim(&path, pass());
    sim.tap(s);
    sim.tap(d);
    for i in 0..FLOWS {
        let cfg = TcpConfig { mss: MSS, iw: 10, tsq: tsq_on, ..TcpConfig::default() };
        add_connection(&mut sim, ConnSpec { name: format!("w{i}"), role: "web".into(), from: s, to: d, start: Time::ZERO, size: Some(62_000), cfg, policy: None });
    }
    sim.run_until(Time::from_secs(10));
    let t = sim.finish();
    t.check_conservation().unwrap();
    t
}

/// (flow, seq) of the first transmissions of data segments in the order they reach the receiver,
/// which is their order through the FIFO bottleneck.
fn bottleneck_order(t: &Tables, rcv: u32) -> Vec<(u32, u64)> {
    let mut seen = std::collections::BTreeSet::new();
    t.taps
        .iter()
        .filter(|r| r.node == rcv && !r.outgoing)
        .filter_map(|r| match &r.pkt.body {
            Body::Tcp(h) if h.len > 0 && seen.insert((r.pkt.flow, h.seq)) => Some((r.pkt.flow, h.seq)),
            _ => None,
        })
        .collect()
}

/// The most data segments of one flow below TCP at the sender's host at any instant: departures
/// recomputed from the host's FIFO at 100 Mbit/s (each packet leaves at max(sent, previous
/// departure) + its serialisation, the engine's rule), then counted at every send.
fn max_host_backlog(t: &Tables, snd: u32) -> u32 {
    let rate = Rate::mbps(100);
    let out: Vec<_> = t.taps.iter().filter(|r| r.node == snd && r.outgoing).collect();
    let mut depart = vec![0i64; out.len()];
    let mut last = 0i64;
    for (i, r) in out.iter().enumerate() {
        last = last.max(r.t_ns) + rate.tx_time(r.pkt.size as u64).ns() as i64;
        depart[i] = last;
    }
    let mut worst = 0;
    for (i, r) in out.iter().enumerate() {
        let data = |j: usize| matches!(&out[j].pkt.body, Body::Tcp(h) if h.len > 0) && out[j].pkt.flow == r.pkt.flow;
        // packets of this flow sent up to and including i that have not left by its send time
        let n = (0..=i).filter(|&j| data(j) && depart[j] > r.t_ns).count() as u32;
        worst = worst.max(n);
    }
    worst
}

#[test]
fn six_iw10_bursts_leave_interleaved() {
    let on = run(true);
    let (snd, rcv) = (0, 2);
    // Kernel arithmetic: T = 1280 + 1448 = 2728 B, 2·T = 5456 B; at 2 Mbit/s the pacing term is
    // far below (rate ≈ 2 · cwnd · mss / srtt ≈ 0.5–1 MB/s, >> 10 < 1 kB), so 1 + k·T ≤ 5456 lets
    // k ≤ 1 queued segment take a second: two data segments per flow below TCP.
    let two = (0u32..).find(|&k| 1 + k as u64 * tsq::truesize(PAYLOAD) > tsq::limit(tsq::truesize(PAYLOAD), Some(1_000_000), 0)).unwrap();
    assert_eq!(two, 2);
    assert_eq!(max_host_backlog(&on, snd), two, "each flow keeps exactly the TSQ limit below TCP");
    let off = run(false);
    assert!(max_host_backlog(&off, snd) >= 10, "without TSQ the IW10 burst is queued whole");

    let order = bottleneck_order(&on, rcv);
    assert!(order.len() >= 60);
    // The handshakes complete one SYN-ACK apart: 52 B (40 + the 12-byte timestamps option) at
    // 2 Mbit/s = 208 µs, while the host's link sends a 1500-B segment in 120 µs. When flow f's
    // first segment is queued at the host, each earlier flow has at most its two below TCP plus
    // what their completions refilled in f·208 µs (one per 120 µs): flow f's first segment is at
    // most the (2·f + ⌈f·208/120⌉ + 1)-th through the bottleneck. Without TSQ it is the
    // (10·f + 1)-th.
    let first_pos = |f: u32| order.iter().position(|&(g, _)| g == f).unwrap();
    let syn_ack_gap = Rate::mbps(2).tx_time(52).ns();
    let host_tx = Rate::mbps(100).tx_time(1500).ns();
    assert_eq!((syn_ack_gap, host_tx), (208_000, 120_000));
    for f in 0..FLOWS as u64 {
        let bound = 2 * f + (f * syn_ack_gap).div_ceil(host_tx) + 1;
        assert!((first_pos(f as u32) as u64) < bound, "flow {f} first at {}: {:?}", first_pos(f as u32), &order[..20]);
    }
    // Round-robin-like once all have started: the host's FIFO then holds two segments of each flow
    // (12), and a segment a completion lets in leaves 12 departures later, so any 2·FLOWS
    // consecutive segments through the bottleneck hold each flow at least once and at most
    // two + 1 times, as long as every flow still has initial-window segments to send. Without
    // TSQ such a window holds ten of one flow.
    let all_in = (0..FLOWS).map(first_pos).max().unwrap();
    let tenth = |o: &[(u32, u64)]| (0..FLOWS).filter_map(|f| o.iter().enumerate().filter(|x| x.1 .0 == f).nth(9).map(|x| x.0)).min().unwrap();
    let w = 2 * FLOWS as usize;
    let windows = |o: &[(u32, u64)], from: usize, to: usize| -> (u32, u32) {
        let (mut lo, mut hi) = (u32::MAX, 0);
        for k in from..=to.saturating_sub(w) {
            for f in 0..FLOWS {
                let n = o[k..k + w].iter().filter(|x| x.0 == f).count() as u32;
                lo = lo.min(n);
                hi = hi.max(n);
            }
        }
        (lo, hi)
    };
    let end = tenth(&order);
    assert!(end >= all_in + w, "a window fits: all in at {all_in}, first tenth at {end}");
    let (lo, hi) = windows(&order, all_in, end);
    println!("order: {:?}; windows of {w} from {all_in} to {end}: each flow {lo}..={hi} times", order.iter().take(60).map(|x| x.0).collect::<Vec<_>>());
    assert!(lo >= 1 && hi <= two + 1, "each flow {lo}..={hi} times per {w} segments");
    let order_off = bottleneck_order(&off, rcv);
    assert_eq!(windows(&order_off, 0, 60).1, 10);
    assert_eq!(order_off.iter().position(|&(g, _)| g == FLOWS - 1), Some(50), "without TSQ the bursts go whole, flow after flow");

    // The consequence (docs/validation.md, umts-web): without TSQ the last flows' first segments
    // wait ~50 · 6 ms = 300 ms > RTO ≈ srtt + 200 ms, and their timers fire; with TSQ none does.
    let rexmit = |t: &Tables| t.tcp_flows.retransmits.iter().sum::<u64>();
    assert!(rexmit(&off) > 0);
    assert_eq!(rexmit(&on), 0);
}

/// Same scenario and seed, same tables, with and without TSQ (completions are ordinary events).
#[test]
fn deterministic_with_and_without_tsq() {
    let a = run(false);
    let b = run(false);
    assert_eq!(a.tcp_flows.end_ns, b.tcp_flows.end_ns);
    assert_eq!(a.events, b.events);
    let on1 = run(true);
    let on2 = run(true);
    assert_eq!(on1.tcp_flows.end_ns, on2.tcp_flows.end_ns, "deterministic");
    assert_eq!(on1.events, on2.events);
    assert_ne!(on1.tcp_flows.end_ns, a.tcp_flows.end_ns);
}
