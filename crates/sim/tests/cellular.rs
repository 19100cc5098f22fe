//! The cellular model: its mean, its HARQ/RLC delays, determinism, key-naming errors, and that a
//! run over `cellular = {…}` equals a run over the trace the model writes.
use jitterlab_sim::cellular::{self, Block, CellularParams, Generator};
use jitterlab_sim::config::Params;
use jitterlab_sim::link::OPPORTUNITY_BYTES;
use jitterlab_sim::scenario;
use serde_json::{json, Value};

fn params(v: Value) -> CellularParams {
    let mut p = Params::new("", &v).unwrap();
    let c = CellularParams::parse(&mut p).unwrap();
    p.finish().unwrap();
    c
}

/// Mean capacity of the generated opportunities against the configured mean. The tolerance is
/// four standard deviations of the time average: the channel's ln C is AR(1) with correlation
/// ρ = e^(−TTI/coherence), and any function of a Gaussian AR(1) has autocorrelation ≤ ρ^lag, so
/// Var(mean) ≤ [Var(C)·(1+ρ)/(1−ρ) + E[C²]·(1−share)/share] / N; clipping only lowers Var(C), so
/// the unclipped lognormal's (e^σ² − 1)·e^(2μ+σ²) bounds it, and so does (max − min)²/4.
fn check_mean(v: Value, seconds: u64) {
    let p = params(v);
    let mu = p.location().unwrap();
    let horizon_ms = seconds * 1000;
    let n = (horizon_ms / p.tti_ms) as f64;
    let got = cellular::stamps(&p, 7, "bottleneck", horizon_ms).len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / seconds as f64;
    let rho = (-(p.tti_ms as f64) / p.coherence_ms).exp();
    let var_c = (((p.sigma * p.sigma).exp() - 1.0) * (2.0 * mu + p.sigma * p.sigma).exp()).min((p.max_bps - p.min_bps).powi(2) / 4.0);
    let var_mean = (var_c * (1.0 + rho) / (1.0 - rho) + (var_c + p.mean_bps * p.mean_bps) * (1.0 - p.share) / p.share) / n;
    let tol = 4.0 * var_mean.sqrt();
    assert!((got - p.mean_bps).abs() < tol, "mean {got:.0} bit/s, configured {:.0}, tolerance {tol:.0}", p.mean_bps);
    assert!(tol < 0.03 * p.mean_bps, "the run is long enough to mean something: tolerance {tol:.0}");
}

#[test]
fn long_run_mean_capacity_is_the_configured_mean() {
    check_mean(json!({}), 10_000);
    // Heavy clipping: the location solving E[clip(e^X)] = mean matters here (the unclipped
    // lognormal's μ = ln mean − σ²/2 would give ≈ 3.6 Mbit/s).
    check_mean(json!({"mean_rate": "3.3Mbit", "min_rate": "2Mbit", "max_rate": "5Mbit", "sigma": 1.0, "coherence": "200ms", "share": 0.3}), 3000);
}

#[test]
fn clipped_location_is_not_the_unclipped_one() {
    let p = params(json!({"mean_rate": "3.3Mbit", "min_rate": "2Mbit", "max_rate": "5Mbit", "sigma": 1.0}));
    let naive = (3.3e6f64).ln() - 0.5;
    let naive_mean = cellular::clipped_lognormal_mean(naive, 1.0, 2e6, 5e6);
    assert!((naive_mean - 3.3e6).abs() > 2e5, "{naive_mean}");
    assert!((cellular::clipped_lognormal_mean(p.location().unwrap(), 1.0, 2e6, 5e6) - 3.3e6).abs() < 1.0);
}


