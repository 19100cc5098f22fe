//! The sender's ACK processing (RFC 9293 §3.10.7.4 "fifth, check the ACK field"): SACK marking
//! (RFC 2018 / RFC 6675), RACK's loss marking (RFC 8985), recovery entry and exit (RFC 6675 §5,
//! RFC 6582 for NewReno with its partial ACKs), PRR (RFC 6937), the ECN-Echo reaction (RFC 3168
//! §6.1.2), the tail-loss-probe outcome, and the algorithm's hooks in Linux's order
//! (`pkts_acked`, `in_ack_event`, `cong_control`). Reactions go through [`Sender::cc_react`].
use super::*;

impl Sender {
    /// Marks SACKed segments (RFC 2018 blocks) and returns the newly SACKed bytes; each is counted
    /// as delivered for the rate sample.
    pub(super) fn update_sack(&mut self, hdr: &TcpHeader, now: Time) -> u64 {
        let blocks = &hdr.sack[..(hdr.nsack as usize).min(hdr.sack.len())];
        let (cs, rate, rack) = (&mut self.cs, &mut self.rate, &mut self.rack);
        let (min_rtt, prior_high, high_seq) = (self.rtt.min_rtt(), self.prior_high_sacked, self.rec.recover);
        let mut orig = false;
        let newly = self.sb.sack(blocks, self.snd_una, |g| {
            // tcp_sacktag_one: FLAG_ORIG_SACK_ACKED for data never retransmitted, below high_seq.
            orig |= !g.ever_rexmit && g.end() <= high_seq;
            cs.delivered += g.len as u64;
            rate.delivered(g);
            // Counted now: not sampled again when cumulatively acknowledged.
            g.tx.delivered_time = None;
            // tcp_sacktag_one: RACK advances and checks for reordering on every newly SACKed segment.
            rack.advance(g, now, min_rtt);
            rack.check_reordering(g, prior_high);
        });
        self.ack_orig |= orig;
        newly
    }

    /// RACK-TLP is in charge of loss detection (SACK connections with `rack`).
    pub(super) fn rack_on(&self) -> bool { self.sack && self.cfg.rack }

    /// `tcp_rack_mark_lost`: RACK's detection with Linux's reordering window; arms the reordering
    /// timer for segments not yet overdue. True if it armed it.
    pub(super) fn rack_detect(&mut self, now: Time, out: &mut Output) -> bool {
        let reo = self.rack.reo_wnd(self.ca != CaState::Open, self.sb.sacked_segs(), self.rtt.min_rtt(), self.rtt.srtt());
        let (wait, lost_rexmits) = self.rack.detect_loss(&mut self.sb, reo, now);
        self.stats.lost_retransmits += lost_rexmits;
        match wait {
            Some(w) => {
                self.timers.arm(TimerKind::Reorder, now + w + rack::TIMEOUT_MIN, &mut out.rto);
                true
            }
            None => false,
        }
    }

