//! Media sources: RTP over UDP at a constant bit rate (adaptive sources, `cc = …`, are in
//! [`crate::rtc`]). Audio sends one packet of `size` IP bytes
//! every `interval`; video sends `per_frame` packets every frame, either back to back at the frame
//! instant (`bursty`) or evenly spread over the frame interval (`paced`). Send instants are computed
//! from the start time (start + k·interval), so they never drift.
use std::any::Any;

use crate::config::{ConfigError, Params};
use crate::engine::{Agent, Ctx};
use crate::packet::{AgentId, Body, Ecn, NodeId, Packet};
use crate::scenario::Build;
use crate::time::Time;

/// IPv4 (20) + UDP (8) + RTP (12, RFC 3550 §5.1) header bytes.
pub const RTP_OVERHEAD: u32 = 40;
pub const RTP_PORT: u16 = 5004;

#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    Audio { size: u32, interval: Time },
    Video { size: u32, per_frame: u32, frame_interval: Time, paced: bool },
}

pub struct CbrSource {
    name: String,
    flow: u32,
    dst: NodeId,
    dst_agent: AgentId,
    pattern: Pattern,
    start: Time,
    stop: Time,
    ecn: bool,
    /// Index of the next send slot (packet for audio and paced video, frame for bursty video).
    slot: u64,
    seq: u64,
    ssrc: u32,
}

impl CbrSource {
    fn slot_time(&self, k: u64) -> Time {
        match self.pattern {
            Pattern::Audio { interval, .. } => self.start + interval.mul(k),
            Pattern::Video { per_frame, frame_interval, paced: true, .. } => {
                let f = k / per_frame as u64;
                let j = k % per_frame as u64;
                self.start + frame_interval.mul(f) + Time(frame_interval.0 * j / per_frame as u64)
            }
            Pattern::Video { frame_interval, paced: false, .. } => self.start + frame_interval.mul(k),
        }
    }

    fn emit(&mut self, ctx: &mut Ctx, size: u32) {
        let now = ctx.now();
        let row = ctx.tables().media.push(self.flow, self.seq, now.ns() as i64, size);
        ctx.send(Packet {
            flow: self.flow,
            src: 0,
            dst: self.dst,
            dst_agent: self.dst_agent,
            size,
            ecn: if self.ecn { Ecn::Ect0 } else { Ecn::NotEct },
            sent: now,
            body: Body::Media { seq: self.seq, row, ssrc: self.ssrc, src_port: RTP_PORT, dst_port: RTP_PORT },
        });
        self.seq += 1;
    }

    fn schedule_next(&mut self, ctx: &mut Ctx) {
        let t = self.slot_time(self.slot);
        if t < self.stop {
            ctx.set_timer(0, t);
        }
    }
}

