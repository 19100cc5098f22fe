//! RACK-TLP (RFC 8985, as Linux) and the TCP timestamps option (RFC 7323) in virtual time: the
//! sender core driven by hand (the test plays the network), the sender and receiver cores joined
//! by a fixed delay, and one engine run on the PAM 2013-like fixed path. Every expected time is
//! computed in the comment above it.
mod common;

use common::{pass, path_sim, Path};
use jitterlab_sim::packet::{tcp_flags as F, Body, TcpHeader};
use jitterlab_sim::tcp::rack::{PTO_SRTT_FACTOR, REO_WND_DIVISOR, TIMEOUT_MIN};
use jitterlab_sim::tcp::receiver::{RecvOutput, Receiver};
use jitterlab_sim::tcp::sender::{CaState, Output, Sender, State};
use jitterlab_sim::tcp::timers::TimerKind;
use jitterlab_sim::tcp::{add_connection, ConnSpec, TcpConfig, TimerCmd};
use jitterlab_sim::{Rate, Time};

const MSS: u64 = 1000;

fn ms(x: u64) -> Time { Time::from_ms(x) }

struct T {
    s: Sender,
    now: Time,
    out: Output,
}

impl T {
    /// Connected after a SYN round trip of `rtt`, the SYN-ACK offering `wnd` bytes.
    fn established(cfg: TcpConfig, rtt: Time, wnd: u64) -> T {
        let mut t = T { s: Sender::new(cfg, None), now: Time::ZERO, out: Output::default() };
        t.s.connect(t.now, &mut t.out);
        t.out.segs.clear();
        t.now = rtt;
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd, wscale: Some(0), ..Default::default() };
        t.s.process(&synack, t.now, &mut t.out);
        assert_eq!(t.s.state, State::Established);
        t
    }
    /// Segment indices (seq = 1 + i·MSS) sent since the last call.
    fn take(&mut self) -> Vec<u64> { self.out.segs.drain(..).filter(|g| g.hdr.len > 0).map(|g| (g.hdr.seq - 1) / MSS).collect() }
    /// An ACK below segment `upto` with SACK blocks [a, b) in segment indices, window `wnd`.
    fn ack(&mut self, upto: u64, sacks: &[(u64, u64)], wnd: u64) {
        let mut h = TcpHeader { ack: 1 + upto * MSS, flags: F::ACK, wnd, ..Default::default() };
        for (i, &(a, b)) in sacks.iter().enumerate() {
            h.sack[i] = (1 + a * MSS, 1 + b * MSS);
        }
        h.nsack = sacks.len() as u8;
        self.s.process(&h, self.now, &mut self.out);
    }
    /// Advances to the pending timer (which must be of `kind`) and fires it.
    fn fire(&mut self, kind: TimerKind) -> Time {
        let (k, at) = self.s.pending_timer().expect("a timer is pending");
        assert_eq!(k, kind);
        self.now = at;
        self.s.on_rto(self.now, &mut self.out);
        at
    }
}

/// Reno, RACK on, no timestamps (whole-MSS payload), no TCP Small Queues (no host here), ACK
/// every segment. `tlp` as given.
fn cfg(tlp: bool) -> TcpConfig {
    TcpConfig { mss: MSS as u32, iw: 10, cc: "reno".into(), delack: None, tsq: false, rack: true, tlp, timestamps: false, ..TcpConfig::default() }
}

