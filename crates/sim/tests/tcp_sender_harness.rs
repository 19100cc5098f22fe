//! The sender core in virtual time without the engine (quiche's TestSender style): the test plays
//! the network, acknowledging, SACKing or losing segments by hand and checking exactly what the
//! RFCs say the sender must do next.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::tcp::sender::{CaState, Output, Sender, State};
use jitterlab_sim::tcp::{Recovery, TcpConfig};
use jitterlab_sim::Time;

const MSS: u64 = 1000;

struct TestSender {
    s: Sender,
    now: Time,
    out: Output,
}

impl TestSender {
    /// An established connection (SYN-ACK after 100 ms) with `iw` segments sent.
    fn established(cfg: TcpConfig) -> TestSender {
        let mut t = TestSender { s: Sender::new(cfg, None), now: Time::ZERO, out: Output::default() };
        t.s.connect(t.now, &mut t.out);
        assert_eq!(t.take().len(), 1);
        t.advance(Time::from_ms(100));
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd: 65_535, wscale: Some(7), ..Default::default() };
        t.s.process(&synack, t.now, &mut t.out);
        assert_eq!(t.s.state, State::Established);
        t
    }
    fn advance(&mut self, d: Time) { self.now += d; }
    /// Segment indices (seq = 1 + i·MSS) sent since the last call.
    fn take(&mut self) -> Vec<u64> { self.out.segs.drain(..).map(|g| if g.hdr.len > 0 { (g.hdr.seq - 1) / MSS } else { u64::MAX }).collect() }
    /// An ACK for segments below `upto` with SACK blocks given as segment index ranges [a, b).
    fn ack(&mut self, upto: u64, sacks: &[(u64, u64)]) {
        let mut h = TcpHeader { ack: 1 + upto * MSS, flags: F::ACK, wnd: 65_535, ..Default::default() };
        for (i, &(a, b)) in sacks.iter().enumerate() {
            h.sack[i] = (1 + a * MSS, 1 + b * MSS);
        }
        h.nsack = sacks.len() as u8;
        self.s.process(&h, self.now, &mut self.out);
    }
}

/// Reno with RFC 6675 recovery as written (no PRR, no lost-retransmission detection, no RACK-TLP,
/// no timestamps option: `tcp_rack.rs` drives those). No TCP Small Queues: there is no host here
/// to report TX completions.
fn cfg() -> TcpConfig {
    TcpConfig { mss: MSS as u32, iw: 10, cc: "reno".into(), delack: None, prr: false, lost_retransmit: false, tsq: false, rack: false, tlp: false, timestamps: false, ..TcpConfig::default() }
}

/// RFC 6675 worked by hand: IW10, segment 0 lost. Dupacks 1 and 2 send one new segment each
/// (RFC 3042 limited transmit). Dupack 3 enters recovery: FlightSize = 12 segments of which 2 were
/// sent by limited transmit and do not count (RFC 5681 §3.2 step 2), so ssthresh = cwnd = 5;
/// segment 0 is retransmitted; pipe = 1 (rexmit) + 8 (segments 4..11 neither SACKed nor lost)
/// = 9. Each further SACK lowers pipe by one; new data flows once cwnd − pipe ≥ 1 SMSS (pipe 4).
/// The cumulative ACK ends recovery with cwnd = ssthresh.
#[test]
fn rfc6675_recovery_step_by_step() {
    let mut t = TestSender::established(cfg());
    assert_eq!(t.take(), (0..10).collect::<Vec<_>>());
    t.advance(Time::from_ms(100));
    t.ack(0, &[(1, 2)]);
    assert_eq!(t.take(), vec![10], "limited transmit 1");
    t.ack(0, &[(1, 3)]);
    assert_eq!(t.take(), vec![11], "limited transmit 2");
    t.ack(0, &[(1, 4)]);
    assert_eq!(t.s.ca, CaState::Recovery);
    assert_eq!(t.s.ssthresh(), 5 * MSS);
    assert_eq!(t.s.cwnd(), 5 * MSS);
    assert_eq!(t.take(), vec![0], "fast retransmit of the first unacknowledged segment");
    assert_eq!(t.s.pipe(), 9 * MSS);
    // SACKs of segments 4..7: pipe 8, 7, 6, 5 — no room yet (cwnd − pipe < 1 SMSS).
    for k in 5..=8 {
        t.ack(0, &[(1, k)]);
        assert!(t.take().is_empty(), "after SACK of segment {}", k - 1);
    }
    assert_eq!(t.s.pipe(), 5 * MSS);
    // Segment 8 SACKed: pipe 4 → one new segment (12).
    t.ack(0, &[(1, 9)]);
    assert_eq!(t.take(), vec![12]);
    // Cumulative ACK of everything up to 12 (the retransmission arrived): recovery ends at
    // RecoveryPoint = 12 segments, cwnd stays ssthresh.
    t.advance(Time::from_ms(50));
    t.ack(12, &[]);
    assert_eq!(t.s.ca, CaState::Open);
    assert_eq!(t.s.cwnd(), 5 * MSS);
    assert_eq!(t.s.stats.retransmits, 1);
}

