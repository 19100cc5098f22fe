//! The sending end of a connection as an explicit state machine (RFC 9293 names). It opens the
//! connection (SYN, retransmitted on the RFC 6298 initial RTO of 1 s), sends `size` payload bytes
//! (or forever) under min(cwnd, rwnd), recovers losses with SACK (RFC 6675) or NewReno (RFC 6582),
//! detects losses by time with RACK and probes tail losses with TLP (RFC 8985, as Linux), falls back
//! to the retransmission timer (RFC 6298), reacts to ECN-Echo once per window (RFC 3168), carries
//! the timestamps option (RFC 7323), and closes with a FIN.
//!
//! This file is the state machine and the transmit loop; its parts live beside it, each with its
//! own tests: the SACK scoreboard ([`super::scoreboard`]), loss-recovery bookkeeping and PRR
//! ([`super::recovery`]), RACK-TLP ([`super::rack`]), ECN state ([`super::ecn`]), the timer set
//! ([`super::timers`]), delivery-rate
//! sampling ([`super::rate`]) and the RTT estimator ([`super::rtt`]).
//!
//! Pure: [`Sender::process`], [`Sender::on_rto`] and [`Sender::on_pace`] take the time and fill an
//! [`Output`] (segments, timer requests); nothing here touches the engine.
use super::cc::{self, AckSample, Cc, CcState, CongestionControl, RateSample};
pub use super::cc::CaState;
use super::ecn::EcnState;
use super::rack::{self, Rack};
use super::rate::DeliveryRate;
use super::recovery::LossRecovery;
pub use super::recovery::prr_sndcnt;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
pub use super::scoreboard::{Seg, TxRate};
use super::timers::{TimerKind, Timers};
use super::{wire_size, Recovery, TcpConfig, TimerCmd, HEADER_BYTES, TS_OPTION_BYTES};
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
    /// Retransmissions found lost from SACK information (`lost_retransmit`, or RACK).
    pub lost_retransmits: u64,
    /// Tail loss probes sent (Linux's `TCPLossProbes`).
    pub loss_probes: u64,
    /// Losses repaired by a probe, each with one window reduction (`TCPLossProbeRecovery`).
    pub loss_probe_recoveries: u64,
    /// RACK reordering-timer expiries.
    pub reorder_timeouts: u64,
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
    sb: Scoreboard,
    rec: LossRecovery,
    ecn: EcnState,
    timers: Timers,
    rate: DeliveryRate,
    rack: Rack,
    /// The timestamps option is in use (RFC 7323 §3.2): asked for until the SYN-ACK, then as
    /// negotiated.
    ts_ok: bool,
    /// The peer's latest TSval, echoed in TSecr (RFC 7323 §4.3 TS.Recent).
    ts_recent: u32,
    /// HighSACK before the ACK being processed (Linux's `prior_fack`), for reordering detection.
    prior_high_sacked: u64,
    next_send: Time,
    /// The GSO skb being built (Linux sends up to `tcp_tso_segs` segments as one paced unit):
    /// its departure time, segments and payload bytes so far.
    skb_at: Option<Time>,
    skb_segs: u64,
    skb_bytes: u64,
    /// Linux's pacing clock at the current skb: where its gap starts (`tcp_wstamp_ns` after
    /// `max(tcp_wstamp_ns, now)`) and how late it left (the "OS jitter" credit).
    skb_start: Time,
    skb_credit: Time,
    /// The last transmit attempt stopped because of cwnd (RFC 7661: grow only then).
    cwnd_limited: bool,
    fin_sent: bool,
    /// Pace segments (the `pacing` key, or an algorithm that needs pacing).
    pacing: bool,
    /// `pace_iw`: the first flight is still being spread over the SYN RTT (until data is ACKed).
    iw_paced: bool,
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
        // RFC 7323 §3.2 / Linux's `mss_cache`: the option's 12 bytes come out of every segment, so
        // SMSS (RFC 5681: payload bytes) is the MSS option minus 12.
        let mss = cfg.payload_mss() as u64;
        let cs = CcState { ssthresh: cfg.initial_ssthresh, abc_l: cfg.abc, ..CcState::new(mss, cfg.iw.max(1) as u64 * mss) };
        let pacing = cfg.pacing || cc.needs_pacing();
        let iw_paced = cfg.pace_iw;
        let (data_end, unlimited) = match size {
            Some(s) => (1 + s, false),
            None => (u64::MAX / 2, true),
        };
        let timestamps = cfg.timestamps;
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
            sb: Scoreboard::default(),
            rec: LossRecovery::default(),
            ecn: EcnState::default(),
            timers: Timers::default(),
            rate: DeliveryRate::default(),
            rack: Rack::default(),
            ts_ok: timestamps,
            ts_recent: 0,
            prior_high_sacked: 0,
            next_send: Time::ZERO,
            skb_at: None,
            skb_segs: 0,
            skb_bytes: 0,
            skb_start: Time::ZERO,
            skb_credit: Time::ZERO,
            cwnd_limited: false,
            fin_sent: false,
            pacing,
            iw_paced,
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
    /// The RTT estimator (latest sample, minimum, SRTT, RTTVAR).
    pub fn rtt_estimator(&self) -> &RttEstimator { &self.rtt }
    pub fn cc_name(&self) -> &'static str { self.cc.name() }
    pub fn cc(&self) -> &dyn CongestionControl { self.cc.as_ref() }
    /// The state the algorithm sees (cwnd, delivery counters, …).
    pub fn cc_state(&self) -> &CcState { &self.cs }
    /// The rate sample handed to the algorithm on the last ACK.
    pub fn last_rate_sample(&self) -> Option<RateSample> { self.last_rs }
    /// The algorithm's pacing rate now (bytes/s), when it has one.
    pub fn pacing_rate(&self) -> Option<f64> { self.cc.pacing_rate(&self.cs) }
    pub fn ecn_ok(&self) -> bool { self.ecn.ok }
    pub fn is_unlimited(&self) -> bool { self.unlimited }
    /// Payload bytes the transfer is to move (None when unlimited).
    pub fn size(&self) -> Option<u64> { if self.unlimited { None } else { Some(self.data_end - 1) } }
    /// FlightSize of RFC 5681: SND.NXT − SND.UNA.
    pub fn flight_size(&self) -> u64 { self.snd_nxt - self.snd_una }
    pub fn done(&self) -> bool { self.stats.end_at.is_some() }
    /// The SACK scoreboard (segments sent and not cumulatively acknowledged).
    pub fn scoreboard(&self) -> &Scoreboard { &self.sb }
    /// RACK's state (RACK.rtt, the TLP episode, reordering seen).
    pub fn rack(&self) -> &Rack { &self.rack }
    /// The timestamps option is in use.
    pub fn timestamps(&self) -> bool { self.ts_ok }
    /// Bytes of IP and TCP header (with options) on each segment of this connection.
    pub fn header_bytes(&self) -> u32 { HEADER_BYTES + if self.ts_ok { TS_OPTION_BYTES } else { 0 } }
    /// The pending timer and what it is for.
    pub fn pending_timer(&self) -> Option<(TimerKind, Time)> { self.timers.pending() }

    /// RFC 6675 §4 SetPipe: per unSACKed octet, 1 if not lost plus 1 if retransmitted.
    pub fn pipe(&self) -> u64 {
        if self.ca == CaState::Open || (!self.sack && self.ca == CaState::Recovery) {
            // Outside recovery (and for NewReno) the sender uses FlightSize (RFC 5681).
            return self.flight_size();
        }
        self.sb.pipe()
    }

    /// Linux's `tcp_packets_in_flight` in bytes: RFC 6675's pipe (SACKed and lost segments out,
    /// retransmissions in) whatever the recovery state, where [`Sender::pipe`] uses FlightSize
    /// outside recovery as RFC 5681 does.
    pub fn packets_in_flight(&self) -> u64 { self.sb.pipe() }

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
        self.timers.syn_sent_at = now;
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
            // RFC 7323 §3.2: the SYN offers the option (TSecr 0: nothing to echo yet).
            ts: self.ts_option(now),
            ..Default::default()
        };
        out.segs.push(OutSeg { size: wire_size(&hdr), hdr, ect: false });
        self.arm_rto(now, out);
    }

    /// The timestamps option of a segment sent now: TSval, TSecr = TS.Recent (RFC 7323 §4.3).
    fn ts_option(&self, now: Time) -> Option<(u32, u32)> { self.ts_ok.then(|| (tsval(now), self.ts_recent)) }

    fn arm_rto(&mut self, now: Time, out: &mut Output) { self.timers.arm(TimerKind::Rto, now + self.rtt.rto(), &mut out.rto); }

    fn cancel_rto(&mut self, out: &mut Output) { self.timers.cancel(&mut out.rto); }

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
                    self.send_pure_ack(now, out);
                }
            }
            // RFC 9293 §3.10.7.4: a retransmitted FIN in TIME-WAIT is acknowledged again.
            State::TimeWait => {
                if fin {
                    self.send_pure_ack(now, out);
                }
            }
        }
    }

    fn send_pure_ack(&mut self, now: Time, out: &mut Output) {
        let hdr = TcpHeader { seq: self.snd_nxt, ack: self.rcv_nxt, flags: F::ACK, wnd: 65_535, ts: self.ts_option(now), ..Default::default() };
        out.segs.push(OutSeg { size: wire_size(&hdr), hdr, ect: false });
    }

    fn on_syn_ack(&mut self, hdr: &TcpHeader, now: Time, out: &mut Output) {
        self.snd_una = 1;
        self.snd_nxt = 1;
        self.rcv_nxt = hdr.seq.saturating_add(1);
        // RFC 7323 §2.2: the SYN-ACK's window is never scaled; the header carries bytes already.
        self.rwnd = hdr.wnd;
        self.ecn.negotiate(self.cfg.ecn, hdr.flags);
        // RFC 7323 §3.2: the option is used only if the SYN-ACK carries it too.
        self.ts_ok = self.cfg.timestamps && hdr.ts.is_some();
        if let Some((v, _)) = hdr.ts {
            self.ts_recent = v;
        }
        if self.cfg.timestamps && !self.ts_ok {
            // Not negotiated: the whole MSS is payload again.
            self.cs.mss = self.cfg.mss.max(1) as u64;
            self.cs.cwnd = self.cfg.iw.max(1) as u64 * self.cs.mss;
        }
        if self.timers.syn_retx == 0 {
            // RFC 6298 §2/§3: the SYN was sent once, so its RTT is a valid sample.
            self.rtt.sample(now - self.timers.syn_sent_at);
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
            self.send_pure_ack(now, out);
        }
    }

    /// Marks SACKed segments (RFC 2018 blocks) and returns the newly SACKed bytes; each is counted
    /// as delivered for the rate sample.
    fn update_sack(&mut self, hdr: &TcpHeader, now: Time) -> u64 {
        let blocks = &hdr.sack[..(hdr.nsack as usize).min(hdr.sack.len())];
        let (cs, rate, rack) = (&mut self.cs, &mut self.rate, &mut self.rack);
        let (min_rtt, prior_high) = (self.rtt.min_rtt(), self.prior_high_sacked);
        self.sb.sack(blocks, self.snd_una, |g| {
            cs.delivered += g.len as u64;
            rate.delivered(g);
            // Counted now: not sampled again when cumulatively acknowledged.
            g.tx.delivered_time = None;
            // tcp_sacktag_one: RACK advances and checks for reordering on every newly SACKed segment.
            rack.advance(g, now, min_rtt);
            rack.check_reordering(g, prior_high);
        })
    }

    /// RACK-TLP is in charge of loss detection (SACK connections with `rack`).
    fn rack_on(&self) -> bool { self.sack && self.cfg.rack }

    /// `tcp_rack_mark_lost`: RACK's detection with Linux's reordering window; arms the reordering
    /// timer for segments not yet overdue. True if it armed it.
    fn rack_detect(&mut self, now: Time, out: &mut Output) -> bool {
        let reo = self.rack.reo_wnd(self.ca != CaState::Open, self.sb.sacked_segs(), self.rtt.min_rtt(), self.rtt.srtt());
        let (wait, lost_rexmits) = self.rack.detect_loss(&mut self.sb, reo, now);
        self.stats.lost_retransmits += lost_rexmits;
        match wait {
            Some(w) => {
                self.timers.arm(TimerKind::Reorder, now + w + rack::TIMEOUT_MIN, &mut out.rto);
                true
            }
            None => false,
        }
    }

    /// `tcp_schedule_loss_probe`: arms the loss-probe timer instead of the RTO for a SACK
    /// connection outside recovery with data out. `advancing`: called for an ACK that advanced
    /// SND.UNA, whose RTO restarts now (else the RTO runs from the first segment's transmission).
    fn schedule_loss_probe(&mut self, now: Time, advancing: bool, out: &mut Output) -> bool {
        // Linux probes in Open (and CWR) only; with SACKed data outstanding it is in Disorder
        // (`tcp_try_keep_open`), which the simulator folds into Open: tell it by HighSACK.
        let disorder = self.sb.high_sacked() > self.snd_una;
        if !(self.sack && self.cfg.tlp) || self.sb.is_empty() || self.ca != CaState::Open || disorder {
            return false;
        }
        let mut t = rack::pto(self.rtt.srtt(), self.sb.len(), self.cfg.min_rto);
        let rto_left = if advancing { self.rtt.rto() } else { self.rto_left(now) };
        if rto_left > Time::ZERO {
            t = t.min(rto_left);
        }
        self.timers.arm(TimerKind::LossProbe, now + t, &mut out.rto);
        true
    }

    /// `tcp_rto_delta_us`: time until the RTO of the first outstanding segment, counted from its
    /// last transmission.
    fn rto_left(&self, now: Time) -> Time { self.sb.front().map_or(Time::ZERO, |g| (g.sent + self.rtt.rto()).saturating_sub(now)) }

    /// `tcp_rearm_rto` after a RACK or probe timer: the RTO where it would have been (at least
    /// 1 µs from now), or nothing when nothing is outstanding.
    fn rearm_rto_remaining(&mut self, now: Time, out: &mut Output) {
        if self.sb.is_empty() {
            self.cancel_rto(out);
        } else {
            let left = self.rto_left(now).max(Time::from_us(1));
            self.timers.arm(TimerKind::Rto, now + left, &mut out.rto);
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
        if self.timers.persist && self.rwnd > 0 {
            // The window opened: the persist timer gives way to the retransmission timer.
            self.timers.persist = false;
            self.cancel_rto(out);
        }
        let ece = self.ecn.on_ack_flags(hdr.flags);
        if ece {
            self.stats.ece_acks += 1;
        }
        if let Some((v, _)) = hdr.ts {
            if self.ts_ok {
                // RFC 7323 §4.3: ACKs arrive in order here, so the latest TSval is TS.Recent.
                self.ts_recent = v;
            }
        }
        let delivered_before = self.cs.delivered;
        self.rate.begin_ack(self.pipe(), self.ca, self.cwnd_limited, delivered_before, self.sb.lost_total());
        self.prior_high_sacked = self.sb.high_sacked();
        let newly_sacked = if self.sack { self.update_sack(hdr, now) } else { 0 };
        let acked = ackno - self.snd_una;
        let mut dup = false;
        if acked > 0 {
            let tsecr = hdr.ts.map(|(_, e)| e).filter(|&e| self.ts_ok && e != 0);
            self.on_new_ack(ackno, acked, tsecr, now, out);
        } else if self.snd_nxt > self.snd_una && hdr.len == 0 && hdr.flags & (F::SYN | F::FIN) == 0 {
            // A duplicate ACK: RFC 5681 §2 (same ACK, no data, same window) or, with SACK,
            // RFC 6675 §2 (it SACKs new data).
            dup = if self.sack { newly_sacked > 0 } else { hdr.wnd == old_rwnd };
            if dup {
                self.on_dupack(now, out);
            }
        }
        if let Some(high) = self.rack.tlp_high_seq {
            self.process_tlp_ack(ackno, high, acked == 0 && newly_sacked == 0);
        }
        let mut reo_armed = false;
        if self.rack_on() {
            // tcp_fastretrans_alert runs for "dubious" ACKs (duplicate, SACKing, or outside
            // Open); there RACK marks what is overdue, and any loss starts recovery
            // (tcp_time_to_recover: "the loss is proven"). No DupThresh rule, no RFC 6675 IsLost.
            if (dup || newly_sacked > 0 || self.ca != CaState::Open) && self.rack.take_advanced() {
                reo_armed = self.rack_detect(now, out);
            }
            if self.ca == CaState::Open && self.sb.any_lost() {
                self.enter_recovery(now, out);
            }
        } else if self.sack && newly_sacked > 0 {
            self.sb.mark_lost_dupthresh(self.cs.mss);
            if self.cfg.lost_retransmit && self.ca == CaState::Recovery {
                self.stats.lost_retransmits += self.sb.mark_lost_retransmits();
            }
            // RFC 6675 §5 step 3(b): enter recovery when IsLost(HighACK + 1), even below DupThresh.
            if self.ca == CaState::Open && self.rec.dupacks > 0 && self.sb.front().is_some_and(|g| g.lost && !g.fin) && self.snd_una > self.rec.recover {
                self.enter_recovery(now, out);
            }
        }
        if acked > 0 && !reo_armed {
            // tcp_set_xmit_timer: the loss probe replaces the RTO armed above when it may.
            self.schedule_loss_probe(now, true, out);
        }
        // Linux's tcp_in_ack_event: the algorithm sees what this ACK delivered (and whether it
        // carries ECE) before the sender reacts to it (DCTCP's marked fraction).
        let ev = cc::AckEvent { snd_una: self.snd_una, snd_nxt: self.snd_nxt, delivered: self.cs.delivered - delivered_before, ece };
        self.cc.in_ack_event(&mut self.cs, &ev);
        if ece {
            self.on_ece(now, out);
        }
        if self.prr_active() {
            let pipe = self.pipe();
            self.cs.cwnd = self.rec.prr.on_ack(acked + newly_sacked, pipe, self.cs.ssthresh, self.cs.mss);
        }
        // Linux's tcp_rate_gen then tcp_cong_control: every ACK reaches the algorithm.
        let rs = self.rate.generate(&mut self.cs, acked, self.sb.lost_total(), self.rtt.min_rtt(), self.ecn.ack_ece, now);
        self.cs.now = now;
        // (The O(window) count only for algorithms that read it: Reno and CUBIC do not.)
        self.cs.pipe = if self.cc.owns_cwnd() { self.packets_in_flight() } else { self.pipe() };
        self.cs.ca = self.ca;
        self.cs.next_send = self.next_send;
        self.cc.on_ack(&mut self.cs, &rs);
        self.last_rs = Some(rs);
        self.transmit(now, out);
    }

    /// `tcp_process_tlp_ack`: the ACK reached the probe's SND.NXT. A probe of new data just ends;
    /// a retransmitted probe acknowledged beyond that point repaired a loss (one window
    /// reduction, Linux's CWR); a pure duplicate ACK means both copies arrived.
    fn process_tlp_ack(&mut self, ackno: u64, high: u64, pure_dup: bool) {
        if ackno < high {
            return;
        }
        if !self.rack.tlp_retrans {
            self.rack.end_probe();
        } else if ackno > high {
            self.rack.end_probe();
            if self.ca == CaState::Open {
                // tcp_init_cwnd_reduction + tcp_end_cwnd_reduction: ssthresh from the algorithm,
                // cwnd = ssthresh.
                self.cs.flight = self.flight_size();
                self.cc.on_congestion_event(&mut self.cs);
                if !self.cc.owns_cwnd() {
                    self.cs.cwnd = self.cs.ssthresh;
                }
                self.ecn.share_reduction(self.snd_nxt);
                self.stats.loss_probe_recoveries += 1;
            }
        } else if pure_dup {
            self.rack.end_probe();
        }
    }

    fn on_new_ack(&mut self, ackno: u64, acked: u64, tsecr: Option<u32>, now: Time, out: &mut Output) {
        self.cs.flight = self.flight_size();
        // Remove fully acknowledged segments; RTT sample per Karn's rule (RFC 6298 §3): only when
        // none of them was retransmitted or already SACKed, from the earliest one (as Linux).
        let mut clean = true;
        let mut earliest: Option<Time> = None;
        let mut latest = Time::ZERO;
        let mut fin_acked = false;
        while let Some(g) = self.sb.pop_acked(ackno) {
            if g.ever_rexmit || g.sacked {
                clean = false;
            }
            if !g.sacked {
                self.cs.delivered += g.len as u64;
                self.rate.delivered(&g);
                // tcp_clean_rtx_queue: RACK advances on cumulatively acknowledged segments too.
                self.rack.advance(&g, now, self.rtt.min_rtt());
                self.rack.check_reordering(&g, self.prior_high_sacked);
            }
            if earliest.is_none() {
                earliest = Some(g.sent);
            }
            latest = latest.max(g.sent);
            fin_acked |= g.fin;
        }
        // tcp_ack_update_rtt: the ACK's timing when Karn's rule allows it, else (RFC 7323 §4.1,
        // "RTTM") TSecr, in the option's 1 ms units.
        let sample = match (clean, earliest, tsecr) {
            (true, Some(t), _) => Some((now - t, now - latest)),
            (false, Some(_), Some(e)) => {
                let r = Time::from_ms(tsval(now).wrapping_sub(e).max(1) as u64);
                Some((r, r))
            }
            _ => None,
        };
        if let Some((r, _)) = sample {
            self.rtt.sample(r);
            self.cs.srtt = self.rtt.srtt();
            self.cs.min_rtt = self.rtt.min_rtt();
        }
        self.snd_una = ackno;
        if ackno > 1 {
            // The first ACK of data ends the paced initial window.
            self.iw_paced = false;
        }
        if let Some((_, ca_rtt)) = sample {
            // The algorithm's sample (Linux `pkts_acked`): the RTT of the newest segment covered.
            let s = AckSample { rtt: ca_rtt, snd_una: ackno, snd_nxt: self.snd_nxt, recovery: self.ca == CaState::Recovery };
            self.cc.on_ack_sample(&mut self.cs, &s);
        }
        self.rec.on_new_ack();
        self.timers.rto_series = 0;
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
            if !self.ecn.hold {
                self.cancel_rto(out);
            }
        } else {
            self.arm_rto(now, out);
        }
        match self.ca {
            CaState::Recovery if ackno >= self.rec.recover => {
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
                self.end_episode();
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
                if ackno >= self.rec.recover {
                    self.ca = CaState::Open;
                    self.end_episode();
                }
            }
            // Growth (cwnd-limited, no ECN-Echo: RFC 7661, RFC 3168 §6.1.2) is the algorithm's
            // on_ack at the end of the ACK.
            CaState::Open => {}
        }
    }

    /// Recovery is over: RFC 6675 forgets which segments it retransmitted (HighRxt). Not with
    /// RACK: as Linux (the `SACKED_RETRANS` marks stay), a retransmission still in flight above
    /// RecoveryPoint stays one, so that it is not sent again while it may yet arrive; RACK tells
    /// when it is lost.
    fn end_episode(&mut self) {
        if !self.rack_on() {
            self.sb.clear_episode();
        }
    }

    fn on_dupack(&mut self, now: Time, out: &mut Output) {
        self.rec.dupacks += 1;
        match self.ca {
            CaState::Open => {
                // RFC 5681 §3.2 step 2 / RFC 6675 §5 step 3(a) / RFC 6582 §3.2 step 2: enter
                // recovery at DupThresh, but only once per window (SND.UNA beyond recover).
                if !self.rack_on() && self.rec.dupthresh_reached(self.snd_una) {
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

    fn enter_recovery(&mut self, now: Time, out: &mut Output) {
        // RFC 5681 §3.2 step 2: data sent by limited transmit is not counted.
        self.cs.flight = self.flight_size().saturating_sub(self.rec.lt_bytes);
        // RFC 6675 §5 step 4.1 / RFC 6582 §3.2 step 2: RecoveryPoint = HighData; RFC 6937:
        // prr_delivered = prr_out = 0, RecoverFS = SND.NXT − SND.UNA.
        let recover_fs = self.flight_size();
        self.rec.begin(self.snd_nxt, recover_fs);
        // Step 4.2: ssthresh = cwnd = max(FlightSize/2, 2·SMSS) (or the algorithm's β).
        self.cc.on_congestion_event(&mut self.cs);
        if !self.sack && !self.cc.owns_cwnd() {
            // RFC 6582 §3.2 step 3 / RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS.
            self.cs.cwnd = self.cs.ssthresh + super::DUP_THRESH as u64 * self.cs.mss;
        }
        self.ca = CaState::Recovery;
        self.stats.fast_recoveries += 1;
        // The ECN reaction shares this reduction (RFC 3168 §6.1.2: at most once per window).
        self.ecn.share_reduction(self.snd_nxt);
        self.rack.end_probe();
        if self.rack_on() {
            // RACK has marked what is lost; as Linux's tcp_cwnd_reduction ("force a fast
            // retransmit upon entering fast recovery") the first of them goes out at once.
            if let Some(i) = self.sb.next_lost() {
                self.send_seg(i, true, now, out);
            }
            return;
        }
        // Step 4.3: retransmit the first segment presumed dropped.
        if !self.sb.is_empty() {
            self.sb.mark_lost(0);
        }
        self.retransmit_front(now, out);
    }

    fn on_ece(&mut self, now: Time, out: &mut Output) {
        // RFC 3168 §6.1.2: halve the window at most once per window of data, and not again
        // while loss recovery has already reduced it.
        if !self.ecn.may_react(self.ca == CaState::Open, self.snd_una) {
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
            self.ecn.hold = true;
            self.arm_rto(now, out);
        }
        // RFC 3168 §6.1.2: set CWR on the next new data segment.
        self.ecn.reacted(self.snd_nxt);
        self.stats.ecn_reductions += 1;
    }

    /// The sender's timer fired ([`Timers`]: retransmission, persist, RACK reordering or loss
    /// probe, whichever was armed last).
    pub fn on_rto(&mut self, now: Time, out: &mut Output) {
        self.cs.now = now;
        match self.timers.fire() {
            TimerKind::Rto => self.on_retransmission_timeout(now, out),
            TimerKind::Reorder => self.on_reorder_timeout(now, out),
            TimerKind::LossProbe => self.on_loss_probe(now, out),
        }
    }

    /// `tcp_rack_reo_timeout`: the reordering window has passed; what is overdue now is lost,
    /// recovery starts if it had not, and the RTO takes over again.
    fn on_reorder_timeout(&mut self, now: Time, out: &mut Output) {
        self.stats.reorder_timeouts += 1;
        let before = self.sb.pipe();
        let reo = self.rack.reo_wnd(self.ca != CaState::Open, self.sb.sacked_segs(), self.rtt.min_rtt(), self.rtt.srtt());
        let (_, lost_rexmits) = self.rack.detect_loss(&mut self.sb, reo, now);
        self.stats.lost_retransmits += lost_rexmits;
        if self.sb.pipe() != before {
            if self.ca != CaState::Recovery {
                self.enter_recovery(now, out);
                if self.prr_active() {
                    // tcp_cwnd_reduction(sk, 1, …): one segment counted as delivered.
                    let pipe = self.pipe();
                    self.cs.cwnd = self.rec.prr.on_ack(self.cs.mss, pipe, self.cs.ssthresh, self.cs.mss);
                }
            }
            self.transmit(now, out);
        }
        if !matches!(self.timers.pending(), Some((TimerKind::Rto, _))) {
            self.rearm_rto_remaining(now, out);
        }
    }

    /// `tcp_send_loss_probe`: one segment of new data beyond cwnd if the peer's window allows,
    /// else the last segment again; at most one probe per episode. The RTO follows from now.
    fn on_loss_probe(&mut self, now: Time, out: &mut Output) {
        if !matches!(self.state, State::Established | State::FinWait1) || self.sb.is_empty() {
            return;
        }
        if self.rack.tlp_high_seq.is_some() {
            self.rearm_rto_remaining(now, out);
            return;
        }
        let retrans = !self.push_new_segment(now, out);
        if retrans {
            let i = self.sb.len() - 1;
            self.send_seg(i, true, now, out);
        }
        self.rack.tlp_high_seq = Some(self.snd_nxt);
        self.rack.tlp_retrans = retrans;
        self.stats.loss_probes += 1;
        self.arm_rto(now, out);
    }

    fn on_retransmission_timeout(&mut self, now: Time, out: &mut Output) {
        match self.state {
            State::SynSent => {
                // RFC 6298 §5.5/5.6 for the SYN: back off, resend, restart the timer.
                self.timers.syn_retx += 1;
                self.stats.syn_timeouts += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            State::Established | State::FinWait1 if self.ecn.hold && self.snd_una == self.snd_nxt => {
                // RFC 3168 §6.1.2: the hold after an ECN-Echo at one segment is over.
                self.ecn.hold = false;
                self.transmit(now, out);
            }
            State::Established if self.timers.persist && self.snd_una == self.snd_nxt => {
                // RFC 9293 §3.8.6.1 window probe; like Linux, a zero-length segment with an old
                // sequence number, which the receiver must acknowledge with its current window.
                self.timers.persist = false;
                self.rtt.backoff();
                let hdr = TcpHeader { seq: self.snd_una - 1, ack: self.rcv_nxt, flags: F::ACK, wnd: 65_535, ts: self.ts_option(now), ..Default::default() };
                out.segs.push(OutSeg { size: wire_size(&hdr), hdr, ect: false });
                self.stats.window_probes += 1;
                self.transmit(now, out);
                if !self.timers.armed() {
                    self.timers.persist = true;
                    self.arm_rto(now, out);
                }
            }
            State::Established | State::FinWait1 if self.snd_una < self.snd_nxt => {
                self.ecn.hold = false;
                self.stats.timeouts += 1;
                self.cs.flight = self.flight_size();
                // RFC 5681 §3.1: ssthresh from eq. 4 (held on repeated timeouts), cwnd = 1 SMSS.
                self.cs.pipe = self.pipe();
                self.cc.on_rto(&mut self.cs, self.timers.rto_series == 0);
                self.timers.rto_series += 1;
                // RFC 6298 §5.5: back off the timer.
                self.rtt.backoff();
                // Every unSACKed segment is presumed lost and resent in order (RFC 6675 §5.1).
                // (Linux's tcp_timeout_mark_lost spares the segments sent within RACK.rtt; without
                // F-RTO and undo, which the simulator lacks, that stalled on trace links with
                // outages, so the RTO keeps RFC 6675's rule with RACK too.)
                self.sb.mark_all_lost();
                self.rack.end_probe();
                self.ca = CaState::Loss;
                self.rec.recover = self.snd_nxt;
                self.rec.dupacks = 0;
                self.next_send = now;
                // RFC 6298 §5.4: retransmit the earliest unacknowledged segment; §5.6 restart timer.
                self.transmit(now, out);
                if !self.timers.armed() {
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
        if !self.sb.is_empty() {
            self.send_seg(0, true, now, out);
        }
    }

    /// Sends while the window allows (RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS).
    fn transmit(&mut self, now: Time, out: &mut Output) {
        if !matches!(self.state, State::Established | State::FinWait1) {
            return;
        }
        let mss = self.cs.mss;
        let nxt_before = self.snd_nxt;
        loop {
            // Linux paces GSO skbs: new segments may join the skb that left at this instant
            // (up to `tso_segs`) whatever the pacing timer says; anything else waits for it.
            let paced_out = (self.pacing || self.iw_paced) && now < self.next_send;
            if paced_out && !(self.skb_at == Some(now) && self.skb_segs < self.cc.tso_segs(&self.cs)) {
                out.pace = TimerCmd::Set(self.next_send);
                break;
            }
            let pipe = self.pipe();
            let mut win = self.cc.window(&self.cs);
            let in_recovery = self.ca != CaState::Open;
            // RFC 3042: on the first two duplicate ACKs, up to two new segments beyond cwnd.
            let lt = if self.cfg.limited_transmit && !in_recovery { self.rec.limited_transmit_allowance(mss) } else { 0 };
            win += lt;
            if pipe + mss > win {
                self.cwnd_limited = true;
                break;
            }
            // Rule (1): retransmit a lost segment (in Recovery with SACK, or after an RTO).
            if in_recovery && (self.sack || self.ca == CaState::Loss) {
                if let Some(i) = self.sb.next_lost() {
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
            if self.ecn.hold {
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
                        if self.snd_nxt == self.snd_una && !self.timers.armed() {
                            // RFC 9293 §3.8.6.1: zero window, nothing in flight → persist timer
                            // (the retransmission timer with its backoff) to probe the window.
                            self.timers.persist = true;
                            self.arm_rto(now, out);
                        }
                        self.cwnd_limited = false;
                        break;
                    }
                }
                if self.tsq_holds(0, out) {
                    break;
                }
                if lt > 0 && pipe + mss > self.cc.window(&self.cs) {
                    self.rec.lt_bytes += len;
                }
                self.send_new(len, now, out);
                continue;
            }
            // The FIN follows the last payload byte (RFC 9293 §3.10.4 CLOSE).
            if self.fin_due() {
                if self.tsq_holds(0, out) {
                    break;
                }
                self.send_new(1, now, out);
                continue;
            }
            // Rule (3): with SACK in recovery, resend an unSACKed segment below HighSACK (not with
            // RACK: Linux retransmits only what is marked lost, RACK decides when a hole is one).
            if self.sack && !self.cfg.rack && self.ca == CaState::Recovery {
                if let Some(i) = self.sb.next_rule3() {
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
            if self.sb.next_lost().is_none() {
                self.cs.app_limited = (self.cs.delivered + self.packets_in_flight()).max(1);
            }
            break;
        }
        // tcp_write_xmit: new data sent → the loss probe is due 2·SRTT after it (at most when
        // the first segment's RTO would fire).
        if self.snd_nxt > nxt_before {
            self.schedule_loss_probe(now, false, out);
        }
        // RFC 6298 §5.1: start the timer when data is outstanding and it is not running.
        if self.snd_nxt > self.snd_una && !self.timers.armed() {
            self.arm_rto(now, out);
        }
    }

    /// The FIN is the next thing to send.
    fn fin_due(&self) -> bool { !self.unlimited && !self.fin_sent && self.snd_nxt == self.data_end }

    /// Sends `len` new bytes (the FIN when it is due), at SND.NXT.
    fn send_new(&mut self, len: u64, now: Time, out: &mut Output) {
        let seq = self.snd_nxt;
        let fin = self.fin_due();
        if fin {
            self.fin_sent = true;
            self.state = State::FinWait1;
        }
        self.snd_nxt += len;
        let i = self.sb.push(Seg::new(seq, len as u32, fin, now));
        self.send_seg(i, false, now, out);
    }

    /// The loss probe's new data (Linux's `tcp_write_xmit` with `push_one = 2`): one segment, or
    /// the FIN, regardless of cwnd but within the peer's window. False if there is none to send.
    fn push_new_segment(&mut self, now: Time, out: &mut Output) -> bool {
        if self.snd_nxt < self.data_end {
            let len = (self.data_end - self.snd_nxt).min(self.cs.mss);
            if self.snd_nxt + len > self.snd_una + self.rwnd {
                return false;
            }
            self.send_new(len, now, out);
            return true;
        }
        if self.fin_due() {
            self.send_new(1, now, out);
            return true;
        }
        false
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
            tsq::pacing_rate(mss, self.cs.cwnd, self.cs.ssthresh, self.sb.len() as u64, srtt_us)
        };
        let lim = tsq::limit(tsq::truesize(mss as u32), rate, factor);
        // The segments of this call not yet handed over; summed only near the limit (each is at
        // most one MSS), so a long burst under a large limit stays linear.
        let n = out.segs.len() as u64;
        let pending = if 1 + self.tsq.queued + n * tsq::truesize(mss as u32) <= lim {
            0
        } else {
            out.segs.iter().map(|s| tsq::truesize(s.hdr.len)).sum()
        };
        let held = self.tsq.check(lim, pending, self.sb.len());
        if held {
            self.cwnd_limited = true;
        }
        held
    }

    /// Puts segment `i` of the scoreboard on the wire (a retransmission if it was sent before).
    fn send_seg(&mut self, i: usize, is_rexmit: bool, now: Time, out: &mut Output) {
        let rcv_nxt = self.rcv_nxt;
        // Bytes in flight before this transmission (a new segment is already in SND.NXT).
        let in_flight = if is_rexmit { self.flight_size() } else { self.flight_size() - self.sb.get(i).len as u64 };
        let snd_nxt = self.snd_nxt;
        let mut g = self.sb.get_mut(i);
        self.rate.on_sent(&mut self.cs, &mut g, in_flight, now);
        let g_len = g.len as u64;
        if is_rexmit {
            g.rexmit = true;
            g.ever_rexmit = true;
            g.rexmit_nxt = snd_nxt;
            g.sent = now;
        }
        let ts = self.ts_ok.then(|| (tsval(now), self.ts_recent));
        g.tsval = ts.map(|(v, _)| v);
        if is_rexmit {
            self.rack.on_retransmit(&g);
        }
        let (seq, fin) = (g.seq, g.fin);
        let payload = if fin { 0 } else { g.len };
        drop(g);
        let head_rexmit = is_rexmit && i == 0;
        let mut flags = F::ACK;
        if fin {
            flags |= F::FIN;
        }
        // RFC 3168 §6.1.5: retransmissions are not ECT; §6.1.2: CWR on the next new data.
        let (ect, cwr) = self.ecn.mark_segment(is_rexmit, payload);
        if cwr {
            flags |= F::CWR;
        }
        let hdr = TcpHeader { seq, ack: rcv_nxt, flags, wnd: 65_535, len: payload, ts, ..Default::default() };
        let size = wire_size(&hdr);
        out.segs.push(OutSeg { hdr, ect, size });
        if self.ca == CaState::Recovery {
            // RFC 6937: prr_out counts data (re)sent during recovery.
            self.rec.prr.out += g_len;
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
        if head_rexmit && !matches!(self.timers.pending(), Some((TimerKind::Reorder, _))) {
            // As Linux (tcp_xmit_retransmit_queue), the timer restarts whenever the first
            // unacknowledged segment is retransmitted, so it times that retransmission (unless
            // RACK's reordering timer is pending).
            self.arm_rto(now, out);
        }
        self.cs.now = now;
        self.cc.on_sent(&mut self.cs, g_len, in_flight);
        if self.iw_paced && !self.pacing && !is_rexmit && payload > 0 {
            // Paced IW: the first flight spread evenly over the SYN's RTT sample (none: a burst).
            if let Some(srtt) = self.cs.srtt {
                self.next_send = now + Time(srtt.ns() / self.cfg.iw.max(1) as u64);
            }
        }
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
                    self.skb_start = self.next_send.max(now);
                    self.skb_credit = now - self.next_send;
                }
                if rate > 0.0 && !(linux && self.stats.segments_sent < 10) {
                    let len = Time::from_secs_f64(self.skb_bytes as f64 / rate);
                    self.next_send = if linux {
                        // tcp_update_skb_after_send: an skb that leaves late (after an ACK that
                        // opened the cwnd, or a late timer) shortens its own gap by the lateness,
                        // at most by half ("take into account OS jitter").
                        self.skb_start + (len - Time(len.ns() / 2).min(self.skb_credit))
                    } else {
                        now + len
                    };
                } else if linux {
                    // unpaced, but the clock still advances to the send (max(tcp_wstamp_ns, now))
                    self.next_send = self.next_send.max(now);
                }
            }
        }
    }
}

/// TSval of a segment sent at `now`: Linux's millisecond clock (`TCP_TS_HZ` = 1000), offset by 1
/// so that it is never 0, which TSecr uses for "nothing to echo" (Linux adds a random offset).
pub fn tsval(now: Time) -> u32 { (now.ns() / 1_000_000 + 1) as u32 }
