//! The expanded scenario (`expand`), for Python consumers: the testbed planner, capture analysis;
//! and the per-channel views of a built run (its loss bursts, its delivery opportunities).
use serde_json::Value;

use super::build::{build, channel_capacity, DEFAULT_QUEUE_PKTS};
use super::topology::{parse_topology, Dir};
use crate::config::{ConfigError, Params};
use crate::link::{Capacity, Jitter};
use crate::time::Time;

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
        "queue_at": if d.network_queue { "network" } else { "host" },
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
            if matches!(&d.capacity, crate::link::Capacity::Cellular(p) if p.iub_cycle_ms > 0) {
                return Err(ConfigError::new(d.capacity_path.clone(), crate::cellular::NO_TRACE_FORM));
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
