//! One run's `media_packets` prepared where they lie: a simulator's rows already are the prepared
//! form (sorted by flow and sequence number, no duplicate), so the metrics read its columns in
//! place ([`MediaView`]) instead of copies (a sweep's closing summary, `run_share`, issue 31).
use crate::error::Result;
use crate::table::{check_row, check_runs, check_shape, streams_by, Media, MediaColumns, MediaView, RunTimes, Stream};

/// Borrowed columns of one run's `media_packets` (every row of run code 0); `recv_ns` is only
/// meaningful where `received` is true.
#[derive(Debug, Clone, Copy)]
pub struct RunColumns<'a> {
    pub flow: &'a [i64],
    pub seq: &'a [i64],
    pub send_ns: &'a [i64],
    pub recv_ns: &'a [i64],
    pub received: &'a [bool],
    pub size: &'a [i64],
}

/// One run's prepared media (run code 0): its columns as they are, or `Media::new`'s copies.
#[derive(Debug)]
pub struct OneRun<'a> {
    rows: Rows<'a>,
    tcp_start_ns: [Option<i64>; 1],
    tcp_end_ns: [Option<i64>; 1],
}

#[derive(Debug)]
enum Rows<'a> {
    Borrowed(RunColumns<'a>, Vec<Stream>),
    Owned(Media),
}

