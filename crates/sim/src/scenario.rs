//! Scenarios: the TOML file (handed over as JSON by the Python front) turned into a [`Sim`].
//!
//! A scenario has a `name`, a `duration`, a topology, `[[traffic]]` entries and `[output]`.
//! Topologies are written either as generic links (`[links.NAME]` with `from`, `to`, `rate`,
//! `delay`, `queue`, optional `[links.NAME.reverse]`) or with one of two shorthands that expand
//! into links: `[access]` (server — core — router — bottleneck — client, asymmetric down/up) and
//! `[dumbbell]` (s1..sN — r1 — bottleneck — r2 — d1..dN). Each link is two channels: NAME
//! (from → to) and NAME.rev (to → from). Traffic kinds come from [`TRAFFIC`]: one builder per kind.
use serde_json::Value;

use crate::config::{ConfigError, Params};
use crate::engine::{ChannelSpec, Sim};
use crate::link::{Jitter, Trace};
use crate::packet::NodeId;
use crate::qdisc::{self, droptail, LinkInfo, Qdisc};
use crate::record::Tables;
use crate::rng::Rng;
use crate::time::{Rate, Time};

/// Builder of one `[[traffic]]` kind.
pub type TrafficBuilder = fn(&mut Params, &mut Build) -> Result<(), ConfigError>;

/// Every traffic kind a scenario may name (one line per kind).
pub const TRAFFIC: &[(&str, TrafficBuilder)] = &[
    ("audio", crate::media::build_audio),
    ("video", crate::media::build_video),
    ("bulk", crate::tcp::workload::build_bulk),
    ("web", crate::tcp::workload::build_web),
    ("ftp", crate::tcp::workload::build_ftp),
];

/// Default queue when a link names none: a 1000-packet DropTail, Linux's default txqueuelen.
pub const DEFAULT_QUEUE_PKTS: u64 = 1000;

/// What a traffic builder may use.
pub struct Build<'a> {
    pub sim: &'a mut Sim,
    pub duration: Time,
    pub seed: u64,
    counts: std::collections::BTreeMap<String, usize>,
}

impl<'a> Build<'a> {
    /// Looks up the host named under `key`.
    pub fn node(&self, p: &mut Params, key: &str) -> Result<NodeId, ConfigError> {
        let name = p.str(key)?;
        self.sim.node_id(&name).ok_or_else(|| {
            let names: Vec<&str> = self.sim.nodes().iter().map(|n| n.name.as_str()).collect();
            p.err(key, format!("no node named {name:?} (nodes: {})", names.join(", ")))
        })
    }
    pub fn add_flow(&mut self, name: &str, kind: &str) -> u32 { self.sim.add_flow(name, kind) }
    /// How many entries of `kind` were built before (for default names).
    pub fn count(&self, kind: &str) -> usize { self.counts.get(kind).copied().unwrap_or(0) }
}

/// One direction of a link as written.
struct Dir {
    rate: Rate,
    delay: Time,
    queue: Option<Params>,
    queue_path: String,
    jitter: Option<Jitter>,
    trace: Option<Trace>,
    loss: f64,
    reorder: bool,
}

struct Keys<'k> {
    rate: &'k str,
    delay: &'k str,
    queue: &'k str,
    jitter: &'k str,
    trace: &'k str,
    loss: &'k str,
    reorder: &'k str,
}

const PLAIN: Keys<'static> = Keys { rate: "rate", delay: "delay", queue: "queue", jitter: "jitter", trace: "trace_data", loss: "loss", reorder: "reorder" };

fn parse_jitter(p: &mut Params, key: &str) -> Result<Option<Jitter>, ConfigError> {
    let Some(mut j) = p.table_opt(key)? else { return Ok(None) };
    let dist = j.choice("dist", &["uniform", "exponential", "normal", "pareto"], None)?;
    let out = match dist.as_str() {
        "uniform" => {
            let lo = j.seconds_opt("min")?.unwrap_or(0.0);
            let hi = j.seconds_opt("max")?.ok_or_else(|| j.err("max", "missing"))?;
            if hi < lo {
                return Err(j.err("max", "must be >= min"));
            }
            Jitter::Uniform { lo, hi }
        }
        "exponential" => Jitter::Exponential { mean: j.seconds_opt("mean")?.ok_or_else(|| j.err("mean", "missing"))? },
        "normal" => Jitter::Normal {
            mean: j.seconds_opt("mean")?.ok_or_else(|| j.err("mean", "missing"))?,
            sd: j.seconds_opt("sd")?.ok_or_else(|| j.err("sd", "missing"))?,
        },
        _ => {
            let mean = j.seconds_opt("mean")?.ok_or_else(|| j.err("mean", "missing"))?;
            let shape = j.f64("shape")?;
            if !(shape > 1.0) {
                return Err(j.err("shape", format!("must be > 1 for a finite mean, got {shape}")));
            }
            Jitter::Pareto { mean, shape }
        }
    };
    j.finish()?;
    Ok(Some(out))
}

