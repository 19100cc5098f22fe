//! IPv6 end to end over other link types: the sender captured with Linux cooked v2 (SLL2), the
//! receiver as raw IP with different addresses (as behind a NAT/NAT64), frames built by hand.
use jitterlab_capture::{analyze, Options};

const T0: i64 = 1_600_000_000_000_000_000;
const MS: i64 = 1_000_000;

fn pcap(linktype: u32, frames: &[(i64, Vec<u8>)]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [0xa1b2_3c4du32, 0x0004_0002, 0, 0, 65535, linktype] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for (ts, f) in frames {
        b.extend_from_slice(&((ts / 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&((ts % 1_000_000_000) as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(&(f.len() as u32).to_le_bytes());
        b.extend_from_slice(f);
    }
    b
}

fn addr(tag: u8) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0x20;
    a[1] = 0x01;
    a[2] = 0x0d;
    a[3] = 0xb8;
    a[15] = tag;
    a
}

/// IPv6 (with a hop-by-hop options header on odd packets) + UDP + RTP, 80 bytes at IP level
/// without the extension header.
fn rtp6(src: u8, dst: u8, seq: u16, hbh: bool) -> Vec<u8> {
    let udp_len = 8 + 12 + 20;
    let mut f = vec![0x60, 0, 0, 0];
    let plen = udp_len + if hbh { 8 } else { 0 };
    f.extend_from_slice(&(plen as u16).to_be_bytes());
    f.push(if hbh { 0 } else { 17 });
    f.push(64);
    f.extend_from_slice(&addr(src));
    f.extend_from_slice(&addr(dst));
    if hbh {
        f.extend_from_slice(&[17, 0, 1, 4, 0, 0, 0, 0]); // next = UDP, length 0 (8 bytes), PadN
    }
    f.extend_from_slice(&[0x13, 0x8c, 0x13, 0x8c]);
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(&[0x80, 0x00]);
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&(seq as u32 * 160).to_be_bytes());
    f.extend_from_slice(&0x0006_0006u32.to_be_bytes());
    f.extend_from_slice(&[0; 20]);
    f
}

// The fields of a TCP/IPv6 header, named as they are: a struct would only rename them.
#[allow(clippy::too_many_arguments)]
fn tcp6(src: u8, dst: u8, sport: u16, dport: u16, seq: u32, ack: u32, flags: u8, len: u16) -> Vec<u8> {
    let mut f = vec![0x60, 0, 0, 0];
    f.extend_from_slice(&(20 + len).to_be_bytes());
    f.extend_from_slice(&[6, 64]);
    f.extend_from_slice(&addr(src));
    f.extend_from_slice(&addr(dst));
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&seq.to_be_bytes());
    f.extend_from_slice(&ack.to_be_bytes());
    f.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
    // Headers only: the payload is not captured (as with a short snaplen).
    f
}

fn sll2(ip: Vec<u8>) -> Vec<u8> {
    let mut f = vec![0x86, 0xdd, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0];
    f.extend(ip);
    f
}

#[test]
fn ipv6_sll2_sender_raw_receiver() {
    let mut s = Vec::new();
    let mut r = Vec::new();
    for i in 0..40u16 {
        let ts = T0 + i as i64 * 20 * MS;
        s.push((ts, sll2(rtp6(1, 2, 65520u16.wrapping_add(i), i % 2 == 1))));
        if i != 7 {
            r.push((ts + 25 * MS, rtp6(9, 10, 65520u16.wrapping_add(i), false)));
        }
    }
    // A TCP connection over IPv6, SYN to final ACK, payload not captured.
    s.push((T0 + 100 * MS, sll2(tcp6(2, 1, 50000, 443, 1, 0, 0x02, 0))));
    s.push((T0 + 130 * MS, sll2(tcp6(1, 2, 443, 50000, 99, 2, 0x12, 0))));
    s.push((T0 + 131 * MS, sll2(tcp6(1, 2, 443, 50000, 100, 2, 0x10, 1200))));
    s.push((T0 + 132 * MS, sll2(tcp6(1, 2, 443, 50000, 1300, 2, 0x10, 800))));
    s.push((T0 + 170 * MS, sll2(tcp6(2, 1, 50000, 443, 2, 2100, 0x10, 0))));
    // An ARP-like frame in the cooked capture: skipped with a warning.
    s.push((T0 + 171 * MS, vec![0x08, 0x06, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0, 1]));
    s.sort_by_key(|x| x.0);
    let dir = std::env::temp_dir().join(format!("jitterlab-linktypes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (sp, rp) = (dir.join("s.pcap"), dir.join("r.pcap"));
    std::fs::write(&sp, pcap(276, &s)).unwrap();
    std::fs::write(&rp, pcap(101, &r)).unwrap();
    let a = analyze(sp.to_str().unwrap(), rp.to_str().unwrap(), &Options::default(), None).unwrap();
    assert_eq!(a.media.seq.len(), 40);
    assert_eq!(a.media.seq[39], 65520 + 39);
    assert_eq!(a.media.size[0], 80);
    assert_eq!(a.media.size[1], 88); // the hop-by-hop header counts in the IP size
    assert_eq!(a.run.media_lost, 1);
    assert!(a.media.recv_ns.iter().zip(&a.media.send_ns).enumerate().all(|(i, (r, s))| i == 7 || r - s == 25 * MS));
    let t = &a.tcp;
    assert_eq!((t.src[0].as_str(), t.sport[0], t.bytes[0], t.segments_sent[0]), ("2001:db8::1", 443, 2000, 2));
    assert_eq!((t.syn_ns[0], t.end_ns[0], t.iw[0]), (Some(100 * MS), Some(170 * MS), Some(2)));
    assert_eq!(a.sender_warnings.count("not_ip"), 1);
}
