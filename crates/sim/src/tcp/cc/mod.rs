//! Congestion control behind one trait, after Linux's `struct tcp_congestion_ops`
//! (`include/net/tcp.h`) and quinn's `congestion::Controller`. Hooks are named after events; the
//! connection state the algorithm reads and writes (cwnd, ssthresh, RTT, bytes in flight, the
//! delivery counters of `tcp_rate.c`) is a [`CcState`] passed by reference, so an algorithm holds
//! only its own variables (ns-3's TcpSocketState split).
//!
//! Every ACK reaches [`CongestionControl::on_ack`] with a [`RateSample`] (Linux's
//! `tcp_cong_control`, called from `tcp_ack` for every ACK). Window-based algorithms (Reno, CUBIC)
//! keep the default, which grows the window through [`CongestionControl::cong_avoid`] only when
//! the sender may raise it (Linux's `tcp_cong_avoid` behind `tcp_may_raise_cwnd`); model-based
//! ones (BBR) override it and set cwnd and the pacing rate themselves, and say so with
//! [`CongestionControl::owns_cwnd`] (Linux: `cong_control` is set), which turns off the sender's
//! PRR and end-of-recovery cwnd changes as Linux does.
//!
//! A new algorithm is one file (a type implementing [`CongestionControl`], with its config type)
//! and one line in [`REGISTRY`]; see docs/tcp.md.
//!
//! Units: bytes for windows (as RFC 5681), nanosecond [`Time`] for RTTs, bytes/s for rates.
use std::any::Any;

use super::TcpConfig;
use crate::time::Time;

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod reno;

pub use bbr::{Bbr, BbrConfig};
pub use cubic::{Cubic, CubicConfig};
pub use dctcp::{Dctcp, DctcpConfig};
pub use reno::{Reno, RenoConfig};

/// Loss-recovery phase (Linux's `icsk_ca_state`, without Disorder and CWR).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    /// Fast recovery after DupThresh duplicate ACKs (RFC 6675 §5 / RFC 6582 §3.2).
    Recovery,
    /// After a retransmission timeout, until RecoveryPoint is acknowledged.
    Loss,
}

/// Connection state shared with the algorithm.
#[derive(Clone, Debug)]
pub struct CcState {
    /// Sender maximum segment size (payload bytes).
    pub mss: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub now: Time,
    pub srtt: Option<Time>,
    pub min_rtt: Option<Time>,
    /// FlightSize of RFC 5681 (SND.NXT − SND.UNA) when the event is handled.
    pub flight: u64,
    /// RFC 3465 Appropriate Byte Counting with limit L (in segments); None = count ACKs (one SMSS per ACK in slow start).
    pub abc_l: Option<u64>,
    /// Bytes delivered (cumulatively ACKed or SACKed) so far: `tcp_sock.delivered`, in bytes.
    pub delivered: u64,
    /// When `delivered` last grew: `tcp_sock.delivered_mstamp`.
    pub delivered_time: Time,
    /// `tcp_sock.app_limited`: 0, or the `delivered` count at which the current app-limited
    /// stretch ends (an algorithm may set it, as BBR's PROBE_RTT does).
    pub app_limited: u64,
    /// RFC 6675 pipe (Linux's `tcp_packets_in_flight`) at the time of the call.
    pub pipe: u64,
    /// Earliest departure time of the next paced segment (Linux's `tcp_wstamp_ns`).
    pub next_send: Time,
    /// Current loss-recovery phase.
    pub ca: CaState,
}

impl CcState {
    /// A state with `cwnd` and `mss` and everything else empty (for tests and construction).
    pub fn new(mss: u64, cwnd: u64) -> CcState {
        CcState {
            mss,
            cwnd,
            ssthresh: u64::MAX / 4,
            now: Time::ZERO,
            srtt: None,
            min_rtt: None,
            flight: 0,
            abc_l: None,
            delivered: 0,
            delivered_time: Time::ZERO,
            app_limited: 0,
            pipe: 0,
            next_send: Time::ZERO,
            ca: CaState::Open,
        }
    }
    pub fn in_slow_start(&self) -> bool { self.cwnd < self.ssthresh }
}

