//! Scenarios: the TOML file (handed over as JSON by the Python front) turned into a [`Sim`].
//!
//! A scenario has a `name`, a `duration`, a topology, `[[traffic]]` entries and `[output]`.
//! Topologies are written either as generic links (`[links.NAME]` with `from`, `to`, `rate`,
//! `delay`, `queue`, optional `[links.NAME.reverse]`) or with one of two shorthands that expand
//! into links: `[access]` (server — core — router — bottleneck — client, asymmetric down/up) and
//! `[dumbbell]` (s1..sN — r1 — bottleneck — r2 — d1..dN). Each link is two channels: NAME
//! (from → to) and NAME.rev (to → from). Traffic kinds come from [`TRAFFIC`]: one builder per kind.
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use crate::config::{ConfigError, Params};
use crate::engine::{ChannelSpec, Sim};
use crate::cellular::CellularParams;
use crate::link::{Capacity, Jitter, LossBursts, TokenBucket, Trace};
use crate::packet::NodeId;
use crate::qdisc::{self, droptail, LinkInfo, Qdisc};
use crate::record::Tables;
use crate::rng::Rng;
use crate::tcp::moderation::{MediaPresence, ModerationConfig, Moderator};
use crate::time::{Rate, Time};

/// Builder of one `[[traffic]]` kind.
pub type TrafficBuilder = fn(&mut Params, &mut Build) -> Result<(), ConfigError>;

/// Every traffic kind a scenario may name (one line per kind).
pub const TRAFFIC: &[(&str, TrafficBuilder)] = &[
    ("audio", crate::media::build_audio),
    ("video", crate::media::build_video),
    ("bulk", crate::rtc::agent::build_bulk),
    ("web", crate::rtc::agent::build_web),
    ("ftp", crate::rtc::agent::build_ftp),
];

/// Default queue when a link names none: a 1000-packet DropTail, Linux's default txqueuelen.
pub const DEFAULT_QUEUE_PKTS: u64 = 1000;

/// What a traffic builder may use.
pub struct Build<'a> {
    pub sim: &'a mut Sim,
    pub duration: Time,
    pub seed: u64,
    counts: std::collections::BTreeMap<String, usize>,
    /// Per receiving host: its RWND moderator (`[hosts.NAME.rwnd]`) and the weights of its split.
    hosts: BTreeMap<NodeId, HostModeration>,
    /// The scenario's `stack` (the profile of TCP entries that name none).
    stack: String,
    /// The `[[traffic]]` index being built.
    entry: usize,
    /// Each TCP entry's stack as built: (traffic index, entry name, profile, overrides, switches).
    pub stacks: Vec<StackRecord>,
}

/// One TCP entry's resolved stack, for the expanded form and the manifest.
#[derive(Clone, Debug)]
pub struct StackRecord {
    pub entry: usize,
    pub name: String,
    pub stack: crate::tcp::workload::Stack,
    pub config: crate::tcp::TcpConfig,
}

/// A host's moderator as read from `[hosts.NAME.rwnd]`.
struct HostModeration {
    moderator: Rc<RefCell<Moderator>>,
    media: MediaPresence,
    /// `weights`: traffic entry name → weight (empty for `split = "equal"`); path for errors.
    weights: BTreeMap<String, f64>,
    weights_path: String,
    /// Traffic entry names whose connections end at this host.
    seen: BTreeSet<String>,
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

    /// The RWND moderator of receiving host `node` (None: not moderated), and the weight of the
    /// connections of traffic entry `entry` in its split (1 unless `weights` names the entry).
    pub fn window_policy(&mut self, node: NodeId, entry: &str) -> Option<(Rc<RefCell<Moderator>>, f64)> {
        let h = self.hosts.get_mut(&node)?;
        h.seen.insert(entry.to_string());
        let w = h.weights.get(entry).copied().unwrap_or(1.0);
        Some((h.moderator.clone(), w))
    }

