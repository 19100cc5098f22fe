//! TCP on the simulator: the Done-when checks of the TCP issue, each against a number derived by
//! hand from the path (see the comment of each test).
mod common;
use common::*;
use jitterlab_sim::record::NULL_NS;
use jitterlab_sim::tcp::{Recovery, TcpConfig};
use jitterlab_sim::Time;

const MSS: u32 = 1460;
const PKT: u64 = 1500;
const ACK: u64 = 40;

fn data_arrivals(log: &[Arrival]) -> Vec<Arrival> { log.iter().filter(|a| a.len > 0).cloned().collect() }

/// Lossless, no delayed ACKs, IW10, 70 segments over 10 Mbit/s and 100 ms: the transfer takes
/// the handshake (one SYN round trip) and three slow-start rounds of 10, 20 and 40 segments. The
/// bottleneck never fills a round trip (40 × 1.2 ms < 100 ms), so each round ends one data round
/// trip after it starts plus the serialisation of the round's other segments:
/// end = RTT_syn + 3·RTT_data + 39·T, T = 1500 B at 10 Mbit/s.
#[test]
fn lossless_transfer_takes_handshake_plus_slow_start_rounds() {
    let path = Path::default();
    let start = Time::from_ms(10);
    let run = build(&path, reno(MSS, 10), Some(70 * MSS as u64), start, pass());
    let (t, _) = run_to_end(run, Time::from_secs(5));
    let f = &t.tcp_flows;
    let rtt_syn = path.rtt(ACK, ACK);
    let rtt_data = path.rtt(PKT, ACK);
    let ser = path.rate.tx_time(PKT);
    assert_eq!(f.syn_ns[0], start.ns() as i64);
    assert_eq!(f.first_data_ns[0], (start + rtt_syn).ns() as i64);
    let expect = start + rtt_syn + rtt_data.mul(3) + ser.mul(39);
    let got = f.end_ns[0];
    assert!((got - expect.ns() as i64).abs() <= 100, "end {got} vs expected {}", expect.ns());
    assert_eq!(f.retransmits[0], 0);
    assert_eq!(f.segments_sent[0], 70);
    assert_eq!(f.bytes_acked[0], 70 * MSS as u64);
    assert_eq!(f.drops[0], 0);
    assert_eq!(t.tcp_start_ns, start.ns() as i64);
    assert_eq!(t.tcp_end_ns, got);
}

/// A 2 MB transfer saturates the link: after the ramp the bottleneck is never idle, so the end lies
/// between (all segments serialised back to back after the first data round trip) and that plus
/// the slow-start ramp (log2(BDP/IW) + 1 round trips).
#[test]
fn saturated_transfer_is_serialisation_bound() {
    let path = Path { delay: Time::from_ms(10), ..Path::default() };
    let n = 1400u64;
    let run = build(&path, reno(MSS, 10), Some(n * MSS as u64), Time::ZERO, pass());
    let (t, _) = run_to_end(run, Time::from_secs(20));
    let f = &t.tcp_flows;
    let rtt_data = path.rtt(PKT, ACK);
    let ser = path.rate.tx_time(PKT);
    let lower = Time(f.first_data_ns[0] as u64) + ser.mul(n) + rtt_data - ser;
    let bdp_pkts = (rtt_data.ns() / ser.ns()) as f64;
    let ramp_rounds = (bdp_pkts / 10.0).log2().ceil() as u64 + 1;
    let upper = lower + rtt_data.mul(ramp_rounds);
    let end = Time(f.end_ns[0] as u64);
    assert!(end >= lower && end <= upper, "{end:?} not in [{lower:?}, {upper:?}]");
    assert_eq!(f.retransmits[0], 0);
}

/// The initial window leaves the sender back to back: IW segments reach the bottleneck queue
/// spaced by the access serialisation time (1500 B at 1 Gbit/s = 12 µs), the queue holds IW − 1
/// (one is on the wire), and the next data arrives one round trip later.
#[test]
fn initial_window_burst_reaches_the_queue() {
    for iw in [3u32, 10] {
        let path = Path::default();
        let run = build(&path, reno(MSS, iw), Some(200 * MSS as u64), Time::ZERO, pass());
        let (_, log) = run_to_end(run, Time::from_secs(5));
        let d = data_arrivals(&log.borrow());
        let acc = path.access_rate.tx_time(PKT);
        for i in 1..iw as usize {
            assert_eq!(d[i].t - d[i - 1].t, acc, "iw {iw}: segment {i} not back to back");
        }
        assert_eq!(d[iw as usize - 1].backlog, iw as usize - 1, "iw {iw}");
        let gap = d[iw as usize].t - d[0].t;
        assert!(gap >= path.rtt(PKT, ACK), "iw {iw}: segment {} came after {gap:?}", iw + 1);
        let first_round_max = d.iter().take(iw as usize).map(|a| a.backlog).max().unwrap();
        assert_eq!(first_round_max, iw as usize - 1);
    }
}

