//! Links: fixed rates with tc's overhead, Mahimahi traces with Mahimahi's exact semantics (held
//! against a port of its `rationalize()`), and the cellular model.
use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use jitterlab_sim::engine::{ChannelSpec, Ctx};
use jitterlab_sim::link::Trace;
use jitterlab_sim::packet::{Body, Ecn, Packet};
use jitterlab_sim::qdisc::droptail::{DropTail, Limit};
use jitterlab_sim::rng::Rng;
use jitterlab_sim::{Agent, Rate, Sim, Time};

// ---------------------------------------------------------------------------------------------
// Test-only port of Mahimahi's LinkQueue (ravinet/mahimahi, src/frontend/link_queue.cc at commit
// 18915b695d4b9ede3a0cd6c910ec6b042f101446: read_packet(), rationalize(),
// use_a_delivery_opportunity(), dequeue_packet()), statement for statement, with an unbounded
// queue as at that commit and base_timestamp_ = 0 (trace time 0 = simulation time 0).
// ---------------------------------------------------------------------------------------------
const PACKET_SIZE: i64 = 1504;

struct QueuedPacket {
    id: usize,
    bytes_to_transmit: i64,
    arrival_time: u64,
}

struct MahimahiLink {
    schedule: Vec<u64>,
    next_delivery: usize,
    base_timestamp: u64,
    packet_queue: VecDeque<QueuedPacket>,
    packet_in_transit: Option<QueuedPacket>,
    /// (packet id, departure ms) in departure order (record_departure).
    departures: Vec<(usize, u64)>,
}

impl MahimahiLink {
    fn new(schedule: Vec<u64>) -> Self { MahimahiLink { schedule, next_delivery: 0, base_timestamp: 0, packet_queue: VecDeque::new(), packet_in_transit: None, departures: vec![] } }
    fn next_delivery_time(&self) -> u64 { self.schedule[self.next_delivery] + self.base_timestamp }
    fn use_a_delivery_opportunity(&mut self) {
        self.next_delivery = (self.next_delivery + 1) % self.schedule.len();
        if self.next_delivery == 0 {
            self.base_timestamp += *self.schedule.last().unwrap(); // repeat_
        }
    }
    fn dequeue_packet(&mut self) {
        assert!(self.packet_in_transit.is_none());
        self.packet_in_transit = self.packet_queue.pop_front();
    }
    fn rationalize(&mut self, now: u64) {
        while self.next_delivery_time() <= now {
            let this_delivery_time = self.next_delivery_time();
            let mut bytes_left_in_this_delivery = PACKET_SIZE;
            self.use_a_delivery_opportunity();
            while bytes_left_in_this_delivery > 0 {
                if self.packet_in_transit.is_none() {
                    self.dequeue_packet();
                    if self.packet_in_transit.is_none() {
                        break;
                    }
                }
                let p = self.packet_in_transit.as_mut().unwrap();
                assert!(p.arrival_time <= this_delivery_time);
                p.bytes_to_transmit -= bytes_left_in_this_delivery;
                bytes_left_in_this_delivery = 0;
                if p.bytes_to_transmit <= 0 {
                    bytes_left_in_this_delivery += -p.bytes_to_transmit;
                    self.departures.push((p.id, this_delivery_time));
                    self.packet_in_transit = None;
                }
            }
        }
    }
    fn read_packet(&mut self, id: usize, size: u32, now: u64) {
        assert!(size as i64 <= PACKET_SIZE);
        self.rationalize(now);
        self.packet_queue.push_back(QueuedPacket { id, bytes_to_transmit: size as i64, arrival_time: now });
    }
}

