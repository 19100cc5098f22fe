//! CUBIC's HyStart (Linux `tcp_cubic.c`) on simulated paths: the ACK-train exit at the window
//! derived by hand for a clean path, the delay-increase exit on a slow deep-buffered link, and the
//! first-slow-start overshoot of the 28 MB bulk transfer with and without it.
mod common;
use common::*;
use jitterlab_sim::scenario;
use jitterlab_sim::tcp::cc::cubic::HystartExit;
use jitterlab_sim::tcp::cc::Cubic;
use jitterlab_sim::tcp::{TcpConfig, TcpSenderAgent};
use jitterlab_sim::{Rate, Time};
use serde_json::json;

const MSS: u32 = 1460;

fn cubic(iw: u32, hystart: bool) -> TcpConfig { TcpConfig { cc: "cubic".into(), hystart, ..reno(MSS, iw) } }

/// (found, exit cwnd in segments, ssthresh) of the connection's CUBIC after `until`.
fn hystart_state(path: &Path, cfg: TcpConfig, size: u64, until: Time) -> (Option<HystartExit>, Option<u64>, u64, u64) {
    let mut run = build(path, cfg, Some(size), Time::ZERO, pass());
    run.sim.run_until(until);
    let snd = run.sim.agent_as::<TcpSenderAgent>(run.conn.sender).unwrap();
    let Some(c) = snd.core.cc().as_any().downcast_ref::<Cubic>() else { panic!("not cubic") };
    let maxq = run.log.borrow().iter().map(|a| a.backlog as u64).max().unwrap_or(0);
    (c.hystart.found, c.hystart.exit_cwnd.map(|w| w / MSS as u64), snd.core.ssthresh(), maxq)
}

/// ACK train on a clean path: 100 Mbit/s bottleneck (1500 B in 120 µs), 5 ms each way, IW3,
/// an ACK per segment. delay_min is segment 1's round trip, Path::rtt(1500, 40) = 10.1375 ms, so
/// the train must last more than 5.0688 ms: 43 ACK gaps of 120 µs (42 give 5.04 ms).
///
/// Where the train starts: the ACK of segment i finds cwnd = 3 + (i − 1) and SND.NXT = 3 + 2(i − 1)
/// segments; a HyStart round that starts at ACK i ends with segment 2i + 1, the next starts at
/// i' = 2i + 2. Slow-start rounds by RTT carry segments 1–3, 4–9, 10–21, 22–45, 46–93 (48),
/// 94–189 (96): each round's ACKs come back 120 µs apart and, until round 94–189 (96 × 120 µs =
/// 11.5 ms > RTT), a gap of several ms follows that ends the train.
///
/// Linux since early 2025 (`hystart_round_fix`, default): rounds are counted from the first ACK, i = 1, 4,
/// 10, 22, 46, 94, …: exactly the RTT rounds. Round 22 (24 ACKs, 2.8 ms) is too short; round 46
/// (48 ACKs) passes 5.0688 ms at its 43rd gap, i = 46 + 43 = 89, where cwnd = 3 + 88 = 91 segments
/// (91 · 1500 B · 8 / 100 Mbit/s = 10.9 ms ≈ min_rtt: the round's train is min_rtt/2 ≈ 42 segments).
///
/// Old order (Linux 6.1 up to that fix): HyStart's first round starts at cwnd 16 (i = 14), then i = 30, 62,
/// 126. The round of i = 62 sits at position 16 of 48 (31 ACKs left, 3.7 ms: too short); that of
/// i = 126 at position 32 of 96 with 63 ACKs left, so the train passes 5.0688 ms at the 43rd ACK
/// after it, i = 169, cwnd = 3 + 168 = 171 segments (2.0·min_rtt).
///
/// No delay exit before: the queue a round's first segments met is half their position in the
/// round (≤ 24 packets = 2.9 ms < the 4 ms minimum threshold).
#[test]
fn ack_train_exit_on_a_clean_path() {
    let path = Path { rate: Rate::mbps(100), delay: Time::from_ms(5), ..Path::default() };
    let base = path.rtt(1500, 40);
    assert_eq!(base, Time::from_ns(10_137_520));
    for (fix, w) in [(true, 91u64), (false, 171)] {
        let cfg = TcpConfig { hystart_round_fix: fix, ..cubic(3, true) };
        let (found, exit, ssthresh, _) = hystart_state(&path, cfg, 2_000 * MSS as u64, Time::from_secs(2));
        assert_eq!(found, Some(HystartExit::AckTrain), "fix {fix}");
        assert_eq!(exit, Some(w), "fix {fix}");
        assert_eq!(ssthresh, w * MSS as u64);
    }
}

