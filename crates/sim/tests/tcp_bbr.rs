//! The congestion-control interface (rate samples as Linux's tcp_rate.c, the registry) and BBR v1
//! as Linux's tcp_bbr.c, in virtual time with numbers worked by hand from the kernel's fixed-point
//! arithmetic (bandwidth in packets/µs << 24, gains in 1/256).
//!
//! Over 600 lines: one file per algorithm, each test a case worked by hand from tcp_bbr.c.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;
use jitterlab_sim::tcp::cc::bbr::{self, Bbr, BbrConfig, Mode, BBR_UNIT, CWND_GAIN, DRAIN_GAIN, HIGH_GAIN, PACING_GAIN};
use jitterlab_sim::tcp::cc::{self, CaState, CcState, CongestionControl, RateSample};
use jitterlab_sim::tcp::sender::{Output, Sender, State};
use jitterlab_sim::tcp::TcpConfig;
use jitterlab_sim::Time;
use serde_json::json;

const MSS: u64 = 1000;
const RTT: Time = Time::from_ms(100);

// ---------------------------------------------------------------------------------------------
// Registry

#[test]
fn registry_refuses_unknown_names_listing_the_known_ones() {
    let cfg = TcpConfig::default();
    let e = cc::build("vegas", &cfg).err().expect("vegas is not registered");
    assert_eq!(e, "cc: unknown congestion control \"vegas\"; known: reno, cubic, bbr, dctcp");
    for name in ["reno", "cubic", "bbr", "dctcp"] {
        assert_eq!(cc::build(name, &cfg).unwrap().name(), name);
    }
    assert!(Sender::try_new(TcpConfig { cc: "vegas".into(), ..cfg }, None).is_err());
    // Through a scenario: the key's path and the list.
    let v = path_scenario("vegas", "1s", "100kB");
    let Err(e) = scenario::run(&v, 1) else { panic!("refused") };
    let e = e.to_string();
    assert!(e.contains("cc") && e.contains("reno, cubic, bbr, dctcp") && e.contains("vegas"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Rate samples (tcp_rate.c) through the sender

/// A controller with a fixed window and a fixed pacing rate, to look at the sender's samples.
struct ConstPace {
    rate: f64,
}
impl CongestionControl for ConstPace {
    fn name(&self) -> &'static str { "const" }
    fn on_congestion_event(&mut self, _st: &mut CcState) {}
    fn on_rto(&mut self, _st: &mut CcState, _first: bool) {}
    fn owns_cwnd(&self) -> bool { true }
    fn needs_pacing(&self) -> bool { true }
    fn pacing_rate(&self, _st: &CcState) -> Option<f64> { Some(self.rate) }
}

struct Harness {
    s: Sender,
    now: Time,
    out: Output,
    /// (arrival time of its ACK, end sequence) of segments in flight.
    pending: Vec<(Time, u64)>,
}

impl Harness {
    fn new(cfg: TcpConfig, size: Option<u64>, cc: cc::Cc) -> Harness {
        let mut h = Harness { s: Sender::with_cc(cfg, size, cc), now: Time::ZERO, out: Output::default(), pending: vec![] };
        h.s.connect(h.now, &mut h.out);
        h.out.segs.clear();
        h.now = RTT;
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd: 65_535, wscale: Some(7), ..Default::default() };
        h.s.process(&synack, h.now, &mut h.out);
        assert_eq!(h.s.state, State::Established);
        h
    }
    /// Segments sent since the last call, as (seq, payload).
    fn take(&mut self) -> Vec<(u64, u32)> { self.out.segs.drain(..).map(|g| (g.hdr.seq, g.hdr.len)).collect() }
    fn ack(&mut self, upto: u64, sack: Option<(u64, u64)>) {
        let mut h = TcpHeader { ack: upto, flags: F::ACK, wnd: 65_535, ..Default::default() };
        if let Some(b) = sack {
            h.sack[0] = b;
            h.nsack = 1;
        }
        self.s.process(&h, self.now, &mut self.out);
    }
}

/// No TCP Small Queues: the harness plays the network and reports no TX completions.
fn harness_cfg() -> TcpConfig { TcpConfig { mss: MSS as u32, iw: 100, delack: None, tsq: false, ..TcpConfig::default() } }

/// tcp_rate.c on a paced flight: segments of 1000 B payload (1040 B on the wire) paced at
/// 1.04 MB/s leave 1 ms apart; the path returns each ACK 50 ms after its segment. Segment k ≥ 50
/// was sent when 50 segments were outstanding, with `delivered` = k − 49 segments and the newest
/// delivery (of segment k − 50) at the same instant, so its ACK yields delivered = 50 segments
/// over max(send phase 50 ms, ACK phase 50 ms): 1,000,000 B/s, the pacing rate in payload bytes.
/// The first flight starts from idle: its samples span the RTT too, (k+1) segments over k+50 ms.
#[test]
fn delivery_rate_of_a_paced_flight_is_the_pacing_rate() {
    let owd = Time::from_ms(50);
    let mut h = Harness::new(harness_cfg(), None, Box::new(ConstPace { rate: 1_040_000.0 }));
    let mut samples = vec![];
    let end = Time::from_ms(400);
    while h.now <= end {
        // ACKs due now, then the pacing timer.
        while let Some(&(t, upto)) = h.pending.first() {
            if t > h.now {
                break;
            }
            h.pending.remove(0);
            h.ack(upto, None);
            samples.push(h.s.last_rate_sample().unwrap());
        }
        h.s.on_pace(h.now, &mut h.out);
        for (seq, len) in h.take() {
            h.pending.push((h.now + owd, seq + len as u64));
        }
        h.now += Time::from_ms(1);
    }
    assert!(samples.len() > 200);
    assert_eq!(h.s.cc_state().app_limited, 0, "an unlimited sender is never app-limited");
    for (k, rs) in samples.iter().enumerate() {
        let k = k as u64;
        assert_eq!(rs.acked_sacked, MSS);
        assert!(!rs.is_app_limited);
        assert_eq!(rs.rtt, Some(owd));
        if k < 50 {
            assert_eq!(rs.delivered, Some((k + 1) * MSS), "sample {k}");
            assert_eq!(rs.interval, Some(Time::from_ms(k + 50)), "sample {k}");
        } else {
            assert_eq!(rs.delivered, Some(50 * MSS), "sample {k}");
            assert_eq!(rs.interval, Some(Time::from_ms(50)), "sample {k}");
            assert_eq!(rs.rate(), Some(1_000_000.0));
        }
    }
}

/// The same flight when the path's delay drops by 10 ms from segment 60 on (ACK compression: the
/// ACKs of segments 60.. arrive 10 ms sooner than their predecessors' would). A sample whose
/// newest segment P was sent when segment Q's ACK had just arrived spans P − Q segments sent in
/// P − Q ms, but its ACK phase is 10 ms shorter; tcp_rate.c takes the longer (send) phase, so no
/// sample exceeds the 1,000,000 B/s actually paced, where the ACK phase alone would claim up to
/// 50/40 of it.
#[test]
fn compressed_acks_do_not_inflate_the_rate() {
    let mut h = Harness::new(harness_cfg(), None, Box::new(ConstPace { rate: 1_040_000.0 }));
    let mut samples = vec![];
    while h.now <= Time::from_ms(400) {
        while let Some(&(t, upto)) = h.pending.first() {
            if t > h.now {
                break;
            }
            h.pending.remove(0);
            h.ack(upto, None);
            samples.push(h.s.last_rate_sample().unwrap());
        }
        h.s.on_pace(h.now, &mut h.out);
        for (seq, len) in h.take() {
            let owd = if (seq - 1) / MSS < 60 { Time::from_ms(60) } else { Time::from_ms(50) };
            h.pending.push((h.now + owd, seq + len as u64));
        }
        h.pending.sort();
        h.now += Time::from_ms(1);
    }
    let valid: Vec<(u64, Time)> = samples.iter().filter_map(|rs| Some((rs.delivered?, rs.interval?))).collect();
    assert!(valid.len() > 200);
    // bytes/interval ≤ 1e6 B/s  ⇔  bytes·1000 ≤ interval in ns.
    for &(d, i) in &valid {
        assert!(d * 1000 <= i.ns(), "{d} B in {i}");
    }
    assert!(valid.iter().filter(|&&(d, i)| d * 1000 == i.ns()).count() > 100);
}

/// tcp_rate_check_app_limited: a 10-segment transfer runs out of data with cwnd to spare, so
/// `app_limited` = delivered + in flight = 0 + 10,001 B (ten segments and the FIN). Segment 9 is
/// lost and the FIN SACKed (the mark is then 9,001 delivered + 1,000 in flight, the SACKed FIN
/// not counting); segments 0–8 were sent before the marking, so their samples are not
/// app-limited, while the RTO retransmission of 9 is sent inside the app-limited stretch and its
/// sample is. tcp_rate_gen clears the mark only once delivered is strictly beyond it.
#[test]
fn app_limited_marking_as_tcp_rate() {
    let mut h = Harness::new(harness_cfg(), Some(10 * MSS), Box::new(ConstPace { rate: 1e12 }));
    let mut sent = vec![];
    for _ in 0..20 {
        h.s.on_pace(h.now, &mut h.out);
        sent.extend(h.take());
        h.now += Time::from_us(10);
    }
    assert_eq!(sent.len(), 11, "ten segments and the FIN");
    assert_eq!(h.s.cc_state().app_limited, 10 * MSS + 1);
    h.now = RTT + RTT;
    for k in 1..=9 {
        h.ack(1 + k * MSS, None);
        let rs = h.s.last_rate_sample().unwrap();
        assert!(!rs.is_app_limited, "segment {k} was sent before the marking");
        assert_eq!(h.s.cc_state().app_limited, 10 * MSS + 1);
    }
    // The FIN is SACKed (a duplicate ACK for segment 9).
    h.ack(1 + 9 * MSS, Some((1 + 10 * MSS, 2 + 10 * MSS)));
    assert_eq!(h.s.last_rate_sample().unwrap().acked_sacked, 1);
    assert_eq!(h.s.cc_state().app_limited, 9 * MSS + 1 + MSS);
    h.now += Time::from_secs(1);
    h.s.on_rto(h.now, &mut h.out);
    assert_eq!(h.take(), vec![(1 + 9 * MSS, MSS as u32)]);
    h.now += RTT;
    h.ack(2 + 10 * MSS, None);
    let rs = h.s.last_rate_sample().unwrap();
    assert!(rs.is_app_limited, "retransmission sent while app-limited");
    assert_eq!(rs.rtt, None, "Karn: no RTT from a retransmission");
    assert_eq!(h.s.cc_state().delivered, 10 * MSS + 1);
    assert_eq!(h.s.cc_state().app_limited, 10 * MSS + 1, "delivered equals the mark: not after it");
}

/// The sender paces BBR as Linux does: IW10 leaves at once (the first nine data segments are
/// unpaced and the tenth sets the first gap), then GSO skbs of two segments (tcp_tso_segs with
/// bbr_min_tso_segs: 285,662 B/s >> 10 = 278 B is less than a segment, and the rate is above
/// 1.2 Mbit/s, so 2) leave back to back, 2000 B / 285,662 B/s = 7.001281 ms apart — BBR's initial
/// rate (see `initial_pacing_rate_from_srtt`), which the first ACK (10 packets in 100 ms: bw 1677
/// again) leaves as it is while cwnd doubles to 20: ten skbs fill it. The first skb after that ACK
/// leaves ~93 ms after the pacing clock allowed it, and tcp_update_skb_after_send takes that
/// lateness off its gap, at most half ("OS jitter" credit): 7,001,281 − 7,001,281/2 = 3,500,641 ns;
/// the next ones leave on time and get the whole gap.
#[test]
fn sender_paces_bbr_at_its_rate() {
    let mut h = Harness::new(TcpConfig { iw: 10, cc: "bbr".into(), ..harness_cfg() }, None, cc::build("bbr", &TcpConfig::default()).unwrap());
    assert_eq!(h.take().len(), 10, "IW10 in one burst");
    assert_eq!(h.s.pacing_rate(), Some(285_662.0));
    h.now = RTT + RTT;
    h.ack(1 + 10 * MSS, None);
    assert_eq!(h.s.cwnd(), 20 * MSS);
    assert_eq!(h.s.pacing_rate(), Some(285_662.0));
    let gap = Time::from_secs_f64(2000.0 / 285_662.0);
    assert_eq!(gap, Time::from_ns(7_001_281));
    let mut times = vec![];
    for _ in 0..10 {
        let sent = h.take();
        assert_eq!(sent.len(), 2, "one two-segment skb per pacing slot at {}", h.now);
        assert_eq!(sent[1].0, sent[0].0 + MSS, "in sequence");
        times.push(h.now);
        match h.out.pace {
            jitterlab_sim::tcp::TimerCmd::Set(t) => h.now = t,
            _ => break,
        }
        h.s.on_pace(h.now, &mut h.out);
    }
    let gaps: Vec<Time> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps[0], Time::from_ns(7_001_281 - 7_001_281 / 2));
    assert_eq!(gaps[1..], vec![gap; 8]);
    assert!(h.take().is_empty(), "cwnd (20) is full");
}

/// tcp_tso_segs = tcp_tso_autosize(pacing_rate >> 10 bytes, plus GSO_MAX_SIZE >> (min_rtt_us >> 9)
/// on short paths, at most 65,536 B) in MSS units, at least bbr_min_tso_segs: 2 at 285,662 B/s
/// (≥ 150,000 B/s = 1.2 Mbit/s), 1 at 28,446 B/s (10 packets per second: bw 167, the initial
/// rate's arithmetic). With a 2 ms min RTT (2000 >> 9 = 3) the skb grows by 65536 >> 3 = 8192 B:
/// (278 + 8192) / 1000 = 8 segments; at 1 ms, 32,768 B more: 33; above 8.7 ms (>> 9 ≥ 17)
/// nothing is added.
#[test]
fn gso_skb_size_as_tcp_tso_autosize() {
    let m = Model::new(1);
    let segs = |rtt_us: u64| m.b.gso_segs(MSS, Some(Time::from_us(rtt_us)));
    assert_eq!(segs(100_000), 2);
    assert_eq!(segs(2_000), 8);
    assert_eq!(segs(1_000), 33);
    assert_eq!(segs(10_000), 2);
    assert_eq!(m.b.tso_segs(&m.st), 2);
    let mut st = CcState::new(MSS, 10 * MSS);
    st.srtt = Some(Time::from_secs(1));
    let mut b = Bbr::new(BbrConfig { seed: 1 });
    b.init(&mut st);
    assert_eq!(b.pacing_rate(&st), Some(28_446.0));
    assert_eq!(b.gso_segs(MSS, Some(Time::from_secs(1))), 1);
}

/// bbr_min_tso_segs' threshold, bbr_min_tso_rate = 1.2 Mbit/s: 1 segment per skb while the
/// pacing rate is below 150,000 B/s, 2 from there. The initial rate (10 packets of 1000 B per
/// SRTT × 2.885, 1 % margin: 28,446 B/s at 1 s) is ~142,000 B/s at an SRTT of 200 ms and
/// ~158,000 B/s at 180 ms, either side of it; both far below one 1000-byte segment per 1/1024 s.
#[test]
fn min_tso_segs_switch_at_1200_kbit() {
    let at = |srtt_ms: u64| {
        let mut st = CcState::new(MSS, 10 * MSS);
        st.srtt = Some(Time::from_ms(srtt_ms));
        let mut b = Bbr::new(BbrConfig { seed: 1 });
        b.init(&mut st);
        (b.pacing_rate(&st).unwrap(), b.gso_segs(MSS, Some(Time::from_secs(1))))
    };
    let (r200, s200) = at(200);
    let (r180, s180) = at(180);
    assert!((140_000.0..150_000.0).contains(&r200) && (150_000.0..160_000.0).contains(&r180), "{r200} {r180}");
    assert_eq!((s200, s180), (1, 2));
}

/// bbr_tso_segs_goal: min(pacing_rate >> 10, GSO_MAX_SIZE − 1 − MAX_TCP_HEADER = 65,215 B) per
/// skb, in segments, at most 127: at the multi-Gbit/s initial rate of a 10 µs SRTT that is
/// 65,215 / 600 = 108 segments of 600 B (65,535 B would give 109) and 65 of 1000 B.
#[test]
fn tso_goal_caps_at_gso_max_less_headers() {
    let mut st = CcState::new(MSS, 10 * MSS);
    st.srtt = Some(Time::from_us(10));
    let mut b = Bbr::new(BbrConfig { seed: 1 });
    b.init(&mut st);
    assert!(b.pacing_rate(&st).unwrap() > 1e9, "{:?}", b.pacing_rate(&st));
    assert_eq!((b.tso_segs_goal(600), b.tso_segs_goal(1000)), (108, 65));
}

/// bbr_bdp before any RTT sample: "no valid RTT samples yet? Cap at the default of TCP_INIT_CWND"
/// (10 packets, RFC 6928), whatever the bandwidth and gain.
#[test]
fn bdp_without_rtt_is_the_initial_window() {
    let mut st = CcState::new(MSS, 10 * MSS);
    let mut b = Bbr::new(BbrConfig { seed: 1 });
    b.init(&mut st);
    assert_eq!(b.min_rtt(), None);
    assert_eq!((b.bdp(1 << 30, CWND_GAIN), b.bdp(1, BBR_UNIT)), (10, 10));
}

/// bbr_update_bw's max filter (lib/minmax.c, 10 rounds): a round at 120 packets per 100 ms
/// (20132) is the estimate for that round and the next 10, whatever lower samples follow, and is
/// gone in the 11th (then the 99-packet rounds' 16609).
#[test]
fn max_bw_filter_forgets_after_ten_rounds() {
    let mut m = Model::to_probe_bw(3);
    m.round(120, 106);
    assert_eq!(m.b.max_bw(), 20132);
    for k in 1..=10 {
        m.round(99, 106);
        assert_eq!(m.b.max_bw(), 20132, "round {k} after");
    }
    m.round(99, 106);
    assert_eq!(m.b.max_bw(), 16609);
}

// ---------------------------------------------------------------------------------------------
// BBR driven by hand-made rate samples

/// BBR with MSS 1000 B, SRTT = min RTT = 100 ms, cwnd 10 packets; each [`Model::round`] is one
/// ACK for `n` packets sent a round earlier (so every call starts a round), delivered over 100 ms.
struct Model {
    b: Bbr,
    st: CcState,
    /// Mark the samples app-limited.
    app_limited: bool,
}

impl Model {
    fn new(seed: u64) -> Model {
        let mut st = CcState::new(MSS, 10 * MSS);
        st.srtt = Some(RTT);
        st.min_rtt = Some(RTT);
        let mut b = Bbr::new(BbrConfig { seed });
        b.init(&mut st);
        Model { b, st, app_limited: false }
    }
    fn round(&mut self, n: u64, pipe: u64) { self.ack(n, pipe, RTT, RTT) }
    /// An ACK `dt` after the last one delivering `n` packets at n per 100 ms, leaving `pipe`
    /// packets in flight (`pipe + n` before it), with RTT sample `rtt`.
    fn ack(&mut self, n: u64, pipe: u64, dt: Time, rtt: Time) {
        let st = &mut self.st;
        st.now += dt;
        st.delivered_time = st.now;
        let prior = st.delivered;
        st.delivered += n * MSS;
        st.pipe = pipe * MSS;
        st.next_send = st.now;
        st.ca = CaState::Open;
        let rs = RateSample {
            prior_delivered: prior,
            delivered: Some(n * MSS),
            interval: Some(RTT),
            acked_sacked: n * MSS,
            newly_acked: n * MSS,
            rtt: Some(rtt),
            prior_in_flight: (pipe + n) * MSS,
            prior_ca: Some(CaState::Open),
            is_app_limited: self.app_limited,
            ..Default::default()
        };
        self.b.on_ack(st, &rs);
    }
    fn cwnd(&self) -> u64 { self.st.cwnd / MSS }
    fn pacing(&self) -> f64 { self.b.pacing_rate(&self.st).unwrap() }
    /// STARTUP at 10, 20, 40, 80 packets per round, then 80, 90, 99: the pipe is full.
    fn to_drain(seed: u64) -> Model {
        let mut m = Model::new(seed);
        for n in [10, 20, 40, 80, 80, 90] {
            m.round(n, 2 * n);
        }
        m.round(99, 300);
        assert_eq!(m.b.mode(), Mode::Drain);
        m
    }
    fn to_probe_bw(seed: u64) -> Model {
        let mut m = Model::to_drain(seed);
        m.round(99, 106);
        assert_eq!(m.b.mode(), Mode::ProbeBw);
        m
    }
}

/// The gains of tcp_bbr.c: 2/ln 2 → 256·2885/1000 + 1 = 739, its inverse 256000/2885 = 88,
/// cwnd gain 512, cycle [320, 192, 256 ×6].
#[test]
fn gains_are_linux_constants() {
    assert_eq!(HIGH_GAIN, 739);
    assert_eq!(DRAIN_GAIN, 88);
    assert_eq!(CWND_GAIN, 512);
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(BBR_UNIT, 256);
    assert_eq!((bbr::BW_RTTS, bbr::CWND_MIN_TARGET, bbr::FULL_BW_CNT, bbr::CYCLE_RAND), (10, 4, 3, 7));
    assert_eq!((bbr::MIN_RTT_WIN, bbr::PROBE_RTT_MODE), (Time::from_secs(10), Time::from_ms(200)));
}

/// bbr_init_pacing_rate_from_rtt: bw = 10 packets·2^24 / 100,000 µs = 1677 (floor); rate =
/// ((1677·1000·739) >> 8)·990,000 >> 24 = 4,841,027·990,000 / 2^24 = 285,662 B/s — 2.89 × 10
/// packets per 100 ms less 1 % (and the fixed point's floors).
#[test]
fn initial_pacing_rate_from_srtt() {
    let m = Model::new(1);
    assert_eq!(m.b.mode(), Mode::Startup);
    assert_eq!(m.pacing(), 285_662.0);
    assert_eq!(Bbr::rate_bytes_per_sec(MSS, 1677, HIGH_GAIN), 285_662);
}

/// STARTUP doubles per round: bandwidth 10, 20, 40, 80 packets per 100 ms gives the max filter
/// floor(n·2^24/10^5) = 1677, 3355, 6710, 13421 and pacing 2.89·0.99·bw; cwnd grows by what each
/// ACK delivers while below its target (slow start), 10 → 20 → 40 → 80 → 160.
#[test]
fn startup_doubles_per_round() {
    let mut m = Model::new(1);
    let bws = [1677, 3355, 6710, 13421];
    let rates = [285_662.0, 571_494.0, 1_142_989.0, 2_286_149.0];
    let cwnds = [20, 40, 80, 160];
    for (i, n) in [10u64, 20, 40, 80].into_iter().enumerate() {
        m.round(n, 2 * n);
        assert_eq!(m.b.mode(), Mode::Startup);
        assert_eq!(m.b.max_bw(), bws[i], "round {i}");
        assert_eq!(m.pacing(), rates[i], "round {i}");
        assert_eq!(m.cwnd(), cwnds[i], "round {i}");
        assert_eq!(m.b.full_bw_cnt(), 0);
    }
    assert_eq!(m.b.rounds(), 4);
}

/// bbr_check_full_bw_reached: after full_bw = 13421 (80 packets/round) the threshold is
/// 13421·320 >> 8 = 16776. Rounds of 80, 90 (15099) and 99 (16609) packets fall short three times
/// running: the pipe is full and BBR enters DRAIN, with ssthresh = bbr_inflight(bw, 1) =
/// ceil(16609·10^5 / 2^24) = 99 + 3·2 (two-segment TSO goal: 2.57 MB/s >> 10 = 2511 B < 2 MSS)
/// = 105, rounded up to even: 106 packets.
#[test]
fn startup_exits_after_three_rounds_without_a_quarter_more() {
    let mut m = Model::new(1);
    for n in [10, 20, 40, 80] {
        m.round(n, 2 * n);
    }
    m.round(80, 160);
    assert_eq!((m.b.mode(), m.b.full_bw_cnt()), (Mode::Startup, 1));
    m.round(90, 180);
    assert_eq!((m.b.mode(), m.b.full_bw_cnt()), (Mode::Startup, 2));
    m.round(99, 300);
    assert!(m.b.full_bw_reached());
    assert_eq!(m.b.mode(), Mode::Drain);
    assert_eq!(m.st.ssthresh, 106 * MSS);

    // 100 packets (16777 ≥ 16776) is 25 % growth: the count starts over.
    let mut m = Model::new(1);
    for n in [10, 20, 40, 80, 80, 90, 100] {
        m.round(n, 2 * n);
    }
    assert_eq!((m.b.mode(), m.b.full_bw_cnt()), (Mode::Startup, 0));
}

/// DRAIN paces at 88/256 of bw (rate(16609, 88) = 336,900 B/s) with cwnd gain 739 and ends
/// when what is in the network is at most bbr_inflight(bw, 1) = 106 packets.
#[test]
fn drain_ends_at_the_bdp() {
    let mut m = Model::to_drain(1);
    assert_eq!((m.b.pacing_gain(), m.b.cwnd_gain()), (DRAIN_GAIN, HIGH_GAIN));
    assert_eq!(m.pacing(), 336_900.0);
    m.round(99, 107);
    assert_eq!(m.b.mode(), Mode::Drain);
    m.round(99, 106);
    assert_eq!(m.b.mode(), Mode::ProbeBw);
    assert_eq!(m.b.cwnd_gain(), CWND_GAIN);
}

/// bbr_reset_probe_bw_mode: the cycle starts at 7 − rand(7) and advances once, so the first
/// phase is any of 2..7 or 0 — never 1 (the 3/4 drain) — and the draws reach all seven.
#[test]
fn gain_cycle_starts_at_a_random_phase_but_not_the_drain() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        seen.insert(Model::to_probe_bw(seed).b.cycle_idx());
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![0, 2, 3, 4, 5, 6, 7]);
}

