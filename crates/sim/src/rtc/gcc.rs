//! Google Congestion Control, sender-side, after draft-ietf-rmcat-gcc-02 ("A Google Congestion
//! Control Algorithm for Real-Time Communication"), with the choices of libwebrtc's goog_cc where
//! the draft leaves them open or libwebrtc has since replaced a part:
//!
//! - §5.2 pre-filtering: packets sent within `BURST_TIME` of a group's first packet form one group;
//!   the inter-group delay variation is d(i) = (t(i) − t(i−1)) − (T(i) − T(i−1)) over the groups'
//!   last arrival (t) and send (T) times.
//! - §5.3 arrival-time filter: libwebrtc's trendline estimator replaces the draft's Kalman filter
//!   (trendline_estimator.cc): the accumulated delay variation, exponentially smoothed, and the
//!   least-squares slope of it against arrival time over the last `TREND_WINDOW` groups, scaled by
//!   min(groups, 60) · `TREND_GAIN`.
//! - §5.4 over-use detector with the adaptive threshold γ(i) = γ(i−1) + Δt·K·(|m(i)| − γ(i−1)),
//!   K = K_u above the threshold and K_d below, Δt capped at 100 ms, γ in [6, 600] ms, no update
//!   when |m| exceeds γ by more than 15 ms. K_u, K_d are libwebrtc's values for the trendline's
//!   scale (the draft's 0.01 / 0.00018 belong to the Kalman filter's).
//! - §5.5 rate controller: the state machine Hold / Increase / Decrease of the draft's table;
//!   multiplicative increase η = 1.08 per second far from convergence, additive (half a packet per
//!   response time, RTT + 100 ms) near it; decrease to α = 0.85 × the received rate R_hat, at most
//!   once per RTT unless R_hat fell below half of A_hat (libwebrtc's TimeToReduceFurther); A_hat
//!   never above 1.5 × R_hat (§5.5). The controller acts on the detector's new verdicts only.
//! - §6 loss-based controller: As = As·(1 − 0.5p) when the loss fraction p > 0.1, As·1.05 when
//!   p < 0.02; the target is min(A_hat, As) (§4).
use std::collections::VecDeque;

use super::{Controller, FeedbackInfo, Limits};
use crate::time::Time;

pub const BURST_TIME: Time = Time::from_ms(5);
pub const TREND_WINDOW: usize = 20;
pub const TREND_SMOOTHING: f64 = 0.9;
pub const TREND_GAIN: f64 = 4.0;
/// libwebrtc's k_up / k_down for the trendline detector.
pub const K_UP: f64 = 0.0087;
pub const K_DOWN: f64 = 0.039;
pub const THRESHOLD_INIT_MS: f64 = 12.5;
pub const OVERUSE_TIME_MS: f64 = 10.0;
pub const ETA: f64 = 1.08;
pub const ALPHA: f64 = 0.85;
/// Window of the received-rate estimate R_hat (draft §5.5: "over the last 500 ms").
pub const RATE_WINDOW: Time = Time::from_ms(500);
/// The loss controller acts once this many packets were reported since its last step.
pub const LOSS_MIN_PACKETS: u32 = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    Normal,
    Overuse,
    Underuse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateState {
    Hold,
    Increase,
    Decrease,
}

/// The trendline estimator (§5.3 as libwebrtc implements it).
#[derive(Clone, Debug)]
pub struct Trendline {
    window: usize,
    first_arrival_ms: Option<f64>,
    acc: f64,
    smoothed: f64,
    pts: VecDeque<(f64, f64)>,
    pub groups: u32,
}

impl Trendline {
    pub fn new(window: usize) -> Trendline { Trendline { window, first_arrival_ms: None, acc: 0.0, smoothed: 0.0, pts: VecDeque::new(), groups: 0 } }

    /// Adds one inter-group delay variation `d_ms` at arrival `arrival_ms`; returns the scaled
    /// trend once the window is full.
    pub fn update(&mut self, d_ms: f64, arrival_ms: f64) -> Option<f64> {
        self.groups += 1;
        let first = *self.first_arrival_ms.get_or_insert(arrival_ms);
        self.acc += d_ms;
        self.smoothed = TREND_SMOOTHING * self.smoothed + (1.0 - TREND_SMOOTHING) * self.acc;
        self.pts.push_back((arrival_ms - first, self.smoothed));
        if self.pts.len() > self.window {
            self.pts.pop_front();
        }
        if self.pts.len() < self.window {
            return None;
        }
        let slope = slope(self.pts.iter().copied())?;
        Some(self.groups.min(60) as f64 * slope * TREND_GAIN)
    }
}

