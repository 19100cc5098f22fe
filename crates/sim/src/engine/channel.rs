//! The engine's side of a channel (one direction of a link): a packet offered to the link's queue
//! discipline, the serialiser (a fixed rate, a shaper, or delivery opportunities), link loss, the
//! propagation delay and jitter, and the TX completions a sender watches. The channel's state lives
//! in [`crate::link::Channel`]; this is the code that moves packets through it.
//!
//! A fixed-rate link that finishes a packet with nothing queued behind it schedules no TxDone when
//! its discipline allows it ([`crate::qdisc::Qdisc::idle_dequeue_deferrable`]): the empty dequeue
//! that event would have made is made with the same `now` when the link is next used — an enqueue,
//! a watchdog, a queue sample, the end of `run_until` — if its (time, sequence number) comes before
//! the event running then; a packet queued behind it queues the TxDone under its reserved number
//! instead.
//!
//! A fixed-rate, lossless link in front of a FIFO discipline (DropTail, RED:
//! [`crate::qdisc::Qdisc::fifo_departures`]) schedules no TxDone at all: a packet it accepts
//! starts when the packet before it leaves (or at once on an idle link), so its departure and its
//! arrival at the far end are known when it is queued, and its Arrive is scheduled then. The
//! discipline's dequeues are made later, each with its own time, whenever something next looks at
//! the link (an enqueue, a queue sample, the end of the run): every dequeue
//! due at or before that instant is made first. Among events at the same instant this moves a
//! dequeue before the enqueue or arrival it meets there, and each Arrive takes the sequence number
//! of its packet's enqueue, not of its departure: an order change at equal times, with the same
//! state at every distinct time.
use super::Core;
use crate::link::Channel;
use crate::event::Ev;
use crate::link::OPPORTUNITY_BYTES;
use crate::packet::{Body, ChanId, NodeId, PktId};
use crate::qdisc::{DropReason, Verdict};
use crate::time::Time;

impl Channel {
    /// Whether this channel computes its departures at enqueue (see the module doc).
    pub(crate) fn fifo_departures(&self) -> bool {
        self.opp.is_none() && !self.shaper && self.bucket.is_none() && self.loss == 0.0 && self.loss_bursts.is_none() && self.qdisc.fifo_departures() && self.qdisc.idle_dequeue_deferrable()
    }
}

impl Core {
    /// Makes, on the FIFO channel `ch`, every dequeue due at or before `until` (each with its own
    /// time), then the empty dequeue of a link that went idle by then.
    #[inline(always)]
    pub(super) fn settle_fifo(&mut self, ch: ChanId, until: Time) {
        let c = &self.chans[ch as usize];
        // Mostly nothing is due: checked here, inline, before the call that does the work.
        if c.fifo_starts.front().is_some_and(|&(s, _)| s <= until) || c.idle_at.is_some_and(|(t, _)| t <= until) {
            self.settle_fifo_due(ch, until);
        }
    }

    #[inline(never)]
    fn settle_fifo_due(&mut self, ch: ChanId, until: Time) {
        let c = &mut self.chans[ch as usize];
        while let Some(&(start, size)) = c.fifo_starts.front() {
            if start > until {
                return;
            }
            c.fifo_starts.pop_front();
            let got = c.qdisc.dequeue(&mut self.pool, start, &mut self.scratch);
            // A FIFO discipline (fifo_departures) hands back what it accepted and drops nothing then.
            assert!(got.is_some() && self.scratch.is_empty(), "queue discipline {} broke its fifo_departures promise", c.qdisc.kind());
            c.tx_pkts += 1;
            c.tx_bytes += size as u64;
        }
        if c.idle_at.is_some_and(|(t, _)| t <= until) {
            self.idle_dequeue(ch);
        }
    }

