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
use super::{controller_names, Controller, FeedbackInfo, Limits, PacketResult, CONTROLLERS};
use crate::config::{ConfigError, Params};
use crate::engine::{Agent, Ctx};
use crate::media::{RTP_OVERHEAD, RTP_PORT};
use crate::packet::{AgentId, Body, Ecn, NodeId, Packet};
use crate::record::NULL_NS;
use crate::rng::Rng;
use crate::scenario::Build;
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

/// Frame interval of 30 frames/s, the RMCAT evaluations' video (RFC 8867 §4.3 uses 30 fps sources).
pub const VIDEO_FRAME_INTERVAL: Time = Time(33_333_333);

/// Keys that belong to the constant-rate source and mean nothing with a controller.
const CBR_ONLY: &[&str] = &["rate", "mode", "packet_size", "size"];

/// An adaptive `video` or `audio` entry (`cc` given): `cc`, `min_rate`, `max_rate`, `start_rate`,
/// `frame_interval` (video) or `interval` (audio), `mtu`, `key_interval` (video), `feedback`
/// ("rfc8888" | "twcc"), `feedback_interval`, `feedback_via` (a channel the feedback must cross),
/// `pause` (windows without frames).
pub fn build(p: &mut Params, b: &mut Build, kind: &str) -> Result<(), ConfigError> {
    let video = kind == "video";
    let (name, from, to, start, stop, ecn) = crate::media::common(p, b, kind, &format!("{kind}{}", b.count(kind)))?;
    let names = controller_names();
    let cc = p.str("cc")?;
    let Some(factory) = CONTROLLERS.iter().find(|(n, _)| *n == cc).map(|(_, f)| *f) else {
        return Err(p.err("cc", format!("unknown media congestion controller {cc:?} (known: {})", names.join(", "))));
    };
    for k in CBR_ONLY {
        if p.has(k) {
            return Err(p.err(k, format!("not with cc = {cc:?}: the controller sets the rate (give min_rate, max_rate, start_rate)")));
        }
    }
    // RFC 8867 §4.3's media source (and the ns-3 RMCAT model's R_min / R_max): 150 kbit/s – 1.5 Mbit/s
    let (dmin, dmax) = if video { (150_000, 1_500_000) } else { (6_000, 64_000) };
    let min = p.rate_opt("min_rate")?.map_or(dmin, |r| r.0);
    let max = p.rate_opt("max_rate")?.map_or(dmax, |r| r.0);
    if min > max {
        let key = if p.has("min_rate") { "min_rate" } else { "max_rate" };
        return Err(p.err(key, format!("min_rate ({min} bit/s) must not exceed max_rate ({max} bit/s)")));
    }
    let start_rate = p.rate_opt("start_rate")?.map_or(min, |r| r.0);
    if start_rate < min || start_rate > max {
        return Err(p.err("start_rate", format!("must be between min_rate ({min} bit/s) and max_rate ({max} bit/s), got {start_rate} bit/s")));
    }
    let interval = if video { p.duration_or("frame_interval", VIDEO_FRAME_INTERVAL)? } else { p.duration_or("interval", Time::from_ms(20))? };
    if interval == Time::ZERO {
        return Err(p.err(if video { "frame_interval" } else { "interval" }, "must be > 0"));
    }
    let mtu = p.bytes_opt("mtu")?.unwrap_or(1200);
    if mtu <= RTP_OVERHEAD as u64 || mtu > 65_535 {
        return Err(p.err("mtu", format!("must be more than {RTP_OVERHEAD} B (IP+UDP+RTP headers) and at most 65535 B, got {mtu} B")));
    }
    let key_interval = if video { p.duration_opt("key_interval")? } else { None };
    if key_interval == Some(Time::ZERO) {
        return Err(p.err("key_interval", "must be > 0 (leave it out for key frames only on big rate changes)"));
    }
    let format = Format::parse(&p.choice("feedback", Format::NAMES, Some("rfc8888"))?).expect("checked");
    // libwebrtc's transport-cc default send interval, and NADA's DELTA (RFC 8698 §4.1)
    let fb_interval = p.duration_or("feedback_interval", Time::from_ms(100))?;
    if fb_interval == Time::ZERO {
        return Err(p.err("feedback_interval", "must be > 0"));
    }
    if let Some(via) = p.str_opt("feedback_via")? {
        let Some(ch) = b.sim.channel_id(&via) else {
            let names: Vec<&str> = b.sim.channels().iter().map(|c| c.name.as_str()).collect();
            return Err(p.err("feedback_via", format!("no channel named {via:?} (channels: {})", names.join(", "))));
        };
        if !b.sim.path(to, from).contains(&ch) {
            let path: Vec<&str> = b.sim.path(to, from).iter().map(|&c| b.sim.channel(c).name.as_str()).collect();
            return Err(p.err("feedback_via", format!("the feedback from {:?} to {:?} does not cross {via:?} (it takes {})", b.sim.node_name(to), b.sim.node_name(from), path.join(", "))));
        }
    }
    let pauses = parse_pauses(p, start, stop)?;
    let limits = Limits { min_bps: min as f64, max_bps: max as f64, start_bps: start_rate as f64 };
    let flow = b.add_flow(&name, kind);
    let fb_flow = b.add_flow(&format!("{name}.feedback"), "feedback");
    let src_id = b.sim.next_agent_id();
    let sink_id = src_id + 1;
    let mailbox: Mailbox = Default::default();
    let rng = Rng::stream(b.seed, &format!("encoder:{name}"));
    let src = RtcSender {
        name: name.clone(),
        flow,
        dst: to,
        dst_agent: sink_id,
        start,
        stop,
        interval,
        mtu: mtu as u32,
        ecn,
        ssrc: 0x4a4c_0000 | flow,
        controller: factory(&limits),
        encoder: Encoder::new(video, limits.start_bps, key_interval, rng),
        frame: 0,
        slot: 0,
        pauses,
        next_seq: 0,
        queue: VecDeque::new(),
        queue_bytes: 0,
        sent: VecDeque::new(),
        sent_base: 0,
        in_flight: 0,
        next_pace: Time::ZERO,
        mailbox: mailbox.clone(),
        discarded: 0,
    };
    let got = b.sim.add_agent(from, Box::new(src));
    debug_assert_eq!(got, src_id);
    let presence = b.media_presence(to);
    let rx = RtcReceiver {
        name: format!("{name}.sink"),
        flow: fb_flow,
        sender_node: from,
        sender_agent: src_id,
        format,
        interval: fb_interval,
        until: stop + Time::from_secs(1),
        armed: false,
        collector: Collector::default(),
        mailbox,
        presence,
        reports: 0,
    };
    let got = b.sim.add_agent(to, Box::new(rx));
    debug_assert_eq!(got, sink_id);
    Ok(())
}

