//! Engine wiring: [`TcpSenderAgent`] and [`TcpReceiverAgent`] carry a protocol core each, turn its
//! outputs into packets and timers, and write the `tcp_flows` row (and `tcp_series` rows) of their
//! connection. [`add_connection`] adds a connected pair to a [`Sim`].
//!
//! Timer keys (per agent): sender 0 = connection start, 1 = RTO, 2 = pacing; receiver 0 = delayed ACK.
//! Both directions of a connection carry the connection's flow id, so the engine's per-flow drop
//! counter (the `drops` column) counts lost ACKs too.
use std::any::Any;

use super::receiver::{RecvOutput, Receiver};
use super::sender::{Output, Sender};
use super::{wire_size, SharedWindowPolicy, TcpConfig, TimerCmd};
use crate::engine::{Agent, Ctx, Sim};
use crate::packet::{AgentId, Body, Ecn, NodeId, Packet};
use crate::record::{NULL_NS, NULL_SIZE};
use crate::time::Time;

const T_START: u32 = 0;
const T_RTO: u32 = 1;
const T_PACE: u32 = 2;
const T_DELACK: u32 = 0;

fn apply(ctx: &mut Ctx, key: u32, cmd: TimerCmd) {
    match cmd {
        TimerCmd::Keep => {}
        TimerCmd::Set(at) => ctx.set_timer(key, at),
        TimerCmd::Cancel => ctx.cancel_timer(key),
    }
}

fn ns(t: Option<Time>) -> i64 { t.map_or(NULL_NS, |t| t.ns() as i64) }

pub struct TcpSenderAgent {
    name: String,
    flow: u32,
    role: String,
    start: Time,
    peer_node: NodeId,
    peer_agent: AgentId,
    pub core: Sender,
    out: Output,
}

/// Port of the data receiver, and the data sender's port for connection `flow` (Linux's default
/// ephemeral range starts at 32768), so each connection is its own 4-tuple in a capture.
pub const RECEIVER_PORT: u16 = 5001;
pub fn sender_port(flow: u32) -> u16 { 32_768 + (flow % 28_232) as u16 }

impl TcpSenderAgent {
    fn flush(&mut self, ctx: &mut Ctx) {
        let tsq = self.core.config().tsq;
        for mut s in self.out.segs.drain(..) {
            if tsq {
                self.core.tsq.sent(s.size.saturating_sub(self.core.header_bytes()));
            }
            s.hdr.src_port = sender_port(self.flow);
            s.hdr.dst_port = RECEIVER_PORT;
            let pkt = Packet {
                flow: self.flow,
                src: 0,
                dst: self.peer_node,
                dst_agent: self.peer_agent,
                size: s.size,
                ecn: match (s.ect, self.core.config().ect1) {
                    (false, _) => Ecn::NotEct,
                    (true, false) => Ecn::Ect0,
                    (true, true) => Ecn::Ect1,
                },
                sent: Time::ZERO,
                body: Body::Tcp(s.hdr),
            };
            ctx.send(pkt);
        }
        apply(ctx, T_RTO, std::mem::take(&mut self.out.rto));
        apply(ctx, T_PACE, std::mem::take(&mut self.out.pace));
        if self.core.config().series && self.core.state != super::sender::State::Closed {
            let now = ctx.now().ns() as i64;
            let (cwnd, ssthresh, srtt, pipe) = (self.core.cwnd(), self.core.ssthresh(), ns(self.core.srtt()), self.core.pipe());
            let s = &mut ctx.tables().tcp_series;
            s.t_ns.push(now);
            s.flow_id.push(self.flow);
            s.cwnd.push(cwnd);
            s.ssthresh.push(ssthresh);
            s.srtt_ns.push(srtt);
            s.inflight.push(pipe);
        }
    }
    pub fn flow(&self) -> u32 { self.flow }
}

