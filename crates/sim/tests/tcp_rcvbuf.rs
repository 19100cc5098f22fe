//! Linux's receive buffer (`tcp/rcvbuf.rs`) through the receiver, in virtual time: the windows a
//! Linux 6.18 receiver advertises for SO_RCVBUF = 20000 and for the default buffer, and the
//! autotuning growth over a slow-start transfer. Every expected number is worked out by hand from
//! the kernel's arithmetic (the functions named in each comment); the testbed check of the same
//! numbers is in docs/validation.md.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::tcp::rcvbuf::{select_initial_window, LinuxRcvConfig};
use jitterlab_sim::tcp::receiver::{Receiver, RecvOutput};
use jitterlab_sim::tcp::TcpConfig;
use jitterlab_sim::time::Time;

const MSS: u32 = 1448; // payload: MSS 1460 − 12 B of timestamps option, as on the testbed

/// The testbed host's sysctls (tcp_rmem 4096 131072 33554432, rmem_max 4194304), 2304 B truesize.
fn testbed(so: Option<u64>) -> LinuxRcvConfig {
    LinuxRcvConfig { rmem: [4096, 131_072, 33_554_432], rmem_max: 4_194_304, so_rcvbuf: so, ..LinuxRcvConfig::default() }
}

fn receiver(lc: LinuxRcvConfig) -> Receiver {
    Receiver::new(TcpConfig { mss: 1460, linux_rcv: Some(lc), ..TcpConfig::default() }, 0, None)
}

fn ts(t: Time) -> u32 { jitterlab_sim::tcp::sender::tsval(t) }

/// SYN with window scaling and timestamps; the ACK completing the handshake at `t`.
fn open(r: &mut Receiver, t: Time) -> TcpHeader {
    let mut out = RecvOutput::default();
    r.process(&TcpHeader { seq: 0, flags: F::SYN, wscale: Some(7), ts: Some((1, 0)), ..Default::default() }, false, Time::ZERO, &mut out);
    let synack = out.segs[0].clone();
    r.process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, ts: Some((2, 0)), ..Default::default() }, false, t, &mut RecvOutput::default());
    synack
}

/// A full segment at `seq` whose TSecr says the sender last heard from us `rtt` ago.
fn seg(seq: u64, now: Time, rtt: Time) -> TcpHeader {
    TcpHeader { seq, ack: 1, flags: F::ACK, len: MSS, ts: Some((ts(now), ts(now - rtt))), ..Default::default() }
}

/// SO_RCVBUF = 20000 (the testbed's moderation of one flow): the kernel doubles it to 40000
/// (`__sock_set_rcvbuf`); the SYN offers tcp_full_space at the default 50 % ratio, 20000, rounded
/// down to whole MSS by `tcp_select_initial_window` (the client's SYN, before any TS.Recent: MSS
/// 1460): 13 × 1460 = 18980, without window scaling (ilog2 of at most the 20000 clamp is 14 < 15).
/// After the first full segment the ratio is 1448·256/2304 = 160 (`tcp_measure_rcv_mss`), the
/// clamp 40000·160/256 = 25000; with the segment that triggers the ACK still queued (2304 B of
/// truesize) `tcp_space` is 37696·160/256 = 23560; rcv_ssthresh grows by 2·advmss = 2920 per
/// segment (`tcp_grow_window`) from 18980 to 21900, then to that 23560; `__tcp_select_window`
/// offers whole MSS: 21720 (15 segments), then 23168 (16). The testbed's client capture shows
/// exactly this sequence: 18980 (SYN, handshake ACK), 21720 (3 ACKs), then 23168 on 694 of 699
/// ACKs (docs/validation.md) — where the window moderation rounded the budget to 13 segments.
#[test]
fn so_rcvbuf_20000_advertises_what_linux_does() {
    let mut r = receiver(testbed(Some(20_000)));
    let synack = open(&mut r, Time::ZERO);
    assert_eq!(synack.wnd, 18_980);
    assert_eq!(synack.wscale, Some(0));
    let l = r.linux().unwrap();
    assert_eq!(l.sk_rcvbuf, 40_000);
    // tcp_init_buffer_space: the clamp is the full space less one advmss (20000 − 1460)
    assert_eq!(l.window_clamp, 18_540);
    let rtt = Time::from_ms(40);
    let mut wnds = vec![];
    for k in 0..6u64 {
        let now = Time::from_ms(100 + 3 * k);
        let mut out = RecvOutput::default();
        r.process(&seg(1 + k * MSS as u64, now, rtt), false, now, &mut out);
        if let Some(a) = out.segs.last() {
            wnds.push(a.wnd);
        }
    }
    let l = r.linux().unwrap();
    assert_eq!(l.scaling_ratio, 160);
    assert_eq!(l.window_clamp, 25_000);
    assert_eq!(l.rcv_ssthresh, 23_560);
    assert_eq!(wnds[..2], [21_720, 23_168]);
    assert!(wnds[2..].iter().all(|&w| w == 23_168), "{wnds:?}");
    // the delayed ACK's timer fires after the application read: nothing held, 25000 → 17 segments
    // would be allowed by the space, but rcv_ssthresh (23560) still bounds it
    let mut out = RecvOutput::default();
    r.on_delack(Time::from_ms(200), &mut out);
    assert!(out.segs.is_empty(), "every segment was ACKed in quick-ACK mode");
}