    /// `enqueue` on a FIFO channel: the packet's start, departure and arrival are fixed now.
    fn enqueue_fifo(&mut self, ch: ChanId, id: PktId, size: u32) {
        let now = self.now;
        self.settle_fifo(ch, now);
        // One borrow of the channel for the whole path (each `self.chans[ch]` is a bounds check).
        let Core { chans, pool, scratch, .. } = self;
        let c = &mut chans[ch as usize];
        let idle = c.free_at <= now;
        let start = if idle && c.pass_max.is_some_and(|m| size as u64 <= m) {
            // What the discipline's pass_idle would do (an idle FIFO link's queue is empty: every
            // packet accepted before started by `free_at`), counted here (Qdisc::idle_pass_max).
            c.passes.0 += 1;
            c.passes.1 += size as u64;
            now
        } else if idle && c.qdisc.pass_idle(size, now) {
            now
        } else {
            let verdict = c.qdisc.enqueue(id, pool, now, scratch);
            if !scratch.is_empty() || matches!(verdict, Verdict::Dropped(_)) {
                return self.fifo_refused(ch, id, verdict);
            }
            if idle {
                // What start_tx does on an idle link: the packet is dequeued at once.
                let got = c.qdisc.dequeue(pool, now, scratch);
                assert!(got == Some(id) && scratch.is_empty(), "queue discipline {} broke its fifo_departures promise", c.qdisc.kind());
                now
            } else {
                c.fifo_starts.push_back((c.free_at, size));
                c.free_at
            }
        };
        if start == now {
            c.tx_pkts += 1;
            c.tx_bytes += size as u64;
        }
        let bytes = size as u64 + c.overhead as u64;
        let tx = if c.tx_memo.0 == c.rate.0 && c.tx_memo.1 == bytes {
            c.tx_memo.2
        } else {
            let tx = c.rate.tx_time(bytes);
            c.tx_memo = (c.rate.0, bytes, tx);
            tx
        };
        let depart = start + tx;
        c.free_at = depart;
        // The empty dequeue the link makes when this packet leaves, unless one queues behind it;
        // none to make when it would change nothing (`Sim::run` reads `free_at` for those links).
        if !c.noop_idle {
            c.idle_at = Some((depart, 0));
        }
        let arrive = c.arrival(depart);
        let to = c.to;
        self.left_queue(ch, id, depart);
        self.events.push(arrive, Ev::Arrive(to, id));
    }

    /// A FIFO discipline refused the packet `enqueue_fifo` offered (or, against its promise,
    /// dropped others to make room): accounts the drops; a packet it kept takes the ordinary
    /// FIFO path from its verdict on.
    #[cold]
    #[inline(never)]
    fn fifo_refused(&mut self, ch: ChanId, id: PktId, verdict: Verdict) {
        self.drop_scratch(ch);
        if let Verdict::Dropped(why) = verdict {
            self.drop_pkt(id, ch, why);
            return;
        }
        panic!("queue discipline {} broke its fifo_departures promise (dropped a queued packet at enqueue)", self.chans[ch as usize].qdisc.kind());
    }

    /// Makes the deferred empty dequeue of `ch` if the TxDone it stands for would have run before
    /// the event being dispatched (see `Channel::idle_at`).
    #[inline(always)]
    pub(super) fn settle(&mut self, ch: ChanId) {
        if self.chans[ch as usize].fifo {
            return self.settle_fifo(ch, self.now);
        }
        let c = &mut self.chans[ch as usize];
        if let Some(k) = c.idle_at {
            if k < (self.now, self.cur) {
                if c.noop_idle {
                    // The deferred empty dequeue would change nothing: only the link goes idle.
                    c.idle_at = None;
                    c.busy = false;
                } else {
                    self.idle_dequeue(ch);
                }
            }
        }
    }

    /// Settles every channel whose deferred TxDone is due at or before `until` (end of a run).
    pub(super) fn settle_until(&mut self, until: Time) {
        for ch in 0..self.chans.len() {
            if self.chans[ch].fifo {
                self.settle_fifo(ch as ChanId, until);
                continue;
            }
            if self.chans[ch].idle_at.is_some_and(|(t, _)| t <= until) {
                self.idle_dequeue(ch as ChanId);
            }
        }
    }

