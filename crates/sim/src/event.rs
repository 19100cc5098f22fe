//! The event queue: a binary min-heap ordered by (time, sequence number), so events at the same
//! instant run in the order they were scheduled. This total order is what makes runs reproducible.
//!
//! The sequence number of an event is drawn when the event is *decided*, which need not be when it
//! enters the heap: [`EventQueue::reserve`] draws one and [`EventQueue::push_reserved`] inserts an
//! event under it later. An event inserted late under its reserved number runs exactly where it
//! would have run had it been pushed at once, provided it enters the heap before anything ordered
//! after it has been popped. The engine uses this to leave out events that would find nothing to
//! do (a link finishing a packet with an empty queue behind it, a timer re-armed before it fires)
//! and still run the ones that matter in the original order.
//!
//! Entries are 24 bytes: the time, the sequence number with the kind of event in its low 3 bits
//! (unique numbers make the kind irrelevant to the order), and two 32-bit operands.
use crate::packet::{AgentId, ChanId, NodeId, PktId};
use crate::time::Time;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A channel finished serialising its current packet.
    TxDone(ChanId),
    /// The qdisc watchdog of an idle channel (see [`crate::qdisc::Qdisc::next_wakeup`]).
    Wakeup(ChanId),
    /// A packet reaches a node (the far end of the channel it crossed, or its own node when it
    /// was sent to itself): the node is in the event, so its arrival reads nothing of the channel.
    Arrive(NodeId, PktId),
    /// Timer slot `slot` (an agent's timer key, see `engine::TimerSlot`); stale unless the slot
    /// still expects an event under this entry's (time, sequence number).
    Timer(u32),
    /// Periodic queue sampling.
    Sample,
    /// Start of an agent (its `start` hook).
    Start(AgentId),
    /// TX completion: a packet of `size` bytes that the agent sent has left its host's first link
    /// (see [`crate::engine::Ctx::watch_tx_completion`]).
    TxComplete(AgentId, u32),
}

const TAG_BITS: u32 = 3;

impl Ev {
    #[inline(always)]
    fn pack(self) -> (u64, u32, u32) {
        match self {
            Ev::TxDone(c) => (0, c, 0),
            Ev::Wakeup(c) => (1, c, 0),
            Ev::Arrive(c, p) => (2, c, p.0),
            Ev::Timer(s) => (3, s, 0),
            Ev::Sample => (4, 0, 0),
            Ev::Start(a) => (5, a, 0),
            Ev::TxComplete(a, n) => (6, a, n),
        }
    }
    #[inline(always)]
    fn unpack(tag: u64, a: u32, b: u32) -> Ev {
        match tag {
            0 => Ev::TxDone(a),
            1 => Ev::Wakeup(a),
            2 => Ev::Arrive(a, PktId(b)),
            3 => Ev::Timer(a),
            4 => Ev::Sample,
            5 => Ev::Start(a),
            _ => Ev::TxComplete(a, b),
        }
    }
}

#[derive(Copy, Clone, Debug)]
struct Entry {
    t: u64,
    /// seq << TAG_BITS | kind.
    s: u64,
    a: u32,
    b: u32,
}

impl Entry {
    #[inline(always)]
    fn key(&self) -> u128 { (self.t as u128) << 64 | self.s as u128 }
}

/// The (time, sequence number) an event runs under; ordered as the queue orders events.
pub type Key = (Time, u64);

/// Puts `e` into the hole at index `i` of the heap `h` and moves it up past every larger parent.
#[inline(always)]
fn sift_up(h: &mut [Entry], mut i: usize, e: Entry) {
    let k = e.key();
    while i > 0 {
        let p = (i - 1) / 2;
        // SAFETY: p < i < h.len() (callers pass an index inside `h`, and i only moves to parents).
        unsafe {
            if h.get_unchecked(p).key() <= k {
                break;
            }
            *h.get_unchecked_mut(i) = *h.get_unchecked(p);
        }
        i = p;
    }
    h[i] = e;
}

#[derive(Default, Debug)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
    /// The root was popped and not yet refilled: `heap[0]` is not an event. Most pops are
    /// followed by a push (a packet's next hop, a hook's packet or timer), which then drops into
    /// the root and sinks, usually a level or two since new events are mostly early, instead of a
    /// pop walking a hole down to a leaf and a push climbing back (same order: the keys are unique).
    hole: bool,
}

