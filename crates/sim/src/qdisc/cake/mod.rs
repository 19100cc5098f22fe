//! CAKE (Common Applications Kept Enhanced) after Linux's `net/sched/sch_cake.c`, best-effort tin:
//!
//! - **Shaper** in deficit mode: each dequeued packet pushes `time_next_packet` on by its adjusted
//!   length × ns-per-byte (`(len · rate_ns) >> rate_shft`, the kernel's fixed point); nothing leaves
//!   before it. The adjusted length is size + `overhead`, at least `mpu`, then ATM cell or PTM
//!   framing. The engine's watchdog wakes the link at [`Qdisc::next_wakeup`]. A failsafe time
//!   (1.5× the charge, not pushed by drops) is kept as Linux does.
//! - **Flow queues**: 1024, set-associative with 8 ways: a flow takes the queue its hash names,
//!   else the first one in its set of 8 reserved for it (tag) or idle; only when all 8 are busy does
//!   it share (a "collision").
//! - **Host isolation**: with dual-srchost / dual-dsthost / triple-isolate, a bulk flow's DRR
//!   quantum is divided by the number of bulk flows of its busiest host (source or destination), so
//!   hosts rather than flows share the link.
//! - **DRR++** ([`super::drr`]): new (sparse) flows before old (bulk) ones, flows that empty pass through a
//!   decaying list while their COBALT state relaxes; quantum from the rate (rate/4096 bytes, within
//!   300..1514).
//! - **COBALT** per flow ([`super::cobalt`]): CoDel marks ECT packets / drops others, BLUE drops.
//! - **autorate-ingress** ([`autorate`]): the shaper follows 15/16 of the peak rate of the
//!   traffic arriving at CAKE (for a CAKE behind a variable-rate bottleneck).
//! - **Memory limit**: above it, CAKE drops the head of the flow with the largest backlog, one
//!   packet at a time (`cake_drop`), and tells that flow's BLUE it overflowed.
//!
//! Differences from Linux, on purpose: one tin (`diffserv = "besteffort"`: packets carry no DSCP),
//! no ACK filter, no NAT lookup, no GSO splitting (packets are never aggregates);
//! memory is charged by packet size (Linux charges `skb->truesize`, typically 1.5–2× the size);
//! flows and hosts are hashed from the simulator's flow id and node ids; sizes are IP sizes, so
//! `overhead` adds to the IP length (as tc's `overhead N`, which first strips the MAC header).
//!
//! Files: this one holds the queue and its DRR++ dequeue; `hash.rs` the set-associative flow and
//! host tables (isolation), `shaper.rs` the shaper's fixed point and framing, `config.rs` the
//! `[queue]` keys; COBALT is [`super::cobalt`].
use std::collections::VecDeque;

use super::cobalt::{kt, CobaltParams, CobaltVars, Signal, P_DEC, P_INC};
use super::drr::{Drr, List};
use super::{try_mark, DropReason, Qdisc, QueueStats, QueuedDrop, Verdict};
use crate::packet::{PacketPool, PktId};
use crate::rng::Rng;
use crate::time::Time;

mod autorate;
mod config;
mod hash;
mod shaper;
#[cfg(test)]
mod tests;

pub use autorate::{ewma, Autorate};
pub use config::{build, read_params};
pub use shaper::rate_fixed_point;

/// Flow queues per tin (Linux `CAKE_QUEUES`).
pub const CAKE_QUEUES: usize = 1024;
/// Set associativity of the flow (and host) tables (Linux `CAKE_SET_WAYS`).
pub const CAKE_SET_WAYS: usize = 8;
/// `psched_mtu` of an Ethernet device: the MTU CAKE derives mtu_time and the limit from.
pub const MTU: u64 = 1514;
/// Linux `sch->limit` default (packets), which caps the memory limit at limit · MTU.
pub const PKT_LIMIT: u64 = 10240;
/// Default RTT (Linux `q->interval` = 100 ms) and target (5 ms).
pub const DEFAULT_RTT: Time = Time::from_ms(100);
pub const DEFAULT_TARGET: Time = Time::from_ms(5);

