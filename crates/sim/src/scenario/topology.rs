//! The topology of a scenario: `[links.NAME]` tables and the `[access]` and `[dumbbell]`
//! shorthands, each read into `LinkDef`s (two directions, `Dir`, per link). Only reads and
//! validates; `super::build` turns the definitions into channels.
use serde_json::Value;

use crate::cellular::CellularParams;
use crate::config::{ConfigError, Params};
use crate::link::{Capacity, Jitter};
use crate::time::Time;
use crate::trace::Trace;

/// One direction of a link as written.
#[derive(Clone)]
pub(crate) struct Dir {
    pub(crate) capacity: Capacity,
    /// The key the capacity was written under (`access.down_cellular`), for errors.
    pub(crate) capacity_path: String,
    pub(crate) delay: Time,
    pub(crate) queue: Option<Params>,
    pub(crate) queue_path: String,
    pub(crate) jitter: Option<Jitter>,
    pub(crate) loss: f64,
    /// Mean length of a loss burst (None: independent losses).
    pub(crate) loss_burst: Option<Time>,
    pub(crate) reorder: bool,
    /// A fixed rate enforced as a shaper (`Channel::shaper`).
    pub(crate) shaper: bool,
    /// HTB's token-bucket burst in bytes (`Channel::bucket`); None: none.
    pub(crate) burst: Option<u64>,
    /// `queue_at = "network"`: the queue is a middlebox's in front of the link, not the sending
    /// node's own (`Channel::network_queue`).
    pub(crate) network_queue: bool,
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
            // written negated so that NaN is refused too
            #[allow(clippy::neg_cmp_op_on_partial_ord)]
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
    let given = p.has(&k.k("queue_at"));
    let at = p.choice(&k.k("queue_at"), &["host", "network"], Some("host"))?;
    let network_queue = if given { at == "network" } else { inherit.is_some_and(|d| d.network_queue) };
    Ok(Dir { capacity, capacity_path, delay, queue, queue_path, jitter, loss, loss_burst, reorder, shaper, burst, network_queue })
}

/// The reverse direction of a link with no reverse table: same capacity, delay and queue settings,
/// no jitter, loss or reordering.
fn plain_reverse(d: &Dir) -> Dir {
    Dir { capacity: d.capacity.clone(), capacity_path: d.capacity_path.clone(), delay: d.delay, queue: d.queue.as_ref().map(clone_params), queue_path: d.queue_path.clone(), jitter: None, loss: 0.0, loss_burst: None, reorder: false, shaper: d.shaper, burst: d.burst, network_queue: d.network_queue }
}

/// The reverse direction inherits the forward queue's settings (its own instance, same path in errors).
fn clone_params(q: &Params) -> Params { q.duplicate() }

pub(crate) struct LinkDef {
    pub(crate) name: String,
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) fwd: Dir,
    pub(crate) rev: Dir,
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
    // The receiver's own ingress behind the bottleneck (a CPE's or the host's ingress qdisc, as
    // CAKE's autorate-ingress runs): `ingress_*` keys add a node `cpe` between the bottleneck and
    // the client; its reverse has no queue of its own.
    let ingress = if ["ingress_rate", "ingress_trace", "ingress_cellular", "ingress_delay", "ingress_queue"].iter().any(|k| a.has(k)) {
        let cpe = a.str_opt("cpe")?.unwrap_or_else(|| "cpe".into());
        let fwd = parse_dir(&mut a, &Keys { prefix: "ingress_", queue: None }, None)?;
        Some((cpe, fwd))
    } else {
        None
    };
    a.finish()?;
    let mut links = vec![LinkDef { name: "core".into(), from: server, to: router.clone(), fwd: core, rev: core_rev }];
    match ingress {
        None => links.push(LinkDef { name: "bottleneck".into(), from: router, to: client, fwd: down, rev: up }),
        Some((cpe, fwd)) => {
            if cpe == client || cpe == router {
                return Err(ConfigError::new("access.cpe", format!("must differ from the router and the client, got {cpe:?}")));
            }
            let rev = Dir { queue: None, ..plain_reverse(&fwd) };
            links.push(LinkDef { name: "bottleneck".into(), from: router, to: cpe.clone(), fwd: down, rev: up });
            links.push(LinkDef { name: "ingress".into(), from: cpe, to: client, fwd, rev });
        }
    }
    Ok(links)
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
    let same = |x: &Dir, delay: Time| Dir { capacity: x.capacity.clone(), capacity_path: x.capacity_path.clone(), delay, queue: x.queue.as_ref().map(clone_params), queue_path: x.queue_path.clone(), jitter: x.jitter.clone(), loss: x.loss, loss_burst: x.loss_burst, reorder: x.reorder, shaper: x.shaper, burst: x.burst, network_queue: x.network_queue };
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


/// Every link of the scenario: `[links.NAME]` tables, then `[access]`, then `[dumbbell]`.
pub(crate) fn parse_topology(root: &mut Params) -> Result<Vec<LinkDef>, ConfigError> {
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
