//! RFC 6298 retransmission-timer estimator: SRTT, RTTVAR, RTO with a configurable floor (RFC 6298
//! §2.4 says 1 s; Linux uses 200 ms), a 60 s ceiling (§2.5), exponential backoff (§5.5) and Karn's
//! rule (§3: no samples from retransmitted segments; the caller enforces it by not sampling them).
use crate::time::Time;

/// RFC 6298 §2.1: RTO before the first sample (1 s).
pub const INITIAL_RTO: Time = Time::from_secs(1);
/// RFC 6298 §2.5: an upper bound of at least 60 s may be placed on RTO.
pub const MAX_RTO: Time = Time::from_secs(60);
/// RFC 6298 §5.7: RTO once data begins after a SYN timed out (3 s).
pub const SYN_TIMEOUT_RTO: Time = Time::from_secs(3);
/// Clock granularity G of RFC 6298 §2 (this simulator's clock is exact; Linux has 1 jiffy = 1 ms
/// at HZ=1000, which we keep so that RTO = SRTT + max(G, 4·RTTVAR) behaves the same).
pub const CLOCK_G: Time = Time::from_ms(1);

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    /// RTO from the estimator, without backoff.
    base_rto: Time,
    /// Backoff exponent (number of consecutive timeouts since the last valid sample).
    backoff: u32,
    min_rto: Time,
    /// Linux's form: the floor bounds the variance term (RTO = SRTT + max(4·RTTVAR, min_rto)).
    linux: bool,
    latest: Option<Time>,
    min_rtt: Option<Time>,
}

impl RttEstimator {
    pub fn new(min_rto: Time) -> Self {
        RttEstimator { srtt: None, rttvar: Time::ZERO, base_rto: INITIAL_RTO.max(min_rto), backoff: 0, min_rto, linux: false, latest: None, min_rtt: None }
    }

    /// Linux's RTO (`tcp_rtt_estimator` keeps RTTVAR ≥ tcp_rto_min, `__tcp_set_rto` adds it to
    /// SRTT): RTO = SRTT + max(4·RTTVAR, min_rto) instead of RFC 6298's max(min_rto, SRTT + 4·RTTVAR).
    /// The two agree for short RTTs; with a deep queue (SRTT ≫ min_rto) Linux's stays min_rto above SRTT.
    pub fn linux(min_rto: Time) -> Self { RttEstimator { linux: true, ..Self::new(min_rto) } }

