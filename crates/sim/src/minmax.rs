//! Kathleen Nichols' windowed min/max filter, as Linux's `lib/win_minmax.c`: the best, second-best
//! and third-best samples of a sliding time window, each with its time, so that the best of the
//! window is known in O(1) memory and the choices age out as the window passes. BBR keeps its
//! max-bandwidth filter in one (windowed over round trips).
//!
//! Times and values are u64 (Linux: u32); times must not go backwards, as in Linux, where the
//! callers feed jiffies or round counts.

/// One windowed filter (Linux `struct minmax`): `s[0]` is the best sample, `s[1]` and `s[2]` the
/// second and third best of later sub-windows; each `(time, value)`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [(u64, u64); 3],
}

impl MinMax {
    /// The best value of the window (Linux `minmax_get`).
    pub fn get(&self) -> u64 { self.s[0].1 }

    /// The three samples, best first (for tests and diagnostics).
    pub fn samples(&self) -> [(u64, u64); 3] { self.s }

    /// Forgets every sample but `(t, v)` (Linux `minmax_reset`). Returns `v`.
    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    /// Adds a sample to a running max over `win` (Linux `minmax_running_max`); returns the max.
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        // A new best, or nothing left in the window: start over from this sample.
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v >= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v))
    }

    /// Adds a sample to a running min over `win` (Linux `minmax_running_min`); returns the min.
    pub fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        if v <= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v <= self.s[1].1 {
            self.s[2] = (t, v);
            self.s[1] = (t, v);
        } else if v <= self.s[2].1 {
            self.s[2] = (t, v);
        }
        self.subwin_update(win, (t, v))
    }

    /// Linux `minmax_subwin_update`: once the best is a window old, the second and third take its
    /// place (twice if the second is too); while the choices all date from one sub-window, a
    /// sample a quarter (second) or half (third) window on refreshes them.
    fn subwin_update(&mut self, win: u64, val: (u64, u64)) -> u64 {
        let dt = val.0 - self.s[0].0;
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.0 - self.s[0].0 > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Running max over a window of 10, every step worked by hand through win_minmax.c's rules.
    #[test]
    fn running_max_hand_vector() {
        let mut m = MinMax::default();
        // A first sample ≥ the empty filter's 0 resets it.
        assert_eq!(m.running_max(10, 0, 5), 5);
        assert_eq!(m.samples(), [(0, 5); 3]);
        // dt = 1 ≤ win/4 = 2: no sub-window refresh; 3 is below every choice.
        assert_eq!(m.running_max(10, 1, 3), 5);
        assert_eq!(m.samples(), [(0, 5); 3]);
        // dt = 3 > 2 while s1 dates from s0's time: s1 = s2 = the sample.
        assert_eq!(m.running_max(10, 3, 4), 5);
        assert_eq!(m.samples(), [(0, 5), (3, 4), (3, 4)]);
        // dt = 6 > win/2 = 5 while s2 dates from s1's time: s2 = the sample.
        assert_eq!(m.running_max(10, 6, 2), 5);
        assert_eq!(m.samples(), [(0, 5), (3, 4), (6, 2)]);
        // dt = 11 > 10: the 5 ages out, 4 (t = 3, 8 old) is the max now.
        assert_eq!(m.running_max(10, 11, 1), 4);
        assert_eq!(m.samples(), [(3, 4), (6, 2), (11, 1)]);
        // 1 ≥ s2's 1 replaces s2; dt = 14 > 10 shifts once, and 17 − 6 = 11 > 10 shifts again.
        assert_eq!(m.running_max(10, 17, 1), 1);
        assert_eq!(m.samples(), [(17, 1); 3]);
        // A new best resets at once.
        assert_eq!(m.running_max(10, 18, 9), 9);
        // Nothing in the window any more (30 − 18 = 12 > 10): reset even to a lower value.
        assert_eq!(m.running_max(10, 30, 0), 0);
        assert_eq!(m.samples(), [(30, 0); 3]);
    }

    /// Running min (an RTT filter) over a window of 10, by hand.
    #[test]
    fn running_min_hand_vector() {
        let mut m = MinMax::default();
        assert_eq!(m.reset(0, 50), 50);
        // dt = 2 is not > win/4 = 2.
        assert_eq!(m.running_min(10, 2, 60), 50);
        assert_eq!(m.samples(), [(0, 50); 3]);
        assert_eq!(m.running_min(10, 4, 55), 50);
        assert_eq!(m.samples(), [(0, 50), (4, 55), (4, 55)]);
        assert_eq!(m.running_min(10, 8, 70), 50);
        assert_eq!(m.samples(), [(0, 50), (4, 55), (8, 70)]);
        // 65 ≤ s2's 70 takes s2; dt = 12 > 10 ages the 50 out: 55 from t = 4.
        assert_eq!(m.running_min(10, 12, 65), 55);
        assert_eq!(m.samples(), [(4, 55), (12, 65), (12, 65)]);
        // A new minimum resets.
        assert_eq!(m.running_min(10, 13, 40), 40);
        assert_eq!(m.samples(), [(13, 40); 3]);
    }

    /// Ties count as new bests (`>=` / `<=`), which restarts the window from the later sample:
    /// the max of a constant series never expires.
    #[test]
    fn equal_samples_refresh_the_best() {
        let mut m = MinMax::default();
        for t in 0..100 {
            assert_eq!(m.running_max(10, t, 7), 7);
            assert_eq!(m.samples(), [(t, 7); 3]);
        }
    }
}
