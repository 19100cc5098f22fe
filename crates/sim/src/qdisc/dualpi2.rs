//! Over 600 lines because its tests live here: the model (classification, the PI2 controller, the
//! scheduler) is the first ~480 lines; the rest are RFC 9332 / Linux fixed-point vectors that read
//! its private state.
//!
//! DualPI2 (RFC 9332, the DualQ Coupled AQM), re-implemented after Linux's `net/sched/sch_dualpi2.c`
//! (merged in 6.17). Two FIFOs share one limit: the L queue takes L4S packets (ECN field & `ecn_mask`:
//! ECT(1) and CE by default, RFC 9331 §5.1), the C queue everything else.
//!
//! - **PI2 controller** (RFC 9332 §2.5.2, Appendix A.1 `dualpi2_update`): every `tupdate` the base
//!   probability p' moves by α·(qdelay − target) + β·(qdelay − prev_qdelay), qdelay = the larger
//!   of the two queues' head sojourn times. Linux's fixed-point arithmetic is reproduced exactly:
//!   p' is a u32 with 2^32 − 1 = 100 %, α and β enter as round(Hz · 256) and are scaled to
//!   probability units per 64 ns of delay ([`scale_alpha_beta`]).
//! - **Coupling** (§2.1 eq. 1): C-queue packets are dropped (Not-ECT) or marked with p_C = p'^2
//!   (two independent rolls of p', as Linux), L-queue packets marked with p_CL = k·p' (k =
//!   `coupling_factor`, 2).
//! - **Step AQM of the L queue** (§2.5.1.1 with a step instead of a ramp, as Linux): an L4S packet
//!   whose sojourn exceeds `step_thresh` (1 ms) — or, given in packets, that leaves more than
//!   `step_thresh` packets behind it — is marked. The step and the coupled mark are independent,
//!   so p_L = max(step, p_CL) as the RFC's combining function asks.
//! - **Overload** (§2.5.1.2, Appendix A.2): once k·p' > 100 % the L queue is saturated; with
//!   `drop_overload` (default) its packets are dropped with p'^2 like Classic ones and the rest
//!   marked, and C-queue ECT packets are dropped, not marked. Without it p' is capped at 1/k and
//!   the queue grows to the limit instead (no loss for L4S traffic).
//! - **Scheduler**: Linux's weighted round robin in bytes ("C protection"), not the RFC's
//!   time-shifted FIFO example: a credit starts at mtu·(wc − wl); the L queue is served while the
//!   credit is ≤ 0 (or C is empty), each L packet sent while C waits adds wc·size, each C packet
//!   sent while L waits subtracts wl·size; wc = `classic_protection` % (10), wl = 100 − wc.
//! - **Limits**: `limit` packets (10000) and `memlimit` bytes over both queues (Linux: limit · 2 ·
//!   MTU of skb truesize; here packet bytes, so with the default it never binds first).
//! - Marks and drops happen at dequeue (Linux's default `drop_dequeue`), and never while the
//!   backlog after removing the packet is below two MTUs (Linux `must_drop`); the step mark has no
//!   such floor.
//!
//! Not modelled: tc filters and `skb->priority` classification into the L queue (only the ECN
//! field classifies), GSO splitting (packets are single segments here), the RFC's ramp and
//! `recur()` de-randomised marking (Linux rolls independent random numbers).
//!
//! The PI2 timer runs lazily: every enqueue/dequeue first runs the updates due up to `now`
//! (updates due at the instant of a packet run before it), and idle stretches are skipped.
use std::collections::VecDeque;

