//! The sender's ECN state (RFC 3168 §6.1): negotiation on the SYN-ACK, the once-per-window rule for
//! reacting to ECN-Echo, CWR on the next new data segment, and the hold after an ECN-Echo at a
//! one-segment window. The reduction itself is the congestion controller's `on_ecn`.
use crate::packet::tcp_flags as F;

#[derive(Clone, Debug, Default)]
pub struct EcnState {
    /// ECN was negotiated (RFC 3168 §6.1.1).
    pub ok: bool,
    /// End of the window in which the last reduction happened (one reduction per window).
    recover: u64,
    /// CWR goes on the next new data segment (RFC 3168 §6.1.2).
    cwr_pending: bool,
    /// RFC 3168 §6.1.2: ECN-Echo at a one-segment window → no new data until the timer expires.
    pub hold: bool,
    /// The ACK being processed carries ECE (no window growth on it, RFC 3168 §6.1.2).
    pub ack_ece: bool,
}

impl EcnState {
    /// RFC 3168 §6.1.1: the SYN-ACK of an ECN-setup exchange has ECE and not CWR.
    pub fn negotiate(&mut self, wanted: bool, synack_flags: u8) { self.ok = wanted && synack_flags & F::ECE != 0 && synack_flags & F::CWR == 0; }

    /// Reads an ACK's flags: true if it carries ECN-Echo on an ECN connection.
    pub fn on_ack_flags(&mut self, flags: u8) -> bool {
        self.ack_ece = self.ok && flags & F::ECE != 0;
        self.ack_ece
    }

    /// RFC 3168 §6.1.2: react at most once per window of data (SND.UNA beyond the end of the
    /// window of the last reduction), and not while loss recovery has already reduced (`open`).
    pub fn may_react(&self, open: bool, snd_una: u64) -> bool { open && snd_una > self.recover }

    /// A reduction happened with `snd_nxt` the end of its window: CWR on the next new data.
    pub fn reacted(&mut self, snd_nxt: u64) {
        self.recover = snd_nxt;
        self.cwr_pending = true;
    }

    /// Loss recovery's reduction counts as this window's (RFC 3168 §6.1.2).
    pub fn share_reduction(&mut self, snd_nxt: u64) { self.recover = snd_nxt; }

    /// Whether a segment goes out ECT and with CWR: RFC 3168 §6.1.5, only new data is ECT;
    /// §6.1.2, the first such segment after a reduction carries CWR.
    pub fn mark_segment(&mut self, is_rexmit: bool, payload: u32) -> (bool, bool) {
        let ect = self.ok && !is_rexmit && payload > 0;
        let cwr = ect && std::mem::take(&mut self.cwr_pending);
        (ect, cwr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let mut e = EcnState::default();
        e.negotiate(true, F::SYN | F::ACK | F::ECE);
        assert!(e.ok);
        e.negotiate(true, F::SYN | F::ACK | F::ECE | F::CWR);
        assert!(!e.ok, "ECE and CWR both set is a non-ECN SYN-ACK reflected back");
        e.negotiate(false, F::SYN | F::ACK | F::ECE);
        assert!(!e.ok);
        assert!(!e.on_ack_flags(F::ACK | F::ECE), "no ECN: ECE ignored");
    }

    /// One reduction per window: after reacting with SND.NXT = 10001, ECE on ACKs up to 10001
    /// is ignored; the next window's ECE counts. CWR goes on the first new data segment only,
    /// never on a retransmission.
    #[test]
    fn once_per_window_and_cwr() {
        let mut e = EcnState { ok: true, ..Default::default() };
        assert!(e.on_ack_flags(F::ACK | F::ECE));
        assert!(e.may_react(true, 1001));
        assert!(!e.may_react(false, 1001), "in recovery");
        e.reacted(10_001);
        assert!(!e.may_react(true, 10_001));
        assert!(e.may_react(true, 10_002));
        assert_eq!(e.mark_segment(true, 1000), (false, false), "retransmission: not ECT, CWR kept");
        assert_eq!(e.mark_segment(false, 0), (false, false), "FIN: no payload, not ECT");
        assert_eq!(e.mark_segment(false, 1000), (true, true));
        assert_eq!(e.mark_segment(false, 1000), (true, false));
        e.share_reduction(20_001);
        assert!(!e.may_react(true, 20_001));
    }
}
