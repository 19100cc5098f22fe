//! Loss metrics of the PAM 2013 study: pure loss, delay-based loss behind a jitter buffer,
//! RFC 3357 loss periods, the per-packet loss period level of the paper's Table 2 and the level
//! counts over time (Figs. 6 and 7).
//!
//! Over 600 lines: its unit tests (the last ~230 lines) sit beside the metrics they pin.
use crate::error::{MetricsError, Result};
use crate::table::{MediaView, Window};
use crate::NS_PER_MS;

/// Where a stream's base delay came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum BaseSource {
    /// Minimum OWD of the packets received in the pre-TCP window (the paper's definition).
    PreTcp = 0,
    /// Fallback: no packet was received in that window (or the run has no tcp_start_ns), so the
    /// minimum OWD of the whole stream is used. Callers warn.
    WholeStream = 1,
    /// Nothing received at all: no base; every packet is a pure loss anyway.
    NoneReceived = 2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Base {
    pub owd_ns: Option<i64>,
    pub source: BaseSource,
}

/// Base delay per stream: the minimum OWD of the packets received in
/// [tcp_start_ns − pre_ns, tcp_start_ns) (recv time; PAM 2013 §4: "minimum delay over the period
/// of two seconds prior to the arrival of the TCP flows"), with the documented fallback.
pub fn base_delay<'m>(m: impl Into<MediaView<'m>>, pre_ns: i64) -> Result<Vec<Base>> {
    let m = &m.into();
    if pre_ns <= 0 {
        return Err(MetricsError::InvalidParameter { name: "base_window", reason: "must be positive".into() });
    }
    Ok(m.streams
        .iter()
        .map(|s| {
            let start = m.tcp_start_ns[s.run as usize];
            let (pre, all) = least_owds(m, s.lo, s.hi, pre_window(start, pre_ns));
            base_of(pre, all)
        })
        .collect())
}

/// The window of recv times of a run's base delay: `[t0 - pre_ns, t0)`; none without a start.
pub(crate) fn pre_window(tcp_start_ns: Option<i64>, pre_ns: i64) -> Option<(i64, i64)> {
    tcp_start_ns.map(|t0| (t0.saturating_sub(pre_ns), t0))
}

/// A stream's base from its least OWD in the pre-TCP window and over the whole stream.
pub(crate) fn base_of(pre: Option<i64>, all: Option<i64>) -> Base {
    match (pre, all) {
        (Some(p), _) => Base { owd_ns: Some(p), source: BaseSource::PreTcp },
        (None, Some(a)) => Base { owd_ns: Some(a), source: BaseSource::WholeStream },
        (None, None) => Base { owd_ns: None, source: BaseSource::NoneReceived },
    }
}

avx2_dispatch! {
    /// The least OWD of rows `lo..hi` received, and of those received in `[pre.0, pre.1)` (None
    /// when there are none): a count beside each minimum instead of an Option a row, so no
    /// branch a row (the minimum of the values found is the same).
    fn least_owds(m: &MediaView<'_>, lo: usize, hi: usize, pre: Option<(i64, i64)>) -> (Option<i64>, Option<i64>) = least_owds_any
}

#[inline(always)]
fn least_owds_any(m: &MediaView<'_>, lo: usize, hi: usize, pre: Option<(i64, i64)>) -> (Option<i64>, Option<i64>) {
    let (send, recv, received) = (&m.send_ns[lo..hi], &m.recv_ns[lo..hi], &m.received[lo..hi]);
    // no start time: an empty window
    let (p0, p1) = pre.unwrap_or((0, 0));
    let (mut all, mut n_all, mut least_pre, mut n_pre) = (i64::MAX, 0u64, i64::MAX, 0u64);
    for i in 0..send.len() {
        let (t, ok) = (recv[i], received[i]);
        let d = t.wrapping_sub(send[i]);
        let in_pre = ok & (t < p1) & (t >= p0);
        all = all.min(if ok { d } else { i64::MAX });
        n_all += u64::from(ok);
        least_pre = least_pre.min(if in_pre { d } else { i64::MAX });
        n_pre += u64::from(in_pre);
    }
    ((n_pre > 0).then_some(least_pre), (n_all > 0).then_some(all))
}

/// Per-row "unusable" mask behind a jitter buffer of `jb_ns`: pure loss, or received with
/// OWD > base + JB (strictly later than the playout deadline). `jb_ns = None` gives pure loss.
pub fn lost_mask<'m>(m: impl Into<MediaView<'m>>, bases: &[Base], jb_ns: Option<i64>) -> Vec<bool> {
    let m = &m.into();
    let mut out = vec![false; m.len()];
    for (s, b) in m.streams.iter().zip(bases) {
        let limit = match (jb_ns, b.owd_ns) {
            (Some(jb), Some(base)) => base.saturating_add(jb),
            _ => i64::MAX,
        };
        for (r, o) in (s.lo..s.hi).zip(&mut out[s.lo..s.hi]) {
            *o = match m.owd(r) {
                None => true,
                Some(d) => d > limit,
            };
        }
    }
    out
}