/// Least-squares slope of y on x; None when all x are equal.
pub fn slope(pts: impl Iterator<Item = (f64, f64)> + Clone) -> Option<f64> {
    let n = pts.clone().count() as f64;
    let (sx, sy) = pts.clone().fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = pts.fold((0.0, 0.0), |(a, b), (x, y)| (a + (x - mx) * (y - my), b + (x - mx) * (x - mx)));
    if den == 0.0 { None } else { Some(num / den) }
}

/// The over-use detector with its adaptive threshold (§5.4).
#[derive(Clone, Debug)]
pub struct Detector {
    pub threshold: f64,
    last_update_ms: Option<f64>,
    time_over_ms: f64,
    over_count: u32,
    prev_trend: f64,
    pub signal: Signal,
}

impl Default for Detector {
    fn default() -> Self { Detector { threshold: THRESHOLD_INIT_MS, last_update_ms: None, time_over_ms: -1.0, over_count: 0, prev_trend: 0.0, signal: Signal::Normal } }
}

impl Detector {
    /// Classifies trend `m` (ms), seen `ts_delta_ms` after the previous group was sent, at `now_ms`.
    pub fn detect(&mut self, m: f64, ts_delta_ms: f64, now_ms: f64) -> Signal {
        if m > self.threshold {
            // over-use only once it lasts OVERUSE_TIME_MS and the trend is not falling (§5.4)
            self.time_over_ms = if self.time_over_ms < 0.0 { ts_delta_ms / 2.0 } else { self.time_over_ms + ts_delta_ms };
            self.over_count += 1;
            if self.time_over_ms > OVERUSE_TIME_MS && self.over_count > 1 && m >= self.prev_trend {
                self.time_over_ms = 0.0;
                self.over_count = 0;
                self.signal = Signal::Overuse;
            }
        } else if m < -self.threshold {
            self.time_over_ms = -1.0;
            self.over_count = 0;
            self.signal = Signal::Underuse;
        } else {
            self.time_over_ms = -1.0;
            self.over_count = 0;
            self.signal = Signal::Normal;
        }
        self.prev_trend = m;
        self.adapt(m, now_ms);
        self.signal
    }

    /// γ(i) = γ(i−1) + Δt·K·(|m| − γ(i−1)) (§5.4).
    pub fn adapt(&mut self, m: f64, now_ms: f64) {
        let last = *self.last_update_ms.get_or_insert(now_ms);
        if m.abs() > self.threshold + 15.0 {
            // a spike (e.g. a route change) must not drag the threshold along
            self.last_update_ms = Some(now_ms);
            return;
        }
        let k = if m.abs() < self.threshold { K_DOWN } else { K_UP };
        let dt = (now_ms - last).min(100.0);
        self.threshold = (self.threshold + k * (m.abs() - self.threshold) * dt).clamp(6.0, 600.0);
        self.last_update_ms = Some(now_ms);
    }
}

/// The delay-based AIMD rate controller (§5.5).
#[derive(Clone, Debug)]
pub struct Aimd {
    pub a_hat: f64,
    pub state: RateState,
    last_ms: Option<f64>,
    last_decrease_ms: Option<f64>,
    /// libwebrtc's link-capacity estimate: mean and normalised variance (kbit/s) of R_hat at
    /// decreases, for "near convergence".
    avg_max_kbps: Option<f64>,
    var_max: f64,
}

impl Aimd {
    pub fn new(start: f64) -> Aimd { Aimd { a_hat: start, state: RateState::Hold, last_ms: None, last_decrease_ms: None, avg_max_kbps: None, var_max: 0.4 } }

    /// The draft's state table: the new state for `signal` in the current state.
    pub fn transition(state: RateState, signal: Signal) -> RateState {
        use RateState::*;
        match (signal, state) {
            (Signal::Overuse, _) => Decrease,
            (Signal::Normal, Hold) => Increase,
            (Signal::Normal, Decrease) => Hold,
            (Signal::Normal, Increase) => Increase,
            (Signal::Underuse, _) => Hold,
        }
    }

    fn update_max(&mut self, r_kbps: f64) {
        const A: f64 = 0.05;
        let avg = match self.avg_max_kbps {
            None => r_kbps,
            Some(m) => (1.0 - A) * m + A * r_kbps,
        };
        let norm = avg.max(1.0);
        self.var_max = ((1.0 - A) * self.var_max + A * (avg - r_kbps).powi(2) / norm).clamp(0.4, 2.5);
        self.avg_max_kbps = Some(avg);
    }