impl EventQueue {
    /// Draws the sequence number of an event decided now (see the module doc).
    #[inline(always)]
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    /// Schedules `ev` at `t` under a fresh sequence number, which it returns.
    #[inline]
    pub fn push(&mut self, t: Time, ev: Ev) -> u64 {
        let s = self.reserve();
        self.push_reserved(t, s, ev);
        s
    }
    /// Schedules `ev` at `t` under the sequence number `seq` drawn earlier with [`Self::reserve`].
    #[inline(always)]
    pub fn push_reserved(&mut self, t: Time, seq: u64, ev: Ev) {
        let (tag, a, b) = ev.pack();
        let e = Entry { t: t.0, s: seq << TAG_BITS | tag, a, b };
        if self.hole {
            self.hole = false;
            self.sink_from_root(e);
            return;
        }
        let i = self.heap.len();
        self.heap.push(e);
        sift_up(&mut self.heap[..], i, e);
    }
    /// Puts `e` in the empty root and sinks it below every smaller child. The smaller child is
    /// picked without a branch (a compare's result added to the index): which child is smaller is
    /// a coin toss for the branch predictor, and its misses cost more than the compares.
    #[inline(always)]
    fn sink_from_root(&mut self, e: Entry) {
        let k = e.key();
        let h = &mut self.heap[..];
        let n = h.len();
        let mut i = 0;
        let mut c = 1;
        while c + 1 < n {
            // SAFETY: c + 1 < n = h.len(), and i < c.
            unsafe {
                c += (h.get_unchecked(c + 1).key() < h.get_unchecked(c).key()) as usize;
                if k <= h.get_unchecked(c).key() {
                    break;
                }
                *h.get_unchecked_mut(i) = *h.get_unchecked(c);
            }
            i = c;
            c = 2 * c + 1;
        }
        if c + 1 == n && h[c].key() < k {
            // A lone last child, smaller than `e`.
            h[i] = h[c];
            i = c;
        }
        h[i] = e;
    }
    /// Refills an empty root with the last entry (a pop's second half); checked inline, since
    /// most pops find the root already filled by a push.
    #[inline(always)]
    fn fill_hole(&mut self) {
        if self.hole {
            self.refill_root();
        }
    }
    #[inline(never)]
    fn refill_root(&mut self) {
        self.hole = false;
        let Some(last) = self.heap.pop() else { return };
        let n = self.heap.len();
        if n == 0 {
            return;
        }
        let h = &mut self.heap[..];
        // Floyd's variant (as std's BinaryHeap::pop): walk the hole down to a leaf along the
        // smaller children, one comparison per level, then sift the last entry up from there.
        // The last entry is usually late (a far timer), so it rarely climbs far.
        let mut i = 0;
        let mut c = 1;
        while c + 1 < n {
            // SAFETY: c + 1 < n = h.len(), and i < c (i is a parent of c), so every index is in
            // bounds; this loop is among the hottest of the simulator and the checks cost a third.
            unsafe {
                c += (h.get_unchecked(c + 1).key() < h.get_unchecked(c).key()) as usize;
                *h.get_unchecked_mut(i) = *h.get_unchecked(c);
            }
            i = c;
            c = 2 * c + 1;
        }
        if c + 1 == n {
            h[i] = h[c];
            i = c;
        }
        sift_up(h, i, last);
    }
    /// Removes the earliest event: its time, sequence number and kind. Its slot stays empty until
    /// the next push fills it or the next pop refills it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, u64, Ev)> { self.pop_until(Time(u64::MAX)) }
    /// Removes the earliest event if it is due at or before `until`.
    #[inline(always)]
    pub fn pop_until(&mut self, until: Time) -> Option<(Time, u64, Ev)> {
        self.fill_hole();
        let top = *self.heap.first()?;
        if top.t > until.0 {
            return None;
        }
        self.hole = true;
        Some((Time(top.t), top.s >> TAG_BITS, Ev::unpack(top.s & ((1 << TAG_BITS) - 1), top.a, top.b)))
    }
    pub fn peek_time(&mut self) -> Option<Time> {
        self.fill_hole();
        self.heap.first().map(|e| Time(e.t))
    }
    pub fn len(&self) -> usize { self.heap.len() - self.hole as usize }
    pub fn is_empty(&self) -> bool { self.len() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut EventQueue) -> Vec<(Time, Ev)> { std::iter::from_fn(|| q.pop().map(|(t, _, e)| (t, e))).collect() }

