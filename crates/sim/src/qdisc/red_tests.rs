//! RED's unit tests: ns-2 reference vectors and counter checks that read its private state
//! (`red.rs`), and Linux's `sch_red` rules (`rules = "linux"`, `idle_decay = false`) worked by
//! hand from include/net/red.h.
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

/// Linux's RED: the study's thresholds in bytes of 1500-B packets (7500 / 22 500 B), max_p 0.1.
fn linux_cfg() -> RedConfig {
    RedConfig { q_weight: 1e-12, limit: Size::Bytes(750_000), queue_in_bytes: true, mean_pktsize: 1500, linux: true, ..Default::default() }
}

/// `red_action` has no q > 1 guard: with the average held at 15 000 B and the queue empty at
/// every arrival, Linux drops at the law's rate: p_b = 0.1·(15 000 − 7500)/15 000 = 0.05 and the
/// drop comes at qcount = ⌈U/p_b⌉ (qR = U·15 000/0.1 against (avg − min)·qcount = 7500·qcount),
/// so the gap X is uniform on 1..=20, E[X] = 10.5, 1/E[X] = 9.52 % of the arrivals. ns-2's rules
/// (the same keys without `linux`) never drop an arrival to an empty queue.
#[test]
fn linux_drops_on_the_average_alone() {
    let drive = |c: RedConfig, n: usize| {
        let mut h = Harness::new(red(c, 10e6, 31));
        h.q.vars_mut().ave = 15_000.0;
        let mut gaps = vec![];
        let mut since = 0u64;
        for _ in 0..n {
            since += 1;
            match h.offer(Time::ZERO, 1, 1500, Ecn::NotEct) {
                Verdict::Dropped(why) => {
                    assert_eq!(why, DropReason::Early);
                    gaps.push(since);
                    since = 0;
                }
                _ => assert!(h.take(Time::ZERO).is_some()),
            }
            assert_eq!(h.q.backlog_pkts(), 0);
        }
        h.check();
        (h, gaps)
    };
    let n = 200_000;
    let (h, gaps) = drive(linux_cfg(), n);
    let frac = h.q.stats().dropped_pkts() as f64 / n as f64;
    assert!((frac - 1.0 / 10.5).abs() < 0.003, "{frac}");
    // Every gap in 1..=20 (the first counts from the arrival that only drew qR), each about 5 %.
    assert!(gaps[1..].iter().all(|&g| (1..=20).contains(&g)), "gap outside 1..=20");
    let low = gaps[1..].iter().filter(|&&g| g <= 10).count() as f64 / (gaps.len() - 1) as f64;
    assert!((low - 0.5).abs() < 0.02, "{low}");
    let ns2 = RedConfig { linux: false, wait: false, gentle: false, use_mark_p: false, ..linux_cfg() };
    let (h, _) = drive(ns2, 20_000);
    assert_eq!(h.q.stats().dropped_pkts(), 0);
}

/// The qcount states of `red_action`: below min_th −1; the first arrival between the thresholds
/// only draws qR (qcount 0, never a drop); at or above max_th every arrival is a forced drop and
/// qcount −1 — marked instead when ECT with `ecn` (Linux without harddrop marks there too).
#[test]
fn linux_qcount_states_and_forced_region() {
    let mut h = Harness::new(red(linux_cfg(), 10e6, 32));
    h.q.vars_mut().ave = 5000.0;
    assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::NotEct), Verdict::Queued);
    assert_eq!(h.q.vars().qcount, -1);
    // avg = 22 499 B, p_b just under 0.1: the first arrival still only draws.
    h.q.vars_mut().ave = 22_499.0;
    assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::NotEct), Verdict::Queued);
    assert_eq!(h.q.vars().qcount, 0);
    assert!(h.q.vars().q_r >= 0.0 && h.q.vars().q_r < 15_000.0 / 0.1);
    // (w = 1e-12 pulls 22 600 B towards the backlog by ~2e-8 B an arrival: still above max_th)
    h.q.vars_mut().ave = 22_600.0;
    for _ in 0..50 {
        assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::Ect0), Verdict::Dropped(DropReason::Forced));
        assert_eq!(h.q.vars().qcount, -1);
    }
    let mut h = Harness::new(red(RedConfig { ecn: true, ..linux_cfg() }, 10e6, 33));
    h.q.vars_mut().ave = 30_000.0;
    assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::Ect0), Verdict::Marked);
    assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::NotEct), Verdict::Dropped(DropReason::Forced));
    h.check();
}

