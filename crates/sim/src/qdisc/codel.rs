//! CoDel (RFC 8289) with Linux's `codel_dequeue` (include/net/codel_impl.h): sojourn time measured
//! at dequeue, the drop state machine, the control law t + interval/√count computed with Linux's
//! fixed-point Newton step on a 16-bit reciprocal square root, and the count memory of RFC 8289
//! §5.6 (resume near the last rate when re-entering within 16 intervals). With `ecn`, ECT packets
//! are marked CE instead of dropped (count and schedule advance the same way).
//!
//! The algorithm core ([`codel_dequeue`]) works on any [`CodelQueue`], so FQ-CoDel runs it per
//! flow. Times are nanoseconds (Linux uses 1024-ns units; the arithmetic is otherwise the same).
use std::collections::VecDeque;

use super::droptail::Limit;
use super::{try_mark, DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop};
use crate::config::{ConfigError, Params, Size};
use crate::packet::{PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

/// RFC 8289 §4.4: TARGET 5 ms.
pub const DEFAULT_TARGET: Time = Time::from_ms(5);
/// RFC 8289 §4.3: INTERVAL 100 ms.
pub const DEFAULT_INTERVAL: Time = Time::from_ms(100);
/// Linux `sch_codel` default limit (packets).
pub const DEFAULT_LIMIT: u64 = 1000;
/// Linux `psched_mtu` of an Ethernet device: 1500 + 14 bytes of link header. A queue holding no
/// more than one MTU is never dropped from (RFC 8289 §5.4 "maxpacket").
pub const DEFAULT_MTU: u32 = 1514;

/// Bits of the fixed-point reciprocal square root (Linux `REC_INV_SQRT_BITS`).
const REC_INV_SQRT_BITS: u32 = 16;
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;

#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    /// Bytes: no drop while the backlog (after taking the head) is at most this.
    pub mtu: u32,
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> Self { CodelParams { target: DEFAULT_TARGET, interval: DEFAULT_INTERVAL, mtu: DEFAULT_MTU, ecn: false } }
}

/// Linux `struct codel_vars`. `first_above_time == 0` means "not above target".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    pub count: u32,
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/√count in Q0.16.
    pub rec_inv_sqrt: u16,
    pub first_above_time: Time,
    pub drop_next: Time,
    /// Sojourn time of the last packet examined.
    pub ldelay: Time,
}

impl CodelVars {
    /// Newton step for 1/√count: x ← x/2 · (3 − count·x²), in Q0.32 (Linux `codel_Newton_step`).
    /// Wrapping arithmetic on purpose: it is what the kernel computes when count jumps.
    pub fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        val >>= 2; // avoids overflow in the next multiply
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }
}

