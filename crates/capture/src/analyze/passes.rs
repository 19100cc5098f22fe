//! The streaming passes of [`super::analyze`] over the two captures: detection, the sender pass
//! (media rows, TCP tracking) and the receiver pass (matching, reordering, RTP statistics, CE).
use std::collections::{HashMap, VecDeque};

use super::{MediaFlow, MediaRows, MediaSpec, Options, Progress, DETECT_ENOUGH, DETECT_MIN_ADVANCING, DETECT_MIN_PACKETS, MAX_CANDIDATES, NULL_NS};
use crate::error::{CaptureError, Warnings};
use crate::reader::CaptureReader;
use crate::rtp::{static_clock_rate, StreamStats};
use crate::tcp::{Segment, TcpTracker};
use crate::wire::{decode, Addr, Rtp, Transport};

const PROGRESS_STEP: u64 = 32 << 20;

/// Reads every frame of `path`, calling `f` with decoded packets; decode problems become warnings.
/// `stop` lets the detection pass end early. Returns the frame count.
fn for_each_packet(
    path: &str,
    phase: &str,
    warnings: &mut Warnings,
    progress: &mut Option<Progress>,
    mut f: impl FnMut(i64, &crate::wire::Decoded) -> bool,
) -> Result<(u64, u64, Option<i64>), CaptureError> {
    let total = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut rd = CaptureReader::open(path)?;
    let mut frames = 0u64;
    let mut next_report = PROGRESS_STEP;
    let mut first_ts = None;
    loop {
        let frame = match rd.next_frame() {
            Ok(Some(fr)) => fr,
            Ok(None) => break,
            Err(e) => {
                warnings.push(e);
                continue; // the reader is finished after a fatal error, or skips the block
            }
        };
        if frames == 0 {
            first_ts = Some(frame.ts_ns);
        }
        frames += 1;
        let keep_going = match decode(frame.linktype, frame.data, frame.offset) {
            Ok(d) => f(frame.ts_ns, &d),
            Err(e) => {
                warnings.push(e);
                true
            }
        };
        if !keep_going {
            break;
        }
        if let Some(p) = progress.as_mut() {
            let done = rd.raw_bytes_read();
            if done >= next_report {
                p(phase, done, total);
                next_report = done + PROGRESS_STEP;
            }
        }
    }
    if let Some(p) = progress.as_mut() {
        p(phase, rd.raw_bytes_read(), total);
    }
    Ok((frames, rd.raw_bytes_read(), first_ts))
}

/// Source, destination, ports and SSRC of a candidate RTP stream.
type CandidateKey = (Addr, Addr, u16, u16, u32);

#[derive(Default)]
struct Candidate {
    first_order: u64,
    packets: u64,
    advancing: u64,
    last_seq: u16,
    pt: u8,
}

/// Pass 1: RTP streams in the sender capture (5-tuple + SSRC with advancing sequence numbers).
fn detect(path: &str, warnings: &mut Warnings, progress: &mut Option<Progress>) -> Result<Vec<MediaFlow>, CaptureError> {
    let mut cands: HashMap<CandidateKey, Candidate> = HashMap::new();
    let mut order = 0u64;
    for_each_packet(path, "detect", warnings, progress, |_, d| {
        if let Transport::Udp { sport, dport, payload } = d.transport {
            if let Some(r) = Rtp::new_checked(payload) {
                let key = (d.src, d.dst, sport, dport, r.ssrc());
                if !cands.contains_key(&key) && cands.len() >= MAX_CANDIDATES {
                    return true;
                }
                let c = cands.entry(key).or_insert_with(|| {
                    order += 1;
                    Candidate { first_order: order, last_seq: r.seq().wrapping_sub(1), pt: r.payload_type(), ..Default::default() }
                });
                let step = r.seq().wrapping_sub(c.last_seq);
                if (1..=100).contains(&step) {
                    c.advancing += 1;
                }
                c.packets += 1;
                c.last_seq = r.seq();
                if c.packets >= DETECT_ENOUGH && c.advancing as f64 >= DETECT_MIN_ADVANCING * c.packets as f64 {
                    return false;
                }
            }
        }
        true
    })?;
    let mut found: Vec<(&CandidateKey, &Candidate)> = cands
        .iter()
        .filter(|(_, c)| c.packets >= DETECT_MIN_PACKETS && c.advancing as f64 >= DETECT_MIN_ADVANCING * c.packets as f64)
        .collect();
    found.sort_by_key(|(_, c)| c.first_order);
    Ok(found
        .into_iter()
        .map(|(k, c)| MediaFlow { ssrc: Some(k.4), src: k.0, dst: k.1, sport: k.2, dport: k.3, payload_type: Some(c.pt) })
        .collect())
}