/// What one ACK tells the algorithm besides the bytes it acknowledges (Linux's `struct ack_sample`
/// handed to `pkts_acked`, plus the sequence numbers `tcp_sock` would expose): an RTT sample and
/// where the sender stands in sequence space, so that the algorithm can tell round trips apart.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// RTT of the most recently sent segment this ACK newly covers (Linux's `ca_rtt` / rate-sample
    /// RTT; the RTO estimator uses the earliest one instead). Only from segments never
    /// retransmitted nor SACKed before (Karn's rule).
    pub rtt: Time,
    /// SND.UNA after this ACK.
    pub snd_una: u64,
    /// SND.NXT when the ACK arrived (before what it lets the sender send).
    pub snd_nxt: u64,
    /// The sender is in SACK / NewReno fast recovery.
    pub recovery: bool,
}

/// One ACK as Linux's `in_ack_event` hook sees it: after the sender has counted what the ACK
/// delivers, before it reacts to the ACK's ECN-Echo or loss signal (`tcp_ack` calls
/// `tcp_in_ack_event` after `tcp_clean_rtx_queue`, before `tcp_fastretrans_alert`). DCTCP
/// updates its marked fraction here, so that a window reduction on this ACK already uses it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct AckEvent {
    /// SND.UNA after this ACK.
    pub snd_una: u64,
    /// SND.NXT when the ACK arrived.
    pub snd_nxt: u64,
    /// Bytes newly delivered by this ACK, cumulatively or by SACK (Linux's `delivered` increment).
    pub delivered: u64,
    /// The ACK carries ECN-Echo (its `delivered` also goes to Linux's `delivered_ce`).
    pub ece: bool,
}

/// One ACK's delivery-rate sample, Linux's `struct rate_sample` (`include/net/tcp.h`) as
/// `tcp_rate_gen` (`net/ipv4/tcp_rate.c`) fills it, in bytes instead of packets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct RateSample {
    /// `prior_delivered`: the connection's `delivered` when the newest segment this ACK delivers
    /// was sent.
    pub prior_delivered: u64,
    /// When that `prior_delivered` was reached (`prior_mstamp`).
    pub prior_time: Time,
    /// Bytes delivered over `interval` (`delivered`); None when no valid sample (Linux's −1).
    pub delivered: Option<u64>,
    /// max(send interval, ACK interval) (`interval_us`); None when invalid (Linux's −1, also when
    /// shorter than the minimum RTT).
    pub interval: Option<Time>,
    /// The newest delivered segment was sent while the application limited the sender
    /// (`is_app_limited`): a low rate proves nothing.
    pub is_app_limited: bool,
    /// RTT of the most recently sent segment newly delivered (ACKed or SACKed) by this ACK that was
    /// never retransmitted (`rtt_us`); None otherwise.
    pub rtt: Option<Time>,
    /// Bytes newly delivered by this ACK, cumulatively or by SACK (`acked_sacked`).
    pub acked_sacked: u64,
    /// Bytes this ACK acknowledged cumulatively (SND.UNA advance).
    pub newly_acked: u64,
    /// Bytes newly marked lost while processing this ACK (`losses`).
    pub losses: u64,
    /// Pipe before this ACK (`prior_in_flight`).
    pub prior_in_flight: u64,
    /// Loss-recovery phase before this ACK.
    pub prior_ca: Option<CaState>,
    /// The sender was limited by cwnd when it last tried to send (RFC 7661: grow only then).
    pub cwnd_limited: bool,
    /// The ACK carries ECN-Echo (RFC 3168 §6.1.2: no window growth on it).
    pub ece: bool,
}

