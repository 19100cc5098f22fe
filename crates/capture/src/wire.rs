//! Checked zero-copy views of the headers a capture analysis needs, in the manner of smoltcp's
//! `wire`: `new_checked` validates lengths once, the accessors then cannot fail or panic.
//! Errors carry the offset of the offending header *within the frame*; [`decode`] adds the frame's
//! position in the file.
use crate::error::CaptureError;

fn be16(b: &[u8], i: usize) -> u16 { u16::from_be_bytes([b[i], b[i + 1]]) }
fn be32(b: &[u8], i: usize) -> u32 { u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) }

fn cut(offset: usize, layer: &'static str, needed: usize, available: usize) -> CaptureError {
    CaptureError::SnapTruncated { offset: offset as u64, layer, needed, available }
}
fn malformed(offset: usize, layer: &'static str, reason: &'static str) -> CaptureError {
    CaptureError::Malformed { offset: offset as u64, layer, reason }
}

/// Link types decoded (LINKTYPE_ values, <https://www.tcpdump.org/linktypes.html>).
pub mod linktype {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// Some writers store DLT_RAW's platform values 12 or 14 instead of 101.
    pub const RAW_ALT12: u32 = 12;
    pub const RAW_ALT14: u32 = 14;
    pub const RAW: u32 = 101;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// 802.1Q, 802.1ad (QinQ) and the pre-standard 0x9100 VLAN tags.
const VLAN_TPIDS: [u16; 3] = [0x8100, 0x88A8, 0x9100];

/// Ethernet II header, with any number of VLAN tags skipped (IEEE 802.1Q §9.5).
pub struct Ethernet<'a>(&'a [u8]);
impl<'a> Ethernet<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 14 {
            return Err(cut(0, "Ethernet", 14, b.len()));
        }
        Ok(Ethernet(b))
    }
    /// (ethertype after the VLAN tags, offset of the payload).
    pub fn ethertype_and_payload(&self) -> Result<(u16, usize), CaptureError> {
        let mut off = 12;
        let mut et = be16(self.0, off);
        while VLAN_TPIDS.contains(&et) {
            off += 4;
            if self.0.len() < off + 2 {
                return Err(cut(off - 4, "VLAN tag", 4, self.0.len() - (off - 4)));
            }
            et = be16(self.0, off);
        }
        Ok((et, off + 2))
    }
}

/// Linux cooked capture v1: 16 bytes, protocol type at 14 (<https://www.tcpdump.org/linktypes/LINKTYPE_LINUX_SLL.html>).
pub struct Sll<'a>(&'a [u8]);
impl<'a> Sll<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 16 {
            return Err(cut(0, "Linux cooked (SLL)", 16, b.len()));
        }
        Ok(Sll(b))
    }
    pub fn protocol(&self) -> u16 { be16(self.0, 14) }
}

/// Linux cooked capture v2: 20 bytes, protocol type at 0 (<https://www.tcpdump.org/linktypes/LINKTYPE_LINUX_SLL2.html>).
pub struct Sll2<'a>(&'a [u8]);
impl<'a> Sll2<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 20 {
            return Err(cut(0, "Linux cooked (SLL2)", 20, b.len()));
        }
        Ok(Sll2(b))
    }
    pub fn protocol(&self) -> u16 { be16(self.0, 0) }
}

/// IPv4 header (RFC 791 §3.1).
pub struct Ipv4<'a>(&'a [u8]);
impl<'a> Ipv4<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 20 {
            return Err(cut(0, "IPv4", 20, b.len()));
        }
        if b[0] >> 4 != 4 {
            return Err(malformed(0, "IPv4", "version is not 4"));
        }
        let ihl = (b[0] & 0x0f) as usize * 4;
        if ihl < 20 {
            return Err(malformed(0, "IPv4", "IHL below 5"));
        }
        if b.len() < ihl {
            return Err(cut(0, "IPv4 options", ihl, b.len()));
        }
        if (be16(b, 2) as usize) < ihl {
            return Err(malformed(0, "IPv4", "total length below the header length"));
        }
        Ok(Ipv4(b))
    }
    pub fn header_len(&self) -> usize { (self.0[0] & 0x0f) as usize * 4 }
    pub fn total_len(&self) -> u16 { be16(self.0, 2) }
    /// The two ECN bits (RFC 3168 §5).
    pub fn ecn(&self) -> u8 { self.0[1] & 0x03 }
    pub fn protocol(&self) -> u8 { self.0[9] }
    pub fn src(&self) -> [u8; 4] { [self.0[12], self.0[13], self.0[14], self.0[15]] }
    pub fn dst(&self) -> [u8; 4] { [self.0[16], self.0[17], self.0[18], self.0[19]] }
    /// More-fragments set or a non-zero fragment offset (RFC 791 §3.2).
    pub fn is_fragment(&self) -> bool { be16(self.0, 6) & 0x3fff != 0 }
    /// Payload as captured, without Ethernet padding beyond the total length.
    pub fn payload(&self) -> &'a [u8] {
        let end = (self.total_len() as usize).min(self.0.len());
        &self.0[self.header_len().min(end)..end]
    }
}

