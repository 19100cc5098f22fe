//! `shaper = true` on a fixed-rate link direction: the rate is enforced as HTB or TBF on a fast
//! device do (the testbed's bottleneck): a packet leaves when dequeued, and the next one
//! waits its serialisation time, instead of each packet spending that time on the wire.
use jitterlab_sim::scenario;
use serde_json::json;

fn owds(shaper: bool, extra_audio: bool) -> Vec<i64> { owds_burst(shaper, extra_audio, None) }

fn owds_burst(shaper: bool, extra_audio: bool, burst: Option<&str>) -> Vec<i64> {
    let mut traffic = vec![json!({"kind": "audio", "from": "server", "to": "client", "size": "80B", "interval": "20ms"})];
    if extra_audio {
        // a second 1000-byte stream sent at the same instants: each 80-byte packet queues behind one
        traffic.insert(0, json!({"kind": "audio", "name": "big", "from": "server", "to": "client", "size": "1000B", "interval": "20ms"}));
    }
    let mut v = json!({
        "duration": "2s",
        "access": {"core_rate": "1Gbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "15ms", "down_shaper": shaper,
                   "up_rate": "1Gbit", "up_delay": "15ms"},
        "traffic": traffic,
    });
    if let Some(b) = burst {
        v["access"]["down_burst"] = json!(b);
    }
    let t = scenario::run(&v, 1).unwrap();
    let m = &t.media;
    let f = *m.flow_id.iter().max().unwrap();
    (0..m.seq.len()).filter(|&i| m.flow_id[i] == f && m.recv_ns[i] >= 0).map(|i| m.recv_ns[i] - m.send_ns[i]).collect()
}

#[test]
fn a_shaper_adds_no_wire_time() {
    // 80 B: 0.64 µs on the 1 Gbit/s core; 160 µs on a 4 Mbit/s wire, nothing through a shaper
    let wire = owds(false, false);
    let shaped = owds(true, false);
    assert!(wire.iter().all(|&d| d == 20_000_640 + 160_000), "{:?}", &wire[..3]);
    assert!(shaped.iter().all(|&d| d == 20_000_640), "{:?}", &shaped[..3]);
    // behind a 1000-byte packet sent at the same instants (8 µs on the core, so it reaches the
    // bottleneck first): the shaper releases the big one at 5.008 ms and the 80-byte one 2 ms later
    // (1000 B at 4 Mbit/s), 22.008 ms after it was sent; on a wire it then needs its own 160 µs
    let wire = owds(false, true);
    let shaped = owds(true, true);
    assert!(shaped.iter().all(|&d| d == 5_008_000 + 2_000_000 + 15_000_000), "{:?}", &shaped[..3]);
    assert!(wire.iter().all(|&d| d == 5_008_000 + 2_000_000 + 160_000 + 15_000_000), "{:?}", &wire[..3]);
}

#[test]
fn shaper_needs_a_rate() {
    let v = json!({
        "duration": "1s",
        "links": {"a": {"from": "s", "to": "c", "cellular": {}, "delay": "1ms", "shaper": true}},
        "traffic": [{"kind": "audio", "from": "s", "to": "c"}],
    });
    let e = scenario::run(&v, 1).unwrap_err().to_string();
    assert!(e.contains("links.a.shaper: only with rate"), "{e}");
}

/// `burst` = HTB's token bucket (tokens ≥ 0 to send, charged after, refilled at the rate up to the
/// burst; the bucket refills in the 20 ms between frames). Behind a 1000 B packet (2 ms at
/// 4 Mbit/s) released at 5.008 ms: with 1600 B (3.2 ms) of burst 1.2 ms of tokens are left, so the
/// 80 B packet leaves as it arrives, after its own 0.64 µs on the core (20.00864 ms one way); with 900 B (1.8 ms) the tokens are −0.2 ms and
/// it waits 0.2 ms (20.208 ms). Alone, it never waits (80 B = 160 µs ≤ any burst here).
#[test]
fn a_burst_lets_the_next_packet_through_on_its_tokens() {
    let big = owds_burst(false, true, Some("1600B"));
    assert!(big.iter().all(|&d| d == 5_008_640 + 15_000_000), "{:?}", &big[..3]);
    let small = owds_burst(false, true, Some("900B"));
    assert!(small.iter().all(|&d| d == 5_008_000 + 200_000 + 15_000_000), "{:?}", &small[..3]);
    let alone = owds_burst(false, false, Some("900B"));
    assert!(alone.iter().all(|&d| d == 20_000_640), "{:?}", &alone[..3]);
}

#[test]
fn burst_needs_a_rate_and_bytes_and_reaches_the_expanded_form() {
    let v = json!({
        "duration": "1s",
        "links": {"a": {"from": "s", "to": "c", "cellular": {}, "delay": "1ms", "burst": "1600B"}},
        "traffic": [{"kind": "audio", "from": "s", "to": "c"}],
    });
    let e = scenario::run(&v, 1).unwrap_err().to_string();
    assert!(e.contains("links.a.burst: only with rate"), "{e}");
    let v = json!({
        "duration": "1s",
        "links": {"a": {"from": "s", "to": "c", "rate": "4Mbit", "delay": "1ms", "burst": "0B"}},
        "traffic": [{"kind": "audio", "from": "s", "to": "c"}],
    });
    let e = scenario::run(&v, 1).unwrap_err().to_string();
    assert!(e.contains("links.a.burst: must be > 0"), "{e}");
    // the reverse direction inherits it with the capacity; the testbed reads `burst_bytes`
    let v = json!({
        "duration": "1s",
        "links": {"a": {"from": "s", "to": "c", "rate": "4Mbit", "delay": "1ms", "burst": "1600B"},
                  "b": {"from": "c", "to": "d", "rate": "4Mbit", "delay": "1ms"}},
        "traffic": [{"kind": "audio", "from": "s", "to": "d"}],
    });
    let x = scenario::expand(&v).unwrap();
    let links = x["links"].as_array().unwrap();
    let a = links.iter().find(|l| l["name"] == "a").unwrap();
    let b = links.iter().find(|l| l["name"] == "b").unwrap();
    assert_eq!((a["forward"]["burst_bytes"].as_u64(), a["reverse"]["burst_bytes"].as_u64()), (Some(1600), Some(1600)));
    assert!(b["forward"]["burst_bytes"].is_null());
}