    /// What the deferred TxDone's `start_tx` would have done: an empty dequeue at its own time.
    pub(super) fn idle_dequeue(&mut self, ch: ChanId) {
        let c = &mut self.chans[ch as usize];
        let Some((t, _)) = c.idle_at.take() else { return };
        c.busy = false;
        if c.noop_idle {
            return;
        }
        let got = c.qdisc.dequeue(&mut self.pool, t, &mut self.scratch);
        // The discipline promised this (idle_dequeue_deferrable); anything else is a broken invariant.
        assert!(got.is_none() && self.scratch.is_empty() && c.qdisc.backlog_pkts() == 0, "queue discipline {} broke its idle_dequeue_deferrable promise", c.qdisc.kind());
    }


    /// Offers packet `id` of `size` bytes to channel `ch`.
    pub(super) fn enqueue(&mut self, ch: ChanId, id: PktId, size: u32) {
        if self.chans[ch as usize].fifo {
            return self.enqueue_fifo(ch, id, size);
        }
        let now = self.now;
        // Mahimahi's read_packet(): rationalize(now) — use every opportunity stamped <= now —
        // before the packet joins the queue, so it can only leave with a later one.
        if let Some(o) = &self.chans[ch as usize].opp {
            if o.pending.is_some_and(|t| t <= now) {
                self.run_opportunities(ch);
            }
        }
        self.settle(ch);
        let c = &mut self.chans[ch as usize];
        if !c.busy && c.opp.is_none() {
            // Idle fixed-rate link: a discipline that would hand the packet straight back lets it
            // through without queueing (same state, same stats; see Qdisc::pass_idle).
            if c.qdisc.pass_idle(size, now) {
                self.launch(ch, id, size, true);
                return;
            }
        }
        let verdict = self.chans[ch as usize].qdisc.enqueue(id, &mut self.pool, now, &mut self.scratch);
        self.drop_scratch(ch);
        match verdict {
            Verdict::Queued | Verdict::Marked => {
                let c = &mut self.chans[ch as usize];
                if let Some(o) = &mut c.opp {
                    if o.pending.is_none() {
                        // Idle link: every opportunity up to this millisecond found the queue
                        // empty and is wasted; the packet waits for the first one after it.
                        let now_ms = now.ns() / 1_000_000;
                        let first = o.trace.first_after(now_ms);
                        o.next = o.next.max(first);
                        let t = Time::from_ms(o.trace.at(o.next));
                        o.pending = Some(t);
                        self.events.push(t, Ev::TxDone(ch));
                    }
                } else if !c.busy {
                    self.start_tx(ch);
                } else if let Some((t, seq)) = c.idle_at.take() {
                    // The packet on the wire now has one behind it: its TxDone must run.
                    self.events.push_reserved(t, seq, Ev::TxDone(ch));
                }
            }
            Verdict::Dropped(why) => self.drop_pkt(id, ch, why),
        }
    }

    /// Frees and accounts the packets a discipline removed from inside its queue.
    #[inline(always)]
    pub(super) fn drop_scratch(&mut self, ch: ChanId) {
        if !self.scratch.is_empty() {
            let mut scratch = std::mem::take(&mut self.scratch);
            for (victim, why) in scratch.drain(..) {
                self.drop_pkt(victim, ch, why);
            }
            self.scratch = scratch;
        }
    }

    pub(super) fn drop_pkt(&mut self, id: PktId, ch: ChanId, _why: DropReason) {
        self.left_queue(ch, id, self.now);
        self.account_drop(id, ch);
    }

    /// Counts packet `id`, lost on channel `ch`, as dropped and frees it (in place: a packet is
    /// 144 bytes, not worth copying out to read three fields).
    pub(super) fn account_drop(&mut self, id: PktId, ch: ChanId) {
        let pkt = self.pool.get(id);
        let c = self.tables.counters_mut(pkt.flow);
        c.dropped_pkts += 1;
        c.dropped_bytes += pkt.size as u64;
        self.tables.dropped_pkts += 1;
        self.tables.dropped_bytes += pkt.size as u64;
        if let Body::Media { row, .. } = pkt.body {
            self.tables.media.lost_where[row as usize] = ch as i32;
        }
        self.pool.free(id);
    }

