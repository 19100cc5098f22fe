//! Every entry of the traffic-kind and queue-discipline registries, looped over from the registry
//! itself (no hand-written list), so that a new entry is tested by being registered:
//!
//! - counter identities of the run: sent = delivered + dropped + in flight (packets and bytes),
//!   and per queue arrived = enqueued + dropped on arrival, backlog = enqueued − dequeued −
//!   dropped from the queue (`QueueStats::check`);
//! - determinism: two runs with the same seed give the same tables (their whole `Debug` form);
//! - a misspelt key is refused with an error that names its path;
//! - traffic kinds: the estimate's flows equal the run's, and its media rows are within the
//!   stated factor of the run's (zero when the run has none); a kind that cannot say its cost
//!   makes the estimate an error naming the kind.
//!
//! The recipes of docs/traffic.md and docs/queues.md are `recipes/burst.rs` and
//! `recipes/headdrop.rs`: each is added to a copy of its registry by one line and must pass the
//! same loop (and the docs must show the files as they are).
#[path = "recipes/burst.rs"]
mod burst;
#[path = "recipes/headdrop.rs"]
mod headdrop;

use jitterlab_sim::config::Params;
use jitterlab_sim::estimate::{estimate_with, STATED_FACTOR};
use jitterlab_sim::packet::{Body, Ecn, Packet, PacketPool};
use jitterlab_sim::qdisc::{self, LinkInfo, Verdict};
use jitterlab_sim::record::Tables;
use jitterlab_sim::rng::Rng;
use jitterlab_sim::scenario::{self, Registries, BUILTIN};
use jitterlab_sim::traffic::{self, Kind};
use jitterlab_sim::{Rate, Time};
use serde_json::{json, Value};

/// a — b at 10 Mbit/s, 10 ms, with the queue `queue` on both directions (null: the default).
fn scenario_with(entries: Vec<Value>, queue: Value) -> Value {
    let mut v = json!({"duration": "3s", "links": {"l": {"from": "a", "to": "b", "rate": "10Mbit", "delay": "10ms"}}, "traffic": entries});
    if !queue.is_null() {
        v["links"]["l"]["queue"] = queue;
    }
    v
}

/// The entry of `kind` from one of its examples, from a to b.
fn entry(kind: &str, example: &str) -> Value {
    let mut e: Value = serde_json::from_str(example).unwrap_or_else(|e| panic!("{kind}: example {example:?} is not JSON: {e}"));
    let m = e.as_object_mut().unwrap_or_else(|| panic!("{kind}: example {example:?} is not a table"));
    m.insert("kind".into(), json!(kind));
    m.insert("from".into(), json!("a"));
    m.insert("to".into(), json!("b"));
    e
}

fn run(v: &Value, reg: Registries) -> Tables { scenario::run_with(v, 7, reg).unwrap_or_else(|e| panic!("{v}: {e}")) }

/// The run's identities, per run and per queue.
fn check_identities(what: &str, t: &Tables) {
    t.check_conservation().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(t.sent_pkts > 0, "{what}: nothing was sent");
    for c in &t.channels {
        c.stats.check(c.backlog_pkts as usize, c.backlog_bytes).unwrap_or_else(|e| panic!("{what}, {}: {e}", c.name));
    }
}