/// One loss in congestion avoidance is repaired by fast retransmit (SACK recovery): one
/// retransmission, no timeout, and cwnd = ssthresh = FlightSize/2 on entering recovery.
#[test]
fn single_loss_triggers_fast_retransmit_not_timeout() {
    for recovery in [Recovery::Sack, Recovery::NewReno] {
        let path = Path::default();
        let cfg = TcpConfig { recovery, initial_ssthresh: 20 * MSS as u64, ..reno(MSS, 10) };
        let run = build(&path, cfg, Some(300 * MSS as u64), Time::ZERO, drop_segs(MSS, vec![(100, 0)]));
        let (t, _) = run_to_end(run, Time::from_secs(20));
        let f = &t.tcp_flows;
        assert_eq!(f.retransmits[0], 1, "{recovery:?}");
        assert_eq!(f.timeouts[0], 0, "{recovery:?}");
        assert_eq!(f.drops[0], 1);
        assert_ne!(f.end_ns[0], NULL_NS);
        // The first reduction: ssthresh falls from 20 MSS to half the flight size at that time.
        let s = series(&t);
        let i = s.iter().position(|r| r.2 < 20 * MSS as u64).expect("a reduction");
        let before = s[i - 1].1; // cwnd just before (≈ FlightSize: the sender is cwnd-limited)
        let ss = s[i].2;
        assert!((ss as f64 - before as f64 / 2.0).abs() <= MSS as f64, "{recovery:?}: ssthresh {ss} vs cwnd before {before}");
    }
}

/// Three losses in one window: SACK recovery repairs all in one episode without a timeout.
#[test]
fn several_losses_in_one_window_sack() {
    let path = Path::default();
    let cfg = TcpConfig { initial_ssthresh: 30 * MSS as u64, ..reno(MSS, 10) };
    let run = build(&path, cfg, Some(300 * MSS as u64), Time::ZERO, drop_segs(MSS, vec![(100, 0), (103, 0), (107, 0)]));
    let (t, _) = run_to_end(run, Time::from_secs(20));
    let f = &t.tcp_flows;
    assert_eq!(f.retransmits[0], 3);
    assert_eq!(f.timeouts[0], 0);
    let s = series(&t);
    let reductions = s.windows(2).filter(|w| w[1].2 < w[0].2).count();
    assert_eq!(reductions, 1, "one window reduction per window of losses");
}

/// A lost retransmission cannot be repaired by SACK recovery as RFC 6675 specifies it (no
/// detection for it): the retransmission timer fires once.
#[test]
fn lost_retransmission_triggers_rto() {
    let path = Path::default();
    let cfg = TcpConfig { initial_ssthresh: 20 * MSS as u64, lost_retransmit: false, ..reno(MSS, 10) };
    let run = build(&path, cfg, Some(300 * MSS as u64), Time::ZERO, drop_segs(MSS, vec![(100, 0), (100, 1)]));
    let (t, log) = run_to_end(run, Time::from_secs(30));
    let f = &t.tcp_flows;
    assert_eq!(f.timeouts[0], 1);
    assert_ne!(f.end_ns[0], NULL_NS);
    // The second retransmission comes at least one RTO (≥ 200 ms min RTO) after the first.
    let seq = 1 + 100 * MSS as u64;
    let tx: Vec<Time> = log.borrow().iter().filter(|a| a.seq == seq && a.len > 0).map(|a| a.t).collect();
    assert_eq!(tx.len(), 3);
    assert!(tx[2] - tx[1] >= Time::from_ms(200), "{:?}", tx);
}

/// With Linux's lost-retransmission detection (the default), the same loss is repaired within
/// recovery: new data sent after the retransmission is SACKed, which shows the retransmission was
/// lost, and it goes out again about one round trip later, without a timeout.
#[test]
fn lost_retransmission_detected_from_sack() {
    let path = Path::default();
    let cfg = TcpConfig { initial_ssthresh: 20 * MSS as u64, ..reno(MSS, 10) };
    assert!(cfg.lost_retransmit);
    let run = build(&path, cfg, Some(300 * MSS as u64), Time::ZERO, drop_segs(MSS, vec![(100, 0), (100, 1)]));
    let (t, log) = run_to_end(run, Time::from_secs(30));
    let f = &t.tcp_flows;
    assert_eq!(f.timeouts[0], 0);
    assert_eq!(f.retransmits[0], 2);
    let seq = 1 + 100 * MSS as u64;
    let tx: Vec<Time> = log.borrow().iter().filter(|a| a.seq == seq && a.len > 0).map(|a| a.t).collect();
    assert_eq!(tx.len(), 3);
    let rtt = path.rtt(PKT, ACK);
    assert!(tx[2] - tx[1] >= rtt && tx[2] - tx[1] < rtt + Time::from_ms(20), "{:?}", tx);
}