    /// Where media sinks at `node` record arrivals, when the host's moderator needs to know.
    /// The profile of TCP entries that name none (the scenario's `stack`, else the default).
    pub fn stack(&self) -> &str { &self.stack }
    pub fn record_stack(&mut self, name: &str, config: &crate::tcp::TcpConfig, stack: &crate::tcp::workload::Stack) {
        self.stacks.push(StackRecord { entry: self.entry, name: name.to_string(), stack: stack.clone(), config: config.clone() });
    }
    pub fn media_presence(&self, node: NodeId) -> Option<MediaPresence> { self.hosts.get(&node).map(|h| h.media.clone()) }
}

/// Reads `[hosts.NAME.rwnd]` for every host: budget, split (equal | weighted), weights, from_syn,
/// only_with_media, media_idle, enabled.
fn parse_hosts(root: &mut Params, sim: &Sim) -> Result<BTreeMap<NodeId, HostModeration>, ConfigError> {
    let mut out = BTreeMap::new();
    for (name, mut hp) in root.named_tables("hosts")? {
        let Some(node) = sim.node_id(&name) else {
            let names: Vec<&str> = sim.nodes().iter().map(|n| n.name.as_str()).collect();
            return Err(hp.err("", format!("no node named {name:?} (nodes: {})", names.join(", "))));
        };
        if let Some(mut r) = hp.table_opt("rwnd")? {
            let enabled = r.bool_or("enabled", true)?;
            let budget = match r.size_opt("budget")? {
                None => return Err(r.err("budget", "missing (the total window in bytes, e.g. \"20kB\")")),
                Some(crate::config::Size::Packets(_)) => return Err(r.err("budget", "must be in bytes (B, kB, MB), not packets")),
                Some(crate::config::Size::Bytes(b)) => b,
            };
            if budget == 0 {
                return Err(r.err("budget", "must be > 0"));
            }
            if budget > (65_535u64 << crate::tcp::MAX_WSCALE) {
                return Err(r.err("budget", "exceeds the largest scaled window (65535·2^14 B)"));
            }
            let d = ModerationConfig::default();
            let from_syn = r.bool_or("from_syn", d.from_syn)?;
            let only_with_media = r.bool_or("only_with_media", d.only_with_media)?;
            let media_idle = r.duration_or("media_idle", d.media_idle)?;
            if media_idle == Time::ZERO {
                return Err(r.err("media_idle", "must be > 0"));
            }
            let mechanism = match r.choice("mechanism", &["window", "so_rcvbuf"], Some("window"))?.as_str() {
                "so_rcvbuf" => crate::tcp::moderation::Mechanism::SoRcvbuf,
                _ => crate::tcp::moderation::Mechanism::Window,
            };
            let split = r.choice("split", &["equal", "weighted"], Some("equal"))?;
            let weights_path = r.key_path("weights");
            let mut weights = BTreeMap::new();
            match (split.as_str(), r.value_opt("weights")) {
                ("equal", None) => {}
                ("equal", Some(_)) => return Err(r.err("weights", "only with split = \"weighted\"")),
                (_, None) => return Err(r.err("weights", "missing: split = \"weighted\" needs a table of traffic entry name = weight")),
                (_, Some(Value::Object(m))) => {
                    for (k, v) in m {
                        match v.as_f64() {
                            Some(w) if w > 0.0 && w.is_finite() => {
                                weights.insert(k, w);
                            }
                            _ => return Err(ConfigError::new(format!("{weights_path}.{k}"), format!("must be a number > 0, got {v}"))),
                        }
                    }
                }
                (_, Some(_)) => return Err(r.err("weights", "expected a table of traffic entry name = weight, e.g. { bulk = 1, web = 3 }")),
            }
            r.finish()?;
            if enabled {
                let media: MediaPresence = Rc::new(Cell::new(None));
                let mut m = Moderator::new(ModerationConfig { budget, from_syn, only_with_media, media_idle, mechanism });
                m.set_media(media.clone());
                out.insert(node, HostModeration { moderator: Rc::new(RefCell::new(m)), media, weights, weights_path, seen: BTreeSet::new() });
            }
        }
        hp.finish()?;
    }
    Ok(out)
}