fn check_traffic_registry(kinds: &[Kind]) {
    let reg = Registries { traffic: kinds, queues: BUILTIN.queues };
    for k in kinds {
        assert!(!k.examples.is_empty(), "{}: the registry entry gives no example", k.name);
        for ex in k.examples {
            let what = format!("{} {ex}", k.name);
            let v = scenario_with(vec![entry(k.name, ex)], json!({"kind": "droptail", "limit": "100pkt"}));
            let t = run(&v, reg);
            check_identities(&what, &t);
            assert_eq!(format!("{t:?}"), format!("{:?}", run(&v, reg)), "{what}: two runs with one seed differ");

            let est = estimate_with(&v, kinds).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(est.flows, t.flows.len() as u64, "{what}: estimated flows");
            let rows = t.media.len() as f64;
            if rows == 0.0 {
                assert_eq!(est.media_rows, 0.0, "{what}: estimated media rows for a run with none");
            } else {
                assert!(est.media_rows >= rows / 2.0 && est.media_rows <= rows * STATED_FACTOR, "{what}: estimated {} media rows, ran {rows}", est.media_rows);
            }

            let mut bad = entry(k.name, ex);
            bad["colour"] = json!("red");
            let e = scenario::build_with(&scenario_with(vec![bad], Value::Null), 7, reg).err().unwrap_or_else(|| panic!("{what}: a misspelt key was accepted"));
            assert!(e.to_string().starts_with("traffic[0].colour: unknown key"), "{what}: {e}");
        }
        // the same kind, unable to say its cost: the estimate refuses it by name
        let mut blind: Vec<Kind> = kinds.to_vec();
        blind.iter_mut().find(|x| x.name == k.name).unwrap().cost = None;
        let v = scenario_with(vec![entry(k.name, k.examples[0])], Value::Null);
        let e = estimate_with(&v, &blind).unwrap_err().to_string();
        assert_eq!(e, format!("traffic[0].kind: traffic kind {:?} cannot estimate its cost (its registry entry has no `cost`)", k.name));
    }
}

#[test]
fn every_traffic_kind_keeps_the_identities_and_the_estimate() { check_traffic_registry(traffic::KINDS); }

