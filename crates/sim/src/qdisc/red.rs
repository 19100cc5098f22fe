//! Over 600 lines because its tests live here: the model is the first ~450 lines; the rest are
//! ns-2 reference vectors and counter checks that read its private state.
//!
//! RED (Floyd & Jacobson 1993) with the parameter meanings and the per-packet semantics of ns-2.35's
//! `queue/red.cc` (`REDQueue::enque`/`deque`), so that ns-2 scripts of the Chodorek study can be
//! reproduced: `thresh`, `maxthresh`, `q_weight`, `linterm` (max_p = 1/linterm), `gentle`, `wait`,
//! `setbit` (here `ecn`), `use_mark_p`/`mark_p`, `mean_pktsize`, `queue_in_bytes`, `bytes`.
//!
//! Contract, per arriving packet (as ns-2 does it):
//! 1. If the queue was idle (the last `dequeue` found it empty), m = ⌊ptc · idle time⌋ with
//!    ptc = rate / (8 · mean_pktsize), and the average decays by (1 − w)^m first.
//! 2. avg ← avg · (1 − w) + w · q, q the queue length *before* this packet (packets or bytes).
//! 3. count += 1. If avg ≥ min_th and q > 1: forced drop when avg ≥ max_th (2·max_th with gentle)
//!    unless `use_mark_p`; else on the first packet after crossing min_th set count = 1 and do
//!    nothing; else drop or mark early with the uniformised probability. Otherwise old = 0.
//! 4. If q ≥ limit the packet is dropped (forced) whatever happened before — even a marked one.
//!
//! Only ns-2's default victim choice (`drop_tail_`: the arriving packet) is modelled; adaptive,
//! cautious and Feng RED are not.
use std::collections::VecDeque;

use super::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::config::{ConfigError, Params, Size};
use crate::packet::{Ecn, PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

/// ns-2's `targetdelay_` default (5 ms), used only when `thresh = 0` asks for automatic thresholds.
const NS2_TARGET_DELAY_S: f64 = 0.005;
/// ns-2 `initialize_params`: automatic thresholds never go below 5 packets.
const NS2_AUTO_MIN_THRESH: f64 = 5.0;

/// Validated parameters (ns-2 `edp_`). Thresholds and limit are in the queue's unit (packets, or
/// bytes when `queue_in_bytes`).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub th_min: f64,
    pub th_max: f64,
    /// EWMA weight w of the average queue, in (0, 1].
    pub q_w: f64,
    /// 1 / linterm.
    pub max_p: f64,
    pub gentle: bool,
    pub wait: bool,
    /// Mark ECN-capable packets instead of dropping them early (ns-2 `setbit_`).
    pub ecn: bool,
    /// ns-2.35 `use_mark_p_`: no forced drops from the average; mark only while p ≤ mark_p.
    pub use_mark_p: bool,
    pub mark_p: f64,
    pub mean_pktsize: u32,
    /// Average-sized packets per second the link can send (ns-2 `ptc`).
    pub ptc: f64,
    /// Queue length (and thresholds, limit) measured in bytes (ns-2 `queue_in_bytes_`).
    pub queue_in_bytes: bool,
    /// Byte-mode drop probability: scaled by size / mean_pktsize (ns-2 `bytes_`).
    pub bytes: bool,
    /// Hard limit in the queue's unit.
    pub limit: u64,
    /// Precomputed slopes (ns-2 `v_a`, `v_b`, `v_c`, `v_d`).
    v_a: f64,
    v_b: f64,
    v_c: f64,
    v_d: f64,
}

/// State (ns-2 `edv_` plus `idle_`/`idletime_`).
#[derive(Clone, Debug, PartialEq)]
pub struct RedVars {
    /// Average queue length, in the queue's unit.
    pub ave: f64,
    /// Packets since the last early drop/mark (ns-2 `count`).
    pub count: u64,
    pub count_bytes: u64,
    /// The average was at or above min_th (with a non-trivial queue) at the previous arrival.
    pub old: bool,
    pub idle: bool,
    pub idle_since: Time,
    /// Last computed p_b (before uniformisation) and p_a (after).
    pub prob1: f64,
    pub prob: f64,
}

impl Default for RedVars {
    // ns-2 `reset()` at time 0: the queue starts idle.
    fn default() -> Self { RedVars { ave: 0.0, count: 0, count_bytes: 0, old: false, idle: true, idle_since: Time::ZERO, prob1: 0.0, prob: 0.0 } }
}

/// What the algorithm decided for one arrival.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Enqueue,
    /// Enqueue with CE set.
    Mark,
    Drop(DropReason),
}

/// Inputs for [`RedParams::new`], in ns-2's units (thresholds in packets).
#[derive(Clone, Debug)]
pub struct RedConfig {
    pub limit: Size,
    pub thresh: f64,
    pub maxthresh: f64,
    pub q_weight: f64,
    pub linterm: f64,
    pub gentle: bool,
    pub wait: bool,
    pub ecn: bool,
    pub use_mark_p: bool,
    pub mark_p: f64,
    pub mean_pktsize: u32,
    pub queue_in_bytes: bool,
    pub bytes: bool,
}

