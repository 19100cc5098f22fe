//! The event queue: a binary min-heap ordered by (time, insertion counter), so events at the same
//! instant run in the order they were scheduled. This total order is what makes runs reproducible.
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::packet::{AgentId, ChanId, PktId};
use crate::time::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A channel finished serialising its current packet.
    TxDone(ChanId),
    /// The qdisc watchdog of an idle channel (see [`crate::qdisc::Qdisc::next_wakeup`]).
    Wakeup(ChanId),
    /// A packet reaches the far end of a channel.
    Arrive(ChanId, PktId),
    /// An agent's timer `key`; stale unless `gen` matches the timer table (cancellation by key).
    Timer(AgentId, u32, u32),
    /// Periodic queue sampling.
    Sample,
    /// Start of an agent (its `start` hook).
    Start(AgentId),
    /// TX completion: a packet of `size` bytes that the agent sent has left its host's first link
    /// (see [`crate::engine::Ctx::watch_tx_completion`]).
    TxComplete(AgentId, u32),
}

#[derive(Debug)]
struct Entry {
    t: Time,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool { self.t == o.t && self.seq == o.seq }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> { Some(self.cmp(o)) }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering { o.t.cmp(&self.t).then_with(|| o.seq.cmp(&self.seq)) }
}

#[derive(Default, Debug)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn push(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry { t, seq: self.seq, ev });
    }
    pub fn pop(&mut self) -> Option<(Time, Ev)> { self.heap.pop().map(|e| (e.t, e.ev)) }
    pub fn peek_time(&self) -> Option<Time> { self.heap.peek().map(|e| e.t) }
    pub fn len(&self) -> usize { self.heap.len() }
    pub fn is_empty(&self) -> bool { self.heap.is_empty() }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn same_instant_runs_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), Ev::Sample);
        q.push(Time(3), Ev::TxDone(1));
        q.push(Time(5), Ev::TxDone(2));
        q.push(Time(5), Ev::TxDone(3));
        q.push(Time(1), Ev::TxDone(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(Time(1), Ev::TxDone(4)), (Time(3), Ev::TxDone(1)), (Time(5), Ev::Sample), (Time(5), Ev::TxDone(2)), (Time(5), Ev::TxDone(3))]);
    }
}
