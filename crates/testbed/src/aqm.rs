//! The simulator's own queue disciplines as the bottleneck of the testbed's userspace link: real
//! Linux TCP in front of exactly the Rust code the simulator runs (CoDel, FQ-CoDel, PIE, RED and
//! whatever else [`jitterlab_sim::qdisc::REGISTRY`] holds), on a kernel that has none of them.
//!
//! The packets are raw IPv4 datagrams read from a TUN device. Each gets a
//! [`jitterlab_sim::packet::Packet`] view in a [`PacketPool`], which is all a discipline reads
//! (`pool.get(id)`): its size (the IP datagram's length, as the simulator's `size`), a flow id
//! hashed from the 5-tuple (FQ-CoDel's and CAKE's flow queues), the source and destination
//! addresses as node ids (host isolation) and the ECN codepoint from the TOS byte. When the
//! discipline marks a packet CE in the pool, the IP header gets CE and a fixed checksum on its way
//! out ([`set_ce`]).
//!
//! [`QdiscLink`] is the discipline plus the link's serialiser, a pure type in virtual time (no
//! clock, no I/O), with the engine's semantics (`jitterlab_sim::engine`): a fixed rate (with tc's
//! per-packet `overhead`) dequeues a packet when the previous one has been serialised; a
//! delivery-opportunity schedule (trace or cellular model) runs Mahimahi's `rationalize` over the
//! discipline instead of a FIFO. A discipline holding packets that returns none from `dequeue`
//! names its wake-up time (`next_wakeup`, Linux's qdisc watchdog), which becomes the link's next
//! event. The caller (`delayline::Pipeline`) asks [`QdiscLink::next_event`] after every call and
//! calls [`QdiscLink::service`] when that time comes.
use jitterlab_sim::link::{Cursor, Trace, OPPORTUNITY_BYTES};
use jitterlab_sim::packet::{Body, Ecn, Packet, PacketPool, PktId};
use jitterlab_sim::qdisc::{Qdisc, QueueStats, QueuedDrop, Verdict};
use jitterlab_sim::time::{Rate, Time};

// ------------------------------------------------------------------------------------------------
// IPv4 header access (RFC 791)

/// The ECN codepoint of an IPv4 datagram (the low two bits of the TOS byte, RFC 3168 §5);
/// Not-ECT for anything that is not IPv4.
pub fn ecn_of(pkt: &[u8]) -> Ecn {
    if pkt.len() >= 20 && pkt[0] >> 4 == 4 {
        Ecn::from_bits(pkt[1])
    } else {
        Ecn::NotEct
    }
}

/// The IPv4 header checksum (RFC 791 §3.1, RFC 1071): the one's complement of the one's-complement
/// sum of the header's 16-bit words, the checksum field taken as zero.
pub fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for (i, w) in hdr.chunks(2).enumerate() {
        if i == 5 {
            continue; // the checksum field itself
        }
        sum += u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// Header length of an IPv4 datagram in bytes, when the datagram holds that much.
fn ihl(pkt: &[u8]) -> Option<usize> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let h = usize::from(pkt[0] & 0x0F) * 4;
    (h >= 20 && pkt.len() >= h).then_some(h)
}

/// Marks an ECN-capable IPv4 datagram CE (RFC 3168 §6.1.1.1) and recomputes its header checksum.
/// Returns false (and changes nothing) for Not-ECT, an already-CE packet, or a datagram too short
/// to be IPv4: a router never turns Not-ECT into CE.
pub fn set_ce(pkt: &mut [u8]) -> bool {
    let Some(h) = ihl(pkt) else { return false };
    let e = Ecn::from_bits(pkt[1]);
    if !e.is_ect() || e == Ecn::Ce {
        return false;
    }
    pkt[1] |= Ecn::Ce.bits();
    let c = ipv4_checksum(&pkt[..h]);
    pkt[10..12].copy_from_slice(&c.to_be_bytes());
    true
}