#[test]
fn harq_delays_are_whole_rounds_and_rlc_delivers_in_order() {
    let p = params(json!({"bler": 0.3, "bler_retx": 0.2, "harq_rtt": "8ms", "harq_max_tx": 3, "rlc_delay": "40ms"}));
    let mut g = Generator::new(&p, 3, "bottleneck");
    let phase = g.phase_ms;
    let bs: Vec<Block> = (0..200_000).map(|_| g.step()).collect();
    let mut prev = 0;
    let (mut sent, mut first_fail, mut rlc) = (0u64, 0u64, 0u64);
    for b in &bs {
        let end = (b.tti + 1) * 2 + phase;
        if b.opps > 0 {
            sent += 1;
            // The block's own delay: whole HARQ rounds plus whole RLC retransmissions.
            assert_eq!(b.own_ms - end, b.harq_retx as u64 * 8 + b.rlc_retx as u64 * 40, "{b:?}");
            if b.harq_retx > 0 || b.rlc_retx > 0 {
                first_fail += 1;
            }
            rlc += b.rlc_retx as u64;
            // In-order delivery: never before the block before it, and no later than needed.
            assert_eq!(b.delivered_ms, b.own_ms.max(prev), "{b:?}");
            prev = b.delivered_ms;
        } else {
            assert_eq!((b.harq_retx, b.rlc_retx), (0, 0));
        }
    }
    // First transmissions fail with bler = 0.3; HARQ gives up after 3 transmissions with
    // probability 0.3 · 0.2 · 0.2 = 0.012 per block (binomial sd over ~100k blocks: < 0.002, 0.0004).
    let f = first_fail as f64 / sent as f64;
    let r = rlc as f64 / sent as f64;
    assert!(sent > 50_000, "{sent}");
    assert!((f - 0.3).abs() < 0.01, "first-transmission failures {f}");
    assert!((r - 0.012 / (1.0 - 0.012)).abs() < 0.002, "RLC retransmissions per block {r}");
}

/// HARQ's accounting: a block that fails all `harq_max_tx` = 3 transmissions has had 2
/// retransmissions (the first transmission is not one), then RLC resends it after `rlc_delay`
/// and HARQ starts again. So a block with r RLC retransmissions has 2r + k HARQ retransmissions,
/// k = 0..=2 in the round that got through, and delay 8·(2r + k) + 40·r ms: a block resent once
/// by RLC that then went through at once is exactly 2·8 + 40 = 56 ms late.
/// The defaults docs/scenarios.md's table gives (PAM 2013 HSPA, docs/calibration.md): HSDPA's
/// 2 ms TTI and 12 ms HARQ round (6 processes × 2 ms), a 10 % first-transmission BLER target.
#[test]
fn defaults_are_the_documented_calibration() {
    let p = params(json!({}));
    assert_eq!((p.mean_bps, p.min_bps, p.max_bps, p.sigma, p.coherence_ms), (3.0e6, 2.7e6, 5.0e6, 0.19, 1000.0));
    assert_eq!((p.tti_ms, p.share, p.bler, p.bler_retx), (2, 0.45, 0.1, 0.03));
    assert_eq!((p.harq_rtt_ms, p.harq_max_tx, p.rlc_delay_ms, p.iub_cycle_ms), (12, 4, 60, 0), "the Iub gate is off unless asked for");
    assert_eq!(OPPORTUNITY_BYTES, 1504, "a Mahimahi trace line is one 1504-byte opportunity (PACKET_SIZE, link_queue.hh)");
}

#[test]
fn harq_counts_retransmissions_not_transmissions() {
    let p = params(json!({"bler": 0.3, "bler_retx": 0.5, "harq_rtt": "8ms", "harq_max_tx": 3, "rlc_delay": "40ms"}));
    let mut g = Generator::new(&p, 11, "bottleneck");
    let phase = g.phase_ms;
    let mut once_at_once = 0;
    for _ in 0..100_000 {
        let b = g.step();
        if b.opps == 0 {
            continue;
        }
        let k = b.harq_retx.checked_sub(2 * b.rlc_retx).unwrap_or_else(|| panic!("{b:?}"));
        assert!(k <= 2, "{b:?}");
        if b.rlc_retx == 1 && k == 0 {
            once_at_once += 1;
            assert_eq!(b.own_ms - ((b.tti + 1) * 2 + phase), 56);
        }
    }
    // P(RLC once, then through at once) = 0.3 · 0.5 · 0.5 · 0.7 ≈ 5 % of ~50k blocks.
    assert!(once_at_once > 1000, "{once_at_once}");
}

#[test]
fn no_retransmissions_without_block_errors() {
    let p = params(json!({"bler": 0.0}));
    let mut phases = std::collections::BTreeSet::new();
    for seed in 1..20 {
        let mut g = Generator::new(&p, seed, "bottleneck");
        phases.insert(g.phase_ms);
        for _ in 0..10_000 {
            let b = g.step();
            assert_eq!(b.delivered_ms, (b.tti + 1) * 2 + g.phase_ms);
        }
    }
    assert_eq!(phases.into_iter().collect::<Vec<_>>(), vec![0, 1], "the TTI grid's offset is 0 or 1 ms");
}