/// Flow-isolation bits (Linux `CAKE_FLOW_*`).
pub const FLOW_SRC_IP: u8 = 1;
pub const FLOW_DST_IP: u8 = 2;
pub const FLOW_FLOWS: u8 = 4;
pub const FLOW_DUAL_SRC: u8 = 5;
pub const FLOW_DUAL_DST: u8 = 6;
pub const FLOW_TRIPLE: u8 = 7;
/// tc's isolation keywords and their modes.
pub const ISOLATION: [(&str, u8); 8] = [
    ("flowblind", 0),
    ("srchost", FLOW_SRC_IP),
    ("dsthost", FLOW_DST_IP),
    ("hosts", FLOW_SRC_IP | FLOW_DST_IP),
    ("flows", FLOW_FLOWS),
    ("dual-srchost", FLOW_DUAL_SRC),
    ("dual-dsthost", FLOW_DUAL_DST),
    ("triple-isolate", FLOW_TRIPLE),
];

/// Link-layer framing compensation (tc `noatm` / `atm` / `ptm`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Framing {
    None,
    /// 48-byte cells of 53 bytes.
    Atm,
    /// One byte per 64 or part thereof (64b/65b).
    Ptm,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CakeParams {
    /// Shaped rate in bytes per second (Linux `rate_bps`, which holds bytes/s); 0 = unlimited.
    pub rate_bytes: u64,
    pub overhead: i32,
    pub mpu: u32,
    pub framing: Framing,
    /// User RTT (the CoDel interval before rate scaling) and target.
    pub rtt: Time,
    pub target: Time,
    pub flow_mode: u8,
    /// Ingress mode: drops count against the shaper and bulk flows stretch the target.
    pub ingress: bool,
    /// `memlimit` in bytes, None = Linux's automatic limit.
    pub memlimit: Option<u64>,
    /// tc's `autorate-ingress`: the shaper follows the arriving traffic's rate (`bandwidth` is
    /// the first estimate).
    pub autorate: bool,
    /// `autorate = { … }`: cake-autorate sets the shaper (`crate::cake_autorate`), from its base rate.
    pub controller: Option<crate::cake_autorate::Config>,
}

impl Default for CakeParams {
    fn default() -> Self {
        CakeParams { rate_bytes: 0, overhead: 0, mpu: 0, framing: Framing::None, rtt: DEFAULT_RTT, target: DEFAULT_TARGET, flow_mode: FLOW_TRIPLE, ingress: false, memlimit: None, autorate: false, controller: None }
    }
}

/// Flow membership of a queue (Linux `CAKE_SET_*`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum FlowSet {
    #[default]
    None,
    Sparse,
    /// Counted as sparse, rotating in the bulk list.
    SparseWait,
    Bulk,
    Decaying,
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    id: PktId,
    size: u32,
    adjusted: u32,
    enqueued: Time,
}

#[derive(Default, Debug)]
struct Flow {
    q: VecDeque<Entry>,
    /// Bytes queued (Linux `backlogs[idx]`).
    backlog: u64,
    cvars: CobaltVars,
    srchost: u16,
    dsthost: u16,
    set: FlowSet,
}

#[derive(Default, Debug, Clone, Copy)]
struct Host {
    srchost_tag: u32,
    dsthost_tag: u32,
    srchost_bulk: u16,
    dsthost_bulk: u16,
}

/// Set-associative hashing outcomes (Linux `way_*` counters).
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct WayStats {
    pub directs: u64,
    pub hits: u64,
    pub misses: u64,
    pub collisions: u64,
}

pub struct Cake {
    params: CakeParams,
    cparams: CobaltParams,
    rate_ns: u64,
    rate_shft: u32,
    flow_quantum: u32,
    buffer_limit: u64,
    buffer_used: u64,
    flows: Vec<Flow>,
    tags: Vec<u32>,
    hosts: Vec<Host>,
    /// The flow lists and deficits (DRR++: new, old and decaying flows).
    drr: Drr,
    sparse_count: u32,
    bulk_count: u32,
    decaying_count: u32,
    time_next_packet: i64,
    failsafe_next_packet: i64,
    /// 65535 / n (Linux `quantum_div`).
    quantum_div: Vec<u32>,
    salt: [u64; 3],
    rng: Rng,
    pkts: usize,
    bytes: u64,
    stats: QueueStats,
    pub ways: WayStats,
    /// Times the shaper held a packet back (Linux `overlimits`).
    pub overlimits: u64,
    autorate: Autorate,
}

