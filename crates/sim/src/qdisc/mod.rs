//! Queue disciplines, shaped after Linux's `Qdisc_ops`: `enqueue` decides the arriving packet's fate,
//! `dequeue` hands the link its next packet. Each discipline keeps its parameters (validated when
//! built), its state and its [`QueueStats`] apart. A new discipline is one file in this folder plus
//! one line in [`REGISTRY`].
//!
//! Counter identities every discipline keeps (checked by [`QueueStats::check`] in tests):
//! - arrived = enqueued + dropped on arrival
//! - backlog = enqueued − dequeued − dropped from the queue (after enqueue)
use crate::config::{ConfigError, Params};
use crate::packet::{Ecn, PacketPool, PktId};
use crate::time::{Rate, Time};

pub mod cake;
pub mod cobalt;
pub mod codel;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod fq_codel;
pub mod fq_pie;
pub mod pie;
pub mod red;

#[cfg(test)]
pub(crate) mod testutil;

/// Why a packet was dropped. Recorded per queue and (for media) per packet as `lost_where`.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum DropReason {
    /// The hard limit (packets or bytes) was reached.
    Overlimit,
    /// An AQM's random early drop (RED below max_th, PIE).
    Early,
    /// An AQM's forced drop without the hard limit (RED avg above max_th / 2·max_th with gentle).
    Forced,
    /// CoDel's control law at dequeue.
    Codel,
    /// FQ-CoDel's drop from the fattest flow when the shared limit is hit.
    Overflow,
}

impl DropReason {
    pub const ALL: [DropReason; 5] = [DropReason::Overlimit, DropReason::Early, DropReason::Forced, DropReason::Codel, DropReason::Overflow];
    pub fn index(self) -> usize { self as usize }
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overlimit => "overlimit",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::Codel => "codel",
            DropReason::Overflow => "overflow",
        }
    }
}

/// Fate of the arriving packet.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Verdict {
    Queued,
    /// Queued and marked CE (the discipline already set the packet's ECN field).
    Marked,
    /// Not queued; the caller frees the packet and records the drop.
    Dropped(DropReason),
}

/// Counters of one queue.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub arrived_pkts: u64,
    pub arrived_bytes: u64,
    pub enqueued_pkts: u64,
    pub enqueued_bytes: u64,
    pub dequeued_pkts: u64,
    pub dequeued_bytes: u64,
    /// Arriving packets refused.
    pub dropped_on_arrival_pkts: u64,
    pub dropped_on_arrival_bytes: u64,
    /// Packets removed after being queued (CoDel at dequeue, FQ-CoDel overflow, RED victims).
    pub dropped_in_queue_pkts: u64,
    pub dropped_in_queue_bytes: u64,
    pub drops_by_reason: [u64; 5],
    pub marked_pkts: u64,
}

impl QueueStats {
    pub fn dropped_pkts(&self) -> u64 { self.dropped_on_arrival_pkts + self.dropped_in_queue_pkts }
    pub fn dropped_bytes(&self) -> u64 { self.dropped_on_arrival_bytes + self.dropped_in_queue_bytes }

    pub fn on_arrival(&mut self, bytes: u32) {
        self.arrived_pkts += 1;
        self.arrived_bytes += bytes as u64;
    }
    pub fn on_enqueue(&mut self, bytes: u32) {
        self.enqueued_pkts += 1;
        self.enqueued_bytes += bytes as u64;
    }
    pub fn on_dequeue(&mut self, bytes: u32) {
        self.dequeued_pkts += 1;
        self.dequeued_bytes += bytes as u64;
    }
    pub fn on_drop_arrival(&mut self, bytes: u32, why: DropReason) {
        self.dropped_on_arrival_pkts += 1;
        self.dropped_on_arrival_bytes += bytes as u64;
        self.drops_by_reason[why.index()] += 1;
    }
    pub fn on_drop_queued(&mut self, bytes: u32, why: DropReason) {
        self.dropped_in_queue_pkts += 1;
        self.dropped_in_queue_bytes += bytes as u64;
        self.drops_by_reason[why.index()] += 1;
    }

