//! DCTCP (RFC 8257; Linux `net/ipv4/tcp_dctcp.c`): Reno's window growth, and a window reduction
//! in proportion to the extent of congestion instead of by half. Per observation window (one round
//! trip: from SND.NXT at the last update until SND.UNA passes it) the sender counts the bytes
//! delivered and those delivered by ACKs carrying ECN-Echo, F = marked / delivered, and updates
//! α ← (1 − g)·α + g·F with g = 1/16 (RFC 8257 §3.3). On ECN-Echo, at most once per window (the
//! sender's CWR round), ssthresh = cwnd·(1 − α/2) and cwnd = ssthresh. Loss is handled as Reno /
//! Linux (`dctcp_react_to_loss`): ssthresh = max(cwnd/2, 2 segments).
//!
//! Linux's fixed point is kept: α is an integer with 1024 = 1 (`DCTCP_MAX_ALPHA`), it starts at
//! `dctcp_alpha_on_init` = 1024 (the first reduction halves, as Reno), and the update is
//! `α −= min_not_zero(α, α >> g)` then `α += (marked << (10 − g)) / delivered`, so a small α
//! (< 16) decays to 0 in one unmarked window. Two differences from Linux, both in bytes rather
//! than packets: the counts (identical ratios for full-sized segments), and the reduction cwnd −
//! (cwnd·α >> 11) computed on bytes, so a reduction smaller than one segment is not rounded away.
//! While the reduction round lasts (until SND.UNA passes the SND.NXT of the reduction, Linux's
//! CWR state) the window does not grow.
//!
//! The receiver's per-segment echo that makes the count exact is `tcp/ecn_feedback.rs`; which ECT
//! codepoint the sender uses is the connection's `ecn` key (ECT(1), the L4S identifier, by
//! default for `cc = "dctcp"`; see docs/l4s.md). Without ECN, α never rises and DCTCP behaves as
//! Linux's `dctcp-reno` fallback.
use std::sync::Arc;

use serde_json::Value;

use super::{slow_start, AckEvent, Cc, CcParams, CcState, CongestionControl, EcnDefault, RateSample, Registration};
use crate::config::{ConfigError, Params};
use crate::tcp::TcpConfig;

/// Linux `DCTCP_MAX_ALPHA`: α = 1.
pub const DCTCP_MAX_ALPHA: u32 = 1024;
/// Linux `dctcp_shift_g`: g = 1/2^4 = 1/16 (RFC 8257 §4.2's recommended 1/16).
pub const DEFAULT_SHIFT_G: u32 = 4;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DctcpConfig {
    /// g = 1/2^shift_g, 0..=10 (Linux module parameter range).
    pub shift_g: u32,
    /// α at the start, 1024 = 1 (Linux `dctcp_alpha_on_init`).
    pub alpha_on_init: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self { DctcpConfig { shift_g: DEFAULT_SHIFT_G, alpha_on_init: DCTCP_MAX_ALPHA } }
}

impl DctcpConfig {
    pub fn from_tcp(_c: &TcpConfig) -> DctcpConfig { DctcpConfig::default() }

    /// Reads `dctcp_shift_g` (0..=10) and `dctcp_alpha_on_init` (0..=1024), Linux's module
    /// parameters of the same names and ranges (`param_set_uint_minmax`), defaults 4 and 1024.
    pub fn from_params(p: &mut Params) -> Result<DctcpConfig, ConfigError> {
        let d = DctcpConfig::default();
        let shift_g = p.u64_or("dctcp_shift_g", d.shift_g as u64)?;
        if shift_g > 10 {
            return Err(p.err("dctcp_shift_g", format!("must be 0..=10 (g = 1/2^shift), got {shift_g}")));
        }
        let alpha = p.u64_or("dctcp_alpha_on_init", d.alpha_on_init as u64)?;
        if alpha > DCTCP_MAX_ALPHA as u64 {
            return Err(p.err("dctcp_alpha_on_init", format!("must be 0..=1024 (1024 = α of 1), got {alpha}")));
        }
        Ok(DctcpConfig { shift_g: shift_g as u32, alpha_on_init: alpha as u32 })
    }
}

impl CcParams for DctcpConfig {
    fn build(&self, _cfg: &TcpConfig) -> Cc { Box::new(Dctcp::new(self.clone())) }
    fn describe(&self) -> Vec<(&'static str, Value)> {
        vec![("dctcp_shift_g", Value::from(self.shift_g)), ("dctcp_alpha_on_init", Value::from(self.alpha_on_init))]
    }
}