/// One direction of a link as written.
#[derive(Clone)]
struct Dir {
    capacity: Capacity,
    /// The key the capacity was written under (`access.down_cellular`), for errors.
    capacity_path: String,
    delay: Time,
    queue: Option<Params>,
    queue_path: String,
    jitter: Option<Jitter>,
    loss: f64,
    /// Mean length of a loss burst (None: independent losses).
    loss_burst: Option<Time>,
    reorder: bool,
    /// A fixed rate enforced as a shaper (`Channel::shaper`).
    shaper: bool,
    /// HTB's token-bucket burst in bytes (`Channel::bucket`); None: none.
    burst: Option<u64>,
}

impl Clone for Params {
    fn clone(&self) -> Params { self.duplicate() }
}

/// The keys of one link direction; `prefix` is prepended to each ("down_", "bottleneck_", "").
struct Keys {
    prefix: &'static str,
    /// The queue's key when it does not follow the prefix ([dumbbell]'s `queue`).
    queue: Option<&'static str>,
}

impl Keys {
    fn k(&self, key: &str) -> String {
        if key == "queue" {
            if let Some(q) = self.queue {
                return q.to_string();
            }
        }
        format!("{}{key}", self.prefix)
    }
}

const PLAIN: Keys = Keys { prefix: "", queue: None };

// `!(shape > 1.0)` on purpose: NaN is refused too.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
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

/// Reads a trace given as `{path, data}` (the Python front inlines trace files that way; the core
/// does no I/O). Errors name the key, the file and the line.
fn parse_trace(p: &mut Params, key: &str) -> Result<Option<Capacity>, ConfigError> {
    let Some(v) = p.value_opt(key) else { return Ok(None) };
    let (path, data) = match &v {
        Value::Object(m) => match (m.get("path").and_then(Value::as_str), m.get("data").and_then(Value::as_str)) {
            (Some(path), Some(data)) if m.len() == 2 => (path.to_string(), data.to_string()),
            _ => return Err(p.err(key, "expected a trace file path (inlined as {path, data} by the Python front)")),
        },
        Value::String(s) => return Err(p.err(key, format!("trace file {s:?} was not read: the core does no I/O; load the scenario with jitterlab.scenario.load, which inlines trace files"))),
        other => return Err(p.err(key, format!("expected a trace file path as a string, got {other}"))),
    };
    let trace = Trace::parse(&data).map_err(|e| {
        if e.line == 0 { p.err(key, format!("{path}: {}", e.msg)) } else { p.err(key, format!("{path} line {}: {}", e.line, e.msg)) }
    })?;
    Ok(Some(Capacity::Trace { path, trace }))
}

/// Exactly one of `rate` (+ `overhead`), `trace`, `cellular`; None when none is given.
fn parse_capacity(p: &mut Params, k: &Keys) -> Result<Option<Capacity>, ConfigError> {
    let (rk, ok, tk, ck) = (k.k("rate"), k.k("overhead"), k.k("trace"), k.k("cellular"));
    let given: Vec<&String> = [&rk, &tk, &ck].into_iter().filter(|key| p.has(key)).collect();
    if given.len() > 1 {
        return Err(p.err(given[1], format!("give one capacity: {} and {} are both set", p.key_path(given[0]), p.key_path(given[1]))));
    }
    if p.has(&ok) && !p.has(&rk) {
        return Err(p.err(&ok, format!("only with {rk} (a trace's or the cellular model's opportunities count IP bytes, as Mahimahi's)")));
    }
    if let Some(rate) = p.rate_opt(&rk)? {
        let overhead = match p.bytes_opt(&ok)? {
            None => 0,
            Some(b) if b <= 1000 => b as u32,
            Some(b) => return Err(p.err(&ok, format!("must be at most 1000 B per packet, got {b} B"))),
        };
        return Ok(Some(Capacity::Rate { rate, overhead }));
    }
    if let Some(c) = parse_trace(p, &tk)? {
        return Ok(Some(c));
    }
    if let Some(mut cp) = p.table_opt(&ck)? {
        let params = CellularParams::parse(&mut cp)?;
        cp.finish()?;
        return Ok(Some(Capacity::Cellular(params)));
    }
    Ok(None)
}

