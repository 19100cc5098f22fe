use super::*;

#[test]
fn report_wire_round_trip() {
    // report at 100 ms: seq 5 arrived at 90 ms, 6 lost, 7 at 95.5 ms with CE
    let r = Report {
        at: Time::from_ms(100),
        packets: vec![
            Status { seq: 5, recv: Some(Time::from_ms(90)), ce: false },
            Status { seq: 6, recv: None, ce: false },
            Status { seq: 7, recv: Some(Time::from_us(95_500)), ce: true },
        ],
    };
    let epoch = 1_000_000_000_000;
    let d = encode_report(&r, epoch, Format::Twcc);
    assert_eq!(d.len(), 1);
    let b = &d[0];
    // 20 B header + 3 × 4 B; transport-cc's size for 3 packets (2 received) is 28 + 24 B, smaller
    assert_eq!(b.len(), 32);
    assert_eq!(&b[0..4], &[0x80, 205, 0, 3]);
    assert_eq!(i64::from_be_bytes(b[4..12].try_into().unwrap()), epoch + 100_000_000);
    assert_eq!(u64::from_be_bytes(b[12..20].try_into().unwrap()), 5);
    // 10 ms = 10000 µs; lost; 4.5 ms = 4500 µs with the CE bit
    assert_eq!(u32::from_be_bytes(b[20..24].try_into().unwrap()), 10_000);
    assert_eq!(u32::from_be_bytes(b[24..28].try_into().unwrap()), u32::MAX);
    assert_eq!(u32::from_be_bytes(b[28..32].try_into().unwrap()), 4_500 | 1 << 31);
    assert_eq!(decode_report(b, epoch), Some(r));
    assert_eq!(decode_report(&b[..31], epoch), None);
    assert_eq!(decode_report(&[0u8; 40], epoch), None);
}

#[test]
fn long_reports_split_and_pad() {
    // 650 packets: 300 + 300 + 50, sequence numbers continuing across the datagrams
    let packets: Vec<Status> = (0..650).map(|s| Status { seq: 1000 + s, recv: Some(Time::from_ms(1)), ce: false }).collect();
    let r = Report { at: Time::from_ms(2), packets };
    let d = encode_report(&r, 0, Format::Rfc8888);
    assert_eq!(d.iter().map(Vec::len).collect::<Vec<_>>(), vec![1220, 1220, 220]);
    let back: Vec<Status> = d.iter().flat_map(|x| decode_report(x, 0).unwrap().packets).collect();
    assert_eq!(back, r.packets);
    // RFC 8888 for one packet: 28 + 8 + 8 + 4 + 4 = 52 B IP, 24 B payload = this format's 20 + 4
    let one = Report { at: Time::from_ms(2), packets: vec![Status { seq: 0, recv: None, ce: false }] };
    assert_eq!(encode_report(&one, 0, Format::Rfc8888)[0].len(), 24);
}

/// The sender's core on a clock the test owns: a 1 Mbit/s FIFO bottleneck with 20 ms of
/// propagation each way, reports every 100 ms through the wire format. What must hold whatever
/// the controller does: every packet is reported once (nothing in flight, nothing queued at the
/// end); and GCC, which backs off to 0.85 × the received rate on over-use, ends with a target
/// between half the link and the link (+5 %) and keeps the median queueing delay under 100 ms.
#[test]
fn core_on_a_test_clock_with_a_bottleneck() {
    let cap = 1e6;
    let prop = Time::from_ms(20);
    let cfg = SendConfig {
        dst: Ipv4Addr::LOCALHOST, dst_port: 0, port: 0, epoch_ns: 0, start_ns: 0, stop_ns: 40_000_000_000, end_ns: 0,
        interval_ns: 33_333_333, cc: "gcc".into(), limits: Limits { min_bps: 150e3, max_bps: 1.5e6, start_bps: 300e3 }, video: true,
        key_interval_ns: None, pauses_ns: vec![], mtu: 1200, seed: 1, name: "video".into(), ssrc: 0, payload_type: 96, clock_rate: 90_000, tos: 0, fifo_prio: 0,
    };
    let mut core = core_for(&cfg).unwrap();
    let mut col = Collector::default();
    let mut link_free = Time::ZERO;
    // (arrival, seq) of packets on the way, (arrival at the sender, report) of reports
    let mut arrivals: Vec<(Time, u64)> = vec![];
    let mut in_transit: Vec<(Time, Report)> = vec![];
    let step = Time::from_ms(1);
    let (mut frame_slot, mut next_report) = (0u64, Time::from_ms(100));
    let mut qdelay = vec![];
    for k in 0..45_000u64 {
        let now = step.mul(k);
        if now < Time::from_secs(40) && now >= Time(33_333_333).mul(frame_slot) {
            core.encode(Time(33_333_333), now);
            frame_slot += 1;
        }
        while let Next::Send { seq, size } = core.poll(now) {
            let depart = link_free.max(now) + Time::from_secs_f64(size as f64 * 8.0 / cap);
            qdelay.push(depart.saturating_sub(now).ns());
            link_free = depart;
            arrivals.push((depart + prop, seq));
        }
        arrivals.retain(|&(t, seq)| {
            if t <= now {
                col.on_arrival(seq, t, false);
            }
            t > now
        });
        if now >= next_report {
            if let Some(r) = col.report(now) {
                for d in encode_report(&r, 0, Format::Twcc) {
                    in_transit.push((now + prop, decode_report(&d, 0).unwrap()));
                }
            }
            next_report = now + Time::from_ms(100);
        }
        in_transit.retain(|(t, r)| {
            if *t <= now {
                core.on_report(r, now);
            }
            *t > now
        });
    }
    assert_eq!(core.in_flight(), 0);
    assert_eq!(core.queue_bytes(), 0);
    let target = core.controller.target_rate();
    assert!((0.5 * cap..=1.05 * cap).contains(&target), "target {target}");
    qdelay.sort_unstable();
    let med = qdelay[qdelay.len() / 2] as f64 / 1e6;
    assert!(med < 100.0, "median queueing delay {med} ms");
}

