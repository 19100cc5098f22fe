//! The two ends of an adaptive media flow.
//!
//! Sender: every frame interval the encoder makes a frame at the controller's target
//! ([`super::encoder`]), the packetiser cuts it into RTP packets of at most `mtu` IP bytes, and they
//! wait in the RTP queue for the pacer (one packet per size/pacing-rate) and, for a windowed
//! controller, for room in its window. Each packet's send instant is its row's `send_ns` in
//! `media_packets`. A report from the receiver updates the controller, then the encoder's target.
//!
//! Receiver: records each arrival and sends a report every `feedback_interval` while packets come
//! in, as its own flow (`NAME.feedback`) on the reverse path, where it queues, is delayed and may be
//! lost like any packet.
use std::any::Any;

use super::encoder::Encoder;
use super::feedback::{Collector, Format, Mailbox, STALE};
use super::sender::{Next, SenderCore};
use super::Controller;
use crate::engine::{Agent, Ctx};
use crate::media::RTP_PORT;
use crate::packet::{AgentId, Body, Ecn, NodeId, Packet};
use crate::record::NULL_NS;
use crate::time::Time;

const FRAME: u32 = 0;
const PACER: u32 = 1;

pub struct RtcSender {
    name: String,
    flow: u32,
    dst: NodeId,
    dst_agent: AgentId,
    start: Time,
    stop: Time,
    interval: Time,
    ecn: bool,
    ssrc: u32,
    /// The sender's logic (shared with the testbed's real-time sender).
    pub core: SenderCore,
    /// Frame slots passed (frames made or skipped in a pause): the next capture is at
    /// start + slot · interval, so pauses never shift the frame clock.
    slot: u64,
    /// [from, to) windows in which the source makes no frames (RFC 8867 §5.8's pause and resume).
    pauses: Vec<(Time, Time)>,
    mailbox: Mailbox,
}

impl RtcSender {
    fn try_send(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.core.discard_old(now);
        loop {
            match self.core.poll(now) {
                Next::Idle => return,
                Next::At(t) => {
                    ctx.set_timer(PACER, t);
                    return;
                }
                Next::Send { seq, size } => {
                    let row = ctx.tables().media.push(self.flow, seq, now.ns() as i64, size);
                    ctx.send(Packet {
                        flow: self.flow,
                        src: 0,
                        dst: self.dst,
                        dst_agent: self.dst_agent,
                        size,
                        ecn: if self.ecn { Ecn::Ect0 } else { Ecn::NotEct },
                        sent: now,
                        body: Body::Media { seq, row, ssrc: self.ssrc, src_port: RTP_PORT, dst_port: RTP_PORT },
                    });
                }
            }
        }
    }

    fn on_report(&mut self, sent_ns: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        let report = {
            let mut mb = self.mailbox.borrow_mut();
            let r = mb.remove(&sent_ns);
            // reports older than STALE were lost on the way
            let cut = now.saturating_sub(STALE).ns();
            while mb.first_key_value().is_some_and(|(&k, _)| k < cut) {
                mb.pop_first();
            }
            r
        };
        let Some(report) = report else { return };
        let row = self.core.on_report(&report, now);
        let s = &mut ctx.tables().rtc_series;
        s.t_ns.push(row.t.ns() as i64);
        s.flow_id.push(self.flow);
        s.target_bps.push(row.target_bps);
        s.encoder_bps.push(row.encoder_bps);
        s.rtt_ns.push(row.rtt.map_or(NULL_NS, |r| r.ns() as i64));
        s.in_flight_bytes.push(row.in_flight);
        s.queue_bytes.push(row.queue_bytes);
        s.state.push(row.state);
        self.try_send(ctx);
    }

    /// One frame at the controller's target, cut into packets and queued.
    fn encode(&mut self, now: Time, ctx: &mut Ctx) {
        let f = self.core.encode(self.interval, now);
        let t = &mut ctx.tables().rtc_frames;
        t.flow_id.push(self.flow);
        t.frame.push(f.frame);
        t.capture_ns.push(f.capture.ns() as i64);
        t.bytes.push(f.bytes);
        t.packets.push(f.packets);
        t.first_seq.push(f.first_seq);
        t.key.push(f.key);
    }
}

