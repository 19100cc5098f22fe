//! Golden digests: SHA-256 of every table a run produces (the `Debug` form of [`Tables`], which
//! holds every column, every channel's counters, the conservation totals and the tap records), for
//! scenarios covering each queue discipline, TCP bulk/web/FTP with SACK and NewReno, Reno, CUBIC and
//! BBR, ECN, pacing, TSQ, RWND moderation, trace and cellular capacities, jitter, reordering,
//! independent and bursty loss, per-packet overhead, queue sampling and pcap taps.
//!
//! The digests were recorded with the engine of commit 854f90d (before the event-loop work of issue
//! 14), and recorded again when TCP stack profiles made `linux-6.18` every scenario's default
//! (issue 24: Linux's receive buffer and slow start counting ACKed segments where the old default
//! had a fixed 3 MiB window and one MSS per ACK; the two `stack` cases cover the other profiles),
//! when `tcp_flows.bytes` became the bytes delivered (issue 30), and when CUBIC's Reno-friendly
//! window became Linux's `bictcp_update` in the Linux profiles (issue 26). Engine optimisations must keep
//! them: they change how fast the tables are produced, never what they hold. The one field left out is `events`, the count of events the loop processed —
//! it measures the engine's work, and an optimisation that needs fewer events changes it on purpose.
//!
//! A deliberate change of model behaviour (a TCP fix, a new default) changes digests; update them in
//! the same commit and say in its message why the tables changed. On failure this test prints every
//! scenario's actual digest in the form of the table below.
use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;
use serde_json::{json, Value};

/// SHA-256 (FIPS 180-4), small and dependency-free; checked against the standard's vectors below.
fn sha256(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ];
    let mut h: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    let mut msg = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bits.to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh.wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[test]