impl Default for RedConfig {
    /// The Chodorek study's RED (thresh 5, maxthresh 15, q_weight 0.002, linterm 10, gentle off,
    /// queue 50 packets) and ns-2.35's defaults for the rest (wait, use_mark_p, mark_p 0.1,
    /// mean_pktsize 500); queue in packets.
    fn default() -> Self {
        RedConfig {
            limit: Size::Packets(50),
            thresh: 5.0,
            maxthresh: 15.0,
            q_weight: 0.002,
            linterm: 10.0,
            gentle: false,
            wait: true,
            ecn: false,
            use_mark_p: true,
            mark_p: 0.1,
            mean_pktsize: 500,
            queue_in_bytes: false,
            bytes: false,
        }
    }
}

/// A parameter error: (key, message).
pub type ParamError = (&'static str, String);

impl RedParams {
    /// Validates `c` for a link of `rate_bps`, resolving ns-2's automatic forms (thresh = 0,
    /// maxthresh = 0, q_weight ∈ {0, −1, −2}) the way `initialize_params` does. The `!(x >= …)`
    /// forms reject NaN as well.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn new(c: &RedConfig, rate_bps: f64) -> Result<RedParams, ParamError> {
        if c.mean_pktsize == 0 {
            return Err(("mean_pktsize", "must be > 0".into()));
        }
        if !(rate_bps > 0.0) {
            return Err(("kind", "RED needs a link with a rate > 0 (for ptc = rate / (8·mean_pktsize))".into()));
        }
        let ptc = rate_bps / (8.0 * c.mean_pktsize as f64);
        let w = c.q_weight;
        let q_w = if w > 0.0 && w <= 1.0 {
            w
        } else if w == 0.0 {
            // ns-2: 1 − exp(−1/C), C = ptc.
            1.0 - (-1.0 / ptc).exp()
        } else if w == -1.0 {
            // ns-2: RTT = 3·(delay + 1/ptc), at least 100 ms; the link delay is not known here and
            // taken as 0, which only matters for delays above ~33 ms.
            let rtt = (3.0 * (1.0 / ptc)).max(0.1);
            1.0 - (-1.0 / (10.0 * rtt * ptc)).exp()
        } else if w == -2.0 {
            1.0 - (-10.0 / ptc).exp()
        } else {
            return Err(("q_weight", format!("must be in (0, 1], or 0, -1, -2 for ns-2's automatic weights, got {w}")));
        };
        if !(c.thresh >= 0.0) || !c.thresh.is_finite() {
            return Err(("thresh", format!("must be >= 0 packets (0 = automatic), got {}", c.thresh)));
        }
        if !(c.maxthresh >= 0.0) || !c.maxthresh.is_finite() {
            return Err(("maxthresh", format!("must be >= 0 packets (0 = 3·thresh), got {}", c.maxthresh)));
        }
        let mut th_min_pkts = c.thresh;
        if th_min_pkts == 0.0 {
            th_min_pkts = NS2_AUTO_MIN_THRESH.max(NS2_TARGET_DELAY_S * ptc / 2.0);
        }
        let th_max_pkts = if c.maxthresh == 0.0 { 3.0 * th_min_pkts } else { c.maxthresh };
        if !(th_max_pkts > th_min_pkts) {
            return Err(("maxthresh", format!("must be > thresh ({th_min_pkts}), got {th_max_pkts}")));
        }
        if !(c.linterm >= 1.0) || !c.linterm.is_finite() {
            return Err(("linterm", format!("must be >= 1 (max_p = 1/linterm), got {}", c.linterm)));
        }
        if !(c.mark_p > 0.0 && c.mark_p <= 1.0) {
            return Err(("mark_p", format!("must be in (0, 1], got {}", c.mark_p)));
        }
        let unit = if c.queue_in_bytes { c.mean_pktsize as f64 } else { 1.0 };
        let limit = match (c.limit, c.queue_in_bytes) {
            (Size::Packets(n), false) => n,
            // ns-2: qlim = limit_ · mean_pktsize in byte mode.
            (Size::Packets(n), true) => n.saturating_mul(c.mean_pktsize as u64),
            (Size::Bytes(b), true) => b,
            (Size::Bytes(_), false) => return Err(("limit", "RED counts its queue in packets: give the limit in pkt, or set queue_in_bytes = true".into())),
        };
        if limit == 0 {
            return Err(("limit", "must be > 0".into()));
        }
        let th_min = th_min_pkts * unit;
        let th_max = th_max_pkts * unit;
        let max_p = 1.0 / c.linterm;
        let diff = th_max - th_min;
        Ok(RedParams {
            th_min,
            th_max,
            q_w,
            max_p,
            gentle: c.gentle,
            wait: c.wait,
            ecn: c.ecn,
            use_mark_p: c.use_mark_p,
            mark_p: c.mark_p,
            mean_pktsize: c.mean_pktsize,
            ptc,
            queue_in_bytes: c.queue_in_bytes,
            bytes: c.bytes,
            limit,
            v_a: 1.0 / diff,
            v_b: -th_min / diff,
            v_c: (1.0 - max_p) / th_max,
            v_d: 2.0 * max_p - 1.0,
        })
    }

    /// ns-2 `estimator`: m extra decays for the idle period, then one EWMA step with `q`. The
    /// decays are repeated multiplications as in ns-2 (not `powi`) so the result is bit-identical.
    pub fn estimate(&self, ave: f64, q: f64, m: u64) -> f64 {
        let k = 1.0 - self.q_w;
        let mut a = ave;
        let mut i = 0;
        // Once a decay no longer changes the average (0, or the smallest subnormal, which rounds
        // to itself) the rest cannot either: stop early, same result, bounded cost for long idles.
        while i < m {
            let next = a * k;
            if next == a {
                break;
            }
            a = next;
            i += 1;
        }
        a *= k;
        a + self.q_w * q
    }

    /// ns-2 `calculate_p_new`: p_b from the average.
    pub fn p_b(&self, ave: f64) -> f64 {
        let p = if self.gentle && ave >= self.th_max {
            // max_p .. 1 as avg goes th_max .. 2·th_max.
            self.v_c * ave + self.v_d
        } else if !self.gentle && ave >= self.th_max {
            1.0
        } else {
            (self.v_a * ave + self.v_b) * self.max_p
        };
        p.min(1.0)
    }

    /// ns-2 `modify_p`: uniform instead of geometric inter-drop spacing. With `wait` RED waits
    /// 1/p_b packets, then drops within the next 1/p_b; without, it drops within the first 1/p_b.
    pub fn p_a(&self, p_b: f64, count: u64, count_bytes: u64, size: u32) -> f64 {
        let count1 = if self.bytes {
            // Integer division as in ns-2 (both operands are ints there).
            (count_bytes / self.mean_pktsize as u64) as f64
        } else {
            count as f64
        };
        let mut p = p_b;
        if self.wait {
            if count1 * p < 1.0 {
                p = 0.0;
            } else if count1 * p < 2.0 {
                p /= 2.0 - count1 * p;
            } else {
                p = 1.0;
            }
        } else if count1 * p < 1.0 {
            p /= 1.0 - count1 * p;
        } else {
            p = 1.0;
        }
        if self.bytes && p < 1.0 {
            p = p * size as f64 / self.mean_pktsize as f64;
        }
        p.min(1.0)
    }

    /// The whole per-arrival algorithm (ns-2 `REDQueue::enque`), pure apart from `vars` and the
    /// random draw. `q` is the queue length before the packet, in the queue's unit.
    pub fn on_arrival(&self, v: &mut RedVars, now: Time, q: u64, size: u32, ect: bool, rng: &mut Rng) -> Action {
        let mut m = 0u64;
        if v.idle {
            v.idle = false;
            // ns-2: m = int(ptc · idle time).
            let idle_s = now.saturating_sub(v.idle_since).secs_f64();
            let x = self.ptc * idle_s;
            m = if x >= u64::MAX as f64 { u64::MAX } else { x as u64 };
        }
        v.ave = self.estimate(v.ave, q as f64, m);
        v.count += 1;
        v.count_bytes += size as u64;

        let ave = v.ave;
        let mut action = Action::Enqueue;
        if ave >= self.th_min && q > 1 {
            let forced_level = if self.gentle { 2.0 * self.th_max } else { self.th_max };
            if !self.use_mark_p && ave >= forced_level {
                action = Action::Drop(DropReason::Forced);
            } else if !v.old {
                // Just crossed min_th (or the queue refilled above it): start counting afresh.
                v.count = 1;
                v.count_bytes = size as u64;
                v.old = true;
            } else {
                v.prob1 = self.p_b(ave);
                v.prob = self.p_a(v.prob1, v.count, v.count_bytes, size);
                let u = rng.uniform();
                // ns-2 tests u <= p; p = 0 must never drop (u can be exactly 0).
                if v.prob > 0.0 && u <= v.prob {
                    v.count = 0;
                    v.count_bytes = 0;
                    action = if self.ecn && ect && (!self.use_mark_p || v.prob1 <= self.mark_p) {
                        Action::Mark
                    } else {
                        Action::Drop(DropReason::Early)
                    };
                }
            }
        } else {
            v.prob = 0.0;
            v.old = false;
        }
        if q >= self.limit {
            action = Action::Drop(DropReason::Overlimit);
        }
        if let Action::Drop(DropReason::Forced | DropReason::Overlimit) = action {
            // ns-2 (not ns1_compat_): a forced drop restarts the count.
            v.count = 0;
            v.count_bytes = 0;
        }
        action
    }
}

