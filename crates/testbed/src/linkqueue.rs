//! A trace-driven link queue with Mahimahi's semantics (ravinet/mahimahi,
//! `src/frontend/link_queue.cc`, `LinkQueue::rationalize` and `read_packet`), as a pure type in
//! virtual time: no clock, no I/O. The testbed's userspace link drives it in real time.
//!
//! The link has an integer-millisecond clock from its start. A delivery opportunity stamped `t`
//! carries [`OPPORTUNITY_BYTES`]; a packet arriving at millisecond `now` first lets every
//! opportunity stamped `<= now` be used by the packets already queued (or wasted when there are
//! none), and only then joins the queue; one opportunity can finish several small packets, a
//! packet longer than what is left continues in the next one, and a packet leaves at the stamp of
//! the opportunity that completes it. The schedule loops with the period of its last stamp.
//!
//! The buffer is Mahimahi's `DroppingPacketQueue` with DropTail: an arriving packet is dropped when
//! the packets not yet started (the packet whose transmission an earlier opportunity began is no
//! longer counted) plus it would exceed the limit in packets or in bytes.
//!
//! Mahimahi computes departures lazily (`rationalize(now)` walks the opportunities up to `now`).
//! This type computes each packet's departure when it arrives: with a FIFO, what a packet gets
//! depends only on the packets ahead of it and the schedule. `tests` checks the two formulations
//! agree packet by packet against a line-by-line port of `rationalize()`.
use std::collections::VecDeque;

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`, link_queue.hh).
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// The buffer in front of the link (Mahimahi's drop-tail `DroppingPacketQueue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
    Unlimited,
}

/// Counters (an invariant: `arrived == dropped + accepted`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub arrived: u64,
    pub dropped: u64,
    pub accepted: u64,
    pub dropped_bytes: u64,
    pub accepted_bytes: u64,
    /// Largest number of packets waiting (not yet started) seen by an arrival, itself included.
    pub max_backlog: u64,
}

/// A trace-driven link: `arrive(now_ms, size)` returns the departure millisecond, or `None` when
/// the buffer drops the packet. Calls must come in non-decreasing `now_ms`.
#[derive(Clone, Debug)]
pub struct TraceLink {
    schedule: Vec<u64>,
    period: u64,
    /// Index of the next unused opportunity and the time added by the loops so far.
    next: usize,
    base: u64,
    /// The opportunity that finished the last accepted packet and its bytes left.
    last_ms: Option<u64>,
    left: u32,
    /// (start ms, size) of accepted packets, oldest first; those with start > now are waiting.
    started: VecDeque<(u64, u32)>,
    waiting_bytes: u64,
    limit: Limit,
    last_now: u64,
    pub stats: LinkStats,
}

impl TraceLink {
    /// `schedule`: opportunity stamps in ms, non-decreasing, last one > 0 (the loop period).
    pub fn new(schedule: Vec<u64>, limit: Limit) -> Result<TraceLink, String> {
        if schedule.is_empty() {
            return Err("the trace has no delivery opportunities".into());
        }
        if schedule.windows(2).any(|w| w[1] < w[0]) {
            return Err("trace timestamps must not decrease".into());
        }
        let period = *schedule.last().unwrap();
        if period == 0 {
            return Err("the trace's last timestamp must be > 0 ms (it is the loop period)".into());
        }
        Ok(TraceLink {
            schedule, period, next: 0, base: 0, last_ms: None, left: 0, started: VecDeque::new(), waiting_bytes: 0, limit,
            last_now: 0, stats: LinkStats::default(),
        })
    }