use super::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::config::{duration_ns, size_value, ConfigError, Params};
use crate::packet::{Ecn, PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

/// Linux `MAX_PROB`: p = 2^32 − 1 means 100 %.
pub const MAX_PROB: u32 = u32::MAX;
/// Linux `ALPHA_BETA_SHIFT − ALPHA_BETA_GRANULARITY`: gains arrive in 1/256 Hz and are kept in
/// units of 64 ns of delay.
const ALPHA_BETA_SCALING: u32 = 8 - 6;
const ALPHA_BETA_GRANULARITY: u32 = 6;

/// Linux `dualpi2_reset_default` / RFC 9332 Appendix A.1.
pub const DEFAULT_LIMIT: u64 = 10_000;
pub const DEFAULT_TARGET: Time = Time::from_ms(15);
pub const DEFAULT_TUPDATE: Time = Time::from_ms(16);
/// Hz; Linux passes round(0.16·256) = 41 ("10 dB stability margin with max_rtt = 100 ms").
pub const DEFAULT_ALPHA: f64 = 0.16;
/// Hz; Linux passes round(3.2·256) = 819.
pub const DEFAULT_BETA: f64 = 3.2;
pub const DEFAULT_STEP: StepThresh = StepThresh::Time(Time::from_ms(1));
/// k: window fairness between Reno-like Classic and DCTCP-like L4S flows at equal RTT (RFC 9332 §2.1).
pub const DEFAULT_COUPLING: u8 = 2;
/// wc in % (Linux `dualpi2_calculate_c_protection(sch, q, 10)`).
pub const DEFAULT_CLASSIC_PROTECTION: u8 = 10;
/// The simulator counts IP bytes, so an MTU is 1500 (Linux's psched_mtu adds the 14-byte Ethernet
/// header, which the packet sizes here do not carry either).
pub const DEFAULT_MTU: u32 = 1500;

/// Linux `dualpi2_scale_alpha_beta`: a gain given in 1/256 Hz to probability units (2^32 − 1 =
/// 1) per 64 ns of delay.
pub fn scale_alpha_beta(param: u32) -> u32 { (((param as u64 * MAX_PROB as u64) >> ALPHA_BETA_SCALING) / 1_000_000_000) as u32 }

/// A gain in Hz as tc passes it: round(Hz · 256).
pub fn gain_param(hz: f64) -> u32 { (hz * 256.0).round() as u32 }

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StepThresh {
    /// Mark L4S packets whose sojourn time exceeds this.
    Time(Time),
    /// Mark L4S packets that leave more than this many packets in the L queue.
    Packets(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Dualpi2Params {
    pub limit: u64,
    pub memlimit: u64,
    pub target: Time,
    pub tupdate: Time,
    /// Internal (scaled) gains, see [`scale_alpha_beta`].
    pub alpha: u32,
    pub beta: u32,
    pub step: StepThresh,
    /// Apply the step only when the L queue holds at least this many packets at enqueue.
    pub min_qlen_step: u64,
    pub coupling: u8,
    pub drop_overload: bool,
    /// Decide drops and coupled marks at enqueue instead of dequeue.
    pub drop_early: bool,
    /// wc, %.
    pub classic_protection: u8,
    /// ECN bits that classify into the L queue: 1 = ECT(1) and CE (`l4s_ect`), 3 = any ECT.
    pub ecn_mask: u8,
    pub mtu: u32,
}

impl Default for Dualpi2Params {
    fn default() -> Self {
        Dualpi2Params {
            limit: DEFAULT_LIMIT,
            memlimit: DEFAULT_LIMIT * 2 * DEFAULT_MTU as u64,
            target: DEFAULT_TARGET,
            tupdate: DEFAULT_TUPDATE,
            alpha: scale_alpha_beta(gain_param(DEFAULT_ALPHA)),
            beta: scale_alpha_beta(gain_param(DEFAULT_BETA)),
            step: DEFAULT_STEP,
            min_qlen_step: 0,
            coupling: DEFAULT_COUPLING,
            drop_overload: true,
            drop_early: false,
            classic_protection: DEFAULT_CLASSIC_PROTECTION,
            ecn_mask: 1,
            mtu: DEFAULT_MTU,
        }
    }
}

/// PI2 state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pi2Vars {
    /// p', 2^32 − 1 = 100 %.
    pub prob: u32,
    /// Queue delay at the previous update (ns).
    pub last_qdelay: u64,
    pub next_update: Time,
}

impl Dualpi2Params {
    /// Linux `calculate_probability` for the queue delay `qdelay` (ns) seen at this update.
    pub fn pi2_update(&self, v: &mut Pi2Vars, qdelay: u64) {
        let target = self.target.ns() as i64;
        let q = qdelay as i64;
        let delta = (q - target) as i128 * self.alpha as i128 + (q - v.last_qdelay as i64) as i128 * self.beta as i128;
        v.last_qdelay = qdelay;
        // Linux adds in u32 and detects the wrap; saturating is the same for any step below 100 %.
        let new = if delta > 0 {
            let d = (delta as u128 >> ALPHA_BETA_GRANULARITY).min(u32::MAX as u128) as u32;
            v.prob.saturating_add(d)
        } else {
            let d = ((-delta) as u128 >> ALPHA_BETA_GRANULARITY).min(u32::MAX as u128) as u32;
            v.prob.saturating_sub(d)
        };
        // Without drop on overload the L probability k·p' is capped at 100 % (window fairness
        // while the queue overflows instead).
        v.prob = if self.drop_overload { new } else { new.min(MAX_PROB / self.coupling as u32) };
    }

    /// The credit the WRR scheduler starts from (Linux `c_protection_init`).
    pub fn credit_init(&self) -> i64 { self.mtu as i64 * (self.classic_protection as i64 - (100 - self.classic_protection as i64)) }
}

/// DualPI2's own counters (Linux `tc_dualpi2_xstats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dualpi2Stats {
    pub packets_in_c: u64,
    pub packets_in_l: u64,
    /// Marks by the PI2 probability (coupled L marks and squared C marks).
    pub ecn_mark: u64,
    /// Marks by the L queue's step.
    pub step_marks: u64,
    /// PI2 drops (C-queue Not-ECT, overload drops).
    pub pi2_drops: u64,
    /// Largest total queue length seen at an enqueue.
    pub maxq: u64,
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    id: PktId,
    size: u32,
    ts: Time,
    apply_step: bool,
}

/// Which queue a decision is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    Classic,
    L4s,
}

pub struct Dualpi2 {
    params: Dualpi2Params,
    vars: Pi2Vars,
    l: VecDeque<Entry>,
    c: VecDeque<Entry>,
    bytes: u64,
    credit: i64,
    stats: QueueStats,
    xstats: Dualpi2Stats,
    rng: Rng,
}

