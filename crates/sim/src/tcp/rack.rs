//! RACK-TLP loss detection (RFC 8985) as Linux does it (`net/ipv4/tcp_recovery.c`, the default
//! `net.ipv4.tcp_recovery = 1`, and `tcp_schedule_loss_probe` in `net/ipv4/tcp_output.c`,
//! `net.ipv4.tcp_early_retrans = 3`).
//!
//! **RACK** marks a segment lost when a segment *sent after it* has been delivered (ACKed or
//! SACKed) and more than RACK.rtt + reo_wnd has passed since it was sent: time order instead of
//! the duplicate-ACK count. reo_wnd is Linux's `tcp_rack_reo_wnd`: 0 while no reordering has been
//! seen and either the sender is in recovery or at least DupThresh segments are SACKed (the
//! classic fast-retransmit point), otherwise min(min_rtt / 4 · steps, SRTT). `steps` stays 1: it
//! grows only on DSACK, which the simulator's receiver does not send. A segment that is not yet
//! overdue arms the reordering timer for when it will be (Linux adds `TCP_TIMEOUT_MIN_US`, 2 ms).
//!
//! **TLP** sends a probe when the ACK stream stops at the tail of a flight: PTO = 2·SRTT plus
//! 2 ms, or plus the minimum RTO (200 ms) when a single segment is out (the receiver may be
//! delaying its ACK), never later than the RTO would fire. The probe is new data if there is some
//! (sent beyond cwnd), else a retransmission of the last segment; an ACK above the probe's
//! SND.NXT shows the probe repaired a loss, and the window is reduced once (Linux's TLP recovery).
use super::scoreboard::{Scoreboard, Seg};
use super::DUP_THRESH;
use crate::time::Time;

/// `TCP_TIMEOUT_MIN_US`: added to the reordering timer (and to the PTO with more than one segment
/// in flight).
pub const TIMEOUT_MIN: Time = Time::from_ms(2);
/// RFC 8985 §6.2: the reordering window is a quarter of the minimum RTT (Linux: `min_rtt >> 2`).
pub const REO_WND_DIVISOR: u64 = 4;
/// RFC 8985 §7.2: PTO = 2·SRTT.
pub const PTO_SRTT_FACTOR: u64 = 2;

/// RACK's state (Linux's `tcp_sock.rack`) and the TLP episode.
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Send time and end of the most recently sent segment delivered (RACK.xmit_ts, RACK.end_seq).
    xmit: Option<Time>,
    end_seq: u64,
    /// RTT of the segment that last advanced RACK (RACK.rtt, Linux's `rack.rtt_us`).
    rtt: Time,
    /// RACK advanced since the last detection (Linux's `rack.advanced`).
    advanced: bool,
    /// Reordering was observed (Linux's `reord_seen`): the window is never 0 afterwards.
    pub reord_seen: bool,
    /// Above every segment's end at or beyond which no segment was ever retransmitted, so send
    /// times grow with sequence there and a scan can stop at the first recent one.
    rexmit_high: u64,
    /// SND.NXT when the outstanding loss probe was sent (`tlp_high_seq`); None when none is out.
    pub tlp_high_seq: Option<u64>,
    /// The outstanding probe was a retransmission (`tlp_retrans`).
    pub tlp_retrans: bool,
}

/// Linux's `tcp_skb_sent_after`: (t1, seq1) was sent after (t2, seq2), sequence breaking ties.
fn sent_after(t1: Time, t2: Time, seq1: u64, seq2: u64) -> bool { t1 > t2 || (t1 == t2 && seq1 > seq2) }

impl Rack {
    /// RACK.rtt and RACK.xmit_ts, once some segment was delivered.
    pub fn state(&self) -> Option<(Time, Time, u64)> { self.xmit.map(|x| (self.rtt, x, self.end_seq)) }

    /// RACK.rtt (Linux's `rack.rtt_us`): 0 before any delivery.
    pub fn rtt(&self) -> Time { self.rtt }

    /// `tcp_undo_cwnd_reduction`: "Force RACK to re-exam losses" on the next ACK.
    pub fn force_advanced(&mut self) { self.advanced = true; }

    /// A segment was (re)transmitted: note how far retransmissions reach.
    pub fn on_retransmit(&mut self, g: &Seg) { self.rexmit_high = self.rexmit_high.max(g.end()); }

    /// `tcp_rack_advance`: segment `g` was newly delivered at `now`. A retransmitted segment
    /// delivered sooner than the minimum RTT is ambiguous (the original may have arrived) and is
    /// ignored.
    pub fn advance(&mut self, g: &Seg, now: Time, min_rtt: Option<Time>) {
        let rtt = now - g.sent;
        if g.ever_rexmit && min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if self.xmit.is_none_or(|x| sent_after(g.sent, x, g.end(), self.end_seq)) {
            self.xmit = Some(g.sent);
            self.end_seq = g.end();
        }
    }