fn parse_dir(p: &mut Params, k: &Keys, inherit: Option<&Dir>) -> Result<Dir, ConfigError> {
    let written = [k.k("rate"), k.k("trace"), k.k("cellular")].into_iter().find(|key| p.has(key)).map(|key| p.key_path(&key));
    let (capacity, capacity_path) = match (parse_capacity(p, k)?, inherit) {
        (Some(c), _) => (c, written.unwrap_or_default()),
        (None, Some(d)) => (d.capacity.clone(), d.capacity_path.clone()),
        (None, None) => return Err(p.err(&k.k("rate"), format!("missing: give the capacity as {}, {} or {}", k.k("rate"), k.k("trace"), k.k("cellular")))),
    };
    let delay = match (p.duration_opt(&k.k("delay"))?, inherit) {
        (Some(t), _) => t,
        (None, Some(d)) => d.delay,
        (None, None) => return Err(p.err(&k.k("delay"), "missing")),
    };
    let queue_key = k.k("queue");
    let queue_path = p.key_path(&queue_key);
    let queue = match (p.table_opt(&queue_key)?, inherit) {
        (Some(q), _) => Some(q),
        (None, Some(d)) => d.queue.as_ref().map(clone_params),
        (None, None) => None,
    };
    let queue_path = match (&queue, inherit) {
        (Some(q), _) => q.path().to_string(),
        (None, Some(d)) => d.queue_path.clone(),
        (None, None) => queue_path,
    };
    let jitter = parse_jitter(p, &k.k("jitter"))?;
    let loss = p.f64_or(&k.k("loss"), 0.0)?;
    if !(0.0..=1.0).contains(&loss) {
        return Err(p.err(&k.k("loss"), format!("must be a probability in [0, 1], got {loss}")));
    }
    let loss_burst = p.duration_opt(&k.k("loss_burst"))?;
    if let Some(b) = loss_burst {
        if b == Time::ZERO {
            return Err(p.err(&k.k("loss_burst"), "must be > 0"));
        }
        if !(loss > 0.0 && loss < 1.0) {
            return Err(p.err(&k.k("loss_burst"), format!("needs {} between 0 and 1 (exclusive): the share of time in loss bursts", k.k("loss"))));
        }
    }
    let reorder = p.bool_or(&k.k("reorder"), false)?;
    let shaper = match (p.bool_or(&k.k("shaper"), false)?, inherit) {
        (true, _) => true,
        (false, Some(d)) if !p.has(&k.k("rate")) => d.shaper,
        _ => false,
    };
    if shaper && !matches!(capacity, Capacity::Rate { .. }) {
        return Err(p.err(&k.k("shaper"), format!("only with {} (a trace or the cellular model has no serialiser to replace)", k.k("rate"))));
    }
    let burst = match (p.bytes_opt(&k.k("burst"))?, inherit) {
        (Some(b), _) => Some(b),
        (None, Some(d)) if !p.has(&k.k("rate")) => d.burst,
        _ => None,
    };
    if let Some(b) = burst {
        if !matches!(capacity, Capacity::Rate { .. }) {
            return Err(p.err(&k.k("burst"), format!("only with {} (a token bucket of a fixed rate)", k.k("rate"))));
        }
        if b == 0 {
            return Err(p.err(&k.k("burst"), "must be > 0 B (leave it out for no token bucket)"));
        }
    }
    Ok(Dir { capacity, capacity_path, delay, queue, queue_path, jitter, loss, loss_burst, reorder, shaper, burst })
}

