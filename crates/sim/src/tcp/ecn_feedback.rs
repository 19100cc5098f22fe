//! How a data receiver's ACKs echo the CE marks it receives (the ECE flag), in one of two modes:
//!
//! - [`Mode::Classic`], RFC 3168 §6.1.3: a CE mark latches ECE on every ACK until a segment with
//!   CWR arrives. The first CE of an episode is acknowledged at once (Linux `__tcp_ecn_check_ce`
//!   enters quick-ACK mode then), so that a sender with a small window learns of it quickly.
//! - [`Mode::Dctcp`], RFC 8257 §3.2 and Linux `dctcp_ece_ack_update`: ECE on an ACK says whether
//!   the data it acknowledges arrived with CE, so that the sender can count marked bytes. The
//!   receiver keeps one bit of CE state; when an arriving data segment changes it, the segments
//!   still awaiting a delayed ACK are first acknowledged with the old state, and the new segment is
//!   acknowledged at once with the new state. Otherwise delayed ACKs go on as usual (each ACK
//!   then covers segments of one CE state). A data segment with CWR is also acknowledged at once
//!   (Linux `tcp_ecn_accept_cwr`), CWR otherwise changes nothing.
//!
//! The mode follows the connection's congestion control, as in Linux, where the receiver's own
//! congestion control (DCTCP's `cwnd_event` hook) selects the echo: `dctcp` (and `prague`) echo
//! per segment, every other algorithm as RFC 3168.
use super::TcpConfig;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Classic,
    Dctcp,
}

impl Mode {
    /// The echo a receiver of a connection configured by `cfg` uses.
    pub fn for_config(cfg: &TcpConfig) -> Mode {
        match cfg.cc.as_str() {
            "dctcp" | "prague" => Mode::Dctcp,
            _ => Mode::Classic,
        }
    }
}

/// The receiver's ECN echo state.
#[derive(Clone, Debug)]
pub struct EcnFeedback {
    mode: Mode,
    /// ECE to set on the next ACK (Classic: latched; DCTCP: the CE state of the last data segment).
    ece: bool,
}

impl EcnFeedback {
    pub fn new(mode: Mode) -> EcnFeedback { EcnFeedback { mode, ece: false } }
    pub fn mode(&self) -> Mode { self.mode }
    /// Set ECE on the ACK being built.
    pub fn ece(&self) -> bool { self.ece }

    /// Before a segment is taken in: true when the receiver must first acknowledge what it holds
    /// unacknowledged (if anything), with the current ECE, because this segment changes the DCTCP
    /// CE state (RFC 8257 §3.2: "send an immediate ACK with the ECN-Echo flag set/cleared for the
    /// previous packets").
    pub fn must_flush(&self, ce: bool, has_data: bool) -> bool { self.mode == Mode::Dctcp && has_data && ce != self.ece }

    /// Takes in the segment's CE and CWR; returns true when the ACK for it must go at once.
    pub fn on_segment(&mut self, ce: bool, cwr: bool, has_data: bool) -> bool {
        match self.mode {
            Mode::Classic => {
                // RFC 3168 §6.1.3: CWR ends the echo; CE (re)starts it, the first one ACKed at once.
                if cwr {
                    self.ece = false;
                }
                let first = ce && !self.ece;
                if ce {
                    self.ece = true;
                }
                first
            }
            Mode::Dctcp => {
                if !has_data {
                    return false;
                }
                let changed = ce != self.ece;
                self.ece = ce;
                changed || cwr
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_latches_until_cwr() {
        let mut f = EcnFeedback::new(Mode::Classic);
        assert!(!f.on_segment(false, false, true));
        assert!(!f.ece());
        assert!(f.on_segment(true, false, true), "first CE of an episode: at once");
        assert!(!f.on_segment(false, false, true));
        assert!(f.ece(), "latched over unmarked segments");
        assert!(!f.on_segment(true, false, true), "later CE: delayed ACKs as usual");
        assert!(!f.on_segment(false, true, true));
        assert!(!f.ece(), "CWR ends it");
        assert!(!f.must_flush(true, true), "Classic never flushes");
    }

    /// RFC 8257 §3.2's two-state machine over the CE sequence 0 0 1 1 0 1: ACKs forced at each
    /// change, the ones before a change flushed with the old state.
    #[test]
    fn dctcp_reflects_each_segment() {
        let mut f = EcnFeedback::new(Mode::Dctcp);
        let ces = [false, false, true, true, false, true];
        let mut log = vec![];
        for ce in ces {
            let flush = f.must_flush(ce, true);
            let before = f.ece();
            let now = f.on_segment(ce, false, true);
            log.push((flush, before, now, f.ece()));
        }
        assert_eq!(
            log,
            vec![
                (false, false, false, false),
                (false, false, false, false),
                (true, false, true, true),
                (false, true, false, true),
                (true, true, true, false),
                (true, false, true, true),
            ]
        );
        // CWR with data: ACK at once, state unchanged; segments without data change nothing.
        assert!(f.on_segment(true, true, true));
        assert!(f.ece());
        assert!(!f.must_flush(false, false));
        assert!(!f.on_segment(false, true, false));
        assert!(f.ece());
    }

    #[test]
    fn mode_follows_cc() {
        let mut c = TcpConfig::default();
        assert_eq!(Mode::for_config(&c), Mode::Classic);
        c.cc = "dctcp".into();
        assert_eq!(Mode::for_config(&c), Mode::Dctcp);
    }
}