    /// Reordering check of `tcp_sacktag_one` / `tcp_clean_rtx_queue`: a never-retransmitted
    /// segment delivered below data SACKed before this ACK arrived out of order.
    pub fn check_reordering(&mut self, g: &Seg, prior_high_sacked: u64) {
        if !g.ever_rexmit && g.seq < prior_high_sacked {
            self.reord_seen = true;
        }
    }

    /// `tcp_rack_reo_wnd`.
    pub fn reo_wnd(&self, in_recovery: bool, sacked_segs: u64, min_rtt: Option<Time>, srtt: Option<Time>) -> Time {
        if !self.reord_seen && (in_recovery || sacked_segs >= DUP_THRESH as u64) {
            return Time::ZERO;
        }
        let Some(m) = min_rtt else { return Time::ZERO };
        let w = Time(m.0 / REO_WND_DIVISOR);
        srtt.map_or(w, |s| w.min(s))
    }

    /// Runs detection only if RACK advanced since the last run (`tcp_rack_mark_lost`).
    pub fn take_advanced(&mut self) -> bool { std::mem::take(&mut self.advanced) }

    /// `tcp_rack_detect_loss`: marks lost every segment sent before RACK.xmit_ts that is overdue
    /// (RACK.rtt + reo_wnd since its transmission); returns the longest wait among those not yet
    /// overdue (the reordering timer), and how many retransmissions were found lost again.
    pub fn detect_loss(&self, sb: &mut Scoreboard, reo_wnd: Time, now: Time) -> (Option<Time>, u64) {
        let Some(xmit) = self.xmit else { return (None, 0) };
        let mut wait: Option<Time> = None;
        let mut lost_rexmits = 0;
        for i in 0..sb.len() {
            let g = sb.get(i);
            // Delivered, or marked lost and waiting for its retransmission.
            if g.sacked || (g.lost && !g.rexmit) {
                continue;
            }
            if !sent_after(xmit, g.sent, self.end_seq, g.end()) {
                if g.seq >= self.rexmit_high {
                    // Original transmissions from here on: all sent later still.
                    break;
                }
                continue;
            }
            // remaining = RACK.rtt + reo_wnd − (now − xmit_ts(segment)), lost when ≤ 0.
            let deadline = g.sent + self.rtt + reo_wnd;
            if deadline <= now {
                if g.rexmit {
                    sb.mark_retransmission_lost(i);
                    lost_rexmits += 1;
                } else {
                    sb.mark_lost(i);
                }
            } else {
                let remaining = deadline - now;
                wait = Some(wait.map_or(remaining, |w| w.max(remaining)));
            }
        }
        (wait, lost_rexmits)
    }

    /// A recovery or loss episode begins: no probe is outstanding any more (Linux resets
    /// `tlp_high_seq` in `tcp_init_cwnd_reduction` and `tcp_enter_loss`).
    pub fn end_probe(&mut self) { self.tlp_high_seq = None; }
}

