//! cake-autorate: the controller that sets a CAKE shaper's rate on a variable-rate link (LTE, 5G,
//! Starlink) as it is deployed on OpenWrt routers (github.com/lynxthecat/cake-autorate, stable
//! release v3.2.2: `cake-autorate.sh`'s main loop and `monitor_achieved_rates`, defaults from
//! `defaults.sh`). Written from its rules, not its code:
//!
//! - **Load** (`monitor_achieved_rates`): every monitor interval (200 ms, at least ten times the
//!   time of one full-size packet each way at the base rates) the achieved rate is the bytes the
//!   shaper sent over the interval (the IFB's `tx_bytes` for the download), and the load condition
//!   is *high* if the last load (achieved / shaper rate, as of the last ping) exceeds 75 %, else
//!   *low* above 2000 kbit/s, else *idle* (main loop, `SARS`).
//! - **Delay** (main loop, `fping` branch, the default pinger): probes to 6 reflectors, one every
//!   0.3 s / 6 = 50 ms in turn (fping `--period 300 --interval 50`); each reply's one-way delay is
//!   RTT / 2 (µs, truncated); a per-reflector baseline (starting at 100 ms) moves towards it by
//!   0.001 when it is above and 0.9 when below; delta = OWD − baseline. A delta above 30 ms plus one
//!   full-size packet's time at the shaper rate (`set_shaper_rate`'s compensation) is a delayed
//!   sample; bufferbloat = at least 3 of the last 6 samples delayed.
//! - **Rate** (on every reply): bufferbloat and 300 ms since the last bufferbloat cut: × (0.99 −
//!   f · (0.99 − 0.75)), f = (mean delta of the window − threshold) / (60 ms − 30 ms), in 0..=1;
//!   else high load with a fresh load reading and 300 ms since the last cut: × 1.04; else (low or
//!   idle) 1 s since the last change: one step of × 0.99 or × 1.01 towards the base rate (not past
//!   it); then clamped to [min, max]. A cut or a rise restarts the decay's 1 s.
//! - Integers as the script computes them (rates in kbit/s, factors in thousandths, alphas in
//!   millionths, times in µs; bash divides towards zero, as Rust's `/`).
//!
//! Not modelled: the reflectors' health checks and rotation (every reflector is the one echo host
//! `reflector` and answers), the sleep after 60 s idle (runs here start their traffic within
//! seconds), stall detection, the delta EWMAs (used only by the health checks), tsping's one-way
//! timestamps. The download and upload shapers are the CAKEs whose `autorate` table names the same
//! pinger and reflector: the one the probes' replies cross (reflector → pinger) is the download's,
//! the one the requests cross the upload's; fping's OWD is half the RTT for both, as in the script.
//! The controller sets a shaper the moment a reply is processed (the script's `tc qdisc change`).
use std::any::Any;
use std::collections::VecDeque;

use crate::config::{ConfigError, Params};
use crate::engine::{Agent, Ctx, Sim};
use crate::packet::{AgentId, Body, ChanId, Ecn, NodeId, Packet};
use crate::time::Time;

/// fping's default echo request: 56 data bytes + 8 ICMP + 20 IP header bytes.
pub const PROBE_SIZE: u64 = 84;
/// fping `--timeout 10000` (the script's pinger command): a reply later than this is not counted.
pub const PROBE_TIMEOUT: Time = Time::from_secs(10);
/// The baseline a reflector starts from (the script's initialisation, 100000 µs).
pub const BASELINE_START_US: i64 = 100_000;
/// The interface MTU the script reads (`/sys/class/net/<if>/mtu`; Ethernet's 1500).
pub const IF_MTU: i64 = 1500;

