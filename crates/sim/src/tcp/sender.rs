//! The sending end of a connection as an explicit state machine (RFC 9293 names). It opens the
//! connection (SYN, retransmitted on the RFC 6298 initial RTO of 1 s), sends `size` payload bytes
//! (or forever) under min(cwnd, rwnd), recovers losses with SACK (RFC 6675) or NewReno (RFC 6582),
//! falls back to the retransmission timer (RFC 6298), reacts to ECN-Echo once per window
//! (RFC 3168), and closes with a FIN.
//!
//! Pure: [`Sender::process`], [`Sender::on_rto`] and [`Sender::on_pace`] take the time and fill an
//! [`Output`] (segments, timer requests); nothing here touches the engine.
use std::collections::VecDeque;

use super::cc::{self, AckSample, Cc, CcState, CongestionControl, RateSample};
pub use super::cc::CaState;
use super::rtt::RttEstimator;
use super::{Recovery, TcpConfig, TimerCmd, DUP_THRESH, HEADER_BYTES};
use crate::packet::{tcp_flags as F, TcpHeader};
use crate::time::Time;

/// RFC 9293 §3.3.2 states a one-way sender passes through.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Not started.
    Closed,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    Established,
    /// FIN sent, not yet acknowledged.
    FinWait1,
    /// FIN acknowledged, waiting for the peer's FIN.
    FinWait2,
    /// Peer's FIN acknowledged: done.
    TimeWait,
}

/// One segment in flight (scoreboard entry, RFC 6675 §3).
#[derive(Clone, Debug)]
pub struct Seg {
    pub seq: u64,
    /// Sequence space taken (payload bytes, or 1 for the FIN).
    pub len: u32,
    pub fin: bool,
    /// Last (re)transmission time.
    pub sent: Time,
    pub sacked: bool,
    /// Presumed lost (RFC 6675 IsLost, or every unSACKed segment after an RTO).
    pub lost: bool,
    /// Retransmitted in the current recovery episode (RFC 6675 pipe rule S2).
    pub rexmit: bool,
    /// Ever retransmitted (Karn's rule, RFC 6298 §3).
    pub ever_rexmit: bool,
    /// SND.NXT when it was last retransmitted (Linux's lost-retransmission detection).
    pub rexmit_nxt: u64,
    /// Delivery-rate state at the last transmission (`tcp_skb_cb.tx`, `tcp_rate_skb_sent`).
    pub tx: TxRate,
}

/// What `tcp_rate.c` stamps on a segment when it is (re)sent.
#[derive(Copy, Clone, Debug, Default)]
pub struct TxRate {
    /// The connection's `delivered` then.
    pub delivered: u64,
    /// The connection's `delivered_time` then; None once the segment was counted as delivered by
    /// a SACK (Linux zeroes `delivered_mstamp`), so that it is not sampled twice.
    pub delivered_time: Option<Time>,
    /// Send time of the first segment of the flight it belongs to (`first_tx_mstamp`).
    pub first_tx: Time,
    /// The connection was application-limited then.
    pub app_limited: bool,
}

impl Seg {
    fn new(seq: u64, len: u32, fin: bool, now: Time) -> Seg {
        Seg { seq, len, fin, sent: now, sacked: false, lost: false, rexmit: false, ever_rexmit: false, rexmit_nxt: 0, tx: TxRate::default() }
    }
}

/// One ACK's accumulators for its rate sample (`tcp_rate_skb_delivered` fills them).
#[derive(Clone, Debug, Default)]
struct RateAcc {
    prior_delivered: u64,
    prior_time: Option<Time>,
    is_app_limited: bool,
    last_end_seq: u64,
    /// Send phase: send time of the newest delivered segment minus its flight's first send.
    send_elapsed: Time,
    /// Send time of the newest never-retransmitted segment delivered (for the RTT).
    rtt_sent: Option<Time>,
    prior_in_flight: u64,
    prior_ca: Option<CaState>,
    cwnd_limited: bool,
    delivered_before: u64,
    lost_before: u64,
}

impl Seg {
    pub fn end(&self) -> u64 { self.seq + self.len as u64 }
}

/// A segment to put on the wire.
#[derive(Clone, Debug)]
pub struct OutSeg {
    pub hdr: TcpHeader,
    /// Send as ECT(0) (RFC 3168 §6.1.5: new data only).
    pub ect: bool,
    /// IP bytes.
    pub size: u32,
}

/// What one call produced.
#[derive(Default, Debug)]
pub struct Output {
    pub segs: Vec<OutSeg>,
    pub rto: TimerCmd,
    pub pace: TimerCmd,
}

/// Counters for the `tcp_flows` row.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    pub syn_at: Option<Time>,
    pub first_data_at: Option<Time>,
    /// Last payload byte acknowledged.
    pub end_at: Option<Time>,
    pub bytes_acked: u64,
    /// Data segments put on the wire, retransmissions included.
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_recoveries: u64,
    pub timeouts: u64,
    pub syn_timeouts: u64,
    /// Window reductions caused by ECN-Echo.
    pub ecn_reductions: u64,
    /// ACKs received with ECE set.
    pub ece_acks: u64,
    /// Zero-window probes sent (RFC 9293 §3.8.6.1).
    pub window_probes: u64,
    /// Retransmissions found lost from SACK information (`lost_retransmit`).
    pub lost_retransmits: u64,
}