avx2_dispatch! {
    /// Whether every row of `c` passes `check_row`, and whether the rows are strictly ascending
    /// by (flow, seq): one pass, without a branch a row.
    fn scan(c: &RunColumns<'_>) -> (bool, bool) = scan_any
}

#[inline(always)]
fn scan_any(c: &RunColumns<'_>) -> (bool, bool) {
    let n = c.flow.len();
    let (flow, seq, send, recv, received, size) = (&c.flow[..n], &c.seq[..n], &c.send_ns[..n], &c.recv_ns[..n], &c.received[..n], &c.size[..n]);
    let (mut ok, mut ascending) = (true, true);
    for i in 0..n {
        ok &= (!received[i] | (recv[i] >= send[i])) & (size[i] >= 0);
    }
    for i in 1..n {
        let (f0, s0, f1, s1) = (flow[i - 1], seq[i - 1], flow[i], seq[i]);
        ascending &= (f0 < f1) | ((f0 == f1) & (s0 < s1));
    }
    (ok, ascending)
}

impl<'a> OneRun<'a> {
    /// What `Media::new` (no unwrapping) gives of `c` as run 0 with the run's TCP times, the
    /// same errors at the same rows: rows strictly ascending by (flow, seq) (a simulator's) are
    /// the prepared table as they are, borrowed; any other order, or duplicates, go through
    /// `Media::new`. The view's streams and values are `Media::new`'s; a lost packet's
    /// `recv_ns` is not set to 0 in the borrowed form (see [`MediaView`]).
    pub fn new(c: RunColumns<'a>, tcp_start_ns: Option<i64>, tcp_end_ns: Option<i64>) -> Result<OneRun<'a>> {
        let n = c.flow.len();
        let (ts, te) = ([tcp_start_ns], [tcp_end_ns]);
        let runs = RunTimes { tcp_start_ns: &ts, tcp_end_ns: &te };
        check_shape(n, [("flow_id", n), ("seq", c.seq.len()), ("send_ns", c.send_ns.len()), ("recv_ns", c.recv_ns.len()),
                        ("recv_ns", c.received.len()), ("size", c.size.len())], &runs)?;
        let (ok, ascending) = scan(&c);
        // the rows are walked again, one by one, only when a check fails (to name the first failing row)
        if !ok {
            for i in 0..n {
                check_row(i, true, c.received[i], c.send_ns[i], c.recv_ns[i], c.size[i])?;
            }
        }
        check_runs(runs)?;
        let rows = if ascending {
            Rows::Borrowed(c, streams_by(n, |i| (0, c.flow[i])))
        } else {
            let run = vec![0i64; n];
            let cols = MediaColumns { run: &run, flow: c.flow, seq: c.seq, send_ns: c.send_ns, recv_ns: c.recv_ns, received: c.received, size: c.size };
            Rows::Owned(Media::new(cols, runs, false)?)
        };
        Ok(OneRun { rows, tcp_start_ns: ts, tcp_end_ns: te })
    }

    /// Whether the view reads the run's columns in place (they were the prepared form).
    pub fn is_borrowed(&self) -> bool {
        matches!(self.rows, Rows::Borrowed(..))
    }

    /// The prepared table as the metrics read it.
    pub fn view(&self) -> MediaView<'_> {
        match &self.rows {
            Rows::Owned(m) => m.view(),
            Rows::Borrowed(c, streams) => MediaView {
                flow: c.flow,
                seq: c.seq,
                send_ns: c.send_ns,
                recv_ns: c.recv_ns,
                received: c.received,
                size: c.size,
                streams,
                tcp_start_ns: &self.tcp_start_ns,
                tcp_end_ns: &self.tcp_end_ns,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::tests::Fx;
    use crate::table::Window;
    use crate::{delay, loss, rtp};

    const MS: i64 = 1_000_000;

    fn cols(fx: &Fx) -> RunColumns<'_> {
        RunColumns { flow: &fx.flow, seq: &fx.seq, send_ns: &fx.send, recv_ns: &fx.recv, received: &fx.rcvd, size: &fx.size }
    }

    /// Every metric the views feed, as bits: equal bits, equal metrics.
    fn metrics(m: MediaView<'_>) -> Vec<u64> {
        let mut out = Vec::new();
        for w in [Window::All, Window::Overlap, Window::Absolute { lo: 20 * MS, hi: 60 * MS }] {
            out.extend(rtp::rtp_summary(m, w).iter().flat_map(|s| [s.sent, s.received, s.bytes_received, s.duration_ns as u64]));
            let bases = loss::base_delay(m, 30 * MS).unwrap();
            out.extend(bases.iter().map(|b| b.owd_ns.map_or(u64::MAX, |v| v as u64)));
            out.extend(loss::burst_stats_jbs(m, &bases, &[0, 5 * MS, 40 * MS], w).iter().flat_map(|s| [s.packets, s.lost, s.p.to_bits(), s.q.to_bits()]));
            out.extend(delay::owd_quantiles_s_by_stream(m, w, &[0.5, 0.99, 0.0]).unwrap().iter().map(|q| q.to_bits()));
            let (v, g) = delay::owd_s_with_stream(m, w);
            out.extend(v.iter().map(|x| x.to_bits()).chain(g.iter().map(|&g| u64::from(g))));
            out.extend(delay::ipdv(m, w).1.iter().map(|&d| d as u64));
            out.extend(delay::interarrival_jitter_final(m, w).iter().map(|j| j.to_bits()));
            out.extend(m.window_mask(w).iter().map(|&b| u64::from(b)));
        }
        out
    }

    #[test]
    fn sorted_rows_are_read_in_place_with_new_s_streams_and_metrics() {
        // flows 3 and 7 of one run, sorted by (flow, seq); the lost packet's slot holds garbage
        // (an Arrow null's value), which `Media::new` sets to 0 and a borrowed view keeps
        let mut fx = Fx::new(&[(0, 3, 1, 0, Some(12)), (0, 3, 2, 20, None), (0, 3, 3, 40, Some(75)), (0, 7, 1, 5, Some(6)), (0, 7, 4, 65, Some(90))]);
        fx.recv[1] = i64::MIN;
        let one = OneRun::new(cols(&fx), Some(10 * MS), Some(50 * MS)).unwrap();
        assert!(one.is_borrowed());
        let v = one.view();
        assert_eq!((v.send_ns.as_ptr(), v.recv_ns.as_ptr(), v.flow.as_ptr()), (fx.send.as_ptr(), fx.recv.as_ptr(), fx.flow.as_ptr()));
        let m = fx.media(&[(Some(10), Some(50))]);
        assert_eq!((m.recv_ns[1], v.recv_ns[1]), (0, i64::MIN));
        assert_eq!(v.streams, &m.streams[..]);
        assert_eq!(v.streams.iter().map(|s| (s.run, s.flow, s.lo, s.hi)).collect::<Vec<_>>(), [(0, 3, 0, 3), (0, 7, 3, 5)]);
        assert_eq!(metrics(v), metrics(m.view()));
        // flow 3's OWDs 12 and 35 ms, flow 7's 1 and 25 ms: medians half way (type 7)
        let q = delay::owd_quantiles_s_by_stream(v, Window::All, &[0.5]).unwrap();
        assert_eq!(q, [0.012 + 0.5 * (0.035 - 0.012), 0.001 + 0.5 * (0.025 - 0.001)]);
    }

    #[test]
    fn other_rows_go_through_new() {
        let runs = [(Some(10), None)];
        for fx in [
            // out of order; a duplicate (seq 2 twice, the earlier arrival kept); flows descending
            Fx::new(&[(0, 3, 2, 20, Some(50)), (0, 3, 1, 0, Some(30))]),
            Fx::new(&[(0, 3, 1, 0, Some(30)), (0, 3, 2, 20, Some(50)), (0, 3, 2, 20, Some(45))]),
            Fx::new(&[(0, 7, 1, 0, Some(30)), (0, 3, 1, 0, Some(50))]),
        ] {
            let one = OneRun::new(cols(&fx), Some(10 * MS), None).unwrap();
            assert!(!one.is_borrowed());
            let m = fx.media(&runs);
            assert_eq!((one.view().seq, one.view().recv_ns, one.view().streams), (&m.seq[..], &m.recv_ns[..], &m.streams[..]));
            assert_eq!(metrics(one.view()), metrics(m.view()));
        }
    }

    #[test]
    fn the_same_errors_at_the_same_rows_as_new() {
        let mut neg = Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 2, 20, Some(40))]);
        neg.size[1] = -1;
        let mut short = Fx::new(&[(0, 1, 1, 0, Some(30))]);
        short.size.clear();
        for (fx, tcp) in [
            (Fx::new(&[(0, 1, 1, 0, Some(30)), (0, 1, 2, 50, Some(40))]), (None, None)),
            (neg, (None, None)),
            (Fx::new(&[(0, 1, 1, 0, Some(30))]), (Some(50), Some(40))),
            (short, (None, None)),
        ] {
            let want = fx.media_opt(&[tcp], false).unwrap_err().to_string();
            let got = OneRun::new(cols(&fx), tcp.0.map(|t| t * MS), tcp.1.map(|t| t * MS)).unwrap_err().to_string();
            assert_eq!(got, want);
        }
    }

    /// A run's flows as streams of one run equal the same flows as runs of their own (each its
    /// own run code, the same TCP times): the by-stream OWD quantiles and values equal the
    /// by-run ones bit for bit (a sweep's closing summary gave each flow a run code before).
    #[test]
    fn by_stream_equals_by_run_with_a_run_a_flow() {
        let mut rows = Vec::new();
        for (code, flow) in [(0i64, 2i64), (1, 5), (2, 9)] {
            for i in 0..41i64 {
                let owd = (i * 29 + flow * 7) % 31 + 1;
                rows.push((code, flow, i, 10 * i, (i % 7 != 3).then_some(10 * i + owd)));
            }
        }
        let by_run = Fx::new(&rows);
        let mut one = Fx::new(&rows);
        one.run.fill(0);
        let t = [(Some(60), Some(300)); 3];
        let m = by_run.media(&t);
        let o = OneRun::new(cols(&one), Some(60 * MS), Some(300 * MS)).unwrap();
        let probs = [0.5, 0.99, 0.1, 1.0];
        for w in [Window::All, Window::Overlap] {
            let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(delay::owd_quantiles_s_by_stream(o.view(), w, &probs).unwrap()), bits(delay::owd_quantiles_s_by_run(&m, w, &probs).unwrap()));
            let (a, b) = (delay::owd_s_with_stream(o.view(), w), delay::owd_s_with_run(&m, w));
            // flow 9: 41 packets, 6 lost (i % 7 == 3); sent in [60, 300] ms: i 6..=30, 3 of them lost
            assert_eq!(a.1.iter().filter(|&&g| g == 2).count(), if w == Window::All { 35 } else { 22 });
            assert_eq!((bits(a.0), a.1), (bits(b.0), b.1));
        }
    }
}
