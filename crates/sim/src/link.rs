//! One direction of a link: a queue discipline in front of a serialiser, then propagation delay
//! plus optional random extra delay. The serialiser is either a fixed rate (with tc's per-packet
//! `overhead` counted in it) or a list of delivery opportunities — a Mahimahi trace, or the
//! opportunities jitterlab's cellular model generates (`crate::cellular`) — driven with Mahimahi's
//! exact semantics (see [`OppLink`]).
use crate::packet::{NodeId, PktId};
use crate::qdisc::Qdisc;
use crate::rng::Rng;
use crate::time::{Rate, Time};

pub use crate::trace::{Cursor, Trace, TraceError, OPPORTUNITY_BYTES, TRACE_OPPORTUNITY_BYTES};

/// The serialiser of a link driven by delivery opportunities, as Mahimahi's `LinkQueue`
/// (src/frontend/link_queue.cc): the clock is integer milliseconds; when a packet arrives at
/// millisecond `now`, every opportunity stamped `<= now` is used first (by packets already queued,
/// or wasted) and only then is the packet enqueued (`rationalize(now)` before `enqueue`); an
/// opportunity's 1504 bytes can finish several packets; a packet larger than what is left keeps
/// the rest of the opportunity and continues in the next one; what an opportunity has left when
/// the queue is empty is lost; a packet leaves at the stamp of the opportunity that completes it.
/// The engine keeps one pending event per busy link, at the next opportunity's stamp.
#[derive(Clone, Debug)]
pub struct OppLink {
    pub trace: Trace,
    /// The first opportunity not yet used or wasted.
    pub(crate) next: Cursor,
    /// The packet being sent and the bytes it still needs (Mahimahi's `packet_in_transit_`).
    pub(crate) in_transit: Option<(PktId, u32)>,
    /// Time of the scheduled opportunity event; None while the link is idle.
    pub(crate) pending: Option<Time>,
    /// The cellular model's Iub flow control (`iub_cycle`); None: every opportunity may be used.
    pub gate: Option<IubGate>,
}

impl OppLink {
    pub fn new(trace: Trace) -> OppLink { OppLink { trace, next: Cursor::default(), in_transit: None, pending: None, gate: None } }
}

/// HSDPA's Iub flow control between RNC and Node B (`iub_cycle`): the RNC (where the link's queue
/// is) may hand the Node B only what the Node B granted for the current cycle (TS 25.435's HS-DSCH
/// Capacity Allocation: credits per HS-DSCH interval), and the Node B sizes the next grant from
/// the capacity the user actually used (Ericsson's US 7,564,788, "Flow control for low bitrate
/// users on high-speed downlink"). The rule here, the growth factor assumed: cycles are
/// [k·cycle, (k+1)·cycle) ms from the run's origin; a packet may start while the bytes started in
/// the cycle are below its grant, and counts whole; the next cycle's grant is twice the bytes
/// started in this one, and never below one opportunity (1504 B). It shrinks only after a cycle
/// in which the user's queue ran dry (its demand, not the radio, set its use); otherwise it keeps
/// at least its value. A user that sent only audio (80 B every 20 ms) holds a one-opportunity
/// grant, so a burst behind it gets 2, 4, 8, … full packets in successive cycles; a backlogged
/// flow is not held back once its grant has grown. An opportunity the gate refuses is lost (the
/// radio serves other users).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IubGate {
    pub cycle_ms: u64,
    cycle: u64,
    used: u64,
    grant: u64,
    /// The queue ran dry in the current cycle.
    dry: bool,
}

impl IubGate {
    pub fn new(cycle_ms: u64) -> IubGate {
        assert!(cycle_ms > 0, "iub_cycle 0 means no gate");
        IubGate { cycle_ms, cycle: 0, used: 0, grant: OPPORTUNITY_BYTES as u64, dry: false }
    }

    /// Moves to the cycle holding millisecond `t_ms` (never backwards).
    fn advance(&mut self, t_ms: u64) {
        let k = t_ms / self.cycle_ms;
        if k > self.cycle {
            // A dry queue in a gap of two or more cycles means the cycles between used nothing.
            let last = if k == self.cycle + 1 || !self.dry { self.used } else { 0 };
            let keep = if self.dry { 0 } else { self.grant };
            self.grant = (2 * last).max(keep).max(OPPORTUNITY_BYTES as u64);
            self.used = 0;
            self.dry = false;
            self.cycle = k;
        }
    }

