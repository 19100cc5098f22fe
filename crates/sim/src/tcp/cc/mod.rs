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
//! A new algorithm is one file (a type implementing [`CongestionControl`], its options read from
//! the scenario's TCP entry through its [`Registration`]) and one line in [`REGISTRY`]; see
//! docs/tcp.md. The sender owns the contract ([`check_reduction`]).
//!
//! Units: bytes for windows (as RFC 5681), nanosecond [`Time`] for RTTs, bytes/s for rates.
use std::any::Any;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::TcpConfig;
use crate::config::{ConfigError, Params};
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
            ssthresh: SSTHRESH_UNSET,
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
    /// A window reduction found unneeded is undone (Linux's `undo_cwnd`): the cwnd to go on
    /// with, given the one before the reduction. Default `tcp_reno_undo_cwnd` (Reno, CUBIC):
    /// max(cwnd, prior_cwnd).
    fn undo_cwnd(&mut self, st: &CcState, prior_cwnd: u64) -> u64 { st.cwnd.max(prior_cwnd) }
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
    /// Segments the sender puts on the wire as one unit (Linux's `tcp_tso_segs`: a GSO skb,
    /// paced as one). Default 1.
    fn tso_segs(&self, _st: &CcState) -> u64 { 1 }
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

/// ssthresh before the first congestion event (RFC 5681 §3.1: "arbitrarily high"); Linux's
/// `TCP_INFINITE_SSTHRESH`. A window-based algorithm must replace it on every congestion event
/// (the sender checks, [`check_reduction`]).
pub const SSTHRESH_UNSET: u64 = u64::MAX / 4;

/// An algorithm's own options, read and validated from the scenario's TCP entry by its
/// [`Registration::params`] once, kept in the connection's [`TcpConfig::cc_params`], and turned
/// into a controller for each connection (quinn's `ControllerFactory`).
pub trait CcParams: std::fmt::Debug + Send + Sync {
    /// The controller for one connection; `cfg` carries the connection's switches (`cc_seed`,
    /// `pacing`, a profile's HyStart switches) besides these options.
    fn build(&self, cfg: &TcpConfig) -> Cc;
    /// Every option under its scenario key, defaults included, in a fixed order: they follow `cc`
    /// in the expanded scenario's `tcp` block, and [`TcpConfig`] equality compares them. Empty
    /// for an algorithm without options (the scenario then keeps no options object).
    fn describe(&self) -> Vec<(&'static str, Value)> { Vec::new() }
}

/// The parsed options of the algorithm named `name`, as [`TcpConfig::cc_params`] holds them.
#[derive(Clone, Debug)]
pub struct CcOptions {
    pub name: &'static str,
    pub params: Arc<dyn CcParams>,
}

impl PartialEq for CcOptions {
    fn eq(&self, o: &Self) -> bool { self.name == o.name && self.params.describe() == o.params.describe() }
}

/// The options object of an algorithm without options of its own: its factory reads what it needs
/// (stack switches such as CUBIC's HyStart) from the connection's [`TcpConfig`].
#[derive(Debug)]
pub struct NoOptions(pub fn(&TcpConfig) -> Cc);

impl CcParams for NoOptions {
    fn build(&self, cfg: &TcpConfig) -> Cc { (self.0)(cfg) }
}

/// The ECN codepoint a connection uses when its entry gives no `ecn` key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EcnDefault {
    /// ECT(0), RFC 3168.
    Ect0,
    /// ECT(1), the L4S identifier (RFC 9331 §4.1).
    Ect1,
}