    pub(super) fn on_ack(&mut self, hdr: &TcpHeader, now: Time, out: &mut Output) {
        let ackno = hdr.ack;
        if ackno > self.snd_nxt || ackno < self.snd_una {
            // RFC 9293 §3.10.7.4: an ACK for something not yet sent, or an old duplicate: ignore.
            return;
        }
        let old_rwnd = self.rwnd;
        // RFC 9293 §3.10.7.4: SND.UNA =< SEG.ACK, so update the send window.
        self.rwnd = hdr.wnd;
        if self.timers.persist && self.rwnd > 0 {
            // The window opened: the persist timer gives way to the retransmission timer.
            self.timers.persist = false;
            self.cancel_rto(out);
        }
        let ece = self.ecn.on_ack_flags(hdr.flags);
        if ece {
            self.stats.ece_acks += 1;
            if self.ca != CaState::Open {
                self.forbid_undo_restore();
            }
        }
        self.ack_orig = false;
        if let Some((v, _)) = hdr.ts {
            if self.ts_ok {
                // RFC 7323 §4.3: ACKs arrive in order here, so the latest TSval is TS.Recent.
                self.ts_recent = v;
            }
        }
        let delivered_before = self.cs.delivered;
        self.rate.begin_ack(self.pipe(), self.ca, self.cwnd_limited, delivered_before, self.sb.lost_total());
        self.prior_high_sacked = self.sb.high_sacked();
        let newly_sacked = if self.sack { self.update_sack(hdr, now) } else { 0 };
        let acked = ackno - self.snd_una;
        let mut dup = false;
        if acked > 0 {
            let tsecr = hdr.ts.map(|(_, e)| e).filter(|&e| self.ts_ok && e != 0);
            self.on_new_ack(ackno, acked, tsecr, now, out);
        } else if self.snd_nxt > self.snd_una && hdr.len == 0 && hdr.flags & (F::SYN | F::FIN) == 0 {
            // A duplicate ACK: RFC 5681 §2 (same ACK, no data, same window) or, with SACK,
            // RFC 6675 §2 (it SACKs new data).
            dup = if self.sack { newly_sacked > 0 } else { hdr.wnd == old_rwnd };
            if dup {
                self.on_dupack(now, out);
            }
        }
        // tcp_fastretrans_alert runs for every ACK in Loss, and RACK with it, also when this ACK
        // ends the Loss state.
        let was_loss = self.ca == CaState::Loss;
        if was_loss && self.sack {
            let pure_dup = acked == 0 && hdr.len == 0 && hdr.wnd == old_rwnd && self.snd_nxt > self.snd_una && hdr.flags & (F::SYN | F::FIN) == 0;
            let tsecr = hdr.ts.map(|(_, e)| e).filter(|&e| self.ts_ok && e != 0);
            self.process_loss(loss::LossAck { advanced: acked > 0, sacked: newly_sacked > 0, dup: pure_dup, tsecr });
        }
        if let Some(high) = self.rack.tlp_high_seq {
            self.process_tlp_ack(ackno, high, acked == 0 && newly_sacked == 0);
        }
        let mut reo_armed = false;
        if self.rack_on() {
            // tcp_fastretrans_alert runs for "dubious" ACKs (duplicate, SACKing, or outside
            // Open); there RACK marks what is overdue, and any loss starts recovery
            // (tcp_time_to_recover: "the loss is proven"). No DupThresh rule, no RFC 6675 IsLost.
            if (dup || newly_sacked > 0 || self.ca != CaState::Open || was_loss) && self.rack.take_advanced() {
                reo_armed = self.rack_detect(now, out);
            }
            if self.ca == CaState::Open && self.sb.any_lost() {
                self.enter_recovery(now, out);
            }
        } else if self.sack && newly_sacked > 0 {
            self.sb.mark_lost_dupthresh(self.cs.mss);
            if self.cfg.lost_retransmit && self.ca == CaState::Recovery {
                self.stats.lost_retransmits += self.sb.mark_lost_retransmits();
            }
            // RFC 6675 §5 step 3(b): enter recovery when IsLost(HighACK + 1), even below DupThresh.
            if self.ca == CaState::Open && self.rec.dupacks > 0 && self.sb.front().is_some_and(|g| g.lost && !g.fin) && self.snd_una > self.rec.recover {
                self.enter_recovery(now, out);
            }
        }
        if acked > 0 && !reo_armed {
            // tcp_set_xmit_timer: the loss probe replaces the RTO armed above when it may.
            self.schedule_loss_probe(now, true, out);
        }
        // Linux's tcp_in_ack_event: the algorithm sees what this ACK delivered (and whether it
        // carries ECE) before the sender reacts to it (DCTCP's marked fraction).
        let ev = cc::AckEvent { snd_una: self.snd_una, snd_nxt: self.snd_nxt, delivered: self.cs.delivered - delivered_before, ece };
        self.cc.in_ack_event(&mut self.cs, &ev);
        if ece {
            self.on_ece(now, out);
        }
        if self.prr_active() {
            // RFC 6937's DeliveredData (Linux: tcp_newly_delivered, each segment counted once,
            // when first SACKed or else when cumulatively ACKed): a cumulative ACK over segments
            // SACKed before delivers only what was not SACKed. Counting all of `acked` lets a hole
            // filled below a long SACKed run release a burst of that run's size.
            let pipe = self.pipe();
            self.cs.cwnd = self.rec.prr.on_ack(self.cs.delivered - delivered_before, pipe, self.cs.ssthresh, self.cs.mss);
        }
        // Linux's tcp_rate_gen then tcp_cong_control: every ACK reaches the algorithm.
        let rs = self.rate.generate(&mut self.cs, acked, self.sb.lost_total(), self.rtt.min_rtt(), self.ecn.ack_ece, now);
        self.cs.now = now;
        // (The O(window) count only for algorithms that read it: Reno and CUBIC do not.)
        self.cs.pipe = if self.cc.owns_cwnd() { self.packets_in_flight() } else { self.pipe() };
        self.cs.ca = self.ca;
        self.cs.next_send = self.next_send;
        self.cc.on_ack(&mut self.cs, &rs);
        // The contract on every ACK (checked where debug assertions are on; the property test in
        // tests/tcp_cc_registry.rs checks it for every registered algorithm in any build).
        debug_assert!(self.cs.cwnd >= self.cs.mss && self.cs.cwnd < cc::SSTHRESH_UNSET, "{}: cwnd {} B after an ACK", self.cc.name(), self.cs.cwnd);
        self.last_rs = Some(rs);
        self.transmit_after_ack(now, out);
    }