/// bbr_is_next_cycle_phase: with every ACK more than min RTT after the phase began and in flight
/// above the 5/4 target, the phases follow PACING_GAIN in order, wrapping after 7; pacing is
/// rate(16609, gain): 1,225,092 B/s at 5/4, 735,055 at 3/4, 980,073 at 1.
#[test]
fn gain_cycle_order_and_pacing() {
    let mut m = Model::to_probe_bw(3);
    let i0 = m.b.cycle_idx();
    let rate = |g: u32| match g {
        320 => 1_225_092.0,
        192 => 735_055.0,
        256 => 980_073.0,
        _ => unreachable!(),
    };
    for k in 1..=16 {
        m.ack(99, 106, Time::from_ms(101), RTT);
        let idx = (i0 + k) % 8;
        assert_eq!(m.b.cycle_idx(), idx);
        assert_eq!(m.b.pacing_gain(), PACING_GAIN[idx]);
        assert_eq!(m.pacing(), rate(PACING_GAIN[idx]));
    }
}

/// The 5/4 phase lasts until in flight reaches bbr_inflight(bw, 5/4) = ceil(123.7) = 124 + 6 →
/// 130, + 2 in phase 0 = 132 (with the TSO goal of 2 counted at the EDT); the 3/4 phase ends
/// early once in flight is at most bbr_inflight(bw, 1) = 106.
#[test]
fn probe_and_drain_phases_end_on_inflight() {
    let mut m = Model::to_probe_bw(3);
    while m.b.cycle_idx() != 0 {
        m.ack(99, 106, Time::from_ms(101), RTT);
    }
    // Full length but in flight 29 + 99 + 2 = 130 < 132: keep probing.
    m.ack(99, 29, Time::from_ms(101), RTT);
    assert_eq!(m.b.cycle_idx(), 0);
    // 31 + 99 + 2 = 132: next phase.
    m.ack(99, 31, Time::from_ms(101), RTT);
    assert_eq!(m.b.cycle_idx(), 1);
    // 10 ms later (not full length), in flight 8 + 99 = 107 > 106: keep draining; 106: done.
    m.ack(99, 8, Time::from_ms(10), RTT);
    assert_eq!(m.b.cycle_idx(), 1);
    m.ack(99, 7, Time::from_ms(10), RTT);
    assert_eq!(m.b.cycle_idx(), 2);
}