/// NewReno (RFC 6582): cwnd = ssthresh + 3 on the third dupack, +1 per further dupack, a partial
/// ACK retransmits the next hole at once and deflates; the full ACK sets
/// cwnd = min(ssthresh, FlightSize + SMSS).
#[test]
fn newreno_partial_ack() {
    let mut t = TestSender::established(TcpConfig { recovery: Recovery::NewReno, limited_transmit: false, ..cfg() });
    assert_eq!(t.take().len(), 10);
    // Segments 0 and 4 lost.
    for _ in 0..3 {
        t.ack(0, &[]);
    }
    assert_eq!(t.s.ca, CaState::Recovery);
    assert_eq!(t.s.ssthresh(), 5 * MSS);
    assert_eq!(t.s.cwnd(), 8 * MSS);
    assert_eq!(t.take(), vec![0]);
    // Dupacks for 5 more segments (1,2,3 and 5..9 arrived: 8 dupacks in all).
    for _ in 0..5 {
        t.ack(0, &[]);
    }
    assert_eq!(t.s.cwnd(), 13 * MSS);
    // FlightSize 10 < cwnd 13: three new segments went out with the inflation.
    assert_eq!(t.take(), vec![10, 11, 12]);
    // Partial ACK up to segment 4: retransmit 4, cwnd = 13 − 4 + 1 = 10; FlightSize is now
    // 13 − 4 = 9, so one new segment (13) fits.
    t.ack(4, &[]);
    assert_eq!(t.take(), vec![4, 13]);
    assert_eq!(t.s.cwnd(), 10 * MSS);
    assert_eq!(t.s.ca, CaState::Recovery);
    // Full ACK (RecoveryPoint = 10): cwnd = min(ssthresh 5, FlightSize (14 − 10) + 1) = 5;
    // a full ACK up to 12 instead leaves FlightSize 2: cwnd = 3.
    t.ack(12, &[]);
    assert_eq!(t.s.ca, CaState::Open);
    assert_eq!(t.s.cwnd(), 3 * MSS);
}

/// RTO (RFC 6298 §5.4–5.7, RFC 5681 §3.1): cwnd = 1 SMSS, ssthresh = FlightSize/2, the first
/// unacknowledged segment is resent and the timer backs off; a second timeout keeps ssthresh.
#[test]
fn rto_resets_window_and_backs_off() {
    let mut t = TestSender::established(cfg());
    assert_eq!(t.take().len(), 10);
    let rto = t.s.rto();
    // SYN RTT 100 ms: SRTT 100, RTTVAR 50 → RTO 300 ms.
    assert_eq!(rto, Time::from_ms(300));
    t.advance(rto);
    t.s.on_rto(t.now, &mut t.out);
    assert_eq!(t.take(), vec![0]);
    assert_eq!(t.s.cwnd(), MSS);
    assert_eq!(t.s.ssthresh(), 5 * MSS);
    assert_eq!(t.s.rto(), Time::from_ms(600));
    t.advance(t.s.rto());
    t.s.on_rto(t.now, &mut t.out);
    assert_eq!(t.take(), vec![0]);
    assert_eq!(t.s.ssthresh(), 5 * MSS, "held on a repeated timeout");
    assert_eq!(t.s.rto(), Time::from_ms(1200));
    // The ACK of the retransmission: slow start from 1 SMSS resends 1 and 2 (marked lost).
    t.ack(1, &[]);
    assert_eq!(t.take(), vec![1, 2]);
    assert_eq!(t.s.stats.timeouts, 2);
}

