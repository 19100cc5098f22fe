//! `kind = "headdrop"`: a FIFO of at most `limit` packets (default 100) that makes room for an
//! arriving packet by dropping the oldest one (Linux's pfifo_head_drop).
use std::collections::VecDeque;

use jitterlab_sim::config::{ConfigError, Params};
use jitterlab_sim::packet::{PacketPool, PktId};
use jitterlab_sim::qdisc::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use jitterlab_sim::rng::Rng;
use jitterlab_sim::time::Time;

pub struct HeadDrop {
    limit: usize,
    q: VecDeque<(PktId, u32)>,
    bytes: u64,
    stats: QueueStats,
}

pub fn build(p: &mut Params, _link: LinkInfo, _rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let limit = p.u64_or("limit", 100)?;
    if limit == 0 {
        return Err(p.err("limit", "must be > 0"));
    }
    Ok(Box::new(HeadDrop { limit: limit as usize, q: VecDeque::new(), bytes: 0, stats: QueueStats::default() }))
}

impl Qdisc for HeadDrop {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, _now: Time, dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let size = pool.get(id).size;
        self.stats.on_arrival(size);
        if self.q.len() == self.limit {
            let (old, old_size) = self.q.pop_front().expect("full");
            self.bytes -= old_size as u64;
            self.stats.on_drop_queued(old_size, DropReason::Overflow);
            dropped.push((old, DropReason::Overflow));
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
    fn kind(&self) -> &'static str { "headdrop" }
}