/// The default buffer (no SO_RCVBUF): tcp_rmem[1] = 131072 → full space 65536 at 50 % → the SYN
/// offers 44 × 1460 = 64240 (Linux's familiar SYN window); the shift is ilog2(max(tcp_rmem[2], rmem_max)) − 15: 10 on the testbed
/// host (33554432), 7 with Linux's default 6291456 (`tcp_select_initial_window`). Later windows are
/// aligned up to the 2^shift unit (`__tcp_select_window`: "advertise enough space so that it won't
/// get scaled away").
#[test]
fn default_buffer_initial_window_and_scale() {
    let mut r = receiver(testbed(None));
    let synack = open(&mut r, Time::ZERO);
    assert_eq!((synack.wnd, synack.wscale), (64_240, Some(10)));
    let mut r = receiver(LinuxRcvConfig::default());
    let synack = open(&mut r, Time::ZERO);
    assert_eq!((synack.wnd, synack.wscale), (64_240, Some(7)));
    let l = r.linux().unwrap();
    assert_eq!(l.window_clamp, 65_536 - 1460, "one advmss reserved (tcp_init_buffer_space)");
    let now = Time::from_ms(50);
    let mut out = RecvOutput::default();
    r.process(&seg(1, now, Time::from_ms(40)), false, now, &mut out);
    let l = r.linux().unwrap();
    // clamp follows the whole buffer at ratio 160: 81920; rcv_ssthresh max(min(64240, 81920), 64076)
    // = 64240, + 2920 → 67160; space with one segment held (131072 − 2304)·160/256 = 80480
    assert_eq!((l.window_clamp, l.rcv_ssthresh), (81_920, 67_160));
    // 67160 aligned up to 128: 67200 (525 units of 128)
    assert_eq!(out.segs[0].wnd, 67_200);
    // without timestamps the same SYN window
    let mut r = Receiver::new(TcpConfig { mss: 1460, linux_rcv: Some(LinuxRcvConfig::default()), ..TcpConfig::default() }, 0, None);
    let mut out = RecvOutput::default();
    r.process(&TcpHeader { seq: 0, flags: F::SYN, wscale: Some(7), ..Default::default() }, false, Time::ZERO, &mut out);
    assert_eq!(out.segs[0].wnd, 64_240);
}

#[test]
fn initial_window_vectors() {
    // (space, mss, clamp, wscale_ok, tcp_rmem[2], rmem_max) → (rcv_wnd, clamp, shift)
    let v = select_initial_window(65_536, 1448, 0, true, 6_291_456, 212_992, 0);
    assert_eq!((v.rcv_wnd, v.window_clamp, v.wscale), (65_160, 65_535 << 7, 7));
    let v = select_initial_window(20_000, 1448, 20_000, true, 33_554_432, 4_194_304, 0);
    assert_eq!((v.rcv_wnd, v.window_clamp, v.wscale), (18_824, 20_000, 0));
    // a large locked buffer: SO_RCVBUF 1 MB (capped by rmem_max 4 MiB) → 2 MB, full space 1 MB;
    // the MSS rounding comes before the 16-bit limit, so the SYN offers 65535
    let v = select_initial_window(1_000_000, 1448, 1_000_000, true, 6_291_456, 4_194_304, 0);
    assert_eq!((v.rcv_wnd, v.window_clamp, v.wscale), (65_535, 1_000_000, 4));
    // without window scaling: at most 65535, no shift; initrwnd caps the offer
    let v = select_initial_window(1 << 20, 1448, 0, false, 6_291_456, 212_992, 10);
    assert_eq!((v.rcv_wnd, v.wscale), (14_480, 0));
}