#[test]
fn same_seed_same_opportunities_and_streams_are_per_channel() {
    let p = params(json!({}));
    let a = cellular::stamps(&p, 5, "bottleneck", 20_000);
    assert_eq!(a, cellular::stamps(&p, 5, "bottleneck", 20_000));
    assert_ne!(a, cellular::stamps(&p, 6, "bottleneck", 20_000));
    assert_ne!(a, cellular::stamps(&p, 5, "bottleneck.rev", 20_000));
    // A longer horizon extends the list without changing its start.
    let b = cellular::stamps(&p, 5, "bottleneck", 30_000);
    assert_eq!(&b[..a.len()], &a[..]);
}

fn access(down: Value) -> Value {
    json!({
        "duration": "20s",
        "access": {"server": "server", "router": "rnc", "client": "mobile", "core_rate": "100Mbit", "core_delay": "5ms",
                   "down_delay": "10ms", "down_queue": {"kind": "droptail", "limit": "500pkt"}, "down_cellular": down.clone(),
                   "up_rate": "1Mbit"},
        "traffic": [
            {"kind": "audio", "from": "server", "to": "mobile"},
            {"kind": "bulk", "from": "server", "to": "mobile", "size": "3MB", "start": "5s"},
        ],
    })
}

#[test]
fn run_over_the_model_equals_run_over_its_trace() {
    let model = json!({"bler": 0.2, "share": 0.4});
    let a = scenario::run(&access(model.clone()), 9).unwrap();
    let p = params(model);
    // What `jitterlab trace generate --duration 40s --seed 9 --channel bottleneck` writes.
    let stamps = cellular::stamps(&p, 9, "bottleneck", 40_000);
    let text: String = stamps.iter().map(|s| format!("{s}\n")).collect();
    let mut v = access(json!({}));
    let acc = v["access"].as_object_mut().unwrap();
    acc.remove("down_cellular");
    acc.insert("down_trace".into(), json!({"path": "gen.trace", "data": text}));
    let b = scenario::run(&v, 9).unwrap();
    for t in [&a, &b] {
        t.check_conservation().unwrap();
        for c in &t.channels {
            c.stats.check(c.backlog_pkts as usize, c.backlog_bytes).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        }
    }
    assert_eq!(a.media.recv_ns, b.media.recv_ns);
    assert_eq!(a.tcp_flows.end_ns, b.tcp_flows.end_ns);
    assert_eq!(a.events, b.events);
    let lost = a.media.recv_ns.iter().filter(|&&r| r == jitterlab_sim::record::NULL_NS).count();
    // HARQ and RLC delay blocks but lose nothing: the audio alone (before the bulk starts) all arrives.
    assert_eq!((0..a.media.len()).filter(|&i| a.media.send_ns[i] < 5_000_000_000 && a.media.recv_ns[i] == jitterlab_sim::record::NULL_NS).count(), 0, "{lost}");
    let ch = a.channels.iter().find(|c| c.name == "bottleneck").unwrap();
    assert_eq!(ch.rate_bps, 3_000_000, "the channels table reports the model's mean rate");
}

#[test]
fn bad_parameters_name_the_key() {
    let cases = [
        (json!({"share": 0}), "access.down_cellular.share: must be in (0, 1]"),
        (json!({"bler": 1.5}), "access.down_cellular.bler: must be a probability"),
        (json!({"tti": "2.5ms"}), "access.down_cellular.tti: must be a whole number of milliseconds"),
        (json!({"sigma": -1}), "access.down_cellular.sigma: must be between 0 and 3"),
        (json!({"min_rate": "4Mbit"}), "access.down_cellular.min_rate: must be below mean_rate"),
        (json!({"max_rate": "1Mbit"}), "access.down_cellular.max_rate: must be above mean_rate"),
        (json!({"coherence": "0ms"}), "access.down_cellular.coherence: must be > 0"),
        (json!({"harq_max_tx": 0}), "access.down_cellular.harq_max_tx: must be between 1 and 32"),
        (json!({"mean": "3Mbit"}), "access.down_cellular.mean: unknown key"),
        (json!("fast"), "access.down_cellular: expected a table"),
    ];
    for (m, want) in cases {
        let e = scenario::run(&access(m.clone()), 1).err().unwrap_or_else(|| panic!("accepted {m}"));
        assert!(e.to_string().starts_with(want), "got {e}, want {want}");
    }
    let mut v = access(json!({}));
    v["duration"] = json!("1000000s");
    let e = scenario::run(&v, 1).err().unwrap();
    assert!(e.to_string().starts_with("access.down_cellular: the cellular model would generate about"), "{e}");
    let mut v = access(json!({}));
    v["access"]["down_rate"] = json!("3Mbit");
    let e = scenario::run(&v, 1).err().unwrap();
    assert!(e.to_string().contains("access.down_rate and access.down_cellular are both set"), "{e}");
    let mut v = access(json!({}));
    v["access"]["down_overhead"] = json!("14B");
    let e = scenario::run(&v, 1).err().unwrap();
    assert!(e.to_string().starts_with("access.down_overhead: only with down_rate"), "{e}");
}

