//! The receiving end of a connection as an explicit state machine (RFC 9293 names). It answers the
//! SYN, acknowledges data with delayed ACKs (RFC 5681 §4.2: at least every second full-sized
//! segment, within the delayed-ACK timer; immediately for out-of-order data and for data that fills
//! a gap; optionally every segment for a while after the first data and after out-of-order data,
//! as Linux's quick-ACK mode does), reports SACK blocks (RFC 2018 §4: the first block holds the latest segment, then the
//! most recently reported others), advertises a window from its receive buffer with window scaling
//! (RFC 7323) under an optional host [`WindowPolicy`](super::WindowPolicy) cap, echoes ECN marks
//! (RFC 3168 §6.1.3, or per segment as DCTCP: `ecn_feedback.rs`) and closes after the sender's FIN by sending its own.
//!
//! The application reads in-order data at once, so the buffer holds only out-of-order data —
//! except with Linux's buffer model ([`rcvbuf`](super::rcvbuf), `TcpConfig::linux_rcv` or a host
//! policy that sets SO_RCVBUF), where the segment that triggers an ACK is still queued when the ACK
//! is built (Linux ACKs from softirq before the reader runs) and the application reads it right
//! after.
use std::collections::BTreeMap;

use super::rcvbuf::{LinuxRcvBuf, LinuxRcvConfig};
use super::ecn_feedback::{EcnFeedback, Mode as EcnMode};
use super::{SharedWindowPolicy, TcpConfig, TimerCmd, HEADER_BYTES, MAX_WSCALE};
use crate::packet::{tcp_flags as F, TcpHeader, MAX_SACK_BLOCKS};
use crate::time::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum State {
    Listen,
    SynReceived,
    Established,
    /// Our FIN (sent at once after the peer's) awaits its ACK.
    LastAck,
    Closed,
}

/// What one call produced: segments (headers; all are pure ACKs, 40 bytes, 52 with the timestamps
/// option) and the delayed-ACK timer.
#[derive(Default, Debug)]
pub struct RecvOutput {
    pub segs: Vec<TcpHeader>,
    pub delack: TimerCmd,
}

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    pub bytes_in_order: u64,
    pub segments: u64,
    pub acks_sent: u64,
    pub ce_marked: u64,
    pub dup_segments: u64,
}

pub struct Receiver {
    cfg: TcpConfig,
    flow: u32,
    policy: Option<SharedWindowPolicy>,
    pub state: State,
    pub rcv_nxt: u64,
    /// Our sequence number (SYN = 0, FIN = 1).
    snd_nxt: u64,
    /// Out-of-order data: start → end.
    ooo: BTreeMap<u64, u64>,
    ooo_bytes: u64,
    /// SACK blocks, most recent first (RFC 2018 §4).
    recent: Vec<(u64, u64)>,
    unacked_segs: u32,
    /// A PSH segment arrived since the last ACK (Linux's ICSK_ACK_PUSHED).
    pushed: bool,
    delack_armed: bool,
    /// Segments still to be ACKed at once (Linux's quick-ACK mode, `icsk_ack.quick`).
    quick: u32,
    /// No data received yet (Linux enters quick-ACK mode with the first data segment).
    first_data: bool,
    shift: u8,
    ws_ok: bool,
    /// Right edge of the last advertised window (never moved left).
    right_edge: u64,
    ecn_ok: bool,
    /// The ECE echo (RFC 3168 latch, or DCTCP's per-segment echo): `ecn_feedback.rs`.
    ecn: EcnFeedback,
    /// Linux's receive buffer (None: a fixed window of `cfg.rcvbuf`).
    linux: Option<LinuxRcvBuf>,
    /// In-order segments delivered by the segment being processed, not yet read by the application.
    unread_segs: u64,
    /// RFC 7323 timestamps negotiated; TS.Recent (echoed in TSecr); Last.ACK.sent (§4.3).
    ts_ok: bool,
    ts_recent: u32,
    last_ack_sent: u64,
    pub stats: ReceiverStats,
}

/// RFC 7323 §2.3: the smallest shift whose scaled 16-bit window covers `buf`.
pub fn wscale_for(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < MAX_WSCALE && (65_535u64 << s) < buf {
        s += 1;
    }
    s
}