/// `cc = "dctcp"`, with its two keys. ECN by default, and ECT(1): Linux always runs DCTCP with
/// ECN (`TCP_CONG_NEEDS_ECN`), and the mitigations study runs it as the L4S flow behind DualPI2.
pub const REGISTRATION: Registration = Registration {
    name: "dctcp",
    keys: &["dctcp_shift_g", "dctcp_alpha_on_init"],
    params: |p| Ok(Arc::new(DctcpConfig::from_params(p)?)),
    ecn: Some(EcnDefault::Ect1),
};

/// Linux `dctcp_update_alpha`'s arithmetic for one observation window.
pub fn update_alpha(alpha: u32, delivered_ce: u64, delivered: u64, shift_g: u32) -> u32 {
    // min_not_zero(α, α >> g): α >> g, or all of α once that rounds to zero.
    let dec = alpha >> shift_g;
    let mut a = alpha - if dec == 0 { alpha } else { dec };
    if delivered_ce > 0 {
        let f = (delivered_ce << (10 - shift_g)) / delivered.max(1);
        a = (a as u64 + f).min(DCTCP_MAX_ALPHA as u64) as u32;
    }
    a
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    cfg: DctcpConfig,
    alpha: u32,
    /// End of the current observation window (Linux `next_seq`).
    next_seq: u64,
    /// Bytes delivered in the window, and those on ECN-Echo ACKs.
    delivered: u64,
    delivered_ce: u64,
    /// SND.NXT at the last ACK.
    snd_nxt: u64,
    /// In the reduction round until SND.UNA passes this (Linux's CWR state, `high_seq`).
    cwr_high: Option<u64>,
    /// Reno's additive-increase remainder.
    acc: u64,
    /// Observation windows completed.
    windows: u64,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig) -> Dctcp {
        let alpha = cfg.alpha_on_init.min(DCTCP_MAX_ALPHA);
        Dctcp { cfg, alpha, next_seq: 0, delivered: 0, delivered_ce: 0, snd_nxt: 0, cwr_high: None, acc: 0, windows: 0 }
    }
    /// α in Linux's units (1024 = 1).
    pub fn alpha(&self) -> u32 { self.alpha }
    pub fn alpha_f64(&self) -> f64 { self.alpha as f64 / DCTCP_MAX_ALPHA as f64 }
    pub fn windows(&self) -> u64 { self.windows }
    /// The window is held after a reduction (CWR round).
    pub fn in_cwr(&self) -> bool { self.cwr_high.is_some() }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str { "dctcp" }

    fn in_ack_event(&mut self, _st: &mut CcState, ev: &AckEvent) {
        self.snd_nxt = ev.snd_nxt;
        self.delivered += ev.delivered;
        if ev.ece {
            self.delivered_ce += ev.delivered;
        }
        // Linux leaves CWR once SND.UNA is above high_seq (tcp_fastretrans_alert).
        if self.cwr_high.is_some_and(|h| ev.snd_una > h) {
            self.cwr_high = None;
        }
        // RFC 8257 §3.3: at the end of the observation window, α ← (1 − g)·α + g·F.
        if ev.snd_una >= self.next_seq {
            self.alpha = update_alpha(self.alpha, self.delivered_ce, self.delivered, self.cfg.shift_g);
            self.next_seq = ev.snd_nxt;
            self.delivered = 0;
            self.delivered_ce = 0;
            self.windows += 1;
        }
    }

    fn on_ack(&mut self, st: &mut CcState, rs: &RateSample) {
        // No growth during the reduction round (Linux: tcp_cwnd_reduction instead of cong_avoid).
        if self.cwr_high.is_none() && rs.may_raise_cwnd() {
            self.cong_avoid(st, rs.newly_acked);
        }
    }

    fn cong_avoid(&mut self, st: &mut CcState, acked: u64) {
        // Linux tcp_reno_cong_avoid: slow start as the simulator's Reno, then tcp_cong_avoid_ai
        // counting acknowledged bytes, + 1 segment per window acknowledged (also with delayed
        // ACKs, as in Linux and ns-3's TcpLinuxReno, on which ns-3's TcpDctcp builds).
        if st.in_slow_start() {
            slow_start(st, acked);
            return;
        }
        self.acc += acked;
        if self.acc >= st.cwnd {
            let k = self.acc / st.cwnd;
            self.acc -= k * st.cwnd;
            st.cwnd += k * st.mss;
        }
    }

    fn on_ecn(&mut self, st: &mut CcState) {
        // RFC 8257 §3.3: cwnd = cwnd × (1 − α/2); Linux dctcp_ssthresh: cwnd − (cwnd·α >> 11).
        let cut = ((st.cwnd as u128 * self.alpha as u128) >> 11) as u64;
        st.ssthresh = (st.cwnd - cut).max(2 * st.mss);
        st.cwnd = st.ssthresh;
        self.cwr_high = Some(self.snd_nxt);
        self.acc = 0;
    }

    fn on_congestion_event(&mut self, st: &mut CcState) {
        // Linux dctcp_react_to_loss on entering Recovery: ssthresh = max(cwnd/2, 2); RFC 6675
        // §5 step 4.2 then sets cwnd = ssthresh (the sender's PRR spreads it, as for Reno).
        st.ssthresh = (st.cwnd / 2).max(2 * st.mss);
        st.cwnd = st.ssthresh;
        self.cwr_high = None;
        self.acc = 0;
    }

    fn on_rto(&mut self, st: &mut CcState, first: bool) {
        // CA_EVENT_LOSS → dctcp_react_to_loss (held on repeated timeouts, as tcp_enter_loss);
        // cwnd = 1 segment.
        if first {
            st.ssthresh = (st.cwnd / 2).max(2 * st.mss);
        }
        st.cwnd = st.mss;
        self.cwr_high = None;
        self.acc = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::CaState;

    const MSS: u64 = 1460;

    /// Linux's update by hand, windows of 10 segments: from 1024 with F = 0: 1024 − 64 = 960;
    /// F = 5/10: 960 − 60 + ⌊5·1460·64/14600⌋ = 900 + 32 = 932; F = 1: 932 − 58 + 64 = 938;
    /// F = 0 from 15: 15 >> 4 = 0, so min_not_zero takes all 15 → 0; F = 1/10 from 0: 6.
    #[test]
    fn alpha_update_vectors() {
        let w = 10 * MSS;
        assert_eq!(update_alpha(1024, 0, w, 4), 960);
        assert_eq!(update_alpha(960, 5 * MSS, w, 4), 932);
        assert_eq!(update_alpha(932, w, w, 4), 938);
        assert_eq!(update_alpha(15, 0, w, 4), 0);
        assert_eq!(update_alpha(0, MSS, w, 4), 6);
        // Capped at 1024: from 1024 with F = 1: 1024 − 64 + 64.
        assert_eq!(update_alpha(1024, w, w, 4), 1024);
        // Against the real-valued EWMA α ← (1 − 1/16)·α + F/16 over a mixed sequence: within
        // Linux's truncation (at most 2/1024 per window, not accumulating past the decay).
        let fs = [0.0, 0.5, 1.0, 0.3, 0.0, 0.0, 0.2, 0.9, 0.1, 0.6];
        let (mut a, mut x) = (DCTCP_MAX_ALPHA, 1.0f64);
        for f in fs {
            let marked = (f * 10.0f64).round() as u64 * MSS;
            a = update_alpha(a, marked, w, 4);
            x = (1.0 - 1.0 / 16.0) * x + f / 16.0;
            assert!((a as f64 / 1024.0 - x).abs() < 3.0 / 1024.0, "{a} vs {x}");
        }
    }

    fn ev(snd_una: u64, snd_nxt: u64, delivered: u64, ece: bool) -> AckEvent { AckEvent { snd_una, snd_nxt, delivered, ece } }

    fn ack_rs(newly: u64, ece: bool) -> RateSample { RateSample { newly_acked: newly, acked_sacked: newly, prior_ca: Some(CaState::Open), cwnd_limited: true, ece, ..RateSample::default() } }

    /// A hand-run connection of 10-segment windows (one ACK per segment): window 1 unmarked, window
    /// 2 with 4 marked segments, window 3 all marked. α per window: 1024 → (first ACK closes the
    /// initial empty window) 960 − … as computed; the reduction on the first ECE of window 3 uses
    /// the α updated at the start of that window.
    #[test]
    fn alpha_over_windows_and_reduction() {
        let mut d = Dctcp::new(DctcpConfig::default());
        assert_eq!(d.alpha(), 1024);
        let mut st = CcState { ssthresh: 200 * MSS, ..CcState::new(MSS, 100 * MSS) };
        let mut una = 1;
        let mut nxt = 1 + 10 * MSS;
        // The first ACK ends Linux's initial window (next_seq = SND.NXT at init): F = 0 over 1 segment.
        let step = |d: &mut Dctcp, st: &mut CcState, una: &mut u64, nxt: &mut u64, ece: bool| {
            *una += MSS;
            *nxt += MSS;
            d.in_ack_event(st, &ev(*una, *nxt, MSS, ece));
        };
        step(&mut d, &mut st, &mut una, &mut nxt, false);
        assert_eq!((d.alpha(), d.windows()), (960, 1));
        // Window 1 ends when SND.UNA reaches the SND.NXT of that update (10 more segments).
        for _ in 0..10 {
            step(&mut d, &mut st, &mut una, &mut nxt, false);
        }
        assert_eq!((d.alpha(), d.windows()), (900, 2));
        for i in 0..10 {
            step(&mut d, &mut st, &mut una, &mut nxt, i < 4);
        }
        // 900 − 56 + ⌊4·64/10⌋ = 844 + 25 = 869.
        assert_eq!((d.alpha(), d.windows()), (869, 3));
        // The ECE reduction: cwnd·(1 − α/2) in Linux's fixed point.
        d.on_ecn(&mut st);
        let cwnd0 = 100 * MSS;
        assert_eq!(st.cwnd, cwnd0 - ((cwnd0 * 869) >> 11));
        assert!((st.cwnd as f64 / cwnd0 as f64 - (1.0 - 869.0 / 2048.0)).abs() < 1e-4);
        assert_eq!(st.ssthresh, st.cwnd);
        assert!(d.in_cwr());
    }

    /// RFC 8257 §3.3: the reduction is α/2 of the window: α = 1/2 → 3/4 of cwnd, α = 1 → half,
    /// α = 0 → none (floor 2 segments).
    #[test]
    fn reduction_is_alpha_over_two() {
        for (alpha, expect) in [(512u32, 75 * MSS), (1024, 50 * MSS), (0, 100 * MSS), (256, 87 * MSS + MSS / 2)] {
            let mut d = Dctcp::new(DctcpConfig { alpha_on_init: alpha, ..DctcpConfig::default() });
            let mut st = CcState::new(MSS, 100 * MSS);
            d.on_ecn(&mut st);
            assert_eq!(st.cwnd, expect, "alpha {alpha}");
        }
        let mut d = Dctcp::new(DctcpConfig::default());
        let mut st = CcState::new(MSS, 3 * MSS);
        d.on_ecn(&mut st);
        assert_eq!(st.cwnd, 2 * MSS, "floor of 2 segments");
    }

    /// No growth until SND.UNA passes the SND.NXT of the reduction; Reno growth after.
    #[test]
    fn no_growth_in_cwr_round() {
        let mut d = Dctcp::new(DctcpConfig::default());
        let mut st = CcState { ssthresh: 10 * MSS, ..CcState::new(MSS, 20 * MSS) };
        d.in_ack_event(&mut st, &ev(1 + MSS, 1 + 21 * MSS, MSS, true));
        d.on_ecn(&mut st);
        let held = st.cwnd;
        assert_eq!(held, 10 * MSS);
        for k in 2..=21 {
            d.in_ack_event(&mut st, &ev(1 + k * MSS, 1 + 21 * MSS, MSS, false));
            d.on_ack(&mut st, &ack_rs(MSS, false));
            if k < 21 {
                assert_eq!(st.cwnd, held, "held at ack {k}");
            }
        }
        // SND.UNA = 1 + 21·MSS = the reduction's SND.NXT: not above it yet (Linux waits for more).
        assert!(d.in_cwr());
        d.in_ack_event(&mut st, &ev(1 + 22 * MSS, 1 + 30 * MSS, MSS, false));
        d.on_ack(&mut st, &ack_rs(MSS, false));
        assert!(!d.in_cwr());
        // Congestion avoidance counts bytes: + 1 segment once a window (10 segments) is acknowledged.
        assert_eq!(st.cwnd, held);
        for _ in 0..9 {
            d.on_ack(&mut st, &ack_rs(MSS, false));
        }
        assert_eq!(st.cwnd, held + MSS);
    }

    /// Loss is Reno's: half the window, whatever α; an RTO resets to one segment.
    #[test]
    fn loss_halves() {
        let mut d = Dctcp::new(DctcpConfig { alpha_on_init: 100, ..DctcpConfig::default() });
        let mut st = CcState::new(MSS, 40 * MSS);
        d.on_congestion_event(&mut st);
        assert_eq!((st.cwnd, st.ssthresh), (20 * MSS, 20 * MSS));
        d.on_rto(&mut st, true);
        assert_eq!((st.cwnd, st.ssthresh), (MSS, 10 * MSS));
        d.on_rto(&mut st, false);
        assert_eq!(st.ssthresh, 10 * MSS);
    }
}