/// bbr_set_cwnd in PROBE_BW: min(cwnd + acked, target) with target = bbr_bdp(bw, 2) = ceil(197.99)
/// = 198 packets + the ACK-aggregation allowance + 3·2 (quantization), rounded up to even, + 2 in
/// phase 0. Each model ACK delivers a whole round at once, which bbr_update_ack_aggregation reads
/// as 100 packets more than expected; the allowance is capped at bw·100 ms = 98 packets.
#[test]
fn cwnd_is_gain_times_bdp_plus_allowances() {
    let mut m = Model::to_probe_bw(3);
    for _ in 0..20 {
        m.ack(99, 106, Time::from_ms(101), RTT);
        let aggr = m.b.ack_aggregation_cwnd();
        assert_eq!(aggr, 98);
        let phase0 = if m.b.cycle_idx() == 0 { 2 } else { 0 };
        assert_eq!(m.cwnd(), 198 + 98 + 6 + phase0);
    }
    assert_eq!(m.b.bdp(m.b.max_bw(), CWND_GAIN), 198);
}

/// bbr_update_ack_aggregation keeps the largest extra-acked of the current and the previous
/// window of `bbr_extra_acked_win_rtts` = 5 rounds, flipping windows every 5th round start. After
/// the last aggregated round R (98 packets allowed, capped at bw·100 ms), ACKs of 1 packet a round
/// apart show 1 extra packet each (the epoch restarts: 1 ≤ the 98 expected). R's window ends at the
/// next flip (1..=5 rounds later) and the window before it is cleared then, R's own 5 rounds after:
/// the allowance holds for the first 5 rounds after R and is down to 1 by the 10th (while the
/// bandwidth filter still holds, ten rounds, see `max_bw_filter_forgets_after_ten_rounds`).
#[test]
fn ack_aggregation_window_is_five_rounds() {
    let mut m = Model::to_probe_bw(3);
    for _ in 0..7 {
        m.ack(99, 106, Time::from_ms(101), RTT);
    }
    assert_eq!(m.b.ack_aggregation_cwnd(), 98);
    let bw = m.b.max_bw();
    let mut seen = vec![];
    for _ in 1..=10 {
        m.ack(1, 106, RTT, RTT);
        seen.push(m.b.ack_aggregation_cwnd());
    }
    assert_eq!(m.b.max_bw(), bw, "the bandwidth (and so the cap) is unchanged for ten rounds");
    assert_eq!(seen[..5], [98; 5], "{seen:?}");
    assert_eq!(seen[9], 1, "{seen:?}");
    // It drops once, at the flip that clears R's window.
    let k = seen.iter().position(|&a| a == 1).unwrap();
    assert!(seen[k..].iter().all(|&a| a == 1) && (5..10).contains(&k), "{seen:?}");
}