pub fn build(p: &mut Params, link: LinkInfo, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let d = Dualpi2Params::default();
    let mtu = p.u64_or("mtu", link.mtu.max(1) as u64)?;
    if mtu == 0 || mtu > u32::MAX as u64 {
        return Err(p.err("mtu", format!("must be in 1..=4294967295 bytes, got {mtu}")));
    }
    let limit = match p.size_opt("limit")? {
        None => d.limit,
        Some(crate::config::Size::Packets(n)) => n,
        Some(crate::config::Size::Bytes(_)) => return Err(p.err("limit", "is in packets (\"10000pkt\"); give bytes as memlimit")),
    };
    if limit == 0 {
        return Err(p.err("limit", "must be > 0"));
    }
    let memlimit = p.bytes_opt("memlimit")?.unwrap_or(limit.saturating_mul(2 * mtu));
    if memlimit == 0 {
        return Err(p.err("memlimit", "must be > 0"));
    }
    let target = p.duration_or("target", d.target)?;
    let tupdate = p.duration_or("tupdate", d.tupdate)?;
    if tupdate == Time::ZERO {
        return Err(p.err("tupdate", "must be > 0"));
    }
    let mut gain = |key: &str, def: f64| -> Result<u32, ConfigError> {
        let hz = p.f64_or(key, def)?;
        // Linux accepts 1..=2^31 − 1 in 1/256 Hz.
        if !(hz.is_finite() && hz > 0.0 && gain_param(hz) >= 1 && (gain_param(hz) as u64) < (1 << 31)) {
            return Err(p.err(key, format!("must be in [1/256, 8388607] Hz, got {hz}")));
        }
        Ok(scale_alpha_beta(gain_param(hz)))
    };
    let alpha = gain("alpha", DEFAULT_ALPHA)?;
    let beta = gain("beta", DEFAULT_BETA)?;
    let step = match p.value_opt("step_thresh") {
        None => d.step,
        Some(serde_json::Value::String(s)) => match size_value(&s) {
            Ok((n, true)) => StepThresh::Packets(n),
            _ => match duration_ns(&s) {
                Ok(ns) if ns >= 0 => StepThresh::Time(Time(ns as u64)),
                _ => return Err(p.err("step_thresh", format!("expected a duration (\"1ms\") or packets (\"5pkt\"), got {s:?}"))),
            },
        },
        Some(v) => return Err(p.err("step_thresh", format!("expected a duration (\"1ms\") or packets (\"5pkt\"), got {v}"))),
    };
    let min_qlen_step = p.u64_or("min_qlen_step", d.min_qlen_step)?;
    let coupling = p.u64_or("coupling_factor", d.coupling as u64)?;
    if !(1..=255).contains(&coupling) {
        return Err(p.err("coupling_factor", format!("must be in 1..=255, got {coupling}")));
    }
    let drop_overload = p.bool_or("drop_overload", d.drop_overload)?;
    let drop_early = p.bool_or("drop_early", d.drop_early)?;
    let wc = p.u64_or("classic_protection", d.classic_protection as u64)?;
    if wc > 100 {
        return Err(p.err("classic_protection", format!("must be in 0..=100 (%), got {wc}")));
    }
    let ecn_mask = match p.choice("ecn_mask", &["l4s_ect", "any_ect"], Some("l4s_ect"))?.as_str() {
        "any_ect" => 3,
        _ => 1,
    };
    let params = Dualpi2Params { limit, memlimit, target, tupdate, alpha, beta, step, min_qlen_step, coupling: coupling as u8, drop_overload, drop_early, classic_protection: wc as u8, ecn_mask, mtu: mtu as u32 };
    Ok(Box::new(Dualpi2::new(params, Rng::stream(rng.next_u64(), "qdisc:dualpi2"))))
}

impl Dualpi2 {
    pub fn new(params: Dualpi2Params, rng: Rng) -> Self {
        let vars = Pi2Vars { prob: 0, last_qdelay: 0, next_update: params.tupdate };
        let credit = params.credit_init();
        Dualpi2 { params, vars, l: VecDeque::new(), c: VecDeque::new(), bytes: 0, credit, stats: QueueStats::default(), xstats: Dualpi2Stats::default(), rng }
    }
    pub fn params(&self) -> &Dualpi2Params { &self.params }
    pub fn vars(&self) -> &Pi2Vars { &self.vars }
    pub fn vars_mut(&mut self) -> &mut Pi2Vars { &mut self.vars }
    pub fn xstats(&self) -> &Dualpi2Stats { &self.xstats }
    pub fn l_len(&self) -> usize { self.l.len() }
    pub fn c_len(&self) -> usize { self.c.len() }
    /// p' as a fraction.
    pub fn prob(&self) -> f64 { self.vars.prob as f64 / MAX_PROB as f64 }

    /// Linux `get_queue_delays`: the larger head sojourn time of the two queues at `now`.
    fn qdelay(&self, now: Time) -> u64 {
        let c = self.c.front().map_or(0, |e| (now - e.ts).ns());
        let l = self.l.front().map_or(0, |e| (now - e.ts).ns());
        c.max(l)
    }

    /// Runs the PI2 updates due at or before `now`. The queues do not change between calls, so
    /// each update sees the head sojourn it would have seen at its own instant.
    fn advance(&mut self, now: Time) {
        while self.vars.next_update <= now {
            let t = self.vars.next_update;
            if self.l.is_empty() && self.c.is_empty() && self.vars.prob == 0 && self.vars.last_qdelay == 0 {
                // Fixed point: empty queues keep p' = 0.
                let k = (now - t).ns() / self.params.tupdate.ns() + 1;
                self.vars.next_update += self.params.tupdate.mul(k);
                break;
            }
            let q = self.qdelay(t);
            self.params.pi2_update(&mut self.vars, q);
            self.vars.next_update += self.params.tupdate;
        }
    }

