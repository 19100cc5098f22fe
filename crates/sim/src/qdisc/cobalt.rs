//! COBALT (CoDel + BLUE) as Linux's `sch_cake.c` runs it on every CAKE flow queue: the CoDel half
//! (`cobalt_should_drop`) signals a flow whose sojourn time stays above target, with the control law
//! t + interval/√count on a 32-bit fixed-point 1/√count (a 16-entry cache of exact values, one
//! Newton step above), and lets `count` decay back down while the flow is calm (the "memory" that
//! replaces CoDel's 16-interval rule); the BLUE half raises a drop probability by 1/256 of the u32
//! range each time the flow overflows the memory limit (`cobalt_queue_full`) and lowers it by
//! 1/4096 each time the flow is found empty (`cobalt_queue_empty`), at most once per target.
//! CoDel marks ECT packets instead of dropping them; BLUE always drops (deliberately, as Linux).
//!
//! Times are signed nanoseconds as Linux's `ktime_t`, so "now − drop_next" keeps its sign.
use crate::time::Time;

/// Entries of the exact 1/√count cache (Linux `REC_INV_SQRT_CACHE`).
pub const REC_INV_SQRT_CACHE: usize = 16;
/// BLUE's increment per queue-full event: 1/256 of the u32 range (Linux `p_inc = 1 << 24`).
pub const P_INC: u32 = 1 << 24;
/// BLUE's decrement per queue-empty event: 1/4096 (Linux `p_dec = 1 << 20`).
pub const P_DEC: u32 = 1 << 20;

/// Linux `struct cobalt_params`, nanoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CobaltParams {
    pub interval: u64,
    pub target: u64,
    /// Serialisation time of one MTU at the shaped rate (0 when unshaped).
    pub mtu_time: u64,
    pub p_inc: u32,
    pub p_dec: u32,
}

/// Linux `struct cobalt_vars`. All zero at start (`cobalt_vars_init`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CobaltVars {
    pub count: u32,
    /// 1/√count in Q0.32.
    pub rec_inv_sqrt: u32,
    /// Next CoDel signal time; overloaded as an activity timeout when count is 0.
    pub drop_next: i64,
    pub blue_timer: i64,
    /// BLUE drop probability in Q0.32.
    pub p_drop: u32,
    pub dropping: bool,
    pub ecn_marked: bool,
}

/// What `should_drop` decided for the dequeued packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Deliver as is.
    Pass,
    /// CoDel marked it CE (the caller already set the bit): deliver.
    Marked,
    /// CoDel drop (not ECN-capable).
    CodelDrop,
    /// BLUE drop.
    BlueDrop,
}

/// Newton step x ← x/2 · (3 − count·x²) in Q0.32 (Linux `cobalt_newton_step`), with the kernel's
/// wrapping u64 arithmetic and the final truncation to u32.
pub fn newton_step(count: u32, rec_inv_sqrt: u32) -> u32 {
    let invsqrt = rec_inv_sqrt as u64;
    let invsqrt2 = (invsqrt * invsqrt) >> 32;
    let mut val = (3u64 << 32).wrapping_sub((count as u64).wrapping_mul(invsqrt2));
    val >>= 2; // avoids overflow in the next multiply
    val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
    val as u32
}

/// Linux `cobalt_cache_init`: entry 0 is ~0; each next count takes four Newton steps from the
/// previous entry. Entries 0 and 1 both sit just below 1.0 (the first signal comes one interval
/// after the first excursion).
pub fn rec_inv_sqrt_cache() -> [u32; REC_INV_SQRT_CACHE] {
    let mut c = [0u32; REC_INV_SQRT_CACHE];
    let mut v = u32::MAX;
    c[0] = v;
    for (count, slot) in c.iter_mut().enumerate().skip(1) {
        for _ in 0..4 {
            v = newton_step(count as u32, v);
        }
        *slot = v;
    }
    c
}

thread_local! {
    static CACHE: [u32; REC_INV_SQRT_CACHE] = rec_inv_sqrt_cache();
}

/// t + interval · rec_inv_sqrt / 2³² (Linux `cobalt_control` with `reciprocal_scale`).
pub fn control(t: i64, interval: u64, rec_inv_sqrt: u32) -> i64 { t + ((interval as u128 * rec_inv_sqrt as u128) >> 32) as i64 }