/// bbr_update_min_rtt: with no RTT below 100 ms since init (t = 0), PROBE_RTT starts on the first
/// ACK after 10 s, holds cwnd at 4 packets, and — once in flight is down to 4 — lasts 200 ms and a
/// round before restoring the saved cwnd and going back to PROBE_BW.
#[test]
fn probe_rtt_after_ten_seconds_without_a_new_min() {
    let mut m = Model::to_probe_bw(3);
    let mut last_before = Time::ZERO;
    while m.b.mode() != Mode::ProbeRtt {
        last_before = m.st.now;
        m.ack(99, 106, RTT, RTT);
    }
    assert!(last_before <= Time::from_secs(10) && m.st.now > Time::from_secs(10), "{last_before} {}", m.st.now);
    assert_eq!(m.cwnd(), 4);
    assert_eq!((m.b.pacing_gain(), m.b.cwnd_gain()), (BBR_UNIT, BBR_UNIT));
    assert_ne!(m.st.app_limited, 0, "PROBE_RTT marks its samples app-limited");
    // In flight reaches 4 packets: 200 ms from now.
    m.ack(4, 4, RTT, RTT);
    let t_low = m.st.now;
    m.ack(4, 4, RTT, RTT);
    assert_eq!(m.b.mode(), Mode::ProbeRtt);
    m.ack(4, 4, RTT, RTT);
    assert_eq!(m.st.now, t_low + Time::from_ms(200));
    assert_eq!(m.b.mode(), Mode::ProbeRtt, "not after exactly 200 ms");
    m.ack(4, 4, RTT, RTT);
    assert_eq!(m.b.mode(), Mode::ProbeBw);
    assert!(m.cwnd() >= 300, "saved cwnd restored, got {}", m.cwnd());

    // A new minimum at 5 s postpones it to 15 s.
    let mut m = Model::to_probe_bw(3);
    while m.st.now < Time::from_secs(5) {
        m.ack(99, 106, RTT, RTT);
    }
    m.ack(99, 106, RTT, Time::from_ms(99));
    let stamp = m.st.now;
    while m.st.now <= stamp + Time::from_secs(10) {
        assert_ne!(m.b.mode(), Mode::ProbeRtt);
        m.ack(99, 106, RTT, RTT);
    }
    assert_eq!(m.b.mode(), Mode::ProbeRtt);
}