    /// Whether a packet may start at millisecond `t_ms`.
    pub fn open(&mut self, t_ms: u64) -> bool {
        self.advance(t_ms);
        self.used < self.grant
    }

    /// The link's queue ran dry at millisecond `t_ms` (nothing queued, nothing in transit).
    pub fn ran_dry(&mut self, t_ms: u64) {
        self.advance(t_ms);
        self.dry = true;
    }

    /// Counts a packet of `size` bytes started in the current cycle.
    pub fn count(&mut self, size: u32) { self.used += size as u64; }

    /// The first millisecond of the next cycle.
    pub fn next_cycle_ms(&self) -> u64 { (self.cycle + 1) * self.cycle_ms }

    /// The current cycle's grant and the bytes started in it.
    pub fn state(&self) -> (u64, u64) { (self.grant, self.used) }
}

/// How a link direction's capacity is given.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// A fixed rate; `overhead` bytes are added to every packet's size in the serialisation time
    /// (tc-stab's / netem's `overhead`).
    Rate { rate: Rate, overhead: u32 },
    /// A Mahimahi trace read from `path`.
    Trace { path: String, trace: Trace },
    /// jitterlab's cellular model; the opportunities are generated per channel and run.
    Cellular(crate::cellular::CellularParams),
}

impl Capacity {
    /// Mean capacity in bit/s (what the channels table reports).
    pub fn mean_bps(&self) -> f64 {
        match self {
            Capacity::Rate { rate, .. } => rate.0 as f64,
            Capacity::Trace { trace, .. } => trace.mean_bps(),
            Capacity::Cellular(p) => p.mean_bps,
        }
    }
}

/// Time-correlated link loss (`loss` with `loss_burst`): the link alternates between good periods
/// and loss bursts, both exponentially distributed, the bursts with mean `loss_burst` and the good
/// periods with mean loss_burst·(1 − loss)/loss, so a fraction `loss` of the time — and so of the
/// packets, whatever their rate — is lost. Every packet that leaves the serialiser during a burst
/// is lost (a radio outage, not independent bit errors). The periods are a function of time only
/// (stream `loss:<channel>`), so another backend can replay them ([`LossBursts::periods`]).
#[derive(Clone, Debug)]
pub struct LossBursts {
    mean_bad: f64,
    mean_good: f64,
    rng: Rng,
    next_bad: Time,
    bad_until: Time,
}

impl LossBursts {
    pub fn new(loss: f64, burst: Time, seed: u64, channel: &str) -> LossBursts {
        let mean_bad = burst.secs_f64();
        let mean_good = mean_bad * (1.0 - loss) / loss;
        let mut rng = Rng::stream(seed, &format!("loss:{channel}"));
        let next_bad = Time::from_secs_f64(rng.exponential(mean_good));
        let bad_until = next_bad + Time::from_secs_f64(rng.exponential(mean_bad));
        LossBursts { mean_bad, mean_good, rng, next_bad, bad_until }
    }

    /// Whether a packet leaving at `t` is lost; `t` must not decrease between calls.
    pub fn lost_at(&mut self, t: Time) -> bool {
        while t >= self.bad_until {
            self.next_bad = self.bad_until + Time::from_secs_f64(self.rng.exponential(self.mean_good));
            self.bad_until = self.next_bad + Time::from_secs_f64(self.rng.exponential(self.mean_bad));
        }
        t >= self.next_bad
    }

    /// The loss bursts [start, end) that begin before `until`, in ns.
    pub fn periods(mut self, until: Time) -> Vec<(u64, u64)> {
        let mut out = vec![];
        while self.next_bad < until {
            out.push((self.next_bad.ns(), self.bad_until.ns()));
            let t = self.bad_until;
            self.lost_at(t);
        }
        out
    }
}

