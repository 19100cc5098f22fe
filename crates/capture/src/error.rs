//! The one error type of the crate. Every variant that concerns file contents carries the byte
//! offset where the problem was found. Offsets count bytes of the *uncompressed* capture stream
//! (for a gzip file: after decompression), which is also what Wireshark's "Go to byte" would show
//! on the decompressed file.
//!
//! Errors of the whole file (bad magic, unreadable file) abort the analysis. Errors inside a file
//! (a truncated last record, garbage after valid records) stop reading that file but keep every
//! record before them; they are reported as warnings. Per-packet problems (a header cut by a short
//! snaplen, a non-IP frame, an IP fragment) skip that one packet and are counted as warnings.
use std::io;

/// Everything that can go wrong reading, decoding or analysing captures.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The file could not be opened.
    #[error("cannot open {path}: {source}")]
    Open { path: String, #[source] source: io::Error },

    /// Reading failed (I/O error, or corrupt gzip data) after `offset` bytes of the capture.
    #[error("read error at byte {offset}: {source}")]
    Io { offset: u64, #[source] source: io::Error },

    /// The first bytes are neither a pcap nor a pcapng header (nor gzip around one).
    #[error("not a pcap or pcapng file: magic 0x{found:08x} at byte {offset}")]
    BadMagic { offset: u64, found: u32 },

    /// The file ends inside a header or record (e.g. a capture cut while being written).
    #[error("file truncated at byte {offset}: {what} needs {needed} bytes, only {available} left")]
    Truncated { offset: u64, what: &'static str, needed: u64, available: u64 },

    /// A record or block header holds impossible values (random bytes, a corrupt file).
    #[error("corrupt {what} at byte {offset}: {reason}")]
    Corrupt { offset: u64, what: &'static str, reason: String },

    /// A link-layer type this crate does not decode (see `decode::LinkType`).
    #[error("unsupported link type {linktype} at byte {offset}")]
    UnsupportedLinkType { offset: u64, linktype: u32 },

    /// A packet's headers are cut short (usually a short snaplen) before `layer` could be read.
    #[error("packet at byte {offset}: {layer} header cut at {available} of {needed} bytes (snaplen?)")]
    SnapTruncated { offset: u64, layer: &'static str, needed: usize, available: usize },

    /// A frame carrying something other than IPv4/IPv6 (ARP, LLDP, ...); skipped.
    #[error("packet at byte {offset}: not IP (ethertype 0x{ethertype:04x})")]
    NotIp { offset: u64, ethertype: u16 },

    /// An IP fragment; reassembly is not done, so the packet is skipped.
    #[error("packet at byte {offset}: IP fragment skipped (no reassembly)")]
    Fragment { offset: u64 },

    /// A header field contradicts itself (IHL < 5, UDP length < 8, TCP data offset < 5, ...).
    #[error("packet at byte {offset}: malformed {layer} header: {reason}")]
    Malformed { offset: u64, layer: &'static str, reason: &'static str },

    /// A packet block without a timestamp (pcapng Simple Packet Block); skipped.
    #[error("packet at byte {offset}: pcapng simple packet block has no timestamp; skipped")]
    NoTimestamp { offset: u64 },

    /// The `--media` argument is not `auto`, `udp:PORT` or `rtp:SSRC`.
    #[error("bad media selector {0:?}: expected auto, udp:PORT or rtp:SSRC")]
    BadMediaSpec(String),

    /// No media stream was found in the sender capture.
    #[error("no media stream found in the sender capture: {0}")]
    NoMedia(String),

    /// The sender capture holds no packet at all, so the run has no start time.
    #[error("the sender capture {0} holds no packets")]
    Empty(String),

    /// A capture that yields no media because the file itself is damaged or unreadable (its first
    /// record is impossible, its link type unknown): the damage, with its offset, is the error.
    #[error("{side} capture {path}: {first}")]
    Damaged { side: &'static str, path: String, first: String },

    /// An analysis option is out of range.
    #[error("bad option {name}: {reason}")]
    BadOption { name: &'static str, reason: String },
}

impl CaptureError {
    /// Byte offset in the capture stream the error refers to, if any.
    pub fn offset(&self) -> Option<u64> {
        use CaptureError::*;
        match self {
            Io { offset, .. }
            | BadMagic { offset, .. }
            | Truncated { offset, .. }
            | Corrupt { offset, .. }
            | UnsupportedLinkType { offset, .. }
            | SnapTruncated { offset, .. }
            | NotIp { offset, .. }
            | Fragment { offset }
            | Malformed { offset, .. }
            | NoTimestamp { offset } => Some(*offset),
            _ => None,
        }
    }

    /// A short stable name of the variant, used to group warnings.
    pub fn kind(&self) -> &'static str {
        use CaptureError::*;
        match self {
            Open { .. } => "open",
            Io { .. } => "io",
            BadMagic { .. } => "bad_magic",
            Truncated { .. } => "truncated",
            Corrupt { .. } => "corrupt",
            UnsupportedLinkType { .. } => "unsupported_linktype",
            SnapTruncated { .. } => "snap_truncated",
            NotIp { .. } => "not_ip",
            Fragment { .. } => "fragment",
            Malformed { .. } => "malformed",
            NoTimestamp { .. } => "no_timestamp",
            BadMediaSpec(_) => "bad_media_spec",
            NoMedia(_) => "no_media",
            Empty(_) => "empty",
            Damaged { .. } => "damaged",
            BadOption { .. } => "bad_option",
        }
    }
}

/// Non-fatal problems of one capture, grouped by kind so memory stays bounded: the first instance
/// (with its offset) and how many times it happened.
#[derive(Debug, Default)]
pub struct Warnings {
    pub items: Vec<(CaptureError, u64)>,
}

impl Warnings {
    pub fn push(&mut self, e: CaptureError) {
        let k = e.kind();
        if let Some(item) = self.items.iter_mut().find(|(f, _)| f.kind() == k) {
            item.1 += 1;
        } else {
            self.items.push((e, 1));
        }
    }
    pub fn count(&self, kind: &str) -> u64 {
        self.items.iter().find(|(f, _)| f.kind() == kind).map_or(0, |i| i.1)
    }
    /// The first problem of the file itself rather than of one packet: a read error, a truncated
    /// or corrupt record (reading stopped there), or a link type that is not decoded.
    pub fn damage(&self) -> Option<&CaptureError> {
        self.items.iter().map(|(e, _)| e).find(|e| matches!(e.kind(), "io" | "truncated" | "corrupt" | "unsupported_linktype"))
    }
    /// `e` (no media, no packets), or the file's damage when there is some: that is why.
    pub fn explain(&self, e: CaptureError, side: &'static str, path: &str) -> CaptureError {
        match self.damage() {
            Some(d) if matches!(e, CaptureError::NoMedia(_) | CaptureError::Empty(_)) => {
                CaptureError::Damaged { side, path: path.to_string(), first: d.to_string() }
            }
            _ => e,
        }
    }
    /// One line per kind: "first message (N times)".
    pub fn messages(&self) -> Vec<String> {
        self.items
            .iter()
            .map(|(e, n)| if *n > 1 { format!("{e} (and {} more like it)", n - 1) } else { e.to_string() })
            .collect()
    }
}