/// Autotuning over a slow-start transfer: receiver RTT 100 ms from the timestamps (whole ms),
/// rounds of 10, 20, 40, 80 full segments starting at 100, 200, 300, 400 ms, 1 ms apart, each read
/// at once. `tcp_rcv_space_adjust` measures from the handshake (t = 0, space = min(rcv_ssthresh,
/// rcv_wnd, 10·advmss) = 14600): at 100 ms 1448 B were read (no growth), at 200 ms 14480 (≤ 14600),
/// at 300 ms 28960 → `tcp_rcvbuf_grow(28960)`: rcvwin = 2·28960 = 57920, grow = 57920·14360/14600 =
/// 56967, rcvwin += 2·56967 → 171854, sk_rcvbuf = 171854·256/160 = 274966 (> 131072), clamp
/// 274966·160/256 = 171853; at 400 ms 57920 → rcvwin 115840 + 2·115840·28960/28960 = 347520,
/// sk_rcvbuf 556032, clamp 347520.
#[test]
fn autotuning_grows_per_rtt_as_tcp_rcvbuf_grow() {
    let mut r = receiver(LinuxRcvConfig::default());
    open(&mut r, Time::ZERO);
    assert_eq!(r.linux().unwrap().space, 14_600);
    let rtt = Time::from_ms(100);
    let mut seq = 1u64;
    let mut bufs = vec![];
    for (k, n) in [(1u64, 10u64), (2, 20), (3, 40), (4, 80)] {
        for i in 0..n {
            let now = Time::from_ms(100 * k + i);
            r.process(&seg(seq, now, rtt), false, now, &mut RecvOutput::default());
            seq += MSS as u64;
        }
        let l = r.linux().unwrap();
        bufs.push((l.sk_rcvbuf, l.window_clamp));
    }
    assert_eq!(r.linux().unwrap().rcv_rtt_us8, 800_000);
    assert_eq!(bufs, [(131_072, 81_920), (131_072, 81_920), (274_966, 171_853), (556_032, 347_520)]);
    // locked by SO_RCVBUF: the same transfer leaves the buffer alone
    let mut r = receiver(LinuxRcvConfig { so_rcvbuf: Some(65_536), ..LinuxRcvConfig::default() });
    open(&mut r, Time::ZERO);
    let mut seq = 1u64;
    for k in 1..=4u64 {
        for i in 0..(10 << (k - 1)) {
            let now = Time::from_ms(100 * k + i);
            r.process(&seg(seq, now, rtt), false, now, &mut RecvOutput::default());
            seq += MSS as u64;
        }
    }
    assert_eq!(r.linux().unwrap().sk_rcvbuf, 131_072);
}

fn path(hosts: Option<serde_json::Value>, extra: serde_json::Value) -> serde_json::Value {
    let mut tcp = serde_json::json!({"kind": "bulk", "from": "server", "to": "client", "size": "3MB", "mss": "1448B", "iw": 3, "start": "1s"});
    for (k, v) in extra.as_object().unwrap() {
        tcp[k] = v.clone();
    }
    let mut v = serde_json::json!({
        "duration": "12s",
        "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "15ms",
                   "down_queue": {"kind": "droptail", "limit": "500pkt"}, "up_rate": "100Mbit", "up_delay": "15ms"},
        "traffic": [{"kind": "audio", "from": "server", "to": "client"}, tcp],
    });
    if let Some(h) = hosts {
        v["hosts"] = serde_json::json!({"client": {"rwnd": h}});
    }
    v
}

