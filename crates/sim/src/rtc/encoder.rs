//! The synthetic encoder of RFC 8593 ("Video Traffic Models for RTP Congestion Control
//! Evaluations"), statistical model of §4, with the parameter choices of its maintained
//! implementation (the `StatisticsCodec` of syncodecs, used by the ns-3 RMCAT models):
//!
//! - Steady state (§4.2–4.3): each frame carries target/fps bytes, times a noise factor
//!   (Laplacian, scale `NOISE_SCALE`: the frame-size fluctuation the RFC models around the target).
//! - Lag (§4.1's encoder reaction): a new target is taken at most every `UPDATE_INTERVAL`, and moves
//!   the encoder's rate by at most `MAX_UPDATE_RATIO` per update unless the change is "big"
//!   (ratio ≥ `BIG_CHANGE_RATIO`), which starts a transient phase.
//! - Transient phase (§4.3): a key frame (`KEY_FRAME_FACTOR` × a steady frame), then
//!   `TRANSIENT_FRAMES` frames shrunk to pay the key frame back, never below `MIN_FRAME_SHARE` of a
//!   steady frame. Periodic key frames (`key_interval`) start the same phase.
//!
//! Audio is the degenerate case: no noise, no key frames, the rate followed at once (an Opus-like
//! encoder that sets its bit rate per packet).
use crate::rng::Rng;
use crate::time::Time;

/// syncodecs' StatisticsCodec defaults.
pub const UPDATE_INTERVAL: Time = Time::from_ms(100);
pub const MAX_UPDATE_RATIO: f64 = 0.1;
pub const BIG_CHANGE_RATIO: f64 = 0.5;
pub const TRANSIENT_FRAMES: u32 = 10;
pub const MIN_FRAME_SHARE: f64 = 0.2;
/// A key frame is this many steady frames (RFC 8593 §4.3 leaves the I-frame size to the codec;
/// syncodecs uses a fixed 4.17 KiB, which at 150 kbit/s and 30 fps is ~7 steady frames and at
/// 1.5 Mbit/s less than one — a ratio keeps the key frame larger than a steady one at every rate).
pub const KEY_FRAME_FACTOR: f64 = 4.0;
/// Laplacian scale of the multiplicative frame-size noise (standard deviation √2·b ≈ 14 %).
pub const NOISE_SCALE: f64 = 0.1;

#[derive(Clone, Debug)]
pub struct Encoder {
    video: bool,
    /// The rate the encoder currently produces (bit/s).
    rate: f64,
    last_update: Option<Time>,
    /// Frames left in the transient phase, and the bytes per frame to take off them.
    transient_left: u32,
    payback: f64,
    key_interval: Option<Time>,
    next_key: Option<Time>,
    rng: Rng,
}

/// One encoded frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    pub bytes: u64,
    pub key: bool,
}

impl Encoder {
    pub fn new(video: bool, start_bps: f64, key_interval: Option<Time>, rng: Rng) -> Encoder {
        Encoder { video, rate: start_bps, last_update: None, transient_left: 0, payback: 0.0, key_interval, next_key: None, rng }
    }

    /// The next frame is a key frame (the decoder lost its reference), with the transient phase.
    pub fn force_key(&mut self) {
        if self.video {
            self.transient_left = TRANSIENT_FRAMES + 1;
        }
    }

    /// The rate the encoder produces now.
    pub fn rate(&self) -> f64 { self.rate }

    /// A frame's size before noise (bytes) and whether it is a key frame, for a steady frame of
    /// `steady` bytes: the transient phase's key frame and payback, or the steady size.
    pub fn plan(&mut self, steady: f64) -> (f64, bool) {
        if self.transient_left == TRANSIENT_FRAMES + 1 {
            self.transient_left -= 1;
            // the key frame's excess is paid back over the transient frames
            self.payback = steady * (KEY_FRAME_FACTOR - 1.0) / TRANSIENT_FRAMES as f64;
            (steady * KEY_FRAME_FACTOR, true)
        } else if self.transient_left > 0 {
            self.transient_left -= 1;
            ((steady - self.payback).max(MIN_FRAME_SHARE * steady), false)
        } else {
            (steady, false)
        }
    }

    /// Offers a new target; the encoder follows it with RFC 8593's lag (video) or at once (audio).
    /// Returns true when the change starts a transient phase (a key frame follows).
    pub fn set_target(&mut self, target: f64, now: Time) -> bool {
        if !self.video {
            self.rate = target;
            return false;
        }
        if self.last_update.is_some_and(|t| now < t + UPDATE_INTERVAL) || target == self.rate {
            return false;
        }
        self.last_update = Some(now);
        let ratio = (target - self.rate).abs() / self.rate;
        if ratio >= BIG_CHANGE_RATIO {
            self.rate = target;
            self.transient_left = TRANSIENT_FRAMES + 1;
            return true;
        }
        let step = self.rate * MAX_UPDATE_RATIO;
        self.rate = if target > self.rate { target.min(self.rate + step) } else { target.max(self.rate - step) };
        false
    }

