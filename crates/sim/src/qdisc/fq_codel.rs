//! FQ-CoDel (RFC 8290) after Linux `sch_fq_codel`: packets are hashed by flow id into `flows`
//! buckets, each a FIFO with its own CoDel state ([`super::codel::codel_dequeue`]); a deficit
//! round robin with quantum bytes ([`super::drr`]) serves the new-flows list before the old-flows list (RFC 8290
//! §4.2), so a sparse flow's packet overtakes a backlogged bulk flow. When the shared packet limit
//! is exceeded, packets are dropped from the head of the flow with the largest byte backlog, up to
//! half of it and at most `drop_batch` packets (Linux `fq_codel_drop`, RFC 8290 §4.1).
//!
//! Differences from Linux, on purpose: the hash is over the simulator's flow id (not the 5-tuple),
//! there is no memory limit, and no `ce_threshold`.
use super::codel::{codel_dequeue, CodelParams, CodelQueue, CodelVars, Fifo};
use super::drr::{mix, Drr, List};
use super::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::config::{ConfigError, Params, Size};
use crate::packet::{PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

/// RFC 8290 §5.1 / Linux: 10240 packets.
pub const DEFAULT_LIMIT: u64 = 10240;
/// RFC 8290 §5.3 / Linux: 1024 flow queues.
pub const DEFAULT_FLOWS: u32 = 1024;
/// RFC 8290 §5.2: quantum of one MTU (Linux psched_mtu of Ethernet, 1514 bytes).
pub const DEFAULT_QUANTUM: u32 = 1514;
/// Linux `drop_batch_size` default.
pub const DEFAULT_DROP_BATCH: u32 = 64;

#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    pub codel: CodelParams,
    pub limit: u64,
    pub flows: u32,
    pub quantum: u32,
    pub drop_batch: u32,
}

#[derive(Default, Debug)]
struct FlowQueue {
    fifo: Fifo,
    vars: CodelVars,
}

/// CoDel's view of one flow: its FIFO, and the qdisc-wide byte backlog Linux checks against the MTU.
struct FlowView<'a> {
    fifo: &'a mut Fifo,
    total_bytes: &'a mut u64,
    total_pkts: &'a mut usize,
}

impl CodelQueue for FlowView<'_> {
    fn pop(&mut self) -> Option<(PktId, u32, Time)> {
        let h = self.fifo.pop_head()?;
        *self.total_bytes -= h.1 as u64;
        *self.total_pkts -= 1;
        Some(h)
    }
    fn backlog_bytes(&self) -> u64 { *self.total_bytes }
}

pub struct FqCodel {
    params: FqCodelParams,
    flows: Vec<FlowQueue>,
    drr: Drr,
    perturbation: u64,
    pkts: usize,
    bytes: u64,
    stats: QueueStats,
}

impl FqCodel {
    /// `perturbation` salts the hash as Linux's random `q->perturbation` does (from the rng).
    pub fn new(params: FqCodelParams, perturbation: u64) -> Self {
        let flows = (0..params.flows).map(|_| FlowQueue::default()).collect();
        let drr = Drr::new(params.flows as usize);
        FqCodel { params, flows, drr, perturbation, pkts: 0, bytes: 0, stats: QueueStats::default() }
    }

    /// Flow queue index of a flow id.
    pub fn bucket(&self, flow: u32) -> usize { (mix(flow as u64 ^ self.perturbation) % self.params.flows as u64) as usize }

    /// Packets queued in bucket `i`.
    pub fn flow_backlog(&self, i: usize) -> usize { self.flows[i].fifo.len() }

    /// Linux `fq_codel_drop`: drop from the head of the fattest flow until half its bytes are gone
    /// or `drop_batch` packets. Returns the bucket.
    fn drop_from_fattest(&mut self, dropped: &mut Vec<QueuedDrop>, arriving: PktId) -> (usize, bool) {
        let mut idx = 0;
        let mut max = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            if f.fifo.bytes > max {
                max = f.fifo.bytes;
                idx = i;
            }
        }
        let threshold = max >> 1;
        let mut len = 0u64;
        let mut n = 0u32;
        let mut arriving_dropped = false;
        let f = &mut self.flows[idx];
        while let Some((id, size, _)) = f.fifo.pop_head() {
            len += size as u64;
            n += 1;
            self.pkts -= 1;
            self.bytes -= size as u64;
            if id == arriving {
                // Only possible when the arriving packet was its flow's whole backlog.
                arriving_dropped = true;
                self.stats.on_drop_arrival(size, DropReason::Overflow);
            } else {
                self.stats.on_drop_queued(size, DropReason::Overflow);
                dropped.push((id, DropReason::Overflow));
            }
            if n >= self.params.drop_batch || len >= threshold {
                break;
            }
        }
        // Linux charges the drops to the flow's CoDel count.
        f.vars.count = f.vars.count.wrapping_add(n);
        (idx, arriving_dropped)
    }
}

