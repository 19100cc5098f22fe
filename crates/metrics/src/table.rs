//! The `media_packets` table in the prepared form every metric reads.
//!
//! Contract: [`Media::new`] never panics on user input; it returns [`MetricsError`] naming the
//! column. After it, rows are sorted by (run, flow, seq), one row per (run, flow, seq) — the copy
//! that arrived first; a lost copy only survives when no copy arrived — and each stream
//! (run, flow) is one contiguous row range.
//!
//! Over 600 lines: its unit tests (the last ~215 lines) sit beside the two constructors they pin.
use crate::error::{MetricsError, Result};

/// Borrowed columns of `media_packets`. `run` holds dense run codes `0..n_runs` (the Python layer
/// factorises `run_id`, which may be int or string); `recv_ns` is only meaningful where
/// `received` is true.
#[derive(Debug, Clone, Copy)]
pub struct MediaColumns<'a> {
    pub run: &'a [i64],
    pub flow: &'a [i64],
    pub seq: &'a [i64],
    pub send_ns: &'a [i64],
    pub recv_ns: &'a [i64],
    pub received: &'a [bool],
    pub size: &'a [i64],
}

/// Borrowed columns of `runs`, indexed by run code. `None` = null in the table.
#[derive(Debug, Clone, Copy)]
pub struct RunTimes<'a> {
    pub tcp_start_ns: &'a [Option<i64>],
    pub tcp_end_ns: &'a [Option<i64>],
}

/// Which packets (by send time, both edges inclusive) a metric looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The whole stream (the audio-only baseline of the PAM 2013 study).
    All,
    /// Sent in [tcp_start_ns, tcp_end_ns]; runs without tcp_start_ns contribute nothing, a null
    /// tcp_end_ns leaves the window open to the end of the stream (transfer never finished).
    Overlap,
    /// Sent in [lo, hi] ns from the run start, the same for every run.
    Absolute { lo: i64, hi: i64 },
}

/// One (run, flow) media stream: rows `lo..hi` of the prepared columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    pub run: u32,
    pub flow: i64,
    pub lo: usize,
    pub hi: usize,
}

/// Prepared media table (owned, sorted, de-duplicated).
#[derive(Debug, Clone)]
pub struct Media {
    pub run: Vec<u32>,
    pub flow: Vec<i64>,
    pub seq: Vec<i64>,
    pub send_ns: Vec<i64>,
    pub recv_ns: Vec<i64>,
    pub received: Vec<bool>,
    pub size: Vec<i64>,
    /// Row of the input table each prepared row came from.
    pub source_row: Vec<u32>,
    pub streams: Vec<Stream>,
    /// Input rows dropped as duplicate copies.
    pub duplicates: usize,
    pub tcp_start_ns: Vec<Option<i64>>,
    pub tcp_end_ns: Vec<Option<i64>>,
}

/// The prepared table as every metric reads it: its columns, streams and the runs' TCP times,
/// borrowed from a [`Media`] (`Media::view`, `From<&Media>`) or from one run's own columns where
/// they already are the prepared form ([`crate::OneRun`]). Per-row run codes and source rows are not
/// part of it (no metric reads them: a stream carries its run). `recv_ns` is meaningful only
/// where `received` is true: a view of a run's columns keeps a lost packet's slot as it is
/// (every metric tests `received` before it reads `recv_ns`).
#[derive(Debug, Clone, Copy)]
pub struct MediaView<'a> {
    pub flow: &'a [i64],
    pub seq: &'a [i64],
    pub send_ns: &'a [i64],
    pub recv_ns: &'a [i64],
    pub received: &'a [bool],
    pub size: &'a [i64],
    pub streams: &'a [Stream],
    pub tcp_start_ns: &'a [Option<i64>],
    pub tcp_end_ns: &'a [Option<i64>],
}

impl<'a> From<&'a Media> for MediaView<'a> {
    fn from(m: &'a Media) -> MediaView<'a> {
        m.view()
    }
}

impl<'a> From<&MediaView<'a>> for MediaView<'a> {
    fn from(m: &MediaView<'a>) -> MediaView<'a> {
        *m
    }
}