/// `tcp_schedule_loss_probe`'s timeout: 2·SRTT plus `TCP_TIMEOUT_MIN` (2 ms), or plus the minimum
/// RTO when one segment is out (room for a delayed ACK); 1 s (`TCP_TIMEOUT_INIT`) without an RTT
/// sample. The caller caps it at the time left until the RTO.
pub fn pto(srtt: Option<Time>, segs_out: usize, min_rto: Time) -> Time {
    match srtt {
        Some(s) => s.mul(PTO_SRTT_FACTOR) + if segs_out == 1 { min_rto } else { TIMEOUT_MIN },
        None => Time::from_secs(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    fn ms(x: u64) -> Time { Time::from_ms(x) }

    /// Segments 0..n of one MSS, segment i sent at `sent(i)`.
    fn board(n: u64, sent: impl Fn(u64) -> Time) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(Seg::new(1 + i * MSS, MSS as u32, false, sent(i)));
        }
        b
    }
    fn sack(b: &mut Scoreboard, r: &mut Rack, a: u64, e: u64, now: Time) {
        let blk = [(1 + a * MSS, 1 + e * MSS)];
        let mut got = vec![];
        b.sack(&blk, 1, |g| got.push(g.clone()));
        for g in &got {
            r.advance(g, now, Some(ms(100)));
        }
    }
    fn lost(b: &Scoreboard) -> Vec<u64> { b.iter().filter(|g| g.lost).map(|g| (g.seq - 1) / MSS).collect() }

    /// reo_wnd by hand: min_rtt 100 ms → 25 ms, capped by SRTT; 0 at DupThresh SACKed segments
    /// or in recovery while no reordering was seen; min_rtt/4 again once reordering was seen.
    #[test]
    fn reordering_window() {
        let mut r = Rack::default();
        assert_eq!(r.reo_wnd(false, 1, Some(ms(100)), Some(ms(120))), ms(25));
        assert_eq!(r.reo_wnd(false, 1, Some(ms(100)), Some(ms(20))), ms(20), "capped by SRTT");
        assert_eq!(r.reo_wnd(false, 3, Some(ms(100)), Some(ms(120))), Time::ZERO);
        assert_eq!(r.reo_wnd(true, 1, Some(ms(100)), Some(ms(120))), Time::ZERO);
        r.reord_seen = true;
        assert_eq!(r.reo_wnd(true, 5, Some(ms(100)), Some(ms(120))), ms(25));
        assert_eq!(r.reo_wnd(false, 1, Some(ms(41)), Some(ms(41))), Time::from_us(10_250));
    }

    /// Segments 0..4 sent 1 ms apart from t = 0, segment 0 lost. The SACK of segment 1 at 100 ms
    /// (RACK.rtt = 99 ms, xmit 1 ms) leaves segment 0 due at 0 + 99 + 25 = 124 ms: not lost yet,
    /// wait 24 ms. At 124 ms exactly it is lost (remaining ≤ 0); segments sent after RACK.xmit
    /// (2, 3) never are.
    #[test]
    fn single_loss_at_the_reordering_window() {
        let mut b = board(4, ms);
        let mut r = Rack::default();
        sack(&mut b, &mut r, 1, 2, ms(100));
        assert_eq!(r.state(), Some((ms(99), ms(1), 1 + 2 * MSS)));
        let w = r.reo_wnd(false, 1, Some(ms(100)), Some(ms(100)));
        assert_eq!(w, ms(25));
        assert!(r.take_advanced());
        assert_eq!(r.detect_loss(&mut b, w, ms(100)), (Some(ms(24)), 0));
        assert!(lost(&b).is_empty());
        assert_eq!(r.detect_loss(&mut b, w, ms(124) - Time(1)), (Some(Time(1)), 0));
        assert!(lost(&b).is_empty());
        assert_eq!(r.detect_loss(&mut b, w, ms(124)), (None, 0));
        assert_eq!(lost(&b), vec![0]);
        assert_eq!(b.lost_total(), MSS);
    }

    /// Three SACKed segments and no reordering seen: reo_wnd = 0, so the hole is lost at once
    /// (the dupthresh point), and a burst sent in the same instant breaks ties by sequence.
    #[test]
    fn dupthresh_equivalent_and_same_instant_burst() {
        let mut b = board(5, |_| ms(10));
        let mut r = Rack::default();
        sack(&mut b, &mut r, 1, 4, ms(110));
        let w = r.reo_wnd(false, 3, Some(ms(100)), Some(ms(100)));
        assert_eq!(w, Time::ZERO);
        assert_eq!(r.detect_loss(&mut b, w, ms(110)), (None, 0));
        assert_eq!(lost(&b), vec![0], "segment 4 was sent after RACK.end_seq's segment in the same instant");
    }

    /// A retransmission is lost again when a segment sent after it is delivered and it is overdue
    /// (what Linux's RACK does in place of `tcp_mark_lost_retrans`); a retransmission SACKed
    /// sooner than min_rtt does not advance RACK.
    #[test]
    fn lost_retransmission() {
        let mut b = board(6, ms);
        let mut r = Rack::default();
        b.mark_lost(0);
        b.get_mut(0).rexmit = true;
        b.get_mut(0).ever_rexmit = true;
        b.get_mut(0).sent = ms(200);
        r.on_retransmit(b.get(0));
        // Segment 5 (original, sent at 5 ms) SACKed at 150: does not make the 200 ms retransmission lost.
        sack(&mut b, &mut r, 5, 6, ms(150));
        assert_eq!(r.detect_loss(&mut b, Time::ZERO, ms(150)).1, 0);
        // A segment retransmitted at 210 and SACKed at 250 (40 ms < min_rtt 100) is ignored.
        let mut g = b.get(1).clone();
        g.ever_rexmit = true;
        g.sent = ms(210);
        let before = r.state();
        r.advance(&g, ms(250), Some(ms(100)));
        assert_eq!(r.state(), before);
        // A new segment sent at 220, delivered at 320: the 200 ms retransmission,
        // due at 200 + 100 = 300, is lost again.
        let g = Seg::new(1 + 6 * MSS, MSS as u32, false, ms(220));
        r.advance(&g, ms(320), Some(ms(100)));
        assert_eq!(r.detect_loss(&mut b, Time::ZERO, ms(320)), (None, 1));
        assert!(b.get(0).lost && !b.get(0).rexmit, "eligible for retransmission again");
    }

    /// PTO by hand: SRTT 40.5 ms → 2·40.5 + 2 = 83 ms with several segments out; one segment
    /// out adds the 200 ms minimum RTO instead of 2 ms; no sample → 1 s.
    #[test]
    fn probe_timeout() {
        let s = Some(Time::from_us(40_500));
        assert_eq!(pto(s, 10, ms(200)), ms(83));
        assert_eq!(pto(s, 1, ms(200)), ms(281));
        assert_eq!(pto(None, 3, ms(200)), ms(1000));
    }

    /// Reordering: a never-retransmitted segment delivered below earlier SACKed data.
    #[test]
    fn reordering_detection() {
        let b = board(4, ms);
        let mut r = Rack::default();
        r.check_reordering(b.get(2), 1 + 2 * MSS);
        assert!(!r.reord_seen, "at the highest SACKed point: not below it");
        r.check_reordering(b.get(1), 1 + 2 * MSS);
        assert!(r.reord_seen);
    }
}
