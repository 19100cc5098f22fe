//! RWND moderation at the receiving host (`tcp::moderation`, issue 6): the sum of the advertised
//! windows stays within the budget, no right edge moves left, the split follows joins and leaves,
//! moderation from the SYN caps the first flight, and the scenario keys `[hosts.NAME.rwnd]`.
mod common;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use common::*;
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::scenario;
use jitterlab_sim::tcp::moderation::{ModerationConfig, Moderator};
use jitterlab_sim::tcp::receiver::{wscale_for, Receiver, RecvOutput};
use jitterlab_sim::tcp::{add_connection, ConnSpec, TcpConfig, WindowPolicy};
use jitterlab_sim::Time;
use serde_json::{json, Value};

const MSS: u32 = 1460;
const BUDGET: u64 = 20_000;

/// Wraps the moderator and checks, on every advertisement, the sum of the windows the active
/// flows last advertised (what their senders may have in flight beyond what was acknowledged).
struct Audit {
    inner: Moderator,
    adv: BTreeMap<u32, u64>,
    /// Largest (sum − budget) / active flows seen, and the largest sum.
    worst_excess_per_flow: f64,
    max_sum: u64,
    /// (time, flow, window) of every advertisement.
    log: Vec<(Time, u32, u64)>,
}

impl WindowPolicy for Audit {
    fn on_open(&mut self, flow: u32, now: Time) {
        self.adv.insert(flow, 0);
        self.inner.on_open(flow, now);
    }
    fn on_established(&mut self, flow: u32, now: Time) { self.inner.on_established(flow, now); }
    fn on_close(&mut self, flow: u32, now: Time) {
        self.adv.remove(&flow);
        self.inner.on_close(flow, now);
    }
    fn on_advertise(&mut self, flow: u32, wnd: u64, now: Time) {
        self.inner.on_advertise(flow, wnd, now);
        self.log.push((now, flow, wnd));
        if let Some(a) = self.adv.get_mut(&flow) {
            *a = wnd;
            let sum: u64 = self.adv.values().sum();
            self.max_sum = self.max_sum.max(sum);
            let k = self.adv.len() as f64;
            self.worst_excess_per_flow = self.worst_excess_per_flow.max((sum as f64 - BUDGET as f64) / k);
        }
    }
    fn cap(&mut self, flow: u32, now: Time, free: u64) -> u64 { self.inner.cap(flow, now, free) }
}

fn audit(cfg: ModerationConfig) -> Rc<RefCell<Audit>> {
    Rc::new(RefCell::new(Audit { inner: Moderator::new(cfg), adv: BTreeMap::new(), worst_excess_per_flow: f64::MIN, max_sum: 0, log: vec![] }))
}

/// Six web connections (IW10) opened together plus two bulk transfers that join and leave later,
/// through a 10 Mbit/s, 100 ms RTT path. Without a receive buffer beyond 65535 B (no window
/// scaling) the sum of advertised windows never exceeds the budget by more than one MSS per active
/// flow (the one-segment floor); with the default 3 MiB buffer (scale shift 6) a capped window is
/// rounded up to the 64-byte scale unit as well.
#[test]
fn sum_of_windows_stays_within_the_budget() {
    for rcvbuf in [65_000u64, TcpConfig::default().rcvbuf] {
        let unit = 1u64 << wscale_for(rcvbuf);
        let a = audit(ModerationConfig { budget: BUDGET, ..Default::default() });
        let (mut sim, s, d, _) = path_sim(&Path::default(), pass());
        let cfg = TcpConfig { iw: 10, rcvbuf, ..reno(MSS, 10) };
        let mut specs = vec![];
        for i in 0..6 {
            specs.push(ConnSpec { name: format!("web.{i}"), role: "web".into(), from: s, to: d, start: Time::from_ms(100), size: Some(62_000), cfg: cfg.clone(), policy: None });
        }
        specs.push(ConnSpec { name: "bulk0".into(), role: "bulk".into(), from: s, to: d, start: Time::from_ms(50), size: Some(400_000), cfg: cfg.clone(), policy: None });
        specs.push(ConnSpec { name: "bulk1".into(), role: "bulk".into(), from: s, to: d, start: Time::from_ms(1500), size: Some(300_000), cfg: cfg.clone(), policy: None });
        for mut sp in specs {
            sp.policy = Some(a.clone());
            let c = add_connection(&mut sim, sp);
            a.borrow_mut().inner.register(c.flow, 1.0, MSS);
        }
        sim.run_until(Time::from_secs(30));
        let t = sim.finish();
        assert!(t.tcp_flows.end_ns.iter().all(|&e| e > 0), "every transfer finished");
        let a = a.borrow();
        let tol = (MSS as u64 + if unit > 1 { unit } else { 0 }) as f64;
        assert!(a.worst_excess_per_flow <= tol, "rcvbuf {rcvbuf}: excess {} B per flow > {tol}", a.worst_excess_per_flow);
        // the budget binds: the windows do reach it (else the test would prove nothing)
        assert!(a.max_sum >= BUDGET - MSS as u64, "max sum {}", a.max_sum);
        assert_eq!(a.inner.recomputations, 16, "8 joins and 8 leaves");
        assert_eq!(a.inner.active(), 0);
    }
}