pub struct Sender {
    cfg: TcpConfig,
    sack: bool,
    pub state: State,
    pub ca: CaState,
    cc: Cc,
    cs: CcState,
    rtt: RttEstimator,
    /// End of the payload in sequence space (1 + size); u64::MAX/2 for an unlimited transfer.
    data_end: u64,
    unlimited: bool,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Peer's advertised window (bytes).
    pub rwnd: u64,
    segs: VecDeque<Seg>,
    dupacks: u32,
    /// RecoveryPoint (RFC 6675) / recover (RFC 6582): HighData when the last recovery began.
    recover: u64,
    high_sacked: u64,
    ecn_ok: bool,
    /// End of the window in which the last ECN reduction happened (one reduction per window).
    ecn_recover: u64,
    cwr_pending: bool,
    syn_sent_at: Time,
    syn_retx: u32,
    rto_at: Option<Time>,
    /// Consecutive timeouts without progress (RFC 5681: ssthresh held on repeats).
    rto_series: u32,
    next_send: Time,
    /// The GSO skb being built (Linux sends up to `tcp_tso_segs` segments as one paced unit):
    /// its departure time, segments and payload bytes so far.
    skb_at: Option<Time>,
    skb_segs: u64,
    skb_bytes: u64,
    /// The last transmit attempt stopped because of cwnd (RFC 7661: grow only then).
    cwnd_limited: bool,
    /// Bytes sent by limited transmit since the last new ACK (RFC 5681 §3.2 step 2: not part of
    /// the FlightSize that sets ssthresh).
    lt_bytes: u64,
    /// The timer runs as the persist timer (zero window, nothing outstanding).
    persist: bool,
    /// RFC 3168 §6.1.2: ECN-Echo at a one-segment window → no new data until the timer expires.
    ecn_hold: bool,
    /// The ACK being processed carries ECE (no window growth on it, RFC 3168 §6.1.2).
    ack_ece: bool,
    /// RFC 6937 state: bytes delivered and sent since recovery began, and RecoverFS.
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    fin_sent: bool,
    /// Pace segments (the `pacing` key, or an algorithm that needs pacing).
    pacing: bool,
    /// `tcp_sock.first_tx_mstamp` of `tcp_rate.c`.
    first_tx: Time,
    /// Bytes ever marked lost (`tcp_sock.lost`).
    lost_total: u64,
    acc: RateAcc,
    last_rs: Option<RateSample>,
    /// Peer's sequence space: next byte expected from it (1 after its SYN, 2 after its FIN).
    rcv_nxt: u64,
    /// TCP Small Queues (`tsq.rs`); the agent counts what it hands to the host and completions.
    pub tsq: super::tsq::Tsq,
    pub stats: SenderStats,
}

impl Sender {
    /// A sender for `size` payload bytes (None: unlimited, as an FTP source). Panics on a `cc`
    /// name not in [`cc::REGISTRY`] (scenarios are validated before; see [`Sender::try_new`]).
    pub fn new(cfg: TcpConfig, size: Option<u64>) -> Sender { Sender::try_new(cfg, size).unwrap_or_else(|e| panic!("{e}")) }

    /// A sender, or the registry's error for an unknown `cc` name.
    pub fn try_new(cfg: TcpConfig, size: Option<u64>) -> Result<Sender, String> {
        let cc = cc::build(&cfg.cc, &cfg)?;
        Ok(Sender::with_cc(cfg, size, cc))
    }

    /// A sender driven by a congestion controller built by the caller (`cfg.cc` is not read), as
    /// quinn's `TransportConfig::congestion_controller_factory`: for tests and out-of-tree
    /// algorithms.
    pub fn with_cc(cfg: TcpConfig, size: Option<u64>, cc: Cc) -> Sender {
        let mss = cfg.mss.max(1) as u64;
        let cs = CcState { ssthresh: cfg.initial_ssthresh, abc_l: cfg.abc, ..CcState::new(mss, cfg.iw.max(1) as u64 * mss) };
        let pacing = cfg.pacing || cc.needs_pacing();
        let (data_end, unlimited) = match size {
            Some(s) => (1 + s, false),
            None => (u64::MAX / 2, true),
        };
        Sender {
            sack: cfg.recovery == Recovery::Sack,
            rtt: if cfg.rto_linux { RttEstimator::linux(cfg.min_rto) } else { RttEstimator::new(cfg.min_rto) },
            cfg,
            state: State::Closed,
            ca: CaState::Open,
            cc,
            cs,
            data_end,
            unlimited,
            snd_una: 0,
            snd_nxt: 0,
            rwnd: 0,
            segs: VecDeque::new(),
            dupacks: 0,
            recover: 0,
            high_sacked: 0,
            ecn_ok: false,
            ecn_recover: 0,
            cwr_pending: false,
            syn_sent_at: Time::ZERO,
            syn_retx: 0,
            rto_at: None,
            rto_series: 0,
            next_send: Time::ZERO,
            skb_at: None,
            skb_segs: 0,
            skb_bytes: 0,
            cwnd_limited: false,
            lt_bytes: 0,
            persist: false,
            ecn_hold: false,
            ack_ece: false,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            fin_sent: false,
            pacing,
            first_tx: Time::ZERO,
            lost_total: 0,
            acc: RateAcc::default(),
            last_rs: None,
            rcv_nxt: 0,
            tsq: Default::default(),
            stats: SenderStats::default(),
        }
    }

    pub fn config(&self) -> &TcpConfig { &self.cfg }
    pub fn cwnd(&self) -> u64 { self.cs.cwnd }
    pub fn ssthresh(&self) -> u64 { self.cs.ssthresh }
    pub fn srtt(&self) -> Option<Time> { self.rtt.srtt() }
    pub fn rto(&self) -> Time { self.rtt.rto() }
    pub fn cc_name(&self) -> &'static str { self.cc.name() }
    pub fn cc(&self) -> &dyn CongestionControl { self.cc.as_ref() }
    /// The state the algorithm sees (cwnd, delivery counters, …).
    pub fn cc_state(&self) -> &CcState { &self.cs }
    /// The rate sample handed to the algorithm on the last ACK.
    pub fn last_rate_sample(&self) -> Option<RateSample> { self.last_rs }
    /// The algorithm's pacing rate now (bytes/s), when it has one.
    pub fn pacing_rate(&self) -> Option<f64> { self.cc.pacing_rate(&self.cs) }
    pub fn ecn_ok(&self) -> bool { self.ecn_ok }
    pub fn is_unlimited(&self) -> bool { self.unlimited }
    /// Payload bytes the transfer is to move (None when unlimited).
    pub fn size(&self) -> Option<u64> { if self.unlimited { None } else { Some(self.data_end - 1) } }
    /// FlightSize of RFC 5681: SND.NXT − SND.UNA.
    pub fn flight_size(&self) -> u64 { self.snd_nxt - self.snd_una }
    pub fn done(&self) -> bool { self.stats.end_at.is_some() }

    /// RFC 6675 §4 SetPipe: per unSACKed octet, 1 if not lost plus 1 if retransmitted.
    pub fn pipe(&self) -> u64 {
        if self.ca == CaState::Open || (!self.sack && self.ca == CaState::Recovery) {
            // Outside recovery (and for NewReno) the sender uses FlightSize (RFC 5681).
            return self.flight_size();
        }
        let mut p = 0;
        for s in &self.segs {
            if !s.sacked {
                if !s.lost {
                    p += s.len as u64;
                }
                if s.rexmit {
                    p += s.len as u64;
                }
            }
        }
        p
    }