/// Loss behind each JB per stream, flattened stream-major (`k = stream * jbs.len() + j`).
#[derive(Debug, Clone, Default)]
pub struct JbLoss {
    /// Packets sent in the window.
    pub packets: Vec<u64>,
    /// Not received.
    pub pure: Vec<u64>,
    /// Received after base + JB.
    pub late: Vec<u64>,
}

pub fn jb_loss<'m>(m: impl Into<MediaView<'m>>, w: Window, bases: &[Base], jbs_ns: &[i64]) -> JbLoss {
    let m = &m.into();
    let nj = jbs_ns.len();
    let mut out = JbLoss {
        packets: vec![0; m.streams.len() * nj],
        pure: vec![0; m.streams.len() * nj],
        late: vec![0; m.streams.len() * nj],
    };
    for (si, (s, b)) in m.streams.iter().zip(bases).enumerate() {
        let Some(bd) = m.bounds(s, w) else { continue };
        let (mut n, mut pure) = (0u64, 0u64);
        let mut late = vec![0u64; nj];
        for r in s.lo..s.hi {
            if !m.in_bounds(r, bd) {
                continue;
            }
            n += 1;
            match (m.owd(r), b.owd_ns) {
                (None, _) => pure += 1,
                (Some(d), Some(base)) => {
                    let excess = d - base;
                    for (j, &jb) in jbs_ns.iter().enumerate() {
                        late[j] += (excess > jb) as u64;
                    }
                }
                (Some(_), None) => {}
            }
        }
        for (j, &l) in late.iter().enumerate() {
            out.packets[si * nj + j] = n;
            out.pure[si * nj + j] = pure;
            out.late[si * nj + j] = l;
        }
    }
    out
}

/// RFC 3357 §4 loss periods over the whole stream, in sequence order: a maximal run of lost rows
/// with consecutive sequence numbers. Returns each row's period length (0 = not lost). A gap in
/// the sequence numbers (packet absent from the table) ends a period.
pub fn period_lengths<'m>(m: impl Into<MediaView<'m>>, lost: &[bool]) -> Vec<u32> {
    let m = &m.into();
    let mut len = vec![0u32; m.len()];
    for s in m.streams {
        for (start, end) in lost_runs(m, lost, s.lo, s.hi) {
            len[start..end].fill((end - start) as u32);
        }
    }
    len
}

/// The loss periods of the rows lo..hi of one stream as row ranges [start, end): maximal runs of
/// lost rows with consecutive sequence numbers (RFC 3357 §4), in sequence order.
fn lost_runs<'a>(m: &'a MediaView<'_>, lost: &'a [bool], lo: usize, hi: usize) -> impl Iterator<Item = (usize, usize)> + 'a {
    let mut r = lo;
    std::iter::from_fn(move || {
        while r < hi && !lost[r] {
            r += 1;
        }
        if r >= hi {
            return None;
        }
        let start = r;
        r += 1;
        while r < hi && lost[r] && m.seq[r] == m.seq[r - 1] + 1 {
            r += 1;
        }
        Some((start, r))
    })
}

/// Lower duration bounds of levels 2, 3, 4, 5 of the PAM 2013 Table 2 (40–60, 80–100, 120–180,
/// 200+ ms of the stream lost at 20 ms packetisation). Generalised by duration: a period of k
/// packets at interval T lasts k·T; level 1 is anything lost shorter than 40 ms.
pub const LEVEL_BOUNDS_NS: [i64; 4] = [40 * NS_PER_MS, 80 * NS_PER_MS, 120 * NS_PER_MS, 200 * NS_PER_MS];

/// Loss period level of a period of `len` packets at `interval_ns` (0 for len 0).
#[inline]
pub fn level_of(len: u32, interval_ns: i64) -> u8 {
    if len == 0 {
        return 0;
    }
    let dur = (len as i64).saturating_mul(interval_ns);
    1 + LEVEL_BOUNDS_NS.iter().filter(|&&b| dur >= b).count() as u8
}

fn check_interval(interval_ns: i64) -> Result<()> {
    if interval_ns <= 0 {
        return Err(MetricsError::InvalidParameter { name: "interval", reason: "packet interval must be positive".into() });
    }
    Ok(())
}

/// Per-row loss period level 0–5 (whole-stream periods, so a period crossing a window edge keeps
/// its full length).
pub fn levels<'m>(m: impl Into<MediaView<'m>>, lost: &[bool], interval_ns: i64) -> Result<Vec<u8>> {
    let m = &m.into();
    check_interval(interval_ns)?;
    Ok(period_lengths(m, lost).into_iter().map(|l| level_of(l, interval_ns)).collect())
}

/// One RFC 3357 §4 loss period.
#[derive(Debug, Clone, Default)]
pub struct Periods {
    pub stream: Vec<u32>,
    /// Row of the first lost packet.
    pub first_row: Vec<u32>,
    /// Number of packets (RFC 3357 loss period length).
    pub length: Vec<u32>,
    /// Loss distance of the period's first packet: seq difference to the previous lost packet of
    /// the stream (RFC 3357 loss distance); 0 for the first loss of a stream.
    pub distance: Vec<i64>,
}

