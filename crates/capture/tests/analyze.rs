//! End to end: a capture pair written with the writer, with hand-placed delays, losses, a
//! duplicate, a reordering and a TCP transfer, analysed back to exact numbers.
use std::net::Ipv4Addr;
use std::path::PathBuf;

use jitterlab_capture::analyze::NULL_NS;
use jitterlab_capture::{analyze, Endpoints, MediaSpec, Options, PcapWriter, RtpPacket, TcpOptions, TcpPacket, UdpPacket};

const T0: i64 = 1_700_000_000_000_000_000;
const MS: i64 = 1_000_000;
const N: usize = 100;
const LOST: [usize; 3] = [10, 11, 12];
const OFFSET: i64 = 5 * MS; // receiver clock ahead of the sender's

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jitterlab-capture-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn owd(i: usize) -> i64 { 30 * MS + (i % 5) as i64 * MS }

fn rtp(i: usize, ts: i64) -> RtpPacket {
    let ep = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 5004, dport: 5006 };
    RtpPacket { ts_ns: ts, ep, ecn: 0, ssrc: 0x1234, seq: 65530u16.wrapping_add(i as u16), rtp_ts: 160 * i as u32, payload_type: 0, marker: false, ip_len: 80 }
}

fn tcp(ts: i64, down: bool, seq: u32, ack: u32, flags: u8, len: u32, ecn: u8) -> TcpPacket<'static> {
    let (s, c) = ((Ipv4Addr::new(10, 0, 0, 1), 80), (Ipv4Addr::new(10, 0, 0, 2), 40000));
    let ((src, sport), (dst, dport)) = if down { (s, c) } else { (c, s) };
    TcpPacket { ts_ns: ts, ep: Endpoints { src, dst, sport, dport }, ecn, seq, ack, flags, window: 65535, options: TcpOptions::default(), payload_len: len }
}

/// Writes the pair; returns (sender, receiver) paths.
fn write_pair(tag: &str) -> (String, String) {
    let (sp, rp) = (tmp(&format!("{tag}-s.pcap")), tmp(&format!("{tag}-r.pcap")));
    let mut r = PcapWriter::new(std::fs::File::create(&rp).unwrap(), 65535).unwrap();
    // A DNS-like datagram first: not media, but it is the first packet, so the run starts here.
    let dns = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 53), sport: 3333, dport: 53 };
    let mut arrivals: Vec<(i64, usize)> = Vec::new();
    for i in 0..N {
        let ts = T0 + 10 * MS + i as i64 * 20 * MS;
        if !LOST.contains(&i) {
            arrivals.push((ts + owd(i) + OFFSET, i));
        }
    }
    // Packet 31 overtakes packet 30 (arrives 1 ms before it); packet 20 arrives twice.
    for a in arrivals.iter_mut() {
        if a.1 == 31 {
            a.0 = T0 + 10 * MS + 30 * 20 * MS + owd(30) + OFFSET - MS;
        }
    }
    let dup = arrivals.iter().find(|a| a.1 == 20).unwrap().0 + 2 * MS;
    arrivals.push((dup, 20));
    arrivals.sort();
    // TCP: SYN at 500 ms, three 1000-byte segments (the second retransmitted), final ACK.
    let isn = 1_000_000u32;
    let segs_s = vec![
        tcp(T0 + 500 * MS, false, 7, 0, 0x02, 0, 0),
        tcp(T0 + 540 * MS, true, isn, 8, 0x12, 0, 0),
        tcp(T0 + 541 * MS, true, isn + 1, 8, 0x10, 1000, 0),
        tcp(T0 + 542 * MS, true, isn + 1001, 8, 0x10, 1000, 0),
        tcp(T0 + 543 * MS, true, isn + 2001, 8, 0x10, 1000, 0),
        tcp(T0 + 700 * MS, true, isn + 1001, 8, 0x10, 1000, 0),
        tcp(T0 + 760 * MS, false, 8, isn + 3001, 0x10, 0, 0),
    ];
    type Write = Box<dyn Fn(&mut PcapWriter<std::fs::File>)>;
    let mut sender_frames: Vec<(i64, Write)> = Vec::new();
    for p in segs_s {
        sender_frames.push((p.ts_ns, Box::new(move |w| w.write_tcp(&p).unwrap())));
    }
    // The receiver sees the three data segments, CE on the first and the third (ECN set below).
    for k in 0..3u32 {
        let p = tcp(T0 + 600 * MS + k as i64, true, isn + 1 + 1000 * k, 8, 0x10, 1000, 0);
        arrivals.push((p.ts_ns + OFFSET, usize::MAX - k as usize));
    }
    arrivals.sort();
    // The sender file in time order: media and the sender's TCP frames merged.
    sender_frames.sort_by_key(|f| f.0);
    let mut s = PcapWriter::new(std::fs::File::create(&sp).unwrap(), 65535).unwrap();
    s.write_udp(&UdpPacket { ts_ns: T0, ep: dns, ecn: 0, payload: b"\x12\x34\x01\x00" }).unwrap();
    let mut fi = 0;
    for i in 0..N {
        let ts = T0 + 10 * MS + i as i64 * 20 * MS;
        while fi < sender_frames.len() && sender_frames[fi].0 < ts {
            (sender_frames[fi].1)(&mut s);
            fi += 1;
        }
        s.write_rtp(&rtp(i, ts)).unwrap();
    }
    for f in &sender_frames[fi..] {
        (f.1)(&mut s);
    }
    s.finish().unwrap();
    for (ts, i) in arrivals {
        if i > N {
            let k = (usize::MAX - i) as u32;
            let p = tcp(ts, true, isn + 1 + 1000 * k, 8, 0x10, 1000, if k == 1 { 0 } else { 3 });
            r.write_tcp(&p).unwrap();
        } else {
            let mut p = rtp(i, ts);
            p.ecn = if i == 40 { 3 } else { 0 };
            r.write_rtp(&p).unwrap();
        }
    }
    r.finish().unwrap();
    (sp.to_string_lossy().into(), rp.to_string_lossy().into())
}

