//! Delay metrics: one-way delay (RFC 7679), IPDV with the consecutive-packet selection
//! (RFC 3393 §2.4 selection function; RFC 5481 §4.2 "IPDV" form) and RFC 3550 §6.4.1
//! interarrival jitter.
use crate::error::Result;
use crate::stats;
use crate::table::{MediaView, Stream, Window};

/// Calls `f(row, owd_ns)` for every received packet sent inside the window, in row order.
pub fn visit_owd<'m>(m: impl Into<MediaView<'m>>, w: Window, mut f: impl FnMut(usize, i64)) {
    let m = &m.into();
    for s in m.streams {
        let Some(b) = m.bounds(s, w) else { continue };
        for r in s.lo..s.hi {
            if m.received[r] && m.in_bounds(r, b) {
                f(r, m.recv_ns[r] - m.send_ns[r]);
            }
        }
    }
}

/// `visit_owd`'s values in seconds (/ 1e9) and each one's run code, in row order (the values a
/// run hands on to be pooled with other runs' by `stats::grouped_quantiles`).
pub fn owd_s_with_run<'m>(m: impl Into<MediaView<'m>>, w: Window) -> (Vec<f64>, Vec<u32>) {
    owd_s_grouped(&m.into(), w, |_, s| s.run)
}

/// `visit_owd`'s values in seconds (/ 1e9) and each one's stream (its index in `m.streams`), in
/// row order: [`owd_s_with_run`] where each stream is a run of its own.
pub fn owd_s_with_stream<'m>(m: impl Into<MediaView<'m>>, w: Window) -> (Vec<f64>, Vec<u32>) {
    owd_s_grouped(&m.into(), w, |k, _| k as u32)
}

/// `visit_owd`'s values in seconds and each one's `group(stream index, stream)`.
fn owd_s_grouped(m: &MediaView<'_>, w: Window, group: impl Fn(usize, &Stream) -> u32) -> (Vec<f64>, Vec<u32>) {
    let mut vals = Vec::with_capacity(m.len());
    let mut grp = Vec::with_capacity(m.len());
    for (k, s) in m.streams.iter().enumerate() {
        let Some(b) = m.bounds(s, w) else { continue };
        let g = group(k, s);
        for r in s.lo..s.hi {
            if m.received[r] && m.in_bounds(r, b) {
                vals.push((m.recv_ns[r] - m.send_ns[r]) as f64 / 1e9);
                grp.push(g);
            }
        }
    }
    (vals, grp)
}

avx2_dispatch! {
    /// The OWDs of rows `lo..hi` received and sent inside `b`, appended to `buf` in row order:
    /// every row written, the next one kept where this one counts (no branch on a lost packet).
    fn gather_owd(m: &MediaView<'_>, lo: usize, hi: usize, b: (i64, i64), buf: &mut Vec<i64>) -> () = gather_owd_any
}

#[inline(always)]
fn gather_owd_any(m: &MediaView<'_>, lo: usize, hi: usize, b: (i64, i64), buf: &mut Vec<i64>) {
    let (send, recv, received) = (&m.send_ns[lo..hi], &m.recv_ns[lo..hi], &m.received[lo..hi]);
    let at = buf.len();
    buf.resize(at + send.len() + 1, 0);
    let out = &mut buf[at..];
    let mut k = 0;
    for i in 0..send.len() {
        let t = send[i];
        out[k] = recv[i].wrapping_sub(t);
        k += usize::from(received[i] & (t >= b.0) & (t <= b.1));
    }
    buf.truncate(at + k);
}

/// Per run code (`0..m.n_runs()`), the quantiles `probs` of its streams' OWDs pooled, in
/// seconds (`visit_owd`'s values / 1e9), run-major: what `stats::grouped_quantiles` gives of those
/// seconds grouped by `m.run`, from the runs' rows (contiguous: sorted by run) one run at a time,
/// selected as integers (`stats::quantiles_mapped`), without the values' and groups' vectors.
pub fn owd_quantiles_s_by_run<'m>(m: impl Into<MediaView<'m>>, w: Window, probs: &[f64]) -> Result<Vec<f64>> {
    let m = &m.into();
    let mut out = Vec::with_capacity(m.n_runs() * probs.len());
    let mut buf: Vec<i64> = Vec::new();
    let mut streams = m.streams.iter().peekable();
    for run in 0..m.n_runs() as u32 {
        buf.clear();
        while let Some(s) = streams.next_if(|s| s.run == run) {
            let Some(b) = m.bounds(s, w) else { continue };
            gather_owd(m, s.lo, s.hi, b, &mut buf);
        }
        out.extend(stats::quantiles_mapped(&mut buf, probs, |d| d as f64 / 1e9)?);
    }
    Ok(out)
}

