//! BBR v1 as Linux's `net/ipv4/tcp_bbr.c` (Cardwell et al., "BBR: Congestion-Based Congestion
//! Control", ACM Queue 2016): a model of the path (windowed max delivery rate, windowed min RTT)
//! sets the pacing rate to pacing_gain·bw and cwnd to cwnd_gain·BDP plus a quantization
//! allowance, in four modes — STARTUP (gain 2/ln 2 until the bandwidth stops growing 25 % per
//! round three rounds running), DRAIN (1/gain until in flight ≤ BDP), PROBE_BW (the eight-phase
//! gain cycle 5/4, 3/4, 1 ×6 from a random phase) and PROBE_RTT (4 packets for 200 ms when the
//! min RTT is 10 s old).
//!
//! Arithmetic is Linux's, in packets and fixed point: bandwidth in packets/µs << [`BW_SCALE`],
//! gains in 1/[`BBR_UNIT`]; the connection's byte counts are turned into packets of one MSS.
//! Left out: the long-term ("LT") policer-bandwidth estimator (`bbr_lt_bw_sampling`), which only
//! acts at sustained loss rates of 20 % and more (so `bbr_undo_cwnd` resets only the full-pipe
//! check), and `is_ack_delayed` (taken as false: a delayed ACK may then refresh an expired min-RTT
//! filter).
//!
//! Over 600 lines: one algorithm as tcp_bbr.c has it, its modes sharing the model's state.
use std::sync::Arc;

use super::{CaState, CcState, CongestionControl, NoOptions, RateSample, Registration};
use crate::minmax::MinMax;
use crate::rng::Rng;
use crate::tcp::TcpConfig;
use crate::time::Time;

/// tcp_bbr.c `BW_SCALE`: bandwidth is packets/µs scaled by 2^24.
pub const BW_SCALE: u32 = 24;
/// tcp_bbr.c `BW_UNIT` = 1 << BW_SCALE.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// tcp_bbr.c `BBR_SCALE`: gains are scaled by 2^8.
pub const BBR_SCALE: u32 = 8;
/// tcp_bbr.c `BBR_UNIT` = 1 << BBR_SCALE (a gain of 1.0).
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// tcp_bbr.c `CYCLE_LEN`: phases of the PROBE_BW pacing-gain cycle.
pub const CYCLE_LEN: usize = 8;
/// tcp_bbr.c `bbr_bw_rtts` = CYCLE_LEN + 2: window of the max-bandwidth filter, in rounds.
pub const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// tcp_bbr.c `bbr_min_rtt_win_sec` = 10: window of the min-RTT filter.
pub const MIN_RTT_WIN: Time = Time::from_secs(10);
/// tcp_bbr.c `bbr_probe_rtt_mode_ms` = 200: time spent at the minimum cwnd in PROBE_RTT.
pub const PROBE_RTT_MODE: Time = Time::from_ms(200);
/// tcp_bbr.c `bbr_min_tso_rate` = 1200000 bit/s: below it, TSO bursts of one segment.
pub const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// tcp_bbr.c `bbr_pacing_margin_percent` = 1: pace 1 % below the estimated bandwidth.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// tcp_bbr.c `bbr_high_gain` = BBR_UNIT·2885/1000 + 1 (2/ln 2 = 2.885…): STARTUP's gain.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// tcp_bbr.c `bbr_drain_gain` = BBR_UNIT·1000/2885: DRAIN's pacing gain.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// tcp_bbr.c `bbr_cwnd_gain` = 2·BBR_UNIT: PROBE_BW's cwnd gain.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// tcp_bbr.c `bbr_pacing_gain[]`: 5/4 to probe, 3/4 to drain, then 1 for six phases.
pub const PACING_GAIN: [u32; CYCLE_LEN] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// tcp_bbr.c `bbr_cycle_rand` = 7: the cycle starts at a random one of 7 phases (never the 3/4).
pub const CYCLE_RAND: u64 = 7;
/// tcp_bbr.c `bbr_cwnd_min_target` = 4 packets (also PROBE_RTT's cwnd).
pub const CWND_MIN_TARGET: u64 = 4;
/// tcp_bbr.c `bbr_full_bw_thresh` = BBR_UNIT·5/4: growth that counts as "still growing".
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// tcp_bbr.c `bbr_full_bw_cnt` = 3: rounds without that growth before the pipe is full.
pub const FULL_BW_CNT: u32 = 3;
/// tcp_bbr.c `bbr_extra_acked_gain` = BBR_UNIT.
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// tcp_bbr.c `bbr_extra_acked_win_rtts` = 5.
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// tcp_bbr.c `bbr_ack_epoch_acked_reset_thresh` = 1 << 20.
pub const ACK_EPOCH_ACKED_RESET_THRESH: u64 = 1 << 20;
/// tcp_bbr.c `bbr_extra_acked_max_us` = 100 ms.
pub const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// include/net/tcp.h `TCP_INIT_CWND` = 10.
pub const TCP_INIT_CWND: u64 = 10;
/// Linux's default `sk_pacing_shift` = 10: TSO budget of 1/1024 s of data (tcp_init_sock).
pub const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE` = 65536: a device's default `gso_max_size` (veth), tcp_tso_autosize's cap.
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `net.ipv4.tcp_tso_rtt_log` = 9 (Linux 5.19+): short paths get bigger GSO skbs,
/// `GSO_MAX_SIZE >> (min_rtt_us >> 9)` bytes more (nothing from 17·512 µs ≈ 8.7 ms up).
pub const TSO_RTT_LOG: u32 = 9;
/// `GSO_MAX_SIZE` (65536) − 1 − `MAX_TCP_HEADER` (320 on x86-64): bbr_tso_segs_goal's byte cap.
pub const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;

/// BBR's modes (tcp_bbr.c `enum bbr_mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// BBR's options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BbrConfig {
    /// Seed of the gain cycle's random start phase (Linux: `get_random_u32_below`).
    pub seed: u64,
}

