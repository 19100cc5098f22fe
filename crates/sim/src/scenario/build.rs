//! A scenario turned into a [`Sim`]: nodes and channels from the topology (`super::topology`),
//! `[output]`, `[hosts]`, then each `[[traffic]]` entry handed to its kind (`crate::traffic`).
//! [`build_with`] takes the registries to use, so that a test can add a throwaway traffic kind or
//! queue discipline exactly as a new file plus one registry line would.
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use super::topology::{parse_topology, Dir, LinkDef};
use crate::config::{ConfigError, Params};
use crate::engine::{ChannelSpec, Sim};
use crate::link::{Capacity, LossBursts, TokenBucket};
use crate::packet::NodeId;
use crate::qdisc::{self, droptail, LinkInfo, Qdisc};
use crate::record::Tables;
use crate::rng::Rng;
use crate::tcp::moderation::{MediaPresence, ModerationConfig, Moderator};
use crate::time::{Rate, Time};
use crate::trace::Trace;
use crate::traffic::{self, Build, HostModeration, StackRecord};

/// Default queue when a link names none: a 1000-packet DropTail, Linux's default txqueuelen.
pub const DEFAULT_QUEUE_PKTS: u64 = 1000;

/// The registries a build draws on: traffic kinds and queue disciplines.
#[derive(Clone, Copy)]
pub struct Registries<'r> {
    pub traffic: &'r [traffic::Kind],
    pub queues: &'r [(&'static str, qdisc::Builder)],
}

/// The built-in registries ([`traffic::KINDS`], [`qdisc::REGISTRY`]).
pub const BUILTIN: Registries<'static> = Registries { traffic: traffic::KINDS, queues: qdisc::REGISTRY };

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

