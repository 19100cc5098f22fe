//! From a sender-side and a receiver-side capture to the shared tables (design.md): media_packets,
//! tcp_flows and one `runs` row with the anomaly flags of the PAM 2013 study.
//!
//! Passes, each streaming over one file:
//! 1. (`--media auto` only) detection on the sender capture: RTP candidates keyed by 5-tuple and
//!    SSRC, until one has [`DETECT_ENOUGH`] packets or the file ends.
//! 2. sender capture: one media row per media packet sent; TCP connections tracked.
//! 3. receiver capture: each media packet matched to its row by (stream, extended sequence
//!    number) for RTP (a dense per-stream index, [`SeqIndex`]), by a payload hash for plain UDP;
//!    duplicates and reordering counted; RTP receive statistics (RFC 3550) and CE marks on TCP
//!    segments recorded.
//!
//! Memory: a fixed read buffer per file, a row and an index entry per *media* packet (the output
//! itself), a few dozen bytes per TCP connection. Nothing grows with TCP traffic volume.
use std::collections::{HashMap, VecDeque};

use crate::error::{CaptureError, Warnings};
use crate::reader::CaptureReader;
use crate::rtp::{static_clock_rate, StreamStats};
use crate::tcp::{Segment, TcpTracker};
use crate::wire::{addr_to_string, decode, Addr, Rtp, Transport};

/// Null in the int64 time columns, as in the simulator's tables.
pub const NULL_NS: i64 = i64::MIN;
/// Detection stops once a candidate RTP stream has this many packets (4 s of 20 ms audio).
pub const DETECT_ENOUGH: u64 = 200;
/// A candidate is RTP if it has at least this many packets ...
pub const DETECT_MIN_PACKETS: u64 = 10;
/// ... and at least this share of its sequence steps advance by 1..=100.
pub const DETECT_MIN_ADVANCING: f64 = 0.9;
const MAX_CANDIDATES: usize = 4096;

/// Which UDP traffic is the media stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MediaSpec {
    /// Every RTP stream found by detection.
    Auto,
    /// UDP datagrams with this source or destination port, RTP or not; matched by payload hash.
    Udp(u16),
    /// The RTP stream with this SSRC.
    Rtp(u32),
}

impl std::str::FromStr for MediaSpec {
    type Err = CaptureError;
    fn from_str(s: &str) -> Result<Self, CaptureError> {
        let bad = || CaptureError::BadMediaSpec(s.to_string());
        if s == "auto" {
            return Ok(MediaSpec::Auto);
        }
        if let Some(p) = s.strip_prefix("udp:") {
            return p.parse().map(MediaSpec::Udp).map_err(|_| bad());
        }
        if let Some(x) = s.strip_prefix("rtp:") {
            let v = if let Some(h) = x.strip_prefix("0x").or_else(|| x.strip_prefix("0X")) {
                u32::from_str_radix(h, 16)
            } else {
                x.parse()
            };
            return v.map(MediaSpec::Rtp).map_err(|_| bad());
        }
        Err(bad())
    }
}

/// Analysis options. Times in ns.
#[derive(Clone, Debug)]
pub struct Options {
    pub media: MediaSpec,
    /// Receiver clock minus sender clock; subtracted from receiver timestamps.
    pub clock_offset_ns: i64,
    /// Absolute time of the run start; default: the first packet of the sender capture.
    pub t0_ns: Option<i64>,
    /// Arrival of the competing TCP traffic, relative to the run start; default: first SYN.
    pub tcp_start_ns: Option<i64>,
    /// RTP clock rate for dynamic payload types (RFC 3551 static types are known).
    pub clock_rate: Option<u32>,
    /// A delay spike: OWD more than this above the run's minimum OWD (PAM 2013: 3 s).
    pub spike_ns: i64,
    /// A long loss run: at least this many consecutive media packets lost.
    pub loss_run: u64,
    /// Reordered / duplicated packets needed to flag a run.
    pub reorder_min: u64,
    pub duplicate_min: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            media: MediaSpec::Auto,
            clock_offset_ns: 0,
            t0_ns: None,
            tcp_start_ns: None,
            clock_rate: None,
            spike_ns: 3_000_000_000,
            loss_run: 50,
            reorder_min: 1,
            duplicate_min: 1,
        }
    }
}