fn check_len(column: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected != got {
        return Err(MetricsError::LengthMismatch { column, expected, got });
    }
    Ok(())
}

/// Extends 16-bit RTP sequence numbers per (run, flow), walking packets in send order: each
/// number is placed within ±2^15 of the previous extended one (RFC 3550 §A.1 keeps the same
/// idea with its `cycles` counter).
fn unwrap16(c: &MediaColumns<'_>) -> Result<Vec<i64>> {
    let n = c.seq.len();
    for (i, &s) in c.seq.iter().enumerate() {
        if !(0..=0xFFFF).contains(&s) {
            return Err(MetricsError::InvalidValue {
                column: "seq",
                row: i,
                reason: format!("{s} is not a 16-bit sequence number (unwrap16 requested)"),
            });
        }
    }
    let key = |i: usize| (c.run[i], c.flow[i], c.send_ns[i], i);
    let mut order: Vec<u32> = (0..n as u32).collect();
    if !(1..n).all(|i| key(i - 1) <= key(i)) {
        order.sort_unstable_by_key(|&i| key(i as usize));
    }
    let mut ext = vec![0i64; n];
    let mut prev: Option<(i64, i64, i64)> = None; // (run, flow, extended seq)
    for &i in &order {
        let i = i as usize;
        let s = c.seq[i];
        let e = match prev {
            Some((r, f, pe)) if r == c.run[i] && f == c.flow[i] => {
                // Signed 16-bit distance from the previous extended number.
                let d = (s - pe.rem_euclid(65536) + 32768).rem_euclid(65536) - 32768;
                pe + d
            }
            _ => s,
        };
        ext[i] = e;
        prev = Some((c.run[i], c.flow[i], e));
    }
    Ok(ext)
}

