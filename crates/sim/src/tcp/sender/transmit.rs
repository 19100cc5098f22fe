//! The sender's transmit loop (RFC 6675 §5 NextSeg order: lost segments, new data within
//! min(cwnd, rwnd), rule (3)), with its gates (pacing, TCP Small Queues, the peer's window and the
//! persist timer) and the pacing clock after each segment (Linux's `tcp_update_skb_after_send`).
use super::*;

impl Sender {
    /// The pacing timer fired.
    pub fn on_pace(&mut self, now: Time, out: &mut Output) {
        self.cs.now = now;
        self.transmit(now, out);
    }

    pub(super) fn retransmit_front(&mut self, now: Time, out: &mut Output) {
        if !self.sb.is_empty() {
            self.send_seg(0, true, now, out);
        }
    }

    /// Sends while the window allows (RFC 6675 §5 step (C): while cwnd − pipe ≥ 1 SMSS).
    pub(super) fn transmit(&mut self, now: Time, out: &mut Output) {
        if !matches!(self.state, State::Established | State::FinWait1) {
            return;
        }
        let mss = self.cs.mss;
        let nxt_before = self.snd_nxt;
        let mut new_segs = 0u32;
        loop {
            // Linux paces GSO skbs: new segments may join the skb that left at this instant
            // (up to `tso_segs`) whatever the pacing timer says; anything else waits for it.
            let paced_out = (self.pacing || self.iw_paced) && now < self.next_send;
            if paced_out && !(self.skb_at == Some(now) && self.skb_segs < self.cc.tso_segs(&self.cs)) {
                out.pace = TimerCmd::Set(self.next_send);
                break;
            }
            let pipe = self.pipe();
            let mut win = self.cc.window(&self.cs);
            let in_recovery = self.ca != CaState::Open;
            // RFC 3042: on the first two duplicate ACKs, up to two new segments beyond cwnd.
            let lt = if self.cfg.limited_transmit && !in_recovery { self.rec.limited_transmit_allowance(mss) } else { 0 };
            win += lt;
            if pipe + mss > win {
                self.cwnd_limited = true;
                break;
            }
            // Rule (1): retransmit a lost segment (in Recovery with SACK, or after an RTO).
            if in_recovery && (self.sack || self.ca == CaState::Loss) && !self.new_data_only {
                if let Some(i) = self.sb.next_lost() {
                    if !self.retransmit(i, paced_out, now, out) {
                        break;
                    }
                    continue;
                }
            }
            // Rule (2): new data within the peer's window (RFC 5681 §3: min(cwnd, rwnd)), unless
            // held after an ECN-Echo at a one-segment window.
            if self.ecn.hold {
                self.cwnd_limited = false;
                break;
            }
            if self.snd_nxt < self.data_end {
                let Some(len) = self.rwnd_allows(now, out) else {
                    self.cwnd_limited = false;
                    break;
                };
                if self.tsq_holds(0, out) {
                    break;
                }
                if lt > 0 && pipe + mss > self.cc.window(&self.cs) {
                    self.rec.lt_bytes += len;
                }
                self.send_new(len, now, out);
                new_segs += 1;
                if self.cfg.push_ack && new_segs.is_multiple_of(2) {
                    // PSH on every second new segment of a burst (`push_ack`), as the testbed's
                    // Linux sender marks its segments: 110 of 110 two-segment bursts end in PSH
                    // and the IW10 burst alternates (docs/validation.md).
                    if let Some(s) = out.segs.last_mut() {
                        s.hdr.flags |= F::PSH;
                    }
                }
                continue;
            }
            // The FIN follows the last payload byte (RFC 9293 §3.10.4 CLOSE).
            if self.fin_due() {
                if self.tsq_holds(0, out) {
                    break;
                }
                self.send_new(1, now, out);
                continue;
            }
            // Rule (3): with SACK in recovery, resend an unSACKed segment below HighSACK (not with
            // RACK: Linux retransmits only what is marked lost, RACK decides when a hole is one).
            if self.sack && !self.cfg.rack && self.ca == CaState::Recovery {
                if let Some(i) = self.sb.next_rule3() {
                    if !self.retransmit(i, paced_out, now, out) {
                        break;
                    }
                    continue;
                }
            }
            // Application-limited: tcp_rate_check_app_limited (less than a segment to send, not
            // cwnd-limited, no lost segment waiting): samples until what is in flight now is
            // delivered are marked app-limited.
            self.cwnd_limited = false;
            if self.sb.next_lost().is_none() {
                self.cs.app_limited = (self.cs.delivered + self.packets_in_flight()).max(1);
            }
            break;
        }
        // tcp_write_xmit: new data sent → the loss probe is due 2·SRTT after it (at most when
        // the first segment's RTO would fire).
        if self.snd_nxt > nxt_before {
            self.schedule_loss_probe(now, false, out);
        }
        // RFC 6298 §5.1: start the timer when data is outstanding and it is not running.
        if self.snd_nxt > self.snd_una && !self.timers.armed() {
            self.arm_rto(now, out);
        }
    }

