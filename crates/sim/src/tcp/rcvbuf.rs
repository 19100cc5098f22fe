//! The receive buffer and advertised window as Linux 6.18 manages them, for a receiver that reads
//! everything at once: `SO_RCVBUF` (doubled, locks the buffer), the initial window and window scale
//! (`tcp_select_initial_window`, `tcp_init_buffer_space`), the bytes→window conversion through the
//! measured `skb->len / skb->truesize` ratio (`scaling_ratio`, since 6.6; `tcp_win_from_space`),
//! `rcv_ssthresh` growth (`tcp_grow_window`), the window offered on each ACK (`__tcp_select_window`,
//! rounded to the MSS without window scaling and aligned up to the scale unit with it), and
//! receive-buffer autotuning (dynamic right-sizing: `tcp_rcv_space_adjust` / `tcp_rcvbuf_grow`,
//! the buffer grows once per receiver RTT from the bytes the application read in the last one).
//!
//! Sources (Linux 6.18, the testbed's kernel): `include/net/tcp.h` (`tcp_win_from_space`,
//! `tcp_space_from_win`, `TCP_DEFAULT_SCALING_RATIO` = 50 %), `include/net/sock.h`
//! (`SOCK_MIN_RCVBUF`), `net/core/sock.c` (`__sock_set_rcvbuf`), `net/ipv4/tcp_output.c`
//! (`tcp_select_initial_window`, `__tcp_select_window`), `net/ipv4/tcp_input.c`
//! (`tcp_measure_rcv_mss`, `tcp_grow_window`, `tcp_init_buffer_space`, `tcp_rcv_rtt_update`,
//! `tcp_rcv_space_adjust`, `tcp_rcvbuf_grow` as fixed by "tcp: fix too slow tcp_rcvbuf_grow()
//! action", October 2025), `net/ipv4/tcp.c` (`tcp_set_window_clamp`). Every byte the kernel
//! charges to the buffer is an skb's `truesize`; the simulator charges [`LinuxRcvConfig::truesize`]
//! per segment held (out of order, or in order but not yet read when the ACK is built).
//!
//! Left out: memory pressure (`tcp_under_memory_pressure` is false), `tcp_app_win` other than its
//! default 31, the low-RTT damping of 6.19 (`tcp_rcvbuf_low_rtt`, absent in 6.18), receive
//! coalescing (a held segment always costs one truesize).
use crate::time::Time;

/// `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is in 1/256ths.
pub const RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: 50 % until the first full-sized segment is measured.
pub const DEFAULT_SCALING_RATIO: u32 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// `TCP_INIT_CWND`: the first autotuning space is at most 10 advertised MSS.
pub const INIT_CWND: u64 = 10;
/// `SOCK_MIN_RCVBUF` = `TCP_SKB_MIN_TRUESIZE` = 2048 + SKB_DATA_ALIGN(sizeof(struct sk_buff))
/// (232 B on x86-64 → 256).
pub const SOCK_MIN_RCVBUF: u64 = 2048 + 256;
/// `TCP_MAX_WSCALE`.
pub const MAX_WSCALE: u8 = 14;
/// `U16_MAX << TCP_MAX_WSCALE`: the clamp when none is set.
const MAX_CLAMP: u64 = 65_535 << 14;