impl CobaltVars {
    /// Linux `cobalt_invsqrt`: exact cached value for small counts, one Newton step above.
    pub fn invsqrt(&mut self) {
        self.rec_inv_sqrt = if (self.count as usize) < REC_INV_SQRT_CACHE {
            CACHE.with(|c| c[self.count as usize])
        } else {
            newton_step(self.count, self.rec_inv_sqrt)
        };
    }

    /// Linux `cobalt_queue_full`: the flow overflowed the memory limit. BLUE steps up (at most
    /// once per target, saturating at ~0) and CoDel is put in the dropping state now. Returns true
    /// when BLUE went from quiescent to active.
    pub fn queue_full(&mut self, p: &CobaltParams, now: i64) -> bool {
        let mut up = false;
        if now - self.blue_timer > p.target as i64 {
            up = self.p_drop == 0;
            self.p_drop = self.p_drop.wrapping_add(p.p_inc);
            if self.p_drop < p.p_inc {
                self.p_drop = u32::MAX;
            }
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
        up
    }

    /// Linux `cobalt_queue_empty`: the flow was served but had nothing. BLUE steps down (at most
    /// once per target); CoDel leaves the dropping state and, once drop_next has passed, count
    /// decays by one per control-law interval. Returns true when BLUE went quiescent.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: i64) -> bool {
        let mut down = false;
        if self.p_drop != 0 && now - self.blue_timer > p.target as i64 {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer = now;
            down = self.p_drop == 0;
        }
        self.dropping = false;
        if self.count != 0 && now - self.drop_next >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
        }
        down
    }

    /// Linux `cobalt_should_drop` for a freshly dequeued packet enqueued at `enqueued`.
    /// `try_mark` sets CE on the packet if it is ECN-capable and says whether it did
    /// (`INET_ECN_set_ce`); `uniform_u32` draws BLUE's random number (only while p_drop > 0 and
    /// CoDel did not already drop). `bulk_flows` is 0 except in ingress mode.
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: i64,
        enqueued: i64,
        bulk_flows: u32,
        try_mark: impl FnOnce() -> bool,
        uniform_u32: impl FnOnce() -> u32,
    ) -> Signal {
        let sojourn = (now - enqueued) as u64;
        let mut schedule = now - self.drop_next;
        let over_target = sojourn > p.target && sojourn > p.mtu_time * bulk_flows as u64 * 2 && sojourn > p.mtu_time * 4;
        let mut next_due = self.count != 0 && schedule >= 0;
        self.ecn_marked = false;

        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = control(now, p.interval, self.rec_inv_sqrt);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }

        let mut signal = Signal::Pass;
        if next_due && self.dropping {
            // Mark if possible, otherwise drop; either way the next signal follows the law.
            self.ecn_marked = try_mark();
            signal = if self.ecn_marked { Signal::Marked } else { Signal::CodelDrop };
            self.count = self.count.wrapping_add(1);
            if self.count == 0 {
                self.count -= 1;
            }
            self.invsqrt();
            self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
            schedule = now - self.drop_next;
        } else {
            // Not dropping: count decays by one for each control-law interval gone by.
            while next_due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next = control(self.drop_next, p.interval, self.rec_inv_sqrt);
                schedule = now - self.drop_next;
                next_due = self.count != 0 && schedule >= 0;
            }
        }

        // BLUE: a plain random drop, no ECN on purpose.
        let dropped = matches!(signal, Signal::CodelDrop);
        if self.p_drop != 0 && !dropped && uniform_u32() < self.p_drop {
            signal = Signal::BlueDrop;
        }
        let dropped = matches!(signal, Signal::CodelDrop | Signal::BlueDrop);

        // drop_next doubles as an activity timeout.
        if self.count == 0 {
            self.drop_next = now + p.interval as i64;
        } else if schedule > 0 && !dropped {
            self.drop_next = now;
        }
        signal
    }
}