#[test]
fn expanded_form_names_every_direction_and_channel_opportunities_match_the_run() {
    let v = access(json!({"share": 0.4}));
    let e = scenario::expand(&v).unwrap();
    assert_eq!(e["schema"], 1);
    assert_eq!(e["duration_ns"], 20_000_000_000u64);
    let bn = &e["links"][1];
    assert_eq!(bn["name"], "bottleneck");
    assert_eq!(bn["forward"]["capacity"]["kind"], "cellular");
    assert_eq!(bn["forward"]["capacity"]["share"], 0.4);
    assert_eq!(bn["forward"]["capacity"]["mean_bps"], 3.0e6);
    assert_eq!(bn["forward"]["queue"], json!({"kind": "droptail", "limit_pkts": 500}));
    assert_eq!(bn["reverse"]["capacity"], json!({"kind": "rate", "bps": 1_000_000, "overhead_bytes": 0}));
    assert_eq!(bn["reverse"]["delay_ns"], 10_000_000, "the uplink inherits the downlink's delay");
    assert_eq!(e["traffic"][1]["size_bytes"], 3_000_000);
    assert_eq!(e["traffic"][1]["start_ns"], 5_000_000_000u64);
    let (stamps, period) = scenario::channel_opportunities(&v, 4, "bottleneck").unwrap();
    let p = params(json!({"share": 0.4}));
    assert_eq!(stamps, cellular::stamps(&p, 4, "bottleneck", 20_000 + cellular::MARGIN_MS));
    assert_eq!(period, *stamps.last().unwrap());
    assert!(scenario::channel_opportunities(&v, 4, "core").unwrap_err().to_string().contains("fixed rate"));
    assert!(scenario::channel_opportunities(&v, 4, "nope").unwrap_err().to_string().contains("no channel named \"nope\""));
}

#[test]
fn aqm_queues_in_front_of_a_cellular_link_keep_their_counters() {
    for q in [json!({"kind": "codel"}), json!({"kind": "fq_codel"}), json!({"kind": "pie"})] {
        let mut v = access(json!({}));
        v["access"]["down_queue"] = q.clone();
        let t = scenario::run(&v, 2).unwrap();
        t.check_conservation().unwrap();
        for c in &t.channels {
            c.stats.check(c.backlog_pkts as usize, c.backlog_bytes).unwrap_or_else(|e| panic!("{q}: {}: {e}", c.name));
        }
        // The 3 MB transfer finishes and every audio packet sent before it is accounted for.
        assert!(t.tcp_flows.end_ns[0] != jitterlab_sim::record::NULL_NS, "{q}: the bulk transfer finished");
    }
}