/// One media stream (flow_id = its index).
#[derive(Clone, Debug)]
pub struct MediaFlow {
    pub ssrc: Option<u32>,
    pub src: Addr,
    pub dst: Addr,
    pub sport: u16,
    pub dport: u16,
    pub payload_type: Option<u8>,
}

/// media_packets, columnar. Rows in sender capture order.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct MediaRows {
    pub flow_id: Vec<u32>,
    pub seq: Vec<i64>,
    pub send_ns: Vec<i64>,
    /// NULL_NS when lost.
    pub recv_ns: Vec<i64>,
    pub size: Vec<u32>,
    pub ce: Vec<bool>,
}

/// tcp_flows, columnar. `None` = null.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct TcpRows {
    pub flow_id: Vec<u32>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    pub sport: Vec<u16>,
    pub dport: Vec<u16>,
    pub iw: Vec<Option<u64>>,
    pub syn_ns: Vec<Option<i64>>,
    pub first_data_ns: Vec<Option<i64>>,
    pub end_ns: Vec<Option<i64>>,
    pub last_data_ns: Vec<Option<i64>>,
    /// Last packet of the connection in either direction.
    pub last_ns: Vec<i64>,
    pub bytes: Vec<u64>,
    pub bytes_acked: Vec<u64>,
    pub segments_sent: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub ecn_marks: Vec<u64>,
}

/// RFC 3550 receive statistics of one RTP stream at one capture point.
#[derive(Debug, Clone)]
pub struct RtpStreamRow {
    pub side: &'static str,
    pub flow_id: u32,
    pub ssrc: u32,
    pub src: String,
    pub dst: String,
    pub sport: u16,
    pub dport: u16,
    pub payload_type: u8,
    pub packets: u64,
    pub expected: i64,
    pub lost: i64,
    /// Seconds; NaN when the clock rate is unknown.
    pub min_jitter_s: f64,
    pub max_jitter_s: f64,
    pub mean_jitter_s: f64,
    pub min_delta_ns: Option<i64>,
    pub mean_delta_ns: f64,
    pub max_delta_ns: Option<i64>,
}

/// The `runs` row: times, counts, anomaly flags and the clock-offset bound.
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// Absolute time (ns since the epoch) of the run start.
    pub t0_epoch_ns: i64,
    pub tcp_start_ns: Option<i64>,
    pub tcp_end_ns: Option<i64>,
    pub media_sent: u64,
    pub media_received: u64,
    pub media_lost: u64,
    pub duplicates: u64,
    pub reordered: u64,
    /// Receiver-side media packets with no sender-side row (capture windows differ).
    pub unmatched: u64,
    pub sender_duplicates: u64,
    pub max_loss_run: u64,
    pub min_owd_ns: Option<i64>,
    pub max_owd_ns: Option<i64>,
    pub clock_offset_ns: i64,
    /// OWDs are non-negative, so the receiver clock is at most this far ahead of the sender's
    /// (the minimum OWD measured without correction): an upper bound on `clock_offset_ns`,
    /// i.e. a lower bound on the sender-minus-receiver offset.
    pub clock_offset_bound_ns: Option<i64>,
    pub flag_delay_spike: bool,
    pub flag_loss_run: bool,
    pub flag_reordering: bool,
    pub flag_duplication: bool,
    pub anomalous: bool,
    pub sender_frames: u64,
    pub receiver_frames: u64,
    pub sender_bytes: u64,
    pub receiver_bytes: u64,
}

#[derive(Debug)]
pub struct Analysis {
    pub media: MediaRows,
    pub media_flows: Vec<MediaFlow>,
    pub tcp: TcpRows,
    pub rtp_streams: Vec<RtpStreamRow>,
    pub run: RunSummary,
    pub sender_warnings: Warnings,
    pub receiver_warnings: Warnings,
    /// Analysis-level warnings (negative OWDs, several streams, ...).
    pub notes: Vec<String>,
}

/// Progress callback: (phase, bytes of the file read so far, file size).
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

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

/// Removes the entries of per-flow vectors whose flow is marked in `drop`.
fn drop_flows<T>(v: &mut Vec<T>, drop: &[bool]) {
    let mut k = 0;
    v.retain(|_| {
        k += 1;
        !drop.get(k - 1).copied().unwrap_or(false)
    });
}