/// The peer's window limits new data (RFC 5681 §3: min(cwnd, rwnd)).
#[test]
fn zero_and_small_windows() {
    let mut t = TestSender::established(cfg());
    assert_eq!(t.take().len(), 10);
    let mut h = TcpHeader { ack: 1 + 10 * MSS, flags: F::ACK, wnd: 3 * MSS, ..Default::default() };
    t.s.process(&h, t.now, &mut t.out);
    assert_eq!(t.take(), vec![10, 11, 12]);
    h.ack = 1 + 13 * MSS;
    h.wnd = 0;
    t.s.process(&h, t.now, &mut t.out);
    assert!(t.take().is_empty());
}

/// RFC 3168 §6.1.2 in detail: ECN-Echo halves cwnd once per window and never grows it on that ACK;
/// at a one-segment window the sender resets the timer and sends new data only when it expires
/// (without counting a timeout or touching ssthresh again).
#[test]
fn ecn_echo_reduction_and_one_segment_hold() {
    let cfg = TcpConfig { ecn: true, ..cfg() };
    let mut t = TestSender { s: Sender::new(cfg, None), now: Time::ZERO, out: Output::default() };
    t.s.connect(t.now, &mut t.out);
    t.take();
    t.advance(Time::from_ms(100));
    let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK | F::ECE, wnd: 65_535, ..Default::default() };
    t.s.process(&synack, t.now, &mut t.out);
    assert!(t.s.ecn_ok());
    assert_eq!(t.take().len(), 10);
    // ACK of 2 segments with ECE: cwnd 10 → 10/2 = 5 (RFC 3168 halves cwnd; no growth from this ACK).
    let ece = |t: &mut TestSender, upto: u64| {
        let h = TcpHeader { ack: 1 + upto * MSS, flags: F::ACK | F::ECE, wnd: 65_535, ..Default::default() };
        t.s.process(&h, t.now, &mut t.out);
    };
    ece(&mut t, 2);
    assert_eq!(t.s.cwnd(), 5 * MSS);
    assert_eq!(t.s.stats.ecn_reductions, 1);
    // More ECE in the same window: no further reduction.
    ece(&mut t, 4);
    assert_eq!(t.s.cwnd(), 5 * MSS);
    assert_eq!(t.s.stats.ecn_reductions, 1);
}

/// RFC 3168 §6.1.2 at a one-segment window (IW1 here): the ECN-Echo ACK neither grows cwnd nor
/// lets new data out; the retransmission timer is reset and new data follows when it expires,
/// which is not counted as a timeout.
#[test]
fn ecn_echo_at_one_segment_holds_until_the_timer() {
    let cfg = TcpConfig { ecn: true, iw: 1, ..cfg() };
    let mut t = TestSender { s: Sender::new(cfg, None), now: Time::ZERO, out: Output::default() };
    t.s.connect(t.now, &mut t.out);
    t.take();
    t.advance(Time::from_ms(100));
    let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK | F::ECE, wnd: 65_535, ..Default::default() };
    t.s.process(&synack, t.now, &mut t.out);
    assert_eq!(t.take(), vec![0]);
    t.advance(Time::from_ms(100));
    let h = TcpHeader { ack: 1 + MSS, flags: F::ACK | F::ECE, wnd: 65_535, ..Default::default() };
    t.s.process(&h, t.now, &mut t.out);
    assert_eq!(t.s.cwnd(), MSS);
    assert_eq!(t.s.stats.ecn_reductions, 1);
    assert!(t.take().is_empty(), "held after ECE at one segment");
    // SRTT 100 ms, RTO 300 ms: the hold ends then with one new segment, no timeout counted.
    t.advance(t.s.rto());
    t.s.on_rto(t.now, &mut t.out);
    assert_eq!(t.take(), vec![1]);
    assert_eq!(t.s.stats.timeouts, 0);
}

