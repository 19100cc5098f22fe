//! RTP sequence-number extension and per-stream receive statistics (RFC 3550 §6.4.1, §A.1, §A.8).

/// Extends 16-bit sequence numbers to 64 bits across wraps. Each new number is placed at the
/// extended value nearest to the highest one seen (a jump of less than 2^15 either way), which is
/// what RFC 3550 §A.1 does with `cycles` without its probation and resync rules: a capture has no
/// sender restart to survive, and a missing packet must not reset the count.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqExtender {
    max: Option<i64>,
}

impl SeqExtender {
    /// Starts near a known extended number (used to align the receiver side with the sender's).
    pub fn anchored(ext: i64) -> Self { SeqExtender { max: Some(ext) } }

    pub fn extend(&mut self, seq: u16) -> i64 {
        match self.max {
            None => {
                self.max = Some(seq as i64);
                seq as i64
            }
            Some(m) => {
                let delta = seq.wrapping_sub(m as u16) as i16 as i64;
                let e = m + delta;
                if e > m {
                    self.max = Some(e);
                }
                e
            }
        }
    }
    pub fn max(&self) -> Option<i64> { self.max }
}

/// RTP clock rate of the static payload types (RFC 3551 §6, Table 4 and 5); `None` for dynamic
/// types, whose rate only the signalling knows.
pub fn static_clock_rate(pt: u8) -> Option<u32> {
    Some(match pt {
        0 | 3 | 4 | 5 | 7 | 8 | 9 | 12 | 13 | 15 | 18 => 8000,
        6 => 16000,
        10 | 11 => 44100,
        16 => 11025,
        17 => 22050,
        14 | 25 | 26 | 28 | 31 | 32 | 33 | 34 => 90000,
        _ => return None,
    })
}

/// Statistics of one RTP stream as seen at one capture point, in arrival order.
///
/// Interarrival jitter follows RFC 3550 §6.4.1: D(i,j) = (Rj − Ri) − (Sj − Si) with R the arrival
/// time and S the RTP timestamp, both in timestamp units, and J += (|D| − J)/16, evaluated per
/// packet in arrival order between consecutive packets. We keep it in seconds as a float, as
/// Wireshark does, so the two can be compared; `max_jitter` and `mean_jitter` are the maximum and
/// the mean of J over the packets after the first, `min_jitter` its minimum.
#[derive(Clone, Debug, Default)]
pub struct StreamStats {
    pub packets: u64,
    pub first_ext: i64,
    pub max_ext: i64,
    pub clock_rate: Option<u32>,
    seq: SeqExtender,
    prev: Option<(i64, u32)>,
    pub jitter: f64,
    pub max_jitter: f64,
    /// Smallest J after the first update (+inf before any).
    pub min_jitter: f64,
    jitter_sum: f64,
    jitter_n: u64,
    pub min_delta_ns: Option<i64>,
    pub max_delta_ns: Option<i64>,
    delta_sum_ns: i64,
}

impl StreamStats {
    pub fn new(clock_rate: Option<u32>, anchor: Option<i64>) -> Self {
        StreamStats { clock_rate, seq: anchor.map(SeqExtender::anchored).unwrap_or_default(), min_jitter: f64::INFINITY, ..Default::default() }
    }

    /// Records one packet; returns its extended sequence number.
    pub fn on_packet(&mut self, arrival_ns: i64, seq: u16, rtp_ts: u32) -> i64 {
        let ext = self.seq.extend(seq);
        if self.packets == 0 {
            self.first_ext = ext;
            self.max_ext = ext;
        } else {
            self.first_ext = self.first_ext.min(ext);
            self.max_ext = self.max_ext.max(ext);
        }
        self.packets += 1;
        if let Some((prev_ns, prev_ts)) = self.prev {
            let delta = arrival_ns - prev_ns;
            self.min_delta_ns = Some(self.min_delta_ns.map_or(delta, |m| m.min(delta)));
            self.max_delta_ns = Some(self.max_delta_ns.map_or(delta, |m| m.max(delta)));
            self.delta_sum_ns += delta;
            if let Some(rate) = self.clock_rate {
                // Timestamp difference modulo 2^32, as a signed number (timestamps wrap too).
                let dts = rtp_ts.wrapping_sub(prev_ts) as i32 as f64 / rate as f64;
                let d = delta as f64 * 1e-9 - dts;
                self.jitter += (d.abs() - self.jitter) / 16.0;
                self.max_jitter = self.max_jitter.max(self.jitter);
                self.min_jitter = self.min_jitter.min(self.jitter);
                self.jitter_sum += self.jitter;
                self.jitter_n += 1;
            }
        }
        self.prev = Some((arrival_ns, rtp_ts));
        ext
    }

    /// Packets expected from the sequence range (RFC 3550 §A.3).
    pub fn expected(&self) -> i64 { if self.packets == 0 { 0 } else { self.max_ext - self.first_ext + 1 } }
    /// Expected minus received; negative when duplicates outnumber losses (RFC 3550 §6.4.1).
    pub fn lost(&self) -> i64 { self.expected() - self.packets as i64 }
    pub fn mean_jitter(&self) -> f64 { if self.jitter_n == 0 { 0.0 } else { self.jitter_sum / self.jitter_n as f64 } }
    pub fn mean_delta_ns(&self) -> f64 {
        if self.packets < 2 { 0.0 } else { self.delta_sum_ns as f64 / (self.packets - 1) as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extends_across_wrap_and_reorder() {
        let mut x = SeqExtender::default();
        let got: Vec<i64> = [65534u16, 65535, 1, 0, 2, 3].iter().map(|&s| x.extend(s)).collect();
        assert_eq!(got, vec![65534, 65535, 65537, 65536, 65538, 65539]);
        let mut y = SeqExtender::anchored(65536 * 3 + 10);
        assert_eq!(y.extend(5), 65536 * 3 + 5);
        assert_eq!(y.extend(65530), 65536 * 2 + 65530);
    }

    #[test]
    fn jitter_by_hand() {
        // 8 kHz, 20 ms packets (160 ticks). Arrivals at 0, 20, 45, 60 ms.
        // D = 0, +5 ms, -5 ms. J1 = 0; J2 = 5/16 ms = 0.3125 ms; J3 = J2 + (5 - J2)/16 = 0.60546875 ms.
        let mut s = StreamStats::new(Some(8000), None);
        for (i, t) in [0i64, 20, 45, 60].iter().enumerate() {
            s.on_packet(t * 1_000_000, i as u16, 160 * i as u32);
        }
        assert!((s.jitter - 0.000_605_468_75).abs() < 1e-15);
        assert!((s.max_jitter - 0.000_605_468_75).abs() < 1e-15);
        assert_eq!(s.min_jitter, 0.0);
        assert!((s.mean_jitter() - (0.0 + 0.0003125 + 0.00060546875) / 3.0).abs() < 1e-15);
        assert_eq!((s.expected(), s.lost()), (4, 0));
        assert_eq!((s.min_delta_ns, s.max_delta_ns), (Some(15_000_000), Some(25_000_000)));
    }

    #[test]
    fn loss_counts_gaps_and_duplicates() {
        let mut s = StreamStats::new(Some(8000), None);
        for (i, seq) in [10u16, 11, 13, 13, 16].iter().enumerate() {
            s.on_packet(i as i64 * 20_000_000, *seq, 0);
        }
        // Range 10..=16 expects 7, 5 arrived (one a duplicate): lost 2.
        assert_eq!((s.expected(), s.packets, s.lost()), (7, 5, 2));
    }
}
