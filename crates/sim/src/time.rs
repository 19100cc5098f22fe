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
    pub fn from_secs_f64(s: f64) -> Time {
        if !(s > 0.0) { return Time(0); }
        Time((s * 1e9).round() as u64)
    }
    pub const fn ns(self) -> u64 { self.0 }
    pub fn secs_f64(self) -> f64 { self.0 as f64 * 1e-9 }
    pub fn saturating_sub(self, o: Time) -> Time { Time(self.0.saturating_sub(o.0)) }
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
        let r = self.0 as u128;
        Time(num.div_ceil(r) as u64)
    }
    /// Bytes this rate carries in `t` (floor).
    pub fn bytes_in(self, t: Time) -> u64 { ((self.0 as u128 * t.0 as u128) / 8_000_000_000u128) as u64 }
}
