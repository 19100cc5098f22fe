//! The sender's timer set. As Linux's `icsk_retransmit_timer`, one timer serves several purposes,
//! one at a time: the retransmission timer (RFC 6298), the persist timer that probes a zero window
//! (RFC 9293 §3.8.6.1, the same timer with its backoff), RACK's reordering timer (RFC 8985 §6.2
//! step 5, Linux's `ICSK_TIME_REO_TIMEOUT`) and the tail loss probe (RFC 8985 §7.2,
//! `ICSK_TIME_LOSS_PROBE`). [`Timers::fire`] says which one expired (`tcp_write_timer_handler`).
//! The engine keeps one timer per key and re-arming replaces it, so at most one is pending.
//! Also here: the SYN's send time and retransmission count, and the run of timeouts without
//! progress (RFC 5681 §3.1).
use super::TimerCmd;
use crate::time::Time;

/// What the pending timer is for (Linux's `icsk_pending`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TimerKind {
    /// Retransmission timeout (and the persist timer, see [`Timers::persist`]).
    #[default]
    Rto,
    /// RACK reordering window expiry: run RACK's loss detection again.
    Reorder,
    /// Tail loss probe.
    LossProbe,
}

#[derive(Clone, Debug, Default)]
pub struct Timers {
    at: Option<Time>,
    kind: TimerKind,
    /// The RTO timer runs as the persist timer (zero window, nothing outstanding).
    pub persist: bool,
    /// When the (last) SYN was sent.
    pub syn_sent_at: Time,
    /// SYN retransmissions so far.
    pub syn_retx: u32,
    /// Consecutive timeouts without progress (RFC 5681: ssthresh held on repeats).
    pub rto_series: u32,
}

impl Timers {
    /// Arms the timer for `kind` at `at`, replacing whatever was pending.
    pub fn arm(&mut self, kind: TimerKind, at: Time, cmd: &mut TimerCmd) {
        self.at = Some(at);
        self.kind = kind;
        *cmd = TimerCmd::Set(at);
    }

    /// Stops the timer.
    pub fn cancel(&mut self, cmd: &mut TimerCmd) {
        self.at = None;
        *cmd = TimerCmd::Cancel;
    }

    /// Whether a timer is pending.
    pub fn armed(&self) -> bool { self.at.is_some() }
    /// The pending timer, if any.
    pub fn pending(&self) -> Option<(TimerKind, Time)> { self.at.map(|t| (self.kind, t)) }

    /// The engine fired the timer: it is no longer pending; returns what it was for.
    pub fn fire(&mut self) -> TimerKind {
        self.at = None;
        self.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One timer, several purposes: the last arm wins, fire() reports its purpose once, cancel
    /// leaves nothing pending; each call tells the engine what to do.
    #[test]
    fn one_timer_many_purposes() {
        let mut t = Timers::default();
        let mut cmd = TimerCmd::Keep;
        assert!(!t.armed());
        t.arm(TimerKind::Rto, Time::from_ms(300), &mut cmd);
        assert_eq!(cmd, TimerCmd::Set(Time::from_ms(300)));
        t.arm(TimerKind::LossProbe, Time::from_ms(87), &mut cmd);
        assert_eq!(t.pending(), Some((TimerKind::LossProbe, Time::from_ms(87))));
        assert_eq!(cmd, TimerCmd::Set(Time::from_ms(87)));
        assert_eq!(t.fire(), TimerKind::LossProbe);
        assert!(!t.armed());
        t.arm(TimerKind::Reorder, Time::from_ms(5), &mut cmd);
        t.cancel(&mut cmd);
        assert_eq!(cmd, TimerCmd::Cancel);
        assert_eq!(t.pending(), None);
    }
}