    /// Linux `dualpi2_roll`: true with probability (prob + 1)/2^32.
    fn roll(&mut self, prob: u32) -> bool { ((self.rng.next_u64() >> 32) as u32) <= prob }

    /// Linux `must_drop` plus the marking it does on the way: the PI2 decision for a packet of
    /// `class`, with the backlog (bytes) not counting the packet. Returns true to drop; marks the
    /// packet in `pool` when it decides to mark.
    fn must_drop(&mut self, id: PktId, class: Class, backlog: u64, pool: &mut PacketPool) -> bool {
        if backlog < 2 * self.params.mtu as u64 {
            return false;
        }
        let prob = self.vars.prob;
        let local_l = prob as u64 * self.params.coupling as u64;
        let overload = local_l > MAX_PROB as u64;
        let ect = pool.get(id).ecn.is_ect();
        match class {
            Class::Classic => {
                // RFC 9332 §2.1: p_C = p'^2, two independent rolls.
                if self.roll(prob) && self.roll(prob) {
                    // Overload disables ECN (Appendix A.2: p_C ≥ p_Cmax).
                    if overload || !ect {
                        return true;
                    }
                    self.mark(id, pool);
                }
                false
            }
            Class::L4s => {
                if overload {
                    // Saturated: Classic drop with p'^2 (with drop_overload), mark the rest.
                    if self.params.drop_overload && self.roll(prob) && self.roll(prob) {
                        return true;
                    }
                    self.mark(id, pool);
                    return false;
                }
                // p_CL = k·p'.
                if self.roll(local_l as u32) {
                    if !ect {
                        return true;
                    }
                    self.mark(id, pool);
                }
                false
            }
        }
    }

    /// A PI2 mark (counted in `ecn_mark`).
    fn mark(&mut self, id: PktId, pool: &mut PacketPool) {
        if self.set_ce(id, pool) {
            self.xstats.ecn_mark += 1;
        }
    }

    /// Linux `INET_ECN_set_ce`: true for ECT and CE packets (CE stays CE). `marked_pkts` counts
    /// each packet this queue turned into CE once.
    fn set_ce(&mut self, id: PktId, pool: &mut PacketPool) -> bool {
        let p = pool.get_mut(id);
        match p.ecn {
            Ecn::NotEct => false,
            Ecn::Ce => true,
            Ecn::Ect0 | Ecn::Ect1 => {
                p.ecn = Ecn::Ce;
                self.stats.marked_pkts += 1;
                true
            }
        }
    }

    fn classify(&self, ecn: Ecn) -> Class { if ecn.bits() & self.params.ecn_mask != 0 { Class::L4s } else { Class::Classic } }

    /// Linux `dequeue_packet`: the WRR choice. Returns the entry, its class and the credit change
    /// to apply if the packet is sent.
    fn pick(&mut self) -> Option<(Entry, Class, i64)> {
        let (wc, wl) = (self.params.classic_protection as i64, 100 - self.params.classic_protection as i64);
        if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0) {
            let e = self.l.pop_front().expect("non-empty");
            let change = if self.c.is_empty() { 0 } else { wc };
            Some((e, Class::L4s, change * e.size as i64))
        } else if let Some(e) = self.c.pop_front() {
            let change = if self.l.is_empty() { 0 } else { -wl };
            Some((e, Class::Classic, change * e.size as i64))
        } else {
            self.credit = self.params.credit_init();
            None
        }
    }
}

impl Qdisc for Dualpi2 {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Verdict {
        self.advance(now);
        let (size, ecn) = {
            let p = pool.get(id);
            (p.size, p.ecn)
        };
        self.stats.on_arrival(size);
        let qlen = (self.l.len() + self.c.len()) as u64;
        if qlen >= self.params.limit || self.bytes + size as u64 > self.params.memlimit {
            self.stats.on_drop_arrival(size, DropReason::Overlimit);
            return Verdict::Dropped(DropReason::Overlimit);
        }
        let class = self.classify(ecn);
        let marked_before = self.stats.marked_pkts;
        if self.params.drop_early && self.must_drop(id, class, self.bytes, pool) {
            self.xstats.pi2_drops += 1;
            self.stats.on_drop_arrival(size, DropReason::Early);
            return Verdict::Dropped(DropReason::Early);
        }
        self.xstats.maxq = self.xstats.maxq.max(qlen);
        self.bytes += size as u64;
        self.stats.on_enqueue(size);
        match class {
            Class::L4s => {
                let apply_step = self.l.len() as u64 >= self.params.min_qlen_step;
                self.l.push_back(Entry { id, size, ts: now, apply_step });
                self.xstats.packets_in_l += 1;
            }
            Class::Classic => {
                self.c.push_back(Entry { id, size, ts: now, apply_step: false });
                self.xstats.packets_in_c += 1;
            }
        }
        if self.stats.marked_pkts > marked_before {
            Verdict::Marked
        } else {
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        self.advance(now);
        while let Some((e, class, change)) = self.pick() {
            self.bytes -= e.size as u64;
            if !self.params.drop_early && self.must_drop(e.id, class, self.bytes, pool) {
                self.xstats.pi2_drops += 1;
                self.stats.on_drop_queued(e.size, DropReason::Early);
                dropped.push((e.id, DropReason::Early));
                continue;
            }
            if class == Class::L4s && e.apply_step {
                // Linux `do_step_aqm`.
                let over = match self.params.step {
                    StepThresh::Time(t) => now - e.ts > t,
                    StepThresh::Packets(n) => self.l.len() as u64 > n,
                };
                if over {
                    if !pool.get(e.id).ecn.is_ect() {
                        self.stats.on_drop_queued(e.size, DropReason::Forced);
                        dropped.push((e.id, DropReason::Forced));
                        continue;
                    }
                    // (Linux counts a step mark in ecn_mark too; here ecn_mark is PI2's alone.)
                    if self.set_ce(e.id, pool) {
                        self.xstats.step_marks += 1;
                    }
                }
            }
            self.credit += change;
            self.stats.on_dequeue(e.size);
            return Some(e.id);
        }
        None
    }