    /// `tcp_process_tlp_ack`: the ACK reached the probe's SND.NXT. A probe of new data just ends;
    /// a retransmitted probe acknowledged beyond that point repaired a loss (one window
    /// reduction, Linux's CWR); a pure duplicate ACK means both copies arrived.
    pub(super) fn process_tlp_ack(&mut self, ackno: u64, high: u64, pure_dup: bool) {
        if ackno < high {
            return;
        }
        if !self.rack.tlp_retrans {
            self.rack.end_probe();
        } else if ackno > high {
            self.rack.end_probe();
            if self.ca == CaState::Open {
                // tcp_init_cwnd_reduction + tcp_end_cwnd_reduction: ssthresh from the algorithm,
                // cwnd = ssthresh.
                self.cs.flight = self.flight_size();
                self.cc_react(Congestion::Loss);
                if !self.cc.owns_cwnd() {
                    self.cs.cwnd = self.cs.ssthresh;
                }
                self.ecn.share_reduction(self.snd_nxt);
                self.stats.loss_probe_recoveries += 1;
            }
        } else if pure_dup {
            self.rack.end_probe();
        }
    }

    pub(super) fn on_new_ack(&mut self, ackno: u64, acked: u64, tsecr: Option<u32>, now: Time, out: &mut Output) {
        self.cs.flight = self.flight_size();
        // Remove fully acknowledged segments; RTT sample per Karn's rule (RFC 6298 §3): only when
        // none of them was retransmitted or already SACKed, from the earliest one (as Linux).
        let mut clean = true;
        let mut earliest: Option<Time> = None;
        let mut latest = Time::ZERO;
        let mut fin_acked = false;
        while let Some(g) = self.sb.pop_acked(ackno) {
            if g.ever_rexmit || g.sacked {
                clean = false;
            }
            if !g.ever_rexmit && !g.sacked && g.end() <= self.rec.recover {
                // tcp_clean_rtx_queue: FLAG_ORIG_SACK_ACKED.
                self.ack_orig = true;
            }
            if !g.sacked {
                self.cs.delivered += g.len as u64;
                self.rate.delivered(&g);
                // tcp_clean_rtx_queue: RACK advances on cumulatively acknowledged segments too,
                // unless the timestamp echo shows this ACK is for an earlier transmission than
                // the last retransmission (tcp_skb_spurious_retrans).
                let spurious = g.ever_rexmit && matches!((tsecr, g.tsval), (Some(e), Some(v)) if (e.wrapping_sub(v) as i32) < 0);
                if !spurious {
                    self.rack.advance(&g, now, self.rtt.min_rtt());
                }
                self.rack.check_reordering(&g, self.prior_high_sacked);
            }
            if earliest.is_none() {
                earliest = Some(g.sent);
            }
            latest = latest.max(g.sent);
            fin_acked |= g.fin;
        }
        // tcp_ack_update_rtt: the ACK's timing when Karn's rule allows it, else (RFC 7323 §4.1,
        // "RTTM") TSecr, in the option's 1 ms units.
        let sample = match (clean, earliest, tsecr) {
            (true, Some(t), _) => Some((now - t, now - latest)),
            (false, Some(_), Some(e)) => {
                let r = Time::from_ms(tsval(now).wrapping_sub(e).max(1) as u64);
                Some((r, r))
            }
            _ => None,
        };
        if let Some((r, _)) = sample {
            self.rtt.sample(r);
            self.cs.srtt = self.rtt.srtt();
            self.cs.min_rtt = self.rtt.min_rtt();
        }
        self.snd_una = ackno;
        if ackno > 1 {
            // The first ACK of data ends the paced initial window.
            self.iw_paced = false;
        }
        if let Some((_, ca_rtt)) = sample {
            // The algorithm's sample (Linux `pkts_acked`): the RTT of the newest segment covered.
            let s = AckSample { rtt: ca_rtt, snd_una: ackno, snd_nxt: self.snd_nxt, recovery: self.ca == CaState::Recovery };
            self.cc.on_ack_sample(&mut self.cs, &s);
        }
        self.rec.on_new_ack();
        self.timers.rto_series = 0;
        self.stats.bytes_acked = (ackno - 1).min(self.data_end - 1);
        if self.stats.end_at.is_none() && !self.unlimited && ackno >= self.data_end {
            self.stats.end_at = Some(now);
        }
        if fin_acked && self.state == State::FinWait1 {
            // RFC 9293 §3.10.7.4: our FIN is acknowledged → FIN-WAIT-2.
            self.state = State::FinWait2;
        }
        // RFC 6298 §5.2 / §5.3: stop the timer when all is acknowledged, else restart it.
        if self.snd_una >= self.snd_nxt {
            // (An ECN hold keeps its timer: it is what ends the hold.)
            if !self.ecn.hold {
                self.cancel_rto(out);
            }
        } else {
            self.arm_rto(now, out);
        }
        match self.ca {
            CaState::Recovery if ackno >= self.rec.recover => {
                // RFC 6675 §5 step (2) / RFC 6582 §3.2 step 3: full ACK ends recovery.
                self.ca = CaState::Open;
                if !self.sack {
                    // RFC 6582 §3.2 step 3 option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
                    self.cs.cwnd = self.cs.ssthresh.min(self.flight_size().max(self.cs.mss) + self.cs.mss);
                } else if self.cfg.prr && !self.cc.owns_cwnd() {
                    // RFC 6937: at the end of recovery cwnd = ssthresh (not for an algorithm
                    // that sets cwnd itself: Linux's tcp_end_cwnd_reduction).
                    self.cs.cwnd = self.cs.ssthresh;
                }
                self.end_episode();
            }
            CaState::Recovery => {
                if !self.sack && !self.cc.owns_cwnd() {
                    // RFC 6582 §3.2 step 4 (partial ACK): retransmit the first unacknowledged
                    // segment, deflate cwnd by the amount acknowledged, add back one SMSS if that
                    // was at least one SMSS. (Timer restarted above: the "Slow-but-Steady" variant.)
                    self.cs.cwnd = self.cs.cwnd.saturating_sub(acked);
                    if acked >= self.cs.mss {
                        self.cs.cwnd += self.cs.mss;
                    }
                    self.cs.cwnd = self.cs.cwnd.max(self.cs.mss);
                    self.retransmit_front(now, out);
                }
                // RFC 6675: a partial ACK needs no special action; pipe and NextSeg do the rest.
            }
            CaState::Loss => {
                // After an RTO the sender slow-starts (RFC 5681 §3.1) until RecoveryPoint; the
                // algorithm's on_ack does it at the end of the ACK (RateSample::may_raise_cwnd).
                // With SACK the episode's end is tcp_process_loss's (loss.rs), after this ACK's
                // SACK and cumulative marks are in.
                if !self.sack && ackno >= self.rec.recover {
                    self.ca = CaState::Open;
                    self.end_episode();
                }
            }
            // Growth (cwnd-limited, no ECN-Echo: RFC 7661, RFC 3168 §6.1.2) is the algorithm's
            // on_ack at the end of the ACK.
            CaState::Open => {}
        }
    }