pub struct Red {
    params: RedParams,
    vars: RedVars,
    stats: QueueStats,
    rng: Rng,
    q: VecDeque<(PktId, u32)>,
    bytes: u64,
}

impl Red {
    pub fn new(params: RedParams, rng: Rng) -> Self {
        Red { params, vars: RedVars::default(), stats: QueueStats::default(), rng, q: VecDeque::new(), bytes: 0 }
    }
    pub fn params(&self) -> &RedParams { &self.params }
    pub fn vars(&self) -> &RedVars { &self.vars }
    /// For tests and warm starts: overwrite the state.
    pub fn vars_mut(&mut self) -> &mut RedVars { &mut self.vars }
    fn qlen(&self) -> u64 { if self.params.queue_in_bytes { self.bytes } else { self.q.len() as u64 } }
}

/// Reads the `[queue]` table of `kind = "red"`.
pub fn read_config(p: &mut Params) -> Result<RedConfig, ConfigError> {
    let d = RedConfig::default();
    let mean_pktsize = p.u64_or("mean_pktsize", d.mean_pktsize as u64)?;
    if mean_pktsize == 0 || mean_pktsize > u32::MAX as u64 {
        return Err(p.err("mean_pktsize", format!("must be in 1..=4294967295 bytes, got {mean_pktsize}")));
    }
    Ok(RedConfig {
        limit: p.size_opt("limit")?.unwrap_or(d.limit),
        thresh: p.f64_or("thresh", d.thresh)?,
        maxthresh: p.f64_or("maxthresh", d.maxthresh)?,
        q_weight: p.f64_or("q_weight", d.q_weight)?,
        linterm: p.f64_or("linterm", d.linterm)?,
        gentle: p.bool_or("gentle", d.gentle)?,
        wait: p.bool_or("wait", d.wait)?,
        ecn: p.bool_or("ecn", d.ecn)?,
        use_mark_p: p.bool_or("use_mark_p", d.use_mark_p)?,
        mark_p: p.f64_or("mark_p", d.mark_p)?,
        mean_pktsize: mean_pktsize as u32,
        queue_in_bytes: p.bool_or("queue_in_bytes", d.queue_in_bytes)?,
        bytes: p.bool_or("bytes", d.bytes)?,
    })
}