/// HTB's token bucket on a fixed-rate link (`burst`): a packet may leave whenever the tokens are
/// ≥ 0 and is charged its serialisation time after it leaves, so the tokens can go negative; they
/// accrue at the link rate up to the burst (`htb_class_mode` with hysteresis off, `htb_charge_class`).
/// After an idle period of at least one frame time a 1600 B burst releases two 1514 B frames back
/// to back (1600 − 1514 ≥ 0 after the first). Tokens are kept in ns of link time, as HTB's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    /// The burst as link time (its bytes' serialisation time at the rate).
    pub burst: Time,
    /// Tokens (ns) at `at`; negative while the last packet's charge is not yet earned back.
    tokens: i64,
    at: Time,
}

impl TokenBucket {
    /// A bucket that starts full (HTB: a new class has `burst` tokens).
    pub fn new(burst: Time) -> TokenBucket { TokenBucket { burst, tokens: burst.ns() as i64, at: Time::ZERO } }

    /// A packet needing `tx` of link time leaves at `now` (the caller only sends once the previous
    /// call's answer has passed, so the tokens are ≥ 0 here); returns when the next one may leave.
    pub fn send(&mut self, now: Time, tx: Time) -> Time {
        let earned = (self.tokens + (now - self.at).ns() as i64).min(self.burst.ns() as i64);
        self.tokens = earned - tx.ns() as i64;
        self.at = now;
        now + Time::from_ns(self.tokens.min(0).unsigned_abs())
    }
}

/// Random extra per-packet delay (cellular-like link-layer jitter).
#[derive(Clone, Debug, PartialEq)]
pub enum Jitter {
    Uniform { lo: f64, hi: f64 },
    Exponential { mean: f64 },
    /// Normal, truncated at zero.
    Normal { mean: f64, sd: f64 },
    Pareto { mean: f64, shape: f64 },
}

impl Jitter {
    pub fn sample(&self, rng: &mut Rng) -> Time {
        let s = match *self {
            Jitter::Uniform { lo, hi } => rng.uniform_range(lo, hi),
            Jitter::Exponential { mean } => rng.exponential(mean),
            Jitter::Normal { mean, sd } => rng.normal(mean, sd).max(0.0),
            Jitter::Pareto { mean, shape } => rng.pareto(mean, shape),
        };
        Time::from_secs_f64(s)
    }
}

/// One direction of a link.
pub struct Channel {
    /// "<link>" for the forward direction, "<link>.rev" for the reverse one.
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    /// The fixed rate, or the mean rate of the opportunities (reported; qdiscs that need a rate,
    /// e.g. RED's idle-time estimate, use it).
    pub rate: Rate,
    /// Per-packet bytes counted in a fixed rate's serialisation time (tc's `overhead`).
    pub overhead: u32,
    /// A fixed rate enforced as a shaper (HTB or TBF on a fast device, as on the testbed): a
    /// packet leaves at once when dequeued and the next one waits its serialisation time (a token
    /// bucket of one packet), instead of every packet spending that time on the wire.
    pub shaper: bool,
    /// HTB's token bucket (`burst`): the link is a shaper whose next packet may leave as soon as the
    /// tokens are ≥ 0 again (None: each packet waits its full serialisation time).
    pub bucket: Option<TokenBucket>,
    /// The queue is a middlebox's in front of the link (`queue_at = "network"`), not the sending
    /// node's own qdisc: a packet leaving its source node is complete for TCP Small Queues when the
    /// link takes it (the node's own interface is fast), not when the queue releases it.
    pub network_queue: bool,
    pub delay: Time,
    pub qdisc: Box<dyn Qdisc>,
    /// Opportunity-driven serialiser (trace or cellular model); None: fixed rate.
    pub opp: Option<OppLink>,
    pub jitter: Option<Jitter>,
    /// Let random delay reorder packets (otherwise FIFO is kept by holding later packets back).
    pub reorder: bool,
    /// Random link-layer loss probability applied after serialisation.
    pub loss: f64,
    /// With `loss_burst`: losses come in bursts (the process replaces independent draws).
    pub loss_bursts: Option<LossBursts>,
    /// A packet is on the wire (until its TxDone event, or until `idle_at`).
    pub(crate) busy: bool,
    /// The packet on the wire leaves at this (time, event sequence number) with nothing queued
    /// behind it, and no TxDone event was scheduled for it: the engine makes the discipline's empty
    /// dequeue under this key when something next needs the link (see
    /// [`crate::qdisc::Qdisc::idle_dequeue_deferrable`]).
    pub(crate) idle_at: Option<(Time, u64)>,
    /// Last serialisation time computed: (rate, bytes, time) — packets mostly repeat their size, and the
    /// exact time takes a 128-bit division.
    pub(crate) tx_memo: (u64, u64, Time),
    /// The armed qdisc watchdog (see [`crate::qdisc::Qdisc::next_wakeup`]); a Wakeup event at any
    /// other time is stale.
    pub(crate) wakeup: Option<Time>,
    /// A FIFO link whose departures are computed at enqueue (see
    /// [`crate::qdisc::Qdisc::fifo_departures`]): the (start, bytes) of each accepted packet whose
    /// dequeue is still to be made, in order, and when the last one leaves the wire.
    pub(crate) fifo_starts: std::collections::VecDeque<(Time, u32)>,
    /// Departures computed at enqueue (a fixed-rate, lossless link in front of a FIFO
    /// discipline; see engine/channel.rs), asked when the run starts.
    pub(crate) fifo: bool,
    /// The discipline's `empty_dequeue_is_noop`, asked when the run starts.
    pub(crate) noop_idle: bool,
    /// On a FIFO link, the discipline's `idle_pass_max` (asked when the run starts), and the
    /// (packets, bytes) passed since the count was last handed to it.
    pub(crate) pass_max: Option<u64>,
    pub(crate) passes: (u64, u64),
    pub(crate) free_at: Time,
    pub(crate) last_arrival: Time,
    pub(crate) rng: Rng,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub lost_pkts: u64,
    pub lost_bytes: u64,
    /// Whether queue_samples includes this channel.
    pub sampled: bool,
}