impl BbrConfig {
    pub fn from_tcp(c: &TcpConfig) -> BbrConfig { BbrConfig { seed: c.cc_seed } }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    rng: Rng,
    initialized: bool,
    mode: Mode,
    /// Max filter of delivery rate (packets/µs << BW_SCALE) over BW_RTTS rounds.
    bw: MinMax,
    rtt_cnt: u64,
    /// `delivered` (bytes) that ends the current round.
    next_rtt_delivered: u64,
    cycle_mstamp: Time,
    cycle_idx: usize,
    /// µs; u64::MAX until a sample.
    min_rtt_us: u64,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    prev_ca_state: CaState,
    /// Packets.
    prior_cwnd: u64,
    full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    pacing_gain: u32,
    cwnd_gain: u32,
    has_seen_rtt: bool,
    /// `sk_pacing_rate`, bytes/s.
    pacing_rate: u64,
    ack_epoch_mstamp: Time,
    extra_acked: [u64; 2],
    ack_epoch_acked: u64,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

fn us(t: Time) -> u64 { t.ns() / 1_000 }

/// Bytes as whole packets (Linux counts packets; a part-filled segment is one).
fn pkts(bytes: u64, mss: u64) -> u64 { bytes.div_ceil(mss) }

impl Bbr {
    pub fn new(c: BbrConfig) -> Bbr {
        Bbr {
            rng: Rng::stream(c.seed, "bbr"),
            initialized: false,
            mode: Mode::Startup,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: Time::ZERO,
            cycle_idx: 0,
            min_rtt_us: u64::MAX,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            has_seen_rtt: false,
            pacing_rate: 0,
            ack_epoch_mstamp: Time::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    pub fn mode(&self) -> Mode { self.mode }
    /// Windowed max bandwidth in Linux's unit (packets/µs << 24).
    pub fn max_bw(&self) -> u64 { self.bw.get() }
    /// Windowed max bandwidth in packets/s.
    pub fn max_bw_pps(&self) -> f64 { self.bw.get() as f64 * 1e6 / BW_UNIT as f64 }
    pub fn min_rtt(&self) -> Option<Time> { (self.min_rtt_us != u64::MAX).then(|| Time::from_us(self.min_rtt_us)) }
    pub fn cycle_idx(&self) -> usize { self.cycle_idx }
    pub fn pacing_gain(&self) -> u32 { self.pacing_gain }
    pub fn cwnd_gain(&self) -> u32 { self.cwnd_gain }
    pub fn full_bw_reached(&self) -> bool { self.full_bw_reached }
    pub fn full_bw_cnt(&self) -> u32 { self.full_bw_cnt }
    pub fn rounds(&self) -> u64 { self.rtt_cnt }
    pub fn round_start(&self) -> bool { self.round_start }

    /// `bbr_init`, run when the connection is established (Linux: `tcp_init_transfer`).
    pub fn init(&mut self, st: &mut CcState) {
        self.initialized = true;
        self.next_rtt_delivered = st.delivered;
        st.ssthresh = u64::MAX / 4;
        self.min_rtt_us = st.min_rtt.map_or(u64::MAX, us);
        self.min_rtt_stamp = st.now;
        self.bw.reset(self.rtt_cnt, 0);
        self.init_pacing_rate_from_rtt(st);
        self.ack_epoch_mstamp = st.now;
        self.reset_startup_mode();
    }

    fn bw_est(&self) -> u64 { self.bw.get() }

    /// `bbr_rate_bytes_per_sec`: bw·mss·gain, 1 % below (the pacing margin).
    pub fn rate_bytes_per_sec(mss: u64, bw: u64, gain: u32) -> u64 {
        let r = (bw as u128 * mss as u128 * gain as u128) >> BBR_SCALE;
        let r = r * (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE) as u64
    }

    fn init_pacing_rate_from_rtt(&mut self, st: &CcState) {
        let rtt_us = match st.srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                us(s).max(1)
            }
            None => 1_000,
        };
        let bw = pkts(st.cwnd, st.mss) * BW_UNIT / rtt_us;
        self.pacing_rate = Self::rate_bytes_per_sec(st.mss, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, st: &CcState, bw: u64, gain: u32) {
        let rate = Self::rate_bytes_per_sec(st.mss, bw, gain);
        if !self.has_seen_rtt && st.srtt.is_some() {
            self.init_pacing_rate_from_rtt(st);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: 1/1024 s of data at the pacing rate, at least 1 or 2 segments.
    pub fn tso_segs_goal(&self, mss: u64) -> u64 {
        let bytes = (self.pacing_rate >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BPS >> 3 { 1 } else { 2 };
        (bytes / mss).max(min_segs).min(0x7F)
    }

    /// Segments per GSO skb: Linux's `tcp_tso_segs` = `tcp_tso_autosize(sk, mss, min_tso_segs)`
    /// with BBR's `bbr_min_tso_segs` (1 below 1.2 Mbit/s, else 2): 1/1024 s of data at the pacing
    /// rate, plus `GSO_MAX_SIZE >> (min_rtt_us >> tcp_tso_rtt_log)` on short paths (Linux 5.19+),
    /// at most `GSO_MAX_SIZE` bytes. `min_rtt` is the connection's (`tcp_min_rtt`), not BBR's.
    pub fn gso_segs(&self, mss: u64, min_rtt: Option<Time>) -> u64 {
        let mut bytes = self.pacing_rate >> PACING_SHIFT;
        if let Some(r) = min_rtt.map(|t| us(t) >> TSO_RTT_LOG).filter(|&r| r < 32) {
            bytes += GSO_MAX_SIZE >> r;
        }
        let bytes = bytes.min(GSO_MAX_SIZE);
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BPS >> 3 { 1 } else { 2 };
        (bytes / mss).max(min_segs)
    }

    fn save_cwnd(&mut self, st: &CcState) {
        let cwnd = pkts(st.cwnd, st.mss);
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw·min_rtt·gain) packets.
    pub fn bdp(&self, bw: u64, gain: u32) -> u64 {
        if self.min_rtt_us == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE) + BW_UNIT as u128 - 1) as u64 / BW_UNIT
    }

    /// `bbr_quantization_budget`.
    pub fn quantization_budget(&self, cwnd: u64, mss: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub fn inflight(&self, bw: u64, gain: u32, mss: u64) -> u64 { self.quantization_budget(self.bdp(bw, gain), mss) }

    /// `bbr_packets_in_net_at_edt`.
    fn packets_in_net_at_edt(&self, st: &CcState, inflight_now: u64) -> u64 {
        let edt = st.next_send.max(st.now);
        let interval_delivered = ((self.bw_est() as u128 * us(edt - st.now) as u128) >> BW_SCALE) as u64;
        let mut at_edt = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            at_edt += self.tso_segs_goal(st.mss);
        }
        at_edt.saturating_sub(interval_delivered)
    }

    /// `bbr_ack_aggregation_cwnd`: packets added to the cwnd target for ACK aggregation.
    pub fn ack_aggregation_cwnd(&self) -> u64 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw_est() * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr = (EXTRA_ACKED_GAIN as u64 * self.extra_acked[0].max(self.extra_acked[1])) >> BBR_SCALE;
        aggr.min(max_aggr)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of recovery.
    fn set_cwnd_to_recover_or_restore(&mut self, st: &CcState, rs: &RateSample, acked: u64) -> (u64, bool) {
        let (prev, state) = (self.prev_ca_state, st.ca);
        let mut cwnd = pkts(st.cwnd, st.mss);
        let in_flight = pkts(st.pipe, st.mss);
        let losses = pkts(rs.losses, st.mss);
        if losses > 0 {
            cwnd = cwnd.saturating_sub(losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = st.delivered;
            cwnd = in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, st: &mut CcState, rs: &RateSample, acked: u64, bw: u64, gain: u32) {
        let mut cwnd = pkts(st.cwnd, st.mss);
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(st, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(target, st.mss);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || st.delivered < TCP_INIT_CWND * st.mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        st.cwnd = cwnd * st.mss;
    }

    /// `bbr_update_bw`: rounds, and the max filter.
    fn update_bw(&mut self, st: &CcState, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else { return };
        if us(interval) == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = st.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = pkts(delivered, st.mss) * BW_UNIT / us(interval);
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, st: &CcState, rs: &RateSample) {
        let acked = pkts(rs.acked_sacked, st.mss);
        if EXTRA_ACKED_GAIN == 0 || acked == 0 || rs.delivered.is_none() || rs.interval.is_none_or(|i| us(i) == 0) {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us(st.delivered_time.saturating_sub(self.ack_epoch_mstamp));
        let mut expected = (self.bw_est() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_THRESH {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = st.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + acked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(pkts(st.cwnd, st.mss));
        if extra > self.extra_acked[self.extra_acked_win_idx] {
            self.extra_acked[self.extra_acked_win_idx] = extra;
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, st: &CcState, rs: &RateSample) -> bool {
        let full_length = us(st.delivered_time.saturating_sub(self.cycle_mstamp)) > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.packets_in_net_at_edt(st, pkts(rs.prior_in_flight, st.mss));
        let bw = self.bw.get();
        if self.pacing_gain > BBR_UNIT {
            return full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain, st.mss));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT, st.mss)
    }

    fn advance_cycle_phase(&mut self, st: &CcState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = st.delivered_time;
    }

    fn reset_startup_mode(&mut self) { self.mode = Mode::Startup; }

    /// `bbr_reset_probe_bw_mode`: start the cycle at phase 7 − rand(0..7), then advance, so the
    /// first phase is any but the 3/4 one.
    fn reset_probe_bw_mode(&mut self, st: &CcState) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - (self.rng.next_u64() % CYCLE_RAND) as usize;
        self.advance_cycle_phase(st);
    }

    fn reset_mode(&mut self, st: &CcState) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(st);
        }
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH as u64) >> BBR_SCALE;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, st: &mut CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.bw.get(), BBR_UNIT, st.mss) * st.mss;
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(st, pkts(st.pipe, st.mss)) <= self.inflight(self.bw.get(), BBR_UNIT, st.mss) {
            self.reset_probe_bw_mode(st);
        }
    }

    fn check_probe_rtt_done(&mut self, st: &mut CcState) {
        if self.probe_rtt_done_stamp.is_none_or(|d| st.now <= d) {
            return;
        }
        self.min_rtt_stamp = st.now;
        st.cwnd = st.cwnd.max(self.prior_cwnd * st.mss);
        self.reset_mode(st);
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, st: &mut CcState, rs: &RateSample) {
        let expired = st.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            if us(rtt) < self.min_rtt_us || expired {
                self.min_rtt_us = us(rtt);
                self.min_rtt_stamp = st.now;
            }
        }
        if expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(st);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets say nothing about the bandwidth.
            st.app_limited = (st.delivered + st.pipe).max(1);
            if self.probe_rtt_done_stamp.is_none() && pkts(st.pipe, st.mss) <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(st.now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = st.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(st);
                }
            }
        }
        if rs.delivered.is_some_and(|d| d > 0) {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str { "bbr" }
    fn owns_cwnd(&self) -> bool { true }
    fn needs_pacing(&self) -> bool { true }

    /// `CA_EVENT_TX_START` (`bbr_cwnd_event`): restarting from idle while app-limited.
    fn on_sent(&mut self, st: &mut CcState, _bytes: u64, in_flight: u64) {
        if !self.initialized {
            self.init(st);
        }
        if in_flight == 0 && st.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = st.now;
            self.ack_epoch_acked = 0;
            match self.mode {
                Mode::ProbeBw => self.set_pacing_rate(st, self.bw_est(), BBR_UNIT),
                Mode::ProbeRtt => self.check_probe_rtt_done(st),
                _ => {}
            }
        }
    }

