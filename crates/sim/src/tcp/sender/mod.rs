//! The sending end of a connection as an explicit state machine (RFC 9293 names). It opens the
//! connection (SYN, retransmitted on the RFC 6298 initial RTO of 1 s), sends `size` payload bytes
//! (or forever) under min(cwnd, rwnd), recovers losses with SACK (RFC 6675) or NewReno (RFC 6582),
//! detects losses by time with RACK and probes tail losses with TLP (RFC 8985, as Linux), falls back
//! to the retransmission timer (RFC 6298), reacts to ECN-Echo once per window (RFC 3168), carries
//! the timestamps option (RFC 7323), and closes with a FIN.
//!
//! This file is the state machine (types, construction, the handshake and the dispatch of each
//! arriving segment); the sender's own work is split by event: ACK processing and loss recovery
//! (`ack.rs`), the timers' expiry (`timeout.rs`), the timeout and the Loss state as Linux handles
//! them — RACK-aware marking, F-RTO, undo (`loss.rs`) — and the transmit loop with pacing (`transmit.rs`).
//! Its parts live beside it, each with its own tests: the SACK scoreboard ([`super::scoreboard`]), loss-recovery bookkeeping and PRR
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
use super::{wire_size, FrtoResponse, Recovery, TcpConfig, TimerCmd, HEADER_BYTES, TS_OPTION_BYTES};
use crate::packet::{tcp_flags as F, TcpHeader};
use crate::time::Time;

mod ack;
mod loss;
mod timeout;
mod transmit;

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
    /// Timeouts undone (Linux's `TCPLossUndo`: by timestamps or F-RTO).
    pub loss_undos: u64,
    /// Timeouts F-RTO found spurious (`TCPSpuriousRTOs`).
    pub spurious_rtos: u64,
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
    /// F-RTO is running for the current timeout (Linux's `tp->frto`).
    frto: bool,
    /// F-RTO's step 2b: this ACK sends new data only (`REXMIT_NEW`).
    frto_new: bool,
    /// The transmit loop skips retransmissions (F-RTO's new data).
    new_data_only: bool,
    /// A reduction an undo could take back (`undo_marker`), with what it restores.
    undo: Option<loss::Undo>,
    /// TSval of the episode's first retransmission (`retrans_stamp`); None in Open.
    retrans_stamp: Option<u32>,
    /// The ACK being processed (S)ACKed a segment sent before RecoveryPoint and never
    /// retransmitted (`FLAG_ORIG_SACK_ACKED`).
    ack_orig: bool,
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
    /// name not in [`cc::registry`] (scenarios are validated before; see [`Sender::try_new`]).
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
            frto: false,
            frto_new: false,
            new_data_only: false,
            undo: None,
            retrans_stamp: None,
            ack_orig: false,
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
}

/// A congestion signal the algorithm reacts to ([`Sender::cc_react`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Congestion {
    /// Loss found by duplicate ACKs, SACK or RACK (or repaired by a loss probe).
    Loss,
    /// ECN-Echo (RFC 3168 §6.1.2).
    Ecn,
    /// The retransmission timer expired; `first` is false for a repeated timeout.
    Timeout { first: bool },
}

impl Sender {
    /// The algorithm's reaction to a congestion signal, then the contract it must leave behind
    /// ([`cc::check_reduction`]): ssthresh set by a window-based algorithm, cwnd at least one
    /// segment. Every such hook goes through here; what the sender does next with cwnd (PRR,
    /// NewReno's inflation, cwnd = ssthresh at the end of recovery) is the sender's own.
    fn cc_react(&mut self, ev: Congestion) {
        let what = match ev {
            Congestion::Loss => {
                self.cc.on_congestion_event(&mut self.cs);
                "a congestion event"
            }
            Congestion::Ecn => {
                let before = self.cs.cwnd;
                self.cc.on_ecn(&mut self.cs);
                // The reduction never raises cwnd (the 2·SMSS floor of eq. 4 applies to ssthresh).
                self.cs.cwnd = self.cs.cwnd.min(before).max(self.cs.mss);
                "an ECN-Echo"
            }
            Congestion::Timeout { first } => {
                self.cc.on_rto(&mut self.cs, first);
                "a timeout"
            }
        };
        cc::check_reduction(self.cc.as_ref(), &self.cs, what);
    }
}

/// TSval of a segment sent at `now`: Linux's millisecond clock (`TCP_TS_HZ` = 1000), offset by 1
/// so that it is never 0, which TSecr uses for "nothing to echo" (Linux adds a random offset).
pub fn tsval(now: Time) -> u32 { (now.ns() / 1_000_000 + 1) as u32 }