impl Receiver {
    pub fn new(cfg: TcpConfig, flow: u32, policy: Option<SharedWindowPolicy>) -> Receiver {
        Receiver {
            ecn: EcnFeedback::new(EcnMode::for_config(&cfg)),
            cfg,
            flow,
            policy,
            state: State::Listen,
            rcv_nxt: 0,
            snd_nxt: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            recent: Vec::new(),
            unacked_segs: 0,
            pushed: false,
            delack_armed: false,
            quick: 0,
            first_data: true,
            shift: 0,
            ws_ok: false,
            right_edge: 0,
            ecn_ok: false,
            linux: None,
            unread_segs: 0,
            ts_ok: false,
            ts_recent: 0,
            last_ack_sent: 0,
            stats: ReceiverStats::default(),
        }
    }

    pub fn window_shift(&self) -> u8 { self.shift }
    /// Linux's receive-buffer state when that model is in use.
    pub fn linux(&self) -> Option<&LinuxRcvBuf> { self.linux.as_ref() }
    pub fn ooo_bytes(&self) -> u64 { self.ooo_bytes }

    /// One arriving segment; `ce` is the IP header's CE codepoint.
    pub fn process(&mut self, hdr: &TcpHeader, ce: bool, now: Time, out: &mut RecvOutput) {
        let syn = hdr.flags & F::SYN != 0;
        let ack = hdr.flags & F::ACK != 0;
        match self.state {
            // RFC 9293 §3.10.7.2 LISTEN: a SYN → send SYN-ACK, SYN-RECEIVED.
            State::Listen if syn => {
                self.rcv_nxt = hdr.seq.saturating_add(1);
                // RFC 7323 §2.2: scale only when both SYNs carry the option.
                self.ws_ok = self.cfg.wscale && hdr.wscale.is_some();
                // RFC 7323 §3.2: answer the timestamps option only if the SYN carries it.
                self.ts_ok = self.cfg.timestamps && hdr.ts.is_some();
                self.ts_recent = hdr.ts.map_or(0, |(v, _)| v);
                if let Some(p) = &self.policy {
                    p.borrow_mut().on_open(self.flow, now);
                }
                // Linux's buffer: from the configuration, or SO_RCVBUF from the host's policy.
                let so = self.policy.as_ref().and_then(|p| p.borrow_mut().so_rcvbuf(self.flow, now));
                let lcfg = match (so, &self.cfg.linux_rcv) {
                    (Some(v), c) => Some(LinuxRcvConfig { so_rcvbuf: Some(v), ..c.clone().unwrap_or_default() }),
                    (None, c) => c.clone(),
                };
                // The receiving application is the client that connected (every workload here, and
                // the testbed's): its SYN's window is rounded to the whole MSS, as
                // tcp_connect_init does before any TS.Recent exists; its segments carry
                // cfg.mss − 12 bytes with timestamps.
                self.linux = lcfg.map(|c| {
                    let init = c.init_rcv_wnd;
                    LinuxRcvBuf::open(c, self.cfg.mss as u64, 0, self.ws_ok, init)
                });
                self.shift = match (&self.linux, self.ws_ok) {
                    (_, false) => 0,
                    (Some(l), true) => self.cfg.wscale_shift.unwrap_or(l.wscale).min(MAX_WSCALE),
                    (None, true) => self.cfg.wscale_shift.unwrap_or_else(|| wscale_for(self.cfg.rcvbuf)).min(MAX_WSCALE),
                };
                if let Some(l) = &mut self.linux {
                    l.wscale = self.shift;
                }
                // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR.
                self.ecn_ok = self.cfg.ecn && hdr.flags & F::ECE != 0 && hdr.flags & F::CWR != 0;
                self.state = State::SynReceived;
                self.send_syn_ack(now, out);
            }
            State::Listen => {}
            // RFC 9293 §3.10.7.4: a retransmitted SYN means our SYN-ACK was lost: resend it.
            State::SynReceived if syn => self.send_syn_ack(now, out),
            // RFC 9293 §3.10.7.4 SYN-RECEIVED: an ACK of our SYN → ESTABLISHED, then the segment's data.
            State::SynReceived if ack && hdr.ack == self.snd_nxt => {
                self.state = State::Established;
                let copied = self.stats.bytes_in_order;
                if let Some(l) = &mut self.linux {
                    l.established(now, copied);
                }
                if let Some(p) = &self.policy {
                    p.borrow_mut().on_established(self.flow, now);
                }
                self.on_data(hdr, ce, now, out);
            }
            State::SynReceived => {}
            // A SYN after the handshake is a duplicate (its SYN-ACK was lost again): re-ACK.
            State::Established if syn => self.send_ack(now, out),
            State::Established => self.on_data(hdr, ce, now, out),
            State::LastAck => {
                if ack && hdr.ack >= self.snd_nxt {
                    // RFC 9293 §3.10.7.4 LAST-ACK: our FIN is acknowledged → CLOSED.
                    self.state = State::Closed;
                    self.cancel_delack(out);
                } else if hdr.flags & F::FIN != 0 || hdr.len > 0 {
                    // The sender did not get our FIN-ACK: repeat it.
                    self.snd_nxt -= 1;
                    self.send_fin(now, out);
                }
            }
            State::Closed => {}
        }
    }