impl Cake {
    pub fn new(params: CakeParams, mut rng: Rng) -> Self {
        let r = rates(&params);
        let mut quantum_div = vec![65535u32; CAKE_QUEUES + 1];
        for (i, q) in quantum_div.iter_mut().enumerate().skip(1) {
            *q = 65535 / i as u32;
        }
        let salt = [rng.next_u64(), rng.next_u64(), rng.next_u64()];
        let autorate = Autorate { avg_peak_bandwidth: params.rate_bytes, ..Default::default() };
        Cake {
            params,
            cparams: r.cparams,
            rate_ns: r.rate_ns,
            rate_shft: r.rate_shft,
            flow_quantum: r.flow_quantum,
            buffer_limit: r.buffer_limit,
            buffer_used: 0,
            flows: (0..CAKE_QUEUES).map(|_| Flow::default()).collect(),
            tags: vec![0; CAKE_QUEUES],
            hosts: vec![Host::default(); CAKE_QUEUES],
            drr: Drr::new(CAKE_QUEUES),
            sparse_count: 0,
            bulk_count: 0,
            decaying_count: 0,
            time_next_packet: 0,
            failsafe_next_packet: 0,
            quantum_div,
            salt,
            rng,
            pkts: 0,
            bytes: 0,
            stats: QueueStats::default(),
            ways: WayStats::default(),
            overlimits: 0,
            autorate,
        }
    }

    /// Linux `cake_reconfigure` at a new shaper rate (bytes/s; autorate-ingress).
    fn set_rate(&mut self, rate_bytes: u64) {
        self.params.rate_bytes = rate_bytes;
        let r = rates(&self.params);
        (self.cparams, self.rate_ns, self.rate_shft, self.flow_quantum, self.buffer_limit) = (r.cparams, r.rate_ns, r.rate_shft, r.flow_quantum, r.buffer_limit);
    }

    /// `tc qdisc change … cake bandwidth`: the shaper's new rate (bytes/s), as cake-autorate sets it
    /// (`cake_change` → `cake_reconfigure`; the next send time already set stays).
    pub fn set_shaper_rate(&mut self, rate_bytes: u64) { self.set_rate(rate_bytes) }
    /// The cake-autorate controller this CAKE's `autorate` table asks for.
    pub fn autorate_config(&self) -> Option<&crate::cake_autorate::Config> { self.params.controller.as_ref() }
    pub fn rate_bytes(&self) -> u64 { self.params.rate_bytes }
    pub fn cobalt_params(&self) -> &CobaltParams { &self.cparams }
    pub fn flow_quantum(&self) -> u32 { self.flow_quantum }
    pub fn buffer_limit(&self) -> u64 { self.buffer_limit }
    /// COBALT state of queue `idx`.
    pub fn cvars(&self, idx: usize) -> &CobaltVars { &self.flows[idx].cvars }
    pub fn flow_backlog(&self, idx: usize) -> usize { self.flows[idx].q.len() }
    pub fn flow_set(&self, idx: usize) -> FlowSet { self.flows[idx].set }
    pub fn counts(&self) -> (u32, u32, u32) { (self.sparse_count, self.bulk_count, self.decaying_count) }

    fn pop(&mut self, idx: usize) -> Option<Entry> {
        let e = self.flows[idx].q.pop_front()?;
        self.flows[idx].backlog -= e.size as u64;
        self.pkts -= 1;
        self.bytes -= e.size as u64;
        self.buffer_used -= e.size as u64;
        Some(e)
    }

