//! L4S end to end: DCTCP behind DualPI2's step (RFC 8257 §4 and the DCTCP paper's queue
//! analysis) and DualPI2's coupling between a Classic CUBIC flow and a DCTCP flow (RFC 9332 §2.1).
//! The scenarios are scenarios/l4s-dctcp-step.toml and scenarios/l4s-coupled.toml as JSON.
use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;
use serde_json::{json, Value};

/// Payload bytes of a full 1500-byte segment: MSS 1460 less the timestamps option (12 B).
const PAYLOAD: f64 = 1448.0;

fn pct(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn mean(v: &[f64]) -> f64 { v.iter().sum::<f64>() / v.len() as f64 }

/// A flow's srtt samples (ms) after `from_ns`.
fn srtt_ms(t: &Tables, flow: u32, from_ns: i64) -> Vec<f64> {
    let s = &t.tcp_series;
    (0..s.t_ns.len()).filter(|&i| s.flow_id[i] == flow && s.t_ns[i] >= from_ns && s.srtt_ns[i] > 0).map(|i| s.srtt_ns[i] as f64 / 1e6).collect()
}

/// 100 Mbit/s, 4 ms bottleneck, 0.5 ms access links: base RTT 2·(4 + 2·0.5) = 10 ms plus
/// serialisation; the DualPI2 step at 1 ms is K = 1 ms · 100 Mbit/s / 12 000 bit = 8.33 packets.
/// `push_ack = false`: the sawtooth below is the paper's, with an ACK every second segment; Linux
/// 6.6's ACK of a lone PSH segment (the default profile) roughly doubles the ACK rate here and the
/// flow then reacts about 2.4 times as often in smaller steps (323 reductions in 10 s).
fn step_scenario(cc: &str) -> Value {
    json!({
        "name": "l4s-dctcp-step", "duration": "10s",
        "dumbbell": {"pairs": 1, "bottleneck_rate": "100Mbit", "bottleneck_delay": "4ms", "queue": {"kind": "dualpi2"}, "access_rate": "1Gbit", "access_delay": "500us"},
        "traffic": [{"kind": "ftp", "name": "bulk", "from": "s1", "to": "d1", "cc": cc, "ecn": "l4s", "push_ack": false}],
        "output": {"queue_sample_interval": "1ms", "queues": ["bottleneck"]}
    })
}

/// One DCTCP flow alone in the L queue: a step-marking queue with threshold K. The DCTCP paper
/// (Alizadeh et al. 2010, §3.3; RFC 8257 §4) gives for N flows a sawtooth of the queue between
/// Q_max = K + N and Q_max − A, A = ½·√(2N(C·RTT + K)) packets, and a period of A round trips
/// (the window grows one segment per RTT and falls by A). Here C·RTT = 100 Mbit/s · 10.1 ms /
/// 12 000 bit = 84.2, so A = ½·√(2·92.5) = 6.8, Q_max = 9.3, mean ≈ Q_max − A/2 = 5.9 packets, and
/// Q_min = 2.5 > 0: the link never idles. Reno with the same marks halves its window (β = ½ of
/// ~92 packets ≫ the 8-packet queue), so the queue runs dry and the link idles.
#[test]
fn dctcp_holds_the_queue_at_the_step() {
    let (k, n): (f64, f64) = (100e6 * 1e-3 / 12_000.0, 1.0);
    let bdp = 100e6 * 0.0101 / 12_000.0;
    let a = 0.5 * (2.0 * n * (bdp + k)).sqrt();
    let qmax = k + n;
    let t = scenario::run(&step_scenario("dctcp"), 1).unwrap();
    t.check_conservation().unwrap();
    let f = &t.tcp_flows;
    assert_eq!(f.cc[0], "dctcp");
    assert_eq!(f.retransmits[0], 0, "marks, no loss");
    let q = &t.queue_samples;
    let b: Vec<f64> = (0..q.t_ns.len()).filter(|&i| q.t_ns[i] > 2_000_000_000).map(|i| q.backlog_pkts[i] as f64).collect();
    let m = mean(&b);
    assert!((m - (qmax - a / 2.0)).abs() < 1.5, "mean queue {m} pkts vs sawtooth midpoint {}", qmax - a / 2.0);
    assert!(pct(&b, 0.99) <= qmax.ceil() + 1.0, "p99 {} pkts vs Q_max {qmax}", pct(&b, 0.99));
    let idle = b.iter().filter(|&&x| x == 0.0).count() as f64 / b.len() as f64;
    assert!(idle < 0.01, "queue empty {idle} of the time");
    // Goodput: 100 Mbit/s · 1448/1500 (MSS 1460 less the 12-byte timestamps option, on by
    // default as in Linux) = 12.07 MB/s; 10 s minus slow start (< 0.3 s) ≥ 96 %.
    let cap = 100e6 / 8.0 * PAYLOAD / 1500.0 * 10.0;
    assert!(f.bytes_acked[0] as f64 > 0.96 * cap, "{} of {cap}", f.bytes_acked[0]);
    // Window reductions: one per sawtooth period of A round trips, over 10 s of ~11 ms RTTs.
    let periods = 10.0 / 0.011 / a;
    let red = f.ecn_marks[0] as f64;
    assert!(red > 0.7 * periods && red < 1.5 * periods, "{red} reductions vs {periods:.0} periods");
    // Classic ECN (Reno halving on the same marks) under-uses the link and idles the queue.
    let r = scenario::run(&step_scenario("reno"), 1).unwrap();
    let rb: Vec<f64> = (0..r.queue_samples.t_ns.len()).filter(|&i| r.queue_samples.t_ns[i] > 2_000_000_000).map(|i| r.queue_samples.backlog_pkts[i] as f64).collect();
    assert!(rb.iter().filter(|&&x| x == 0.0).count() as f64 / rb.len() as f64 > 0.2);
    assert!((r.tcp_flows.bytes_acked[0] as f64) < 0.85 * cap);
}

/// Two senders over a 40 Mbit/s, 20 ms DualPI2 bottleneck (base RTT 2·(20 + 2·0.5) = 42 ms plus
/// 0.33 ms of serialisation): a CUBIC flow (Not-ECT, C queue) and a DCTCP flow (ECT(1), L queue).
fn coupled_scenario() -> Value {
    json!({
        "name": "l4s-coupled", "duration": "40s",
        "dumbbell": {"pairs": 2, "bottleneck_rate": "40Mbit", "bottleneck_delay": "20ms", "queue": {"kind": "dualpi2"}, "access_rate": "1Gbit", "access_delay": "500us"},
        "traffic": [{"kind": "ftp", "name": "classic", "from": "s1", "to": "d1", "cc": "cubic", "series": true},
                    {"kind": "ftp", "name": "l4s", "from": "s2", "to": "d2", "cc": "dctcp", "series": true}]
    })
}

/// RFC 9332 §2.1: with p_C = p'^2 and p_L = k·p', a Reno-like flow's window 1.22/√p_C = 1.22/p'
/// and a DCTCP window 2/p_L = 1/p' (k = 2) are about equal; CUBIC at this BDP and drop rate
/// (p_C ~ 5e-4 > the ~8e-5 below which its cubic mode takes over) runs in its Reno-friendly
/// region, with Reno's window. Rates divide windows by each flow's RTT: the C flow's includes the
/// Classic queue, so the expected rate ratio is 1.22·RTT_L/RTT_C ≈ 1.22·43/53 ≈ 1.0. One CUBIC
/// flow's sawtooth keeps p' swinging (it sits at 0 while the C queue drains), which moves a 40-s
/// run by ±30 %: each seed must stay within a factor 2 of equality, their mean within ±40 %.
/// Meanwhile the L flow's queue delay stays at the 1 ms step (its RTT within 2 ms of the base)
/// and the C flow's near PI2's 15 ms target (below it on average: p' cannot go under 0).
#[test]
fn coupling_balances_cubic_and_dctcp() {
    let base = 42.33;
    let mut ratios = vec![];
    for seed in 1..=4 {
        let t = scenario::run(&coupled_scenario(), seed).unwrap();
        t.check_conservation().unwrap();
        let f = &t.tcp_flows;
        assert_eq!((f.cc[0].as_str(), f.cc[1].as_str()), ("cubic", "dctcp"));
        assert_eq!(f.retransmits[1], 0, "the L flow sees marks, not drops");
        assert!(f.retransmits[0] > 0, "the Not-ECT C flow sees drops");
        let total = (f.bytes_acked[0] + f.bytes_acked[1]) as f64;
        assert!(total > 0.95 * 40e6 / 8.0 * PAYLOAD / 1500.0 * 40.0, "link full: {total}");
        let ratio = f.bytes_acked[0] as f64 / f.bytes_acked[1] as f64;
        assert!((0.5..=2.0).contains(&ratio), "seed {seed}: CUBIC/DCTCP = {ratio}");
        ratios.push(ratio);
        let qc = mean(&srtt_ms(&t, f.flow_id[0], 5_000_000_000)) - base;
        let ql = mean(&srtt_ms(&t, f.flow_id[1], 5_000_000_000)) - base;
        assert!(ql > 0.0 && ql < 2.0, "seed {seed}: L queue delay {ql} ms");
        assert!(qc > 5.0 && qc < 20.0, "seed {seed}: C queue delay {qc} ms");
    }
    let m = mean(&ratios);
    assert!((m - 1.0).abs() < 0.4, "mean CUBIC/DCTCP {m} ({ratios:?})");
}

/// The receiver's echo through `Receiver` (the hook in receiver.rs), delayed ACKs every second
/// segment, no quick-ACK mode. CE pattern of seven 1000-byte segments: 0 0 0 1 1 1 0.
/// DCTCP (RFC 8257 §3.2): ACK 2001 (ECE 0) for the first pair; segment 3 waits; segment 4 changes
/// the state, so segment 3 is flushed first (ACK 3001, ECE 0) and segment 4 acknowledged at once
/// (ACK 4001, ECE 1); segments 5-6 make a pair (ACK 6001, ECE 1); segment 7 changes back with
/// nothing pending: ACK 7001, ECE 0 at once. Every marked byte is echoed, no unmarked one.
/// RFC 3168 instead: the first CE is ACKed at once with ECE and ECE stays on (no CWR here).
#[test]
fn receiver_echo_dctcp_vs_classic() {
    use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
    use jitterlab_sim::tcp::receiver::{Receiver, RecvOutput};
    use jitterlab_sim::tcp::TcpConfig;
    use jitterlab_sim::Time;
    let run = |cc: &str| -> Vec<(u64, bool)> {
        let cfg = TcpConfig { cc: cc.into(), ecn: true, ect1: true, quickack: 0, mss: 1000, ..TcpConfig::default() };
        let mut r = Receiver::new(cfg, 0, None);
        let mut out = RecvOutput::default();
        let t = Time::from_ms(1);
        r.process(&TcpHeader { seq: 0, flags: F::SYN | F::ECE | F::CWR, ..Default::default() }, false, t, &mut out);
        assert!(out.segs[0].flags & F::ECE != 0, "ECN-setup SYN-ACK");
        r.process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, ..Default::default() }, false, t, &mut out);
        out.segs.clear();
        for (i, ce) in [false, false, false, true, true, true, false].into_iter().enumerate() {
            let h = TcpHeader { seq: 1 + 1000 * i as u64, ack: 1, flags: F::ACK, len: 1000, ..Default::default() };
            r.process(&h, ce, t, &mut out);
        }
        out.segs.iter().map(|h| (h.ack, h.flags & F::ECE != 0)).collect()
    };
    assert_eq!(run("dctcp"), vec![(2001, false), (3001, false), (4001, true), (6001, true), (7001, false)]);
    assert_eq!(run("reno"), vec![(2001, false), (4001, true), (6001, true)]);
}