fn parse_dir(p: &mut Params, k: &Keys, inherit: Option<&Dir>) -> Result<Dir, ConfigError> {
    let rate = match (p.rate_opt(k.rate)?, inherit) {
        (Some(r), _) => r,
        (None, Some(d)) => d.rate,
        (None, None) => return Err(p.err(k.rate, "missing")),
    };
    let delay = match (p.duration_opt(k.delay)?, inherit) {
        (Some(t), _) => t,
        (None, Some(d)) => d.delay,
        (None, None) => return Err(p.err(k.delay, "missing")),
    };
    let queue_path = p.key_path(k.queue);
    let queue = match (p.table_opt(k.queue)?, inherit) {
        (Some(q), _) => Some(q),
        (None, Some(d)) => d.queue.as_ref().map(clone_params),
        (None, None) => None,
    };
    let queue_path = if queue.is_some() { queue.as_ref().map(|q| q.path().to_string()).unwrap_or(queue_path) } else { queue_path };
    let jitter = parse_jitter(p, k.jitter)?;
    let trace = match p.str_opt(k.trace)? {
        None => None,
        Some(text) => Some(Trace::parse(&text).map_err(|m| p.err(k.trace, format!("bad mahimahi trace: {m}")))?),
    };
    let loss = p.f64_or(k.loss, 0.0)?;
    if !(0.0..=1.0).contains(&loss) {
        return Err(p.err(k.loss, format!("must be a probability in [0, 1], got {loss}")));
    }
    let reorder = p.bool_or(k.reorder, false)?;
    Ok(Dir { rate, delay, queue, queue_path, jitter, trace, loss, reorder })
}

/// The reverse direction inherits the forward queue's settings (its own instance, same path in errors).
fn clone_params(q: &Params) -> Params { q.duplicate() }

struct LinkDef {
    name: String,
    from: String,
    to: String,
    fwd: Dir,
    rev: Dir,
}

fn parse_links(root: &mut Params) -> Result<Vec<LinkDef>, ConfigError> {
    let mut out = vec![];
    for (name, mut lp) in root.named_tables("links")? {
        if name.ends_with(".rev") || name.is_empty() {
            return Err(lp.err("", "link names may not be empty or end in .rev"));
        }
        let from = lp.str("from")?;
        let to = lp.str("to")?;
        if from == to {
            return Err(lp.err("to", format!("a link must join two different nodes, got {from:?} twice")));
        }
        let fwd = parse_dir(&mut lp, &PLAIN, None)?;
        let rev = match lp.table_opt("reverse")? {
            Some(mut rp) => {
                let d = parse_dir(&mut rp, &PLAIN, Some(&fwd))?;
                rp.finish()?;
                d
            }
            None => Dir { rate: fwd.rate, delay: fwd.delay, queue: fwd.queue.as_ref().map(clone_params), queue_path: fwd.queue_path.clone(), jitter: None, trace: None, loss: 0.0, reorder: false },
        };
        lp.finish()?;
        out.push(LinkDef { name, from, to, fwd, rev });
    }
    Ok(out)
}

fn parse_access(mut a: Params) -> Result<Vec<LinkDef>, ConfigError> {
    let server = a.str_opt("server")?.unwrap_or_else(|| "server".into());
    let router = a.str_opt("router")?.unwrap_or_else(|| "router".into());
    let client = a.str_opt("client")?.unwrap_or_else(|| "client".into());
    let core = parse_dir(&mut a, &Keys { rate: "core_rate", delay: "core_delay", queue: "core_queue", jitter: "core_jitter", trace: "core_trace_data", loss: "core_loss", reorder: "core_reorder" }, None)?;
    let core_rev = Dir { rate: core.rate, delay: core.delay, queue: core.queue.as_ref().map(clone_params), queue_path: core.queue_path.clone(), jitter: None, trace: None, loss: 0.0, reorder: false };
    let down = parse_dir(&mut a, &Keys { rate: "down_rate", delay: "down_delay", queue: "down_queue", jitter: "down_jitter", trace: "down_trace_data", loss: "down_loss", reorder: "down_reorder" }, None)?;
    let up = parse_dir(&mut a, &Keys { rate: "up_rate", delay: "up_delay", queue: "up_queue", jitter: "up_jitter", trace: "up_trace_data", loss: "up_loss", reorder: "up_reorder" }, Some(&down))?;
    a.finish()?;
    Ok(vec![
        LinkDef { name: "core".into(), from: server, to: router.clone(), fwd: core, rev: core_rev },
        LinkDef { name: "bottleneck".into(), from: router, to: client, fwd: down, rev: up },
    ])
}