/// A single loss found by RACK exactly when the reordering window has passed. SYN RTT 100 ms, so
/// SRTT = min_rtt = 100 ms; the peer's window (3 segments) stops the sender at segments 0, 1, 2,
/// all sent at 100 ms. Segment 0 is lost; the SACK of segment 1 arrives at 200 ms: RACK.rtt =
/// 100 ms, and with one segment SACKed (below DupThresh) and no reordering seen the window is
/// min_rtt/4 = 25 ms (Linux's `tcp_rack_reo_wnd`). Segment 0, sent before segment 1 in the same
/// instant, is due at 100 + 100 + 25 = 225 ms; the reordering timer is armed for then plus
/// Linux's `TCP_TIMEOUT_MIN_US` (2 ms): 227 ms. Then segment 0 is lost, recovery begins and it is
/// retransmitted; no DupThresh was ever reached.
#[test]
fn single_loss_detected_after_the_reordering_window() {
    let mut t = T::established(cfg(false), ms(100), 3 * MSS);
    assert_eq!(t.take(), vec![0, 1, 2]);
    t.now = ms(200);
    t.ack(0, &[(1, 2)], 3 * MSS);
    assert!(t.take().is_empty());
    assert_eq!(t.s.ca, CaState::Open);
    let reo = Time(ms(100).ns() / REO_WND_DIVISOR);
    assert_eq!(reo, ms(25));
    assert_eq!(t.s.pending_timer(), Some((TimerKind::Reorder, ms(100) + ms(100) + reo + TIMEOUT_MIN)));
    assert_eq!(t.fire(TimerKind::Reorder), ms(227));
    assert_eq!(t.s.ca, CaState::Recovery);
    assert_eq!(t.take(), vec![0]);
    assert_eq!(t.s.stats.reorder_timeouts, 1);
    // Reno: ssthresh = max(FlightSize/2, 2·SMSS) = max(1500, 2000).
    assert_eq!(t.s.ssthresh(), 2 * MSS);
    // The RTO takes over again, timing the retransmission: 227 + RTO (100 + max(4·50, 200)).
    assert_eq!(t.s.pending_timer(), Some((TimerKind::Rto, ms(227) + ms(300))));
}

/// With DupThresh segments SACKed the window is 0 (no reordering seen): the third SACK marks the
/// hole lost at once, as the classic fast retransmit would, without any timer. A later SACK of a
/// segment that was never retransmitted, below what was SACKed before, is reordering: from then
/// on the window stays min_rtt/4 even in recovery.
#[test]
fn third_sack_marks_at_once_and_reordering_widens_the_window() {
    let mut t = T::established(cfg(false), ms(100), 65_535);
    assert_eq!(t.take().len(), 10);
    t.now = ms(200);
    t.ack(0, &[(2, 3)], 65_535);
    t.ack(0, &[(2, 4)], 65_535);
    assert_eq!(t.s.ca, CaState::Open);
    assert!(!t.take().contains(&0));
    t.ack(0, &[(2, 5)], 65_535);
    assert_eq!(t.s.ca, CaState::Recovery);
    assert_eq!(t.take()[0], 0, "fast retransmission of segment 0 at the third SACK");
    assert!(t.s.scoreboard().get(1).lost, "segment 1, sent before segment 4, lost too");
    assert!(!t.s.rack().reord_seen);
    // Segment 1 was only late (never retransmitted yet — no room in cwnd): reordering.
    assert!(!t.s.scoreboard().get(1).ever_rexmit);
    t.ack(0, &[(1, 5)], 65_535);
    assert!(t.s.rack().reord_seen);
}