/// The testbed's moderation on the path of the testbed notes (4 Mbit/s, 20 ms each way, 500
/// packets): a 20 kB receive-buffer budget alone gives the bulk flow Linux's 23 168 B (16 segments,
/// 23 808 B on the wire = 47.6 ms at 4 Mbit/s, just above the 40 ms base RTT), so the link stays
/// busy (goodput ≥ 95 % of the 3.89 Mbit/s of payload it carries) while the queue holds at most
/// the ~4 kB beyond the path's own 20 kB: audio OWD stays within 10 ms of its 20 ms base. The
/// window budget (13 whole segments, 18 824 B < one BDP; with Linux 6.18's window scale 10 the
/// offer is aligned up to 1 KiB units) keeps the link less busy: 3.65 against 3.74 Mbit/s.
#[test]
fn so_rcvbuf_budget_keeps_the_link_busy_and_the_queue_short() {
    let run = |h: serde_json::Value| {
        let t = jitterlab_sim::scenario::run(&path(Some(h), serde_json::json!({})), 1).unwrap();
        let f = &t.tcp_flows;
        let secs = (f.end_ns[0] - f.syn_ns[0]) as f64 * 1e-9;
        let gp = 3e6 * 8.0 / secs / 1e6;
        let m = &t.media;
        let mut owd: Vec<i64> = (0..m.seq.len())
            .filter(|&i| m.recv_ns[i] >= 0 && m.send_ns[i] > f.syn_ns[0] && m.send_ns[i] < f.end_ns[0])
            .map(|i| m.recv_ns[i] - m.send_ns[i])
            .collect();
        owd.sort();
        (gp, owd[owd.len() / 2] as f64 * 1e-6, owd[owd.len() * 99 / 100] as f64 * 1e-6)
    };
    let (gp, p50, p99) = run(serde_json::json!({"budget": "20kB", "mechanism": "so_rcvbuf"}));
    assert!(gp > 0.95 * 4.0 * 1448.0 / 1488.0, "goodput {gp}");
    assert!(p50 > 20.0 && p99 < 30.0, "OWD median {p50} ms, p99 {p99} ms");
    let (gp_w, _, _) = run(serde_json::json!({"budget": "20kB"}));
    assert!(gp_w < 0.98 * gp, "window budget {gp_w} vs buffer budget {gp}");
}

/// Scenario keys: errors name the key.
#[test]
fn keys() {
    let err = |h: Option<serde_json::Value>, x: serde_json::Value| jitterlab_sim::scenario::run(&path(h, x), 1).unwrap_err().to_string();
    assert!(err(None, serde_json::json!({"so_rcvbuf": "0B"})).contains("so_rcvbuf: must be > 0"));
    assert!(err(None, serde_json::json!({"linux_rcvbuf": false, "tcp_rmem_max": "1MB"})).contains("tcp_rmem_max: only with Linux's receive buffer"));
    assert!(err(None, serde_json::json!({"rcvbuf": "64kB", "tcp_adv_win_scale": 2})).contains("tcp_adv_win_scale: only with Linux's receive buffer"));
    assert!(err(None, serde_json::json!({"tcp_adv_win_scale": 7})).contains("tcp_adv_win_scale: must be 1..=4"));
    assert!(err(None, serde_json::json!({"linux_rcvbuf": true, "rcvbuf": "64kB"})).contains("rcvbuf: give either rcvbuf"));
    assert!(err(Some(serde_json::json!({"budget": "20kB", "mechanism": "socket"})), serde_json::json!({})).contains("hosts.client.rwnd.mechanism"));
}

/// With the timestamps option (12 B) an ACK has room for 3 SACK blocks of 8 B (+ 4 B of kind,
/// length and padding) in TCP's 40 option bytes, as Linux's `tcp_established_options` computes;
/// without it 4 (RFC 2018 §3).
#[test]
fn sack_blocks_fit_beside_timestamps() {
    for (ts, blocks) in [(true, 3u8), (false, 4)] {
        let mut r = Receiver::new(TcpConfig { mss: 1460, timestamps: ts, ..TcpConfig::default() }, 0, None);
        let mut out = RecvOutput::default();
        let t = |ms: u64| Time::from_ms(ms);
        let opt = |now: Time| if ts { Some((ts_of(now), 1)) } else { None };
        r.process(&TcpHeader { seq: 0, flags: F::SYN, wscale: Some(7), ts: opt(t(0)), ..Default::default() }, false, t(0), &mut out);
        r.process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, ts: opt(t(1)), ..Default::default() }, false, t(1), &mut out);
        // five islands of out-of-order data
        for k in 0..5u64 {
            let mut out = RecvOutput::default();
            r.process(&TcpHeader { seq: 1 + (2 * k + 1) * 1000, ack: 1, flags: F::ACK, len: 1000, ts: opt(t(2 + k)), ..Default::default() }, false, t(2 + k), &mut out);
            let a = out.segs.last().unwrap();
            assert_eq!(a.nsack, ((k + 1) as u8).min(blocks), "ts {ts}, island {k}");
        }
    }
}

fn ts_of(t: Time) -> u32 { jitterlab_sim::tcp::sender::tsval(t) }
