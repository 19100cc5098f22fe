//! PIE's unit tests (`pie.rs`): RFC 8033's rules worked by hand, and Linux's `sch_pie` rules
//! (`rules = "linux"`) from net/sched/sch_pie.c's arithmetic.
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
    p.update(&mut v, 0);
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
    h.q.params.advance(&mut h.q.vars, Time::from_ms(150), 0);
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
    p.advance(&mut v, Time::from_secs(10), 0);
    assert_eq!(v.drop_prob, 0.0);
    // A very long idle period costs little.
    p.advance(&mut v, Time::from_secs(10_000_000), 0);
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
        p.update(&mut v, 0);
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
        p.update(&mut v, 0);
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

/// Linux's rules with the updates out of the way (tupdate 1000 s) and `mtu` in IP bytes.
fn linux() -> PieParams { PieParams { linux: true, tupdate: Time::from_secs(1000), mtu: 1500, ..PieParams::default() } }

/// `pie_drop_early`'s de-randomisation at p = 0.3: accu_prob = 0.3, 0.6 (< 0.85: never), then a
/// draw per arrival, and from the 29th arrival after a drop (8.7 ≥ 8.5) always. So u = 0 (a drop
/// wherever a draw is made) drops every 3rd arrival and u = 0.99 every 29th.
#[test]
fn linux_derandomises_drops() {
    let p = linux();
    for (u, every) in [(0.0, 3), (0.99, 29)] {
        let mut v = PieVars::new(&p);
        (v.drop_prob, v.qdelay, v.burst_allowance) = (0.3, Time::from_ms(100), Time::ZERO);
        for n in 1..=3 * every {
            let drop = p.drop_early_linux(&mut v, 100_000, u);
            assert_eq!(drop, n % every == 0, "u {u}, arrival {n}");
            if drop {
                // the caller (enqueue) restarts the sum after any drop
                v.accu_prob = 0.0;
            }
        }
    }
    // p = 0 clears the sum.
    let mut v = PieVars::new(&p);
    (v.drop_prob, v.qdelay, v.burst_allowance, v.accu_prob) = (0.0, Time::from_ms(100), Time::ZERO, 5.0);
    assert!(!p.drop_early_linux(&mut v, 100_000, 0.0));
    assert_eq!(v.accu_prob, 0.0);
}

/// Through the queue at p = 0.3: after a drop arrivals 1 and 2 pass, 3..=28 are dropped with
/// probability 0.3 each, the 29th always, so E[X] = 3 + Σ_{j=1}^{26} 0.7^j ≈ 5.333 arrivals per
/// drop (18.75 % dropped) where the RFC's independent draws drop 30 %.
#[test]
fn linux_drop_fraction_follows_the_derandomised_law() {
    let ex = 3.0 + (1..=26).map(|j| 0.7f64.powi(j)).sum::<f64>();
    assert!((ex - 5.33311).abs() < 1e-4, "{ex}");
    for (params, want) in [(linux(), 1.0 / ex), (PieParams { tupdate: Time::from_secs(1000), ..PieParams::default() }, 0.3)] {
        let mut h = pie(params);
        for _ in 0..3 {
            h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
        }
        {
            let v = h.q.vars_mut();
            (v.drop_prob, v.qdelay, v.qdelay_old, v.burst_allowance) = (0.3, Time::from_ms(100), Time::from_ms(100), Time::ZERO);
        }
        let n = 60_000;
        for _ in 0..n {
            h.offer(Time::from_ms(1), 1, 1500, Ecn::NotEct);
        }
        let frac = h.q.stats().dropped_pkts() as f64 / n as f64;
        assert!((frac - want).abs() < 0.006, "{frac} vs {want}");
        h.check();
    }
}