/// docs/traffic.md's recipe: one file and one registry line.
#[test]
fn the_traffic_recipe_passes_the_same_loop() {
    let mut kinds = traffic::KINDS.to_vec();
    kinds.push(burst::KIND);
    check_traffic_registry(&kinds);
    // 30 packets of 1000 B at 1 s over 10 Mbit/s: the last leaves 30 · 0.8 ms after the first
    let v = scenario_with(vec![entry("burst", r#"{"count": 30, "at": "1s"}"#)], Value::Null);
    let reg = Registries { traffic: &kinds, queues: BUILTIN.queues };
    let t = run(&v, reg);
    assert_eq!(t.media.len(), 30);
    assert_eq!((t.media.send_ns[0], t.media.send_ns[29]), (1_000_000_000, 1_000_000_000));
    let first = t.media.recv_ns[0];
    assert_eq!(first, 1_000_000_000 + 800_000 + 10_000_000);
    assert_eq!(t.media.recv_ns[29] - first, 29 * 800_000);
    // its validation names the key (the message docs/traffic.md quotes)
    let bad = scenario_with(vec![entry("burst", r#"{"count": 0}"#)], Value::Null);
    let e = scenario::build_with(&bad, 7, reg).err().expect("count = 0 accepted");
    assert_eq!(e.to_string(), "traffic[0].count: must be between 1 and 10000, got 0");
}

/// Builds discipline `kind` from an empty table, or, when it requires a key, from `limit = 100pkt`.
fn build_queue(queues: &[(&'static str, qdisc::Builder)], kind: &str, table: &Value) -> Box<dyn qdisc::Qdisc> {
    let b = queues.iter().find(|(k, _)| *k == kind).unwrap().1;
    let link = LinkInfo { rate: Rate(2_000_000), mtu: 1500 };
    let mut p = Params::new("queue", table).unwrap();
    let q = b(&mut p, link, &mut Rng::stream(9, "channel:b")).unwrap_or_else(|e| panic!("{kind} {table}: {e}"));
    p.finish().unwrap();
    q
}

/// The table a discipline is tested with: all defaults where it has them.
fn queue_table(queues: &[(&'static str, qdisc::Builder)], kind: &str) -> Value {
    let b = queues.iter().find(|(k, _)| *k == kind).unwrap().1;
    let mut p = Params::new("queue", &json!({})).unwrap();
    match b(&mut p, LinkInfo { rate: Rate(2_000_000), mtu: 1500 }, &mut Rng::stream(9, "c")) {
        Ok(_) => json!({}),
        // droptail has no default limit (ns-2 and Linux both need one given)
        Err(e) if e.path == "queue.limit" => json!({"limit": "100pkt"}),
        Err(e) => panic!("{kind}: {e}"),
    }
}

fn check_queue_registry(queues: &[(&'static str, qdisc::Builder)]) {
    let reg = Registries { traffic: BUILTIN.traffic, queues };
    for &(kind, _) in queues {
        let table = queue_table(queues, kind);
        // Random load through the trait alone, slightly above the 2 Mbit/s link.
        let mut q = build_queue(queues, kind, &table);
        assert_eq!((q.kind(), q.backlog_pkts()), (kind, 0));
        let (mut pool, mut r, mut scratch, mut t) = (PacketPool::new(), Rng::stream(4, kind), vec![], Time::ZERO);
        for _ in 0..50_000 {
            t += Time::from_us(r.uniform_range(0.0, 7000.0) as u64);
            if r.uniform() < 0.55 {
                let ecn = if r.uniform() < 0.5 { Ecn::Ect0 } else { Ecn::NotEct };
                let pkt = Packet { flow: (r.next_u64() % 5) as u32, src: 0, dst: 1, dst_agent: 0, size: 100 + (r.next_u64() % 1400) as u32, ecn, sent: t, body: Body::Raw };
                let id = pool.insert(pkt);
                if let Verdict::Dropped(_) = q.enqueue(id, &mut pool, t, &mut scratch) {
                    pool.remove(id);
                }
            } else if let Some(id) = q.dequeue(&mut pool, t, &mut scratch) {
                pool.remove(id);
            }
            for (id, _) in scratch.drain(..) {
                pool.remove(id);
            }
            q.stats().check(q.backlog_pkts(), q.backlog_bytes()).unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(pool.live(), q.backlog_pkts(), "{kind}: packets held != backlog");
        }

        // A run through the scenario: a TCP flow and an audio flow share the queue.
        let traffic = vec![entry("ftp", "{}"), entry("audio", "{}")];
        let mut queue = table.clone();
        queue["kind"] = json!(kind);
        let v = scenario_with(traffic.clone(), queue.clone());
        let tables = run(&v, reg);
        check_identities(kind, &tables);
        assert_eq!(tables.channels[0].qdisc, kind);
        assert_eq!(format!("{tables:?}"), format!("{:?}", run(&v, reg)), "{kind}: two runs with one seed differ");

        let mut bad = queue;
        bad["colour"] = json!("red");
        let e = scenario::build_with(&scenario_with(traffic, bad), 7, reg).err().unwrap_or_else(|| panic!("{kind}: a misspelt key was accepted"));
        assert!(e.to_string().starts_with("links.l.queue.colour: unknown key"), "{kind}: {e}");
    }
}

#[test]
fn every_queue_discipline_keeps_the_identities() { check_queue_registry(qdisc::REGISTRY); }

/// docs/queues.md's recipe: one file and one registry line.
#[test]
fn the_queue_recipe_passes_the_same_loop() {
    let mut queues = qdisc::REGISTRY.to_vec();
    queues.push(("headdrop", headdrop::build));
    check_queue_registry(&queues);
    // limit 2: a third packet pushes out the first, so the queue serves the second and third
    let mut q = build_queue(&queues, "headdrop", &json!({"limit": 2}));
    let (mut pool, mut scratch) = (PacketPool::new(), vec![]);
    let ids: Vec<_> = (0..3).map(|i| pool.insert(Packet { flow: i, src: 0, dst: 1, dst_agent: 0, size: 100, ecn: Ecn::NotEct, sent: Time::ZERO, body: Body::Raw })).collect();
    for &id in &ids {
        assert_eq!(q.enqueue(id, &mut pool, Time::ZERO, &mut scratch), Verdict::Queued);
    }
    assert_eq!(scratch, vec![(ids[0], qdisc::DropReason::Overflow)]);
    assert_eq!(q.dequeue(&mut pool, Time::ZERO, &mut scratch), Some(ids[1]));
    assert_eq!(q.dequeue(&mut pool, Time::ZERO, &mut scratch), Some(ids[2]));
}

/// The docs show the recipe files as they are (with `crate::` where the files, compiled as a
/// test, say `jitterlab_sim::`).
#[test]
fn the_docs_show_the_recipes_as_tested() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    for (doc, file) in [("docs/traffic.md", "recipes/burst.rs"), ("docs/queues.md", "recipes/headdrop.rs")] {
        let text = std::fs::read_to_string(format!("{root}/{doc}")).unwrap();
        let code = std::fs::read_to_string(format!("{}/tests/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap().replace("jitterlab_sim::", "crate::");
        assert!(text.contains(&format!("```rust\n{code}```\n")), "{doc} does not show tests/{file} as it is");
    }
}