/// `pause = [["40s", "60s"], …]`: windows [from, to) without frames, in order, not overlapping,
/// within [start, stop).
fn parse_pauses(p: &mut Params, start: Time, stop: Time) -> Result<Vec<(Time, Time)>, ConfigError> {
    let Some(v) = p.value_opt("pause") else { return Ok(vec![]) };
    let key = p.key_path("pause");
    let serde_json::Value::Array(items) = v else {
        return Err(ConfigError::new(key, "expected a list of [from, to] pairs, e.g. [[\"40s\", \"60s\"]]"));
    };
    let mut out: Vec<(Time, Time)> = vec![];
    for (i, it) in items.iter().enumerate() {
        let at = format!("{key}[{i}]");
        let pair = match it.as_array().map(|a| a.as_slice()) {
            Some([serde_json::Value::String(a), serde_json::Value::String(b)]) => (a.clone(), b.clone()),
            _ => return Err(ConfigError::new(at, format!("expected [from, to] as two durations, got {it}"))),
        };
        let d = |s: &str| crate::config::duration_ns(s).map_err(|m| ConfigError::new(at.clone(), m));
        let (a, b) = (d(&pair.0)?, d(&pair.1)?);
        if a < 0 || b <= a {
            return Err(ConfigError::new(at, format!("needs 0 <= from < to, got {:?} to {:?}", pair.0, pair.1)));
        }
        let (a, b) = (Time(a as u64), Time(b as u64));
        if a < start || b > stop {
            return Err(ConfigError::new(at, format!("must lie within start ({start}) and stop ({stop})")));
        }
        if out.last().is_some_and(|&(_, e)| a < e) {
            return Err(ConfigError::new(at, "pauses must be in order and must not overlap"));
        }
        out.push((a, b));
    }
    Ok(out)
}

/// A media controller named on a TCP entry is a mistake worth its own message (the TCP builder
/// would only list its own controllers): `cc = "gcc"` on `bulk` says where gcc belongs.
fn reject_media_cc(p: &Params, kind: &str) -> Result<(), ConfigError> {
    if let Ok(Some(cc)) = p.duplicate().str_opt("cc") {
        if CONTROLLERS.iter().any(|(n, _)| *n == cc) {
            return Err(p.err("cc", format!("{cc:?} is a media congestion controller: it needs an RTP source (kind = \"video\" or \"audio\"), not {kind:?}; a {kind} entry takes a TCP one")));
        }
    }
    Ok(())
}

/// `bulk`, `web`, `ftp` with the check above (registered in [`crate::scenario::TRAFFIC`]).
pub fn build_bulk(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    reject_media_cc(p, "bulk")?;
    crate::tcp::workload::build_bulk(p, b)
}
pub fn build_web(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    reject_media_cc(p, "web")?;
    crate::tcp::workload::build_web(p, b)
}
pub fn build_ftp(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    reject_media_cc(p, "ftp")?;
    crate::tcp::workload::build_ftp(p, b)
}