    fn peek(&self) -> Option<PktId> {
        if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0) {
            self.l.front().map(|e| e.id)
        } else {
            self.c.front().map(|e| e.id)
        }
    }
    fn backlog_pkts(&self) -> usize { self.l.len() + self.c.len() }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "dualpi2" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testutil::{params, Harness};
    use crate::time::Rate;
    use serde_json::json;

    fn dq(p: Dualpi2Params) -> Harness<Dualpi2> { Harness::new(Dualpi2::new(p, Rng::stream(9, "dualpi2"))) }

    /// p' held at `p` (no PI2 updates during the test).
    fn pin(h: &mut Harness<Dualpi2>, p: f64) {
        let v = h.q.vars_mut();
        v.prob = (p * MAX_PROB as f64) as u32;
        v.next_update = Time::MAX;
    }

    /// Linux's fixed-point gains for tc's defaults: round(0.16·256) = 41 → ⌊⌊41·(2^32 − 1)/4⌋/1e9⌋
    /// = 44; round(3.2·256) = 819 → 879 (by hand).
    #[test]
    fn gains_scale_as_linux() {
        assert_eq!(gain_param(DEFAULT_ALPHA), 41);
        assert_eq!(gain_param(DEFAULT_BETA), 819);
        assert_eq!(scale_alpha_beta(41), 44);
        assert_eq!(scale_alpha_beta(819), 879);
        // The smallest gain does not round to 0 (the reason for the 64 ns granularity).
        assert_eq!(scale_alpha_beta(1), 1);
        let d = Dualpi2Params::default();
        assert_eq!((d.alpha, d.beta), (44, 879));
        assert_eq!(d.target, Time::from_ms(15));
        assert_eq!(d.tupdate, Time::from_ms(16));
        assert_eq!(d.coupling, 2);
        assert_eq!(d.step, StepThresh::Time(Time::from_ms(1)));
    }

    /// `calculate_probability` by hand: from p' = 0 with the queue at 30 ms, delta = 15e6·44 +
    /// 30e6·879 = 27 030 000 000, >> 6 = 422 343 750 (p' = 0.09833); RFC 9332 A.1's real-valued
    /// p' += 0.16·0.015 + 3.2·0.030 = 0.0984 (the gains round to 0.1601 and 3.1999 Hz).
    #[test]
    fn pi2_update_vectors() {
        let p = Dualpi2Params::default();
        let mut v = Pi2Vars { prob: 0, last_qdelay: 0, next_update: Time::ZERO };
        p.pi2_update(&mut v, 30_000_000);
        assert_eq!(v.prob, 422_343_750);
        assert!((v.prob as f64 / MAX_PROB as f64 - 0.0984).abs() < 0.0984 * 0.002);
        // Same delay again: only the integral term, 15e6·44 >> 6 = 10 312 500.
        p.pi2_update(&mut v, 30_000_000);
        assert_eq!(v.prob, 432_656_250);
        // Queue empties: −(15e6·44 + 30e6·879) >> 6 = −422 343 750.
        p.pi2_update(&mut v, 0);
        assert_eq!(v.prob, 10_312_500);
        p.pi2_update(&mut v, 0);
        assert_eq!(v.prob, 0);
        // Never below 0.
        p.pi2_update(&mut v, 0);
        assert_eq!(v.prob, 0);
        // At the target with no change: nothing moves.
        v.last_qdelay = 15_000_000;
        v.prob = 1000;
        p.pi2_update(&mut v, 15_000_000);
        assert_eq!(v.prob, 1000);
        // Saturates at 100 % with drop_overload, capped at 1/k without.
        v.prob = MAX_PROB - 10;
        p.pi2_update(&mut v, 1_000_000_000);
        assert_eq!(v.prob, MAX_PROB);
        let no = Dualpi2Params { drop_overload: false, ..p.clone() };
        no.pi2_update(&mut v, 1_000_000_000);
        assert_eq!(v.prob, MAX_PROB / 2);
    }

    /// The timer, lazily: a C queue standing since t = 0 is seen at 16 ms with a 16 ms head
    /// sojourn: delta = 1e6·44 + 16e6·879 = 14 108 000 000, >> 6 = 220 437 500.
    #[test]
    fn updates_see_head_sojourn() {
        let mut h = dq(Dualpi2Params::default());
        for _ in 0..10 {
            h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
        }
        h.q.advance(Time::from_ms(16) - Time(1));
        assert_eq!(h.q.vars().prob, 0);
        h.q.advance(Time::from_ms(16));
        assert_eq!(h.q.vars().prob, 220_437_500);
        assert_eq!(h.q.vars().last_qdelay, 16_000_000);
        assert_eq!(h.q.vars().next_update, Time::from_ms(32));
        // Emptied, the probability decays to 0 and a long idle stretch is skipped in O(1).
        while h.take(Time::from_ms(20)).is_some() {}
        h.q.advance(Time::from_secs(10_000_000));
        assert_eq!(h.q.vars().prob, 0);
        assert!(h.q.vars().next_update > Time::from_secs(10_000_000));
        h.check();
    }

