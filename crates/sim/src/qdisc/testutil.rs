//! Helpers for driving a discipline directly in tests: no engine, chosen `now`s.
use super::{Qdisc, QueuedDrop, Verdict};
use crate::config::Params;
use crate::packet::{Body, Ecn, Packet, PacketPool, PktId};
use crate::time::Time;

pub fn pkt(pool: &mut PacketPool, flow: u32, size: u32, ecn: Ecn) -> PktId {
    pool.insert(Packet { flow, src: 0, dst: 1, dst_agent: 0, size, ecn, sent: Time::ZERO, body: Body::Raw })
}

/// A harness owning the pool and collecting in-queue drops (freed at once, like the engine does).
pub struct Harness<Q: Qdisc> {
    pub q: Q,
    pub pool: PacketPool,
    pub victims: Vec<QueuedDrop>,
    scratch: Vec<QueuedDrop>,
}

impl<Q: Qdisc> Harness<Q> {
    pub fn new(q: Q) -> Self { Harness { q, pool: PacketPool::new(), victims: vec![], scratch: vec![] } }

    /// Offers a packet; frees it when refused. Returns the verdict.
    pub fn offer(&mut self, now: Time, flow: u32, size: u32, ecn: Ecn) -> Verdict {
        let id = pkt(&mut self.pool, flow, size, ecn);
        let v = self.q.enqueue(id, &mut self.pool, now, &mut self.scratch);
        self.collect();
        if let Verdict::Dropped(_) = v {
            self.pool.remove(id);
        }
        v
    }

    /// Dequeues and frees one packet; returns (flow, size, ecn) of the packet handed to the link.
    pub fn take(&mut self, now: Time) -> Option<(u32, u32, Ecn)> {
        let id = self.q.dequeue(&mut self.pool, now, &mut self.scratch);
        self.collect();
        id.map(|id| {
            let p = self.pool.remove(id);
            (p.flow, p.size, p.ecn)
        })
    }

    fn collect(&mut self) {
        for (id, why) in self.scratch.drain(..) {
            self.pool.remove(id);
            self.victims.push((id, why));
        }
    }

    /// The counter identities hold and the pool holds exactly the backlog.
    pub fn check(&self) {
        self.q.stats().check(self.q.backlog_pkts(), self.q.backlog_bytes()).unwrap();
        assert_eq!(self.pool.live(), self.q.backlog_pkts(), "pool and backlog disagree");
        assert_eq!(self.pool.live_bytes(), self.q.backlog_bytes(), "pool and backlog bytes disagree");
    }
}

/// A `Params` over a JSON table, as the scenario reader would make it.
pub fn params(v: serde_json::Value) -> Params { Params::new("queue", &v).unwrap() }
