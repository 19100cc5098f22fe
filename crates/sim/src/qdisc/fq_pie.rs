//! FQ-PIE after Linux's `net/sched/sch_fq_pie.c`: packets are hashed by flow id (salted) into
//! `flows` queues, served by the deficit round robin FQ-CoDel shares ([`super::drr`]: new flows before old ones,
//! `quantum` bytes, a new flow that empties passes once through the old list), and each queue runs
//! its own PIE: the control law, burst allowance and early-drop test are [`super::pie`]'s
//! ([`PieParams::update`], [`PieParams::rearm_burst`], [`PieParams::drop_early`]) applied to the
//! flow's own delay and byte backlog. Linux updates every flow on one timer each `tupdate`; here each
//! flow's updates run lazily when the flow is next touched, which gives the same values (a flow's
//! update reads only its own state, which nothing else changes in between).
//!
//! ECT packets chosen for an early drop are marked CE instead while the flow's probability is at
//! most `ecn_prob` percent (tc's `ecn_prob`, default 10). Over `limit` packets the arriving packet
//! is dropped (reason `overlimit`). Not modelled: the memory limit (Linux only counts it, it never
//! drops), byte mode, the departure-rate estimator (off by default in Linux too), derandomisation.
use std::collections::VecDeque;

use super::drr::{mix, Drr, List};
use super::pie::{PieParams, PieVars};
use super::{DropReason, LinkInfo, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::config::{ConfigError, Params, Size};
use crate::packet::{Ecn, PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

/// Linux `fq_pie_init`: 10240 packets, 1024 flows, quantum = psched_mtu (1514 on Ethernet),
/// ecn_prob 10 %.
pub const DEFAULT_LIMIT: u64 = 10240;
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_QUANTUM: u32 = 1514;
pub const DEFAULT_ECN_PROB: u64 = 10;

#[derive(Clone, Debug, PartialEq)]
pub struct FqPieParams {
    /// PIE per flow; `pie.mark_ecnth` = ecn_prob / 100.
    pub pie: PieParams,
    pub limit: u64,
    pub flows: u32,
    pub quantum: u32,
}

#[derive(Debug)]
struct Flow {
    q: VecDeque<(PktId, u32, Time)>,
    bytes: u64,
    vars: PieVars,
}

pub struct FqPie {
    params: FqPieParams,
    flows: Vec<Flow>,
    drr: Drr,
    perturbation: u64,
    rng: Rng,
    pkts: usize,
    bytes: u64,
    stats: QueueStats,
}

impl FqPie {
    /// `perturbation` salts the flow hash; `rng` draws PIE's uniform numbers (one per arrival that
    /// is not over the limit, as [`super::pie::Pie`]).
    pub fn new(params: FqPieParams, perturbation: u64, rng: Rng) -> Self {
        let flows = (0..params.flows).map(|_| Flow { q: VecDeque::new(), bytes: 0, vars: PieVars::new(&params.pie) }).collect();
        let drr = Drr::new(params.flows as usize);
        FqPie { params, flows, drr, perturbation, rng, pkts: 0, bytes: 0, stats: QueueStats::default() }
    }

    /// Flow queue index of a flow id.
    pub fn bucket(&self, flow: u32) -> usize { (mix(flow as u64 ^ self.perturbation) % self.params.flows as u64) as usize }
    pub fn flow_backlog(&self, i: usize) -> usize { self.flows[i].q.len() }
    /// PIE state of queue `i` as of its last update.
    pub fn vars(&self, i: usize) -> &PieVars { &self.flows[i].vars }
}

pub fn build(p: &mut Params, _link: LinkInfo, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    let params = read_params(p)?;
    let salt = rng.next_u64();
    Ok(Box::new(FqPie::new(params, salt, Rng::stream(rng.next_u64(), "qdisc:fq_pie"))))
}

pub fn read_params(p: &mut Params) -> Result<FqPieParams, ConfigError> {
    if p.has("mark_ecnth") {
        return Err(p.err("mark_ecnth", "FQ-PIE takes tc's `ecn_prob` (percent), e.g. ecn_prob = 10"));
    }
    let ecn_prob = p.u64_or("ecn_prob", DEFAULT_ECN_PROB)?;
    if ecn_prob > 100 {
        return Err(p.err("ecn_prob", format!("must be a percentage in 0..=100, got {ecn_prob}")));
    }
    let mut pie = super::pie::read_params(p)?;
    pie.mark_ecnth = ecn_prob as f64 / 100.0;
    let limit = match p.size_opt("limit")? {
        None => DEFAULT_LIMIT,
        Some(Size::Packets(n)) => n,
        Some(Size::Bytes(_)) => return Err(p.err("limit", "FQ-PIE's limit is in packets (e.g. \"10240pkt\")")),
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
    Ok(FqPieParams { pie, limit, flows: flows as u32, quantum: quantum as u32 })
}

impl Qdisc for FqPie {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let (size, flow, ect) = {
            let pk = pool.get(id);
            (pk.size, pk.flow, pk.ecn.is_ect())
        };
        self.stats.on_arrival(size);
        let idx = self.bucket(flow);
        let pie = &self.params.pie;
        let f = &mut self.flows[idx];
        pie.advance(&mut f.vars, now, f.bytes);
        if self.pkts as u64 >= self.params.limit {
            self.stats.on_drop_arrival(size, DropReason::Overlimit);
            return Verdict::Dropped(DropReason::Overlimit);
        }
        pie.rearm_burst(&mut f.vars);
        let u = self.rng.uniform();
        let mut marked = false;
        if pie.drop_early(&f.vars, f.bytes, u) {
            if pie.ecn && ect && f.vars.drop_prob <= pie.mark_ecnth {
                pool.get_mut(id).ecn = Ecn::Ce;
                marked = true;
            } else {
                self.stats.on_drop_arrival(size, DropReason::Early);
                return Verdict::Dropped(DropReason::Early);
            }
        }
        f.q.push_back((id, size, now));
        f.bytes += size as u64;
        self.pkts += 1;
        self.bytes += size as u64;
        self.drr.activate(idx, self.params.quantum as i64);
        self.stats.on_enqueue(size);
        if marked {
            self.stats.marked_pkts += 1;
            Verdict::Marked
        } else {
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, _pool: &mut PacketPool, now: Time, _dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        loop {
            let idx = self.drr.next(self.params.quantum as i64)?;
            let f = &mut self.flows[idx];
            let Some((id, size, enq)) = f.q.pop_front() else {
                self.drr.retire(idx);
                continue;
            };
            self.params.pie.advance(&mut f.vars, now, f.bytes);
            f.bytes -= size as u64;
            self.drr.charge(idx, size as i64);
            self.pkts -= 1;
            self.bytes -= size as u64;
            // pie_process_dequeue with timestamps: the sojourn of this packet, 0 once empty.
            f.vars.qdelay = if f.q.is_empty() { Time::ZERO } else { now - enq };
            self.stats.on_dequeue(size);
            return Some(id);
        }
    }

    fn peek(&self) -> Option<PktId> { self.drr.iter(&[List::New, List::Old]).find_map(|f| self.flows[f].q.front().map(|h| h.0)) }
    fn backlog_pkts(&self) -> usize { self.pkts }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "fq_pie" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::droptail::Limit;
    use crate::qdisc::pie::Pie;
    use crate::qdisc::testutil::{params, Harness};
    use crate::time::Rate;
    use serde_json::json;

    fn fq(p: PieParams) -> FqPie { FqPie::new(FqPieParams { pie: p, limit: 100_000, flows: 1024, quantum: DEFAULT_QUANTUM }, 7, Rng::stream(5, "pie")) }

    fn two_flows(q: &FqPie) -> (u32, u32) {
        let a = 1;
        let b = (2..100).find(|&b| q.bucket(b) != q.bucket(a)).unwrap();
        (a, b)
    }

    /// One flow through FQ-PIE and the same arrivals through PIE (same random stream): the drop
    /// probability after every update, the drops and the deliveries are identical, since FQ-PIE
    /// runs pie.rs's control law on the flow.
    #[test]
    fn single_flow_matches_pie_exactly() {
        let p = PieParams { ecn: true, ..PieParams::default() };
        let mut a = Harness::new(fq(p.clone()));
        let mut b = Harness::new(Pie::new(p, Limit::Packets(100_000), Rng::stream(5, "pie")));
        let flow = 1;
        let idx = a.q.bucket(flow);
        let mut t = Time::ZERO;
        let (mut pa, mut pb) = (vec![], vec![]);
        for i in 0..6000u64 {
            t += Time::from_ms(1);
            // 2 packets per ms in, 1 out for 3 s (a standing queue builds), then 1:1.
            let n = if i < 3000 { 2 } else { 1 };
            for k in 0..n {
                let ecn = if (i + k) % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
                assert_eq!(a.offer(t, flow, 1500, ecn), b.offer(t, flow, 1500, ecn), "at {t}");
            }
            assert_eq!(a.take(t), b.take(t));
            pa.push(a.q.vars(idx).drop_prob);
            pb.push(b.q.vars().drop_prob);
            a.check();
            b.check();
        }
        assert_eq!(pa, pb);
        assert!(pa.iter().cloned().fold(0.0, f64::max) > 0.05);
        assert_eq!(a.q.stats(), b.q.stats());
        assert!(a.q.stats().drops_by_reason[DropReason::Early.index()] > 0 && a.q.stats().marked_pkts > 0);
        // First update (15 ms) from p = 0, delay of the packet dequeued at 14 ms (enqueued at 7 ms:
        // with 2 in / 1 out per ms the k-th dequeue takes the packet that arrived at ⌈k/2⌉ ms):
        // (α·(0.007 − 0.015) + β·0.007)/2048 by hand, the same as PIE's.
        let expect = (0.125 * (0.007 - 0.015) + 1.25 * 0.007) / 2048.0;
        assert!((pa[14] - expect).abs() < 1e-12, "{} {expect}", pa[14]);
    }

    /// PIE per flow: a flow with a standing queue gets a rising probability and drops; a sparse
    /// flow beside it keeps p = 0 and loses nothing.
    #[test]
    fn pie_acts_per_flow() {
        let mut h = Harness::new(fq(PieParams::default()));
        let (bulk, sparse) = two_flows(&h.q);
        let mut t = Time::ZERO;
        for i in 0..5000u64 {
            t += Time::from_ms(1);
            for _ in 0..2 {
                h.offer(t, bulk, 1500, Ecn::NotEct);
            }
            if i % 20 == 0 {
                h.offer(t, sparse, 80, Ecn::NotEct);
            }
            h.take(t);
            h.check();
        }
        assert!(h.q.vars(h.q.bucket(bulk)).drop_prob > 0.1);
        assert_eq!(h.q.vars(h.q.bucket(sparse)).drop_prob, 0.0);
        assert!(h.q.stats().drops_by_reason[DropReason::Early.index()] > 100);
        // Every sparse packet was delivered (none queued, none dropped).
        assert_eq!(h.q.flow_backlog(h.q.bucket(sparse)), 0);
    }

    /// DRR with the default quantum (psched_mtu = 1514): flow A sends 1500-byte packets, B 300-byte
    /// ones, both new. By hand: A 1514 → 14 → −1486 (two packets), then B 1514 → … → −286 (six),
    /// then A (+1514: 28) one, B (+1514: 1228) five (−272), A (+1514: 42 … −1458 after one), B …
    #[test]
    fn drr_order_with_default_quantum() {
        // The defaults as a scenario's empty table gives them (quantum = 1514).
        let defaults = read_params(&mut params(json!({}))).unwrap();
        let mut q = FqPie::new(defaults, 7, Rng::stream(1, "x"));
        let (a, b) = two_flows(&q);
        let mut pool = PacketPool::new();
        let mut d = vec![];
        for _ in 0..20 {
            let id = crate::qdisc::testutil::pkt(&mut pool, a, 1500, Ecn::NotEct);
            q.enqueue(id, &mut pool, Time::ZERO, &mut d);
        }
        for _ in 0..40 {
            let id = crate::qdisc::testutil::pkt(&mut pool, b, 300, Ecn::NotEct);
            q.enqueue(id, &mut pool, Time::ZERO, &mut d);
        }
        let mut order = String::new();
        for _ in 0..17 {
            let id = q.dequeue(&mut pool, Time::ZERO, &mut d).unwrap();
            order.push(if pool.remove(id).flow == a { 'A' } else { 'B' });
        }
        // A: 1514 → 14 → −1486; B: 1514 → 6 × 300 → −286; A: +1514 = 28 → −1472; B: +1514 = 1228
        // → 5 × 300 → −272; A: +1514 = 42 → −1458; B: +1514 = 1242 → 5 × 300 → −258.
        assert_eq!(order, "AABBBBBBABBBBBABB");
        q.stats().check(q.backlog_pkts(), q.backlog_bytes()).unwrap();
    }

    /// Linux fq_pie_init's defaults: `sch->limit` 10240 packets, 1024 flows, quantum =
    /// psched_mtu (1514 on Ethernet), `ecn_prob` 10: an ECT packet chosen for an early drop is
    /// marked while the flow's probability is at most 10 % (`prob <= MAX_PROB / 100 * ecn_prob`).
    #[test]
    fn defaults_are_fq_pie_inits() {
        let p = read_params(&mut params(json!({}))).unwrap();
        assert_eq!((p.limit, p.flows, p.quantum, p.pie.mark_ecnth), (10240, 1024, 1514, 0.10));
        let p = read_params(&mut params(json!({"ecn_prob": 35}))).unwrap();
        assert_eq!(p.pie.mark_ecnth, 0.35);
    }

    /// The ECN threshold is inclusive: with the flow's probability exactly at ecn_prob (10 %),
    /// every ECT packet PIE picks (u < p, about one in ten) is marked and none dropped.
    #[test]
    fn ecn_marks_at_exactly_ecn_prob() {
        let pie = PieParams { ecn: true, mark_ecnth: 0.10, ..PieParams::default() };
        let mut h = Harness::new(fq(pie));
        let idx = h.q.bucket(1);
        for _ in 0..3 {
            assert_eq!(h.offer(Time::ZERO, 1, 1500, Ecn::Ect0), Verdict::Queued, "the burst allowance lets them in");
        }
        let v = &mut h.q.flows[idx].vars;
        (v.drop_prob, v.qdelay, v.qdelay_old, v.burst_allowance, v.next_update) = (0.10, Time::from_ms(20), Time::from_ms(20), Time::ZERO, Time::from_secs(1000));
        let marked = (0..400).filter(|_| h.offer(Time::ZERO, 1, 1500, Ecn::Ect0) == Verdict::Marked).count();
        assert!((20..=70).contains(&marked), "about 40 of 400: {marked}");
        assert_eq!(h.q.stats().dropped_pkts(), 0);
        h.check();
    }

    #[test]
    fn limit_and_builder() {
        let mut h = Harness::new(FqPie::new(FqPieParams { pie: PieParams::default(), limit: 2, flows: 16, quantum: 1514 }, 1, Rng::stream(1, "p")));
        assert_eq!(h.offer(Time::ZERO, 1, 100, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 2, 100, Ecn::NotEct), Verdict::Queued);
        assert_eq!(h.offer(Time::ZERO, 3, 100, Ecn::NotEct), Verdict::Dropped(DropReason::Overlimit));
        h.check();
        let link = LinkInfo { rate: Rate(10_000_000), mtu: 1500 };
        let mut rng = Rng::stream(1, "x");
        let mut p = params(json!({"limit": "10240pkt", "flows": 1024, "quantum": 1514, "target": "15ms", "tupdate": "15ms", "alpha": 0.125, "beta": 1.25, "ecn": true, "ecn_prob": 10, "max_burst": "150ms", "mtu": 1514}));
        assert_eq!(build(&mut p, link, &mut rng).unwrap().kind(), "fq_pie");
        p.finish().unwrap();
        for (v, msg) in [
            (json!({"ecn_prob": 101}), "queue.ecn_prob: must be a percentage in 0..=100, got 101"),
            (json!({"mark_ecnth": 0.1}), "queue.mark_ecnth: FQ-PIE takes tc's `ecn_prob` (percent), e.g. ecn_prob = 10"),
            (json!({"flows": 0}), "queue.flows: must be in 1..=65536, got 0"),
            (json!({"limit": "1MB"}), "queue.limit: FQ-PIE's limit is in packets (e.g. \"10240pkt\")"),
            (json!({"tupdate": "0s"}), "queue.tupdate: must be > 0"),
        ] {
            let mut p = params(v);
            assert_eq!(build(&mut p, link, &mut rng).err().expect(msg).to_string(), msg);
        }
    }
}