/// A 32-bit flow id from the 5-tuple (protocol, addresses, and the ports of TCP / UDP / SCTP /
/// UDP-Lite datagrams that are not later fragments), FNV-1a then a SplitMix64 finaliser. What
/// matters to the flow-queueing disciplines: packets of one connection share an id, and ids of
/// different connections are spread (the discipline salts and reduces them itself).
pub fn flow_hash(pkt: &[u8]) -> u32 {
    let Some(h) = ihl(pkt) else { return 0 };
    let proto = pkt[9];
    let frag_off = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1FFF;
    let mut key = [0u8; 13];
    key[0] = proto;
    key[1..9].copy_from_slice(&pkt[12..20]);
    if matches!(proto, 6 | 17 | 132 | 136) && frag_off == 0 && pkt.len() >= h + 4 {
        key[9..13].copy_from_slice(&pkt[h..h + 4]);
    }
    let mut x: u64 = 0xCBF2_9CE4_8422_2325;
    for b in key {
        x ^= u64::from(b);
        x = x.wrapping_mul(0x0100_0000_01B3);
    }
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) as u32
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The simulator's packet view of a datagram read at `now`.
pub fn packet_view(pkt: &[u8], now: Time) -> Packet {
    let (src, dst) = if ihl(pkt).is_some() { (be32(&pkt[12..16]), be32(&pkt[16..20])) } else { (0, 0) };
    Packet { flow: flow_hash(pkt), src, dst, dst_agent: 0, size: pkt.len().max(1) as u32, ecn: ecn_of(pkt), sent: now, body: Body::Raw }
}

// ------------------------------------------------------------------------------------------------
// the link

/// What serialises the packets the discipline hands out.
#[derive(Clone, Debug)]
pub enum Server {
    /// A fixed rate; `overhead` bytes are added to every packet in its serialisation time (tc's).
    Rate { rate: Rate, overhead: u32 },
    /// Delivery opportunities of [`OPPORTUNITY_BYTES`] at integer milliseconds (Mahimahi).
    Trace(Trace),
}

/// What one call did: packets that leave the serialiser (time, caller's token, whether the
/// discipline marked it CE so the caller must rewrite its header) and tokens of dropped packets.
#[derive(Debug, Default)]
pub struct Outcome {
    pub departed: Vec<(Time, usize, bool)>,
    pub dropped: Vec<usize>,
}

/// A queue discipline and the link it feeds, in virtual time (see the module doc).
pub struct QdiscLink {
    qdisc: Box<dyn Qdisc>,
    pool: PacketPool,
    /// The caller's token and the arriving ECN codepoint of each live packet, by `PktId`.
    tokens: Vec<(usize, Ecn)>,
    server: Server,
    /// Rate server: a packet is being serialised.
    busy: bool,
    /// Trace server: the first opportunity not yet used or wasted, and the packet in transit with
    /// the bytes it still needs (Mahimahi's `packet_in_transit_`).
    next: Cursor,
    in_transit: Option<(PktId, u32)>,
    /// When the link wants `service` next: end of a serialisation, the next opportunity, or the
    /// discipline's wake-up.
    pending: Option<Time>,
    scratch: Vec<QueuedDrop>,
    /// CE marks the discipline made (written into the headers by the caller).
    pub ce_marks: u64,
}

impl QdiscLink {
    pub fn new(qdisc: Box<dyn Qdisc>, server: Server) -> QdiscLink {
        QdiscLink { qdisc, pool: PacketPool::new(), tokens: Vec::new(), server, busy: false, next: Cursor::default(), in_transit: None,
                    pending: None, scratch: Vec::new(), ce_marks: 0 }
    }

    pub fn kind(&self) -> &'static str { self.qdisc.kind() }
    pub fn stats(&self) -> &QueueStats { self.qdisc.stats() }
    pub fn backlog_pkts(&self) -> usize { self.qdisc.backlog_pkts() }
    /// Packets inside the link (queued or being serialised).
    pub fn held(&self) -> usize { self.pool.live() }
    /// When [`QdiscLink::service`] must be called next.
    pub fn next_event(&self) -> Option<Time> { self.pending }