/// The reverse direction of a link with no reverse table: same capacity, delay and queue settings,
/// no jitter, loss or reordering.
fn plain_reverse(d: &Dir) -> Dir {
    Dir { capacity: d.capacity.clone(), capacity_path: d.capacity_path.clone(), delay: d.delay, queue: d.queue.as_ref().map(clone_params), queue_path: d.queue_path.clone(), jitter: None, loss: 0.0, loss_burst: None, reorder: false, shaper: d.shaper, burst: d.burst }
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
            None => plain_reverse(&fwd),
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
    let core = parse_dir(&mut a, &Keys { prefix: "core_", queue: None }, None)?;
    let core_rev = plain_reverse(&core);
    let down = parse_dir(&mut a, &Keys { prefix: "down_", queue: None }, None)?;
    let up = parse_dir(&mut a, &Keys { prefix: "up_", queue: None }, Some(&down))?;
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
    let bn = parse_dir(&mut d, &Keys { prefix: "bottleneck_", queue: Some("queue") }, None)?;
    let bn_rev_queue = d.table_opt("reverse_queue")?;
    let acc = parse_dir(&mut d, &Keys { prefix: "access_", queue: None }, None)?;
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
    let same = |x: &Dir, delay: Time| Dir { capacity: x.capacity.clone(), capacity_path: x.capacity_path.clone(), delay, queue: x.queue.as_ref().map(clone_params), queue_path: x.queue_path.clone(), jitter: x.jitter.clone(), loss: x.loss, loss_burst: x.loss_burst, reorder: x.reorder, shaper: x.shaper, burst: x.burst };
    for i in 1..=n {
        let delay = delays.as_ref().map(|v| v[(i - 1) as usize]).unwrap_or(acc.delay);
        out.push(LinkDef { name: format!("s{i}"), from: format!("s{i}"), to: "r1".into(), fwd: same(&acc, delay), rev: same(&acc, delay) });
    }
    let bn_rev = Dir { queue: bn_rev_queue.or_else(|| bn.queue.as_ref().map(clone_params)), ..plain_reverse(&bn) };
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

/// What a channel's serialiser runs on: (rate or mean rate, per-packet overhead, opportunities).
/// A cellular channel's opportunities come from its own stream `cellular:<channel>` of `seed`.
pub fn channel_capacity(c: &Capacity, seed: u64, channel: &str, duration: Time) -> Result<(Rate, u32, Option<Trace>), String> {
    Ok(match c {
        Capacity::Rate { rate, overhead } => (*rate, *overhead, None),
        Capacity::Trace { trace, .. } => (Rate((trace.mean_bps().round() as u64).max(1)), 0, Some(trace.clone())),
        Capacity::Cellular(p) => {
            let trace = crate::cellular::trace_for_run(p, seed, channel, duration)?;
            (Rate((p.mean_bps.round() as u64).max(1)), 0, Some(trace))
        }
    })
}

/// Every link of the scenario: `[links.NAME]` tables, then `[access]`, then `[dumbbell]`.
fn parse_topology(root: &mut Params) -> Result<Vec<LinkDef>, ConfigError> {
    let mut links = parse_links(root)?;
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
    Ok(links)
}

/// The scenario read and built, ready to run.
pub struct Built {
    pub sim: Sim,
    pub name: String,
    pub duration: Time,
    /// Each TCP entry's stack profile, overrides and resolved switches.
    pub stacks: Vec<StackRecord>,
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
    let links = parse_topology(&mut root)?;

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
            let (rate, overhead, trace) = channel_capacity(&dir.capacity, seed, &name, duration).map_err(|m| ConfigError::new(dir.capacity_path.clone(), m))?;
            let q = build_qdisc(dir.queue, &dir.queue_path, rate, &mut rng)?;
            let is_sampled = match &sampled {
                Some(v) => v.contains(&name),
                None => !name.ends_with(".rev"),
            };
            let id = sim.add_channel(ChannelSpec { name, from: a, to: b, rate, delay: dir.delay, qdisc: q, trace, jitter: dir.jitter, reorder: dir.reorder, loss: dir.loss, sampled: is_sampled });
            sim.channel_mut(id).overhead = overhead;
            sim.channel_mut(id).shaper = dir.shaper;
            sim.channel_mut(id).bucket = dir.burst.map(|b| TokenBucket::new(rate.tx_time(b)));
            if let Some(b) = dir.loss_burst {
                sim.channel_mut(id).loss_bursts = Some(LossBursts::new(dir.loss, b, seed, &sim.channel(id).name.clone()));
            }
        }
    }
    let missing = sim.compute_routes();
    if let Some((a, b)) = missing.first() {
        return Err(ConfigError::new("links", format!("node {:?} cannot reach node {:?}: the topology is not connected", sim.node_name(*a), sim.node_name(*b))));
    }
    if let Some(every) = sample_every {
        sim.sample_queues_every(every);
    }

    let hosts = parse_hosts(&mut root, &sim)?;
    // `stack`: the TCP stack profile of every entry that names none (tcp/profile.rs).
    let stack = root.choice("stack", &crate::tcp::profile::names(), Some(crate::tcp::profile::DEFAULT))?;
    let mut b = Build { sim: &mut sim, duration, seed, counts: Default::default(), hosts, stack, entry: 0, stacks: vec![] };
    for (i, mut t) in root.tables("traffic")?.into_iter().enumerate() {
        b.entry = i;
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
    for h in b.hosts.values() {
        if let Some(k) = h.weights.keys().find(|k| !h.seen.contains(*k)) {
            return Err(ConfigError::new(format!("{}.{k}", h.weights_path), format!("no TCP traffic entry named {k:?} ends at this host")));
        }
    }
    let stacks = std::mem::take(&mut b.stacks);
    root.finish()?;
    Ok(Built { sim, name, duration, stacks })
}

