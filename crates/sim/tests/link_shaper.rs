//! `shaper = true` on a fixed-rate link direction: the rate is enforced as HTB or TBF on a fast
//! device do (the testbed's bottleneck): a packet leaves when dequeued, and the next one
//! waits its serialisation time, instead of each packet spending that time on the wire.
use jitterlab_sim::scenario;
use serde_json::json;

fn owds(shaper: bool, extra_audio: bool) -> Vec<i64> {
    let mut traffic = vec![json!({"kind": "audio", "from": "server", "to": "client", "size": "80B", "interval": "20ms"})];
    if extra_audio {
        // a second 1000-byte stream sent at the same instants: each 80-byte packet queues behind one
        traffic.insert(0, json!({"kind": "audio", "name": "big", "from": "server", "to": "client", "size": "1000B", "interval": "20ms"}));
    }
    let v = json!({
        "duration": "2s",
        "access": {"core_rate": "1Gbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "15ms", "down_shaper": shaper,
                   "up_rate": "1Gbit", "up_delay": "15ms"},
        "traffic": traffic,
    });
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