/// The controller's settings shared by both directions (defaults.sh's names and defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct Shared {
    /// Node the script runs on (it pings from there) and the node that echoes the probes.
    pub pinger: String,
    pub reflector: String,
    /// `no_pingers` (6).
    pub reflectors: u32,
    /// `reflector_ping_interval_s` (0.3 s) in µs: each reflector's probe period.
    pub ping_interval_us: i64,
    pub probe_size: u32,
    /// `monitor_achieved_rates_interval_ms` (200) in µs.
    pub monitor_interval_us: i64,
    /// `bufferbloat_detection_window` (6), `bufferbloat_detection_thr` (3).
    pub window: usize,
    pub detection_thr: usize,
    /// `alpha_baseline_increase` (0.001), `alpha_baseline_decrease` (0.9), in millionths.
    pub alpha_inc: i64,
    pub alpha_dec: i64,
    /// `shaper_rate_min_adjust_down_bufferbloat` (0.99), `…max…` (0.75),
    /// `shaper_rate_adjust_up_load_high` (1.04), `…down_load_low` (0.99), `…up_load_low` (1.01), in thousandths.
    pub down_min: i64,
    pub down_max: i64,
    pub up_high: i64,
    pub down_low: i64,
    pub up_low: i64,
    /// `high_load_thr` (0.75) in percent.
    pub high_load_pct: i64,
    /// `bufferbloat_refractory_period_ms` (300), `decay_refractory_period_ms` (1000), in µs.
    pub bb_refractory_us: i64,
    pub decay_refractory_us: i64,
    /// `connection_active_thr_kbps` (2000).
    pub active_thr_kbps: i64,
}

/// One direction's settings: its rates and delay thresholds (`*_dl_*` / `*_ul_*` in defaults.sh).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub shared: Shared,
    /// `min_/base_/max_*_shaper_rate_kbps` (no defaults here: the link's, see docs/scenarios.md).
    pub min_kbps: i64,
    pub base_kbps: i64,
    pub max_kbps: i64,
    /// `*_owd_delta_thr_ms` (30), `*_avg_owd_delta_thr_ms` (60), in µs.
    pub thr_us: i64,
    pub avg_thr_us: i64,
    /// `get_max_wire_packet_size_bits`: 8 · (MTU + the CAKE's overhead), ATM cells if framed so.
    pub wire_bits: i64,
    /// The table's path, for errors.
    pub path: String,
}

fn micros(p: &mut Params, key: &str, default_ms: i64) -> Result<i64, ConfigError> {
    Ok(p.duration_opt(key)?.map(|t| (t.ns() / 1000) as i64).unwrap_or(default_ms * 1000))
}

/// A factor as the script stores it (`printf %.0f "${x}e3"`): `scale` · x rounded, within `ok`.
fn scaled(p: &mut Params, key: &str, default: f64, scale: f64, ok: (f64, f64)) -> Result<i64, ConfigError> {
    let x = p.f64_or(key, default)?;
    if !(x >= ok.0 && x <= ok.1) {
        return Err(p.err(key, format!("must be in [{}, {}], got {x}", ok.0, ok.1)));
    }
    Ok((x * scale).round() as i64)
}

fn kbps(p: &mut Params, key: &str) -> Result<i64, ConfigError> {
    let r = p.rate(key)?;
    if r.0 < 1000 {
        return Err(p.err(key, format!("must be at least 1 kbit (the script sets whole kbit/s), got {} bit/s", r.0)));
    }
    Ok((r.0 / 1000) as i64)
}