/// Builds and runs the scenario for its duration.
pub fn run(v: &Value, seed: u64) -> Result<Tables, ConfigError> {
    let Built { mut sim, duration, .. } = build(v, seed)?;
    sim.run_until(duration);
    Ok(sim.finish())
}

// ---------------------------------------------------------------------------------------------
// The expanded scenario (`expand`), for Python consumers: the testbed planner, capture analysis.
// ---------------------------------------------------------------------------------------------

/// Version of the expanded form; bump when its shape changes.
pub const EXPANDED_SCHEMA: u32 = 1;

fn secs_ns(s: f64) -> u64 { Time::from_secs_f64(s).ns() }

fn jitter_json(j: &Option<Jitter>) -> Value {
    match j {
        None => Value::Null,
        Some(Jitter::Uniform { lo, hi }) => serde_json::json!({"dist": "uniform", "min_ns": secs_ns(*lo), "max_ns": secs_ns(*hi)}),
        Some(Jitter::Exponential { mean }) => serde_json::json!({"dist": "exponential", "mean_ns": secs_ns(*mean)}),
        Some(Jitter::Normal { mean, sd }) => serde_json::json!({"dist": "normal", "mean_ns": secs_ns(*mean), "sd_ns": secs_ns(*sd)}),
        Some(Jitter::Pareto { mean, shape }) => serde_json::json!({"dist": "pareto", "mean_ns": secs_ns(*mean), "shape": shape}),
    }
}

