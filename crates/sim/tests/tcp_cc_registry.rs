//! Every registered congestion control, by looping over the registry (so a new algorithm is tested
//! by being registered): the contract the sender relies on under random ACK / loss / reordering /
//! ECN-Echo / timeout sequences (a property test driven by a seeded generator), and, through a
//! scenario, the `tcp_flows` counter identities, determinism and errors naming the key.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::rng::Rng;
use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;
use jitterlab_sim::tcp::cc::{self, SSTHRESH_UNSET};
use jitterlab_sim::tcp::sender::{Output, Sender};
use jitterlab_sim::tcp::{Recovery, TcpConfig, TimerCmd};
use jitterlab_sim::Time;
use serde_json::{json, Value};

const MSS: u32 = 1000;

/// A network played by the test around one sender: a FIFO path that loses, reorders and
/// ECN-marks at random, a receiver that ACKs every segment with SACK blocks, and the sender's two
/// timers fired when due (or early, as an RTO after an outage would).
struct Net {
    s: Sender,
    now: Time,
    out: Output,
    /// Segments on the path, in send order: (start, end) in sequence space.
    path: Vec<(u64, u64)>,
    rcv_nxt: u64,
    /// Received above `rcv_nxt`, sorted and merged.
    ooo: Vec<(u64, u64)>,
    rto_at: Option<Time>,
    pace_at: Option<Time>,
    /// Bytes put on the wire (payload), for the bound on cwnd.
    sent: u64,
}

impl Net {
    fn new(cfg: TcpConfig, size: Option<u64>) -> Net {
        let mut n = Net { s: Sender::new(cfg, size), now: Time::ZERO, out: Output::default(), path: vec![], rcv_nxt: 1, ooo: vec![], rto_at: None, pace_at: None, sent: 0 };
        n.s.connect(n.now, &mut n.out);
        n.out.segs.clear();
        n.now = Time::from_ms(40);
        // SYN-ACK: ECN-setup (ECE without CWR, RFC 3168 §6.1.1), window scaling, timestamps.
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK | F::ECE, wnd: 4_000_000, wscale: Some(7), ts: Some((1, 1)), ..Default::default() };
        n.s.process(&synack, n.now, &mut n.out);
        n.collect();
        n
    }

    /// Takes what the last call sent and the timer requests.
    fn collect(&mut self) {
        for g in self.out.segs.drain(..) {
            let len = g.hdr.len as u64 + u64::from(g.hdr.flags & F::FIN != 0);
            if len > 0 {
                self.path.push((g.hdr.seq, g.hdr.seq + len));
                self.sent += g.hdr.len as u64;
            }
        }
        for (cmd, at) in [(self.out.rto, &mut self.rto_at), (self.out.pace, &mut self.pace_at)] {
            match cmd {
                TimerCmd::Set(t) => *at = Some(t),
                TimerCmd::Cancel => *at = None,
                TimerCmd::Keep => {}
            }
        }
        self.out.rto = TimerCmd::Keep;
        self.out.pace = TimerCmd::Keep;
    }

    /// Segment `i` of the path arrives (or is lost); the receiver ACKs it.
    fn deliver(&mut self, i: usize, lost: bool, ece: bool) {
        let (a, b) = self.path.remove(i);
        if lost {
            return;
        }
        if a <= self.rcv_nxt {
            self.rcv_nxt = self.rcv_nxt.max(b);
        } else {
            self.ooo.push((a, b));
            self.ooo.sort();
        }
        // Merge what is now contiguous.
        let mut merged: Vec<(u64, u64)> = vec![];
        for &(x, y) in &self.ooo {
            if x <= self.rcv_nxt {
                self.rcv_nxt = self.rcv_nxt.max(y);
            } else if let Some(last) = merged.last_mut().filter(|l| x <= l.1) {
                last.1 = last.1.max(y);
            } else {
                merged.push((x, y));
            }
        }
        self.ooo = merged;
        let mut h = TcpHeader { ack: self.rcv_nxt, flags: F::ACK | if ece { F::ECE } else { 0 }, wnd: 4_000_000, ..Default::default() };
        for (k, &(x, y)) in self.ooo.iter().rev().take(h.sack.len()).enumerate() {
            h.sack[k] = (x, y);
            h.nsack = k as u8 + 1;
        }
        self.s.process(&h, self.now, &mut self.out);
        self.collect();
    }
}

