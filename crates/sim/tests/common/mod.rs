//! Test helper: an access path sender — fast link — router — bottleneck — receiver built in code,
//! with a probe queue at the bottleneck that logs arrivals and can drop or CE-mark chosen segments.
#![allow(dead_code)]
use std::cell::RefCell;
use std::rc::Rc;

use jitterlab_sim::engine::ChannelSpec;
use jitterlab_sim::packet::{Body, Ecn, NodeId, PacketPool, PktId};
use jitterlab_sim::qdisc::droptail::{DropTail, Limit};
use jitterlab_sim::qdisc::{DropReason, Qdisc, QueueStats, QueuedDrop, Verdict};
use jitterlab_sim::record::Tables;
use jitterlab_sim::tcp::{add_connection, ConnSpec, Connection, TcpConfig};
use jitterlab_sim::{Rate, Sim, Time};

/// One arrival at the probed queue.
#[derive(Clone, Debug)]
pub struct Arrival {
    pub t: Time,
    pub seq: u64,
    pub len: u32,
    pub flags: u8,
    /// Backlog (packets) after the arrival was queued.
    pub backlog: usize,
    pub fate: Fate,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    Pass,
    Drop,
    Mark,
}

/// Decides the fate of the n-th arrival (0-based) of a data segment with sequence number `seq`
/// (n counts arrivals of that same seq: 0 = first transmission).
pub type Rule = Box<dyn FnMut(u64, u32, u32) -> Fate>;

pub struct Probe {
    inner: DropTail,
    pub log: Rc<RefCell<Vec<Arrival>>>,
    seen: std::collections::BTreeMap<u64, u32>,
    rule: Rule,
    extra: QueueStats,
}