    /// Retransmits scoreboard segment `i` (RFC 6675 §5 rules (1) and (3), and the RTO's resend)
    /// unless the pacing timer or TCP Small Queues hold it. False when held: the transmit loop
    /// stops there (with the pacing timer set when pacing held it).
    fn retransmit(&mut self, i: usize, paced_out: bool, now: Time, out: &mut Output) -> bool {
        if paced_out {
            out.pace = TimerCmd::Set(self.next_send);
            return false;
        }
        if self.tsq_holds(1, out) {
            return false;
        }
        self.send_seg(i, true, now, out);
        true
    }

    /// The length of the next new segment at SND.NXT as the peer's window allows it (RFC 5681
    /// §3: min(cwnd, rwnd)), or None when the window holds it back (then with nothing in flight
    /// the persist timer is armed).
    fn rwnd_allows(&mut self, now: Time, out: &mut Output) -> Option<u64> {
        let len = (self.data_end - self.snd_nxt).min(self.cs.mss);
        if self.snd_nxt + len - self.snd_una <= self.rwnd {
            return Some(len);
        }
        let usable = (self.snd_una + self.rwnd).saturating_sub(self.snd_nxt);
        if self.snd_nxt == self.snd_una && usable > 0 {
            // RFC 9293 §3.8.6.2.1: with nothing in flight a window smaller than a segment is
            // used as it is (otherwise the connection would stall).
            return Some(usable);
        }
        if self.snd_nxt == self.snd_una && !self.timers.armed() {
            // RFC 9293 §3.8.6.1: zero window, nothing in flight → persist timer (the
            // retransmission timer with its backoff) to probe the window.
            self.timers.persist = true;
            self.arm_rto(now, out);
        }
        None
    }

    /// The FIN is the next thing to send.
    pub(super) fn fin_due(&self) -> bool { !self.unlimited && !self.fin_sent && self.snd_nxt == self.data_end }

    /// Sends `len` new bytes (the FIN when it is due), at SND.NXT.
    pub(super) fn send_new(&mut self, len: u64, now: Time, out: &mut Output) {
        let seq = self.snd_nxt;
        let fin = self.fin_due();
        if fin {
            self.fin_sent = true;
            self.state = State::FinWait1;
        }
        self.snd_nxt += len;
        let i = self.sb.push(Seg::new(seq, len as u32, fin, now));
        self.send_seg(i, false, now, out);
    }

    /// The loss probe's new data (Linux's `tcp_write_xmit` with `push_one = 2`): one segment, or
    /// the FIN, regardless of cwnd but within the peer's window. False if there is none to send.
    pub(super) fn push_new_segment(&mut self, now: Time, out: &mut Output) -> bool {
        if self.snd_nxt < self.data_end {
            let len = (self.data_end - self.snd_nxt).min(self.cs.mss);
            if self.snd_nxt + len > self.snd_una + self.rwnd {
                return false;
            }
            self.send_new(len, now, out);
            return true;
        }
        if self.fin_due() {
            self.send_new(1, now, out);
            return true;
        }
        false
    }

    /// TCP Small Queues gate (`tsq.rs`, Linux's `tcp_small_queue_check(sk, skb, factor)`; factor 1
    /// for retransmissions): true if this connection already holds its limit at its host, counting
    /// the segments of this call not yet handed over. A held sender is not application-limited, so
    /// it counts as cwnd-limited for window growth; the next TX completion calls `on_pace`.
    pub(super) fn tsq_holds(&mut self, factor: u32, out: &Output) -> bool {
        use crate::tcp::tsq;
        if !self.cfg.tsq {
            return false;
        }
        let mss = self.cs.mss;
        let srtt_us = self.rtt.srtt().map(|t| t.ns() / 1000);
        // BBR sets sk_pacing_rate itself (its cong_control replaces tcp_update_pacing_rate).
        let rate = if self.cc.needs_pacing() {
            self.cc.pacing_rate(&self.cs).map(|r| r.max(0.0) as u64)
        } else {
            tsq::pacing_rate(mss, self.cs.cwnd, self.cs.ssthresh, self.sb.len() as u64, srtt_us)
        };
        let lim = tsq::limit(tsq::truesize(mss as u32), rate, factor);
        // The segments of this call not yet handed over; summed only near the limit (each is at
        // most one MSS), so a long burst under a large limit stays linear.
        let n = out.segs.len() as u64;
        let pending = if 1 + self.tsq.queued + n * tsq::truesize(mss as u32) <= lim {
            0
        } else {
            out.segs.iter().map(|s| tsq::truesize(s.hdr.len)).sum()
        };
        let held = self.tsq.check(lim, pending, self.sb.len());
        if held {
            self.cwnd_limited = true;
        }
        held
    }