/// Linux's safeguard reads the last dequeue's delay (not the last update's) and spares a backlog
/// strictly below 2·mtu (3000 B here); a drop of any kind restarts accu_prob.
#[test]
fn linux_safeguard_uses_the_current_delay() {
    let p = linux();
    let mut v = PieVars::new(&p);
    (v.drop_prob, v.qdelay, v.qdelay_old, v.burst_allowance, v.accu_prob) = (0.19, Time::from_ms(7), Time::from_ms(100), Time::ZERO, 1.0);
    assert!(!p.drop_early_linux(&mut v, 100_000, 0.0), "7 ms < 7.5 ms");
    assert!(p.drop_early(&v, 100_000, 0.0), "the RFC reads qdelay_old (100 ms)");
    (v.qdelay, v.qdelay_old) = (Time::from_ms(8), Time::ZERO);
    assert!(p.drop_early_linux(&mut v, 100_000, 0.0));
    v.accu_prob = 1.0;
    assert!(!p.drop_early_linux(&mut v, 2999, 0.0), "below two MTUs");
    assert!(p.drop_early_linux(&mut v, 3000, 0.0), "two MTUs are not below two MTUs");
    // An overlimit drop clears the sum too (sch_pie's `out:` path).
    let mut h = Harness::new(Pie::new(linux(), Limit::Packets(1), Rng::stream(5, "pie")));
    h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
    h.q.vars_mut().accu_prob = 3.0;
    assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::NotEct), Verdict::Dropped(DropReason::Overlimit));
    assert_eq!(h.q.vars().accu_prob, 0.0);
}

/// `pie_calculate_probability` by hand: from p = 0.3 with both delays 0 the step is
/// α·(0 − 0.015) = −0.001875 → 0.298125, then p −= p/64 → 0.293466796875 (the RFC's 2 % gives
/// 0.2921625); with a backlog but qdelay 0 (update_prob false) no decay: 0.298125. The burst
/// allowance is not spent by updates; once p = 0 with both delays below 7.5 ms `pie_vars_init`
/// re-arms it (150 ms) and clears accu_prob and dq_tstamp.
#[test]
fn linux_update_decay_and_reinit() {
    let p = PieParams { linux: true, ..PieParams::default() };
    let step = |backlog: u64| {
        let mut v = PieVars::new(&p);
        (v.drop_prob, v.burst_allowance) = (0.3, Time::from_ms(40));
        p.update(&mut v, backlog);
        assert_eq!(v.burst_allowance, Time::from_ms(40));
        v.drop_prob
    };
    assert!((step(0) - 0.293466796875).abs() < 1e-15, "{}", step(0));
    assert!((step(3000) - 0.298125).abs() < 1e-15, "{}", step(3000));
    let mut v = PieVars::new(&p);
    (v.drop_prob, v.qdelay, v.qdelay_old, v.burst_allowance, v.accu_prob, v.dq_tstamp) =
        (1e-9, Time::from_ms(2), Time::from_ms(3), Time::ZERO, 0.5, Some(Time::from_ms(9)));
    p.update(&mut v, 3000);
    assert_eq!((v.drop_prob, v.burst_allowance, v.accu_prob, v.dq_tstamp), (0.0, Time::from_ms(150), 0.0, None));
    assert_eq!(v.qdelay_old, Time::from_ms(2));
}

/// `pie_process_dequeue`: the allowance shrinks by the time between dequeues, from the second
/// dequeue on (150 → 135 → 120 ms for dequeues at 10, 25 and 40 ms); qdelay is the sojourn, 0 for
/// the packet that empties the queue.
#[test]
fn linux_burst_allowance_spent_between_dequeues() {
    let mut h = pie(linux());
    for _ in 0..3 {
        h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
    }
    let mut seen = vec![];
    for ms in [10, 25, 40] {
        h.take(Time::from_ms(ms));
        seen.push((h.q.vars().burst_allowance, h.q.vars().qdelay));
    }
    assert_eq!(seen, [(Time::from_ms(150), Time::from_ms(10)), (Time::from_ms(135), Time::from_ms(25)), (Time::from_ms(120), Time::ZERO)]);
    // The RFC's rules spend it per update instead: untouched by these dequeues.
    let mut h = pie(PieParams { tupdate: Time::from_secs(1000), ..PieParams::default() });
    h.offer(Time::ZERO, 1, 1500, Ecn::NotEct);
    h.take(Time::from_ms(40));
    assert_eq!(h.q.vars().burst_allowance, Time::from_ms(150));
}

#[test]
fn rules_key() {
    let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
    let mut rng = Rng::stream(1, "x");
    let mut p = params(json!({"rules": "linux", "tupdate": "20ms", "mtu": 1500}));
    build(&mut p, link, &mut rng).unwrap();
    p.finish().unwrap();
    let mut p = params(json!({"rules": "bsd"}));
    assert_eq!(build(&mut p, link, &mut rng).err().unwrap().to_string(), "queue.rules: must be one of rfc8033, linux, got \"bsd\"");
}