    /// The next frame, `interval` after the previous one.
    pub fn next_frame(&mut self, interval: Time, now: Time) -> Frame {
        let steady = self.rate * interval.secs_f64() / 8.0;
        if !self.video {
            return Frame { bytes: steady.round().max(1.0) as u64, key: false };
        }
        if let Some(k) = self.key_interval {
            let due = *self.next_key.get_or_insert(now + k);
            if now >= due {
                self.next_key = Some(now + k);
                self.transient_left = TRANSIENT_FRAMES + 1;
            }
        }
        let (size, key) = self.plan(steady);
        let noisy = size * (1.0 + laplace(&mut self.rng, NOISE_SCALE)).max(MIN_FRAME_SHARE);
        Frame { bytes: noisy.round().max(1.0) as u64, key }
    }
}

/// Laplacian with mean 0 and scale `b` (inverse transform).
pub fn laplace(rng: &mut Rng, b: f64) -> f64 {
    let u = rng.uniform() - 0.5;
    -b * u.signum() * (1.0 - 2.0 * u.abs()).max(f64::MIN_POSITIVE).ln()
}

/// Splits a frame of `bytes` payload into RTP packets of at most `mtu` IP bytes, as even as
/// possible (libwebrtc's RtpPacketizer balances packet sizes the same way); IP sizes returned.
pub fn packetize(bytes: u64, mtu: u32, overhead: u32) -> Vec<u32> {
    let max_payload = (mtu - overhead) as u64;
    let n = bytes.div_ceil(max_payload).max(1);
    let base = bytes / n;
    let extra = bytes % n;
    (0..n).map(|i| (base + u64::from(i < extra)) as u32 + overhead).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packetize_balances_and_conserves() {
        // 3000 B payload, 1200 B MTU, 40 B headers: 1160 B per packet at most → 3 packets of 1000 B
        assert_eq!(packetize(3000, 1200, 40), vec![1040, 1040, 1040]);
        // 2321 B → 3 packets (2 would carry at most 2320): 774, 774, 773 payload
        assert_eq!(packetize(2321, 1200, 40), vec![814, 814, 813]);
        assert_eq!(packetize(1, 1200, 40), vec![41]);
    }

    #[test]
    fn lag_limits_each_update_to_ten_percent() {
        let mut e = Encoder::new(true, 1e6, None, Rng::stream(1, "e"));
        // +30 % is not big (< 50 %): 10 % per update, one update per 100 ms
        assert!(!e.set_target(1.3e6, Time::from_ms(0)));
        assert_eq!(e.rate(), 1.1e6);
        assert!(!e.set_target(1.3e6, Time::from_ms(50)));
        assert_eq!(e.rate(), 1.1e6);
        e.set_target(1.3e6, Time::from_ms(100));
        assert!((e.rate() - 1.21e6).abs() < 1e-6);
        // a halving is big: taken at once, and a key frame follows
        assert!(e.set_target(0.6e6, Time::from_ms(200)));
        assert_eq!(e.rate(), 0.6e6);
        let f = e.next_frame(Time::from_ms(40), Time::from_ms(210));
        assert!(f.key);
    }

    #[test]
    fn mean_frame_size_follows_the_rate() {
        // without key frames the noise has mean zero: 3000 frames at 1 Mbit/s, 30 fps → 4166.7 B
        let mut e = Encoder::new(true, 1e6, None, Rng::stream(7, "e"));
        let iv = Time(33_333_333);
        let n = 3000;
        let total: u64 = (0..n).map(|i| e.next_frame(iv, iv.mul(i)).bytes).sum();
        let mean = total as f64 / n as f64;
        assert!((mean / 4166.67 - 1.0).abs() < 0.02, "{mean}");
    }

    #[test]
    fn transient_pays_the_key_frame_back() {
        // key frame 4 × 5000 B = 20000 B, then 10 frames of 5000 − 3·5000/10 = 3500 B: the 11
        // frames carry 20000 + 35000 = 55000 B = 11 steady frames
        let mut e = Encoder::new(true, 1e6, None, Rng::stream(3, "e"));
        e.transient_left = TRANSIENT_FRAMES + 1;
        let sizes: Vec<(f64, bool)> = (0..12).map(|_| e.plan(5000.0)).collect();
        assert_eq!(sizes[0], (20000.0, true));
        assert!(sizes[1..11].iter().all(|&(b, k)| b == 3500.0 && !k));
        assert_eq!(sizes[11], (5000.0, false));
        // a key frame of 10 × steady would need 9/10 of every frame back: floored at 0.2 × steady
        e.transient_left = TRANSIENT_FRAMES + 1;
        e.plan(5000.0);
        e.payback = 4500.0;
        assert_eq!(e.plan(5000.0).0, 1000.0);
    }

    #[test]
    fn periodic_key_frames() {
        let mut e = Encoder::new(true, 1e6, Some(Time::from_secs(2)), Rng::stream(3, "e"));
        let iv = Time::from_ms(40);
        let keys: Vec<u64> = (0..150).filter(|&i| e.next_frame(iv, iv.mul(i)).key).collect();
        // first frame at 0 arms the timer: key frames at 2 s, 4 s (frames 50, 100)
        assert_eq!(keys, vec![50, 100]);
    }
}