/// Loss periods that have at least one packet sent inside the window (full lengths reported).
pub fn periods<'m>(m: impl Into<MediaView<'m>>, lost: &[bool], w: Window) -> Periods {
    let m = &m.into();
    let mut out = Periods::default();
    for (si, s) in m.streams.iter().enumerate() {
        let bd = m.bounds(s, w);
        let mut prev_lost_seq: Option<i64> = None;
        for (start, r) in lost_runs(m, lost, s.lo, s.hi) {
            let dist = prev_lost_seq.map_or(0, |p| m.seq[start] - p);
            prev_lost_seq = Some(m.seq[r - 1]);
            if let Some(b) = bd {
                if (start..r).any(|x| m.in_bounds(x, b)) {
                    out.stream.push(si as u32);
                    out.first_row.push(start as u32);
                    out.length.push((r - start) as u32);
                    out.distance.push(dist);
                }
            }
        }
    }
    out
}

/// Arguments of the levels-over-time counts: positive bin and span, one group code per run, codes
/// below `n_groups`.
fn check_binning(m: &MediaView<'_>, run_group: &[u32], n_groups: usize, bin_ns: i64, span_ns: i64) -> Result<()> {
    if bin_ns <= 0 || span_ns <= 0 {
        return Err(MetricsError::InvalidParameter { name: "bin", reason: "bin width and span must be positive".into() });
    }
    if run_group.len() != m.n_runs() {
        return Err(MetricsError::LengthMismatch { column: "group", expected: m.n_runs(), got: run_group.len() });
    }
    if let Some(&g) = run_group.iter().find(|&&g| g as usize >= n_groups) {
        return Err(MetricsError::InvalidParameter { name: "group", reason: format!("group code {g} >= {n_groups}") });
    }
    Ok(())
}

/// Number of bins of `bin_ns` covering [0, span_ns); refuses tables of counts that would not
/// fit in memory (a typo such as a span in ns given as ms should not abort the process).
fn bin_count(bin_ns: i64, span_ns: i64, n_groups: usize, n_jbs: usize) -> Result<usize> {
    const MAX_CELLS: u128 = 100_000_000;
    let n_bins = ((span_ns - 1) / bin_ns + 1) as u128; // span_ns, bin_ns > 0 checked by callers
    if n_bins * 6 * n_groups.max(1) as u128 * n_jbs.max(1) as u128 > MAX_CELLS {
        return Err(MetricsError::InvalidParameter {
            name: "bin",
            reason: format!("{n_bins} bins x {n_groups} groups x {n_jbs} JBs is too many counters"),
        });
    }
    Ok(n_bins as usize)
}

/// Level counts over time since tcp_start_ns (Fig. 6): `counts[(g * n_bins + bin) * 6 + level]`
/// divided by the number of replications of group g (runs with tcp_start_ns and at least one
/// media stream). Packets are placed by send time; bins are [k·bin, (k+1)·bin); packets outside
/// the window or outside [0, n_bins·bin) are not counted.
pub struct LevelsOverTime {
    pub n_bins: usize,
    pub normalised: Vec<f64>,
    pub replications: Vec<u64>,
}

pub fn levels_over_time<'m>(
    m: impl Into<MediaView<'m>>,
    levels: &[u8],
    w: Window,
    run_group: &[u32],
    n_groups: usize,
    bin_ns: i64,
    span_ns: i64,
) -> Result<LevelsOverTime> {
    let m = &m.into();
    check_binning(m, run_group, n_groups, bin_ns, span_ns)?;
    let n_bins = bin_count(bin_ns, span_ns, n_groups, 1)?;
    let mut counts = vec![0u64; n_groups * n_bins * 6];
    let mut reps = vec![0u64; n_groups];
    let mut last_run: Option<u32> = None;
    for s in m.streams {
        let Some(t0) = m.tcp_start_ns[s.run as usize] else { continue };
        let g = run_group[s.run as usize] as usize;
        if last_run != Some(s.run) {
            reps[g] += 1; // streams are sorted by run, so each run is counted once
            last_run = Some(s.run);
        }
        let Some(b) = m.bounds(s, w) else { continue };
        for r in s.lo..s.hi {
            if !m.in_bounds(r, b) {
                continue;
            }
            let t = m.send_ns[r] - t0;
            if t < 0 {
                continue;
            }
            let bin = (t / bin_ns) as usize;
            if bin < n_bins {
                counts[(g * n_bins + bin) * 6 + levels[r] as usize] += 1;
            }
        }
    }
    let normalised = counts
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let g = k / (n_bins * 6);
            if reps[g] == 0 { f64::NAN } else { c as f64 / reps[g] as f64 }
        })
        .collect();
    Ok(LevelsOverTime { n_bins, normalised, replications: reps })
}