    /// Linux's `tcp_packets_in_flight` in bytes: RFC 6675's pipe (SACKed and lost segments out,
    /// retransmissions in) whatever the recovery state, where [`Sender::pipe`] uses FlightSize
    /// outside recovery as RFC 5681 does.
    pub fn packets_in_flight(&self) -> u64 {
        self.segs.iter().filter(|s| !s.sacked).map(|s| if s.lost { 0 } else { s.len as u64 } + if s.rexmit { s.len as u64 } else { 0 }).sum()
    }

    /// Starts the connection: RFC 9293 §3.10.1 OPEN in CLOSED → send SYN, SYN-SENT.
    pub fn connect(&mut self, now: Time, out: &mut Output) {
        if self.state != State::Closed {
            return;
        }
        self.state = State::SynSent;
        self.stats.syn_at = Some(now);
        self.send_syn(now, out);
    }

    fn send_syn(&mut self, now: Time, out: &mut Output) {
        self.syn_sent_at = now;
        let mut flags = F::SYN;
        if self.cfg.ecn {
            // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR.
            flags |= F::ECE | F::CWR;
        }
        let hdr = TcpHeader {
            seq: 0,
            flags,
            wnd: 65_535,
            wscale: if self.cfg.wscale { Some(0) } else { None },
            ..Default::default()
        };
        out.segs.push(OutSeg { hdr, ect: false, size: HEADER_BYTES });
        self.arm_rto(now, out);
    }

    fn arm_rto(&mut self, now: Time, out: &mut Output) {
        let at = now + self.rtt.rto();
        self.rto_at = Some(at);
        out.rto = TimerCmd::Set(at);
    }

    fn cancel_rto(&mut self, out: &mut Output) {
        self.rto_at = None;
        out.rto = TimerCmd::Cancel;
    }

    /// One arriving segment from the receiver.
    pub fn process(&mut self, hdr: &TcpHeader, now: Time, out: &mut Output) {
        self.cs.now = now;
        let syn = hdr.flags & F::SYN != 0;
        let ack = hdr.flags & F::ACK != 0;
        let fin = hdr.flags & F::FIN != 0;
        match self.state {
            // RFC 9293 §3.10.7.1: CLOSED ignores (we send no RST in the simulator).
            State::Closed => {}
            // RFC 9293 §3.10.7.3: SYN-SENT, SYN-ACK acknowledging our SYN → ESTABLISHED.
            State::SynSent if syn && ack && hdr.ack == 1 => self.on_syn_ack(hdr, now, out),
            // RFC 9293 §3.10.7.3: anything else in SYN-SENT is dropped.
            State::SynSent => {}
            // Established and closing states: ACK processing (RFC 9293 §3.10.7.4 "fifth, check the
            // ACK field"), then the peer's FIN.
            State::Established | State::FinWait1 | State::FinWait2 => {
                if ack {
                    self.on_ack(hdr, now, out);
                }
                if fin && hdr.seq == self.rcv_nxt && self.state == State::FinWait2 {
                    // RFC 9293 §3.10.7.4 eighth: FIN in FIN-WAIT-2 → ACK it, TIME-WAIT.
                    self.rcv_nxt += 1;
                    self.state = State::TimeWait;
                    self.send_pure_ack(out);
                }
            }
            // RFC 9293 §3.10.7.4: a retransmitted FIN in TIME-WAIT is acknowledged again.
            State::TimeWait => {
                if fin {
                    self.send_pure_ack(out);
                }
            }
        }
    }

    fn send_pure_ack(&mut self, out: &mut Output) {
        let hdr = TcpHeader { seq: self.snd_nxt, ack: self.rcv_nxt, flags: F::ACK, wnd: 65_535, ..Default::default() };
        out.segs.push(OutSeg { hdr, ect: false, size: HEADER_BYTES });
    }

    fn on_syn_ack(&mut self, hdr: &TcpHeader, now: Time, out: &mut Output) {
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.rcv_nxt = hdr.seq.saturating_add(1);
        // RFC 7323 §2.2: the SYN-ACK's window is never scaled; the header carries bytes already.
        self.rwnd = hdr.wnd;
        self.ecn_ok = self.cfg.ecn && hdr.flags & F::ECE != 0 && hdr.flags & F::CWR == 0;
        if self.syn_retx == 0 {
            // RFC 6298 §2/§3: the SYN was sent once, so its RTT is a valid sample.
            self.rtt.sample(now - self.syn_sent_at);
        } else {
            // RFC 6298 §5.7 and RFC 5681 §3.1: after a lost SYN, RTO = 3 s and IW = 1 segment.
            self.rtt.reset_after_syn_timeout();
            self.cs.cwnd = self.cs.mss;
        }
        self.cs.srtt = self.rtt.srtt();
        self.cs.min_rtt = self.rtt.min_rtt();
        self.state = State::Established;
        self.cancel_rto(out);
        let before = out.segs.len();
        self.transmit(now, out);
        if out.segs.len() == before {
            // Nothing to send (zero window or empty transfer): the handshake's third segment.
            self.send_pure_ack(out);
        }
    }

    /// Marks SACKed segments (RFC 2018 blocks) and returns the newly SACKed bytes.
    fn update_sack(&mut self, hdr: &TcpHeader) -> u64 {
        let mut newly = 0;
        for &(s, e) in &hdr.sack[..(hdr.nsack as usize).min(hdr.sack.len())] {
            if e <= self.snd_una || s >= e {
                continue;
            }
            let start = self.segs.partition_point(|g| g.end() <= s);
            for g in self.segs.iter_mut().skip(start) {
                if g.seq >= e {
                    break;
                }
                if g.seq >= s && g.end() <= e && !g.sacked {
                    g.sacked = true;
                    newly += g.len as u64;
                    self.high_sacked = self.high_sacked.max(g.end());
                    self.cs.delivered += g.len as u64;
                    rate_delivered(&mut self.acc, &mut self.first_tx, g);
                    // Counted now: not sampled again when cumulatively acknowledged.
                    g.tx.delivered_time = None;
                }
            }
        }
        newly
    }