    fn near_convergence(&self, r_kbps: f64) -> bool {
        match self.avg_max_kbps {
            Some(m) => {
                let sd = (self.var_max * m).sqrt();
                r_kbps <= m + 3.0 * sd
            }
            None => false,
        }
    }

    /// One step on `signal` at `now_ms`, with received rate `r_hat` (bit/s, None before enough
    /// feedback), round-trip time `rtt_ms` and mean packet size `pkt_bits`.
    pub fn update(&mut self, signal: Signal, r_hat: Option<f64>, rtt_ms: f64, pkt_bits: f64, now_ms: f64) {
        let dt_s = ((now_ms - self.last_ms.unwrap_or(now_ms)) / 1000.0).clamp(0.0, 1.0);
        self.last_ms = Some(now_ms);
        self.state = Aimd::transition(self.state, signal);
        if let (Some(r), Some(m)) = (r_hat, self.avg_max_kbps) {
            // far below the old capacity estimate: the path changed, forget it
            if r / 1000.0 < m - 3.0 * (self.var_max * m).sqrt() {
                self.avg_max_kbps = None;
            }
        }
        match self.state {
            RateState::Increase => {
                let near = r_hat.is_some_and(|r| self.near_convergence(r / 1000.0));
                if near {
                    let response_s = (rtt_ms + 100.0) / 1000.0;
                    self.a_hat += (0.5 * pkt_bits * dt_s / response_s).max(1000.0 * dt_s);
                } else {
                    self.a_hat *= ETA.powf(dt_s);
                }
                if let Some(r) = r_hat {
                    self.a_hat = self.a_hat.min(1.5 * r + 10_000.0);
                }
            }
            RateState::Decrease => {
                // libwebrtc's TimeToReduceFurther: one cut per RTT, unless the received rate
                // already fell below half the estimate
                let base = r_hat.unwrap_or(self.a_hat);
                let again = self.last_decrease_ms.is_none_or(|t| now_ms - t >= rtt_ms) || base < 0.5 * self.a_hat;
                if again {
                    self.a_hat = ALPHA * base;
                    self.update_max(base / 1000.0);
                    self.last_decrease_ms = Some(now_ms);
                }
                // libwebrtc holds after each decrease, so one over-use cuts once
                self.state = RateState::Hold;
            }
            RateState::Hold => {}
        }
    }
}

/// The loss-based controller (§6).
pub fn loss_step(a_s: f64, p: f64) -> f64 {
    if p > 0.1 {
        a_s * (1.0 - 0.5 * p)
    } else if p < 0.02 {
        a_s * 1.05
    } else {
        a_s
    }
}

struct Group {
    first_send: Time,
    last_send: Time,
    last_recv: Time,
}

pub struct Gcc {
    limits: Limits,
    cur: Option<Group>,
    prev: Option<Group>,
    trend: Trendline,
    detector: Detector,
    aimd: Aimd,
    a_s: f64,
    loss_n: u32,
    loss_lost: u32,
    /// (arrival, IP bytes) of received packets in the last RATE_WINDOW.
    recv: VecDeque<(Time, u32)>,
    recv_bytes: u64,
    rtt_ms: f64,
    target: f64,
}

pub fn build(l: &Limits) -> Box<dyn Controller> { Box::new(Gcc::new(*l)) }

impl Gcc {
    pub fn new(limits: Limits) -> Gcc {
        Gcc {
            limits,
            cur: None,
            prev: None,
            trend: Trendline::new(TREND_WINDOW),
            detector: Detector::default(),
            aimd: Aimd::new(limits.start_bps),
            a_s: limits.start_bps,
            loss_n: 0,
            loss_lost: 0,
            recv: VecDeque::new(),
            recv_bytes: 0,
            rtt_ms: 100.0,
            target: limits.start_bps,
        }
    }

    fn r_hat(&self) -> Option<f64> {
        let (first, last) = (self.recv.front()?.0, self.recv.back()?.0);
        // at least half a window of arrivals, else the estimate is all noise
        if last - first < Time(RATE_WINDOW.0 / 2) {
            return None;
        }
        Some(self.recv_bytes as f64 * 8.0 / RATE_WINDOW.secs_f64())
    }