/// Tail loss probe after an IW10 burst: SYN RTT 100 ms → SRTT 100 ms, RTO 300 ms. With ten
/// segments out the PTO is 2·SRTT + 2 ms = 202 ms (below the RTO's 300 ms), so with no ACK the
/// probe leaves at 100 + 202 = 302 ms: one new segment beyond cwnd (Linux's `tcp_write_xmit` with
/// `push_one = 2`), after which the RTO runs from the probe: 302 + 300 = 602 ms. The ACK of all
/// eleven ends the episode without a window reduction (the probe was new data).
#[test]
fn tail_loss_probe_sends_new_data_after_two_srtt() {
    let mut t = T::established(cfg(true), ms(100), 65_535);
    assert_eq!(t.take().len(), 10);
    let pto = ms(100).mul(PTO_SRTT_FACTOR) + TIMEOUT_MIN;
    assert_eq!(pto, ms(202));
    assert_eq!(t.s.pending_timer(), Some((TimerKind::LossProbe, ms(100) + pto)));
    assert_eq!(t.fire(TimerKind::LossProbe), ms(302));
    assert_eq!(t.take(), vec![10], "an 11th segment, beyond the initial window");
    assert_eq!(t.s.stats.loss_probes, 1);
    assert_eq!(t.s.stats.retransmits, 0);
    assert_eq!(t.s.pending_timer(), Some((TimerKind::Rto, ms(602))));
    t.now = ms(400);
    t.ack(11, &[], 65_535);
    assert_eq!(t.s.rack().tlp_high_seq, None);
    assert_eq!(t.s.stats.loss_probe_recoveries, 0);
    assert_eq!(t.s.cwnd(), 11 * MSS, "slow start, one ACK: + 1 SMSS (RFC 5681, no byte counting)");
}

/// One segment out (the peer's window is one segment): the PTO adds the minimum RTO (200 ms) for
/// a delayed ACK instead of 2 ms. SYN RTT 300 ms: SRTT 300, RTTVAR 150, RTO = 300 + max(600, 200)
/// = 900 ms; PTO = 2·300 + 200 = 800 ms < 900 ms, so the probe leaves at 300 + 800 = 1100 ms. No
/// new data fits the window, so the probe retransmits the last segment. Its ACK (== the probe's
/// SND.NXT) does not settle the episode; the next ACK beyond it shows the probe repaired a loss:
/// one window reduction (Reno: ssthresh = max(FlightSize/2, 2·SMSS), cwnd = ssthresh).
#[test]
fn tail_loss_probe_with_one_segment_out_waits_for_a_delayed_ack() {
    let mut t = T::established(cfg(true), ms(300), MSS);
    assert_eq!(t.take(), vec![0]);
    assert_eq!(t.s.rto(), ms(900));
    assert_eq!(t.s.pending_timer(), Some((TimerKind::LossProbe, ms(300) + ms(300).mul(PTO_SRTT_FACTOR) + t.s.config().min_rto)));
    assert_eq!(t.fire(TimerKind::LossProbe), ms(1100));
    assert_eq!(t.take(), vec![0], "the last segment again");
    assert_eq!(t.s.stats.retransmits, 1);
    assert_eq!(t.s.rack().tlp_high_seq, Some(1 + MSS));
    t.now = ms(1400);
    t.ack(1, &[], MSS);
    assert_eq!(t.take(), vec![1]);
    assert_eq!(t.s.stats.loss_probe_recoveries, 0, "ACK == probe's SND.NXT: not yet");
    t.now = ms(1700);
    t.ack(2, &[], MSS);
    assert_eq!(t.s.stats.loss_probe_recoveries, 1);
    assert_eq!(t.s.ssthresh(), 2 * MSS);
    assert_eq!(t.s.rack().tlp_high_seq, None);
}

/// Without `tlp` the same burst arms the RTO only (100 + 300 ms); without `rack` the single loss
/// of the first test waits for the RTO (one SACK: neither DupThresh nor IsLost) and the RFC 6675
/// sender retransmits segment 0 then (cwnd 1 SMSS).
#[test]
fn switches_restore_rfc6675() {
    let mut t = T::established(cfg(false), ms(100), 65_535);
    assert_eq!(t.take().len(), 10);
    assert_eq!(t.s.pending_timer(), Some((TimerKind::Rto, ms(400))));
    let mut t = T::established(TcpConfig { rack: false, ..cfg(false) }, ms(100), 3 * MSS);
    assert_eq!(t.take(), vec![0, 1, 2]);
    t.now = ms(200);
    t.ack(0, &[(1, 2)], 3 * MSS);
    assert_eq!(t.s.pending_timer(), Some((TimerKind::Rto, ms(400))));
    assert_eq!(t.fire(TimerKind::Rto), ms(400));
    assert_eq!(t.s.stats.timeouts, 1);
    assert_eq!(t.take(), vec![0]);
}