/// One algorithm the `cc` key can name. Everything the scenario needs to know about it is here,
/// in the algorithm's own file (`pub const REGISTRATION`), so that adding one is that file and
/// one line in [`REGISTRY`].
pub struct Registration {
    /// The `cc` value (and `tcp_flows.cc`).
    pub name: &'static str,
    /// The scenario keys the algorithm reads in [`Registration::params`]; given with another
    /// `cc`, each is refused naming it ("only with cc = ...").
    pub keys: &'static [&'static str],
    /// Reads and validates the algorithm's keys from the TCP entry (an error names the key);
    /// an empty entry gives the defaults.
    pub params: fn(&mut Params) -> Result<Arc<dyn CcParams>, ConfigError>,
    /// ECN unless the entry says otherwise (Linux's `TCP_CONG_NEEDS_ECN`); None: the profile's.
    pub ecn: Option<EcnDefault>,
}

/// The algorithms built in. A new algorithm adds its line here (its file's `REGISTRATION`).
pub const REGISTRY: &[Registration] = &[reno::REGISTRATION, cubic::REGISTRATION, bbr::REGISTRATION, dctcp::REGISTRATION];

/// Algorithms registered at run time ([`register`]): out-of-tree ones and tests.
static EXTRA: RwLock<Vec<&'static Registration>> = RwLock::new(Vec::new());

/// Adds an algorithm beside the built-in ones (quinn's `congestion_controller_factory`, by name):
/// from then on the `cc` key accepts it. Refuses a name already taken.
pub fn register(r: &'static Registration) -> Result<(), String> {
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    if REGISTRY.iter().chain(extra.iter().copied()).any(|x| x.name == r.name) {
        return Err(format!("cc: {:?} is already registered", r.name));
    }
    extra.push(r);
    Ok(())
}

/// Every registered algorithm: [`REGISTRY`], then those [`register`]ed, in order.
pub fn registry() -> Vec<&'static Registration> {
    let extra = EXTRA.read().unwrap_or_else(|e| e.into_inner());
    REGISTRY.iter().chain(extra.iter().copied()).collect()
}

/// The registration named `name`.
pub fn registration(name: &str) -> Option<&'static Registration> { registry().into_iter().find(|r| r.name == name) }

/// Names accepted by the `cc` key, in [`registry`] order.
pub fn kinds() -> Vec<&'static str> { registry().iter().map(|r| r.name).collect() }

/// The algorithm named `name` for a connection configured by `cfg`, with the options in
/// `cfg.cc_params` when they are this algorithm's, else its defaults; an unknown name is an error
/// naming the key and listing the known ones.
pub fn build(name: &str, cfg: &TcpConfig) -> Result<Cc, String> {
    let Some(r) = registration(name) else {
        return Err(format!("cc: unknown congestion control {name:?}; known: {}", kinds().join(", ")));
    };
    match &cfg.cc_params {
        Some(o) if o.name == r.name => Ok(o.params.build(cfg)),
        _ => {
            let mut p = Params::new("tcp", &Value::Object(Default::default())).expect("a table");
            Ok((r.params)(&mut p).map_err(|e| e.to_string())?.build(cfg))
        }
    }
}

/// What the sender checks after the algorithm's reaction to a congestion event (fast
/// retransmit, ECN-Echo, timeout): a window-based algorithm (not [`CongestionControl::owns_cwnd`])
/// must set ssthresh, because the sender then sets cwnd from it (PRR's target, RFC 6675's
/// cwnd = ssthresh, NewReno's ssthresh + 3·SMSS); and cwnd stays at least one segment (RFC 5681's loss window). A breach is
/// a bug in the algorithm, so it panics naming it (one left at [`SSTHRESH_UNSET`] once ran with
/// cwnd = 4,611,686,018,427,387,903 bytes).
pub fn check_reduction(cc: &dyn CongestionControl, st: &CcState, event: &str) {
    assert!(
        cc.owns_cwnd() || st.ssthresh < SSTHRESH_UNSET,
        "congestion control {:?} left ssthresh unset after {event}: a window-based algorithm must set it (docs/tcp.md, the contract)",
        cc.name()
    );
    assert!(st.cwnd >= st.mss, "congestion control {:?} set cwnd below one segment ({} B) after {event}", cc.name(), st.cwnd);
}
