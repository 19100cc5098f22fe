//! One direction of a link: a queue discipline in front of a serialiser (fixed rate, or delivery
//! opportunities from a Mahimahi trace), then propagation delay plus optional random extra delay.
use crate::packet::NodeId;
use crate::qdisc::Qdisc;
use crate::rng::Rng;
use crate::time::{Rate, Time};

/// Mahimahi link trace: each line is a millisecond timestamp at which one delivery opportunity of
/// 1504 bytes occurs (mahimahi's PACKET_SIZE); the trace repeats with period = last timestamp.
/// A packet consumes bytes from successive opportunities and leaves at the one that completes it;
/// an opportunity that finds the queue empty is lost (as in mahimahi's LinkQueue).
#[derive(Clone, Debug)]
pub struct Trace {
    opps_ms: Vec<u64>,
    period_ms: u64,
    /// Index of the next unused opportunity and the loop count.
    next: usize,
    cycle: u64,
    cur_time: Time,
    cur_left: u32,
}

pub const TRACE_OPPORTUNITY_BYTES: u32 = 1504;

impl Trace {
    /// Parses mahimahi's format; errors name the line.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut opps = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let v: u64 = l.parse().map_err(|_| format!("line {}: expected a whole number of milliseconds, got {l:?}", i + 1))?;
            if let Some(&last) = opps.last() {
                if v < last {
                    return Err(format!("line {}: timestamps must not decrease ({v} after {last})", i + 1));
                }
            }
            opps.push(v);
        }
        let period = *opps.last().ok_or("the trace has no delivery opportunities")?;
        if period == 0 {
            return Err("the trace's last timestamp must be > 0 ms (it is the loop period)".into());
        }
        Ok(Trace { opps_ms: opps, period_ms: period, next: 0, cycle: 0, cur_time: Time::ZERO, cur_left: 0 })
    }

    fn opp_time(&self, idx: usize, cycle: u64) -> Time { Time::from_ms(self.opps_ms[idx] + cycle * self.period_ms) }

    fn advance(&mut self) -> Time {
        let t = self.opp_time(self.next, self.cycle);
        self.next += 1;
        if self.next == self.opps_ms.len() {
            self.next = 0;
            self.cycle += 1;
        }
        t
    }

    /// Departure time of a packet of `size` bytes that is at the head of the queue at `now`.
    pub fn depart(&mut self, now: Time, size: u32) -> Time {
        let mut need = size;
        if self.cur_left > 0 && self.cur_time >= now {
            let take = need.min(self.cur_left);
            self.cur_left -= take;
            need -= take;
        }
        while need > 0 {
            let mut t = self.advance();
            while t < now {
                t = self.advance();
            }
            self.cur_time = t;
            self.cur_left = TRACE_OPPORTUNITY_BYTES;
            let take = need.min(self.cur_left);
            self.cur_left -= take;
            need -= take;
        }
        self.cur_time
    }

    /// Average capacity of the trace in bit/s.
    pub fn mean_rate(&self) -> f64 { self.opps_ms.len() as f64 * TRACE_OPPORTUNITY_BYTES as f64 * 8.0 / (self.period_ms as f64 * 1e-3) }
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
    pub rate: Rate,
    pub delay: Time,
    pub qdisc: Box<dyn Qdisc>,
    pub trace: Option<Trace>,
    pub jitter: Option<Jitter>,
    /// Let random delay reorder packets (otherwise FIFO is kept by holding later packets back).
    pub reorder: bool,
    /// Random link-layer loss probability applied after serialisation.
    pub loss: f64,
    pub(crate) busy: bool,
    pub(crate) last_arrival: Time,
    pub(crate) rng: Rng,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub lost_pkts: u64,
    pub lost_bytes: u64,
    /// Whether queue_samples includes this channel.
    pub sampled: bool,
}