fn parse_dumbbell(mut d: Params) -> Result<Vec<LinkDef>, ConfigError> {
    let n = d.u64("pairs")?;
    if n == 0 || n > 10_000 {
        return Err(d.err("pairs", format!("must be between 1 and 10000, got {n}")));
    }
    let bn = parse_dir(&mut d, &Keys { rate: "bottleneck_rate", delay: "bottleneck_delay", queue: "queue", jitter: "bottleneck_jitter", trace: "bottleneck_trace_data", loss: "bottleneck_loss", reorder: "bottleneck_reorder" }, None)?;
    let bn_rev_queue = d.table_opt("reverse_queue")?;
    let acc = parse_dir(&mut d, &Keys { rate: "access_rate", delay: "access_delay", queue: "access_queue", jitter: "access_jitter", trace: "access_trace_data", loss: "access_loss", reorder: "access_reorder" }, None)?;
    // Per-host access delays (e.g. to give flows different RTTs), one per pair.
    let delays = match d.value_opt("access_delays") {
        None => None,
        Some(Value::Array(items)) => {
            if items.len() as u64 != n {
                return Err(d.err("access_delays", format!("needs one delay per pair ({n}), got {}", items.len())));
            }
            let mut v = vec![];
            for (i, it) in items.iter().enumerate() {
                let s = it.as_str().ok_or_else(|| d.err(&format!("access_delays[{i}]"), "expected a duration string"))?;
                let x = crate::config::parse_duration(s).map_err(|m| d.err(&format!("access_delays[{i}]"), m))?;
                v.push(Time::from_secs_f64(x));
            }
            Some(v)
        }
        Some(_) => return Err(d.err("access_delays", "expected an array of durations")),
    };
    d.finish()?;
    let mut out = vec![];
    let same = |x: &Dir, delay: Time| Dir { rate: x.rate, delay, queue: x.queue.as_ref().map(clone_params), queue_path: x.queue_path.clone(), jitter: x.jitter.clone(), trace: None, loss: x.loss, reorder: x.reorder };
    for i in 1..=n {
        let delay = delays.as_ref().map(|v| v[(i - 1) as usize]).unwrap_or(acc.delay);
        out.push(LinkDef { name: format!("s{i}"), from: format!("s{i}"), to: "r1".into(), fwd: same(&acc, delay), rev: same(&acc, delay) });
    }
    let bn_rev = Dir {
        rate: bn.rate,
        delay: bn.delay,
        queue: bn_rev_queue.or_else(|| bn.queue.as_ref().map(clone_params)),
        queue_path: bn.queue_path.clone(),
        jitter: None,
        trace: None,
        loss: 0.0,
        reorder: false,
    };
    out.push(LinkDef { name: "bottleneck".into(), from: "r1".into(), to: "r2".into(), fwd: bn, rev: bn_rev });
    for i in 1..=n {
        let delay = delays.as_ref().map(|v| v[(i - 1) as usize]).unwrap_or(acc.delay);
        out.push(LinkDef { name: format!("d{i}"), from: "r2".into(), to: format!("d{i}"), fwd: same(&acc, delay), rev: same(&acc, delay) });
    }
    Ok(out)
}

fn build_qdisc(q: Option<Params>, path: &str, rate: Rate, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let Some(mut q) = q else {
        return Ok(Box::new(droptail::DropTail::new(droptail::Limit::Packets(DEFAULT_QUEUE_PKTS))));
    };
    let kinds = qdisc::kinds();
    let kind = q.choice("kind", &kinds, None).map_err(|e| if e.path.is_empty() { ConfigError::new(path, e.msg) } else { e })?;
    let b = qdisc::builder(&kind).expect("kind checked against the registry");
    let built = b(&mut q, LinkInfo { rate, mtu: 1500 }, rng)?;
    q.finish()?;
    Ok(built)
}

/// The scenario read and built, ready to run.
pub struct Built {
    pub sim: Sim,
    pub name: String,
    pub duration: Time,
}

