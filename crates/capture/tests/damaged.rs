//! Damaged input: every prefix of a valid file, corrupt length fields, and a property test over
//! random and mutated bytes. Nothing may panic; every error names a byte offset inside the input;
//! frames before the damage are kept.
use std::net::Ipv4Addr;

use jitterlab_capture::wire::decode;
use jitterlab_capture::{CaptureError, CaptureReader, Endpoints, PcapWriter, RtpPacket, TcpOptions, TcpPacket};

fn sample() -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), 65535).unwrap();
    let ep = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 5004, dport: 5004 };
    for i in 0..3u16 {
        w.write_rtp(&RtpPacket { ts_ns: 1_000 + i as i64, ep, ecn: 0, ssrc: 1, seq: i, rtp_ts: 0, payload_type: 0, marker: false, ip_len: 80 }).unwrap();
    }
    let t = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 80, dport: 40000 };
    w.write_tcp(&TcpPacket { ts_ns: 5_000, ep: t, ecn: 0, seq: 1, ack: 1, flags: 0x10, window: 100, options: TcpOptions { timestamps: Some((1, 2)), ..Default::default() }, payload_len: 100 }).unwrap();
    w.finish().unwrap()
}

/// Reads everything: (frames kept, errors). Decodes each frame too.
fn read_all(bytes: &[u8]) -> Result<(usize, Vec<CaptureError>), CaptureError> {
    let mut r = CaptureReader::from_reader(Box::new(std::io::Cursor::new(bytes.to_vec())))?;
    let mut n = 0;
    let mut errs = Vec::new();
    loop {
        match r.next_frame() {
            Ok(Some(f)) => {
                n += 1;
                if let Err(e) = decode(f.linktype, f.data, f.offset) {
                    errs.push(e);
                }
            }
            Ok(None) => break,
            Err(e) => errs.push(e),
        }
        if errs.len() > 10_000 {
            break;
        }
    }
    Ok((n, errs))
}

#[test]
fn every_prefix_keeps_complete_records() {
    let full = sample();
    // Record starts: 24, then 16 + frame length each (94, 94, 94, 14 + 20 + 32 + 100 = 166).
    let starts = [24usize, 134, 244, 354];
    assert_eq!(full.len(), 354 + 16 + 166);
    for cut in 0..=full.len() {
        match read_all(&full[..cut]) {
            Err(e) => {
                assert!(cut < 24, "header error at cut {cut}: {e}");
                assert_eq!(e.offset(), Some(0));
            }
            Ok((n, errs)) => {
                let complete = starts.iter().filter(|&&s| s < cut).count() - usize::from(!starts.contains(&cut) && cut < full.len());
                assert_eq!(n, complete, "cut {cut}");
                if starts.contains(&cut) || cut == full.len() {
                    assert!(errs.is_empty(), "cut {cut}: {errs:?}");
                } else {
                    assert_eq!(errs.len(), 1, "cut {cut}");
                    let s = starts.iter().rev().find(|&&s| s < cut).unwrap();
                    assert!(matches!(errs[0], CaptureError::Truncated { offset, .. } if offset == *s as u64), "cut {cut}: {:?}", errs[0]);
                }
            }
        }
    }
}

#[test]
fn corrupt_length_stops_with_offset_and_keeps_earlier() {
    let mut b = sample();
    b[134 + 8..134 + 12].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
    let (n, errs) = read_all(&b).unwrap();
    assert_eq!(n, 1);
    assert!(matches!(&errs[0], CaptureError::Corrupt { offset: 134, .. }), "{errs:?}");
    assert!(errs[0].to_string().contains("byte 134"));
}

