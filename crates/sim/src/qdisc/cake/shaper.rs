//! CAKE's shaper (Linux `cake_set_rate`, `cake_calc_overhead`, `cake_advance_shaper`): ns per byte
//! in fixed point, the adjusted length a packet is charged (overhead, MPU, ATM/PTM framing), and
//! the departure schedule with its failsafe.
use super::{Cake, Framing};

/// The shaper's fixed point (Linux `cake_set_rate`): ns per byte as rate_ns / 2^rate_shft, with
/// rate_ns kept below 2³⁴. Returns (rate_ns, rate_shft); (0, 0) when unlimited.
pub fn rate_fixed_point(rate_bytes: u64) -> (u64, u32) {
    if rate_bytes == 0 {
        return (0, 0);
    }
    let mut shft = 34u32;
    let mut ns = (1_000_000_000u64 << shft) / rate_bytes.max(64);
    while ns >> 34 != 0 {
        ns >>= 1;
        shft -= 1;
    }
    (ns, shft)
}

impl Cake {
    /// Adjusted length the shaper charges (Linux `cake_calc_overhead`).
    pub fn adjusted_len(&self, size: u32) -> u32 {
        let mut len = (size as i64 + self.params.overhead as i64).max(0) as u64;
        len = len.max(self.params.mpu as u64);
        match self.params.framing {
            Framing::None => {}
            Framing::Atm => len = len.div_ceil(48) * 53,
            Framing::Ptm => len += len.div_ceil(64),
        }
        len as u32
    }

    /// Charges `adjusted` bytes to the shaper (Linux `cake_advance_shaper`, global shaper only:
    /// with one tin the tin's own schedule never decides anything).
    pub(super) fn advance_shaper(&mut self, adjusted: u32, drop: bool) {
        if self.rate_ns != 0 {
            let dur = ((adjusted as u128 * self.rate_ns as u128) >> self.rate_shft) as i64;
            self.time_next_packet += dur;
            if !drop {
                self.failsafe_next_packet += dur + (dur >> 1);
            }
        }
    }
}
