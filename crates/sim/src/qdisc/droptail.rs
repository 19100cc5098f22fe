//! DropTail (tail-drop FIFO) with a limit in packets (Linux pfifo, ns-2 DropTail) or in bytes
//! (Linux bfifo). The arriving packet is dropped when it would exceed the limit.
use std::collections::VecDeque;

use super::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::config::{ConfigError, Params, Size};
use crate::packet::{PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

pub struct DropTail {
    limit: Limit,
    q: VecDeque<(PktId, u32)>,
    bytes: u64,
    stats: QueueStats,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self { DropTail { limit, q: VecDeque::new(), bytes: 0, stats: QueueStats::default() } }
    pub fn limit(&self) -> Limit { self.limit }
}

pub fn build(p: &mut Params, _link: LinkInfo, _rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let limit = match p.size("limit")? {
        Size::Packets(n) => Limit::Packets(n),
        Size::Bytes(b) => Limit::Bytes(b),
    };
    match limit {
        Limit::Packets(0) | Limit::Bytes(0) => return Err(p.err("limit", "must be > 0")),
        _ => {}
    }
    Ok(Box::new(DropTail::new(limit)))
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, _now: Time, _dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let size = pool.get(id).size;
        self.stats.on_arrival(size);
        let full = match self.limit {
            Limit::Packets(n) => self.q.len() as u64 >= n,
            Limit::Bytes(b) => self.bytes + size as u64 > b,
        };
        if full {
            self.stats.on_drop_arrival(size, DropReason::Overlimit);
            return Verdict::Dropped(DropReason::Overlimit);
        }
        self.q.push_back((id, size));
        self.bytes += size as u64;
        self.stats.on_enqueue(size);
        Verdict::Queued
    }

    fn dequeue(&mut self, _pool: &mut PacketPool, _now: Time, _dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        let (id, size) = self.q.pop_front()?;
        self.bytes -= size as u64;
        self.stats.on_dequeue(size);
        Some(id)
    }

    fn peek(&self) -> Option<PktId> { self.q.front().map(|h| h.0) }
    fn backlog_pkts(&self) -> usize { self.q.len() }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "droptail" }
    fn idle_dequeue_deferrable(&self) -> bool { true }
    fn fifo_departures(&self) -> bool { true }
    fn pass_idle(&mut self, size: u32, _now: Time) -> bool {
        // Empty: a packet limit (>= 1) always takes it; a byte limit takes it if it fits.
        if !self.q.is_empty() || matches!(self.limit, Limit::Bytes(b) if size as u64 > b) {
            return false;
        }
        self.stats.on_arrival(size);
        self.stats.on_enqueue(size);
        self.stats.on_dequeue(size);
        true
    }
    fn idle_pass_max(&self) -> Option<u64> {
        Some(match self.limit {
            // A packet limit is >= 1: an empty queue takes any packet.
            Limit::Packets(_) => u64::MAX,
            Limit::Bytes(b) => b,
        })
    }
    fn count_passes(&mut self, pkts: u64, bytes: u64) {
        for s in [(&mut self.stats.arrived_pkts, &mut self.stats.arrived_bytes), (&mut self.stats.enqueued_pkts, &mut self.stats.enqueued_bytes), (&mut self.stats.dequeued_pkts, &mut self.stats.dequeued_bytes)] {
            *s.0 += pkts;
            *s.1 += bytes;
        }
    }
    fn empty_dequeue_is_noop(&self) -> bool { true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testutil::Harness;

    /// pass_idle is an enqueue and a dequeue in one call: the same counters as the pair (one packet
    /// arrived, enqueued, dequeued, of its size), and only when the pair would hand the packet
    /// straight back — an empty queue that takes it.
    #[test]
    fn pass_idle_counts_as_an_enqueue_and_dequeue_and_only_when_empty() {
        let mut pair = Harness::new(DropTail::new(Limit::Packets(2)));
        assert_eq!(pair.offer(Time::ZERO, 0, 700, Ecn::NotEct), Verdict::Queued);
        assert_eq!(pair.take(Time::ZERO), Some((0, 700, Ecn::NotEct)));
        let mut q = DropTail::new(Limit::Packets(2));
        assert!(q.pass_idle(700, Time::ZERO));
        assert_eq!(q.stats(), pair.q.stats());
        assert_eq!((q.stats().arrived_pkts, q.stats().dequeued_bytes, q.backlog_pkts()), (1, 700, 0));
        q.stats().check(0, 0).unwrap();
        assert!(q.empty_dequeue_is_noop());

        // A packet waiting: the new one would queue behind it, so no pass and no counter moves.
        let mut h = Harness::new(DropTail::new(Limit::Packets(2)));
        h.offer(Time::ZERO, 0, 500, Ecn::NotEct);
        let before = h.q.stats().clone();
        assert!(!h.q.pass_idle(700, Time::ZERO));
        assert_eq!(h.q.stats(), &before);

        // A byte limit below the packet: the enqueue would drop it, so the engine's ordinary path
        // must do that (and count the drop).
        let mut b = DropTail::new(Limit::Bytes(600));
        assert!(!b.pass_idle(700, Time::ZERO));
        assert_eq!(b.stats(), &QueueStats::default());
        assert!(b.pass_idle(600, Time::ZERO), "a packet of exactly the byte limit fits");
    }

    /// The engine's own passes on a FIFO link: `idle_pass_max` is the largest packet an empty
    /// queue's pass_idle takes (any under a packet limit, the limit itself under a byte limit),
    /// and `count_passes(n, bytes)` leaves the counters where n such pass_idle calls of `bytes`
    /// in all leave them (3 packets, 40 + 1500 + 960 = 2500 B).
    #[test]
    fn counted_passes_equal_pass_idle_calls() {
        let (mut called, mut counted) = (DropTail::new(Limit::Bytes(1500)), DropTail::new(Limit::Bytes(1500)));
        for size in [40, 1500, 960] {
            assert!(called.pass_idle(size, Time::ZERO));
        }
        counted.count_passes(3, 2500);
        assert_eq!(counted.stats(), called.stats());
        assert_eq!((counted.stats().arrived_bytes, counted.stats().enqueued_pkts, counted.stats().dequeued_bytes), (2500, 3, 2500));
        counted.stats().check(0, 0).unwrap();
        assert_eq!(called.idle_pass_max(), Some(1500));
        assert!(!called.pass_idle(1501, Time::ZERO));
        assert_eq!(DropTail::new(Limit::Packets(1)).idle_pass_max(), Some(u64::MAX));
    }
}