/// Reads `v` (the scenario as JSON) and builds the simulation for `seed`.
pub fn build(v: &Value, seed: u64) -> Result<Built, ConfigError> {
    let mut root = Params::new("", v)?;
    let name = root.str_opt("name")?.unwrap_or_else(|| "scenario".into());
    root.str_opt("description")?;
    let duration = root.duration("duration")?;
    if duration == Time::ZERO {
        return Err(root.err("duration", "must be > 0"));
    }
    let mut links = parse_links(&mut root)?;
    if let Some(a) = root.table_opt("access")? {
        links.extend(parse_access(a)?);
    }
    if let Some(d) = root.table_opt("dumbbell")? {
        links.extend(parse_dumbbell(d)?);
    }
    if links.is_empty() {
        return Err(ConfigError::new("links", "the scenario has no topology: give [links.NAME] tables, [access] or [dumbbell]"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for l in &links {
        if !seen.insert(l.name.clone()) {
            return Err(ConfigError::new(format!("links.{}", l.name), "a link of this name is defined twice (shorthands define core, bottleneck, s1.., d1..)"));
        }
    }

    let mut sim = Sim::new(seed);
    for l in &links {
        for n in [&l.from, &l.to] {
            if sim.node_id(n).is_none() {
                sim.add_node(n);
            }
        }
    }

    let mut output = root.table_opt("output")?;
    let sample_every = match output.as_mut() {
        Some(o) => o.duration_opt("queue_sample_interval")?,
        None => None,
    };
    let sampled: Option<Vec<String>> = match output.as_mut() {
        Some(o) => o.strings("queues")?,
        None => None,
    };
    let taps: Vec<String> = match output.as_mut() {
        Some(o) => o.strings("pcap")?.unwrap_or_default(),
        None => vec![],
    };
    let snaplen = match output.as_mut() {
        Some(o) => o.u64_or("pcap_snaplen", 65_535)?,
        None => 65_535,
    };
    if !(54..=262_144).contains(&snaplen) {
        return Err(ConfigError::new("output.pcap_snaplen", format!("must be between 54 (Ethernet+IPv4+TCP headers) and 262144, got {snaplen}")));
    }
    sim.set_pcap_snaplen(snaplen as u32);
    for (i, n) in taps.iter().enumerate() {
        match sim.node_id(n) {
            Some(id) => sim.tap(id),
            None => return Err(ConfigError::new(format!("output.pcap[{i}]"), format!("no node named {n:?}"))),
        }
    }
    if let Some(o) = output {
        o.finish()?;
    }
    if let Some(names) = &sampled {
        for (i, n) in names.iter().enumerate() {
            let base = n.trim_end_matches(".rev");
            if !links.iter().any(|l| l.name == base) {
                return Err(ConfigError::new(format!("output.queues[{i}]"), format!("no link named {base:?}")));
            }
        }
    }

    for l in links {
        let from = sim.node_id(&l.from).expect("added");
        let to = sim.node_id(&l.to).expect("added");
        for (dir, name, a, b) in [(l.fwd, l.name.clone(), from, to), (l.rev, format!("{}.rev", l.name), to, from)] {
            let mut rng = Rng::stream(seed, &format!("qdisc:{name}"));
            let q = build_qdisc(dir.queue, &dir.queue_path, dir.rate, &mut rng)?;
            let is_sampled = match &sampled {
                Some(v) => v.iter().any(|s| *s == name),
                None => !name.ends_with(".rev"),
            };
            sim.add_channel(ChannelSpec { name, from: a, to: b, rate: dir.rate, delay: dir.delay, qdisc: q, trace: dir.trace, jitter: dir.jitter, reorder: dir.reorder, loss: dir.loss, sampled: is_sampled });
        }
    }
    let missing = sim.compute_routes();
    if let Some((a, b)) = missing.first() {
        return Err(ConfigError::new("links", format!("node {:?} cannot reach node {:?}: the topology is not connected", sim.node_name(*a), sim.node_name(*b))));
    }
    if let Some(every) = sample_every {
        sim.sample_queues_every(every);
    }

    let mut b = Build { sim: &mut sim, duration, seed, counts: Default::default() };
    for mut t in root.tables("traffic")? {
        // `enabled = false` keeps an entry in the file but out of the run (sweeps over N flows).
        if !t.bool_or("enabled", true)? {
            continue;
        }
        let kinds: Vec<&str> = TRAFFIC.iter().map(|(k, _)| *k).collect();
        let kind = t.choice("kind", &kinds, None)?;
        let f = TRAFFIC.iter().find(|(k, _)| *k == kind).map(|(_, f)| *f).expect("checked");
        f(&mut t, &mut b)?;
        *b.counts.entry(kind).or_insert(0) += 1;
        t.finish()?;
    }
    root.finish()?;
    Ok(Built { sim, name, duration })
}

/// Builds and runs the scenario for its duration.
pub fn run(v: &Value, seed: u64) -> Result<Tables, ConfigError> {
    let Built { mut sim, duration, .. } = build(v, seed)?;
    sim.run_until(duration);
    Ok(sim.finish())
}
