//! What a traffic kind is and what it is given: [`Kind`] (its name, builder, cost and examples),
//! [`Build`] (the simulation under construction and what the entries share), and what the
//! estimate hands a kind for its cost ([`Entry`], [`Path`]) and takes back ([`Cost`]).
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use crate::config::{duration_ns, rate_bps, size_value, ConfigError, Params};
use crate::engine::Sim;
use crate::packet::NodeId;
use crate::tcp::moderation::{MediaPresence, Moderator};
use crate::time::Time;


/// Reads one `[[traffic]]` entry (its `kind` and `enabled` already taken) and adds its agents.
pub type Builder = fn(&mut Params, &mut Build) -> Result<(), ConfigError>;
/// What one entry costs, from the entry as written (see [`Entry`]) and its path.
pub type CostFn = fn(&Entry, &Path) -> Cost;

/// One traffic kind.
#[derive(Clone, Copy)]
pub struct Kind {
    /// The `kind = "…"` it answers to.
    pub name: &'static str,
    pub build: Builder,
    /// Its cost for `crate::estimate`; None: it cannot say, and the estimate refuses a scenario
    /// that uses it (an unknown cost must not pass as zero).
    pub cost: Option<CostFn>,
    /// Example entries (JSON objects of the kind's own keys; `kind`, `from` and `to` are added),
    /// each run by the registry-loop tests (crates/sim/tests/registry_loops.rs).
    pub examples: &'static [&'static str],
}

// ---------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------

/// What a traffic builder may use.
pub struct Build<'a> {
    pub sim: &'a mut Sim,
    pub duration: Time,
    pub seed: u64,
    counts: BTreeMap<String, usize>,
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

/// A host's moderator as read from `[hosts.NAME.rwnd]` (by `crate::scenario`).
pub struct HostModeration {
    pub moderator: Rc<RefCell<Moderator>>,
    pub media: MediaPresence,
    /// `weights`: traffic entry name → weight (empty for `split = "equal"`); path for errors.
    pub weights: BTreeMap<String, f64>,
    pub weights_path: String,
    /// Traffic entry names whose connections end at this host.
    pub seen: BTreeSet<String>,
}

impl<'a> Build<'a> {
    /// The context for building the entries of one scenario into `sim`.
    pub fn new(sim: &'a mut Sim, duration: Time, seed: u64, hosts: BTreeMap<NodeId, HostModeration>, stack: String) -> Build<'a> {
        Build { sim, duration, seed, counts: BTreeMap::new(), hosts, stack, entry: 0, stacks: vec![] }
    }

    /// Builds entry `index` of kind `kind` (its `kind` key already read) and counts it.
    pub fn entry(&mut self, index: usize, kind: &Kind, p: &mut Params) -> Result<(), ConfigError> {
        self.entry = index;
        (kind.build)(p, self)?;
        *self.counts.entry(kind.name.to_string()).or_insert(0) += 1;
        Ok(())
    }

    /// After every entry: each `weights` key of a host must name a TCP entry that ends there.
    pub fn check_weights(&self) -> Result<(), ConfigError> {
        for h in self.hosts.values() {
            if let Some(k) = h.weights.keys().find(|k| !h.seen.contains(*k)) {
                return Err(ConfigError::new(format!("{}.{k}", h.weights_path), format!("no TCP traffic entry named {k:?} ends at this host")));
            }
        }
        Ok(())
    }

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

    /// The profile of TCP entries that name none (the scenario's `stack`, else the default).
    pub fn stack(&self) -> &str { &self.stack }
    pub fn record_stack(&mut self, name: &str, config: &crate::tcp::TcpConfig, stack: &crate::tcp::workload::Stack) {
        self.stacks.push(StackRecord { entry: self.entry, name: name.to_string(), stack: stack.clone(), config: config.clone() });
    }
    /// Where media sinks at `node` record arrivals, when the host's moderator needs to know.
    pub fn media_presence(&self, node: NodeId) -> Option<MediaPresence> { self.hosts.get(&node).map(|h| h.media.clone()) }
}

/// The keys every media entry shares: `name` (default KIND + count), `from`, `to`, `start`
/// (default 0), `stop` (default the run's duration), `ecn` (send ECT(0), default false).
pub struct Endpoints {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub start: Time,
    pub stop: Time,
    pub ecn: bool,
}

/// Reads [`Endpoints`] for an entry of `kind`.
pub fn endpoints(p: &mut Params, b: &mut Build, kind: &str) -> Result<Endpoints, ConfigError> {
    let name = p.str_opt("name")?.unwrap_or_else(|| format!("{kind}{}", b.count(kind)));
    let from = b.node(p, "from")?;
    let to = b.node(p, "to")?;
    if from == to {
        return Err(p.err("to", "must differ from `from`"));
    }
    let start = p.duration_or("start", Time::ZERO)?;
    let stop = p.duration_or("stop", b.duration)?;
    if stop <= start {
        return Err(p.err("stop", format!("must be after start ({start}), got {stop}")));
    }
    let ecn = p.bool_or("ecn", false)?;
    Ok(Endpoints { name, from, to, start, stop, ecn })
}

// ---------------------------------------------------------------------------------------------
// Cost (crate::estimate)
// ---------------------------------------------------------------------------------------------

/// One entry as written (JSON of the TOML), for its cost. Values that do not parse read as absent:
/// the build that follows reports them with their key.
pub struct Entry<'a> {
    pub table: &'a Value,
    /// Active time in seconds: start (or 0) to stop (or the duration), within the duration.
    pub active_s: f64,
}

