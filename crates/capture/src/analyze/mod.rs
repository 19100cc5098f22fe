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
//! The passes are in `passes.rs`; this file holds the tables and what is derived from them.
//!
//! Memory: a fixed read buffer per file, a row and an index entry per *media* packet (the output
//! itself), a few dozen bytes per TCP connection. Nothing grows with TCP traffic volume.
use std::collections::HashMap;

use crate::error::{CaptureError, Warnings};
use crate::rtp::{static_clock_rate, StreamStats};
use crate::tcp::TcpTracker;
use crate::wire::{addr_to_string, Addr};

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

mod passes;
use passes::{detect_streams, receiver_pass, sender_pass, ReceiverPass, SenderPass};

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


/// Removes the entries of per-flow vectors whose flow is marked in `drop`.
fn drop_flows<T>(v: &mut Vec<T>, drop: &[bool]) {
    let mut k = 0;
    v.retain(|_| {
        k += 1;
        !drop.get(k - 1).copied().unwrap_or(false)
    });
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
