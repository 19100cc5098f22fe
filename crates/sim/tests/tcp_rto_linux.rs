//! The retransmission timeout as Linux handles it (`tcp/sender/loss.rs`): F-RTO (RFC 5682 §3,
//! `tcp_process_loss`), the undo of a timeout the timestamps show was spurious
//! (`tcp_try_undo_loss`), and RACK-aware marking at the timeout (`tcp_timeout_mark_lost`). The
//! sender core is driven by hand (the test plays the network); every expected value is worked
//! out in the comment above it.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::tcp::sender::{CaState, Output, Sender, State};
use jitterlab_sim::tcp::timers::TimerKind;
use jitterlab_sim::tcp::{FrtoResponse, TcpConfig};
use jitterlab_sim::Time;

const MSS: u64 = 1000;
const WND: u64 = 65_535;

fn ms(x: u64) -> Time { Time::from_ms(x) }

struct T {
    s: Sender,
    now: Time,
    out: Output,
}

impl T {
    /// Connected after a SYN round trip of `rtt` (SRTT = `rtt`, RTTVAR = `rtt`/2), the SYN-ACK
    /// offering `wnd` bytes (and the timestamps option with TSval 1 when `cfg` has it).
    fn established(cfg: TcpConfig, rtt: Time, wnd: u64) -> T {
        let ts = cfg.timestamps.then_some((1, 1));
        let mut t = T { s: Sender::new(cfg, None), now: Time::ZERO, out: Output::default() };
        t.s.connect(t.now, &mut t.out);
        t.out.segs.clear();
        t.now = rtt;
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd, wscale: Some(0), ts, ..Default::default() };
        t.s.process(&synack, t.now, &mut t.out);
        assert_eq!(t.s.state, State::Established);
        t
    }
    /// Segment indices (seq = 1 + i·MSS) sent since the last call, with their TSvals.
    fn take_ts(&mut self) -> Vec<(u64, Option<u32>)> { self.out.segs.drain(..).filter(|g| g.hdr.len > 0).map(|g| ((g.hdr.seq - 1) / MSS, g.hdr.ts.map(|(v, _)| v))).collect() }
    fn take(&mut self) -> Vec<u64> { self.take_ts().into_iter().map(|(i, _)| i).collect() }
    /// An ACK below segment `upto` with SACK blocks [a, b) in segment indices, window `wnd`,
    /// echoing `tsecr` when given.
    fn ack_ts(&mut self, upto: u64, sacks: &[(u64, u64)], wnd: u64, tsecr: Option<u32>) {
        let mut h = TcpHeader { ack: 1 + upto * MSS, flags: F::ACK, wnd, ts: tsecr.map(|e| (1, e)), ..Default::default() };
        for (i, &(a, b)) in sacks.iter().enumerate() {
            h.sack[i] = (1 + a * MSS, 1 + b * MSS);
        }
        h.nsack = sacks.len() as u8;
        self.s.process(&h, self.now, &mut self.out);
    }
    fn ack(&mut self, upto: u64, sacks: &[(u64, u64)]) { self.ack_ts(upto, sacks, WND, None) }
    /// Advances to the pending timer (which must be the RTO) and fires it.
    fn fire_rto(&mut self) -> Time {
        let (k, at) = self.s.pending_timer().expect("a timer is pending");
        assert_eq!(k, TimerKind::Rto);
        self.now = at;
        self.s.on_rto(self.now, &mut self.out);
        at
    }
    fn lost(&self) -> Vec<u64> { self.s.scoreboard().iter().filter(|g| g.lost).map(|g| (g.seq - 1) / MSS).collect() }
}

/// Reno with SACK and RACK, no loss probes, no timestamps (whole-MSS payload), no TCP Small
/// Queues, an ACK per segment; the three timeout rules as given.
fn cfg(frto: bool, loss_undo: bool, rto_rack: bool) -> TcpConfig {
    TcpConfig { mss: MSS as u32, iw: 10, cc: "reno".into(), delack: None, tsq: false, rack: true, tlp: false, timestamps: false, frto, loss_undo, rto_rack, ..TcpConfig::default() }
}

