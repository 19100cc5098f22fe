//! Every AQM is reachable through the registry, builds from an empty table (all defaults), rejects
//! unknown keys through `Params::finish`, and keeps the counter identities under a random load
//! driven through the `Qdisc` trait only.
use jitterlab_sim::config::Params;
use jitterlab_sim::packet::{Body, Ecn, Packet, PacketPool};
use jitterlab_sim::qdisc::{builder, kinds, DropReason, LinkInfo, Verdict};
use jitterlab_sim::rng::Rng;
use jitterlab_sim::{Rate, Time};
use serde_json::json;

const AQMS: [&str; 4] = ["red", "codel", "fq_codel", "pie"];

fn link() -> LinkInfo { LinkInfo { rate: Rate(2_000_000), mtu: 1500 } }

#[test]
fn registered_and_buildable_with_defaults() {
    for k in AQMS {
        assert!(kinds().contains(&k), "{k} missing from REGISTRY");
        let b = builder(k).unwrap();
        let mut p = Params::new("queue", &json!({})).unwrap();
        let q = b(&mut p, link(), &mut Rng::stream(1, "channel:x")).unwrap();
        p.finish().unwrap();
        assert_eq!(q.kind(), k);
        assert_eq!(q.backlog_pkts(), 0);
    }
}

#[test]
fn unknown_keys_are_rejected() {
    for k in AQMS {
        let mut p = Params::new("queue", &json!({"colour": "red"})).unwrap();
        builder(k).unwrap()(&mut p, link(), &mut Rng::stream(1, "c")).unwrap();
        let e = p.finish().unwrap_err().to_string();
        assert!(e.starts_with("queue.colour: unknown key"), "{k}: {e}");
    }
}

#[test]
fn counter_identities_under_random_load() {
    let tables = [
        ("red", json!({"limit": "30pkt", "ecn": true, "q_weight": 0.02})),
        ("red", json!({"limit": "30pkt", "gentle": true, "use_mark_p": false, "q_weight": 0.02})),
        ("codel", json!({"limit": "60pkt", "ecn": true})),
        ("fq_codel", json!({"limit": "60pkt", "flows": 8})),
        ("pie", json!({"limit": "60pkt", "ecn": true})),
    ];
    for (k, v) in tables {
        let mut p = Params::new("queue", &v).unwrap();
        let mut q = builder(k).unwrap()(&mut p, link(), &mut Rng::stream(9, "channel:b")).unwrap();
        p.finish().unwrap();
        let mut pool = PacketPool::new();
        let mut r = Rng::stream(4, k);
        let mut scratch = vec![];
        let mut t = Time::ZERO;
        let mut delivered = 0u64;
        for _ in 0..100_000 {
            // Offered load slightly above the link's (2 Mbit/s ≈ 250 packets of 1000 B per second).
            t += Time::from_us(r.uniform_range(0.0, 7000.0) as u64);
            if r.uniform() < 0.55 {
                let ecn = if r.uniform() < 0.5 { Ecn::Ect0 } else { Ecn::NotEct };
                let size = 100 + (r.next_u64() % 1400) as u32;
                let id = pool.insert(Packet { flow: (r.next_u64() % 5) as u32, src: 0, dst: 1, dst_agent: 0, size, ecn, sent: t, body: Body::Raw });
                let v = q.enqueue(id, &mut pool, t, &mut scratch);
                if let Verdict::Dropped(_) = v {
                    pool.remove(id);
                }
            } else if let Some(id) = q.dequeue(&mut pool, t, &mut scratch) {
                pool.remove(id);
                delivered += 1;
            }
            for (id, why) in scratch.drain(..) {
                assert!(matches!(why, DropReason::Codel | DropReason::Overflow), "{k}: {why:?} inside the queue");
                pool.remove(id);
            }
            q.stats().check(q.backlog_pkts(), q.backlog_bytes()).unwrap_or_else(|e| panic!("{k}: {e}"));
            assert_eq!(pool.live(), q.backlog_pkts(), "{k}");
        }
        let s = q.stats();
        assert_eq!(s.dequeued_pkts, delivered);
        assert!(s.dropped_pkts() > 0, "{k}: the load should cause some drops: {s:?}");
    }
}
