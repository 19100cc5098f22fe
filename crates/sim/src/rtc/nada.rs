//! NADA, "Network-Assisted Dynamic Adaptation" (RFC 8698), with the receiver-side computations of
//! §4.2 made at the sender from per-packet feedback (RFC 8698 §6.3 allows this split with
//! RFC 8888-style reports).
//!
//! - §4.2 delay: d_queue = d_fwd − d_base (d_base the smallest one-way delay seen: the clock offset
//!   cancels); d_tilde the minimum of the last `MINFILT` samples (the 15-tap minimum filter).
//! - §4.2 aggregate congestion signal (eq. 1): x_curr = d_tilde + DMARK·(p_mark/PMRREF)² +
//!   DLOSS·(p_loss/PLRREF)², with p_loss, p_mark exponentially smoothed (ALPHA) per report; under
//!   loss the delay term is warped (eq. 2): d_tilde > QTH becomes QTH·exp(−LAMBDA·(d_tilde−QTH)/QTH),
//!   so loss, not a standing queue, drives the rate when a buffer is full.
//! - §4.2 rmode: accelerated ramp-up (0) while no loss or mark and d_tilde < QEPS over LOGWIN.
//! - §4.3 accelerated ramp-up (eq. 3–4): γ = min(GAMMA_MAX, QBOUND/(rtt + DELTA + DFILT)),
//!   r_ref = max(r_ref, (1 + γ)·r_recv).
//! - §4.3 gradual update (eq. 5–7): x_offset = x_curr − PRIO·XREF·RMAX/r_ref (PRIO the flow's
//!   priority weight, a scenario's `priority`, default 1.0 as in Figure 3), x_diff = x_curr −
//!   x_prev, r_ref −= KAPPA·(δ/TAU)·(x_offset/TAU)·r_ref + KAPPA·ETA·(x_diff/TAU)·r_ref.
//! - §4.4 (eq. 8–9): r_vin = max(RMIN, r_ref − BETA_V·8·buffer·FPS) for the encoder, r_send =
//!   min(RMAX, r_ref + BETA_S·8·buffer·FPS) for the pacer, so a backlog in the sender drains.
//! - Ours: in the gradual mode r_ref rises at most to max(r_ref, (1 + γ)·r_recv), the accelerated
//!   mode's bound (see `on_feedback`).
use std::collections::VecDeque;

use super::{Controller, FeedbackInfo, Limits};
use crate::time::Time;

// RFC 8698 §4.1, Figure 3 (times in ms)
/// The default priority weight (Figure 3); a flow's own comes from `set_priority`.
pub const PRIO: f64 = 1.0;
pub const XREF: f64 = 10.0;
pub const KAPPA: f64 = 0.5;
pub const ETA: f64 = 2.0;
pub const TAU: f64 = 500.0;
pub const DELTA: f64 = 100.0;
pub const LOGWIN: f64 = 500.0;
pub const QEPS: f64 = 10.0;
pub const DFILT: f64 = 120.0;
pub const GAMMA_MAX: f64 = 0.5;
pub const QBOUND: f64 = 50.0;
pub const QTH: f64 = 50.0;
pub const LAMBDA: f64 = 0.5;
pub const PLRREF: f64 = 0.01;
pub const PMRREF: f64 = 0.01;
pub const DLOSS: f64 = 10.0;
pub const DMARK: f64 = 2.0;
pub const FPS: f64 = 30.0;
pub const BETA_V: f64 = 0.1;
pub const BETA_S: f64 = 0.1;
pub const ALPHA: f64 = 0.1;
pub const MINFILT: usize = 15;

/// Eq. 1 with eq. 2's warping when `lossy`: the aggregate congestion signal in ms.
pub fn x_curr(d_tilde: f64, p_mark: f64, p_loss: f64, lossy: bool) -> f64 {
    let d = if lossy && d_tilde > QTH { QTH * (-LAMBDA * (d_tilde - QTH) / QTH).exp() } else { d_tilde };
    d + DMARK * (p_mark / PMRREF).powi(2) + DLOSS * (p_loss / PLRREF).powi(2)
}

/// Eq. 5–7: the gradual update of r_ref over `delta_ms`, for priority weight `prio`. At
/// equilibrium x_curr = prio·XREF·RMAX/r_ref, so flows that see one queue (one x_curr) settle at
/// rates in the ratio of their weights.
pub fn gradual(r_ref: f64, x_curr: f64, x_prev: f64, delta_ms: f64, rmax: f64, prio: f64) -> f64 {
    let x_offset = x_curr - prio * XREF * rmax / r_ref;
    let x_diff = x_curr - x_prev;
    r_ref - KAPPA * (delta_ms / TAU) * (x_offset / TAU) * r_ref - KAPPA * ETA * (x_diff / TAU) * r_ref
}

