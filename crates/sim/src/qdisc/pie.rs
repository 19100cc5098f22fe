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
//! `rules = "linux"` (plain PIE only) follows Linux's `sch_pie` (net/sched/sch_pie.c, 6.1, with
//! its default `dq_rate_estimator` off) where it departs from the RFC: `pie_drop_early` tests the
//! last dequeue's delay (not the last update's) against target/2, spares a backlog below 2·`mtu`
//! (strictly), and de-randomises: accu_prob sums p over the arrivals that reach the draw (reset
//! to 0 when p = 0 and after every drop, the overlimit one included), never drops while it is
//! below 0.85, always from 8.5; the burst allowance shrinks at each dequeue by the time since the
//! previous one (`pie_process_dequeue`) and is re-armed only by the update (`pie_vars_init` when
//! both delays are below target/2 and p = 0); the update decays p by p/64 (not 2 %) after two
//! empty-queue updates unless the delay is 0 with a backlog (update_prob). In Linux `tupdate` is
//! in jiffies: 15 ms rounds up to 20 ms at HZ = 100.
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
/// Linux: a delay above this adds 2 % per update.
const HIGH_DELAY: Time = Time::from_ms(250);

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
    /// Linux's `sch_pie` rules (`rules = "linux"`), not the RFC's.
    pub linux: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams { target: DEFAULT_TARGET, tupdate: DEFAULT_TUPDATE, max_burst: DEFAULT_MAX_BURST, alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA, ecn: false, mark_ecnth: DEFAULT_MARK_ECNTH, mtu: DEFAULT_MTU, linux: false }
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
    /// Linux: the de-randomising sum of p, and the last dequeue's time (`dq_tstamp`).
    pub accu_prob: f64,
    pub dq_tstamp: Option<Time>,
}

impl PieVars {
    pub fn new(p: &PieParams) -> Self {
        PieVars { drop_prob: 0.0, qdelay: Time::ZERO, qdelay_old: Time::ZERO, burst_allowance: p.max_burst, next_update: p.tupdate, accu_prob: 0.0, dq_tstamp: None }
    }
}

