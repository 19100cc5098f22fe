//! pcap writer for simulated runs and test captures: Ethernet + IPv4 frames with RTP/UDP, plain
//! UDP or TCP, from plain structs, with nanosecond timestamps (pcap magic a1b23c4d). Checksums are
//! filled in (RFC 791 §3.1, RFC 768, RFC 9293 §3.1) so Wireshark shows clean frames. Payload bytes
//! the caller does not supply are zeros; with a short `snaplen` only the first bytes of each frame
//! are stored, as `tcpdump -s` would.
//!
//! ```
//! use std::net::Ipv4Addr;
//! use jitterlab_capture::{Endpoints, PcapWriter, RtpPacket, TcpOptions, TcpPacket};
//!
//! let mut w = PcapWriter::new(Vec::new(), 65535)?;
//! let ep = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 1, 1), sport: 5004, dport: 5004 };
//! // An 80-byte audio packet (IP + UDP + RTP + 40 bytes of payload) at t = 1.5 s.
//! w.write_rtp(&RtpPacket { ts_ns: 1_500_000_000, ep, ecn: 0, ssrc: 0x4a4c_0000, seq: 0, rtp_ts: 0,
//!                          payload_type: 0, marker: false, ip_len: 80 })?;
//! // A full-sized TCP segment with the timestamps option: 20 + 32 + 1448 = 1500 IP bytes.
//! let tcp = Endpoints { sport: 80, dport: 40000, ..ep };
//! w.write_tcp(&TcpPacket { ts_ns: 1_500_100_000, ep: tcp, ecn: 2, seq: 1, ack: 1, flags: 0x10, window: 1024,
//!                          options: TcpOptions { timestamps: Some((7, 3)), ..Default::default() }, payload_len: 1448 })?;
//! let bytes = w.finish()?;
//! assert_eq!(bytes.len(), 24 + (16 + 94) + (16 + 1514));
//! # Ok::<(), std::io::Error>(())
//! ```
use std::io::{self, Write};
use std::net::Ipv4Addr;

/// Addresses and ports of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
}

/// An RTP packet over UDP. `ip_len` is the whole IP packet (20 + 8 + 12 + payload bytes), the
/// `size` column of media_packets; the payload is zero-filled to reach it.
#[derive(Clone, Copy, Debug)]
pub struct RtpPacket {
    pub ts_ns: i64,
    pub ep: Endpoints,
    /// ECN bits of the IP header (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    pub ssrc: u32,
    pub seq: u16,
    pub rtp_ts: u32,
    pub payload_type: u8,
    pub marker: bool,
    pub ip_len: u32,
}

/// A UDP datagram with the given payload.
#[derive(Clone, Copy, Debug)]
pub struct UdpPacket<'a> {
    pub ts_ns: i64,
    pub ep: Endpoints,
    pub ecn: u8,
    pub payload: &'a [u8],
}

/// TCP options the simulator models (RFC 9293 §3.2, RFC 7323, RFC 2018).
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpOptions<'a> {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    /// (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks as [left, right) sequence numbers; at most 4 (3 with timestamps) fit.
    pub sack: &'a [(u32, u32)],
}

/// A TCP segment; `payload_len` zero bytes follow the header.
#[derive(Clone, Copy, Debug)]
pub struct TcpPacket<'a> {
    pub ts_ns: i64,
    pub ep: Endpoints,
    pub ecn: u8,
    pub seq: u32,
    pub ack: u32,
    /// FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, ECE 0x40, CWR 0x80.
    pub flags: u8,
    /// The 16-bit window field as sent (already scaled down by the sender's shift).
    pub window: u16,
    pub options: TcpOptions<'a>,
    pub payload_len: u32,
}

pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
    nanos: bool,
    ip_id: u16,
    scratch: Vec<u8>,
    /// Frames written.
    pub frames: u64,
}

const LINKTYPE_ETHERNET: u32 = 1;

fn invalid(msg: String) -> io::Error { io::Error::new(io::ErrorKind::InvalidInput, msg) }

