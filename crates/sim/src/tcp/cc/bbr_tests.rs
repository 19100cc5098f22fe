//! Unit tests of BBR's private state that whole runs (tests/tcp_bbr.rs) cannot reach.
use super::*;

/// `bbr_update_ack_aggregation`'s epoch (tcp_bbr.c): before any bandwidth sample the expected
/// delivery is 0, so the epoch's count grows by each ACK's packets and starts over when count +
/// acked reaches `bbr_ack_epoch_acked_reset_thresh` = 1 << 20 = 1 048 576 packets. ACKs of 300 000
/// packets: 300 000, 600 000, 900 000, then 900 000 + 300 000 ≥ 2^20 restarts at 300 000 (with a
/// threshold of 2^19 the second ACK would already restart). The window's max keeps 900 000.
#[test]
fn ack_epoch_restarts_at_two_to_the_twenty_packets() {
    let mss = 1_000;
    let mut b = Bbr::new(BbrConfig { seed: 1 });
    let mut st = CcState::new(mss, u64::MAX / 4); // a cwnd that does not cap `extra`
    st.delivered_time = Time::from_ms(1);
    let rs = RateSample { acked_sacked: 300_000 * mss, delivered: Some(mss), interval: Some(Time::from_ms(1)), ..Default::default() };
    let mut counts = Vec::new();
    for _ in 0..5 {
        b.update_ack_aggregation(&st, &rs);
        counts.push(b.ack_epoch_acked);
    }
    assert_eq!(counts, [300_000, 600_000, 900_000, 300_000, 600_000]);
    assert_eq!(b.extra_acked[b.extra_acked_win_idx], 900_000);
}