    /// A valid sample R (Karn-clean). RFC 6298 §2.2 for the first, §2.3 afterwards (alpha = 1/8,
    /// beta = 1/4); a new sample also collapses any backoff (§5, last paragraph).
    pub fn sample(&mut self, r: Time) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Time(r.0 / 2);
            }
            Some(s) => {
                let diff = s.0.abs_diff(r.0);
                // RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|
                self.rttvar = Time((3 * self.rttvar.0 + diff) / 4);
                // SRTT <- (1 - alpha) * SRTT + alpha * R'
                self.srtt = Some(Time((7 * s.0 + r.0) / 8));
            }
        }
        let s = self.srtt.unwrap_or(r);
        // RTO <- SRTT + max (G, K*RTTVAR), K = 4; then the floor (§2.4) and ceiling (§2.5).
        self.base_rto = if self.linux {
            (s + self.rttvar.mul(4).max(self.min_rto)).min(MAX_RTO)
        } else {
            (s + CLOCK_G.max(self.rttvar.mul(4))).max(self.min_rto).min(MAX_RTO)
        };
        self.backoff = 0;
    }

    /// The current RTO including backoff.
    pub fn rto(&self) -> Time {
        let mut r = self.base_rto;
        for _ in 0..self.backoff {
            r = r.mul(2);
            if r >= MAX_RTO {
                return MAX_RTO;
            }
        }
        r
    }

    /// RFC 6298 §5.5: back off the timer after it expired.
    pub fn backoff(&mut self) { self.backoff = (self.backoff + 1).min(16); }
    pub fn backoff_count(&self) -> u32 { self.backoff }
    /// RFC 6298 §5.7: after a SYN timeout, RTO is 3 s when data transmission begins (if no sample).
    pub fn reset_after_syn_timeout(&mut self) {
        if self.srtt.is_none() {
            self.base_rto = SYN_TIMEOUT_RTO.max(self.min_rto);
            self.backoff = 0;
        }
    }
    pub fn srtt(&self) -> Option<Time> { self.srtt }
    pub fn rttvar(&self) -> Time { self.rttvar }
    pub fn latest(&self) -> Option<Time> { self.latest }
    pub fn min_rtt(&self) -> Option<Time> { self.min_rtt }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rfc6298_arithmetic() {
        let mut e = RttEstimator::new(Time::from_ms(200));
        assert_eq!(e.rto(), Time::from_secs(1));
        e.sample(Time::from_ms(100));
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 200 = 300 ms
        assert_eq!(e.srtt(), Some(Time::from_ms(100)));
        assert_eq!(e.rto(), Time::from_ms(300));
        e.sample(Time::from_ms(180));
        // RTTVAR = 3/4*50 + 1/4*80 = 57.5; SRTT = 7/8*100 + 180/8 = 110; RTO = 110 + 230 = 340
        assert_eq!(e.srtt(), Some(Time::from_ms(110)));
        assert_eq!(e.rttvar(), Time::from_us(57_500));
        assert_eq!(e.rto(), Time::from_ms(340));
        e.backoff();
        e.backoff();
        assert_eq!(e.rto(), Time::from_ms(1360));
        for _ in 0..10 { e.backoff(); }
        assert_eq!(e.rto(), MAX_RTO);
        e.sample(Time::from_ms(110));
        assert_eq!(e.backoff_count(), 0);
    }
    #[test]
    fn linux_form_floors_the_variance_term() {
        // SRTT 1.4 s with a steady queue (RTTVAR 5 ms): RFC 6298 gives 1.42 s, Linux 1.6 s.
        let mut r = RttEstimator::new(Time::from_ms(200));
        let mut l = RttEstimator::linux(Time::from_ms(200));
        r.sample(Time::from_ms(1400));
        l.sample(Time::from_ms(1400));
        for _ in 0..40 {
            r.sample(Time::from_ms(1400));
            l.sample(Time::from_ms(1400));
        }
        assert_eq!(l.rto(), Time::from_ms(1600));
        assert!(r.rto() < Time::from_ms(1410), "{:?}", r.rto());
        // Short RTT: both 200 ms floors agree.
        let mut l = RttEstimator::linux(Time::from_ms(200));
        for _ in 0..40 {
            l.sample(Time::from_ms(10));
        }
        assert_eq!(l.rto(), Time::from_ms(210));
    }

    #[test]
    fn linux_form_k_is_four() {
        // First sample R = 400 ms: SRTT = 400, RTTVAR = R/2 = 200 (RFC 6298 §2.2); Linux's
        // `__tcp_set_rto`: SRTT + max(4·RTTVAR, rto_min) = 400 + 800 = 1200 ms (K = 3 would give 1000).
        let mut l = RttEstimator::linux(Time::from_ms(200));
        l.sample(Time::from_ms(400));
        assert_eq!(l.rto(), Time::from_ms(1200));
        // Second sample 200 ms: RTTVAR = 3/4·200 + 1/4·200 = 200, SRTT = 7/8·400 + 200/8 = 375;
        // RTO = 375 + 800 = 1175 ms.
        l.sample(Time::from_ms(200));
        assert_eq!(l.rto(), Time::from_ms(1175));
    }

    #[test]
    fn min_rto_floor() {
        let mut e = RttEstimator::new(Time::from_secs(1));
        e.sample(Time::from_ms(10));
        assert_eq!(e.rto(), Time::from_secs(1));
        let mut l = RttEstimator::new(Time::from_ms(200));
        l.sample(Time::from_ms(10));
        assert_eq!(l.rto(), Time::from_ms(200));
    }
}