/// IPv6 fixed header (RFC 8200 §3).
pub struct Ipv6<'a>(&'a [u8]);
impl<'a> Ipv6<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 40 {
            return Err(cut(0, "IPv6", 40, b.len()));
        }
        if b[0] >> 4 != 6 {
            return Err(malformed(0, "IPv6", "version is not 6"));
        }
        Ok(Ipv6(b))
    }
    pub fn payload_len(&self) -> u16 { be16(self.0, 4) }
    pub fn next_header(&self) -> u8 { self.0[6] }
    /// ECN bits: the low two bits of the traffic class (RFC 3168 §5, RFC 8200 §7).
    pub fn ecn(&self) -> u8 { (be16(self.0, 0) >> 4) as u8 & 0x03 }
    pub fn src(&self) -> [u8; 16] { self.0[8..24].try_into().unwrap() }
    pub fn dst(&self) -> [u8; 16] { self.0[24..40].try_into().unwrap() }
    pub fn payload(&self) -> &'a [u8] {
        let end = (40 + self.payload_len() as usize).min(self.0.len());
        &self.0[40..end]
    }
}

/// UDP header (RFC 768).
pub struct Udp<'a>(&'a [u8]);
impl<'a> Udp<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 8 {
            return Err(cut(0, "UDP", 8, b.len()));
        }
        if be16(b, 4) < 8 {
            return Err(malformed(0, "UDP", "length below 8"));
        }
        Ok(Udp(b))
    }
    pub fn src_port(&self) -> u16 { be16(self.0, 0) }
    pub fn dst_port(&self) -> u16 { be16(self.0, 2) }
    pub fn length(&self) -> u16 { be16(self.0, 4) }
    /// Payload as captured (may be shorter than `length() - 8` under a short snaplen).
    pub fn payload(&self) -> &'a [u8] {
        let end = (self.length() as usize).min(self.0.len());
        &self.0[8..end]
    }
}

/// TCP header (RFC 9293 §3.1). Only the fixed 20 bytes must be captured; options are not needed.
pub struct Tcp<'a>(&'a [u8]);
impl<'a> Tcp<'a> {
    pub fn new_checked(b: &'a [u8]) -> Result<Self, CaptureError> {
        if b.len() < 20 {
            return Err(cut(0, "TCP", 20, b.len()));
        }
        if b[12] >> 4 < 5 {
            return Err(malformed(0, "TCP", "data offset below 5"));
        }
        Ok(Tcp(b))
    }
    pub fn src_port(&self) -> u16 { be16(self.0, 0) }
    pub fn dst_port(&self) -> u16 { be16(self.0, 2) }
    pub fn seq(&self) -> u32 { be32(self.0, 4) }
    pub fn ack(&self) -> u32 { be32(self.0, 8) }
    pub fn header_len(&self) -> usize { (self.0[12] >> 4) as usize * 4 }
    pub fn flags(&self) -> u8 { self.0[13] }
    pub fn window(&self) -> u16 { be16(self.0, 14) }
}

/// RTP fixed header (RFC 3550 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rtp<'a>(&'a [u8]);
impl<'a> Rtp<'a> {
    /// Accepts only what can be RTP: version 2, the CSRC list and extension header inside the
    /// payload, a payload type outside 72–76 (those values collide with RTCP packet types 200–204,
    /// RFC 5761 §4).
    pub fn new_checked(b: &'a [u8]) -> Option<Self> {
        if b.len() < 12 || b[0] >> 6 != 2 {
            return None;
        }
        let pt = b[1] & 0x7f;
        if (72..=76).contains(&pt) {
            return None;
        }
        let mut hlen = 12 + 4 * (b[0] & 0x0f) as usize;
        if b[0] & 0x10 != 0 {
            // Header extension (§5.3.1): 4-byte header, then `length` 32-bit words.
            if b.len() < hlen + 4 {
                return None;
            }
            hlen += 4 + 4 * be16(b, hlen + 2) as usize;
        }
        if b.len() < hlen {
            return None;
        }
        Some(Rtp(b))
    }
    pub fn marker(&self) -> bool { self.0[1] & 0x80 != 0 }
    pub fn payload_type(&self) -> u8 { self.0[1] & 0x7f }
    pub fn seq(&self) -> u16 { be16(self.0, 2) }
    pub fn timestamp(&self) -> u32 { be32(self.0, 4) }
    pub fn ssrc(&self) -> u32 { be32(self.0, 8) }
}