    /// Feeds one received packet to the grouping; returns a completed group pair's deltas.
    fn group(&mut self, send: Time, recv: Time) -> Option<(f64, f64, f64)> {
        if let Some(g) = &mut self.cur {
            if send < g.first_send {
                return None; // reordered behind its group: ignore
            }
            if send - g.first_send <= BURST_TIME {
                g.last_send = g.last_send.max(send);
                g.last_recv = g.last_recv.max(recv);
                return None;
            }
        }
        let done = self.cur.replace(Group { first_send: send, last_send: send, last_recv: recv });
        let out = match (&self.prev, &done) {
            (Some(p), Some(c)) => {
                let ts = (c.last_send.ns() as f64 - p.last_send.ns() as f64) / 1e6;
                let tr = (c.last_recv.ns() as f64 - p.last_recv.ns() as f64) / 1e6;
                Some((tr - ts, ts, c.last_recv.ns() as f64 / 1e6))
            }
            _ => None,
        };
        if done.is_some() {
            self.prev = done;
        }
        out
    }
}

impl Controller for Gcc {
    fn on_feedback(&mut self, fb: &FeedbackInfo, now: Time) {
        if let Some(r) = fb.rtt {
            self.rtt_ms = r.secs_f64() * 1e3;
        }
        let now_ms = now.ns() as f64 / 1e6;
        // the rate controller acts on the detector's new verdicts only (none when this report
        // completed no group pair)
        let mut signal = None;
        let mut sizes = 0u64;
        let mut n_recv = 0u64;
        for p in fb.packets {
            self.loss_n += 1;
            let Some(rt) = p.recv else {
                self.loss_lost += 1;
                continue;
            };
            sizes += p.size as u64;
            n_recv += 1;
            self.recv.push_back((rt, p.size));
            self.recv_bytes += p.size as u64;
            if let Some((d, ts, arr)) = self.group(p.send, rt) {
                if let Some(m) = self.trend.update(d, arr) {
                    signal = Some(self.detector.detect(m, ts, arr));
                }
            }
        }
        if let Some(&(last, _)) = self.recv.back() {
            while self.recv.front().is_some_and(|&(t, _)| t + RATE_WINDOW < last) {
                let (_, s) = self.recv.pop_front().expect("non-empty");
                self.recv_bytes -= s as u64;
            }
        }
        let pkt_bits = if n_recv > 0 { sizes as f64 * 8.0 / n_recv as f64 } else { 9600.0 };
        let r_hat = self.r_hat();
        if let Some(sig) = signal {
            self.aimd.update(sig, r_hat, self.rtt_ms, pkt_bits, now_ms);
        }
        if self.loss_n >= LOSS_MIN_PACKETS {
            let p = self.loss_lost as f64 / self.loss_n as f64;
            // decreases act on the rate in use, increases on the loss controller's own estimate
            let base = if p > 0.1 { self.a_s.min(self.target) } else { self.a_s };
            self.a_s = loss_step(base, p).clamp(self.limits.min_bps, self.limits.max_bps);
            self.loss_n = 0;
            self.loss_lost = 0;
        }
        let (lo, hi) = (self.limits.min_bps, self.limits.max_bps);
        self.aimd.a_hat = self.aimd.a_hat.clamp(lo, hi);
        self.target = self.aimd.a_hat.min(self.a_s).clamp(lo, hi);
    }
    fn target_rate(&self) -> f64 { self.target }
    fn state(&self) -> f64 { self.aimd.a_hat }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_adapts_as_the_draft_says() {
        // γ = 12.5 ms, |m| = 20 ms above it, Δt = 100 ms: 12.5 + 0.0087·(20 − 12.5)·100 = 19.025
        let mut d = Detector::default();
        d.adapt(20.0, 0.0); // first call only sets the clock (Δt = 0)
        assert_eq!(d.threshold, 12.5);
        d.adapt(20.0, 100.0);
        assert!((d.threshold - 19.025).abs() < 1e-9, "{}", d.threshold);
        // below it: K_d, Δt = 10 ms: 19.025 + 0.039·(5 − 19.025)·10 = 19.025 − 5.46975 = 13.55525
        d.adapt(5.0, 110.0);
        assert!((d.threshold - 13.55525).abs() < 1e-9, "{}", d.threshold);
        // Δt is capped at 100 ms: 2 s later counts as 100 ms; γ floors at 6
        d.adapt(0.0, 2110.0);
        assert_eq!(d.threshold, 6.0);
        // |m| more than 15 ms above γ: no update
        d.adapt(30.0, 2210.0);
        assert_eq!(d.threshold, 6.0);
    }