/// One's-complement sum of 16-bit words (RFC 1071), not yet folded.
fn sum16(b: &[u8]) -> u32 {
    let mut s = 0u32;
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        s += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [last] = chunks.remainder() {
        s += (*last as u32) << 8;
    }
    s
}
fn fold(mut s: u32) -> u16 {
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

impl<W: Write> PcapWriter<W> {
    /// Writes the pcap file header: nanosecond timestamps, link type Ethernet.
    pub fn new(out: W, snaplen: u32) -> io::Result<Self> { Self::with_resolution(out, snaplen, true) }

    /// As [`new`](Self::new); `nanos = false` writes the classic microsecond format.
    pub fn with_resolution(mut out: W, snaplen: u32, nanos: bool) -> io::Result<Self> {
        let snaplen = snaplen.max(54);
        let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&magic.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&snaplen.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, snaplen, nanos, ip_id: 0, scratch: Vec::with_capacity(2048), frames: 0 })
    }

    /// Writes one record with an already built link-layer frame.
    pub fn write_frame(&mut self, ts_ns: i64, frame: &[u8]) -> io::Result<()> {
        if ts_ns < 0 {
            return Err(invalid(format!("negative timestamp {ts_ns} ns")));
        }
        let caplen = (frame.len() as u32).min(self.snaplen);
        let sec = (ts_ns / 1_000_000_000) as u32;
        let sub = (ts_ns % 1_000_000_000) as u32;
        let frac = if self.nanos { sub } else { sub / 1000 };
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&frac.to_le_bytes());
        h[8..12].copy_from_slice(&caplen.to_le_bytes());
        h[12..16].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&frame[..caplen as usize])?;
        self.frames += 1;
        Ok(())
    }

    /// Starts a frame in `scratch`: Ethernet header and IPv4 header (checksum filled later).
    fn begin(&mut self, ep: &Endpoints, ecn: u8, proto: u8, ip_len: u32) -> io::Result<()> {
        if ip_len > 65535 {
            return Err(invalid(format!("IP packet of {ip_len} bytes exceeds 65535")));
        }
        if ecn > 3 {
            return Err(invalid(format!("ECN value {ecn} is not 2 bits")));
        }
        let s = &mut self.scratch;
        s.clear();
        // Locally administered MACs derived from the IP addresses: stable and readable.
        s.extend_from_slice(&[0x02, 0x00]);
        s.extend_from_slice(&ep.dst.octets());
        s.extend_from_slice(&[0x02, 0x00]);
        s.extend_from_slice(&ep.src.octets());
        s.extend_from_slice(&0x0800u16.to_be_bytes());
        self.ip_id = self.ip_id.wrapping_add(1);
        let len = ip_len as u16;
        s.extend_from_slice(&[0x45, ecn]);
        s.extend_from_slice(&len.to_be_bytes());
        s.extend_from_slice(&self.ip_id.to_be_bytes());
        s.extend_from_slice(&[0x40, 0x00, 64, proto, 0, 0]); // DF, TTL 64, checksum later
        s.extend_from_slice(&ep.src.octets());
        s.extend_from_slice(&ep.dst.octets());
        let c = fold(sum16(&s[14..34]));
        s[24..26].copy_from_slice(&c.to_be_bytes());
        Ok(())
    }

    /// Fills the transport checksum at `at` (offset in the frame) over the pseudo-header.
    fn l4_checksum(&mut self, proto: u8, at: usize, udp: bool) {
        let s = &mut self.scratch;
        let l4 = &s[34..];
        let mut sum = sum16(&s[26..34]) + proto as u32 + l4.len() as u32;
        sum += sum16(l4);
        let mut c = fold(sum);
        if udp && c == 0 {
            c = 0xffff; // RFC 768: a computed zero is sent as all ones.
        }
        s[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }

    pub fn write_rtp(&mut self, p: &RtpPacket) -> io::Result<()> {
        if p.ip_len < 40 {
            return Err(invalid(format!("an RTP packet needs at least 40 IP bytes, got {}", p.ip_len)));
        }
        self.begin(&p.ep, p.ecn, 17, p.ip_len)?;
        let udp_len = (p.ip_len - 20) as u16;
        let s = &mut self.scratch;
        s.extend_from_slice(&p.ep.sport.to_be_bytes());
        s.extend_from_slice(&p.ep.dport.to_be_bytes());
        s.extend_from_slice(&udp_len.to_be_bytes());
        s.extend_from_slice(&[0, 0]);
        s.push(0x80); // V=2, no padding, no extension, CC=0 (RFC 3550 §5.1)
        s.push(((p.marker as u8) << 7) | (p.payload_type & 0x7f));
        s.extend_from_slice(&p.seq.to_be_bytes());
        s.extend_from_slice(&p.rtp_ts.to_be_bytes());
        s.extend_from_slice(&p.ssrc.to_be_bytes());
        s.resize(14 + p.ip_len as usize, 0);
        self.l4_checksum(17, 40, true);
        let frame = std::mem::take(&mut self.scratch);
        let r = self.write_frame(p.ts_ns, &frame);
        self.scratch = frame;
        r
    }

    pub fn write_udp(&mut self, p: &UdpPacket) -> io::Result<()> {
        let ip_len = 28 + p.payload.len() as u32;
        self.begin(&p.ep, p.ecn, 17, ip_len)?;
        let s = &mut self.scratch;
        s.extend_from_slice(&p.ep.sport.to_be_bytes());
        s.extend_from_slice(&p.ep.dport.to_be_bytes());
        s.extend_from_slice(&((ip_len - 20) as u16).to_be_bytes());
        s.extend_from_slice(&[0, 0]);
        s.extend_from_slice(p.payload);
        self.l4_checksum(17, 40, true);
        let frame = std::mem::take(&mut self.scratch);
        let r = self.write_frame(p.ts_ns, &frame);
        self.scratch = frame;
        r
    }

    pub fn write_tcp(&mut self, p: &TcpPacket) -> io::Result<()> {
        let o = &p.options;
        let max_sack = if o.timestamps.is_some() { 3 } else { 4 };
        if o.sack.len() > max_sack {
            return Err(invalid(format!("{} SACK blocks do not fit the 40 option bytes", o.sack.len())));
        }
        // Options (RFC 9293 §3.2 kinds 2, 3, 4, 5, 8), NOP-padded to 4-byte words.
        let mut opt = [0u8; 40];
        let mut n = 0;
        let mut put = |b: &[u8]| {
            opt[n..n + b.len()].copy_from_slice(b);
            n += b.len();
        };
        if let Some(mss) = o.mss {
            put(&[2, 4]);
            put(&mss.to_be_bytes());
        }
        if let Some(ws) = o.wscale {
            put(&[1, 3, 3, ws]);
        }
        if o.sack_permitted {
            put(&[1, 1, 4, 2]);
        }
        if let Some((val, ecr)) = o.timestamps {
            put(&[1, 1, 8, 10]);
            put(&val.to_be_bytes());
            put(&ecr.to_be_bytes());
        }
        if !o.sack.is_empty() {
            put(&[1, 1, 5, 2 + 8 * o.sack.len() as u8]);
            for (l, r) in o.sack {
                put(&l.to_be_bytes());
                put(&r.to_be_bytes());
            }
        }
        if n > 40 {
            return Err(invalid("TCP options exceed 40 bytes".into()));
        }
        let hlen = 20 + n;
        let ip_len = 20 + hlen as u32 + p.payload_len;
        self.begin(&p.ep, p.ecn, 6, ip_len)?;
        let s = &mut self.scratch;
        s.extend_from_slice(&p.ep.sport.to_be_bytes());
        s.extend_from_slice(&p.ep.dport.to_be_bytes());
        s.extend_from_slice(&p.seq.to_be_bytes());
        s.extend_from_slice(&p.ack.to_be_bytes());
        s.push(((hlen / 4) as u8) << 4);
        s.push(p.flags);
        s.extend_from_slice(&p.window.to_be_bytes());
        s.extend_from_slice(&[0, 0, 0, 0]);
        s.extend_from_slice(&opt[..n]);
        s.resize(14 + ip_len as usize, 0);
        self.l4_checksum(6, 50, false);
        let frame = std::mem::take(&mut self.scratch);
        let r = self.write_frame(p.ts_ns, &frame);
        self.scratch = frame;
        r
    }

    /// Flushes and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_checksum_example() {
        // RFC 1071 §3 example words 0001 f203 f4f5 f6f7: sum ddf2, checksum 220d.
        assert_eq!(fold(sum16(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), 0x220d);
    }

    #[test]
    fn rtp_frame_bytes() {
        let mut w = PcapWriter::new(Vec::new(), 65535).unwrap();
        let ep = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 5004, dport: 5006 };
        w.write_rtp(&RtpPacket { ts_ns: 1_500_000_001, ep, ecn: 0, ssrc: 7, seq: 9, rtp_ts: 160, payload_type: 0, marker: false, ip_len: 80 }).unwrap();
        let b = w.finish().unwrap();
        assert_eq!(&b[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        let rec = &b[24..];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(rec[4..8].try_into().unwrap()), 500_000_001);
        assert_eq!(u32::from_le_bytes(rec[8..12].try_into().unwrap()), 94);
        let f = &rec[16..];
        assert_eq!(f.len(), 94);
        // IPv4 header checksum verifies to zero (RFC 1071 §1).
        assert_eq!(fold(sum16(&f[14..34])), 0);
        assert_eq!(&f[14..18], &[0x45, 0, 0, 80]);
        assert_eq!(&f[34..42], &[0x13, 0x8c, 0x13, 0x8e, 0, 60, f[40], f[41]]);
        assert_eq!(&f[42..54], &[0x80, 0, 0, 9, 0, 0, 0, 160, 0, 0, 0, 7]);
    }
}