/// Mahimahi's departure time (ns) of each packet, arrivals given in ns (its clock: whole ms).
fn mahimahi_departures(schedule: &[u64], arrivals: &[(u64, u32)], until_ms: u64) -> Vec<Option<u64>> {
    let mut m = MahimahiLink::new(schedule.to_vec());
    for (i, &(t_ns, size)) in arrivals.iter().enumerate() {
        m.read_packet(i, size, t_ns / 1_000_000); // timestamp() truncates to ms
    }
    m.rationalize(until_ms);
    let mut out = vec![None; arrivals.len()];
    for (id, ms) in m.departures {
        out[id] = Some(ms * 1_000_000);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// A sender that hands packets of given sizes to the network at given instants, and a sink that
// records when each arrives.
// ---------------------------------------------------------------------------------------------
struct Sender {
    sched: Vec<(u64, u32)>,
    next: usize,
    dst: u32,
    dst_agent: u32,
}

impl Agent for Sender {
    fn name(&self) -> &str { "sender" }
    fn start(&mut self, ctx: &mut Ctx) {
        if let Some(&(t, _)) = self.sched.first() {
            ctx.set_timer(0, Time(t));
        }
    }
    fn on_packet(&mut self, _pkt: Packet, _ctx: &mut Ctx) {}
    fn on_timer(&mut self, _key: u32, ctx: &mut Ctx) {
        let now = ctx.now().ns();
        while self.next < self.sched.len() && self.sched[self.next].0 == now {
            let (_, size) = self.sched[self.next];
            // The packet's index travels in `flow` (Raw packets have no sequence number).
            let pkt = Packet { flow: self.next as u32, src: 0, dst: self.dst, dst_agent: self.dst_agent, size, ecn: Ecn::NotEct, sent: Time::ZERO, body: Body::Raw };
            ctx.send(pkt);
            self.next += 1;
        }
        if self.next < self.sched.len() {
            ctx.set_timer(0, Time(self.sched[self.next].0));
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

struct Sink {
    got: Rc<RefCell<Vec<Option<u64>>>>,
}

impl Agent for Sink {
    fn name(&self) -> &str { "sink" }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        self.got.borrow_mut()[pkt.flow as usize] = Some(ctx.now().ns());
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

/// Runs `arrivals` (ns, bytes; sorted) over one channel a → b with zero delay; returns arrival
/// times at b (= departure times from the serialiser).
fn simulate_link(trace: Option<Trace>, rate: Rate, overhead: u32, arrivals: &[(u64, u32)], until: Time) -> Vec<Option<u64>> {
    let mut sim = Sim::new(1);
    let a = sim.add_node("a");
    let b = sim.add_node("b");
    let ch = sim.add_channel(ChannelSpec { name: "l".into(), from: a, to: b, rate, delay: Time::ZERO, qdisc: Box::new(DropTail::new(Limit::Packets(1_000_000))), trace, jitter: None, reorder: false, loss: 0.0, sampled: false });
    sim.channel_mut(ch).overhead = overhead;
    sim.add_channel(ChannelSpec { name: "l.rev".into(), from: b, to: a, rate, delay: Time::ZERO, qdisc: Box::new(DropTail::new(Limit::Packets(10))), trace: None, jitter: None, reorder: false, loss: 0.0, sampled: false });
    let got = Rc::new(RefCell::new(vec![None; arrivals.len()]));
    let sink_id = sim.next_agent_id() + 1;
    sim.add_agent(a, Box::new(Sender { sched: arrivals.to_vec(), next: 0, dst: b, dst_agent: sink_id }));
    sim.add_agent(b, Box::new(Sink { got: got.clone() }));
    sim.run_until(until);
    let out = got.borrow().clone();
    out
}

/// Random arrivals: on whole milliseconds and between them, 80 and 1500 B, bursts, idle gaps.
fn arrivals(seed: u64, n: usize) -> Vec<(u64, u32)> {
    let mut r = Rng::stream(seed, "arrivals");
    let mut t: u64 = 0;
    let mut out = vec![];
    while out.len() < n {
        let size = if r.uniform() < 0.5 { 80 } else { 1500 };
        let u = r.uniform();
        if u < 0.05 {
            t += 50_000_000 + (r.uniform() * 250e6) as u64; // idle gap: the link wastes opportunities
            t -= t % 1_000_000; // ... and resumes exactly on a tick
        } else if u < 0.35 {
            t = (t / 1_000_000 + 1 + (r.uniform() * 3.0) as u64) * 1_000_000; // on a later tick
        } else if u < 0.55 {
            // same instant: a burst
        } else {
            t += (r.uniform() * 4e6) as u64; // between ticks (or, rarely, on one)
        }
        let burst = if r.uniform() < 0.1 { 2 + (r.uniform() * 20.0) as usize } else { 1 };
        for _ in 0..burst {
            out.push((t, size));
        }
    }
    out.truncate(n);
    out
}

fn random_trace(seed: u64) -> Vec<u64> {
    let mut r = Rng::stream(seed, "trace");
    let mut t = 0u64;
    let mut v = vec![];
    for _ in 0..400 {
        t += [0, 0, 1, 1, 1, 2, 5, 17][(r.uniform() * 8.0) as usize];
        v.push(t);
    }
    if *v.last().unwrap() == 0 {
        v.push(1);
    }
    v
}

#[test]
fn trace_link_matches_mahimahi_rationalize_exactly() {
    for seed in 1..=6 {
        let sched = random_trace(seed);
        let arr = arrivals(seed, 4000);
        let until_ms = arr.last().unwrap().0 / 1_000_000 + 60_000;
        let want = mahimahi_departures(&sched, &arr, until_ms);
        let got = simulate_link(Some(Trace::from_stamps(sched.clone()).unwrap()), Rate(1), 0, &arr, Time::from_ms(until_ms));
        let on_tick = arr.iter().filter(|(t, _)| t % 1_000_000 == 0).count();
        assert!(on_tick > 500 && on_tick < 3500, "the arrivals cover ticks and between ticks ({on_tick} of 4000 on a tick)");
        assert!(want.iter().all(|d| d.is_some()), "Mahimahi delivers every packet by the end");
        let diff: Vec<usize> = (0..arr.len()).filter(|&i| want[i] != got[i]).collect();
        assert!(diff.is_empty(), "seed {seed}: {} of {} packets differ; first: #{} arrival {} ns size {}: mahimahi {:?}, sim {:?}", diff.len(), arr.len(), diff[0], arr[diff[0]].0, arr[diff[0]].1, want[diff[0]], got[diff[0]]);
    }
}

#[test]
fn paced_stream_from_zero_never_uses_the_opportunity_of_its_arrival_millisecond() {
    // One opportunity per ms; 1500 B packets every 2 ms from t = 0. Mahimahi burns the
    // opportunity stamped at the arrival ms before enqueueing, so each leaves 1 ms after arrival.
    let sched: Vec<u64> = (0..=100).collect();
    let arr: Vec<(u64, u32)> = (0..40).map(|i| (i * 2_000_000, 1500)).collect();
    let got = simulate_link(Some(Trace::from_stamps(sched.clone()).unwrap()), Rate(1), 0, &arr, Time::from_ms(200));
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, Some(arr[i].0 + 1_000_000), "packet {i}");
    }
    assert_eq!(got, mahimahi_departures(&sched, &arr, 200));
}

#[test]
fn small_packets_share_an_opportunity_and_leftovers_are_lost_when_the_queue_empties() {
    // Opportunities at 10 and 20 ms. 80 B × 18 = 1440 B fit in the 10 ms one; the 19th (80 B)
    // needs 16 B more than the 64 left and finishes at 20 ms. A packet arriving at 15 ms after the
    // queue emptied cannot use the leftover of the 10 ms opportunity.
    let sched = vec![10, 20, 30, 1000];
    let mut arr: Vec<(u64, u32)> = (0..19).map(|_| (500_000, 80)).collect();
    arr.push((15_000_000, 80));
    let got = simulate_link(Some(Trace::from_stamps(sched.clone()).unwrap()), Rate(1), 0, &arr, Time::from_ms(100));
    let mut want: Vec<Option<u64>> = vec![Some(10_000_000); 18];
    want.push(Some(20_000_000));
    want.push(Some(20_000_000));
    assert_eq!(got, want);
    assert_eq!(got, mahimahi_departures(&sched, &arr, 100));
}

#[test]
fn real_umts_trace_matches_mahimahi() {
    // Debian's mahimahi-traces (scripts/install-references.sh), else ../shared beside the checkout
    let paths = [
        "/usr/share/mahimahi/traces/TMobile-UMTS-driving.down",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces/TMobile-UMTS-driving.down"),
    ];
    let Some(text) = paths.iter().find_map(|p| std::fs::read_to_string(p).ok()) else {
        eprintln!("skipped: {paths:?} are absent (Mahimahi's traces are not part of the project)");
        return;
    };
    let tr = Trace::parse(&text).unwrap();
    let arr = arrivals(11, 30_000);
    let until_ms = arr.last().unwrap().0 / 1_000_000 + 120_000;
    let want = mahimahi_departures(tr.stamps(), &arr, until_ms);
    let got = simulate_link(Some(tr), Rate(1), 0, &arr, Time::from_ms(until_ms));
    let diff = (0..arr.len()).filter(|&i| want[i] != got[i]).count();
    assert_eq!(diff, 0, "{diff} of {} packets differ from Mahimahi over TMobile-UMTS-driving.down", arr.len());
}

#[test]
fn overhead_counts_in_a_fixed_rate_like_tc() {
    // 1000 B + 14 B overhead at 8 Mbit/s: (1014·8 / 8e6) s = 1.014 ms exactly; a second packet
    // queued behind it leaves 1.014 ms later.
    let arr = vec![(0, 1000), (0, 1000)];
    let got = simulate_link(None, Rate(8_000_000), 14, &arr, Time::from_ms(10));
    assert_eq!(got, vec![Some(1_014_000), Some(2_028_000)]);
    let plain = simulate_link(None, Rate(8_000_000), 0, &arr, Time::from_ms(10));
    assert_eq!(plain, vec![Some(1_000_000), Some(2_000_000)]);
}

#[test]
fn loss_bursts_cover_the_loss_share_of_time_and_drop_exactly_the_packets_inside() {
    use jitterlab_sim::link::LossBursts;
    // Share of time in bursts: bursts of mean 0.1 s with loss 0.01 → good periods of mean 9.9 s;
    // over 200,000 s ≈ 20,000 cycles. The time share's sd is about sqrt(2/20000)·0.01 (bursts and
    // gaps both exponential) ≈ 1e-4; allow 4 sd.
    let until = Time::from_secs(200_000);
    let p = LossBursts::new(0.01, Time::from_ms(100), 3, "l").periods(until);
    let bad: u64 = p.iter().map(|(a, b)| b - a).sum();
    let share = bad as f64 / until.ns() as f64;
    assert!((share - 0.01).abs() < 4e-4, "{share}");
    let mean_burst = bad as f64 / p.len() as f64 / 1e9;
    assert!((mean_burst - 0.1).abs() < 0.004, "{mean_burst}");

    // In a run: an audio packet is lost exactly when it leaves the bottleneck inside a burst.
    let v = serde_json::json!({
        "duration": "600s",
        "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "1ms", "loss": 0.02, "loss_burst": "200ms"}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b"}],
    });
    let t = jitterlab_sim::scenario::run(&v, 5).unwrap();
    let periods = jitterlab_sim::scenario::channel_loss_periods(&v, 5, "l").unwrap();
    let inside = |ns: i64| periods.iter().any(|&(a, b)| (a as i64) <= ns && ns < b as i64);
    let mut lost = 0;
    for i in 0..t.media.len() {
        let depart = t.media.send_ns[i] + 640_000; // 80 B at 1 Mbit/s, the link idle otherwise
        assert_eq!(t.media.recv_ns[i] == jitterlab_sim::record::NULL_NS, inside(depart), "packet {i}");
        lost += (t.media.recv_ns[i] == jitterlab_sim::record::NULL_NS) as usize;
    }
    assert!(lost > 100, "{lost}");
    let e = jitterlab_sim::scenario::run(&serde_json::json!({"duration": "1s", "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "1ms", "loss_burst": "200ms"}}}), 1).unwrap_err();
    assert!(e.to_string().starts_with("links.l.loss_burst: needs loss between 0 and 1"), "{e}");
}