/// Ten segments leave at 100 ms (SYN RTT 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + max(4·50,
/// 200) = 300 ms) and a delay spike holds every ACK: the RTO fires at 400 ms, marks all ten lost
/// (RACK has no RTT yet, so nothing is spared) and resends segment 0 alone (cwnd = in flight + 1
/// = 1 segment). Reno: ssthresh = max(FlightSize/2, 2·SMSS) = 5 segments.
fn spike(c: TcpConfig) -> T {
    let mut t = T::established(c, ms(100), WND);
    assert_eq!(t.take().len(), 10);
    assert_eq!(t.fire_rto(), ms(400));
    assert_eq!(t.take(), vec![0]);
    assert_eq!((t.s.ca, t.s.cwnd(), t.s.ssthresh()), (CaState::Loss, MSS, 5 * MSS));
    assert_eq!(t.lost(), (0..10).collect::<Vec<_>>());
    t
}

/// A spurious timeout, found by F-RTO (RFC 5682 §3.1). The originals were only late: at 450 ms
/// the ACK of the original segment 0 arrives. It advances SND.UNA but covers only a segment that
/// was retransmitted, so nothing is proven yet (step 2b): RecoveryPoint moves to SND.NXT
/// (segment 10) and, slow start having raised cwnd to 2 segments with nothing counted in flight
/// (segments 1..9 are marked lost), two *new* segments go out, 10 and 11, not segments 1 and 2.
/// At 451 ms the ACK of segment 1 (sent before the timeout, never retransmitted) shows the
/// timeout was spurious (step 3b): undone — nothing is lost any more, cwnd back to
/// max(cwnd, prior cwnd) = 10 segments, ssthresh back to its prior value (still infinite: no loss
/// before), Open. The retransmission of segment 0 stays the only one.
#[test]
fn frto_finds_a_spurious_timeout_and_sends_new_data() {
    let mut t = spike(cfg(true, false, true));
    t.now = ms(450);
    t.ack(1, &[]);
    assert_eq!(t.take(), vec![10, 11], "F-RTO step 2b: new data instead of segments 1 and 2");
    assert_eq!(t.s.ca, CaState::Loss);
    t.now = ms(451);
    t.ack(2, &[]);
    assert_eq!(t.s.ca, CaState::Open);
    assert_eq!((t.s.stats.spurious_rtos, t.s.stats.loss_undos), (1, 1));
    assert!(t.lost().is_empty());
    assert!(t.s.ssthresh() > 1_000_000 * MSS, "prior ssthresh (unset) restored: {}", t.s.ssthresh());
    // cwnd 10 segments restored, then this ACK's slow-start step: 11; in flight 2..11 = 10
    // segments, so one new segment.
    assert_eq!(t.s.cwnd(), 11 * MSS);
    assert_eq!(t.take(), vec![12]);
    assert_eq!(t.s.stats.retransmits, 1);
}

/// The same spurious timeout under Linux 3.2's default response (`tcp_frto_response = 0`:
/// `tcp_ratehalving_spur_to_response` → `tcp_enter_cwr(sk, 0)`): F-RTO finds it spurious at the
/// ACK of segment 1 as above, but the reduction stays. Nothing is lost any more; ssthresh stays
/// the timeout's 5 segments; cwnd = min(in flight + 1, ssthresh) with segments 2..11 in flight
/// (10 segments): min(11, 5) = 5 segments; Open; no undo is counted. This ACK's own step is the
/// simulator's Reno congestion avoidance at cwnd = ssthresh (RFC 5681 eq. 3: + SMSS·SMSS/cwnd =
/// 200 B): 5200 B, where 3.2's CWR state would hold cwnd for that round (not modelled). With 10
/// segments in flight nothing goes out, and the retransmission of segment 0 stays the only one.
#[test]
fn frto_rate_halving_keeps_the_timeouts_reduction() {
    let mut t = spike(TcpConfig { frto_response: FrtoResponse::RateHalving, ..cfg(true, false, true) });
    t.now = ms(450);
    t.ack(1, &[]);
    assert_eq!(t.take(), vec![10, 11], "F-RTO step 2b as with the undo");
    t.now = ms(451);
    t.ack(2, &[]);
    assert_eq!(t.s.ca, CaState::Open);
    assert_eq!((t.s.stats.spurious_rtos, t.s.stats.loss_undos), (1, 0));
    assert!(t.lost().is_empty());
    assert_eq!((t.s.cwnd(), t.s.ssthresh()), (5 * MSS + 200, 5 * MSS));
    assert_eq!(t.take(), Vec::<u64>::new());
    assert_eq!(t.s.stats.retransmits, 1);
}

