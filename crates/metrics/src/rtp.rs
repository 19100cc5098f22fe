//! Chodorek's RTP metrics over a measurement window: received throughput (bit/s) and packet
//! error rate (lost / sent), per stream. Only network loss counts here (no jitter buffer).
use crate::table::{MediaView, Window};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RtpSummary {
    pub sent: u64,
    pub received: u64,
    pub bytes_received: u64,
    /// Measurement time: hi − lo of an absolute window; tcp_end − tcp_start for the overlap
    /// (last send in the window when tcp_end is null); first to last send for the whole stream.
    pub duration_ns: i64,
}

impl RtpSummary {
    pub fn throughput_bps(&self) -> f64 {
        if self.duration_ns <= 0 { f64::NAN } else { self.bytes_received as f64 * 8.0 * 1e9 / self.duration_ns as f64 }
    }
    pub fn packet_error_rate(&self) -> f64 {
        if self.sent == 0 { f64::NAN } else { (self.sent - self.received) as f64 / self.sent as f64 }
    }
}

pub fn rtp_summary<'m>(m: impl Into<MediaView<'m>>, w: Window) -> Vec<RtpSummary> {
    let m = &m.into();
    m.streams
        .iter()
        .map(|s| {
            let mut out = RtpSummary { sent: 0, received: 0, bytes_received: 0, duration_ns: 0 };
            let Some(b) = m.bounds(s, w) else { return out };
            let (first, last);
            (out.sent, out.received, out.bytes_received, first, last) = window_rows(m, s.lo, s.hi, b);
            out.duration_ns = match w {
                Window::Absolute { lo, hi } => hi.saturating_sub(lo),
                Window::Overlap => match m.tcp_end_ns[s.run as usize] {
                    Some(e) => e - b.0,
                    None if out.sent > 0 => last - b.0,
                    None => 0,
                },
                Window::All if out.sent > 0 => last - first,
                Window::All => 0,
            };
            out
        })
        .collect()
}

avx2_dispatch! {
    /// Rows `lo..hi` sent inside `b`: how many, how many received, their bytes, the first and last
    /// send time (i64::MAX, i64::MIN when none). Without a branch a row (a lost packet is data).
    fn window_rows(m: &MediaView<'_>, lo: usize, hi: usize, b: (i64, i64)) -> (u64, u64, u64, i64, i64) = window_rows_any
}

#[inline(always)]
fn window_rows_any(m: &MediaView<'_>, lo: usize, hi: usize, b: (i64, i64)) -> (u64, u64, u64, i64, i64) {
    let (send, received, size) = (&m.send_ns[lo..hi], &m.received[lo..hi], &m.size[lo..hi]);
    let (mut sent, mut rcvd, mut bytes, mut first, mut last) = (0u64, 0u64, 0u64, i64::MAX, i64::MIN);
    // two loops, each over columns of one width: the compiler vectorises them (one loop mixing
    // the bytes of `received` with the 8-byte columns it did not)
    for &t in send {
        let inside = (t >= b.0) & (t <= b.1);
        // all ones inside the window: the row's time, else the neutral bound (as masks: with a
        // select the compiler kept this loop scalar)
        let m = i64::from(inside).wrapping_neg();
        sent += u64::from(inside);
        first = first.min((t & m) | (i64::MAX & !m));
        last = last.max((t & m) | (i64::MIN & !m));
    }
    for i in 0..send.len() {
        let t = send[i];
        let got = u64::from((t >= b.0) & (t <= b.1) & received[i]);
        rcvd += got;
        bytes = bytes.wrapping_add(size[i] as u64 & got.wrapping_neg());
    }
    (sent, rcvd, bytes, first, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::tests::cbr;

    #[test]
    fn throughput_and_per_hand_computed() {
        // 6 packets of 80 B every 20 ms, one lost. Window [20, 100] ms: 5 sent, 4 received,
        // 320 B in 80 ms → 32 000 bit/s; PER = 1/5.
        let fx = cbr(&[Some(5), Some(5), None, Some(5), Some(5), Some(5)]);
        let m = fx.media(&[(Some(20), Some(100))]);
        let s = rtp_summary(&m, Window::Overlap)[0];
        assert_eq!((s.sent, s.received, s.bytes_received, s.duration_ns), (5, 4, 320, 80_000_000));
        assert_eq!(s.throughput_bps(), 32_000.0);
        assert_eq!(s.packet_error_rate(), 0.2);
        // Whole stream: 400 B over 0..100 ms.
        let s = rtp_summary(&m, Window::All)[0];
        assert_eq!(s.throughput_bps(), 32_000.0);
        // Empty window → NaN rather than a division by zero.
        let s = rtp_summary(&m, Window::Absolute { lo: 500_000_000, hi: 400_000_000 })[0];
        assert!(s.throughput_bps().is_nan() && s.packet_error_rate().is_nan());
    }
}
