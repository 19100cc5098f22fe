//! The testbed's userspace link over a TUN device: every IPv4 packet the kernel routes into the
//! device is read, carried through the steps of its path class (the first rule matching its
//! addresses), and written back into the device, from which the kernel routes it on.
//!
//! Over 600 lines: its unit tests (the last ~190 lines) sit beside the link steps they pin.
//!
//! A path class is a list of steps, one or two per channel the path crosses:
//! - [`Step::Link`]: the channel's queue and serialiser in userspace, instead of a kernel qdisc:
//!   the trace-driven drop-tail queue ([`crate::linkqueue::TraceLink`], Mahimahi's semantics) where
//!   the capacity is a trace or the cellular model and the queue drop-tail; otherwise the
//!   simulator's own queue discipline ([`crate::aqm::QdiscLink`]: CoDel, FQ-CoDel, PIE, RED, ... at
//!   the channel's rate or on its opportunities), so a scenario's `queue = { kind = "codel" }`
//!   means the same code on both backends;
//! - [`Step::Delay`]: the channel's random loss (after serialisation, as the simulator), its
//!   propagation delay and random extra delay (the simulator's jitter distributions and random
//!   streams, `jitterlab_sim::link::Jitter`); unless the channel allows reordering, a packet never
//!   leaves a channel before one that entered it earlier (the simulator's rule).
//!
//! The steps run as a discrete-event simulation in virtual time driven by the real clock: each
//! packet carries the virtual time at which it reaches its next step (its read time, then exact
//! sums of delays and trace opportunity stamps), steps run in that order when their time has come,
//! and only the final write waits on the clock. So a late wake-up delays one write, never the
//! schedule of the packets behind it. Timers have nanosecond resolution (ppoll).
//!
//! The trace clock starts at the run's time zero, which the driver sends as a line on `ctl_fd`
//! (CLOCK_REALTIME ns) once it is fixed; until then (connectivity checks), and for packets that
//! reach a link before time zero, link steps are passed through.
//!
//! Accuracy: [`Stats::lateness_ns`] is each write's lateness against its virtual time. Arrival is
//! stamped when the packet is read, so wake-up latency of the reader adds to the delay without
//! showing in the lateness; the end-to-end check (audio OWD against the configured delay) covers it.
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use jitterlab_sim::link::{Jitter, LossBursts};
use jitterlab_sim::qdisc::QueueStats;
use jitterlab_sim::Time;
use jitterlab_sim::rng::Rng;

use crate::aqm::{set_ce, Outcome, QdiscLink, Server};
use crate::error::{os, Error, Result};
use crate::linkqueue::{Limit, LinkStats, TraceLink};
use crate::rt;
use crate::tun::Tun;

/// Packets whose (src & src_mask) == src and (dst & dst_mask) == dst follow path class `class`.
#[derive(Clone, Debug)]
pub struct Rule {
    pub src: u32,
    pub src_mask: u32,
    pub dst: u32,
    pub dst_mask: u32,
    pub class: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Link(usize),
    Delay(usize),
}

/// One channel's part of the userspace link.
#[derive(Clone, Debug)]
pub struct ChannelCfg {
    pub name: String,
    pub delay_ns: i64,
    pub jitter: Option<Jitter>,
    pub reorder: bool,
    pub loss: f64,
    /// With `loss`: time-correlated loss bursts of this mean length (the simulator's
    /// `LossBursts`, replayed from the same seed and channel stream, so the same periods of time
    /// are lost on both backends, counted from time zero).
    pub loss_burst_ns: Option<i64>,
    /// The simulator's name of the channel (its random streams are named after it).
    pub sim_name: String,
    /// Opportunity stamps (ms) and buffer, when the channel's capacity is a trace.
    pub trace: Option<(Vec<u64>, Limit)>,
    /// The simulator's queue discipline as the channel's queue (instead of `trace`'s drop-tail).
    pub qdisc: Option<QdiscCfg>,
}