    #[test]
    fn same_instant_runs_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time(5), Ev::Sample);
        q.push(Time(3), Ev::TxDone(1));
        q.push(Time(5), Ev::TxDone(2));
        q.push(Time(5), Ev::TxDone(3));
        q.push(Time(1), Ev::TxDone(4));
        assert_eq!(drain(&mut q), vec![(Time(1), Ev::TxDone(4)), (Time(3), Ev::TxDone(1)), (Time(5), Ev::Sample), (Time(5), Ev::TxDone(2)), (Time(5), Ev::TxDone(3))]);
    }

    #[test]
    fn a_reserved_number_orders_the_event_where_it_was_decided() {
        let mut q = EventQueue::default();
        let early = q.reserve();
        q.push(Time(7), Ev::TxDone(2));
        q.push(Time(7), Ev::Wakeup(3));
        // Inserted last, but decided first: runs first among the events at 7.
        q.push_reserved(Time(7), early, Ev::TxDone(1));
        assert_eq!(drain(&mut q), vec![(Time(7), Ev::TxDone(1)), (Time(7), Ev::TxDone(2)), (Time(7), Ev::Wakeup(3))]);
    }

    #[test]
    fn every_kind_survives_packing_and_many_entries_come_out_sorted() {
        let all = [Ev::TxDone(u32::MAX), Ev::Wakeup(7), Ev::Arrive(u32::MAX, PktId(u32::MAX - 1)), Ev::Timer(9), Ev::Sample, Ev::Start(4), Ev::TxComplete(5, 1500)];
        let mut q = EventQueue::default();
        for (i, e) in all.iter().enumerate() {
            q.push(Time(100 - i as u64), *e);
        }
        let mut want: Vec<_> = all.iter().enumerate().map(|(i, e)| (Time(100 - i as u64), *e)).collect();
        want.reverse();
        assert_eq!(drain(&mut q), want);
        // A pseudo-random mix of times, many ties: (time, seq) must come out in order.
        let mut x = 12345u64;
        let mut seqs = vec![];
        for _ in 0..5000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = Time((x >> 33) % 97);
            let s = q.push(t, Ev::Sample);
            seqs.push((t, s));
        }
        seqs.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop().map(|(t, s, _)| (t, s))).collect();
        assert_eq!(got, seqs);
    }

    /// Pops and pushes interleaved as the engine makes them (a pop leaves the root empty, a push
    /// may fill it, reserved numbers pushed late): every pop returns the least (time, seq) of the
    /// events pushed and not yet popped, checked against a sorted set, and `len` counts them.
    #[test]
    fn interleaved_pops_and_pushes_come_out_in_order() {
        let mut q = EventQueue::default();
        let mut want = std::collections::BTreeSet::new();
        let mut reserved = vec![];
        let mut x = 99u64;
        let mut now = 0;
        for step in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = x >> 33;
            match r % 7 {
                0..=2 => {
                    let t = Time(now + (r >> 3) % 50);
                    let s = q.push(t, Ev::Timer(step));
                    want.insert((t, s));
                }
                3 => reserved.push((Time(now + (r >> 3) % 9), q.reserve())),
                4 => {
                    if let Some((t, s)) = reserved.pop() {
                        q.push_reserved(t, s, Ev::Sample);
                        want.insert((t, s));
                    }
                }
                _ => {
                    let got = q.pop().map(|(t, s, _)| (t, s));
                    assert_eq!(got, want.pop_first(), "step {step}");
                    if let Some((t, _)) = got {
                        now = t.0;
                    }
                }
            }
            assert_eq!(q.len(), want.len());
        }
        while let Some(w) = want.pop_first() {
            assert_eq!(q.pop().map(|(t, s, _)| (t, s)), Some(w));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }
}
