//! cake-autorate (crates/sim/src/cake_autorate.rs): the controller's rules against vectors worked
//! by hand from cake-autorate.sh v3.2.2's integer arithmetic, its `autorate` table's validation,
//! and the controller on a path (probes echoed across the links, the shaper cut below a bottleneck).
use jitterlab_sim::cake_autorate::{read_config, Controller, Load, Pinger};
use jitterlab_sim::config::Params;
use jitterlab_sim::scenario;
use serde_json::{json, Value};

fn cfg(extra: Value) -> jitterlab_sim::cake_autorate::Config {
    let mut v = json!({"pinger": "client", "reflector": "server", "min": "1000kbit", "base": "2700kbit", "max": "5000kbit", "reflectors": 1});
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let mut p = Params::new("q.autorate", &v).unwrap();
    let c = read_config(&mut p, 0, false).unwrap();
    p.finish().unwrap();
    c
}

/// Five replies of 40 ms RTT (OWD 20 ms) at t = 50..250 ms pull the 100 ms starting baseline down
/// by 0.9 a reply: 28000, 20800, 20080, 20008, 20000 µs (deltas −8000, −800, −80, −8, 0).
fn primed(c: &mut Controller) {
    for (i, b) in [28_000, 20_800, 20_080, 20_008, 20_000].into_iter().enumerate() {
        c.on_reply(50_000 * (i as i64 + 1), 0, 40_000);
        assert_eq!(c.baselines_us[0], b);
    }
}

#[test]
fn thresholds_carry_one_packets_time_at_the_rate() {
    let c = Controller::new(Some(cfg(json!({}))), None, 0);
    let d = c.dl.as_ref().unwrap();
    // set_shaper_rate: 1000 · 8 · 1500 bits / 2700 kbit/s = 4444 µs on 30 and 60 ms
    assert_eq!((d.rate_kbps, d.thr_comp_us, d.avg_thr_comp_us), (2700, 34_444, 64_444));
    // 200 ms, since 10 · 4444 µs is less
    assert_eq!(c.monitor_interval_us(), 200_000);
}

/// Bufferbloat: three replies of 240 ms RTT (OWD 120 ms) move the baseline up by 0.001 each
/// (20100, 20199, 20298) and give deltas 99900, 99801, 99702 > 34444: the third makes 3 of 6
/// delayed. The window's mean delta (−80 − 8 + 0 + 99900 + 99801 + 99702) / 6 = 49885, so
/// f = 1000 · (49885 − 34444) / (64444 − 34444) = 514 and the rate × (990000 − 514 · 240) / 10⁶:
/// 2700 · 866640 / 10⁶ = 2339. The refractory period holds the next cut until 300 ms later (strictly).
#[test]
fn bufferbloat_cuts_by_the_scripts_factor_and_waits_its_refractory_period() {
    let mut c = Controller::new(Some(cfg(json!({}))), None, 0);
    primed(&mut c);
    assert_eq!(c.on_reply(300_000, 0, 240_000), (None, None));
    assert_eq!(c.on_reply(350_000, 0, 240_000), (None, None));
    assert_eq!(c.on_reply(400_000, 0, 240_000), (Some(2339), None));
    let d = c.dl.as_ref().unwrap();
    assert_eq!((c.baselines_us[0], d.bufferbloat, d.t_last_bb_us), (20_298, true, 400_000));
    // the thresholds follow the new rate: 12000000 / 2339 = 5130 µs
    assert_eq!(d.thr_comp_us, 35_130);
    // still bloated, within 300 ms: no cut; at exactly 300 ms neither; after it, a cut
    assert_eq!(c.on_reply(450_000, 0, 240_000).0, None);
    assert_eq!(c.on_reply(700_000, 0, 240_000).0, None);
    let cut = c.on_reply(700_001, 0, 240_000).0.unwrap();
    assert!(cut < 2339, "{cut}");
}