    /// Recovery is over: RFC 6675 forgets which segments it retransmitted (HighRxt). Not with
    /// RACK: as Linux (the `SACKED_RETRANS` marks stay), a retransmission still in flight above
    /// RecoveryPoint stays one, so that it is not sent again while it may yet arrive; RACK tells
    /// when it is lost.
    pub(super) fn end_episode(&mut self) {
        self.retrans_stamp = None;
        if !self.rack_on() {
            self.sb.clear_episode();
        }
    }

    pub(super) fn on_dupack(&mut self, now: Time, out: &mut Output) {
        self.rec.dupacks += 1;
        match self.ca {
            CaState::Open => {
                // RFC 5681 §3.2 step 2 / RFC 6675 §5 step 3(a) / RFC 6582 §3.2 step 2: enter
                // recovery at DupThresh, but only once per window (SND.UNA beyond recover).
                if !self.rack_on() && self.rec.dupthresh_reached(self.snd_una) {
                    self.enter_recovery(now, out);
                }
            }
            CaState::Recovery => {
                if !self.sack && !self.cc.owns_cwnd() {
                    // RFC 6582 §3.2 step 4 / RFC 5681 step 4: inflate cwnd by one SMSS.
                    self.cs.cwnd += self.cs.mss;
                }
            }
            CaState::Loss => {}
        }
    }

