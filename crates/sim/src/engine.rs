//! The discrete-event engine: nodes joined by channels, agents (traffic sources, sinks, TCP
//! endpoints) attached to nodes, one event queue. Single-threaded and deterministic: all randomness
//! comes from named streams of the run's seed, and simultaneous events run in scheduling order.
//!
//! Over 600 lines: the simulator's builder API and its event loop share the private event state;
//! the channels' code is already apart (engine/channel.rs).
//!
//! Events left out (issue 14), each without changing any table: every event keeps the sequence
//! number of the moment it was decided ([`crate::event::EventQueue::reserve`]), so one that is
//! queued late, or not at all, cannot move the others.
//! - A fixed-rate link that finishes a packet with nothing queued behind it schedules no TxDone
//!   when its discipline allows it, and a fixed-rate link in front of a plain FIFO (DropTail,
//!   RED) makes none at all: it fixes each departure at enqueue (see engine/channel.rs; issue 31: this
//!   one may reorder events at one instant, so it is a model change, not an omission). Links whose
//!   discipline decides at dequeue (CoDel and the like) still make one TxDone per queued packet.
//! - A timer re-armed later before it fires (TCP's RTO on every ACK) queues nothing: the event
//!   already queued finds the new setting and re-queues itself under that setting's number.
//! - A TX completion (TCP Small Queues) is queued only while its sender is throttled; the others
//!   are handed over before the sender's next hook (engine/txc.rs, issue 31).
//!
//! `events_done` (the `events` total of a run) counts events popped from the queue and dispatched,
//! stale timer events included.
use std::any::Any;
use std::collections::VecDeque;

mod channel;
mod txc;

use crate::event::{Ev, EventQueue};
use crate::link::{Channel, Jitter, OppLink, Trace};
use crate::packet::{AgentId, Body, ChanId, Ecn, NodeId, Packet, PacketPool, PktId};
use crate::qdisc::{Qdisc, QueuedDrop};
use crate::record::{ChannelInfo, FlowInfo, Tables, NULL_NS};
use crate::rng::Rng;
use crate::time::{Rate, Time};

/// A traffic endpoint. Hooks are named after events; each gets a [`Ctx`] to act on the network.
pub trait Agent: Any {
    fn name(&self) -> &str;
    /// Called once at t = 0.
    fn start(&mut self, _ctx: &mut Ctx) {}
    /// A packet addressed to this agent arrived.
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx);
    /// Timer `key` fired (only the latest setting of a key fires; see [`Ctx::set_timer`]).
    fn on_timer(&mut self, _key: u32, _ctx: &mut Ctx) {}
    /// The run ended: write table rows.
    fn finish(&mut self, _ctx: &mut Ctx) {}
    /// TX completion of one of this agent's packets (`size` bytes), once it asked for them with
    /// [`Ctx::watch_tx_completion`].
    fn on_tx_complete(&mut self, _size: u32, _ctx: &mut Ctx) {}
    /// Whether a TX completion coming now would make this agent act (a throttled TSQ sender).
    /// While it says no, the engine queues no event for a completion and hands it over through
    /// [`Agent::on_tx_complete_quiet`] before the agent's next hook (see engine/txc.rs), so an
    /// agent that says no must do nothing in `on_tx_complete` but what the quiet call does.
    /// Default: always, every completion an event.
    fn tx_completion_wakes(&self) -> bool { true }
    /// A TX completion that came while [`Agent::tx_completion_wakes`] said no, handed over late:
    /// what `on_tx_complete` does then (it must leave `tx_completion_wakes` false).
    fn on_tx_complete_quiet(&mut self, _size: u32) {}
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A host or router.
#[derive(Debug, Clone)]
pub struct Node {
    pub name: String,
}

/// How a channel is described before it is built.
pub struct ChannelSpec {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    /// The fixed rate; with a `trace`, its mean rate (reported, and given to qdiscs that need one).
    pub rate: Rate,
    pub delay: Time,
    pub qdisc: Box<dyn Qdisc>,
    /// Delivery opportunities (a Mahimahi trace or the cellular model's); None: fixed `rate`.
    pub trace: Option<Trace>,
    pub jitter: Option<Jitter>,
    pub reorder: bool,
    pub loss: f64,
    pub sampled: bool,
}