    /// Mean capacity in bit/s.
    pub fn mean_bps(&self) -> f64 {
        self.schedule.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period as f64 * 1e-3)
    }

    fn peek(&self) -> u64 {
        self.schedule[self.next] + self.base
    }

    fn take(&mut self) -> u64 {
        let t = self.peek();
        self.next += 1;
        if self.next == self.schedule.len() {
            self.next = 0;
            self.base += self.period; // Mahimahi: base_timestamp_ += schedule_.back()
        }
        t
    }

    /// Packets waiting (accepted, transmission not yet begun) at millisecond `now`.
    pub fn backlog(&mut self, now: u64) -> usize {
        self.forget_started(now);
        self.started.len()
    }

    fn forget_started(&mut self, now: u64) {
        while let Some(&(s, size)) = self.started.front() {
            if s > now {
                break;
            }
            self.started.pop_front();
            self.waiting_bytes -= size as u64;
        }
    }

    /// A packet of `size` bytes arrives at millisecond `now` (from the link's start): its departure
    /// millisecond, or None when the buffer drops it.
    pub fn arrive(&mut self, now: u64, size: u32) -> Option<u64> {
        let size = size.max(1); // an IP packet has bytes; a zero would need its own rule
        let now = now.max(self.last_now); // the caller's clock never goes back; be safe if it does
        self.last_now = now;
        self.stats.arrived += 1;
        self.forget_started(now);
        let fits = match self.limit {
            Limit::Packets(n) => (self.started.len() as u64) < n, // waiting + 1 <= n, Mahimahi's good_with
            Limit::Bytes(b) => self.waiting_bytes + size as u64 <= b,
            Limit::Unlimited => true,
        };
        if !fits {
            self.stats.dropped += 1;
            self.stats.dropped_bytes += size as u64;
            return None;
        }
        // Is the link still busy with earlier packets at `now`? Then this one follows them, using
        // what is left of the opportunity that finished the last one. Otherwise every opportunity
        // <= now went by (used or wasted) before this packet was queued.
        let busy = self.last_ms.is_some_and(|d| d > now);
        let mut need = size;
        let start;
        if busy && self.left > 0 {
            start = self.last_ms.unwrap();
            let t = need.min(self.left);
            need -= t;
            self.left -= t;
        } else {
            if !busy {
                while self.peek() <= now {
                    self.take();
                }
            }
            start = self.peek();
        }
        while need > 0 {
            let t = self.take();
            self.last_ms = Some(t);
            self.left = OPPORTUNITY_BYTES;
            let x = need.min(self.left);
            need -= x;
            self.left -= x;
        }
        self.started.push_back((start, size));
        self.waiting_bytes += size as u64;
        self.stats.accepted += 1;
        self.stats.accepted_bytes += size as u64;
        self.stats.max_backlog = self.stats.max_backlog.max(self.started.iter().filter(|(s, _)| *s > now).count() as u64);
        self.last_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line-by-line port of Mahimahi's LinkQueue (ravinet/mahimahi src/frontend/link_queue.cc:
    /// `read_packet`, `next_delivery_time`, `use_a_delivery_opportunity`, `dequeue_packet`,
    /// `rationalize`) with the drop-tail `DroppingPacketQueue` (`good_with`), in virtual time. Test
    /// only: it is the reference the production type must match.
    struct Mahimahi {
        schedule: Vec<u64>,
        next_delivery: usize,
        base_timestamp: u64,
        packet_queue: VecDeque<(usize, i64, u64)>, // (id, bytes_to_transmit, arrival)
        queue_bytes: u64,
        packet_in_transit: Option<(usize, i64, u64)>,
        limit: Limit,
        out: Vec<(usize, u64)>, // (id, departure ms)
    }

    impl Mahimahi {
        fn new(schedule: Vec<u64>, limit: Limit) -> Self {
            Mahimahi { schedule, next_delivery: 0, base_timestamp: 0, packet_queue: VecDeque::new(), queue_bytes: 0,
                       packet_in_transit: None, limit, out: vec![] }
        }
        fn next_delivery_time(&self) -> u64 { self.schedule[self.next_delivery] + self.base_timestamp }
        fn use_a_delivery_opportunity(&mut self) {
            self.next_delivery = (self.next_delivery + 1) % self.schedule.len();
            if self.next_delivery == 0 {
                self.base_timestamp += *self.schedule.last().unwrap();
            }
        }
        fn dequeue_packet(&mut self) {
            assert!(self.packet_in_transit.is_none());
            if let Some(p) = self.packet_queue.pop_front() {
                self.queue_bytes -= p.1 as u64;
                self.packet_in_transit = Some(p);
            }
        }
        fn rationalize(&mut self, now: u64) {
            while self.next_delivery_time() <= now {
                let this_delivery_time = self.next_delivery_time();
                let mut bytes_left_in_this_delivery = OPPORTUNITY_BYTES as i64;
                self.use_a_delivery_opportunity();
                while bytes_left_in_this_delivery > 0 {
                    if self.packet_in_transit.is_none() {
                        self.dequeue_packet();
                        if self.packet_in_transit.is_none() {
                            break;
                        }
                    }
                    let p = self.packet_in_transit.as_mut().unwrap();
                    assert!(p.2 <= this_delivery_time);
                    p.1 -= bytes_left_in_this_delivery;
                    bytes_left_in_this_delivery = 0;
                    if p.1 <= 0 {
                        bytes_left_in_this_delivery += -p.1;
                        self.out.push((p.0, this_delivery_time));
                        self.packet_in_transit = None;
                    }
                }
            }
        }
        fn read_packet(&mut self, id: usize, size: u32, now: u64) -> bool {
            self.rationalize(now);
            let (b, n) = (self.queue_bytes + size as u64, self.packet_queue.len() as u64 + 1);
            let good = match self.limit {
                Limit::Packets(l) => n <= l,
                Limit::Bytes(l) => b <= l,
                Limit::Unlimited => true,
            };
            if good {
                self.packet_queue.push_back((id, size as i64, now));
                self.queue_bytes += size as u64;
            }
            good
        }
    }

    /// Arrivals (ns from the link's start, bytes) through both; the millisecond clock of Mahimahi
    /// is `timestamp()` in whole ms, i.e. the arrival time truncated.
    fn both(schedule: &[u64], limit: Limit, arrivals: &[(u64, u32)]) -> (Vec<Option<u64>>, Vec<Option<u64>>) {
        let mut ours = TraceLink::new(schedule.to_vec(), limit).unwrap();
        let mut mm = Mahimahi::new(schedule.to_vec(), limit);
        let mut a = Vec::new();
        let mut dropped = vec![false; arrivals.len()];
        for (i, &(t_ns, size)) in arrivals.iter().enumerate() {
            let now = t_ns / 1_000_000;
            a.push(ours.arrive(now, size));
            dropped[i] = !mm.read_packet(i, size, now);
        }
        // flush: run the link until everything has left
        while !mm.packet_queue.is_empty() || mm.packet_in_transit.is_some() {
            let t = mm.next_delivery_time();
            mm.rationalize(t);
        }
        let mut b = vec![None; arrivals.len()];
        for &(id, t) in &mm.out {
            b[id] = Some(t);
        }
        for (i, d) in dropped.iter().enumerate() {
            assert!(!d || b[i].is_none());
        }
        assert_eq!(ours.stats.arrived, ours.stats.dropped + ours.stats.accepted);
        (a, b)
    }

    /// A small deterministic generator (SplitMix64) for the arrival patterns.
    fn mix(x: &mut u64) -> u64 {
        *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Hand-computed: opportunities at 1, 1, 3, 5 ms (period 5, so 6, 6, 8, 10 next). A 1500 B
    /// packet arriving in ms 0 leaves at 1 (4 B left there); an 80 B packet also in ms 0 takes those
    /// 4 B and 76 B of the second opportunity at 1 (1428 B left, wasted); an 80 B packet arriving in
    /// ms 3 cannot use the opportunity stamped 3 (burned first) and leaves at 5; a second one in
    /// ms 3 shares that opportunity; a 1500 B packet in ms 5 finds the 5 ms opportunity burned and
    /// leaves at 6; one arriving in ms 6 finds both 6 ms opportunities gone and leaves at 8.
    #[test]
    fn hand_computed_departures() {
        let mut l = TraceLink::new(vec![1, 1, 3, 5], Limit::Unlimited).unwrap();
        assert_eq!(l.arrive(0, 1500), Some(1));
        assert_eq!(l.arrive(0, 80), Some(1));
        assert_eq!(l.arrive(3, 80), Some(5));
        assert_eq!(l.arrive(3, 80), Some(5));
        assert_eq!(l.arrive(5, 1500), Some(6));
        assert_eq!(l.arrive(6, 1500), Some(8));
        assert!((l.mean_bps() - 4.0 * 1504.0 * 8.0 / 0.005).abs() < 1e-6);
    }

    /// The Done-when check of issue 11: per-packet departures identical to Mahimahi's rationalize()
    /// on the first 20 s of a real trace (when present) and on a synthetic one, with arrivals on and
    /// between millisecond ticks, 80 and 1500 B packets, paced and bursty, with and without drops.
    #[test]
    fn departures_identical_to_mahimahi_rationalize() {
        let mut schedules: Vec<(String, Vec<u64>)> = vec![];
        // Debian's mahimahi-traces (scripts/install-references.sh), else ../shared beside the checkout
        let deb = std::path::PathBuf::from("/usr/share/mahimahi/traces/TMobile-UMTS-driving.down");
        let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/TMobile-UMTS-driving.down");
        let p = if deb.is_file() { deb } else { shared };
        match std::fs::read_to_string(&p) {
            Ok(t) => schedules.push(("TMobile-UMTS-driving.down".into(), t.lines().filter_map(|l| l.trim().parse().ok()).collect())),
            Err(e) => eprintln!("skipping the real trace: {} unreadable ({e})", p.display()),
        }
        // synthetic: bursts of repeated stamps, gaps, a stamp at 0, short period (many loops)
        let mut x = 7u64;
        let mut syn = vec![0u64];
        let mut t = 0;
        while t < 997 {
            t += mix(&mut x) % 4;
            for _ in 0..=(mix(&mut x) % 3) {
                syn.push(t);
            }
        }
        schedules.push(("synthetic".into(), syn));
        let mut differ = 0usize;
        let mut total = 0usize;
        for (name, sched) in &schedules {
            for (pattern, limit) in [(0, Limit::Unlimited), (1, Limit::Packets(20)), (2, Limit::Bytes(30_000)), (3, Limit::Packets(3))] {
                let mut arr = vec![];
                let mut x = 11 + pattern as u64;
                // audio: 80 B every 20 ms from t = 0 (on ticks) and from 0.37 ms (between ticks)
                for k in 0..1000u64 {
                    arr.push((k * 20_000_000, 80));
                    arr.push((k * 20_000_000 + 370_000, 80));
                }
                // bulk: bursts of 1500 B packets at random instants, some exactly on ticks
                let mut t = 0u64;
                while t < 20_000_000_000 {
                    t += mix(&mut x) % 8_000_000;
                    if mix(&mut x).is_multiple_of(3) {
                        t -= t % 1_000_000;
                    }
                    for _ in 0..1 + mix(&mut x) % 4 {
                        arr.push((t, if mix(&mut x).is_multiple_of(5) { 80 } else { 1500 }));
                    }
                }
                arr.sort_by_key(|a| a.0);
                let (a, b) = both(sched, limit, &arr);
                assert_eq!(a, b, "{name}, pattern {pattern}");
                total += arr.len();
                differ += a.iter().zip(&arr).filter(|(d, (t, _))| d.is_some_and(|d| d * 1_000_000 <= *t)).count();
            }
        }
        assert!(total > 40_000);
        assert_eq!(differ, 0, "a packet left no later than it arrived");
    }

    /// A mutant that lets an arrival on a tick use the opportunity stamped at that tick (the bug
    /// issue 11 names) must be caught by the reference comparison.
    #[test]
    fn the_on_tick_rule_matters() {
        let sched = vec![0, 2, 2, 4];
        let (a, b) = both(&sched, Limit::Unlimited, &[(2_000_000, 80)]);
        assert_eq!(a, vec![Some(4)]);
        assert_eq!(a, b);
    }

    #[test]
    fn droptail_counts_waiting_packets_only() {
        // one opportunity every 10 ms; limit 2 packets
        let mut l = TraceLink::new((1..=100).map(|k| k * 10).collect(), Limit::Packets(2)).unwrap();
        assert_eq!(l.arrive(0, 1500), Some(10));
        assert_eq!(l.arrive(0, 1500), Some(20));
        assert_eq!(l.arrive(0, 1500), None); // two waiting
        // at 10 ms the first finished and the second began (with the 4 B left): none waiting
        assert_eq!(l.arrive(10, 1500), Some(30));
        assert_eq!(l.arrive(10, 1500), Some(40));
        assert_eq!(l.arrive(10, 1500), None);
        assert_eq!(l.backlog(20), 1);
        assert_eq!(l.stats, LinkStats { arrived: 6, dropped: 2, accepted: 4, dropped_bytes: 3000, accepted_bytes: 6000, max_backlog: 2 });
        let mut b = TraceLink::new(vec![10], Limit::Bytes(1580)).unwrap();
        assert_eq!(b.arrive(0, 1500), Some(10));
        assert_eq!(b.arrive(0, 80), Some(20)); // 1580 B waiting: fits exactly; 4 B at 10 ms, 76 at 20
        assert_eq!(b.arrive(0, 1), None);
    }

    #[test]
    fn refuses_bad_schedules() {
        assert!(TraceLink::new(vec![], Limit::Unlimited).is_err());
        assert!(TraceLink::new(vec![0, 0], Limit::Unlimited).is_err());
        assert!(TraceLink::new(vec![3, 2], Limit::Unlimited).is_err());
    }
}
