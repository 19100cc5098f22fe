//! Delivery-rate sampling as Linux's `net/ipv4/tcp_rate.c`: each transmission stamps the segment
//! with the connection's delivery state ([`DeliveryRate::on_sent`], `tcp_rate_skb_sent`); each
//! segment an ACK delivers (cumulatively or by SACK) offers its stamp ([`DeliveryRate::delivered`],
//! `tcp_rate_skb_delivered`), the newest-sent one wins; [`DeliveryRate::generate`] (`tcp_rate_gen`)
//! turns that into the ACK's [`RateSample`]. Bytes instead of Linux's packets.
use super::cc::{CaState, CcState, RateSample};
use super::scoreboard::{Seg, TxRate};
use crate::time::Time;

/// One ACK's accumulators for its rate sample (`tcp_rate_skb_delivered` fills them).
#[derive(Clone, Debug, Default)]
struct RateAcc {
    prior_delivered: u64,
    prior_time: Option<Time>,
    is_app_limited: bool,
    last_end_seq: u64,
    /// Send phase: send time of the newest delivered segment minus its flight's first send.
    send_elapsed: Time,
    /// Send time of the newest never-retransmitted segment delivered (for the RTT).
    rtt_sent: Option<Time>,
    prior_in_flight: u64,
    prior_ca: Option<CaState>,
    cwnd_limited: bool,
    delivered_before: u64,
    lost_before: u64,
}

/// The connection's rate-sampling state.
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    /// `tcp_sock.first_tx_mstamp`: send time of the first segment of the current flight, or of
    /// the newest delivered segment once one is.
    first_tx: Time,
    acc: RateAcc,
}

impl DeliveryRate {
    /// `tcp_rate_skb_sent`: stamps `g` as it is (re)sent with `in_flight` bytes outstanding before
    /// it; a flight that starts from idle restarts the clocks.
    pub fn on_sent(&mut self, cs: &mut CcState, g: &mut Seg, in_flight: u64, now: Time) {
        if in_flight == 0 {
            self.first_tx = now;
            cs.delivered_time = now;
        }
        g.tx = TxRate { delivered: cs.delivered, delivered_time: Some(cs.delivered_time), first_tx: self.first_tx, app_limited: cs.app_limited != 0 };
    }

    /// Starts the accounting of one ACK with what held before it.
    pub fn begin_ack(&mut self, prior_in_flight: u64, prior_ca: CaState, cwnd_limited: bool, delivered_before: u64, lost_before: u64) {
        self.acc = RateAcc { prior_in_flight, prior_ca: Some(prior_ca), cwnd_limited, delivered_before, lost_before, ..RateAcc::default() };
    }

    /// `tcp_rate_skb_delivered`: segment `g` is newly delivered by this ACK; the newest-sent one
    /// delivered (send time, then sequence) gives the sample its starting point.
    pub fn delivered(&mut self, g: &Seg) {
        let acc = &mut self.acc;
        let Some(dt) = g.tx.delivered_time else { return };
        if !g.ever_rexmit {
            acc.rtt_sent = Some(acc.rtt_sent.map_or(g.sent, |t| t.max(g.sent)));
        }
        let sent_after = g.sent > self.first_tx || (g.sent == self.first_tx && g.end() > acc.last_end_seq);
        if acc.prior_delivered == 0 || sent_after {
            acc.prior_delivered = g.tx.delivered;
            acc.prior_time = Some(dt);
            acc.is_app_limited = g.tx.app_limited;
            acc.last_end_seq = g.end();
            self.first_tx = g.sent;
            acc.send_elapsed = g.sent - g.tx.first_tx;
        }
    }

