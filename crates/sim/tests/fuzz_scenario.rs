//! Fuzzing that keeps going, on stable Rust: a seeded mutation loop over the scenarios of
//! `fuzz/corpus/scenario/` (the shipped scenarios as the JSON the simulator receives, 2 s long,
//! plus one using every part of the model), run as an ordinary test with a time and iteration
//! bound (cargo-fuzz needs nightly). Mutations act on the JSON tree: values replaced by garbled
//! units, huge and negative numbers, other types; keys deleted or misspelt; arrays grown; tables
//! nested deep. Every mutant goes through the estimate and the build; those that build and are
//! cheap also run. Fails on a panic or on one input taking longer than `SLOW`.
//!
//! A second loop builds scenarios from nothing: random JSON trees over the keys and values the
//! corpus uses, so parser paths no seed reaches are tried too. Every input also goes through
//! `scenario::expand` (the expander behind `jitterlab.scenario.expand`), which must agree with the
//! build on whether the scenario is valid. An input that panics or hangs is written to
//! `fuzz/corpus/scenario-found/` before the test fails; every file there is replayed on every
//! run (commit it: a failure found once stays a regression test).
//!
//! Longer runs: `JITTERLAB_FUZZ_SECS=600 JITTERLAB_FUZZ_SEED=7 cargo test --release -p
//! jitterlab-sim --test fuzz_scenario`.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use jitterlab_sim::{config, estimate, scenario};
use serde_json::{json, Map, Value};

const SLOW: Duration = Duration::from_secs(3);

fn env_u64(k: &str, d: u64) -> u64 { std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d) }

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize { if n == 0 { 0 } else { (self.next() % n as u64) as usize } }
}

const STRINGS: &[&str] = &[
    "", "0", "5", "-5ms", "0ms", "0s", "1ns", "1e20Mbit", "1e400s", "nan", "inf", "NaNs", "4mbps", "4Mbps", "0bit", "1bit",
    "0pkt", "1pkt", "1.5pkt", "0B", "1e19B", "9e18bit", "1e10s", "9e9s", "64kb", "10000pkt", "abc", "µs", "1 sec", "-0s",
    "e5s", "1e", "+3ms", "..1s", "3min", "1Gbit", "2KiB", "droptail", "red", "codel", "fq_codel", "pie", "audio", "bulk",
    "web", "ftp", "video", "server", "client", "router", "nowhere", "s1", "d1", "r1", "bottleneck", "bottleneck.rev",
];

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(9) {
        0..=2 => Value::String(STRINGS[rng.below(STRINGS.len())].into()),
        3 => json!([0u64, 1, 2, 1000, 10_000, 65_535, u32::MAX as u64, i64::MAX as u64, u64::MAX][rng.below(9)]),
        4 => json!([-1i64, i64::MIN, -1000][rng.below(3)]),
        5 => json!([0.0, 0.5, 1.0, 1.5, -0.1, 1e300, f64::MIN_POSITIVE][rng.below(7)]),
        6 => Value::Bool(rng.below(2) == 0),
        7 if depth < 3 => Value::Array((0..rng.below(3)).map(|_| random_value(rng, depth + 1)).collect()),
        _ => {
            let mut m = Map::new();
            if depth < 3 {
                m.insert(["kind", "limit", "rate", "from", "to", "dist"][rng.below(6)].into(), random_value(rng, depth + 1));
            }
            Value::Object(m)
        }
    }
}