    /// Linux `cake_drop`: the head of the longest queue (bytes) goes; its BLUE learns it
    /// overflowed. Returns the victim.
    fn drop_fattest(&mut self, now: Time) -> Option<Entry> {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.backlog > max {
                max = f.backlog;
                idx = i;
            }
        }
        let e = self.pop(idx)?;
        self.flows[idx].cvars.queue_full(&self.cparams, kt(now));
        if self.params.ingress {
            self.advance_shaper(e.adjusted, true);
        }
        Some(e)
    }

    /// Linux's `cake_dequeue` flow loop, once the shaper allowed a packet. None: nothing to send.
    /// Returns the packet, its queue, and whether COBALT marked it CE.
    fn dequeue_flow(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<(Entry, usize, bool)> {
        let know = kt(now);
        let mut first_flow = true;
        'begin: loop {
            if self.pkts == 0 || self.sparse_count + self.bulk_count == 0 {
                return None;
            }
            'retry: loop {
                // Decaying flows get one look first, then new (sparse) before old (bulk).
                let pick = if first_flow && !self.drr.is_empty(List::Decaying) {
                    List::Decaying
                } else if !self.drr.is_empty(List::New) {
                    List::New
                } else if !self.drr.is_empty(List::Old) {
                    List::Old
                } else if !self.drr.is_empty(List::Decaying) {
                    List::Decaying
                } else {
                    debug_assert!(false, "packets queued but no flow listed");
                    return None;
                };
                first_flow = false;
                let idx = self.drr.front(pick).unwrap();

                if self.drr.deficit(idx) <= 0 {
                    // Spent its quantum: a sparse flow with packets becomes bulk (an empty one
                    // only rotates with the bulk flows); top up, to the back of the old list.
                    if self.flows[idx].set == FlowSet::Sparse {
                        if !self.flows[idx].q.is_empty() {
                            self.sparse_count -= 1;
                            self.bulk_count += 1;
                            self.flows[idx].set = FlowSet::Bulk;
                            self.inc_bulk_hosts(idx);
                        } else {
                            self.flows[idx].set = FlowSet::SparseWait;
                        }
                    }
                    let q = self.get_flow_quantum(idx);
                    self.drr.top_up(idx, q as i64);
                    continue 'retry;
                }

                loop {
                    let Some(e) = self.pop(idx) else {
                        // Empty: BLUE relaxes; keep the flow on the decaying list until COBALT is at rest.
                        self.flows[idx].cvars.queue_empty(&self.cparams, know);
                        let cv = &self.flows[idx].cvars;
                        if cv.p_drop != 0 || cv.count != 0 || know < cv.drop_next {
                            self.drr.move_tail(idx, List::Decaying);
                            match self.flows[idx].set {
                                FlowSet::Bulk => {
                                    self.bulk_count -= 1;
                                    self.dec_bulk_hosts(idx);
                                    self.decaying_count += 1;
                                }
                                FlowSet::Sparse | FlowSet::SparseWait => {
                                    self.sparse_count -= 1;
                                    self.decaying_count += 1;
                                }
                                _ => {}
                            }
                            self.flows[idx].set = FlowSet::Decaying;
                        } else {
                            self.drr.unlink(idx);
                            match self.flows[idx].set {
                                FlowSet::Sparse | FlowSet::SparseWait => self.sparse_count -= 1,
                                FlowSet::Bulk => {
                                    self.bulk_count -= 1;
                                    self.dec_bulk_hosts(idx);
                                }
                                _ => self.decaying_count -= 1,
                            }
                            self.flows[idx].set = FlowSet::None;
                        }
                        continue 'begin;
                    };
                    let bulk = if self.params.ingress { self.bulk_count } else { 0 };
                    let rng = &mut self.rng;
                    let sig = self.flows[idx].cvars.should_drop(&self.cparams, know, kt(e.enqueued), bulk, || try_mark(pool, e.id), || (rng.next_u64() >> 32) as u32);
                    let why = match sig {
                        Signal::CodelDrop => DropReason::Codel,
                        Signal::BlueDrop => DropReason::Early,
                        Signal::Pass | Signal::Marked => return Some((e, idx, self.flows[idx].cvars.ecn_marked)),
                    };
                    // The last packet of a flow is never dropped.
                    if self.flows[idx].q.is_empty() {
                        return Some((e, idx, self.flows[idx].cvars.ecn_marked));
                    }
                    if self.params.ingress {
                        self.advance_shaper(e.adjusted, true);
                        self.drr.charge(idx, e.adjusted as i64);
                    }
                    self.stats.on_drop_queued(e.size, why);
                    dropped.push((e.id, why));
                    if self.params.ingress {
                        continue 'retry;
                    }
                }
            }
        }
    }
}


/// What `cake_set_rate` and `cake_reconfigure` derive from the rate and the keys.
struct Rates {
    cparams: CobaltParams,
    rate_ns: u64,
    rate_shft: u32,
    flow_quantum: u32,
    buffer_limit: u64,
}

fn rates(params: &CakeParams) -> Rates {
    let (rate_ns, rate_shft) = rate_fixed_point(params.rate_bytes);
    // Linux cake_set_rate: quantum rate/4096 within [300, 1514] when shaped, else 1514; CoDel
    // target stretched to 1.5 MTU times at low rates and the interval by as much.
    let flow_quantum = if params.rate_bytes == 0 { 1514 } else { (params.rate_bytes >> 12).clamp(300, 1514) as u32 };
    let byte_target_ns = (MTU * rate_ns) >> rate_shft;
    let target_ns = params.target.0;
    let target = (byte_target_ns * 3 / 2).max(target_ns);
    let interval = (params.rtt.0 + target - target_ns).max(target * 2);
    let cparams = CobaltParams { interval, target, mtu_time: byte_target_ns, p_inc: P_INC, p_dec: P_DEC };
    // Linux cake_reconfigure: four RTTs at the rate, at least 4 MiB, unless configured; never
    // above max(limit · MTU, memlimit).
    let mut buffer_limit = match (params.memlimit, params.rate_bytes) {
        (Some(m), _) => m,
        (None, 0) => u32::MAX as u64,
        (None, r) => ((r as u128 * (params.rtt.0 / 1000) as u128 / 250_000) as u64).max(4 << 20),
    };
    buffer_limit = buffer_limit.min((PKT_LIMIT * MTU).max(params.memlimit.unwrap_or(0)));
    Rates { cparams, rate_ns, rate_shft, flow_quantum, buffer_limit }
}