/// Row order by (run, flow, seq, row). An O(n) check skips sorting already-sorted input (the
/// simulator's). Otherwise a counting sort by the dense run code, then a sort of each run's
/// rows by (flow, seq, row) on packed keys: small, cache-resident sorts instead of one big one.
/// `run` must hold codes in `0..n_runs` (checked by the caller).
fn sort_rows(run: &[i64], flow: &[i64], seq: &[i64], n_runs: usize) -> Vec<u32> {
    let n = run.len();
    let key = |i: usize| (run[i], flow[i], seq[i]);
    if (1..n).all(|i| key(i - 1) <= key(i)) {
        return (0..n as u32).collect();
    }
    let mut start = vec![0usize; n_runs + 1];
    for &r in run {
        start[r as usize + 1] += 1;
    }
    for k in 0..n_runs {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut order = vec![0u32; n];
    for (i, &r) in run.iter().enumerate() {
        order[fill[r as usize]] = i as u32;
        fill[r as usize] += 1;
    }
    let mut keys: Vec<(i64, i64, u32)> = Vec::new();
    for k in 0..n_runs {
        let seg = &mut order[start[k]..start[k + 1]];
        keys.clear();
        keys.extend(seg.iter().map(|&i| (flow[i as usize], seq[i as usize], i)));
        if !keys.windows(2).all(|w| w[0] <= w[1]) {
            keys.sort_unstable();
        }
        for (o, kk) in seg.iter_mut().zip(&keys) {
            *o = kk.2;
        }
    }
    order
}

/// The checks every input row passes; `new` and `from_sorted` report the first failing row alike.
#[inline]
pub(crate) fn check_row(i: usize, run_known: bool, received: bool, send: i64, recv: i64, size: i64) -> Result<()> {
    if !run_known {
        return Err(MetricsError::InvalidValue { column: "run_id", row: i, reason: "run_id not present in the runs table".into() });
    }
    if received && recv < send {
        return Err(MetricsError::NegativeDelay { column: "recv_ns", row: i, send, recv });
    }
    if size < 0 {
        return Err(MetricsError::InvalidValue { column: "size", row: i, reason: format!("negative size {size}") });
    }
    Ok(())
}

pub(crate) fn check_runs(runs: RunTimes<'_>) -> Result<()> {
    for (r, (s, e)) in runs.tcp_start_ns.iter().zip(runs.tcp_end_ns).enumerate() {
        if let (Some(s), Some(e)) = (s, e) {
            if e < s {
                return Err(MetricsError::InvalidValue {
                    column: "tcp_end_ns",
                    row: r,
                    reason: format!("tcp_end_ns {e} is before tcp_start_ns {s}"),
                });
            }
        }
    }
    Ok(())
}

/// The streams (run, flow) of sorted rows, each a contiguous row range, its end found by
/// bisection (not by a compare a row).
fn streams_of(run: &[u32], flow: &[i64]) -> Vec<Stream> {
    streams_by(run.len(), |i| (run[i], flow[i]))
}

/// The streams of `n` rows sorted by `key(row)` = (run, flow) (see `streams_of`).
pub(crate) fn streams_by(n: usize, key: impl Fn(usize) -> (u32, i64)) -> Vec<Stream> {
    let mut streams = Vec::new();
    let mut lo = 0;
    while lo < n {
        let k = key(lo);
        // rows lo..n hold k first (sorted): the first row past it
        let (mut a, mut b) = (lo + 1, n);
        while a < b {
            let mid = a + (b - a) / 2;
            if key(mid) == k { a = mid + 1 } else { b = mid }
        }
        streams.push(Stream { run: k.0, flow: k.1, lo, hi: a });
        lo = a;
    }
    streams
}

/// Owned columns of `media_packets` with dense run codes (`Media::from_sorted`).
#[derive(Debug, Clone, Default)]
pub struct MediaOwned {
    pub run: Vec<u32>,
    pub flow: Vec<i64>,
    pub seq: Vec<i64>,
    pub send_ns: Vec<i64>,
    pub recv_ns: Vec<i64>,
    pub received: Vec<bool>,
    pub size: Vec<i64>,
}

/// The media columns' lengths against the row count `n`, the runs' two columns against each other,
/// and the row count against the u32 row index (both constructors of [`Media`]).
pub(crate) fn check_shape(n: usize, cols: [(&'static str, usize); 6], runs: &RunTimes<'_>) -> Result<()> {
    for (name, len) in cols {
        check_len(name, n, len)?;
    }
    check_len("tcp_end_ns", runs.tcp_start_ns.len(), runs.tcp_end_ns.len())?;
    if n > u32::MAX as usize {
        return Err(MetricsError::TooManyRows { column: "seq", rows: n, max: u32::MAX as usize });
    }
    Ok(())
}

avx2_dispatch! {
    /// Whether every row of `c` passes `check_row` (run codes below `n_runs`), and whether the
    /// rows are strictly ascending by (run, flow, seq): one pass, without a branch a row.
    fn scan_owned(c: &MediaOwned, n_runs: usize) -> (bool, bool) = scan_owned_any
}

#[inline(always)]
fn scan_owned_any(c: &MediaOwned, n_runs: usize) -> (bool, bool) {
    let n = c.run.len();
    let (run, flow, seq, send, recv, received, size) = (&c.run[..n], &c.flow[..n], &c.seq[..n], &c.send_ns[..n], &c.recv_ns[..n], &c.received[..n], &c.size[..n]);
    let (mut ok, mut ascending) = (true, true);
    for i in 0..n {
        ok &= ((run[i] as usize) < n_runs) & (!received[i] | (recv[i] >= send[i])) & (size[i] >= 0);
    }
    for i in 1..n {
        let (r0, f0, s0, r1, f1, s1) = (run[i - 1], flow[i - 1], seq[i - 1], run[i], flow[i], seq[i]);
        ascending &= (r0 < r1) | ((r0 == r1) & ((f0 < f1) | ((f0 == f1) & (s0 < s1))));
    }
    (ok, ascending)
}

impl Media {
    /// Validates, optionally unwraps 16-bit sequence numbers, sorts and de-duplicates.
    pub fn new(c: MediaColumns<'_>, runs: RunTimes<'_>, unwrap_16bit: bool) -> Result<Media> {
        let n = c.run.len();
        check_shape(n, [("flow_id", c.flow.len()), ("seq", c.seq.len()), ("send_ns", c.send_ns.len()), ("recv_ns", c.recv_ns.len()),
                        ("recv_ns", c.received.len()), ("size", c.size.len())], &runs)?;
        let n_runs = runs.tcp_start_ns.len() as i64;
        for i in 0..n {
            check_row(i, c.run[i] >= 0 && c.run[i] < n_runs, c.received[i], c.send_ns[i], c.recv_ns[i], c.size[i])?;
        }
        check_runs(runs)?;
        let unwrapped;
        let seq: &[i64] = if unwrap_16bit {
            unwrapped = unwrap16(&c)?;
            &unwrapped
        } else {
            c.seq
        };

        // Order rows by (run, flow, seq), gather every column in that order (the only random
        // reads), then drop duplicate copies in one sequential pass: of each (run, flow, seq)
        // group the earliest arrival is kept; a lost copy only if no copy arrived; ties → lower row.
        let order = sort_rows(c.run, c.flow, seq, runs.tcp_start_ns.len());
        // rows already in order (a simulator's table, a sweep's runs one after another): copied
        // as they are, not gathered through the order (a load by index per value, ~5x a copy)
        let sorted = order.iter().enumerate().all(|(k, &i)| k == i as usize);
        let gather = |src: &[i64]| -> Vec<i64> {
            if sorted { src.to_vec() } else { order.iter().map(|&i| src[i as usize]).collect() }
        };
        let mut run: Vec<u32> = if sorted {
            c.run.iter().map(|&r| r as u32).collect()
        } else {
            order.iter().map(|&i| c.run[i as usize] as u32).collect()
        };
        let mut flow = gather(c.flow);
        let mut seqv = gather(seq);
        let mut send_ns = gather(c.send_ns);
        let mut received: Vec<bool> =
            if sorted { c.received.to_vec() } else { order.iter().map(|&i| c.received[i as usize]).collect() };
        let mut recv_ns: Vec<i64> = if sorted {
            c.recv_ns.iter().zip(c.received).map(|(&v, &ok)| if ok { v } else { 0 }).collect()
        } else {
            order.iter().map(|&i| if c.received[i as usize] { c.recv_ns[i as usize] } else { 0 }).collect()
        };
        let mut size = gather(c.size);
        let mut source_row = order;
        let mut w = 0usize;
        for r in 0..n {
            let dup = w > 0 && run[w - 1] == run[r] && flow[w - 1] == flow[r] && seqv[w - 1] == seqv[r];
            let dst = if dup {
                let k = w - 1;
                let better = match (received[r], received[k]) {
                    (true, false) => true,
                    (false, true) => false,
                    (true, true) => (recv_ns[r], source_row[r]) < (recv_ns[k], source_row[k]),
                    (false, false) => source_row[r] < source_row[k],
                };
                if !better {
                    continue;
                }
                k
            } else {
                w += 1;
                w - 1
            };
            if dst != r {
                run[dst] = run[r];
                flow[dst] = flow[r];
                seqv[dst] = seqv[r];
                send_ns[dst] = send_ns[r];
                received[dst] = received[r];
                recv_ns[dst] = recv_ns[r];
                size[dst] = size[r];
                source_row[dst] = source_row[r];
            }
        }
        let m = w;
        for v in [&mut flow, &mut seqv, &mut send_ns, &mut recv_ns, &mut size] {
            v.truncate(m);
        }
        run.truncate(m);
        received.truncate(m);
        source_row.truncate(m);
        let streams = streams_of(&run, &flow);
        Ok(Media {
            run,
            flow,
            seq: seqv,
            send_ns,
            recv_ns,
            received,
            size,
            source_row,
            streams,
            duplicates: n - m,
            tcp_start_ns: runs.tcp_start_ns.to_vec(),
            tcp_end_ns: runs.tcp_end_ns.to_vec(),
        })
    }

    /// What `new(c, runs, false)` gives, from owned columns: rows strictly ascending by (run,
    /// flow, seq) (a simulator's rows, a sweep's runs one after another) become the prepared
    /// table as they are, with no copy (a lost packet's `recv_ns` set to 0, as `new` sets it);
    /// any other order, or duplicates, go through `new`.
    pub fn from_sorted(mut c: MediaOwned, runs: RunTimes<'_>) -> Result<Media> {
        let n = c.run.len();
        check_shape(n, [("flow_id", c.flow.len()), ("seq", c.seq.len()), ("send_ns", c.send_ns.len()), ("recv_ns", c.recv_ns.len()),
                        ("recv_ns", c.received.len()), ("size", c.size.len())], &runs)?;
        let n_runs = runs.tcp_start_ns.len();
        // the rows are walked again, one by one, only when a check fails (to name the first failing row)
        let (ok, ascending) = scan_owned(&c, n_runs);
        if !ok {
            for i in 0..n {
                check_row(i, (c.run[i] as usize) < n_runs, c.received[i], c.send_ns[i], c.recv_ns[i], c.size[i])?;
            }
        }
        check_runs(runs)?;
        if !ascending {
            let run: Vec<i64> = c.run.iter().map(|&r| r as i64).collect();
            let cols = MediaColumns {
                run: &run,
                flow: &c.flow,
                seq: &c.seq,
                send_ns: &c.send_ns,
                recv_ns: &c.recv_ns,
                received: &c.received,
                size: &c.size,
            };
            return Media::new(cols, runs, false);
        }
        for (v, &ok) in c.recv_ns.iter_mut().zip(&c.received) {
            if !ok {
                *v = 0;
            }
        }
        let streams = streams_of(&c.run, &c.flow);
        Ok(Media {
            run: c.run,
            flow: c.flow,
            seq: c.seq,
            send_ns: c.send_ns,
            recv_ns: c.recv_ns,
            received: c.received,
            size: c.size,
            source_row: (0..n as u32).collect(),
            streams,
            duplicates: 0,
            tcp_start_ns: runs.tcp_start_ns.to_vec(),
            tcp_end_ns: runs.tcp_end_ns.to_vec(),
        })
    }

    /// The table as the metrics read it (borrowed; see [`MediaView`]).
    pub fn view(&self) -> MediaView<'_> {
        MediaView {
            flow: &self.flow,
            seq: &self.seq,
            send_ns: &self.send_ns,
            recv_ns: &self.recv_ns,
            received: &self.received,
            size: &self.size,
            streams: &self.streams,
            tcp_start_ns: &self.tcp_start_ns,
            tcp_end_ns: &self.tcp_end_ns,
        }
    }

    pub fn len(&self) -> usize {
        self.seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    pub fn n_runs(&self) -> usize {
        self.tcp_start_ns.len()
    }

    /// [`MediaView::bounds`].
    pub fn bounds(&self, s: &Stream, w: Window) -> Option<(i64, i64)> {
        self.view().bounds(s, w)
    }

    /// [`MediaView::in_bounds`].
    #[inline]
    pub fn in_bounds(&self, row: usize, b: (i64, i64)) -> bool {
        self.view().in_bounds(row, b)
    }

    /// [`MediaView::owd`].
    #[inline]
    pub fn owd(&self, row: usize) -> Option<i64> {
        self.view().owd(row)
    }

    /// [`MediaView::window_mask`].
    pub fn window_mask(&self, w: Window) -> Vec<bool> {
        self.view().window_mask(w)
    }
}

impl MediaView<'_> {
    pub fn len(&self) -> usize {
        self.seq.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seq.is_empty()
    }

    pub fn n_runs(&self) -> usize {
        self.tcp_start_ns.len()
    }

    /// Inclusive send-time bounds of `w` for stream `s`; `None` when the stream has no window.
    pub fn bounds(&self, s: &Stream, w: Window) -> Option<(i64, i64)> {
        match w {
            Window::All => Some((i64::MIN, i64::MAX)),
            Window::Absolute { lo, hi } => Some((lo, hi)),
            Window::Overlap => {
                let start = self.tcp_start_ns[s.run as usize]?;
                Some((start, self.tcp_end_ns[s.run as usize].unwrap_or(i64::MAX)))
            }
        }
    }

    /// Rows `lo..hi` of stream `s` sent inside the window (rows are in seq order, not send order,
    /// so this is a mask, not a sub-range).
    #[inline]
    pub fn in_bounds(&self, row: usize, b: (i64, i64)) -> bool {
        let t = self.send_ns[row];
        t >= b.0 && t <= b.1
    }

    /// One-way delay (RFC 7679) of a received row.
    #[inline]
    pub fn owd(&self, row: usize) -> Option<i64> {
        if self.received[row] {
            Some(self.recv_ns[row] - self.send_ns[row])
        } else {
            None
        }
    }

    /// Per-row mask of the window.
    pub fn window_mask(&self, w: Window) -> Vec<bool> {
        let mut out = vec![false; self.len()];
        for s in self.streams {
            if let Some(b) = self.bounds(s, w) {
                for (r, o) in (s.lo..s.hi).zip(&mut out[s.lo..s.hi]) {
                    *o = self.in_bounds(r, b);
                }
            }
        }
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Test fixture: one run (code 0 unless given), rows as (flow, seq, send_ms, recv_ms or None).
    pub struct Fx {
        pub run: Vec<i64>,
        pub flow: Vec<i64>,
        pub seq: Vec<i64>,
        pub send: Vec<i64>,
        pub recv: Vec<i64>,
        pub rcvd: Vec<bool>,
        pub size: Vec<i64>,
    }

    impl Fx {
        pub fn new(rows: &[(i64, i64, i64, i64, Option<i64>)]) -> Fx {
            // (run, flow, seq, send_ms, recv_ms)
            Fx {
                run: rows.iter().map(|r| r.0).collect(),
                flow: rows.iter().map(|r| r.1).collect(),
                seq: rows.iter().map(|r| r.2).collect(),
                send: rows.iter().map(|r| r.3 * 1_000_000).collect(),
                recv: rows.iter().map(|r| r.4.unwrap_or(0) * 1_000_000).collect(),
                rcvd: rows.iter().map(|r| r.4.is_some()).collect(),
                size: rows.iter().map(|_| 80).collect(),
            }
        }
        pub fn cols(&self) -> MediaColumns<'_> {
            MediaColumns {
                run: &self.run,
                flow: &self.flow,
                seq: &self.seq,
                send_ns: &self.send,
                recv_ns: &self.recv,
                received: &self.rcvd,
                size: &self.size,
            }
        }
        pub fn media(&self, tcp: &[(Option<i64>, Option<i64>)]) -> Media {
            self.media_opt(tcp, false).unwrap()
        }
        pub fn media_opt(&self, tcp: &[(Option<i64>, Option<i64>)], unwrap: bool) -> Result<Media> {
            let s: Vec<Option<i64>> = tcp.iter().map(|t| t.0.map(|v| v * 1_000_000)).collect();
            let e: Vec<Option<i64>> = tcp.iter().map(|t| t.1.map(|v| v * 1_000_000)).collect();
            Media::new(self.cols(), RunTimes { tcp_start_ns: &s, tcp_end_ns: &e }, unwrap)
        }
    }

    /// A 20 ms CBR stream of `n` packets (run 0, flow 1) with the given per-packet OWD in ms
    /// (`None` = lost).
    pub fn cbr(owd_ms: &[Option<i64>]) -> Fx {
        let rows: Vec<_> = owd_ms
            .iter()
            .enumerate()
            .map(|(i, d)| (0, 1, i as i64, 20 * i as i64, d.map(|d| 20 * i as i64 + d)))
            .collect();
        Fx::new(&rows)
    }

    fn owned(fx: &Fx) -> MediaOwned {
        MediaOwned {
            run: fx.run.iter().map(|&r| r as u32).collect(),
            flow: fx.flow.clone(),
            seq: fx.seq.clone(),
            send_ns: fx.send.clone(),
            recv_ns: fx.recv.clone(),
            received: fx.rcvd.clone(),
            size: fx.size.clone(),
        }
    }

    fn same(a: &Media, b: &Media) {
        assert_eq!((&a.run, &a.flow, &a.seq, &a.send_ns, &a.recv_ns), (&b.run, &b.flow, &b.seq, &b.send_ns, &b.recv_ns));
        assert_eq!((&a.received, &a.size, &a.source_row, &a.streams), (&b.received, &b.size, &b.source_row, &b.streams));
        assert_eq!((a.duplicates, &a.tcp_start_ns, &a.tcp_end_ns), (b.duplicates, &b.tcp_start_ns, &b.tcp_end_ns));
    }

    #[test]
    fn from_sorted_is_new_without_unwrapping() {
        let s = [Some(1_000_000), None];
        let e = [Some(5_000_000), None];
        let runs = RunTimes { tcp_start_ns: &s, tcp_end_ns: &e };
        // sorted by (run, flow, seq); a lost packet's recv_ns holds garbage (an Arrow null's slot)
        let mut sorted = Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 2, 20, None), (0, 2, 1, 5, Some(9)), (1, 1, 7, 40, Some(41))]);
        sorted.recv[1] = 123_456;
        let a = Media::from_sorted(owned(&sorted), runs).unwrap();
        same(&a, &Media::new(sorted.cols(), runs, false).unwrap());
        assert_eq!((a.recv_ns[1], a.streams.len(), a.source_row.clone()), (0, 3, vec![0, 1, 2, 3]));
        // out of order, and a duplicate (seq 2 twice): sorted and de-duplicated as `new` does
        for fx in [
            Fx::new(&[(0, 1, 2, 20, Some(50)), (0, 1, 1, 0, Some(30)), (1, 1, 7, 40, Some(41))]),
            Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 2, 20, Some(50)), (0, 1, 2, 20, Some(45))]),
        ] {
            let a = Media::from_sorted(owned(&fx), runs).unwrap();
            same(&a, &Media::new(fx.cols(), runs, false).unwrap());
        }
        assert_eq!(Media::from_sorted(owned(&Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 1, 0, Some(20))])), runs).unwrap().duplicates, 1);
        // the same errors at the same rows: an unknown run code, a negative delay, a negative size
        let mut bad = vec![Fx::new(&[(0, 1, 1, 0, Some(30)), (2, 1, 1, 0, Some(3))]), Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 2, 50, Some(40))])];
        let mut neg = Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 2, 20, Some(40))]);
        neg.size[1] = -1;
        bad.push(neg);
        for fx in &bad {
            let want = Media::new(fx.cols(), runs, false).unwrap_err().to_string();
            assert_eq!(Media::from_sorted(owned(fx), runs).unwrap_err().to_string(), want);
            assert!(want.contains("row 1"), "{want}");
        }
    }

    #[test]
    fn sorts_and_keeps_first_copy_of_duplicates() {
        // seq 2 arrives twice (recv 70 and 55 ms): keep 55; seq 1 has a lost and a received copy.
        let fx = Fx::new(&[
            (0, 1, 2, 40, Some(70)),
            (0, 1, 1, 20, None),
            (0, 1, 0, 0, Some(10)),
            (0, 1, 2, 40, Some(55)),
            (0, 1, 1, 20, Some(35)),
        ]);
        let m = fx.media(&[(None, None)]);
        assert_eq!(m.seq, vec![0, 1, 2]);
        assert_eq!(m.recv_ns, vec![10_000_000, 35_000_000, 55_000_000]);
        assert_eq!(m.received, vec![true, true, true]);
        assert_eq!(m.source_row, vec![2, 4, 3]);
        assert_eq!(m.duplicates, 2);
        assert_eq!(m.streams.len(), 1);
    }

    #[test]
    fn sort_handles_scrambled_multi_run_input() {
        // Rows scrambled across two runs and two flows; expect (run, flow, seq) order.
        let fx = Fx::new(&[
            (1, 2, 1, 20, Some(25)),
            (0, 1, 1, 20, Some(25)),
            (1, 1, 0, 0, Some(5)),
            (0, 2, 0, 0, Some(5)),
            (1, 2, 0, 0, Some(5)),
            (0, 1, 0, 0, Some(5)),
        ]);
        let m = fx.media(&[(None, None), (None, None)]);
        let got: Vec<(u32, i64, i64)> = (0..m.len()).map(|r| (m.run[r], m.flow[r], m.seq[r])).collect();
        assert_eq!(got, vec![(0, 1, 0), (0, 1, 1), (0, 2, 0), (1, 1, 0), (1, 2, 0), (1, 2, 1)]);
        assert_eq!(m.source_row, vec![5, 1, 3, 2, 4, 0]);
    }

    #[test]
    fn streams_split_by_run_and_flow() {
        let fx = Fx::new(&[(1, 1, 0, 0, Some(5)), (0, 2, 0, 0, Some(5)), (0, 1, 0, 0, Some(5))]);
        let m = fx.media(&[(None, None), (None, None)]);
        let s: Vec<(u32, i64, usize, usize)> = m.streams.iter().map(|s| (s.run, s.flow, s.lo, s.hi)).collect();
        assert_eq!(s, vec![(0, 1, 0, 1), (0, 2, 1, 2), (1, 1, 2, 3)]);
    }

    #[test]
    fn unwraps_16bit_sequence_numbers() {
        // Send order: 65534, 65535, 0, 1; seq 0 arrives before 65535 (reordering in the network).
        let fx = Fx::new(&[
            (0, 1, 65534, 0, Some(10)),
            (0, 1, 0, 40, Some(45)),
            (0, 1, 65535, 20, Some(50)),
            (0, 1, 1, 60, Some(70)),
        ]);
        let m = fx.media_opt(&[(None, None)], true).unwrap();
        assert_eq!(m.seq, vec![65534, 65535, 65536, 65537]);
        // Without unwrapping, 0 and 1 sort before 65534.
        let m = fx.media(&[(None, None)]);
        assert_eq!(m.seq, vec![0, 1, 65534, 65535]);
    }

    #[test]
    fn unwrap_rejects_non_16bit() {
        let fx = Fx::new(&[(0, 1, 70000, 0, Some(1))]);
        let e = fx.media_opt(&[(None, None)], true).unwrap_err();
        assert!(matches!(e, MetricsError::InvalidValue { column: "seq", row: 0, .. }));
    }

    #[test]
    fn rejects_bad_values_naming_the_column() {
        let fx = Fx::new(&[(0, 1, 0, 10, Some(5))]);
        let e = fx.media_opt(&[(None, None)], false).unwrap_err();
        assert!(matches!(e, MetricsError::NegativeDelay { column: "recv_ns", row: 0, .. }));
        assert!(e.to_string().contains("recv_ns"));
        let fx = Fx::new(&[(3, 1, 0, 0, Some(5))]);
        let e = fx.media_opt(&[(None, None)], false).unwrap_err();
        assert!(matches!(e, MetricsError::InvalidValue { column: "run_id", .. }));
        let mut fx = Fx::new(&[(0, 1, 0, 0, Some(5))]);
        fx.size[0] = -1;
        let e = fx.media_opt(&[(None, None)], false).unwrap_err();
        assert!(matches!(e, MetricsError::InvalidValue { column: "size", .. }));
        fx.size[0] = 1;
        fx.flow.push(2);
        let e = fx.media_opt(&[(None, None)], false).unwrap_err();
        assert!(matches!(e, MetricsError::LengthMismatch { column: "flow_id", expected: 1, got: 2 }));
        let fx = Fx::new(&[(0, 1, 0, 0, Some(5))]);
        let e = fx.media_opt(&[(Some(10), Some(5))], false).unwrap_err();
        assert!(matches!(e, MetricsError::InvalidValue { column: "tcp_end_ns", .. }));
    }

    #[test]
    fn window_edges_are_inclusive() {
        // Packets sent at 0, 20, 40, 60, 80 ms; overlap window [20, 60] keeps 20, 40, 60.
        let fx = cbr(&[Some(5); 5]);
        let m = fx.media(&[(Some(20), Some(60))]);
        assert_eq!(m.window_mask(Window::Overlap), vec![false, true, true, true, false]);
        // Null tcp_end: open to the end; null tcp_start: nothing.
        let m = fx.media(&[(Some(20), None)]);
        assert_eq!(m.window_mask(Window::Overlap), vec![false, true, true, true, true]);
        let m = fx.media(&[(None, None)]);
        assert_eq!(m.window_mask(Window::Overlap), vec![false; 5]);
        assert_eq!(m.window_mask(Window::All), vec![true; 5]);
        let w = Window::Absolute { lo: 40_000_000, hi: 40_000_000 };
        assert_eq!(m.window_mask(w), vec![false, false, true, false, false]);
    }
}
