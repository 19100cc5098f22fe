//! The optional mechanisms: pacing, byte counting (RFC 3465), window scaling, the host window
//! policy hook, CUBIC's β on loss, and the connection teardown.
mod common;
use std::cell::RefCell;
use std::rc::Rc;

use common::*;
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::record::NULL_NS;
use jitterlab_sim::tcp::receiver::{wscale_for, Receiver, RecvOutput};
use jitterlab_sim::tcp::sender::{Output, Sender, State};
use jitterlab_sim::tcp::{add_connection, ConnSpec, TcpConfig, TcpReceiverAgent, TcpSenderAgent, WindowPolicy};
use jitterlab_sim::Time;

const MSS: u32 = 1460;

/// Without pacing the IW leaves back to back (queue IW − 1); with pacing at 2·cwnd/SRTT (Linux's
/// slow-start gain) consecutive IW segments are SRTT/20 apart (≈ 5 ms here), far more than the
/// 1.2 ms the bottleneck needs per segment, so no queue builds.
#[test]
fn pacing_spreads_the_initial_window() {
    let path = Path::default();
    let cfg = TcpConfig { pacing: true, ..reno(MSS, 10) };
    let run = build(&path, cfg, Some(40 * MSS as u64), Time::ZERO, pass());
    let (t, log) = run_to_end(run, Time::from_secs(5));
    let d: Vec<Arrival> = log.borrow().iter().filter(|a| a.len > 0).cloned().collect();
    let srtt = path.rtt(40, 40); // the SYN's RTT is the first sample
    let gap = Time::from_secs_f64(1500.0 / (2.0 * 10.0 * 1460.0 / srtt.secs_f64()));
    for i in 1..10 {
        let g = d[i].t - d[i - 1].t;
        assert!(g.ns().abs_diff(gap.ns()) < 1_000, "gap {i}: {g:?} vs {gap:?}");
    }
    // Each arrives at an idle link (the probe counts the arriving packet itself).
    assert!(d.iter().take(10).all(|a| a.backlog == 1));
    assert_ne!(t.tcp_flows.end_ns[0], NULL_NS);
}

fn established(cfg: TcpConfig) -> (Sender, Output) {
    let mut s = Sender::new(cfg, None);
    let mut out = Output::default();
    s.connect(Time::ZERO, &mut out);
    let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd: 65_535, ..Default::default() };
    s.process(&synack, Time::from_ms(100), &mut out);
    (s, out)
}

/// RFC 3465 §2.2 with delayed ACKs: each ACK covers 2 segments. Packet counting adds 1 SMSS per
/// ACK (IW10 → 15 after one round), byte counting with L = 2 adds 2 (→ 20), L = 1 adds 1.
#[test]
fn abc_in_slow_start() {
    for (abc, expect) in [(None, 15u64), (Some(2), 20), (Some(1), 15)] {
        let (mut s, _) = established(TcpConfig { mss: 1000, iw: 10, cc: "reno".into(), abc, ..TcpConfig::default() });
        let mut out = Output::default();
        for k in 1..=5u64 {
            let h = TcpHeader { ack: 1 + 2000 * k, flags: F::ACK, wnd: 65_535, ..Default::default() };
            s.process(&h, Time::from_ms(200), &mut out);
        }
        assert_eq!(s.cwnd(), expect * 1000, "abc {abc:?}");
    }
}

/// RFC 3465 §2.1 in congestion avoidance: one SMSS per cwnd of bytes acknowledged.
#[test]
fn abc_in_congestion_avoidance() {
    let (mut s, _) = established(TcpConfig { mss: 1000, iw: 10, cc: "reno".into(), abc: Some(2), initial_ssthresh: 5000, ..TcpConfig::default() });
    let mut out = Output::default();
    for k in 1..=5u64 {
        let h = TcpHeader { ack: 1 + 2000 * k, flags: F::ACK, wnd: 65_535, ..Default::default() };
        s.process(&h, Time::from_ms(200), &mut out);
    }
    // 10 000 bytes acknowledged at cwnd 10 000: exactly one increase.
    assert_eq!(s.cwnd(), 11_000);
}

