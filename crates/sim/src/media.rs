//! Media sources: RTP over UDP at a constant bit rate (adaptive sources, `cc = …`, are in
//! [`crate::rtc`]; the `audio` and `video` traffic kinds that build both are in [`crate::traffic`]).
//! Audio sends one packet of `size` IP bytes every `interval`; video sends `per_frame` packets every frame, either back to back at the frame
//! instant (`bursty`) or evenly spread over the frame interval (`paced`). Send instants are computed
//! from the start time (start + k·interval), so they never drift.
use std::any::Any;

use crate::engine::{Agent, Ctx};
use crate::packet::{AgentId, Body, Ecn, NodeId, Packet};
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
    /// A source of `flow` sending to agent `dst_agent` on node `dst` from `start` until `stop`
    /// (exclusive), its packets ECT(0) when `ecn`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(name: String, flow: u32, dst: NodeId, dst_agent: AgentId, pattern: Pattern, start: Time, stop: Time, ecn: bool) -> CbrSource {
        CbrSource { name, flow, dst, dst_agent, pattern, start, stop, ecn, slot: 0, seq: 0, ssrc: 0x4a4c_0000 | flow }
    }

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
    fn start(&mut self, ctx: &mut Ctx) {
        // The media table's rows this source will write, reserved at once so that the columns
        // grow without copies; capped at 2^16 rows (2.4 MB), as `stop` may lie far beyond the run
        // and the columns keep their capacity when handed over. Capacity only, no row changes.
        let (interval, per_slot) = match self.pattern {
            Pattern::Audio { interval, .. } => (interval, 1),
            Pattern::Video { per_frame, frame_interval, paced: true, .. } => (Time(frame_interval.0 / per_frame.max(1) as u64), 1),
            Pattern::Video { per_frame, frame_interval, paced: false, .. } => (frame_interval, per_frame as u64),
        };
        let slots = self.stop.0.saturating_sub(self.start.0) / interval.0.max(1) + 1;
        ctx.tables().media.reserve(slots.saturating_mul(per_slot).min(1 << 16) as usize);
        self.schedule_next(ctx);
    }
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

impl MediaSink {
    /// A sink that marks the host's media presence (RWND moderation), when given.
    pub fn new(name: String, presence: Option<crate::tcp::moderation::MediaPresence>) -> MediaSink { MediaSink { name, received: 0, presence } }
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