/// bbr_update_bw takes an app-limited sample only when it is at least the current max: eleven
/// app-limited rounds at 50 packets (8388) leave the estimate at 16609 (with them, the filter
/// would have fallen to 8388 after ten rounds), while one at 120 packets raises it to 20132.
#[test]
fn app_limited_samples_only_raise_the_max() {
    let mut m = Model::to_probe_bw(3);
    m.app_limited = true;
    for _ in 0..11 {
        m.round(50, 106);
    }
    assert_eq!(m.b.max_bw(), 16609);
    m.round(120, 106);
    assert_eq!(m.b.max_bw(), 20132);
}

// ---------------------------------------------------------------------------------------------
// BBR in the simulator

fn path_scenario(cc: &str, duration: &str, size: &str) -> serde_json::Value {
    json!({
        "name": "bbr",
        "duration": duration,
        "access": {
            "core_rate": "100Mbit", "core_delay": "5ms",
            "down_rate": "4Mbit", "down_delay": "10ms", "down_queue": {"kind": "droptail", "limit": "500pkt"},
            "up_rate": "1Mbit", "up_delay": "10ms"
        },
        "traffic": [
            {"kind": "audio", "name": "audio", "from": "server", "to": "client"},
            {"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": size, "cc": cc, "start": "1s"}
        ],
    })
}

