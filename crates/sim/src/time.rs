//! Simulated time: integer nanoseconds since the start of the run. Nothing in the core reads the wall
//! clock. One type serves for instants and spans (as ns-2 and smoltcp do) to keep arithmetic plain.
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub const fn from_ns(ns: u64) -> Time { Time(ns) }
    pub const fn from_us(us: u64) -> Time { Time(us * 1_000) }
    pub const fn from_ms(ms: u64) -> Time { Time(ms * 1_000_000) }
    pub const fn from_secs(s: u64) -> Time { Time(s * 1_000_000_000) }
    /// Rounds to the nearest nanosecond; negative or NaN inputs give zero.
    // `!(s > 0.0)` on purpose: NaN gives zero too.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn from_secs_f64(s: f64) -> Time {
        if !(s > 0.0) { return Time(0); }
        Time((s * 1e9).round() as u64)
    }
    pub const fn ns(self) -> u64 { self.0 }
    pub fn secs_f64(self) -> f64 { self.0 as f64 * 1e-9 }
    pub fn saturating_sub(self, o: Time) -> Time { Time(self.0.saturating_sub(o.0)) }
    /// Saturating multiple by a count (not `std::ops::Mul`: the operand is a u64, not a Time).
    #[allow(clippy::should_implement_trait)]
    pub fn mul(self, k: u64) -> Time { Time(self.0.saturating_mul(k)) }
}

impl Add for Time { type Output = Time; fn add(self, o: Time) -> Time { Time(self.0.saturating_add(o.0)) } }
impl AddAssign for Time { fn add_assign(&mut self, o: Time) { self.0 = self.0.saturating_add(o.0); } }
impl Sub for Time { type Output = Time; fn sub(self, o: Time) -> Time { Time(self.0.saturating_sub(o.0)) } }

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "{:.9}s", self.secs_f64()) }
}
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { fmt::Debug::fmt(self, f) }
}

/// A link rate in bits per second.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Rate(pub u64);

impl Rate {
    pub const fn bps(b: u64) -> Rate { Rate(b) }
    pub const fn kbps(k: u64) -> Rate { Rate(k * 1_000) }
    pub const fn mbps(m: u64) -> Rate { Rate(m * 1_000_000) }
    /// Serialisation time of `bytes` at this rate, rounded up to the next nanosecond so that a link
    /// never delivers faster than its rate.
    pub fn tx_time(self, bytes: u64) -> Time {
        let num = bytes as u128 * 8 * 1_000_000_000u128;
        Time(div_ceil_u128(num, self.0) as u64)
    }
    /// Bytes this rate carries in `t` (floor).
    pub fn bytes_in(self, t: Time) -> u64 { div_u128(self.0 as u128 * t.0 as u128, 8_000_000_000) as u64 }
}

/// `n / d` for a 128-bit `n`, by a 64-bit division when `n` fits in 64 bits (the usual case: a
/// 128-bit division is a library call, ~10x slower) — the same quotient either way.
#[inline(always)]
pub fn div_u128(n: u128, d: u64) -> u128 {
    if n >> 64 == 0 { (n as u64 / d) as u128 } else { n / d as u128 }
}

/// `n.div_ceil(d)`, by a 64-bit division when `n` fits in 64 bits.
#[inline(always)]
pub fn div_ceil_u128(n: u128, d: u64) -> u128 {
    if n >> 64 == 0 { (n as u64).div_ceil(d) as u128 } else { n.div_ceil(d as u128) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-bit fast path and the 128-bit division agree on both sides of 2^64, for floor and
    /// ceiling (a wrong branch or a truncation shows at the boundary).
    #[test]
    fn divisions_agree_across_the_64_bit_boundary() {
        let b = 1u128 << 64;
        for n in [0, 1, 7, b - 2, b - 1, b, b + 1, 3 * b + 5, u128::MAX / 3] {
            for d in [1u64, 3, 8_000_000_000, u64::MAX] {
                assert_eq!(div_u128(n, d), n / d as u128, "{n} / {d}");
                assert_eq!(div_ceil_u128(n, d), n.div_ceil(d as u128), "ceil {n} / {d}");
            }
        }
        // 1500 B at 1 Mbit/s: 12 ms exactly; at 3 bit/s the ceiling shows
        assert_eq!(Rate::mbps(1).tx_time(1500), Time::from_ms(12));
        assert_eq!(Rate::bps(3).tx_time(1), Time(2_666_666_667));
    }
}