impl Agent for RtcSender {
    fn name(&self) -> &str { &self.name }
    fn start(&mut self, ctx: &mut Ctx) {
        if self.start < self.stop {
            ctx.set_timer(FRAME, self.start);
        }
    }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) { self.on_report(pkt.sent.ns(), ctx); }
    fn on_timer(&mut self, key: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        if key == FRAME {
            if !self.pauses.iter().any(|&(a, b)| a <= now && now < b) {
                self.encode(now, ctx);
            }
            self.slot += 1;
            let next = self.start + self.interval.mul(self.slot);
            if next < self.stop {
                ctx.set_timer(FRAME, next);
            }
        }
        self.try_send(ctx);
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

pub struct RtcReceiver {
    name: String,
    flow: u32,
    sender_node: NodeId,
    sender_agent: AgentId,
    format: Format,
    interval: Time,
    until: Time,
    armed: bool,
    collector: Collector,
    mailbox: Mailbox,
    presence: Option<crate::tcp::moderation::MediaPresence>,
    pub reports: u64,
}

impl Agent for RtcReceiver {
    fn name(&self) -> &str { &self.name }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let now = ctx.now();
        if let Body::Media { seq, .. } = pkt.body {
            self.collector.on_arrival(seq, now, pkt.ecn == Ecn::Ce);
        }
        if let Some(p) = &self.presence {
            p.set(Some(now));
        }
        if !self.armed {
            self.armed = true;
            ctx.set_timer(0, now + self.interval);
        }
    }
    fn on_timer(&mut self, _key: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        if let Some(r) = self.collector.report(now) {
            let n = r.packets.len() as u32;
            let got = r.packets.iter().filter(|s| s.recv.is_some()).count() as u32;
            self.mailbox.borrow_mut().insert(now.ns(), r);
            self.reports += 1;
            ctx.send(Packet { flow: self.flow, src: 0, dst: self.sender_node, dst_agent: self.sender_agent, size: self.format.report_size(n, got), ecn: Ecn::NotEct, sent: now, body: Body::Raw });
        }
        if now + self.interval <= self.until {
            ctx.set_timer(0, now + self.interval);
        } else {
            self.armed = false;
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

/// What an adaptive sender is built from (the `[[traffic]]` entry as `traffic::adaptive` reads it).
pub struct SenderSpec {
    pub name: String,
    pub flow: u32,
    pub dst: NodeId,
    pub dst_agent: AgentId,
    pub start: Time,
    pub stop: Time,
    /// Frame interval (video) or packet interval (audio).
    pub interval: Time,
    /// Largest IP packet of the packetiser.
    pub mtu: u32,
    pub ecn: bool,
    pub controller: Box<dyn Controller>,
    pub encoder: Encoder,
    /// [from, to) windows without frames, in order.
    pub pauses: Vec<(Time, Time)>,
}

impl RtcSender {
    /// A sender that reads the reports its receiver posts to `mailbox`.
    pub fn new(s: SenderSpec, mailbox: Mailbox) -> RtcSender {
        RtcSender {
            name: s.name,
            flow: s.flow,
            dst: s.dst,
            dst_agent: s.dst_agent,
            start: s.start,
            stop: s.stop,
            interval: s.interval,
            ecn: s.ecn,
            ssrc: 0x4a4c_0000 | s.flow,
            core: SenderCore::new(s.controller, s.encoder, s.mtu),
            slot: 0,
            pauses: s.pauses,
            mailbox,
        }
    }
}

/// What an adaptive receiver is built from.
pub struct ReceiverSpec {
    pub name: String,
    /// The feedback flow (`NAME.feedback`).
    pub flow: u32,
    pub sender_node: NodeId,
    pub sender_agent: AgentId,
    pub format: Format,
    /// Feedback interval.
    pub interval: Time,
    /// Reports stop after this instant (the sender's stop plus a margin for the last packets).
    pub until: Time,
    /// The host's media-presence cell (RWND moderation with `only_with_media`).
    pub presence: Option<crate::tcp::moderation::MediaPresence>,
}

impl RtcReceiver {
    /// A receiver that posts its reports to `mailbox` (shared with its sender).
    pub fn new(r: ReceiverSpec, mailbox: Mailbox) -> RtcReceiver {
        RtcReceiver {
            name: r.name,
            flow: r.flow,
            sender_node: r.sender_node,
            sender_agent: r.sender_agent,
            format: r.format,
            interval: r.interval,
            until: r.until,
            armed: false,
            collector: Collector::default(),
            mailbox,
            presence: r.presence,
            reports: 0,
        }
    }
}