impl Agent for CbrSource {
    fn name(&self) -> &str { &self.name }
    fn start(&mut self, ctx: &mut Ctx) { self.schedule_next(ctx); }
    fn on_packet(&mut self, _pkt: Packet, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, _key: u32, ctx: &mut Ctx) {
        match self.pattern {
            Pattern::Audio { size, .. } => self.emit(ctx, size),
            Pattern::Video { size, paced: true, .. } => self.emit(ctx, size),
            Pattern::Video { size, per_frame, paced: false, .. } => {
                for _ in 0..per_frame {
                    self.emit(ctx, size);
                }
            }
        }
        self.slot += 1;
        self.schedule_next(ctx);
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

/// Receives media packets; the engine records arrival times in the media table.
pub struct MediaSink {
    name: String,
    pub received: u64,
    /// The host's media-presence cell (for RWND moderation with `only_with_media`).
    presence: Option<crate::tcp::moderation::MediaPresence>,
}

impl Agent for MediaSink {
    fn name(&self) -> &str { &self.name }
    fn on_packet(&mut self, _pkt: Packet, ctx: &mut Ctx) {
        self.received += 1;
        if let Some(p) = &self.presence {
            p.set(Some(ctx.now()));
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

pub(crate) fn common(p: &mut Params, b: &mut Build, kind: &str, default_name: &str) -> Result<(String, NodeId, NodeId, Time, Time, bool), ConfigError> {
    let name = p.str_opt("name")?.unwrap_or_else(|| default_name.to_string());
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
    let _ = kind;
    Ok((name, from, to, start, stop, ecn))
}

// One call per media pair, from the scenario's keys: a struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn add_pair(b: &mut Build, name: String, kind: &str, from: NodeId, to: NodeId, pattern: Pattern, start: Time, stop: Time, ecn: bool) {
    let flow = b.add_flow(&name, kind);
    let sink_id = b.sim.next_agent_id() + 1;
    let src = CbrSource { name: name.clone(), flow, dst: to, dst_agent: sink_id, pattern, start, stop, ecn, slot: 0, seq: 0, ssrc: 0x4a4c_0000 | flow };
    b.sim.add_agent(from, Box::new(src));
    let presence = b.media_presence(to);
    let got = b.sim.add_agent(to, Box::new(MediaSink { name: format!("{name}.sink"), received: 0, presence }));
    debug_assert_eq!(got, sink_id);
}

/// `kind = "audio"`: `size` (IP bytes, default "80B"), `interval` (default "20ms").
/// With `cc`, an adaptive source instead ([`crate::rtc::agent::build`]).
pub fn build_audio(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    if p.has("cc") {
        return crate::rtc::agent::build(p, b, "audio");
    }
    let (name, from, to, start, stop, ecn) = common(p, b, "audio", &format!("audio{}", b.count("audio")))?;
    let size = p.bytes_opt("size")?.unwrap_or(80);
    if size < RTP_OVERHEAD as u64 || size > 65_535 {
        return Err(p.err("size", format!("must be between {RTP_OVERHEAD} B (IP+UDP+RTP headers) and 65535 B, got {size} B")));
    }
    let interval = p.duration_or("interval", Time::from_ms(20))?;
    if interval == Time::ZERO {
        return Err(p.err("interval", "must be > 0"));
    }
    add_pair(b, name, "audio", from, to, Pattern::Audio { size: size as u32, interval }, start, stop, ecn);
    Ok(())
}

/// `kind = "video"`: `rate` (bit rate B), `frame_interval` ("40ms"), `packet_size` ("1000B"),
/// `mode` ("bursty" | "paced"). Packets per frame = round(B · frame_interval / (8 · packet_size)),
/// at least one (Chodorek: 25 frames/s, 1000 B packets, 5·B packets per frame with B in Mbit/s).
/// With `cc`, an adaptive source instead ([`crate::rtc::agent::build`]).
pub fn build_video(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    if p.has("cc") {
        return crate::rtc::agent::build(p, b, "video");
    }
    let (name, from, to, start, stop, ecn) = common(p, b, "video", &format!("video{}", b.count("video")))?;
    let rate = p.rate("rate")?;
    let fi = p.duration_or("frame_interval", Time::from_ms(40))?;
    if fi == Time::ZERO {
        return Err(p.err("frame_interval", "must be > 0"));
    }
    let size = p.bytes_opt("packet_size")?.unwrap_or(1000);
    if size < RTP_OVERHEAD as u64 || size > 65_535 {
        return Err(p.err("packet_size", format!("must be between {RTP_OVERHEAD} B and 65535 B, got {size} B")));
    }
    let mode = p.choice("mode", &["bursty", "paced"], Some("bursty"))?;
    let per_frame = ((rate.0 as f64 * fi.secs_f64()) / (8.0 * size as f64)).round().max(1.0) as u32;
    add_pair(b, name, "video", from, to, Pattern::Video { size: size as u32, per_frame, frame_interval: fi, paced: mode == "paced" }, start, stop, ecn);
    Ok(())
}