fn syn() -> TcpHeader { TcpHeader { seq: 0, flags: F::SYN, wscale: Some(7), ..Default::default() } }
fn data(seq: u64) -> TcpHeader { TcpHeader { seq, ack: 1, flags: F::ACK, len: MSS, ..Default::default() } }

/// Two receivers share a moderator; the second joins after the first was offered the whole
/// budget. The first one's share halves, yet no ACK moves its right edge (ACK + window) left: the
/// lower cap takes effect as the data already allowed arrives.
#[test]
fn no_right_edge_moves_left() {
    let m: Rc<RefCell<Moderator>> = Rc::new(RefCell::new(Moderator::new(ModerationConfig { budget: BUDGET, ..Default::default() })));
    let cfg = TcpConfig { delack: None, ..TcpConfig::default() };
    let mut r = [Receiver::new(cfg.clone(), 0, Some(m.clone())), Receiver::new(cfg, 1, Some(m.clone()))];
    let mut edge = [0u64; 2];
    let mut next = [1u64; 2];
    let check = |i: usize, out: &RecvOutput, edge: &mut [u64; 2]| {
        for h in &out.segs {
            let e = h.ack + h.wnd;
            assert!(e >= edge[i], "flow {i}: right edge {e} < {}", edge[i]);
            edge[i] = e;
        }
    };
    let mut out = RecvOutput::default();
    r[0].process(&syn(), false, Time::ZERO, &mut out);
    check(0, &out, &mut edge);
    // the SYN-ACK is never scaled: whole segments of payload (1460 − 12 B of timestamps option)
    assert_eq!(edge[0], 1 + 13 * 1448, "alone: the budget in whole segments");
    r[0].process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, ..Default::default() }, false, Time::ZERO, &mut RecvOutput::default());
    let mut out = RecvOutput::default();
    r[1].process(&syn(), false, Time::ZERO, &mut out);
    check(1, &out, &mut edge);
    assert_eq!(out.segs[0].wnd, 1448, "the rest of the budget is committed: one segment (of payload)");
    r[1].process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, ..Default::default() }, false, Time::ZERO, &mut RecvOutput::default());
    let mut wnds = vec![];
    for step in 0..40 {
        let i = step % 2;
        let mut out = RecvOutput::default();
        r[i].process(&data(next[i]), false, Time::from_ms(step as u64), &mut out);
        next[i] += MSS as u64;
        check(i, &out, &mut edge);
        if i == 0 {
            wnds.push(out.segs[0].wnd);
        }
    }
    // flow 0 ends at its share, 10 kB aligned up to the receiver's 64 B scale unit as Linux's
    // __tcp_select_window aligns (shift 6 covers the 3 MiB buffer): 10 048, not whole segments
    assert_eq!(*wnds.last().unwrap(), 10_048);
}