    fn send_syn_ack(&mut self, now: Time, out: &mut RecvOutput) {
        let mut flags = F::SYN | F::ACK;
        if self.ecn_ok {
            // RFC 3168 §6.1.1: an ECN-setup SYN-ACK has ECE, not CWR.
            flags |= F::ECE;
        }
        // RFC 7323 §2.2: the window in a SYN is not scaled (at most 65535).
        let wnd = match &self.linux {
            // tcp_select_initial_window's offer, under the host policy's cap.
            Some(l) => {
                let w = l.rcv_wnd;
                let free = self.free();
                match &self.policy {
                    Some(p) => w.min(p.borrow_mut().cap(self.flow, now, free).max(self.cfg.mss as u64)),
                    None => w,
                }
            }
            None => {
                let free = self.free();
                let w = self.window(now);
                // A policy cap, like any SYN window of Linux (tcp_select_initial_window), in whole
                // segments as the sender will send them (payload).
                let mss = self.cfg.payload_mss() as u64;
                if w < free && w > mss { w.min(65_535) / mss * mss } else { w }
            }
        }
        .min(65_535);
        self.right_edge = self.rcv_nxt + wnd;
        self.report(wnd, now);
        let wscale = if self.ws_ok { Some(self.shift) } else { None };
        let ts = self.ts_option(now);
        self.last_ack_sent = self.rcv_nxt;
        out.segs.push(TcpHeader { seq: 0, ack: self.rcv_nxt, flags, wnd, wscale, ts, ..Default::default() });
        self.snd_nxt = 1;
        self.stats.acks_sent += 1;
    }

    /// Truesize charged to a Linux buffer now: the segments out of order and those not yet read.
    fn held(&self) -> u64 {
        match &self.linux {
            Some(l) => (self.ooo_bytes.div_ceil(l.rcv_mss.max(1)) + self.unread_segs) * l.cfg.truesize,
            None => 0,
        }
    }

    /// What the buffer allows: Linux's `__tcp_select_window`, or the fixed buffer less the data
    /// held out of order.
    fn free(&mut self) -> u64 {
        let held = self.held();
        match &mut self.linux {
            Some(l) => l.select_window(held),
            None => self.cfg.rcvbuf.saturating_sub(self.ooo_bytes),
        }
    }

    /// The window the buffer allows, capped by the host policy.
    fn window(&mut self, now: Time) -> u64 {
        let free = self.free();
        match &self.policy {
            Some(p) => free.min(p.borrow_mut().cap(self.flow, now, free)),
            None => free,
        }
    }

    /// Advertised window: never moves the right edge left (RFC 9293 §3.8.6.2.2), expressed in
    /// units of 2^shift (RFC 7323 §2.3), at most 65535 units. A policy cap below what the buffer
    /// allows is rounded as Linux's `__tcp_select_window` rounds a window: with scaling, aligned up
    /// to the scale unit ("so that it won't get scaled away"; never beyond the buffer); without,
    /// down to whole MSS (never below one: the policy's floor).
    fn advertised(&mut self, now: Time) -> u64 {
        let free = self.free();
        let mut w = match &self.policy {
            Some(p) => free.min(p.borrow_mut().cap(self.flow, now, free)),
            None => free,
        };
        let held = self.right_edge.saturating_sub(self.rcv_nxt);
        let s = self.shift as u32;
        let max = 65_535u64 << s;
        if w < held {
            // tcp_select_window: "never shrink the offered window", ALIGN(cur_win, 1 << wscale).
            w = held.div_ceil(1 << s) << s;
        } else if w < free {
            w = if s > 0 {
                (w.div_ceil(1 << s) << s).min((free >> s) << s).max((w >> s) << s)
            } else {
                // whole segments as they are sent (payload; Linux's rcv_mss)
                let mss = self.cfg.payload_mss() as u64;
                (w / mss * mss).max(mss.min(w))
            };
        } else {
            w = (w >> s) << s;
        }
        w = w.min(max);
        self.right_edge = self.right_edge.max(self.rcv_nxt + w);
        if let Some(l) = &mut self.linux {
            l.offered(w);
        }
        self.report(w, now);
        w
    }

