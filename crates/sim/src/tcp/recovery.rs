//! Loss-recovery bookkeeping of the sender: the duplicate-ACK count and RecoveryPoint of RFC 6675
//! §5 / RFC 6582 §3.2, the bytes sent by limited transmit (RFC 5681 §3.2 step 2), and Proportional
//! Rate Reduction (RFC 6937), which spreads the window reduction over the recovery round trip.
//! The scoreboard (`scoreboard.rs`) says which segments are lost; this says when recovery starts
//! and ends and how much may be sent meanwhile.
use super::DUP_THRESH;

/// RFC 6937 state for one recovery episode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// prr_delivered: bytes delivered to the receiver since recovery began.
    pub delivered: u64,
    /// prr_out: bytes sent since recovery began.
    pub out: u64,
    /// RecoverFS: FlightSize when recovery began.
    pub recover_fs: u64,
}

impl Prr {
    /// RFC 6937 §3 on entering recovery: prr_delivered = prr_out = 0, RecoverFS = FlightSize.
    pub fn start(&mut self, flight: u64) { *self = Prr { delivered: 0, out: 0, recover_fs: flight }; }

    /// RFC 6937 §3 on each ACK in recovery: the new cwnd = pipe + sndcnt, sndcnt counted in whole
    /// segments as Linux does (a byte count below one SMSS would otherwise never let a segment
    /// out until it accumulates).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        self.delivered += delivered;
        let sndcnt = prr_sndcnt(self.delivered, self.out, ssthresh, self.recover_fs, pipe, delivered, mss);
        pipe + sndcnt.div_ceil(mss) * mss
    }
}

/// RFC 6937 §3.1, the amount PRR lets out on one ACK in recovery (any consistent unit: bytes here,
/// packets in Linux's `tcp_cwnd_reduction`).
pub fn prr_sndcnt(prr_delivered: u64, prr_out: u64, ssthresh: u64, recover_fs: u64, pipe: u64, delivered: u64, mss: u64) -> u64 {
    if pipe > ssthresh {
        // sndcnt = CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out
        let num = prr_delivered as u128 * ssthresh as u128;
        (crate::time::div_ceil_u128(num, recover_fs.max(1)) as u64).saturating_sub(prr_out)
    } else {
        // PRR-SSRB: limit = MAX(prr_delivered − prr_out, DeliveredData) + MSS
        let limit = prr_delivered.saturating_sub(prr_out).max(delivered) + mss;
        (ssthresh - pipe).min(limit)
    }
}

/// Duplicate ACKs, RecoveryPoint and limited-transmit bytes.
#[derive(Clone, Debug, Default)]
pub struct LossRecovery {
    /// Duplicate ACKs since the last new ACK.
    pub dupacks: u32,
    /// RecoveryPoint (RFC 6675) / recover (RFC 6582): HighData when the last recovery (or RTO)
    /// began; 0 before any.
    pub recover: u64,
    /// Bytes sent by limited transmit since the last new ACK (RFC 5681 §3.2 step 2: not part of
    /// the FlightSize that sets ssthresh).
    pub lt_bytes: u64,
    pub prr: Prr,
}

impl LossRecovery {
    /// RFC 5681 §3.2 step 2 / RFC 6675 §5 step 3(a) / RFC 6582 §3.2 step 2: DupThresh duplicate
    /// ACKs start recovery, but only once per window (SND.UNA beyond RecoveryPoint).
    pub fn dupthresh_reached(&self, snd_una: u64) -> bool { self.dupacks >= DUP_THRESH && self.may_enter(snd_una) }

    /// A new recovery may begin: none yet, or SND.UNA passed the last RecoveryPoint.
    pub fn may_enter(&self, snd_una: u64) -> bool { snd_una > self.recover || self.recover == 0 }

    /// RFC 3042: on the first two duplicate ACKs, up to two new segments beyond cwnd (bytes).
    pub fn limited_transmit_allowance(&self, mss: u64) -> u64 {
        if self.dupacks > 0 && self.dupacks < DUP_THRESH {
            self.dupacks.min(2) as u64 * mss
        } else {
            0
        }
    }

    /// A new cumulative ACK: the duplicate count and limited-transmit bytes start again.
    pub fn on_new_ack(&mut self) {
        self.dupacks = 0;
        self.lt_bytes = 0;
    }