/// Fused form of [`lost_mask`] + [`levels`] + [`levels_over_time`] for several JBs at once,
/// without per-row allocations (the benchmark path of Figs. 6 and 7). `jbs_ns[j] = None` means
/// pure loss only. Result `j` equals the unfused computation for `jbs_ns[j]`.
#[allow(clippy::too_many_arguments)]
pub fn levels_over_time_multi<'m>(
    m: impl Into<MediaView<'m>>,
    w: Window,
    bases: &[Base],
    jbs_ns: &[Option<i64>],
    interval_ns: i64,
    run_group: &[u32],
    n_groups: usize,
    bin_ns: i64,
    span_ns: i64,
) -> Result<Vec<LevelsOverTime>> {
    let m = &m.into();
    check_interval(interval_ns)?;
    check_binning(m, run_group, n_groups, bin_ns, span_ns)?;
    let nj = jbs_ns.len();
    let n_bins = bin_count(bin_ns, span_ns, n_groups, nj)?;
    let mut counts = vec![0u64; nj * n_groups * n_bins * 6];
    let mut reps = vec![0u64; n_groups];
    let mut last_run: Option<u32> = None;
    for (s, b) in m.streams.iter().zip(bases) {
        let Some(t0) = m.tcp_start_ns[s.run as usize] else { continue };
        let g = run_group[s.run as usize] as usize;
        if last_run != Some(s.run) {
            reps[g] += 1;
            last_run = Some(s.run);
        }
        let Some(bd) = m.bounds(s, w) else { continue };
        for (j, jb) in jbs_ns.iter().enumerate() {
            let limit = match (jb, b.owd_ns) {
                (Some(jb), Some(base)) => base.saturating_add(*jb),
                _ => i64::MAX,
            };
            let is_lost = |r: usize| !m.received[r] || m.recv_ns[r] - m.send_ns[r] > limit;
            let base_k = (j * n_groups + g) * n_bins * 6;
            let count = |r: usize, level: usize, counts: &mut [u64]| {
                if !m.in_bounds(r, bd) {
                    return;
                }
                let t = m.send_ns[r] - t0;
                if t >= 0 && ((t / bin_ns) as usize) < n_bins {
                    counts[base_k + (t / bin_ns) as usize * 6 + level] += 1;
                }
            };
            let mut r = s.lo;
            while r < s.hi {
                if !is_lost(r) {
                    count(r, 0, &mut counts);
                    r += 1;
                    continue;
                }
                let start = r;
                r += 1;
                while r < s.hi && is_lost(r) && m.seq[r] == m.seq[r - 1] + 1 {
                    r += 1;
                }
                let level = level_of((r - start) as u32, interval_ns) as usize;
                for x in start..r {
                    count(x, level, &mut counts);
                }
            }
        }
    }
    Ok((0..nj)
        .map(|j| {
            let chunk = &counts[j * n_groups * n_bins * 6..(j + 1) * n_groups * n_bins * 6];
            let normalised = chunk
                .iter()
                .enumerate()
                .map(|(k, &c)| {
                    let g = k / (n_bins * 6);
                    if reps[g] == 0 { f64::NAN } else { c as f64 / reps[g] as f64 }
                })
                .collect();
            LevelsOverTime { n_bins, normalised, replications: reps.clone() }
        })
        .collect())
}

/// Loss statistics of the rows sent in the window, for the E-model: packets, lost, and the
/// two-state Markov transition estimates p = P(lost | previous received), q = P(received |
/// previous lost) over consecutive rows (G.107 §7.5 defines BurstR = 1/(p + q)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BurstStats {
    pub packets: u64,
    pub lost: u64,
    pub p: f64,
    pub q: f64,
}

impl BurstStats {
    /// Loss in percent (G.107 Ppl).
    pub fn ppl(&self) -> f64 {
        if self.packets == 0 { f64::NAN } else { 100.0 * self.lost as f64 / self.packets as f64 }
    }
    /// G.107 BurstR = 1/(p+q); 1 (random loss) when there is no loss/no transition to estimate.
    pub fn burst_r(&self) -> f64 {
        if self.lost == 0 || self.p + self.q <= 0.0 || !(self.p + self.q).is_finite() {
            1.0
        } else {
            1.0 / (self.p + self.q)
        }
    }
}

pub fn burst_stats<'m>(m: impl Into<MediaView<'m>>, lost: &[bool], w: Window) -> Vec<BurstStats> {
    let m = &m.into();
    m.streams
        .iter()
        .map(|s| {
            let (mut n, mut nl) = (0u64, 0u64);
            let (mut from_rcv, mut rcv_to_lost, mut from_lost, mut lost_to_rcv) = (0u64, 0u64, 0u64, 0u64);
            let mut prev: Option<bool> = None;
            if let Some(b) = m.bounds(s, w) {
                for (r, &l) in (s.lo..s.hi).zip(&lost[s.lo..s.hi]) {
                    if !m.in_bounds(r, b) {
                        continue;
                    }
                    n += 1;
                    nl += l as u64;
                    match prev {
                        Some(false) => {
                            from_rcv += 1;
                            rcv_to_lost += l as u64;
                        }
                        Some(true) => {
                            from_lost += 1;
                            lost_to_rcv += (!l) as u64;
                        }
                        None => {}
                    }
                    prev = Some(l);
                }
            }
            let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
            BurstStats { packets: n, lost: nl, p: ratio(rcv_to_lost, from_rcv), q: ratio(lost_to_rcv, from_lost) }
        })
        .collect()
}