/// Everything but the agents, so an agent can be called with `&mut Core` while it is borrowed.
pub struct Core {
    now: Time,
    seed: u64,
    events: EventQueue,
    pool: PacketPool,
    pub(crate) nodes: Vec<Node>,
    pub(crate) chans: Vec<Channel>,
    /// route[node · n + dst] = channel to take (u32::MAX: none), n = `route_n` nodes; one flat
    /// table, so a hop costs one lookup.
    route: Vec<ChanId>,
    route_n: usize,
    /// Timer slot per agent per key (u32::MAX: never set), indexing `slots`.
    timer_slot: Vec<Vec<u32>>,
    slots: Vec<TimerSlot>,
    agent_node: Vec<NodeId>,
    /// Nodes whose sent and received packets are recorded (pcap export).
    tapped: Vec<bool>,
    agent_rng: Vec<Rng>,
    sample_every: Option<Time>,
    scratch: Vec<QueuedDrop>,
    /// Per flow id: the agent told when a packet of that flow sent from the agent's node leaves the
    /// node's first link (TX completion, for TCP Small Queues); u32::MAX: nobody.
    tx_watch: Vec<AgentId>,
    /// Per agent: its TX completions not yet delivered (engine/txc.rs).
    txw: Vec<txc::TxWatch>,
    /// The agent watching TX completions whose hook is running (AgentId::MAX: none).
    hook: AgentId,
    /// Some agent watches TX completions.
    watchers: bool,
    pub tables: Tables,
    events_done: u64,
    /// Sequence number of the event being dispatched (with `now`, its place in the order).
    cur: u64,
}

/// One agent's timer key. Re-arming a timer later (TCP's RTO on every ACK) queues no event: the
/// event already queued for the earlier time finds the new setting when it pops and re-queues
/// itself under the setting's own (time, sequence number), so the timer fires exactly where an
/// event queued by the last `set_timer` would have fired. Cancelled settings leave no stale event
/// behind beyond the one already queued.
#[derive(Debug)]
struct TimerSlot {
    agent: AgentId,
    key: u32,
    /// The setting that will fire: (time, sequence number drawn by `set_timer`); None: cancelled.
    armed: Option<(Time, u64)>,
    /// The queued event that speaks for this slot; queued events under any other key are stale.
    carrier: Option<(Time, u64)>,
}

/// An agent's handle on the network during a hook.
pub struct Ctx<'a> {
    core: &'a mut Core,
    me: AgentId,
}

impl<'a> Ctx<'a> {
    pub fn now(&self) -> Time { self.core.now }
    pub fn me(&self) -> AgentId { self.me }
    pub fn node(&self) -> NodeId { self.core.agent_node[self.me as usize] }
    /// Hands a packet to the network at this agent's node; `sent` is stamped with now.
    pub fn send(&mut self, mut pkt: Packet) {
        pkt.sent = self.core.now;
        pkt.src = self.node();
        self.core.inject(pkt);
    }
    /// Sets timer `key` to fire at `at` (>= now), replacing any pending setting of that key.
    /// Among events at the same instant the timer runs where the last `set_timer` call put it, as
    /// if it had been scheduled then (see [`crate::event`]).
    pub fn set_timer(&mut self, key: u32, at: Time) {
        let at = at.max(self.core.now);
        let slot = self.core.timer_slot(self.me, key);
        let core = &mut *self.core;
        let seq = core.events.reserve();
        let sl = &mut core.slots[slot as usize];
        sl.armed = Some((at, seq));
        // An event queued for this slot no later than `at` will re-queue itself for this setting.
        if sl.carrier.is_none_or(|(t, _)| t > at) {
            sl.carrier = Some((at, seq));
            core.events.push_reserved(at, seq, Ev::Timer(slot));
        }
    }
    /// Cancels timer `key` if pending.
    pub fn cancel_timer(&mut self, key: u32) {
        let me = self.me as usize;
        if let Some(&slot) = self.core.timer_slot[me].get(key as usize) {
            if slot != u32::MAX {
                self.core.slots[slot as usize].armed = None;
            }
        }
    }
    /// The discipline of channel `ch` (a controller reads its counters and sets a shaper's rate).
    pub fn queue_mut(&mut self, ch: ChanId) -> &mut dyn Qdisc { self.core.chans[ch as usize].qdisc.as_mut() }
    /// This agent's random stream.
    pub fn rng(&mut self) -> &mut Rng { &mut self.core.agent_rng[self.me as usize] }
    pub fn tables(&mut self) -> &mut Tables { &mut self.core.tables }
    pub fn seed(&self) -> u64 { self.core.seed }
    /// From now on, tell this agent (its `on_tx_complete` hook) when a packet of `flow` that it
    /// sent leaves its node: at the end of its serialisation on the node's first link (a NIC's TX
    /// completion), or when that link's queue or loss drops it (Linux frees the skb then too).
    /// One agent per flow; packets of the flow sent from other nodes (the peer's ACKs) are ignored.
    pub fn watch_tx_completion(&mut self, flow: u32) {
        let w = &mut self.core.tx_watch;
        if w.len() <= flow as usize {
            w.resize(flow as usize + 1, u32::MAX);
        }
        w[flow as usize] = self.me;
        self.core.txw[self.me as usize].watching = true;
        self.core.watchers = true;
    }
}