impl Agent for TcpSenderAgent {
    fn name(&self) -> &str { &self.name }
    fn start(&mut self, ctx: &mut Ctx) {
        if self.core.config().tsq {
            ctx.watch_tx_completion(self.flow);
        }
        ctx.set_timer(T_START, self.start);
    }
    /// TSQ: one of this connection's packets left the host (tcp_wfree → tcp_tsq_write).
    fn on_tx_complete(&mut self, size: u32, ctx: &mut Ctx) {
        if self.core.tsq.completed(size.saturating_sub(self.core.header_bytes())) {
            self.core.on_pace(ctx.now(), &mut self.out);
            self.flush(ctx);
        }
    }
    /// Only a throttled sender acts on a completion; the others just count it (engine/txc.rs).
    fn tx_completion_wakes(&self) -> bool { self.core.tsq.throttled }
    fn on_tx_complete_quiet(&mut self, size: u32) {
        let woke = self.core.tsq.completed(size.saturating_sub(self.core.header_bytes()));
        debug_assert!(!woke, "a quiet completion found the sender throttled");
    }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        if let Body::Tcp(h) = &pkt.body {
            self.core.process(h, ctx.now(), &mut self.out);
            self.flush(ctx);
        }
    }
    fn on_timer(&mut self, key: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        match key {
            T_START => self.core.connect(now, &mut self.out),
            T_RTO => self.core.on_rto(now, &mut self.out),
            T_PACE => self.core.on_pace(now, &mut self.out),
            _ => return,
        }
        self.flush(ctx);
    }
    fn finish(&mut self, ctx: &mut Ctx) {
        let dropped = ctx.tables().counters(self.flow).dropped_pkts;
        let c = &self.core;
        let st = &c.stats;
        let now = ctx.now();
        let t = ctx.tables();
        let f = &mut t.tcp_flows;
        f.flow_id.push(self.flow);
        f.role.push(self.role.clone());
        f.iw.push(c.config().iw);
        f.cc.push(c.cc_name().to_string());
        f.syn_ns.push(ns(st.syn_at));
        f.first_data_ns.push(ns(st.first_data_at));
        f.end_ns.push(ns(st.end_at));
        // the receiver's agent (next in order) sets what it got; acknowledged bytes until then
        f.bytes.push(st.bytes_acked);
        f.bytes_acked.push(st.bytes_acked);
        f.size.push(c.size().map_or(NULL_SIZE, |s| s as i64));
        f.segments_sent.push(st.segments_sent);
        f.retransmits.push(st.retransmits);
        f.drops.push(dropped);
        f.ecn_marks.push(st.ecn_reductions);
        f.timeouts.push(st.timeouts + st.syn_timeouts);
        if let Some(s) = st.syn_at {
            let s = s.ns() as i64;
            t.tcp_start_ns = if t.tcp_start_ns == NULL_NS { s } else { t.tcp_start_ns.min(s) };
            // A flow still running at the end of the run ends with the run.
            let e = st.end_at.unwrap_or(now).ns() as i64;
            t.tcp_end_ns = if t.tcp_end_ns == NULL_NS { e } else { t.tcp_end_ns.max(e) };
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

pub struct TcpReceiverAgent {
    name: String,
    flow: u32,
    peer_node: NodeId,
    peer_agent: AgentId,
    pub core: Receiver,
    out: RecvOutput,
}

impl TcpReceiverAgent {
    fn flush(&mut self, ctx: &mut Ctx) {
        for mut hdr in self.out.segs.drain(..) {
            hdr.src_port = RECEIVER_PORT;
            hdr.dst_port = sender_port(self.flow);
            let pkt = Packet {
                flow: self.flow,
                src: 0,
                dst: self.peer_node,
                dst_agent: self.peer_agent,
                size: wire_size(&hdr),
                ecn: Ecn::NotEct,
                sent: Time::ZERO,
                body: Body::Tcp(hdr),
            };
            ctx.send(pkt);
        }
        apply(ctx, T_DELACK, std::mem::take(&mut self.out.delack));
    }
}

impl Agent for TcpReceiverAgent {
    fn name(&self) -> &str { &self.name }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        if let Body::Tcp(h) = &pkt.body {
            self.core.process(h, pkt.ecn == Ecn::Ce, ctx.now(), &mut self.out);
            self.flush(ctx);
        }
    }
    fn on_timer(&mut self, key: u32, ctx: &mut Ctx) {
        if key == T_DELACK {
            self.core.on_delack(ctx.now(), &mut self.out);
            self.flush(ctx);
        }
    }
    /// `tcp_flows.bytes` is what reached the receiver in order; the sender's row is the last one
    /// (add_connection gives the receiver the agent id after the sender's, and agents finish in order).
    fn finish(&mut self, ctx: &mut Ctx) {
        let f = &mut ctx.tables().tcp_flows;
        if let (Some(&flow), Some(b)) = (f.flow_id.last(), f.bytes.last_mut()) {
            debug_assert_eq!(flow, self.flow);
            if flow == self.flow {
                *b = self.core.stats.bytes_in_order;
            }
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

/// How to add one connection.
#[derive(Clone)]
pub struct ConnSpec {
    /// Unique name (flow name in the tables, agent names "<name>.snd" / "<name>.rcv").
    pub name: String,
    /// Workload role for `tcp_flows.role` ("bulk", "web", "ftp").
    pub role: String,
    /// Data sender's node and receiver's node.
    pub from: NodeId,
    pub to: NodeId,
    /// When the SYN is sent.
    pub start: Time,
    /// Payload bytes; None = unlimited.
    pub size: Option<u64>,
    pub cfg: TcpConfig,
    /// The receiving host's window policy, if any.
    pub policy: Option<SharedWindowPolicy>,
}

/// The ids of an added connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    pub flow: u32,
    pub sender: AgentId,
    pub receiver: AgentId,
}

/// Adds a sender at `spec.from` and a receiver at `spec.to` that talk to each other.
pub fn add_connection(sim: &mut Sim, spec: ConnSpec) -> Connection {
    let flow = sim.add_flow(&spec.name, &spec.role);
    let sid = sim.next_agent_id();
    let rid = sid + 1;
    let snd = TcpSenderAgent {
        name: format!("{}.snd", spec.name),
        flow,
        role: spec.role.clone(),
        start: spec.start,
        peer_node: spec.to,
        peer_agent: rid,
        core: Sender::new(spec.cfg.clone(), spec.size),
        out: Output::default(),
    };
    let got = sim.add_agent(spec.from, Box::new(snd));
    debug_assert_eq!(got, sid);
    let rcv = TcpReceiverAgent {
        name: format!("{}.rcv", spec.name),
        flow,
        peer_node: spec.from,
        peer_agent: sid,
        core: Receiver::new(spec.cfg, flow, spec.policy),
        out: RecvOutput::default(),
    };
    let got = sim.add_agent(spec.to, Box::new(rcv));
    debug_assert_eq!(got, rid);
    Connection { flow, sender: sid, receiver: rid }
}
