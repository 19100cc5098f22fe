//! CUBIC (RFC 9438): window growth W_cubic(t) = C·(t − K)³ + W_max (§4.2) with C = 0.4 and
//! β_cubic = 0.7 (§4.6), the Reno-friendly estimate W_est (§4.3), fast convergence (§4.7) and the
//! RTO rule (§4.8). Slow start is RFC 5681's with Linux's classic HyStart ([`Hystart`]), which
//! leaves slow start (ssthresh = cwnd) on an ACK train as long as half the minimum RTT or on an
//! RTT increase, before the queue overflows. Windows inside this module are in segments (f64), as
//! in the RFC; the connection's cwnd stays in bytes. Where Linux's `tcp_cubic.c` departs from the
//! RFC the Linux profiles follow Linux (`cubic_initial_growth`, `cubic_delay_min`).
//!
//! Over 600 lines: HyStart and CUBIC share `delay_min`, and their hand-worked unit tests (the
//! second half) sit beside the rules they pin.
use std::sync::Arc;

use super::{slow_start, AckSample, CcState, CongestionControl, NoOptions, Registration};
use crate::tcp::TcpConfig;
use crate::time::Time;

/// CUBIC's options (Linux's `tcp_cubic.c` module parameters the scenario exposes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubicConfig {
    /// `hystart` (the `hystart` key).
    pub hystart: bool,
    /// The connection paces (HyStart's ACK-train test then uses Linux's paced threshold).
    pub pacing: bool,
    /// HyStart rounds as Linux since early 2025 (the `hystart_round_fix` key).
    pub hystart_round_fix: bool,
    /// RFC 9438 §4.7 fast convergence (Linux's `fast_convergence = 1`).
    pub fast_convergence: bool,
    /// Linux's floor of 5 % growth per RTT before the first reduction (`cubic_initial_growth`).
    pub initial_growth: bool,
    /// The target is W_cubic(t + delay_min) as Linux, not t + SRTT (`cubic_delay_min`).
    pub delay_min_target: bool,
    /// The Reno-friendly estimate as Linux's `tcp_friendliness`, and ssthresh and W_max in whole
    /// segments as `bictcp_recalc_ssthresh` (`cubic_linux_friendliness`).
    pub linux_friendliness: bool,
}

impl CubicConfig {
    pub fn from_tcp(c: &TcpConfig) -> CubicConfig {
        CubicConfig { hystart: c.hystart, pacing: c.pacing, hystart_round_fix: c.hystart_round_fix, fast_convergence: true, initial_growth: c.cubic_initial_growth, delay_min_target: c.cubic_delay_min, linux_friendliness: c.cubic_linux_friendliness }
    }
}

/// `cc = "cubic"`: no keys of its own (`hystart` and the others are stack switches, in TcpConfig).
pub const REGISTRATION: Registration =
    Registration { name: "cubic", keys: &[], params: |_| Ok(Arc::new(NoOptions(|c| Box::new(Cubic::new(CubicConfig::from_tcp(c)))))), ecn: None };

/// RFC 9438 §5: C = 0.4.
pub const C: f64 = 0.4;
/// RFC 9438 §4.6: β_cubic = 0.7.
pub const BETA: f64 = 0.7;

/// Linux `tcp_cubic.c` `beta_scale` = 8·(1024 + beta)/3/(1024 − beta) with beta = 717, in integer
/// arithmetic: 13928/3 = 4642, 4642/307 = 15. The Reno estimate gains one segment per
/// (cwnd·15) >> 3 ACKed segments, i.e. α ≈ 8/15 per RTT.
pub const LINUX_BETA_SCALE: u64 = 8 * (1024 + 717) / 3 / (1024 - 717);