/// A channel whose queue is one of the simulator's disciplines (`jitterlab_sim::qdisc::REGISTRY`),
/// built from the scenario's own table so that every key means what it means in the simulator.
#[derive(Clone, Debug)]
pub struct QdiscCfg {
    /// The table as the user wrote it (`{ kind = "codel", target = "5ms" }`).
    pub table: serde_json::Value,
    /// Its key path, for errors (`access.down_queue`).
    pub path: String,
    /// The link's rate and per-packet overhead; or its opportunity stamps (ms), when it has them.
    pub rate_bps: u64,
    pub overhead: u32,
    pub schedule_ms: Option<Vec<u64>>,
}

impl QdiscCfg {
    /// Builds the discipline as the simulator does (`scenario::build_qdisc`: its registry, its
    /// `LinkInfo`, its random stream `qdisc:<channel>` of the run's seed) and its link.
    pub fn build(&self, seed: u64, sim_name: &str) -> Result<QdiscLink> {
        use jitterlab_sim::config::Params;
        use jitterlab_sim::qdisc::{self, LinkInfo};
        let bad = |e: jitterlab_sim::config::ConfigError| Error::Invalid(e.to_string());
        let mut p = Params::new(&self.path, &self.table).map_err(bad)?;
        let kinds = qdisc::kinds();
        let kind = p.choice("kind", &kinds, None).map_err(bad)?;
        let b = qdisc::builder(&kind).expect("kind checked against the registry");
        let rate = jitterlab_sim::time::Rate(self.rate_bps.max(1));
        let mut rng = Rng::stream(seed, &format!("qdisc:{sim_name}"));
        let q = b(&mut p, LinkInfo { rate, mtu: 1500 }, &mut rng).map_err(bad)?;
        p.finish().map_err(bad)?;
        let server = match &self.schedule_ms {
            Some(s) => Server::Trace(jitterlab_sim::link::Trace::from_stamps(s.clone()).map_err(|m| Error::Invalid(format!("{}: {m}", self.path)))?),
            None => Server::Rate { rate, overhead: self.overhead },
        };
        Ok(QdiscLink::new(q, server))
    }
}

pub struct Config {
    pub tun: String,
    pub rules: Vec<Rule>,
    /// Class 0 is the default (packets no rule matches, non-IPv4).
    pub classes: Vec<Vec<Step>>,
    pub channels: Vec<ChannelCfg>,
    pub seed: u64,
    /// Packets held at most (beyond: dropped and counted).
    pub max_held: usize,
    pub max_samples: usize,
    /// SCHED_FIFO priority, 0 = none.
    pub fifo_prio: i32,
    /// A file descriptor on which the run's time zero arrives as a line (CLOCK_REALTIME ns); -1 =
    /// none (the trace clock then starts when the loop starts).
    pub ctl_fd: i32,
}

