//! CAKE's `autorate-ingress` (Linux `cake_enqueue`, "incoming bandwidth capacity estimate"): the
//! rate of the traffic *arriving* at CAKE, for a CAKE that runs behind the bottleneck (the
//! receiver's ingress) on a link whose rate varies. Every arrival updates an average inter-arrival
//! time (an EWMA that rises fast, 1/4, and falls slowly, 1/256); an arrival that comes later than
//! that average closes a window: the bytes that arrived since the last such gap over its length
//! feed a peak-rate EWMA (up by 1/4, down by 1/256), and the shaper is set to 15/16 of the peak.
//! sch_cake.c tests `now` against `last_reconfig_time + 250 ms` but never writes that field, so
//! every window closes with a reconfiguration: done so here.
use super::Cake;

/// Linux `cake_ewma`: avg − avg/2^shift + sample/2^shift, in integers.
pub fn ewma(avg: u64, sample: u64, shift: u32) -> u64 { avg - (avg >> shift) + (sample >> shift) }

/// The estimator's state (Linux `cake_sched_data`'s fields of the same names; times in ns).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Autorate {
    pub last_packet_time: i64,
    pub avg_packet_interval: u64,
    pub avg_window_begin: i64,
    pub avg_window_bytes: u64,
    /// Bytes per second; starts at the configured `bandwidth` (`cake_init`).
    pub avg_peak_bandwidth: u64,
}

impl Autorate {
    /// One arrival of `len` bytes at `now`. Returns the shaper's new rate (bytes/s) when the
    /// arrival closes a window.
    pub fn on_arrival(&mut self, now: i64, len: u64) -> Option<u64> {
        self.avg_window_bytes += len;
        let interval = ((now - self.last_packet_time).max(0) as u64).min(1_000_000_000);
        let shift = if interval > self.avg_packet_interval { 2 } else { 8 };
        self.avg_packet_interval = ewma(self.avg_packet_interval, interval, shift);
        self.last_packet_time = now;
        if interval <= self.avg_packet_interval {
            return None;
        }
        // now > last_packet_time ≥ avg_window_begin here, so the window is never empty
        let window = (now - self.avg_window_begin).max(1) as u64;
        let b = (self.avg_window_bytes as u128 * 1_000_000_000 / window as u128) as u64;
        let shift = if b > self.avg_peak_bandwidth { 2 } else { 8 };
        self.avg_peak_bandwidth = ewma(self.avg_peak_bandwidth, b, shift);
        self.avg_window_bytes = 0;
        self.avg_window_begin = now;
        Some((self.avg_peak_bandwidth * 15) >> 4)
    }
}

impl Cake {
    /// The estimator's capacity estimate (bytes/s; tc's "capacity estimate").
    pub fn capacity_estimate(&self) -> u64 { self.autorate.avg_peak_bandwidth }
}