/// Host settings and the socket option; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinuxRcvConfig {
    /// `net.ipv4.tcp_rmem` (min, default, max). Linux's defaults: 4096, 131072, 6291456 (the max
    /// grows with memory: min(32 MiB, free buffer pages/128); the testbed host has 33554432).
    pub rmem: [u64; 3],
    /// `net.core.rmem_max` (caps SO_RCVBUF and enters the window-scale choice); Linux: 212992.
    pub rmem_max: u64,
    /// `SO_RCVBUF` set before connect: the kernel doubles it and stops autotuning.
    pub so_rcvbuf: Option<u64>,
    /// `skb->truesize` of a full-sized data segment as it reaches the receiving socket. 2304 B =
    /// SKB_TRUESIZE(1728): a 2 KiB kmalloc for the head, as on the testbed's TUN/veth path (Linux's
    /// own window there, 81,920 B = 131072·160/256, gives ratio 160 for 1448 B).
    pub truesize: u64,
    /// `net.ipv4.tcp_moderate_rcvbuf` (autotuning), default on.
    pub moderate: bool,
    /// `net.ipv4.tcp_adv_win_scale` of kernels before 6.6: the window is a fixed share of the
    /// buffer (space − space >> s; 2 until 3.6, then 1). None: the measured len/truesize ratio
    /// (`scaling_ratio`, 6.6 and later).
    pub adv_win_scale: Option<u8>,
    /// The initial window's cap in segments (`TCP_DEFAULT_INIT_RCVWND` = 10 in
    /// `tcp_select_initial_window` from 2.6.39; later kernels have none unless the route sets
    /// `initrwnd`): 0 = none.
    pub init_rcv_wnd: u64,
}

impl Default for LinuxRcvConfig {
    fn default() -> Self {
        LinuxRcvConfig { rmem: [4096, 131_072, 6_291_456], rmem_max: 212_992, so_rcvbuf: None, truesize: 2304, moderate: true, adv_win_scale: None, init_rcv_wnd: 0 }
    }
}

/// `tcp_win_from_space`: the window a buffer of `space` bytes allows at `ratio`/256.
pub fn win_from_space(ratio: u32, space: i64) -> i64 {
    (space * ratio as i64) >> RMEM_TO_WIN_SCALE
}

/// `tcp_space_from_win`: the buffer a window needs at `ratio`/256.
pub fn space_from_win(ratio: u32, win: u64) -> u64 {
    (win << RMEM_TO_WIN_SCALE) / ratio.max(1) as u64
}

/// `sock_setsockopt(SO_RCVBUF)` → `__sock_set_rcvbuf`: min(val, rmem_max) doubled, at least
/// `SOCK_MIN_RCVBUF` ("we double it on the way in to account for struct sk_buff etc. overhead").
pub fn sk_rcvbuf_for(so_rcvbuf: u64, rmem_max: u64) -> u64 {
    (so_rcvbuf.min(rmem_max).min(i32::MAX as u64 / 2) * 2).max(SOCK_MIN_RCVBUF)
}

/// The ratio that `tcp_adv_win_scale` = s meant before 6.6 (`tcp_win_from_space`: space − space >> s
/// for s > 0, space >> −s otherwise), in 1/256ths.
pub fn ratio_for_adv_win_scale(s: i8) -> u32 {
    let full = 1u32 << RMEM_TO_WIN_SCALE;
    if s > 0 { full - (full >> s) } else { full >> (-s) }
}

/// `scaling_ratio` measured from one segment (`tcp_measure_rcv_mss`): len·256/truesize, at least 1.
pub fn ratio_for(len: u64, truesize: u64) -> u32 {
    (((len << RMEM_TO_WIN_SCALE) / truesize.max(1)) as u32).clamp(1, 255)
}

/// What `tcp_select_initial_window` returns: the window of the SYN (unscaled), the clamp, the shift.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct InitialWindow {
    pub rcv_wnd: u64,
    pub window_clamp: u64,
    pub wscale: u8,
}

/// `tcp_select_initial_window(sk, space, mss, ..., window_clamp, wscale_ok, ..., init_rcv_wnd)` with
/// `tcp_workaround_signed_windows` = 0: the space rounded down to whole MSS, at most 65535 (and
/// `init_rcv_wnd`·MSS when the route sets `initrwnd`); the shift is the smallest covering
/// max(space, tcp_rmem[2], rmem_max) bounded by the clamp, i.e. ilog2(that) − 15 in 0..=14.
pub fn select_initial_window(space: u64, mss: u64, window_clamp: u64, wscale_ok: bool, rmem_max2: u64, rmem_max: u64, init_rcv_wnd: u64) -> InitialWindow {
    let clamp = if window_clamp == 0 { MAX_CLAMP } else { window_clamp };
    let mut space = space.min(clamp);
    if space > mss {
        space = space / mss * mss;
    }
    let mut rcv_wnd = space.min(65_535);
    if init_rcv_wnd > 0 {
        rcv_wnd = rcv_wnd.min(init_rcv_wnd * mss);
    }
    let mut wscale = 0u8;
    if wscale_ok {
        let s = space.max(rmem_max2).max(rmem_max).min(clamp);
        let ilog2 = 63 - s.max(1).leading_zeros() as i64;
        wscale = (ilog2 - 15).clamp(0, MAX_WSCALE as i64) as u8;
    }
    InitialWindow { rcv_wnd, window_clamp: clamp.min(65_535u64 << wscale), wscale }
}