pub fn build(p: &mut Params, _link: LinkInfo, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let codel = super::codel::read_params(p, &CodelParams { ecn: true, ..CodelParams::default() })?;
    let limit = match p.size_opt("limit")? {
        None => DEFAULT_LIMIT,
        Some(Size::Packets(n)) => n,
        Some(Size::Bytes(_)) => return Err(p.err("limit", "FQ-CoDel's limit is in packets (e.g. \"10240pkt\")")),
    };
    if limit == 0 {
        return Err(p.err("limit", "must be > 0"));
    }
    let flows = p.u64_or("flows", DEFAULT_FLOWS as u64)?;
    if flows == 0 || flows > 65536 {
        return Err(p.err("flows", format!("must be in 1..=65536, got {flows}")));
    }
    let quantum = p.u64_or("quantum", DEFAULT_QUANTUM as u64)?;
    if quantum == 0 || quantum > u32::MAX as u64 {
        return Err(p.err("quantum", format!("must be > 0 bytes, got {quantum}")));
    }
    let drop_batch = p.u64_or("drop_batch", DEFAULT_DROP_BATCH as u64)?;
    if drop_batch == 0 || drop_batch > u32::MAX as u64 {
        return Err(p.err("drop_batch", format!("must be > 0, got {drop_batch}")));
    }
    let params = FqCodelParams { codel, limit, flows: flows as u32, quantum: quantum as u32, drop_batch: drop_batch as u32 };
    Ok(Box::new(FqCodel::new(params, rng.next_u64())))
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let (size, flow) = {
            let pk = pool.get(id);
            (pk.size, pk.flow)
        };
        self.stats.on_arrival(size);
        let idx = self.bucket(flow);
        let quantum = self.params.quantum as i64;
        let f = &mut self.flows[idx];
        f.fifo.push(id, size, now);
        self.pkts += 1;
        self.bytes += size as u64;
        // RFC 8290 §4.1: a flow not on either list becomes a new flow with a full quantum.
        self.drr.activate(idx, quantum);
        if self.pkts as u64 <= self.params.limit {
            self.stats.on_enqueue(size);
            return Verdict::Queued;
        }
        // Over the limit: the arriving packet counts as enqueued unless it is itself the victim.
        let (_, arriving_dropped) = self.drop_from_fattest(dropped, id);
        if arriving_dropped {
            // Its stats went to dropped-on-arrival; the queued victims before it were counted as
            // in-queue drops of packets already enqueued.
            Verdict::Dropped(DropReason::Overflow)
        } else {
            self.stats.on_enqueue(size);
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        loop {
            // RFC 8290 §4.2: new flows first; a flow that spent its quantum tops up and waits.
            let idx = self.drr.next(self.params.quantum as i64)?;
            let f = &mut self.flows[idx];
            let mut view = FlowView { fifo: &mut f.fifo, total_bytes: &mut self.bytes, total_pkts: &mut self.pkts };
            match codel_dequeue(&self.params.codel, &mut f.vars, &mut view, now, pool, &mut self.stats, dropped) {
                None => self.drr.retire(idx),
                Some((id, size)) => {
                    self.drr.charge(idx, size as i64);
                    self.stats.on_dequeue(size);
                    return Some(id);
                }
            }
        }
    }

    /// Head of the flow at the front of the new list, else of the old list. Dequeue may serve
    /// another flow when this one's deficit is spent or CoDel drops its head.
    fn peek(&self) -> Option<PktId> {
        self.drr.iter(&[List::New, List::Old]).find_map(|f| self.flows[f].fifo.q.front().map(|h| h.0))
    }
    fn backlog_pkts(&self) -> usize { self.pkts }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "fq_codel" }
    /// Empty: the dequeue only retires the flow lists and leaves CoDel's dropping state.
    fn idle_dequeue_deferrable(&self) -> bool { true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::qdisc::testutil::{params, Harness};
    use crate::time::Rate;
    use serde_json::json;

    fn fq(limit: u64) -> FqCodel {
        FqCodel::new(FqCodelParams { codel: CodelParams { ecn: true, ..CodelParams::default() }, limit, flows: 1024, quantum: 1514, drop_batch: 64 }, 7)
    }

    /// Two flow ids that land in different buckets (the hash is salted).
    fn two_flows(q: &FqCodel) -> (u32, u32) {
        let a = 1;
        let b = (2..100).find(|&b| q.bucket(b) != q.bucket(a)).unwrap();
        (a, b)
    }

    #[test]
    fn sparse_flow_overtakes_bulk_backlog() {
        let mut h = Harness::new(fq(10240));
        let (bulk, sparse) = two_flows(&h.q);
        let t = Time::ZERO;
        for _ in 0..100 {
            h.offer(t, bulk, 1500, Ecn::NotEct);
        }
        // The bulk flow uses its first quantum and moves to the old list.
        for _ in 0..3 {
            assert_eq!(h.take(t).unwrap().0, bulk);
        }
        // A sparse packet arrives behind 97 bulk packets and leaves next.
        h.offer(t, sparse, 200, Ecn::NotEct);
        assert_eq!(h.take(t).unwrap().0, sparse);
        assert_eq!(h.take(t).unwrap().0, bulk);
        h.check();
    }

    #[test]
    fn round_robin_shares_by_bytes() {
        let mut h = Harness::new(fq(10240));
        let (a, b) = two_flows(&h.q);
        for _ in 0..200 {
            h.offer(Time::ZERO, a, 1500, Ecn::NotEct);
            h.offer(Time::ZERO, b, 500, Ecn::NotEct);
        }
        let (mut ba, mut bb) = (0u64, 0u64);
        for _ in 0..200 {
            let (f, s, _) = h.take(Time::ZERO).unwrap();
            if f == a { ba += s as u64 } else { bb += s as u64 }
        }
        // Equal bytes within one quantum or so.
        assert!((ba as i64 - bb as i64).abs() <= 3000, "{ba} {bb}");
        h.check();
    }

    #[test]
    fn overflow_drops_from_fattest_flow_head() {
        let mut h = Harness::new(fq(10));
        let (fat, thin) = two_flows(&h.q);
        for _ in 0..8 {
            h.offer(Time::ZERO, fat, 1500, Ecn::NotEct);
        }
        for _ in 0..2 {
            h.offer(Time::ZERO, thin, 1500, Ecn::NotEct);
        }
        assert!(h.victims.is_empty());
        // The 11th packet (thin flow) goes over the limit: the fat flow (12 000 B) loses packets
        // from its head until ≥ half its bytes are gone: 4 packets.
        assert_eq!(h.offer(Time::ZERO, thin, 1500, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.victims.len(), 4);
        assert!(h.victims.iter().all(|&(_, why)| why == DropReason::Overflow));
        assert_eq!(h.q.flow_backlog(h.q.bucket(fat)), 4);
        assert_eq!(h.q.flow_backlog(h.q.bucket(thin)), 3);
        assert_eq!(h.q.stats().drops_by_reason[DropReason::Overflow.index()], 4);
        h.check();
    }

    #[test]
    fn arriving_packet_can_be_the_victim() {
        // limit 1: a second flow's packet arrives; the fattest flow is the first (1500 B vs 100 B).
        let mut h = Harness::new(fq(1));
        let (a, b) = two_flows(&h.q);
        h.offer(Time::ZERO, a, 100, Ecn::NotEct);
        assert_eq!(h.offer(Time::ZERO, b, 1500, Ecn::NotEct), Verdict::Dropped(DropReason::Overflow));
        assert!(h.victims.is_empty());
        h.check();
        assert_eq!(h.take(Time::ZERO).unwrap().0, a);
        h.check();
    }

    #[test]
    fn codel_acts_per_flow() {
        // Flow a keeps a standing queue (sojourn ≫ target); flow b sends one packet per 10 ms and
        // is served at once: a is dropped/marked, b never.
        let mut h = Harness::new(fq(10240));
        let (a, b) = two_flows(&h.q);
        let mut t = Time::ZERO;
        for _ in 0..50 {
            h.offer(t, a, 1500, Ecn::NotEct);
        }
        let mut b_seen = 0;
        for i in 0..3000 {
            t += Time::from_ms(1);
            h.offer(t, a, 1500, Ecn::NotEct);
            if i % 10 == 0 {
                h.offer(t, b, 200, Ecn::NotEct);
            }
            while h.q.flow_backlog(h.q.bucket(a)) < 50 {
                h.offer(t, a, 1500, Ecn::NotEct);
            }
            if let Some((f, _, _)) = h.take(t) {
                if f == b {
                    b_seen += 1;
                }
            }
            h.check();
        }
        assert_eq!(b_seen, 300);
        assert!(h.q.stats().drops_by_reason[DropReason::Codel.index()] > 10);
    }

    #[test]
    fn builder() {
        let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
        let mut rng = Rng::stream(1, "x");
        let mut p = params(json!({"limit": "10240pkt", "flows": 1024, "quantum": 1514, "target": "5ms", "interval": "100ms", "ecn": false, "drop_batch": 64}));
        assert_eq!(build(&mut p, link, &mut rng).unwrap().kind(), "fq_codel");
        p.finish().unwrap();
        for (v, msg) in [
            (json!({"flows": 0}), "queue.flows: must be in 1..=65536, got 0"),
            (json!({"quantum": 0}), "queue.quantum: must be > 0 bytes, got 0"),
            (json!({"limit": "1MB"}), "queue.limit: FQ-CoDel's limit is in packets (e.g. \"10240pkt\")"),
        ] {
            let mut p = params(v);
            assert_eq!(build(&mut p, link, &mut rng).err().expect(msg).to_string(), msg);
        }
    }
}
