//! Container formats: the same frames read back from pcap (µs and ns, both byte orders), pcapng
//! (with if_tsresol and a big-endian section) and gzip.
use std::io::Write;
use std::net::Ipv4Addr;

use jitterlab_capture::{CaptureError, CaptureReader, Endpoints, PcapWriter, RtpPacket};

fn frames_of(bytes: Vec<u8>) -> Vec<(i64, u32, Vec<u8>)> {
    let mut r = CaptureReader::from_reader(Box::new(std::io::Cursor::new(bytes))).unwrap();
    let mut v = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        v.push((f.ts_ns, f.linktype, f.data.to_vec()));
    }
    v
}

fn sample_pcap(nanos: bool) -> Vec<u8> {
    let mut w = PcapWriter::with_resolution(Vec::new(), 65535, nanos).unwrap();
    let ep = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 5004, dport: 5004 };
    for i in 0..3u16 {
        let ts = 1_700_000_000_000_000_000 + i as i64 * 20_000_123;
        w.write_rtp(&RtpPacket { ts_ns: ts, ep, ecn: 0, ssrc: 1, seq: i, rtp_ts: 160 * i as u32, payload_type: 0, marker: false, ip_len: 80 }).unwrap();
    }
    w.finish().unwrap()
}

/// Rewrites a little-endian pcap as big-endian (the format of captures made on big-endian hosts).
fn to_big_endian(le: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for w in le[0..4].chunks(4) {
        out.extend(w.iter().rev());
    }
    out.extend(le[4..6].iter().rev());
    out.extend(le[6..8].iter().rev());
    for w in le[8..24].chunks(4) {
        out.extend(w.iter().rev());
    }
    let mut p = 24;
    while p < le.len() {
        for w in le[p..p + 16].chunks(4) {
            out.extend(w.iter().rev());
        }
        let caplen = u32::from_le_bytes(le[p + 8..p + 12].try_into().unwrap()) as usize;
        out.extend_from_slice(&le[p + 16..p + 16 + caplen]);
        p += 16 + caplen;
    }
    out
}

/// A pcapng file with one section in the given byte order, one interface (if_tsresol = `tsresol`)
/// and EPBs for the frames; timestamps converted to that resolution.
fn to_pcapng(frames: &[(i64, u32, Vec<u8>)], big: bool, tsresol: u8) -> Vec<u8> {
    let u16b = |v: u16| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let u32b = |v: u32| if big { v.to_be_bytes() } else { v.to_le_bytes() };
    let block = |t: u32, body: &[u8]| {
        let len = 12 + body.len() as u32;
        let mut b = u32b(t).to_vec();
        b.extend(u32b(len));
        b.extend_from_slice(body);
        b.extend(u32b(len));
        b
    };
    let mut out = Vec::new();
    let mut shb = u32b(0x1A2B3C4D).to_vec();
    shb.extend(u16b(1));
    shb.extend(u16b(0));
    shb.extend([0xff; 8]); // section length unknown
    out.extend(block(0x0A0D0D0A, &shb));
    let mut idb = u16b(1).to_vec();
    idb.extend(u16b(0));
    idb.extend(u32b(0));
    idb.extend(u16b(9)); // if_tsresol
    idb.extend(u16b(1));
    idb.extend([tsresol, 0, 0, 0]);
    idb.extend(u16b(0)); // opt_endofopt
    idb.extend(u16b(0));
    out.extend(block(1, &idb));
    // A name resolution block that readers must skip.
    out.extend(block(4, &[0, 0, 0, 0]));
    for (ts, _, data) in frames {
        let units: u128 = if tsresol & 0x80 != 0 { 1u128 << (tsresol & 0x7f) } else { 10u128.pow(tsresol as u32) };
        let t = (*ts as u128 * units / 1_000_000_000) as u64;
        let mut epb = u32b(0).to_vec();
        epb.extend(u32b((t >> 32) as u32));
        epb.extend(u32b(t as u32));
        epb.extend(u32b(data.len() as u32));
        epb.extend(u32b(data.len() as u32));
        epb.extend_from_slice(data);
        while epb.len() % 4 != 0 {
            epb.push(0);
        }
        out.extend(block(6, &epb));
    }
    out
}

#[test]
fn pcap_micro_nano_and_big_endian_agree() {
    let ns = frames_of(sample_pcap(true));
    let us = frames_of(sample_pcap(false));
    assert_eq!(ns.len(), 3);
    assert_eq!(ns[1].0, 1_700_000_000_020_000_123);
    // Microsecond files lose the sub-µs part.
    assert_eq!(us[1].0, 1_700_000_000_020_000_000);
    assert_eq!(frames_of(to_big_endian(&sample_pcap(true))), ns);
    assert_eq!(ns.iter().map(|f| f.2.clone()).collect::<Vec<_>>(), us.iter().map(|f| f.2.clone()).collect::<Vec<_>>());
}

#[test]
fn pcapng_resolutions_and_byte_orders() {
    let ns = frames_of(sample_pcap(true));
    assert_eq!(frames_of(to_pcapng(&ns, false, 9)), ns);
    assert_eq!(frames_of(to_pcapng(&ns, true, 9)), ns);
    // Default-like microseconds: the 123 ns are lost.
    let us = frames_of(to_pcapng(&ns, false, 6));
    assert_eq!(us[1].0, 1_700_000_000_020_000_000);
    // Binary resolution 2^-30 s: within 1 ns after the round trip through the unit.
    let bin = frames_of(to_pcapng(&ns, true, 0x80 | 30));
    for (a, b) in bin.iter().zip(&ns) {
        assert!((a.0 - b.0).abs() <= 1, "{} vs {}", a.0, b.0);
    }
}

#[test]
fn gzip_is_transparent() {
    let raw = sample_pcap(true);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).unwrap();
    let gz = gz.finish().unwrap();
    let r = CaptureReader::from_reader(Box::new(std::io::Cursor::new(gz.clone()))).unwrap();
    assert!(r.gzip);
    assert_eq!(frames_of(gz), frames_of(raw));
}

#[test]
fn bad_magic_names_offset_zero() {
    let e = CaptureReader::from_reader(Box::new(std::io::Cursor::new(b"GET / HTTP/1.1\r\n".to_vec()))).err().unwrap();
    match e {
        CaptureError::BadMagic { offset, found } => assert_eq!((offset, found), (0, 0x47455420)),
        other => panic!("{other:?}"),
    }
    let msg = e_to_string(b"\x00\x01");
    assert!(msg.contains("truncated at byte 0"), "{msg}");
}

fn e_to_string(b: &[u8]) -> String {
    CaptureReader::from_reader(Box::new(std::io::Cursor::new(b.to_vec()))).err().unwrap().to_string()
}