/// One connection's receive-buffer state (the `tcp_sock` fields of the same names).
#[derive(Clone, Debug)]
pub struct LinuxRcvBuf {
    pub cfg: LinuxRcvConfig,
    /// `sk->sk_rcvbuf`, bytes of truesize.
    pub sk_rcvbuf: u64,
    /// `SOCK_RCVBUF_LOCK`: set by SO_RCVBUF; no autotuning.
    pub locked: bool,
    pub scaling_ratio: u32,
    pub window_clamp: u64,
    pub rcv_ssthresh: u64,
    /// The window last offered (`tp->rcv_wnd`).
    pub rcv_wnd: u64,
    pub wscale: u8,
    /// `tp->advmss`: MSS without options (the receiver's own MSS option).
    pub advmss: u64,
    /// `icsk_ack.rcv_mss`: payload of the largest segments seen (starts at the SYN's MSS less options).
    pub rcv_mss: u64,
    /// `rcvq_space.space`, `.seq` (bytes read at the start of the measurement), `.time`.
    pub space: u64,
    space_seq: u64,
    space_time: Option<Time>,
    /// `rcv_rtt_est.rtt_us` (8 × µs; 0 = no sample yet).
    pub rcv_rtt_us8: u64,
    rtt_est_seq: u64,
    rtt_est_time: Option<Time>,
    /// Buffer growths by autotuning (for tests and docs).
    pub grows: u64,
}

impl LinuxRcvBuf {
    /// The open (`tcp_connect_init` for the active opener, `tcp_openreq_init_rwin` for the passive
    /// one): `advmss` is the MSS we announce; `opt_bytes` is subtracted from it before the initial
    /// window is rounded to whole segments — 0 for the active opener (no TS.Recent yet: SO_RCVBUF
    /// 20000 gives 13 × 1460 = 18 980 B, as the testbed's SYNs show), 12 for the passive one
    /// with timestamps; `wscale_ok` whether both SYNs carry the option; `init_rcv_wnd` the route's
    /// `initrwnd` (0 = none).
    pub fn open(cfg: LinuxRcvConfig, advmss: u64, opt_bytes: u64, wscale_ok: bool, init_rcv_wnd: u64) -> LinuxRcvBuf {
        let (sk_rcvbuf, locked) = match cfg.so_rcvbuf {
            Some(v) => (sk_rcvbuf_for(v, cfg.rmem_max), true),
            None => (cfg.rmem[1], false),
        };
        let ratio = cfg.adv_win_scale.map_or(DEFAULT_SCALING_RATIO, |s| ratio_for_adv_win_scale(s as i8));
        let full = win_from_space(ratio, sk_rcvbuf as i64).max(0) as u64;
        // "limit the window selection if the user enforce a smaller rx buffer"
        let clamp = if locked { full } else { 0 };
        let mut space = full;
        let mss = advmss.saturating_sub(opt_bytes).max(1);
        if init_rcv_wnd > 0 && full < init_rcv_wnd * mss {
            space = init_rcv_wnd * mss;
        }
        let iw = select_initial_window(space, mss, clamp, wscale_ok, cfg.rmem[2], cfg.rmem_max, init_rcv_wnd);
        LinuxRcvBuf {
            cfg,
            sk_rcvbuf,
            locked,
            scaling_ratio: ratio,
            window_clamp: iw.window_clamp,
            rcv_ssthresh: iw.rcv_wnd,
            rcv_wnd: iw.rcv_wnd,
            wscale: iw.wscale,
            advmss,
            // tcp_initialize_rcv_mss: min(advmss, mss, rcv_wnd/2, TCP_MSS_DEFAULT = 536), at least
            // TCP_MIN_MSS = 88; the first full-sized segment then re-measures it (and the ratio).
            rcv_mss: advmss.min(mss).min(iw.rcv_wnd / 2).clamp(88, 536),
            space: 0,
            space_seq: 0,
            space_time: None,
            rcv_rtt_us8: 0,
            rtt_est_seq: 0,
            rtt_est_time: None,
            grows: 0,
        }
    }

