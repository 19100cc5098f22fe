//! Events per packet, counted by hand: an arrival per hop, a transmission-done only when another
//! packet waits behind the one leaving and the link's discipline is not a plain FIFO, one timer per source send (per frame for bursty video), and
//! one event per timer firing however often it was re-armed before, a TX completion only when
//! its sender would act on it.
use jitterlab_sim::scenario;
use serde_json::json;

fn one_link(traffic: serde_json::Value, secs: u32) -> jitterlab_sim::record::Tables { link_with(json!({"kind": "droptail", "limit": "100pkt"}), traffic, secs) }

fn link_with(queue: serde_json::Value, traffic: serde_json::Value, secs: u32) -> jitterlab_sim::record::Tables {
    let v = json!({
        "duration": format!("{secs}s"),
        "links": {"l": {"from": "a", "to": "b", "rate": "100Mbit", "delay": "1ms", "queue": queue}},
        "traffic": [traffic],
    });
    scenario::run(&v, 1).unwrap()
}

#[test]
fn audio_costs_its_timer_and_one_arrival() {
    // 1 s at 20 ms: 50 packets, each a timer and an arrival; the link never has a packet waiting,
    // so it schedules no end-of-transmission event. Plus the two agents' start events.
    let t = one_link(json!({"kind": "audio", "from": "a", "to": "b"}), 1);
    assert_eq!(t.delivered_pkts, 50);
    assert_eq!(t.events, 2 + 50 * 2);
}

#[test]
fn a_bursty_frame_costs_one_timer_and_five_arrivals_on_a_fifo_link() {
    // 1 Mbit/s, 40 ms frames of 1000 B: 5 packets per frame, 25 frames in 1 s. All 5 reach the
    // DropTail queue at once; a FIFO link fixes each one's departure when it is queued, so it
    // schedules no end-of-transmission event: 1 + 5 = 6 events per frame.
    let video = json!({"kind": "video", "from": "a", "to": "b", "rate": "1Mbit", "mode": "bursty"});
    let t = one_link(video.clone(), 1);
    assert_eq!(t.delivered_pkts, 125);
    assert_eq!(t.events, 2 + 25 * 6);
    // RED is FIFO too; CoDel decides at dequeue, so the first 4 packets of a frame leave with
    // another behind them (an end-of-transmission event each), the last with none: 1 + 5 + 4 = 10.
    let red = link_with(json!({"kind": "red", "limit": "100pkt", "thresh": 5, "maxthresh": 15}), video.clone(), 1);
    assert_eq!((red.delivered_pkts, red.events), (125, 2 + 25 * 6));
    let codel = link_with(json!({"kind": "codel"}), video, 1);
    assert_eq!((codel.delivered_pkts, codel.events), (125, 2 + 25 * 10));
}

mod timers {
    use std::any::Any;
    use std::cell::RefCell;
    use std::rc::Rc;

    use jitterlab_sim::engine::{Agent, Ctx};
    use jitterlab_sim::packet::Packet;
    use jitterlab_sim::{Sim, Time};

