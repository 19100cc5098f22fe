//! The deficit round robin the flow-queueing disciplines share (FQ-CoDel, FQ-PIE, CAKE), as Linux
//! writes it in `sch_fq_codel.c`, `sch_fq_pie.c` and `sch_cake.c`: flow queues wait on a list of
//! new flows, served first, and a list of old flows (CAKE adds a third, of decaying flows); each
//! has a byte deficit. A flow whose deficit is spent gets a quantum more and goes to the back of
//! the old list; a new flow that empties passes once through the old list (if that is not empty)
//! so that it cannot starve the old flows by coming back as new (RFC 8290 §4.2).
//!
//! The scheduler only keeps the lists and the deficits; the packets, and what happens when a flow
//! empties in CAKE (its sparse/bulk sets and COBALT's decay), stay with each discipline.
use std::collections::VecDeque;

/// Which list a flow waits on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum List {
    New,
    Old,
    /// CAKE only: empty flows whose COBALT state is still relaxing.
    Decaying,
}

/// The lists and per-flow deficits of `n` flow queues (indices `0..n`).
#[derive(Debug)]
pub struct Drr {
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    decaying: VecDeque<u32>,
    deficit: Vec<i64>,
    /// The list each flow is on (Linux: `flowchain` not empty, and which head it hangs from).
    on: Vec<Option<List>>,
}

impl Drr {
    pub fn new(n: usize) -> Self {
        Drr { new: VecDeque::new(), old: VecDeque::new(), decaying: VecDeque::new(), deficit: vec![0; n], on: vec![None; n] }
    }

    fn list(&self, l: List) -> &VecDeque<u32> {
        match l {
            List::New => &self.new,
            List::Old => &self.old,
            List::Decaying => &self.decaying,
        }
    }

    fn list_mut(&mut self, l: List) -> &mut VecDeque<u32> {
        match l {
            List::New => &mut self.new,
            List::Old => &mut self.old,
            List::Decaying => &mut self.decaying,
        }
    }

    /// The list flow `idx` is on, if any.
    pub fn on(&self, idx: usize) -> Option<List> { self.on[idx] }
    pub fn deficit(&self, idx: usize) -> i64 { self.deficit[idx] }
    /// The flow at the head of list `l`.
    pub fn front(&self, l: List) -> Option<usize> { self.list(l).front().map(|&i| i as usize) }
    pub fn is_empty(&self, l: List) -> bool { self.list(l).is_empty() }

    /// Takes flow `idx` off its list (Linux `list_del_init`).
    pub fn unlink(&mut self, idx: usize) {
        if let Some(l) = self.on[idx].take() {
            let list = self.list_mut(l);
            // The scheduler nearly always retires the head; CAKE may move a flow from anywhere.
            if list.front() == Some(&(idx as u32)) {
                list.pop_front();
            } else if let Some(pos) = list.iter().position(|&i| i as usize == idx) {
                list.remove(pos);
            }
        }
    }

    /// Moves flow `idx` to the back of list `to` (Linux `list_move_tail` / `list_add_tail`).
    pub fn move_tail(&mut self, idx: usize, to: List) {
        self.unlink(idx);
        self.list_mut(to).push_back(idx as u32);
        self.on[idx] = Some(to);
    }

    /// Flow `idx` becomes a new flow with a full `quantum` (RFC 8290 §4.1; CAKE's quantum varies
    /// by host load, so the caller gives it).
    pub fn make_new(&mut self, idx: usize, quantum: i64) {
        self.move_tail(idx, List::New);
        self.deficit[idx] = quantum;
    }

    /// A flow on no list becomes new (FQ-CoDel's and FQ-PIE's enqueue). False if already listed.
    pub fn activate(&mut self, idx: usize, quantum: i64) -> bool {
        if self.on[idx].is_some() {
            return false;
        }
        self.make_new(idx, quantum);
        true
    }

    /// Spent its deficit: one `quantum` more, to the back of the old list.
    pub fn top_up(&mut self, idx: usize, quantum: i64) {
        self.deficit[idx] += quantum;
        self.move_tail(idx, List::Old);
    }

    /// Charges `bytes` sent (or, in CAKE's ingress mode, dropped) to flow `idx`.
    pub fn charge(&mut self, idx: usize, bytes: i64) { self.deficit[idx] -= bytes; }