impl RateSample {
    /// The delivery rate in bytes/s, when the sample is valid.
    pub fn rate(&self) -> Option<f64> {
        let (d, i) = (self.delivered?, self.interval?);
        (i > Time::ZERO).then(|| d as f64 / i.secs_f64())
    }
    /// The window may grow on this ACK (the simulator's rule for window-based algorithms, Linux's
    /// `tcp_may_raise_cwnd` in spirit): new data cumulatively acknowledged, no ECN-Echo
    /// (RFC 3168 §6.1.2), and either outside recovery while cwnd-limited (RFC 5681 §3.1,
    /// RFC 7661 §4.3) or in the slow start after an RTO (RFC 5681 §3.1).
    pub fn may_raise_cwnd(&self) -> bool {
        self.newly_acked > 0
            && !self.ece
            && match self.prior_ca {
                Some(CaState::Open) | None => self.cwnd_limited,
                Some(CaState::Loss) => true,
                Some(CaState::Recovery) => false,
            }
    }
}

/// Lets callers reach an algorithm's own type (`cc.as_any().downcast_ref::<Cubic>()`).
pub trait AsAny {
    fn as_any(&self) -> &dyn Any;
}
impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any { self }
}

/// The hooks a congestion controller implements (Linux's `tcp_congestion_ops`).
pub trait CongestionControl: AsAny {
    fn name(&self) -> &'static str;
    /// A segment of `bytes` was put on the wire with `in_flight` bytes outstanding before it
    /// (Linux's `CA_EVENT_TX_START` when `in_flight` is 0; quinn's `on_sent`).
    fn on_sent(&mut self, _st: &mut CcState, _bytes: u64, _in_flight: u64) {}
    /// An ACK carrying a valid RTT sample, called before [`CongestionControl::on_ack`] for the same
    /// ACK (Linux calls `pkts_acked` before `cong_avoid`) and whether or not the sender is
    /// cwnd-limited. Default: nothing (Reno). CUBIC's HyStart lives here.
    fn on_ack_sample(&mut self, _st: &mut CcState, _s: &AckSample) {}
    /// Every ACK (Linux's `in_ack_event`), before the sender's ECN-Echo reaction
    /// ([`CongestionControl::on_ecn`]) and before [`CongestionControl::on_ack`]. Default: nothing.
    fn in_ack_event(&mut self, _st: &mut CcState, _ev: &AckEvent) {}
    /// Every ACK, after loss detection and recovery processing, with its rate sample (Linux's
    /// `tcp_cong_control`). Default: window growth by [`CongestionControl::cong_avoid`] when
    /// [`RateSample::may_raise_cwnd`].
    fn on_ack(&mut self, st: &mut CcState, rs: &RateSample) {
        if rs.may_raise_cwnd() {
            self.cong_avoid(st, rs.newly_acked);
        }
    }
    /// `acked` new bytes were cumulatively acknowledged and the window may grow (Linux's
    /// `cong_avoid`). Default: nothing.
    fn cong_avoid(&mut self, _st: &mut CcState, _acked: u64) {}
    /// Loss detected by duplicate ACKs / SACK (RFC 5681 §3.2 step 2, RFC 6675 §5 step 4.2): set
    /// ssthresh and the cwnd to use during recovery (Linux's `ssthresh`).
    fn on_congestion_event(&mut self, st: &mut CcState);
    /// The retransmission timer expired. `first` is false for a repeated timeout of the same
    /// segment, when RFC 5681 §3.1 holds ssthresh constant.
    fn on_rto(&mut self, st: &mut CcState, first: bool);
    /// An ECN-Echo (RFC 3168 §6.1.2): the same reduction as a loss, without retransmission.
    fn on_ecn(&mut self, st: &mut CcState) { self.on_congestion_event(st) }
    /// The algorithm sets cwnd itself on every ACK, in recovery too (Linux: `cong_control` is
    /// set); the sender then skips PRR and the end-of-recovery cwnd (`tcp_end_cwnd_reduction`).
    fn owns_cwnd(&self) -> bool { false }
    /// The algorithm needs pacing whatever the `pacing` key says (Linux's `SK_PACING_NEEDED`).
    fn needs_pacing(&self) -> bool { false }
    /// Pace as Linux's `tcp_update_skb_after_send`: space segments by their payload (`skb->len`
    /// of the queued segment) instead of their IP size, and leave the first nine data segments
    /// unpaced. Default false: the simulator's pacing for Reno and CUBIC keeps its IP-byte
    /// spacing from the first segment, so that their outputs did not move (docs/tcp.md).
    fn paces_payload(&self) -> bool { false }
    /// The window the sender may use.
    fn window(&self, st: &CcState) -> u64 { st.cwnd }
    /// Pacing rate in bytes/s when pacing is on. Default: Linux's `tcp_update_pacing_rate`,
    /// cwnd/SRTT × 2 in slow start (below ssthresh/2) and × 1.2 otherwise.
    fn pacing_rate(&self, st: &CcState) -> Option<f64> {
        let srtt = st.srtt?.secs_f64();
        if srtt <= 0.0 {
            return None;
        }
        let gain = if st.cwnd < st.ssthresh / 2 { 2.0 } else { 1.2 };
        Some(gain * st.cwnd as f64 / srtt)
    }
}