/// A bulk transfer alone is offered the whole budget; while a second connection is open each gets
/// half; when it closes the first gets the whole budget again.
#[test]
fn split_recomputed_when_flows_join_and_leave() {
    let a = audit(ModerationConfig { budget: BUDGET, ..Default::default() });
    let (mut sim, s, d, _) = path_sim(&Path::default(), pass());
    let cfg = reno(MSS, 10);
    let long = add_connection(&mut sim, ConnSpec { name: "long".into(), role: "bulk".into(), from: s, to: d, start: Time::ZERO, size: Some(1_000_000), cfg: cfg.clone(), policy: Some(a.clone()) });
    let short = add_connection(&mut sim, ConnSpec { name: "short".into(), role: "bulk".into(), from: s, to: d, start: Time::from_secs(2), size: Some(150_000), cfg, policy: Some(a.clone()) });
    sim.run_until(Time::from_secs(40));
    let t = sim.finish();
    let end = Time(t.tcp_flows.end_ns[short.flow as usize] as u64);
    let a = a.borrow();
    let wnd = |flow: u32, from: Time, to: Time| -> Vec<u64> { a.log.iter().filter(|(t, f, _)| *f == flow && *t >= from && *t < to).map(|x| x.2).collect() };
    let alone = 20_032; // 20 kB aligned up to the 64 B scale unit (__tcp_select_window)
    let half = 10_048; // 10 kB likewise
    assert_eq!(*wnd(long.flow, Time::from_secs(1), Time::from_secs(2)).last().unwrap(), alone);
    // one round trip (≈ 0.1 s) after the join the offered window has drained to the half share;
    // the short flow's FIN reaches the receiver (the leave) ~½ RTT before its sender sees the
    // last ACK (`end`), so stop 0.15 s before
    let both = wnd(long.flow, Time::from_ms(2500), end - Time::from_ms(150));
    assert!(!both.is_empty() && both.iter().all(|&w| w <= half), "{both:?}");
    assert!(wnd(short.flow, Time::ZERO, end).iter().all(|&w| w <= half));
    let after = wnd(long.flow, end + Time::from_ms(300), Time::from_secs(40));
    assert!(after.contains(&alone), "back to the whole budget after the leave");
}

/// Data bytes of the first flight: arrivals at the bottleneck within half a round trip of the
/// first data segment (the next flight leaves one round trip later).
fn first_flight(hosts: Option<Value>) -> u64 {
    let mut v = json!({
        "duration": "5s",
        "links": {"a": {"from": "server", "to": "r", "rate": "1Gbit", "delay": "1us"},
                  "b": {"from": "r", "to": "mobile", "rate": "10Mbit", "delay": "50ms"}},
        "output": {"queue_sample_interval": "1ms", "queues": ["b"]},
        "traffic": [{"kind": "web", "from": "server", "to": "mobile", "size": "372kB", "flows": 6, "iw": 10, "start": "1s"}],
    });
    if let Some(h) = hosts {
        v["hosts"] = json!({"mobile": {"rwnd": h}});
    }
    let t = scenario::run(&v, 1).unwrap();
    // the backlog in bytes of queue "b" right after the first flight arrived (10 Mbit/s drains
    // 1.2 ms per segment while the 1 Gbit/s access delivers the whole flight within ~1 ms)
    let q = &t.queue_samples;
    let first = *t.tcp_flows.first_data_ns.iter().min().unwrap();
    (0..q.t_ns.len()).filter(|&i| q.t_ns[i] >= first && q.t_ns[i] <= first + 50_000_000).map(|i| q.backlog_bytes[i]).max().unwrap_or(0)
}

/// Moderation from the SYN caps what the six IW10 senders put into the network at once: the
/// SYN-ACKs share the budget. Without it (or with moderation after the SYN, whose SYN-ACKs carry
/// Linux's initial 10-segment receive window) all 60 segments of the initial windows leave at once.
#[test]
fn from_syn_caps_the_first_flight() {
    let none = first_flight(None);
    let after = first_flight(Some(json!({"budget": "20kB", "from_syn": false})));
    let from = first_flight(Some(json!({"budget": "20kB"})));
    // 60 segments of 1500 B enter; 1–2 have left the 10 Mbit/s queue by the next sample
    assert!(none > 55 * 1500, "unmoderated first flight {none}");
    assert!(after > 55 * 1500, "after-SYN first flight {after}");
    // within the budget plus one segment (+ headers) per flow
    assert!(from <= BUDGET + 6 * 1500, "from-SYN first flight {from}");
    assert!(from >= 10 * 1500, "the budget is used: {from}");
}