/// t + interval · rec_inv_sqrt, i.e. t + interval/√count (Linux `codel_control_law` with
/// `reciprocal_scale`).
pub fn control_law(t: Time, interval: Time, rec_inv_sqrt: u16) -> Time {
    let scale = ((rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT) as u128;
    t + Time(((interval.0 as u128 * scale) >> 32) as u64)
}

/// A FIFO CoDel can take packets from: a whole queue, or one flow of FQ-CoDel.
pub trait CodelQueue {
    /// Removes the head: (packet, size, enqueue time). Its own byte backlog drops accordingly.
    fn pop(&mut self) -> Option<(PktId, u32, Time)>;
    /// Bytes still queued (after the pop), the backlog Linux compares with the MTU.
    fn backlog_bytes(&self) -> u64;
}

/// A plain FIFO with enqueue times.
#[derive(Default, Debug)]
pub struct Fifo {
    pub q: VecDeque<(PktId, u32, Time)>,
    pub bytes: u64,
}

impl Fifo {
    pub fn push(&mut self, id: PktId, size: u32, now: Time) {
        self.q.push_back((id, size, now));
        self.bytes += size as u64;
    }
    pub fn len(&self) -> usize { self.q.len() }
    pub fn is_empty(&self) -> bool { self.q.is_empty() }
    /// Removes the head without CoDel (FQ-CoDel's overflow drop takes heads too).
    pub fn pop_head(&mut self) -> Option<(PktId, u32, Time)> {
        let h = self.q.pop_front()?;
        self.bytes -= h.1 as u64;
        Some(h)
    }
}

impl CodelQueue for Fifo {
    fn pop(&mut self) -> Option<(PktId, u32, Time)> { self.pop_head() }
    fn backlog_bytes(&self) -> u64 { self.bytes }
}

/// Linux `codel_should_drop`: the head's sojourn time has been above target for an interval.
fn should_drop(head: Option<(PktId, u32, Time)>, q: &impl CodelQueue, p: &CodelParams, v: &mut CodelVars, now: Time) -> bool {
    let Some((_, _, enq)) = head else {
        v.first_above_time = Time::ZERO;
        return false;
    };
    v.ldelay = now.saturating_sub(enq);
    if v.ldelay < p.target || q.backlog_bytes() <= p.mtu as u64 {
        // Went (or stays) below: it must stay above for a whole interval before dropping.
        v.first_above_time = Time::ZERO;
        return false;
    }
    if v.first_above_time == Time::ZERO {
        v.first_above_time = now + p.interval;
        false
    } else {
        now > v.first_above_time
    }
}

/// One CoDel dequeue (Linux `codel_dequeue`, RFC 8289 §5.5). Dropped packets go to `dropped` and
/// are counted in `stats` (reason Codel); marks are counted. The caller counts the returned
/// packet's dequeue.
pub fn codel_dequeue(
    p: &CodelParams,
    v: &mut CodelVars,
    q: &mut impl CodelQueue,
    now: Time,
    pool: &mut PacketPool,
    stats: &mut QueueStats,
    dropped: &mut Vec<QueuedDrop>,
) -> Option<(PktId, u32)> {
    let mut head = q.pop();
    if head.is_none() {
        v.dropping = false;
        return None;
    }
    let mut drop = should_drop(head, q, p, v, now);
    if v.dropping {
        if !drop {
            // Sojourn time back below target: leave the dropping state.
            v.dropping = false;
        } else if now >= v.drop_next {
            // Time for the next drop(s); a large backlog may call for several at once.
            while v.dropping && now >= v.drop_next {
                let Some((id, size, _)) = head else { break };
                v.count = v.count.wrapping_add(1);
                v.newton_step();
                if p.ecn && try_mark(pool, id) {
                    stats.marked_pkts += 1;
                    v.drop_next = control_law(v.drop_next, p.interval, v.rec_inv_sqrt);
                    return Some((id, size));
                }
                stats.on_drop_queued(size, DropReason::Codel);
                dropped.push((id, DropReason::Codel));
                head = q.pop();
                if !should_drop(head, q, p, v, now) {
                    v.dropping = false;
                } else {
                    v.drop_next = control_law(v.drop_next, p.interval, v.rec_inv_sqrt);
                }
            }
        }
    } else if drop {
        if let Some((id, size, _)) = head {
            if p.ecn && try_mark(pool, id) {
                stats.marked_pkts += 1;
            } else {
                stats.on_drop_queued(size, DropReason::Codel);
                dropped.push((id, DropReason::Codel));
                head = q.pop();
                drop = should_drop(head, q, p, v, now);
                let _ = drop; // Linux evaluates it for its side effects (first_above_time, ldelay).
            }
        }
        v.dropping = true;
        // RFC 8289 §5.6: re-entering soon after the last dropping state, start near its rate.
        let delta = v.count.wrapping_sub(v.lastcount);
        // Signed as in the kernel: now may still be before the old drop_next.
        if delta > 1 && (now.0 as i128 - v.drop_next.0 as i128) < 16 * p.interval.0 as i128 {
            v.count = delta;
            v.newton_step();
        } else {
            v.count = 1;
            v.rec_inv_sqrt = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;
        }
        v.lastcount = v.count;
        v.drop_next = control_law(now, p.interval, v.rec_inv_sqrt);
    }
    head.map(|(id, size, _)| (id, size))
}

/// The `codel` qdisc: one FIFO with a packet (or byte) limit, CoDel at dequeue.
pub struct Codel {
    params: CodelParams,
    vars: CodelVars,
    limit: Limit,
    fifo: Fifo,
    stats: QueueStats,
}

impl Codel {
    pub fn new(params: CodelParams, limit: Limit) -> Self {
        Codel { params, vars: CodelVars::default(), limit, fifo: Fifo::default(), stats: QueueStats::default() }
    }
    pub fn vars(&self) -> &CodelVars { &self.vars }
    pub fn params(&self) -> &CodelParams { &self.params }
}

/// Reads target, interval, mtu, ecn (shared with FQ-CoDel). `interval` must exceed `target`.
pub fn read_params(p: &mut Params, d: &CodelParams) -> Result<CodelParams, ConfigError> {
    let target = p.duration_or("target", d.target)?;
    let interval = p.duration_or("interval", d.interval)?;
    let mtu = p.u64_or("mtu", d.mtu as u64)?;
    let ecn = p.bool_or("ecn", d.ecn)?;
    if target == Time::ZERO {
        return Err(p.err("target", "must be > 0"));
    }
    if interval <= target {
        return Err(p.err("interval", format!("must be > target ({target}), got {interval}")));
    }
    if interval.0 > u32::MAX as u64 * 1024 {
        return Err(p.err("interval", "must be below ~4398 s"));
    }
    if mtu == 0 || mtu > u32::MAX as u64 {
        return Err(p.err("mtu", format!("must be in 1..=4294967295 bytes, got {mtu}")));
    }
    Ok(CodelParams { target, interval, mtu: mtu as u32, ecn })
}

pub fn read_limit(p: &mut Params, default_pkts: u64) -> Result<Limit, ConfigError> {
    let limit = match p.size_opt("limit")? {
        None => Limit::Packets(default_pkts),
        Some(Size::Packets(n)) => Limit::Packets(n),
        Some(Size::Bytes(b)) => Limit::Bytes(b),
    };
    if let Limit::Packets(0) | Limit::Bytes(0) = limit {
        return Err(p.err("limit", "must be > 0"));
    }
    Ok(limit)
}

pub fn build(p: &mut Params, _link: LinkInfo, _rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let params = read_params(p, &CodelParams::default())?;
    let limit = read_limit(p, DEFAULT_LIMIT)?;
    Ok(Box::new(Codel::new(params, limit)))
}

impl Qdisc for Codel {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> super::Verdict {
        let size = pool.get(id).size;
        self.stats.on_arrival(size);
        let full = match self.limit {
            Limit::Packets(n) => self.fifo.len() as u64 >= n,
            Limit::Bytes(b) => self.fifo.bytes + size as u64 > b,
        };
        if full {
            self.stats.on_drop_arrival(size, DropReason::Overlimit);
            return super::Verdict::Dropped(DropReason::Overlimit);
        }
        self.fifo.push(id, size, now);
        self.stats.on_enqueue(size);
        super::Verdict::Queued
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        let (id, size) = codel_dequeue(&self.params, &mut self.vars, &mut self.fifo, now, pool, &mut self.stats, dropped)?;
        self.stats.on_dequeue(size);
        Some(id)
    }

    fn peek(&self) -> Option<PktId> { self.fifo.q.front().map(|h| h.0) }
    fn backlog_pkts(&self) -> usize { self.fifo.len() }
    fn backlog_bytes(&self) -> u64 { self.fifo.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "codel" }
    fn idle_dequeue_deferrable(&self) -> bool { true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testutil::{params, Harness};
    use crate::qdisc::Verdict;
    use crate::time::Rate;
    use serde_json::json;

    #[test]
    fn newton_step_reference_values() {
        // The kernel's integer recurrence from 0xffff (count 1), one step per count as in the
        // dropping state; hand-run of codel_Newton_step. Ideal 65536/√count: 46341, 37837, 32768,
        // 29309, 26755: the first step overshoots (x/2·(3 − 2x²) = 1/2 at x = 1), then converges.
        let mut v = CodelVars { count: 1, rec_inv_sqrt: 0xffff, ..Default::default() };
        let mut got = vec![];
        for c in 2..=6u32 {
            v.count = c;
            v.newton_step();
            got.push(v.rec_inv_sqrt);
        }
        assert_eq!(got, [32769, 36864, 31968, 28935, 26481]);
        // After convergence (repeated steps at a fixed count) it is within 0.1 % of 1/√count.
        let mut v = CodelVars { count: 4, rec_inv_sqrt: 0xffff, ..Default::default() };
        for _ in 0..10 {
            v.newton_step();
        }
        assert!((v.rec_inv_sqrt as f64 - 32768.0).abs() < 33.0, "{}", v.rec_inv_sqrt);
        // control law with 1/√1: interval·0xffff/65536.
        assert_eq!(control_law(Time::ZERO, Time::from_ms(100), 0xffff), Time(((100_000_000u128 * 0xffff_0000u128) >> 32) as u64));
    }

    fn codel(ecn: bool) -> Harness<Codel> {
        Harness::new(Codel::new(CodelParams { ecn, ..Default::default() }, Limit::Packets(10_000)))
    }

    /// RFC 8289 §5.6 and Linux `codel_dequeue`: on re-entering the dropping state, delta = count −
    /// lastcount; if delta > 1 and now − drop_next < 16·interval, count resumes at delta (one Newton
    /// step from the old 1/√count), otherwise count = 1 with rec_inv_sqrt = 0xffff. Either way
    /// lastcount = count and drop_next = control_law(now).
    #[test]
    fn reentry_count_memory() {
        let interval = DEFAULT_INTERVAL;
        let now = Time::from_secs(10);
        let reenter = |count: u32, lastcount: u32, intervals_since_drop_next: u64| -> CodelVars {
            let mut h = codel(false);
            for _ in 0..20 {
                h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
            }
            // Above target for long (first_above_time passed), not dropping: the next dequeue
            // drops once and enters the dropping state.
            h.q.vars = CodelVars {
                count,
                lastcount,
                dropping: false,
                rec_inv_sqrt: 20724, // ≈ 65536/√10
                first_above_time: Time::from_ms(1),
                drop_next: Time(now.0 - intervals_since_drop_next * interval.0),
                ldelay: Time::ZERO,
            };
            h.take(now);
            assert_eq!(h.q.stats().dropped_pkts(), 1);
            assert!(h.q.vars.dropping);
            h.q.vars.clone()
        };
        let resumed = |delta: u32| {
            let mut e = CodelVars { count: delta, rec_inv_sqrt: 20724, ..Default::default() };
            e.newton_step();
            e.rec_inv_sqrt
        };
        // delta = 6 within 12 intervals: resume at 6.
        let v = reenter(10, 4, 12);
        assert_eq!((v.count, v.lastcount), (6, 6));
        assert_eq!(v.rec_inv_sqrt, resumed(6));
        assert_eq!(v.drop_next, control_law(now, interval, resumed(6)));
        // 15 intervals: still remembered; exactly 16 and beyond: forgotten (strict "before").
        assert_eq!(reenter(10, 4, 15).count, 6);
        for late in [16, 17] {
            let v = reenter(10, 4, late);
            assert_eq!((v.count, v.lastcount, v.rec_inv_sqrt), (1, 1, 0xffff), "{late} intervals");
            assert_eq!(v.drop_next, control_law(now, interval, 0xffff));
        }
        // delta = 1 (one drop last time): start over even when recent.
        let v = reenter(5, 4, 2);
        assert_eq!((v.count, v.rec_inv_sqrt), (1, 0xffff));
        // delta = 2: the smallest remembered count.
        assert_eq!(reenter(6, 4, 2).count, 2);
    }

    #[test]
    fn no_drops_below_target() {
        let mut h = codel(false);
        // Sojourn 4 ms < 5 ms target on every packet, for 10 s.
        let mut t = Time::ZERO;
        for _ in 0..5 {
            h.offer(t, 1, 1500, Ecn::NotEct);
        }
        for _ in 0..10_000 {
            t += Time::from_us(800);
            h.offer(t, 1, 1500, Ecn::NotEct);
            assert!(h.take(t).is_some());
        }
        assert_eq!(h.q.stats().dropped_pkts(), 0);
        h.check();
    }

    /// A standing queue whose sojourn time stays above target: the first drop comes one interval
    /// after the head first exceeds target, then drops follow interval/√count.
    #[test]
    fn drop_schedule_follows_control_law() {
        let mut h = codel(false);
        // Packets every 1 ms, link takes one every 1 ms, standing backlog of 20 → sojourn ≈ 20 ms.
        let ms = Time::from_ms(1);
        let mut t = Time::ZERO;
        for _ in 0..20 {
            h.offer(t, 1, 1500, Ecn::NotEct);
        }
        let mut drop_times = vec![];
        let mut prev_drops = 0;
        for _ in 0..2000 {
            t += ms;
            h.offer(t, 1, 1500, Ecn::NotEct);
            // Keep the backlog standing: refill what CoDel drops (an unresponsive sender).
            while h.q.backlog_pkts() < 21 {
                h.offer(t, 1, 1500, Ecn::NotEct);
            }
            h.take(t);
            let d = h.q.stats().dropped_pkts();
            if d > prev_drops {
                assert_eq!(d, prev_drops + 1, "one drop per dequeue at these rates");
                drop_times.push(t);
                prev_drops = d;
            }
            h.check();
        }
        // The dequeue at t ms takes a packet enqueued at 0 (sojourn t ms) until the initial 20 are
        // gone, then ones with sojourn ≈ 20 ms. Sojourn reaches target at t = 5 ms:
        // first_above_time = 105 ms; the first drop is at the first dequeue strictly after it.
        assert_eq!(drop_times[0], Time::from_ms(106));
        // Then drop_next = t0 + interval·rec_inv_sqrt(count) with the kernel's integer values; each
        // drop happens at the first 1-ms dequeue at or after drop_next.
        let mut v = CodelVars { count: 1, rec_inv_sqrt: 0xffff, ..Default::default() };
        let mut next = control_law(drop_times[0], DEFAULT_INTERVAL, v.rec_inv_sqrt);
        for (k, &got) in drop_times.iter().enumerate().skip(1) {
            let at = Time(next.0.div_ceil(1_000_000) * 1_000_000);
            assert_eq!(got, at, "drop {k}");
            v.count += 1;
            v.newton_step();
            next = control_law(next, DEFAULT_INTERVAL, v.rec_inv_sqrt);
        }
        // Hand check of the first gaps: 100 ms·(1 − 2⁻¹⁶) ≈ 99.998 ms, then ≈ 50 ms (one Newton
        // step from x = 1 at count 2 gives x/2·(3 − 2x²) = 1/2, not 1/√2), then ≈ 56 ms
        // (x = 1/2 at count 3: 1/4·(3 − 3/4) = 0.5625), converging to 100 ms/√count.
        assert_eq!(drop_times[1], Time::from_ms(206));
        assert_eq!(drop_times[2], Time::from_ms(256));
        assert_eq!(drop_times[3], Time::from_ms(313));
        let gaps: Vec<f64> = drop_times.windows(2).map(|w| (w[1] - w[0]).secs_f64()).collect();
        // Late gaps follow 100 ms/√count within a couple of ms of 1-ms granularity.
        let n = drop_times.len();
        assert!(n > 30);
        let expect_late = 0.1 / (n as f64).sqrt();
        assert!((gaps[n - 2] - expect_late).abs() < 0.003, "{} vs {expect_late}", gaps[n - 2]);
    }

    #[test]
    fn leaves_dropping_state_when_queue_drains() {
        let mut h = codel(false);
        let mut t = Time::ZERO;
        for _ in 0..30 {
            h.offer(t, 1, 1500, Ecn::NotEct);
        }
        // Drain slowly: 1 packet per 10 ms with sojourn far above target.
        for _ in 0..30 {
            t += Time::from_ms(10);
            h.take(t);
        }
        assert!(h.q.stats().dropped_pkts() > 0);
        while h.take(t).is_some() {}
        assert!(!h.q.vars().dropping);
        assert_eq!(h.q.backlog_pkts(), 0);
        h.check();
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut h = codel(true);
        let ms = Time::from_ms(1);
        let mut t = Time::ZERO;
        for _ in 0..20 {
            h.offer(t, 1, 1500, Ecn::Ect0);
        }
        let mut ce = 0;
        for _ in 0..1000 {
            t += ms;
            h.offer(t, 1, 1500, Ecn::Ect0);
            if let Some((_, _, Ecn::Ce)) = h.take(t) {
                ce += 1;
            }
        }
        let s = h.q.stats();
        assert_eq!(s.dropped_pkts(), 0);
        assert!(s.marked_pkts > 5 && s.marked_pkts == ce, "{} {ce}", s.marked_pkts);
        h.check();
        // Non-ECT packets are still dropped with ecn on.
        let mut h = codel(true);
        let mut t = Time::ZERO;
        for _ in 0..20 {
            h.offer(t, 1, 1500, Ecn::NotEct);
        }
        for _ in 0..1000 {
            t += ms;
            h.offer(t, 1, 1500, Ecn::NotEct);
            h.take(t);
        }
        assert!(h.q.stats().dropped_pkts() > 5);
        assert_eq!(h.q.stats().marked_pkts, 0);
        h.check();
    }

    #[test]
    fn small_backlog_is_never_dropped() {
        // One MTU or less left behind the head: no drop however old the head is.
        let mut h = codel(false);
        h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
        h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
        assert!(h.take(Time::from_secs(1)).is_some());
        assert!(h.take(Time::from_secs(2)).is_some());
        assert_eq!(h.q.stats().dropped_pkts(), 0);
    }

    #[test]
    fn limit_and_builder() {
        let mut h = Harness::new(Codel::new(CodelParams::default(), Limit::Packets(2)));
        assert_eq!(h.offer(Time::ZERO, 1, 100, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 1, 100, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 1, 100, Ecn::NotEct), Verdict::Dropped(DropReason::Overlimit));
        h.check();
        let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
        let mut rng = Rng::stream(1, "x");
        let mut p = params(json!({"target": "5ms", "interval": "100ms", "limit": "1000pkt", "ecn": true, "mtu": 1514}));
        let q = build(&mut p, link, &mut rng).unwrap();
        p.finish().unwrap();
        assert_eq!(q.kind(), "codel");
        for (v, msg) in [
            (json!({"target": "0ms"}), "queue.target: must be > 0"),
            (json!({"target": "200ms"}), "queue.interval: must be > target (0.200000000s), got 0.100000000s"),
            (json!({"limit": "0pkt"}), "queue.limit: must be > 0"),
            (json!({"ecn": 1}), "queue.ecn: expected true or false, got 1"),
        ] {
            let mut p = params(v);
            assert_eq!(build(&mut p, link, &mut rng).err().expect(msg).to_string(), msg);
        }
    }
}