fn build_qdisc(q: Option<Params>, path: &str, rate: Rate, rng: &mut Rng, queues: &[(&'static str, qdisc::Builder)]) -> Result<Box<dyn Qdisc>, ConfigError> {
    let Some(mut q) = q else {
        return Ok(Box::new(droptail::DropTail::new(droptail::Limit::Packets(DEFAULT_QUEUE_PKTS))));
    };
    let kinds: Vec<&str> = queues.iter().map(|(k, _)| *k).collect();
    let kind = q.choice("kind", &kinds, None).map_err(|e| if e.path.is_empty() { ConfigError::new(path, e.msg) } else { e })?;
    let b = queues.iter().find(|(k, _)| *k == kind).map(|(_, b)| *b).expect("kind checked against the registry");
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


/// The scenario read and built, ready to run.
pub struct Built {
    pub sim: Sim,
    pub name: String,
    pub duration: Time,
    /// Each TCP entry's stack profile, overrides and resolved switches.
    pub stacks: Vec<StackRecord>,
}

/// Reads `v` (the scenario as JSON) and builds the simulation for `seed`.
pub fn build(v: &Value, seed: u64) -> Result<Built, ConfigError> { build_with(v, seed, BUILTIN) }

/// [`build`] with the registries `reg` in place of the built-in ones.
pub fn build_with(v: &Value, seed: u64, reg: Registries) -> Result<Built, ConfigError> {
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
    let out = parse_output(&mut root, &mut sim, &links)?;
    add_channels(&mut sim, links, seed, duration, &out.sampled, reg.queues)?;
    let missing = sim.compute_routes();
    if let Some((a, b)) = missing.first() {
        return Err(ConfigError::new("links", format!("node {:?} cannot reach node {:?}: the topology is not connected", sim.node_name(*a), sim.node_name(*b))));
    }
    if let Some(every) = out.sample_every {
        sim.sample_queues_every(every);
    }

    let hosts = parse_hosts(&mut root, &sim)?;
    // `stack`: the TCP stack profile of every entry that names none (tcp/profile.rs).
    let stack = root.choice("stack", &crate::tcp::profile::names(), Some(crate::tcp::profile::DEFAULT))?;
    let mut b = Build::new(&mut sim, duration, seed, hosts, stack);
    let kinds: Vec<&str> = reg.traffic.iter().map(|k| k.name).collect();
    for (i, mut t) in root.tables("traffic")?.into_iter().enumerate() {
        // `enabled = false` keeps an entry in the file but out of the run (sweeps over N flows).
        if !t.bool_or("enabled", true)? {
            continue;
        }
        let kind = t.choice("kind", &kinds, None)?;
        b.entry(i, traffic::find(reg.traffic, &kind).expect("checked"), &mut t)?;
        t.finish()?;
    }
    b.check_weights()?;
    let stacks = std::mem::take(&mut b.stacks);
    // after the traffic, so that no entry's flow or agent id moves
    crate::cake_autorate::attach(&mut sim)?;
    root.finish()?;
    Ok(Built { sim, name, duration, stacks })
}

/// What `[output]` asks of the build.
struct Output {
    sample_every: Option<Time>,
    /// `queues`: the channels sampled (None: every forward channel).
    sampled: Option<Vec<String>>,
}

/// Reads `[output]`: queue sampling, pcap taps (set on `sim` here) and their snap length.
fn parse_output(root: &mut Params, sim: &mut Sim, links: &[LinkDef]) -> Result<Output, ConfigError> {
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
    Ok(Output { sample_every, sampled })
}

/// Two channels per link (NAME and NAME.rev), each with its queue from `queues`.
fn add_channels(sim: &mut Sim, links: Vec<LinkDef>, seed: u64, duration: Time, sampled: &Option<Vec<String>>, queues: &[(&'static str, qdisc::Builder)]) -> Result<(), ConfigError> {
    for l in links {
        let from = sim.node_id(&l.from).expect("added");
        let to = sim.node_id(&l.to).expect("added");
        for (dir, name, a, b) in [(l.fwd, l.name.clone(), from, to), (l.rev, format!("{}.rev", l.name), to, from)] {
            add_channel(sim, dir, name, (a, b), seed, duration, sampled, queues)?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn add_channel(sim: &mut Sim, dir: Dir, name: String, (a, b): (NodeId, NodeId), seed: u64, duration: Time, sampled: &Option<Vec<String>>, queues: &[(&'static str, qdisc::Builder)]) -> Result<(), ConfigError> {
    let mut rng = Rng::stream(seed, &format!("qdisc:{name}"));
    let (rate, overhead, trace) = channel_capacity(&dir.capacity, seed, &name, duration).map_err(|m| ConfigError::new(dir.capacity_path.clone(), m))?;
    let q = build_qdisc(dir.queue, &dir.queue_path, rate, &mut rng, queues)?;
    let is_sampled = match sampled {
        Some(v) => v.contains(&name),
        None => !name.ends_with(".rev"),
    };
    let id = sim.add_channel(ChannelSpec { name, from: a, to: b, rate, delay: dir.delay, qdisc: q, trace, jitter: dir.jitter, reorder: dir.reorder, loss: dir.loss, sampled: is_sampled });
    sim.channel_mut(id).overhead = overhead;
    sim.channel_mut(id).shaper = dir.shaper;
    sim.channel_mut(id).network_queue = dir.network_queue;
    sim.channel_mut(id).bucket = dir.burst.map(|b| TokenBucket::new(rate.tx_time(b)));
    if let (Capacity::Cellular(p), Some(o)) = (&dir.capacity, sim.channel_mut(id).opp.as_mut()) {
        if p.iub_cycle_ms > 0 {
            o.gate = Some(crate::link::IubGate::new(p.iub_cycle_ms));
        }
    }
    if let Some(b) = dir.loss_burst {
        sim.channel_mut(id).loss_bursts = Some(LossBursts::new(dir.loss, b, seed, &sim.channel(id).name.clone()));
    }
    Ok(())
}

/// Builds and runs the scenario for its duration.
pub fn run(v: &Value, seed: u64) -> Result<Tables, ConfigError> { run_with(v, seed, BUILTIN) }

/// [`run`] with the registries `reg`.
pub fn run_with(v: &Value, seed: u64, reg: Registries) -> Result<Tables, ConfigError> {
    let Built { mut sim, duration, .. } = build_with(v, seed, reg)?;
    sim.run_until(duration);
    Ok(sim.finish())
}