/// Loopback, no bottleneck: the real sender and receiver exchange media and reports; every frame's
/// bytes leave as packets (payload conserved), every packet arrives, every report is applied.
#[test]
fn loopback_sender_and_receiver() {
    let start = rt::realtime_ns() + 50_000_000;
    let base = 30000 + (std::process::id() % 15000) as u16 * 2;
    let rcfg = RecvConfig {
        port: base, fb_dst: Ipv4Addr::LOCALHOST, fb_port: base + 1, epoch_ns: start, until_ns: start + 2_500_000_000,
        stop_ns: start + 2_600_000_000, format: Format::Twcc, interval_ns: 100_000_000, fifo_prio: 0, fd: None,
    };
    let rx = std::thread::spawn(move || receive(&rcfg).unwrap());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let log = send(&SendConfig {
        dst: Ipv4Addr::LOCALHOST, dst_port: base, port: base + 1, epoch_ns: start, start_ns: start, stop_ns: start + 1_500_000_000,
        end_ns: start + 2_500_000_000, interval_ns: 33_333_333, cc: "gcc".into(),
        limits: Limits { min_bps: 150e3, max_bps: 1.5e6, start_bps: 300e3 }, video: true, key_interval_ns: None, pauses_ns: vec![], mtu: 1200, seed: 3,
        name: "video".into(), ssrc: 9, payload_type: 96, clock_rate: 90_000, tos: 0, fifo_prio: 0,
    })
    .unwrap();
    let r = rx.join().unwrap();
    // frames at k · 33_333_333 ns < 1.5 s: k = 0..45 (45 · 33_333_333 = 1_499_999_985), 46 frames
    assert_eq!(log.frames.len(), 46);
    let frame_bytes: u64 = log.frames.iter().map(|f| f.2).sum();
    let packet_payload: i64 = log.size.iter().map(|s| s - 40).sum();
    assert_eq!(frame_bytes as i64, packet_payload);
    assert_eq!(log.seq, (0..log.seq.len() as i64).collect::<Vec<_>>());
    assert!(log.size.iter().all(|&s| s <= 1200));
    let mut got = r.seq.clone();
    got.sort_unstable();
    assert_eq!(got, log.seq);
    assert!(r.recv_ns.iter().zip(&r.send_ns).all(|(a, b)| a >= b));
    assert!(log.reports >= 10, "{} reports", log.reports);
    assert_eq!(log.series.len() as u64, log.reports);
    assert_eq!(log.malformed, 0);
    // reports cover every packet: the last report leaves nothing in flight
    assert_eq!(log.series.last().unwrap().4, 0);
    // an empty path: GCC never decreases (no over-use, no loss)
    assert!(log.series.iter().all(|s| s.1 >= 300e3), "{:?}", log.series.iter().map(|s| s.1).collect::<Vec<_>>());
}

#[test]
fn unknown_controller_is_refused() {
    let cfg = SendConfig {
        dst: Ipv4Addr::LOCALHOST, dst_port: 0, port: 0, epoch_ns: 0, start_ns: 0, stop_ns: 0, end_ns: 0, interval_ns: 1, cc: "bbr".into(),
        limits: Limits { min_bps: 1.0, max_bps: 2.0, start_bps: 1.0 }, video: true, key_interval_ns: None, pauses_ns: vec![], mtu: 1200, seed: 1,
        name: "v".into(), ssrc: 0, payload_type: 96, clock_rate: 90_000, tos: 0, fifo_prio: 0,
    };
    let e = core_for(&cfg).err().unwrap().to_string();
    assert!(e.contains("gcc, scream, nada"), "{e}");
}