impl Qdisc for Probe {
    fn enqueue(&mut self, id: PktId, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Verdict {
        let (seq, len, flags) = match &pool.get(id).body {
            Body::Tcp(h) => (h.seq, h.len, h.flags),
            _ => (0, 0, 0),
        };
        let mut fate = Fate::Pass;
        if len > 0 {
            let n = self.seen.entry(seq).or_insert(0);
            fate = (self.rule)(seq, len, *n);
            *n += 1;
        }
        let v = match fate {
            Fate::Drop => {
                self.extra.on_arrival(pool.get(id).size);
                self.extra.on_drop_arrival(pool.get(id).size, DropReason::Early);
                Verdict::Dropped(DropReason::Early)
            }
            Fate::Mark => {
                let p = pool.get_mut(id);
                if p.ecn.is_ect() {
                    p.ecn = Ecn::Ce;
                }
                self.inner.enqueue(id, pool, now, dropped)
            }
            Fate::Pass => self.inner.enqueue(id, pool, now, dropped),
        };
        self.log.borrow_mut().push(Arrival { t: now, seq, len, flags, backlog: self.inner.backlog_pkts(), fate });
        v
    }
    fn dequeue(&mut self, pool: &mut PacketPool, now: Time, dropped: &mut Vec<QueuedDrop>) -> Option<PktId> { self.inner.dequeue(pool, now, dropped) }
    fn peek(&self) -> Option<PktId> { self.inner.peek() }
    fn backlog_pkts(&self) -> usize { self.inner.backlog_pkts() }
    fn backlog_bytes(&self) -> u64 { self.inner.backlog_bytes() }
    fn stats(&self) -> &QueueStats { self.inner.stats() }
    fn kind(&self) -> &'static str { "probe" }
}

pub struct Path {
    pub access_rate: Rate,
    pub access_delay: Time,
    pub rate: Rate,
    pub delay: Time,
    pub limit: u64,
}

impl Default for Path {
    fn default() -> Self { Path { access_rate: Rate::mbps(1000), access_delay: Time::from_us(1), rate: Rate::mbps(10), delay: Time::from_ms(50), limit: 1000 } }
}

impl Path {
    /// One-way time of a `bytes` packet from sender to receiver on an idle path.
    pub fn fwd(&self, bytes: u64) -> Time { self.access_rate.tx_time(bytes) + self.access_delay + self.rate.tx_time(bytes) + self.delay }
    /// Round trip of a `data`-byte packet and its `ack`-byte reply on an idle path.
    pub fn rtt(&self, data: u64, ack: u64) -> Time { self.fwd(data) + self.fwd(ack) }
}

pub struct Run {
    pub sim: Sim,
    pub conn: Connection,
    pub log: Rc<RefCell<Vec<Arrival>>>,
}

/// Builds snd —access— r —bottleneck(probe)— rcv with the same rates backwards (DropTail there)
/// and one connection snd → rcv.
pub fn build(path: &Path, cfg: TcpConfig, size: Option<u64>, start: Time, rule: Rule) -> Run {
    let (mut sim, s, d, log) = path_sim(path, rule);
    let conn = add_connection(&mut sim, ConnSpec { name: "t".into(), role: "bulk".into(), from: s, to: d, start, size, cfg, policy: None });
    Run { sim, conn, log }
}

/// The path alone: (sim, sender node, receiver node, probe log).
pub fn path_sim(path: &Path, rule: Rule) -> (Sim, NodeId, NodeId, Rc<RefCell<Vec<Arrival>>>) {
    let mut sim = Sim::new(1);
    let s = sim.add_node("snd");
    let r = sim.add_node("r");
    let d = sim.add_node("rcv");
    let log = Rc::new(RefCell::new(vec![]));
    let ch = |name: &str, from, to, rate, delay, q: Box<dyn Qdisc>| ChannelSpec {
        name: name.into(),
        from,
        to,
        rate,
        delay,
        qdisc: q,
        trace: None,
        jitter: None,
        reorder: false,
        loss: 0.0,
        sampled: false,
    };
    sim.add_channel(ch("access", s, r, path.access_rate, path.access_delay, Box::new(DropTail::new(Limit::Packets(100_000)))));
    let probe = Probe { inner: DropTail::new(Limit::Packets(path.limit)), log: log.clone(), seen: Default::default(), rule, extra: QueueStats::default() };
    sim.add_channel(ch("bottleneck", r, d, path.rate, path.delay, Box::new(probe)));
    sim.add_channel(ch("bottleneck.rev", d, r, path.rate, path.delay, Box::new(DropTail::new(Limit::Packets(100_000)))));
    sim.add_channel(ch("access.rev", r, s, path.access_rate, path.access_delay, Box::new(DropTail::new(Limit::Packets(100_000)))));
    (sim, s, d, log)
}

pub fn pass() -> Rule { Box::new(|_, _, _| Fate::Pass) }

/// Drops the listed (segment index, transmission number) pairs; segment i has seq 1 + i·mss.
pub fn drop_segs(mss: u32, list: Vec<(u64, u32)>) -> Rule {
    Box::new(move |seq, _len, n| if list.contains(&((seq - 1) / mss as u64, n)) { Fate::Drop } else { Fate::Pass })
}

/// Reno with the RFC mechanics these tests compute by hand: RFC 6675 loss detection (no RACK,
/// no tail loss probes) and no timestamps option (so the payload is the whole MSS and the wire
/// size MSS + 40). The Linux additions have their own tests (`tcp_rack.rs`).
pub fn reno(mss: u32, iw: u32) -> TcpConfig {
    TcpConfig { mss, iw, cc: "reno".into(), delack: None, series: true, rack: false, tlp: false, timestamps: false, ..TcpConfig::default() }
}

pub fn run_to_end(mut run: Run, until: Time) -> (Tables, Rc<RefCell<Vec<Arrival>>>) {
    run.sim.run_until(until);
    let t = run.sim.finish();
    t.check_conservation().unwrap();
    (t, run.log)
}

/// (cwnd, ssthresh, inflight) rows of the series with their times.
pub fn series(t: &Tables) -> Vec<(Time, u64, u64, u64)> {
    let s = &t.tcp_series;
    (0..s.len()).map(|i| (Time(s.t_ns[i] as u64), s.cwnd[i], s.ssthresh[i], s.inflight[i])).collect()
}