/// Eq. 3–4: the accelerated ramp-up from the receiving rate.
pub fn ramp_up(r_ref: f64, r_recv: f64, rtt_ms: f64) -> f64 {
    let gamma = GAMMA_MAX.min(QBOUND / (rtt_ms + DELTA + DFILT));
    r_ref.max((1.0 + gamma) * r_recv)
}

pub struct Nada {
    limits: Limits,
    prio: f64,
    r_ref: f64,
    d_base_ns: Option<i128>,
    recent: VecDeque<f64>,
    x_prev: f64,
    p_loss: f64,
    p_mark: f64,
    /// (arrival ms, IP bytes) within LOGWIN, for r_recv.
    recv: VecDeque<(f64, u32)>,
    /// Last loss or mark and last d_tilde ≥ QEPS (ms), for rmode.
    last_congested_ms: f64,
    last_lossy_ms: f64,
    last_update_ms: Option<f64>,
    rtt_ms: f64,
    buffer_bytes: u64,
}

pub fn build(l: &Limits) -> Box<dyn Controller> { Box::new(Nada::new(*l)) }

impl Nada {
    pub fn new(limits: Limits) -> Nada {
        Nada {
            limits,
            prio: PRIO,
            r_ref: limits.start_bps,
            d_base_ns: None,
            recent: VecDeque::new(),
            x_prev: 0.0,
            p_loss: 0.0,
            p_mark: 0.0,
            recv: VecDeque::new(),
            last_congested_ms: f64::NEG_INFINITY,
            last_lossy_ms: f64::NEG_INFINITY,
            last_update_ms: None,
            rtt_ms: 100.0,
            buffer_bytes: 0,
        }
    }
}

impl Controller for Nada {
    fn on_feedback(&mut self, fb: &FeedbackInfo, now: Time) {
        let now_ms = now.ns() as f64 / 1e6;
        if let Some(r) = fb.rtt {
            self.rtt_ms = r.secs_f64() * 1e3;
        }
        self.buffer_bytes = fb.queue_bytes;
        let (mut n, mut lost, mut marked) = (0u32, 0u32, 0u32);
        for p in fb.packets {
            n += 1;
            let Some(rt) = p.recv else {
                lost += 1;
                continue;
            };
            if p.ce {
                marked += 1;
            }
            let owd = rt.ns() as i128 - p.send.ns() as i128;
            let base = *self.d_base_ns.get_or_insert(owd);
            self.d_base_ns = Some(base.min(owd));
            let d_queue = (owd - base.min(owd)) as f64 / 1e6;
            self.recent.push_back(d_queue);
            if self.recent.len() > MINFILT {
                self.recent.pop_front();
            }
            self.recv.push_back((rt.ns() as f64 / 1e6, p.size));
        }
        if n == 0 {
            return;
        }
        if let Some(&(last, _)) = self.recv.back() {
            while self.recv.front().is_some_and(|&(t, _)| t < last - LOGWIN) {
                self.recv.pop_front();
            }
        }
        self.p_loss = ALPHA * (lost as f64 / n as f64) + (1.0 - ALPHA) * self.p_loss;
        self.p_mark = ALPHA * (marked as f64 / n as f64) + (1.0 - ALPHA) * self.p_mark;
        let d_tilde = self.recent.iter().copied().fold(f64::INFINITY, f64::min);
        let d_tilde = if d_tilde.is_finite() { d_tilde } else { 0.0 };
        if lost > 0 {
            self.last_lossy_ms = now_ms;
        }
        if lost > 0 || marked > 0 || d_tilde >= QEPS {
            self.last_congested_ms = now_ms;
        }
        let lossy = now_ms - self.last_lossy_ms < LOGWIN;
        let x = x_curr(d_tilde, self.p_mark, self.p_loss, lossy);
        let delta = self.last_update_ms.map(|t| (now_ms - t).clamp(0.0, 2.0 * DELTA)).unwrap_or(DELTA);
        self.last_update_ms = Some(now_ms);
        let rmode0 = now_ms - self.last_congested_ms >= LOGWIN;
        let r_recv = self.recv.iter().map(|&(_, s)| s as f64 * 8.0).sum::<f64>() / (LOGWIN / 1000.0);
        self.r_ref = if rmode0 {
            ramp_up(self.r_ref, r_recv, self.rtt_ms)
        } else {
            // Ours, not the RFC's: the gradual mode never rises faster than the accelerated mode
            // would (eq. 3–4's bound). Without it the derivative term turns the end of a loss
            // episode (x_curr falling by DLOSS·(p_loss/PLRREF)², hundreds of ms) into a jump to
            // RMAX, and a deep buffer into an oscillation between RMIN and RMAX.
            let g = gradual(self.r_ref, x, self.x_prev, delta, self.limits.max_bps, self.prio);
            g.min(self.r_ref.max(ramp_up(0.0, r_recv, self.rtt_ms)))
        };
        self.r_ref = self.r_ref.clamp(self.limits.min_bps, self.limits.max_bps);
        self.x_prev = x;
    }
    fn target_rate(&self) -> f64 { (self.r_ref - BETA_V * 8.0 * self.buffer_bytes as f64 * FPS).max(self.limits.min_bps) }
    fn pacing_rate(&self) -> f64 {
        // eq. 9 gives the sending rate; the pacer's burst allowance is libwebrtc's factor on it
        (self.r_ref + BETA_S * 8.0 * self.buffer_bytes as f64 * FPS).min(self.limits.max_bps) * super::PACING_FACTOR
    }
    fn set_priority(&mut self, weight: f64) -> bool {
        self.prio = weight;
        true
    }
    fn state(&self) -> f64 { self.r_ref }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_rate_by_hand() {
        // r_ref = 1 Mbit/s, RMAX = 1.5 Mbit/s: x_offset = 20 − 1·10·1.5 = 5 ms; x_diff = 0;
        // r_ref −= 0.5·(100/500)·(5/500)·1e6 = 1000 → 999 000
        assert!((gradual(1e6, 20.0, 20.0, 100.0, 1.5e6, PRIO) - 999_000.0).abs() < 1e-6);
        // x rising by 10 ms: also −0.5·2·(10/500)·1e6 = −20 000 → 979 000
        assert!((gradual(1e6, 20.0, 10.0, 100.0, 1.5e6, PRIO) - 979_000.0).abs() < 1e-6);
        // below the reference (x = 10 < 15): r_ref grows: + 0.5·0.2·(5/500)·1e6 = +1000
        assert!((gradual(1e6, 10.0, 10.0, 100.0, 1.5e6, PRIO) - 1_001_000.0).abs() < 1e-6);
        // equilibrium: x_curr = XREF·RMAX/r_ref, i.e. 15 ms at 1 Mbit/s
        assert!((gradual(1e6, 15.0, 15.0, 100.0, 1.5e6, PRIO) - 1e6).abs() < 1e-6);
    }

