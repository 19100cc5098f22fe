//! The ACKs a Linux 6.18 receiver sends beyond RFC 5681's every-second-segment rule, and the PSH
//! marks they answer, against the kernel's arithmetic and the testbed's captures
//! (docs/validation.md, the fixed 4 Mbit/s path):
//!
//! - `push_ack`: the sender marks PSH on every second segment of a burst, and a receiver whose
//!   reader has emptied the queue ACKs a PSH segment at once (`tcp_measure_rcv_mss` sets
//!   ICSK_ACK_PUSHED for a full-sized PSH segment since 4720852ed9af, 6.6; `tcp_cleanup_rbuf`
//!   sends the ACK);
//! - `tcp_grow_window`: a segment that raises rcv_ssthresh sets `icsk_ack.quick |= 1`, so the ACK
//!   that announces the larger window leaves at once.
use jitterlab_sim::packet::{tcp_flags as F, TcpHeader};
use jitterlab_sim::tcp::rcvbuf::LinuxRcvConfig;
use jitterlab_sim::tcp::receiver::{Receiver, RecvOutput};
use jitterlab_sim::tcp::sender::{Output, Sender};
use jitterlab_sim::tcp::{TimerCmd, TcpConfig};
use jitterlab_sim::time::Time;

const MSS: u64 = 1448; // payload: MSS 1460 less 12 B of timestamps, as on the testbed

fn ts(t: Time) -> u32 { jitterlab_sim::tcp::sender::tsval(t) }

/// A receiver with the testbed's sysctls (tcp_rmem 4096 131072 33554432), SO_RCVBUF `so`.
fn receiver(so: Option<u64>, push_ack: bool) -> Receiver {
    let lc = LinuxRcvConfig { rmem: [4096, 131_072, 33_554_432], rmem_max: 4_194_304, so_rcvbuf: so, ..LinuxRcvConfig::default() };
    let mut r = Receiver::new(TcpConfig { mss: 1460, linux_rcv: Some(lc), push_ack, ..TcpConfig::default() }, 0, None);
    r.process(&TcpHeader { seq: 0, flags: F::SYN, wscale: Some(7), ts: Some((1, 0)), ..Default::default() }, false, Time::ZERO, &mut RecvOutput::default());
    r.process(&TcpHeader { seq: 1, ack: 1, flags: F::ACK, ts: Some((2, 0)), ..Default::default() }, false, Time::ZERO, &mut RecvOutput::default());
    r
}

/// Full segment `k` (from 0) at `now`, with PSH if `psh`; its TSecr says we were heard `rtt` ago.
fn seg(r: &mut Receiver, k: u64, psh: bool, now: Time, rtt: Time) -> RecvOutput {
    let flags = if psh { F::ACK | F::PSH } else { F::ACK };
    let h = TcpHeader { seq: 1 + k * MSS, ack: 1, flags, len: MSS as u32, ts: Some((ts(now), ts(now - rtt))), ..Default::default() };
    let mut out = RecvOutput::default();
    r.process(&h, false, now, &mut out);
    out
}

/// SO_RCVBUF = 10000 (two flows under the testbed's 20 kB budget): the SYN offers 6 × 1460 = 8760
/// B, so quick-ACK mode covers 8760 / (2 · 1448) = 3 segments (`tcp_incr_quickack`); rcv_ssthresh
/// reaches tcp_space = (20000 − 2304) · 160/256 = 11060 on the first segment and grows no more
/// (capture: three lone ACKs, then 10136 = 7 × 1448 offered). Then segment 4 waits, segment 5
/// completes a pair, and segment 6 — alone since that ACK — is ACKed at once when it carries PSH
/// (the lone ACKs of the testbed's client capture: 17 of 74 per flow), and waits for the
/// delayed-ACK timer without PSH or without `push_ack`.
#[test]
fn a_full_sized_psh_segment_is_acked_once_read() {
    let rtt = Time::from_ms(41);
    let run = |push_ack: bool, psh6: bool| {
        let mut r = receiver(Some(10_000), push_ack);
        let mut acks = vec![];
        for k in 0..6u64 {
            let now = Time::from_ms(100 + 3 * k);
            let out = seg(&mut r, k, k == 4 || (k == 5 && psh6), now, rtt);
            acks.push((out.segs.iter().map(|a| a.ack).collect::<Vec<_>>(), out.delack));
        }
        assert_eq!(r.linux().unwrap().rcv_ssthresh, 11_060);
        acks
    };
    let on = run(true, true);
    let ack_of = |k: u64| vec![1 + (k + 1) * MSS];
    for k in 0..3 {
        assert_eq!(on[k as usize].0, ack_of(k), "quick-ACK mode: segment {k}");
    }
    assert!(on[3].0.is_empty() && matches!(on[3].1, TimerCmd::Set(_)), "segment 4 waits: {:?}", on[3]);
    assert_eq!(on[4].0, ack_of(4), "the second of a pair");
    assert_eq!(on[5].0, ack_of(5), "a PSH segment alone since the last ACK, read at once");
    for (push_ack, psh6) in [(false, true), (true, false)] {
        let off = run(push_ack, psh6);
        assert_eq!(off[..5].iter().map(|a| a.0.clone()).collect::<Vec<_>>(), on[..5].iter().map(|a| a.0.clone()).collect::<Vec<_>>());
        assert!(off[5].0.is_empty() && matches!(off[5].1, TimerCmd::Set(_)), "push_ack {push_ack}, PSH {psh6}: {:?}", off[5]);
    }
}