    /// Checks the counter identities against the discipline's actual backlog.
    pub fn check(&self, backlog_pkts: usize, backlog_bytes: u64) -> Result<(), String> {
        if self.arrived_pkts != self.enqueued_pkts + self.dropped_on_arrival_pkts {
            return Err(format!("arrived {} != enqueued {} + dropped on arrival {}", self.arrived_pkts, self.enqueued_pkts, self.dropped_on_arrival_pkts));
        }
        if self.arrived_bytes != self.enqueued_bytes + self.dropped_on_arrival_bytes {
            return Err("arrived bytes != enqueued + dropped-on-arrival bytes".into());
        }
        let expect = self.enqueued_pkts as i128 - self.dequeued_pkts as i128 - self.dropped_in_queue_pkts as i128;
        if expect != backlog_pkts as i128 {
            return Err(format!("backlog {} != enqueued {} - dequeued {} - dropped in queue {}", backlog_pkts, self.enqueued_pkts, self.dequeued_pkts, self.dropped_in_queue_pkts));
        }
        let expect_b = self.enqueued_bytes as i128 - self.dequeued_bytes as i128 - self.dropped_in_queue_bytes as i128;
        if expect_b != backlog_bytes as i128 {
            return Err(format!("backlog bytes {backlog_bytes} != {expect_b}"));
        }
        if self.drops_by_reason.iter().sum::<u64>() != self.dropped_pkts() {
            return Err("drops by reason do not add up".into());
        }
        Ok(())
    }
}

/// A packet removed from inside a queue (not the arriving one) with the reason.
pub type QueuedDrop = (PktId, DropReason);

/// What the link tells a discipline when it is built.
#[derive(Copy, Clone, Debug)]
pub struct LinkInfo {
    /// Link rate (for RED's idle-time correction, PIE's drain-rate estimate).
    pub rate: Rate,
    /// Typical packet size in bytes, when the scenario gives none (ns-2's mean_pktsize_ = 500).
    pub mtu: u32,
}

