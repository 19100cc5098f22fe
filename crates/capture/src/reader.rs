//! Streaming pcap / pcapng reader. One fixed buffer (grown only for a record larger than it, up to
//! [`MAX_RECORD`]); each frame is handed out as a slice of that buffer, so nothing is copied per
//! packet and memory does not depend on the capture length.
//!
//! Formats: pcap (libpcap, magic a1b2c3d4 = microseconds, a1b23c4d = nanoseconds, either byte
//! order; <https://www.ietf.org/archive/id/draft-ietf-opsawg-pcap-04.html>) and pcapng (SHB, IDB,
//! EPB, the obsolete PB, SPB skipped; if_tsresol and if_tsoffset honoured;
//! draft-ietf-opsawg-pcapng-02 §4). Either may be gzip-compressed (detected by the 1f 8b magic).
use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::CaptureError;

/// Largest record accepted. Wireshark's limit for most link types is 262144 bytes; anything far
/// above that is a corrupt length field, not a packet.
pub const MAX_RECORD: usize = 16 << 20;
const BUF_SIZE: usize = 1 << 20;

/// One captured frame, borrowed from the reader's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// Absolute timestamp, ns since the Unix epoch.
    pub ts_ns: i64,
    /// LINKTYPE_ value of the interface it was captured on.
    pub linktype: u32,
    /// Length on the wire (may exceed `data.len()` when cut by the snaplen).
    pub orig_len: u32,
    /// Stream offset of `data[0]` (the first captured byte, after the record header), in the
    /// uncompressed stream.
    pub offset: u64,
    pub data: &'a [u8],
}

/// Counts raw (possibly compressed) bytes read from the file, for progress reports.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}
impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A byte stream with a refillable window: `ensure(n)` makes the next `n` bytes addressable.
struct Window<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Stream offset of `buf[0]`.
    base: u64,
    eof: bool,
}

impl<R: Read> Window<R> {
    fn new(inner: R) -> Self {
        Window { inner, buf: vec![0; BUF_SIZE], pos: 0, end: 0, base: 0, eof: false }
    }
    fn offset(&self) -> u64 { self.base + self.pos as u64 }
    fn available(&self) -> usize { self.end - self.pos }
    /// Tries to make `n` bytes available; returns how many are (fewer only at end of file).
    fn ensure(&mut self, n: usize) -> Result<usize, CaptureError> {
        if self.available() >= n || self.eof {
            return Ok(self.available());
        }
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
            if n > self.buf.len() {
                self.buf.resize(n.next_power_of_two(), 0);
            }
        }
        while self.end - self.pos < n {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CaptureError::Io { offset: self.base + self.end as u64, source: e }),
            }
        }
        Ok(self.available())
    }
    fn peek(&self, n: usize) -> &[u8] { &self.buf[self.pos..self.pos + n] }
    fn advance(&mut self, n: usize) { self.pos += n; }
    /// Shrinks the buffer back after an unusually large record.
    fn maybe_shrink(&mut self) {
        if self.buf.len() > BUF_SIZE && self.available() <= BUF_SIZE {
            self.buf.copy_within(self.pos..self.end, 0);
            self.base += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
            self.buf.truncate(BUF_SIZE);
            self.buf.shrink_to_fit();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Endian {
    Little,
    Big,
}
impl Endian {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self { Endian::Little => u16::from_le_bytes(a), Endian::Big => u16::from_be_bytes(a) }
    }
    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self { Endian::Little => u32::from_le_bytes(a), Endian::Big => u32::from_be_bytes(a) }
    }
}

/// Per-interface data of a pcapng section.
#[derive(Clone, Copy, Debug)]
struct Iface {
    linktype: u32,
    /// Timestamp units per second is `10^res` (decimal) or `2^res` (binary).
    res: u8,
    binary: bool,
    offset_s: i64,
}

enum Format {
    Pcap { endian: Endian, nanos: bool, linktype: u32, snaplen: u32 },
    Pcapng { endian: Endian, ifaces: Vec<Iface> },
}

/// Container format detected from the first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Pcap,
    PcapNanos,
    Pcapng,
}