impl Core {
    /// The slot of timer `key` of `agent`, made on its first use.
    #[inline(always)]
    fn timer_slot(&mut self, agent: AgentId, key: u32) -> u32 {
        match self.timer_slot[agent as usize].get(key as usize) {
            Some(&s) if s != u32::MAX => s,
            _ => self.new_timer_slot(agent, key),
        }
    }

    #[cold]
    #[inline(never)]
    fn new_timer_slot(&mut self, agent: AgentId, key: u32) -> u32 {
        let keys = &mut self.timer_slot[agent as usize];
        if keys.len() <= key as usize {
            keys.resize(key as usize + 1, u32::MAX);
        }
        if keys[key as usize] == u32::MAX {
            keys[key as usize] = self.slots.len() as u32;
            self.slots.push(TimerSlot { agent, key, armed: None, carrier: None });
        }
        keys[key as usize]
    }

    /// A popped timer event: fire, re-queue for a later setting, or drop a stale one.
    fn timer_event(&mut self, slot: u32, k: (Time, u64)) -> Option<(AgentId, u32)> {
        let sl = &mut self.slots[slot as usize];
        if sl.carrier != Some(k) {
            return None;
        }
        sl.carrier = None;
        match sl.armed {
            Some(a) if a == k => {
                sl.armed = None;
                Some((sl.agent, sl.key))
            }
            Some((at, seq)) => {
                sl.carrier = Some((at, seq));
                self.events.push_reserved(at, seq, Ev::Timer(slot));
                None
            }
            None => None,
        }
    }

    fn inject(&mut self, pkt: Packet) {
        let c = self.tables.counters_mut(pkt.flow);
        c.sent_pkts += 1;
        c.sent_bytes += pkt.size as u64;
        self.tables.sent_pkts += 1;
        self.tables.sent_bytes += pkt.size as u64;
        let (src, dst, size) = (pkt.src, pkt.dst, pkt.size);
        if self.tapped[src as usize] {
            self.tables.taps.push(crate::record::TapRecord { node: src, t_ns: self.now.ns() as i64, outgoing: true, pkt: pkt.clone() });
        }
        let id = self.pool.insert(pkt);
        if src == dst {
            // Loopback: deliver through an immediate zero-delay event so hooks never nest.
            self.events.push(self.now, Ev::Arrive(src, id));
            // No link to leave: the packet is complete at once.
            self.tx_complete(src, id, self.now);
            return;
        }
        self.forward(src, dst, id, size);
    }

    /// Sends packet `id` of `size` bytes, at node `at` and addressed to `dst`, on its next hop.
    fn forward(&mut self, at: NodeId, dst: NodeId, id: PktId, size: u32) {
        let ch = self.route[at as usize * self.route_n + dst as usize];
        // Routes are checked when the scenario is built; a missing one is a broken invariant.
        assert!(ch != u32::MAX, "no route from node {at} to node {dst}");
        if self.chans[ch as usize].network_queue {
            // The node's own interface hands the packet over at once (Channel::network_queue).
            self.tx_complete(at, id, self.now);
        }
        self.enqueue(ch, id, size);
    }