#[test]
fn snaplen_cut_headers_are_per_packet_warnings() {
    // Snaplen 40 keeps Ethernet + IPv4 + 6 UDP bytes: every frame warns, none is lost silently.
    let mut w = PcapWriter::new(Vec::new(), 54).unwrap();
    let ep = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 1, dport: 2 };
    w.write_rtp(&RtpPacket { ts_ns: 0, ep, ecn: 0, ssrc: 1, seq: 0, rtp_ts: 0, payload_type: 0, marker: false, ip_len: 80 }).unwrap();
    let mut b = w.finish().unwrap();
    // Shrink the stored frame to 40 bytes, as `tcpdump -s 40` would.
    b[24 + 8..24 + 12].copy_from_slice(&40u32.to_le_bytes());
    b.truncate(24 + 16 + 40);
    let (n, errs) = read_all(&b).unwrap();
    assert_eq!(n, 1);
    assert!(matches!(errs[0], CaptureError::SnapTruncated { offset: 74, layer: "UDP", needed: 8, available: 6 }), "{errs:?}");
}

/// xorshift64*: a tiny deterministic generator so the property test needs no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize { (self.next() % n as u64) as usize }
}

fn check_offsets(len: usize, errs: &[CaptureError]) {
    for e in errs {
        let off = e.offset().unwrap_or_else(|| panic!("error without offset: {e}"));
        assert!(off <= len as u64, "offset {off} beyond input {len}: {e}");
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let base = sample();
    let magics: [&[u8]; 5] = [
        &[0xd4, 0xc3, 0xb2, 0xa1],
        &[0x4d, 0x3c, 0xb2, 0xa1],
        &[0xa1, 0xb2, 0xc3, 0xd4],
        &[0x0a, 0x0d, 0x0d, 0x0a],
        &[0x1f, 0x8b],
    ];
    for round in 0..6000 {
        let bytes: Vec<u8> = match round % 3 {
            // Pure random bytes behind a valid magic, so the parsers past the magic are exercised.
            0 => {
                let len = rng.below(600);
                let mut v = magics[rng.below(magics.len())].to_vec();
                v.extend((0..len).map(|_| rng.next() as u8));
                if v.len() >= 12 && v[..4] == [0x0a, 0x0d, 0x0d, 0x0a] {
                    v[8..12].copy_from_slice(&[0x4d, 0x3c, 0x2b, 0x1a]);
                }
                v
            }
            // A valid file with a few random bytes changed.
            1 => {
                let mut v = base.clone();
                for _ in 0..1 + rng.below(8) {
                    let i = rng.below(v.len());
                    v[i] = rng.next() as u8;
                }
                v
            }
            // A valid file with linktype and header bytes randomised, then truncated.
            _ => {
                let mut v = base.clone();
                v[20] = [0u8, 1, 12, 101, 113, 228, 229, 7][rng.below(8)];
                v[20 + 1] = if rng.below(4) == 0 { 1 } else { 0 }; // 113+256 = 369 and friends
                for _ in 0..rng.below(20) {
                    let i = 24 + 16 + rng.below(v.len() - 40);
                    v[i] = rng.next() as u8;
                }
                let cut = rng.below(v.len() + 1);
                v.truncate(cut);
                v
            }
        };
        match read_all(&bytes) {
            Ok((_, errs)) => check_offsets(bytes.len().max(1 << 20), &errs),
            Err(e) => check_offsets(bytes.len(), &[e]),
        }
    }
}

#[test]
fn truncated_gzip_keeps_frames_before_the_cut() {
    use std::io::Write;
    let mut raw = Vec::new();
    for _ in 0..50 {
        raw.extend_from_slice(&sample()[24..]);
    }
    let mut full = sample()[..24].to_vec();
    full.extend_from_slice(&raw);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    gz.write_all(&full).unwrap();
    let gz = gz.finish().unwrap();
    // Stored (uncompressed) deflate blocks: cutting the file in half keeps about half the frames.
    let (n, errs) = read_all(&gz[..gz.len() / 2]).unwrap();
    assert!(n > 50 && n < 150, "{n}");
    assert_eq!(errs.len(), 1);
    assert!(matches!(errs[0], CaptureError::Io { .. } | CaptureError::Truncated { .. }), "{:?}", errs[0]);
    assert!(errs[0].offset().unwrap() > 24 && errs[0].offset().unwrap() <= full.len() as u64);
}