    /// RFC 6675 §4 IsLost: an unSACKed segment is lost when DupThresh discontiguous SACKed segments
    /// lie above it, or more than (DupThresh − 1)·SMSS SACKed bytes.
    fn mark_lost(&mut self) {
        let mss = self.cs.mss;
        let mut n_above = 0u32;
        let mut bytes_above = 0u64;
        for g in self.segs.iter_mut().rev() {
            if g.sacked {
                n_above += 1;
                bytes_above += g.len as u64;
            } else if n_above >= DUP_THRESH || bytes_above > (DUP_THRESH as u64 - 1) * mss {
                if !g.lost {
                    self.lost_total += g.len as u64;
                }
                g.lost = true;
            }
        }
    }

    /// Linux's `tcp_mark_lost_retrans` (not in RFC 6675): a retransmission is lost when data sent
    /// after it (beyond the SND.NXT of its sending) has been SACKed; it becomes eligible for
    /// NextSeg rule (1) again instead of waiting for the RTO.
    fn mark_lost_retransmits(&mut self) {
        let high = self.high_sacked;
        for g in self.segs.iter_mut() {
            if g.rexmit && !g.sacked && high > g.rexmit_nxt {
                g.rexmit = false;
                g.lost = true;
                self.stats.lost_retransmits += 1;
            }
        }
    }

    fn on_ack(&mut self, hdr: &TcpHeader, now: Time, out: &mut Output) {
        let ackno = hdr.ack;
        if ackno > self.snd_nxt || ackno < self.snd_una {
            // RFC 9293 §3.10.7.4: an ACK for something not yet sent, or an old duplicate: ignore.
            return;
        }
        let old_rwnd = self.rwnd;
        // RFC 9293 §3.10.7.4: SND.UNA =< SEG.ACK, so update the send window.
        self.rwnd = hdr.wnd;
        if self.persist && self.rwnd > 0 {
            // The window opened: the persist timer gives way to the retransmission timer.
            self.persist = false;
            self.cancel_rto(out);
        }
        let ece = self.ecn_ok && hdr.flags & F::ECE != 0;
        if ece {
            self.stats.ece_acks += 1;
        }
        self.ack_ece = ece;
        self.acc = RateAcc {
            prior_in_flight: self.pipe(),
            prior_ca: Some(self.ca),
            cwnd_limited: self.cwnd_limited,
            delivered_before: self.cs.delivered,
            lost_before: self.lost_total,
            ..RateAcc::default()
        };
        let newly_sacked = if self.sack { self.update_sack(hdr) } else { 0 };
        let acked = ackno - self.snd_una;
        if acked > 0 {
            self.on_new_ack(ackno, acked, now, out);
        } else if self.snd_nxt > self.snd_una && hdr.len == 0 && hdr.flags & (F::SYN | F::FIN) == 0 {
            // A duplicate ACK: RFC 5681 §2 (same ACK, no data, same window) or, with SACK,
            // RFC 6675 §2 (it SACKs new data).
            let dup = if self.sack { newly_sacked > 0 } else { hdr.wnd == old_rwnd };
            if dup {
                self.on_dupack(now, out);
            }
        }
        if self.sack && newly_sacked > 0 {
            self.mark_lost();
            if self.cfg.lost_retransmit && self.ca == CaState::Recovery {
                self.mark_lost_retransmits();
            }
            // RFC 6675 §5 step 3(b): enter recovery when IsLost(HighACK + 1), even below DupThresh.
            if self.ca == CaState::Open && self.dupacks > 0 && self.segs.front().is_some_and(|g| g.lost && !g.fin) && self.snd_una > self.recover {
                self.enter_recovery(now, out);
            }
        }
        if ece {
            self.on_ece(now, out);
        }
        if self.prr_active() {
            self.prr_update(acked + newly_sacked);
        }
        // Linux's tcp_rate_gen then tcp_cong_control: every ACK reaches the algorithm.
        let rs = self.rate_gen(acked, now);
        self.cs.now = now;
        // (The O(window) count only for algorithms that read it: Reno and CUBIC do not.)
        self.cs.pipe = if self.cc.owns_cwnd() { self.packets_in_flight() } else { self.pipe() };
        self.cs.ca = self.ca;
        self.cs.next_send = self.next_send;
        self.cc.on_ack(&mut self.cs, &rs);
        self.last_rs = Some(rs);
        self.transmit(now, out);
    }

    /// `tcp_rate_gen` (net/ipv4/tcp_rate.c): the ACK's delivery-rate sample from what
    /// [`rate_delivered`] recorded.
    fn rate_gen(&mut self, newly_acked: u64, now: Time) -> RateSample {
        let a = &self.acc;
        let delivered_now = self.cs.delivered - a.delivered_before;
        // The app-limited stretch ends once everything sent in it is delivered.
        if self.cs.app_limited != 0 && self.cs.delivered > self.cs.app_limited {
            self.cs.app_limited = 0;
        }
        if delivered_now > 0 {
            self.cs.delivered_time = now;
        }
        let mut rs = RateSample {
            prior_delivered: a.prior_delivered,
            prior_time: a.prior_time.unwrap_or(Time::ZERO),
            delivered: None,
            interval: None,
            is_app_limited: a.is_app_limited,
            rtt: a.rtt_sent.map(|t| now - t),
            acked_sacked: delivered_now,
            newly_acked,
            losses: self.lost_total - a.lost_before,
            prior_in_flight: a.prior_in_flight,
            prior_ca: a.prior_ca,
            cwnd_limited: a.cwnd_limited,
            ece: self.ack_ece,
        };
        let Some(prior_time) = a.prior_time else { return rs };
        rs.delivered = Some(self.cs.delivered - a.prior_delivered);
        // The longer of the send and ACK phases, so that neither ACK compression nor a burst of
        // sends inflates the rate.
        let interval = a.send_elapsed.max(now - prior_time);
        // Shorter than the minimum RTT: a bogus sample (e.g. from a spurious retransmission).
        if self.rtt.min_rtt().is_some_and(|m| interval < m) {
            rs.delivered = None;
            return rs;
        }
        rs.interval = Some(interval);
        rs
    }

