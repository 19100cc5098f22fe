//! SCReAM, "Self-Clocked Rate Adaptation for Multimedia" (RFC 8298): a congestion window on the
//! bytes in flight, steered by the one-way queueing delay, and a media rate that follows what the
//! window lets through.
//!
//! - §4.1.2.1 qdelay = OWD − base OWD (the smallest seen; the clock offset cancels).
//! - §4.1.2.2 window update, per report with `bytes_newly_acked`:
//!   off_target = (QDELAY_TARGET − qdelay)/QDELAY_TARGET; in fast increase cwnd += bytes acked
//!   (slow start); otherwise cwnd += GAIN·off_target·bytes_newly_acked·MSS/cwnd — negative above
//!   the target. cwnd grows only while bytes in flight · MAX_BYTES_IN_FLIGHT_HEAD_ROOM exceed it
//!   (a sender that does not fill its window does not earn a larger one). On loss, at most once
//!   per RTT: cwnd = max(MIN_CWND, BETA_LOSS·cwnd); on ECN-CE: BETA_ECN.
//! - Fast increase ends at the first congestion (loss, CE, or qdelay above half the target) and
//!   resumes after `FAST_INCREASE_RESUME` without one (RFC 8298 §4.1.2.2 leaves the rule to the
//!   implementation; this is the reference implementation's behaviour in outline).
//! - §4.1.2.3 transmission: a packet leaves only while bytes in flight + its size ≤ cwnd.
//! - §4.1.2.4 media rate, every RATE_ADJUST_INTERVAL: after loss BETA_R·target; when the RTP queue
//!   holds more than RTP_QDELAY_TH of media the target falls in proportion; otherwise it ramps at
//!   RAMP_UP_SPEED scaled by (1 − qdelay/target), and never above 1.2 × the rate the window let out
//!   (the self-clocking: the encoder follows the window).
//! - An RTP queue older than `RTP_QUEUE_DISCARD` is discarded and a key frame follows (when the
//!   window cannot carry even the minimum rate, as beside a loss-based flow on a deep buffer).
use std::collections::VecDeque;

use super::{Controller, FeedbackInfo, Limits};
use crate::time::Time;

// RFC 8298 §4.1.1
pub const QDELAY_TARGET: f64 = 0.1;
pub const MIN_CWND: f64 = 3000.0;
pub const MSS: f64 = 1000.0;
pub const GAIN: f64 = 1.0;
pub const BETA_LOSS: f64 = 0.8;
pub const BETA_ECN: f64 = 0.9;
pub const BETA_R: f64 = 0.9;
pub const MAX_BYTES_IN_FLIGHT_HEAD_ROOM: f64 = 1.1;
pub const RATE_ADJUST_INTERVAL: f64 = 0.2;
pub const RAMP_UP_SPEED: f64 = 200_000.0;
pub const RTP_QDELAY_TH: f64 = 0.1;
pub const FAST_INCREASE_RESUME: f64 = 5.0;
/// Media older than this in the RTP queue is thrown away (the reference implementation clears an
/// old RTP queue rather than send stale video; the 1 s threshold is ours).
pub const RTP_QUEUE_DISCARD: Time = Time::from_secs(1);

/// §4.1.2.2 window step without fast increase: the new cwnd after `acked` bytes at `qdelay` (s),
/// with `in_flight` bytes outstanding.
pub fn cwnd_step(cwnd: f64, qdelay: f64, acked: f64, in_flight: f64) -> f64 {
    let off_target = (QDELAY_TARGET - qdelay) / QDELAY_TARGET;
    if off_target > 0.0 && in_flight * MAX_BYTES_IN_FLIGHT_HEAD_ROOM < cwnd {
        return cwnd;
    }
    (cwnd + GAIN * off_target * acked * MSS / cwnd).max(MIN_CWND)
}

pub struct Scream {
    limits: Limits,
    pub cwnd: f64,
    fast_increase: bool,
    base_owd_ns: Option<i128>,
    qdelay: f64,
    srtt: f64,
    last_loss_reaction: f64,
    last_congestion: f64,
    loss_since_adjust: bool,
    last_adjust: f64,
    target: f64,
    /// (send s, IP bytes) of packets sent in the last second, for the transmitted rate.
    sent: VecDeque<(f64, u32)>,
    queue_delay: f64,
    max_in_flight: f64,
}

pub fn build(l: &Limits) -> Box<dyn Controller> { Box::new(Scream::new(*l)) }

impl Scream {
    pub fn new(limits: Limits) -> Scream {
        Scream {
            limits,
            cwnd: MIN_CWND.max(limits.start_bps / 8.0 * 0.1),
            fast_increase: true,
            base_owd_ns: None,
            qdelay: 0.0,
            srtt: 0.1,
            last_loss_reaction: f64::NEG_INFINITY,
            last_congestion: 0.0,
            loss_since_adjust: false,
            last_adjust: 0.0,
            target: limits.start_bps,
            sent: VecDeque::new(),
            queue_delay: 0.0,
            max_in_flight: 0.0,
        }
    }

    fn rate_transmitted(&self, now: f64) -> f64 {
        let span = 1.0f64.min(now.max(RATE_ADJUST_INTERVAL));
        self.sent.iter().filter(|&&(t, _)| t >= now - span).map(|&(_, s)| s as f64 * 8.0).sum::<f64>() / span
    }