/// Slow start building block (RFC 5681 §3.1 eq. 2 and RFC 3465 §2.2): cwnd += min(N, SMSS) per ACK,
/// or min(N, L·SMSS) with byte counting.
pub fn slow_start(st: &mut CcState, acked: u64) {
    let limit = st.abc_l.unwrap_or(1) * st.mss;
    st.cwnd += acked.min(limit);
}

/// Reno's additive increase in bytes with an exact remainder (so that 1 SMSS is added per window of
/// ACKs, as RFC 5681 eq. 3 intends without its integer rounding): `acc` keeps the remainder.
pub fn cong_avoid_ai(st: &mut CcState, acked: u64, acc: &mut u64) {
    if st.abc_l.is_some() {
        // RFC 3465 §2.1: bytes_acked; when it reaches cwnd, cwnd += SMSS.
        *acc += acked;
        if *acc >= st.cwnd {
            *acc -= st.cwnd;
            st.cwnd += st.mss;
        }
    } else {
        // RFC 5681 eq. 3: cwnd += SMSS*SMSS/cwnd per ACK.
        let num = st.mss * st.mss + *acc;
        st.cwnd += num / st.cwnd;
        *acc = num % st.cwnd.max(1);
    }
}

/// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2·SMSS).
pub fn half_flight(st: &CcState) -> u64 { (st.flight / 2).max(2 * st.mss) }

/// A congestion controller as the sender holds it.
pub type Cc = Box<dyn CongestionControl>;

/// One algorithm the `cc` key can name: its name and its factory, which reads the algorithm's
/// config type from the connection's [`TcpConfig`].
pub struct Registration {
    pub name: &'static str,
    pub build: fn(&TcpConfig) -> Cc,
}

/// The algorithms the `cc` key accepts. A new algorithm adds its line here.
pub const REGISTRY: &[Registration] = &[
    Registration { name: "reno", build: |c| Box::new(Reno::new(RenoConfig::from_tcp(c))) },
    Registration { name: "cubic", build: |c| Box::new(Cubic::new(CubicConfig::from_tcp(c))) },
    Registration { name: "bbr", build: |c| Box::new(Bbr::new(BbrConfig::from_tcp(c))) },
    Registration { name: "dctcp", build: |c| Box::new(Dctcp::new(DctcpConfig::from_tcp(c))) },
];

/// Names accepted by the `cc` key, in [`REGISTRY`] order.
pub fn kinds() -> Vec<&'static str> { REGISTRY.iter().map(|r| r.name).collect() }

/// The algorithm named `name` for a connection configured by `cfg`; an unknown name is an error
/// naming the key and listing the known ones.
pub fn build(name: &str, cfg: &TcpConfig) -> Result<Cc, String> {
    match REGISTRY.iter().find(|r| r.name == name) {
        Some(r) => Ok((r.build)(cfg)),
        None => Err(format!("cc: unknown congestion control {name:?}; known: {}", kinds().join(", "))),
    }
}