    fn on_new_ack(&mut self, ackno: u64, acked: u64, now: Time, out: &mut Output) {
        self.cs.flight = self.flight_size();
        // Remove fully acknowledged segments; RTT sample per Karn's rule (RFC 6298 §3): only when
        // none of them was retransmitted or already SACKed, from the earliest one (as Linux).
        let mut clean = true;
        let mut earliest: Option<Time> = None;
        let mut latest = Time::ZERO;
        let mut fin_acked = false;
        while let Some(g) = self.segs.front() {
            if g.end() > ackno {
                break;
            }
            let g = self.segs.pop_front().expect("front exists");
            if g.ever_rexmit || g.sacked {
                clean = false;
            }
            if !g.sacked {
                self.cs.delivered += g.len as u64;
                rate_delivered(&mut self.acc, &mut self.first_tx, &g);
            }
            if earliest.is_none() {
                earliest = Some(g.sent);
            }
            latest = latest.max(g.sent);
            fin_acked |= g.fin;
        }
        if clean {
            if let Some(t) = earliest {
                self.rtt.sample(now - t);
                self.cs.srtt = self.rtt.srtt();
                self.cs.min_rtt = self.rtt.min_rtt();
            }
        }
        self.snd_una = ackno;
        if clean && earliest.is_some() {
            // The algorithm's sample (Linux `pkts_acked`): the RTT of the newest segment covered.
            let s = AckSample { rtt: now - latest, snd_una: ackno, snd_nxt: self.snd_nxt, recovery: self.ca == CaState::Recovery };
            self.cc.on_ack_sample(&mut self.cs, &s);
        }
        self.dupacks = 0;
        self.lt_bytes = 0;
        self.rto_series = 0;
        self.stats.bytes_acked = (ackno - 1).min(self.data_end - 1);
        if self.stats.end_at.is_none() && !self.unlimited && ackno >= self.data_end {
            self.stats.end_at = Some(now);
        }
        if fin_acked && self.state == State::FinWait1 {
            // RFC 9293 §3.10.7.4: our FIN is acknowledged → FIN-WAIT-2.
            self.state = State::FinWait2;
        }
        // RFC 6298 §5.2 / §5.3: stop the timer when all is acknowledged, else restart it.
        if self.snd_una >= self.snd_nxt {
            // (An ECN hold keeps its timer: it is what ends the hold.)
            if !self.ecn_hold {
                self.cancel_rto(out);
            }
        } else {
            self.arm_rto(now, out);
        }
        match self.ca {
            CaState::Recovery if ackno >= self.recover => {
                // RFC 6675 §5 step (2) / RFC 6582 §3.2 step 3: full ACK ends recovery.
                self.ca = CaState::Open;
                if !self.sack {
                    // RFC 6582 §3.2 step 3 option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
                    self.cs.cwnd = self.cs.ssthresh.min(self.flight_size().max(self.cs.mss) + self.cs.mss);
                } else if self.cfg.prr && !self.cc.owns_cwnd() {
                    // RFC 6937: at the end of recovery cwnd = ssthresh (not for an algorithm
                    // that sets cwnd itself: Linux's tcp_end_cwnd_reduction).
                    self.cs.cwnd = self.cs.ssthresh;
                }
                self.clear_episode();
            }
            CaState::Recovery => {
                if !self.sack && !self.cc.owns_cwnd() {
                    // RFC 6582 §3.2 step 4 (partial ACK): retransmit the first unacknowledged
                    // segment, deflate cwnd by the amount acknowledged, add back one SMSS if that
                    // was at least one SMSS. (Timer restarted above: the "Slow-but-Steady" variant.)
                    self.cs.cwnd = self.cs.cwnd.saturating_sub(acked);
                    if acked >= self.cs.mss {
                        self.cs.cwnd += self.cs.mss;
                    }
                    self.cs.cwnd = self.cs.cwnd.max(self.cs.mss);
                    self.retransmit_front(now, out);
                }
                // RFC 6675: a partial ACK needs no special action; pipe and NextSeg do the rest.
            }
            CaState::Loss => {
                // After an RTO the sender slow-starts (RFC 5681 §3.1) until RecoveryPoint; the
                // algorithm's on_ack does it at the end of the ACK (RateSample::may_raise_cwnd).
                if ackno >= self.recover {
                    self.ca = CaState::Open;
                    self.clear_episode();
                }
            }
            // Growth (cwnd-limited, no ECN-Echo: RFC 7661, RFC 3168 §6.1.2) is the algorithm's
            // on_ack at the end of the ACK.
            CaState::Open => {}
        }
    }

    /// Forget per-episode retransmission marks (RFC 6675 HighRxt reset).
    fn clear_episode(&mut self) {
        for g in self.segs.iter_mut() {
            g.rexmit = false;
        }
    }

    fn on_dupack(&mut self, now: Time, out: &mut Output) {
        self.dupacks += 1;
        match self.ca {
            CaState::Open => {
                // RFC 5681 §3.2 step 2 / RFC 6675 §5 step 3(a) / RFC 6582 §3.2 step 2: enter
                // recovery at DupThresh, but only once per window (SND.UNA beyond recover).
                if self.dupacks >= DUP_THRESH && (self.snd_una > self.recover || self.recover == 0) {
                    self.enter_recovery(now, out);
                }
            }
            CaState::Recovery => {
                if !self.sack && !self.cc.owns_cwnd() {
                    // RFC 6582 §3.2 step 4 / RFC 5681 step 4: inflate cwnd by one SMSS.
                    self.cs.cwnd += self.cs.mss;
                }
            }
            CaState::Loss => {}
        }
    }

    fn prr_active(&self) -> bool { self.cfg.prr && self.sack && self.ca == CaState::Recovery && !self.cc.owns_cwnd() }

    /// RFC 6937 §3 on each ACK in recovery: spread the reduction to ssthresh over the round trip
    /// (proportional part while pipe > ssthresh, then slow-start reduction bound, PRR-SSRB).
    fn prr_update(&mut self, delivered: u64) {
        self.prr_delivered += delivered;
        let pipe = self.pipe();
        let ssthresh = self.cs.ssthresh;
        let sndcnt = prr_sndcnt(self.prr_delivered, self.prr_out, ssthresh, self.recover_fs, pipe, delivered, self.cs.mss);
        // Counted in whole segments, as Linux does (a byte count below one SMSS would otherwise
        // never let a segment out until it accumulates).
        let mss = self.cs.mss;
        self.cs.cwnd = pipe + sndcnt.div_ceil(mss) * mss;
    }

