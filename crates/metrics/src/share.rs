//! One run's share of a sweep's closing summary (`run_share`, issue 31) where the run's rows
//! already are the prepared form (a simulator's: sorted by flow and seq, no duplicate), a stream
//! at a time in two passes: the checks of [`OneRun::new`](crate::OneRun::new) with the stream's
//! least OWDs (its base delay), every row's OWD written to a buffer; then, the base known, the
//! rows' codes (outside the window, or how many buffers a row is late for) from that buffer (in
//! L2), one walk over them counting the rows sent and received and the pairs of late buffers of
//! [`burst_stats_jbs`](crate::loss::burst_stats_jbs), the OWDs of the rows received in the window
//! kept in place for their quantiles. The general functions walked the run's columns six times
//! (the check, the RTP counts twice, the bases, the E-model, the OWDs), each streaming them from
//! L3 (a 75k-row run's are ~3 MB). The same values, bit for bit, as `OneRun`, `rtp_summary`,
//! `base_delay`, `burst_stats_jbs` and `owd_quantiles_s_by_stream` / `owd_s_with_stream` (the
//! tests compare them); any other input goes to those functions.
use crate::error::Result;
use crate::loss::{base_of, pre_window, Base, BurstStats, JbOrder};
use crate::one_run::RunColumns;
use crate::stats;
use crate::table::{streams_by, MediaView, Stream, Window};

/// A run's share: per stream (ascending flows), the rows sent and received in the window, the base
/// delay, the loss statistics at each buffer (stream-major) and the OWD quantiles (stream-major)
/// or, without probabilities, the OWD values in seconds and each one's stream.
#[derive(Debug)]
pub struct Share {
    pub streams: Vec<Stream>,
    pub sent: Vec<u64>,
    pub received: Vec<u64>,
    pub bases: Vec<Base>,
    pub bursts: Vec<BurstStats>,
    pub owd: std::result::Result<Vec<f64>, (Vec<f64>, Vec<u32>)>,
}

/// More buffers than this: the general path (a row's count of late buffers by 8 compares).
const MAX_JBS: usize = 8;
/// A row's code outside the window (a count of late buffers is at most `MAX_JBS`).
const OUT: u8 = u8::MAX;

/// The share of the rows `c` (run 0, its TCP times), or None where the two passes do not apply:
/// no rows, columns of different lengths, rows not strictly ascending by (flow, seq) or failing a
/// row check, TCP times out of order, a base window not positive, more than 8 buffers, a
/// probability outside [0, 1]. Those take the general functions, which give the same values or
/// the same error.
#[allow(clippy::too_many_arguments)]
pub fn share(c: RunColumns<'_>, tcp_start_ns: Option<i64>, tcp_end_ns: Option<i64>, w: Window, pre_ns: i64, jbs_ns: &[i64],
             probs: Option<&[f64]>) -> Option<Result<Share>> {
    let n = c.flow.len();
    let lens = [c.seq.len(), c.send_ns.len(), c.recv_ns.len(), c.received.len(), c.size.len()];
    if n == 0 || n > u32::MAX as usize || lens.iter().any(|&l| l != n) || pre_ns <= 0 || jbs_ns.len() > MAX_JBS {
        return None;
    }
    if let (Some(s), Some(e)) = (tcp_start_ns, tcp_end_ns) {
        if e < s {
            return None;
        }
    }
    if probs.is_some_and(|p| p.iter().any(|p| !(0.0..=1.0).contains(p))) {
        return None; // the error after the rows' checks: the general path's
    }
    // the streams as if sorted (a bisection each); checked by the first pass, which reads every row
    let streams = streams_by(n, |i| (0, c.flow[i]));
    let (ts, te) = ([tcp_start_ns], [tcp_end_ns]);
    let m = MediaView { flow: c.flow, seq: c.seq, send_ns: c.send_ns, recv_ns: c.recv_ns, received: c.received, size: c.size, streams: &streams, tcp_start_ns: &ts, tcp_end_ns: &te };
    let pre = pre_window(tcp_start_ns, pre_ns);
    // a stream's OWDs, every row's (the second pass reads them where the first wrote them, in
    // L2), and its codes for whole chunks: buffers as long as the longest stream
    let longest = streams.iter().map(|s| s.hi - s.lo).max().unwrap_or(0);
    // kept from call to call (a sweep's worker: a run's after another's), grown where too short:
    // each part written before it is read, so not zeroed each time (a 75k-row run's: 0.7 MB)
    BUFFERS.with_borrow_mut(|(buf, code)| {
        if buf.len() < longest {
            buf.resize(longest, 0);
            code.resize(longest.next_multiple_of(CH), 0);
        }
        streams_pass(&c, &m, pre, w, jbs_ns, probs, buf, code)
    })
    .map(|r| r.map(|(sent, received, bases, bursts, owd)| Share { streams, sent, received, bases, bursts, owd }))
}