/// The same late ACKs without F-RTO: the ACK of segment 0 lets the sender go back and resend
/// segments 1 and 2 (RFC 6675 §5.1 after an RTO), and the ACK of segment 1 only moves on.
#[test]
fn without_frto_the_same_timeout_goes_back() {
    let mut t = spike(cfg(false, false, true));
    t.now = ms(450);
    t.ack(1, &[]);
    assert_eq!(t.take(), vec![1, 2]);
    t.now = ms(451);
    t.ack(2, &[]);
    assert_eq!(t.s.ca, CaState::Loss);
    assert_eq!(t.s.stats.spurious_rtos, 0);
    assert_eq!(t.take(), vec![3, 4]);
    assert_eq!(t.s.stats.retransmits, 5);
}

/// A real loss (RFC 5682 step 3a): all ten segments were lost. The retransmitted segment 0 is
/// ACKed at 500 ms (step 2b: new segments 10 and 11); at 600 ms the ACK still asks for segment 1
/// and SACKs segment 10, new data only (it also updates the window, so it is no duplicate ACK: the
/// SACK alone decides): the loss was real, F-RTO ends and the sender goes back.
/// cwnd stays 2 segments (a SACK raises nothing), segment 11 is in flight, so one retransmission
/// goes: segment 1. Nothing is undone, and once F-RTO has ended a later ACK of segment 2, never
/// retransmitted (its original only late), undoes nothing either: the sender stays in Loss.
#[test]
fn frto_on_a_real_loss_goes_back_after_one_round() {
    let mut t = spike(cfg(true, false, true));
    t.now = ms(500);
    t.ack(1, &[]);
    assert_eq!(t.take(), vec![10, 11]);
    t.now = ms(600);
    t.ack_ts(1, &[(10, 11)], 60_000, None);
    assert_eq!(t.take(), vec![1]);
    assert_eq!(t.s.ca, CaState::Loss);
    assert_eq!((t.s.stats.spurious_rtos, t.s.stats.loss_undos), (0, 0));
    assert_eq!(t.s.cwnd(), 2 * MSS);
    t.now = ms(700);
    t.ack_ts(3, &[(10, 11)], 60_000, None);
    assert_eq!(t.s.ca, CaState::Loss);
    assert_eq!(t.s.stats.loss_undos, 0);
}

/// Eifel-style undo by timestamps (`tcp_packet_delayed`). MSS 1012 with the option: 1000-byte
/// segments. The ten leave at 100 ms with TSval 101 (ms + 1); the timeout at 400 ms resends
/// segment 0 with TSval 401, the episode's first retransmission. At 450 ms the ACK of segment 0
/// echoes 101 < 401: the original arrived, so the timeout is undone on that first ACK (no F-RTO
/// here): Open, nothing lost, cwnd back to 10 segments. An echo of 401 (the retransmission's)
/// would not undo: the sender goes back instead.
#[test]
fn timestamps_undo_a_timeout_whose_original_arrived() {
    let c = TcpConfig { mss: MSS as u32 + 12, timestamps: true, ..cfg(false, true, true) };
    let mut t = T::established(c.clone(), ms(100), WND);
    let sent = t.take_ts();
    assert_eq!(sent.len(), 10);
    assert!(sent.iter().all(|&(_, v)| v == Some(101)));
    assert_eq!(t.fire_rto(), ms(400));
    assert_eq!(t.take_ts(), vec![(0, Some(401))]);
    t.now = ms(450);
    t.ack_ts(1, &[], WND, Some(101));
    assert_eq!(t.s.ca, CaState::Open);
    assert_eq!((t.s.stats.loss_undos, t.s.stats.spurious_rtos), (1, 0));
    assert!(t.lost().is_empty());
    assert_eq!(t.s.cwnd(), 11 * MSS, "10 restored, + 1 for this ACK in slow start");
    assert!(!t.take().contains(&1), "segment 1 is not resent");

    let mut t = T::established(c, ms(100), WND);
    t.take();
    t.fire_rto();
    t.take();
    t.now = ms(450);
    t.ack_ts(1, &[], WND, Some(401));
    assert_eq!(t.s.ca, CaState::Loss);
    assert_eq!(t.s.stats.loss_undos, 0);
    assert_eq!(t.take(), vec![1, 2]);
}