/// Scenario errors name the key path; unknown keys are refused.
#[test]
fn scenario_keys_are_checked() {
    let base = |h: Value| {
        json!({"duration": "1s", "links": {"b": {"from": "server", "to": "mobile", "rate": "10Mbit", "delay": "5ms"}},
               "hosts": h, "traffic": [{"kind": "bulk", "name": "bulk", "from": "server", "to": "mobile", "size": "10kB"}]})
    };
    let err = |h: Value| scenario::run(&base(h), 1).unwrap_err().to_string();
    assert!(err(json!({"mobile": {"rwnd": {"budget": "0B"}}})).contains("hosts.mobile.rwnd.budget: must be > 0"));
    assert!(err(json!({"mobile": {"rwnd": {}}})).contains("hosts.mobile.rwnd.budget: missing"));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "20kB", "budjet": 1}}})).contains("hosts.mobile.rwnd.budjet: unknown key"));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "20kB"}, "x": 1}})).contains("hosts.mobile.x: unknown key"));
    assert!(err(json!({"phone": {"rwnd": {"budget": "20kB"}}})).contains("hosts.phone: no node named \"phone\""));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "20kB", "split": "weighted"}}})).contains("hosts.mobile.rwnd.weights: missing"));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "20kB", "split": "weighted", "weights": {"bulk": -1}}}})).contains("hosts.mobile.rwnd.weights.bulk: must be a number > 0"));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "20kB", "split": "weighted", "weights": {"web": 2}}}})).contains("hosts.mobile.rwnd.weights.web: no TCP traffic entry"));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "20kB", "media_idle": "0s"}}})).contains("hosts.mobile.rwnd.media_idle: must be > 0"));
    assert!(err(json!({"mobile": {"rwnd": {"budget": "14pkt"}}})).contains("hosts.mobile.rwnd.budget: must be in bytes"));
    // valid: weighted split naming the entry; `enabled = false` turns the moderator off
    scenario::run(&base(json!({"mobile": {"rwnd": {"budget": "20kB", "split": "weighted", "weights": {"bulk": 2}}}})), 1).unwrap();
    scenario::run(&base(json!({"mobile": {"rwnd": {"budget": "20kB", "enabled": false}}})), 1).unwrap();
}

/// `only_with_media`: with no media arriving at the host the moderator stays out of the way (the
/// bulk transfer's windows grow beyond the budget); with audio arriving it caps them.
#[test]
fn only_with_media_follows_the_media_flow() {
    let run = |audio: bool| {
        // plain slow start (no HyStart) so that the unmoderated 2 MB transfer surely overfills the
        // queue; no TCP Small Queues, which would keep the sender's own link (the bottleneck here)
        // at two packets of the connection, as in Linux
        let mut tr = vec![json!({"kind": "bulk", "name": "bulk", "from": "server", "to": "mobile", "size": "2MB", "start": "1s", "hystart": false, "tsq": false})];
        if audio {
            tr.push(json!({"kind": "audio", "from": "server", "to": "mobile"}));
        }
        let v = json!({"duration": "20s", "links": {"b": {"from": "server", "to": "mobile", "rate": "4Mbit", "delay": "20ms", "queue": {"kind": "droptail", "limit": "500pkt"}}},
                       "output": {"queue_sample_interval": "10ms"},
                       "hosts": {"mobile": {"rwnd": {"budget": "20kB", "only_with_media": true}}}, "traffic": tr});
        let t = scenario::run(&v, 1).unwrap();
        *t.queue_samples.backlog_bytes.iter().max().unwrap()
    };
    assert!(run(false) > 200_000, "unmoderated bulk fills the 500-packet queue");
    assert!(run(true) <= BUDGET + 1500, "moderated while audio arrives");
}