/// A small excess (mean delta below the threshold) cuts by the minimum, × 0.99; the rate never
/// goes below `min` (2700 kbit · 0.99 = 2673 → 2700).
#[test]
fn minimum_cut_and_the_min_clamp() {
    let mut c = Controller::new(Some(cfg(json!({}))), None, 0);
    primed(&mut c);
    // OWD 70 ms: deltas 49950, 49901, 49852; mean 24919 < 34444: f = 0, 2700 · 0.99 = 2673
    for t in [300_000, 350_000] {
        c.on_reply(t, 0, 140_000);
    }
    assert_eq!(c.on_reply(400_000, 0, 140_000).0, Some(2673));
    let mut c = Controller::new(Some(cfg(json!({"min": "2700kbit"}))), None, 0);
    primed(&mut c);
    for t in [300_000, 350_000, 400_000] {
        assert_eq!(c.on_reply(t, 0, 140_000).0, None);
    }
    assert_eq!(c.dl.as_ref().unwrap().rate_kbps, 2700);
}

/// High load: a reading sets the condition from the load of the last reply, so the first reading
/// (2500 kbit/s, load 0 %) is "low"; the reply then computes 100 · 2500 / 2700 = 92 %; the next
/// reading is "high" and the next reply raises × 1.04 (2808), once per reading; the next reading and
/// reply again (2920), then the max clamp (2900). Low load afterwards: one step of × 0.99 towards
/// base a second after the last change (strictly), never past base.
#[test]
fn high_load_raises_by_its_factor_once_per_reading_and_low_load_decays_to_base() {
    let mut c = Controller::new(Some(cfg(json!({"max": "2900kbit"}))), None, 0);
    c.on_achieved(2500, 0);
    assert_eq!(c.dl.as_ref().unwrap().load, Load::Low);
    assert_eq!(c.on_reply(400_000, 0, 40_000).0, None);
    assert_eq!(c.dl.as_ref().unwrap().load_percent, 92);
    c.on_achieved(2500, 0);
    assert_eq!(c.dl.as_ref().unwrap().load, Load::High);
    assert_eq!(c.on_reply(450_000, 0, 40_000).0, Some(2808));
    assert_eq!(c.on_reply(500_000, 0, 40_000).0, None);
    c.on_achieved(2500, 0);
    assert_eq!(c.on_reply(550_000, 0, 40_000).0, Some(2900));
    // the load falls: the next reading still sees the last reply's 100 · 2500 / 2808 = 89 % (high;
    // its raise is clamped at max but restarts the decay's second), the one after is idle
    c.on_achieved(100, 0);
    assert_eq!(c.dl.as_ref().unwrap().load, Load::High);
    assert_eq!(c.on_reply(600_000, 0, 40_000).0, None);
    c.on_achieved(100, 0);
    assert_eq!(c.dl.as_ref().unwrap().load, Load::Idle);
    assert_eq!(c.on_reply(1_600_000, 0, 40_000).0, None);
    assert_eq!(c.on_reply(1_600_001, 0, 40_000).0, Some(2871));
    let mut last = 2871;
    for k in 1..=10 {
        if let Some(r) = c.on_reply(1_600_001 + k * 1_000_001, 0, 40_000).0 {
            last = r;
        }
    }
    assert_eq!(last, 2700, "stops at base");
}

/// A high load inside the bufferbloat refractory period does not raise (the script tests
/// `t > t_last_bufferbloat + 300 ms` for both).
#[test]
fn no_raise_within_the_refractory_period_of_a_cut() {
    let mut c = Controller::new(Some(cfg(json!({}))), None, 0);
    c.on_achieved(2500, 0);
    c.on_reply(100_000, 0, 40_000);
    c.on_achieved(2500, 0);
    // t_last_bb starts at the controller's start (0): 250 ms is inside
    assert_eq!(c.on_reply(250_000, 0, 40_000).0, None);
    assert_eq!(c.on_reply(300_001, 0, 40_000).0, Some(2808));
}

