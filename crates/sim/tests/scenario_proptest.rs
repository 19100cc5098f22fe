//! Property-based fuzzing of the scenario parser and expander with proptest, beside the seeded
//! mutation loop of fuzz_scenario.rs: random JSON trees over the format's own vocabulary (every key
//! and choice of the schema generated from the parser, src/schema.rs, and the unit strings and
//! numbers that break parsers), and the shipped scenarios (fuzz/corpus/scenario/) with random
//! edits — a value replaced by a random tree, a key deleted or misspelt. proptest shrinks a failure
//! to a small input and records its seed in fuzz/proptest-regressions/scenario_proptest.txt, which
//! is replayed first on every run (commit it).
//!
//! Properties, for every input: no panic; the estimate, the build and the expander agree on
//! validity; every refusal is one line that names a key — its path ends in a key of the input or
//! of the format (or `<root>`). Bounded: CASES inputs a property (a few seconds in release);
//! `PROPTEST_CASES=20000 cargo test --release -p jitterlab-sim --test scenario_proptest` for more.
use std::collections::BTreeSet;
use std::sync::OnceLock;

use jitterlab_sim::{config::ConfigError, estimate, scenario};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Map, Value};

const CASES: u32 = 400;

/// Strings that stress the unit parsers and name lookups.
const STRINGS: &[&str] = &[
    "", "0", "-5ms", "0s", "1ns", "1e20Mbit", "1e400s", "nan", "inf", "4mbps", "0bit", "1pkt", "1.5pkt", "1e19B", "64kb",
    "abc", "µs", "1 sec", "e5s", "1e", "+3ms", "..1s", "3min", "1Gbit", "2KiB", "a", "b", "server", "client", "router", "s1",
    "d1", "bottleneck", "bottleneck.rev", "/etc/passwd", "../x", "\u{202e}x", "x\u{0}y", "1s", "10ms", "1Mbit", "1000B",
];

/// Keys and choice values of the format, from the schema the parser generates.
fn vocabulary() -> &'static (Vec<String>, Vec<String>, BTreeSet<String>) {
    static V: OnceLock<(Vec<String>, Vec<String>, BTreeSet<String>)> = OnceLock::new();
    V.get_or_init(|| {
        fn walk(v: &Value, keys: &mut BTreeSet<String>, choices: &mut BTreeSet<String>) {
            match v {
                Value::Object(m) => {
                    if let Some(Value::Object(p)) = m.get("properties") {
                        keys.extend(p.keys().cloned());
                    }
                    if let Some(Value::Array(e)) = m.get("enum") {
                        choices.extend(e.iter().filter_map(|x| x.as_str().map(str::to_string)));
                    }
                    m.values().for_each(|x| walk(x, keys, choices));
                }
                Value::Array(a) => a.iter().for_each(|x| walk(x, keys, choices)),
                _ => {}
            }
        }
        let (mut keys, mut choices) = (BTreeSet::new(), BTreeSet::new());
        walk(&jitterlab_sim::schema::scenario_schema(), &mut keys, &mut choices);
        let words: Vec<String> = STRINGS.iter().map(|s| s.to_string()).chain(choices).collect();
        (keys.iter().cloned().collect(), words, keys)
    })
}

fn leaf() -> impl Strategy<Value = Value> {
    let words = vocabulary().1.clone();
    prop_oneof![
        3 => prop::sample::select(words).prop_map(Value::String),
        1 => any::<i64>().prop_map(|n| json!(n)),
        1 => any::<u64>().prop_map(|n| json!(n)),
        1 => prop::sample::select(vec![0.0, 0.5, 1.0, -0.1, 1e300, f64::MIN_POSITIVE, 1.5]).prop_map(|x| json!(x)),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ]
}

fn tree() -> impl Strategy<Value = Value> {
    let keys = vocabulary().0.clone();
    leaf().prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop::sample::select(keys.clone()), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A scenario from nothing: root keys of the format with random trees, usually a valid duration.
fn scenario_tree() -> impl Strategy<Value = Value> {
    let keys = vocabulary().0.clone();
    (prop::collection::btree_map(prop::sample::select(keys), tree(), 0..8), prop::option::of(prop::sample::select(vec!["1s", "200ms"]))).prop_map(|(m, d)| {
        let mut m: Map<String, Value> = m.into_iter().collect();
        if let Some(d) = d {
            m.insert("duration".into(), json!(d));
        }
        Value::Object(m)
    })
}

fn corpus() -> &'static Vec<Value> {
    static C: OnceLock<Vec<Value>> = OnceLock::new();
    C.get_or_init(|| {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/scenario");
        let mut files: Vec<_> = std::fs::read_dir(&dir).expect("seed corpus").map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
        files.sort();
        files.iter().map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()).collect()
    })
}

#[derive(Clone, Debug)]
enum Edit {
    Replace(Value),
    Delete,
    Misspell,
}

fn edit() -> impl Strategy<Value = (prop::sample::Index, Edit)> {
    (any::<prop::sample::Index>(), prop_oneof![3 => tree().prop_map(Edit::Replace), 1 => Just(Edit::Delete), 1 => Just(Edit::Misspell)])
}