/// Nanoseconds of a simulator time as Linux's signed ktime.
pub fn kt(t: Time) -> i64 { t.0 as i64 }

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> CobaltParams { CobaltParams { interval: 100_000_000, target: 5_000_000, mtu_time: 0, p_inc: P_INC, p_dec: P_DEC } }

    /// Linux cobalt_invsqrt: counts below REC_INV_SQRT_CACHE = 16 read the exact cache, whatever
    /// the previous value; from 16 on, one Newton step from the previous value.
    #[test]
    fn invsqrt_reads_the_cache_below_sixteen() {
        let c = rec_inv_sqrt_cache();
        assert_eq!(c.len(), 16);
        for count in 0..16u32 {
            let mut v = CobaltVars { count, rec_inv_sqrt: 0, ..CobaltVars::default() };
            v.invsqrt();
            assert_eq!(v.rec_inv_sqrt, c[count as usize], "count {count}");
        }
        let mut v = CobaltVars { count: 16, rec_inv_sqrt: c[15], ..CobaltVars::default() };
        v.invsqrt();
        assert_eq!(v.rec_inv_sqrt, newton_step(16, c[15]));
    }

    /// cobalt_should_drop's over-target test: the sojourn must exceed the target, 2·mtu_time per
    /// bulk flow and 4·mtu_time. With target 5 ms and mtu_time 3 ms (1514 B at 4 Mbit/s is
    /// 3.028 ms) a 10 ms sojourn is under 4·3 = 12 ms: COBALT never enters dropping, however
    /// long it lasts; 12 ms + 1 ns does. With 3 bulk flows (ingress) the floor is 2·3·3 = 18 ms.
    #[test]
    fn sojourn_floor_is_four_mtu_times_and_two_per_bulk_flow() {
        let p = CobaltParams { mtu_time: 3_000_000, ..params() };
        let mut v = CobaltVars::default();
        let t0 = 1_000_000_000i64;
        for k in 0..1000 {
            let now = t0 + k * 1_000_000;
            assert_eq!(v.should_drop(&p, now, now - 10_000_000, 0, || false, || 0), Signal::Pass);
            assert!(!v.dropping, "10 ms < 4 mtu_times, at dequeue {k}");
        }
        let now = t0 + 1_000_000_000;
        v.should_drop(&p, now, now - 12_000_001, 0, || false, || 0);
        assert!(v.dropping && v.count == 1, "12 ms + 1 ns > 4 mtu_times");
        let mut w = CobaltVars::default();
        w.should_drop(&p, now, now - 18_000_000, 3, || false, || 0);
        assert!(!w.dropping, "18 ms is not over 2 · 3 bulk flows · 3 ms");
        w.should_drop(&p, now, now - 18_000_001, 3, || false, || 0);
        assert!(w.dropping);
    }

    #[test]
    fn cache_matches_the_kernel_recurrence() {
        let c = rec_inv_sqrt_cache();
        // Hand-run of cobalt_cache_init: four Newton steps per count from the previous entry.
        // Count 1 from ~0: x/2·(3 − x²) stays just below 1.
        assert_eq!(c[0], u32::MAX);
        let mut v = u32::MAX;
        for _ in 0..4 {
            v = newton_step(1, v);
        }
        assert_eq!(c[1], v);
        assert!(c[1] > 0xFFFF_0000, "{:#x}", c[1]);
        // Later entries are within 0.1 % of 2³²/√count (four steps converge).
        for (n, &x) in c.iter().enumerate().skip(2) {
            let ideal = 4294967296.0 / (n as f64).sqrt();
            assert!((x as f64 / ideal - 1.0).abs() < 1e-3, "count {n}: {x} vs {ideal}");
        }
        // 1/√4 = 0.5 exactly representable: the recurrence lands within a few ulps.
        assert!((c[4] as i64 - (1i64 << 31)).abs() < 1 << 12, "{:#x}", c[4]);
    }

    /// BLUE after n queue-full events spaced more than a target apart: p_drop = n · 2²⁴ (1/256
    /// each), saturating at 2³² − 1 from the 256th on; events closer than a target only the first.
    #[test]
    fn blue_increments_and_decrements() {
        let p = params();
        let mut v = CobaltVars::default();
        let step = 6_000_000i64; // > target
        let mut now = 10_000_000i64;
        assert!(v.queue_full(&p, now), "quiescent → active");
        assert_eq!(v.p_drop, 1 << 24);
        assert!(v.dropping && v.drop_next == now && v.count == 1);
        // A second overflow within the same target: no step.
        assert!(!v.queue_full(&p, now + 4_000_000));
        assert_eq!(v.p_drop, 1 << 24);
        for n in 2..=255u32 {
            now += step;
            v.queue_full(&p, now);
            assert_eq!(v.p_drop, n << 24, "after {n}");
        }
        now += step;
        v.queue_full(&p, now); // 256 · 2²⁴ wraps to 0 < p_inc → saturate
        assert_eq!(v.p_drop, u32::MAX);
        now += step;
        v.queue_full(&p, now);
        assert_eq!(v.p_drop, u32::MAX);
        // Empty events step down by 2²⁰ (1/4096), once per target.
        let mut v = CobaltVars { p_drop: 3 << 20, blue_timer: 0, ..Default::default() };
        let mut now = 0i64;
        assert!(!v.queue_empty(&p, now), "not more than target since the last step");
        assert_eq!(v.p_drop, 3 << 20);
        now += step;
        v.queue_empty(&p, now);
        assert_eq!(v.p_drop, 2 << 20);
        v.queue_empty(&p, now + 1);
        assert_eq!(v.p_drop, 2 << 20);
        now += step;
        v.queue_empty(&p, now);
        now += step;
        assert!(v.queue_empty(&p, now), "active → quiescent");
        assert_eq!(v.p_drop, 0);
        // Below p_dec: straight to 0.
        let mut v = CobaltVars { p_drop: 5, ..Default::default() };
        v.queue_empty(&p, 100_000_000);
        assert_eq!(v.p_drop, 0);
    }

    /// Drop times of CoDel under COBALT, one dequeue per ms (an unresponsive flow): 10 ms of
    /// packets with 1 ms sojourn, then a standing 20 ms sojourn from t = 11 ms. While calm, count = 0
    /// keeps drop_next = now + interval (activity timeout), so the excursion is not "late".
    fn drop_times(initial_ris: u32, mark: bool) -> Vec<i64> {
        let p = params();
        let mut v = CobaltVars { rec_inv_sqrt: initial_ris, ..Default::default() };
        let ms = 1_000_000i64;
        let mut out = vec![];
        for k in 1..=400i64 {
            let now = k * ms;
            let sojourn = if k <= 10 { ms } else { 20 * ms };
            let s = v.should_drop(&p, now, now - sojourn, 0, || mark, || 0);
            if s == if mark { Signal::Marked } else { Signal::CodelDrop } {
                out.push(now);
            }
        }
        out
    }

    #[test]
    fn codel_signal_times_follow_the_cached_law() {
        let c = rec_inv_sqrt_cache();
        let ms = 1_000_000i64;
        let law = |t: i64, n: usize| control(t, 100_000_000, c[n]);
        let at_ms = |t: i64| (t + ms - 1) / ms * ms;
        // A queue that went through an episode before (count decayed to 0: rec_inv_sqrt = c[0]):
        // drop_next = 11 ms + ⌊1e8·(2³²−1)/2³²⌋ = 11 ms + 99 999 999 ns → first drop at 111 ms;
        // then the law from the previous drop_next: + 1e8·c[2]/2³² (≈ 70.71 ms), + c[3] (≈ 57.74 ms).
        assert_eq!(((100_000_000u128 * c[0] as u128) >> 32) as i64, 99_999_999);
        let d = drop_times(c[0], false);
        let t1 = 11 * ms + 99_999_999;
        let t2 = law(t1, 2);
        let t3 = law(t2, 3);
        let t4 = law(t3, 4);
        assert_eq!(d[..4], [at_ms(t1), at_ms(t2), at_ms(t3), at_ms(t4)]);
        assert_eq!(d[..4], [111 * ms, 182 * ms, 240 * ms, 290 * ms]);
        // A fresh queue (Linux memsets the vars: rec_inv_sqrt = 0, so the first drop_next is "now"):
        // the first drop comes at the next dequeue, 12 ms, then the same law from 11 ms.
        let d = drop_times(0, false);
        let t2 = law(11 * ms, 2);
        assert_eq!(d[..3], [12 * ms, at_ms(t2), at_ms(law(t2, 3))]);
        assert_eq!(d[..3], [12 * ms, 82 * ms, 140 * ms]);
        // ECN-capable packets are marked on the same schedule.
        assert_eq!(drop_times(c[0], true)[..4], [111 * ms, 182 * ms, 240 * ms, 290 * ms]);
    }

    /// Below target nothing happens, and a count left from a dropping episode decays by one per
    /// control-law interval while the flow stays calm (COBALT's replacement for CoDel's memory).
    #[test]
    fn count_decays_when_calm() {
        let p = params();
        let mut v = CobaltVars { count: 5, rec_inv_sqrt: rec_inv_sqrt_cache()[5], drop_next: 0, dropping: false, ..Default::default() };
        // now = 1 s ≫ drop_next: one call walks count down while drop_next stays ≤ now.
        let s = v.should_drop(&p, 1_000_000_000, 1_000_000_000 - 1_000_000, 0, || false, || 0);
        assert_eq!(s, Signal::Pass);
        // Steps: count 4 (+50 ms), 3 (+57.7 ms), 2 (+70.7 ms), 1 (+100 ms), 0 (+100 ms) = 378 ms < 1 s.
        assert_eq!(v.count, 0);
        assert_eq!(v.drop_next, 1_000_000_000 + 100_000_000, "activity timeout = now + interval");
    }

    #[test]
    fn blue_drops_with_its_probability_and_never_marks() {
        let p = params();
        let mut v = CobaltVars { p_drop: 1 << 30, ..Default::default() }; // 1/4
        let mut x = 0x1234_5678u32;
        let mut drops = 0;
        for k in 0..40_000i64 {
            // Below target: only BLUE can act.
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let s = v.should_drop(&p, k * 1000, k * 1000, 0, || panic!("BLUE must not mark"), || x);
            if s == Signal::BlueDrop {
                drops += 1;
            }
        }
        assert!((drops as f64 / 40_000.0 - 0.25).abs() < 0.01, "{drops}");
    }

    /// Re-entry (Linux cobalt_should_drop: `next_due` is taken from the OLD drop_next before the
    /// over-target branch resets it): a flow that still holds count 4 and whose drop_next has
    /// passed signals on the FIRST over-target packet, with no interval of grace; CoDel (RFC 8289)
    /// would first wait an interval above target. Hand-run with interval 100 ms, 1/√4 = c[4] ≈ 2³¹:
    /// re-entry sets drop_next = now + 50 ms, the drop moves it on by 100 ms/√5 = 44.72 ms.
    #[test]
    fn reentry_signals_at_once_when_the_old_drop_next_has_passed() {
        let p = params();
        let c = rec_inv_sqrt_cache();
        let ms = 1_000_000i64;
        let t = 10_000 * ms;
        let state = CobaltVars { count: 4, rec_inv_sqrt: c[4], drop_next: t, ..Default::default() };
        // 1 ms after drop_next, after a stall: the 20 ms sojourn packet is dropped at once.
        let mut v = state.clone();
        let now = t + ms;
        assert_eq!(v.should_drop(&p, now, now - 20 * ms, 0, || false, || 0), Signal::CodelDrop);
        assert_eq!((v.count, v.rec_inv_sqrt, v.dropping), (5, c[5], true));
        assert_eq!(v.drop_next, control(control(now, 100_000_000, c[4]), 100_000_000, c[5]));
        let ahead = v.drop_next - now;
        assert!((94_700_000..94_750_000).contains(&ahead), "{ahead}");
        // 1 ms before drop_next: the same packet only enters the dropping state, no signal for
        // interval/√count = 50 ms.
        let mut v = state.clone();
        let now = t - ms;
        assert_eq!(v.should_drop(&p, now, now - 20 * ms, 0, || false, || 0), Signal::Pass);
        assert_eq!((v.count, v.dropping), (4, true));
        assert_eq!(v.drop_next, control(now, 100_000_000, c[4]));
        assert!((49_999_000..=50_000_000).contains(&(v.drop_next - now)), "{}", v.drop_next - now);
    }
}