    /// Runs `n` rounds of one C and one L arrival at t = 0 (sojourn 0: no step), serving down to
    /// a standing backlog of 20 packets after each, so that every decision is taken above the
    /// 2-MTU floor (drops at dequeue would otherwise drain it). Returns per flow (sent, CE).
    fn coupled_run(h: &mut Harness<Dualpi2>, n: usize, c_ecn: Ecn) -> ([u64; 3], [u64; 3]) {
        let (mut sent, mut ce) = ([0u64; 3], [0u64; 3]);
        for _ in 0..20 {
            h.offer(Time::ZERO, 1, 1500, Ecn::Ect0);
        }
        for _ in 0..n {
            h.offer(Time::ZERO, 1, 1500, c_ecn);
            h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
            while h.q.backlog_pkts() > 20 {
                let Some((flow, _, ecn)) = h.take(Time::ZERO) else { break };
                sent[flow as usize] += 1;
                ce[flow as usize] += (ecn == Ecn::Ce) as u64;
            }
        }
        h.check();
        (sent, ce)
    }

    /// RFC 9332 §2.1: with p' = 0.2 the C queue marks p'^2 = 4 % and the L queue k·p' = 40 %.
    /// 20 000 decisions each: the C share has a standard deviation of 0.14 points, the L share 0.35.
    #[test]
    fn coupling_squares_classic_and_scales_l4s() {
        let mut h = dq(Dualpi2Params::default());
        pin(&mut h, 0.2);
        let mut marks = [0u64; 3];
        for _ in 0..20 {
            h.offer(Time::ZERO, 1, 1500, Ecn::Ect0);
        }
        let n = 20_000;
        let mut sent = [0u64; 3];
        for _ in 0..n {
            h.offer(Time::ZERO, 1, 1500, Ecn::Ect0);
            h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
            for _ in 0..2 {
                let (flow, _, ecn) = h.take(Time::ZERO).unwrap();
                sent[flow as usize] += 1;
                if ecn == Ecn::Ce {
                    marks[flow as usize] += 1;
                }
            }
        }
        h.check();
        let c = marks[1] as f64 / sent[1] as f64;
        let l = marks[2] as f64 / sent[2] as f64;
        assert!((c - 0.04).abs() < 0.006, "C mark share {c} (p'^2 = 0.04)");
        assert!((l - 0.40).abs() < 0.015, "L mark share {l} (k·p' = 0.40)");
        assert_eq!(h.q.stats().dropped_pkts(), 0, "ECT packets are marked, not dropped");
        assert_eq!(h.q.xstats().ecn_mark, marks[1] + marks[2]);
        assert_eq!(h.q.stats().marked_pkts, marks[1] + marks[2]);
        assert_eq!(h.q.xstats().step_marks, 0);
    }

    /// Not-ECT Classic packets are dropped with p'^2 (reason `early`), at dequeue.
    #[test]
    fn classic_drops_square() {
        let mut h = dq(Dualpi2Params::default());
        pin(&mut h, 0.3);
        let (sent, ce) = coupled_run(&mut h, 20_000, Ecn::NotEct);
        let drops = h.q.stats().drops_by_reason[DropReason::Early.index()];
        assert_eq!(h.q.stats().dropped_on_arrival_pkts, 0);
        assert_eq!(drops, h.q.stats().dropped_in_queue_pkts);
        assert_eq!(drops, h.victims.len() as u64);
        // Only the 20 standing ECT(0) packets can be marked; the L queue marks k·p' = 60 %.
        assert!(ce[1] <= 20);
        assert!((ce[2] as f64 / sent[2] as f64 - 0.6).abs() < 0.02);
        let share = drops as f64 / (drops + sent[1]) as f64;
        assert!((share - 0.09).abs() < 0.008, "C drop share {share} (p'^2 = 0.09)");
    }

    /// Overload (k·p' > 1, RFC 9332 §2.5.1.2, Linux `must_drop`): with p' = 0.6 Classic ECT
    /// packets are dropped (p'^2 = 0.36), not marked; L packets too, and all the rest are marked.
    /// Without `drop_overload` no L packet is lost.
    #[test]
    fn overload_switches_to_drop() {
        for drop_overload in [true, false] {
            let mut h = dq(Dualpi2Params { drop_overload, ..Dualpi2Params::default() });
            pin(&mut h, 0.6);
            let n = 10_000u64;
            let (sent, ce) = coupled_run(&mut h, n as usize, Ecn::Ect0);
            assert_eq!(ce[1], 0, "Classic ECT is dropped, not marked, in overload");
            assert_eq!(ce[2], sent[2], "every surviving L packet is marked");
            let c_dropped = n + 20 - h.q.c_len() as u64 - sent[1];
            let l_dropped = n - h.q.l_len() as u64 - sent[2];
            assert_eq!(c_dropped + l_dropped, h.q.stats().dropped_in_queue_pkts);
            assert_eq!(h.q.xstats().pi2_drops, h.q.stats().dropped_in_queue_pkts);
            let c_share = c_dropped as f64 / (c_dropped + sent[1]) as f64;
            assert!((c_share - 0.36).abs() < 0.03, "{c_share}");
            if drop_overload {
                let l_share = l_dropped as f64 / (l_dropped + sent[2]) as f64;
                assert!((l_share - 0.36).abs() < 0.03, "{l_share}");
            } else {
                assert_eq!(l_dropped, 0);
            }
        }
    }