    /// Takes the next packet off the channel's queue and puts it on the wire.
    pub(super) fn start_tx(&mut self, ch: ChanId) {
        let now = self.now;
        let next = self.chans[ch as usize].qdisc.dequeue(&mut self.pool, now, &mut self.scratch);
        self.drop_scratch(ch);
        let Some(id) = next else {
            let c = &mut self.chans[ch as usize];
            c.busy = false;
            // A non-work-conserving discipline holding packets names when to ask again.
            if c.qdisc.backlog_pkts() > 0 {
                if let Some(t) = c.qdisc.next_wakeup(now) {
                    let t = t.max(now);
                    if c.wakeup.is_none_or(|w| w > t || w < now) {
                        c.wakeup = Some(t);
                        self.events.push(t, Ev::Wakeup(ch));
                    }
                }
            }
            return;
        };
        let size = self.pool.get(id).size;
        let c = &self.chans[ch as usize];
        let idle_after = c.qdisc.backlog_pkts() == 0 && c.qdisc.idle_dequeue_deferrable();
        self.launch(ch, id, size, idle_after);
    }

    /// Puts packet `id` of `size` bytes, just dequeued, on the wire of the fixed-rate channel `ch`;
    /// `idle_after`: nothing waits behind it and the discipline's empty dequeue may be deferred.
    #[inline(always)]
    pub(super) fn launch(&mut self, ch: ChanId, id: PktId, size: u32, idle_after: bool) {
        let now = self.now;
        let c = &mut self.chans[ch as usize];
        c.busy = true;
        let bytes = size as u64 + c.overhead as u64;
        let tx = if c.tx_memo.0 == c.rate.0 && c.tx_memo.1 == bytes {
            c.tx_memo.2
        } else {
            let tx = c.rate.tx_time(bytes);
            c.tx_memo = (c.rate.0, bytes, tx);
            tx
        };
        // HTB's token bucket frees the link once its tokens are back at 0, at once if the burst covers it.
        let free_at = match &mut c.bucket {
            Some(b) => b.send(now, tx),
            None => now + tx,
        };
        let seq = self.events.reserve();
        if idle_after {
            // Nothing waits behind this packet: its TxDone would only find the queue empty.
            c.idle_at = Some((free_at, seq));
        } else {
            self.events.push_reserved(free_at, seq, Ev::TxDone(ch));
        }
        // A shaper releases the packet now and spends its serialisation time before the next one.
        let depart = if c.shaper || c.bucket.is_some() { now } else { free_at };
        self.transmitted(ch, id, size, depart);
    }

    /// A packet left the serialiser at `depart`: count it, apply link loss, schedule its arrival
    /// after the propagation delay and jitter (FIFO kept unless `reorder`).
    #[inline(always)]
    pub(super) fn transmitted(&mut self, ch: ChanId, id: PktId, size: u32, depart: Time) {
        self.left_queue(ch, id, depart.max(self.now));
        let c = &mut self.chans[ch as usize];
        c.tx_pkts += 1;
        c.tx_bytes += size as u64;
        let lost = match &mut c.loss_bursts {
            Some(b) => b.lost_at(depart),
            None => c.loss > 0.0 && c.rng.uniform() < c.loss,
        };
        if lost {
            c.lost_pkts += 1;
            c.lost_bytes += size as u64;
            self.account_drop(id, ch);
            return;
        }
        let arrive = c.arrival(depart);
        let to = c.to;
        self.events.push(arrive, Ev::Arrive(to, id));
    }

    /// Packet `id` left channel `ch`'s queue at `at` (sent or dropped): its TX completion if that
    /// queue is its node's own; a network queue's packets completed when the link took them
    /// (`Channel::network_queue`, `Sim::forward`).
    #[inline(always)]
    fn left_queue(&mut self, ch: ChanId, id: PktId, at: Time) {
        let c = &self.chans[ch as usize];
        if !c.network_queue {
            let from = c.from;
            self.tx_complete(from, id, at);
        }
    }