    /// Hands every discipline the passes the engine made for it (see `Qdisc::idle_pass_max`),
    /// before its `stats()` are read.
    fn hand_over_passes(&mut self) {
        for c in &mut self.chans {
            if c.passes.0 > 0 {
                c.qdisc.count_passes(c.passes.0, c.passes.1);
                c.passes = (0, 0);
            }
        }
    }

    fn sample_queues(&mut self) {
        self.hand_over_passes();
        for ch in 0..self.chans.len() {
            if self.chans[ch].sampled {
                self.settle(ch as ChanId);
            }
        }
        let t = self.now.ns() as i64;
        for (i, c) in self.chans.iter().enumerate() {
            if !c.sampled {
                continue;
            }
            let s = &mut self.tables.queue_samples;
            let st = c.qdisc.stats();
            s.t_ns.push(t);
            s.queue.push(i as u32);
            s.backlog_pkts.push(c.qdisc.backlog_pkts() as u64);
            s.backlog_bytes.push(c.qdisc.backlog_bytes());
            s.drops.push(st.dropped_pkts() + c.lost_pkts);
            s.marks.push(st.marked_pkts);
        }
    }
}

/// A simulation: build it (nodes, channels, agents), then [`Sim::run_until`] and [`Sim::finish`].
pub struct Sim {
    core: Core,
    agents: Vec<Box<dyn Agent>>,
    started: bool,
}

impl Sim {
    pub fn new(seed: u64) -> Sim {
        Sim {
            core: Core {
                now: Time::ZERO,
                seed,
                events: EventQueue::default(),
                pool: PacketPool::new(),
                nodes: vec![],
                chans: vec![],
                route: vec![],
                route_n: 0,
                timer_slot: vec![],
                slots: vec![],
                agent_node: vec![],
                tapped: vec![],
                agent_rng: vec![],
                sample_every: None,
                scratch: vec![],
                tx_watch: vec![],
                txw: vec![],
                hook: AgentId::MAX,
                watchers: false,
                tables: Tables { tcp_start_ns: NULL_NS, tcp_end_ns: NULL_NS, ..Default::default() },
                events_done: 0,
                cur: 0,
            },
            agents: vec![],
            started: false,
        }
    }