    /// Tells the host policy what was just offered.
    fn report(&self, wnd: u64, now: Time) {
        if let Some(p) = &self.policy {
            p.borrow_mut().on_advertise(self.flow, wnd, now);
        }
    }

    /// Right edge of the window last advertised (RCV.NXT + window); never decreases.
    pub fn right_edge(&self) -> u64 { self.right_edge }

    fn ack_header(&mut self, now: Time) -> TcpHeader {
        let mut flags = F::ACK;
        if self.ecn.ece() {
            // RFC 3168 §6.1.3 (until a CWR arrives) or RFC 8257 §3.2 (CE of the data acknowledged).
            flags |= F::ECE;
        }
        let wnd = self.advertised(now);
        let ts = self.ts_option(now);
        self.last_ack_sent = self.rcv_nxt;
        let mut hdr = TcpHeader { seq: self.snd_nxt, ack: self.rcv_nxt, flags, wnd, ts, ..Default::default() };
        if self.cfg.recovery == super::Recovery::Sack {
            // RFC 2018 §3: 40 option bytes hold 4 blocks, 3 beside the timestamps option.
            let n = self.recent.len().min(if self.ts_ok { MAX_SACK_BLOCKS - 1 } else { MAX_SACK_BLOCKS });
            hdr.sack[..n].copy_from_slice(&self.recent[..n]);
            hdr.nsack = n as u8;
        }
        hdr
    }

    fn send_ack(&mut self, now: Time, out: &mut RecvOutput) {
        let hdr = self.ack_header(now);
        out.segs.push(hdr);
        self.stats.acks_sent += 1;
        self.unacked_segs = 0;
        self.pushed = false;
        self.cancel_delack(out);
    }

    fn cancel_delack(&mut self, out: &mut RecvOutput) {
        if self.delack_armed {
            self.delack_armed = false;
            out.delack = TimerCmd::Cancel;
        }
    }