    /// The step: an L4S packet is marked when its sojourn exceeds 1 ms (strictly), whatever p'.
    #[test]
    fn step_marks_l_queue_above_one_ms() {
        let mut h = dq(Dualpi2Params::default());
        pin(&mut h, 0.0);
        h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
        h.offer(Time::from_us(100), 2, 1500, Ecn::Ect1);
        h.offer(Time::from_us(200), 2, 1500, Ecn::Ect1);
        h.offer(Time::from_us(300), 2, 1500, Ecn::Ect1);
        assert_eq!(h.take(Time::from_us(1000)).unwrap().2, Ecn::Ect1, "1.0 ms: not above the step");
        assert_eq!(h.take(Time::from_us(1101)).unwrap().2, Ecn::Ce, "1.001 ms");
        assert_eq!(h.take(Time::from_us(1150)).unwrap().2, Ecn::Ect1, "0.95 ms");
        assert_eq!(h.take(Time::from_us(1302)).unwrap().2, Ecn::Ce, "1.002 ms");
        assert_eq!(h.q.xstats().step_marks, 2);
        assert_eq!(h.q.xstats().ecn_mark, 0);
        assert_eq!(h.q.stats().marked_pkts, 2);
        // An already-CE packet counts as a step mark but not again in marked_pkts.
        h.offer(Time::ZERO, 2, 1500, Ecn::Ce);
        assert_eq!(h.take(Time::from_ms(5)).unwrap().2, Ecn::Ce);
        assert_eq!((h.q.xstats().step_marks, h.q.stats().marked_pkts), (3, 2));
        // Classic packets never see the step.
        h.offer(Time::ZERO, 1, 1500, Ecn::Ect0);
        assert_eq!(h.take(Time::from_ms(50)).unwrap().2, Ecn::Ect0);
        h.check();
    }

    /// The step in packets: marked while more than `step_thresh` packets stay behind in L.
    #[test]
    fn step_in_packets() {
        let mut h = dq(Dualpi2Params { step: StepThresh::Packets(2), ..Dualpi2Params::default() });
        pin(&mut h, 0.0);
        for _ in 0..5 {
            h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
        }
        let got: Vec<bool> = (0..5).map(|_| h.take(Time::from_ms(100)).unwrap().2 == Ecn::Ce).collect();
        // 4, 3, 2, 1, 0 left behind.
        assert_eq!(got, vec![true, true, false, false, false]);
        // min_qlen_step: the step applies only to packets that found ≥ 3 in L at enqueue.
        let mut h = dq(Dualpi2Params { min_qlen_step: 3, ..Dualpi2Params::default() });
        pin(&mut h, 0.0);
        for _ in 0..5 {
            h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
        }
        let got: Vec<bool> = (0..5).map(|_| h.take(Time::from_ms(100)).unwrap().2 == Ecn::Ce).collect();
        assert_eq!(got, vec![false, false, false, true, true]);
    }

