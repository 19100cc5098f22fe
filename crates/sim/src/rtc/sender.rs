//! The adaptive sender's logic without a clock of its own: encoder → packetiser → RTP queue →
//! pacer and window gate, and the bookkeeping that turns a receiver's report into what the
//! controller sees. Every method takes `now`; the caller owns the clock and the network — the
//! simulator's agent ([`super::agent::RtcSender`]) on simulated time, the testbed's real-time
//! sender (crates/testbed, `rtc`) on CLOCK_REALTIME over a UDP socket. Both run this code, so a
//! controller behaves the same on both backends for the same reports.
use std::collections::VecDeque;

use super::encoder::{packetize, Encoder};
use super::feedback::Report;
use super::{Controller, FeedbackInfo, PacketResult};
use crate::media::RTP_OVERHEAD;
use crate::time::Time;

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

/// One frame as the `rtc_frames` table records it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameRow {
    pub frame: u64,
    pub capture: Time,
    pub bytes: u64,
    pub packets: u32,
    pub first_seq: u64,
    pub key: bool,
}

/// The sender after one report, as the `rtc_series` table records it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesRow {
    pub t: Time,
    pub target_bps: f64,
    pub encoder_bps: f64,
    pub rtt: Option<Time>,
    pub in_flight: u64,
    pub queue_bytes: u64,
    pub state: f64,
}

/// What the pacer allows now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Send this packet now (it is already counted as sent).
    Send { seq: u64, size: u32 },
    /// The next packet may leave at this instant.
    At(Time),
    /// Nothing to send until a frame or a report comes (queue empty or window full).
    Idle,
}

pub struct SenderCore {
    mtu: u32,
    pub controller: Box<dyn Controller>,
    pub encoder: Encoder,
    frame: u64,
    next_seq: u64,
    queue: VecDeque<Queued>,
    queue_bytes: u64,
    /// Sent packets from `sent_base` on, until reported.
    sent: VecDeque<Sent>,
    sent_base: u64,
    in_flight: u64,
    next_pace: Time,
    /// Packets discarded from the RTP queue.
    pub discarded: u64,
}

impl SenderCore {
    pub fn new(controller: Box<dyn Controller>, encoder: Encoder, mtu: u32) -> SenderCore {
        SenderCore {
            mtu,
            controller,
            encoder,
            frame: 0,
            next_seq: 0,
            queue: VecDeque::new(),
            queue_bytes: 0,
            sent: VecDeque::new(),
            sent_base: 0,
            in_flight: 0,
            next_pace: Time::ZERO,
            discarded: 0,
        }
    }

    /// Bytes sent and not yet reported.
    pub fn in_flight(&self) -> u64 { self.in_flight }

    /// Payload bytes waiting in the RTP queue.
    pub fn queue_bytes(&self) -> u64 { self.queue_bytes }

    /// One frame at the controller's target (`interval` after the previous one), cut into packets
    /// and queued.
    pub fn encode(&mut self, interval: Time, now: Time) -> FrameRow {
        self.encoder.set_target(self.controller.target_rate(), now);
        let f = self.encoder.next_frame(interval, now);
        let sizes = packetize(f.bytes, self.mtu, RTP_OVERHEAD);
        let row = FrameRow { frame: self.frame, capture: now, bytes: f.bytes, packets: sizes.len() as u32, first_seq: self.next_seq, key: f.key };
        for size in sizes {
            self.queue.push_back(Queued { seq: self.next_seq, size, enq: now });
            self.queue_bytes += (size - RTP_OVERHEAD) as u64;
            self.next_seq += 1;
        }
        self.frame += 1;
        row
    }

    /// Discards the RTP queue when its oldest packet is older than the controller allows; the
    /// discarded sequence numbers count as settled (never sent: no row in media_packets, so the
    /// receiver's report of them as lost is ignored) and the next frame is a key frame.
    pub fn discard_old(&mut self, now: Time) {
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

    /// The pacer's and the window's verdict at `now`; a packet it lets go is taken off the queue
    /// and counted as sent at `now` (the caller sends it at once).
    pub fn poll(&mut self, now: Time) -> Next {
        let Some(q) = self.queue.front() else { return Next::Idle };
        if now < self.next_pace {
            return Next::At(self.next_pace);
        }
        if let Some(w) = self.controller.window() {
            // RFC 8298 §4.1.2.3: wait for feedback to open the window (one packet always may go
            // when nothing is in flight, or the flow could stall)
            if self.in_flight > 0 && self.in_flight + q.size as u64 > w {
                return Next::Idle;
            }
        }
        let q = self.queue.pop_front().expect("front");
        self.queue_bytes -= (q.size - RTP_OVERHEAD) as u64;
        debug_assert_eq!(q.seq, self.sent_base + self.sent.len() as u64);
        self.sent.push_back(Sent { send: now, size: q.size, reported: false });
        self.in_flight += q.size as u64;
        self.controller.on_sent(q.seq, q.size, now);
        let rate = self.controller.pacing_rate().max(1.0);
        self.next_pace = self.next_pace.max(now) + Time::from_secs_f64(q.size as f64 * 8.0 / rate);
        Next::Send { seq: q.seq, size: q.size }
    }

    /// A report arrived at `now`: the controller learns what it says (each packet once), then the
    /// encoder takes the new target. Returns the sender's state for `rtc_series`.
    pub fn on_report(&mut self, report: &Report, now: Time) -> SeriesRow {
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
        SeriesRow {
            t: now,
            target_bps: target,
            encoder_bps: self.encoder.rate(),
            rtt,
            in_flight: self.in_flight,
            queue_bytes: self.queue_bytes,
            state: self.controller.state(),
        }
    }
}