    fn enter_recovery(&mut self, now: Time, out: &mut Output) {
        // RFC 6675 §5 step 4.1 / RFC 6582 §3.2 step 2: RecoveryPoint = HighData.
        self.recover = self.snd_nxt;
        // RFC 5681 §3.2 step 2: data sent by limited transmit is not counted.
        self.cs.flight = self.flight_size().saturating_sub(self.lt_bytes);
        // Step 4.2: ssthresh = cwnd = max(FlightSize/2, 2·SMSS) (or the algorithm's β).
        self.cc.on_congestion_event(&mut self.cs);
        if !self.sack && !self.cc.owns_cwnd() {
            // RFC 6582 §3.2 step 3 / RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS.
            self.cs.cwnd = self.cs.ssthresh + DUP_THRESH as u64 * self.cs.mss;
        }
        self.ca = CaState::Recovery;
        self.stats.fast_recoveries += 1;
        // RFC 6937: prr_delivered = prr_out = 0, RecoverFS = SND.NXT − SND.UNA.
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.recover_fs = self.flight_size();
        // The ECN reaction shares this reduction (RFC 3168 §6.1.2: at most once per window).
        self.ecn_recover = self.snd_nxt;
        // Step 4.3: retransmit the first segment presumed dropped.
        if let Some(g) = self.segs.front_mut() {
            if !g.lost {
                self.lost_total += g.len as u64;
            }
            g.lost = true;
        }
        self.retransmit_front(now, out);
    }

    fn on_ece(&mut self, now: Time, out: &mut Output) {
        // RFC 3168 §6.1.2: halve the window at most once per window of data, and not again
        // while loss recovery has already reduced it.
        if self.ca != CaState::Open || self.snd_una <= self.ecn_recover {
            return;
        }
        let before = self.cs.cwnd;
        self.cs.flight = self.flight_size();
        self.cc.on_ecn(&mut self.cs);
        // The reduction never raises cwnd (the 2·SMSS floor of eq. 4 applies to ssthresh).
        self.cs.cwnd = self.cs.cwnd.min(before).max(self.cs.mss);
        if before <= self.cs.mss {
            // RFC 3168 §6.1.2: at a one-segment window, reset the retransmission timer and send
            // the next new segment only when it expires.
            self.ecn_hold = true;
            self.arm_rto(now, out);
        }
        self.ecn_recover = self.snd_nxt;
        // RFC 3168 §6.1.2: set CWR on the next new data segment.
        self.cwr_pending = true;
        self.stats.ecn_reductions += 1;
    }

