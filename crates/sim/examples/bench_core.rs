//! Benchmark of the simulator core (not a test). Two scenarios, each run `reps` times (best wall
//! time kept), one core:
//! - `overload`: an overloaded dumbbell — 20 paced video senders of 1 Mbit/s each into a 10 Mbit/s
//!   bottleneck with a 100-packet DropTail — for 60 simulated seconds (the figure quoted since the
//!   first release);
//! - `tcp`: Chodorek's dumbbell — 2 Mbit/s, 5 ms, RED(5, 15) — with a bursty 1 Mbit/s video and 10
//!   SACK FTP flows (rwnd 20 packets), 60 s: TCP's timers, ACKs and the reverse path.
//!
//! What counts as an event: one entry popped from the event queue and dispatched (a timer firing,
//! including a timer that was cancelled or re-armed since — it is popped and found stale —, a packet
//! arriving at the far end of a link, a link finishing a packet when more wait behind it (not on a
//! FIFO link, DropTail or RED, which fixes each departure when the packet is queued), a qdisc
//! watchdog, a TX completion that finds its TCP sender throttled by TSQ (the others are handed
//! over at the sender's next hook, engine/txc.rs), a queue sample). Work the engine does without an event (a link that
//! finishes a packet with nothing queued behind it is told so lazily, at its next enqueue) is not
//! counted. Events per delivered packet and ns per delivered packet are printed beside events/s, so
//! that fewer events per packet show as a gain and cannot inflate the figure.
//!
//! Run: `bench/run core`, or `cargo run --release -p jitterlab-sim --example bench_core -- [secs] [reps] [overload|tcp]`.
use std::time::Instant;

use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;
use serde_json::{json, Value};

fn overload(secs: u64) -> Value {
    let pairs = 20;
    let traffic: Vec<_> = (1..=pairs)
        .map(|i| json!({"kind": "video", "from": format!("s{i}"), "to": format!("d{i}"), "rate": "1Mbit", "packet_size": "1000B", "mode": "paced"}))
        .collect();
    json!({
        "name": "bench-dumbbell", "duration": format!("{secs}s"),
        "dumbbell": {"pairs": pairs, "bottleneck_rate": "10Mbit", "bottleneck_delay": "5ms", "queue": {"kind": "droptail", "limit": "100pkt"},
                     "access_rate": "100Mbit", "access_delay": "1ms"},
        "traffic": traffic,
    })
}

fn tcp(secs: u64) -> Value {
    let n = 10;
    let mut traffic = vec![json!({"kind": "video", "from": "s1", "to": "d1", "rate": "1Mbit", "mode": "bursty"})];
    traffic.extend((2..=n + 1).map(|i| json!({"kind": "ftp", "from": format!("s{i}"), "to": format!("d{i}"), "rwnd": "20pkt", "mss": "960B"})));
    json!({
        "name": "bench-tcp", "duration": format!("{secs}s"),
        "dumbbell": {"pairs": n + 1, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms", "access_rate": "100Mbit", "access_delay": "1us",
                     "queue": {"kind": "red", "limit": "50pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": false}},
        "traffic": traffic,
    })
}

fn bench(name: &str, what: &str, v: &Value, secs: u64, reps: usize) {
    let mut best = f64::MAX;
    let mut last: Option<Tables> = None;
    for _ in 0..reps {
        let t0 = Instant::now();
        let t = scenario::run(v, 1).expect("valid scenario");
        best = best.min(t0.elapsed().as_secs_f64());
        last = Some(t);
    }
    let t = last.expect("reps >= 1");
    let ev = t.events as f64;
    let deliv = t.delivered_pkts as f64;
    println!("bench_core {name}: {what}, {secs} s simulated");
    println!("  events                  {}", t.events);
    println!("  packets sent            {} (delivered {}, dropped {}, {:.1} %)", t.sent_pkts, t.delivered_pkts, t.dropped_pkts, 100.0 * t.dropped_pkts as f64 / t.sent_pkts as f64);
    println!("  events per delivered packet {:.2}", ev / deliv);
    println!("  wall time (best of {reps})  {:.4} s", best);
    println!("  events/s                {:.2} M", ev / best / 1e6);
    println!("  ns per delivered packet {:.1}", best * 1e9 / deliv);
    println!("  delivered packets/s     {:.2} M", deliv / best / 1e6);
    println!("  speed-up over real time {:.0}x", secs as f64 / best);
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let only = args.next().unwrap_or_default();
    if only.is_empty() || only == "overload" {
        bench("overload", "20 x 1 Mbit/s paced video into 10 Mbit/s DropTail(100)", &overload(secs), secs, reps);
    }
    if only.is_empty() || only == "tcp" {
        bench("tcp", "bursty 1 Mbit/s video + 10 SACK FTP flows over 2 Mbit/s RED(5, 15)", &tcp(secs), secs, reps);
    }
}