#[derive(Clone, Debug, Default)]
pub struct ChannelStats {
    pub name: String,
    pub link: Option<LinkStats>,
    pub mean_bps: Option<f64>,
    /// Random link loss (after serialisation).
    pub lost: u64,
    /// Packets passed through the link step before time zero.
    pub before_t0: u64,
    /// The discipline's name and counters, when the channel's queue is a simulator discipline.
    pub qdisc: Option<(&'static str, QueueStats)>,
    /// CE marks that discipline wrote into IP headers.
    pub ce_written: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub packets: u64,
    pub bytes: u64,
    pub non_ipv4: u64,
    pub write_errors: u64,
    pub overflow_drops: u64,
    /// Release lateness (ns) of every released packet, up to `max_samples`.
    pub lateness_ns: Vec<i64>,
    /// Largest number of packets held at once.
    pub max_held: usize,
    pub realtime: bool,
    /// CLOCK_REALTIME ns of the trace clock's zero, when it was received.
    pub t0_realtime_ns: Option<i64>,
    pub channels: Vec<ChannelStats>,
}

struct Held {
    pkt: Vec<u8>,
    class: usize,
    step: usize,
}

struct Chan {
    cfg: ChannelCfg,
    link: Option<TraceLink>,
    aqm: Option<QdiscLink>,
    /// The time of the service event in the heap for `aqm` (others there are stale).
    armed: Option<i64>,
    bursts: Option<LossBursts>,
    rng: Rng,
    last_out: i64,
    stats: ChannelStats,
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The virtual-time core: packets, their steps and the channels' state. Pure (no clock, no I/O),
/// so the path logic is tested without a TUN device.
pub struct Pipeline {
    classes: Vec<Vec<Step>>,
    chans: Vec<Chan>,
    heap: BinaryHeap<Reverse<(i64, u64, usize)>>,
    slots: Vec<Option<Held>>,
    free: Vec<usize>,
    seq: u64,
    /// Monotonic ns of the trace clock's zero.
    pub origin: Option<i64>,
    outcome: Outcome,
}

/// Heap entries with a slot above this are a channel's discipline service events (usize::MAX - c).
const SERVICE: usize = usize::MAX / 2;

impl Pipeline {
    pub fn new(classes: Vec<Vec<Step>>, channels: Vec<ChannelCfg>, seed: u64) -> Result<Pipeline> {
        if classes.is_empty() {
            return Err(Error::Invalid("the userspace link needs at least the default path class".into()));
        }
        for c in classes.iter().flatten() {
            let (Step::Link(i) | Step::Delay(i)) = *c;
            if i >= channels.len() {
                return Err(Error::Invalid(format!("path step names channel {i}, there are {}", channels.len())));
            }
            if matches!(c, Step::Link(_)) && channels[i].trace.is_none() && channels[i].qdisc.is_none() {
                return Err(Error::Invalid(format!("channel {}: a link step needs a trace or a queue discipline", channels[i].name)));
            }
        }
        let mut chans = Vec::new();
        for c in channels {
            let link = match &c.trace {
                Some((s, lim)) => Some(TraceLink::new(s.clone(), *lim).map_err(|m| Error::Invalid(format!("channel {}: {m}", c.name)))?),
                None => None,
            };
            let aqm = match &c.qdisc {
                Some(q) => Some(q.build(seed, &c.sim_name)?),
                None => None,
            };
            let stats = ChannelStats { name: c.name.clone(), mean_bps: link.as_ref().map(|l| l.mean_bps()), ..Default::default() };
            let rng = Rng::stream(seed, &format!("testbed.{}", c.name));
            let bursts = match c.loss_burst_ns {
                Some(b) if c.loss > 0.0 && b > 0 => Some(LossBursts::new(c.loss, Time::from_ns(b as u64), seed, &c.sim_name)),
                _ => None,
            };
            chans.push(Chan { cfg: c, link, aqm, armed: None, bursts, rng, last_out: i64::MIN, stats });
        }
        Ok(Pipeline { classes, chans, heap: BinaryHeap::new(), slots: Vec::new(), free: Vec::new(), seq: 0, origin: None, outcome: Outcome::default() })
    }

    pub fn held(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// A packet read at `t` (monotonic ns) enters its class's first step.
    pub fn push(&mut self, t: i64, pkt: Vec<u8>, class: usize) {
        let h = Held { pkt, class, step: 0 };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some(h);
                s
            }
            None => {
                self.slots.push(Some(h));
                self.slots.len() - 1
            }
        };
        self.schedule(t, slot);
    }