    pub fn seed(&self) -> u64 { self.core.seed }
    pub fn now(&self) -> Time { self.core.now }

    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.core.nodes.push(Node { name: name.to_string() });
        self.core.tapped.push(false);
        (self.core.nodes.len() - 1) as NodeId
    }
    pub fn node_id(&self, name: &str) -> Option<NodeId> { self.core.nodes.iter().position(|n| n.name == name).map(|i| i as NodeId) }
    /// Bytes of each frame the pcap export keeps (tcpdump -s); recorded in `Tables::pcap_snaplen`.
    pub fn set_pcap_snaplen(&mut self, n: u32) { self.core.tables.pcap_snaplen = n; }
    /// Records every packet `node` sends or receives (for pcap export).
    pub fn tap(&mut self, node: NodeId) { self.core.tapped[node as usize] = true; }
    pub fn node_name(&self, id: NodeId) -> &str { &self.core.nodes[id as usize].name }
    pub fn nodes(&self) -> &[Node] { &self.core.nodes }

    pub fn add_channel(&mut self, s: ChannelSpec) -> ChanId {
        let rng = Rng::stream(self.core.seed, &format!("channel:{}", s.name));
        self.core.chans.push(Channel {
            name: s.name,
            from: s.from,
            to: s.to,
            rate: s.rate,
            overhead: 0,
            shaper: false,
            bucket: None,
            network_queue: false,
            delay: s.delay,
            qdisc: s.qdisc,
            opp: s.trace.map(OppLink::new),
            jitter: s.jitter,
            reorder: s.reorder,
            loss: s.loss,
            loss_bursts: None,
            busy: false,
            idle_at: None,
            tx_memo: (0, 0, Time::ZERO),
            wakeup: None,
            fifo_starts: VecDeque::new(),
            fifo: false,
            noop_idle: false,
            pass_max: None,
            passes: (0, 0),
            free_at: Time::ZERO,
            last_arrival: Time::ZERO,
            rng,
            tx_pkts: 0,
            tx_bytes: 0,
            lost_pkts: 0,
            lost_bytes: 0,
            sampled: s.sampled,
        });
        (self.core.chans.len() - 1) as ChanId
    }
    pub fn channel(&self, id: ChanId) -> &Channel { &self.core.chans[id as usize] }
    pub fn channel_mut(&mut self, id: ChanId) -> &mut Channel { &mut self.core.chans[id as usize] }
    pub fn channel_id(&self, name: &str) -> Option<ChanId> { self.core.chans.iter().position(|c| c.name == name).map(|i| i as ChanId) }
    pub fn channels(&self) -> &[Channel] { &self.core.chans }

    /// Id the next added agent will get (so a pair of agents can address each other).
    pub fn next_agent_id(&self) -> AgentId { self.agents.len() as AgentId }

    pub fn add_agent(&mut self, node: NodeId, agent: Box<dyn Agent>) -> AgentId {
        let id = self.agents.len() as AgentId;
        let rng = Rng::stream(self.core.seed, &format!("agent:{}", agent.name()));
        self.agents.push(agent);
        self.core.agent_node.push(node);
        self.core.agent_rng.push(rng);
        self.core.timer_slot.push(vec![]);
        self.core.txw.push(Default::default());
        id
    }
    pub fn agent(&self, id: AgentId) -> &dyn Agent { self.agents[id as usize].as_ref() }
    pub fn agent_mut(&mut self, id: AgentId) -> &mut dyn Agent { self.agents[id as usize].as_mut() }
    /// Typed access for tests and builders.
    pub fn agent_as<T: Agent>(&self, id: AgentId) -> Option<&T> { self.agents[id as usize].as_any().downcast_ref::<T>() }

    pub fn add_flow(&mut self, name: &str, kind: &str) -> u32 {
        let id = self.core.tables.flows.len() as u32;
        self.core.tables.flows.push(FlowInfo { flow_id: id, name: name.to_string(), kind: kind.to_string() });
        id
    }

    /// Samples the backlog of the `sampled` channels every `every`.
    pub fn sample_queues_every(&mut self, every: Time) {
        if every > Time::ZERO {
            self.core.sample_every = Some(every);
        }
    }

    /// Computes shortest-hop routes between all nodes (BFS; ties go to the channel added first).
    /// Returns the pairs (from, to) with no path.
    pub fn compute_routes(&mut self) -> Vec<(NodeId, NodeId)> {
        let n = self.core.nodes.len();
        let mut out_chans: Vec<Vec<ChanId>> = vec![vec![]; n];
        for (i, c) in self.core.chans.iter().enumerate() {
            out_chans[c.from as usize].push(i as ChanId);
        }
        let mut route = vec![u32::MAX; n * n];
        let mut missing = vec![];
        for src in 0..n {
            // first hop channel for every destination reached from src
            let mut first: Vec<Option<ChanId>> = vec![None; n];
            let mut seen = vec![false; n];
            seen[src] = true;
            let mut q = VecDeque::new();
            for &ch in &out_chans[src] {
                let to = self.core.chans[ch as usize].to as usize;
                if !seen[to] {
                    seen[to] = true;
                    first[to] = Some(ch);
                    q.push_back(to);
                }
            }
            while let Some(u) = q.pop_front() {
                for &ch in &out_chans[u] {
                    let to = self.core.chans[ch as usize].to as usize;
                    if !seen[to] {
                        seen[to] = true;
                        first[to] = first[u];
                        q.push_back(to);
                    }
                }
            }
            for (dst, f) in first.iter().enumerate() {
                if dst != src && f.is_none() {
                    missing.push((src as NodeId, dst as NodeId));
                }
            }
            for (dst, ch) in first.into_iter().enumerate() {
                route[src * n + dst] = ch.unwrap_or(u32::MAX);
            }
        }
        self.core.route = route;
        self.core.route_n = n;
        missing
    }

    /// The channels a packet from `src` to `dst` crosses, in order (after [`Sim::compute_routes`];
    /// empty when there is no route).
    pub fn path(&self, src: NodeId, dst: NodeId) -> Vec<ChanId> {
        let n = self.core.route_n;
        let mut out = vec![];
        let mut at = src as usize;
        while at != dst as usize && out.len() <= n {
            let ch = self.core.route.get(at * n + dst as usize).copied().unwrap_or(u32::MAX);
            if ch == u32::MAX {
                return vec![];
            }
            out.push(ch);
            at = self.core.chans[ch as usize].to as usize;
        }
        out
    }

    fn ensure_started(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        for c in &mut self.core.chans {
            c.noop_idle = c.qdisc.empty_dequeue_is_noop();
            c.fifo = c.fifo_departures();
            c.pass_max = if c.fifo { c.qdisc.idle_pass_max() } else { None };
        }
        if self.core.route_n != self.core.nodes.len() || self.core.route.is_empty() {
            self.compute_routes();
        }
        for a in 0..self.agents.len() {
            self.core.events.push(Time::ZERO, Ev::Start(a as AgentId));
        }
        if let Some(_every) = self.core.sample_every {
            self.core.events.push(Time::ZERO, Ev::Sample);
        }
    }

    /// Runs every event with time <= `until`; the clock ends at `until`.
    pub fn run_until(&mut self, until: Time) {
        self.ensure_started();
        while let Some((t, seq, ev)) = self.core.events.pop_until(until) {
            self.core.now = t;
            self.core.cur = seq;
            self.core.events_done += 1;
            self.dispatch(ev);
        }
        // TxDone events left out (links that went idle) up to `until` would have run in this call,
        // and so would the quiet TX completions.
        self.core.settle_until(until);
        self.quiet_through(until);
        self.core.now = self.core.now.max(until);
        self.core.hand_over_passes();
    }

    /// Runs until no event is left (beware: periodic sources never stop on their own).
    pub fn run(&mut self) {
        self.ensure_started();
        while let Some((t, seq, ev)) = self.core.events.pop() {
            self.core.now = t;
            self.core.cur = seq;
            self.core.events_done += 1;
            self.dispatch(ev);
        }
        // The TxDone events left out would have run too, each an empty dequeue at its own time
        // (nothing after them can observe the order), and the clock ends at the last of them.
        // A FIFO link whose empty dequeue changes nothing keeps no idle_at: its last departure.
        let core = &self.core;
        let idle = |c: &Channel| if c.fifo && c.noop_idle { (c.free_at > Time::ZERO).then_some(c.free_at) } else { c.idle_at.map(|(t, _)| t) };
        let last = core.chans.iter().filter_map(idle).max().max(self.quiet_through(Time(u64::MAX)));
        if let Some(t) = last {
            self.core.settle_until(t);
            self.core.now = self.core.now.max(t);
        }
        self.core.hand_over_passes();
    }

    /// Inlined into the event loop (the native module's build left it out of line: a call and
    /// its spills every event).
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone(ch) => match &self.core.chans[ch as usize].opp {
                // Stale when an enqueue at this very instant already used the opportunity.
                Some(o) => {
                    if o.pending == Some(self.core.now) {
                        self.core.run_opportunities(ch);
                    }
                }
                None => self.core.start_tx(ch),
            },
            Ev::Wakeup(ch) => {
                self.core.settle(ch);
                let c = &mut self.core.chans[ch as usize];
                if c.wakeup == Some(self.core.now) {
                    c.wakeup = None;
                    if !c.busy && c.opp.is_none() {
                        self.core.start_tx(ch);
                    }
                }
            }
            Ev::Arrive(node, id) => {
                let (dst, size) = { let p = self.core.pool.get(id); (p.dst, p.size) };
                if node == dst {
                    // Accounted in place; the packet leaves the pool only for the hook, so that
                    // it is copied once (into the hook's argument), not out and then again.
                    let core = &mut self.core;
                    let pkt = core.pool.get(id);
                    if core.tapped[node as usize] {
                        core.tables.taps.push(crate::record::TapRecord { node, t_ns: core.now.ns() as i64, outgoing: false, pkt: pkt.clone() });
                    }
                    let c = core.tables.counters_mut(pkt.flow);
                    c.delivered_pkts += 1;
                    c.delivered_bytes += pkt.size as u64;
                    if pkt.ecn == Ecn::Ce {
                        c.ce_delivered += 1;
                    }
                    core.tables.delivered_pkts += 1;
                    core.tables.delivered_bytes += pkt.size as u64;
                    if let Body::Media { row, .. } = pkt.body {
                        let m = &mut core.tables.media;
                        let r = row as usize;
                        // duplicates (none today) would keep the first copy
                        if m.recv_ns[r] == NULL_NS {
                            m.recv_ns[r] = core.now.ns() as i64;
                            m.ce[r] = pkt.ecn == Ecn::Ce;
                        }
                    }
                    let a = pkt.dst_agent;
                    self.before_hook(a);
                    let pkt = self.core.pool.remove(id);
                    let mut ctx = Ctx { core: &mut self.core, me: a };
                    self.agents[a as usize].on_packet(pkt, &mut ctx);
                    self.after_hook(a);
                } else {
                    self.core.forward(node, dst, id, size);
                }
            }
            Ev::Timer(slot) => {
                let k = (self.core.now, self.core.cur);
                if let Some((a, key)) = self.core.timer_event(slot, k) {
                    self.before_hook(a);
                    let mut ctx = Ctx { core: &mut self.core, me: a };
                    self.agents[a as usize].on_timer(key, &mut ctx);
                    self.after_hook(a);
                }
            }
            Ev::Start(a) => {
                self.before_hook(a);
                let mut ctx = Ctx { core: &mut self.core, me: a };
                self.agents[a as usize].start(&mut ctx);
                self.after_hook(a);
            }
            Ev::TxComplete(a, size) => {
                self.completion_event(a);
                let mut ctx = Ctx { core: &mut self.core, me: a };
                self.agents[a as usize].on_tx_complete(size, &mut ctx);
                self.after_hook(a);
            }
            Ev::Sample => {
                self.core.sample_queues();
                if let Some(every) = self.core.sample_every {
                    self.core.events.push(self.core.now + every, Ev::Sample);
                }
            }
        }
    }

    /// Lets agents write their rows, records channel counters and the conservation totals.
    pub fn finish(mut self) -> Tables {
        self.ensure_started();
        let now = self.core.now;
        self.core.settle_until(now);
        self.quiet_through(now);
        for a in 0..self.agents.len() {
            let mut ctx = Ctx { core: &mut self.core, me: a as AgentId };
            self.agents[a].finish(&mut ctx);
        }
        self.core.hand_over_passes();
        let core = &mut self.core;
        let names: Vec<String> = core.nodes.iter().map(|n| n.name.clone()).collect();
        core.tables.nodes = names.clone();
        core.tables.channels = core
            .chans
            .iter()
            .map(|c| ChannelInfo {
                name: c.name.clone(),
                from: names[c.from as usize].clone(),
                to: names[c.to as usize].clone(),
                qdisc: c.qdisc.kind().to_string(),
                rate_bps: c.rate.0,
                delay_ns: c.delay.ns() as i64,
                stats: c.qdisc.stats().clone(),
                backlog_pkts: c.qdisc.backlog_pkts() as u64,
                backlog_bytes: c.qdisc.backlog_bytes(),
                tx_pkts: c.tx_pkts,
                tx_bytes: c.tx_bytes,
                lost_pkts: c.lost_pkts,
                lost_bytes: c.lost_bytes,
            })
            .collect();
        core.tables.in_flight_pkts = core.pool.live() as u64;
        core.tables.in_flight_bytes = core.pool.live_bytes();
        core.tables.events = core.events_done;
        core.tables.end_ns = core.now.ns() as i64;
        std::mem::take(&mut core.tables)
    }

    /// Events processed so far.
    pub fn events_done(&self) -> u64 { self.core.events_done }
    /// Events queued and not yet run (stale ones included).
    pub fn pending_events(&self) -> usize { self.core.events.len() }
    pub fn tables(&self) -> &Tables { &self.core.tables }
}
