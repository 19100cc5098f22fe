//! The retransmission timeout and the Loss state as Linux handles them (`net/ipv4/tcp_input.c`:
//! `tcp_enter_loss`, `tcp_timeout_mark_lost`, `tcp_process_loss`, `tcp_try_undo_loss`,
//! `tcp_try_undo_recovery`, `tcp_undo_cwnd_reduction`), each rule behind its stack switch:
//!
//! - `rto_rack`: with RACK the timeout marks lost only the head and the segments already due by
//!   RACK's clock (sent more than RACK.rtt ago, `tcp_rack_skb_timeout`); the rest stay in flight,
//!   and cwnd = what is in flight + 1 segment, so that the head's retransmission can go.
//! - `frto` (RFC 5682 §3, SACK-enhanced): when the first ACK after the timeout advances SND.UNA,
//!   new data goes out instead of retransmissions (step 2b); if the next ACK acknowledges or
//!   SACKs data sent before the timeout and never retransmitted, the timeout was spurious and is
//!   undone (step 3b); a SACK of new data only or a duplicate ACK shows the loss was real (3a).
//!   `frto_response = "rate-halving"` (Linux before 3.10) keeps the timeout's reduction instead.
//! - `loss_undo`: an ACK whose timestamp echo predates the episode's first retransmission
//!   (`tcp_packet_delayed`) shows the originals arrived: the reduction is undone.
//!
//! Without them the timeout is RFC 6675 §5.1's: every unSACKed segment lost, resent in order.
use super::*;

/// Linux's `undo_marker` with `prior_cwnd` / `prior_ssthresh`: what an undo restores (None after
/// an ECN-Echo, whose reduction must stand).
#[derive(Copy, Clone, Debug)]
pub(super) struct Undo {
    prior: Option<(u64, u64)>,
}

/// What the ACK being processed did, as `tcp_process_loss` reads its flags.
#[derive(Copy, Clone, Debug)]
pub(super) struct LossAck {
    /// FLAG_SND_UNA_ADVANCED.
    pub advanced: bool,
    /// FLAG_DATA_SACKED: it SACKed new data.
    pub sacked: bool,
    /// num_dupack > 0: a pure duplicate (no advance, no data, no window change).
    pub dup: bool,
    /// TSecr of the ACK when the option is in use and non-zero.
    pub tsecr: Option<u32>,
}

/// RFC 1982 / Linux `before()` on 32-bit timestamps.
fn ts_before(a: u32, b: u32) -> bool { (a.wrapping_sub(b) as i32) < 0 }

impl Sender {
    /// `tcp_current_ssthresh`: ssthresh in a window reduction, else max(ssthresh, ¾·cwnd).
    fn current_ssthresh(&self) -> u64 {
        if self.ca == CaState::Recovery {
            return self.cs.ssthresh;
        }
        let segs = self.cs.cwnd / self.cs.mss;
        self.cs.ssthresh.max(((segs >> 1) + (segs >> 2)) * self.cs.mss)
    }

    /// `tcp_init_undo` with the priors of `tcp_enter_recovery` / `tcp_enter_loss` (kept only
    /// where something may undo: F-RTO or the timestamps' undo).
    pub(super) fn init_undo(&mut self) {
        if self.cfg.loss_undo || self.cfg.frto {
            self.undo = Some(Undo { prior: Some((self.cs.cwnd, self.current_ssthresh())) });
        }
    }

    /// An ECN-Echo outside Open: the reduction it asks for cannot be undone (`tcp_fastretrans_alert`
    /// step A, `prior_ssthresh = 0`).
    pub(super) fn forbid_undo_restore(&mut self) {
        if let Some(u) = self.undo.as_mut() {
            u.prior = None;
        }
    }

    /// The timeout's entry into Loss (`tcp_enter_loss`) for a connection with data out: marks
    /// what is lost, reduces (once per window), and decides whether F-RTO runs.
    pub(super) fn enter_loss(&mut self, now: Time) {
        let new_recovery = self.ca == CaState::Open;
        let first = self.timers.rto_series == 0;
        // tcp_enter_loss: "Reduce ssthresh if it has not yet been made inside this window" —
        // the priors an undo restores are taken then.
        if self.ca == CaState::Open || self.snd_una >= self.rec.recover || (self.ca == CaState::Loss && first) {
            self.init_undo();
        }
        self.cs.flight = self.flight_size();
        // RFC 5681 §3.1: ssthresh from eq. 4 (held on repeated timeouts), cwnd = 1 SMSS.
        self.cs.pipe = self.pipe();
        self.cc_react(Congestion::Timeout { first });
        if self.rack_on() && self.cfg.rto_rack {
            // tcp_timeout_mark_lost: skip skbs with tcp_rack_skb_timeout(tp, skb, 0) > 0, i.e.
            // sent less than RACK.rtt ago; cwnd = tcp_packets_in_flight + 1.
            let rtt = self.rack.rtt();
            self.sb.mark_lost_on_timeout(|g| g.sent + rtt > now);
            self.cs.cwnd = self.sb.pipe() + self.cs.mss;
        } else {
            // Every unSACKed segment is presumed lost and resent in order (RFC 6675 §5.1).
            self.sb.mark_all_lost();
        }
        // F-RTO (RFC 5682 §3.1 step 1): not when the timeout interrupts a recovery, except a
        // repeated timeout of the same segment (§3.2).
        self.frto = self.sack && self.cfg.frto && (new_recovery || !first);
        self.frto_new = false;
    }