/// RFC 7323: the shift is the smallest covering the buffer; windows are multiples of 2^shift; the
/// SYN-ACK carries at most 65535.
#[test]
fn window_scaling() {
    assert_eq!(wscale_for(65_535), 0);
    assert_eq!(wscale_for(65_536), 1);
    assert_eq!(wscale_for(1_000_000), 4);
    assert_eq!(wscale_for(u64::MAX), 14);
    for (quickack, expect) in [(0u32, 998_992u64), (16, 1_000_000)] {
        let cfg = TcpConfig { rcvbuf: 1_000_000, quickack, ..TcpConfig::default() };
        let mut r = Receiver::new(cfg, 0, None);
        let mut out = RecvOutput::default();
        let syn = TcpHeader { seq: 0, flags: F::SYN, wscale: Some(0), ..Default::default() };
        r.process(&syn, false, Time::ZERO, &mut out);
        assert_eq!(out.segs[0].wnd, 65_535);
        assert_eq!(out.segs[0].wscale, Some(4));
        let data = TcpHeader { seq: 1, ack: 1, flags: F::ACK, len: 1000, ..Default::default() };
        r.process(&data, false, Time::ZERO, &mut out);
        let data = TcpHeader { seq: 3001, ack: 1, flags: F::ACK, len: 1000, ..Default::default() };
        r.process(&data, false, Time::ZERO, &mut out);
        let ack = out.segs.last().unwrap();
        assert_eq!(ack.wnd % 16, 0);
        // Without quick ACKs the in-order segment waits for the delayed ACK; the out-of-order one
        // is ACKed at once with 1 000 000 − 1000 buffered bytes free, rounded down to 16 bytes:
        // 998 992. With them the in-order segment was ACKed at once offering the right edge
        // 1001 + 1 000 000, which the receiver keeps (no shrinking): 1 000 000.
        assert_eq!(ack.wnd, expect, "quickack {quickack}");
        assert_eq!(ack.nsack, 1);
        assert_eq!(ack.sack[0], (3001, 4001));
    }
    // Without the peer's option there is no scaling: at most 65535.
    let mut r = Receiver::new(TcpConfig { rcvbuf: 1_000_000, ..TcpConfig::default() }, 0, None);
    let mut out = RecvOutput::default();
    r.process(&TcpHeader { seq: 0, flags: F::SYN, ..Default::default() }, false, Time::ZERO, &mut out);
    assert_eq!(out.segs[0].wscale, None);
    r.process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, len: 1000, ..Default::default() }, false, Time::ZERO, &mut out);
    r.process(&TcpHeader { seq: 1001, ack: 1, flags: F::ACK, len: 1000, ..Default::default() }, false, Time::ZERO, &mut out);
    assert_eq!(out.segs.last().unwrap().wnd, 65_535);
}

/// A host policy that splits a byte budget between the connections open at the host (the shape of
/// the RWND moderation of the WiBrA slides).
struct Budget {
    total: u64,
    open: Vec<u32>,
    calls: u64,
}

impl WindowPolicy for Budget {
    fn on_open(&mut self, flow: u32, _now: Time) { self.open.push(flow); }
    fn on_close(&mut self, flow: u32, _now: Time) { self.open.retain(|f| *f != flow); }
    fn cap(&mut self, _flow: u32, _now: Time, free: u64) -> u64 {
        self.calls += 1;
        free.min(self.total / self.open.len().max(1) as u64)
    }
}

/// Two connections to one host share a 6-segment budget. The first SYN-ACK is built while only one
/// connection is open (6 segments); the receiver never shrinks an offered window, so that flow
/// drops to its 3-segment share once its first window is consumed; the second gets 3 from its
/// SYN-ACK on.
#[test]
fn window_policy_caps_each_connection() {
    let path = Path::default();
    let policy = Rc::new(RefCell::new(Budget { total: 6 * MSS as u64, open: vec![], calls: 0 }));
    let (mut sim2, s, d, _) = path_sim(&path, pass());
    let mut conns = vec![];
    for i in 0..2 {
        let spec = ConnSpec { name: format!("w{i}"), role: "web".into(), from: s, to: d, start: Time::ZERO, size: Some(60 * MSS as u64), cfg: reno(MSS, 10), policy: Some(policy.clone()) };
        conns.push(add_connection(&mut sim2, spec));
    }
    sim2.run_until(Time::from_secs(10));
    for c in &conns {
        assert!(sim2.agent_as::<TcpSenderAgent>(c.sender).unwrap().core.done());
        assert_eq!(sim2.agent_as::<TcpReceiverAgent>(c.receiver).unwrap().core.state, jitterlab_sim::tcp::receiver::State::Closed);
    }
    let t = sim2.finish();
    let s = &t.tcp_series;
    let max_of = |flow: u32, from: Time, to: Time| {
        (0..s.len()).filter(|&k| s.flow_id[k] == flow && (from.ns()..to.ns()).contains(&(s.t_ns[k] as u64))).map(|k| s.inflight[k]).max().unwrap()
    };
    // While both are open (until the first one's FIN, after which the survivor gets all 6).
    let both = Time(t.tcp_flows.end_ns[0] as u64);
    assert_eq!(max_of(conns[0].flow, Time::ZERO, both), 6 * MSS as u64);
    assert!(max_of(conns[0].flow, Time::from_ms(500), both) <= 3 * MSS as u64);
    assert!(max_of(conns[1].flow, Time::ZERO, both) <= 3 * MSS as u64);
    assert!(max_of(conns[1].flow, both, Time::from_secs(10)) > 3 * MSS as u64);
    assert!(policy.borrow().calls > 0);
    assert!(policy.borrow().open.is_empty(), "both connections closed");
}