    #[test]
    fn overuse_needs_time_and_a_rising_trend() {
        let mut d = Detector::default();
        // above γ once (5 ms over-using: ts_delta/2): not yet
        assert_eq!(d.detect(13.0, 10.0, 0.0), Signal::Normal);
        // again, 15 ms over-using > 10 ms, count 2, trend rising: over-use
        assert_eq!(d.detect(14.0, 10.0, 10.0), Signal::Overuse);
        let mut d = Detector::default();
        d.detect(14.0, 10.0, 0.0);
        // trend falling: not over-use yet
        assert_eq!(d.detect(13.0, 10.0, 10.0), Signal::Normal);
        assert_eq!(d.detect(-20.0, 10.0, 20.0), Signal::Underuse);
    }

    #[test]
    fn trendline_slope_by_hand() {
        // d = 1 ms per group at arrivals 0, 10, 20 ms: accumulated 1, 2, 3; smoothed (0.9/0.1)
        // 0.1, 0.29, 0.561; slope of (0, 0.1), (10, 0.29), (20, 0.561) = (0.561 − 0.1)/20 = 0.02305
        // (the middle point sits on no lever); scaled by min(3, 60)·4 = 12 → 0.2766
        let mut t = Trendline::new(3);
        assert_eq!(t.update(1.0, 0.0), None);
        assert_eq!(t.update(1.0, 10.0), None);
        let m = t.update(1.0, 20.0).unwrap();
        assert!((m - 0.2766).abs() < 1e-9, "{m}");
        assert_eq!(slope([(0.0, 0.0), (1.0, 2.0), (2.0, 4.0)].into_iter()), Some(2.0));
        assert_eq!(slope([(1.0, 0.0), (1.0, 2.0)].into_iter()), None);
    }

    #[test]
    fn aimd_follows_the_state_table() {
        use RateState::*;
        use Signal::*;
        assert_eq!(Aimd::transition(Hold, Overuse), Decrease);
        assert_eq!(Aimd::transition(Increase, Overuse), Decrease);
        assert_eq!(Aimd::transition(Hold, Normal), Increase);
        assert_eq!(Aimd::transition(Decrease, Normal), Hold);
        assert_eq!(Aimd::transition(Increase, Underuse), Hold);
        // multiplicative increase: 1.08 per second → 1e6 · 1.08^0.5 after 500 ms
        let mut a = Aimd::new(1e6);
        a.update(Normal, None, 100.0, 9600.0, 0.0);
        a.update(Normal, None, 100.0, 9600.0, 500.0);
        assert!((a.a_hat - 1e6 * 1.08f64.powf(0.5)).abs() < 1e-6);
        // over-use: 0.85 × R_hat, then Hold
        a.update(Overuse, Some(1.2e6), 100.0, 9600.0, 600.0);
        assert_eq!(a.a_hat, 0.85 * 1.2e6);
        assert_eq!(a.state, Hold);
        // a second over-use within one RTT (100 ms) does not cut again; after it, it does
        a.update(Overuse, Some(1.2e6), 100.0, 9600.0, 650.0);
        assert_eq!(a.a_hat, 0.85 * 1.2e6);
        a.update(Overuse, Some(1.0e6), 100.0, 9600.0, 700.0);
        assert_eq!(a.a_hat, 0.85 * 1.0e6);
        // …unless the received rate fell below half the estimate
        a.update(Overuse, Some(0.4e6), 100.0, 9600.0, 710.0);
        assert_eq!(a.a_hat, 0.85 * 0.4e6);
        // increase capped at 1.5·R_hat + 10 kbit/s
        let mut a = Aimd::new(2e6);
        a.update(Normal, Some(1e6), 100.0, 9600.0, 0.0);
        a.update(Normal, Some(1e6), 100.0, 9600.0, 1000.0);
        assert_eq!(a.a_hat, 1.51e6);
    }

    #[test]
    fn loss_controller_by_hand() {
        assert_eq!(loss_step(1e6, 0.2), 0.9e6);
        assert_eq!(loss_step(1e6, 0.01), 1.05e6);
        assert_eq!(loss_step(1e6, 0.05), 1e6);
        // the boundaries are outside their rules: p = 0.1 holds, p = 0.02 holds
        assert_eq!(loss_step(1e6, 0.1), 1e6);
        assert_eq!(loss_step(1e6, 0.02), 1e6);
    }
}