    fn adjust_rate(&mut self, now: f64) {
        let (lo, hi) = (self.limits.min_bps, self.limits.max_bps);
        let t = if self.loss_since_adjust {
            self.target * BETA_R
        } else if self.queue_delay > RTP_QDELAY_TH {
            // the window holds media back: cut in proportion to the excess
            self.target * (1.0 - 0.1 * (self.queue_delay / RTP_QDELAY_TH).min(3.0))
        } else {
            let scale = (1.0 - self.qdelay / QDELAY_TARGET).clamp(0.0, 1.0);
            let up = if self.fast_increase { 2.0 } else { 1.0 } * RAMP_UP_SPEED * RATE_ADJUST_INTERVAL * scale;
            (self.target + up).min(1.2 * self.rate_transmitted(now)).max(self.target.min(self.rate_transmitted(now)))
        };
        self.target = t.clamp(lo, hi);
        self.loss_since_adjust = false;
        self.last_adjust = now;
    }
}

impl Controller for Scream {
    fn on_sent(&mut self, _seq: u64, size: u32, now: Time) {
        let t = now.secs_f64();
        self.sent.push_back((t, size));
        while self.sent.front().is_some_and(|&(s, _)| s < t - 1.0) {
            self.sent.pop_front();
        }
    }

    fn on_feedback(&mut self, fb: &FeedbackInfo, now: Time) {
        let t = now.secs_f64();
        if let Some(r) = fb.rtt {
            self.srtt = 0.875 * self.srtt + 0.125 * r.secs_f64();
        }
        self.queue_delay = fb.queue_delay.secs_f64();
        let (mut acked, mut lost, mut ce) = (0.0, false, false);
        for p in fb.packets {
            match p.recv {
                None => lost = true,
                Some(rt) => {
                    acked += p.size as f64;
                    ce |= p.ce;
                    let owd = rt.ns() as i128 - p.send.ns() as i128;
                    let base = self.base_owd_ns.map_or(owd, |b| b.min(owd));
                    self.base_owd_ns = Some(base);
                    self.qdelay = (owd - base) as f64 / 1e9;
                }
            }
        }
        let in_flight = fb.in_flight as f64 + acked;
        self.max_in_flight = self.max_in_flight.max(in_flight);
        if (lost || ce) && t - self.last_loss_reaction > self.srtt {
            // §4.1.2.2: one reaction per RTT
            self.cwnd = (self.cwnd * if lost { BETA_LOSS } else { BETA_ECN }).max(MIN_CWND);
            self.last_loss_reaction = t;
            self.loss_since_adjust = true;
        }
        if lost || ce || self.qdelay > QDELAY_TARGET / 2.0 {
            self.fast_increase = false;
            self.last_congestion = t;
        } else if t - self.last_congestion > FAST_INCREASE_RESUME {
            self.fast_increase = true;
        }
        if !(lost || ce) {
            if self.fast_increase {
                if in_flight * MAX_BYTES_IN_FLIGHT_HEAD_ROOM >= self.cwnd {
                    self.cwnd += acked;
                }
            } else {
                self.cwnd = cwnd_step(self.cwnd, self.qdelay, acked, in_flight);
            }
        }
        if t - self.last_adjust >= RATE_ADJUST_INTERVAL {
            self.adjust_rate(t);
        }
    }
    fn target_rate(&self) -> f64 { self.target }
    fn window(&self) -> Option<u64> { Some(self.cwnd as u64) }
    fn queue_discard(&self) -> Option<Time> { Some(RTP_QUEUE_DISCARD) }
    fn state(&self) -> f64 { self.cwnd }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_update_by_hand() {
        // cwnd 10 000 B, 1000 B acked, window full (in flight 10 000 · 1.1 > cwnd):
        // qdelay 50 ms: off_target 0.5 → + 1·0.5·1000·1000/10 000 = +50
        assert_eq!(cwnd_step(10_000.0, 0.05, 1000.0, 10_000.0), 10_050.0);
        // qdelay 150 ms: off_target −0.5 → −50
        assert_eq!(cwnd_step(10_000.0, 0.15, 1000.0, 10_000.0), 9_950.0);
        // a sender using under 1/1.1 of its window earns nothing below the target…
        assert_eq!(cwnd_step(10_000.0, 0.05, 1000.0, 9_000.0), 10_000.0);
        // …but still gives back above it
        assert_eq!(cwnd_step(10_000.0, 0.15, 1000.0, 5_000.0), 9_950.0);
        // never under MIN_CWND
        assert_eq!(cwnd_step(3000.0, 1.1, 3000.0, 3000.0), MIN_CWND);
    }

    #[test]
    fn loss_cuts_once_per_rtt() {
        let l = Limits { min_bps: 150e3, max_bps: 1.5e6, start_bps: 150e3 };
        let mut s = Scream::new(l);
        s.cwnd = 10_000.0;
        let lost = [super::super::PacketResult { seq: 0, send: Time::ZERO, size: 1000, recv: None, ce: false }];
        let fb = FeedbackInfo { packets: &lost, rtt: None, in_flight: 10_000, queue_bytes: 0, queue_delay: Time::ZERO };
        s.on_feedback(&fb, Time::from_ms(1000));
        assert_eq!(s.cwnd, 8000.0);
        // 50 ms later (srtt 100 ms): no second cut
        s.on_feedback(&fb, Time::from_ms(1050));
        assert_eq!(s.cwnd, 8000.0);
        s.on_feedback(&fb, Time::from_ms(1200));
        assert_eq!(s.cwnd, 6400.0);
    }
}