/// Receive-side counters of one media flow.
#[derive(Clone, Copy, Debug, Default)]
struct FlowCounts {
    dups: u64,
    reordered: u64,
    unmatched: u64,
    raw_min: Option<i64>,
    negative: u64,
    positive: u64,
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

/// Runs the analysis of one capture pair: the passes (module doc), then the tables and flags.
pub fn analyze(sender: &str, receiver: &str, opt: &Options, mut progress: Option<Progress>) -> Result<Analysis, CaptureError> {
    check_options(opt)?;
    let mut sw = Warnings::default();
    let mut rw = Warnings::default();
    let mut notes = Vec::new();
    let flows = match opt.media {
        MediaSpec::Auto => detect_streams(sender, &mut sw, &mut progress, &mut notes)?,
        _ => Vec::new(),
    };
    let mut s = sender_pass(sender, opt, flows, &mut sw, &mut progress)?;
    let mut r = receiver_pass(receiver, opt, &mut s, &mut rw, &mut progress)?;
    if r.frames == 0 {
        notes.push(format!("the receiver capture {receiver} holds no packets: every media packet counts as lost"));
    }
    if opt.media == MediaSpec::Auto {
        drop_reversed_streams(&mut s, &mut r, &mut notes);
    }
    let tcp = tcp_rows(&s.tcp, s.t0, s.flows.len() as u32, &r.tcp_ce);
    let run = summarize(opt, &s, &r, &tcp, &mut notes);
    let rtp_streams = rtp_stream_rows(&s.flows, &s.stats, &r.stats);
    if s.flows.iter().any(|f| f.payload_type.is_some_and(|pt| static_clock_rate(pt).is_none())) && opt.clock_rate.is_none() {
        notes.push("dynamic RTP payload type: jitter needs --clock-rate (left empty)".into());
    }
    Ok(Analysis { media: s.media, media_flows: s.flows, tcp, rtp_streams, run, sender_warnings: sw, receiver_warnings: rw, notes })
}

fn check_options(opt: &Options) -> Result<(), CaptureError> {
    if opt.spike_ns <= 0 {
        return Err(CaptureError::BadOption { name: "spike", reason: "must be positive".into() });
    }
    if opt.loss_run == 0 {
        return Err(CaptureError::BadOption { name: "loss_run", reason: "must be at least 1".into() });
    }
    Ok(())
}

/// Pass 1 (`--media auto`): the RTP streams of the sender capture; an error when there is none.
fn detect_streams(sender: &str, sw: &mut Warnings, progress: &mut Option<Progress>, notes: &mut Vec<String>) -> Result<Vec<MediaFlow>, CaptureError> {
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
struct SenderPass {
    flows: Vec<MediaFlow>,
    media: MediaRows,
    /// Plain-UDP media rows by payload hash (probed on collisions).
    keys: HashMap<u64, u32>,
    /// RTP media rows by extended sequence number, per flow.
    rtp_rows: Vec<SeqIndex>,
    stats: Vec<StreamStats>,
    /// The first extended sequence number each flow sent (the receiver's statistics start there).
    seq_first: Vec<Option<i64>>,
    tcp: TcpTracker,
    dups: u64,
    frames: u64,
    bytes: u64,
    t0: i64,
}

/// Pass 2: one media row per media packet sent (times relative to `t0`); TCP connections tracked.
fn sender_pass(sender: &str, opt: &Options, flows: Vec<MediaFlow>, sw: &mut Warnings, progress: &mut Option<Progress>) -> Result<SenderPass, CaptureError> {
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
struct ReceiverPass {
    stats: Vec<StreamStats>,
    /// Per media flow: duplicates, reordered, unmatched, minimum raw OWD, raw OWDs < 0 and >= 0.
    per: Vec<FlowCounts>,
    /// CE-marked TCP segments by (lower port, higher port).
    tcp_ce: HashMap<(u16, u16), u64>,
    frames: u64,
    bytes: u64,
}

/// Pass 3: each media packet received matched to its row (receive time, CE); duplicates,
/// reordering (RFC 4737 §3.3) and RTP receive statistics counted; CE marks on TCP counted.
fn receiver_pass(receiver: &str, opt: &Options, s: &mut SenderPass, rw: &mut Warnings, progress: &mut Option<Progress>) -> Result<ReceiverPass, CaptureError> {
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

/// A two-way call: the sender capture also holds the stream coming the other way. Its packets
/// reach the "receiver" capture before the "sender" one, so most of its raw OWDs are negative
/// while the real media's are positive. Auto mode leaves such streams out (when some stay).
fn drop_reversed_streams(s: &mut SenderPass, r: &mut ReceiverPass, notes: &mut Vec<String>) {
    let n_flows = s.flows.len();
    if n_flows <= 1 {
        return;
    }
    let reversed: Vec<bool> = r.per.iter().map(|c| c.negative > c.positive).collect();
    if !(reversed.iter().any(|&r| r) && reversed.iter().any(|&r| !r)) {
        return;
    }
    let mut new_id = vec![u32::MAX; n_flows];
    let mut next = 0u32;
    for f in 0..n_flows {
        if reversed[f] {
            let fl = &s.flows[f];
            notes.push(format!(
                "RTP stream 0x{:08x} ({} -> {}) runs from the receiver to the sender (a two-way call?); left out, name it with --media rtp:SSRC to keep it",
                fl.ssrc.unwrap_or(0),
                addr_to_string(&fl.src),
                addr_to_string(&fl.dst)
            ));
        } else {
            new_id[f] = next;
            next += 1;
        }
    }
    let old = std::mem::take(&mut s.media);
    let media = &mut s.media;
    for i in 0..old.flow_id.len() {
        let id = new_id[old.flow_id[i] as usize];
        if id != u32::MAX {
            media.flow_id.push(id);
            media.seq.push(old.seq[i]);
            media.send_ns.push(old.send_ns[i]);
            media.recv_ns.push(old.recv_ns[i]);
            media.size.push(old.size[i]);
            media.ce.push(old.ce[i]);
        }
    }
    drop_flows(&mut s.flows, &reversed);
    drop_flows(&mut r.per, &reversed);
    drop_flows(&mut s.stats, &reversed);
    drop_flows(&mut r.stats, &reversed);
}

/// The tcp_flows table: one row per connection of the sender capture, flow ids after the `m`
/// media flows, times relative to `t0`.
fn tcp_rows(tracker: &TcpTracker, t0: i64, m: u32, tcp_ce: &HashMap<(u16, u16), u64>) -> TcpRows {
    let mut tcp = TcpRows::default();
    for (i, f) in tracker.flows.iter().enumerate() {
        let d = f.data_half();
        let h = &f.half[d];
        let (src, dst) = if d == 0 { (f.a, f.b) } else { (f.b, f.a) };
        let syn = f.half[0].syn_ns.into_iter().chain(f.half[1].syn_ns).min();
        let rel = |x: Option<i64>| x.map(|v| v - t0);
        tcp.flow_id.push(m + i as u32);
        tcp.src.push(addr_to_string(&src.0));
        tcp.dst.push(addr_to_string(&dst.0));
        tcp.sport.push(src.1);
        tcp.dport.push(dst.1);
        tcp.iw.push(if syn.is_some() && h.high > 1 { Some(h.initial_flight) } else { None });
        tcp.syn_ns.push(rel(syn));
        tcp.first_data_ns.push(rel(h.first_data_ns));
        tcp.end_ns.push(rel(f.end_ns()));
        tcp.last_data_ns.push(rel(h.last_data_ns));
        tcp.last_ns.push(f.last_ns - t0);
        // delivered = what the receiver acknowledged (a sender-side capture sees no more)
        let acked = h.acked.saturating_sub(1).min(h.bytes());
        tcp.bytes.push(acked);
        tcp.bytes_acked.push(acked);
        tcp.segments_sent.push(h.segments);
        tcp.retransmits.push(h.retransmits);
        let pk = if src.1 <= dst.1 { (src.1, dst.1) } else { (dst.1, src.1) };
        tcp.ecn_marks.push(tcp_ce.get(&pk).copied().unwrap_or(0));
    }
    tcp
}

/// The `runs` row: counts, loss runs per flow in send order, one-way delay range, the PAM 2013
/// anomaly flags.
fn summarize(opt: &Options, s: &SenderPass, r: &ReceiverPass, tcp: &TcpRows, notes: &mut Vec<String>) -> RunSummary {
    let (media, t0) = (&s.media, s.t0);
    let dups: u64 = r.per.iter().map(|c| c.dups).sum();
    let reordered: u64 = r.per.iter().map(|c| c.reordered).sum();
    let unmatched: u64 = r.per.iter().map(|c| c.unmatched).sum();
    let raw_min_owd = r.per.iter().filter_map(|c| c.raw_min).min();
    let tcp_start_ns = opt.tcp_start_ns.or_else(|| tcp.syn_ns.iter().zip(&s.tcp.flows).map(|(x, f)| x.unwrap_or(f.first_ns - t0)).min());
    let tcp_end_ns = tcp.end_ns.iter().zip(&tcp.last_ns).map(|(e, l)| e.unwrap_or(*l)).max();
    let mut run = RunSummary {
        t0_epoch_ns: t0,
        tcp_start_ns,
        tcp_end_ns,
        media_sent: media.flow_id.len() as u64,
        duplicates: dups,
        reordered,
        unmatched,
        sender_duplicates: s.dups,
        clock_offset_ns: opt.clock_offset_ns,
        clock_offset_bound_ns: raw_min_owd,
        sender_frames: s.frames,
        receiver_frames: r.frames,
        sender_bytes: s.bytes,
        receiver_bytes: r.bytes,
        ..Default::default()
    };
    let mut cur = vec![0u64; s.flows.len()];
    for i in 0..media.flow_id.len() {
        let f = media.flow_id[i] as usize;
        if media.recv_ns[i] == NULL_NS {
            run.media_lost += 1;
            cur[f] += 1;
            run.max_loss_run = run.max_loss_run.max(cur[f]);
        } else {
            run.media_received += 1;
            cur[f] = 0;
            let owd = media.recv_ns[i] - media.send_ns[i];
            run.min_owd_ns = Some(run.min_owd_ns.map_or(owd, |x| x.min(owd)));
            run.max_owd_ns = Some(run.max_owd_ns.map_or(owd, |x| x.max(owd)));
        }
    }
    if let Some(mn) = run.min_owd_ns {
        if mn < 0 {
            notes.push(format!(
                "negative one-way delays (minimum {:.3} ms): the receiver clock is behind the sender's; \
                 pass --clock-offset {}ns or less (the bound implied by the minimum delay)",
                mn as f64 / 1e6,
                raw_min_owd.unwrap_or(0)
            ));
        }
    }
    run.flag_delay_spike = matches!((run.min_owd_ns, run.max_owd_ns), (Some(a), Some(b)) if b - a > opt.spike_ns);
    run.flag_loss_run = run.max_loss_run >= opt.loss_run;
    run.flag_reordering = reordered >= opt.reorder_min;
    run.flag_duplication = dups >= opt.duplicate_min;
    run.anomalous = run.flag_delay_spike || run.flag_loss_run || run.flag_reordering || run.flag_duplication;
    if unmatched > 0 {
        notes.push(format!("{unmatched} media packets at the receiver have no sender-side copy (the captures cover different intervals?)"));
    }
    run
}

/// One row per RTP stream and side with packets: RFC 3550 counts, jitter (NaN without a clock
/// rate or with one packet), packet spacing.
fn rtp_stream_rows(flows: &[MediaFlow], send: &[StreamStats], recv: &[StreamStats]) -> Vec<RtpStreamRow> {
    let mut rows = Vec::new();
    for (side, stats) in [("sender", send), ("receiver", recv)] {
        for (i, s) in stats.iter().enumerate() {
            let f = &flows[i];
            let (Some(ssrc), Some(pt)) = (f.ssrc, f.payload_type) else { continue };
            if s.packets == 0 {
                continue;
            }
            let (nj, mj, aj) = if s.clock_rate.is_some() && s.packets > 1 {
                (s.min_jitter, s.max_jitter, s.mean_jitter())
            } else {
                (f64::NAN, f64::NAN, f64::NAN)
            };
            rows.push(RtpStreamRow {
                side,
                flow_id: i as u32,
                ssrc,
                src: addr_to_string(&f.src),
                dst: addr_to_string(&f.dst),
                sport: f.sport,
                dport: f.dport,
                payload_type: pt,
                packets: s.packets,
                expected: s.expected(),
                lost: s.lost(),
                min_jitter_s: nj,
                max_jitter_s: mj,
                mean_jitter_s: aj,
                min_delta_ns: s.min_delta_ns,
                mean_delta_ns: s.mean_delta_ns(),
                max_delta_ns: s.max_delta_ns,
            });
        }
    }
    rows
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