/// Delay increase on a slow deep-buffered link: 4 Mbit/s (1500 B in 3 ms, so ACKs are never
/// ≤ 2 ms apart and the train never runs), 20 ms each way, IW10, an ACK per segment, 1000-packet
/// queue. delay_min = segment 1's RTT ≈ 43.1 ms, threshold clamp(43.1/8, 4, 16) = 5.4 ms (< 2
/// packets of queue). The ACK of segment i finds cwnd = 10 + (i − 1) (16 from i = 7) and SND.NXT
/// = 10 + 2(i − 1); a round that starts at ACK i ends with segment 10 + 2(i − 1). Segment 11, the
/// first sent on an ACK, finds the queue empty (the IW drained before it arrives); segment k ≥ 11
/// left on ACK (k − 9)/2 behind ≈ (k − 11)/2 packets (two sent per ACK, one served per ACK
/// interval), so segment 23 meets ≈ 6 packets (18 ms), more than the threshold.
///
/// Linux since early 2025 (`hystart_round_fix`, default): rounds from ACK 1: 1–10, 11–30, 31–70. Round 1
/// runs the tests only from ACK 7 (4 samples, none tested); round 11 contains segment 11's sample
/// (delay_min), so its minimum stays low; round 31's samples (segments 31–39 meet ≥ 10 packets) are
/// all above threshold and the exit is on its 9th, ACK 39, at cwnd 10 + 38 = 48 segments.
///
/// Old order (Linux 6.1 up to that fix): rounds start at ACKs 7, 23, 55, … (the first when cwnd reaches 16).
/// Round 7 contains segment 11 (delay_min); round 23's first nine samples are all above threshold:
/// the exit is on the 9th, ACK 31, at cwnd 10 + 30 = 40 segments. Without HyStart the queue grows
/// past 900.
#[test]
fn delay_exit_on_a_slow_link() {
    let path = Path { rate: Rate::mbps(4), delay: Time::from_ms(20), ..Path::default() };
    for (fix, w) in [(false, 40u64), (true, 48)] {
        let cfg = TcpConfig { hystart_round_fix: fix, ..cubic(10, true) };
        let (found, exit, ssthresh, _) = hystart_state(&path, cfg, 3_000 * MSS as u64, Time::from_secs(3));
        assert_eq!(found, Some(HystartExit::Delay), "fix {fix}");
        assert_eq!(exit, Some(w), "fix {fix}");
        assert_eq!(ssthresh, w * MSS as u64);
    }
    let (_, _, _, maxq) = hystart_state(&path, cubic(10, true), 3_000 * MSS as u64, Time::from_secs(3));
    // After the exit at 48 segments (BDP ≈ 14: ≈ 34 queued) CUBIC's congestion avoidance
    // (W_max = 48, K = 0) adds 0.4·t³ segments: ≈ 8 in the 2.7 s left, so the queue stays below
    // ≈ 34 + 8 + the 2-packet bursts of slow start.
    assert!(maxq < 60, "max queue {maxq}");
    let (found_off, exit_off, _, maxq_off) = hystart_state(&path, cubic(10, false), 3_000 * MSS as u64, Time::from_secs(3));
    assert_eq!((found_off, exit_off), (None, None));
    assert!(maxq_off > 900, "max queue without HyStart {maxq_off}");
}

fn bulk(hystart: bool) -> jitterlab_sim::record::Tables {
    let v = json!({
        "name": "tb", "duration": "12s",
        "access": {"core_rate": "100Mbit", "core_delay": "1ms", "down_rate": "4Mbit", "down_delay": "20ms",
                   "up_rate": "4Mbit", "up_delay": "20ms", "down_queue": {"kind": "droptail", "limit": "500pkt"}},
        "traffic": [{"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "28MB", "start": "2s", "mss": "1448B", "series": true, "hystart": hystart}],
    });
    scenario::run(&v, 7).expect("valid scenario")
}

/// The 28 MB CUBIC download over 4 Mbit/s, 20 ms each way, 500-packet DropTail (the testbed
/// case, `docs/tcp.md`), first 10 s of the transfer. Without HyStart slow start doubles past the
/// 500-packet queue plus the ≈ 14-packet BDP and ends near 2× that (cwnd ≈ 770 segments), losing
/// hundreds of packets (309 here). With HyStart the delay test ends slow start at a few tens of
/// segments (the path of `delay_exit_on_a_slow_link`), and CUBIC's growth from there (W_max =
/// exit cwnd, K = 0: 0.4·t³ segments after t s) needs ∛(500/0.4) ≈ 10.8 s to add the 500 packets
/// the queue holds: no loss at all in these 10 s.
#[test]
fn bulk_first_slow_start_overshoot_shrinks() {
    let off = bulk(false);
    let on = bulk(true);
    let seg = 1448;
    let max_cwnd = |t: &jitterlab_sim::record::Tables| t.tcp_series.cwnd.iter().max().copied().unwrap() / seg;
    assert!(off.tcp_flows.drops[0] > 150, "drops without HyStart {}", off.tcp_flows.drops[0]);
    assert!(max_cwnd(&off) > 600, "{}", max_cwnd(&off));
    assert_eq!(on.tcp_flows.drops[0], 0);
    assert_eq!(on.tcp_flows.retransmits[0], 0);
    assert!(max_cwnd(&on) < 514, "{}", max_cwnd(&on));
    // The first ssthresh is the HyStart exit window, not β·(overshoot).
    let first_ss = on.tcp_series.ssthresh.iter().copied().min().unwrap() / seg;
    assert!((16..60).contains(&first_ss), "exit at {first_ss} segments");
}

/// `hystart` is a boolean scenario key.
#[test]
fn hystart_key_must_be_a_bool() {
    let v = json!({
        "name": "k", "duration": "1s",
        "access": {"core_rate": "100Mbit", "core_delay": "1ms", "down_rate": "4Mbit", "down_delay": "20ms", "up_rate": "4Mbit", "up_delay": "20ms"},
        "traffic": [{"kind": "bulk", "from": "server", "to": "client", "size": "1MB", "hystart": "yes"}],
    });
    let Err(e) = scenario::run(&v, 1) else { panic!("an error") };
    let e = e.to_string();
    assert!(e.contains("traffic[0].hystart"), "{e}");
}