/// The option's 12 bytes come out of the payload: MSS 1460 on a 1500-byte MTU carries 1448 B per
/// segment (Linux's `mss_cache`), still 1500 B on the wire; the SYN is 52 B; cwnd counts 1448-B
/// segments (IW10 = 14 480 B). Without the option: 1460 B of payload, a 40-byte SYN.
#[test]
fn timestamps_option_takes_twelve_bytes() {
    let on = TcpConfig { tsq: false, ..TcpConfig::default() };
    let mut s = Sender::new(on.clone(), None);
    let mut out = Output::default();
    s.connect(Time::ZERO, &mut out);
    assert_eq!(out.segs[0].size, 52);
    assert_eq!(out.segs[0].hdr.ts, Some((1, 0)), "TSval = 0 ms + 1, nothing to echo");
    out.segs.clear();
    let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd: 65_535, ts: Some((7, 1)), ..Default::default() };
    s.process(&synack, ms(40), &mut out);
    assert!(s.timestamps());
    assert_eq!(out.segs.len(), 10);
    assert!(out.segs.iter().all(|g| g.hdr.len == 1448 && g.size == 1500 && g.hdr.ts == Some((41, 7))));
    assert_eq!(s.cwnd(), 10 * 1448);
    assert_eq!(s.header_bytes(), 52);
    // A peer that does not answer the option: the whole MSS again.
    let mut s = Sender::new(on, None);
    s.connect(Time::ZERO, &mut out);
    out.segs.clear();
    s.process(&TcpHeader { ts: None, ..synack }, ms(40), &mut out);
    assert!(!s.timestamps());
    assert!(out.segs.iter().all(|g| g.hdr.len == 1460 && g.size == 1500 && g.hdr.ts.is_none()));
    let mut s = Sender::new(TcpConfig { timestamps: false, tsq: false, ..TcpConfig::default() }, None);
    s.connect(Time::ZERO, &mut out);
    assert_eq!(out.segs.last().unwrap().size, 40);
}

/// Sender and receiver cores joined by a 50 ms delay each way (no serialisation), ACK every
/// segment; the network drops the first transmission of segment 0. Returns the sender and the
/// RTT samples it took, with the time each ACK was processed.
fn joined(timestamps: bool) -> (Sender, Vec<(Time, Option<Time>, Time)>) {
    // 1000 B of payload per segment either way.
    let mss = if timestamps { 1012 } else { 1000 };
    let cfg = TcpConfig { mss, iw: 4, cc: "reno".into(), delack: None, tsq: false, timestamps, ..TcpConfig::default() };
    let d = ms(50);
    let mut snd = Sender::new(cfg.clone(), Some(4000));
    let mut rcv = Receiver::new(cfg, 0, None);
    // (arrival time, to receiver?, header); kept sorted by time, then insertion.
    let mut net: Vec<(Time, bool, TcpHeader)> = vec![];
    let mut out = Output::default();
    let mut rout = RecvOutput::default();
    let mut timer: Option<Time> = None;
    let mut now = Time::ZERO;
    let mut dropped = false;
    let mut samples = vec![];
    snd.connect(now, &mut out);
    for _ in 0..200 {
        for g in out.segs.drain(..) {
            if g.hdr.len > 0 && g.hdr.seq == 1 && !dropped {
                dropped = true;
                continue;
            }
            net.push((now + d, true, g.hdr));
        }
        match std::mem::take(&mut out.rto) {
            TimerCmd::Set(at) => timer = Some(at),
            TimerCmd::Cancel => timer = None,
            TimerCmd::Keep => {}
        }
        for h in rout.segs.drain(..) {
            net.push((now + d, false, h));
        }
        net.sort_by_key(|x| x.0);
        let next_pkt = net.first().map(|x| x.0);
        match (next_pkt, timer) {
            (Some(p), tm) if tm.is_none_or(|t| p <= t) => {
                let (at, to_rcv, h) = net.remove(0);
                now = at;
                if to_rcv {
                    rcv.process(&h, false, now, &mut rout);
                } else {
                    snd.process(&h, now, &mut out);
                    samples.push((now, snd.rtt_estimator().latest(), snd.rtt_estimator().rttvar()));
                }
            }
            (_, Some(t)) => {
                now = t;
                timer = None;
                snd.on_rto(now, &mut out);
            }
            _ => break,
        }
        if snd.done() && net.is_empty() {
            break;
        }
    }
    (snd, samples)
}