/// After an undo, RACK must not take the echoed ACK of an original as the delivery of its
/// retransmission (`tcp_skb_spurious_retrans` in `tcp_clean_rtx_queue`). As above, but the ACK
/// of the original segment 0 (TSecr 101) comes at 520 ms, 120 ms after the retransmission (more
/// than min_rtt, so RACK's ambiguity rule would not skip it). Had RACK advanced, RACK.xmit would
/// be 400 ms and segments 1..9 (sent at 100 ms) overdue at 100 + 120 + 25 = 245 ms: recovery and
/// a retransmission of segment 1. Instead the sender stays Open and sends new data only.
#[test]
fn rack_ignores_the_ack_of_an_original_after_its_retransmission() {
    let c = TcpConfig { mss: MSS as u32 + 12, timestamps: true, ..cfg(false, true, true) };
    let mut t = T::established(c, ms(100), WND);
    t.take();
    t.fire_rto();
    assert_eq!(t.take(), vec![0]);
    t.now = ms(520);
    t.ack_ts(1, &[], WND, Some(101));
    assert_eq!(t.s.ca, CaState::Open);
    assert!(t.lost().is_empty());
    assert_eq!(t.s.rack().state(), None, "RACK has no delivery yet");
    assert!(t.take().iter().all(|&i| i >= 10));
}

/// RACK-aware marking at the timeout (`tcp_timeout_mark_lost`): segments sent less than RACK.rtt
/// before the timeout stay in flight. The peer's window is 4 segments: 0..3 leave at 100 ms. At
/// 200 ms segment 0 is ACKed (RACK.rtt = 100 ms; the RTO restarts from now, at least 300 ms) and
/// segment 4 goes. At 450 ms a window update (no data ACKed, so the RTO keeps running) lets
/// segments 5 and 6 go. When the RTO fires (at 500 ms or later), segments 1..4 were sent 300 ms
/// or more before it and are lost; 5 and 6, sent less than 100 ms before, are not (the head is
/// always marked). cwnd = in flight + 1 = 3 segments, so the head's retransmission goes alone
/// and pipe is 5, 6 and the retransmission. Without the rule every unSACKed segment is lost and
/// cwnd is one segment.
#[test]
fn rack_aware_marking_spares_segments_sent_within_rack_rtt() {
    for rack_rule in [true, false] {
        let mut t = T::established(cfg(false, false, rack_rule), ms(100), 4 * MSS);
        assert_eq!(t.take(), vec![0, 1, 2, 3]);
        t.now = ms(200);
        t.ack_ts(1, &[], 4 * MSS, None);
        assert_eq!(t.take(), vec![4]);
        assert_eq!(t.s.rack().rtt(), ms(100));
        t.now = ms(450);
        t.ack_ts(1, &[], 6 * MSS, None);
        assert_eq!(t.take(), vec![5, 6]);
        let at = t.fire_rto();
        assert!(at >= ms(500) && at < ms(550), "RTO at {at:?}");
        assert_eq!(t.take(), vec![1]);
        if rack_rule {
            assert_eq!(t.lost(), vec![1, 2, 3, 4]);
            assert_eq!(t.s.cwnd(), 3 * MSS);
            assert_eq!(t.s.packets_in_flight(), 3 * MSS);
        } else {
            assert_eq!(t.lost(), vec![1, 2, 3, 4, 5, 6]);
            assert_eq!(t.s.cwnd(), MSS);
        }
    }
}

/// F-RTO does not start when the timeout interrupts a fast recovery (RFC 5682 §3.2, Linux's
/// `new_recovery`): segment 0 is lost, three SACKs start recovery at 200 ms (RACK, DupThresh
/// SACKed: no reordering window), its retransmission is lost too, and the RTO fires. The first
/// ACK after it (of segment 0's second retransmission) then lets the lost segments go again, not
/// new data.
#[test]
fn frto_does_not_run_after_a_recovery_timeout() {
    let mut t = T::established(cfg(true, false, true), ms(100), WND);
    assert_eq!(t.take().len(), 10);
    t.now = ms(200);
    t.ack(0, &[(1, 4)]);
    assert_eq!(t.s.ca, CaState::Recovery);
    assert_eq!(t.take()[0], 0);
    t.fire_rto();
    assert_eq!(t.s.ca, CaState::Loss);
    assert_eq!(t.take(), vec![0]);
    t.now += ms(100);
    t.ack(4, &[]);
    let sent = t.take();
    assert!(!sent.is_empty() && sent.iter().all(|&i| i < 10), "retransmissions, not new data: {sent:?}");
    assert_eq!(t.s.stats.spurious_rtos, 0);
}