/// IP addresses kept as 16 bytes; IPv4 as IPv4-mapped (RFC 4291 §2.5.5.2).
pub type Addr = [u8; 16];
pub fn v4_mapped(a: [u8; 4]) -> Addr {
    let mut x = [0u8; 16];
    x[10] = 0xff;
    x[11] = 0xff;
    x[12..].copy_from_slice(&a);
    x
}
pub fn addr_to_string(a: &Addr) -> String {
    if a[..10].iter().all(|&b| b == 0) && a[10] == 0xff && a[11] == 0xff {
        std::net::Ipv4Addr::new(a[12], a[13], a[14], a[15]).to_string()
    } else {
        std::net::Ipv6Addr::from(*a).to_string()
    }
}

/// Transport layer of a decoded packet.
#[derive(Debug, Clone, Copy)]
pub enum Transport<'a> {
    Udp { sport: u16, dport: u16, payload: &'a [u8] },
    /// `payload_len` comes from the IP and TCP length fields, so it is right even when the
    /// capture kept only the headers.
    Tcp { sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, window: u16, payload_len: u32 },
    Other(u8),
}

/// What the analysis needs from one frame.
#[derive(Debug, Clone, Copy)]
pub struct Decoded<'a> {
    pub src: Addr,
    pub dst: Addr,
    /// Bytes at the IP layer, header included, from the IP length fields.
    pub ip_len: u32,
    pub ecn: u8,
    pub transport: Transport<'a>,
}

/// Decodes one frame. `offset` is the stream offset of `data[0]`; errors carry absolute offsets.
pub fn decode(linktype: u32, data: &[u8], offset: u64) -> Result<Decoded<'_>, CaptureError> {
    decode_inner(linktype, data).map_err(|(at, e)| rebase(e, offset + at as u64))
}

fn rebase(e: CaptureError, base: u64) -> CaptureError {
    use CaptureError::*;
    match e {
        SnapTruncated { offset, layer, needed, available } => SnapTruncated { offset: base + offset, layer, needed, available },
        Malformed { offset, layer, reason } => Malformed { offset: base + offset, layer, reason },
        NotIp { offset, ethertype } => NotIp { offset: base + offset, ethertype },
        Fragment { offset } => Fragment { offset: base + offset },
        UnsupportedLinkType { offset, linktype } => UnsupportedLinkType { offset: base + offset, linktype },
        other => other,
    }
}