fn audio_owd_ms(t: &Tables, from_ns: i64, to_ns: i64) -> Vec<f64> {
    let m = &t.media;
    let mut v: Vec<f64> = (0..m.send_ns.len())
        .filter(|&i| m.recv_ns[i] >= 0 && m.send_ns[i] >= from_ns && m.send_ns[i] < to_ns)
        .map(|i| (m.recv_ns[i] - m.send_ns[i]) as f64 / 1e6)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The path (4 Mbit/s, 500-packet FIFO, 30 ms base RTT): BBR fills the link — 3 MB in at
/// most 3% more than the 6.16 s the payload takes at 4 Mbit/s × 1460/1500, plus its first round
/// trips — while the audio's 90th-percentile OWD stays within the 15.2 ms base + 2·BDP of queue
/// (2·11 packets × 3 ms), where CUBIC fills the 500 packets (seconds).
#[test]
fn bbr_fills_the_link_without_filling_the_buffer() {
    let t = scenario::run(&path_scenario("bbr", "12s", "3MB"), 1).unwrap();
    t.check_conservation().unwrap();
    let f = &t.tcp_flows;
    assert_eq!(f.cc[0], "bbr");
    assert_eq!(f.retransmits[0], 0);
    let took = (f.end_ns[0] - f.first_data_ns[0]) as f64 / 1e9;
    let ideal = 3e6 * 8.0 / (4e6 * 1460.0 / 1500.0);
    assert!(took > ideal && took < ideal * 1.03 + 0.2, "{took} s vs {ideal} s");
    let owd = audio_owd_ms(&t, f.first_data_ns[0] + 1_000_000_000, f.end_ns[0]);
    let p90 = owd[owd.len() * 9 / 10];
    assert!(p90 < 15.2 + 66.0, "p90 {p90} ms");

    let c = scenario::run(&path_scenario("cubic", "12s", "3MB"), 1).unwrap();
    let owd = audio_owd_ms(&c, c.tcp_flows.first_data_ns[0] + 1_000_000_000, c.tcp_flows.end_ns[0]);
    assert!(owd[owd.len() * 9 / 10] > 3.0 * p90);
}