    /// The retransmission timer fired.
    pub fn on_rto(&mut self, now: Time, out: &mut Output) {
        self.cs.now = now;
        self.rto_at = None;
        match self.state {
            State::SynSent => {
                // RFC 6298 §5.5/5.6 for the SYN: back off, resend, restart the timer.
                self.syn_retx += 1;
                self.stats.syn_timeouts += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            State::Established | State::FinWait1 if self.ecn_hold && self.snd_una == self.snd_nxt => {
                // RFC 3168 §6.1.2: the hold after an ECN-Echo at one segment is over.
                self.ecn_hold = false;
                self.transmit(now, out);
            }
            State::Established if self.persist && self.snd_una == self.snd_nxt => {
                // RFC 9293 §3.8.6.1 window probe; like Linux, a zero-length segment with an old
                // sequence number, which the receiver must acknowledge with its current window.
                self.persist = false;
                self.rtt.backoff();
                let hdr = TcpHeader { seq: self.snd_una - 1, ack: self.rcv_nxt, flags: F::ACK, wnd: 65_535, ..Default::default() };
                out.segs.push(OutSeg { hdr, ect: false, size: HEADER_BYTES });
                self.stats.window_probes += 1;
                self.transmit(now, out);
                if self.rto_at.is_none() {
                    self.persist = true;
                    self.arm_rto(now, out);
                }
            }
            State::Established | State::FinWait1 if self.snd_una < self.snd_nxt => {
                self.ecn_hold = false;
                self.stats.timeouts += 1;
                self.cs.flight = self.flight_size();
                // RFC 5681 §3.1: ssthresh from eq. 4 (held on repeated timeouts), cwnd = 1 SMSS.
                self.cs.pipe = self.pipe();
                self.cc.on_rto(&mut self.cs, self.rto_series == 0);
                self.rto_series += 1;
                // RFC 6298 §5.5: back off the timer.
                self.rtt.backoff();
                // Every unSACKed segment is presumed lost and resent in order (RFC 6675 §5.1).
                for g in self.segs.iter_mut() {
                    g.rexmit = false;
                    if !g.sacked {
                        if !g.lost {
                            self.lost_total += g.len as u64;
                        }
                        g.lost = true;
                    }
                }
                self.ca = CaState::Loss;
                self.recover = self.snd_nxt;
                self.dupacks = 0;
                self.next_send = now;
                // RFC 6298 §5.4: retransmit the earliest unacknowledged segment; §5.6 restart timer.
                self.transmit(now, out);
                if self.rto_at.is_none() {
                    self.arm_rto(now, out);
                }
            }
            _ => {}
        }
    }

    /// The pacing timer fired.
    pub fn on_pace(&mut self, now: Time, out: &mut Output) {
        self.cs.now = now;
        self.transmit(now, out);
    }

    fn retransmit_front(&mut self, now: Time, out: &mut Output) {
        if !self.segs.is_empty() {
            self.send_seg(0, true, now, out);
        }
    }

    /// RFC 6675 §4 NextSeg rule (1) (also used after an RTO): the first lost, unSACKed segment not
    /// yet retransmitted in this episode.
    fn next_lost(&self) -> Option<usize> { self.segs.iter().position(|g| g.lost && !g.sacked && !g.rexmit) }

    /// RFC 6675 §4 NextSeg rule (3): an unSACKed, not retransmitted segment below HighSACK.
    fn next_rule3(&self) -> Option<usize> {
        self.segs.iter().position(|g| !g.sacked && !g.rexmit && g.end() <= self.high_sacked)
    }

    /// Sends while the window allows (RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS).
    fn transmit(&mut self, now: Time, out: &mut Output) {
        if !matches!(self.state, State::Established | State::FinWait1) {
            return;
        }
        let mss = self.cs.mss;
        loop {
            // Linux paces GSO skbs: new segments may join the skb that left at this instant
            // (up to `tso_segs`) whatever the pacing timer says; anything else waits for it.
            let paced_out = self.pacing && now < self.next_send;
            if paced_out && !(self.skb_at == Some(now) && self.skb_segs < self.cc.tso_segs(&self.cs)) {
                out.pace = TimerCmd::Set(self.next_send);
                break;
            }
            let pipe = self.pipe();
            let mut win = self.cc.window(&self.cs);
            let in_recovery = self.ca != CaState::Open;
            // RFC 3042: on the first two duplicate ACKs, up to two new segments beyond cwnd.
            let lt = if self.cfg.limited_transmit && !in_recovery && self.dupacks > 0 && self.dupacks < DUP_THRESH {
                self.dupacks.min(2) as u64 * mss
            } else {
                0
            };
            win += lt;
            if pipe + mss > win {
                self.cwnd_limited = true;
                break;
            }
            // Rule (1): retransmit a lost segment (in Recovery with SACK, or after an RTO).
            if in_recovery && (self.sack || self.ca == CaState::Loss) {
                if let Some(i) = self.next_lost() {
                    if paced_out {
                        out.pace = TimerCmd::Set(self.next_send);
                        break;
                    }
                    if self.tsq_holds(1, out) {
                        break;
                    }
                    self.send_seg(i, true, now, out);
                    continue;
                }
            }
            // Rule (2): new data within the peer's window (RFC 5681 §3: min(cwnd, rwnd)), unless
            // held after an ECN-Echo at a one-segment window.
            if self.ecn_hold {
                self.cwnd_limited = false;
                break;
            }
            if self.snd_nxt < self.data_end {
                let mut len = (self.data_end - self.snd_nxt).min(mss);
                if self.snd_nxt + len - self.snd_una > self.rwnd {
                    let usable = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
                    if self.snd_nxt == self.snd_una && usable > 0 {
                        // RFC 9293 §3.8.6.2.1: with nothing in flight a window smaller than a
                        // segment is used as it is (otherwise the connection would stall).
                        len = usable;
                    } else {
                        if self.snd_nxt == self.snd_una && self.rto_at.is_none() {
                            // RFC 9293 §3.8.6.1: zero window, nothing in flight → persist timer
                            // (the retransmission timer with its backoff) to probe the window.
                            self.persist = true;
                            self.arm_rto(now, out);
                        }
                        self.cwnd_limited = false;
                        break;
                    }
                }
                if self.tsq_holds(0, out) {
                    break;
                }
                let seq = self.snd_nxt;
                if lt > 0 && pipe + mss > self.cc.window(&self.cs) {
                    self.lt_bytes += len;
                }
                self.snd_nxt += len;
                self.segs.push_back(Seg::new(seq, len as u32, false, now));
                let i = self.segs.len() - 1;
                self.send_seg(i, false, now, out);
                continue;
            }
            // The FIN follows the last payload byte (RFC 9293 §3.10.4 CLOSE).
            if !self.unlimited && !self.fin_sent && self.snd_nxt == self.data_end {
                if self.tsq_holds(0, out) {
                    break;
                }
                self.fin_sent = true;
                let seq = self.snd_nxt;
                self.snd_nxt += 1;
                self.segs.push_back(Seg::new(seq, 1, true, now));
                let i = self.segs.len() - 1;
                self.send_seg(i, false, now, out);
                self.state = State::FinWait1;
                continue;
            }
            // Rule (3): with SACK in recovery, resend an unSACKed segment below HighSACK.
            if self.sack && self.ca == CaState::Recovery {
                if let Some(i) = self.next_rule3() {
                    if paced_out {
                        out.pace = TimerCmd::Set(self.next_send);
                        break;
                    }
                    if self.tsq_holds(1, out) {
                        break;
                    }
                    self.send_seg(i, true, now, out);
                    continue;
                }
            }
            // Application-limited: tcp_rate_check_app_limited (less than a segment to send, not
            // cwnd-limited, no lost segment waiting): samples until what is in flight now is
            // delivered are marked app-limited.
            self.cwnd_limited = false;
            if self.next_lost().is_none() {
                self.cs.app_limited = (self.cs.delivered + self.packets_in_flight()).max(1);
            }
            break;
        }
        // RFC 6298 §5.1: start the timer when data is outstanding and it is not running.
        if self.snd_nxt > self.snd_una && self.rto_at.is_none() {
            self.arm_rto(now, out);
        }
    }

    /// TCP Small Queues gate (`tsq.rs`, Linux's `tcp_small_queue_check(sk, skb, factor)`; factor 1
    /// for retransmissions): true if this connection already holds its limit at its host, counting
    /// the segments of this call not yet handed over. A held sender is not application-limited, so
    /// it counts as cwnd-limited for window growth; the next TX completion calls `on_pace`.
    fn tsq_holds(&mut self, factor: u32, out: &Output) -> bool {
        use super::tsq;
        if !self.cfg.tsq {
            return false;
        }
        let mss = self.cs.mss;
        let srtt_us = self.rtt.srtt().map(|t| t.ns() / 1000);
        // BBR sets sk_pacing_rate itself (its cong_control replaces tcp_update_pacing_rate).
        let rate = if self.cc.needs_pacing() {
            self.cc.pacing_rate(&self.cs).map(|r| r.max(0.0) as u64)
        } else {
            tsq::pacing_rate(mss, self.cs.cwnd, self.cs.ssthresh, self.segs.len() as u64, srtt_us)
        };
        let lim = tsq::limit(tsq::truesize(mss as u32), rate, factor);
        // The segments of this call not yet handed over; summed only near the limit (each is at
        // most one MSS), so a long burst under a large limit stays linear.
        let n = out.segs.len() as u64;
        let pending = if 1 + self.tsq.queued + n * tsq::truesize(mss as u32) <= lim {
            0
        } else {
            out.segs.iter().map(|s| tsq::truesize(s.size.saturating_sub(HEADER_BYTES))).sum()
        };
        let held = self.tsq.check(lim, pending, self.segs.len());
        if held {
            self.cwnd_limited = true;
        }
        held
    }

    /// Puts segment `i` of the scoreboard on the wire (a retransmission if it was sent before).
    fn send_seg(&mut self, i: usize, is_rexmit: bool, now: Time, out: &mut Output) {
        let rcv_nxt = self.rcv_nxt;
        // Bytes in flight before this transmission (a new segment is already in SND.NXT).
        let in_flight = if is_rexmit { self.flight_size() } else { self.flight_size() - self.segs[i].len as u64 };
        if in_flight == 0 {
            // tcp_rate_skb_sent: a flight starts from idle.
            self.first_tx = now;
            self.cs.delivered_time = now;
        }
        let g = &mut self.segs[i];
        let g_len = g.len as u64;
        g.tx = TxRate { delivered: self.cs.delivered, delivered_time: Some(self.cs.delivered_time), first_tx: self.first_tx, app_limited: self.cs.app_limited != 0 };
        if is_rexmit {
            g.rexmit = true;
            g.ever_rexmit = true;
            g.rexmit_nxt = self.snd_nxt;
            g.sent = now;
        }
        let payload = if g.fin { 0 } else { g.len };
        let head_rexmit = is_rexmit && i == 0;
        let mut flags = F::ACK;
        if g.fin {
            flags |= F::FIN;
        }
        // RFC 3168 §6.1.5: retransmissions are not ECT; §6.1.2: CWR on the next new data.
        let ect = self.ecn_ok && !is_rexmit && payload > 0;
        if ect && self.cwr_pending {
            flags |= F::CWR;
            self.cwr_pending = false;
        }
        let hdr = TcpHeader { seq: g.seq, ack: rcv_nxt, flags, wnd: 65_535, len: payload, ..Default::default() };
        let size = payload + HEADER_BYTES;
        out.segs.push(OutSeg { hdr, ect, size });
        if self.ca == CaState::Recovery {
            // RFC 6937: prr_out counts data (re)sent during recovery.
            self.prr_out += g_len;
        }
        if payload > 0 {
            self.stats.segments_sent += 1;
            if is_rexmit {
                self.stats.retransmits += 1;
            }
            if self.stats.first_data_at.is_none() {
                self.stats.first_data_at = Some(now);
            }
        }
        if head_rexmit {
            // As Linux (tcp_xmit_retransmit_queue), the timer restarts whenever the first
            // unacknowledged segment is retransmitted, so it times that retransmission.
            self.arm_rto(now, out);
        }
        self.cs.now = now;
        self.cc.on_sent(&mut self.cs, g_len, in_flight);
        if self.pacing {
            if let Some(rate) = self.cc.pacing_rate(&self.cs) {
                // Linux (tcp_update_skb_after_send) spaces by the payload and leaves the first
                // nine data segments unpaced ("sch_fq does not pace first 10 MSS"). New data
                // leaves in GSO skbs of up to `tso_segs` segments (tcp_write_xmit splits its
                // queue at tcp_tso_segs); the gap after an skb is its whole length at the rate.
                let linux = self.cc.paces_payload();
                let bytes = if linux { payload } else { size };
                let tso = self.cc.tso_segs(&self.cs);
                if tso > 1 && !is_rexmit && self.skb_at == Some(now) && self.skb_segs < tso {
                    self.skb_segs += 1;
                    self.skb_bytes += bytes as u64;
                } else {
                    self.skb_at = Some(now);
                    self.skb_segs = 1;
                    self.skb_bytes = bytes as u64;
                }
                if rate > 0.0 && !(linux && self.stats.segments_sent < 10) {
                    self.next_send = now + Time::from_secs_f64(self.skb_bytes as f64 / rate);
                }
            }
        }
    }
}

/// `tcp_rate_skb_delivered`: segment `g` is newly delivered by this ACK; the newest-sent one
/// delivered (send time, then sequence) gives the sample its starting point.
fn rate_delivered(acc: &mut RateAcc, first_tx: &mut Time, g: &Seg) {
    let Some(dt) = g.tx.delivered_time else { return };
    if !g.ever_rexmit {
        acc.rtt_sent = Some(acc.rtt_sent.map_or(g.sent, |t| t.max(g.sent)));
    }
    let sent_after = g.sent > *first_tx || (g.sent == *first_tx && g.end() > acc.last_end_seq);
    if acc.prior_delivered == 0 || sent_after {
        acc.prior_delivered = g.tx.delivered;
        acc.prior_time = Some(dt);
        acc.is_app_limited = g.tx.app_limited;
        acc.last_end_seq = g.end();
        *first_tx = g.sent;
        acc.send_elapsed = g.sent - g.tx.first_tx;
    }
}

/// RFC 6937 §3.1, the amount PRR lets out on one ACK in recovery (any consistent unit: bytes here,
/// packets in Linux's `tcp_cwnd_reduction`).
pub(crate) fn prr_sndcnt(prr_delivered: u64, prr_out: u64, ssthresh: u64, recover_fs: u64, pipe: u64, delivered: u64, mss: u64) -> u64 {
    if pipe > ssthresh {
        // sndcnt = CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out
        let num = prr_delivered as u128 * ssthresh as u128;
        let fs = recover_fs.max(1) as u128;
        (num.div_ceil(fs) as u64).saturating_sub(prr_out)
    } else {
        // PRR-SSRB: limit = MAX(prr_delivered − prr_out, DeliveredData) + MSS
        let limit = prr_delivered.saturating_sub(prr_out).max(delivered) + mss;
        (ssthresh - pipe).min(limit)
    }
}

#[cfg(test)]
mod prr_tests {
    use super::prr_sndcnt;