    /// `tcp_full_space`: the window the whole buffer allows.
    pub fn full_space(&self) -> u64 { win_from_space(self.scaling_ratio, self.sk_rcvbuf as i64).max(0) as u64 }

    /// `tcp_space`: what the buffer allows with `held` bytes of truesize charged.
    pub fn space(&self, held: u64) -> i64 { win_from_space(self.scaling_ratio, self.sk_rcvbuf as i64 - held as i64) }

    /// The handshake completed (`tcp_init_buffer_space` with `tcp_app_win` = 31): the clamp is the
    /// full space less one advertised MSS ("force reservation of one segment"), rcv_ssthresh at most
    /// the clamp, and autotuning starts from min(rcv_ssthresh, rcv_wnd, 10·advmss).
    pub fn established(&mut self, now: Time, copied: u64) {
        let maxwin = self.full_space();
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin; // maxwin >> 31 is 0: the first reservation leaves it
        }
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.space = self.rcv_ssthresh.min(self.rcv_wnd).min(INIT_CWND * self.advmss);
        self.space_seq = copied;
        self.space_time = Some(now);
    }

    /// `tcp_set_window_clamp(sk, val)`.
    pub fn set_window_clamp(&mut self, val: u64) {
        let new = val.max(SOCK_MIN_RCVBUF / 2);
        let old = self.window_clamp;
        if new == old {
            return;
        }
        self.window_clamp = new;
        if new < old {
            // __tcp_adjust_rcv_ssthresh without reserved memory: rcv_ssthresh ≤ the clamp.
            self.rcv_ssthresh = self.rcv_ssthresh.min(new);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// A data segment of `len` bytes was queued (`tcp_event_data_recv`: `tcp_measure_rcv_mss`,
    /// `tcp_rcv_rtt_measure`, `tcp_grow_window`); `held` is the truesize charged now, this segment
    /// included; `rcv_nxt` after it; `tsecr_ms` the time (ms) of the ACK whose TSval it echoes,
    /// when timestamps are on.
    pub fn on_data(&mut self, len: u64, held: u64, rcv_nxt: u64, now: Time, tsecr_ms: Option<u64>) -> bool {
        // tcp_measure_rcv_mss: a segment at least as large as rcv_mss of a new size re-measures the
        // ratio, and the clamp follows the whole buffer at the new ratio.
        if len >= self.rcv_mss {
            // Before 6.6 the ratio was the fixed tcp_adv_win_scale share: nothing to measure.
            if len != self.rcv_mss && self.cfg.adv_win_scale.is_none() {
                let old = self.scaling_ratio;
                self.scaling_ratio = ratio_for(len, self.cfg.truesize);
                if old != self.scaling_ratio {
                    let v = self.full_space();
                    self.set_window_clamp(v);
                    self.space = self.space.min(self.window_clamp);
                }
            }
            self.rcv_mss = len.min(self.advmss);
        }
        // Receiver RTT: with timestamps the echo (tcp_rcv_rtt_measure_ts, full segments, smoothed),
        // else the time to receive one window (tcp_rcv_rtt_measure, its minimum only).
        if let Some(ecr) = tsecr_ms {
            // The TS clock ticks in ms (TCP_TS_HZ = 1000): the delta is whole milliseconds
            // (tcp_rtt_tsopt_us), taken from full-sized segments only.
            let d = (now.ns() / 1_000_000).saturating_sub(ecr) * 1000;
            if len >= self.rcv_mss && d > 0 {
                self.rtt_update(d, false);
            }
        } else {
            match self.rtt_est_time {
                Some(t) if rcv_nxt >= self.rtt_est_seq => {
                    let d = (now.saturating_sub(t).ns() / 1000).max(1);
                    self.rtt_update(d, true);
                    self.rtt_est_seq = rcv_nxt + self.rcv_wnd;
                    self.rtt_est_time = Some(now);
                }
                Some(_) => {}
                None => {
                    self.rtt_est_seq = rcv_nxt + self.rcv_wnd;
                    self.rtt_est_time = Some(now);
                }
            }
        }
        // tcp_grow_window (segments of at least 128 B): room up to min(clamp, tcp_space); a segment
        // whose truesize converts to no more window than its length is worth 2·advmss.
        if len >= 128 {
            let room = (self.window_clamp as i64).min(self.space(held)) - self.rcv_ssthresh as i64;
            if room > 0 {
                let incr = if win_from_space(self.scaling_ratio, self.cfg.truesize as i64) <= len as i64 {
                    2 * self.advmss
                } else {
                    self.grow_window_slow(len)
                };
                if incr > 0 {
                    let incr = incr.max(2 * len);
                    self.rcv_ssthresh += (room as u64).min(incr);
                    return true;
                }
            }
        }
        false
    }

    /// `__tcp_grow_window`: with a poor len/truesize ratio, grow only while rcv_ssthresh is small
    /// against tcp_rmem[2] (both halved per step with the segment's window worth).
    fn grow_window_slow(&self, len: u64) -> u64 {
        let mut truesize = win_from_space(self.scaling_ratio, self.cfg.truesize as i64) >> 1;
        let mut window = win_from_space(self.scaling_ratio, self.cfg.rmem[2] as i64) >> 1;
        while (self.rcv_ssthresh as i64) <= window {
            if truesize <= len as i64 {
                return 2 * self.rcv_mss;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    /// `tcp_rcv_rtt_update(tp, sample_us, win_dep)`: a smaller sample replaces the estimate; a larger
    /// one is ignored when measured per window, else smoothed by 1/8.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        let old = self.rcv_rtt_us8;
        if old == 0 || m < old {
            self.rcv_rtt_us8 = m;
        } else if !win_dep {
            self.rcv_rtt_us8 = old - (old >> 3) + sample_us;
        }
    }

    /// `__tcp_select_window`: the window to offer now with `held` bytes of truesize charged.
    /// (The caller keeps the right edge from moving left, as `tcp_select_window`.)
    pub fn select_window(&mut self, held: u64) -> u64 {
        let mut mss = self.rcv_mss as i64;
        let allowed = self.full_space() as i64;
        let mut free = self.space(held);
        let full = (self.window_clamp as i64).min(allowed);
        if mss > full {
            mss = full;
            if mss <= 0 {
                return 0;
            }
        }
        if free < (full >> 1) {
            // Little free space: never grow the window with the scale's rounding, and offer zero
            // below 1/16 of the buffer or one MSS.
            free = (free.max(0) >> self.wscale) << self.wscale;
            if free < (allowed >> 4) || free < mss {
                return 0;
            }
        }
        free = free.min(self.rcv_ssthresh as i64);
        let w = if self.wscale > 0 {
            // "Advertise enough space so that it won't get scaled away": aligned up to the unit.
            let u = 1i64 << self.wscale;
            (free + u - 1) / u * u
        } else {
            // Without scaling: whole MSS, keeping the current offer while within one MSS of free.
            let cur = self.rcv_wnd as i64;
            if cur <= free - mss || cur > free {
                free / mss * mss
            } else if mss == full && free > cur + (full >> 1) {
                free
            } else {
                cur
            }
        };
        w.max(0) as u64
    }

    /// Records what was offered (`tp->rcv_wnd` after the no-shrink rule).
    pub fn offered(&mut self, w: u64) { self.rcv_wnd = w; }

    /// The application read everything up to `copied` bytes (`tcp_rcv_space_adjust`, via
    /// `tcp_recvmsg` → `tcp_cleanup_rbuf`): once per receiver RTT, if it read more than the last
    /// measure, `tcp_rcvbuf_grow` sizes the buffer for twice that plus the growth since.
    pub fn on_read(&mut self, copied: u64, inq: u64, ooo_span: u64, now: Time) {
        let Some(t0) = self.space_time else { return };
        if self.rcv_rtt_us8 == 0 {
            return;
        }
        let time_us = now.saturating_sub(t0).ns() / 1000;
        if time_us < (self.rcv_rtt_us8 >> 3) {
            return;
        }
        let got = (copied - self.space_seq) as i64 - inq as i64;
        if got > self.space as i64 {
            self.rcvbuf_grow(got as u64, ooo_span);
        }
        self.space_seq = copied;
        self.space_time = Some(now);
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (6.18).
    pub fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let oldval = self.space.max(1);
        self.space = newval;
        if !self.cfg.moderate || self.locked {
            return;
        }
        // "DRS is always one RTT late."
        let mut rcvwin = newval << 1;
        // "slow start: allow the sender to double its rate."
        let grow = rcvwin * newval.saturating_sub(oldval) / oldval;
        rcvwin += grow << 1;
        rcvwin += ooo_span;
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(self.cfg.rmem[2]);
        if rcvbuf > self.sk_rcvbuf {
            self.sk_rcvbuf = rcvbuf;
            // "Make the window clamp follow along."
            self.window_clamp = win_from_space(self.scaling_ratio, rcvbuf as i64) as u64;
            self.grows += 1;
        }
    }

    /// SO_RCVBUF set again on an open socket (the host's moderation re-splitting its budget): the
    /// buffer changes at once, the clamp does not (as Linux, whose `tcp_space` follows sk_rcvbuf).
    pub fn set_so_rcvbuf(&mut self, v: u64) {
        self.sk_rcvbuf = sk_rcvbuf_for(v, self.cfg.rmem_max);
        self.locked = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn so_rcvbuf_doubling_and_floor() {
        // __sock_set_rcvbuf: 2·min(val, rmem_max), at least SOCK_MIN_RCVBUF.
        assert_eq!(sk_rcvbuf_for(20_000, 212_992), 40_000);
        assert_eq!(sk_rcvbuf_for(1_000_000, 212_992), 425_984);
        assert_eq!(sk_rcvbuf_for(1000, 212_992), 2304);
    }

    #[test]
    fn conversions() {
        assert_eq!(win_from_space(128, 40_000), 20_000);
        assert_eq!(win_from_space(160, 131_072), 81_920);
        assert_eq!(ratio_for(1448, 2304), 160); // 370688 / 2304 = 160.9
        assert_eq!(ratio_for(1460, 2304), 162);
        assert_eq!(space_from_win(160, 81_920), 131_072);
    }

    /// Kernels before 6.6: `tcp_win_from_space` = space − space >> tcp_adv_win_scale (3.2's 2: 3/4 of
    /// the buffer; 3.6's 1: half), and a negative scale shifts right.
    #[test]
    fn adv_win_scale_ratios() {
        assert_eq!(ratio_for_adv_win_scale(2), 192);
        assert_eq!(ratio_for_adv_win_scale(1), 128);
        assert_eq!(ratio_for_adv_win_scale(-2), 64);
        // Linux 3.2's first window: tcp_rmem[1] = 87380 at 3/4 is 65535 B, capped at
        // TCP_DEFAULT_INIT_RCVWND = 10 segments of 1460 B; the measured ratio is never applied.
        let cfg = LinuxRcvConfig { rmem: [4096, 87_380, 4_194_304], rmem_max: 131_071, adv_win_scale: Some(2), init_rcv_wnd: 10, ..LinuxRcvConfig::default() };
        let mut b = LinuxRcvBuf::open(cfg.clone(), 1460, 0, true, cfg.init_rcv_wnd);
        assert_eq!((b.scaling_ratio, b.rcv_wnd, b.full_space()), (192, 14_600, 65_535));
        b.on_data(1448, 2304, 1449, Time::from_ms(1), None);
        b.on_data(1448, 2304, 2897, Time::from_ms(2), None);
        assert_eq!(b.scaling_ratio, 192);
    }
}