/// The child bfifo refuses when backlog + size > limit: with a 3000-B limit and 1250-B packets
/// the third (2500 + 1250 = 3750 B) is refused, where ns-2's q ≥ limit test still takes it; a
/// packet RED itself drops is RED's drop.
#[test]
fn linux_limit_is_bfifos() {
    for (linux, kept) in [(true, 2), (false, 3)] {
        let c = RedConfig { limit: Size::Bytes(3000), linux, wait: false, use_mark_p: false, ..linux_cfg() };
        let mut h = Harness::new(red(c, 10e6, 34));
        let v: Vec<Verdict> = (0..4).map(|_| h.offer(Time::ZERO, 1, 1250, Ecn::NotEct)).collect();
        assert_eq!(v.iter().filter(|&&x| x == Verdict::Queued).count(), kept, "linux {linux}: {v:?}");
        assert_eq!(v[kept], Verdict::Dropped(DropReason::Overlimit));
        h.check();
    }
    // A packet RED drops never reaches the child: above max_th with the bfifo full it is RED's
    // (forced) drop, as sch_red counts it.
    let mut h = Harness::new(red(RedConfig { limit: Size::Bytes(3000), ..linux_cfg() }, 10e6, 36));
    h.offer(Time::ZERO, 1, 1250, Ecn::NotEct);
    h.offer(Time::ZERO, 1, 1250, Ecn::NotEct);
    h.q.vars_mut().ave = 22_600.0;
    assert_eq!(h.offer(Time::ZERO, 1, 1250, Ecn::NotEct), Verdict::Dropped(DropReason::Forced));
}

/// `idle_decay = false` (RED as HTB's child): an arrival after an idle period moves the average
/// by one EWMA step only. w = 0.25, avg 16, 10 ms idle at ptc = 4 Mbit/s / (8·500 B) = 1000 pkt/s:
/// with the decay 16·0.75^11 (m = 10); without it 16·0.75 = 12.
#[test]
fn idle_decay_off_keeps_the_average_across_idle() {
    for (decay, want) in [(true, 16.0 * 0.75f64.powi(11)), (false, 12.0)] {
        let c = RedConfig { q_weight: 0.25, limit: Size::Packets(100), idle_decay: decay, ..Default::default() };
        let mut h = Harness::new(red(c, MBIT4, 35));
        h.q.vars_mut().ave = 16.0;
        assert!(h.take(Time::ZERO).is_none());
        assert!(h.q.vars().idle);
        h.offer(Time::from_ms(10), 1, 1000, Ecn::NotEct);
        assert!((h.q.vars().ave - want).abs() < 1e-12, "decay {decay}: {} vs {want}", h.q.vars().ave);
    }
}

#[test]
fn linux_rules_refuse_ns2_only_keys() {
    let mut rng = Rng::stream(1, "c");
    let mut p = params(json!({"rules": "linux", "queue_in_bytes": true, "idle_decay": false}));
    assert!(build(&mut p, link(2_000_000), &mut rng).is_ok());
    p.finish().unwrap();
    for k in ["gentle", "wait", "use_mark_p", "bytes"] {
        let mut v = json!({"rules": "linux"});
        v[k] = json!(false);
        let mut p = params(v);
        let e = build(&mut p, link(2_000_000), &mut rng).err().expect(k).to_string();
        assert_eq!(e, format!("queue.{k}: has no meaning with rules = \"linux\" (Linux's sch_red: no gentle region, drops spaced by qcount/qR)"));
    }
    let mut p = params(json!({"rules": "bsd"}));
    assert_eq!(build(&mut p, link(2_000_000), &mut rng).err().unwrap().to_string(), "queue.rules: must be one of ns2, linux, got \"bsd\"");
}
