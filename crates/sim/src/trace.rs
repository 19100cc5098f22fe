//! Delivery opportunities in Mahimahi's form (a trace file, or what the cellular model generates):
//! the stamps, their loop, and a cursor over them. Kept apart from `link.rs`, which drives a
//! serialiser over them, so that `cellular.rs` can produce a [`Trace`] without importing the links.

/// Bytes one delivery opportunity carries: Mahimahi's PACKET_SIZE (src/frontend/link_queue.hh).
pub const OPPORTUNITY_BYTES: u32 = 1504;
/// Old name, kept for callers that used it.
pub const TRACE_OPPORTUNITY_BYTES: u32 = OPPORTUNITY_BYTES;

/// Delivery opportunities in Mahimahi's form: integer-millisecond stamps, non-decreasing, each one
/// carrying [`OPPORTUNITY_BYTES`]; the list loops with period = the last stamp (Mahimahi adds
/// `schedule_.back()` to its base timestamp on wrap-around).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    stamps: Vec<u64>,
    period_ms: u64,
}

/// A trace-file error: the 1-based line (0 when it concerns the whole file) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub msg: String,
}

/// Position in the looped opportunity list: opportunity `idx` of loop `cycle`. Ordered in time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Cursor {
    cycle: u64,
    idx: usize,
}

impl Trace {
    /// Parses Mahimahi's format (one whole number of ms per line). Blank lines and `#` comments are
    /// skipped (Mahimahi refuses blank lines; skipping them changes no timing).
    pub fn parse(text: &str) -> Result<Trace, TraceError> {
        let mut opps = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let v: u64 = l.parse().map_err(|_| TraceError { line: i + 1, msg: format!("expected a whole number of milliseconds, got {l:?}") })?;
            if let Some(&last) = opps.last() {
                if v < last {
                    return Err(TraceError { line: i + 1, msg: format!("timestamps must not decrease ({v} after {last})") });
                }
            }
            opps.push(v);
        }
        Trace::from_stamps(opps).map_err(|msg| TraceError { line: 0, msg })
    }

    /// Builds a trace from stamps (checked: non-empty, non-decreasing, last stamp > 0).
    pub fn from_stamps(stamps: Vec<u64>) -> Result<Trace, String> {
        let period = *stamps.last().ok_or("the trace has no delivery opportunities")?;
        if period == 0 {
            return Err("the trace's last timestamp must be > 0 ms (it is the loop period)".into());
        }
        if stamps.windows(2).any(|w| w[1] < w[0]) {
            return Err("timestamps must not decrease".into());
        }
        Ok(Trace { stamps, period_ms: period })
    }

    pub fn stamps(&self) -> &[u64] { &self.stamps }
    pub fn period_ms(&self) -> u64 { self.period_ms }

    /// Average capacity in bit/s: opportunities × 1504 B × 8 over one period.
    pub fn mean_bps(&self) -> f64 { self.stamps.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period_ms as f64 * 1e-3) }
    /// Old name of [`Trace::mean_bps`].
    pub fn mean_rate(&self) -> f64 { self.mean_bps() }

    /// The millisecond at which the opportunity under `c` occurs.
    pub fn at(&self, c: Cursor) -> u64 { self.stamps[c.idx] + c.cycle * self.period_ms }

    /// The opportunity after `c`.
    pub fn next(&self, c: Cursor) -> Cursor {
        if c.idx + 1 == self.stamps.len() { Cursor { cycle: c.cycle + 1, idx: 0 } } else { Cursor { cycle: c.cycle, idx: c.idx + 1 } }
    }

    /// The first opportunity stamped strictly after millisecond `ms`.
    pub fn first_after(&self, ms: u64) -> Cursor {
        let cycle = ms / self.period_ms;
        let within = ms - cycle * self.period_ms;
        let idx = self.stamps.partition_point(|&s| s <= within);
        if idx == self.stamps.len() { Cursor { cycle: cycle + 1, idx: 0 } } else { Cursor { cycle, idx } }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_walks_the_loop_and_finds_the_first_later_stamp() {
        let t = Trace::from_stamps(vec![0, 2, 2, 5]).unwrap();
        assert_eq!(t.period_ms(), 5);
        // ms 0 has the stamp-0 opportunity of loop 0; strictly after 0 comes 2.
        assert_eq!(t.at(t.first_after(0)), 2);
        assert_eq!(t.at(t.first_after(1)), 2);
        assert_eq!(t.at(t.first_after(2)), 5);
        // after 5: loop 1 starts at 5 + 0 = 5 (not later), so the next is 5 + 2 = 7.
        assert_eq!(t.at(t.first_after(5)), 7);
        assert_eq!(t.at(t.first_after(4)), 5);
        let mut c = Cursor::default();
        let walked: Vec<u64> = (0..9).map(|_| { let m = t.at(c); c = t.next(c); m }).collect();
        assert_eq!(walked, vec![0, 2, 2, 5, 5, 7, 7, 10, 10]);
    }

    #[test]
    fn parse_errors_name_the_line() {
        assert_eq!(Trace::parse("1\n3\n2\n").unwrap_err().line, 3);
        assert_eq!(Trace::parse("1\nx\n").unwrap_err().line, 2);
        assert_eq!(Trace::parse("0\n0\n").unwrap_err().line, 0);
        assert_eq!(Trace::parse("# c\n\n4\n").unwrap().mean_bps(), 1504.0 * 8.0 / 0.004);
    }
}