/// Every place in `v`: (path of keys/indices) for each value under a table or an array.
fn places(v: &Value, here: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            here.push(json!(k));
            out.push(here.clone());
            places(x, here, out);
            here.pop();
        }),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
            here.push(json!(i));
            out.push(here.clone());
            places(x, here, out);
            here.pop();
        }),
        _ => {}
    }
}

fn apply(doc: &mut Value, (at, e): &(prop::sample::Index, Edit)) {
    let mut all = vec![];
    places(doc, &mut vec![], &mut all);
    if all.is_empty() {
        return;
    }
    let path = &all[at.index(all.len())];
    let (last, parent) = path.split_last().expect("non-empty");
    let mut t = &mut *doc;
    for s in parent {
        t = match s {
            Value::String(k) => &mut t[k.as_str()],
            _ => &mut t[s.as_u64().unwrap() as usize],
        };
    }
    match (t, last, e) {
        (Value::Object(m), Value::String(k), Edit::Replace(v)) => {
            m.insert(k.clone(), v.clone());
        }
        (Value::Object(m), Value::String(k), Edit::Delete) => {
            m.remove(k);
        }
        (Value::Object(m), Value::String(k), Edit::Misspell) => {
            if let Some(v) = m.remove(k) {
                let mut typo: Vec<char> = k.chars().collect();
                if typo.len() > 1 {
                    typo.swap(0, 1);
                } else {
                    typo.push('x');
                }
                m.insert(typo.into_iter().collect(), v);
            }
        }
        (Value::Array(a), i, Edit::Replace(v)) => a[i.as_u64().unwrap() as usize] = v.clone(),
        (Value::Array(a), i, _) => {
            a.remove(i.as_u64().unwrap() as usize);
        }
        _ => {}
    }
}

/// Every key of `v`, at any depth.
fn keys_of(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.insert(k.clone());
            keys_of(x, out);
        }),
        Value::Array(a) => a.iter().for_each(|x| keys_of(x, out)),
        _ => {}
    }
}

fn names_a_key(e: &ConfigError, input: &Value) -> Result<(), TestCaseError> {
    let line = e.to_string();
    prop_assert!(!line.contains('\n') && !line.contains('\r'), "a refusal on several lines: {line:?}");
    prop_assert!(!e.path.is_empty() && !e.msg.is_empty(), "a refusal without a key or a reason: {line:?}");
    if e.path == "<root>" {
        return Ok(());
    }
    // the last key of the path: `links.x.queue.kind` -> kind, `output.pcap[0]` -> pcap
    let last = e.path.rsplit('.').next().unwrap_or("").split('[').next().unwrap_or("");
    let mut given = BTreeSet::new();
    keys_of(input, &mut given);
    prop_assert!(given.contains(last) || vocabulary().2.contains(last), "the refusal names no key of the input or the format: {line:?}");
    Ok(())
}

fn check(v: &Value) -> Result<(), TestCaseError> {
    // every built-in kind says its cost, so the estimate refuses nothing
    let est = estimate::estimate(v).map_err(|e| TestCaseError::fail(format!("the estimate refused it: {e}")))?;
    // the estimate gates the build, as `simulate` does (a tree may ask for 1e300 flows or 9e9 s)
    if !(est.events < 1e7 && est.memory_bytes < 2e9 && est.nodes < 2_000) {
        return Ok(());
    }
    let built = scenario::build(v, 1).map(|_| ());
    let expanded = scenario::expand(v).map(|_| ());
    for e in [&built, &expanded].into_iter().filter_map(|r| r.as_ref().err()) {
        names_a_key(e, v)?;
    }
    prop_assert_eq!(built.is_ok(), expanded.is_ok(), "build and expand disagree: {:?} / {:?}", built, expanded);
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(CASES),
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("../../fuzz/proptest-regressions/scenario_proptest.txt"))),
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_trees_are_refused_in_one_line_naming_a_key(v in scenario_tree()) {
        check(&v)?;
    }

    #[test]
    fn edited_shipped_scenarios_are_refused_in_one_line_naming_a_key(seed in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..4)) {
        let mut v = corpus()[seed.index(corpus().len())].clone();
        for e in &edits {
            apply(&mut v, e);
        }
        check(&v)?;
    }
}

#[test]
fn an_unedited_seed_builds() {
    // the edits start from valid scenarios: a corpus that stopped building would fuzz only refusals
    for v in corpus() {
        scenario::build(v, 1).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn the_checks_can_fail() {
    // a refusal on two lines, one with no key, one naming a key neither the input nor the format has
    let v = json!({"duration": "1s"});
    assert!(names_a_key(&ConfigError::new("links", "no topology\nat all"), &v).is_err());
    assert!(names_a_key(&ConfigError::new("", "no key"), &v).is_err());
    assert!(names_a_key(&ConfigError::new("links.x.frobnicate", "bad"), &v).is_err());
    assert!(names_a_key(&ConfigError::new("links.x.rate", "must be > 0"), &v).is_ok());
    assert!(names_a_key(&ConfigError::new("output.pcap[0]", "no node named \"q\""), &v).is_ok());
}
