//! The qdisc watchdog: a discipline that holds packets and returns nothing from `dequeue` (a shaper
//! out of tokens) names the time to be asked again, and the idle link asks then, not at the next
//! arrival (Linux's `qdisc_watchdog_schedule_ns`).
use jitterlab_sim::packet::{Ecn, PacketPool, PktId};
use jitterlab_sim::qdisc::droptail::{DropTail, Limit};
use jitterlab_sim::qdisc::{Qdisc, QueueStats, QueuedDrop, Verdict};
use jitterlab_sim::record::NULL_NS;
use jitterlab_sim::{scenario, Time};
use serde_json::json;

/// Releases nothing before `open`; a FIFO after it. `wake` = false hides the wake-up time.
struct Gate {
    inner: DropTail,
    open: Time,
    wake: bool,
    asked: Vec<Time>,
}

impl Qdisc for Gate {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, d: &mut Vec<QueuedDrop>) -> Verdict { self.inner.enqueue(id, pool, now, d) }
    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, d: &mut Vec<QueuedDrop>) -> Option<PktId> {
        self.asked.push(now);
        if now < self.open {
            return None;
        }
        self.inner.dequeue(pool, now, d)
    }
    fn peek(&self) -> Option<PktId> { self.inner.peek() }
    fn next_wakeup(&self, now: Time) -> Option<Time> { (self.wake && now < self.open).then_some(self.open) }
    fn backlog_pkts(&self) -> usize { self.inner.backlog_pkts() }
    fn backlog_bytes(&self) -> u64 { self.inner.backlog_bytes() }
    fn stats(&self) -> &QueueStats { self.inner.stats() }
    fn kind(&self) -> &'static str { "gate" }
}

fn gated(wake: bool) -> Vec<i64> {
    // One 80 B packet every 20 ms over 1 Mbit/s (640 us) and 10 ms; the gate opens at 5 ms.
    let v = json!({
        "name": "t", "duration": "60ms",
        "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms", "queue": {"kind": "droptail", "limit": "50pkt"}}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b", "size": "80B", "interval": "20ms"}],
    });
    let mut b = scenario::build(&v, 1).unwrap();
    let ch = b.sim.channel_id("l").unwrap();
    b.sim.channel_mut(ch).qdisc = Box::new(Gate { inner: DropTail::new(Limit::Packets(50)), open: Time::from_ms(5), wake, asked: vec![] });
    b.sim.run_until(Time::from_ms(60));
    let t = b.sim.finish();
    t.check_conservation().unwrap();
    t.media.recv_ns.clone()
}

#[test]
fn watchdog_sends_the_held_packet_when_the_gate_opens() {
    // Sent at 0, held until 5 ms, then 640 us + 10 ms.
    let r = gated(true);
    assert_eq!(r[0], 5_000_000 + 640_000 + 10_000_000);
    assert_eq!(r[1], 20_000_000 + 640_000 + 10_000_000);
}

#[test]
fn without_a_wakeup_time_the_packet_waits_for_the_next_arrival() {
    // The engine's old behaviour, still right for work-conserving disciplines: both packets leave
    // when the second arrives at 20 ms, back to back.
    let r = gated(false);
    assert_eq!(r[0], 20_000_000 + 640_000 + 10_000_000);
    assert_eq!(r[1], 20_000_000 + 2 * 640_000 + 10_000_000);
    assert_ne!(r[2], NULL_NS);
}

#[test]
fn ecn_codepoints_have_rfc3168_bits() {
    // RFC 3168 §5: Not-ECT 00, ECT(1) 01, ECT(0) 10, CE 11.
    for (e, b) in [(Ecn::NotEct, 0), (Ecn::Ect1, 1), (Ecn::Ect0, 2), (Ecn::Ce, 3)] {
        assert_eq!(e.bits(), b);
        assert_eq!(Ecn::from_bits(b), e);
    }
    assert!(Ecn::Ect1.is_ect() && !Ecn::NotEct.is_ect());
}