    /// Puts segment `i` of the scoreboard on the wire (a retransmission if it was sent before).
    pub(super) fn send_seg(&mut self, i: usize, is_rexmit: bool, now: Time, out: &mut Output) {
        let rcv_nxt = self.rcv_nxt;
        // Bytes in flight before this transmission (a new segment is already in SND.NXT).
        let in_flight = if is_rexmit { self.flight_size() } else { self.flight_size() - self.sb.get(i).len as u64 };
        let snd_nxt = self.snd_nxt;
        let mut g = self.sb.get_mut(i);
        self.rate.on_sent(&mut self.cs, &mut g, in_flight, now);
        let g_len = g.len as u64;
        if is_rexmit && self.ca != CaState::Open && self.retrans_stamp.is_none() {
            // retrans_stamp: the episode's first retransmission (a loss probe, sent in Open,
            // is not one: Linux sends it with __tcp_retransmit_skb).
            self.retrans_stamp = Some(tsval(now));
        }
        if is_rexmit {
            g.rexmit = true;
            g.ever_rexmit = true;
            g.rexmit_nxt = snd_nxt;
            g.sent = now;
        }
        let ts = self.ts_ok.then(|| (tsval(now), self.ts_recent));
        g.tsval = ts.map(|(v, _)| v);
        if is_rexmit {
            self.rack.on_retransmit(&g);
        }
        let (seq, fin) = (g.seq, g.fin);
        let payload = if fin { 0 } else { g.len };
        drop(g);
        let head_rexmit = is_rexmit && i == 0;
        let mut flags = F::ACK;
        if fin {
            flags |= F::FIN;
        }
        // RFC 3168 §6.1.5: retransmissions are not ECT; §6.1.2: CWR on the next new data.
        let (ect, cwr) = self.ecn.mark_segment(is_rexmit, payload);
        if cwr {
            flags |= F::CWR;
        }
        let hdr = TcpHeader { seq, ack: rcv_nxt, flags, wnd: 65_535, len: payload, ts, ..Default::default() };
        let size = wire_size(&hdr);
        out.segs.push(OutSeg { hdr, ect, size });
        if self.ca == CaState::Recovery {
            // RFC 6937: prr_out counts data (re)sent during recovery.
            self.rec.prr.out += g_len;
        }
        if payload > 0 {
            self.stats.segments_sent += 1;
            if is_rexmit {
                self.stats.retransmits += 1;
            }
            if self.stats.first_data_at.is_none() {
                self.stats.first_data_at = Some(now);
            }
        }
        if head_rexmit && !matches!(self.timers.pending(), Some((TimerKind::Reorder, _))) {
            // As Linux (tcp_xmit_retransmit_queue), the timer restarts whenever the first
            // unacknowledged segment is retransmitted, so it times that retransmission (unless
            // RACK's reordering timer is pending).
            self.arm_rto(now, out);
        }
        self.cs.now = now;
        self.cc.on_sent(&mut self.cs, g_len, in_flight);
        if self.iw_paced && !self.pacing && !is_rexmit && payload > 0 {
            // Paced IW: the first flight spread evenly over the SYN's RTT sample (none: a burst).
            if let Some(srtt) = self.cs.srtt {
                self.next_send = now + Time(srtt.ns() / self.cfg.iw.max(1) as u64);
            }
        }
        if self.pacing {
            self.pace_after_send(payload, size, is_rexmit, now);
        }
    }

    /// The pacing clock after a segment left at `now` (`payload` bytes, `size` IP bytes): the
    /// departure time of the next one at the algorithm's pacing rate.
    fn pace_after_send(&mut self, payload: u32, size: u32, is_rexmit: bool, now: Time) {
        let Some(rate) = self.cc.pacing_rate(&self.cs) else { return };
        // Linux (tcp_update_skb_after_send) spaces by the payload and leaves the first nine data
        // segments unpaced ("sch_fq does not pace first 10 MSS"). New data leaves in GSO skbs of
        // up to `tso_segs` segments (tcp_write_xmit splits its queue at tcp_tso_segs); the gap
        // after an skb is its whole length at the rate.
        let linux = self.cc.paces_payload();
        let bytes = if linux { payload } else { size };
        let tso = self.cc.tso_segs(&self.cs);
        if tso > 1 && !is_rexmit && self.skb_at == Some(now) && self.skb_segs < tso {
            self.skb_segs += 1;
            self.skb_bytes += bytes as u64;
        } else {
            self.skb_at = Some(now);
            self.skb_segs = 1;
            self.skb_bytes = bytes as u64;
            self.skb_start = self.next_send.max(now);
            self.skb_credit = now - self.next_send;
        }
        if rate > 0.0 && !(linux && self.stats.segments_sent < 10) {
            let len = Time::from_secs_f64(self.skb_bytes as f64 / rate);
            self.next_send = if linux {
                // tcp_update_skb_after_send: an skb that leaves late (after an ACK that opened
                // the cwnd, or a late timer) shortens its own gap by the lateness, at most by
                // half ("take into account OS jitter").
                self.skb_start + (len - Time(len.ns() / 2).min(self.skb_credit))
            } else {
                now + len
            };
        } else if linux {
            // unpaced, but the clock still advances to the send (max(tcp_wstamp_ns, now))
            self.next_send = self.next_send.max(now);
        }
    }
}