    pub(super) fn prr_active(&self) -> bool { self.cfg.prr && self.sack && self.ca == CaState::Recovery && !self.cc.owns_cwnd() }

    pub(super) fn enter_recovery(&mut self, now: Time, out: &mut Output) {
        // tcp_enter_recovery: tcp_init_undo with the priors of tcp_current_ssthresh.
        self.init_undo();
        // RFC 5681 §3.2 step 2: data sent by limited transmit is not counted.
        self.cs.flight = self.flight_size().saturating_sub(self.rec.lt_bytes);
        // RFC 6675 §5 step 4.1 / RFC 6582 §3.2 step 2: RecoveryPoint = HighData; RFC 6937:
        // prr_delivered = prr_out = 0, RecoverFS = SND.NXT − SND.UNA.
        let recover_fs = self.flight_size();
        self.rec.begin(self.snd_nxt, recover_fs);
        // Step 4.2: ssthresh = cwnd = max(FlightSize/2, 2·SMSS) (or the algorithm's β).
        self.cc_react(Congestion::Loss);
        if !self.sack && !self.cc.owns_cwnd() {
            // RFC 6582 §3.2 step 3 / RFC 5681 §3.2 step 3: cwnd = ssthresh + 3·SMSS.
            self.cs.cwnd = self.cs.ssthresh + crate::tcp::DUP_THRESH as u64 * self.cs.mss;
        }
        self.ca = CaState::Recovery;
        self.stats.fast_recoveries += 1;
        // The ECN reaction shares this reduction (RFC 3168 §6.1.2: at most once per window).
        self.ecn.share_reduction(self.snd_nxt);
        self.rack.end_probe();
        if self.rack_on() {
            // RACK has marked what is lost; as Linux's tcp_cwnd_reduction ("force a fast
            // retransmit upon entering fast recovery") the first of them goes out at once.
            if let Some(i) = self.sb.next_lost() {
                self.send_seg(i, true, now, out);
            }
            return;
        }
        // Step 4.3: retransmit the first segment presumed dropped.
        if !self.sb.is_empty() {
            self.sb.mark_lost(0);
        }
        self.retransmit_front(now, out);
    }

    pub(super) fn on_ece(&mut self, now: Time, out: &mut Output) {
        // RFC 3168 §6.1.2: halve the window at most once per window of data, and not again
        // while loss recovery has already reduced it.
        if !self.ecn.may_react(self.ca == CaState::Open, self.snd_una) {
            return;
        }
        let before = self.cs.cwnd;
        self.cs.flight = self.flight_size();
        self.cc_react(Congestion::Ecn);
        if before <= self.cs.mss {
            // RFC 3168 §6.1.2: at a one-segment window, reset the retransmission timer and send
            // the next new segment only when it expires.
            self.ecn.hold = true;
            self.arm_rto(now, out);
        }
        // RFC 3168 §6.1.2: set CWR on the next new data segment.
        self.ecn.reacted(self.snd_nxt);
        self.stats.ecn_reductions += 1;
    }
}