/// The sender's PSH marks: the IW10 burst alternates (the testbed's server capture:
/// `.P.P.P.P.P`), and a burst of two ends in PSH; `push_ack = false` sends none.
#[test]
fn the_sender_marks_every_second_segment_of_a_burst() {
    let burst = |push_ack: bool| {
        let cfg = TcpConfig { push_ack, tsq: false, ..TcpConfig::default() };
        let mut s = Sender::new(cfg, Some(100 * MSS));
        let mut out = Output::default();
        s.connect(Time::ZERO, &mut out);
        out.segs.clear();
        let synack = TcpHeader { seq: 0, ack: 1, flags: F::SYN | F::ACK, wnd: 65_535, wscale: Some(7), ts: Some((5, ts(Time::ZERO))), ..Default::default() };
        s.process(&synack, Time::from_ms(40), &mut out);
        let first: String = out.segs.iter().filter(|g| g.hdr.len > 0).map(|g| if g.hdr.flags & F::PSH != 0 { 'P' } else { '.' }).collect();
        out.segs.clear();
        // the ACK of the first two segments (slow start one MSS per ACK, TcpConfig::default's
        // abc): cwnd 11 over 8 in flight, three more segments in one burst
        let ack = TcpHeader { seq: 1, ack: 1 + 2 * MSS, flags: F::ACK, wnd: 65_535, ts: Some((6, ts(Time::from_ms(40)))), ..Default::default() };
        s.process(&ack, Time::from_ms(80), &mut out);
        let second: String = out.segs.iter().filter(|g| g.hdr.len > 0).map(|g| if g.hdr.flags & F::PSH != 0 { 'P' } else { '.' }).collect();
        (first, second)
    };
    assert_eq!(burst(true), (".P.P.P.P.P".to_string(), ".P.".to_string()));
    assert_eq!(burst(false), ("..........".to_string(), "...".to_string()));
}

/// `tcp_grow_window`: after quick-ACK mode has run out, a segment that raises rcv_ssthresh is
/// ACKed alone and one that does not waits for its pair. The default buffer (tcp_rmem[1] = 131072):
/// rcv_ssthresh starts at the clamp 65536 − 1460 = 64076, is set back to the SYN's 44 × 1460 = 64240
/// when the clamp follows the measured ratio (as in tcp_rcvbuf.rs), and grows by 2 · advmss = 2920
/// per segment to tcp_space = (131072 − 2304) · 160/256 = 80480 on the first six segments. Quick-ACK mode
/// starts at 16 with the first segment and each of those six sets `quick |= 1` on an even count
/// before its ACK takes one off, so the first 22 segments are ACKed alone. In the fourth round
/// trip autotuning has grown sk_rcvbuf (tcp_rcv_space_adjust) and rcv_ssthresh climbs by 2 · advmss
/// = 2920 per segment again — each of those segments is ACKed at once, as the testbed's client
/// capture of one IW10 web flow shows (the window rising by 2–3 kB on every lone ACK).
#[test]
fn a_segment_that_grows_the_window_is_acked_alone() {
    let mut r = receiver(None, false);
    let rtt = Time::from_ms(100);
    let (mut k, mut unacked, mut grown, mut lone, mut paired) = (0u64, 0u32, 0u32, 0u32, 0u32);
    let mut ssthresh = vec![r.linux().unwrap().rcv_ssthresh];
    for (round, n) in [(1u64, 20u64), (2, 20), (3, 40), (4, 80)] {
        for i in 0..n {
            let now = Time::from_ms(100 * round + i);
            let before = r.linux().unwrap().rcv_ssthresh;
            let out = seg(&mut r, k, false, now, rtt);
            let grew = r.linux().unwrap().rcv_ssthresh > before;
            if k < 7 {
                ssthresh.push(r.linux().unwrap().rcv_ssthresh);
            }
            unacked += 1;
            let acked = !out.segs.is_empty();
            if k < 22 {
                assert!(acked && unacked == 1, "quick-ACK mode: segment {k}");
            } else {
                // past quick-ACK mode: at once when the window grew, else with the second segment
                assert_eq!(acked, grew || unacked == 2, "segment {k} (window grew: {grew}, unacked {unacked})");
                grown += grew as u32;
                lone += (acked && unacked == 1) as u32;
                paired += (acked && !grew) as u32;
            }
            if acked {
                unacked = 0;
            }
            k += 1;
        }
    }
    assert_eq!(ssthresh, [64_076, 67_160, 70_080, 73_000, 75_920, 78_840, 80_480, 80_480]);
    let l = r.linux().unwrap();
    assert!(l.sk_rcvbuf > 131_072, "autotuning grew the buffer: {}", l.sk_rcvbuf);
    // both regimes occur: the window grew on dozens of segments (most of them ACKed alone) and
    // stayed flat on others, ACKed in pairs
    assert!(grown >= 20 && lone >= 10 && paired >= 10, "grew {grown}, lone {lone}, pairs {paired}");
}