fn autorate_err(extra: Value) -> String {
    let mut v = json!({"pinger": "client", "reflector": "server", "min": "1000kbit", "base": "2700kbit", "max": "5000kbit"});
    v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let mut p = Params::new("access.core_queue.autorate", &v).unwrap();
    match read_config(&mut p, 0, false).and_then(|_| p.finish()) {
        Ok(()) => panic!("accepted {v}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_tables_are_refused_naming_the_key() {
    assert!(autorate_err(json!({"base": "900kbit"})).contains("access.core_queue.autorate.base"));
    assert!(autorate_err(json!({"max": "2Mbit"})).contains("autorate.max"));
    assert!(autorate_err(json!({"detection_thr": 7})).contains("autorate.detection_thr"));
    assert!(autorate_err(json!({"alpha_baseline_decrease": 1.5})).contains("autorate.alpha_baseline_decrease"));
    assert!(autorate_err(json!({"reflectors": 0})).contains("autorate.reflectors"));
    assert!(autorate_err(json!({"min": "500bit"})).contains("autorate.min"));
    assert!(autorate_err(json!({"mni": "1Mbit"})).contains("autorate.mni"));
    let mut v = json!({"pinger": "client", "reflector": "server", "min": "1000kbit", "base": "2700kbit"});
    let mut p = Params::new("x.autorate", &v).unwrap();
    assert!(read_config(&mut p, 0, false).unwrap_err().to_string().contains("x.autorate.max"));
    v["max"] = json!("3Mbit");
    v.as_object_mut().unwrap().remove("pinger");
    let mut p = Params::new("x.autorate", &v).unwrap();
    assert!(read_config(&mut p, 0, false).unwrap_err().to_string().contains("x.autorate.pinger"));
}

/// A fixed 2 Mbit/s bottleneck behind the core link, and one bulk download; CAKE on the core link
/// (in front of the bottleneck) with cake-autorate starting at 3 Mbit/s.
fn path(autorate: Value) -> Value {
    json!({
        "name": "t", "duration": "40s",
        "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "2Mbit", "down_delay": "10ms",
                   "down_queue": {"kind": "droptail", "limit": "200pkt"}, "up_rate": "1Mbit", "up_delay": "10ms",
                   "core_queue": {"kind": "cake", "autorate": autorate}},
        "traffic": [{"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "100MB", "start": "2s"}],
    })
}

fn table() -> Value { json!({"pinger": "client", "reflector": "server", "min": "1000kbit", "base": "3000kbit", "max": "5000kbit"}) }

fn pinger(sim: &jitterlab_sim::Sim) -> &Pinger {
    (0..sim.next_agent_id()).find_map(|i| sim.agent_as::<Pinger>(i)).expect("a pinger")
}

/// The probes cross the bottleneck's queue: with the shaper above the bottleneck's rate the
/// download fills the 200-packet FIFO, the replies show it, and the controller cuts the shaper
/// below 2 Mbit/s, after which the queue is CAKE's. Probes: one per 50 ms, 84 B each way, through
/// the shaper on their way back. Two runs of one seed agree (determinism).
#[test]
fn the_controller_cuts_a_shaper_above_the_bottleneck_below_it() {
    let run = |seed| {
        let mut b = scenario::build(&path(table()), seed).unwrap();
        b.sim.run_until(b.duration);
        let p = pinger(&b.sim);
        let rates = p.rates.clone();
        let last = p.ctl.dl.as_ref().unwrap().rate_kbps;
        let ul = p.ctl.ul.as_ref().map(|u| u.rate_kbps);
        (rates, last, ul, b.sim.finish())
    };
    let (rates, last, ul, t) = run(3);
    assert!(!rates.is_empty());
    assert!(rates.iter().any(|r| r.1 < 2000), "never below the bottleneck: {:?}", &rates[..rates.len().min(20)]);
    assert!(last < 2300, "{last}");
    // the upload direction (core.rev, the requests' way) carries only ACKs and probes: never
    // high load; cuts with the download's bloat (fping's OWD is RTT / 2 both ways)
    assert!(ul.is_some_and(|u| u <= 3000), "{ul:?}");
    let probe = t.flows.iter().find(|f| f.name.ends_with(".probe")).unwrap().flow_id;
    let reply = t.flows.iter().find(|f| f.name.ends_with(".reply")).unwrap().flow_id;
    let c = |f: u32| (t.flow_counters[f as usize].sent_pkts, t.flow_counters[f as usize].sent_bytes);
    // one probe every 50 ms from 0 to 40 s inclusive: 801, 84 B each; the replies, minus the last
    // ones still under way
    assert_eq!(c(probe), (801, 801 * 84));
    assert!(c(reply).0 >= 795, "{:?}", c(reply));
    let (rates2, last2, ..) = run(3);
    assert_eq!((rates, last), (rates2, last2));
}

#[test]
fn build_errors_name_the_key() {
    let err = |v: Value| scenario::build(&v, 1).err().expect("refused").to_string();
    let mut t = table();
    t["pinger"] = json!("nowhere");
    assert!(err(path(t)).contains("access.core_queue.autorate.pinger"));
    let mut v = path(table());
    v["access"]["core_queue"]["bandwidth"] = json!("3Mbit");
    assert!(err(v).contains("access.core_queue.bandwidth"));
    // a queue the probes do not cross: the uplink's, with the reflector as pinger's neighbour
    let mut v = path(table());
    v["access"]["core_queue"] = json!({"kind": "droptail", "limit": "100pkt"});
    v["access"]["down_queue"] = json!({"kind": "cake", "autorate": {"pinger": "router", "reflector": "server", "min": "1Mbit", "base": "1Mbit", "max": "1Mbit"}});
    let e = err(v);
    assert!(e.contains("access.down_queue.autorate.pinger") && e.contains("do not cross"), "{e}");
}

/// Two CAKEs with autorate between the same pinger and reflector: the one the replies cross is the
/// download's, the one on the requests' way the upload's, and their shared settings must agree; a
/// second CAKE in the same direction is refused.
#[test]
fn one_controller_per_pinger_and_reflector() {
    let t = |reflectors: u64| json!({"pinger": "c", "reflector": "s", "min": "1Mbit", "base": "2Mbit", "max": "3Mbit", "reflectors": reflectors});
    let v = |rev: Value, second: Value| json!({
        "name": "t", "duration": "2s",
        "links": {
            "a": {"from": "s", "to": "r", "rate": "100Mbit", "delay": "5ms", "queue": {"kind": "cake", "autorate": t(6)},
                  "reverse": {"queue": {"kind": "cake", "autorate": rev}}},
            "b": {"from": "r", "to": "c", "rate": "10Mbit", "delay": "5ms", "queue": second},
        },
        "traffic": [{"kind": "audio", "from": "s", "to": "c"}],
    });
    let mut b = scenario::build(&v(t(6), json!({"kind": "droptail", "limit": "100pkt"})), 1).unwrap();
    b.sim.run_until(b.duration);
    let p = pinger(&b.sim);
    assert!(p.ctl.dl.is_some() && p.ctl.ul.is_some());
    let e = scenario::build(&v(t(4), json!({"kind": "droptail", "limit": "100pkt"})), 1).err().unwrap().to_string();
    assert!(e.contains("links.a.reverse.queue") && e.contains("differ"), "{e}");
    let e = scenario::build(&v(t(6), json!({"kind": "cake", "autorate": t(6)})), 1).err().unwrap().to_string();
    assert!(e.contains("links.b.queue") && e.contains("a second CAKE"), "{e}");
}