/// RFC 7323 §4 RTT measurement where Karn's rule is silent: segment 0 is lost, RACK finds it
/// (three SACKs) and retransmits it when the third SACK arrives; the receiver echoes the
/// retransmission's TSval (it fills the hole at Last.ACK.sent, RFC 7323 §4.3), so the ACK that
/// covers it yields an RTT sample of exactly the path's 100 ms. Without the option that ACK gives
/// no sample (every segment it covers was SACKed or retransmitted).
#[test]
fn timestamp_echo_times_the_retransmission() {
    let (s, samples) = joined(true);
    assert!(s.done());
    assert_eq!(s.stats.retransmits, 1);
    assert_eq!(s.stats.timeouts, 0);
    // Handshake at 100 ms; segments 0..3 (1000 B each: 1012 − 12) at 100 ms; SACKs of 1, 2, 3 at
    // 200 ms; the retransmission at 200 ms is acknowledged at 300 ms with TSecr = TSval(200 ms).
    // The sample R = 100 ms moves RTTVAR from 50 ms (SYN: R/2) to 3/4·50 + 1/4·|100 − 100| = 37.5 ms.
    let at300: Vec<_> = samples.iter().filter(|x| x.0 == ms(300)).collect();
    assert_eq!(at300.len(), 1, "{samples:?}");
    assert_eq!((at300[0].1, at300[0].2), (Some(ms(100)), Time::from_us(37_500)));
    let (s, samples) = joined(false);
    assert!(s.done());
    assert_eq!(s.stats.retransmits, 1);
    let at300 = samples.iter().find(|x| x.0 == ms(300)).unwrap();
    assert_eq!(at300.2, ms(50), "Karn: no sample from the ACK of a retransmission");
}