    type Log = Rc<RefCell<Vec<(u64, &'static str, u32)>>>;

    /// At start, applies `plan`: (key, Some(ms) = set | None = cancel), in order; logs firings.
    struct Planner {
        name: &'static str,
        plan: Vec<(u32, Option<u64>)>,
        log: Log,
    }
    impl Agent for Planner {
        fn name(&self) -> &str { self.name }
        fn start(&mut self, ctx: &mut Ctx) {
            for &(k, at) in &self.plan {
                match at {
                    Some(ms) => ctx.set_timer(k, Time::from_ms(ms)),
                    None => ctx.cancel_timer(k),
                }
            }
        }
        fn on_packet(&mut self, _p: Packet, _c: &mut Ctx) {}
        fn on_timer(&mut self, key: u32, ctx: &mut Ctx) { self.log.borrow_mut().push((ctx.now().ns() / 1_000_000, self.name, key)); }
        fn as_any(&self) -> &dyn Any { self }
        fn as_any_mut(&mut self) -> &mut dyn Any { self }
    }

    /// Per agent: its name and its (timer key, reset delay) script.
    type Scripts = Vec<(&'static str, Vec<(u32, Option<u64>)>)>;
    fn run(agents: Scripts) -> (Vec<(u64, &'static str, u32)>, u64) {
        let log: Log = Rc::default();
        let mut sim = Sim::new(1);
        let n = sim.add_node("n");
        for (name, plan) in agents {
            sim.add_agent(n, Box::new(Planner { name, plan, log: log.clone() }));
        }
        sim.run_until(Time::from_secs(1));
        let ev = sim.events_done();
        let got = log.borrow().clone();
        (got, ev)
    }

    #[test]
    fn a_timer_re_armed_later_a_hundred_times_costs_two_events() {
        // Start; the event queued for 10 ms finds the setting moved to 109 ms and re-queues itself;
        // it fires there. (The engine queued one event per set_timer before: 101 + 1.)
        let plan = (0..100).map(|i| (0, Some(10 + i))).collect();
        let (log, ev) = run(vec![("a", plan)]);
        assert_eq!(log, vec![(109, "a", 0)]);
        assert_eq!(ev, 1 + 2);
    }

    #[test]
    fn only_the_last_setting_fires_and_a_cancelled_timer_never_does() {
        // key 0: 50 ms then 10 ms (earlier: a new event; the one for 50 ms is stale when it pops);
        // key 1: set and cancelled; key 2: cancelled, then set again.
        let (log, ev) = run(vec![("a", vec![(0, Some(50)), (0, Some(10)), (1, Some(20)), (1, None), (2, Some(30)), (2, None), (2, Some(40))])]);
        assert_eq!(log, vec![(10, "a", 0), (40, "a", 2)]);
        // start + key 0 at 10 and its stale event at 50 + key 1's stale event + key 2's event at 30
        // (finds the 40 ms setting) and at 40.
        assert_eq!(ev, 1 + 2 + 1 + 2);
    }

    #[test]
    fn same_instant_timers_fire_in_the_order_of_their_last_setting() {
        // a sets 10 ms first via 5 ms (moved later, so its event re-queues), b sets 10 ms in between:
        // b's setting is older than a's last one, so b fires first at 10 ms.
        let (log, _) = run(vec![("a", vec![(0, Some(5)), (1, Some(10))]), ("b", vec![(0, Some(10))])]);
        assert_eq!(log, vec![(5, "a", 0), (10, "a", 1), (10, "b", 0)]);
        let (log, _) = run(vec![("a", vec![(0, Some(5))]), ("b", vec![(0, Some(10))]), ("c", vec![(0, Some(5)), (0, Some(10))])]);
        assert_eq!(log, vec![(5, "a", 0), (10, "b", 0), (10, "c", 0)]);
        // x's last setting (10 ms) is older than y's: x first, though its event was queued for 5 ms.
        let (log, _) = run(vec![("x", vec![(0, Some(5)), (0, Some(10))]), ("y", vec![(0, Some(10))])]);
        assert_eq!(log, vec![(10, "x", 0), (10, "y", 0)]);
    }
}

#[test]
fn run_to_the_end_stops_at_the_last_arrival_with_the_links_idle() {
    // Five 80 B packets (0..80 ms) over 1 Mbit/s (640 us) and 10 ms: the last arrives at 90.64 ms;
    // the link's last end of transmission (80.64 ms, left out as an event) must not move the clock
    // back, and `run` must leave the link idle as its TxDone would have.
    let v = json!({
        "duration": "1s",
        "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms", "queue": {"kind": "red", "limit": "50pkt"}}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b", "stop": "100ms"}],
    });
    let mut b = scenario::build(&v, 1).unwrap();
    b.sim.run();
    assert_eq!(b.sim.now(), jitterlab_sim::Time::from_us(90_640));
    let t = b.sim.finish();
    assert_eq!(t.media.recv_ns, vec![10_640_000, 30_640_000, 50_640_000, 70_640_000, 90_640_000]);
    assert_eq!(t.end_ns, 90_640_000);
    assert_eq!(t.events, 2 + 5 * 2);
}

#[test]
fn a_fifo_links_counted_passes_reach_its_queue_stats_at_the_end_of_each_run_until() {
    // Audio (80 B every 20 ms) over an idle 100 Mbit/s DropTail link: each packet passes the
    // empty queue, counted by the engine (Qdisc::idle_pass_max) and handed to the discipline when
    // run_until returns. Sent by 490 ms: 0, 20, ..., 480 ms = 25 packets; by 990 ms, 50.
    let v = json!({
        "duration": "1s",
        "links": {"l": {"from": "a", "to": "b", "rate": "100Mbit", "delay": "1ms", "queue": {"kind": "droptail", "limit": "10pkt"}}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b"}],
    });
    let mut b = scenario::build(&v, 1).unwrap();
    let ch = b.sim.channel_id("l").unwrap();
    for (until_ms, n) in [(490, 25), (990, 50)] {
        b.sim.run_until(jitterlab_sim::Time::from_ms(until_ms));
        let st = b.sim.channel(ch).qdisc.stats().clone();
        assert_eq!((st.arrived_pkts, st.enqueued_pkts, st.dequeued_pkts, st.dequeued_bytes), (n, n, n, 80 * n), "by {until_ms} ms");
        st.check(0, 0).unwrap();
    }
}

/// TX completions (engine/txc.rs) are queued as events only while the sender would act on one;
/// the others are handed over quietly before its next hook. Checked against the same agent
/// asking for every completion as an event (the engine's behaviour before), on a FIFO link
/// (completions decided at enqueue, inside the sender's hook) and a CoDel link (decided when
/// the link dequeues, outside it).
mod tx_completions {
    use std::any::Any;
    use std::cell::RefCell;
    use std::rc::Rc;

    use jitterlab_sim::engine::{Agent, ChannelSpec, Ctx};
    use jitterlab_sim::qdisc::codel::{Codel, CodelParams};
    use jitterlab_sim::qdisc::droptail::{DropTail, Limit};
    use jitterlab_sim::qdisc::Qdisc;
    use jitterlab_sim::{Body, Ecn, Packet, Rate, Sim, Time};

    /// (µs, what): "send", "done" (a completion the sender acted on), "rcv".
    type Log = Rc<RefCell<Vec<(u64, &'static str)>>>;
    const TICK: Time = Time::from_ms(10);

    fn pkt(flow: u32) -> Packet { Packet { flow, src: 0, dst: 1, dst_agent: 2, size: 1000, ecn: Ecn::NotEct, sent: Time::ZERO, body: Body::Raw } }

    /// A small-queues sender: every tick adds 3 packets to its backlog; at most one of its
    /// packets may be below it (sent, not completed); when that holds a packet back it is
    /// throttled, and only a throttled sender acts on a completion.
    struct Sender {
        always: bool,
        backlog: u32,
        below: u32,
        throttled: bool,
        quiet: u32,
        log: Log,
    }
    impl Sender {
        fn fill(&mut self, ctx: &mut Ctx) {
            while self.below < 1 && self.backlog > 0 {
                self.backlog -= 1;
                self.below += 1;
                self.log.borrow_mut().push((ctx.now().ns() / 1000, "send"));
                ctx.send(pkt(0));
            }
            self.throttled = self.backlog > 0;
        }
    }
    impl Agent for Sender {
        fn name(&self) -> &str { "snd" }
        fn start(&mut self, ctx: &mut Ctx) {
            ctx.watch_tx_completion(0);
            self.on_timer(0, ctx);
        }
        fn on_packet(&mut self, _p: Packet, _c: &mut Ctx) {}
        fn on_timer(&mut self, _key: u32, ctx: &mut Ctx) {
            self.backlog += 3;
            if ctx.now() < Time::from_ms(90) {
                ctx.set_timer(0, ctx.now() + TICK);
            }
            self.fill(ctx);
        }
        fn on_tx_complete(&mut self, _size: u32, ctx: &mut Ctx) {
            self.below -= 1;
            if std::mem::take(&mut self.throttled) {
                self.log.borrow_mut().push((ctx.now().ns() / 1000, "done"));
                self.fill(ctx);
            }
        }
        fn tx_completion_wakes(&self) -> bool { self.always || self.throttled }
        fn on_tx_complete_quiet(&mut self, _size: u32) {
            self.below -= 1;
            self.quiet += 1;
        }
        fn as_any(&self) -> &dyn Any { self }
        fn as_any_mut(&mut self) -> &mut dyn Any { self }
    }

    /// Two packets at every tick, ahead of the sender's (it starts first).
    struct Filler;
    impl Agent for Filler {
        fn name(&self) -> &str { "fill" }
        fn start(&mut self, ctx: &mut Ctx) { self.on_timer(0, ctx); }
        fn on_packet(&mut self, _p: Packet, _c: &mut Ctx) {}
        fn on_timer(&mut self, _key: u32, ctx: &mut Ctx) {
            if ctx.now() < Time::from_ms(90) {
                ctx.set_timer(0, ctx.now() + TICK);
            }
            ctx.send(pkt(1));
            ctx.send(pkt(1));
        }
        fn as_any(&self) -> &dyn Any { self }
        fn as_any_mut(&mut self) -> &mut dyn Any { self }
    }

    struct Sink(Log);
    impl Agent for Sink {
        fn name(&self) -> &str { "rcv" }
        fn on_packet(&mut self, _p: Packet, ctx: &mut Ctx) { self.0.borrow_mut().push((ctx.now().ns() / 1000, "rcv")); }
        fn as_any(&self) -> &dyn Any { self }
        fn as_any_mut(&mut self) -> &mut dyn Any { self }
    }

    /// 1000 B at 8 Mbit/s: 1 ms on the wire, then 1 ms of delay. Returns the log, the events and
    /// the completions handed over quietly.
    fn run(always: bool, qdisc: Box<dyn Qdisc>) -> (Vec<(u64, &'static str)>, u64, u32) {
        let log: Log = Rc::default();
        let mut sim = Sim::new(1);
        let (a, b) = (sim.add_node("a"), sim.add_node("b"));
        let ch = |from, to, q| ChannelSpec { name: format!("{from}-{to}"), from, to, rate: Rate::mbps(8), delay: Time::from_ms(1), qdisc: q, trace: None, jitter: None, reorder: false, loss: 0.0, sampled: false };
        sim.add_channel(ch(a, b, qdisc));
        sim.add_channel(ch(b, a, Box::new(DropTail::new(Limit::Packets(100)))));
        sim.add_agent(a, Box::new(Filler));
        let s = sim.add_agent(a, Box::new(Sender { always, backlog: 0, below: 0, throttled: false, quiet: 0, log: log.clone() }));
        sim.add_agent(b, Box::new(Sink(log.clone())));
        sim.run_until(Time::from_ms(200));
        let snd = sim.agent_as::<Sender>(s).unwrap();
        assert_eq!(snd.below, 0, "every completion handed over by the end");
        let (quiet, ev) = (snd.quiet, sim.events_done());
        let got = log.borrow().clone();
        (got, ev, quiet)
    }

    #[test]
    fn only_completions_a_throttled_sender_acts_on_are_events_and_nothing_moves() {
        let qdiscs: [fn() -> Box<dyn Qdisc>; 2] = [|| Box::new(DropTail::new(Limit::Packets(100))), || Box::new(Codel::new(CodelParams::default(), Limit::Packets(100)))];
        for q in qdiscs {
            let (every, ev_every, quiet_every) = run(true, q());
            let (lazy, ev_lazy, quiet) = run(false, q());
            assert_eq!(quiet_every, 0);
            assert_eq!(lazy, every, "same sends, wake-ups and arrivals at the same times, in the same order");
            // By hand, one tick: the filler's two packets leave at 1 and 2 ms, the sender's first
            // at 3 ms (with CoDel its completion is decided when the link takes it, at 2 ms: no
            // hook of the sender comes between, so it is queued then). Its completions at 3 and
            // 4 ms find it throttled and send the next; each packet arrives before the completion
            // at the same instant (decided earlier); the third completion (5 ms) finds it idle.
            let tick = [(0, "send"), (2000, "rcv"), (3000, "rcv"), (3000, "done"), (3000, "send"), (4000, "rcv"), (4000, "done"), (4000, "send"), (5000, "rcv"), (6000, "rcv")];
            for k in 0..10 {
                let shifted: Vec<_> = tick.iter().map(|&(t, w)| (t + 10_000 * k, w)).collect();
                assert_eq!(lazy[10 * k as usize..10 * (k as usize + 1)], shifted[..], "tick {k}");
            }
            assert_eq!(lazy.len(), 100);
            // The completion the sender did not act on, one a tick, is exactly the event left out.
            assert_eq!((quiet, ev_every - ev_lazy), (10, 10));
        }
    }
}