    fn send_fin(&mut self, now: Time, out: &mut RecvOutput) {
        let mut hdr = self.ack_header(now);
        hdr.flags |= F::FIN;
        out.segs.push(hdr);
        self.snd_nxt += 1;
        self.stats.acks_sent += 1;
        self.unacked_segs = 0;
        self.cancel_delack(out);
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack(&mut self, now: Time, out: &mut RecvOutput) {
        self.delack_armed = false;
        if self.unacked_segs > 0 && self.state == State::Established {
            self.send_ack(now, out);
        }
    }

    /// The timestamps option on a segment sent now: our TSval, TSecr = TS.Recent (RFC 7323 §3.2).
    fn ts_option(&self, now: Time) -> Option<(u32, u32)> { self.ts_ok.then(|| (super::sender::tsval(now), self.ts_recent)) }

    fn on_data(&mut self, hdr: &TcpHeader, ce: bool, now: Time, out: &mut RecvOutput) {
        if let (true, Some((v, _))) = (self.ts_ok, hdr.ts) {
            // RFC 7323 §4.3 (Linux tcp_replace_ts_recent): TS.Recent follows segments that start
            // at or below the last ACK sent, so that with delayed ACKs the echo times the
            // earliest segment acknowledged and a retransmission filling a hole is timed itself.
            if hdr.seq <= self.last_ack_sent && v.wrapping_sub(self.ts_recent) as i32 >= 0 {
                self.ts_recent = v;
            }
        }
        let mut immediate = false;
        let len = hdr.len as u64;
        if self.ecn_ok {
            if ce {
                self.stats.ce_marked += 1;
            }
            // DCTCP echo: a change of CE state first flushes the pending delayed ACK (old state).
            if self.unacked_segs > 0 && self.ecn.must_flush(ce, len > 0) {
                self.send_ack(now, out);
            }
            immediate |= self.ecn.on_segment(ce, hdr.flags & F::CWR != 0, len > 0);
        }
        let fin = hdr.flags & F::FIN != 0;
        // RFC 9293 §3.10.7.4 acceptability: data must start inside the receive window (we allow the
        // whole buffer beyond RCV.NXT, and anything below the right edge already offered).
        let bufwin = match &self.linux {
            Some(l) => l.full_space(),
            None => self.cfg.rcvbuf,
        };
        let limit = self.right_edge.max(self.rcv_nxt.saturating_add(bufwin));
        if len > 0 && (hdr.seq.checked_add(len).is_none() || hdr.seq >= limit) {
            self.send_ack(now, out);
            return;
        }
        // The echoed TSval of one of our ACKs (`sender::tsval`: Linux's ms clock + 1; 0 = none).
        let tsecr_ms = hdr.ts.filter(|_| self.ts_ok).and_then(|(_, ecr)| (ecr > 0).then(|| ecr as u64 - 1));
        if len > 0 {
            self.stats.segments += 1;
            if self.first_data {
                // Linux `tcp_event_data_recv`: the first data segment starts quick-ACK mode.
                self.first_data = false;
                self.enter_quickack();
            }
            let (s, e) = (hdr.seq, hdr.seq + len);
            if e <= self.rcv_nxt {
                // RFC 9293 §3.10.7.4: not acceptable (old duplicate) → send an ACK.
                self.stats.dup_segments += 1;
                immediate = true;
            } else if s <= self.rcv_nxt {
                // In order: deliver, then pull in what the out-of-order queue now continues.
                let had_gap = !self.ooo.is_empty();
                self.stats.bytes_in_order += e - self.rcv_nxt;
                self.rcv_nxt = e;
                while let Some((&os, &oe)) = self.ooo.iter().next() {
                    if os > self.rcv_nxt {
                        break;
                    }
                    self.ooo.remove(&os);
                    self.ooo_bytes -= oe - os;
                    if oe > self.rcv_nxt {
                        self.stats.bytes_in_order += oe - self.rcv_nxt;
                        self.rcv_nxt = oe;
                    }
                }
                let nxt = self.rcv_nxt;
                self.recent.retain(|b| b.1 > nxt);
                if self.linux.is_some() {
                    // Held until the application reads it, after this segment's ACK decision.
                    self.unread_segs = 1;
                    let held = self.held();
                    let nxt = self.rcv_nxt;
                    let grew = self.linux.as_mut().is_some_and(|l| l.on_data(len, held, nxt, now, tsecr_ms));
                    if grew && self.cfg.quickack > 0 {
                        // tcp_grow_window (from tcp_event_data_recv): a segment that raises
                        // rcv_ssthresh sets icsk_ack.quick |= 1, so the ACK announcing the larger
                        // window goes at once.
                        self.quick |= 1;
                    }
                }
                if had_gap {
                    // RFC 5681 §4.2: data filling (part of) a gap is acknowledged at once.
                    immediate = true;
                } else {
                    self.unacked_segs += 1;
                }
                // tcp_measure_rcv_mss: PSH on a full-sized segment sets ICSK_ACK_PUSHED (6.6+).
                if hdr.flags & F::PSH != 0 && self.cfg.push_ack {
                    self.pushed = true;
                }
            } else {
                // Out of order: buffer, ACK at once with SACK (RFC 5681 §4.2, RFC 2018 §4); Linux
                // also re-enters quick-ACK mode (`tcp_data_queue_ofo`).
                self.insert_ooo(s, e);
                immediate = true;
                self.enter_quickack();
                let held = self.held();
                let span = self.ooo.iter().next_back().map_or(0, |(_, &oe)| oe - self.rcv_nxt);
                let nxt = self.rcv_nxt;
                if let Some(l) = &mut self.linux {
                    // tcp_data_queue_ofo: tcp_grow_window, then provisioning for the queue
                    // (tcp_rcvbuf_grow with the current space, plus the out-of-order span).
                    l.on_data(len, held, nxt, now, None);
                    let sp = l.space;
                    l.rcvbuf_grow(sp, span);
                }
            }
        }
        if fin && hdr.seq.checked_add(len) == Some(self.rcv_nxt) {
            // RFC 9293 §3.10.7.4 eighth: FIN in order → ACK it; we have nothing more to send, so our
            // FIN goes with the ACK (CLOSE-WAIT → LAST-ACK at once).
            self.rcv_nxt += 1;
            if let Some(p) = &self.policy {
                p.borrow_mut().on_close(self.flow, now);
            }
            self.state = State::LastAck;
            self.send_fin(now, out);
            return;
        }
        if len == 0 {
            if hdr.seq < self.rcv_nxt && !fin {
                // A window probe (old sequence number, no data): RFC 9293 §3.10.7.4 says an
                // unacceptable segment is answered with an ACK carrying the current window.
                self.send_ack(now, out);
            }
            return;
        }
        let delack = self.cfg.delack;
        if immediate || delack.is_none() || self.unacked_segs >= 2 || self.quick > 0 {
            // RFC 5681 §4.2: ACK at least every second full-sized segment (every segment while
            // Linux-style quick-ACK mode lasts).
            self.quick = self.quick.saturating_sub(self.unacked_segs.max(1));
            self.send_ack(now, out);
        } else if !self.delack_armed {
            self.delack_armed = true;
            out.delack = TimerCmd::Set(now + delack.unwrap_or(Time::ZERO));
        }
        self.app_read(now, out);
    }

    /// The application reads what arrived in order (Linux: `tcp_recvmsg` → `tcp_rcv_space_adjust`);
    /// a host policy's new SO_RCVBUF applies from here on.
    fn app_read(&mut self, now: Time, out: &mut RecvOutput) {
        let read = self.unread_segs > 0;
        self.unread_segs = 0;
        if self.linux.is_none() {
            return;
        }
        let so = self.policy.as_ref().and_then(|p| p.borrow_mut().so_rcvbuf(self.flow, now));
        let span = self.ooo.iter().next_back().map_or(0, |(_, &oe)| oe - self.rcv_nxt);
        let copied = self.stats.bytes_in_order;
        if let Some(l) = &mut self.linux {
            if let Some(v) = so {
                if l.cfg.so_rcvbuf != Some(v) {
                    l.cfg.so_rcvbuf = Some(v);
                    l.set_so_rcvbuf(v);
                }
            }
            l.on_read(copied, 0, span, now);
        }
        // tcp_cleanup_rbuf: an ACK is pending, a PSH segment came since the last one
        // (ICSK_ACK_PUSHED, not ping-pong: this end sends no data) and the read emptied the
        // queue (no out-of-order data left in sk_rmem_alloc) → ACK now (`push_ack`).
        if read && self.state == State::Established && self.pushed && self.unacked_segs > 0 && self.ooo.is_empty() {
            self.send_ack(now, out);
            return;
        }
        // tcp_cleanup_rbuf: a read that lets the window at least double, while what is left of the
        // offered window is at most half the clamp, is announced at once (else a window of one or
        // two segments would wait for the delayed-ACK timer).
        if read && self.state == State::Established {
            let left = self.right_edge.saturating_sub(self.rcv_nxt);
            let held = self.held();
            let update = match &mut self.linux {
                Some(l) if 2 * left <= l.window_clamp => {
                    let w = l.select_window(held);
                    w > 0 && w >= 2 * left
                }
                _ => false,
            };
            if update {
                self.send_ack(now, out);
            }
        }
    }

    /// Linux `tcp_incr_quickack`: ACK the next min(rcvbuf / (2·MSS), quickack) segments at once
    /// (at least 2).
    fn enter_quickack(&mut self) {
        let max = self.cfg.quickack;
        if max == 0 {
            return;
        }
        // tcp_incr_quickack: rcv_wnd / (2 · rcv_mss) with Linux's buffer.
        let n = match &self.linux {
            Some(l) => l.rcv_wnd / (2 * self.cfg.payload_mss() as u64),
            None => self.cfg.rcvbuf / (2 * self.cfg.mss.max(1) as u64),
        };
        let n = n.max(2).min(max as u64) as u32;
        self.quick = self.quick.max(n);
    }

    fn insert_ooo(&mut self, s: u64, e: u64) {
        // Merge with overlapping or adjacent blocks.
        let mut ns = s;
        let mut ne = e;
        let overl: Vec<(u64, u64)> = self.ooo.range(..=e).filter(|(_, &be)| be >= s).map(|(&a, &b)| (a, b)).collect();
        for (a, b) in overl {
            self.ooo.remove(&a);
            self.ooo_bytes -= b - a;
            ns = ns.min(a);
            ne = ne.max(b);
        }
        self.ooo.insert(ns, ne);
        self.ooo_bytes += ne - ns;
        // RFC 2018 §4: the block holding the latest segment first, then the others most recent first;
        // blocks now inside the merged one are dropped.
        self.recent.retain(|b| !(b.0 >= ns && b.1 <= ne));
        self.recent.insert(0, (ns, ne));
        self.recent.truncate(8);
    }
}

/// IP size of a receiver segment.
pub const ACK_BYTES: u32 = HEADER_BYTES;