    /// `tcp_rate_gen`: the ACK's delivery-rate sample. `lost_total` is the scoreboard's count of
    /// bytes ever marked lost, `ece` whether the ACK carries ECN-Echo.
    pub fn generate(&self, cs: &mut CcState, newly_acked: u64, lost_total: u64, min_rtt: Option<Time>, ece: bool, now: Time) -> RateSample {
        let a = &self.acc;
        let delivered_now = cs.delivered - a.delivered_before;
        // The app-limited stretch ends once everything sent in it is delivered.
        if cs.app_limited != 0 && cs.delivered > cs.app_limited {
            cs.app_limited = 0;
        }
        if delivered_now > 0 {
            cs.delivered_time = now;
        }
        let mut rs = RateSample {
            prior_delivered: a.prior_delivered,
            prior_time: a.prior_time.unwrap_or(Time::ZERO),
            delivered: None,
            interval: None,
            is_app_limited: a.is_app_limited,
            rtt: a.rtt_sent.map(|t| now - t),
            acked_sacked: delivered_now,
            newly_acked,
            losses: lost_total - a.lost_before,
            prior_in_flight: a.prior_in_flight,
            prior_ca: a.prior_ca,
            cwnd_limited: a.cwnd_limited,
            ece,
        };
        let Some(prior_time) = a.prior_time else { return rs };
        rs.delivered = Some(cs.delivered - a.prior_delivered);
        // The longer of the send and ACK phases, so that neither ACK compression nor a burst of
        // sends inflates the rate.
        let interval = a.send_elapsed.max(now - prior_time);
        // Shorter than the minimum RTT: a bogus sample (e.g. from a spurious retransmission).
        if min_rtt.is_some_and(|m| interval < m) {
            rs.delivered = None;
            return rs;
        }
        rs.interval = Some(interval);
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two segments of 1000 B sent back to back at t = 0 from idle, both ACKed at t = 100 ms:
    /// delivered 2000 B over max(send phase 0, ACK phase 100 ms) = 100 ms → 20 kB/s; RTT 100 ms
    /// from the newer one. A second flight sent at 100 ms and ACKed at 250 ms measures from the
    /// first flight's delivery (prior_delivered 2000 at 100 ms): 1000 B over 150 ms.
    #[test]
    fn sample_by_hand() {
        let mut r = DeliveryRate::default();
        let mut cs = CcState::new(1000, 10_000);
        let mut a = Seg::new(1, 1000, false, Time::ZERO);
        let mut b = Seg::new(1001, 1000, false, Time::ZERO);
        r.on_sent(&mut cs, &mut a, 0, Time::ZERO);
        r.on_sent(&mut cs, &mut b, 1000, Time::ZERO);
        let now = Time::from_ms(100);
        r.begin_ack(2000, CaState::Open, true, 0, 0);
        for g in [&a, &b] {
            cs.delivered += 1000;
            r.delivered(g);
        }
        let rs = r.generate(&mut cs, 2000, 0, None, false, now);
        assert_eq!((rs.delivered, rs.interval, rs.rtt), (Some(2000), Some(Time::from_ms(100)), Some(Time::from_ms(100))));
        assert_eq!(rs.rate(), Some(20_000.0));
        assert_eq!(cs.delivered_time, now);
        let mut c = Seg::new(2001, 1000, false, now);
        r.on_sent(&mut cs, &mut c, 0, now);
        assert_eq!(c.tx.delivered, 2000);
        r.begin_ack(1000, CaState::Open, true, 2000, 0);
        cs.delivered += 1000;
        r.delivered(&c);
        let rs = r.generate(&mut cs, 1000, 0, Some(Time::from_ms(100)), false, Time::from_ms(250));
        assert_eq!((rs.delivered, rs.interval), (Some(1000), Some(Time::from_ms(150))));
        // Below min RTT the sample is discarded (Linux's "interval < min_rtt" check).
        let rs = r.generate(&mut cs, 1000, 0, Some(Time::from_ms(200)), false, Time::from_ms(250));
        assert_eq!(rs.delivered, None);
    }

    /// A segment delivered by SACK earlier (delivered_time cleared) gives no sample; a
    /// retransmitted one gives no RTT (Karn).
    #[test]
    fn sacked_and_retransmitted_segments() {
        let mut r = DeliveryRate::default();
        let mut cs = CcState::new(1000, 10_000);
        let mut a = Seg::new(1, 1000, false, Time::ZERO);
        r.on_sent(&mut cs, &mut a, 0, Time::ZERO);
        a.tx.delivered_time = None;
        r.begin_ack(1000, CaState::Open, true, 0, 0);
        r.delivered(&a);
        let rs = r.generate(&mut cs, 1000, 0, None, false, Time::from_ms(10));
        assert_eq!((rs.delivered, rs.rtt), (None, None));
        let mut b = Seg::new(1001, 1000, false, Time::ZERO);
        r.on_sent(&mut cs, &mut b, 0, Time::ZERO);
        b.ever_rexmit = true;
        r.begin_ack(1000, CaState::Recovery, true, 0, 0);
        cs.delivered += 1000;
        r.delivered(&b);
        let rs = r.generate(&mut cs, 1000, 0, None, false, Time::from_ms(10));
        assert_eq!((rs.delivered, rs.rtt, rs.prior_ca), (Some(1000), None, Some(CaState::Recovery)));
    }
}