avx2_dispatch! {
    /// `burst_stats_jbs`' walk of rows `lo..hi` sent inside `bd`, the buffers' limits ascending
    /// in `limit`: each pair of consecutive rows' (buffers late for before, after) counted into
    /// `pairs` (row-major, `limit.len() + 1` a side). Returns the rows and the first one's count.
    fn late_pairs(m: &MediaView<'_>, lo: usize, hi: usize, bd: (i64, i64), limit: &[i64], pairs: &mut [u64]) -> (u64, usize) = late_pairs_any
}

#[inline(always)]
fn late_pairs_any(m: &MediaView<'_>, lo: usize, hi: usize, bd: (i64, i64), limit: &[i64], pairs: &mut [u64]) -> (u64, usize) {
    let (nj, k1) = (limit.len(), limit.len() + 1);
    // up to 8 buffers: a row's count by 8 compares and no branch, the unused limits i64::MAX
    // (no delay is above it); more by bisection
    let mut l8 = [i64::MAX; 8];
    let few = nj <= 8;
    if few {
        l8[..nj].copy_from_slice(limit);
    }
    let (send, recv, received) = (&m.send_ns[lo..hi], &m.recv_ns[lo..hi], &m.received[lo..hi]);
    let (mut n, mut first, mut prev, mut same) = (0u64, 0usize, 0usize, 0u64);
    for i in 0..send.len() {
        let t = send[i];
        if !((t >= bd.0) & (t <= bd.1)) {
            continue;
        }
        let d = recv[i].wrapping_sub(t);
        let k = if !received[i] {
            nj
        } else if few {
            l8.iter().map(|&l| usize::from(l < d)).sum()
        } else {
            limit.partition_point(|&l| l < d)
        };
        if n == 0 {
            first = k;
        } else if k == prev {
            same += 1;
        } else {
            pairs[prev * k1 + prev] += same;
            same = 0;
            pairs[prev * k1 + k] += 1;
        }
        prev = k;
        n += 1;
    }
    pairs[prev * k1 + prev] += same;
    (n, first)
}

/// [`burst_stats`] of [`lost_mask`] for each JB of `jbs_ns` (`Some(jb)` for every one), in one
/// pass over the rows: the E-model at several buffers walked the rows and allocated a mask once a
/// buffer (6 on a sweep's closing summary: most of its E-model time). Flattened stream-major
/// (`k = stream * jbs_ns.len() + j`); each entry equals the unfused computation for its JB.
///
/// A row late for one buffer is late for every smaller one (base + jb, saturating, grows with
/// jb) and a lost row is lost for all, so with the buffers in ascending order a row's losses are
/// the first `k` of them: one number a row. The walk counts each pair of consecutive rows' (k
/// before, k after) — a run of equal ones in a register — and every buffer's counts are sums of
/// those pairs: the same integers as a walk a buffer, without a branch a buffer a row.
pub fn burst_stats_jbs<'m>(m: impl Into<MediaView<'m>>, bases: &[Base], jbs_ns: &[i64], w: Window) -> Vec<BurstStats> {
    let m = &m.into();
    let jo = JbOrder::new(jbs_ns);
    let mut out = Vec::with_capacity(m.streams.len() * jo.pos.len());
    // pairs[a * k1 + b]: consecutive rows in the window, the first late for a buffers, the second for b
    let mut pairs = vec![0u64; jo.k1 * jo.k1];
    let mut limit = vec![i64::MAX; jo.pos.len()];
    for (s, b) in m.streams.iter().zip(bases) {
        pairs.iter_mut().for_each(|x| *x = 0);
        jo.limits(b, &mut limit);
        let (n, first) = match m.bounds(s, w) {
            Some(bd) => late_pairs(m, s.lo, s.hi, bd, &limit, &mut pairs),
            None => (0, 0),
        };
        jo.stats(&pairs, n, first, &mut out);
    }
    out
}

/// `burst_stats_jbs`' buffers in ascending order: `pos[j]` the place of buffer `j`, `k1` the
/// side of a table of pair counts (one more than the buffers).
pub(crate) struct JbOrder<'j> {
    jbs_ns: &'j [i64],
    order: Vec<usize>,
    pub(crate) pos: Vec<usize>,
    pub(crate) k1: usize,
}