/// Errors paired with the offset (in the frame) of the header they concern.
fn decode_inner(linktype: u32, data: &[u8]) -> Result<Decoded<'_>, (usize, CaptureError)> {
    let (ethertype, l3) = match linktype {
        linktype::ETHERNET => {
            let eth = Ethernet::new_checked(data).map_err(|e| (0, e))?;
            eth.ethertype_and_payload().map_err(|e| (0, e))?
        }
        linktype::LINUX_SLL => (Sll::new_checked(data).map_err(|e| (0, e))?.protocol(), 16),
        linktype::LINUX_SLL2 => (Sll2::new_checked(data).map_err(|e| (0, e))?.protocol(), 20),
        linktype::RAW | linktype::RAW_ALT12 | linktype::RAW_ALT14 => match data.first().map(|b| b >> 4) {
            Some(4) => (ETHERTYPE_IPV4, 0),
            Some(6) => (ETHERTYPE_IPV6, 0),
            Some(_) => return Err((0, malformed(0, "raw IP", "version is neither 4 nor 6"))),
            None => return Err((0, cut(0, "raw IP", 1, 0))),
        },
        linktype::IPV4 => (ETHERTYPE_IPV4, 0),
        linktype::IPV6 => (ETHERTYPE_IPV6, 0),
        linktype::NULL => {
            // BSD loopback: a 4-byte address family in the capturing host's byte order.
            if data.len() < 4 {
                return Err((0, cut(0, "loopback", 4, data.len())));
            }
            let fam = u32::from_le_bytes(data[..4].try_into().unwrap());
            let fam = if fam > 0xffff { fam.swap_bytes() } else { fam };
            match fam {
                2 => (ETHERTYPE_IPV4, 4),
                24 | 28 | 30 => (ETHERTYPE_IPV6, 4),
                _ => return Err((0, CaptureError::NotIp { offset: 0, ethertype: fam as u16 })),
            }
        }
        other => return Err((0, CaptureError::UnsupportedLinkType { offset: 0, linktype: other })),
    };
    let ipb = &data[l3..];
    let (src, dst, ip_len, ecn, proto, l4, l4_off) = match ethertype {
        ETHERTYPE_IPV4 => {
            let ip = Ipv4::new_checked(ipb).map_err(|e| (l3, e))?;
            if ip.is_fragment() {
                return Err((l3, CaptureError::Fragment { offset: 0 }));
            }
            let off = l3 + ip.header_len();
            (v4_mapped(ip.src()), v4_mapped(ip.dst()), ip.total_len() as u32, ip.ecn(), ip.protocol(), ip.payload(), off)
        }
        ETHERTYPE_IPV6 => {
            let ip = Ipv6::new_checked(ipb).map_err(|e| (l3, e))?;
            // Walk the extension headers (RFC 8200 §4) to the transport header.
            let mut nh = ip.next_header();
            let mut p = ip.payload();
            let mut off = l3 + 40;
            loop {
                match nh {
                    0 | 43 | 60 | 51 => {
                        if p.len() < 2 {
                            return Err((off, cut(0, "IPv6 extension header", 2, p.len())));
                        }
                        // AH counts 4-byte words minus 2 (RFC 4302 §2.2); the others 8-byte words minus 1.
                        let len = if nh == 51 { (p[1] as usize + 2) * 4 } else { (p[1] as usize + 1) * 8 };
                        if p.len() < len {
                            return Err((off, cut(0, "IPv6 extension header", len, p.len())));
                        }
                        nh = p[0];
                        p = &p[len..];
                        off += len;
                    }
                    44 => return Err((l3, CaptureError::Fragment { offset: 0 })),
                    _ => break,
                }
            }
            (ip.src(), ip.dst(), 40 + ip.payload_len() as u32, ip.ecn(), nh, p, off)
        }
        other => return Err((0, CaptureError::NotIp { offset: 0, ethertype: other })),
    };
    let transport = match proto {
        17 => {
            let u = Udp::new_checked(l4).map_err(|e| (l4_off, e))?;
            Transport::Udp { sport: u.src_port(), dport: u.dst_port(), payload: u.payload() }
        }
        6 => {
            let t = Tcp::new_checked(l4).map_err(|e| (l4_off, e))?;
            // Segment length from the IP length fields, so a headers-only capture still counts bytes.
            let l4_len = (ip_len as usize).saturating_sub(l4_off - l3);
            let payload_len = l4_len.saturating_sub(t.header_len()) as u32;
            Transport::Tcp {
                sport: t.src_port(),
                dport: t.dst_port(),
                seq: t.seq(),
                ack: t.ack(),
                flags: t.flags(),
                window: t.window(),
                payload_len,
            }
        }
        p => Transport::Other(p),
    };
    Ok(Decoded { src, dst, ip_len, ecn, transport })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3550 §5.3.1: with X set, a 4-byte extension header follows the CSRC list, and its
    /// `length` field counts the 32-bit words after those 4 bytes. Two CSRCs (8 B) and an extension
    /// of length 2 make a 12 + 8 + 4 + 8 = 32-byte header: 32 bytes are RTP, 31 are not.
    #[test]
    fn rtp_header_extension_length() {
        let mut b = vec![0x80 | 0x10 | 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7];
        b.extend_from_slice(&[0; 8]); // CSRCs
        b.extend_from_slice(&[0xbe, 0xde, 0, 2]); // profile, length = 2 words
        b.extend_from_slice(&[0; 8]);
        assert_eq!(b.len(), 32);
        assert!(Rtp::new_checked(&b).is_some());
        for cut in 20..32 {
            assert!(Rtp::new_checked(&b[..cut]).is_none(), "{cut} bytes taken as RTP");
        }
        // Without X the same 12 + 8 bytes suffice.
        b[0] &= !0x10;
        assert!(Rtp::new_checked(&b[..20]).is_some());
    }

    /// Ethernet + 802.1Q tag + IPv4 + UDP + RTP, built by hand (no writer involved).
    fn vlan_rtp_frame() -> Vec<u8> {
        let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2];
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x64, 0x08, 0x00]); // VLAN 100, then IPv4
        // IPv4: IHL 5, ECN CE (tos 0x03), total length 20+8+12+4 = 44, DF, TTL 64, UDP.
        f.extend_from_slice(&[0x45, 0x03, 0x00, 44, 0x00, 0x01, 0x40, 0x00, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0x13, 0x8c, 0x13, 0x8d, 0x00, 24, 0, 0]); // 5004 -> 5005, len 24
        // RTP: V=2, M=1 PT=0, seq 0xfffe, ts 160, SSRC 0xdeadbeef; 4 payload bytes.
        f.extend_from_slice(&[0x80, 0x80, 0xff, 0xfe, 0, 0, 0, 160, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]);
        f.extend_from_slice(&[0; 6]); // Ethernet padding, must be ignored
        f
    }

    #[test]
    fn decodes_vlan_ipv4_udp_rtp() {
        let f = vlan_rtp_frame();
        let d = decode(linktype::ETHERNET, &f, 100).unwrap();
        assert_eq!(addr_to_string(&d.src), "10.0.0.1");
        assert_eq!(addr_to_string(&d.dst), "10.0.0.2");
        assert_eq!(d.ip_len, 44);
        assert_eq!(d.ecn, 3);
        let Transport::Udp { sport, dport, payload } = d.transport else { panic!("not UDP") };
        assert_eq!((sport, dport, payload.len()), (5004, 5005, 16));
        let r = Rtp::new_checked(payload).unwrap();
        assert_eq!((r.seq(), r.timestamp(), r.ssrc(), r.payload_type(), r.marker()), (0xfffe, 160, 0xdeadbeef, 0, true));
    }

    #[test]
    fn snaplen_cut_reports_layer_and_absolute_offset() {
        let f = vlan_rtp_frame();
        // Cut inside the UDP header: Ethernet 14 + VLAN 4 + IPv4 20 = 38, keep 4 UDP bytes.
        let e = decode(linktype::ETHERNET, &f[..42], 1000).unwrap_err();
        match e {
            CaptureError::SnapTruncated { offset, layer, needed, available } => {
                assert_eq!((offset, layer, needed, available), (1038, "UDP", 8, 4));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fragments_and_non_ip_are_reported() {
        let mut f = vlan_rtp_frame();
        f[18 + 6] = 0x20; // MF flag
        assert!(matches!(decode(linktype::ETHERNET, &f, 0), Err(CaptureError::Fragment { offset: 18 })));
        let mut arp = vlan_rtp_frame();
        arp[16] = 0x08;
        arp[17] = 0x06;
        assert!(matches!(decode(linktype::ETHERNET, &arp, 0), Err(CaptureError::NotIp { ethertype: 0x0806, .. })));
    }

    #[test]
    fn sll_sll2_raw_ipv6_tcp() {
        // IPv6 + TCP (20-byte header, 100 payload bytes not captured), ECN ECT(0) in traffic class.
        let mut ip6 = vec![0x60, 0x20, 0, 0, 0, 120, 6, 64];
        ip6.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8].iter().copied().chain([0; 11]).chain([1]).collect::<Vec<u8>>());
        ip6.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8].iter().copied().chain([0; 11]).chain([2]).collect::<Vec<u8>>());
        ip6.extend_from_slice(&[0x00, 80, 0xc3, 0x50, 0, 0, 0, 1, 0, 0, 0, 2, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        let check = |d: Decoded| {
            assert_eq!(addr_to_string(&d.src), "2001:db8::1");
            assert_eq!(d.ip_len, 160);
            assert_eq!(d.ecn, 2);
            let Transport::Tcp { sport, dport, seq, ack, flags, payload_len, .. } = d.transport else { panic!() };
            assert_eq!((sport, dport, seq, ack, flags, payload_len), (80, 50000, 1, 2, 0x18, 100));
        };
        check(decode(linktype::RAW, &ip6, 0).unwrap());
        let mut sll = vec![0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x86, 0xdd];
        sll.extend_from_slice(&ip6);
        check(decode(linktype::LINUX_SLL, &sll, 0).unwrap());
        let mut sll2 = vec![0x86, 0xdd, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
        sll2.extend_from_slice(&ip6);
        check(decode(linktype::LINUX_SLL2, &sll2, 0).unwrap());
    }

    #[test]
    fn rtcp_and_bad_versions_are_not_rtp() {
        // RTCP sender report: PT byte 200 -> 7-bit PT 72.
        assert!(Rtp::new_checked(&[0x80, 200, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0]).is_none());
        assert!(Rtp::new_checked(&[0x40, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]).is_none());
        // CC = 2 needs 20 bytes.
        assert!(Rtp::new_checked(&[0x82, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]).is_none());
    }
}