    /// The datagram `pkt` (the caller keeps its bytes, under `token`) reaches the link at `now`.
    pub fn arrive(&mut self, now: Time, token: usize, pkt: &[u8], out: &mut Outcome) {
        // Mahimahi's read_packet(): opportunities stamped <= now are used (or wasted) first.
        if matches!(self.server, Server::Trace(_)) && self.pending.is_some_and(|t| t <= now) {
            self.run_opportunities(now, out);
        }
        let view = packet_view(pkt, now);
        let ecn = view.ecn;
        let id = self.pool.insert(view);
        let i = id.0 as usize;
        if self.tokens.len() <= i {
            self.tokens.resize(i + 1, (usize::MAX, Ecn::NotEct));
        }
        self.tokens[i] = (token, ecn);
        let mut scratch = std::mem::take(&mut self.scratch);
        let verdict = self.qdisc.enqueue(id, &mut self.pool, now, &mut scratch);
        self.drop_all(&mut scratch, out);
        self.scratch = scratch;
        match verdict {
            Verdict::Queued | Verdict::Marked => match &self.server {
                Server::Rate { .. } => {
                    if !self.busy {
                        self.start_tx(now, out);
                    }
                }
                Server::Trace(trace) => {
                    if self.pending.is_none() {
                        // Idle link: the opportunities up to this millisecond found it empty.
                        let first = trace.first_after(now.ns() / 1_000_000);
                        self.next = self.next.max(first);
                        self.pending = Some(Time::from_ms(trace.at(self.next)));
                    }
                }
            },
            Verdict::Dropped(_) => {
                self.pool.remove(id);
                out.dropped.push(token);
            }
        }
    }

    /// The time named by [`QdiscLink::next_event`] has come (`now` at or after it).
    pub fn service(&mut self, now: Time, out: &mut Outcome) {
        if self.pending.is_none_or(|t| t > now) {
            return;
        }
        self.pending = None;
        match self.server {
            Server::Rate { .. } => {
                self.busy = false;
                self.start_tx(now, out);
            }
            Server::Trace(_) => self.run_opportunities(now, out),
        }
    }

    fn drop_all(&mut self, victims: &mut Vec<QueuedDrop>, out: &mut Outcome) {
        for (v, _) in victims.drain(..) {
            self.pool.remove(v);
            out.dropped.push(self.tokens[v.0 as usize].0);
        }
    }