    fn schedule(&mut self, t: i64, slot: usize) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, slot)));
    }

    /// The virtual time of the next thing to do.
    pub fn next_due(&self) -> Option<i64> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Runs every step due at or before `now`; returns the packets to write with their due times
    /// through `out`, and their buffers' slots are released. Dropped packets go to `spare`.
    pub fn run_until(&mut self, now: i64, out: &mut Vec<(i64, Vec<u8>)>, spare: &mut Vec<Vec<u8>>) {
        while let Some(&Reverse((t, _, slot))) = self.heap.peek() {
            if t > now {
                break;
            }
            self.heap.pop();
            if slot > SERVICE {
                let c = usize::MAX - slot;
                if self.chans[c].armed != Some(t) {
                    continue; // superseded
                }
                self.chans[c].armed = None;
                let o = self.origin.expect("a discipline runs only after time zero");
                let mut oc = std::mem::take(&mut self.outcome);
                self.chans[c].aqm.as_mut().unwrap().service(Time::from_ns((t - o) as u64), &mut oc);
                self.settle(c, &mut oc, spare);
                self.outcome = oc;
                continue;
            }
            let (class, step) = {
                let h = self.slots[slot].as_ref().unwrap();
                (h.class, h.step)
            };
            let steps = &self.classes[class];
            if step == steps.len() {
                let h = self.slots[slot].take().unwrap();
                self.free.push(slot);
                out.push((t, h.pkt));
                continue;
            }
            let len = self.slots[slot].as_ref().unwrap().pkt.len();
            let next = match steps[step] {
                Step::Delay(c) => {
                    let ch = &mut self.chans[c];
                    let lost = match (&mut ch.bursts, self.origin) {
                        (Some(b), Some(o)) => t >= o && b.lost_at(Time::from_ns((t - o) as u64)),
                        (Some(_), None) => false,
                        (None, _) => ch.cfg.loss > 0.0 && ch.rng.uniform() < ch.cfg.loss,
                    };
                    if lost {
                        ch.stats.lost += 1;
                        None
                    } else {
                        let mut due = t + ch.cfg.delay_ns;
                        if let Some(j) = &ch.cfg.jitter {
                            due += j.sample(&mut ch.rng).ns() as i64;
                        }
                        if !ch.cfg.reorder {
                            due = due.max(ch.last_out);
                        }
                        ch.last_out = ch.last_out.max(due);
                        Some(due)
                    }
                }
                Step::Link(c) if self.chans[c].aqm.is_some() => match self.origin {
                    Some(o) if t >= o => {
                        // The discipline holds the packet now; it comes back through `settle`.
                        let mut oc = std::mem::take(&mut self.outcome);
                        let pkt = &self.slots[slot].as_ref().unwrap().pkt;
                        self.chans[c].aqm.as_mut().unwrap().arrive(Time::from_ns((t - o) as u64), slot, pkt, &mut oc);
                        self.settle(c, &mut oc, spare);
                        self.outcome = oc;
                        continue;
                    }
                    _ => {
                        self.chans[c].stats.before_t0 += 1;
                        Some(t)
                    }
                },
                Step::Link(c) => {
                    let ch = &mut self.chans[c];
                    match self.origin {
                        Some(o) if t >= o => {
                            let link = ch.link.as_mut().unwrap();
                            link.arrive(((t - o) / 1_000_000) as u64, len as u32).map(|d| o + d as i64 * 1_000_000)
                        }
                        _ => {
                            ch.stats.before_t0 += 1;
                            Some(t)
                        }
                    }
                }
            };
            match next {
                Some(due) => {
                    self.slots[slot].as_mut().unwrap().step += 1;
                    self.schedule(due, slot);
                }
                None => {
                    let h = self.slots[slot].take().unwrap();
                    self.free.push(slot);
                    spare.push(h.pkt);
                }
            }
        }
    }

    /// What a discipline's link did: departed packets go on to their next step (CE written into
    /// the header where the discipline marked), dropped ones are freed; its next service event
    /// is put in the heap.
    fn settle(&mut self, c: usize, oc: &mut Outcome, spare: &mut Vec<Vec<u8>>) {
        let o = self.origin.expect("a discipline runs only after time zero");
        for (at, slot, mark) in oc.departed.drain(..) {
            let h = self.slots[slot].as_mut().unwrap();
            if mark {
                set_ce(&mut h.pkt);
            }
            h.step += 1;
            self.schedule(o + at.ns() as i64, slot);
        }
        for slot in oc.dropped.drain(..) {
            let h = self.slots[slot].take().unwrap();
            self.free.push(slot);
            spare.push(h.pkt);
        }
        let want = self.chans[c].aqm.as_ref().unwrap().next_event().map(|t| o + t.ns() as i64);
        if let Some(w) = want {
            if self.chans[c].armed != Some(w) {
                self.chans[c].armed = Some(w);
                self.seq += 1;
                self.heap.push(Reverse((w, self.seq, usize::MAX - c)));
            }
        }
    }

    pub fn channel_stats(&self) -> Vec<ChannelStats> {
        self.chans
            .iter()
            .map(|c| ChannelStats {
                link: c.link.as_ref().map(|l| l.stats),
                qdisc: c.aqm.as_ref().map(|a| (a.kind(), a.stats().clone())),
                ce_written: c.aqm.as_ref().map_or(0, |a| a.ce_marks),
                ..c.stats.clone()
            })
            .collect()
    }
}