/// The contract after every call, for any algorithm (docs/tcp.md): cwnd at least one segment and
/// bounded by what the connection could have grown it to (the initial window plus, per byte
/// delivered, at most one byte of slow start, one of NewReno's inflation and one of a model's
/// gain-2 window: 3 × the bytes sent, plus slack of 10 segments); after any congestion event a
/// window-based algorithm has set ssthresh (RFC 5681 eq. 4: at least 2 segments), never the
/// "unset" value; a pacing rate, when there is one, is positive and finite, and there is one
/// once an RTT is known.
fn check(n: &Net, iw: u64, what: &str) {
    let (s, st) = (&n.s, n.s.cc_state());
    let mss = st.mss;
    let ctx = || format!("{} after {what} at {}: cwnd {} ssthresh {} stats {:?}", s.cc_name(), n.now, s.cwnd(), s.ssthresh(), s.stats);
    assert!(s.cwnd() >= mss, "cwnd below one segment: {}", ctx());
    assert!(s.cwnd() <= iw * mss + 3 * n.sent + 10 * mss, "cwnd unbounded: {}", ctx());
    let events = s.stats.fast_recoveries + s.stats.timeouts + s.stats.ecn_reductions + s.stats.loss_probe_recoveries;
    if events > 0 && !s.cc().owns_cwnd() {
        assert!(s.ssthresh() < SSTHRESH_UNSET && s.ssthresh() >= 2 * mss, "ssthresh not set by the congestion event: {}", ctx());
    }
    if let Some(r) = s.pacing_rate() {
        assert!(r > 0.0 && r.is_finite(), "pacing rate {r}: {}", ctx());
    }
    if s.srtt().is_some() {
        assert!(s.pacing_rate().is_some(), "no pacing rate with an RTT known: {}", ctx());
    }
}

/// One random configuration of the switches that change the sender's cwnd paths.
fn random_cfg(name: &str, r: &mut Rng) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        iw: [1, 3, 10][(r.uniform() * 3.0) as usize],
        cc: name.into(),
        recovery: if r.uniform() < 0.7 { Recovery::Sack } else { Recovery::NewReno },
        prr: r.uniform() < 0.7,
        rack: r.uniform() < 0.6,
        tlp: r.uniform() < 0.6,
        timestamps: r.uniform() < 0.5,
        ecn: r.uniform() < 0.6,
        pacing: r.uniform() < 0.3,
        abc: if r.uniform() < 0.5 { None } else { Some(2) },
        delack: None,
        tsq: false,
        cc_seed: r.next_u64(),
        ..TcpConfig::default()
    }
}

/// Random ACK / loss / reordering / ECN-Echo / timeout sequences for every registered algorithm.
#[test]
fn every_algorithm_keeps_the_contract_under_random_events() {
    for reg in cc::registry() {
        // What the sequences reached, summed over seeds: each kind of event must have happened.
        let mut seen = [0u64; 6];
        for seed in 0..30u64 {
            let mut r = Rng::stream(seed, &format!("cc-contract:{}", reg.name));
            let cfg = random_cfg(reg.name, &mut r);
            let iw = cfg.iw as u64;
            let size = if r.uniform() < 0.3 { None } else { Some(20_000 + (r.uniform() * 2e6) as u64) };
            let (p_loss, p_ece) = (r.uniform() * 0.15, if cfg.ecn { r.uniform() * 0.3 } else { 0.0 });
            let mut n = Net::new(cfg, size);
            check(&n, iw, "the handshake");
            for step in 0..2_500 {
                let x = r.uniform();
                let what;
                if !n.path.is_empty() && x < 0.7 {
                    // The head of the path, or (reordering) any segment on it.
                    let i = if r.uniform() < 0.9 { 0 } else { (r.uniform() * n.path.len() as f64) as usize };
                    n.now += Time::from_us((r.uniform() * 2000.0) as u64);
                    let (lost, ece) = (r.uniform() < p_loss, r.uniform() < p_ece);
                    n.deliver(i, lost, ece);
                    what = if lost { "a loss" } else if ece { "an ECN-Echo ACK" } else { "an ACK" };
                } else if n.pace_at.is_some_and(|t| t <= n.now + Time::from_ms(5)) {
                    n.now = n.now.max(n.pace_at.unwrap());
                    n.pace_at = None;
                    n.s.on_pace(n.now, &mut n.out);
                    n.collect();
                    what = "the pacing timer";
                } else if let Some(t) = n.rto_at.filter(|_| n.path.is_empty() || x > 0.97) {
                    // The timer when due; with segments still on the path, it fired first (an
                    // outage), so they are lost.
                    n.now = n.now.max(t);
                    n.rto_at = None;
                    if x > 0.97 {
                        n.path.clear();
                    }
                    n.s.on_rto(n.now, &mut n.out);
                    n.collect();
                    what = "the timer";
                } else {
                    n.now += Time::from_ms(1 + (r.uniform() * 20.0) as u64);
                    what = "idle time";
                    if n.path.is_empty() && n.rto_at.is_none() && n.pace_at.is_none() {
                        break; // done (or stalled with nothing to do: the FIN acknowledged)
                    }
                }
                check(&n, iw, &format!("{what} (seed {seed}, step {step})"));
            }
            let st = &n.s.stats;
            for (k, x) in [st.fast_recoveries, st.timeouts, st.ecn_reductions, st.loss_probes, st.retransmits, st.bytes_acked].into_iter().enumerate() {
                seen[k] += x;
            }
        }
        eprintln!("{}: fast recoveries, timeouts, ECN reductions, loss probes, retransmits, bytes acked: {seen:?}", reg.name);
        assert!(seen.iter().all(|&x| x > 0), "{}: some event never happened: {seen:?}", reg.name);
    }
}