/// Losing the last segment leaves no later data to produce duplicate ACKs: the RTO repairs it,
/// one RTO (here the 200 ms floor, since SRTT + 4·RTTVAR < 200 ms is false: RTT ≈ 101 ms →
/// RTO ≥ 200 ms) after the last transmission.
#[test]
fn tail_loss_triggers_rto() {
    let path = Path::default();
    let n = 30u64;
    let run = build(&path, reno(MSS, 10), Some(n * MSS as u64), Time::ZERO, drop_segs(MSS, vec![(n - 1, 0)]));
    let (t, log) = run_to_end(run, Time::from_secs(30));
    let f = &t.tcp_flows;
    assert_eq!(f.timeouts[0], 1);
    assert_eq!(f.retransmits[0], 1);
    let seq = 1 + (n - 1) * MSS as u64;
    let tx: Vec<Time> = log.borrow().iter().filter(|a| a.seq == seq && a.len > 0).map(|a| a.t).collect();
    assert_eq!(tx.len(), 2);
    assert!(tx[1] - tx[0] >= Time::from_ms(200));
    assert!(tx[1] - tx[0] < Time::from_ms(1000));
}

/// A lost SYN is resent after the initial RTO of 1 s (RFC 6298 §2.1), and the sender then starts
/// with one segment (RFC 5681 §3.1).
#[test]
fn lost_syn_waits_initial_rto() {
    let path = Path::default();
    let run = build_syn_drop(&path, pass());
    let (t, log) = run_to_end(run, Time::from_secs(10));
    let f = &t.tcp_flows;
    let rtt_syn = path.rtt(ACK, ACK);
    assert_eq!(f.first_data_ns[0], (Time::from_secs(1) + rtt_syn).ns() as i64);
    let d = data_arrivals(&log.borrow());
    // IW = 1 after the lost SYN: the second data segment comes a round trip later.
    assert!(d[1].t - d[0].t >= path.rtt(PKT, ACK));
}

fn build_syn_drop(path: &Path, rule: Rule) -> Run {
    // The probe's rules see data segments only; wrap the bottleneck queue to drop the first SYN.
    let mut run = build(path, reno(MSS, 10), Some(20 * MSS as u64), Time::ZERO, rule);
    let ch = run.sim.channel_id("bottleneck").unwrap();
    let q = std::mem::replace(&mut run.sim.channel_mut(ch).qdisc, Box::new(jitterlab_sim::qdisc::droptail::DropTail::new(jitterlab_sim::qdisc::droptail::Limit::Packets(1))));
    run.sim.channel_mut(ch).qdisc = Box::new(SynDropper { inner: q, dropped: false });
    run
}

struct SynDropper {
    inner: Box<dyn jitterlab_sim::qdisc::Qdisc>,
    dropped: bool,
}

impl jitterlab_sim::qdisc::Qdisc for SynDropper {
    fn enqueue(&mut self, id: jitterlab_sim::packet::PktId, pool: &mut jitterlab_sim::packet::PacketPool, now: Time, d: &mut Vec<jitterlab_sim::qdisc::QueuedDrop>) -> jitterlab_sim::qdisc::Verdict {
        if let jitterlab_sim::Body::Tcp(h) = &pool.get(id).body {
            if h.flags & jitterlab_sim::packet::tcp_flags::SYN != 0 && !self.dropped {
                self.dropped = true;
                return jitterlab_sim::qdisc::Verdict::Dropped(jitterlab_sim::qdisc::DropReason::Early);
            }
        }
        self.inner.enqueue(id, pool, now, d)
    }
    fn dequeue(&mut self, pool: &mut jitterlab_sim::packet::PacketPool, now: Time, d: &mut Vec<jitterlab_sim::qdisc::QueuedDrop>) -> Option<jitterlab_sim::packet::PktId> { self.inner.dequeue(pool, now, d) }
    fn peek(&self) -> Option<jitterlab_sim::packet::PktId> { self.inner.peek() }
    fn backlog_pkts(&self) -> usize { self.inner.backlog_pkts() }
    fn backlog_bytes(&self) -> u64 { self.inner.backlog_bytes() }
    fn stats(&self) -> &jitterlab_sim::qdisc::QueueStats { self.inner.stats() }
    fn kind(&self) -> &'static str { "syn-dropper" }
}

