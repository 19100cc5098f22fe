//! Runs every scenario of a JSON-lines file (one scenario per line, file references inlined) in
//! this process, one after another on one core, and prints the engine's wall time, events and
//! delivered packets over all of them, plus a fingerprint of every table (the `events` count left
//! out) so that two builds can be checked to produce identical results. Not a test.
//!
//! `cargo run --release -p jitterlab-sim --example bench_points -- POINTS.jsonl [seed] [each|nofp]`
//! (`each`: also a line per scenario with its delivered packets, drops and fingerprint, to find
//! the scenarios two builds disagree on; `nofp`: no fingerprint, so that the process's CPU time is
//! the runs' and the file's parsing only, for profiles and A/B timings). `bench/points_jsonl.py` writes the sweep of `bench/run
//! vs-ns2` in this form.
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: bench_points POINTS.jsonl [seed]");
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(7);
    let mode = args.next().unwrap_or_default();
    let (each, nofp) = (mode == "each", mode == "nofp");
    let text = std::fs::read_to_string(&path).expect("readable points file");
    let points: Vec<serde_json::Value> = text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("one JSON scenario per line")).collect();
    let (mut events, mut delivered, mut fp) = (0u64, 0u64, DefaultHasher::new());
    let t0 = Instant::now();
    for (i, v) in points.iter().enumerate() {
        let mut t = jitterlab_sim::scenario::run(v, seed).expect("valid scenario");
        events += t.events;
        delivered += t.delivered_pkts;
        if nofp {
            continue;
        }
        t.events = 0;
        let text = format!("{t:?}");
        text.hash(&mut fp);
        if each {
            let mut one = DefaultHasher::new();
            text.hash(&mut one);
            println!("  point {i}: delivered {} dropped {} fingerprint {:016x}", t.delivered_pkts, t.dropped_pkts, one.finish());
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    println!("bench_points: {} scenarios from {path}, seed {seed}", points.len());
    println!("  wall (engine, build to tables) {wall:.3} s");
    println!("  events {events} ({:.2} per delivered packet), {:.2} M events/s", events as f64 / delivered as f64, events as f64 / wall / 1e6);
    println!("  delivered packets {delivered}, {:.1} ns per delivered packet", wall * 1e9 / delivered as f64);
    if nofp {
        println!("  tables fingerprint not computed (nofp)");
    } else {
        println!("  tables fingerprint {:016x}", fp.finish());
    }
}