impl Entry<'_> {
    pub fn str(&self, k: &str) -> Option<&str> { self.table.get(k).and_then(Value::as_str) }
    pub fn has(&self, k: &str) -> bool { self.table.get(k).is_some() }
    /// A duration in nanoseconds.
    pub fn dur_ns(&self, k: &str) -> Option<f64> { self.str(k).and_then(|x| duration_ns(x).ok()).map(|n| n as f64) }
    /// A rate in bit/s.
    pub fn rate_bps(&self, k: &str) -> Option<f64> { self.str(k).and_then(|x| rate_bps(x).ok()).map(|b| b as f64) }
    /// A size in bytes (None when written in packets).
    pub fn bytes(&self, k: &str) -> Option<f64> { self.str(k).and_then(|x| size_value(x).ok()).filter(|(_, p)| !p).map(|(n, _)| n as f64) }
    pub fn u64(&self, k: &str) -> Option<u64> { self.table.get(k).and_then(Value::as_u64) }
    pub fn bool(&self, k: &str) -> Option<bool> { self.table.get(k).and_then(Value::as_bool) }
}

/// The entry's path through the topology, as the estimate lays it out (shortest hops).
#[derive(Clone, Copy, Debug)]
pub struct Path {
    pub hops: f64,
    /// The smallest capacity on the path (bit/s).
    pub capacity_bps: f64,
    /// Hops driven by delivery opportunities (trace, cellular): one event per packet they send.
    pub opp_hops: f64,
    /// Hops whose queued packets cost a transmission-done event (the discipline is not a FIFO:
    /// DropTail and RED links fix departures at enqueue, `Qdisc::fifo_departures`).
    pub txd_hops: f64,
}

/// What one entry costs over its active time (see `crate::estimate` for the event model).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    /// Flows it adds (rows of the flows list: one per media stream, feedback stream, connection).
    pub flows: u64,
    /// Rows of `media_packets`.
    pub media_rows: f64,
    /// TCP segments (data and handshake) it sends.
    pub tcp_segments: f64,
    /// Rows of `tcp_series`.
    pub series_rows: f64,
    /// Packets times the hops each crosses (an arrival event each).
    pub pkt_hops: f64,
    /// Packets sent (an event each at the source).
    pub sends: f64,
    /// Transmission-done events: packets with another queued behind them, and sends on
    /// opportunity-driven hops.
    pub queued: f64,
}
