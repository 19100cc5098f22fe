//! PIE (RFC 8033): a drop probability updated every `tupdate` by a PI controller on the queueing
//! delay, applied to arriving packets; an initial burst allowance (`max_burst`) lets bursts
//! through while the queue has been calm. The queue delay is the sojourn time of the last dequeued
//! packet (RFC 8033 §4.1 timestamp option, Appendix A; 0 once the queue is empty, as Linux does).
//!
//! Included: the auto-tuning of α/β by probability level (§4.2), the cap on increments once
//! p ≥ 10 % (§5.5), the +2 % step for delays above 250 ms (Linux `pie_calculate_probability`),
//! the work-conserving safeguard (§4.1), ECN marking while p ≤ `mark_ecnth` (§5.1).
//! Not included: derandomisation (§5.1 optional), byte-mode probability, departure-rate estimation.
//!
//! The periodic update runs lazily: every enqueue/dequeue first runs the updates due up to `now`.
//! Between calls nothing in the state changes, so this equals a timer (updates due at the same
//! instant as a packet run before it).
use std::collections::VecDeque;

use super::droptail::Limit;
use super::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::config::{ConfigError, Params};
use crate::packet::{Ecn, PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

/// RFC 8033 §4.2 / §5.1 defaults.
pub const DEFAULT_TARGET: Time = Time::from_ms(15);
pub const DEFAULT_TUPDATE: Time = Time::from_ms(15);
pub const DEFAULT_MAX_BURST: Time = Time::from_ms(150);
pub const DEFAULT_ALPHA: f64 = 0.125;
pub const DEFAULT_BETA: f64 = 1.25;
/// RFC 8033 §5.1: mark instead of drop only while p ≤ 10 %.
pub const DEFAULT_MARK_ECNTH: f64 = 0.1;
/// Linux `sch_pie` default limit (packets).
pub const DEFAULT_LIMIT: u64 = 1000;
/// §4.1 safeguard: no early drop while the backlog is at most two packets of this size.
pub const DEFAULT_MTU: u32 = 1514;

#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    pub target: Time,
    pub tupdate: Time,
    pub max_burst: Time,
    /// Hz (per second of delay error).
    pub alpha: f64,
    pub beta: f64,
    pub ecn: bool,
    pub mark_ecnth: f64,
    pub mtu: u32,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams { target: DEFAULT_TARGET, tupdate: DEFAULT_TUPDATE, max_burst: DEFAULT_MAX_BURST, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA, ecn: false, mark_ecnth: DEFAULT_MARK_ECNTH, mtu: DEFAULT_MTU }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct PieVars {
    pub drop_prob: f64,
    /// Delay seen at the last dequeue, and at the previous update.
    pub qdelay: Time,
    pub qdelay_old: Time,
    pub burst_allowance: Time,
    pub next_update: Time,
}

impl PieVars {
    pub fn new(p: &PieParams) -> Self { PieVars { drop_prob: 0.0, qdelay: Time::ZERO, qdelay_old: Time::ZERO, burst_allowance: p.max_burst, next_update: p.tupdate } }
}

impl PieParams {
    /// RFC 8033 §4.2 `calculate_drop_prob`, run every `tupdate`.
    pub fn update(&self, v: &mut PieVars) {
        let cur = v.qdelay.secs_f64();
        let old = v.qdelay_old.secs_f64();
        let mut p = self.alpha * (cur - self.target.secs_f64()) + self.beta * (cur - old);
        // §4.2 auto-tuning: small steps while the probability is small.
        let dp = v.drop_prob;
        p /= if dp < 0.000001 {
            2048.0
        } else if dp < 0.00001 {
            512.0
        } else if dp < 0.0001 {
            128.0
        } else if dp < 0.001 {
            32.0
        } else if dp < 0.01 {
            8.0
        } else if dp < 0.1 {
            2.0
        } else {
            1.0
        };
        // §5.5: cap the increase once p ≥ 10 %, so one spike cannot drive it to 1.
        if dp >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        // Linux: a delay above 250 ms adds 2 % per update.
        if v.qdelay > Time::from_ms(250) {
            p += 0.02;
        }
        v.drop_prob += p;
        // §4.2: decay when the queue has been empty for two updates.
        if v.qdelay == Time::ZERO && v.qdelay_old == Time::ZERO {
            v.drop_prob *= 0.98;
        }
        v.drop_prob = v.drop_prob.clamp(0.0, 1.0);
        v.qdelay_old = v.qdelay;
        v.burst_allowance = v.burst_allowance.saturating_sub(self.tupdate);
    }

    /// Runs the updates due at or before `now`; skips ahead once they stop changing anything.
    pub fn advance(&self, v: &mut PieVars, now: Time) {
        while v.next_update <= now {
            let before = v.clone();
            self.update(v);
            v.next_update += self.tupdate;
            let mut after = v.clone();
            after.next_update = before.next_update;
            if after == before && v.next_update <= now {
                // A fixed point (idle queue, p = 0): the updates up to now are no-ops.
                let k = (now - v.next_update).0 / self.tupdate.0 + 1;
                v.next_update += self.tupdate.mul(k);
            }
        }
    }

    /// RFC 8033 Appendix A `enque`: a calm queue (p = 0, both delays below target/2) re-arms the
    /// burst allowance. Run on every arrival before [`PieParams::drop_early`].
    pub fn rearm_burst(&self, v: &mut PieVars) {
        if v.drop_prob == 0.0 && v.qdelay < half(self.target) && v.qdelay_old < half(self.target) {
            v.burst_allowance = self.max_burst;
        }
    }

    /// RFC 8033 §4.1 `drop_early` plus the burst allowance test of `enque`. `backlog` in bytes.
    pub fn drop_early(&self, v: &PieVars, backlog: u64, u: f64) -> bool {
        if v.burst_allowance > Time::ZERO {
            return false;
        }
        // Work-conserving safeguard.
        if (v.qdelay_old < half(self.target) && v.drop_prob < 0.2) || backlog <= 2 * self.mtu as u64 {
            return false;
        }
        u < v.drop_prob
    }
}

fn half(t: Time) -> Time { Time(t.0 / 2) }

pub struct Pie {
    params: PieParams,
    vars: PieVars,
    limit: Limit,
    q: VecDeque<(PktId, u32, Time)>,
    bytes: u64,
    stats: QueueStats,
    rng: Rng,
}

impl Pie {
    pub fn new(params: PieParams, limit: Limit, rng: Rng) -> Self {
        let vars = PieVars::new(&params);
        Pie { params, vars, limit, q: VecDeque::new(), bytes: 0, stats: QueueStats::default(), rng }
    }
    pub fn vars(&self) -> &PieVars { &self.vars }
    pub fn vars_mut(&mut self) -> &mut PieVars { &mut self.vars }
}

pub fn build(p: &mut Params, _link: LinkInfo, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let params = read_params(p)?;
    let limit = super::codel::read_limit(p, DEFAULT_LIMIT)?;
    Ok(Box::new(Pie::new(params, limit, Rng::stream(rng.next_u64(), "qdisc:pie"))))
}

/// Reads and validates PIE's control-law keys (shared with FQ-PIE): target, tupdate, max_burst,
/// alpha, beta, ecn, mark_ecnth, mtu.
pub fn read_params(p: &mut Params) -> Result<PieParams, ConfigError> {
    let d = PieParams::default();
    let target = p.duration_or("target", d.target)?;
    let tupdate = p.duration_or("tupdate", d.tupdate)?;
    let max_burst = p.duration_or("max_burst", d.max_burst)?;
    let alpha = p.f64_or("alpha", d.alpha)?;
    let beta = p.f64_or("beta", d.beta)?;
    let ecn = p.bool_or("ecn", d.ecn)?;
    let mark_ecnth = p.f64_or("mark_ecnth", d.mark_ecnth)?;
    let mtu = p.u64_or("mtu", d.mtu as u64)?;
    if target == Time::ZERO {
        return Err(p.err("target", "must be > 0"));
    }
    if tupdate == Time::ZERO {
        return Err(p.err("tupdate", "must be > 0"));
    }
    if !(alpha >= 0.0 && alpha.is_finite()) {
        return Err(p.err("alpha", format!("must be >= 0, got {alpha}")));
    }
    if !(beta >= 0.0 && beta.is_finite()) {
        return Err(p.err("beta", format!("must be >= 0, got {beta}")));
    }
    if !(0.0..=1.0).contains(&mark_ecnth) {
        return Err(p.err("mark_ecnth", format!("must be in [0, 1], got {mark_ecnth}")));
    }
    if mtu == 0 || mtu > u32::MAX as u64 {
        return Err(p.err("mtu", format!("must be in 1..=4294967295 bytes, got {mtu}")));
    }
    Ok(PieParams { target, tupdate, max_burst, alpha, beta, ecn, mark_ecnth, mtu: mtu as u32 })
}

impl Qdisc for Pie {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Verdict {
        self.params.advance(&mut self.vars, now);
        let (size, ect) = {
            let pk = pool.get(id);
            (pk.size, pk.ecn.is_ect())
        };
        self.stats.on_arrival(size);
        let full = match self.limit {
            Limit::Packets(n) => self.q.len() as u64 >= n,
            Limit::Bytes(b) => self.bytes + size as u64 > b,
        };
        if full {
            self.stats.on_drop_arrival(size, DropReason::Overlimit);
            return Verdict::Dropped(DropReason::Overlimit);
        }
        let v = &mut self.vars;
        self.params.rearm_burst(v);
        let mut marked = false;
        let u = self.rng.uniform();
        if self.params.drop_early(v, self.bytes, u) {
            if self.params.ecn && ect && v.drop_prob <= self.params.mark_ecnth {
                pool.get_mut(id).ecn = Ecn::Ce;
                marked = true;
            } else {
                self.stats.on_drop_arrival(size, DropReason::Early);
                return Verdict::Dropped(DropReason::Early);
            }
        }
        self.q.push_back((id, size, now));
        self.bytes += size as u64;
        self.stats.on_enqueue(size);
        if marked {
            self.stats.marked_pkts += 1;
            Verdict::Marked
        } else {
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, _pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        self.params.advance(&mut self.vars, now);
        let (id, size, enq) = self.q.pop_front()?;
        self.bytes -= size as u64;
        self.stats.on_dequeue(size);
        self.vars.qdelay = if self.q.is_empty() { Time::ZERO } else { now - enq };
        Some(id)
    }

    fn peek(&self) -> Option<PktId> { self.q.front().map(|h| h.0) }
    fn backlog_pkts(&self) -> usize { self.q.len() }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "pie" }
    fn idle_dequeue_deferrable(&self) -> bool { true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{params, Harness};
    use crate::time::Rate;
    use serde_json::json;

    fn pie(p: PieParams) -> Harness<Pie> { Harness::new(Pie::new(p, Limit::Packets(100_000), Rng::stream(5, "pie"))) }

    /// Offers `per_ms` packets and takes one every ms for `ms` ms, starting with `standing` queued.
    fn run(h: &mut Harness<Pie>, standing: usize, per_ms: usize, ms: u64, ecn: Ecn) -> Vec<(Time, f64)> {
        let mut t = Time::ZERO;
        for _ in 0..standing {
            h.offer(t, 1, 1500, ecn);
        }
        let mut trace = vec![];
        for _ in 0..ms {
            t += Time::from_ms(1);
            for _ in 0..per_ms {
                h.offer(t, 1, 1500, ecn);
            }
            h.take(t);
            trace.push((t, h.q.vars().drop_prob));
            h.check();
        }
        trace
    }

    #[test]
    fn probability_stays_zero_below_target() {
        // 5 packets standing, one in one out per ms: sojourn 5 ms < 15 ms.
        let mut h = pie(PieParams::default());
        let trace = run(&mut h, 5, 1, 10_000, Ecn::NotEct);
        // The β term sees the delay rise from 0 to 5 ms at the first update and nudges p up by
        // (α·(0.005 − 0.015) + β·0.005)/2048 ≈ 2.4e-6; the α term takes it back to 0 at once.
        assert!(trace.iter().all(|&(_, p)| p < 3e-6));
        assert!(trace.iter().filter(|&&(t, _)| t > Time::from_ms(100)).all(|&(_, p)| p == 0.0));
        assert_eq!(h.q.stats().dropped_pkts(), 0);
    }

    #[test]
    fn probability_rises_under_standing_queue() {
        // 40 packets standing (sojourn ≈ 40 ms > 15 ms) refilled as PIE drops: p climbs.
        let mut h = pie(PieParams::default());
        let mut t = Time::ZERO;
        for _ in 0..40 {
            h.offer(t, 1, 1500, Ecn::NotEct);
        }
        let mut ps = vec![];
        for i in 0..3000 {
            t += Time::from_ms(1);
            // Refill what PIE drops (an unresponsive sender), with a bound in case p reaches 1.
            for _ in 0..50 {
                if h.q.backlog_pkts() >= 41 {
                    break;
                }
                h.offer(t, 1, 1500, Ecn::NotEct);
            }
            h.take(t);
            if i % 15 == 14 {
                ps.push(h.q.vars().drop_prob);
            }
        }
        assert!(ps.windows(2).all(|w| w[1] >= w[0]), "non-decreasing while delay > target");
        assert!(ps[5] > 0.0);
        assert!(*ps.last().unwrap() > 0.1, "{}", ps.last().unwrap());
        // First update (t = 15 ms) from p = 0 with the delay of the packet dequeued at 14 ms
        // (enqueued at 0): (α·(0.014 − 0.015) + β·(0.014 − 0))/2048, by hand.
        let p = PieParams::default();
        let mut v = PieVars::new(&p);
        v.qdelay = Time::from_ms(14);
        p.update(&mut v);
        let expect = (0.125 * (0.014 - 0.015) + 1.25 * 0.014) / 2048.0;
        assert!((v.drop_prob - expect).abs() < 1e-15, "{} {expect}", v.drop_prob);
        assert!(h.q.stats().drops_by_reason[DropReason::Early.index()] > 0);
        h.check();
    }

    #[test]
    fn burst_allowance_lets_initial_burst_through() {
        // A burst that builds a queue at 2 packets/ms against 1/ms: no early drop while the
        // 150 ms allowance lasts, although p becomes positive; drops afterwards.
        let mut h = pie(PieParams::default());
        let trace = run(&mut h, 0, 2, 149, Ecn::NotEct);
        assert!(trace.last().unwrap().1 > 0.0);
        assert_eq!(h.q.stats().dropped_pkts(), 0);
        // Re-armed on every calm arrival until the first update (15 ms) made p > 0; the 9 updates
        // at 15..=135 ms used 135 ms of it; the one at 150 ms uses the rest.
        assert_eq!(h.q.vars().burst_allowance, Time::from_ms(15));
        h.q.params.advance(&mut h.q.vars, Time::from_ms(150));
        assert_eq!(h.q.vars().burst_allowance, Time::ZERO);
        // With p forced high the next arrivals are dropped.
        h.q.vars_mut().drop_prob = 0.5;
        for _ in 0..200 {
            h.offer(Time::from_ms(150), 1, 1500, Ecn::NotEct);
        }
        assert!(h.q.stats().dropped_pkts() > 50);
        // The same with p forced high but the allowance intact: nothing dropped.
        let mut h = pie(PieParams::default());
        h.q.vars_mut().drop_prob = 0.5;
        h.q.vars_mut().qdelay_old = Time::from_ms(100);
        for _ in 0..200 {
            h.offer(Time::from_ms(1), 1, 1500, Ecn::NotEct);
        }
        assert_eq!(h.q.stats().dropped_pkts(), 0);
        h.check();
    }

    #[test]
    fn ecn_marks_below_threshold_drops_above() {
        let mut h = pie(PieParams { ecn: true, ..PieParams::default() });
        {
            let v = h.q.vars_mut();
            v.drop_prob = 0.08;
            v.qdelay_old = Time::from_ms(100);
            v.burst_allowance = Time::ZERO;
        }
        for _ in 0..2000 {
            h.offer(Time::from_ms(1), 1, 1500, Ecn::Ect0);
        }
        let s = h.q.stats().clone();
        assert_eq!(s.dropped_pkts(), 0);
        assert!((s.marked_pkts as f64 / 2000.0 - 0.08).abs() < 0.02, "{}", s.marked_pkts);
        // Non-ECT packets are dropped at the same probability.
        for _ in 0..2000 {
            h.offer(Time::from_ms(1), 1, 1500, Ecn::NotEct);
        }
        assert!(h.q.stats().dropped_pkts() > 100);
        // Above mark_ecnth ECT packets are dropped too.
        h.q.vars_mut().drop_prob = 0.5;
        let before = h.q.stats().marked_pkts;
        for _ in 0..100 {
            h.offer(Time::from_ms(1), 1, 1500, Ecn::Ect0);
        }
        assert_eq!(h.q.stats().marked_pkts, before);
        h.check();
    }

    #[test]
    fn idle_decays_and_skips_ahead() {
        let p = PieParams::default();
        let mut v = PieVars::new(&p);
        v.drop_prob = 0.3;
        // Queue empty: qdelay = qdelay_old = 0 → decay by 2 % per update (α term pushes down too).
        p.advance(&mut v, Time::from_secs(10));
        assert_eq!(v.drop_prob, 0.0);
        // A very long idle period costs little.
        p.advance(&mut v, Time::from_secs(10_000_000));
        assert!(v.next_update > Time::from_secs(10_000_000));
    }

    /// RFC 8033 §4.2's auto-tuning, one update per tier: with qdelay 25 ms and qdelay_old 20 ms
    /// the raw step is α·(0.025 − 0.015) + β·(0.025 − 0.020) = 0.00125 + 0.00625 = 0.0075, divided
    /// by 2048, 512, 128, 32, 8, 2 or 1 as p is below 10⁻⁶, 10⁻⁵, 10⁻⁴, 10⁻³, 10⁻², 10⁻¹ or not;
    /// the burst allowance loses one tupdate (150 → 135 ms).
    #[test]
    fn update_scales_the_step_by_tier() {
        let p = PieParams::default();
        for (p0, div) in [(0.0, 2048.0), (5e-6, 512.0), (5e-5, 128.0), (5e-4, 32.0), (5e-3, 8.0), (0.05, 2.0), (0.15, 1.0)] {
            let mut v = PieVars::new(&p);
            (v.drop_prob, v.qdelay, v.qdelay_old) = (p0, Time::from_ms(25), Time::from_ms(20));
            p.update(&mut v);
            let want = p0 + 0.0075 / div;
            assert!((v.drop_prob - want).abs() < 1e-12, "p0 {p0}: {} vs {want}", v.drop_prob);
            assert_eq!((v.qdelay_old, v.burst_allowance), (Time::from_ms(25), Time::from_ms(135)));
        }
    }

    /// The update's guards, by hand: §5.5 caps a step at 2 % once p ≥ 10 % (from 0.15 with qdelay
    /// 100 ms, old 20 ms the raw 0.125·0.085 + 1.25·0.08 = 0.110625 becomes 0.02: 0.17; from 0.05
    /// it is only halved: 0.1053125); Linux adds 2 % while qdelay > 250 ms (0.5 at 300 ms steady:
    /// raw 0.125·0.285 capped to 0.02, + 0.02 = 0.54; at 250 ms exactly no extra: 0.52); an
    /// empty queue for two updates decays p by 2 % (0.3 − 0.001875 = 0.298125, × 0.98 = 0.2921625).
    #[test]
    fn update_cap_high_delay_step_and_idle_decay() {
        let p = PieParams::default();
        let step = |p0: f64, cur: u64, old: u64| {
            let mut v = PieVars::new(&p);
            (v.drop_prob, v.qdelay, v.qdelay_old) = (p0, Time::from_ms(cur), Time::from_ms(old));
            p.update(&mut v);
            v.drop_prob
        };
        for (got, want) in [
            (step(0.15, 100, 20), 0.17),
            (step(0.05, 100, 20), 0.1053125),
            (step(0.5, 300, 300), 0.54),
            (step(0.5, 250, 250), 0.52),
            (step(0.3, 0, 0), 0.2921625),
        ] {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    /// RFC 8033 §4.1's safeguard: no early drop while the burst allowance lasts, while
    /// qdelay_old < target/2 = 7.5 ms with p < 20 %, or with at most 2 MTUs (3028 B) queued.
    #[test]
    fn drop_early_safeguards() {
        let p = PieParams::default();
        let mut v = PieVars::new(&p);
        (v.drop_prob, v.qdelay_old) = (0.19, Time::from_ms(7));
        assert!(!p.drop_early(&v, 100_000, 0.0), "burst allowance left");
        v.burst_allowance = Time::ZERO;
        assert!(!p.drop_early(&v, 100_000, 0.0), "7 ms < 7.5 ms with p 19 %");
        v.drop_prob = 0.2;
        assert!(p.drop_early(&v, 100_000, 0.0), "p 20 % is not below 20 %");
        (v.drop_prob, v.qdelay_old) = (0.19, Time::from_us(7500));
        assert!(p.drop_early(&v, 100_000, 0.0), "7.5 ms is not below target/2");
        assert!(!p.drop_early(&v, 3028, 0.0), "two MTUs queued");
        assert!(p.drop_early(&v, 3029, 0.0));
        assert!(!p.drop_early(&v, 3029, 0.19), "u < p decides");
    }

    /// RFC 8033 §5 defaults (target 15 ms, tupdate 15 ms, α 0.125, β 1.25, max_burst 150 ms),
    /// Linux pie's ECN threshold (marks while prob ≤ MAX_PROB / 10), psched_mtu 1514, and its
    /// default limit of 1000 packets: the 1001st packet of a burst is dropped (the allowance
    /// spares the burst any early drop).
    #[test]
    fn defaults_are_rfc_8033s_and_linux() {
        let d = PieParams::default();
        assert_eq!((d.target, d.tupdate, d.max_burst), (Time::from_ms(15), Time::from_ms(15), Time::from_ms(150)));
        assert_eq!((d.alpha, d.beta, d.mark_ecnth, d.mtu), (0.125, 1.25, 0.1, 1514));
        let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
        let mut q = build(&mut params(json!({})), link, &mut Rng::stream(1, "x")).unwrap();
        let (mut pool, mut d) = (PacketPool::new(), vec![]);
        for _ in 0..1000 {
            let id = crate::qdisc::testutil::pkt(&mut pool, 1, 1500, Ecn::NotEct);
            assert_eq!(q.enqueue(id, &mut pool, Time::ZERO, &mut d), Verdict::Queued);
        }
        let id = crate::qdisc::testutil::pkt(&mut pool, 1, 1500, Ecn::NotEct);
        assert_eq!(q.enqueue(id, &mut pool, Time::ZERO, &mut d), Verdict::Dropped(DropReason::Overlimit));
    }

    #[test]
    fn builder() {
        let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
        let mut rng = Rng::stream(1, "x");
        let mut p = params(json!({"target": "15ms", "tupdate": "15ms", "max_burst": "150ms", "alpha": 0.125, "beta": 1.25, "ecn": true, "mark_ecnth": 0.1, "limit": "1000pkt"}));
        assert_eq!(build(&mut p, link, &mut rng).unwrap().kind(), "pie");
        p.finish().unwrap();
        for (v, msg) in [
            (json!({"tupdate": "0s"}), "queue.tupdate: must be > 0"),
            (json!({"alpha": -1}), "queue.alpha: must be >= 0, got -1"),
            (json!({"mark_ecnth": 2}), "queue.mark_ecnth: must be in [0, 1], got 2"),
        ] {
            let mut p = params(v);
            assert_eq!(build(&mut p, link, &mut rng).err().expect(msg).to_string(), msg);
        }
    }
}