/// The PAM 2013-like fixed path of the testbed notes (4 Mbit/s, 20 ms each way, 500 packets, a
/// fast host link): six CUBIC IW10 connections start together, Linux defaults. The later
/// connections' first ACKs come back only after their segments have waited behind the others'
/// at the bottleneck, so their tail loss probe fires first: an 11th segment, sent 2·SRTT + 2 ms
/// after the connection last sent new data, where SRTT is its SYN round trip (52-byte SYN and
/// SYN-ACK over the path, plus waiting behind the other connections' handshakes). On an idle
/// path that is 2·(40 ms + 2·(0.104 + 0.0004) ms) + 2 ms = 82.42 ms; Linux's captures showed the
/// 11th segment about 87 ms after the burst (jiffies and the real path's extra delay).
#[test]
fn tail_loss_probe_on_the_pam2013_path() {
    let path = Path { access_rate: Rate::mbps(1000), access_delay: Time::ZERO, rate: Rate::mbps(4), delay: ms(20), limit: 500 };
    let (mut sim, s, d, _log) = path_sim(&path, pass());
    sim.tap(s);
    for i in 0..6 {
        let cfg = TcpConfig { iw: 10, ..TcpConfig::default() };
        add_connection(&mut sim, ConnSpec { name: format!("w{i}"), role: "web".into(), from: s, to: d, start: Time::ZERO, size: Some(62_000), cfg, policy: None });
    }
    sim.run_until(Time::from_secs(10));
    let t = sim.finish();
    // fwd(52 B) = 52 B at 1 Gbit/s (416 ns) + at 4 Mbit/s (104 µs) + 20 ms = 20.104416 ms.
    let idle = path.rtt(52, 52).mul(2) + TIMEOUT_MIN;
    assert_eq!(idle, Time::from_ns(2 * 40_208_832 + 2_000_000));
    let mut probes = 0;
    for f in 0..6u32 {
        let recs: Vec<_> = t.taps.iter().filter(|r| r.node == s && r.pkt.flow == f).collect();
        let hdr = |r: &&jitterlab_sim::record::TapRecord| match &r.pkt.body {
            Body::Tcp(h) => h.clone(),
            _ => unreachable!(),
        };
        let syn = recs.iter().find(|r| r.outgoing && hdr(r).flags & F::SYN != 0).unwrap().t_ns;
        let synack = recs.iter().find(|r| !r.outgoing && hdr(r).flags & F::SYN != 0).unwrap().t_ns;
        let srtt = Time((synack - syn) as u64);
        assert!(srtt >= path.rtt(52, 52), "flow {f}: SYN RTT {srtt:?}");
        let first_ack = recs.iter().find(|r| !r.outgoing && hdr(r).flags & F::SYN == 0).unwrap().t_ns;
        let data: Vec<_> = recs.iter().filter(|r| r.outgoing && hdr(r).len > 0).collect();
        if data[10].t_ns < first_ack {
            probes += 1;
            // The probe: 2·SRTT + 2 ms after the 10th segment left (the last new data).
            let pto = Time((data[10].t_ns - data[9].t_ns) as u64);
            assert_eq!(pto, srtt.mul(2) + TIMEOUT_MIN, "flow {f}");
            assert_eq!(hdr(data[10]).seq, 1 + 10 * 1448, "new data");
            println!("flow {f}: SYN RTT {srtt:?}, 11th segment {pto:?} after the 10th ({:?} after the 1st)", Time((data[10].t_ns - data[0].t_ns) as u64));
        }
    }
    assert!(probes >= 1, "the later connections probe before their first ACK");
}

/// With the timestamps option an ACK has room for three SACK blocks, not four (RFC 2018 §3:
/// 40 option bytes; 12 of them are the timestamps).
#[test]
fn three_sack_blocks_beside_timestamps() {
    for (ts, blocks) in [(true, 3), (false, 4)] {
        let cfg = TcpConfig { mss: 1000 + if ts { 12 } else { 0 }, delack: None, timestamps: ts, ..TcpConfig::default() };
        let mut r = Receiver::new(cfg, 0, None);
        let mut out = RecvOutput::default();
        let tsopt = ts.then_some((1, 0));
        r.process(&TcpHeader { seq: 0, flags: F::SYN, wnd: 65_535, wscale: Some(0), ts: tsopt, ..Default::default() }, false, ms(0), &mut out);
        r.process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, wnd: 65_535, ts: tsopt, ..Default::default() }, false, ms(1), &mut out);
        // Segments 1, 3, 5, 7, 9 arrive (0, 2, 4, 6, 8 missing): five blocks to report.
        for k in [1u64, 3, 5, 7, 9] {
            r.process(&TcpHeader { seq: 1 + k * 1000, ack: 1, flags: F::ACK, wnd: 65_535, len: 1000, ts: tsopt, ..Default::default() }, false, ms(2), &mut out);
        }
        let last = out.segs.last().unwrap();
        assert_eq!(last.nsack as usize, blocks, "timestamps {ts}");
        assert_eq!(last.sack[0], (1 + 9 * 1000, 1 + 10 * 1000), "the latest block first");
        assert_eq!(last.ts.is_some(), ts);
    }
}