    /// `bbr_main`.
    fn on_ack(&mut self, st: &mut CcState, rs: &RateSample) {
        if !self.initialized {
            self.init(st);
        }
        self.update_bw(st, rs);
        self.update_ack_aggregation(st, rs);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(st, rs) {
            self.advance_cycle_phase(st);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(st);
        self.update_min_rtt(st, rs);
        self.update_gains();
        let bw = self.bw_est();
        self.set_pacing_rate(st, bw, self.pacing_gain);
        let acked = pkts(rs.acked_sacked, st.mss);
        self.set_cwnd(st, rs, acked, bw, self.cwnd_gain);
    }

    /// `bbr_ssthresh`: remember cwnd, leave ssthresh alone; cwnd is set on the next ACK.
    fn on_congestion_event(&mut self, st: &mut CcState) { self.save_cwnd(st); }

    /// BBR v1 does not react to ECN (`tcp_enter_cwr` only calls `bbr_ssthresh`).
    fn on_ecn(&mut self, st: &mut CcState) { self.save_cwnd(st); }

    /// `tcp_enter_loss`: `bbr_ssthresh`, cwnd = in flight + 1 (= 1 packet once all is marked
    /// lost), then `bbr_set_state(TCP_CA_Loss)`.
    fn on_rto(&mut self, st: &mut CcState, first: bool) {
        if first {
            self.save_cwnd(st);
        }
        st.cwnd = st.mss;
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
    }

    /// `bbr_undo_cwnd`: the pipe may not be full after all; cwnd stays BBR's own.
    fn undo_cwnd(&mut self, st: &CcState, _prior_cwnd: u64) -> u64 {
        (self.full_bw, self.full_bw_cnt) = (0, 0);
        st.cwnd
    }

    fn pacing_rate(&self, _st: &CcState) -> Option<f64> { (self.pacing_rate > 0).then_some(self.pacing_rate as f64) }
    /// The rate is bw·mss·gain in payload bytes, and Linux spaces a segment by its `skb->len`
    /// (payload; `tcp_update_skb_after_send`), so segments leave at 0.99·gain·bw packets/s.
    fn paces_payload(&self) -> bool { true }
    /// Linux builds GSO skbs of `tcp_tso_segs` segments (with BBR's `min_tso_segs`) and paces
    /// each as one unit: two back-to-back segments per pacing slot on the 4 Mbit/s paths here.
    fn tso_segs(&self, st: &CcState) -> u64 { self.gso_segs(st.mss, st.min_rtt) }
}

/// `cc = "bbr"`: no keys of its own (its seed is the connection's `cc_seed`, drawn per
/// connection from the run's seed).
pub const REGISTRATION: Registration = Registration {
    name: "bbr",
    keys: &[],
    params: |_| Ok(Arc::new(NoOptions(|c| Box::new(Bbr::new(BbrConfig::from_tcp(c)))))),
    ecn: None,
};
#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