    /// Recovery (or the post-RTO slow start) begins with `snd_nxt` as RecoveryPoint.
    pub fn begin(&mut self, snd_nxt: u64, flight: u64) {
        self.recover = snd_nxt;
        self.prr.start(flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6937's arithmetic in packets (Linux's unit), CUBIC's β = 0.7: RecoverFS = 10,
    /// ssthresh = 7. The first delivered packet allows CEIL(1·7/10) = 1 (a floor would send
    /// nothing); after 3 delivered and 2 sent, CEIL(2.1) − 2 = 1; after 10 delivered and 7 sent, 0.
    #[test]
    fn proportional_part_rounds_up() {
        assert_eq!(prr_sndcnt(1, 0, 7, 10, 9, 1, 1), 1);
        assert_eq!(prr_sndcnt(3, 2, 7, 10, 8, 1, 1), 1);
        assert_eq!(prr_sndcnt(10, 7, 7, 10, 8, 1, 1), 0);
        // Exact quotients are not rounded: 4·5/10 = 2, 2 already out.
        assert_eq!(prr_sndcnt(4, 2, 5, 10, 7, 1, 1), 0);
    }

    /// PRR-SSRB once pipe ≤ ssthresh: min(ssthresh − pipe, MAX(prr_delivered − prr_out, delivered) + MSS).
    #[test]
    fn slow_start_reduction_bound() {
        // ssthresh 7, pipe 3: room 4; bound max(6 − 5, 1) + 1 = 2.
        assert_eq!(prr_sndcnt(6, 5, 7, 10, 3, 1, 1), 2);
        // Room smaller than the bound: ssthresh 7, pipe 6, bound max(9 − 2, 1) + 1 = 8 → 1.
        assert_eq!(prr_sndcnt(9, 2, 7, 10, 6, 1, 1), 1);
    }

    /// RFC 6937 Appendix-style trace in bytes, Reno halving: RecoverFS 20 segments, ssthresh 10.
    /// Each ACK delivers one segment; while pipe > ssthresh PRR lets out one segment per two
    /// delivered (CEIL(d·10/20) − out), so cwnd alternates pipe and pipe + 1 segment.
    #[test]
    fn prr_halves_over_the_round_trip() {
        let m = 1000;
        let mut p = Prr::default();
        p.start(20 * m);
        // ACK 1: delivered 1, CEIL(0.5) = 1 → 1 segment may go: cwnd = pipe + 1.
        assert_eq!(p.on_ack(m, 18 * m, 10 * m, m), 19 * m);
        p.out += m;
        // ACK 2: delivered 2, CEIL(1) − 1 = 0 → cwnd = pipe.
        assert_eq!(p.on_ack(m, 17 * m, 10 * m, m), 17 * m);
        // ACK 3: delivered 3, CEIL(1.5) − 1 = 1.
        assert_eq!(p.on_ack(m, 16 * m, 10 * m, m), 17 * m);
        assert_eq!(p.delivered, 3 * m);
        // A partial segment of sndcnt still lets one whole segment out (rounded up in segments).
        let mut p = Prr { delivered: 0, out: 0, recover_fs: 3 * m };
        assert_eq!(p.on_ack(100, 5 * m, 2 * m, m), 6 * m);
    }

    /// DupThresh once per window; limited transmit on dupacks 1 and 2 only.
    #[test]
    fn entry_rules() {
        let mut r = LossRecovery::default();
        assert_eq!(r.limited_transmit_allowance(1000), 0);
        r.dupacks = 1;
        assert_eq!(r.limited_transmit_allowance(1000), 1000);
        r.dupacks = 2;
        assert_eq!(r.limited_transmit_allowance(1000), 2000);
        assert!(!r.dupthresh_reached(1));
        r.dupacks = 3;
        assert_eq!(r.limited_transmit_allowance(1000), 0);
        assert!(r.dupthresh_reached(1), "no recovery yet (recover = 0)");
        r.begin(5001, 5000);
        assert!(!r.dupthresh_reached(5001), "SND.UNA not beyond RecoveryPoint");
        assert!(r.dupthresh_reached(5002));
        assert_eq!(r.prr, Prr { delivered: 0, out: 0, recover_fs: 5000 });
        r.on_new_ack();
        assert_eq!((r.dupacks, r.lt_bytes), (0, 0));
    }
}
