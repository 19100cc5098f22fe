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
//!
//! `rules = "linux"` decides as Linux's `sch_red` (`red_enqueue`; `red_action` and
//! `red_mark_probability` in include/net/red.h) instead of step 3: no q > 1 guard (the kernel drops
//! on the average alone, an empty queue included); below min_th qcount = −1; between the
//! thresholds the first arrival only draws qR uniform on [0, (max_th − min_th)/max_p) and each later
//! one drops (or marks ECT with `ecn`) once (avg − min_th)·qcount ≥ qR, then qcount = 0 and a new
//! qR; at or above max_th every arrival is dropped (marked when ECT with `ecn`: no harddrop) and
//! qcount = −1. The child bfifo drops when backlog + size > limit, leaving qcount alone.
//! `idle_decay = false` skips step 1: `red_dequeue` starts the idle period only when its child is
//! empty, and HTB (`htb_dequeue_tree`) never dequeues an empty class, so RED as HTB's child never
//! sees an idle period and its average moves at arrivals only.
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
    /// Decide as Linux's `sch_red` (`rules = "linux"`), not ns-2.
    pub linux: bool,
    /// Correct the average for idle periods (step 1); false as a child of HTB.
    pub idle_decay: bool,
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
    /// Linux's `qcount` (−1 below min_th or after a forced drop) and `qR` (in the queue's unit).
    pub qcount: i64,
    pub q_r: f64,
}

impl Default for RedVars {
    // ns-2 `reset()` at time 0: the queue starts idle.
    fn default() -> Self { RedVars { ave: 0.0, count: 0, count_bytes: 0, old: false, idle: true, idle_since: Time::ZERO, prob1: 0.0, prob: 0.0, qcount: -1, q_r: 0.0 } }
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
    pub linux: bool,
    pub idle_decay: bool,
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
            linux: false,
            idle_decay: true,
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
            linux: c.linux,
            idle_decay: c.idle_decay,
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
            if self.idle_decay {
                // ns-2: m = int(ptc · idle time).
                let idle_s = now.saturating_sub(v.idle_since).secs_f64();
                let x = self.ptc * idle_s;
                m = if x >= u64::MAX as f64 { u64::MAX } else { x as u64 };
            }
        }
        v.ave = self.estimate(v.ave, q as f64, m);
        if self.linux {
            return self.linux_action(v, q, size, ect, rng);
        }
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

impl RedParams {
    /// Linux's `red_action` on the updated average (see the module's notes), then the child
    /// bfifo's limit. `red_random`: qR = U·(max_th − min_th)/max_p, so the drop comes at
    /// qcount = ⌈U/p_b⌉ for a steady p_b, the gap uniform on [1, 1/p_b] as ns-2 without `wait`.
    fn linux_action(&self, v: &mut RedVars, q: u64, size: u32, ect: bool, rng: &mut Rng) -> Action {
        let ave = v.ave;
        let signal = |why| if self.ecn && ect { Action::Mark } else { Action::Drop(why) };
        let action = if ave < self.th_min {
            v.qcount = -1;
            Action::Enqueue
        } else if ave >= self.th_max {
            v.qcount = -1;
            signal(DropReason::Forced)
        } else {
            v.qcount += 1;
            let draw = |rng: &mut Rng| rng.uniform() * (self.th_max - self.th_min) / self.max_p;
            if v.qcount == 0 {
                v.q_r = draw(rng);
                Action::Enqueue
            } else if (ave - self.th_min) * v.qcount as f64 >= v.q_r {
                v.qcount = 0;
                v.q_r = draw(rng);
                signal(DropReason::Early)
            } else {
                Action::Enqueue
            }
        };
        // A packet RED keeps meets the child: bfifo_enqueue takes it while backlog + len ≤ limit
        // (bytes), pfifo while qlen < limit. One RED drops never reaches the child.
        let over = if self.queue_in_bytes { q + size as u64 > self.limit } else { q >= self.limit };
        match action {
            Action::Drop(_) => action,
            _ if over => Action::Drop(DropReason::Overlimit),
            _ => action,
        }
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
    let linux = p.choice("rules", &["ns2", "linux"], Some("ns2"))? == "linux";
    if linux {
        // Linux's sch_red has none of these ns-2 rules: a scenario that sets one would not mean it.
        for k in ["gentle", "wait", "use_mark_p", "mark_p", "bytes"] {
            if p.has(k) {
                return Err(p.err(k, "has no meaning with rules = \"linux\" (Linux's sch_red: no gentle region, drops spaced by qcount/qR)"));
            }
        }
    }
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
        linux,
        idle_decay: p.bool_or("idle_decay", d.idle_decay)?,
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
#[path = "red_tests.rs"]
mod tests;