/// CUBIC on a real path: the first loss after slow start sets ssthresh = 0.7·cwnd (RFC 9438 §4.6).
#[test]
fn cubic_reduces_by_beta() {
    let path = Path::default();
    let cfg = TcpConfig { cc: "cubic".into(), initial_ssthresh: 20 * MSS as u64, ..reno(MSS, 10) };
    let run = build(&path, cfg, Some(300 * MSS as u64), Time::ZERO, drop_segs(MSS, vec![(100, 0)]));
    let (t, _) = run_to_end(run, Time::from_secs(20));
    assert_eq!(t.tcp_flows.cc[0], "cubic");
    assert_eq!(t.tcp_flows.timeouts[0], 0);
    let s = series(&t);
    let i = s.iter().position(|r| r.2 < 20 * MSS as u64).expect("a reduction");
    let before = s[i - 1].1 as f64;
    assert!((s[i].2 as f64 - 0.7 * before).abs() <= 1.0, "ssthresh {} vs 0.7·{before}", s[i].2);
}

/// The whole connection life: the sender ends in TIME-WAIT, the receiver in CLOSED.
#[test]
fn teardown() {
    let path = Path::default();
    let mut run = build(&path, TcpConfig::default(), Some(10_000), Time::ZERO, pass());
    run.sim.run_until(Time::from_secs(5));
    let snd = run.sim.agent_as::<TcpSenderAgent>(run.conn.sender).unwrap();
    assert_eq!(snd.core.state, State::TimeWait);
    let rcv = run.sim.agent_as::<TcpReceiverAgent>(run.conn.receiver).unwrap();
    assert_eq!(rcv.core.state, jitterlab_sim::tcp::receiver::State::Closed);
    assert_eq!(rcv.core.stats.bytes_in_order, 10_000);
}

/// A policy that closes the window until `open_at`, then allows `later` bytes.
struct Gate {
    open_at: Time,
    later: u64,
}

impl WindowPolicy for Gate {
    fn cap(&mut self, _flow: u32, now: Time, free: u64) -> u64 { if now < self.open_at { 0 } else { free.min(self.later) } }
}

fn gated(open_at: Time, later: u64, size: u64) -> jitterlab_sim::record::Tables {
    let path = Path::default();
    let (mut sim, s, d, _) = path_sim(&path, pass());
    let policy = Rc::new(RefCell::new(Gate { open_at, later }));
    let spec = ConnSpec { name: "g".into(), role: "bulk".into(), from: s, to: d, start: Time::ZERO, size: Some(size), cfg: reno(MSS, 10), policy: Some(policy) };
    add_connection(&mut sim, spec);
    sim.run_until(Time::from_secs(60));
    sim.finish()
}

/// A zero window with nothing in flight: the sender probes on the persist timer (RTO with backoff:
/// 0.3, 0.6, 1.2 s … after the SYN's 100 ms RTT) and resumes once a probe's ACK shows the open window.
#[test]
fn zero_window_is_probed() {
    let t = gated(Time::from_secs(2), u64::MAX, 20 * MSS as u64);
    let f = &t.tcp_flows;
    assert_ne!(f.end_ns[0], NULL_NS, "the transfer must finish");
    // Probes at ≈ 0.4, 1.0, 2.2 s (the third sees the window open): data starts after 2 s.
    let first = f.first_data_ns[0];
    assert!(first > 2_000_000_000 && first < 2_500_000_000, "{first}");
}

/// A window smaller than one segment is used as it is when nothing is in flight.
#[test]
fn window_below_one_segment() {
    let t = gated(Time::ZERO, 1000, 20 * MSS as u64);
    let f = &t.tcp_flows;
    assert_ne!(f.end_ns[0], NULL_NS);
    assert_eq!(f.bytes_acked[0], 20 * MSS as u64);
    // 29 200 bytes at 1000 per round trip (≈ 101 ms): about 3 s.
    let dur = (f.end_ns[0] - f.first_data_ns[0]) as f64 * 1e-9;
    assert!((2.7..3.3).contains(&dur), "{dur}");
}