    /// FQ-CoDel's and FQ-PIE's choice: the first flow, new before old, with deficit left, topping
    /// up (and rotating) those without. None when both lists are empty.
    pub fn next(&mut self, quantum: i64) -> Option<usize> {
        loop {
            let idx = self.front(List::New).or_else(|| self.front(List::Old))?;
            if self.deficit[idx] > 0 {
                return Some(idx);
            }
            self.top_up(idx, quantum);
        }
    }

    /// Flow `idx` found empty (FQ-CoDel, FQ-PIE): a new flow goes to the back of the old list
    /// when that has flows, anything else leaves the lists.
    pub fn retire(&mut self, idx: usize) {
        let was_new = self.on[idx] == Some(List::New);
        self.unlink(idx);
        if was_new && !self.old.is_empty() {
            self.old.push_back(idx as u32);
            self.on[idx] = Some(List::Old);
        }
    }

    /// Flows on the lists `order`, list by list, head first.
    pub fn iter<'a>(&'a self, order: &'a [List]) -> impl Iterator<Item = usize> + 'a {
        order.iter().flat_map(move |&l| self.list(l).iter().map(|&i| i as usize))
    }
}

/// The salted 64-bit mix (splitmix64's finaliser) the flow-queueing disciplines hash flow ids with,
/// standing in for Linux's jhash of the 5-tuple.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three flows with quantum 1500 sending 1000-byte packets, by hand: a flow is served until
    /// its deficit is spent (1500 → 500 → −500: two packets), then gets 1500 more (1000) and waits
    /// at the back of the old list; a flow arriving meanwhile is new and goes before the old ones.
    #[test]
    fn new_before_old_and_quantum_rotation() {
        let mut d = Drr::new(4);
        assert!(d.activate(0, 1500));
        assert!(d.activate(1, 1500));
        assert!(!d.activate(0, 1500), "already listed");
        let mut served = vec![];
        for _ in 0..7 {
            let i = d.next(1500).unwrap();
            d.charge(i, 1000);
            served.push(i);
            if served.len() == 3 {
                // Flow 0 waits on the old list with 1000; flow 2 arrives new.
                assert!(d.activate(2, 1500));
            }
        }
        assert_eq!(served, [0, 0, 1, 1, 2, 2, 0]);
        assert_eq!((d.deficit(0), d.deficit(1), d.deficit(2)), (0, 1000, 1000));
        assert_eq!(d.iter(&[List::New, List::Old]).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(d.is_empty(List::New));
    }

    /// A new flow that empties goes once through the old list if that has flows; otherwise, or
    /// when it was old already, it leaves the lists.
    #[test]
    fn retire_passes_new_flows_through_old() {
        let mut d = Drr::new(3);
        d.activate(0, 100);
        d.retire(0);
        assert_eq!(d.on(0), None, "old list empty: the flow leaves");
        d.activate(0, 100);
        d.activate(1, 100);
        d.charge(0, 100);
        assert_eq!(d.next(100), Some(1), "flow 0 spent its deficit and rotated to old");
        d.retire(1);
        assert_eq!(d.on(1), Some(List::Old));
        assert_eq!(d.iter(&[List::New, List::Old]).collect::<Vec<_>>(), [0, 1]);
        d.retire(0);
        assert_eq!(d.on(0), None, "an old flow that empties leaves");
        assert_eq!(d.iter(&[List::New, List::Old]).collect::<Vec<_>>(), [1]);
    }

    /// CAKE moves flows between lists from anywhere (a decaying flow that gets a packet).
    #[test]
    fn move_from_the_middle() {
        let mut d = Drr::new(4);
        for i in 0..3 {
            d.move_tail(i, List::Decaying);
        }
        d.make_new(1, 300);
        assert_eq!(d.iter(&[List::Decaying]).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(d.iter(&[List::Decaying, List::New]).collect::<Vec<_>>(), [0, 2, 1]);
        assert_eq!(d.deficit(1), 300);
        d.unlink(2);
        assert_eq!(d.on(2), None);
        assert_eq!(d.iter(&[List::Decaying, List::New, List::Old]).collect::<Vec<_>>(), [0, 1]);
    }
}