thread_local! {
    /// `share`'s buffers: every row's OWD of a stream, and the rows' codes.
    static BUFFERS: std::cell::RefCell<(Vec<i64>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

type Streams = (Vec<u64>, Vec<u64>, Vec<Base>, Vec<BurstStats>, std::result::Result<Vec<f64>, (Vec<f64>, Vec<u32>)>);

/// `share`'s two passes, a stream at a time (see the module's note); None where a row fails the first.
#[allow(clippy::too_many_arguments)]
fn streams_pass(c: &RunColumns<'_>, m: &MediaView<'_>, pre: Option<(i64, i64)>, w: Window, jbs_ns: &[i64], probs: Option<&[f64]>, buf: &mut [i64],
                code: &mut [u8]) -> Option<Result<Streams>> {
    let ns = m.streams.len();
    let jo = JbOrder::new(jbs_ns);
    let (mut sent, mut received, mut bases) = (Vec::with_capacity(ns), Vec::with_capacity(ns), Vec::with_capacity(ns));
    let mut bursts = Vec::with_capacity(ns * jbs_ns.len());
    let mut pairs = vec![0u64; jo.k1 * jo.k1];
    let mut limit = vec![i64::MAX; jbs_ns.len()];
    let mut l8 = [i64::MAX; MAX_JBS];
    let mut quantiles = Vec::with_capacity(ns * probs.map_or(0, <[f64]>::len));
    let (mut vals, mut grp) = (Vec::new(), Vec::new());
    for (k, s) in m.streams.iter().enumerate() {
        // the first pass; rows that fail it (this stream's or a later one's) take the general path
        let (ok, least) = check_least(c, s.lo, s.hi, pre, buf);
        if !ok {
            return None;
        }
        let b = base_of(least.0, least.1);
        bases.push(b);
        pairs.iter_mut().for_each(|x| *x = 0);
        jo.limits(&b, &mut limit);
        l8[..limit.len()].copy_from_slice(&limit);
        let (n, got, first, kept) = match m.bounds(s, w) {
            Some(bd) => rows_in_window(m, s.lo, s.hi, &Codes { bd, l8, nj: jbs_ns.len() as u8 }, &mut pairs, buf, code),
            None => (0, 0, 0, 0),
        };
        sent.push(n);
        received.push(got);
        jo.stats(&pairs, n, first, &mut bursts);
        match probs {
            Some(probs) => match stats::quantiles_mapped(&mut buf[..kept], probs, |d| d as f64 / 1e9) {
                Ok(q) => quantiles.extend(q),
                Err(e) => return Some(Err(e)),
            },
            None => {
                vals.extend(buf[..kept].iter().map(|&d| d as f64 / 1e9));
                grp.extend(std::iter::repeat_n(k as u32, kept));
            }
        }
    }
    let owd = if probs.is_some() { Ok(quantiles) } else { Err((vals, grp)) };
    Some(Ok((sent, received, bases, bursts, owd)))
}

avx2_dispatch! {
    /// Whether rows `lo..hi` pass `check_row` and are strictly ascending by (flow, seq), the row
    /// before `lo` included (`one_run`'s `scan`), and their least OWDs as `loss::least_owds`
    /// finds them (received in `pre`, received at all); each row's OWD (its slot's, when lost)
    /// written to `owd`. Without a branch a row.
    fn check_least(c: &RunColumns<'_>, lo: usize, hi: usize, pre: Option<(i64, i64)>, owd: &mut [i64]) -> (bool, (Option<i64>, Option<i64>)) = check_least_any
}

#[inline(always)]
fn check_least_any(c: &RunColumns<'_>, lo: usize, hi: usize, pre: Option<(i64, i64)>, owd: &mut [i64]) -> (bool, (Option<i64>, Option<i64>)) {
    // each row against the one before (rows a..hi-1 against a+1..hi): two loads a column where
    // reading one slice (`one_run`'s `scan`) had the compiler shift the previous vector in
    let a = lo.max(1) - 1;
    let (f0, f1, s0, s1) = (&c.flow[a..hi - 1], &c.flow[a + 1..hi], &c.seq[a..hi - 1], &c.seq[a + 1..hi]);
    let mut ascending = true;
    for i in 0..f0.len() {
        ascending &= (f0[i] < f1[i]) | ((f0[i] == f1[i]) & (s0[i] < s1[i]));
    }
    let (send, recv, received, size) = (&c.send_ns[lo..hi], &c.recv_ns[lo..hi], &c.received[lo..hi], &c.size[lo..hi]);
    let owd = &mut owd[..send.len()];
    let (p0, p1) = pre.unwrap_or((0, 0));
    let (mut ok, mut all, mut n_all, mut least_pre, mut n_pre) = (true, i64::MAX, 0u64, i64::MAX, 0u64);
    for i in 0..send.len() {
        let (t, got) = (recv[i], received[i]);
        ok &= (!got | (t >= send[i])) & (size[i] >= 0);
        let d = t.wrapping_sub(send[i]);
        owd[i] = d;
        let in_pre = got & (t < p1) & (t >= p0);
        all = all.min(if got { d } else { i64::MAX });
        n_all += u64::from(got);
        least_pre = least_pre.min(if in_pre { d } else { i64::MAX });
        n_pre += u64::from(in_pre);
    }
    (ok & ascending, ((n_pre > 0).then_some(least_pre), (n_all > 0).then_some(all)))
}

/// Rows a chunk of the walk: their codes compared with the previous row's at once.
const CH: usize = 8;

/// A received row's code in the window, late for the least buffer: its count is made in the walk.
const LATE: u8 = u8::MAX - 1;

/// What a row's code takes: the window `bd`, a stream's `nj` limits ascending in `l8` (the rest
/// i64::MAX: no delay is above it).
struct Codes {
    bd: (i64, i64),
    l8: [i64; MAX_JBS],
    nj: u8,
}

impl Codes {
    /// The count of late buffers of a received row of OWD `d`: the limits below it.
    #[inline(always)]
    fn late(&self, d: i64) -> u8 {
        self.l8.iter().map(|&l| u8::from(l < d)).sum()
    }
}

/// `late_pairs`' walk: consecutive rows in the window counted by (code before, code after), a
/// run of equal codes in `same`.
struct Walk {
    n: u64,
    first: usize,
    prev: usize,
    same: u64,
}

impl Walk {
    #[inline(always)]
    fn push(&mut self, code: u8, pairs: &mut [u64], k1: usize) {
        if code == OUT {
            return;
        }
        let k = usize::from(code);
        if self.n == 0 {
            self.first = k;
        } else if k == self.prev {
            self.same += 1;
        } else {
            pairs[self.prev * k1 + self.prev] += self.same;
            self.same = 0;
            pairs[self.prev * k1 + k] += 1;
        }
        self.prev = k;
        self.n += 1;
    }
}

avx2_dispatch! {
    /// Rows `lo..hi` sent inside `cd.bd`, their OWDs in `buf` (`check_least`'s): how many, how
    /// many received, the first one's count of late buffers (`loss::late_pairs`, its pairs
    /// counted into `pairs`), and how many OWDs were kept at the start of `buf`
    /// (`delay::gather_owd`'s, in row order). `code`: room for the rows' codes, whole chunks.
    fn rows_in_window(m: &MediaView<'_>, lo: usize, hi: usize, cd: &Codes, pairs: &mut [u64], buf: &mut [i64], code: &mut [u8]) -> (u64, u64, usize, usize) = rows_in_window_any
}

#[inline(always)]
fn rows_in_window_any(m: &MediaView<'_>, lo: usize, hi: usize, cd: &Codes, pairs: &mut [u64], buf: &mut [i64], code: &mut [u8]) -> (u64, u64, usize, usize) {
    let (send, received) = (&m.send_ns[lo..hi], &m.received[lo..hi]);
    let len = send.len();
    let (out, code) = (&mut buf[..len], &mut code[..len.next_multiple_of(CH)]);
    // each row's code from its OWD (in `buf`, the first pass's): `OUT` outside the window, else
    // its count of late buffers (all of them when lost; none when on time for the least buffer;
    // else `LATE`, counted in the walk). A loop the compiler vectorises across rows, a compare a
    // row (a row's count of eight compares here took ~40 instructions for four rows; most rows
    // are on time); the send times read only for a window that is not the whole stream.
    let (first_limit, nj) = (cd.l8[0], cd.nj);
    let late = |i: usize| if !received[i] { nj } else if out[i] <= first_limit { 0 } else { LATE };
    if cd.bd == (i64::MIN, i64::MAX) {
        for (i, c) in code[..len].iter_mut().enumerate() {
            *c = late(i);
        }
    } else {
        for i in 0..len {
            let t = send[i];
            code[i] = if (t >= cd.bd.0) & (t <= cd.bd.1) { late(i) } else { OUT };
        }
    }
    code[len..].fill(OUT);
    // the walk, a chunk at a time, and the OWDs of the rows in the window received kept in place
    // (`delay::gather_owd`'s, in row order)
    let k1 = usize::from(nj) + 1;
    let mut walk = Walk { n: 0, first: 0, prev: 0, same: 0 };
    let mut kept = 0usize;
    for (c0, c) in code.chunks_exact(CH).enumerate().map(|(k, c)| (k * CH, c)) {
        let c: &[u8; CH] = c.try_into().expect("a chunk");
        // a chunk whose rows all have the previous row's code (most: in the window, on time)
        if walk.n > 0 && u64::from_ne_bytes(*c) == walk.prev as u64 * 0x0101_0101_0101_0101 {
            walk.same += CH as u64;
            walk.n += CH as u64;
        } else {
            for (j, &k) in c.iter().enumerate() {
                // (before the OWDs below are moved: row c0 + j's still in place)
                let k = if k == LATE { cd.late(out[c0 + j]) } else { k };
                walk.push(k, pairs, k1);
            }
        }
        for j in 0..CH.min(len - c0) {
            out[kept] = out[c0 + j];
            kept += usize::from((c[j] != OUT) & received[c0 + j]);
        }
    }
    pairs[walk.prev * k1 + walk.prev] += walk.same;
    (walk.n, kept as u64, walk.first, kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{delay, loss, rtp, OneRun};

    const MS: i64 = 1_000_000;

    /// Owned columns of a run.
    #[derive(Default, Clone)]
    struct Cols {
        flow: Vec<i64>,
        seq: Vec<i64>,
        send: Vec<i64>,
        recv: Vec<i64>,
        rcvd: Vec<bool>,
        size: Vec<i64>,
    }

    impl Cols {
        fn cols(&self) -> RunColumns<'_> {
            RunColumns { flow: &self.flow, seq: &self.seq, send_ns: &self.send, recv_ns: &self.recv, received: &self.rcvd, size: &self.size }
        }
        fn push(&mut self, flow: i64, seq: i64, send: i64, recv: Option<i64>) {
            self.flow.push(flow);
            self.seq.push(seq);
            self.send.push(send);
            // a lost packet's slot holds garbage (an Arrow null's value)
            self.recv.push(recv.unwrap_or(i64::MIN + seq));
            self.rcvd.push(recv.is_some());
            self.size.push(100 + seq % 7);
        }
    }

    /// What the general functions give (`summary::compute`'s calls), as bits.
    fn general(c: RunColumns<'_>, ts: Option<i64>, te: Option<i64>, w: Window, pre_ns: i64, jbs: &[i64], probs: Option<&[f64]>) -> Result<Vec<u64>> {
        let one = OneRun::new(c, ts, te)?;
        let m = one.view();
        let mut out: Vec<u64> = m.streams.iter().map(|s| s.flow as u64).collect();
        out.extend(rtp::rtp_summary(m, w).iter().flat_map(|r| [r.sent, r.received]));
        let bases = loss::base_delay(m, pre_ns)?;
        out.extend(bases.iter().flat_map(|b| [b.owd_ns.map_or(u64::MAX, |v| v as u64), b.source as u64]));
        out.extend(loss::burst_stats_jbs(m, &bases, jbs, w).iter().flat_map(|b| [b.packets, b.lost, b.p.to_bits(), b.q.to_bits()]));
        match probs {
            Some(p) => out.extend(delay::owd_quantiles_s_by_stream(m, w, p)?.iter().map(|q| q.to_bits())),
            None => {
                let (v, g) = delay::owd_s_with_stream(m, w);
                out.extend(v.iter().map(|x| x.to_bits()).chain(g.iter().map(|&g| u64::from(g))));
            }
        }
        Ok(out)
    }

    /// The same of `share`.
    fn fused(s: &Share) -> Vec<u64> {
        let mut out: Vec<u64> = s.streams.iter().map(|s| s.flow as u64).collect();
        out.extend(s.sent.iter().zip(&s.received).flat_map(|(&a, &b)| [a, b]));
        out.extend(s.bases.iter().flat_map(|b| [b.owd_ns.map_or(u64::MAX, |v| v as u64), b.source as u64]));
        out.extend(s.bursts.iter().flat_map(|b| [b.packets, b.lost, b.p.to_bits(), b.q.to_bits()]));
        match &s.owd {
            Ok(q) => out.extend(q.iter().map(|q| q.to_bits())),
            Err((v, g)) => out.extend(v.iter().map(|x| x.to_bits()).chain(g.iter().map(|&g| u64::from(g)))),
        }
        out
    }

    /// A run of `flows` (each with its own pattern of loss, lateness and gaps in seq), `len` rows
    /// a flow at 20 ms; `lost_flow` loses everything.
    fn run(flows: &[i64], len: i64, seed: u64, lost_flow: Option<i64>) -> Cols {
        let mut x = seed;
        let mut rnd = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut c = Cols::default();
        for &f in flows {
            let mut seq = 0;
            for i in 0..len {
                seq += 1 + i64::from(rnd() % 50 == 0); // a gap now and then
                let send = 20 * MS * i;
                let r = rnd();
                // bursts of loss and of lateness, and isolated ones
                let lost = Some(f) == lost_flow || r % 23 == 0 || (i / 40) % 9 == 4 && i % 40 < 6;
                let owd = 10 * MS + (r % 7) as i64 * MS + if (i / 30) % 5 == 2 { (r % 200) as i64 * MS } else { 0 };
                c.push(f, seq, send, (!lost).then_some(send + owd));
            }
        }
        c
    }

    fn check(c: &Cols, ts: Option<i64>, te: Option<i64>, what: &str) {
        let jbs = [0, 20 * MS, 40 * MS, 60 * MS, 100 * MS, 150 * MS];
        let shuffled = [150 * MS, 0, 40 * MS, -10 * MS, 40 * MS, 20 * MS, 60 * MS, 1];
        let probs = [0.5, 0.99];
        for w in [Window::All, Window::Overlap, Window::Absolute { lo: 200 * MS, hi: 900 * MS }, Window::Absolute { lo: 5, hi: 4 }] {
            for jbs in [&jbs[..], &shuffled[..], &[][..]] {
                for (pre, probs) in [(2000 * MS, Some(&probs[..])), (300 * MS, None), (MS, Some(&[1.0, 0.0, 0.25, 0.5][..]))] {
                    let want = general(c.cols(), ts, te, w, pre, jbs, probs).unwrap();
                    let got = share(c.cols(), ts, te, w, pre, jbs, probs).expect("the fused path").unwrap();
                    assert_eq!(fused(&got), want, "{what}: {w:?} {jbs:?} pre {pre} {probs:?}");
                }
            }
        }
    }

    #[test]
    fn fused_equals_the_general_functions() {
        for (len, seed) in [(1, 1), (7, 2), (8, 3), (9, 4), (300, 5), (1003, 6)] {
            check(&run(&[3], len, seed, None), Some(2 * MS * len), Some(15 * MS * len), "one flow");
            check(&run(&[1, 4, 9], len, seed, None), Some(400 * MS), None, "three flows, open end");
            check(&run(&[2, 5], len, seed, Some(5)), None, None, "no TCP; a flow with nothing received");
            check(&run(&[2, 5, 6], len, seed, Some(2)), Some(0), Some(0), "a window of one instant");
        }
        // every branch reached: late rows at one buffer and not at another, losses, bursts
        let c = run(&[1, 2], 1003, 9, None);
        let s = share(c.cols(), Some(100 * MS), None, Window::All, 2000 * MS, &[0, 60 * MS], Some(&[0.5])).unwrap().unwrap();
        assert!(s.bursts[0].lost > s.bursts[1].lost && s.bursts[1].lost > 0 && s.bursts.iter().all(|b| b.p > 0.0 && b.q > 0.0));
        assert!(s.sent[0] == 1003 && s.received[0] < 1000 && s.received[0] > 800, "{:?}", (s.sent, s.received));
    }

    #[test]
    fn other_inputs_take_the_general_path() {
        let base = run(&[1, 2], 50, 3, None);
        let probs = Some(&[0.5][..]);
        let fused_of = |c: &Cols, ts, te, pre, jbs: &[i64]| share(c.cols(), ts, te, Window::All, pre, jbs, probs).map(|r| r.is_ok());
        assert_eq!(fused_of(&base, None, None, MS, &[0]), Some(true));
        // out of order (a swap inside a flow; the flows descending), a duplicate seq, a negative
        // delay, a negative size: as `OneRun::new`, which reorders or names the row
        let mut swapped = base.clone();
        swapped.seq.swap(10, 11);
        let desc = run(&[2, 1], 50, 3, None);
        let mut dup = base.clone();
        dup.seq[20] = dup.seq[19];
        let mut early = base.clone();
        let k = early.rcvd.iter().position(|&r| r).unwrap();
        early.recv[k] = early.send[k] - 1;
        let mut neg = base.clone();
        neg.size[70] = -1;
        let mut short = base.clone();
        short.size.pop();
        for c in [&swapped, &desc, &dup, &early, &neg, &short] {
            assert_eq!(fused_of(c, None, None, MS, &[0]), None);
        }
        // TCP times out of order, a base window not positive, more than 8 buffers, no rows
        assert_eq!(fused_of(&base, Some(5), Some(4), MS, &[0]), None);
        assert_eq!(fused_of(&base, None, None, 0, &[0]), None);
        assert_eq!(fused_of(&base, None, None, MS, &[0; 9]), None);
        assert_eq!(fused_of(&Cols::default(), None, None, MS, &[0]), None);
        // a probability out of range: the general path, whose error comes after the rows' (a later
        // stream's bad row is named, not the probability)
        assert!(share(base.cols(), None, None, Window::All, MS, &[0], Some(&[1.5])).is_none());
        assert!(general(base.cols(), None, None, Window::All, MS, &[0], Some(&[1.5])).unwrap_err().to_string().contains("quantiles"));
        assert!(general(neg.cols(), None, None, Window::All, MS, &[0], Some(&[1.5])).unwrap_err().to_string().contains("size"));
    }
}
