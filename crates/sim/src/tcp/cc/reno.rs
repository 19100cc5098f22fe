//! Reno (RFC 5681): slow start, congestion avoidance, multiplicative decrease to
//! max(FlightSize/2, 2·SMSS); optional byte counting (RFC 3465).
use std::sync::Arc;

use super::{cong_avoid_ai, half_flight, slow_start, CcState, CongestionControl, NoOptions, Registration};
use crate::tcp::TcpConfig;

/// Reno has no options of its own (byte counting is the connection's `abc`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenoConfig {}

impl RenoConfig {
    pub fn from_tcp(_c: &TcpConfig) -> RenoConfig { RenoConfig {} }
}

/// `cc = "reno"`: no keys of its own.
pub const REGISTRATION: Registration = Registration {
    name: "reno",
    keys: &[],
    params: |_| Ok(Arc::new(NoOptions(|c| Box::new(Reno::new(RenoConfig::from_tcp(c)))))),
    ecn: None,
};

#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// Remainder of the additive increase (bytes·SMSS or bytes_acked with ABC).
    acc: u64,
}

impl Reno {
    pub fn new(_c: RenoConfig) -> Reno { Reno::default() }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str { "reno" }
    fn cong_avoid(&mut self, st: &mut CcState, acked: u64) {
        if st.in_slow_start() {
            slow_start(st, acked);
        } else {
            cong_avoid_ai(st, acked, &mut self.acc);
        }
    }
    fn on_congestion_event(&mut self, st: &mut CcState) {
        // RFC 5681 §3.2 step 2 (eq. 4); RFC 6675 §5 step 4.2 sets cwnd = ssthresh.
        st.ssthresh = half_flight(st);
        st.cwnd = st.ssthresh;
        self.acc = 0;
    }
    fn on_ecn(&mut self, st: &mut CcState) {
        // RFC 3168 §6.1.2: "halves the congestion window cwnd and reduces ssthresh": cwnd/2 down
        // to one segment (the RFC's one-segment case follows from it), ssthresh at least 2
        // segments (RFC 5681 eq. 4).
        st.ssthresh = (st.cwnd / 2).max(2 * st.mss);
        st.cwnd = (st.cwnd / 2).max(st.mss);
        self.acc = 0;
    }
    fn on_rto(&mut self, st: &mut CcState, first: bool) {
        // RFC 5681 §3.1: ssthresh per eq. 4 (held on repeated timeouts), cwnd = LW = 1 SMSS.
        if first {
            st.ssthresh = half_flight(st);
        }
        st.cwnd = st.mss;
        self.acc = 0;
    }
}
