//! TX completions (TCP Small Queues' `tcp_wfree`), queued as events only when they can change
//! something at their own time (issue 31). A completion is *decided* when the engine fixes the
//! departure (or drop) of a watched packet, and draws its sequence number then, as the event it
//! stood for did. It becomes an event only while its agent says a completion would make it act
//! ([`crate::engine::Agent::tx_completion_wakes`]: a throttled TSQ sender); otherwise it waits in
//! the agent's list and is handed over quietly ([`crate::engine::Agent::on_tx_complete_quiet`])
//! before the agent's next hook, or at the end of the run. Exact, not an approximation:
//! - an agent's state changes only in its hooks, so a completion that comes between two hooks
//!   finds the state the first one left; if that state does not wake, the completion only
//!   changes the agent's counts, which nothing reads before the agent's next hook;
//! - after every hook of a waking agent the earliest pending completion is queued under its own
//!   (time, sequence number) — those decided in the hook too: it is still the hook's event, so
//!   nothing ordered after them has run —, and one decided outside the agent's hooks while it
//!   wakes is queued at once: so each completion that would wake the agent runs where its event always ran
//!   (see [`crate::event`] for why a number drawn earlier keeps the place).
//!
//! The tables are those of one event per completion; `events` counts only the queued ones.
use std::collections::VecDeque;

use super::{Core, Sim};
use crate::event::Ev;
use crate::packet::AgentId;
use crate::time::Time;

/// One agent's TX completions.
#[derive(Debug)]
pub(super) struct TxWatch {
    /// Decided and not yet delivered, in (time, sequence number) order.
    pending: VecDeque<Completion>,
    /// The agent's `tx_completion_wakes` after its last hook (true before the first).
    wakes: bool,
    /// The agent asked for completions ([`crate::engine::Ctx::watch_tx_completion`]).
    pub(super) watching: bool,
}

impl Default for TxWatch {
    fn default() -> TxWatch { TxWatch { pending: VecDeque::new(), wakes: true, watching: false } }
}

#[derive(Debug, Clone, Copy)]
struct Completion {
    t: Time,
    seq: u64,
    size: u32,
    /// An Ev::TxComplete is queued under (t, seq).
    queued: bool,
}

impl Completion {
    fn key(&self) -> (Time, u64) { (self.t, self.seq) }
}

impl Core {
    /// Decides a TX completion of `size` bytes for agent `a` at `at` (>= now).
    pub(super) fn decide_completion(&mut self, a: AgentId, at: Time, size: u32) {
        let seq = self.events.reserve();
        let w = &mut self.txw[a as usize];
        // Inside the agent's own hook (a FIFO first link decides at the send) the check after
        // the hook queues it if need be.
        let queued = w.wakes && self.hook != a;
        if queued {
            self.events.push_reserved(at, seq, Ev::TxComplete(a, size));
        }
        let c = Completion { t: at, seq, size, queued };
        // The newest number: it goes after every completion at or before its time (mostly all:
        // a link's departures come in order; a drop at enqueue comes before them).
        if w.pending.back().is_none_or(|b| b.t <= at) {
            w.pending.push_back(c);
        } else {
            let i = w.pending.iter().rposition(|b| b.t <= at).map_or(0, |i| i + 1);
            w.pending.insert(i, c);
        }
    }
}

impl Sim {
    /// Before a hook of agent `a`: the completions ordered before the event being dispatched
    /// (none of them queued, so none found the agent waking) are handed over quietly.
    #[inline(always)]
    pub(super) fn before_hook(&mut self, a: AgentId) {
        // Most runs have no watcher: one test a hook.
        if !self.core.watchers {
            return;
        }
        let w = &self.core.txw[a as usize];
        if !w.watching {
            return;
        }
        self.core.hook = a;
        let k = (self.core.now, self.core.cur);
        if w.pending.front().is_some_and(|c| c.key() < k) {
            self.quiet_before(a, k);
        }
    }

    #[inline(never)]
    fn quiet_before(&mut self, a: AgentId, k: (Time, u64)) {
        let w = &mut self.core.txw[a as usize];
        let agent = &mut self.agents[a as usize];
        while let Some(c) = w.pending.front() {
            if c.key() >= k {
                break;
            }
            // A queued completion ordered before the running event has already run.
            assert!(!c.queued, "TX completion queued but not run");
            agent.on_tx_complete_quiet(c.size);
            w.pending.pop_front();
        }
    }

    /// After a hook of agent `a`: if a completion would now wake it, the earliest pending one
    /// is queued (the later ones follow, one hook at a time).
    #[inline(always)]
    pub(super) fn after_hook(&mut self, a: AgentId) {
        if self.core.watchers && self.core.txw[a as usize].watching {
            self.after_hook_watching(a);
        }
    }

    #[inline(never)]
    fn after_hook_watching(&mut self, a: AgentId) {
        self.core.hook = AgentId::MAX;
        let wakes = self.agents[a as usize].tx_completion_wakes();
        let w = &mut self.core.txw[a as usize];
        w.wakes = wakes;
        if let Some(c) = w.pending.front_mut().filter(|c| wakes && !c.queued) {
            c.queued = true;
            self.core.events.push_reserved(c.t, c.seq, Ev::TxComplete(a, c.size));
        }
    }

    /// A popped Ev::TxComplete for agent `a` (a watcher): takes its completion off the list
    /// (after handing over the quiet ones before it).
    pub(super) fn completion_event(&mut self, a: AgentId) {
        self.before_hook(a);
        let c = self.core.txw[a as usize].pending.pop_front();
        assert!(c.is_some_and(|c| c.queued && c.key() == (self.core.now, self.core.cur)), "TX completion event without its pending entry");
    }

    /// End of `run_until(until)` (or of `run`, `until` = the last time): completions at or
    /// before `until` would have run by now; all are quiet (queued ones have run). Returns the
    /// time of the last one (where the clock would have stopped), if any.
    pub(super) fn quiet_through(&mut self, until: Time) -> Option<Time> {
        let mut last = None;
        for a in 0..self.agents.len() {
            let w = &mut self.core.txw[a];
            while let Some(c) = w.pending.front().copied().filter(|c| c.t <= until) {
                w.pending.pop_front();
                assert!(!c.queued, "TX completion at {:?} queued but not run", c.t);
                self.agents[a].on_tx_complete_quiet(c.size);
                last = last.max(Some(c.t));
            }
        }
        last
    }
}