    /// RFC 6937's arithmetic in packets (Linux's unit), CUBIC's β = 0.7: RecoverFS = 10,
    /// ssthresh = 7. The first delivered packet allows CEIL(1·7/10) = 1 (a floor would send
    /// nothing); after 3 delivered and 2 sent, CEIL(2.1) − 2 = 1; after 10 delivered and 7 sent, 0.
    #[test]
    fn proportional_part_rounds_up() {
        assert_eq!(prr_sndcnt(1, 0, 7, 10, 9, 1, 1), 1);
        assert_eq!(prr_sndcnt(3, 2, 7, 10, 8, 1, 1), 1);
        assert_eq!(prr_sndcnt(10, 7, 7, 10, 8, 1, 1), 0);
        // Exact quotients are not rounded: 4·5/10 = 2, 2 already out.
        assert_eq!(prr_sndcnt(4, 2, 5, 10, 7, 1, 1), 0);
    }

    /// PRR-SSRB once pipe ≤ ssthresh: min(ssthresh − pipe, MAX(prr_delivered − prr_out, delivered) + MSS).
    #[test]
    fn slow_start_reduction_bound() {
        // ssthresh 7, pipe 3: room 4; bound max(6 − 5, 1) + 1 = 2.
        assert_eq!(prr_sndcnt(6, 5, 7, 10, 3, 1, 1), 2);
        // Room smaller than the bound: ssthresh 7, pipe 6, bound max(9 − 2, 1) + 1 = 8 → 1.
        assert_eq!(prr_sndcnt(9, 2, 7, 10, 6, 1, 1), 1);
    }
}