impl Qdisc for Cake {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let (size, flow, src, dst) = {
            let pk = pool.get(id);
            (pk.size, pk.flow, pk.src, pk.dst)
        };
        self.stats.on_arrival(size);
        let idx = self.classify(flow, src, dst);
        let know = kt(now);
        // A shaper idle in the past starts from now (no credit for idle time).
        if self.pkts == 0 && self.time_next_packet < know {
            self.time_next_packet = know;
            self.failsafe_next_packet = know;
        }
        let adjusted = self.adjusted_len(size);
        self.flows[idx].q.push_back(Entry { id, size, adjusted, enqueued: now });
        self.flows[idx].backlog += size as u64;
        self.pkts += 1;
        self.bytes += size as u64;
        self.buffer_used += size as u64;
        // autorate-ingress: the arrivals' rate sets the shaper (kernel: before the flow lists)
        if self.params.autorate {
            if let Some(r) = self.autorate.on_arrival(know, size as u64) {
                self.set_rate(r);
            }
        }

        match self.flows[idx].set {
            FlowSet::None | FlowSet::Decaying => {
                // A new (or returning) flow is sparse, with one quantum.
                if self.flows[idx].set == FlowSet::Decaying {
                    self.decaying_count -= 1;
                }
                self.flows[idx].set = FlowSet::Sparse;
                self.sparse_count += 1;
                let q = self.get_flow_quantum(idx);
                self.drr.make_new(idx, q as i64);
            }
            FlowSet::SparseWait => {
                // Was empty in the bulk rotation, counted as sparse: now bulk.
                self.flows[idx].set = FlowSet::Bulk;
                self.sparse_count -= 1;
                self.bulk_count += 1;
                self.inc_bulk_hosts(idx);
            }
            FlowSet::Sparse | FlowSet::Bulk => {}
        }

        let mut arriving_dropped = false;
        while self.buffer_used > self.buffer_limit {
            let Some(e) = self.drop_fattest(now) else { break };
            if e.id == id {
                arriving_dropped = true;
                self.stats.on_drop_arrival(e.size, DropReason::Overflow);
            } else {
                self.stats.on_drop_queued(e.size, DropReason::Overflow);
                dropped.push((e.id, DropReason::Overflow));
            }
        }
        if arriving_dropped {
            Verdict::Dropped(DropReason::Overflow)
        } else {
            self.stats.on_enqueue(size);
            Verdict::Queued
        }
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<PktId> {
        if self.pkts == 0 {
            return None;
        }
        let know = kt(now);
        // The shaper: nothing before time_next_packet (or the failsafe, whichever is earlier).
        if self.rate_ns != 0 && self.time_next_packet > know && self.failsafe_next_packet > know {
            self.overlimits += 1;
            return None;
        }
        let (e, idx, marked) = self.dequeue_flow(pool, now, dropped)?;
        // Charged to the shaper and the flow's deficit by its adjusted length.
        self.advance_shaper(e.adjusted, false);
        self.drr.charge(idx, e.adjusted as i64);
        if marked {
            self.stats.marked_pkts += 1;
        }
        self.stats.on_dequeue(e.size);
        Some(e.id)
    }

    fn peek(&self) -> Option<PktId> {
        self.drr.iter(&[List::Decaying, List::New, List::Old]).find_map(|f| self.flows[f].q.front().map(|e| e.id))
    }
    fn next_wakeup(&self, now: Time) -> Option<Time> {
        let know = kt(now);
        if self.pkts > 0 && self.rate_ns != 0 && self.time_next_packet > know && self.failsafe_next_packet > know {
            Some(Time(self.time_next_packet.min(self.failsafe_next_packet) as u64))
        } else {
            None
        }
    }
    fn as_cake(&self) -> Option<&Cake> { Some(self) }
    fn as_cake_mut(&mut self) -> Option<&mut Cake> { Some(self) }
    fn backlog_pkts(&self) -> usize { self.pkts }
    fn backlog_bytes(&self) -> u64 { self.bytes }
    fn stats(&self) -> &QueueStats { &self.stats }
    fn kind(&self) -> &'static str { "cake" }
}