/// The Iub gate's rules by hand (`iub_cycle` 40 ms): a packet may start while the cycle's bytes are
/// below its grant (overshoot allowed, so a floor grant always passes something); the next
/// cycle's grant is twice what the cycle used, at least one 1504-byte opportunity; it shrinks only
/// after a cycle in which the queue ran dry (otherwise it keeps its value); a dry gap of two or
/// more cycles leaves the floor.
#[test]
fn iub_gate_grants_twice_the_last_cycle_at_least_one_opportunity() {
    use jitterlab_sim::link::IubGate;
    let mut g = IubGate::new(40);
    assert_eq!(g.state(), (1504, 0));
    assert!(g.open(0));
    g.count(80); // an audio packet, then the queue is empty
    g.ran_dry(1);
    assert!(g.open(5), "80 < 1504");
    g.count(1500); // a burst arrives
    assert!(!g.open(10), "1580 >= 1504: the rest of cycle 0 is refused");
    assert!(!g.open(39));
    assert_eq!(g.next_cycle_ms(), 40);
    assert!(g.open(40));
    assert_eq!(g.state(), (3160, 0), "2 × 1580 (cycle 0 ran dry, so nothing is kept)");
    g.count(1500);
    g.count(1500);
    assert!(g.open(41), "3000 < 3160");
    g.count(1500);
    assert!(!g.open(79));
    assert!(g.open(80));
    assert_eq!(g.state(), (9000, 0), "2 × 4500");
    assert!(g.open(120));
    assert_eq!(g.state(), (9000, 0), "cycle 2 used nothing but its queue never ran dry: the grant is kept");
    g.ran_dry(121);
    assert!(g.open(160));
    assert_eq!(g.state(), (1504, 0), "cycle 3 used nothing and ran dry: 2 × 0, so the floor");
    g.count(1500);
    g.ran_dry(170);
    assert!(g.open(250));
    assert_eq!(g.state(), (1504, 0), "cycles 4 and 5 idle after a dry queue: the floor, not 2 × 1500");
    g.count(3000);
    g.count(1500);
    assert!(g.open(400));
    assert_eq!(g.state(), (9000, 0), "a gap while backlogged: 2 × 4500 from the last cycle that sent");
    assert_eq!(g.next_cycle_ms(), 440);
}

/// A TCP initial window through a fast cellular link (50 Mbit/s, no errors, every TTI served:
/// serialisation ≈ 0) with `iub_cycle` 100 ms: after a floor grant the burst leaves 2, 4, 4 packets
/// in three successive cycles (1500 B packets: 1500 < 1504 lets a second one start), so ten
/// segments finish two cycles after the cycle they arrive in — 100–200 ms later than without the
/// gate; three segments (2, 1) finish one cycle after theirs — 0–100 ms later. Audio alone never
/// fills a floor grant (80 B per 20 ms), so its run is the same with and without the gate.
#[test]
fn iub_gate_delays_an_initial_window_by_whole_cycles_and_leaves_audio_alone() {
    let fast = |cycle: &str| json!({"mean_rate": "50Mbit", "min_rate": "1Mbit", "max_rate": "100Mbit", "sigma": 0.0, "share": 1.0, "bler": 0.0, "iub_cycle": cycle});
    let end = |cycle: &str, iw: u64| {
        let mut v = access(fast(cycle));
        v["traffic"] = json!([{"kind": "bulk", "from": "server", "to": "mobile", "size": format!("{}B", 1448 * iw), "iw": iw, "start": "5s"}]);
        let t = scenario::run(&v, 3).unwrap();
        t.check_conservation().unwrap();
        t.tcp_flows.end_ns[0] as i64
    };
    let d10 = end("100ms", 10) - end("0ms", 10);
    assert!((100_000_000..=200_000_000).contains(&d10), "IW10 later by {d10} ns");
    let d3 = end("100ms", 3) - end("0ms", 3);
    assert!((1..=100_000_000).contains(&d3), "IW3 later by {d3} ns");
    let audio = |cycle: &str| {
        let mut v = access(json!({"iub_cycle": cycle}));
        v["traffic"] = json!([{"kind": "audio", "from": "server", "to": "mobile"}]);
        scenario::run(&v, 5).unwrap()
    };
    let (a, b) = (audio("0ms"), audio("40ms"));
    assert_eq!(a.media.recv_ns, b.media.recv_ns);
    assert!(a.media.len() > 900);
}

#[test]
fn a_gated_model_has_no_trace_form() {
    let v = access(json!({"iub_cycle": "40ms"}));
    let e = scenario::channel_opportunities(&v, 4, "bottleneck").unwrap_err().to_string();
    assert!(e.starts_with("access.down_cellular: iub_cycle: the Iub flow-control gate depends on the load"), "{e}");
    let e = scenario::run(&access(json!({"iub_cycle": "2.5ms"})), 1).err().unwrap().to_string();
    assert!(e.starts_with("access.down_cellular.iub_cycle: must be a whole number of milliseconds"), "{e}");
}