pub fn build(p: &mut Params, link: LinkInfo, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let c = read_config(p)?;
    let params = RedParams::new(&c, link.rate.0 as f64).map_err(|(k, m)| p.err(k, m))?;
    // Own stream derived from the channel's, so RED's draws do not replay the channel's loss draws.
    let own = Rng::stream(rng.next_u64(), "qdisc:red");
    Ok(Box::new(Red::new(params, own)))
}

impl Qdisc for Red {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let (size, ect) = {
            let pk = pool.get(id);
            (pk.size, pk.ecn.is_ect())
        };
        self.stats.on_arrival(size);
        let qlen = self.qlen();
        match self.params.on_arrival(&mut self.vars, now, qlen, size, ect, &mut self.rng) {
            Action::Drop(why) => {
                self.stats.on_drop_arrival(size, why);
                Verdict::Dropped(why)
            }
            a => {
                self.q.push_back((id, size));
                self.bytes += size as u64;
                self.stats.on_enqueue(size);
                if a == Action::Mark {
                    pool.get_mut(id).ecn = Ecn::Ce;
                    self.stats.marked_pkts += 1;
                    Verdict::Marked
                } else {
                    Verdict::Queued
                }
            }
        }
    }

    fn dequeue(&mut self, _pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        match self.q.pop_front() {
            Some((id, size)) => {
                self.vars.idle = false;
                self.bytes -= size as u64;
                self.stats.on_dequeue(size);
                Some(id)
            }
            None => {
                // ns-2 `deque`: an empty queue when the link asks starts (or restarts) the idle period.
                self.vars.idle = true;
                self.vars.idle_since = now;
                None
            }
        }
    }

    fn peek(&self) -> Option<PktId> { self.q.front().map(|h| h.0) }
    fn backlog_pkts(&self) -> usize { self.q.len() }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "red" }
    fn idle_dequeue_deferrable(&self) -> bool { true }
    fn fifo_departures(&self) -> bool { true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{params, Harness};
    use crate::time::Rate;
    use serde_json::json;

    const MBIT4: f64 = 4e6;

    fn red(c: RedConfig, rate: f64, seed: u64) -> Red { Red::new(RedParams::new(&c, rate).unwrap(), Rng::stream(seed, "test")) }

    fn link(rate: u64) -> LinkInfo { LinkInfo { rate: Rate(rate), mtu: 1500 } }

    /// Average after a small hand-computed trace, including one idle-period correction.
    #[test]
    fn ewma_matches_hand_computation() {
        // w = 0.25 keeps every value exact in binary; ptc = 4 Mbit/s / (8·500 B) = 1000 pkt/s.
        let c = RedConfig { q_weight: 0.25, limit: Size::Packets(100), ..Default::default() };
        let mut h = Harness::new(red(c, MBIT4, 1));
        let t = Time::from_ms(10);
        // Arrivals see q = 0, 1, 2, 3 (the average uses the length before the packet).
        // The first arrival finds the queue idle since 0: m = int(1000·0.010) = 10 extra decays of 0.
        for _ in 0..4 {
            assert_eq!(h.offer(t, 1, 1000, Ecn::NotEct), Verdict::Queued);
        }
        // 0 → 0; 0·0.75 + 0.25·1 = 0.25; 0.25·0.75 + 0.25·2 = 0.6875; 0.6875·0.75 + 0.25·3 = 1.265625.
        assert_eq!(h.q.vars().ave, 1.265625);
        // Dequeues of a non-empty queue do not start an idle period.
        for _ in 0..4 {
            assert!(h.take(t).is_some());
            assert!(!h.q.vars().idle);
        }
        // The link asks again and finds it empty at t = 10 ms: idle from there.
        assert!(h.take(t).is_none());
        assert!(h.q.vars().idle);
        // Arrival 2.7 ms later: m = int(1000 · 0.0027) = 2, so avg·(1−w)^(m+1) + w·0.
        h.offer(t + Time::from_us(2700), 1, 1000, Ecn::NotEct);
        assert_eq!(h.q.vars().ave, 1.265625 * 0.75 * 0.75 * 0.75);
        assert_eq!(h.q.vars().ave, 0.533935546875);
        // Next arrival, queue busy (not idle): plain EWMA with q = 1.
        h.offer(t + Time::from_us(2800), 1, 1000, Ecn::NotEct);
        assert_eq!(h.q.vars().ave, 0.533935546875 * 0.75 + 0.25);
        h.check();
    }

    /// ns-2's default w = 0.002 over a longer trace: compare with the EWMA recurrence directly.
    #[test]
    fn ewma_default_weight_recurrence() {
        let mut h = Harness::new(red(RedConfig { limit: Size::Packets(1000), ..Default::default() }, MBIT4, 2));
        let mut expect = 0.0f64;
        for i in 0..300u64 {
            // Offer two, dequeue one: the queue grows (early drops may refuse some; the average is
            // updated for every arrival all the same).
            for _ in 0..2 {
                let q = h.q.backlog_pkts() as f64;
                h.offer(Time::ZERO, 1, 500, Ecn::NotEct);
                expect = expect * (1.0 - 0.002) + 0.002 * q;
            }
            h.take(Time::ZERO);
            assert_eq!(h.q.vars().ave, expect, "step {i}");
        }
        h.check();
    }

    /// Holds the instantaneous queue at `hold` packets and the average at `hold` (w tiny makes
    /// the average move by ~1e-12), offering `n` packets; returns (drops, marks, inter-drop gaps).
    fn run_steady(c: RedConfig, hold: usize, n: usize, ecn_of: impl Fn(usize) -> Ecn, seed: u64) -> (Harness<Red>, Vec<u64>) {
        let mut h = Harness::new(red(c, 10e6, seed));
        let t = Time::from_ms(1);
        // Fill without the AQM deciding anything: set the average after filling.
        for _ in 0..hold {
            assert_eq!(h.offer(t, 1, 1000, Ecn::NotEct), Verdict::Queued);
        }
        h.q.vars_mut().ave = hold as f64;
        let mut gaps = vec![];
        let mut since = 0u64;
        for i in 0..n {
            since += 1;
            match h.offer(t, 1, 1000, ecn_of(i)) {
                Verdict::Dropped(_) => {
                    gaps.push(since);
                    since = 0;
                }
                Verdict::Marked => {
                    gaps.push(since);
                    since = 0;
                    h.take(t);
                }
                Verdict::Queued => {
                    h.take(t);
                }
            }
            assert_eq!(h.q.backlog_pkts(), hold);
        }
        h.check();
        (h, gaps)
    }

    /// Expected inter-drop gap E[X] under the uniformised law, summed exactly over the count.
    /// X = number of arrivals from one drop to the next, the dropped one included; by the renewal
    /// reward theorem the long-run drop fraction is 1 / E[X].
    fn expected_gap(p_b: f64, wait: bool) -> f64 {
        let mut survive = 1.0;
        let mut mean = 0.0;
        for c in 1..100_000u64 {
            let cp = c as f64 * p_b;
            let p_a = if wait {
                if cp < 1.0 { 0.0 } else if cp < 2.0 { p_b / (2.0 - cp) } else { 1.0 }
            } else if cp < 1.0 {
                p_b / (1.0 - cp)
            } else {
                1.0
            };
            let p_a = p_a.min(1.0);
            mean += c as f64 * survive * p_a;
            survive *= 1.0 - p_a;
            if survive == 0.0 {
                break;
            }
        }
        mean
    }

    #[test]
    fn drop_fraction_between_thresholds_follows_the_law() {
        // avg = 8 between 5 and 15, max_p = 0.1: p_b = 0.1·(8−5)/10 = 0.03.
        // With wait, no drop while count·p_b < 1 (count ≤ 33), then p_a = p_b/(2 − count·p_b). The
        // survival telescopes: S(c) = (2 − (c+1)·p_b)/(2 − 34·p_b), so P(X = c) = 0.03/0.98 for
        // c = 34..=65 (uniform, the point of `wait`) and the rest, 0.02/0.98, at c = 66 where
        // p_a reaches 1. E[X] = (0.03·Σ34..65 + 66·0.02)/0.98 = 48.84/0.98 ≈ 49.84 (the
        // continuous approximation 1.5/p_b = 50). Drop fraction 1/E[X] ≈ 2.007%.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), ..Default::default() };
        let (h, gaps) = run_steady(c, 8, 400_000, |_| Ecn::NotEct, 11);
        let p_b = 0.1 * 3.0 / 10.0;
        let eg = expected_gap(p_b, true);
        assert!((eg - 48.84 / 0.98).abs() < 1e-9, "{eg}");
        let drops = h.q.stats().drops_by_reason[DropReason::Early.index()];
        let frac = drops as f64 / 400_000.0;
        assert!((frac - 1.0 / eg).abs() < 0.02 / eg, "fraction {frac} vs {}", 1.0 / eg);
        // Uniform spacing: every gap in 34..=66; P(34 ≤ X ≤ 44) = 11·0.03/0.98.
        assert!(gaps.iter().all(|&g| (34..=66).contains(&g)), "gap outside 34..=66");
        let low = gaps.iter().filter(|&&g| g <= 44).count() as f64 / gaps.len() as f64;
        assert!((low - 0.33 / 0.98).abs() < 0.02, "{low}");
        assert_eq!(h.q.stats().drops_by_reason[DropReason::Forced.index()], 0);
    }

    #[test]
    fn drop_fraction_without_wait() {
        // wait = false: p_a = p_b/(1 − count·p_b); S(c) = (1 − (c+1)·p_b)/(1 − p_b), so
        // P(X = c) = 0.03/0.97 for c = 1..=32 and 0.01/0.97 at 33: E[X] = 16.17/0.97 ≈ 16.67.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), wait: false, ..Default::default() };
        let (h, gaps) = run_steady(c, 8, 200_000, |_| Ecn::NotEct, 12);
        let eg = expected_gap(0.03, false);
        assert!((eg - 16.17 / 0.97).abs() < 1e-9, "{eg}");
        let frac = h.q.stats().dropped_pkts() as f64 / 200_000.0;
        assert!((frac - 1.0 / eg).abs() < 0.02 / eg, "{frac}");
        assert!(gaps.iter().all(|&g| (1..=33).contains(&g)));
    }

    #[test]
    fn gentle_region() {
        // gentle, avg = 20 in [15, 30): p_b = (1 − 0.1)/15 · 20 + (2·0.1 − 1) = 0.4. With wait:
        // count 1, 2 → 0; count 3 → 0.4/(2 − 1.2) = 0.5; count 4 → 1. E[X] = 3.5.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), gentle: true, ..Default::default() };
        let p = RedParams::new(&c, 10e6).unwrap();
        assert!((p.p_b(20.0) - 0.4).abs() < 1e-12);
        assert!((p.p_b(15.0) - 0.1).abs() < 1e-12);
        assert!((p.p_b(30.0) - 1.0).abs() < 1e-12);
        let (h, gaps) = run_steady(c, 20, 100_000, |_| Ecn::NotEct, 13);
        let frac = h.q.stats().dropped_pkts() as f64 / 100_000.0;
        assert!((frac - 1.0 / 3.5).abs() < 0.01, "{frac}");
        assert!(gaps.iter().all(|&g| g == 3 || g == 4));
        // Without gentle the same average is in the forced region: every packet goes.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), use_mark_p: false, ..Default::default() };
        let (h, _) = run_steady(c, 20, 1000, |_| Ecn::NotEct, 14);
        assert_eq!(h.q.stats().drops_by_reason[DropReason::Forced.index()], 1000);
    }

    #[test]
    fn forced_region_drops_even_ect_packets() {
        // use_mark_p = false (pre-2005 ns-2): avg ≥ max_th is a forced drop, ECN or not.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), use_mark_p: false, ecn: true, ..Default::default() };
        let (h, _) = run_steady(c, 16, 500, |_| Ecn::Ect0, 15);
        let s = h.q.stats();
        assert_eq!(s.drops_by_reason[DropReason::Forced.index()], 500);
        assert_eq!(s.marked_pkts, 0);
        // ns-2.35 default (use_mark_p, mark_p = 0.1): no forced drops; p_b = 1 > mark_p, so the
        // early path drops every packet, ECT included, after the one that re-arms `old`.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), ecn: true, ..Default::default() };
        let (h, _) = run_steady(c, 16, 500, |_| Ecn::Ect0, 16);
        let s = h.q.stats();
        assert_eq!(s.drops_by_reason[DropReason::Forced.index()], 0);
        assert_eq!(s.drops_by_reason[DropReason::Early.index()], 499);
        assert_eq!(s.marked_pkts, 0);
        // Gentle with use_mark_p = false: forced only from 2·max_th = 30.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), gentle: true, use_mark_p: false, ..Default::default() };
        let (h, _) = run_steady(c, 31, 200, |_| Ecn::NotEct, 17);
        assert_eq!(h.q.stats().drops_by_reason[DropReason::Forced.index()], 200);
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        // Alternate ECT and non-ECT packets with avg = 8: ECT ones are marked, never dropped early;
        // non-ECT ones are dropped; together at the rate of the law.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), ecn: true, ..Default::default() };
        let n = 200_000;
        let (h, _) = run_steady(c, 8, n, |i| if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct }, 18);
        let s = h.q.stats();
        assert!(s.marked_pkts > 1000, "{}", s.marked_pkts);
        let drops = s.drops_by_reason[DropReason::Early.index()];
        assert!(drops > 1000);
        // Signals (marks + drops) follow the same law as drops alone.
        let frac = (s.marked_pkts + drops) as f64 / n as f64;
        assert!((frac - 0.98 / 48.84).abs() < 0.0006, "{frac}");
        // Roughly half each.
        let share = s.marked_pkts as f64 / (s.marked_pkts + drops) as f64;
        assert!((share - 0.5).abs() < 0.03, "{share}");
        // Without ecn the same traffic is all dropped.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), ..Default::default() };
        let (h, _) = run_steady(c, 8, 20_000, |_| Ecn::Ect0, 19);
        assert_eq!(h.q.stats().marked_pkts, 0);
        assert!(h.q.stats().dropped_pkts() > 300);
    }

    #[test]
    fn marked_packet_carries_ce() {
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), ecn: true, wait: false, ..Default::default() };
        let mut h = Harness::new(red(c, 10e6, 20));
        for _ in 0..8 {
            h.offer(Time::ZERO, 1, 1000, Ecn::NotEct);
        }
        h.q.vars_mut().ave = 8.0;
        let mut seen = false;
        for _ in 0..1000 {
            if h.offer(Time::ZERO, 2, 1000, Ecn::Ect0) == Verdict::Marked {
                seen = true;
                break;
            }
        }
        assert!(seen);
        // The marked packet is the last in the queue and leaves with CE.
        let mut last = None;
        while let Some(x) = h.take(Time::ZERO) {
            last = Some(x);
        }
        assert_eq!(last, Some((2, 1000, Ecn::Ce)));
        h.check();
    }

    #[test]
    fn hard_limit_drops() {
        // Limit 3 with the average far below min_th: only the hard limit acts.
        let c = RedConfig { limit: Size::Packets(3), ..Default::default() };
        let mut h = Harness::new(red(c, 10e6, 21));
        let v: Vec<Verdict> = (0..5).map(|_| h.offer(Time::ZERO, 1, 1000, Ecn::Ect0)).collect();
        assert_eq!(v[..3], [Verdict::Queued; 3]);
        assert_eq!(v[3..], [Verdict::Dropped(DropReason::Overlimit); 2]);
        h.check();
        let s = h.q.stats();
        assert_eq!((s.arrived_pkts, s.enqueued_pkts, s.dropped_on_arrival_pkts), (5, 3, 2));
        h.take(Time::ZERO);
        assert_eq!(h.offer(Time::ZERO, 1, 1000, Ecn::NotEct), Verdict::Queued);
        h.check();
    }

    #[test]
    fn byte_mode_thresholds_and_limit() {
        // queue_in_bytes: thresholds and limit scale by mean_pktsize (ns-2 reset/enque).
        let c = RedConfig { queue_in_bytes: true, bytes: true, limit: Size::Packets(50), ..Default::default() };
        let p = RedParams::new(&c, 10e6).unwrap();
        assert_eq!((p.th_min, p.th_max, p.limit), (2500.0, 7500.0, 25_000));
        // bytes: count in mean-sized packets (integer division), p scaled by size/mean_pktsize.
        let pb = 0.03;
        assert_eq!(p.p_a(pb, 0, 33 * 500 + 499, 500), 0.0);
        assert!((p.p_a(pb, 0, 40 * 500, 1000) - 2.0 * pb / (2.0 - 40.0 * pb)).abs() < 1e-15);
        // A 1000-byte packet arriving on 24 999 bytes still fits; the next does not.
        let mut h = Harness::new(Red::new(RedParams::new(&RedConfig { q_weight: 1e-12, ..c }, 10e6).unwrap(), Rng::stream(1, "t")));
        for _ in 0..24 {
            h.offer(Time::ZERO, 1, 1000, Ecn::NotEct);
        }
        h.offer(Time::ZERO, 1, 999, Ecn::NotEct);
        assert_eq!(h.q.backlog_bytes(), 24_999);
        assert_eq!(h.offer(Time::ZERO, 1, 1000, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 1, 1000, Ecn::NotEct), Verdict::Dropped(DropReason::Overlimit));
        h.check();
    }

    #[test]
    fn crossing_min_th_restarts_count() {
        // The first packet with avg ≥ min_th and q > 1 only arms `old` and sets count = 1.
        let c = RedConfig { q_weight: 1e-12, limit: Size::Packets(100), wait: false, ..Default::default() };
        let mut h = Harness::new(red(c, 10e6, 22));
        for _ in 0..8 {
            h.offer(Time::ZERO, 1, 1000, Ecn::NotEct);
        }
        assert!(!h.q.vars().old);
        h.q.vars_mut().ave = 8.0;
        h.q.vars_mut().count = 1000;
        h.offer(Time::ZERO, 1, 1000, Ecn::NotEct);
        assert!(h.q.vars().old);
        assert_eq!(h.q.vars().count, 1);
        // With at most one packet queued the average alone never drops: old resets.
        let mut h = Harness::new(red(RedConfig { q_weight: 1e-12, ..Default::default() }, 10e6, 23));
        h.offer(Time::ZERO, 1, 1000, Ecn::NotEct);
        h.q.vars_mut().ave = 14.0;
        h.q.vars_mut().old = true;
        assert_eq!(h.offer(Time::ZERO, 1, 1000, Ecn::NotEct), Verdict::Queued);
        assert!(!h.q.vars().old);
    }

    #[test]
    fn long_idle_is_cheap_and_zeroes_the_average() {
        let mut h = Harness::new(red(RedConfig::default(), 10e9, 24));
        h.offer(Time::ZERO, 1, 1000, Ecn::NotEct);
        h.q.vars_mut().ave = 12.0;
        h.take(Time::ZERO);
        h.take(Time::ZERO);
        // 10^6 s at 10 Gbit/s: m = 2.5·10^12; the loop stops once decays stop changing the value.
        h.offer(Time::from_secs(1_000_000), 1, 1000, Ecn::NotEct);
        assert!(h.q.vars().ave < 1e-300);
    }

    #[test]
    fn automatic_forms() {
        // ptc = 10 Mbit/s / 4000 bit = 2500 pkt/s.
        let c = RedConfig { thresh: 0.0, maxthresh: 0.0, q_weight: 0.0, ..Default::default() };
        let p = RedParams::new(&c, 10e6).unwrap();
        // thresh = max(5, 0.005·2500/2 = 6.25); maxthresh = 3·thresh.
        assert_eq!((p.th_min, p.th_max), (6.25, 18.75));
        assert_eq!(p.q_w, 1.0 - (-1.0f64 / 2500.0).exp());
        let p = RedParams::new(&RedConfig { q_weight: -1.0, ..Default::default() }, 10e6).unwrap();
        assert_eq!(p.q_w, 1.0 - (-1.0f64 / (10.0 * 0.1 * 2500.0)).exp());
        let p = RedParams::new(&RedConfig { q_weight: -2.0, ..Default::default() }, 10e6).unwrap();
        assert_eq!(p.q_w, 1.0 - (-10.0f64 / 2500.0).exp());
    }

    #[test]
    fn counters_under_random_load() {
        let c = RedConfig { limit: Size::Packets(20), ecn: true, q_weight: 0.05, ..Default::default() };
        let mut h = Harness::new(red(c, 10e6, 25));
        let mut r = Rng::stream(3, "load");
        let mut t = Time::ZERO;
        for _ in 0..50_000 {
            t += Time::from_us(100);
            if r.uniform() < 0.55 {
                let e = if r.uniform() < 0.5 { Ecn::Ect0 } else { Ecn::NotEct };
                h.offer(t, 1, 200 + (r.next_u64() % 1300) as u32, e);
            } else {
                h.take(t);
            }
            h.check();
        }
        let s = h.q.stats();
        assert!(s.marked_pkts > 0 && s.drops_by_reason[DropReason::Early.index()] > 0 && s.drops_by_reason[DropReason::Overlimit.index()] > 0, "{s:?}");
    }

    #[test]
    fn builder_reads_keys_and_validates() {
        let mut rng = Rng::stream(1, "c");
        let mut p = params(json!({"kind": "red", "limit": "50pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": false, "ecn": true}));
        p.mark_used("kind");
        let q = build(&mut p, link(2_000_000), &mut rng).unwrap();
        p.finish().unwrap();
        assert_eq!(q.kind(), "red");
        let cases = [
            (json!({"thresh": 5, "maxthresh": 3}), "queue.maxthresh: must be > thresh (5), got 3"),
            (json!({"thresh": 15, "maxthresh": 15}), "queue.maxthresh: must be > thresh (15), got 15"),
            (json!({"q_weight": 1.5}), "queue.q_weight: must be in (0, 1], or 0, -1, -2 for ns-2's automatic weights, got 1.5"),
            (json!({"q_weight": -0.5}), "queue.q_weight: must be in (0, 1], or 0, -1, -2 for ns-2's automatic weights, got -0.5"),
            (json!({"linterm": 0.5}), "queue.linterm: must be >= 1 (max_p = 1/linterm), got 0.5"),
            (json!({"thresh": -1}), "queue.thresh: must be >= 0 packets (0 = automatic), got -1"),
            (json!({"limit": "0pkt"}), "queue.limit: must be > 0"),
            (json!({"limit": "64KB"}), "queue.limit: RED counts its queue in packets: give the limit in pkt, or set queue_in_bytes = true"),
            (json!({"mean_pktsize": 0}), "queue.mean_pktsize: must be in 1..=4294967295 bytes, got 0"),
            (json!({"mark_p": 0}), "queue.mark_p: must be in (0, 1], got 0"),
            (json!({"gentle": "yes"}), "queue.gentle: expected true or false, got \"yes\""),
        ];
        for (v, msg) in cases {
            let mut p = params(v);
            let e = build(&mut p, link(2_000_000), &mut rng).err().expect(msg);
            assert_eq!(e.to_string(), msg);
        }
        // Byte limits are fine in byte mode.
        let mut p = params(json!({"limit": "64KB", "queue_in_bytes": true}));
        assert!(build(&mut p, link(2_000_000), &mut rng).is_ok());
    }
}