impl PieParams {
    /// RFC 8033 §4.2 `calculate_drop_prob`, run every `tupdate` (`backlog` in bytes at that time,
    /// read by Linux's rules only).
    pub fn update(&self, v: &mut PieVars, backlog: u64) {
        if self.linux {
            return self.update_linux(v, backlog);
        }
        let cur = v.qdelay.secs_f64();
        let old = v.qdelay_old.secs_f64();
        let mut p = self.alpha * (cur - self.target.secs_f64()) + self.beta * (cur - old);
        // §4.2 auto-tuning: small steps while the probability is small.
        let dp = v.drop_prob;
        p /= tier(dp);
        // §5.5: cap the increase once p ≥ 10 %, so one spike cannot drive it to 1.
        if dp >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        // Linux: a delay above 250 ms adds 2 % per update.
        if v.qdelay > HIGH_DELAY {
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

    /// Linux's `pie_calculate_probability` without the rate estimator: the RFC's step, cap and
    /// 250 ms rule, then the p/64 decay guarded by update_prob, and `pie_vars_init` (allowance
    /// re-armed, accu_prob and dq_tstamp cleared) once the queue is calm with p = 0.
    fn update_linux(&self, v: &mut PieVars, backlog: u64) {
        let (cur, old) = (v.qdelay, v.qdelay_old);
        // "qdelay is zero and backlog is not": too small a queue to judge
        let update_prob = !(cur == Time::ZERO && backlog != 0);
        let dp = v.drop_prob;
        let mut delta = (self.alpha * (cur.secs_f64() - self.target.secs_f64()) + self.beta * (cur.secs_f64() - old.secs_f64())) / tier(dp);
        if dp >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        if cur > HIGH_DELAY {
            delta += 0.02;
        }
        let mut p = (dp + delta).clamp(0.0, 1.0);
        if cur == Time::ZERO && old == Time::ZERO && update_prob {
            p -= p / 64.0;
        }
        v.drop_prob = p;
        if cur < half(self.target) && old < half(self.target) && p == 0.0 {
            v.burst_allowance = self.max_burst;
            v.accu_prob = 0.0;
            v.dq_tstamp = None;
        }
        v.qdelay_old = cur;
    }
}

/// §4.2's auto-tuning divisor of the step by probability level (Linux's shifts of α and β).
fn tier(dp: f64) -> f64 {
    if dp < 0.000001 {
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
    }
}

impl PieParams {
    /// Runs the updates due at or before `now`; skips ahead once they stop changing anything.
    pub fn advance(&self, v: &mut PieVars, now: Time, backlog: u64) {
        while v.next_update <= now {
            let before = v.clone();
            self.update(v, backlog);
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

impl PieParams {
    /// Linux's `pie_drop_early` (the module's notes): `backlog` in bytes, `u` uniform on [0, 1).
    pub fn drop_early_linux(&self, v: &mut PieVars, backlog: u64, u: f64) -> bool {
        if v.burst_allowance > Time::ZERO {
            return false;
        }
        if (v.qdelay < half(self.target) && v.drop_prob < 0.2) || backlog < 2 * self.mtu as u64 {
            return false;
        }
        let p = v.drop_prob;
        v.accu_prob = if p == 0.0 { 0.0 } else { v.accu_prob + p };
        if v.accu_prob < 0.85 {
            return false;
        }
        if v.accu_prob >= 8.5 {
            return true;
        }
        if u < p {
            v.accu_prob = 0.0;
            return true;
        }
        false
    }

    /// What a dequeue tells the controller: the packet's sojourn (0 when it leaves the queue
    /// empty); with Linux's rules also the burst allowance's share of the time since the last
    /// dequeue (`pie_process_dequeue`).
    pub fn on_dequeue(&self, v: &mut PieVars, now: Time, enqueued: Time, empty_after: bool) {
        v.qdelay = if empty_after { Time::ZERO } else { now - enqueued };
        if self.linux {
            if let Some(last) = v.dq_tstamp {
                v.burst_allowance = v.burst_allowance.saturating_sub(now - last);
            }
            v.dq_tstamp = Some(now);
        }
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
    let mut params = read_params(p)?;
    params.linux = p.choice("rules", &["rfc8033", "linux"], Some("rfc8033"))? == "linux";
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
    Ok(PieParams { target, tupdate, max_burst, alpha, beta, ecn, mark_ecnth, mtu: mtu as u32, linux: false })
}

impl Qdisc for Pie {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Verdict {
        self.params.advance(&mut self.vars, now, self.bytes);
        let (size, ect) = {
            let pk = pool.get(id);
            (pk.size, pk.ecn.is_ect())
        };
        self.stats.on_arrival(size);
        let full = match self.limit {
            Limit::Packets(n) => self.q.len() as u64 >= n,
            Limit::Bytes(b) => self.bytes + size as u64 > b,
        };
        let linux = self.params.linux;
        if full {
            // Linux: every drop restarts the de-randomising sum
            self.vars.accu_prob = 0.0;
            self.stats.on_drop_arrival(size, DropReason::Overlimit);
            return Verdict::Dropped(DropReason::Overlimit);
        }
        let v = &mut self.vars;
        if !linux {
            self.params.rearm_burst(v);
        }
        let mut marked = false;
        let u = self.rng.uniform();
        let drop = if linux { self.params.drop_early_linux(v, self.bytes, u) } else { self.params.drop_early(v, self.bytes, u) };
        if drop {
            if self.params.ecn && ect && v.drop_prob <= self.params.mark_ecnth {
                pool.get_mut(id).ecn = Ecn::Ce;
                marked = true;
            } else {
                v.accu_prob = 0.0;
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
        self.params.advance(&mut self.vars, now, self.bytes);
        let (id, size, enq) = self.q.pop_front()?;
        self.bytes -= size as u64;
        self.stats.on_dequeue(size);
        self.params.on_dequeue(&mut self.vars, now, enq, self.q.is_empty());
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
#[path = "pie_tests.rs"]
mod tests;
