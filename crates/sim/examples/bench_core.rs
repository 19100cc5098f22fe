//! Benchmark of the simulator core (not a test): an overloaded dumbbell — 20 paced video senders of
//! 1 Mbit/s each into a 10 Mbit/s bottleneck with a 100-packet DropTail — for 60 simulated seconds.
//! Prints events/s and simulated packets/s of one core. Run: `bench/run core`.
use std::time::Instant;

use jitterlab_sim::scenario;
use serde_json::json;

fn main() {
    let secs: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(60);
    let pairs = 20;
    let traffic: Vec<_> = (1..=pairs)
        .map(|i| json!({"kind": "video", "from": format!("s{i}"), "to": format!("d{i}"), "rate": "1Mbit", "packet_size": "1000B", "mode": "paced"}))
        .collect();
    let v = json!({
        "name": "bench-dumbbell", "duration": format!("{secs}s"),
        "dumbbell": {"pairs": pairs, "bottleneck_rate": "10Mbit", "bottleneck_delay": "5ms", "queue": {"kind": "droptail", "limit": "100pkt"},
                     "access_rate": "100Mbit", "access_delay": "1ms"},
        "traffic": traffic,
    });
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..3 {
        let t0 = Instant::now();
        let t = scenario::run(&v, 1).expect("valid scenario");
        let dt = t0.elapsed().as_secs_f64();
        best = best.min(dt);
        last = Some(t);
    }
    let t = last.unwrap();
    let ev = t.events as f64;
    println!("bench_core: overloaded dumbbell, {pairs} x 1 Mbit/s paced video into 10 Mbit/s DropTail(100), {secs} s simulated");
    println!("  events            {}", t.events);
    println!("  packets sent      {} (dropped {}, {:.1} %)", t.sent_pkts, t.dropped_pkts, 100.0 * t.dropped_pkts as f64 / t.sent_pkts as f64);
    println!("  wall time (best of 3) {:.3} s", best);
    println!("  events/s          {:.2} M", ev / best / 1e6);
    println!("  packets/s         {:.2} M", t.sent_pkts as f64 / best / 1e6);
    println!("  speed-up over real time {:.0}x", secs as f64 / best);
}