    /// Schedules the TX completion of packet `id` at `at` if it is leaving its source node `node`
    /// (its first link) and its flow is watched by an agent on that node.
    #[inline(always)]
    pub(super) fn tx_complete(&mut self, node: NodeId, id: PktId, at: Time) {
        if self.tx_watch.is_empty() {
            return;
        }
        let p = self.pool.get(id);
        if p.src != node {
            return;
        }
        if let Some(&a) = self.tx_watch.get(p.flow as usize) {
            if a != u32::MAX && self.agent_node[a as usize] == node {
                self.decide_completion(a, at, p.size);
            }
        }
    }

    /// Mahimahi's rationalize(now) for an opportunity-driven channel: uses, in order, every
    /// opportunity stamped at or before the current millisecond, then schedules the next one if
    /// anything is left to send (otherwise the link idles and wastes opportunities until the next
    /// enqueue).
    pub(super) fn run_opportunities(&mut self, ch: ChanId) {
        let now = self.now;
        let now_ms = now.ns() / 1_000_000;
        loop {
            let o = self.chans[ch as usize].opp.as_mut().expect("opportunity channel");
            let t_ms = o.trace.at(o.next);
            if t_ms > now_ms {
                break;
            }
            o.next = o.trace.next(o.next);
            // One opportunity: 1504 bytes for the packet in transit, then for queued packets.
            let t = Time::from_ms(t_ms);
            let mut left = OPPORTUNITY_BYTES;
            while left > 0 {
                let cur = self.chans[ch as usize].opp.as_ref().expect("opp").in_transit;
                let (id, need) = match cur {
                    Some(x) => x,
                    None => {
                        if !self.iub_open(ch, t_ms) {
                            break;
                        }
                        match self.dequeue(ch) {
                            Some(id) => {
                                let size = self.pool.get(id).size;
                                if let Some(g) = self.chans[ch as usize].opp.as_mut().expect("opp").gate.as_mut() {
                                    g.count(size);
                                }
                                (id, size)
                            }
                            None => break,
                        }
                    }
                };
                let o = self.chans[ch as usize].opp.as_mut().expect("opp");
                if need > left {
                    // The packet keeps the rest of this opportunity and continues in the next.
                    o.in_transit = Some((id, need - left));
                    left = 0;
                } else {
                    o.in_transit = None;
                    left -= need;
                    let size = self.pool.get(id).size;
                    self.transmitted(ch, id, size, t);
                }
            }
            let c = &self.chans[ch as usize];
            if c.opp.as_ref().expect("opp").in_transit.is_none() && c.qdisc.backlog_pkts() == 0 {
                break;
            }
        }
        let c = &mut self.chans[ch as usize];
        let backlog = c.qdisc.backlog_pkts();
        let o = c.opp.as_mut().expect("opp");
        if o.in_transit.is_some() || backlog > 0 {
            let t = Time::from_ms(o.trace.at(o.next));
            o.pending = Some(t);
            self.events.push(t, Ev::TxDone(ch));
        } else {
            o.pending = None;
            if let Some(g) = o.gate.as_mut() {
                g.ran_dry(now_ms);
            }
        }
    }

    /// Whether the channel's Iub gate (if any) lets a packet start at millisecond `t_ms`; when it
    /// does not, the opportunities left in this cycle are skipped (lost to other users).
    fn iub_open(&mut self, ch: ChanId, t_ms: u64) -> bool {
        let o = self.chans[ch as usize].opp.as_mut().expect("opp");
        let Some(g) = o.gate.as_mut() else { return true };
        if g.open(t_ms) {
            return true;
        }
        let until = g.next_cycle_ms();
        while o.trace.at(o.next) < until {
            o.next = o.trace.next(o.next);
        }
        false
    }

    /// Dequeues the channel's next packet (drops the qdisc makes on the way are accounted).
    pub(super) fn dequeue(&mut self, ch: ChanId) -> Option<PktId> {
        let now = self.now;
        let mut scratch = std::mem::take(&mut self.scratch);
        let next = self.chans[ch as usize].qdisc.dequeue(&mut self.pool, now, &mut scratch);
        for (victim, why) in scratch.drain(..) {
            self.drop_pkt(victim, ch, why);
        }
        self.scratch = scratch;
        next
    }
}