/// A value with a unit in base units: durations → `KEY_ns`, sizes → `KEY_bytes` / `KEY_pkts`,
/// rates → `KEY_bps`; tables and arrays recursively; everything else as written.
fn normalise(key: &str, v: &Value, out: &mut serde_json::Map<String, Value>) {
    match v {
        Value::String(s) => {
            if let Ok(x) = crate::config::parse_duration(s) {
                out.insert(format!("{key}_ns"), Value::from(secs_ns(x)));
            } else if let Ok((x, pkts)) = crate::config::parse_size(s) {
                out.insert(format!("{key}_{}", if pkts { "pkts" } else { "bytes" }), Value::from(x.round() as u64));
            } else if let Ok(x) = crate::config::parse_rate(s) {
                out.insert(format!("{key}_bps"), Value::from(x.round() as u64));
            } else {
                out.insert(key.to_string(), v.clone());
            }
        }
        Value::Object(m) => {
            let mut inner = serde_json::Map::new();
            for (k, x) in m {
                normalise(k, x, &mut inner);
            }
            out.insert(key.to_string(), Value::Object(inner));
        }
        Value::Array(a) => {
            // An array of unit strings of one kind becomes KEY_<unit>: [numbers]; tables inside
            // an array are normalised; anything else stays as written.
            let mut conv: Vec<serde_json::Map<String, Value>> = vec![];
            for x in a {
                let mut one = serde_json::Map::new();
                normalise(key, x, &mut one);
                conv.push(one);
            }
            let first_key = conv.first().and_then(|m| m.keys().next().cloned());
            let same_unit = !a.is_empty() && a.iter().all(Value::is_string) && first_key.as_deref() != Some(key) && conv.iter().all(|m| m.keys().next() == first_key.as_ref());
            if same_unit {
                let k = first_key.expect("non-empty");
                let vals: Vec<Value> = conv.into_iter().map(|mut m| m.remove(&k).expect("same key")).collect();
                out.insert(k, Value::Array(vals));
            } else {
                let vals: Vec<Value> = a.iter().zip(conv).map(|(x, mut m)| if x.is_object() { m.remove(key).unwrap_or(Value::Null) } else { x.clone() }).collect();
                out.insert(key.to_string(), Value::Array(vals));
            }
        }
        _ => {
            out.insert(key.to_string(), v.clone());
        }
    }
}

fn params_json(p: &Params) -> Value {
    let mut d = p.duplicate();
    let mut out = serde_json::Map::new();
    for k in d.keys() {
        if let Some(v) = d.value_opt(&k) {
            normalise(&k, &v, &mut out);
        }
    }
    Value::Object(out)
}

fn queue_json(q: &Option<Params>) -> Value {
    match q {
        None => serde_json::json!({"kind": "droptail", "limit_pkts": DEFAULT_QUEUE_PKTS}),
        Some(p) => params_json(p),
    }
}

fn capacity_json(c: &Capacity, mean_bps: f64) -> Value {
    match c {
        Capacity::Rate { rate, overhead } => serde_json::json!({"kind": "rate", "bps": rate.0, "overhead_bytes": overhead}),
        Capacity::Trace { path, trace } => serde_json::json!({"kind": "trace", "path": path, "opportunities_ms": trace.stamps(), "period_ms": trace.period_ms(), "mean_bps": mean_bps}),
        Capacity::Cellular(p) => {
            let mut v = p.to_json();
            v["mean_bps"] = Value::from(mean_bps);
            v
        }
    }
}

fn dir_json(d: &Dir, channel: &str) -> Value {
    serde_json::json!({
        "channel": channel,
        "capacity": capacity_json(&d.capacity, d.capacity.mean_bps()),
        "delay_ns": d.delay.ns(),
        "queue": queue_json(&d.queue),
        "jitter": jitter_json(&d.jitter),
        "loss": d.loss,
        "loss_burst_ns": d.loss_burst.map(|t| t.ns()),
        "reorder": d.reorder,
        "shaper": d.shaper,
        "burst_bytes": d.burst,
    })
}