#[test]
fn rtp_pair_exact_tables() {
    let (s, r) = write_pair("rtp");
    let opt = Options { clock_offset_ns: OFFSET, ..Default::default() };
    let a = analyze(&s, &r, &opt, None).unwrap();
    let m = &a.media;
    assert_eq!(a.media_flows.len(), 1);
    assert_eq!(m.seq.len(), N);
    assert_eq!(m.seq[0], 65530);
    assert_eq!(m.seq[N - 1], 65530 + N as i64 - 1); // extended across the wrap at i = 6
    for i in 0..N {
        let send = 10 * MS + i as i64 * 20 * MS;
        assert_eq!(m.send_ns[i], send);
        assert_eq!(m.size[i], 80);
        assert_eq!(m.ce[i], i == 40);
        if LOST.contains(&i) {
            assert_eq!(m.recv_ns[i], NULL_NS);
        } else if i == 31 {
            assert_eq!(m.recv_ns[i], 10 * MS + 30 * 20 * MS + owd(30) - MS);
        } else {
            assert_eq!(m.recv_ns[i] - send, owd(i), "row {i}");
        }
    }
    let run = &a.run;
    assert_eq!(run.t0_epoch_ns, T0);
    assert_eq!((run.media_sent, run.media_received, run.media_lost), (100, 97, 3));
    assert_eq!((run.duplicates, run.reordered, run.max_loss_run, run.unmatched), (1, 1, 3, 0));
    assert_eq!(run.min_owd_ns, Some(9 * MS)); // packet 31: sent 20 ms after 30, arrived 1 ms before it
    assert_eq!(run.clock_offset_bound_ns, Some(9 * MS + OFFSET));
    assert!(run.flag_duplication && run.flag_reordering && !run.flag_delay_spike && !run.flag_loss_run && run.anomalous);
    // TCP.
    let t = &a.tcp;
    assert_eq!(t.flow_id, vec![1]);
    assert_eq!((t.src[0].as_str(), t.sport[0], t.dport[0]), ("10.0.0.1", 80, 40000));
    assert_eq!(t.syn_ns[0], Some(500 * MS));
    assert_eq!(t.first_data_ns[0], Some(541 * MS));
    assert_eq!(t.end_ns[0], Some(760 * MS));
    assert_eq!((t.bytes[0], t.segments_sent[0], t.retransmits[0], t.iw[0], t.ecn_marks[0]), (3000, 4, 1, Some(3), 2));
    assert_eq!((run.tcp_start_ns, run.tcp_end_ns), (Some(500 * MS), Some(760 * MS)));
    // RFC 3550 statistics: the receiver saw 98 packets (one duplicate) of 100 expected.
    let rx = a.rtp_streams.iter().find(|x| x.side == "receiver").unwrap();
    assert_eq!((rx.packets, rx.expected, rx.lost), (98, 100, 2));
}

#[test]
fn udp_port_mode_matches_by_payload() {
    let (s, r) = write_pair("udp");
    let by_rtp = analyze(&s, &r, &Options { clock_offset_ns: OFFSET, ..Default::default() }, None).unwrap();
    let by_udp = analyze(&s, &r, &Options { clock_offset_ns: OFFSET, media: MediaSpec::Udp(5006), ..Default::default() }, None).unwrap();
    assert_eq!(by_udp.media.recv_ns, by_rtp.media.recv_ns);
    assert_eq!(by_udp.media.seq, (0..N as i64).collect::<Vec<_>>());
    assert_eq!((by_udp.run.duplicates, by_udp.run.reordered), (1, 1));
}