    #[test]
    fn priority_weight_by_hand() {
        // PRIO 2 at 1 Mbit/s, RMAX 1.5 Mbit/s: the reference is 2·10·1.5 = 30 ms, so x = 30 ms holds
        assert!((gradual(1e6, 30.0, 30.0, 100.0, 1.5e6, 2.0) - 1e6).abs() < 1e-6);
        // x = 20 ms: x_offset = 20 − 30 = −10 → r_ref += 0.5·(100/500)·(10/500)·1e6 = 2000
        assert!((gradual(1e6, 20.0, 20.0, 100.0, 1.5e6, 2.0) - 1_002_000.0).abs() < 1e-6);
        // one queue (x = 15 ms) holds PRIO 1 at 1 Mbit/s and PRIO 2 at 2 Mbit/s: rates 1 : 2
        assert!((gradual(1e6, 15.0, 15.0, 100.0, 1.5e6, 1.0) - 1e6).abs() < 1e-6);
        assert!((gradual(2e6, 15.0, 15.0, 100.0, 1.5e6, 2.0) - 2e6).abs() < 1e-6);
        let mut n = Nada::new(Limits { min_bps: 150e3, max_bps: 1.5e6, start_bps: 150e3 });
        assert!(n.set_priority(2.0) && n.prio == 2.0);
    }

    #[test]
    fn congestion_signal_by_hand() {
        // 20 ms queueing, 1 % marks, 0.5 % loss: 20 + 2·1² + 10·0.5² = 24.5
        assert!((x_curr(20.0, 0.01, 0.005, false) - 24.5).abs() < 1e-9);
        // warping under loss: 150 ms → 50·exp(−0.5·100/50) = 50·e^−1 = 18.394
        assert!((x_curr(150.0, 0.0, 0.0, true) - 50.0 * (-1.0f64).exp()).abs() < 1e-9);
        assert_eq!(x_curr(150.0, 0.0, 0.0, false), 150.0);
    }

    #[test]
    fn ramp_up_by_hand() {
        // rtt 30 ms: γ = min(0.5, 50/(30+100+120)) = 0.2 → 1.2 × 800 kbit/s = 960 kbit/s
        assert!((ramp_up(500e3, 800e3, 30.0) - 960e3).abs() < 1e-6);
        // never down
        assert_eq!(ramp_up(2e6, 800e3, 30.0), 2e6);
    }
}