/// The scenario validated (exactly as a run would: every key, unit and cross-reference) and
/// expanded into base units. Shape: docs/scenarios.md, "Expanded form".
pub fn expand(v: &Value) -> Result<Value, ConfigError> {
    let built = build(v, 0)?;
    let mut root = Params::new("", v)?;
    let links = parse_topology(&mut root)?;
    let nodes: Vec<&str> = built.sim.nodes().iter().map(|n| n.name.as_str()).collect();
    let links_json: Vec<Value> = links
        .iter()
        .map(|l| {
            serde_json::json!({
                "name": l.name, "from": l.from, "to": l.to,
                "forward": dir_json(&l.fwd, &l.name),
                "reverse": dir_json(&l.rev, &format!("{}.rev", l.name)),
            })
        })
        .collect();
    let section = |key: &str| -> Value {
        match v.get(key) {
            None => Value::Null,
            Some(x) => {
                let mut m = serde_json::Map::new();
                normalise(key, x, &mut m);
                m.remove(key).unwrap_or(Value::Null)
            }
        }
    };
    let mut traffic = match section("traffic") {
        Value::Null => Value::Array(vec![]),
        t => t,
    };
    // Each TCP entry carries its stack: the profile, the keys it overrides and every switch as
    // the run uses it (what the testbed checks against its kernel and the manifest records).
    if let Value::Array(entries) = &mut traffic {
        for r in &built.stacks {
            if let Some(Value::Object(e)) = entries.get_mut(r.entry) {
                e.insert("stack".into(), Value::String(r.stack.profile.into()));
                e.insert("stack_overrides".into(), serde_json::json!(r.stack.overrides));
                e.insert("tcp".into(), crate::tcp::profile::describe_json(&r.config));
            }
        }
    }
    Ok(serde_json::json!({
        "schema": EXPANDED_SCHEMA,
        "name": built.name,
        "duration_ns": built.duration.ns(),
        "nodes": nodes,
        "links": links_json,
        "traffic": traffic,
        "hosts": match section("hosts") { Value::Null => serde_json::json!({}), h => h },
        "output": match section("output") { Value::Null => serde_json::json!({}), o => o },
    }))
}

/// The loss bursts [start_ns, end_ns) of channel `channel` in the run of `v` with `seed` that begin
/// within the run's duration plus `cellular::MARGIN_MS` (empty without `loss_burst`).
pub fn channel_loss_periods(v: &Value, seed: u64, channel: &str) -> Result<Vec<(u64, u64)>, ConfigError> {
    let built = build(v, seed)?;
    let Some(id) = built.sim.channel_id(channel) else {
        let names: Vec<&str> = built.sim.channels().iter().map(|c| c.name.as_str()).collect();
        return Err(ConfigError::new("channel", format!("no channel named {channel:?} (channels: {})", names.join(", "))));
    };
    let until = built.duration + Time::from_ms(crate::cellular::MARGIN_MS);
    Ok(built.sim.channel(id).loss_bursts.clone().map(|b| b.periods(until)).unwrap_or_default())
}

/// The delivery opportunities channel `channel` runs on in the run of `v` with `seed`: (ms stamps,
/// period in ms) — a trace's own, or what the cellular model generates for this channel and seed
/// (for the run's duration plus `cellular::MARGIN_MS`). Errors for unknown or fixed-rate channels.
pub fn channel_opportunities(v: &Value, seed: u64, channel: &str) -> Result<(Vec<u64>, u64), ConfigError> {
    let built = build(v, seed)?;
    let mut root = Params::new("", v)?;
    let links = parse_topology(&mut root)?;
    for l in &links {
        for (d, name) in [(&l.fwd, l.name.clone()), (&l.rev, format!("{}.rev", l.name))] {
            if name != channel {
                continue;
            }
            let (_, _, trace) = channel_capacity(&d.capacity, seed, &name, built.duration).map_err(|m| ConfigError::new(d.capacity_path.clone(), m))?;
            return match trace {
                Some(t) => Ok((t.stamps().to_vec(), t.period_ms())),
                None => Err(ConfigError::new("channel", format!("channel {channel:?} has a fixed rate, not delivery opportunities"))),
            };
        }
    }
    let names: Vec<String> = links.iter().flat_map(|l| [l.name.clone(), format!("{}.rev", l.name)]).collect();
    Err(ConfigError::new("channel", format!("no channel named {channel:?} (channels: {})", names.join(", "))))
}