/// RFC 6937 (PRR) against RFC 6675 on the same loss: 20 segments in flight, segment 0 lost, no
/// limited transmit; both set ssthresh = 10 (RecoverFS = 20). RFC 6675 sets cwnd = 10 at once and
/// sends nothing new until pipe (17 after the fast retransmission) is down to 9: from the 8th SACK
/// on, one segment per SACK. PRR sends ⌈prr_delivered·10/20⌉ − prr_out: one segment on every second
/// SACK (2, 4, …, 10) while pipe > ssthresh, then (PRR-SSRB) one per SACK once pipe < ssthresh.
/// Both send 9 new segments in the episode.
#[test]
fn prr_spreads_the_reduction() {
    let run = |prr: bool| -> Vec<usize> {
        let cfg = TcpConfig { iw: 20, prr, limited_transmit: false, lost_retransmit: false, ..cfg() };
        let mut t = TestSender::established(cfg);
        assert_eq!(t.take().len(), 20);
        for k in 2..=4 {
            t.ack(0, &[(1, k)]);
        }
        assert_eq!(t.s.ca, CaState::Recovery);
        assert_eq!(t.s.ssthresh(), 10 * MSS);
        assert_eq!(t.take(), vec![0]);
        // SACKs of segments 4..19, one by one: at which of them does new data leave?
        let mut when = vec![];
        for (i, k) in (5..=20).enumerate() {
            t.ack(0, &[(1, k)]);
            if !t.take().is_empty() {
                when.push(i + 1);
            }
        }
        when
    };
    let rfc6675 = run(false);
    let prr = run(true);
    assert_eq!(rfc6675, vec![8, 9, 10, 11, 12, 13, 14, 15, 16]);
    assert_eq!(prr, vec![2, 4, 6, 8, 10, 13, 14, 15, 16]);
}

/// RFC 6937's DeliveredData on a cumulative ACK is what it newly delivers, not SND.UNA's advance
/// (Linux: `tcp_newly_delivered`). IW20, PRR, no limited transmit; segments 0 and 5 lost.
/// RecoverFS = 20, ssthresh = 10 (Reno). prr_delivered / prr_out after each ACK and
/// sndcnt = ⌈prr_delivered·10/20⌉ − prr_out while pipe > ssthresh:
/// SACK 1..3 enters recovery (1 / 1: rtx 0, pipe 17); SACK 4 (2 / 1: sndcnt 0); SACK 6 (3 / 2:
/// new 20); SACK 7 (4 / 2: 0); SACK 8 marks 5 lost (5 / 3: rtx 5, pipe 14). The retransmission of
/// 0 arrives: ACK 5 covers 0 and the SACKed 1..4, delivering one segment: 6 / 3, sndcnt
/// ⌈60/20⌉ − 3 = 0, cwnd = pipe = 13 (rtx 5, segments 9..20), nothing sent. Counting the five
/// acknowledged segments would give ⌈100/20⌉ − 3 = 2: segments 21 and 22 out, cwnd 15.
#[test]
fn prr_counts_newly_delivered_data_on_a_cumulative_ack() {
    let cfg = TcpConfig { iw: 20, prr: true, limited_transmit: false, lost_retransmit: false, ..cfg() };
    let mut t = TestSender::established(cfg);
    assert_eq!(t.take().len(), 20);
    for k in 2..=4 {
        t.ack(0, &[(1, k)]);
    }
    assert_eq!((t.s.ca, t.s.ssthresh(), t.take()), (CaState::Recovery, 10 * MSS, vec![0]));
    t.ack(0, &[(1, 5)]);
    let mut sent = t.take();
    for k in 7..=9 {
        t.ack(0, &[(6, k), (1, 5)]);
        sent.extend(t.take());
    }
    assert_eq!(sent, vec![20, 5]);
    assert_eq!(t.s.pipe(), 14 * MSS);
    t.ack(5, &[(6, 9)]);
    assert_eq!(t.take(), Vec::<u64>::new());
    assert_eq!((t.s.ca, t.s.cwnd(), t.s.pipe()), (CaState::Recovery, 13 * MSS, 13 * MSS));
}