impl Channel {
    /// When a packet that leaves the wire at `depart` reaches the far end: the propagation delay,
    /// plus a jitter draw when the link has jitter, never before an earlier packet unless the link
    /// may reorder.
    #[inline(always)]
    pub(crate) fn arrival(&mut self, depart: Time) -> Time {
        let mut arrive = depart + self.delay;
        if let Some(j) = &self.jitter {
            arrive += j.sample(&mut self.rng);
        }
        if !self.reorder {
            arrive = arrive.max(self.last_arrival);
        }
        self.last_arrival = self.last_arrival.max(arrive);
        arrive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 Mbit/s, burst 1600 B (3.2 ms of link time), 1514 B frames (3.028 ms): from a full bucket
    /// the first frame leaves 172 µs of tokens, so the second leaves at once and leaves
    /// 172 − 3028 = −2856 µs: the third waits 2.856 ms. After 10 ms idle the bucket is full again
    /// (capped at 3.2 ms, not 10 ms), so again a pair; a busy link then runs at the frame time.
    #[test]
    fn token_bucket_releases_a_pair_after_idle_then_the_rate() {
        let rate = Rate(4_000_000);
        let (burst, tx) = (rate.tx_time(1600), rate.tx_time(1514));
        assert_eq!((burst, tx), (Time::from_us(3200), Time::from_us(3028)));
        let mut b = TokenBucket::new(burst);
        assert_eq!(b.send(Time::ZERO, tx), Time::ZERO);
        assert_eq!(b.send(Time::ZERO, tx), Time::from_us(2856));
        assert_eq!(b.send(Time::from_us(2856), tx), Time::from_us(2856 + 3028));
        let idle = Time::from_us(2856 + 3028 + 10_000);
        assert_eq!(b.send(idle, tx), idle);
        assert_eq!(b.send(idle, tx), idle + Time::from_us(2856));
        // A late start (timer lateness) is earned back while the tokens stay below the burst.
        let late = idle + Time::from_us(2856 + 100);
        assert_eq!(b.send(late, tx), late + Time::from_us(3028 - 100));
        // A burst below one frame never releases a pair.
        let mut small = TokenBucket::new(rate.tx_time(200));
        assert_eq!(small.send(Time::ZERO, tx), Time::from_us(3028 - 400));
    }
}
