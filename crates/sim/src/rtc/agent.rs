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
use std::collections::VecDeque;

use super::encoder::{packetize, Encoder};
use super::feedback::{Collector, Format, Mailbox, STALE};
use super::{Controller, FeedbackInfo, PacketResult};
use crate::engine::{Agent, Ctx};
use crate::media::{RTP_OVERHEAD, RTP_PORT};
use crate::packet::{AgentId, Body, Ecn, NodeId, Packet};
use crate::record::NULL_NS;
use crate::time::Time;

const FRAME: u32 = 0;
const PACER: u32 = 1;

struct Queued {
    seq: u64,
    size: u32,
    enq: Time,
}

struct Sent {
    send: Time,
    size: u32,
    reported: bool,
}

pub struct RtcSender {
    name: String,
    flow: u32,
    dst: NodeId,
    dst_agent: AgentId,
    start: Time,
    stop: Time,
    interval: Time,
    mtu: u32,
    ecn: bool,
    ssrc: u32,
    pub controller: Box<dyn Controller>,
    pub encoder: Encoder,
    frame: u64,
    /// Frame slots passed (frames made or skipped in a pause): the next capture is at
    /// start + slot · interval, so pauses never shift the frame clock.
    slot: u64,
    /// [from, to) windows in which the source makes no frames (RFC 8867 §5.8's pause and resume).
    pauses: Vec<(Time, Time)>,
    next_seq: u64,
    queue: VecDeque<Queued>,
    queue_bytes: u64,
    /// Sent packets from `sent_base` on, until reported.
    sent: VecDeque<Sent>,
    sent_base: u64,
    in_flight: u64,
    next_pace: Time,
    mailbox: Mailbox,
    /// Packets discarded from the RTP queue.
    pub discarded: u64,
}

impl RtcSender {
    /// Discards the RTP queue when its oldest packet is older than the controller allows; the
    /// discarded sequence numbers count as settled (never sent: no row in media_packets, so the
    /// receiver's report of them as lost is ignored) and the next frame is a key frame.
    fn discard_old(&mut self, now: Time) {
        let Some(limit) = self.controller.queue_discard() else { return };
        if self.queue.front().is_none_or(|q| now.saturating_sub(q.enq) <= limit) {
            return;
        }
        while let Some(q) = self.queue.pop_front() {
            self.queue_bytes -= (q.size - RTP_OVERHEAD) as u64;
            self.discarded += 1;
            self.sent.push_back(Sent { send: now, size: q.size, reported: true });
        }
        self.encoder.force_key();
    }

    fn try_send(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.discard_old(now);
        while let Some(q) = self.queue.front() {
            if now < self.next_pace {
                ctx.set_timer(PACER, self.next_pace);
                return;
            }
            if let Some(w) = self.controller.window() {
                // RFC 8298 §4.1.2.3: wait for feedback to open the window (one packet always may go
                // when nothing is in flight, or the flow could stall)
                if self.in_flight > 0 && self.in_flight + q.size as u64 > w {
                    return;
                }
            }
            let q = self.queue.pop_front().expect("front");
            self.queue_bytes -= (q.size - RTP_OVERHEAD) as u64;
            let row = ctx.tables().media.push(self.flow, q.seq, now.ns() as i64, q.size);
            ctx.send(Packet {
                flow: self.flow,
                src: 0,
                dst: self.dst,
                dst_agent: self.dst_agent,
                size: q.size,
                ecn: if self.ecn { Ecn::Ect0 } else { Ecn::NotEct },
                sent: now,
                body: Body::Media { seq: q.seq, row, ssrc: self.ssrc, src_port: RTP_PORT, dst_port: RTP_PORT },
            });
            debug_assert_eq!(q.seq, self.sent_base + self.sent.len() as u64);
            self.sent.push_back(Sent { send: now, size: q.size, reported: false });
            self.in_flight += q.size as u64;
            self.controller.on_sent(q.seq, q.size, now);
            let rate = self.controller.pacing_rate().max(1.0);
            self.next_pace = self.next_pace.max(now) + Time::from_secs_f64(q.size as f64 * 8.0 / rate);
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
        let mut results = Vec::with_capacity(report.packets.len());
        let mut rtt = None;
        for s in &report.packets {
            let Some(i) = s.seq.checked_sub(self.sent_base) else { continue };
            let Some(rec) = self.sent.get_mut(i as usize) else { continue };
            if rec.reported {
                continue;
            }
            rec.reported = true;
            self.in_flight -= rec.size as u64;
            results.push(PacketResult { seq: s.seq, send: rec.send, size: rec.size, recv: s.recv, ce: s.ce });
            if let Some(r) = s.recv {
                // RFC 8888 §3.1: the report timestamp lets the sender take the hold time off
                rtt = Some(now.saturating_sub(rec.send).saturating_sub(report.at.saturating_sub(r)));
            }
        }
        while self.sent.front().is_some_and(|s| s.reported) {
            self.sent.pop_front();
            self.sent_base += 1;
        }
        let queue_delay = self.queue.front().map_or(Time::ZERO, |q| now.saturating_sub(q.enq));
        let fb = FeedbackInfo { packets: &results, rtt, in_flight: self.in_flight, queue_bytes: self.queue_bytes, queue_delay };
        self.controller.on_feedback(&fb, now);
        let target = self.controller.target_rate();
        self.encoder.set_target(target, now);
        let s = &mut ctx.tables().rtc_series;
        s.t_ns.push(now.ns() as i64);
        s.flow_id.push(self.flow);
        s.target_bps.push(target);
        s.encoder_bps.push(self.encoder.rate());
        s.rtt_ns.push(rtt.map_or(NULL_NS, |r| r.ns() as i64));
        s.in_flight_bytes.push(self.in_flight);
        s.queue_bytes.push(self.queue_bytes);
        s.state.push(self.controller.state());
        self.try_send(ctx);
    }
}

impl RtcSender {
    /// One frame at the controller's target, cut into packets and queued.
    fn encode(&mut self, now: Time, ctx: &mut Ctx) {
        self.encoder.set_target(self.controller.target_rate(), now);
        let f = self.encoder.next_frame(self.interval, now);
        let sizes = packetize(f.bytes, self.mtu, RTP_OVERHEAD);
        let t = &mut ctx.tables().rtc_frames;
        t.flow_id.push(self.flow);
        t.frame.push(self.frame);
        t.capture_ns.push(now.ns() as i64);
        t.bytes.push(f.bytes);
        t.packets.push(sizes.len() as u32);
        t.first_seq.push(self.next_seq);
        t.key.push(f.key);
        for size in sizes {
            self.queue.push_back(Queued { seq: self.next_seq, size, enq: now });
            self.queue_bytes += (size - RTP_OVERHEAD) as u64;
            self.next_seq += 1;
        }
        self.frame += 1;
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
            mtu: s.mtu,
            ecn: s.ecn,
            ssrc: 0x4a4c_0000 | s.flow,
            controller: s.controller,
            encoder: s.encoder,
            frame: 0,
            slot: 0,
            pauses: s.pauses,
            next_seq: 0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            sent: VecDeque::new(),
            sent_base: 0,
            in_flight: 0,
            next_pace: Time::ZERO,
            mailbox,
            discarded: 0,
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