    /// Classification by the ECN field: ECT(1) and CE to L; ECT(0) too with `any_ect`.
    #[test]
    fn classification() {
        let mut h = dq(Dualpi2Params::default());
        for e in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            h.offer(Time::ZERO, 1, 100, e);
        }
        assert_eq!((h.q.l_len(), h.q.c_len()), (2, 2));
        let mut h = dq(Dualpi2Params { ecn_mask: 3, ..Dualpi2Params::default() });
        for e in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            h.offer(Time::ZERO, 1, 100, e);
        }
        assert_eq!((h.q.l_len(), h.q.c_len()), (3, 1));
        assert_eq!((h.q.xstats().packets_in_l, h.q.xstats().packets_in_c), (3, 1));
    }

    /// Linux's WRR with wc = 10 %: credit starts at 1500·(10 − 90) = −120 000; each L packet sent
    /// while C waits adds 10·1500, each C packet while L waits subtracts 90·1500. So 9 L then 1 C,
    /// repeating (wl : wc); with one queue empty the other is served and the credit kept.
    #[test]
    fn wrr_serves_nine_l_per_classic() {
        let mut h = dq(Dualpi2Params::default());
        pin(&mut h, 0.0);
        for _ in 0..30 {
            h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
            h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
        }
        let order: String = (0..22).map(|_| if h.take(Time::ZERO).unwrap().0 == 2 { 'L' } else { 'C' }).collect();
        assert_eq!(order, "LLLLLLLLLCLLLLLLLLLCLL");
        // peek agrees with what dequeue serves.
        let mut h = dq(Dualpi2Params { classic_protection: 50, ..Dualpi2Params::default() });
        pin(&mut h, 0.0);
        for _ in 0..4 {
            h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
            h.offer(Time::ZERO, 2, 1500, Ecn::Ect1);
        }
        // wc = wl = 50: credit 0 → L first, then alternate.
        let mut order = String::new();
        while let Some(id) = h.q.peek() {
            let flow = h.pool.get(id).flow;
            assert_eq!(h.take(Time::ZERO).unwrap().0, flow);
            order.push(if flow == 2 { 'L' } else { 'C' });
        }
        assert_eq!(order, "LCLCLCLC");
        h.check();
    }

    /// No PI2 action while the backlog left behind is below two MTUs (Linux `must_drop`).
    #[test]
    fn no_drop_below_two_mtu() {
        let mut h = dq(Dualpi2Params::default());
        pin(&mut h, 1.0);
        for _ in 0..3 {
            h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
        }
        // Backlog after removal: 3000 (≥ 2 MTU: dropped with p'^2 = 1), then 1500, then 0.
        let got: Vec<_> = std::iter::from_fn(|| h.take(Time::ZERO)).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(h.q.stats().dropped_in_queue_pkts, 1);
        h.check();
    }

    #[test]
    fn limits() {
        let mut h = dq(Dualpi2Params { limit: 5, ..Dualpi2Params::default() });
        for i in 0..6 {
            let v = h.offer(Time::ZERO, 1, 1500, if i % 2 == 0 { Ecn::Ect1 } else { Ecn::NotEct });
            assert_eq!(v == Verdict::Dropped(DropReason::Overlimit), i == 5);
        }
        let mut h = dq(Dualpi2Params { memlimit: 3000, ..Dualpi2Params::default() });
        assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::Ect1), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 1, 1, Ecn::Ect1), Verdict::Dropped(DropReason::Overlimit));
        h.check();
        assert_eq!(Dualpi2Params::default().memlimit, 10_000 * 2 * 1500);
    }

    /// With `drop_early` the decision is taken at enqueue: a marked arrival says `Marked`.
    #[test]
    fn drop_early_marks_at_enqueue() {
        let mut h = dq(Dualpi2Params { drop_early: true, ..Dualpi2Params::default() });
        pin(&mut h, 0.5);
        for _ in 0..3 {
            h.offer(Time::ZERO, 1, 1500, Ecn::Ect0);
        }
        // k·p' = 1.0 (not > 1: no overload): every L arrival is marked.
        let v: Vec<_> = (0..50).map(|_| h.offer(Time::ZERO, 2, 1500, Ecn::Ect1)).collect();
        assert!(v.iter().all(|v| *v == Verdict::Marked), "{v:?}");
        h.check();
    }

    /// Counter identities under a random load slightly above the drain rate, all four codepoints,
    /// through the PI2 updates (not pinned), drops at dequeue and at enqueue.
    #[test]
    fn identities_under_random_load() {
        for drop_early in [false, true] {
            let mut h = dq(Dualpi2Params { limit: 60, drop_early, ..Dualpi2Params::default() });
            let mut r = Rng::stream(4, "load");
            let mut t = Time::ZERO;
            for _ in 0..100_000 {
                t += Time::from_us(r.uniform_range(0.0, 3000.0) as u64);
                if r.uniform() < 0.55 {
                    let ecn = Ecn::from_bits((r.next_u64() % 4) as u8);
                    h.offer(t, (r.next_u64() % 5) as u32, 100 + (r.next_u64() % 1400) as u32, ecn);
                } else {
                    h.take(t);
                }
                h.check();
            }
            let s = h.q.stats();
            assert!(s.dropped_pkts() > 0 && s.marked_pkts > 0, "{s:?}");
            assert_eq!(s.drops_by_reason[DropReason::Early.index()], h.q.xstats().pi2_drops);
            assert!(h.q.xstats().step_marks > 0);
        }
    }

    #[test]
    fn builder() {
        let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
        let mut rng = Rng::stream(1, "x");
        let mut p = params(json!({"limit": "1000pkt", "memlimit": "4MB", "target": "20ms", "tupdate": "16ms", "alpha": 0.16, "beta": 3.2, "step_thresh": "5pkt", "min_qlen_step": 0, "coupling_factor": 2, "drop_overload": true, "drop_early": false, "classic_protection": 10, "ecn_mask": "any_ect", "mtu": 1500}));
        assert_eq!(build(&mut p, link, &mut rng).unwrap().kind(), "dualpi2");
        p.finish().unwrap();
        let mut p = params(json!({"step_thresh": "500us"}));
        assert!(build(&mut p, link, &mut rng).is_ok());
        for (v, msg) in [
            (json!({"tupdate": "0s"}), "queue.tupdate: must be > 0"),
            (json!({"alpha": 0}), "queue.alpha: must be in [1/256, 8388607] Hz, got 0"),
            (json!({"coupling_factor": 0}), "queue.coupling_factor: must be in 1..=255, got 0"),
            (json!({"classic_protection": 101}), "queue.classic_protection: must be in 0..=100 (%), got 101"),
            (json!({"step_thresh": "5kB"}), "queue.step_thresh: expected a duration (\"1ms\") or packets (\"5pkt\"), got \"5kB\""),
            (json!({"limit": "3MB"}), "queue.limit: is in packets (\"10000pkt\"); give bytes as memlimit"),
            (json!({"ecn_mask": "ect0"}), "queue.ecn_mask: must be one of l4s_ect, any_ect, got \"ect0\""),
        ] {
            let mut p = params(v);
            assert_eq!(build(&mut p, link, &mut rng).err().expect(msg).to_string(), msg);
        }
    }
}