/// Reads a CAKE's `autorate` table; `overhead` and `atm` are the CAKE's own (for the packet size).
pub fn read_config(p: &mut Params, overhead: i32, atm: bool) -> Result<Config, ConfigError> {
    let pinger = p.str("pinger")?;
    let reflector = p.str("reflector")?;
    let (min_kbps, base_kbps, max_kbps) = (kbps(p, "min")?, kbps(p, "base")?, kbps(p, "max")?);
    if base_kbps < min_kbps {
        return Err(p.err("base", format!("must be at least min ({min_kbps} kbit), got {base_kbps} kbit")));
    }
    if max_kbps < base_kbps {
        return Err(p.err("max", format!("must be at least base ({base_kbps} kbit), got {max_kbps} kbit")));
    }
    let reflectors = p.u64_or("reflectors", 6)?;
    if !(1..=64).contains(&reflectors) {
        return Err(p.err("reflectors", format!("must be in 1..=64, got {reflectors}")));
    }
    let ping_interval_us = micros(p, "ping_interval", 300)?;
    if ping_interval_us < reflectors as i64 {
        return Err(p.err("ping_interval", "must be at least 1 µs per reflector"));
    }
    let probe_size = p.bytes_opt("probe_size")?.unwrap_or(PROBE_SIZE);
    if !(28..=1500).contains(&probe_size) {
        return Err(p.err("probe_size", format!("must be in 28..=1500 B (IP + ICMP headers to the MTU), got {probe_size}")));
    }
    let monitor_interval_us = micros(p, "monitor_interval", 200)?;
    let window = p.u64_or("detection_window", 6)?;
    if !(1..=1000).contains(&window) {
        return Err(p.err("detection_window", format!("must be in 1..=1000 samples, got {window}")));
    }
    let detection_thr = p.u64_or("detection_thr", 3)?;
    if detection_thr == 0 || detection_thr > window {
        return Err(p.err("detection_thr", format!("must be in 1..=detection_window ({window}), got {detection_thr}")));
    }
    let thr_us = micros(p, "owd_delta_thr", 30)?;
    let avg_thr_us = micros(p, "avg_owd_delta_thr", 60)?;
    let shared = Shared {
        pinger,
        reflector,
        reflectors: reflectors as u32,
        ping_interval_us,
        probe_size: probe_size as u32,
        monitor_interval_us,
        window: window as usize,
        detection_thr: detection_thr as usize,
        alpha_inc: scaled(p, "alpha_baseline_increase", 0.001, 1e6, (0.0, 1.0))?,
        alpha_dec: scaled(p, "alpha_baseline_decrease", 0.9, 1e6, (0.0, 1.0))?,
        down_min: scaled(p, "adjust_down_bufferbloat_min", 0.99, 1e3, (0.0, 1.0))?,
        down_max: scaled(p, "adjust_down_bufferbloat_max", 0.75, 1e3, (0.0, 1.0))?,
        up_high: scaled(p, "adjust_up_load_high", 1.04, 1e3, (1.0, 10.0))?,
        down_low: scaled(p, "adjust_down_load_low", 0.99, 1e3, (0.0, 1.0))?,
        up_low: scaled(p, "adjust_up_load_low", 1.01, 1e3, (1.0, 10.0))?,
        high_load_pct: scaled(p, "high_load_thr", 0.75, 1e2, (0.0, 1.0))?,
        bb_refractory_us: micros(p, "bufferbloat_refractory", 300)?,
        decay_refractory_us: micros(p, "decay_refractory", 1000)?,
        active_thr_kbps: p.rate_opt("connection_active_thr")?.map(|r| (r.0 / 1000) as i64).unwrap_or(2000),
    };
    if shared.monitor_interval_us == 0 {
        return Err(p.err("monitor_interval", "must be > 0"));
    }
    let bits = 8 * (IF_MTU + overhead.max(0) as i64);
    // get_max_wire_packet_size_bits: ATM's 53-byte cells per 48 bytes
    let wire_bits = if atm { 424 * ((bits + 376) / 384) } else { bits };
    Ok(Config { shared, min_kbps, base_kbps, max_kbps, thr_us, avg_thr_us, wire_bits, path: p.path().to_string() })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Load {
    Idle,
    Low,
    High,
}

/// One direction's state (the script's `[dl]` / `[ul]` entries).
#[derive(Clone, Debug)]
pub struct Direction {
    pub cfg: Config,
    pub rate_kbps: i64,
    last_rate_kbps: i64,
    /// The delay thresholds with `set_shaper_rate`'s compensation.
    pub thr_comp_us: i64,
    pub avg_thr_comp_us: i64,
    pub achieved_kbps: i64,
    achieved_updated: bool,
    pub load_percent: i64,
    pub load: Load,
    delays: Vec<bool>,
    deltas: Vec<i64>,
    sum_delays: usize,
    sum_deltas: i64,
    pub bufferbloat: bool,
    pub t_last_bb_us: i64,
    pub t_last_decay_us: i64,
}

impl Direction {
    fn new(cfg: Config, t0_us: i64) -> Direction {
        let w = cfg.shared.window;
        let mut d = Direction {
            rate_kbps: cfg.base_kbps,
            last_rate_kbps: 0,
            thr_comp_us: 0,
            avg_thr_comp_us: 0,
            achieved_kbps: 0,
            achieved_updated: false,
            load_percent: 0,
            load: Load::Idle,
            delays: vec![false; w],
            deltas: vec![0; w],
            sum_delays: 0,
            sum_deltas: 0,
            bufferbloat: false,
            t_last_bb_us: t0_us,
            t_last_decay_us: t0_us,
            cfg,
        };
        d.set_shaper_rate();
        d
    }

    /// `set_shaper_rate`: on a change, the thresholds grow by one full-size packet's time at the rate.
    fn set_shaper_rate(&mut self) {
        if self.rate_kbps == self.last_rate_kbps {
            return;
        }
        let comp = 1000 * self.cfg.wire_bits / self.rate_kbps;
        self.thr_comp_us = self.cfg.thr_us + comp;
        self.avg_thr_comp_us = self.cfg.avg_thr_us + comp;
        self.last_rate_kbps = self.rate_kbps;
    }

    /// The time of one full-size packet at the rate (µs; `max_wire_packet_rtt_us`'s term).
    fn packet_us(&self) -> i64 { 1000 * self.cfg.wire_bits / self.rate_kbps }

    /// A load reading (`SARS`): the condition from the load computed at the last reply.
    fn on_achieved(&mut self, kbps: i64) {
        self.achieved_kbps = kbps;
        self.achieved_updated = true;
        let s = &self.cfg.shared;
        self.load = if self.load_percent > s.high_load_pct {
            Load::High
        } else if kbps > s.active_thr_kbps {
            Load::Low
        } else {
            Load::Idle
        };
    }

    /// One sample into the detection window at slot `idx`.
    fn record(&mut self, idx: usize, delta_us: i64) {
        let delayed = delta_us > self.thr_comp_us;
        self.sum_delays = self.sum_delays - self.delays[idx] as usize + delayed as usize;
        self.delays[idx] = delayed;
        self.sum_deltas += delta_us - self.deltas[idx];
        self.deltas[idx] = delta_us;
    }

    /// The rate rules after a reply at `t_us`; returns the new rate when it changed.
    fn adjust(&mut self, t_us: i64) -> Option<i64> {
        let s = self.cfg.shared.clone();
        let avg = self.sum_deltas / s.window as i64;
        self.bufferbloat = self.sum_delays >= s.detection_thr;
        self.load_percent = 100 * self.achieved_kbps / self.rate_kbps;
        let before = self.rate_kbps;
        if self.bufferbloat {
            if t_us > self.t_last_bb_us + s.bb_refractory_us {
                let f = if self.avg_thr_comp_us <= self.thr_comp_us {
                    1000
                } else if avg - self.thr_comp_us > 0 {
                    (1000 * (avg - self.thr_comp_us) / (self.avg_thr_comp_us - self.thr_comp_us)).min(1000)
                } else {
                    0
                };
                let factor = 1000 * s.down_min - f * (s.down_min - s.down_max);
                self.rate_kbps = self.rate_kbps * factor / 1_000_000;
                self.t_last_bb_us = t_us;
                self.t_last_decay_us = t_us;
            }
        } else if self.load == Load::High {
            if self.achieved_updated && t_us > self.t_last_bb_us + s.bb_refractory_us {
                self.rate_kbps = self.rate_kbps * s.up_high / 1000;
                self.achieved_updated = false;
                self.t_last_decay_us = t_us;
            }
        } else if t_us > self.t_last_decay_us + s.decay_refractory_us {
            let base = self.cfg.base_kbps;
            if self.rate_kbps > base {
                self.rate_kbps = (self.rate_kbps * s.down_low / 1000).max(base);
            } else if self.rate_kbps < base {
                self.rate_kbps = (self.rate_kbps * s.up_low / 1000).min(base);
            }
            self.t_last_decay_us = t_us;
        }
        self.rate_kbps = self.rate_kbps.clamp(self.cfg.min_kbps, self.cfg.max_kbps);
        self.set_shaper_rate();
        (self.rate_kbps != before).then_some(self.rate_kbps)
    }
}

/// The controller: per-reflector baselines and the two directions (either may be absent).
#[derive(Clone, Debug)]
pub struct Controller {
    pub shared: Shared,
    pub dl: Option<Direction>,
    pub ul: Option<Direction>,
    pub baselines_us: Vec<i64>,
    idx: usize,
}

impl Controller {
    /// Starts at `t0_us` with both shapers at their base rates.
    pub fn new(dl: Option<Config>, ul: Option<Config>, t0_us: i64) -> Controller {
        let shared = dl.as_ref().or(ul.as_ref()).expect("a controller has a direction").shared.clone();
        let n = shared.reflectors as usize;
        Controller { dl: dl.map(|c| Direction::new(c, t0_us)), ul: ul.map(|c| Direction::new(c, t0_us)), baselines_us: vec![BASELINE_START_US; n], idx: 0, shared }
    }

    fn dirs(&mut self) -> impl Iterator<Item = &mut Direction> { self.dl.iter_mut().chain(self.ul.iter_mut()) }

    /// The monitor's period (`compensated_monitor_achieved_rates_interval_us`, from the base rates).
    pub fn monitor_interval_us(&self) -> i64 {
        let rtt: i64 = self.dl.iter().chain(self.ul.iter()).map(Direction::packet_us).sum();
        self.shared.monitor_interval_us.max(10 * rtt)
    }

    /// A load reading of each direction (kbit/s; a missing direction's is ignored).
    pub fn on_achieved(&mut self, dl_kbps: i64, ul_kbps: i64) {
        if let Some(d) = self.dl.as_mut() {
            d.on_achieved(dl_kbps);
        }
        if let Some(u) = self.ul.as_mut() {
            u.on_achieved(ul_kbps);
        }
    }

    /// A reply from `reflector` with round-trip time `rtt_us` at `t_us`; returns the new rates
    /// (download, upload) of the shapers that changed.
    pub fn on_reply(&mut self, t_us: i64, reflector: usize, rtt_us: i64) -> (Option<i64>, Option<i64>) {
        let owd = rtt_us / 2;
        let b = self.baselines_us[reflector];
        let alpha = if owd >= b { self.shared.alpha_inc } else { self.shared.alpha_dec };
        let b = (alpha * owd + (1_000_000 - alpha) * b) / 1_000_000;
        self.baselines_us[reflector] = b;
        let delta = owd - b;
        let idx = self.idx;
        self.dirs().for_each(|d| d.record(idx, delta));
        self.idx = (idx + 1) % self.shared.window;
        let dl = self.dl.as_mut().and_then(|d| d.adjust(t_us));
        let ul = self.ul.as_mut().and_then(|d| d.adjust(t_us));
        (dl, ul)
    }
}

/// The script on the pinger's node: sends the probes, reads the shapers' byte counters, sets them.
pub struct Pinger {
    name: String,
    pub ctl: Controller,
    dl_chan: Option<ChanId>,
    ul_chan: Option<ChanId>,
    reflector: NodeId,
    echo: AgentId,
    flow: u32,
    next_seq: u64,
    /// Probes awaiting their reply: (seq, sent, reflector), oldest first.
    outstanding: VecDeque<(u64, Time, usize)>,
    prev_bytes: [u64; 2],
    monitor: Time,
    /// Every rate set: (time, download kbit/s, upload kbit/s), for tests and reports.
    pub rates: Vec<(Time, i64, i64)>,
}

const PROBE: u32 = 0;
const MONITOR: u32 = 1;

fn kbit_to_bytes(kbps: i64) -> u64 { kbps as u64 * 125 }

impl Pinger {
    fn bytes_sent(ctx: &mut Ctx, ch: Option<ChanId>) -> u64 { ch.map(|c| ctx.queue_mut(c).stats().dequeued_bytes).unwrap_or(0) }

    fn set(ctx: &mut Ctx, ch: Option<ChanId>, kbps: Option<i64>) {
        if let (Some(c), Some(k)) = (ch, kbps) {
            ctx.queue_mut(c).as_cake_mut().expect("checked when built").set_shaper_rate(kbit_to_bytes(k));
        }
    }
}

impl Agent for Pinger {
    fn name(&self) -> &str { &self.name }
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.set_timer(PROBE, ctx.now());
        ctx.set_timer(MONITOR, ctx.now() + self.monitor);
    }
    fn on_timer(&mut self, key: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        if key == PROBE {
            let n = self.ctl.shared.reflectors as u64;
            let r = (self.next_seq % n) as usize;
            let size = self.ctl.shared.probe_size;
            ctx.send(Packet { flow: self.flow, src: 0, dst: self.reflector, dst_agent: self.echo, size, ecn: Ecn::NotEct, sent: now, body: Body::Probe { seq: self.next_seq } });
            self.outstanding.push_back((self.next_seq, now, r));
            self.next_seq += 1;
            while self.outstanding.front().is_some_and(|o| o.1 + PROBE_TIMEOUT < now) {
                self.outstanding.pop_front();
            }
            // fping --interval: one probe per ping interval / reflectors, the reflectors in turn
            ctx.set_timer(PROBE, now + Time::from_us(self.ctl.shared.ping_interval_us as u64 / n));
        } else {
            let b = [Self::bytes_sent(ctx, self.dl_chan), Self::bytes_sent(ctx, self.ul_chan)];
            let us = self.monitor.ns() as i64 / 1000;
            let k = |i: usize| 8000 * (b[i] - self.prev_bytes[i]) as i64 / us;
            self.ctl.on_achieved(k(0), k(1));
            self.prev_bytes = b;
            ctx.set_timer(MONITOR, now + self.monitor);
        }
    }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let Body::Probe { seq } = pkt.body else { return };
        let Ok(i) = self.outstanding.binary_search_by_key(&seq, |o| o.0) else { return };
        let (_, sent, r) = self.outstanding.remove(i).expect("found");
        let now = ctx.now();
        if now > sent + PROBE_TIMEOUT {
            return;
        }
        let rtt_us = ((now.ns() - sent.ns()) as f64 / 1000.0).round() as i64;
        let (dl, ul) = self.ctl.on_reply(now.ns() as i64 / 1000, r, rtt_us);
        Self::set(ctx, self.dl_chan, dl);
        Self::set(ctx, self.ul_chan, ul);
        if dl.is_some() || ul.is_some() {
            let rate = |d: &Option<Direction>| d.as_ref().map(|d| d.rate_kbps).unwrap_or(0);
            self.rates.push((now, rate(&self.ctl.dl), rate(&self.ctl.ul)));
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

/// A reflector: answers each probe at once, same size, to the pinger.
pub struct Echo {
    name: String,
    pinger: AgentId,
    flow: u32,
}

impl Agent for Echo {
    fn name(&self) -> &str { &self.name }
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        if let Body::Probe { seq } = pkt.body {
            ctx.send(Packet { flow: self.flow, src: 0, dst: pkt.src, dst_agent: self.pinger, size: pkt.size, ecn: Ecn::NotEct, sent: ctx.now(), body: Body::Probe { seq } });
        }
    }
    fn as_any(&self) -> &dyn Any { self }
    fn as_any_mut(&mut self) -> &mut dyn Any { self }
}

/// Adds one pinger and one echo per (pinger, reflector) pair named by the CAKEs' `autorate` tables;
/// the CAKE on the reflector → pinger path is the download's, the one on the way back the upload's.
/// Returns the pingers' agent ids.
pub fn attach(sim: &mut Sim) -> Result<Vec<AgentId>, ConfigError> {
    // (shared settings, download (channel, config), upload (channel, config))
    type Group = (Shared, Option<(ChanId, Config)>, Option<(ChanId, Config)>);
    let mut groups: Vec<Group> = vec![];
    for ch in 0..sim.channels().len() as ChanId {
        let Some(cfg) = sim.channel(ch).qdisc.as_cake().and_then(|c| c.autorate_config().cloned()) else { continue };
        let node = |key: &str, name: &str| sim.node_id(name).ok_or_else(|| ConfigError::new(format!("{}.{key}", cfg.path), format!("no node named {name:?}")));
        let (pinger, reflector) = (node("pinger", &cfg.shared.pinger)?, node("reflector", &cfg.shared.reflector)?);
        if pinger == reflector {
            return Err(ConfigError::new(format!("{}.reflector", cfg.path), "must differ from pinger"));
        }
        let down = sim.path(reflector, pinger).contains(&ch);
        if !down && !sim.path(pinger, reflector).contains(&ch) {
            let c = sim.channel(ch);
            return Err(ConfigError::new(format!("{}.pinger", cfg.path), format!("the probes between {:?} and {:?} do not cross this queue's link ({}: {} → {})", cfg.shared.pinger, cfg.shared.reflector, c.name, sim.node_name(c.from), sim.node_name(c.to))));
        }
        let g = match groups.iter().position(|g| g.0.pinger == cfg.shared.pinger && g.0.reflector == cfg.shared.reflector) {
            Some(i) => &mut groups[i],
            None => {
                groups.push((cfg.shared.clone(), None, None));
                groups.last_mut().unwrap()
            }
        };
        if g.0 != cfg.shared {
            return Err(ConfigError::new(cfg.path.clone(), "the download's and the upload's controller (same pinger and reflector) differ in a setting other than min, base, max, owd_delta_thr, avg_owd_delta_thr"));
        }
        let slot = if down { &mut g.1 } else { &mut g.2 };
        if slot.is_some() {
            return Err(ConfigError::new(cfg.path.clone(), format!("a second CAKE with autorate in the {} direction between {:?} and {:?} (one controller sets one shaper each way)", if down { "download" } else { "upload" }, cfg.shared.pinger, cfg.shared.reflector)));
        }
        *slot = Some((ch, cfg));
    }
    let mut out = vec![];
    for (shared, dl, ul) in groups {
        let pinger = sim.node_id(&shared.pinger).expect("checked");
        let reflector = sim.node_id(&shared.reflector).expect("checked");
        let name = format!("cake-autorate:{}", shared.pinger);
        let flow = sim.add_flow(&format!("{name}.probe"), "probe");
        let rflow = sim.add_flow(&format!("{name}.reply"), "probe");
        let id = sim.next_agent_id();
        let ctl = Controller::new(dl.as_ref().map(|d| d.1.clone()), ul.as_ref().map(|u| u.1.clone()), 0);
        let monitor = Time::from_us(ctl.monitor_interval_us() as u64);
        let p = Pinger { name: name.clone(), ctl, dl_chan: dl.map(|d| d.0), ul_chan: ul.map(|u| u.0), reflector, echo: id + 1, flow, next_seq: 0, outstanding: VecDeque::new(), prev_bytes: [0; 2], monitor, rates: vec![] };
        sim.add_agent(pinger, Box::new(p));
        sim.add_agent(reflector, Box::new(Echo { name: format!("{name}.echo"), pinger: id, flow: rflow }));
        out.push(id);
    }
    Ok(out)
}