/// Parses a time-zero line from the control descriptor; returns it when a whole line arrived.
fn read_ctl(fd: i32, buf: &mut Vec<u8>, open: &mut bool) -> Option<i64> {
    let mut b = [0u8; 64];
    let n = unsafe { libc::read(fd, b.as_mut_ptr() as *mut libc::c_void, b.len()) };
    if n <= 0 {
        if n == 0 {
            *open = false;
        }
        return None;
    }
    buf.extend_from_slice(&b[..n as usize]);
    let pos = buf.iter().position(|&c| c == b'\n')?;
    let line: Vec<u8> = buf.drain(..=pos).collect();
    std::str::from_utf8(&line).ok()?.trim().parse().ok()
}

/// Runs until SIGTERM/SIGINT (see [`rt::install_stop_handlers`]); returns the statistics.
pub fn run(cfg: &Config) -> Result<Stats> {
    rt::install_stop_handlers();
    let mut stats = Stats::default();
    let mut pipe = Pipeline::new(cfg.classes.clone(), cfg.channels.clone(), cfg.seed)?;
    for r in &cfg.rules {
        if r.class >= cfg.classes.len() {
            return Err(Error::Invalid(format!("rule names path class {}, there are {}", r.class, cfg.classes.len())));
        }
    }
    if cfg.fifo_prio > 0 {
        stats.realtime = rt::set_fifo(cfg.fifo_prio).is_ok();
    }
    let tun = Tun::open(&cfg.tun)?;
    let mut ctl_open = cfg.ctl_fd >= 0;
    if ctl_open {
        unsafe {
            let fl = libc::fcntl(cfg.ctl_fd, libc::F_GETFL);
            libc::fcntl(cfg.ctl_fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    } else {
        pipe.origin = Some(rt::monotonic_ns());
    }
    let mut ctl_buf = Vec::new();
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut out: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut buf = vec![0u8; 65536];
    let mut pfd = [
        libc::pollfd { fd: tun.fd, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: cfg.ctl_fd, events: libc::POLLIN, revents: 0 },
    ];

    while !rt::stop_requested() {
        // 1. run every step whose time has come; write what leaves
        let mut now = rt::monotonic_ns();
        pipe.run_until(now, &mut out, &mut spare);
        for (due, pkt) in out.drain(..) {
            if !tun.write(&pkt) {
                stats.write_errors += 1;
            }
            now = rt::monotonic_ns();
            if stats.lateness_ns.len() < cfg.max_samples {
                stats.lateness_ns.push(now - due);
            }
            spare.push(pkt);
        }
        // 2. wait for a packet, the control line or the next due time (ns resolution; at most
        //    5 ms so that a stop request is seen)
        let wait = pipe.next_due().map_or(5_000_000, |d| (d - now).clamp(0, 5_000_000));
        if wait > 0 {
            let ts = rt::timespec(wait);
            pfd[1].fd = if ctl_open { cfg.ctl_fd } else { -1 };
            let r = unsafe { libc::ppoll(pfd.as_mut_ptr(), 2, &ts, std::ptr::null()) };
            if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(os("ppoll"));
            }
            if ctl_open && pfd[1].revents != 0 {
                if let Some(t0) = read_ctl(cfg.ctl_fd, &mut ctl_buf, &mut ctl_open) {
                    // the same instant on the monotonic clock the loop runs on
                    pipe.origin = Some(t0 - rt::realtime_ns() + rt::monotonic_ns());
                    stats.t0_realtime_ns = Some(t0);
                }
            }
        }
        // 3. read everything waiting
        while let Some(n) = tun.read(&mut buf)? {
            let t = rt::monotonic_ns();
            let pkt = &buf[..n];
            let class = if n >= 20 && pkt[0] >> 4 == 4 {
                let (s, d) = (be32(&pkt[12..16]), be32(&pkt[16..20]));
                cfg.rules.iter().find(|r| s & r.src_mask == r.src && d & r.dst_mask == r.dst).map_or(0, |r| r.class)
            } else {
                stats.non_ipv4 += 1;
                0
            };
            if pipe.held() >= cfg.max_held {
                stats.overflow_drops += 1;
                continue;
            }
            let mut v = spare.pop().unwrap_or_default();
            v.clear();
            v.extend_from_slice(pkt);
            stats.packets += 1;
            stats.bytes += n as u64;
            pipe.push(t, v, class);
            stats.max_held = stats.max_held.max(pipe.held());
        }
    }
    stats.channels = pipe.channel_stats();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chan(name: &str, delay_ns: i64) -> ChannelCfg {
        ChannelCfg { name: name.into(), delay_ns, jitter: None, reorder: false, loss: 0.0, loss_burst_ns: None, sim_name: name.into(), trace: None, qdisc: None }
    }

    fn drain(p: &mut Pipeline, until: i64) -> Vec<(i64, usize)> {
        let (mut out, mut spare) = (vec![], vec![]);
        p.run_until(until, &mut out, &mut spare);
        out.into_iter().map(|(t, pkt)| (t, pkt.len())).collect()
    }

    /// A trace step, then the channel's delay: departures at origin + opportunity stamp + delay,
    /// with Mahimahi's on-tick rule; before time zero the link is passed through.
    #[test]
    fn trace_then_delay_in_virtual_time() {
        let mut down = chan("down", 10_000_000);
        down.trace = Some((vec![1, 1, 3, 5], Limit::Packets(500)));
        let core = chan("core", 5_000_000);
        let mut p = Pipeline::new(vec![vec![], vec![Step::Delay(0), Step::Link(1), Step::Delay(1)]], vec![core, down], 1).unwrap();
        p.push(0, vec![0; 80], 1); // before time zero: 5 + 10 ms
        let o = 100_000_000;
        p.origin = Some(o);
        // reaches the link at o + 5 ms - 5 ms = o (ms 0): leaves at 1 ms, out at 11 ms
        p.push(o - 5_000_000, vec![0; 1500], 1);
        // reaches the link exactly on ms 3: the opportunity at 3 is burned; leaves at 5
        p.push(o - 2_000_000, vec![0; 80], 1);
        p.push(o, vec![0; 60], 0); // the default class: written at once
        let got = drain(&mut p, i64::MAX);
        assert_eq!(got, vec![(15_000_000, 80), (o, 60), (o + 11_000_000, 1500), (o + 15_000_000, 80)]);
        let st = p.channel_stats();
        assert_eq!(st[1].before_t0, 1);
        assert_eq!(st[1].link.unwrap().accepted, 2);
    }

    /// Jitter keeps FIFO unless reorder: each packet leaves no earlier than the one before it.
    #[test]
    fn jitter_keeps_order_unless_reorder() {
        for reorder in [false, true] {
            let mut c = chan("j", 1_000_000);
            c.jitter = Some(Jitter::Exponential { mean: 0.010 });
            c.reorder = reorder;
            let mut p = Pipeline::new(vec![vec![Step::Delay(0)]], vec![c], 3).unwrap();
            for k in 0..2000i64 {
                p.push(k * 1_000_000, (k as u32).to_be_bytes().to_vec(), 0);
            }
            let (mut out, mut spare) = (vec![], vec![]);
            p.run_until(i64::MAX, &mut out, &mut spare);
            let ids: Vec<u32> = out.iter().map(|(_, b)| u32::from_be_bytes(b[..4].try_into().unwrap())).collect();
            let in_order = ids.windows(2).all(|w| w[0] < w[1]);
            assert_eq!(in_order, !reorder);
            // the added delay: 1 ms + exponential(10 ms) (mean of the first packet's samples with reorder)
            if reorder {
                let mean: f64 = out.iter().map(|(t, b)| (t - u32::from_be_bytes(b[..4].try_into().unwrap()) as i64 * 1_000_000) as f64).sum::<f64>()
                    / out.len() as f64;
                assert!((mean - 11e6).abs() < 1e6, "{mean}");
            }
        }
    }

    #[test]
    fn loss_drops_about_the_probability() {
        let mut c = chan("l", 0);
        c.loss = 0.1;
        let mut p = Pipeline::new(vec![vec![Step::Delay(0)]], vec![c], 5).unwrap();
        for k in 0..10_000 {
            p.push(k, vec![0; 10], 0);
        }
        let n = drain(&mut p, i64::MAX).len();
        assert!((8_800..9_200).contains(&n), "{n}");
        assert_eq!(p.channel_stats()[0].lost as usize, 10_000 - n);
        assert_eq!(p.held(), 0);
    }

    /// Loss bursts: exactly the packets that pass during the simulator's loss periods (same seed,
    /// same channel stream, counted from time zero) are lost.
    #[test]
    fn loss_bursts_replay_the_simulators_periods() {
        let mut c = chan("bottleneck", 0);
        c.loss = 0.05;
        c.loss_burst_ns = Some(50_000_000);
        let mut p = Pipeline::new(vec![vec![Step::Delay(0)]], vec![c], 9).unwrap();
        let o = 1_000_000_000;
        p.origin = Some(o);
        let periods = LossBursts::new(0.05, Time::from_ms(50), 9, "bottleneck").periods(Time::from_secs(60));
        assert!(periods.len() > 20);
        for k in 0..60_000i64 {
            p.push(o + k * 1_000_000, k.to_be_bytes().to_vec(), 0);
        }
        let (mut out, mut spare) = (vec![], vec![]);
        p.run_until(i64::MAX, &mut out, &mut spare);
        let lost_ms: Vec<u64> = spare.iter().map(|b| i64::from_be_bytes(b[..8].try_into().unwrap()) as u64).collect();
        let want: Vec<u64> = (0..60_000u64).filter(|&k| periods.iter().any(|&(a, b)| a <= k * 1_000_000 && k * 1_000_000 < b)).collect();
        assert_eq!(lost_ms, want);
        let frac = want.len() as f64 / 60_000.0;
        assert!((0.02..0.09).contains(&frac), "{frac}");
    }

    fn ipv4(id: u16, len: usize, tos: u8) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let c = crate::aqm::ipv4_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    fn codel_chan(ecn: bool) -> ChannelCfg {
        let mut c = chan("down", 10_000_000);
        c.qdisc = Some(QdiscCfg { table: serde_json::json!({"kind": "codel", "ecn": ecn}), path: "access.down_queue".into(),
                                  rate_bps: 1_000_000, overhead: 0, schedule_ms: None });
        c
    }

    /// The simulator's CoDel as a path step, then the channel's delay: 100 ECN-capable 1500 B
    /// packets at once into 1 Mbit/s (12 ms each): every packet leaves 12 ms after the one before
    /// it (plus 10 ms of delay), CoDel marks some, and the marked ones carry CE with a valid
    /// header checksum. Before time zero the step is passed through.
    #[test]
    fn a_simulator_discipline_as_the_bottleneck() {
        let mut p = Pipeline::new(vec![vec![Step::Link(0), Step::Delay(0)]], vec![codel_chan(true)], 1).unwrap();
        p.push(0, ipv4(9999, 1500, 2), 0);
        let before = drain(&mut p, 1_000_000_000);
        assert_eq!(before, vec![(10_000_000, 1500)]);
        let o = 1_000_000_000;
        p.origin = Some(o);
        for k in 0..100u16 {
            p.push(o, ipv4(k, 1500, 2), 0);
        }
        let (mut out, mut spare) = (vec![], vec![]);
        p.run_until(i64::MAX, &mut out, &mut spare);
        assert_eq!(out.len() + spare.len(), 100);
        assert!(spare.is_empty(), "ECN-capable packets are marked, not dropped");
        let tx = 12_000_000i64;
        for (k, (t, pkt)) in out.iter().enumerate() {
            assert_eq!(*t, o + (k as i64 + 1) * tx + 10_000_000);
            assert_eq!(u16::from_be_bytes([pkt[4], pkt[5]]), k as u16, "FIFO order");
            assert_eq!(crate::aqm::ipv4_checksum(&pkt[..20]), u16::from_be_bytes([pkt[10], pkt[11]]));
        }
        let ce = out.iter().filter(|(_, b)| b[1] & 3 == 3).count();
        assert!(ce >= 3, "{ce}");
        let st = &p.channel_stats()[0];
        assert_eq!(st.ce_written as usize, ce);
        let (kind, qs) = st.qdisc.clone().unwrap();
        assert_eq!((kind, qs.arrived_pkts, qs.marked_pkts as usize), ("codel", 100, ce));
        assert_eq!(st.before_t0, 1);
        assert_eq!(p.held(), 0);
        // Not-ECT: the same standing queue makes CoDel drop
        let mut p = Pipeline::new(vec![vec![Step::Link(0)]], vec![codel_chan(true)], 1).unwrap();
        p.origin = Some(0);
        for k in 0..100u16 {
            p.push(0, ipv4(k, 1500, 0), 0);
        }
        let (mut out, mut spare) = (vec![], vec![]);
        p.run_until(i64::MAX, &mut out, &mut spare);
        assert!(spare.len() >= 3 && out.len() + spare.len() == 100, "{} dropped", spare.len());
        assert_eq!(p.held(), 0);
    }

    /// A discipline's table is read by the simulator's own parser: errors name the user's key.
    #[test]
    fn a_bad_discipline_table_names_its_key() {
        let mut c = codel_chan(false);
        c.qdisc.as_mut().unwrap().table = serde_json::json!({"kind": "codel", "target": "0ms"});
        let e = Pipeline::new(vec![vec![Step::Link(0)]], vec![c.clone()], 1).err().unwrap().to_string();
        assert!(e.starts_with("access.down_queue.target: must be > 0"), "{e}");
        c.qdisc.as_mut().unwrap().table = serde_json::json!({"kind": "nosuch"});
        let e = Pipeline::new(vec![vec![Step::Link(0)]], vec![c.clone()], 1).err().unwrap().to_string();
        assert!(e.contains("access.down_queue.kind") && e.contains("fq_codel"), "{e}");
        c.qdisc.as_mut().unwrap().table = serde_json::json!({"kind": "codel", "targte": "5ms"});
        let e = Pipeline::new(vec![vec![Step::Link(0)]], vec![c], 1).err().unwrap().to_string();
        assert!(e.contains("targte"), "{e}");
    }

    #[test]
    fn refuses_a_link_step_without_trace() {
        assert!(Pipeline::new(vec![vec![Step::Link(0)]], vec![chan("x", 0)], 1).is_err());
        assert!(Pipeline::new(vec![vec![Step::Delay(1)]], vec![chan("x", 0)], 1).is_err());
    }
}