impl<'j> JbOrder<'j> {
    pub(crate) fn new(jbs_ns: &'j [i64]) -> JbOrder<'j> {
        let nj = jbs_ns.len();
        let mut order: Vec<usize> = (0..nj).collect();
        order.sort_by_key(|&j| jbs_ns[j]);
        let mut pos = vec![0usize; nj];
        for (p, &j) in order.iter().enumerate() {
            pos[j] = p;
        }
        JbOrder { jbs_ns, order, pos, k1: nj + 1 }
    }

    /// A stream's playout limits (base + buffer, saturating; i64::MAX without a base), ascending.
    pub(crate) fn limits(&self, b: &Base, limit: &mut [i64]) {
        for (l, &j) in limit.iter_mut().zip(&self.order) {
            *l = b.owd_ns.map_or(i64::MAX, |base| base.saturating_add(self.jbs_ns[j]));
        }
    }

    /// A stream's `BurstStats` at each buffer (in `jbs_ns`' order) from its table of pair counts,
    /// its rows in the window `n` and the first one's count of late buffers.
    pub(crate) fn stats(&self, pairs: &[u64], n: u64, first: usize, out: &mut Vec<BurstStats>) {
        let k1 = self.k1;
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        out.extend(self.pos.iter().map(|&p| {
            // late for the buffer at position p: late for more than p buffers
            let (mut lost, mut from_rcv, mut rcv_to_lost, mut from_lost, mut lost_to_rcv) = (u64::from(n > 0 && first > p), 0, 0, 0, 0);
            for a in 0..k1 {
                for bb in 0..k1 {
                    let c = pairs[a * k1 + bb];
                    lost += if bb > p { c } else { 0 };
                    if a <= p {
                        from_rcv += c;
                        rcv_to_lost += if bb > p { c } else { 0 };
                    } else {
                        from_lost += c;
                        lost_to_rcv += if bb <= p { c } else { 0 };
                    }
                }
            }
            BurstStats { packets: n, lost, p: ratio(rcv_to_lost, from_rcv), q: ratio(lost_to_rcv, from_lost) }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::tests::{cbr, Fx};

    const MS: i64 = 1_000_000;

    #[test]
    fn base_delay_uses_pre_tcp_window_by_recv_time() {
        // tcp_start = 100 ms, pre window 60 ms → recv in [40, 100).
        // Packets: send 0 recv 5 (OWD 5, outside), send 20 recv 40 (OWD 20, in, edge),
        // send 40 recv 70 (OWD 30, in), send 60 recv 100 (OWD 40, recv at tcp_start: outside).
        let fx = Fx::new(&[(0, 1, 0, 0, Some(5)), (0, 1, 1, 20, Some(40)), (0, 1, 2, 40, Some(70)), (0, 1, 3, 60, Some(100))]);
        let m = fx.media(&[(Some(100), None)]);
        let b = base_delay(&m, 60 * MS).unwrap();
        assert_eq!(b[0], Base { owd_ns: Some(20 * MS), source: BaseSource::PreTcp });
        // Empty pre window → fallback to the stream minimum (5 ms).
        let b = base_delay(&m, 10 * MS).unwrap();
        assert_eq!(b[0], Base { owd_ns: Some(5 * MS), source: BaseSource::WholeStream });
        // No tcp_start → fallback; nothing received → none.
        let m = fx.media(&[(None, None)]);
        assert_eq!(base_delay(&m, 60 * MS).unwrap()[0].source, BaseSource::WholeStream);
        let m = cbr(&[None, None]).media(&[(Some(20), None)]);
        assert_eq!(base_delay(&m, 60 * MS).unwrap()[0], Base { owd_ns: None, source: BaseSource::NoneReceived });
        assert!(base_delay(&m, 0).is_err());
    }

    #[test]
    fn jb_loss_counts_pure_and_late_with_strict_deadline() {
        // base = 10 ms (packet 0, before tcp_start 20 ms). Window [20, 100]: packets 1..5.
        // OWDs: 50 (excess 40 = JB 40 exactly: on time), lost, 51 (late for 40), 70, 10.
        let fx = cbr(&[Some(10), Some(50), None, Some(51), Some(70), Some(10)]);
        let m = fx.media(&[(Some(20), Some(100))]);
        let b = base_delay(&m, 2000 * MS).unwrap();
        assert_eq!(b[0].owd_ns, Some(10 * MS));
        let l = jb_loss(&m, Window::Overlap, &b, &[40 * MS, 60 * MS]);
        assert_eq!(l.packets, vec![5, 5]);
        assert_eq!(l.pure, vec![1, 1]);
        assert_eq!(l.late, vec![2, 0]);
        let mask = lost_mask(&m, &b, Some(40 * MS));
        assert_eq!(mask, vec![false, false, true, true, true, false]);
        assert_eq!(lost_mask(&m, &b, None), vec![false, false, true, false, false, false]);
    }

    #[test]
    fn jb_loss_all_lost_and_none_lost() {
        let m = cbr(&[None; 4]).media(&[(None, None)]);
        let b = base_delay(&m, 2000 * MS).unwrap();
        let l = jb_loss(&m, Window::All, &b, &[40 * MS]);
        assert_eq!((l.packets[0], l.pure[0], l.late[0]), (4, 4, 0));
        let m = cbr(&[Some(5); 4]).media(&[(None, None)]);
        let b = base_delay(&m, 2000 * MS).unwrap();
        let l = jb_loss(&m, Window::All, &b, &[40 * MS]);
        assert_eq!((l.packets[0], l.pure[0], l.late[0]), (4, 0, 0));
        // A run without tcp_start has no overlap window: zero packets.
        let l = jb_loss(&m, Window::Overlap, &b, &[40 * MS]);
        assert_eq!(l.packets[0], 0);
    }

    fn lost_run(k: usize) -> Vec<Option<i64>> {
        // received, k lost, received
        let mut v = vec![Some(5)];
        v.extend(std::iter::repeat_n(None, k));
        v.push(Some(5));
        v
    }

    #[test]
    fn level_boundaries_at_20ms() {
        // Table 2: 1 → 1; 2–3 → 2; 4–5 → 3; 6–9 → 4; 10+ → 5.
        for (k, want) in [(1, 1), (2, 2), (3, 2), (4, 3), (5, 3), (6, 4), (9, 4), (10, 5), (25, 5)] {
            let m = cbr(&lost_run(k)).media(&[(None, None)]);
            let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
            let lv = levels(&m, &lost, 20 * MS).unwrap();
            assert_eq!(lv[0], 0);
            assert_eq!(lv[k + 1], 0);
            assert!(lv[1..=k].iter().all(|&l| l == want), "k={k}: {lv:?}");
        }
    }

    #[test]
    fn levels_generalise_by_duration() {
        // 10 ms packets: 3 lost = 30 ms → level 1; 4 lost = 40 ms → level 2; 20 lost → 5.
        assert_eq!(level_of(3, 10 * MS), 1);
        assert_eq!(level_of(4, 10 * MS), 2);
        assert_eq!(level_of(11, 10 * MS), 3);
        assert_eq!(level_of(12, 10 * MS), 4);
        assert_eq!(level_of(20, 10 * MS), 5);
        // 60 ms packets: one loss is already 60 ms of stream → level 2.
        assert_eq!(level_of(1, 60 * MS), 2);
        assert_eq!(level_of(0, 60 * MS), 0);
        assert_eq!(level_of(u32::MAX, i64::MAX), 5);
        let m = cbr(&[Some(1)]).media(&[(None, None)]);
        assert!(levels(&m, &[false], 0).is_err());
    }

    #[test]
    fn periods_follow_sequence_order_not_arrival() {
        // seq 0..5; 1 and 2 lost; 4 lost. Arrival order scrambled for received ones.
        let fx = Fx::new(&[
            (0, 1, 5, 100, Some(110)),
            (0, 1, 3, 60, Some(200)),
            (0, 1, 0, 0, Some(300)),
            (0, 1, 1, 20, None),
            (0, 1, 4, 80, None),
            (0, 1, 2, 40, None),
        ]);
        let m = fx.media(&[(None, None)]);
        let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
        assert_eq!(period_lengths(&m, &lost), vec![0, 2, 2, 0, 1, 0]);
        let p = periods(&m, &lost, Window::All);
        assert_eq!(p.first_row, vec![1, 4]);
        assert_eq!(p.length, vec![2, 1]);
        // Loss distance: first loss 0; seq 4 vs previous lost seq 2 → 2.
        assert_eq!(p.distance, vec![0, 2]);
    }

    #[test]
    fn period_touching_window_edges_keeps_full_length() {
        // 8 packets, seq 0..2 lost and seq 6..7 lost (touching both ends of the stream).
        // Window [40, 120] ms = seq 2..6: both periods touch it; levels keep full lengths.
        let fx = cbr(&[None, None, None, Some(5), Some(5), Some(5), None, None]);
        let m = fx.media(&[(Some(40), Some(120))]);
        let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
        let p = periods(&m, &lost, Window::Overlap);
        assert_eq!(p.length, vec![3, 2]);
        assert_eq!(p.distance, vec![0, 4]);
        assert_eq!(levels(&m, &lost, 20 * MS).unwrap(), vec![2, 2, 2, 0, 0, 0, 2, 2]);
        // Window [60, 100] ms touches neither period.
        let p = periods(&m, &lost, Window::Absolute { lo: 60 * MS, hi: 100 * MS });
        assert!(p.length.is_empty());
        // All lost: one period of 8 (160 ms → level 4).
        let m = cbr(&[None; 8]).media(&[(None, None)]);
        let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
        assert_eq!(periods(&m, &lost, Window::All).length, vec![8]);
        assert_eq!(levels(&m, &lost, 20 * MS).unwrap(), vec![4; 8]);
    }

    #[test]
    fn levels_over_time_normalised_by_replications() {
        // Two runs, tcp_start 20 ms, bins of 40 ms over 80 ms (2 bins).
        // Run 0: seq1 (t=0) level 0, seq2 (t=20) lost alone → level 1, seq3 (t=40) ok, seq4 (t=60) ok.
        // Run 1: all received; its tcp_end = 40 ms so only t = 0, 20 count.
        let mut rows = Vec::new();
        for run in 0..2 {
            for i in 0..5i64 {
                let recv = if run == 0 && i == 2 { None } else { Some(20 * i + 5) };
                rows.push((run, 1, i, 20 * i, recv));
            }
        }
        let fx = Fx::new(&rows);
        let m = fx.media(&[(Some(20), None), (Some(20), Some(40))]);
        let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
        let lv = levels(&m, &lost, 20 * MS).unwrap();
        let t = levels_over_time(&m, &lv, Window::Overlap, &[0, 0], 1, 40 * MS, 80 * MS).unwrap();
        assert_eq!(t.n_bins, 2);
        assert_eq!(t.replications, vec![2]);
        // bin 0: level0 = (1 + 2)/2, level1 = 1/2; bin 1: level0 = 2/2.
        assert_eq!(&t.normalised[0..6], &[1.5, 0.5, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(&t.normalised[6..12], &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // Separate groups: each has one replication.
        let t = levels_over_time(&m, &lv, Window::Overlap, &[0, 1], 2, 40 * MS, 80 * MS).unwrap();
        assert_eq!(t.replications, vec![1, 1]);
        assert_eq!(&t.normalised[12..18], &[2.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(levels_over_time(&m, &lv, Window::Overlap, &[0, 1], 1, 40 * MS, 80 * MS).is_err());
        // The fused multi-JB path gives the same numbers.
        let b = base_delay(&m, MS).unwrap();
        let f = levels_over_time_multi(&m, Window::Overlap, &b, &[None], 20 * MS, &[0, 1], 2, 40 * MS, 80 * MS).unwrap();
        assert_eq!(f[0].normalised, t.normalised);
        assert_eq!(f[0].replications, t.replications);
        assert!(levels_over_time(&m, &lv, Window::Overlap, &[0, 0], 1, 0, 80 * MS).is_err());
        assert!(levels_over_time(&m, &lv, Window::Overlap, &[0, 0], 1, 1, i64::MAX).is_err());
    }

    #[test]
    fn burst_stats_hand_computed() {
        // Pattern R L L R R L (6 packets): transitions R→L, L→L, L→R, R→R, R→L.
        // From R: 3 (2 to L) → p = 2/3; from L: 2 (1 to R) → q = 1/2; BurstR = 1/(7/6) = 6/7.
        let m = cbr(&[Some(1), None, None, Some(1), Some(1), None]).media(&[(None, None)]);
        let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
        let b = burst_stats(&m, &lost, Window::All)[0];
        assert_eq!((b.packets, b.lost), (6, 3));
        assert!((b.p - 2.0 / 3.0).abs() < 1e-12 && (b.q - 0.5).abs() < 1e-12);
        assert!((b.burst_r() - 6.0 / 7.0).abs() < 1e-12);
        assert_eq!(b.ppl(), 50.0);
        // No loss → BurstR 1.
        let m = cbr(&[Some(1); 3]).media(&[(None, None)]);
        let lost = lost_mask(&m, &base_delay(&m, MS).unwrap(), None);
        assert_eq!(burst_stats(&m, &lost, Window::All)[0].burst_r(), 1.0);
    }

    #[test]
    fn burst_stats_jbs_equal_one_mask_a_jb() {
        // two runs, two flows each; late and lost packets, a gap in seq; run 1 without TCP times
        let mut rows = Vec::new();
        for run in 0..2i64 {
            for flow in 1..3i64 {
                for i in 0..40i64 {
                    let owd = [5, 5, 30, 70, 5, 120, 5, 45, 5, 5][(i * (flow + run) % 10) as usize];
                    let lost = (i + flow) % 7 == 0;
                    rows.push((run, flow, i, 20 * i, (!lost).then_some(20 * i + owd)));
                }
            }
        }
        rows.push((1, 9, 0, 0, None)); // a stream with nothing received: no base delay
        let m = Fx::new(&rows).media(&[(Some(100), Some(600)), (None, None)]);
        let bases = base_delay(&m, 100 * MS).unwrap();
        // bases of no stream's data too: one near i64::MAX (base + jb saturates), one negative
        let mut odd = bases.clone();
        odd[0].owd_ns = Some(i64::MAX - 30 * MS);
        odd[1].owd_ns = Some(-50 * MS);
        let jbs = [0, 20 * MS, 40 * MS, 60 * MS, 150 * MS];
        // the buffers in any order, one twice, one negative
        let shuffled = [150 * MS, 0, 40 * MS, -10 * MS, 40 * MS, 20 * MS, 60 * MS];
        // more than 8: a row's count by bisection
        let many: Vec<i64> = (0..11).map(|k| (k * 7 % 11) * 15 * MS - 10 * MS).collect();
        for (bases, jbs) in [(&bases, &jbs[..]), (&bases, &shuffled[..]), (&odd, &shuffled[..]), (&bases, &[][..]), (&bases, &many[..]), (&odd, &many[..])] {
            for w in [Window::All, Window::Overlap, Window::Absolute { lo: 200 * MS, hi: 500 * MS }] {
                let fused = burst_stats_jbs(&m, bases, jbs, w);
                assert_eq!(fused.len(), m.streams.len() * jbs.len());
                for (j, &jb) in jbs.iter().enumerate() {
                    let one = burst_stats(&m, &lost_mask(&m, bases, Some(jb)), w);
                    for (si, b) in one.iter().enumerate() {
                        assert_eq!(fused[si * jbs.len() + j], *b, "{w:?} jb {jb} stream {si}");
                    }
                }
            }
        }
        // the fixture reaches every branch: late packets at one JB and not at a larger one, bursts
        let all = burst_stats_jbs(&m, &bases, &jbs, Window::All);
        assert!(all[0].lost > all[jbs.len() - 1].lost && all.iter().any(|b| b.q > 0.0 && b.p > 0.0));
    }
}
