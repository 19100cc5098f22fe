//! CUBIC (RFC 9438): window growth W_cubic(t) = C·(t − K)³ + W_max (§4.2) with C = 0.4 and
//! β_cubic = 0.7 (§4.6), the Reno-friendly estimate W_est (§4.3), fast convergence (§4.7) and the
//! RTO rule (§4.8). Slow start is RFC 5681's (HyStart++ is not modelled). Windows inside this
//! module are in segments (f64), as in the RFC; the connection's cwnd stays in bytes.
use super::{slow_start, CcState, CongestionControl};
use crate::time::Time;

/// RFC 9438 §5: C = 0.4.
pub const C: f64 = 0.4;
/// RFC 9438 §4.6: β_cubic = 0.7.
pub const BETA: f64 = 0.7;

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
    /// Fraction of a byte carried between ACKs.
    frac: f64,
}

impl Default for Cubic {
    fn default() -> Self { Cubic { w_max: 0.0, cwnd_prior: 0.0, epoch_start: None, k: 0.0, w_est: 0.0, fast_convergence: true, frac: 0.0 } }
}

impl Cubic {
    /// RFC 9438 eq. 1: W_cubic(t) = C·(t − K)³ + W_max, t in seconds.
    pub fn w_cubic(&self, t: f64) -> f64 { C * (t - self.k).powi(3) + self.w_max }

    /// RFC 9438 eq. 2: K = ∛((W_max − cwnd_epoch)/C).
    pub fn k_for(w_max: f64, cwnd_epoch: f64) -> f64 { ((w_max - cwnd_epoch).max(0.0) / C).cbrt() }

    fn reduce(&mut self, st: &mut CcState) -> u64 {
        let mss = st.mss as f64;
        let cwnd = st.cwnd as f64 / mss;
        // §4.7 fast convergence: release bandwidth when W_max keeps falling.
        self.w_max = if self.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + BETA) / 2.0 } else { cwnd };
        self.cwnd_prior = cwnd;
        self.epoch_start = None;
        self.frac = 0.0;
        // §4.6: ssthresh = cwnd·β_cubic, at least 2 SMSS.
        ((cwnd * BETA * mss) as u64).max(2 * st.mss)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str { "cubic" }

    fn on_ack(&mut self, st: &mut CcState, acked: u64) {
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
                if cwnd < self.w_max {
                    self.k = Self::k_for(self.w_max, cwnd);
                } else {
                    self.k = 0.0;
                    self.w_max = cwnd;
                }
                self.w_est = cwnd;
                st.now
            }
        };
        let t = (st.now - start).secs_f64();
        let rtt = st.srtt.map_or(0.0, |r| r.secs_f64());
        // §4.3 Reno-friendly region: W_est += α·segments_acked/cwnd, α = 3(1−β)/(1+β) until W_est
        // reaches cwnd_prior, then 1.
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { 3.0 * (1.0 - BETA) / (1.0 + BETA) };
        self.w_est += alpha * (acked as f64 / mss) / cwnd;
        let w_t = self.w_cubic(t);
        let new_cwnd = if w_t < self.w_est {
            self.w_est
        } else {
            // §4.4/4.5: target = W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd];
            // cwnd += (target − cwnd)/cwnd per SMSS acknowledged.
            let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * (acked as f64 / mss)
        };
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
        st.cwnd = st.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::CcState;

    fn st(cwnd_segs: u64) -> CcState {
        CcState { mss: 1000, cwnd: cwnd_segs * 1000, ssthresh: u64::MAX, now: Time::ZERO, srtt: Some(Time::from_ms(100)), min_rtt: None, flight: cwnd_segs * 1000, abc_l: None }
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
                c.on_ack(&mut s, mss);
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
}