fn sha256_matches_the_fips_vectors() {
    assert_eq!(sha256(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_eq!(sha256(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_eq!(sha256(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/// Digest of everything a run produced except the engine's event count.
fn digest(mut t: Tables) -> String {
    t.events = 0;
    sha256(format!("{t:?}").as_bytes())
}

fn dumbbell(queue: Value, ecn: bool, secs: u32) -> Value {
    json!({
        "name": "golden-dumbbell", "duration": format!("{secs}s"),
        "dumbbell": {"pairs": 4, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms", "queue": queue, "access_rate": "100Mbit", "access_delay": "1ms"},
        "traffic": [
            {"kind": "video", "from": "s1", "to": "d1", "rate": "1Mbit", "mode": "bursty", "ecn": ecn},
            {"kind": "ftp", "from": "s2", "to": "d2", "rwnd": "20pkt", "start": "1s", "ecn": ecn, "mss": "960B"},
            {"kind": "ftp", "from": "s3", "to": "d3", "rwnd": "20pkt", "start": "1.5s", "ecn": ecn, "cc": "reno"},
            {"kind": "video", "from": "s4", "to": "d4", "rate": "300kbit", "mode": "paced"},
        ],
        "output": {"queue_sample_interval": "10ms", "queues": ["bottleneck"]},
    })
}

fn access(down_capacity: (&str, Value), down_queue: Value, extra_traffic: Vec<Value>, secs: u32) -> Value {
    let mut access = json!({
        "server": "server", "router": "rnc", "client": "mobile", "core_rate": "100Mbit", "core_delay": "5ms",
        "down_delay": "10ms", "down_queue": down_queue, "up_rate": "1Mbit", "up_delay": "10ms",
    });
    access[down_capacity.0] = down_capacity.1;
    let mut traffic = vec![json!({"kind": "audio", "from": "server", "to": "mobile"})];
    traffic.extend(extra_traffic);
    json!({"name": "golden-access", "duration": format!("{secs}s"), "access": access, "traffic": traffic, "output": {"queue_sample_interval": "20ms"}})
}

/// (name, scenario, seed, expected digest).
fn cases() -> Vec<(&'static str, Value, u64, &'static str)> {
    let red = json!({"kind": "red", "limit": "50pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": false});
    let mut red_ecn = red.clone();
    red_ecn["ecn"] = json!(true);
    let bulk = |cc: &str, start: &str| json!({"kind": "bulk", "name": "bulk", "from": "server", "to": "mobile", "size": "1MB", "cc": cc, "start": start});
    let web = json!({"kind": "web", "name": "web", "from": "server", "to": "mobile", "flows": 6, "iw": 10, "size": "372kB", "start": "2s"});
    // One fixed-rate link of each flavour the engine treats differently: overhead, loss bursts,
    // reordering jitter, independent loss, and a FIFO whose departures never wait.
    let links = json!({
        "name": "golden-links", "duration": "6s",
        "hosts": {"client": {"rwnd": {"budget": "20kB", "split": "weighted", "weights": {"bulk": 1, "web": 3}}}},
        "links": {
            "core": {"from": "server", "to": "router", "rate": "100Mbit", "delay": "5ms", "overhead": "14B"},
            "bottleneck": {"from": "router", "to": "client", "rate": "3Mbit", "delay": "10ms",
                           "queue": {"kind": "droptail", "limit": "100pkt"},
                           "jitter": {"dist": "uniform", "min": "0ms", "max": "3ms"}, "reorder": true,
                           "loss": 0.02, "loss_burst": "30ms",
                           "reverse": {"rate": "1Mbit", "loss": 0.01, "queue": {"kind": "droptail", "limit": "30000B"}}},
        },
        "traffic": [
            {"kind": "audio", "from": "server", "to": "client"},
            {"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "600kB", "start": "0.5s", "series": true, "pacing": true, "tsq": true, "cc": "bbr"},
            {"kind": "web", "name": "web", "from": "server", "to": "client", "flows": 3, "iw": 10, "size": "150kB", "start": "1s", "recovery": "newreno"},
        ],
        "output": {"queue_sample_interval": "10ms", "pcap": ["client"]},
    });
    let trace = json!({
        "name": "golden-trace", "duration": "4s",
        "links": {
            "core": {"from": "server", "to": "router", "rate": "100Mbit", "delay": "5ms"},
            "bottleneck": {"from": "router", "to": "client", "delay": "10ms", "trace": {"data": "1\n2\n2\n5\n8\n10\n", "path": "inline.trace"},
                           "jitter": {"dist": "pareto", "mean": "2ms", "shape": 2.5}, "loss": 0.01, "queue": {"kind": "codel", "limit": "500pkt"},
                           "reverse": {"queue": {"kind": "red", "limit": "100pkt", "maxthresh": 15, "thresh": 5}, "rate": "1Mbit"}},
        },
        "traffic": [
            {"kind": "audio", "from": "server", "to": "client"},
            {"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "300kB", "start": "0.2s", "series": true},
            {"kind": "video", "from": "server", "to": "client", "mode": "paced", "rate": "300kbit"},
        ],
        "output": {"queue_sample_interval": "10ms", "queues": ["bottleneck"], "pcap": ["client"]},
    });
    let bench = json!({
        "name": "golden-overload", "duration": "3s",
        "dumbbell": {"pairs": 6, "bottleneck_rate": "3Mbit", "bottleneck_delay": "5ms", "queue": {"kind": "droptail", "limit": "100pkt"}, "access_rate": "100Mbit", "access_delay": "1ms"},
        "traffic": (1..=6).map(|i| json!({"kind": "video", "from": format!("s{i}"), "to": format!("d{i}"), "rate": "1Mbit", "mode": "paced"})).collect::<Vec<_>>(),
    });
    vec![
        ("droptail-dumbbell", dumbbell(json!({"kind": "droptail", "limit": "50pkt"}), false, 8), 1, "703c5213ec91a6163d181fb70788f27fdda84a8663474ee18ce1cd38f031fcf1"),
        ("red-dumbbell", dumbbell(red, false, 8), 2, "d794f97da945103c25e3cdd69c2f6e71e02d58c79ec7a28ec636dd365824087b"),
        ("red-ecn-dumbbell", dumbbell(red_ecn, true, 8), 3, "9c3b15ccb7c0bb6de6becc1d08a701cbd1dae05acfb336bfe97cec7a8679ee87"),
        ("codel-bulk-jitter", {
            let mut v = access(("down_rate", json!("4Mbit")), json!({"kind": "codel", "limit": "500pkt"}), vec![bulk("cubic", "1s")], 6);
            v["access"]["down_jitter"] = json!({"dist": "exponential", "mean": "1ms"});
            v
        }, 4, "4a011410dc0704f4ca1e2db9a8a118275a8e972a303031ad3450ee01297de93d"),
        ("fq_codel-web", access(("down_rate", json!("3.3Mbit")), json!({"kind": "fq_codel", "limit": "500pkt"}), vec![web.clone()], 6), 5, "6573d639795a56aa0b44ee7574a6426682a4671087425889c36fa8671756d46a"),
        ("pie-bulk-web", access(("down_rate", json!("3.3Mbit")), json!({"kind": "pie", "limit": "500pkt", "ecn": true}), vec![bulk("reno", "1s"), web.clone()], 6), 6, "14bd111a0d3e85db793784caefa96cbd4072bec13767fe0b83caaa238c5feb84"),
        ("droptail-web-pam2013", {
            let mut v = access(("down_rate", json!("3.3Mbit")), json!({"kind": "droptail", "limit": "500pkt"}), vec![web], 6);
            v["access"]["down_jitter"] = json!({"dist": "normal", "mean": "4ms", "sd": "2ms"});
            v
        }, 7, "51ede4d6db3c3b010268c9b69aabab47e6d4f17ba622a716031b58546dce0661"),
        ("cellular-bulk", access(("down_cellular", json!({"bler": 0.2, "share": 0.4})), json!({"kind": "droptail", "limit": "500pkt"}), vec![bulk("cubic", "1s")], 6), 8, "d59abfa4b5232f5b22de8512658a833526ac20272a92b9bde65976411b9f3752"),
        ("trace-codel-red", trace, 9, "e1e1ac40cf5f0d5854496a3e8935262319e7b07b3c2362352880ff5ddc0ce5e7"),
        ("links-loss-reorder-bbr", links, 10, "fd8ddcde3f10659be4111b4d4b9410dd8c5b9bf25c0489944757b6fe86bfcc8b"),
        // The stack profiles other than the default (tcp/profile.rs), scenario-wide.
        ("linux-3.2-web-pam2013", {
            let mut v = access(("down_rate", json!("3.3Mbit")), json!({"kind": "droptail", "limit": "500pkt"}), vec![bulk("cubic", "1s"), json!({"kind": "web", "name": "web", "from": "server", "to": "mobile", "flows": 2, "iw": 3, "size": "372kB", "start": "3s"})], 6);
            v["stack"] = json!("linux-3.2");
            v
        }, 12, "97733005a589d3039d455812a6f94701a4751d79937ba8127bc612773ef5fc8a"),
        ("ns2-sack1-dumbbell", {
            let mut v = dumbbell(json!({"kind": "droptail", "limit": "49pkt"}), false, 8);
            v["stack"] = json!("ns2-sack1");
            v
        }, 13, "44389b835424781a51dc25c6fab7f9ce3027761dad1c4f577e0084949bc1c940"),
        ("overload-paced-video", bench, 11, "ca8c81fcc26760bed990f58bdb8b7897c43aeef0e492edd1b3afb78aa2a34cf8"),
    ]
}

#[test]
fn tables_keep_their_golden_digests() {
    let mut bad = vec![];
    let mut all = String::new();
    for (name, v, seed, want) in cases() {
        let t = scenario::run(&v, seed).unwrap_or_else(|e| panic!("{name}: {e}"));
        t.check_conservation().unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = digest(t);
        all.push_str(&format!("        (\"{name}\", …, {seed}, \"{got}\"),\n"));
        if got != want {
            bad.push(name);
        }
    }
    assert!(bad.is_empty(), "tables changed for {bad:?}; actual digests:\n{all}");
}

/// The digest sees a change of one nanosecond in one column (so the test above can fail).
#[test]
fn digest_sees_one_changed_value() {
    let (_, v, seed, _) = cases().remove(0);
    let t = scenario::run(&v, seed).unwrap();
    let mut u = t.clone();
    let i = u.media.recv_ns.iter().position(|&r| r != jitterlab_sim::record::NULL_NS).unwrap();
    u.media.recv_ns[i] += 1;
    assert_ne!(digest(t.clone()), digest(u));
    let mut w = t.clone();
    w.events += 1;
    assert_eq!(digest(t), digest(w));
}