/// Receive-side counters of one media flow.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FlowCounts {
    pub(super) dups: u64,
    pub(super) reordered: u64,
    pub(super) unmatched: u64,
    pub(super) raw_min: Option<i64>,
    pub(super) negative: u64,
    pub(super) positive: u64,
}

/// FNV-1a over the payload: the key of plain-UDP media packets (NAT-proof, unlike addresses).
fn payload_hash(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
/// Probe step for repeated payloads: the k-th copy of a payload gets key h + k·STEP.
const PROBE: u64 = 0x9E37_79B9_7F4A_7C15;

/// Media rows of one RTP flow by extended sequence number.
///
/// The numbers of a stream are nearly consecutive, so most live in a dense window indexed by
/// `ext - base`: consecutive packets touch neighbouring slots, where a hash table would send each
/// lookup to a random cache line (on a million-packet capture that was most of the analysis
/// time). Numbers that would make the window sparse — a jump far ahead or behind — go to a hash
/// map instead, so memory stays within two slots per stored number plus [`SeqIndex::SLACK`].
#[derive(Default)]
struct SeqIndex {
    base: i64,
    /// Row per `ext - base`; [`SeqIndex::EMPTY`] where none. A deque so the window can grow at
    /// the front (packets older than the first one) in amortised constant time.
    rows: VecDeque<u32>,
    /// Numbers stored in `rows`.
    dense: usize,
    far: HashMap<i64, u32>,
}

impl SeqIndex {
    const EMPTY: u32 = u32::MAX;
    /// Empty slots allowed beyond one per stored number.
    const SLACK: usize = 1024;

    fn slot(&self, ext: i64) -> Option<usize> {
        let i = ext.wrapping_sub(self.base);
        (i >= 0 && (i as u64) < self.rows.len() as u64).then_some(i as usize)
    }

    fn get(&self, ext: i64) -> Option<u32> {
        if let Some(i) = self.slot(ext) {
            let r = self.rows[i];
            if r != Self::EMPTY {
                return Some(r);
            }
        }
        // The window may since have grown over a number stored in `far`.
        if self.far.is_empty() {
            None
        } else {
            self.far.get(&ext).copied()
        }
    }

    fn contains(&self, ext: i64) -> bool { self.get(ext).is_some() }

    /// Stores `row` for `ext` (not already present; rows are below `EMPTY`).
    fn insert(&mut self, ext: i64, row: u32) {
        debug_assert!(row != Self::EMPTY);
        if self.rows.is_empty() {
            self.base = ext;
            self.rows.push_back(row);
            self.dense = 1;
            return;
        }
        if let Some(i) = self.slot(ext) {
            self.rows[i] = row;
            self.dense += 1;
            return;
        }
        let limit = 2 * (self.dense + 1) + Self::SLACK;
        let len = self.rows.len() as i128;
        let (lo, hi) = (self.base as i128, self.base as i128 + len);
        let e = ext as i128;
        let new_len = if e >= hi { e - lo + 1 } else { hi - e };
        if new_len > limit as i128 {
            self.far.insert(ext, row);
            return;
        }
        if e >= hi {
            self.rows.resize(new_len as usize, Self::EMPTY);
            *self.rows.back_mut().unwrap() = row;
        } else {
            for _ in 0..(lo - e - 1) {
                self.rows.push_front(Self::EMPTY);
            }
            self.rows.push_front(row);
            self.base = ext;
        }
        self.dense += 1;
    }
}

/// Index of the first media flow with this SSRC; `last` remembers the previous answer, which stays
/// right because flows are only ever appended.
fn flow_of(flows: &[MediaFlow], last: &mut Option<(u32, usize)>, ssrc: u32) -> Option<usize> {
    if let Some((s, i)) = *last {
        if s == ssrc {
            return Some(i);
        }
    }
    let i = flows.iter().position(|f| f.ssrc == Some(ssrc))?;
    *last = Some((ssrc, i));
    Some(i)
}


/// Pass 1 (`--media auto`): the RTP streams of the sender capture; an error when there is none.
pub(super) fn detect_streams(sender: &str, sw: &mut Warnings, progress: &mut Option<Progress>, notes: &mut Vec<String>) -> Result<Vec<MediaFlow>, CaptureError> {
    let f = detect(sender, sw, progress)?;
    if f.is_empty() {
        return Err(sw.explain(
            CaptureError::NoMedia("no RTP stream (version 2, stable SSRC, advancing sequence numbers) in the first packets; name one with --media udp:PORT or rtp:SSRC".into()),
            "sender",
            sender,
        ));
    }
    if f.len() > 1 {
        notes.push(format!("{} RTP streams found; all are analysed (flow_id 0..{})", f.len(), f.len() - 1));
    }
    // Detection warnings repeat in the sender pass; keep one copy.
    *sw = Warnings::default();
    Ok(f)
}

/// What the sender pass learnt: the media rows and how to find them again, per-stream RTP
/// statistics, the TCP connections.
pub(super) struct SenderPass {
    pub(super) flows: Vec<MediaFlow>,
    pub(super) media: MediaRows,
    /// Plain-UDP media rows by payload hash (probed on collisions).
    keys: HashMap<u64, u32>,
    /// RTP media rows by extended sequence number, per flow.
    rtp_rows: Vec<SeqIndex>,
    pub(super) stats: Vec<StreamStats>,
    /// The first extended sequence number each flow sent (the receiver's statistics start there).
    seq_first: Vec<Option<i64>>,
    pub(super) tcp: TcpTracker,
    pub(super) dups: u64,
    pub(super) frames: u64,
    pub(super) bytes: u64,
    pub(super) t0: i64,
}

/// Pass 2: one media row per media packet sent (times relative to `t0`); TCP connections tracked.
pub(super) fn sender_pass(sender: &str, opt: &Options, flows: Vec<MediaFlow>, sw: &mut Warnings, progress: &mut Option<Progress>) -> Result<SenderPass, CaptureError> {
    let mut s = SenderPass {
        flows,
        media: MediaRows::default(),
        keys: HashMap::new(),
        rtp_rows: Vec::new(),
        stats: Vec::new(),
        seq_first: Vec::new(),
        tcp: TcpTracker::default(),
        dups: 0,
        frames: 0,
        bytes: 0,
        t0: 0,
    };
    // The flow of the SSRC looked up last (flows are only appended, so it stays the first match).
    let mut last_flow: Option<(u32, usize)> = None;
    let mut udp_ordinal = 0i64;
    let spec = opt.media.clone();
    let (frames, bytes, first_ts) = for_each_packet(sender, "sender", sw, progress, |ts, d| {
        match d.transport {
            Transport::Udp { sport, dport, payload } => {
                // (flow, key, seq); the key is the payload hash in Udp mode, unused for RTP.
                let hit: Option<(u32, u64, i64)> = match spec {
                    MediaSpec::Udp(port) => {
                        // The first datagram with the port fixes the direction (5-tuple); the
                        // other direction of a two-way exchange is not media.
                        let same_dir = s.flows.first().is_none_or(|f| (f.src, f.dst, f.sport, f.dport) == (d.src, d.dst, sport, dport));
                        if (sport == port || dport == port) && same_dir {
                            if s.flows.is_empty() {
                                s.flows.push(MediaFlow { ssrc: None, src: d.src, dst: d.dst, sport, dport, payload_type: None });
                            }
                            let mut k = payload_hash(payload);
                            while s.keys.contains_key(&k) {
                                k = k.wrapping_add(PROBE);
                            }
                            udp_ordinal += 1;
                            Some((0, k, udp_ordinal - 1))
                        } else {
                            None
                        }
                    }
                    MediaSpec::Rtp(_) | MediaSpec::Auto => Rtp::new_checked(payload).and_then(|r| {
                        let fi = match flow_of(&s.flows, &mut last_flow, r.ssrc()) {
                            Some(i) => i,
                            None if spec == MediaSpec::Rtp(r.ssrc()) => {
                                s.flows.push(MediaFlow { ssrc: Some(r.ssrc()), src: d.src, dst: d.dst, sport, dport, payload_type: Some(r.payload_type()) });
                                s.flows.len() - 1
                            }
                            None => return None,
                        };
                        while s.stats.len() < s.flows.len() {
                            let pt = s.flows[s.stats.len()].payload_type.unwrap_or(0);
                            s.stats.push(StreamStats::new(static_clock_rate(pt).or(opt.clock_rate), None));
                            s.seq_first.push(None);
                            s.rtp_rows.push(SeqIndex::default());
                        }
                        let ext = s.stats[fi].on_packet(ts, r.seq(), r.timestamp());
                        s.seq_first[fi].get_or_insert(ext);
                        if s.rtp_rows[fi].contains(ext) {
                            s.dups += 1;
                            return None;
                        }
                        Some((fi as u32, 0, ext))
                    }),
                };
                if let Some((fi, k, seq)) = hit {
                    let row = s.media.flow_id.len() as u32;
                    match spec {
                        MediaSpec::Udp(_) => {
                            s.keys.insert(k, row);
                        }
                        _ => s.rtp_rows[fi as usize].insert(seq, row),
                    }
                    let m = &mut s.media;
                    m.flow_id.push(fi);
                    m.seq.push(seq);
                    m.send_ns.push(ts); // made relative after the pass
                    m.recv_ns.push(NULL_NS);
                    m.size.push(d.ip_len);
                    m.ce.push(false);
                }
            }
            Transport::Tcp { sport, dport, seq, ack, flags, payload_len, .. } => {
                s.tcp.on_segment(&Segment { ts_ns: ts, src: (d.src, sport), dst: (d.dst, dport), seq, ack, flags, payload_len, ecn: d.ecn });
            }
            Transport::Other(_) => {}
        }
        true
    })?;
    let Some(first_ts) = first_ts else { return Err(sw.explain(CaptureError::Empty(sender.to_string()), "sender", sender)) };
    s.t0 = opt.t0_ns.unwrap_or(first_ts);
    for t in s.media.send_ns.iter_mut() {
        *t -= s.t0;
    }
    if s.media.flow_id.is_empty() {
        return Err(sw.explain(
            CaptureError::NoMedia(match opt.media {
                MediaSpec::Udp(p) => format!("no UDP datagram with port {p}"),
                MediaSpec::Rtp(s) => format!("no RTP packet with SSRC {s} (0x{s:08x})"),
                MediaSpec::Auto => "no RTP packet of the detected streams".into(),
            }),
            "sender",
            sender,
        ));
    }
    (s.frames, s.bytes) = (frames, bytes);
    Ok(s)
}

/// What the receiver pass learnt, per media flow and about TCP's CE marks.
pub(super) struct ReceiverPass {
    pub(super) stats: Vec<StreamStats>,
    /// Per media flow: duplicates, reordered, unmatched, minimum raw OWD, raw OWDs < 0 and >= 0.
    pub(super) per: Vec<FlowCounts>,
    /// CE-marked TCP segments by (lower port, higher port).
    pub(super) tcp_ce: HashMap<(u16, u16), u64>,
    pub(super) frames: u64,
    pub(super) bytes: u64,
}

/// Pass 3: each media packet received matched to its row (receive time, CE); duplicates,
/// reordering (RFC 4737 §3.3) and RTP receive statistics counted; CE marks on TCP counted.
pub(super) fn receiver_pass(receiver: &str, opt: &Options, s: &mut SenderPass, rw: &mut Warnings, progress: &mut Option<Progress>) -> Result<ReceiverPass, CaptureError> {
    let n_flows = s.flows.len();
    let stats = (0..n_flows)
        .map(|i| StreamStats::new(static_clock_rate(s.flows[i].payload_type.unwrap_or(0)).or(opt.clock_rate), s.seq_first.get(i).copied().flatten()))
        .collect();
    let mut r = ReceiverPass { stats, per: vec![FlowCounts::default(); n_flows], tcp_ce: HashMap::new(), frames: 0, bytes: 0 };
    let mut max_recv_seq: Vec<Option<i64>> = vec![None; n_flows];
    let mut last_flow: Option<(u32, usize)> = None;
    let (t0, media, flows) = (s.t0, &mut s.media, &s.flows);
    let (frames, bytes, _) = for_each_packet(receiver, "receiver", rw, progress, |ts, d| {
        match d.transport {
            Transport::Udp { sport, dport, payload } => {
                let found: Option<(usize, Option<u32>, bool)> = match opt.media {
                    MediaSpec::Udp(port) => {
                        // Addresses may differ behind a NAT, but the named port keeps its side.
                        let named_is_dst = flows[0].dport == port;
                        if (named_is_dst && dport == port) || (!named_is_dst && sport == port) {
                            let mut k = payload_hash(payload);
                            let mut row = None;
                            let mut dup = false;
                            while let Some(&x) = s.keys.get(&k) {
                                if media.recv_ns[x as usize] == NULL_NS {
                                    row = Some(x);
                                    dup = false;
                                    break;
                                }
                                dup = true;
                                k = k.wrapping_add(PROBE);
                            }
                            Some((0, row, dup))
                        } else {
                            None
                        }
                    }
                    _ => Rtp::new_checked(payload).and_then(|p| {
                        let fi = flow_of(flows, &mut last_flow, p.ssrc())?;
                        let ext = r.stats[fi].on_packet(ts, p.seq(), p.timestamp());
                        let row = s.rtp_rows.get(fi).and_then(|x| x.get(ext));
                        let dup = row.is_some_and(|x| media.recv_ns[x as usize] != NULL_NS);
                        Some((fi, row.filter(|_| !dup), dup))
                    }),
                };
                if let Some((fi, row, dup)) = found {
                    let c = &mut r.per[fi];
                    if dup {
                        c.dups += 1;
                    } else if let Some(row) = row {
                        let row = row as usize;
                        let seq = media.seq[row];
                        // RFC 4737 §3.3: reordered if below the highest sequence already received.
                        match max_recv_seq[fi] {
                            Some(m) if seq < m => c.reordered += 1,
                            _ => max_recv_seq[fi] = Some(seq),
                        }
                        let raw = ts - (media.send_ns[row] + t0);
                        c.raw_min = Some(c.raw_min.map_or(raw, |m| m.min(raw)));
                        if raw < 0 {
                            c.negative += 1;
                        } else {
                            c.positive += 1;
                        }
                        media.recv_ns[row] = ts - opt.clock_offset_ns - t0;
                        media.ce[row] = d.ecn == 3;
                    } else {
                        c.unmatched += 1;
                    }
                }
            }
            Transport::Tcp { sport, dport, .. } => {
                if d.ecn == 3 {
                    let k = if sport <= dport { (sport, dport) } else { (dport, sport) };
                    *r.tcp_ce.entry(k).or_default() += 1;
                }
            }
            Transport::Other(_) => {}
        }
        true
    })?;
    (r.frames, r.bytes) = (frames, bytes);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SeqIndex against a plain HashMap on a sequence with wraps of the window in both
    /// directions, far jumps, and numbers stored far away before the window grows over them.
    #[test]
    fn seq_index_agrees_with_a_hash_map() {
        let mut idx = SeqIndex::default();
        let mut reference: HashMap<i64, u32> = HashMap::new();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut ext: i64 = 1000;
        for row in 0..20_000u32 {
            // xorshift: mostly +1, sometimes back a little, sometimes a far jump either way.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ext += match x % 100 {
                0 => 40_000,
                1 => -40_000,
                2..=4 => -(((x >> 8) % 3000) as i64),
                5..=9 => 0,
                _ => 1,
            };
            assert_eq!(idx.get(ext), reference.get(&ext).copied(), "ext {ext}");
            if let std::collections::hash_map::Entry::Vacant(v) = reference.entry(ext) {
                idx.insert(ext, row);
                v.insert(row);
            }
        }
        for e in -200_000..200_000 {
            assert_eq!(idx.get(e), reference.get(&e).copied(), "ext {e}");
        }
        assert!(!idx.far.is_empty(), "the far jumps were not exercised");
        // Two slots per stored number plus the slack.
        assert!(idx.rows.len() <= 2 * idx.dense + SeqIndex::SLACK);
    }

    #[test]
    fn seq_index_descending_and_far_then_covered() {
        let mut idx = SeqIndex::default();
        idx.insert(10, 0);
        idx.insert(5000, 1); // too far for a window of one: kept aside
        assert_eq!((idx.get(10), idx.get(5000), idx.get(11)), (Some(0), Some(1), None));
        for (k, e) in (11..6000).enumerate() {
            if e != 5000 {
                idx.insert(e, 2 + k as u32);
            }
        }
        // The window now covers 5000, whose row still comes from the side map.
        assert_eq!(idx.get(5000), Some(1));
        assert_eq!(idx.get(5999), Some(2 + (5999 - 11)));
        for (k, e) in (-3000..10).rev().enumerate() {
            idx.insert(e, 100_000 + k as u32);
        }
        assert_eq!((idx.get(9), idx.get(-3000), idx.get(-3001)), (Some(100_000), Some(100_000 + 3009), None));
    }
}