/// Two runs' tables equal column by column (every table, and the whole-run counters).
fn same(a: &Tables, b: &Tables) -> bool {
    a.tcp_flows == b.tcp_flows
        && a.media == b.media
        && a.queue_samples == b.queue_samples
        && a.tcp_series == b.tcp_series
        && (a.sent_bytes, a.delivered_bytes, a.dropped_bytes, a.in_flight_bytes, a.events, a.end_ns, a.tcp_start_ns, a.tcp_end_ns)
            == (b.sent_bytes, b.delivered_bytes, b.dropped_bytes, b.in_flight_bytes, b.events, b.end_ns, b.tcp_start_ns, b.tcp_end_ns)
}

fn scenario_with(tcp: Value) -> Value { scenario_q(tcp, json!({"kind": "droptail", "limit": "12pkt"})) }

fn scenario_q(tcp: Value, queue: Value) -> Value {
    let mut bulk = json!({"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "300kB", "start": "1s"});
    for (k, v) in tcp.as_object().unwrap() {
        bulk[k] = v.clone();
    }
    json!({
        "name": "cc-registry",
        "duration": "30s",
        "access": {
            "core_rate": "100Mbit", "core_delay": "5ms",
            "down_rate": "4Mbit", "down_delay": "10ms", "down_queue": queue,
            "up_rate": "1Mbit", "up_delay": "10ms"
        },
        "traffic": [bulk],
    })
}

/// Through a scenario, for every registered algorithm: the transfer completes, each payload byte
/// is sent new exactly once (new segments = ⌈size / SMSS⌉ with SMSS 1448, the default stack's MSS
/// 1460 less the timestamps option; the rest are retransmissions, at least one per data segment the
/// 12-packet queue dropped), and the same seed gives the same tables bit for bit.
#[test]
fn every_algorithm_through_a_scenario_keeps_the_counter_identities_and_is_deterministic() {
    for reg in cc::registry() {
        let v = scenario_with(json!({"cc": reg.name}));
        let t = scenario::run(&v, 7).unwrap_or_else(|e| panic!("{}: {e}", reg.name));
        let f = &t.tcp_flows;
        assert_eq!(f.cc, vec![reg.name.to_string()]);
        let size = 300_000u64;
        assert_eq!((f.bytes[0], f.bytes_acked[0], f.size[0]), (size, size, size as i64), "{}", reg.name);
        assert!(f.end_ns[0] > f.first_data_ns[0] && f.first_data_ns[0] > f.syn_ns[0], "{}", reg.name);
        assert_eq!(f.segments_sent[0] - f.retransmits[0], size.div_ceil(1448), "{}: new segments", reg.name);
        // `drops` counts every segment of the flow the network dropped (docs/tables.md), the close's
        // FIN too, and `retransmits` the data segments resent: with Linux's CUBIC the 12-packet queue
        // drops the pure FIN once (its resend carries no data), so one drop may go without a data
        // retransmission.
        assert!(f.drops[0] > 0 && f.retransmits[0] + 1 >= f.drops[0], "{}: {} drops, {} retransmits", reg.name, f.drops[0], f.retransmits[0]);
        assert!(same(&scenario::run(&v, 7).unwrap(), &t), "{}: not deterministic", reg.name);
    }
}

/// Every algorithm builds from an entry without its keys (its defaults); an unknown key, each of
/// its own keys given a value of the wrong type, and each of its keys given with another
/// algorithm are refused with the key's path.
#[test]
fn every_algorithm_refuses_bad_keys_naming_them() {
    let expand = |tcp: Value| scenario::expand(&scenario_with(tcp)).map_err(|e| e.to_string());
    for reg in cc::registry() {
        let x = expand(json!({"cc": reg.name})).unwrap_or_else(|e| panic!("{}: {e}", reg.name));
        let tcp = &x["traffic"][0]["tcp"];
        assert_eq!(tcp["cc"], reg.name);
        for k in reg.keys {
            assert!(tcp.get(*k).is_some(), "{}: the expanded tcp block lacks its key {k}: {tcp}", reg.name);
            let e = expand(json!({"cc": reg.name, *k: "not-a-number"})).expect_err(k);
            assert!(e.starts_with(&format!("traffic[0].{k}:")), "{}: {e}", reg.name);
            for other in cc::registry().into_iter().filter(|o| !o.keys.contains(k)) {
                let e = expand(json!({"cc": other.name, *k: tcp[*k].clone()})).expect_err(k);
                assert_eq!(e, format!("traffic[0].{k}: only with cc = {:?}, not {:?}", reg.name, other.name));
            }
        }
        let e = expand(json!({"cc": reg.name, "cc_colour": "red"})).expect_err("unknown key");
        assert!(e.starts_with("traffic[0].cc_colour: unknown key"), "{}: {e}", reg.name);
    }
}

/// DCTCP's own keys (its file, `dctcp.rs`): Linux's module parameters with their ranges, and its
/// ECN default (ECT(1)) unless the entry says otherwise.
#[test]
fn dctcp_reads_its_own_keys_and_ecn_default() {
    let expand = |tcp: Value| scenario::expand(&scenario_with(tcp)).map_err(|e| e.to_string());
    let x = expand(json!({"cc": "dctcp", "dctcp_shift_g": 6})).unwrap();
    let tcp = &x["traffic"][0]["tcp"];
    assert_eq!((tcp["dctcp_shift_g"].clone(), tcp["dctcp_alpha_on_init"].clone(), tcp["ecn"].clone()), (json!(6), json!(1024), json!("ect1")));
    assert_eq!(expand(json!({"cc": "dctcp", "ecn": false})).unwrap()["traffic"][0]["tcp"]["ecn"], "off");
    assert_eq!(expand(json!({"cc": "reno"})).unwrap()["traffic"][0]["tcp"]["ecn"], "off");
    assert_eq!(expand(json!({"cc": "dctcp", "dctcp_shift_g": 11})).unwrap_err(), "traffic[0].dctcp_shift_g: must be 0..=10 (g = 1/2^shift), got 11");
    assert_eq!(expand(json!({"cc": "dctcp", "dctcp_alpha_on_init": 1025})).unwrap_err(), "traffic[0].dctcp_alpha_on_init: must be 0..=1024 (1024 = α of 1), got 1025");
    // The options reach the algorithm: behind a CE-marking CoDel, g = 1/2^6 instead of 1/16
    // moves the run; g = 1/16 given is the default.
    let codel = json!({"kind": "codel", "ecn": true, "limit": "100pkt"});
    let run = |tcp: Value| scenario::run(&scenario_q(tcp, codel.clone()), 3).unwrap();
    let dflt = run(json!({"cc": "dctcp"}));
    assert!(dflt.tcp_flows.ecn_marks[0] > 0, "no CE marks to react to");
    assert!(same(&run(json!({"cc": "dctcp", "dctcp_shift_g": 4})), &dflt), "the default is g = 1/16");
    assert_ne!(run(json!({"cc": "dctcp", "dctcp_shift_g": 6})).tcp_flows, dflt.tcp_flows, "g = 1/64 changes nothing");
}