/// Linux `tcp_cubic.c` HyStart defaults (module parameters and constants, Linux 5.7 onwards):
/// `hystart_low_window` = 16 segments.
pub const HYSTART_LOW_WINDOW: u64 = 16;
/// `hystart_ack_delta_us` = 2000: ACKs at most this far apart still make one train.
pub const HYSTART_ACK_DELTA: Time = Time::from_us(2000);
/// `HYSTART_MIN_SAMPLES` = 8: RTT samples per round before the delay test.
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN` / `HYSTART_DELAY_MAX`: the delay threshold min_rtt/8 is clamped to 4–16 ms.
pub const HYSTART_DELAY_MIN: Time = Time::from_ms(4);
pub const HYSTART_DELAY_MAX: Time = Time::from_ms(16);

/// Which HyStart test ended slow start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HystartExit {
    /// ACK train (`HYSTART_ACK_TRAIN`): ACKs ≤ 2 ms apart spanning more than min_rtt/2.
    AckTrain,
    /// Delay increase (`HYSTART_DELAY`): the round's minimum RTT exceeds min_rtt + threshold.
    Delay,
}

/// Linux's hybrid slow start as in `net/ipv4/tcp_cubic.c` (`bictcp_hystart_reset`,
/// `hystart_update`, `cubictcp_acked`; Ha & Rhee, "Taming the elephants", 2008/2011), with
/// `hystart_detect = 3` (both tests). Times are the simulator's (ns) instead of Linux's µs clock.
#[derive(Clone, Debug)]
pub struct Hystart {
    /// `hystart` module parameter (default 1).
    pub enabled: bool,
    /// `ca->found`: an exit point was found; no more tests until the state is reset (RTO).
    pub found: Option<HystartExit>,
    /// `ca->delay_min`: the smallest RTT sample seen (not the RTO estimator's min_rtt).
    pub delay_min: Option<Time>,
    /// `ca->round_start`: when the current round began (the ACK that started it).
    pub round_start: Time,
    /// `ca->last_ack`: the last ACK that continued the train.
    pub last_ack: Time,
    /// `ca->end_seq`: SND.NXT when the round began; the round ends once SND.UNA passes it.
    /// None = no round yet (the first sample tested starts one).
    pub end_seq: Option<u64>,
    /// `ca->curr_rtt`: the smallest RTT sample of this round.
    pub curr_rtt: Option<Time>,
    /// `ca->sample_cnt`: samples counted this round (up to HYSTART_MIN_SAMPLES).
    pub sample_cnt: u32,
    /// The sender paces (Linux's `sk_pacing_status != SK_PACING_NONE`): the train must then span
    /// the whole min RTT, not half of it.
    pub pacing: bool,
    /// cwnd (bytes) when HyStart ended slow start.
    pub exit_cwnd: Option<u64>,
    /// Rounds are counted below `hystart_low_window` too (Linux since early 2025, default);
    /// false: the round reset waits for the low window as in Linux 6.1 up to that fix (see
    /// [`Hystart::update`]).
    pub linux_round_fix: bool,
}

impl Default for Hystart {
    fn default() -> Self {
        Hystart { enabled: true, found: None, delay_min: None, round_start: Time::ZERO, last_ack: Time::ZERO, end_seq: None, curr_rtt: None, sample_cnt: 0, pacing: false, exit_cwnd: None, linux_round_fix: true }
    }
}

impl Hystart {
    /// Delay threshold: clamp(min_rtt/8, 4 ms, 16 ms) (`HYSTART_DELAY_THRESH(delay_min >> 3)`).
    pub fn delay_thresh(min_rtt: Time) -> Time { Time(min_rtt.0 / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX) }

    /// `bictcp_hystart_reset`: a new round begins now and ends when SND.NXT (as of now) is acked.
    fn new_round(&mut self, now: Time, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = Some(snd_nxt);
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `bictcp_reset` + `bictcp_hystart_reset` on entering TCP_CA_Loss (RTO): tests start over.
    fn reset(&mut self) {
        self.found = None;
        self.delay_min = None;
        self.end_seq = None;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// `hystart_update`: run both tests on one RTT sample; Some when slow start should end.
    /// `low_window`: cwnd is below `hystart_low_window`. Rounds are kept on every sample in slow
    /// start and only the tests wait for the low window, as in Linux since "tcp_cubic: fix
    /// incorrect HyStart round start detection" (M. Arghavani, netdev January 2025; in mainline by
    /// v6.14, backported to 6.1.y and 6.6.y in February 2025; before it, 4e1fddc98d25 (v6.1)
    /// skipped the round reset below the low window too, so the first round began at the first
    /// ACK at 16 segments). So the round in
    /// progress when cwnd reaches 16 keeps its start and end_seq, and the delay test (which needs
    /// 8 samples gathered at ≥ 16 segments in one round) usually runs in the round after it:
    /// measured on Linux 6.18, PAM 2013 path, IW3: TCPHystartDelayCwnd = 38 segments, where the
    /// old order exits at 29 (docs/validation.md, mechanism 2).
    fn update(&mut self, now: Time, s: &AckSample, low_window: bool) -> Option<HystartExit> {
        if self.end_seq.is_none_or(|e| s.snd_una > e) {
            self.new_round(now, s.snd_nxt);
        }
        if low_window {
            return None;
        }
        let delay_min = self.delay_min?;
        // ACK train: consecutive ACKs no more than 2 ms apart, the train longer than delay_min/2
        // (delay_min when pacing). A larger gap ends the train for the rest of the round.
        if now - self.last_ack <= HYSTART_ACK_DELTA {
            self.last_ack = now;
            let threshold = if self.pacing { delay_min } else { Time(delay_min.0 / 2) };
            if now - self.round_start > threshold {
                return Some(HystartExit::AckTrain);
            }
        }
        // Delay increase: the minimum of the round's samples (from the 9th on, the first 8 only
        // gather) above delay_min + clamp(delay_min/8, 4 ms, 16 ms).
        self.curr_rtt = Some(self.curr_rtt.map_or(s.rtt, |c| c.min(s.rtt)));
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt.is_some_and(|c| c > delay_min + Self::delay_thresh(delay_min)) {
            return Some(HystartExit::Delay);
        }
        None
    }
}

#[derive(Clone, Debug)]
pub struct Cubic {
    /// W_max in segments: the window just before the last reduction.
    pub w_max: f64,
    /// cwnd (segments) just before the last reduction, for the α switch of §4.3.
    pub cwnd_prior: f64,
    /// Start of the current congestion-avoidance epoch (§4.2 t = now − epoch_start).
    pub epoch_start: Option<Time>,
    pub k: f64,
    /// Reno-friendly window estimate (segments).
    pub w_est: f64,
    pub fast_convergence: bool,
    /// Linux's 5 %-per-RTT floor before the first reduction (`CubicConfig::initial_growth`).
    pub initial_growth: bool,
    /// Target W_cubic(t + delay_min) (Linux) instead of W_cubic(t + SRTT) (RFC 9438).
    pub delay_min_target: bool,
    /// W_est counted as Linux's `ca->tcp_cwnd` (`CubicConfig::linux_friendliness`).
    pub linux_friendliness: bool,
    /// Linux's `ca->ack_cnt`: segments ACKed towards the next `tcp_cwnd` increment.
    ack_cnt: u64,
    /// A window reduction has happened (Linux: `last_max_cwnd` != 0).
    reduced: bool,
    /// Fraction of a byte carried between ACKs.
    frac: f64,
    /// Hybrid slow start (Linux's, on by default).
    pub hystart: Hystart,
}

impl Default for Cubic {
    fn default() -> Self { Cubic { w_max: 0.0, cwnd_prior: 0.0, epoch_start: None, k: 0.0, w_est: 0.0, fast_convergence: true, initial_growth: false, delay_min_target: false, linux_friendliness: false, ack_cnt: 0, reduced: false, frac: 0.0, hystart: Hystart::default() } }
}

impl Cubic {
    pub fn new(c: CubicConfig) -> Cubic {
        let mut x = Cubic { fast_convergence: c.fast_convergence, initial_growth: c.initial_growth, delay_min_target: c.delay_min_target, linux_friendliness: c.linux_friendliness, ..Cubic::default() };
        x.hystart.enabled = c.hystart;
        x.hystart.pacing = c.pacing;
        x.hystart.linux_round_fix = c.hystart_round_fix;
        x
    }

    /// W_est after `acked` segments as Linux's `bictcp_update` (`tcp_friendliness`): `ack_cnt`
    /// collects ACKed segments and every (cwnd·beta_scale) >> 3 of them adds one segment to
    /// `tcp_cwnd` (whole segments; `cwnd` is Linux's integer snd_cwnd).
    fn linux_w_est(&mut self, cwnd: u64, acked: u64) {
        self.ack_cnt += acked;
        let delta = ((cwnd * LINUX_BETA_SCALE) >> 3).max(1);
        while self.ack_cnt > delta {
            self.ack_cnt -= delta;
            self.w_est += 1.0;
        }
    }

    /// RFC 9438 eq. 1: W_cubic(t) = C·(t − K)³ + W_max, t in seconds.
    pub fn w_cubic(&self, t: f64) -> f64 { C * (t - self.k).powi(3) + self.w_max }

    /// RFC 9438 eq. 2: K = ∛((W_max − cwnd_epoch)/C).
    pub fn k_for(w_max: f64, cwnd_epoch: f64) -> f64 { ((w_max - cwnd_epoch).max(0.0) / C).cbrt() }

    fn reduce(&mut self, st: &mut CcState) -> u64 {
        if self.linux_friendliness {
            return self.reduce_linux(st);
        }
        let mss = st.mss as f64;
        let cwnd = st.cwnd as f64 / mss;
        // §4.7 fast convergence: release bandwidth when W_max keeps falling.
        self.w_max = if self.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.cwnd_prior = cwnd;
        self.reduced = true;
        self.epoch_start = None;
        self.frac = 0.0;
        // §4.6: ssthresh = cwnd·β_cubic, at least 2 SMSS.
        ((cwnd * BETA * mss) as u64).max(2 * st.mss)
    }
}

impl Cubic {
    /// `bictcp_recalc_ssthresh` in Linux's integers on the whole-segment cwnd (`snd_cwnd`):
    /// `last_max_cwnd` = cwnd·(1024 + 717)/2048 under fast convergence, else cwnd; ssthresh =
    /// max(cwnd·717/1024, 2) (BICTCP_BETA_SCALE = 1024, beta = 717).
    fn reduce_linux(&mut self, st: &mut CcState) -> u64 {
        let cwnd = st.cwnd / st.mss;
        let last_max = self.w_max as u64;
        self.w_max = if self.fast_convergence && cwnd < last_max { (cwnd * (1024 + 717) / 2048) as f64 } else { cwnd as f64 };
        self.cwnd_prior = cwnd as f64;
        self.reduced = true;
        self.epoch_start = None;
        self.frac = 0.0;
        (cwnd * 717 / 1024).max(2) * st.mss
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str { "cubic" }

    /// Linux's `cubictcp_acked`: keep delay_min, then run HyStart while in slow start at a window
    /// of at least 16 segments. Samples within 1 s of the start of a congestion-avoidance epoch
    /// are ignored altogether (Linux: "discard delay samples right after fast recovery").
    fn on_ack_sample(&mut self, st: &mut CcState, s: &AckSample) {
        if self.epoch_start.is_some_and(|e| st.now - e < Time::from_secs(1)) {
            return;
        }
        // Linux clamps a zero sample to 1 µs.
        let rtt = s.rtt.max(Time::from_us(1));
        let h = &mut self.hystart;
        if h.delay_min.is_none_or(|d| rtt < d) {
            h.delay_min = Some(rtt);
        }
        // (Not during fast recovery: see docs/tcp.md.)
        if !h.enabled || h.found.is_some() || s.recovery || !st.in_slow_start() {
            return;
        }
        let s = AckSample { rtt, ..*s };
        let low_window = h.linux_round_fix && st.cwnd < HYSTART_LOW_WINDOW * st.mss;
        if !h.linux_round_fix && st.cwnd < HYSTART_LOW_WINDOW * st.mss {
            return;
        }
        if let Some(exit) = h.update(st.now, &s, low_window) {
            h.found = Some(exit);
            h.exit_cwnd = Some(st.cwnd);
            st.ssthresh = st.cwnd;
        }
    }

    fn cong_avoid(&mut self, st: &mut CcState, acked: u64) {
        if st.in_slow_start() {
            slow_start(st, acked);
            return;
        }
        let mss = st.mss as f64;
        let cwnd = st.cwnd as f64 / mss;
        let start = match self.epoch_start {
            Some(t) => t,
            None => {
                // §4.2: a new epoch begins at the first ACK in congestion avoidance.
                self.epoch_start = Some(st.now);
                // Linux compares and takes K on the whole-segment cwnd.
                let cwnd = if self.linux_friendliness { (st.cwnd / st.mss) as f64 } else { cwnd };
                if cwnd < self.w_max {
                    self.k = Self::k_for(self.w_max, cwnd);
                } else {
                    self.k = 0.0;
                    self.w_max = cwnd;
                }
                self.w_est = cwnd;
                // Linux: `ca->tcp_cwnd = cwnd` (integer segments), `ca->ack_cnt = acked` below.
                if self.linux_friendliness {
                    self.w_est = (st.cwnd / st.mss) as f64;
                    self.ack_cnt = 0;
                }
                st.now
            }
        };
        let t = (st.now - start).secs_f64();
        // The look-ahead: RFC 9438 §4.4 uses the smoothed RTT; Linux's bictcp_update adds
        // ca->delay_min, the smallest RTT sample (0 before the first). Over a standing queue the
        // two differ by the queueing delay, and the RFC's target runs that far ahead on the curve.
        let ahead = if self.delay_min_target { self.hystart.delay_min } else { st.srtt };
        let rtt = ahead.map_or(0.0, |r| r.secs_f64());
        let w_t = self.w_cubic(t);
        let new_cwnd = if self.linux_friendliness {
            // bictcp_update in Linux's integers: bic_target = origin ± ⌊C·(t − K)³⌋ whole
            // segments, cnt = cwnd / (bic_target − cwnd) (100·cwnd at or above the curve), at most
            // cwnd / (tcp_cwnd − cwnd), at least 2; cwnd grows by one per cnt ACKed segments.
            let (whole, segs) = (st.cwnd / st.mss, (acked + st.mss / 2) / st.mss);
            self.linux_w_est(whole, segs);
            let w = self.w_cubic(t + rtt);
            let target = if t + rtt < self.k { w.ceil() } else { w.floor() }.max(0.0) as u64;
            let mut cnt = if target > whole { whole / (target - whole) } else { 100 * whole };
            let tcp_cwnd = self.w_est as u64;
            if tcp_cwnd > whole {
                cnt = cnt.min(whole / (tcp_cwnd - whole));
            }
            cwnd + (acked as f64 / mss) / cnt.max(2) as f64
        } else {
            // §4.3 Reno-friendly region: W_est += α·segments_acked/cwnd, α = 3(1−β)/(1+β) until
            // W_est reaches cwnd_prior, then 1.
            let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { 3.0 * (1.0 - BETA) / (1.0 + BETA) };
            self.w_est += alpha * (acked as f64 / mss) / cwnd;
            if w_t < self.w_est {
                self.w_est
            } else {
                // §4.4/4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd];
                // cwnd += (target − cwnd)/cwnd per SMSS acknowledged.
                let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
                cwnd + (target - cwnd) / cwnd * (acked as f64 / mss)
            }
        };
        // Linux's bictcp_update: "the initial growth of cubic function may be too conservative
        // when the available bandwidth is still unknown" — until the first reduction, cnt (ACKed
        // segments per added segment) is at most 20: at least 5 % per RTT.
        let new_cwnd = if self.initial_growth && !self.reduced { new_cwnd.max(cwnd + (acked as f64 / mss) / 20.0) } else { new_cwnd };
        let inc = (new_cwnd - cwnd).max(0.0) * mss + self.frac;
        let whole = inc.floor();
        self.frac = inc - whole;
        st.cwnd += whole as u64;
    }

    fn on_congestion_event(&mut self, st: &mut CcState) {
        st.ssthresh = self.reduce(st);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, st: &mut CcState, first: bool) {
        // §4.8: ssthresh as in §4.6 (first timeout only, RFC 5681), cwnd = 1 SMSS, new epoch.
        if first {
            st.ssthresh = self.reduce(st);
        }
        self.epoch_start = None;
        // Linux `cubictcp_state(TCP_CA_Loss)`: HyStart starts over for the slow start that follows.
        self.hystart.reset();
        st.cwnd = st.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::CcState;

    fn st(cwnd_segs: u64) -> CcState {
        CcState { ssthresh: u64::MAX, srtt: Some(Time::from_ms(100)), flight: cwnd_segs * 1000, ..CcState::new(1000, cwnd_segs * 1000) }
    }

    /// A slow-start sender seen by HyStart: `in_flight` segments of 1000 B outstanding with cwnd =
    /// `cwnd` segments; each ACK covers one segment and (cwnd-limited) lets two new ones out.
    struct Ss {
        c: Cubic,
        s: CcState,
        una: u64,
        nxt: u64,
        acks: u64,
    }

    impl Ss {
        fn new(cwnd: u64) -> Ss {
            let mut s = st(cwnd);
            s.srtt = None;
            Ss { c: Cubic::default(), s, una: 1, nxt: 1 + cwnd * 1000, acks: 0 }
        }
        /// One ACK at `t_us` with RTT sample `rtt_us`; returns cwnd (segments) before the ACK.
        fn ack(&mut self, t_us: u64, rtt_us: u64) -> u64 {
            let before = self.s.cwnd / 1000;
            self.s.now = Time::from_us(t_us);
            self.una += 1000;
            self.acks += 1;
            let smp = AckSample { rtt: Time::from_us(rtt_us), snd_una: self.una, snd_nxt: self.nxt, recovery: false };
            self.c.on_ack_sample(&mut self.s, &smp);
            self.c.cong_avoid(&mut self.s, 1000);
            self.nxt += 2000;
            before
        }
    }

    #[test]
    fn hystart_delay_threshold_is_clamped() {
        // clamp(min_rtt/8, 4 ms, 16 ms): 20 ms → 2.5 → 4 ms; 100 ms → 12.5 ms; 200 ms → 25 → 16 ms.
        assert_eq!(Hystart::delay_thresh(Time::from_ms(20)), Time::from_ms(4));
        assert_eq!(Hystart::delay_thresh(Time::from_ms(100)), Time::from_us(12_500));
        assert_eq!(Hystart::delay_thresh(Time::from_ms(200)), Time::from_ms(16));
    }

    /// Linux's `tcp_friendliness` arithmetic: beta_scale = 8·1741/3/307 = 15 (integer steps
    /// 13928/3 = 4642, 4642/307 = 15); at cwnd 20, delta = (20·15) >> 3 = 37, and `tcp_cwnd` gains
    /// one segment once `ack_cnt` exceeds 37: on the 38th ACKed segment, then on the 75th
    /// (38 + 37). RFC 9438 with W_est at cwnd_prior already (α = 1) gains one per 20 segments.
    #[test]
    fn linux_friendliness_counts_as_bictcp_update() {
        assert_eq!(LINUX_BETA_SCALE, 15);
        let run = |linux: bool| {
            let mut c = Cubic::new(CubicConfig { linux_friendliness: linux, ..CubicConfig::from_tcp(&TcpConfig::default()) });
            // a reduction from 25 segments: W_max 25, cwnd_prior 25; then cwnd held at 20 (a
            // sender whose window does not move), far below the curve's plateau for the test's
            // instant (t = 0: W_cubic(0) = W_max − C·K³ = 20)
            let mut s = CcState { ssthresh: 20_000, ..st(25) };
            c.on_congestion_event(&mut s);
            c.cwnd_prior = 19.0;
            let mut w = Vec::new();
            for _ in 0..80 {
                s.cwnd = 20_000;
                c.cong_avoid(&mut s, 1000);
                w.push(c.w_est);
            }
            w
        };
        let lin = run(true);
        assert_eq!((lin[36], lin[37], lin[73], lin[74]), (20.0, 21.0, 21.0, 22.0));
        let rfc = run(false);
        // α = 1 (W_est ≥ cwnd_prior = 19): +1/20 per segment, 20 + 80/20 = 24 after 80
        assert!((rfc[79] - 24.0).abs() < 1e-9, "{}", rfc[79]);
    }

    /// bictcp_update's integer cnt: W_max 22 (a reduction at 22 segments), the epoch from cwnd 20:
    /// K = ∛((22 − 20)/0.4) = 1.71 s; one second later, with the look-ahead of 100 ms (SRTT),
    /// W_cubic(1.1) = 22 − 0.4·0.61³ = 21.91, below the origin so bic_target = 22 − ⌊0.09⌋ = 22
    /// whole segments, cnt = 20 / (22 − 20) = 10: ten ACKed segments add exactly one (the RFC's
    /// float rate (21.91 − 20)/20 would add 0.95).
    #[test]
    fn linux_cnt_is_whole_segments() {
        let mut c = Cubic::new(CubicConfig { linux_friendliness: true, ..CubicConfig::from_tcp(&TcpConfig::default()) });
        let mut s = st(22);
        c.on_congestion_event(&mut s);
        assert_eq!(c.w_max, 22.0);
        s.cwnd = 20_000;
        c.cong_avoid(&mut s, 0);
        assert!((c.k - 1.709_976).abs() < 1e-5, "{}", c.k);
        s.now = Time::from_secs(1);
        for _ in 0..9 {
            c.cong_avoid(&mut s, 1000);
        }
        assert_eq!(s.cwnd, 20_900);
        c.cong_avoid(&mut s, 1000);
        assert_eq!(s.cwnd, 21_000);
    }

    /// bictcp_recalc_ssthresh in Linux's integers on snd_cwnd (whole segments). A loss at cwnd 18:
    /// ssthresh = 18·717/1024 = 12.6 → 12 (not 18·0.7 = 12.6 segments in bytes), last_max_cwnd =
    /// 18. A second loss at cwnd 12 (< 18, fast convergence): last_max_cwnd = 12·1741/2048 = 10.2
    /// → 10, ssthresh = 12·717/1024 = 8.4 → 8. The epoch at cwnd 8: K = ∛((10 − 8)/0.4) = 1.71 s;
    /// 40 ms later with a 40 ms look-ahead, bic_target = 10 − ⌊0.4·(1.71 − 0.08)³⌋ = 10 − 1 = 9,
    /// cnt = 8 / (9 − 8) = 8: the 8th ACKed segment adds one. (In float segments from 18.3 and
    /// 12.9: ssthresh 12.81 and 9.03, W_max 10.97, and the epoch starts a segment higher.)
    #[test]
    fn linux_reduction_in_whole_segments() {
        let mut c = Cubic::new(CubicConfig { linux_friendliness: true, delay_min_target: true, ..CubicConfig::from_tcp(&TcpConfig::default()) });
        c.hystart.delay_min = Some(Time::from_ms(40));
        let mut s = st(18);
        s.cwnd = 18_300;
        c.on_congestion_event(&mut s);
        assert_eq!((s.ssthresh, s.cwnd, c.w_max), (12_000, 12_000, 18.0));
        s.cwnd = 12_900;
        c.on_congestion_event(&mut s);
        assert_eq!((s.ssthresh, s.cwnd, c.w_max), (8_000, 8_000, 10.0));
        s.ssthresh = 8_000;
        s.now = Time::from_secs(5);
        c.cong_avoid(&mut s, 0);
        assert!((c.k - 1.709_976).abs() < 1e-5, "{}", c.k);
        s.now = Time::from_secs(5) + Time::from_ms(40);
        for _ in 0..7 {
            c.cong_avoid(&mut s, 1000);
        }
        assert_eq!(s.cwnd, 8_875);
        c.cong_avoid(&mut s, 1000);
        assert_eq!(s.cwnd, 9_000);
    }

    /// Delay increase. cwnd 16, 16 segments out; ACKs 5 ms apart (> 2 ms: no ACK train). Rounds by
    /// SND.NXT: round 1 = ACKs 1–16 (end_seq = segment 16), round 2 = ACKs 17–48 (SND.NXT at ACK
    /// 17 = 16 + 2·16 = 48 segments), round 3 from ACK 49. Round 1's samples (100 ms) set
    /// delay_min = 100 ms, threshold 100/8 = 12.5 ms; round 2 at 112 ms stays below 112.5 ms;
    /// round 3 at 113 ms exits on its 9th sample (8 are gathered first), ACK 57, where the window
    /// before the ACK is 16 + 56 = 72 segments: ssthresh = cwnd = 72 segments.
    #[test]
    fn hystart_delay_increase_exits_slow_start() {
        let mut ss = Ss::new(16);
        for k in 1..=200u64 {
            let rtt = match k {
                1..=16 => 100_000,
                17..=48 => 112_000,
                _ => 113_000,
            };
            let before = ss.ack(k * 5000, rtt);
            if k < 57 {
                assert!(ss.c.hystart.found.is_none(), "exited early at ACK {k}");
            }
            if k == 57 {
                assert_eq!(before, 72);
                assert_eq!(ss.c.hystart.found, Some(HystartExit::Delay));
                assert_eq!(ss.c.hystart.exit_cwnd, Some(72_000));
            }
        }
        assert_eq!(ss.s.ssthresh, 72_000);
        assert_eq!(ss.c.hystart.delay_min, Some(Time::from_ms(100)));
        // After the exit CUBIC is in congestion avoidance: 143 more ACKs add far less than 143 segments.
        assert!(ss.s.cwnd < 100_000, "{}", ss.s.cwnd);
    }

    /// The same delays with hystart = false: plain RFC 5681 slow start, one segment per ACK.
    #[test]
    fn hystart_off_keeps_plain_slow_start() {
        let mut ss = Ss::new(16);
        ss.c.hystart.enabled = false;
        for k in 1..=200u64 {
            ss.ack(k * 5000, if k <= 16 { 100_000 } else { 200_000 });
        }
        assert!(ss.c.hystart.found.is_none());
        assert_eq!(ss.s.ssthresh, u64::MAX);
        assert_eq!(ss.s.cwnd, (16 + 200) * 1000);
    }

    /// Below hystart_low_window (16 segments) no test runs, however large the delay: at a window
    /// held at 15 segments (no growth: samples only), nothing; at 16 the delay test fires on the
    /// 9th sample at 16 (the first of them starts the round; 8 are gathered before the test).
    #[test]
    fn hystart_not_below_the_low_window() {
        let mut ss = Ss::new(15);
        let smp = |_t: u64, rtt: u64, una: u64| AckSample { rtt: Time::from_us(rtt), snd_una: una, snd_nxt: 1_000_000, recovery: false };
        ss.s.now = Time::from_us(1);
        ss.c.on_ack_sample(&mut ss.s, &smp(1, 50_000, 1001));
        for k in 2..100u64 {
            ss.s.now = Time::from_us(k * 5000);
            ss.c.on_ack_sample(&mut ss.s, &smp(k, 500_000, 1 + k * 1000));
        }
        assert!(ss.c.hystart.found.is_none());
        assert_eq!(ss.s.ssthresh, u64::MAX);
        ss.s.cwnd = 16_000;
        for k in 100..108u64 {
            ss.s.now = Time::from_us(k * 5000);
            ss.c.on_ack_sample(&mut ss.s, &smp(k, 500_000, 1 + k * 1000));
            assert!(ss.c.hystart.found.is_none(), "sample {}", k - 99);
        }
        ss.s.now = Time::from_us(108 * 5000);
        ss.c.on_ack_sample(&mut ss.s, &smp(108, 500_000, 109_001));
        assert_eq!(ss.c.hystart.found, Some(HystartExit::Delay));
        assert_eq!(ss.s.ssthresh, 16_000);
    }

    /// Rounds below the low window (Linux since early 2025). cwnd 12 segments, 12 out; each ACK covers one
    /// segment, grows cwnd by one and sends two (SND.NXT at ACK k = 12 + 2(k − 1) segments); ACKs
    /// 5 ms apart (no train); ACK 1's sample 100 ms (delay_min, threshold 12.5 ms), all later
    /// ones 120 ms (above 112.5 ms). cwnd at ACK k (before it) = 11 + k, so 16 from ACK 5.
    /// Linux's order: round 1 began at ACK 1 with end_seq = 12 segments; ACKs 5–12 gather 8
    /// samples, ACK 13 (SND.UNA 13 > 12) starts round 2 (end_seq 36) and clears them; ACKs 13–20
    /// gather, ACK 21 exits: ssthresh = 32 segments. The old order (round reset only from 16
    /// segments): round 1 begins at ACK 5, gathers ACKs 5–12, exits on ACK 13: 24 segments.
    #[test]
    fn hystart_rounds_are_counted_below_the_low_window() {
        for (fix, exit_ack, exit_cwnd) in [(true, 21u64, 32u64), (false, 13, 24)] {
            let mut ss = Ss::new(12);
            ss.c.hystart.linux_round_fix = fix;
            for k in 1..=30u64 {
                let before = ss.ack(k * 5000, if k == 1 { 100_000 } else { 120_000 });
                assert_eq!(before, 11 + k);
                assert_eq!(ss.c.hystart.found.is_some(), k >= exit_ack, "fix {fix}, ACK {k}");
                if ss.c.hystart.found.is_some() {
                    break;
                }
            }
            assert_eq!(ss.c.hystart.found, Some(HystartExit::Delay));
            assert_eq!(ss.c.hystart.exit_cwnd, Some(exit_cwnd * 1000));
            assert_eq!(ss.s.ssthresh, exit_cwnd * 1000);
        }
    }

    /// ACK train. cwnd 40, 40 segments out, so round 1 is ACKs 1–40; ACKs 1 ms apart (≤ 2 ms),
    /// every RTT sample 40 ms (no delay signal). The train starts at ACK 1 (t = 1 ms) and the test
    /// fires on the first ACK more than delay_min/2 = 20 ms later: ACK 22 (t = 22 ms), window
    /// before it 40 + 21 = 61 segments. With pacing the train must exceed delay_min = 40 ms: that
    /// needs 42 ACKs in one round, so with cwnd 50 (round of 50 ACKs) it is ACK 42, window 91.
    #[test]
    fn hystart_ack_train_exits_at_half_the_min_rtt() {
        let mut ss = Ss::new(40);
        for k in 1..=40u64 {
            let before = ss.ack(k * 1000, 40_000);
            if k == 21 {
                assert!(ss.c.hystart.found.is_none());
            }
            if k == 22 {
                assert_eq!(before, 61);
                assert_eq!(ss.c.hystart.found, Some(HystartExit::AckTrain));
            }
        }
        assert_eq!(ss.s.ssthresh, 61_000);

        let mut ss = Ss::new(50);
        ss.c.hystart.pacing = true;
        for k in 1..=50u64 {
            let before = ss.ack(k * 1000, 40_000);
            assert_eq!(ss.c.hystart.found.is_some(), k >= 42, "ACK {k}");
            if k == 42 {
                assert_eq!(before, 91);
            }
        }
        assert_eq!(ss.s.ssthresh, 91_000);
    }

    /// A gap of more than 2 ms between ACKs ends the train for the rest of the round: ACKs 1–9 at
    /// 1 ms spacing, then a 4 ms gap, then 1 ms spacing to ACK 40 (t = 43 ms, 42 ms after the round
    /// began): no exit in round 1.
    #[test]
    fn hystart_gap_breaks_the_ack_train() {
        let mut ss = Ss::new(40);
        for k in 1..=40u64 {
            let t = if k < 10 { k * 1000 } else { k * 1000 + 3000 };
            ss.ack(t, 40_000);
        }
        assert!(ss.c.hystart.found.is_none());
        assert_eq!(ss.s.cwnd, 80_000);
    }

    /// An RTO starts HyStart over (Linux's `cubictcp_state(TCP_CA_Loss)`): found and delay_min cleared.
    #[test]
    fn hystart_reset_by_rto() {
        let mut ss = Ss::new(40);
        for k in 1..=22u64 {
            ss.ack(k * 1000, 40_000);
        }
        assert!(ss.c.hystart.found.is_some());
        ss.c.on_rto(&mut ss.s, true);
        assert!(ss.c.hystart.found.is_none());
        assert!(ss.c.hystart.delay_min.is_none());
        assert_eq!(ss.s.cwnd, 1000);
    }

    #[test]
    fn w_cubic_hand_checked() {
        // W_max = 100 segments, reduction to 70: K = cbrt(30/0.4) = cbrt(75) = 4.217163 s.
        let mut c = Cubic::default();
        let mut s = st(100);
        c.on_congestion_event(&mut s);
        assert_eq!(s.cwnd, 70_000);
        assert_eq!(s.ssthresh, 70_000);
        assert_eq!(c.w_max, 100.0);
        c.epoch_start = Some(Time::ZERO);
        c.k = Cubic::k_for(100.0, 70.0);
        assert!((c.k - 4.217163).abs() < 1e-6, "{}", c.k);
        // Hand values: W(0) = 70; W(1) = 0.4·(−3.217163)³ + 100 = 86.6806; W(K) = 100;
        // W(6) = 0.4·(1.782837)³ + 100 = 102.2667.
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(1.0) - 86.6806).abs() < 1e-3, "{}", c.w_cubic(1.0));
        assert!((c.w_cubic(c.k) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(6.0) - 102.2667).abs() < 1e-3, "{}", c.w_cubic(6.0));
    }

    /// Drives CUBIC with one ACK per SMSS spread evenly over each 100 ms round trip after a
    /// reduction from W_max = 100 segments: cwnd(t) tracks W_cubic(t) of RFC 9438 eq. 1 (the
    /// RFC's target is W_cubic(t + RTT), reached over the next round trip, so the window lags by
    /// less than one round trip of growth) until the Reno-friendly W_est overtakes it (§4.3).
    #[test]
    fn window_follows_w_cubic_over_an_epoch() {
        let mut c = Cubic::default();
        let mut s = st(100);
        s.ssthresh = 0;
        c.on_congestion_event(&mut s);
        let rtt = Time::from_ms(100);
        let mut t = Time::ZERO;
        let mut checked = 0;
        for round in 0..70u64 {
            let n = s.cwnd / s.mss;
            for i in 0..n {
                s.now = Time::from_ms(round * 100) + Time(rtt.0 * i / n);
                let mss = s.mss;
                c.cong_avoid(&mut s, mss);
            }
            t += rtt;
            if round % 10 == 9 {
                // End of the round: t seconds since the epoch began at the first ACK (t = 0).
                // RFC 9438 §4.3: W_est grows by α = 3(1−β)/(1+β) = 0.5294 segments per RTT from
                // 70 until it reaches cwnd_prior = 100 (at t = 30/0.5294·0.1 s = 5.667 s), then by 1.
                let ts = t.secs_f64();
                let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
                let t100 = 30.0 / alpha * 0.1;
                let w_est = if ts < t100 { 70.0 + alpha * ts / 0.1 } else { 100.0 + (ts - t100) / 0.1 };
                let w = c.w_cubic(ts).max(w_est);
                let got = s.cwnd as f64 / 1000.0;
                assert!((got - w).abs() <= 1.5, "t = {t:?}: cwnd {got} vs W_cubic {w}");
                checked += 1;
            }
        }
        assert_eq!(checked, 7);
        // By t = 7 s the Reno-friendly estimate leads (113.3 > W_cubic(7) = 108.6).
        assert!(s.cwnd as f64 / 1000.0 > c.w_cubic(7.0) + 3.0);
        assert!((c.k - 75f64.cbrt()).abs() < 1e-9);
    }

    /// The look-ahead of the target. Linux's bictcp_update: t = now − epoch_start + delay_min
    /// (the smallest RTT sample); RFC 9438 §4.4: W_cubic(t + RTT) with the smoothed RTT. After a
    /// reduction from W_max = 100 to 70 segments (K = ∛75 = 4.217163 s), 2 s into the epoch with
    /// cwnd 80, SRTT 1 s (a standing queue) and delay_min 40 ms, one SMSS (1000 B) acknowledged:
    /// Linux: (W_cubic(2.04) − 80)/80 = (95.872063 − 80)/80 → 198 B; RFC: (W_cubic(3) − 80)/80 =
    /// (99.278716 − 80)/80 → 240 B.
    #[test]
    fn target_looks_ahead_by_delay_min_as_linux() {
        for (linux, grew) in [(true, 198u64), (false, 240)] {
            let mut c = Cubic { delay_min_target: linux, ..Cubic::default() };
            c.hystart.delay_min = Some(Time::from_ms(40));
            let mut s = CcState { srtt: Some(Time::from_secs(1)), ..st(100) };
            c.on_congestion_event(&mut s);
            c.cong_avoid(&mut s, 1000); // t = 0: the epoch opens, K = ∛75
            assert!((c.k - 75f64.cbrt()).abs() < 1e-9);
            s.cwnd = 80_000;
            c.frac = 0.0;
            s.now = Time::from_secs(2);
            c.cong_avoid(&mut s, 1000);
            assert_eq!(s.cwnd - 80_000, grew, "delay_min target {linux}");
        }
    }

    /// RFC 9438 §4.4–4.5: far above W_max the target W_cubic(t + RTT) is clamped to 1.5·cwnd, so
    /// one SMSS acknowledged grows cwnd by (1.5·cwnd − cwnd)/cwnd = 0.5 SMSS, never more.
    #[test]
    fn target_is_clamped_to_one_and_a_half_cwnd() {
        let mut c = Cubic { w_max: 100.0, cwnd_prior: 100.0, hystart: Hystart { enabled: false, ..Hystart::default() }, ..Cubic::default() };
        let mut s = CcState { ssthresh: 10_000, ..st(20) };
        // First ACK in congestion avoidance opens the epoch: K = ∛((100 − 20)/0.4) = ∛200 s, and
        // W_cubic(0) = 20 < W_est, so cwnd follows the Reno-friendly estimate (a few bytes).
        c.cong_avoid(&mut s, 1000);
        let before = s.cwnd;
        assert!(before - 20_000 < 100, "{before}");
        // 10 s later W_cubic(10.1 s) ≈ 131 segments ≫ 1.5·cwnd.
        s.now = Time::from_secs(10);
        c.cong_avoid(&mut s, 1000);
        let grew = s.cwnd - before;
        assert!((499..=501).contains(&grew), "grew by {grew} B for 1000 B acked");
    }
}