    /// `tcp_may_undo`: an undo is pending and the ACK's TSecr predates the episode's first
    /// retransmission (`tcp_packet_delayed`; DSACK's route is not modelled).
    fn may_undo(&self, tsecr: Option<u32>) -> bool {
        let delayed = matches!((self.retrans_stamp, tsecr), (Some(r), Some(e)) if ts_before(e, r));
        self.cfg.loss_undo && self.undo.is_some() && delayed
    }

    /// `tcp_undo_cwnd_reduction`: cwnd back to the algorithm's undo value (`tcp_reno_undo_cwnd`:
    /// max(cwnd, prior_cwnd)), ssthresh to at least its prior value, and RACK looks again.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_lost();
        }
        if let Some(Undo { prior: Some((cwnd, ssthresh)) }) = self.undo {
            self.cs.cwnd = self.cc.undo_cwnd(&self.cs, cwnd);
            self.cs.ssthresh = self.cs.ssthresh.max(ssthresh);
        }
        self.undo = None;
        self.rack.force_advanced();
    }

    /// `tcp_try_undo_loss`: undo if F-RTO found the timeout spurious or the timestamps show it.
    fn try_undo_loss(&mut self, frto_undo: bool, tsecr: Option<u32>) -> bool {
        if !(frto_undo || self.may_undo(tsecr)) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        self.stats.loss_undos += 1;
        if frto_undo {
            self.stats.spurious_rtos += 1;
        }
        self.leave_loss();
        true
    }

    /// The timeout's episode is over without waiting for RecoveryPoint (an undo, or F-RTO's
    /// verdict kept as a reduction): back to Open, the backoff series reset.
    fn leave_loss(&mut self) {
        self.timers.rto_series = 0;
        self.ca = CaState::Open;
        self.end_episode();
    }

    /// F-RTO found the timeout spurious and the stack keeps the reduction (`FrtoResponse::RateHalving`,
    /// Linux before 3.10: `tcp_ratehalving_spur_to_response` → `tcp_enter_cwr(sk, 0)`, then
    /// `tcp_cwnd_down` and `tcp_complete_cwr`): the segments the timeout marked are in flight again
    /// (3.2's F-RTO never marked them), ssthresh stays as the timeout set it, cwnd ends at
    /// min(in flight + 1 segment, ssthresh), and nothing undoes it later (`tcp_enter_cwr` clears
    /// undo_marker). The descent to that cwnd (one segment per two ACKs) and CWR's hold on growth
    /// until the round ends are not modelled: the sender is Open at once.
    fn frto_keep_reduction(&mut self) {
        self.sb.unmark_lost();
        self.cs.cwnd = (self.sb.pipe() + self.cs.mss).min(self.cs.ssthresh).max(self.cs.mss);
        self.undo = None;
        self.rack.force_advanced();
        self.stats.spurious_rtos += 1;
        self.leave_loss();
    }

    /// `tcp_process_loss` for an ACK in the Loss state (SACK connections): undo, F-RTO's steps
    /// 2 and 3, or the end of the episode once RecoveryPoint is acknowledged.
    pub(super) fn process_loss(&mut self, a: LossAck) {
        let recovered = self.snd_una >= self.rec.recover;
        if a.advanced && self.try_undo_loss(false, a.tsecr) {
            return;
        }
        if self.frto {
            // Step 3b: never-retransmitted data sent before the timeout was (S)ACKed.
            if self.ack_orig {
                if self.cfg.frto_response == FrtoResponse::RateHalving {
                    self.frto_keep_reduction();
                    return;
                }
                if self.try_undo_loss(true, a.tsecr) {
                    return;
                }
            }
            if self.snd_nxt > self.rec.recover {
                if a.sacked || a.dup {
                    // Step 3a: the loss was real.
                    self.frto = false;
                }
            } else if a.advanced && !recovered {
                self.rec.recover = self.snd_nxt;
                // Step 2b: new data if there is some and the peer's window takes it.
                let more = self.snd_nxt < self.data_end || self.fin_due();
                if more && self.snd_una + self.rwnd > self.snd_nxt {
                    self.frto_new = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            // tcp_try_undo_recovery (step 2a): the episode ends, undone if the timestamps allow.
            if self.may_undo(a.tsecr) {
                self.undo_cwnd_reduction(false);
                self.stats.loss_undos += 1;
            }
            self.ca = CaState::Open;
            self.end_episode();
        }
    }

    /// `tcp_xmit_recovery`: after F-RTO's step 2b new data only; if none went out, F-RTO ends and
    /// the lost segments are retransmitted as usual.
    pub(super) fn transmit_after_ack(&mut self, now: Time, out: &mut Output) {
        if !std::mem::take(&mut self.frto_new) {
            self.transmit(now, out);
            return;
        }
        self.new_data_only = true;
        self.transmit(now, out);
        self.new_data_only = false;
        if self.snd_nxt <= self.rec.recover {
            self.frto = false;
            self.transmit(now, out);
        }
    }
}