/// Paths to every node of the tree (object keys and array indexes).
fn paths(v: &Value, here: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(here.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                here.push(Value::String(k.clone()));
                paths(x, here, out);
                here.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                here.push(json!(i));
                paths(x, here, out);
                here.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    let mut cur = v;
    for p in path {
        cur = match p {
            Value::String(k) => cur.get_mut(k.as_str()).expect("path from paths()"),
            _ => cur.get_mut(p.as_u64().unwrap() as usize).expect("path from paths()"),
        };
    }
    cur
}

fn mutate(rng: &mut Rng, base: &Value) -> Value {
    let mut v = base.clone();
    for _ in 0..1 + rng.below(3) {
        let mut all = vec![];
        paths(&v, &mut vec![], &mut all);
        let p = all[rng.below(all.len())].clone();
        let (parent_path, last) = match p.split_last() {
            Some((l, rest)) => (rest.to_vec(), Some(l.clone())),
            None => (vec![], None),
        };
        match rng.below(6) {
            0..=1 => *at(&mut v, &p) = random_value(rng, 0),
            2 => {
                // delete the key / element
                if let Some(l) = last {
                    match at(&mut v, &parent_path) {
                        Value::Object(m) => {
                            m.remove(l.as_str().unwrap_or_default());
                        }
                        Value::Array(a) => {
                            let i = l.as_u64().unwrap() as usize;
                            if i < a.len() {
                                a.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
            }
            3 => {
                // misspell a key: swap two adjacent letters
                if let Some(Value::String(k)) = last {
                    if let Value::Object(m) = at(&mut v, &parent_path) {
                        let mut c: Vec<char> = k.chars().collect();
                        if c.len() >= 2 {
                            let i = rng.below(c.len() - 1);
                            c.swap(i, i + 1);
                        }
                        if let Some(x) = m.remove(&k) {
                            m.insert(c.into_iter().collect(), x);
                        }
                    }
                }
            }
            4 => {
                // grow an array: repeat an element many times
                if let Value::Array(a) = at(&mut v, &p) {
                    if let Some(x) = a.first().cloned() {
                        let n = [2, 10, 100][rng.below(3)];
                        a.extend(std::iter::repeat_n(x, n));
                    }
                }
            }
            _ => {
                // nest: wrap the node in tables
                let node = at(&mut v, &p);
                let mut x = node.take();
                for _ in 0..1 + rng.below(50) {
                    x = json!({ "x": x });
                }
                *node = x;
            }
        }
    }
    v
}

/// Where inputs that failed are kept (and replayed from).
fn found_dir() -> PathBuf { PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/scenario-found") }

/// Writes `m` to the found corpus under a name from its bytes (FNV-1a); returns the path.
fn keep(m: &Value) -> PathBuf {
    let text = serde_json::to_string_pretty(m).expect("a Value serialises");
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    let p = found_dir().join(format!("{h:016x}.json"));
    let _ = std::fs::create_dir_all(found_dir());
    let _ = std::fs::write(&p, text + "\n");
    p
}

/// One input through the estimate, the expander and (when cheap) the build and a run: no panic,
/// no input slower than SLOW, and `expand` valid exactly when `build` is. Returns (built, ran).
/// A failing input is kept (`keep`) and named in the failure.
fn check(m: &Value, what: &str) -> (bool, bool) {
    let t = Instant::now();
    let res = catch_unwind(AssertUnwindSafe(|| {
        // every built-in kind says its cost, so the estimate refuses nothing
        let est = estimate::estimate(m).map_err(|e| format!("the estimate refused it: {e}"))?;
        // the estimate gates the run, as `simulate` does (a mutant may ask for 9e9 s)
        let cheap = est.events < 300_000.0 && est.memory_bytes < 2e9 && est.nodes < 2_000;
        if !cheap {
            return Ok((false, false));
        }
        let expanded = scenario::expand(m);
        match scenario::build(m, 1) {
            Ok(b) => {
                if let Err(e) = expanded {
                    return Err(format!("builds, but expand refuses it: {e}"));
                }
                let mut sim = b.sim;
                sim.run_until(b.duration);
                let _ = sim.finish();
                Ok((true, true))
            }
            Err(e) => match expanded {
                Ok(_) => Err(format!("expand accepts it, but the build refuses it: {e}")),
                Err(_) => Ok((false, false)),
            },
        }
    }));
    let slow = t.elapsed();
    match res {
        Ok(Ok(r)) if slow < SLOW => r,
        Ok(Ok(_)) => panic!("{what}: one input took {slow:?}; kept as {}", keep(m).display()),
        Ok(Err(why)) => panic!("{what}: {why}; kept as {}", keep(m).display()),
        Err(_) => panic!("{what}: panicked (message above); kept as {}", keep(m).display()),
    }
}

/// Every key and every leaf value of the corpus (for trees built from nothing).
fn vocabulary(seeds: &[(String, Value)]) -> (Vec<String>, Vec<String>, Vec<Value>) {
    fn walk(v: &Value, top: bool, root_keys: &mut Vec<String>, keys: &mut Vec<String>, leaves: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let list = if top { &mut *root_keys } else { &mut *keys };
                    if !list.contains(k) {
                        list.push(k.clone());
                    }
                    walk(x, false, root_keys, keys, leaves);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, false, root_keys, keys, leaves)),
            leaf => {
                if !leaves.contains(leaf) {
                    leaves.push(leaf.clone());
                }
            }
        }
    }
    let (mut r, mut k, mut l) = (vec![], vec![], vec![]);
    for (_, v) in seeds {
        walk(v, true, &mut r, &mut k, &mut l);
    }
    (r, k, l)
}

fn grow(rng: &mut Rng, keys: &[String], leaves: &[Value], depth: usize) -> Value {
    match rng.below(10) {
        0..=3 => leaves[rng.below(leaves.len())].clone(),
        4 => random_value(rng, 3),
        5..=6 if depth < 4 => Value::Array((0..1 + rng.below(3)).map(|_| grow(rng, keys, leaves, depth + 1)).collect()),
        _ if depth < 4 => {
            let mut m = Map::new();
            for _ in 0..1 + rng.below(5) {
                m.insert(keys[rng.below(keys.len())].clone(), grow(rng, keys, leaves, depth + 1));
            }
            Value::Object(m)
        }
        _ => leaves[rng.below(leaves.len())].clone(),
    }
}

#[test]
fn generated_trees_never_panic_or_hang() {
    let seeds = corpus();
    let (root_keys, keys, leaves) = vocabulary(&seeds);
    let seed = env_u64("JITTERLAB_FUZZ_SEED", 0x7472_6565);
    let budget = Duration::from_secs(env_u64("JITTERLAB_FUZZ_SECS", 2));
    let mut rng = Rng(seed);
    let start = Instant::now();
    let (mut iters, mut built) = (0u64, 0u64);
    while iters < 100_000 && start.elapsed() < budget {
        let mut m = Map::new();
        if rng.below(2) == 0 {
            // a crossover: the sections of two seeds mixed (a topology of one, the traffic of the other)
            let (a, b) = (&seeds[rng.below(seeds.len())].1, &seeds[rng.below(seeds.len())].1);
            m = a.as_object().cloned().unwrap_or_default();
            for (k, x) in b.as_object().into_iter().flatten() {
                if rng.below(2) == 0 {
                    m.insert(k.clone(), x.clone());
                }
            }
        } else if rng.below(4) != 0 {
            // most trees from nothing keep a name and a short duration, to get past the first checks
            m.insert("name".into(), json!("g"));
            m.insert("duration".into(), json!(["1s", "200ms", "2s"][rng.below(3)]));
        }
        for _ in 0..1 + rng.below(3) {
            m.insert(root_keys[rng.below(root_keys.len())].clone(), grow(&mut rng, &keys, &leaves, 1));
        }
        let (b, _) = check(&Value::Object(m), &format!("seed {seed:#x} tree {iters}"));
        built += b as u64;
        iters += 1;
    }
    eprintln!("fuzz_scenario: {iters} generated trees in {:.1?}, {built} built", start.elapsed());
    assert!(iters >= 50, "only {iters} trees ran");
}

#[test]
fn found_inputs_stay_fixed() {
    let Ok(dir) = std::fs::read_dir(found_dir()) else { return };
    let mut files: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        check(&v, &f.display().to_string());
    }
}

fn corpus() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/scenario");
    let mut out: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("seed corpus {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn seed_corpus_builds_and_runs() {
    for (name, v) in corpus() {
        let t = scenario::run(&v, 1).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(t.events > 0, "{name}");
    }
}

#[test]
fn mutated_scenarios_never_panic_or_hang() {
    let seeds = corpus();
    let seed = env_u64("JITTERLAB_FUZZ_SEED", 0x7363_656e);
    let budget = Duration::from_secs(env_u64("JITTERLAB_FUZZ_SECS", 3));
    let max_iters = env_u64("JITTERLAB_FUZZ_ITERS", 100_000);
    let mut rng = Rng(seed);
    let start = Instant::now();
    let (mut iters, mut built, mut ran) = (0u64, 0u64, 0u64);
    while iters < max_iters && start.elapsed() < budget {
        let (_, base) = &seeds[rng.below(seeds.len())];
        let m = mutate(&mut rng, base);
        let (b, r) = check(&m, &format!("seed {seed:#x} iteration {iters}"));
        built += b as u64;
        ran += r as u64;
        iters += 1;
    }
    eprintln!("fuzz_scenario: {iters} mutants in {:.1?}, {built} built, {ran} ran", start.elapsed());
    assert!(iters >= 50, "only {iters} mutants ran");
    assert!(built > 0, "no mutant built: the mutations are too destructive to reach the simulator");
}

#[test]
fn unit_parsers_never_panic() {
    let mut rng = Rng(env_u64("JITTERLAB_FUZZ_SEED", 1));
    let alphabet: Vec<char> = "0123456789.eE+-kKmMgGtTbBiIpPsSnNuµ/ aybitpsecminkt".chars().collect();
    for _ in 0..50_000 {
        let n = rng.below(12);
        let s: String = (0..n).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        let _ = config::duration_ns(&s);
        let _ = config::rate_bps(&s);
        let _ = config::size_value(&s);
        for name in ["delay", "rate", "queue", "kind"] {
            let _ = config::near_miss(&s, name);
        }
    }
}