/// Per stream (`m.streams`' order), the quantiles `probs` of its OWDs in seconds, stream-major:
/// [`owd_quantiles_s_by_run`] where each stream is a run of its own (one run's flows apart).
pub fn owd_quantiles_s_by_stream<'m>(m: impl Into<MediaView<'m>>, w: Window, probs: &[f64]) -> Result<Vec<f64>> {
    let m = &m.into();
    let mut out = Vec::with_capacity(m.streams.len() * probs.len());
    let mut buf: Vec<i64> = Vec::new();
    for s in m.streams {
        buf.clear();
        if let Some(b) = m.bounds(s, w) {
            gather_owd(m, s.lo, s.hi, b, &mut buf);
        }
        out.extend(stats::quantiles_mapped(&mut buf, probs, |d| d as f64 / 1e9)?);
    }
    Ok(out)
}

/// Rows and OWD (ns) of every received packet sent inside the window, in prepared row order.
pub fn owd<'m>(m: impl Into<MediaView<'m>>, w: Window) -> (Vec<u32>, Vec<i64>) {
    let m = &m.into();
    let mut rows = Vec::new();
    let mut vals = Vec::new();
    visit_owd(m, w, |r, d| {
        rows.push(r as u32);
        vals.push(d);
    });
    (rows, vals)
}

/// Calls `f(row, ipdv_ns)` for every IPDV pair (see [`ipdv`]), on the row of the later packet.
pub fn visit_ipdv<'m>(m: impl Into<MediaView<'m>>, w: Window, mut f: impl FnMut(usize, i64)) {
    let m = &m.into();
    for s in m.streams {
        let Some(b) = m.bounds(s, w) else { continue };
        for r in s.lo + 1..s.hi {
            let p = r - 1;
            if m.received[r]
                && m.received[p]
                && m.seq[r] == m.seq[p] + 1
                && m.in_bounds(r, b)
                && m.in_bounds(p, b)
            {
                f(r, (m.recv_ns[r] - m.send_ns[r]) - (m.recv_ns[p] - m.send_ns[p]));
            }
        }
    }
}

/// IPDV(i+1) = OWD(i+1) − OWD(i) for every pair of consecutive sequence numbers that were both
/// received and both sent inside the window; reported on the row of the later packet.
/// Sequence order decides the pairs (not arrival order), as RFC 3393 §2.4 defines the selection
/// on the sending order.
pub fn ipdv<'m>(m: impl Into<MediaView<'m>>, w: Window) -> (Vec<u32>, Vec<i64>) {
    let m = &m.into();
    let mut rows = Vec::new();
    let mut vals = Vec::new();
    visit_ipdv(m, w, |r, d| {
        rows.push(r as u32);
        vals.push(d);
    });
    (rows, vals)
}

/// RFC 3550 §6.4.1 interarrival jitter, in the stream's arrival order (received packets sent in
/// the window, ordered by recv_ns). Send time stands in for the RTP timestamp, so the unit is ns.
/// Returns (rows in arrival order, J after each packet) and the final J per stream (NaN when the
/// stream has no received packet in the window; 0 after one packet).
pub struct Jitter {
    pub rows: Vec<u32>,
    pub jitter_ns: Vec<f64>,
    pub final_ns: Vec<f64>,
}

