//! Congestion control behind one trait. Hooks are named after events; the connection state the
//! algorithm reads and writes (cwnd, ssthresh, RTT, bytes in flight) is a [`CcState`] passed by
//! reference, so an algorithm holds only its own variables (ns-3's TcpSocketState split). Built-ins
//! are dispatched through the [`Cc`] enum; a new algorithm is one file plus one arm in [`Cc`] and
//! one line in [`KINDS`].
//!
//! Units: bytes for windows (as RFC 5681), nanosecond [`Time`] for RTTs.
use crate::time::Time;

pub mod cubic;
pub mod reno;

pub use cubic::Cubic;
pub use reno::Reno;

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
}

impl CcState {
    pub fn in_slow_start(&self) -> bool { self.cwnd < self.ssthresh }
}

/// The hooks a congestion controller implements.
pub trait CongestionControl {
    fn name(&self) -> &'static str;
    /// `acked` new bytes were cumulatively acknowledged outside loss recovery while the sender was
    /// cwnd-limited (RFC 5681 §3.1, RFC 7661 §4.3: no growth when not using the window).
    fn on_ack(&mut self, st: &mut CcState, acked: u64);
    /// Loss detected by duplicate ACKs / SACK (RFC 5681 §3.2 step 2, RFC 6675 §5 step 4.2): set
    /// ssthresh and the cwnd to use during recovery.
    fn on_congestion_event(&mut self, st: &mut CcState);
    /// The retransmission timer expired. `first` is false for a repeated timeout of the same
    /// segment, when RFC 5681 §3.1 holds ssthresh constant.
    fn on_rto(&mut self, st: &mut CcState, first: bool);
    /// An ECN-Echo (RFC 3168 §6.1.2): the same reduction as a loss, without retransmission.
    fn on_ecn(&mut self, st: &mut CcState) { self.on_congestion_event(st) }
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

/// Built-in algorithms, dispatched without a vtable.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(Reno),
    Cubic(Cubic),
}

/// Names accepted by the `cc` key.
pub const KINDS: &[&str] = &["reno", "cubic"];

impl Cc {
    pub fn by_name(name: &str) -> Option<Cc> {
        match name {
            "reno" => Some(Cc::Reno(Reno::default())),
            "cubic" => Some(Cc::Cubic(Cubic::default())),
            _ => None,
        }
    }
    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::Reno(r) => r,
            Cc::Cubic(c) => c,
        }
    }
    fn inner_ref(&self) -> &dyn CongestionControl {
        match self {
            Cc::Reno(r) => r,
            Cc::Cubic(c) => c,
        }
    }
}

impl CongestionControl for Cc {
    fn name(&self) -> &'static str { self.inner_ref().name() }
    fn on_ack(&mut self, st: &mut CcState, acked: u64) { self.inner().on_ack(st, acked) }
    fn on_congestion_event(&mut self, st: &mut CcState) { self.inner().on_congestion_event(st) }
    fn on_rto(&mut self, st: &mut CcState, first: bool) { self.inner().on_rto(st, first) }
    fn on_ecn(&mut self, st: &mut CcState) { self.inner().on_ecn(st) }
    fn window(&self, st: &CcState) -> u64 { self.inner_ref().window(st) }
    fn pacing_rate(&self, st: &CcState) -> Option<f64> { self.inner_ref().pacing_rate(st) }
}