#[test]
fn thresholds_raise_spike_and_loss_run_flags() {
    let (s, r) = write_pair("flags");
    let opt = Options { spike_ns: 20 * MS, loss_run: 3, ..Default::default() };
    let a = analyze(&s, &r, &opt, None).unwrap();
    assert!(a.run.flag_delay_spike && a.run.flag_loss_run);
    // Without the offset correction the OWDs just shift: the bound names the true offset plus min OWD.
    assert_eq!(a.run.min_owd_ns, Some(9 * MS + OFFSET));
}

#[test]
fn negative_owd_warns_and_named_ssrc_missing_is_an_error() {
    let (s, r) = write_pair("neg");
    let a = analyze(&s, &r, &Options { clock_offset_ns: 100 * MS, ..Default::default() }, None).unwrap();
    assert!(a.run.min_owd_ns.unwrap() < 0);
    assert!(a.notes.iter().any(|n| n.contains("negative one-way delays")), "{:?}", a.notes);
    let e = analyze(&s, &r, &Options { media: MediaSpec::Rtp(99), ..Default::default() }, None).unwrap_err();
    assert!(e.to_string().contains("SSRC 99"), "{e}");
}

#[test]
fn truncated_sender_keeps_rows_and_warns_with_offset() {
    let (s, r) = write_pair("trunc");
    let bytes = std::fs::read(&s).unwrap();
    let cut = tmp("trunc-cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 50]).unwrap();
    let a = analyze(cut.to_str().unwrap(), &r, &Options::default(), None).unwrap();
    assert_eq!(a.media.seq.len(), N - 1);
    let msgs = a.sender_warnings.messages();
    assert!(msgs.iter().any(|m| m.contains("truncated at byte")), "{msgs:?}");
    assert_eq!(a.run.unmatched, 1);
}

#[test]
fn two_way_call_keeps_only_the_forward_stream() {
    // A (10.0.0.1) sends SSRC 0xA to B, B sends SSRC 0xB to A; each capture holds both directions.
    let (sp, rp) = (tmp("twoway-s.pcap"), tmp("twoway-r.pcap"));
    let mut s = PcapWriter::new(std::fs::File::create(&sp).unwrap(), 65535).unwrap();
    let mut r = PcapWriter::new(std::fs::File::create(&rp).unwrap(), 65535).unwrap();
    let a_to_b = Endpoints { src: Ipv4Addr::new(10, 0, 0, 1), dst: Ipv4Addr::new(10, 0, 0, 2), sport: 4000, dport: 4002 };
    let b_to_a = Endpoints { src: Ipv4Addr::new(10, 0, 0, 2), dst: Ipv4Addr::new(10, 0, 0, 1), sport: 4002, dport: 4000 };
    let pkt = |ep, ssrc, i: usize, ts| RtpPacket { ts_ns: ts, ep, ecn: 0, ssrc, seq: i as u16, rtp_ts: 160 * i as u32, payload_type: 0, marker: false, ip_len: 80 };
    for i in 0..50 {
        let t = T0 + i as i64 * 20 * MS;
        // At A: own packet out at t, B's packet (sent at t + 5 ms) in at t + 45 ms.
        s.write_rtp(&pkt(a_to_b, 0xA, i, t)).unwrap();
        r.write_rtp(&pkt(b_to_a, 0xB, i, t + 5 * MS)).unwrap();
        s.write_rtp(&pkt(b_to_a, 0xB, i, t + 45 * MS)).unwrap();
        r.write_rtp(&pkt(a_to_b, 0xA, i, t + 40 * MS)).unwrap();
    }
    s.finish().unwrap();
    r.finish().unwrap();
    let (s, r) = (sp.to_str().unwrap(), rp.to_str().unwrap());
    let a = analyze(s, r, &Options::default(), None).unwrap();
    assert_eq!(a.media_flows.len(), 1);
    assert_eq!(a.media_flows[0].ssrc, Some(0xA));
    assert_eq!(a.media.seq.len(), 50);
    assert_eq!((a.run.min_owd_ns, a.run.max_owd_ns), (Some(40 * MS), Some(40 * MS)));
    assert!(a.notes.iter().any(|n| n.contains("0x0000000b") && n.contains("receiver to the sender")), "{:?}", a.notes);
    // Named explicitly, the reverse stream is analysed as asked, with a negative-OWD warning.
    let b = analyze(s, r, &Options { media: MediaSpec::Rtp(0xB), ..Default::default() }, None).unwrap();
    assert_eq!(b.run.min_owd_ns, Some(-40 * MS));
    assert!(b.notes.iter().any(|n| n.contains("negative one-way delays")));
    // udp:PORT keeps the direction of the first datagram with that port (A -> B here).
    let u = analyze(s, r, &Options { media: MediaSpec::Udp(4002), ..Default::default() }, None).unwrap();
    assert_eq!((u.media.seq.len(), u.run.unmatched, u.run.media_lost), (50, 0, 0));
    assert_eq!((u.run.min_owd_ns, u.run.max_owd_ns), (Some(40 * MS), Some(40 * MS)));
}
