//! The sender's timer expiring ([`super::Timers`]: one timer, armed last for the RTO or persist
//! probe, RACK's reordering window, or the tail loss probe), and the loss-probe scheduling that
//! arms it (RFC 6298, RFC 9293 §3.8.6.1, RFC 8985 §6.3 and §7).
use super::*;

impl Sender {
    /// `tcp_schedule_loss_probe`: arms the loss-probe timer instead of the RTO for a SACK
    /// connection outside recovery with data out. `advancing`: called for an ACK that advanced
    /// SND.UNA, whose RTO restarts now (else the RTO runs from the first segment's transmission).
    pub(super) fn schedule_loss_probe(&mut self, now: Time, advancing: bool, out: &mut Output) -> bool {
        // Linux probes in Open (and CWR) only; with SACKed data outstanding it is in Disorder
        // (`tcp_try_keep_open`), which the simulator folds into Open: tell it by HighSACK.
        let disorder = self.sb.high_sacked() > self.snd_una;
        if !(self.sack && self.cfg.tlp) || self.sb.is_empty() || self.ca != CaState::Open || disorder {
            return false;
        }
        let mut t = rack::pto(self.rtt.srtt(), self.sb.len(), self.cfg.min_rto);
        let rto_left = if advancing { self.rtt.rto() } else { self.rto_left(now) };
        if rto_left > Time::ZERO {
            t = t.min(rto_left);
        }
        self.timers.arm(TimerKind::LossProbe, now + t, &mut out.rto);
        true
    }

    /// `tcp_rto_delta_us`: time until the RTO of the first outstanding segment, counted from its
    /// last transmission.
    pub(super) fn rto_left(&self, now: Time) -> Time { self.sb.front().map_or(Time::ZERO, |g| (g.sent + self.rtt.rto()).saturating_sub(now)) }

    /// `tcp_rearm_rto` after a RACK or probe timer: the RTO where it would have been (at least
    /// 1 µs from now), or nothing when nothing is outstanding.
    pub(super) fn rearm_rto_remaining(&mut self, now: Time, out: &mut Output) {
        if self.sb.is_empty() {
            self.cancel_rto(out);
        } else {
            let left = self.rto_left(now).max(Time::from_us(1));
            self.timers.arm(TimerKind::Rto, now + left, &mut out.rto);
        }
    }

    /// The sender's timer fired ([`Timers`]: retransmission, persist, RACK reordering or loss
    /// probe, whichever was armed last).
    pub fn on_rto(&mut self, now: Time, out: &mut Output) {
        self.cs.now = now;
        match self.timers.fire() {
            TimerKind::Rto => self.on_retransmission_timeout(now, out),
            TimerKind::Reorder => self.on_reorder_timeout(now, out),
            TimerKind::LossProbe => self.on_loss_probe(now, out),
        }
    }

    /// `tcp_rack_reo_timeout`: the reordering window has passed; what is overdue now is lost,
    /// recovery starts if it had not, and the RTO takes over again.
    pub(super) fn on_reorder_timeout(&mut self, now: Time, out: &mut Output) {
        self.stats.reorder_timeouts += 1;
        let before = self.sb.pipe();
        let reo = self.rack.reo_wnd(self.ca != CaState::Open, self.sb.sacked_segs(), self.rtt.min_rtt(), self.rtt.srtt());
        let (_, lost_rexmits) = self.rack.detect_loss(&mut self.sb, reo, now);
        self.stats.lost_retransmits += lost_rexmits;
        if self.sb.pipe() != before {
            if self.ca != CaState::Recovery {
                self.enter_recovery(now, out);
                if self.prr_active() {
                    // tcp_cwnd_reduction(sk, 1, …): one segment counted as delivered.
                    let pipe = self.pipe();
                    self.cs.cwnd = self.rec.prr.on_ack(self.cs.mss, pipe, self.cs.ssthresh, self.cs.mss);
                }
            }
            self.transmit(now, out);
        }
        if !matches!(self.timers.pending(), Some((TimerKind::Rto, _))) {
            self.rearm_rto_remaining(now, out);
        }
    }

    /// `tcp_send_loss_probe`: one segment of new data beyond cwnd if the peer's window allows,
    /// else the last segment again; at most one probe per episode. The RTO follows from now.
    pub(super) fn on_loss_probe(&mut self, now: Time, out: &mut Output) {
        if !matches!(self.state, State::Established | State::FinWait1) || self.sb.is_empty() {
            return;
        }
        if self.rack.tlp_high_seq.is_some() {
            self.rearm_rto_remaining(now, out);
            return;
        }
        let retrans = !self.push_new_segment(now, out);
        if retrans {
            let i = self.sb.len() - 1;
            self.send_seg(i, true, now, out);
        }
        self.rack.tlp_high_seq = Some(self.snd_nxt);
        self.rack.tlp_retrans = retrans;
        self.stats.loss_probes += 1;
        self.arm_rto(now, out);
    }

    pub(super) fn on_retransmission_timeout(&mut self, now: Time, out: &mut Output) {
        match self.state {
            State::SynSent => {
                // RFC 6298 §5.5/5.6 for the SYN: back off, resend, restart the timer.
                self.timers.syn_retx += 1;
                self.stats.syn_timeouts += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            State::Established | State::FinWait1 if self.ecn.hold && self.snd_una == self.snd_nxt => {
                // RFC 3168 §6.1.2: the hold after an ECN-Echo at one segment is over.
                self.ecn.hold = false;
                self.transmit(now, out);
            }
            State::Established if self.timers.persist && self.snd_una == self.snd_nxt => {
                // RFC 9293 §3.8.6.1 window probe; like Linux, a zero-length segment with an old
                // sequence number, which the receiver must acknowledge with its current window.
                self.timers.persist = false;
                self.rtt.backoff();
                let hdr = TcpHeader { seq: self.snd_una - 1, ack: self.rcv_nxt, flags: F::ACK, wnd: 65_535, ts: self.ts_option(now), ..Default::default() };
                out.segs.push(OutSeg { size: wire_size(&hdr), hdr, ect: false });
                self.stats.window_probes += 1;
                self.transmit(now, out);
                if !self.timers.armed() {
                    self.timers.persist = true;
                    self.arm_rto(now, out);
                }
            }
            State::Established | State::FinWait1 if self.snd_una < self.snd_nxt => {
                self.ecn.hold = false;
                self.stats.timeouts += 1;
                // tcp_enter_loss (loss.rs): ssthresh and cwnd, what is marked lost, F-RTO.
                self.enter_loss(now);
                self.timers.rto_series += 1;
                // RFC 6298 §5.5: back off the timer.
                self.rtt.backoff();
                self.rack.end_probe();
                self.ca = CaState::Loss;
                self.rec.recover = self.snd_nxt;
                self.rec.dupacks = 0;
                self.next_send = now;
                // RFC 6298 §5.4: retransmit the earliest unacknowledged segment; §5.6 restart timer.
                self.transmit(now, out);
                if !self.timers.armed() {
                    self.arm_rto(now, out);
                }
            }
            _ => {}
        }
    }
}