pub struct CaptureReader {
    win: Window<Box<dyn Read + Send>>,
    format: Format,
    done: bool,
    /// Raw bytes read from the file so far (compressed bytes for gzip).
    raw_read: Arc<AtomicU64>,
    pub gzip: bool,
    pub container: Container,
}

const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
const PCAPNG_BOM: u32 = 0x1A2B_3C4D;

impl CaptureReader {
    /// Opens a file, detecting gzip and the container format.
    pub fn open(path: &str) -> Result<Self, CaptureError> {
        let f = File::open(path).map_err(|e| CaptureError::Open { path: path.to_string(), source: e })?;
        Self::from_reader(Box::new(io::BufReader::with_capacity(1 << 16, f)))
    }

    /// Reads from any byte source (used by tests and the fuzz test).
    pub fn from_reader(inner: Box<dyn Read + Send>) -> Result<Self, CaptureError> {
        let raw_read = Arc::new(AtomicU64::new(0));
        let mut counted: Box<dyn Read + Send> = Box::new(Counting { inner, count: raw_read.clone() });
        // Peek two bytes for the gzip magic (RFC 1952 §2.3.1) without losing them.
        let mut head = [0u8; 2];
        let mut got = 0;
        while got < 2 {
            match counted.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(CaptureError::Io { offset: got as u64, source: e }),
            }
        }
        let chained: Box<dyn Read + Send> = Box::new(io::Cursor::new(head[..got].to_vec()).chain(counted));
        let gzip = got == 2 && head == [0x1f, 0x8b];
        let stream: Box<dyn Read + Send> =
            if gzip { Box::new(flate2::read::MultiGzDecoder::new(chained)) } else { chained };
        let mut win = Window::new(stream);
        let n = win.ensure(4)?;
        if n < 4 {
            return Err(CaptureError::Truncated { offset: 0, what: "file header", needed: 24, available: n as u64 });
        }
        let magic_le = u32::from_le_bytes(win.peek(4).try_into().unwrap());
        let (format, container) = match magic_le {
            0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1 => {
                let endian = if magic_le == 0xa1b2_c3d4 || magic_le == 0xa1b2_3c4d { Endian::Little } else { Endian::Big };
                let nanos = magic_le == 0xa1b2_3c4d || magic_le == 0x4d3c_b2a1;
                let n = win.ensure(24)?;
                if n < 24 {
                    return Err(CaptureError::Truncated { offset: 0, what: "pcap file header", needed: 24, available: n as u64 });
                }
                let h = win.peek(24);
                let snaplen = endian.u32(&h[16..20]);
                // The upper 6 bits of the link-type field carry FCS information (pcap draft §4).
                let linktype = endian.u32(&h[20..24]) & 0x03FF_FFFF;
                win.advance(24);
                (Format::Pcap { endian, nanos, linktype, snaplen }, if nanos { Container::PcapNanos } else { Container::Pcap })
            }
            PCAPNG_SHB => (Format::Pcapng { endian: Endian::Little, ifaces: Vec::new() }, Container::Pcapng),
            _ => {
                let found = u32::from_be_bytes(win.peek(4).try_into().unwrap());
                return Err(CaptureError::BadMagic { offset: 0, found });
            }
        };
        Ok(CaptureReader { win, format, done: false, raw_read, gzip, container })
    }

    /// Raw bytes consumed from the underlying file so far (for progress against the file size).
    pub fn raw_bytes_read(&self) -> u64 { self.raw_read.load(Ordering::Relaxed) }

    /// Stream offset of the next record.
    pub fn offset(&self) -> u64 { self.win.offset() }

    /// The next frame, `Ok(None)` at the end. After an error the reader is finished: the error is
    /// returned once and every later call gives `Ok(None)`, so the caller keeps what it has.
    pub fn next_frame(&mut self) -> Result<Option<Frame<'_>>, CaptureError> {
        if self.done {
            return Ok(None);
        }
        let r = match self.format {
            Format::Pcap { .. } => self.next_pcap(),
            Format::Pcapng { .. } => self.next_pcapng(),
        };
        match r {
            Ok(Some((_record_off, start, len, ts_ns, linktype, orig_len))) => {
                let offset = self.win.base + start as u64;
                let data = &self.win.buf[start..start + len];
                Ok(Some(Frame { ts_ns, linktype, orig_len, offset, data }))
            }
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => {
                // A block without a timestamp is skipped; anything else ends the file.
                if !matches!(e, CaptureError::NoTimestamp { .. }) {
                    self.done = true;
                }
                Err(e)
            }
        }
    }

    /// Returns (record offset, data start in buf, data len, ts, linktype, orig_len).
    #[allow(clippy::type_complexity)]
    fn next_pcap(&mut self) -> Result<Option<(u64, usize, usize, i64, u32, u32)>, CaptureError> {
        let Format::Pcap { endian, nanos, linktype, snaplen } = self.format else { unreachable!() };
        self.win.maybe_shrink();
        let off = self.win.offset();
        let n = self.win.ensure(16)?;
        if n == 0 {
            return Ok(None);
        }
        if n < 16 {
            return Err(CaptureError::Truncated { offset: off, what: "pcap record header", needed: 16, available: n as u64 });
        }
        let h = self.win.peek(16);
        let sec = endian.u32(&h[0..4]) as i64;
        let frac = endian.u32(&h[4..8]) as i64;
        let caplen = endian.u32(&h[8..12]);
        let orig_len = endian.u32(&h[12..16]);
        let limit = (snaplen.max(262_144) as usize).min(MAX_RECORD);
        if caplen as usize > limit {
            return Err(CaptureError::Corrupt {
                offset: off,
                what: "pcap record header",
                reason: format!("captured length {caplen} exceeds the limit {limit}"),
            });
        }
        if (!nanos && frac >= 1_000_000) || (nanos && frac >= 1_000_000_000) {
            return Err(CaptureError::Corrupt {
                offset: off,
                what: "pcap record header",
                reason: format!("sub-second timestamp field {frac} out of range"),
            });
        }
        let ts_ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
        let total = 16 + caplen as usize;
        let n = self.win.ensure(total)?;
        if n < total {
            return Err(CaptureError::Truncated { offset: off, what: "pcap record", needed: total as u64, available: n as u64 });
        }
        let start = self.win.pos + 16;
        self.win.advance(total);
        Ok(Some((off, start, caplen as usize, ts_ns, linktype, orig_len.max(caplen))))
    }

    #[allow(clippy::type_complexity)]
    fn next_pcapng(&mut self) -> Result<Option<(u64, usize, usize, i64, u32, u32)>, CaptureError> {
        loop {
            self.win.maybe_shrink();
            let off = self.win.offset();
            let n = self.win.ensure(12)?;
            if n == 0 {
                return Ok(None);
            }
            if n < 12 {
                return Err(CaptureError::Truncated { offset: off, what: "pcapng block header", needed: 12, available: n as u64 });
            }
            let h = self.win.peek(12);
            let raw_type = u32::from_le_bytes(h[0..4].try_into().unwrap());
            if raw_type == PCAPNG_SHB {
                // A new section: its byte-order magic decides the endianness (pcapng §4.1).
                let bom = &h[8..12];
                let endian = if u32::from_le_bytes(bom.try_into().unwrap()) == PCAPNG_BOM {
                    Endian::Little
                } else if u32::from_be_bytes(bom.try_into().unwrap()) == PCAPNG_BOM {
                    Endian::Big
                } else {
                    return Err(CaptureError::Corrupt { offset: off + 8, what: "pcapng section header", reason: "bad byte-order magic".into() });
                };
                self.format = Format::Pcapng { endian, ifaces: Vec::new() };
            }
            let Format::Pcapng { endian, .. } = self.format else { unreachable!() };
            let h = self.win.peek(12);
            let btype = endian.u32(&h[0..4]);
            let blen = endian.u32(&h[4..8]) as usize;
            if blen < 12 || blen & 3 != 0 || blen > MAX_RECORD {
                return Err(CaptureError::Corrupt { offset: off, what: "pcapng block header", reason: format!("block length {blen}") });
            }
            let n = self.win.ensure(blen)?;
            if n < blen {
                return Err(CaptureError::Truncated { offset: off, what: "pcapng block", needed: blen as u64, available: n as u64 });
            }
            let start = self.win.pos;
            let block = &self.win.buf[start..start + blen];
            if endian.u32(&block[blen - 4..]) as usize != blen {
                return Err(CaptureError::Corrupt { offset: off, what: "pcapng block", reason: "trailing length differs from leading length".into() });
            }
            let body = &block[8..blen - 4];
            let Format::Pcapng { ifaces, .. } = &mut self.format else { unreachable!() };
            match btype {
                1 => {
                    // Interface Description Block (§4.2).
                    if body.len() < 8 {
                        return Err(CaptureError::Corrupt { offset: off, what: "pcapng interface block", reason: "too short".into() });
                    }
                    let mut iface = Iface { linktype: endian.u16(&body[0..2]) as u32, res: 6, binary: false, offset_s: 0 };
                    let mut o = &body[8..];
                    while o.len() >= 4 {
                        let code = endian.u16(&o[0..2]);
                        let len = endian.u16(&o[2..4]) as usize;
                        let padded = (len + 3) & !3;
                        if code == 0 || o.len() < 4 + len {
                            break;
                        }
                        let v = &o[4..4 + len];
                        match (code, len) {
                            (9, 1) => {
                                iface.binary = v[0] & 0x80 != 0;
                                iface.res = v[0] & 0x7f;
                            }
                            (14, 8) => {
                                let a: [u8; 8] = v.try_into().unwrap();
                                iface.offset_s = match endian { Endian::Little => i64::from_le_bytes(a), Endian::Big => i64::from_be_bytes(a) };
                            }
                            _ => {}
                        }
                        if o.len() < 4 + padded {
                            break;
                        }
                        o = &o[4 + padded..];
                    }
                    if (!iface.binary && iface.res > 18) || (iface.binary && iface.res > 62) {
                        return Err(CaptureError::Corrupt { offset: off, what: "pcapng interface block", reason: format!("if_tsresol {}", iface.res) });
                    }
                    ifaces.push(iface);
                    self.win.advance(blen);
                }
                2 | 6 => {
                    // Enhanced Packet Block (§4.3) or the obsolete Packet Block (appendix A).
                    if body.len() < 20 {
                        return Err(CaptureError::Corrupt { offset: off, what: "pcapng packet block", reason: "too short".into() });
                    }
                    let if_id = if btype == 6 { endian.u32(&body[0..4]) as usize } else { endian.u16(&body[0..2]) as usize };
                    let Some(iface) = ifaces.get(if_id).copied() else {
                        return Err(CaptureError::Corrupt { offset: off, what: "pcapng packet block", reason: format!("unknown interface {if_id}") });
                    };
                    let ts = ((endian.u32(&body[4..8]) as u64) << 32) | endian.u32(&body[8..12]) as u64;
                    let caplen = endian.u32(&body[12..16]) as usize;
                    let orig_len = endian.u32(&body[16..20]);
                    if caplen > body.len() - 20 {
                        return Err(CaptureError::Corrupt { offset: off, what: "pcapng packet block", reason: format!("captured length {caplen} exceeds the block") });
                    }
                    let ts_ns = ts_to_ns(ts, iface);
                    self.win.advance(blen);
                    return Ok(Some((off, start + 28, caplen, ts_ns, iface.linktype, orig_len.max(caplen as u32))));
                }
                3 => {
                    self.win.advance(blen);
                    return Err(CaptureError::NoTimestamp { offset: off });
                }
                _ => self.win.advance(blen), // NRB, ISB, custom blocks, ...: not needed here.
            }
        }
    }
}

/// Converts a pcapng timestamp in interface units to ns since the epoch (u128 avoids overflow).
fn ts_to_ns(ts: u64, iface: Iface) -> i64 {
    let ns = if iface.binary {
        ((ts as u128) * 1_000_000_000u128) >> iface.res
    } else {
        let units = 10u128.pow(iface.res as u32);
        (ts as u128) * 1_000_000_000u128 / units
    };
    (ns as i64).saturating_add(iface.offset_s.saturating_mul(1_000_000_000))
}