/// A queue discipline. All calls get `now`; none may read a clock.
pub trait Qdisc {
    /// Offer the packet `id` (already in `pool`). The discipline may mark it (set CE in the pool),
    /// queue it, or refuse it. Packets it removes from inside the queue to make room go to `dropped`
    /// (their stats already counted); the caller frees them.
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Verdict;
    /// Next packet for the link, or None when empty. Packets dropped at dequeue go to `dropped`.
    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<PktId>;
    /// The packet at the head of the queue that `dequeue` would serve next, without side effects
    /// (Linux's `->peek`, `qdisc_peek_head` for FIFO-based disciplines). An AQM may still drop it
    /// when it is dequeued.
    fn peek(&self) -> Option<PktId>;
    /// When a discipline that holds packets but returned None from `dequeue` (a shaper out of
    /// tokens, a time-driven scheduler) wants to be asked again; the engine arms this watchdog
    /// whenever the link goes idle (Linux's `qdisc_watchdog_schedule_ns`). None: only the next
    /// arrival wakes the link, which is right for every work-conserving discipline.
    fn next_wakeup(&self, _now: Time) -> Option<Time> { None }
    /// Whether a `dequeue` while the discipline holds no packet returns None, removes nothing and
    /// changes neither `stats()` nor the backlog (hidden state may change, as RED's idle start or
    /// CoDel leaving its dropping state, if it depends only on the state and `now`). The engine may
    /// then defer that call: a fixed-rate link that finishes a packet with nothing queued behind it
    /// schedules no event, and makes the same call, with the same `now` and in the same order
    /// relative to every other call on this discipline, just before it next uses the discipline.
    /// Conservative default: false (the engine schedules the link's event as always).
    fn idle_dequeue_deferrable(&self) -> bool { false }
    /// Fast path for an idle link (nothing on the wire) offering a packet of `size` bytes: when the
    /// discipline would accept it and its next `dequeue` at the same `now` would hand that very
    /// packet back — leaving it empty, with `idle_dequeue_deferrable` true and nothing dropped —,
    /// it makes exactly the state and `stats()` changes of that enqueue and dequeue and returns
    /// true; the engine then puts the packet on the wire without queueing it. Otherwise it changes
    /// nothing and returns false (the engine takes the ordinary path). Default: false.
    fn pass_idle(&mut self, _size: u32, _now: Time) -> bool { false }
    /// Some(b): while the discipline holds no packet, [`Qdisc::pass_idle`] takes every packet of
    /// at most `b` bytes and changes nothing but `stats()`'s arrival, enqueue and dequeue
    /// counters (one packet of its size each; a plain FIFO). The engine then makes those passes
    /// itself on a FIFO link (no call a packet) and hands their count over with
    /// [`Qdisc::count_passes`] before `stats()` is read: at the end of `run_until`, `run` and
    /// `finish`, and before a queue sample. Asked once, when the run starts. Default: None.
    fn idle_pass_max(&self) -> Option<u64> { None }
    /// Counts `pkts` passes of `bytes` bytes in all that the engine made for this discipline
    /// (see [`Qdisc::idle_pass_max`]): what `pkts` calls of `pass_idle` returning true would have
    /// added to `stats()`.
    fn count_passes(&mut self, _pkts: u64, _bytes: u64) {}
    /// Whether a `dequeue` while the discipline holds no packet changes nothing at all, hidden
    /// state included (a plain FIFO); the engine then skips the deferred empty dequeue of
    /// `idle_dequeue_deferrable`. Asked once, when the run starts. Default: false.
    fn empty_dequeue_is_noop(&self) -> bool { false }
    /// Whether the discipline is a plain FIFO for the link: `dequeue` hands queued packets back in
    /// the order they were accepted, never drops at dequeue, removes nothing from inside the queue
    /// at `enqueue`, and depends on `now` only when it finds the queue empty (with
    /// `idle_dequeue_deferrable` true). A fixed-rate link then knows each packet's departure when
    /// the packet is queued: the engine schedules its arrival at once and makes the dequeues later,
    /// each with its own `now`, before anything else uses the discipline (no event per departure).
    /// Such a dequeue must not read the packet from the pool: it may have arrived, and left the
    /// pool, before its dequeue is made.
    /// Asked once, when the run starts. Default: false.
    fn fifo_departures(&self) -> bool { false }
    /// The discipline as CAKE, whose shaper rate a controller may set (`crate::cake_autorate`).
    fn as_cake(&self) -> Option<&cake::Cake> { None }
    fn as_cake_mut(&mut self) -> Option<&mut cake::Cake> { None }
    fn backlog_pkts(&self) -> usize;
    fn backlog_bytes(&self) -> u64;
    fn stats(&self) -> &QueueStats;
    /// Registry name, e.g. "droptail".
    fn kind(&self) -> &'static str;
}

/// Marks `id` CE if it is ECN-capable (Linux `INET_ECN_set_ce`: true for ECT(0/1) and CE).
pub(crate) fn try_mark(pool: &mut PacketPool, id: PktId) -> bool {
    let pk = pool.get_mut(id);
    if pk.ecn.is_ect() {
        pk.ecn = Ecn::Ce;
        true
    } else {
        false
    }
}

/// Builder of a discipline from its `[queue]` table. Each reads its keys through `Params`, which
/// rejects unknown keys with their path.
pub type Builder = fn(&mut Params, LinkInfo, &mut crate::rng::Rng) -> Result<Box<dyn Qdisc>, ConfigError>;

/// Every discipline the scenario's `queue.kind` may name.
pub const REGISTRY: &[(&str, Builder)] = &[
    ("droptail", droptail::build),
    ("red", red::build),
    ("codel", codel::build),
    ("fq_codel", fq_codel::build),
    ("pie", pie::build),
    ("cake", cake::build),
    ("fq_pie", fq_pie::build),
    ("dualpi2", dualpi2::build),
];

pub fn kinds() -> Vec<&'static str> { REGISTRY.iter().map(|(k, _)| *k).collect() }

/// Looks up `kind` in the registry.
pub fn builder(kind: &str) -> Option<Builder> { REGISTRY.iter().find(|(k, _)| *k == kind).map(|(_, b)| *b) }