    fn dequeue(&mut self, now: Time, out: &mut Outcome) -> Option<PktId> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let id = self.qdisc.dequeue(&mut self.pool, now, &mut scratch);
        self.drop_all(&mut scratch, out);
        self.scratch = scratch;
        id
    }

    /// The packet leaves the serialiser at `at`.
    fn depart(&mut self, id: PktId, at: Time, out: &mut Outcome) {
        let p = self.pool.remove(id);
        let (token, ecn_in) = self.tokens[id.0 as usize];
        let mark = p.ecn == Ecn::Ce && ecn_in != Ecn::Ce;
        self.ce_marks += u64::from(mark);
        out.departed.push((at, token, mark));
    }

    /// Rate server: the engine's `start_tx`.
    fn start_tx(&mut self, now: Time, out: &mut Outcome) {
        let Server::Rate { rate, overhead } = self.server else { unreachable!("rate server") };
        match self.dequeue(now, out) {
            Some(id) => {
                let size = self.pool.get(id).size;
                let done = now + rate.tx_time(u64::from(size) + u64::from(overhead));
                self.busy = true;
                self.pending = Some(done);
                self.depart(id, done, out);
            }
            None => {
                self.busy = false;
                if self.qdisc.backlog_pkts() > 0 {
                    // A shaper out of tokens: ask again when it says (never at `now` itself, which
                    // would spin).
                    self.pending = self.qdisc.next_wakeup(now).map(|w| w.max(Time::from_ns(now.ns() + 1)));
                }
            }
        }
    }

    /// Trace server: the engine's `run_opportunities` (Mahimahi's rationalize over the discipline).
    fn run_opportunities(&mut self, now: Time, out: &mut Outcome) {
        let Server::Trace(trace) = self.server.clone() else { unreachable!("trace server") };
        let now_ms = now.ns() / 1_000_000;
        loop {
            let t_ms = trace.at(self.next);
            if t_ms > now_ms {
                break;
            }
            self.next = trace.next(self.next);
            let t = Time::from_ms(t_ms);
            let mut left = OPPORTUNITY_BYTES;
            while left > 0 {
                let (id, need) = match self.in_transit {
                    Some(x) => x,
                    None => match self.dequeue(now, out) {
                        Some(id) => (id, self.pool.get(id).size),
                        None => break,
                    },
                };
                if need > left {
                    self.in_transit = Some((id, need - left));
                    left = 0;
                } else {
                    self.in_transit = None;
                    left -= need;
                    self.depart(id, t, out);
                }
            }
            if self.in_transit.is_none() && self.qdisc.backlog_pkts() == 0 {
                break;
            }
        }
        self.pending = (self.in_transit.is_some() || self.qdisc.backlog_pkts() > 0).then(|| Time::from_ms(trace.at(self.next)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jitterlab_sim::qdisc::{codel, droptail};

    /// RFC 1071's example header as given in countless references (e.g. Wikipedia's "IPv4 header
    /// checksum"): 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
    const HDR: [u8; 20] = [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];

    #[test]
    fn checksum_of_the_reference_header() {
        assert_eq!(ipv4_checksum(&HDR), 0xb861);
    }

    /// ECT(0) (TOS 0x02) adds 2 to the first word, so its checksum is 0xb861 - 2 = 0xb85f; CE
    /// (TOS 0x03) adds 1 more: 0xb85e. Hand-computed, and the rewritten header must sum to 0xFFFF.
    #[test]
    fn ce_marking_fixes_the_checksum() {
        let mut p = HDR.to_vec();
        p[1] = 0x02;
        p[10..12].copy_from_slice(&0xb85fu16.to_be_bytes());
        assert_eq!(ipv4_checksum(&p), 0xb85f, "the ECT(0) header of the test is valid");
        assert_eq!(ecn_of(&p), Ecn::Ect0);
        assert!(set_ce(&mut p));
        assert_eq!(p[1], 0x03);
        assert_eq!(ecn_of(&p), Ecn::Ce);
        assert_eq!(u16::from_be_bytes([p[10], p[11]]), 0xb85e);
        // a received header with its checksum verifies to zero (RFC 1071)
        let mut sum: u32 = p.chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum();
        while sum >> 16 != 0 {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        assert_eq!(sum, 0xFFFF);
        assert!(!set_ce(&mut p), "already CE");
        // Not-ECT is never marked
        let mut q = HDR.to_vec();
        assert!(!set_ce(&mut q));
        assert_eq!(q, HDR.to_vec());
        // DSCP bits are kept: TOS 0xb9 (EF + ECT(1)) -> 0xbb
        let mut d = HDR.to_vec();
        d[1] = 0xb9;
        assert_eq!(ecn_of(&d), Ecn::Ect1);
        assert!(set_ce(&mut d));
        assert_eq!(d[1], 0xbb);
        assert_eq!(ipv4_checksum(&d), u16::from_be_bytes([d[10], d[11]]));
    }

    #[test]
    fn ecn_bits_round_trip_through_the_header() {
        for e in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            let mut p = HDR.to_vec();
            p[1] = 0xb8 | e.bits();
            assert_eq!(ecn_of(&p), e);
            assert_eq!(packet_view(&p, Time::ZERO).ecn, e);
        }
        assert_eq!(ecn_of(&[0x60; 40]), Ecn::NotEct, "IPv6 is not read as IPv4");
    }

    fn tcp(sport: u16, dport: u16, len: usize) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[..20].copy_from_slice(&HDR);
        p[9] = 6;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    }

    #[test]
    fn flow_ids_follow_the_five_tuple() {
        let a = flow_hash(&tcp(1000, 80, 1500));
        assert_eq!(a, flow_hash(&tcp(1000, 80, 60)), "same connection, other size");
        assert_ne!(a, flow_hash(&tcp(1001, 80, 1500)));
        let mut u = tcp(1000, 80, 100);
        u[9] = 17;
        assert_ne!(a, flow_hash(&u), "the protocol is part of the tuple");
        let v = packet_view(&tcp(1, 2, 1500), Time::ZERO);
        assert_eq!((v.size, v.src, v.dst), (1500, 0xc0a8_0001, 0xc0a8_00c7));
    }

    fn drain(l: &mut QdiscLink, out: &mut Outcome) {
        while let Some(t) = l.next_event() {
            l.service(t, out);
        }
    }

    /// A fixed rate: 1500 B at 12 Mbit/s = 1 ms each (+ 20 B overhead = 1.0133 ms); three packets
    /// at t = 0 leave at 1, 2, 3 serialisation times; one arriving at an idle link leaves one
    /// serialisation after it arrives.
    #[test]
    fn rate_server_serialises_back_to_back() {
        let q = Box::new(droptail::DropTail::new(droptail::Limit::Packets(10)));
        let mut l = QdiscLink::new(q, Server::Rate { rate: Rate(12_000_000), overhead: 20 });
        let mut out = Outcome::default();
        for k in 0..3 {
            l.arrive(Time::ZERO, k, &tcp(1, 2, 1500), &mut out);
        }
        drain(&mut l, &mut out);
        l.arrive(Time::from_ms(10), 3, &tcp(1, 2, 1500), &mut out);
        drain(&mut l, &mut out);
        let tx = (1520 * 8 * 1_000_000_000u64).div_ceil(12_000_000); // the simulator rounds up (Rate::tx_time)
        let got: Vec<(u64, usize)> = out.departed.iter().map(|(t, k, _)| (t.ns(), *k)).collect();
        assert_eq!(got, vec![(tx, 0), (2 * tx, 1), (3 * tx, 2), (10_000_000 + tx, 3)]);
        assert!(out.dropped.is_empty());
        assert_eq!(l.held(), 0);
    }

    /// The simulator's CoDel at a 1 Mbit/s link: a standing queue of 100 full-size packets (each
    /// 12 ms to serialise, so sojourn far above the 5 ms target for more than 100 ms) must make
    /// CoDel drop, and every packet is accounted: departed + dropped = arrived. With ECN-capable
    /// packets and `ecn = true` it marks instead, and the caller is told to rewrite the header.
    #[test]
    fn codel_drops_or_marks_a_standing_queue() {
        for ecn in [false, true] {
            let mut p = jitterlab_sim::config::Params::new("q", &serde_json::json!({"ecn": ecn})).unwrap();
            let mut rng = jitterlab_sim::rng::Rng::stream(1, "t");
            let link = jitterlab_sim::qdisc::LinkInfo { rate: Rate(1_000_000), mtu: 1500 };
            let q = codel::build(&mut p, link, &mut rng).unwrap();
            let mut l = QdiscLink::new(q, Server::Rate { rate: Rate(1_000_000), overhead: 0 });
            let mut out = Outcome::default();
            for k in 0..100 {
                let mut pk = tcp(1, 2, 1500);
                pk[1] = Ecn::Ect0.bits();
                l.arrive(Time::ZERO, k, &pk, &mut out);
            }
            drain(&mut l, &mut out);
            assert_eq!(out.departed.len() + out.dropped.len(), 100);
            let marks = out.departed.iter().filter(|d| d.2).count();
            if ecn {
                assert!(out.dropped.is_empty());
                assert!(marks >= 3, "{marks} marks");
                assert_eq!(l.ce_marks as usize, marks);
                assert_eq!(l.stats().marked_pkts as usize, marks);
            } else {
                assert!(out.dropped.len() >= 3, "{} drops", out.dropped.len());
                assert_eq!(marks, 0);
            }
            l.stats().check(0, 0).unwrap();
        }
    }

    /// A toy shaper: one packet per 10 ms, whatever the link's rate (a discipline that holds
    /// packets, dequeues none before its time and names that time through `next_wakeup`).
    struct Shaper {
        q: std::collections::VecDeque<PktId>,
        next_ok: Time,
        stats: QueueStats,
    }

    impl Qdisc for Shaper {
        fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, _now: Time, _d: &mut Vec<QueuedDrop>) -> Verdict {
            self.stats.on_arrival(pool.get(id).size);
            self.stats.on_enqueue(pool.get(id).size);
            self.q.push_back(id);
            Verdict::Queued
        }
        fn dequeue(&mut self, pool: &mut PacketPool, now: Time, _d: &mut Vec<QueuedDrop>) -> Option<PktId> {
            if now < self.next_ok {
                return None;
            }
            let id = self.q.pop_front()?;
            self.stats.on_dequeue(pool.get(id).size);
            self.next_ok = now + Time::from_ms(10);
            Some(id)
        }
        fn peek(&self) -> Option<PktId> { self.q.front().copied() }
        fn next_wakeup(&self, _now: Time) -> Option<Time> { Some(self.next_ok) }
        fn backlog_pkts(&self) -> usize { self.q.len() }
        fn backlog_bytes(&self) -> u64 { 0 }
        fn stats(&self) -> &QueueStats { &self.stats }
        fn kind(&self) -> &'static str { "shaper" }
    }

    /// The link's loop honours `next_wakeup`: five packets at t = 0 through a 100 Mbit/s link
    /// behind the toy shaper leave at 0, 10, 20, 30, 40 ms (plus 1500 B at 100 Mbit/s = 120 µs),
    /// each woken by the watchdog, not by an arrival; and the events the link asks for are exactly
    /// the serialisation ends and the wake-ups (no spinning).
    #[test]
    fn the_watchdog_wakes_a_shaper() {
        let q = Box::new(Shaper { q: Default::default(), next_ok: Time::ZERO, stats: QueueStats::default() });
        let mut l = QdiscLink::new(q, Server::Rate { rate: Rate(100_000_000), overhead: 0 });
        let mut out = Outcome::default();
        for k in 0..5 {
            l.arrive(Time::ZERO, k, &tcp(1, 2, 1500), &mut out);
        }
        let mut events = 0;
        while let Some(t) = l.next_event() {
            l.service(t, &mut out);
            events += 1;
            assert!(events < 100, "the link spins");
        }
        let got: Vec<u64> = out.departed.iter().map(|(t, _, _)| t.ns()).collect();
        assert_eq!(got, (0..5u64).map(|k| k * 10_000_000 + 120_000).collect::<Vec<_>>());
        assert_eq!(events, 9, "5 serialisation ends + 4 wake-ups");
    }

    /// A trace server behaves as the engine's opportunity link: opportunities at 1, 1, 3, 5 ms
    /// (period 5) with a DropTail discipline give the departures of the hand-computed example of
    /// `linkqueue` (Mahimahi's semantics): 1, 1, 5, 5, 6, 8 ms.
    #[test]
    fn trace_server_matches_mahimahi() {
        let q = Box::new(droptail::DropTail::new(droptail::Limit::Packets(100)));
        let mut l = QdiscLink::new(q, Server::Trace(Trace::from_stamps(vec![1, 1, 3, 5]).unwrap()));
        let mut out = Outcome::default();
        let arrivals = [(0u64, 1500usize), (0, 80), (3, 80), (3, 80), (5, 1500), (6, 1500)];
        for (k, &(ms, size)) in arrivals.iter().enumerate() {
            let t = Time::from_ms(ms);
            while l.next_event().is_some_and(|e| e < t) {
                let e = l.next_event().unwrap();
                l.service(e, &mut out);
            }
            l.arrive(t, k, &tcp(1, 2, size), &mut out);
        }
        drain(&mut l, &mut out);
        let mut got: Vec<(usize, u64)> = out.departed.iter().map(|(t, k, _)| (*k, t.ns() / 1_000_000)).collect();
        got.sort();
        assert_eq!(got, vec![(0, 1), (1, 1), (2, 5), (3, 5), (4, 6), (5, 8)]);
    }
}