pub fn interarrival_jitter<'m>(m: impl Into<MediaView<'m>>, w: Window) -> Jitter {
    let m = &m.into();
    jitter_impl(m, w, true)
}

/// Only the final J per stream (no per-packet series).
pub fn interarrival_jitter_final<'m>(m: impl Into<MediaView<'m>>, w: Window) -> Vec<f64> {
    let m = &m.into();
    jitter_impl(m, w, false).final_ns
}

fn jitter_impl(m: &MediaView<'_>, w: Window, series: bool) -> Jitter {
    let mut rows = Vec::new();
    let mut jit = Vec::new();
    let mut finals = Vec::with_capacity(m.streams.len());
    let mut arr: Vec<u32> = Vec::new();
    for s in m.streams {
        arr.clear();
        if let Some(b) = m.bounds(s, w) {
            arr.extend((s.lo..s.hi).filter(|&r| m.received[r] && m.in_bounds(r, b)).map(|r| r as u32));
        }
        let key = |r: u32| (m.recv_ns[r as usize], m.send_ns[r as usize], r);
        if !arr.windows(2).all(|p| key(p[0]) <= key(p[1])) {
            arr.sort_unstable_by_key(|&r| key(r));
        }
        let mut j = 0.0f64;
        for (k, &r) in arr.iter().enumerate() {
            if k > 0 {
                let p = arr[k - 1] as usize;
                let r = r as usize;
                // D(i-1, i) = (R_i − R_{i−1}) − (S_i − S_{i−1}); J += (|D| − J) / 16 (RFC 3550 §6.4.1).
                let d = (m.recv_ns[r] - m.recv_ns[p]) - (m.send_ns[r] - m.send_ns[p]);
                j += ((d.abs() as f64) - j) / 16.0;
            }
            if series {
                rows.push(r);
                jit.push(j);
            }
        }
        finals.push(if arr.is_empty() { f64::NAN } else { j });
    }
    Jitter { rows, jitter_ns: jit, final_ns: finals }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::tests::{cbr, Fx};

    const MS: i64 = 1_000_000;

    #[test]
    fn owd_and_ipdv_consecutive_selection() {
        // OWDs 10, 30, lost, 25, 5 ms: pairs (0,1) and (3,4) only → IPDV +20 and −20 ms.
        let fx = cbr(&[Some(10), Some(30), None, Some(25), Some(5)]);
        let m = fx.media(&[(None, None)]);
        let (rows, d) = owd(&m, Window::All);
        assert_eq!(rows, vec![0, 1, 3, 4]);
        assert_eq!(d, vec![10 * MS, 30 * MS, 25 * MS, 5 * MS]);
        let (rows, v) = ipdv(&m, Window::All);
        assert_eq!(rows, vec![1, 4]);
        assert_eq!(v, vec![20 * MS, -20 * MS]);
    }

    /// Three runs (two flows each in run 0, none in run 1), lost and out-of-window rows: each run's
    /// pooled quantiles equal `grouped_quantiles` of `visit_owd`'s seconds grouped by run.
    #[test]
    fn owd_quantiles_by_run_equal_grouped_quantiles_of_the_values() {
        let mut rows = Vec::new();
        for (run, flows) in [(0i64, 2i64), (2, 1)] {
            for flow in 0..flows {
                for i in 0..57i64 {
                    let owd = (i * 37 + flow * 11 + run) % 23 + 1;
                    rows.push((run, flow, i, 10 * i, (i % 5 != 2).then_some(10 * i + owd)));
                }
            }
        }
        let m = Fx::new(&rows).media(&[(Some(100), Some(400)), (None, None), (Some(50), None)]);
        let probs = [0.99, 0.5, 0.0, 1.0, 0.25];
        for w in [Window::All, Window::Overlap, Window::Absolute { lo: 120 * MS, hi: 300 * MS }] {
            let (mut vals, mut grp) = (Vec::new(), Vec::new());
            visit_owd(&m, w, |r, d| {
                vals.push(d as f64 / 1e9);
                grp.push(m.run[r]);
            });
            let want = stats::grouped_quantiles(&vals, &grp, m.n_runs(), &probs).unwrap().0;
            let got = owd_quantiles_s_by_run(&m, w, &probs).unwrap();
            assert_eq!(got.iter().map(|q| q.to_bits()).collect::<Vec<_>>(), want.iter().map(|q| q.to_bits()).collect::<Vec<_>>(), "{w:?}");
            assert!(got[..5].iter().all(|q| q.is_finite()) && got[5..10].iter().all(|q| q.is_nan()));
        }
    }

    #[test]
    fn ipdv_needs_both_packets_in_window_and_consecutive_seq() {
        // Window [20, 60] ms keeps seq 1..3; pair (0,1) is out because packet 0 is outside.
        let fx = cbr(&[Some(10), Some(12), Some(15), Some(11), Some(30)]);
        let m = fx.media(&[(Some(20), Some(60))]);
        let (rows, v) = ipdv(&m, Window::Overlap);
        assert_eq!(rows, vec![2, 3]);
        assert_eq!(v, vec![3 * MS, -4 * MS]);
        // A gap in the sequence numbers (seq 5 never in the table) breaks the pair.
        let fx = Fx::new(&[(0, 1, 4, 80, Some(90)), (0, 1, 6, 120, Some(140))]);
        assert_eq!(ipdv(&fx.media(&[(None, None)]), Window::All).0, Vec::<u32>::new());
    }

    #[test]
    fn ipdv_pairs_by_sequence_even_when_arrivals_are_reordered() {
        // seq 1 (OWD 50) arrives after seq 2 (OWD 5): IPDV(1) = 50 − 10, IPDV(2) = 5 − 50.
        let fx = Fx::new(&[(0, 1, 0, 0, Some(10)), (0, 1, 2, 40, Some(45)), (0, 1, 1, 20, Some(70))]);
        let m = fx.media(&[(None, None)]);
        assert_eq!(ipdv(&m, Window::All).1, vec![40 * MS, -45 * MS]);
    }

    #[test]
    fn rfc3550_jitter_hand_computed_in_arrival_order() {
        // Sent 0, 20, 40 ms; arrive 10, 60 (seq 2), 70 (seq 1).
        // Arrival order: seq0 (S0,R10), seq2 (S40,R60), seq1 (S20,R70).
        // D1 = (60−10) − (40−0) = 10 ms → J = 10/16 = 0.625 ms.
        // D2 = (70−60) − (20−40) = 30 ms → J = 0.625 + (30 − 0.625)/16 = 2.4609375 ms.
        let fx = Fx::new(&[(0, 1, 0, 0, Some(10)), (0, 1, 1, 20, Some(70)), (0, 1, 2, 40, Some(60))]);
        let m = fx.media(&[(None, None)]);
        let j = interarrival_jitter(&m, Window::All);
        assert_eq!(j.rows, vec![0, 2, 1]);
        assert_eq!(j.jitter_ns, vec![0.0, 625_000.0, 2_460_937.5]);
        assert_eq!(j.final_ns, vec![2_460_937.5]);
        assert_eq!(interarrival_jitter_final(&m, Window::All), vec![2_460_937.5]);
    }

    #[test]
    fn jitter_of_empty_and_all_lost_streams() {
        let fx = cbr(&[None, None]);
        let m = fx.media(&[(None, None)]);
        let j = interarrival_jitter(&m, Window::All);
        assert!(j.final_ns[0].is_nan());
        assert!(j.rows.is_empty());
        let fx = cbr(&[Some(3)]);
        assert_eq!(interarrival_jitter(&fx.media(&[(None, None)]), Window::All).final_ns, vec![0.0]);
    }
}