/// An ECN mark halves cwnd once per window and causes no loss or retransmission: two marks in the
/// same window give one reduction; a mark a window later gives a second one.
#[test]
fn ecn_mark_halves_cwnd_once_per_window() {
    let path = Path::default();
    let cfg = TcpConfig { ecn: true, initial_ssthresh: 40 * MSS as u64, ..reno(MSS, 10) };
    let marks = [150u64, 152, 400];
    let rule: Rule = Box::new(move |seq, _, n| if n == 0 && marks.contains(&((seq - 1) / MSS as u64)) { Fate::Mark } else { Fate::Pass });
    let run = build(&path, cfg, Some(600 * MSS as u64), Time::ZERO, rule);
    let (t, _) = run_to_end(run, Time::from_secs(30));
    let f = &t.tcp_flows;
    assert_eq!(f.retransmits[0], 0);
    assert_eq!(f.drops[0], 0);
    assert_eq!(f.ecn_marks[0], 2);
    let s = series(&t);
    let red: Vec<usize> = (1..s.len()).filter(|&i| s[i].1 < s[i - 1].1).collect();
    assert_eq!(red.len(), 2, "cwnd decreased {} times", red.len());
    for &i in &red {
        let (before, after) = (s[i - 1].1, s[i].1);
        assert!((after as f64 - before as f64 / 2.0).abs() <= MSS as f64, "cwnd {before} -> {after}");
    }
}

/// The receiver's advertised window caps the bytes in flight: with a 10-segment buffer on a path of
/// ~85 segments' BDP, in-flight never exceeds the buffer and the rate is rcvbuf per round trip.
#[test]
fn advertised_window_caps_bytes_in_flight() {
    let path = Path::default();
    let rcvbuf = 10 * MSS as u64;
    let cfg = TcpConfig { rcvbuf, ..reno(MSS, 10) };
    let n = 200u64;
    let run = build(&path, cfg, Some(n * MSS as u64), Time::ZERO, pass());
    let (t, log) = run_to_end(run, Time::from_secs(30));
    let s = series(&t);
    // The FIN takes one sequence number beyond the last payload byte (it needs no window).
    let max_inflight = s.iter().map(|r| r.3).max().unwrap();
    assert!(max_inflight == rcvbuf || max_inflight == rcvbuf + 1, "{max_inflight}");
    assert!(s.iter().filter(|r| r.3 > rcvbuf).count() <= 2);
    let max_q = log.borrow().iter().map(|a| a.backlog).max().unwrap();
    assert!(max_q <= 10);
    // 20 windows of 10 segments, one data round trip each (+ the last window's serialisation).
    let f = &t.tcp_flows;
    let dur = Time((f.end_ns[0] - f.first_data_ns[0]) as u64);
    let rtt = path.rtt(PKT, ACK);
    let expect = rtt.mul(20) + path.rate.tx_time(PKT).mul(9);
    assert!(dur.ns().abs_diff(expect.ns()) < Time::from_ms(2).ns(), "{dur:?} vs {expect:?}");
}

/// Delayed ACKs: one ACK per two segments on a lossless path: SYN-ACK + ⌈101/2⌉ + FIN-ACK = 53
/// ACKs (an odd segment waits for its partner or the 40 ms timer). With Linux's quick-ACK mode the
/// first 16 segments are each ACKed: 1 + 16 + ⌈85/2⌉ + 1 = 61.
#[test]
fn delayed_acks_every_second_segment() {
    for (quickack, expect) in [(0u32, 53u64), (16, 61)] {
        let path = Path::default();
        let cfg = TcpConfig { delack: Some(Time::from_ms(40)), quickack, ..reno(MSS, 10) };
        let mut run = build(&path, cfg, Some(101 * MSS as u64), Time::ZERO, pass());
        let rid = run.conn.receiver;
        run.sim.run_until(Time::from_secs(10));
        let acks = run.sim.agent_as::<jitterlab_sim::tcp::TcpReceiverAgent>(rid).unwrap().core.stats.acks_sent;
        assert_eq!(acks, expect, "quickack {quickack}");
        let t = run.sim.finish();
        assert_ne!(t.tcp_flows.end_ns[0], NULL_NS);
    }
}

/// Same seed, same tables; and the engine's conservation identity holds.
#[test]
fn deterministic() {
    let mk = || {
        let path = Path { limit: 20, ..Path::default() };
        let run = build(&path, TcpConfig { series: true, ..TcpConfig::default() }, Some(2_000_000), Time::ZERO, pass());
        run_to_end(run, Time::from_secs(30)).0
    };
    let (a, b) = (mk(), mk());
    assert_eq!(a.tcp_flows, b.tcp_flows);
    assert_eq!(a.tcp_series, b.tcp_series);
    assert!(a.tcp_flows.drops[0] > 0, "the 20-packet queue should overflow");
    assert_ne!(a.tcp_flows.end_ns[0], NULL_NS);
}
