//! TCP Small Queues (TSQ), as Linux's `tcp_small_queue_check()` (net/ipv4/tcp_output.c): a socket
//! may have at most `limit` bytes of skb truesize queued below TCP (qdisc and device, counted in
//! `sk_wmem_alloc`) before `tcp_write_xmit()` stops; the TX completion of one of its packets
//! (`tcp_wfree()` → the TSQ tasklet/BH work → `tcp_tsq_write()`) sends more.
//!
//! ```text
//! limit = max(2 · skb->truesize, sk_pacing_rate >> sk_pacing_shift)
//! limit = min(limit, tcp_limit_output_bytes)      // always, since Linux 6.16 (Dumazet, 2025:
//!                                                 // "tcp: always use tcp_limit_output_bytes
//!                                                 // limitation"); before only for SK_PACING_NONE,
//!                                                 // which is CUBIC over pfifo anyway
//! limit <<= factor                                // 0 in tcp_write_xmit, 1 for retransmissions
//! throttled iff sk_wmem_alloc > limit and the rtx queue holds ≥ 2 skbs
//!          ("tcp_rtx_queue_empty_or_single_skb", Linux 6.7, Oct 2023)
//! ```
//!
//! `sk_wmem_alloc` starts at 1 (`sk_alloc()`), so with full-sized segments of equal truesize T
//! and the 2·T term binding, a third packet finds 1 + 2·T > 2·T: two packets per socket below TCP.
//! The engine reports TX completion when a packet has left the host's first link (end of its
//! serialisation) or was dropped there ([`crate::engine::Ctx::watch_tx_completion`]); the agent
//! keeps [`Tsq::queued`] and wakes the sender.
//!
//! `sk_pacing_rate` is what `tcp_update_pacing_rate()` (net/ipv4/tcp_input.c) sets on every ACK
//! even without fq: mss · max(cwnd, packets_out) / srtt · (200 % while cwnd < ssthresh / 2, else
//! 120 %, `tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio`); before the first RTT sample the rate is
//! unbounded (~0UL) and only `tcp_limit_output_bytes` limits.

/// `net.ipv4.tcp_limit_output_bytes` default: 4 MiB since Linux 6.8 (tcp_ipv4.c `tcp_sk_init`,
/// "Default TSQ limit of 4 MB"; 1 MiB = 16 · 65536 before, 256 KiB in 4.x).
pub const TCP_LIMIT_OUTPUT_BYTES: u64 = 4 << 20;
/// `sk_pacing_shift` default (`sk_alloc`): the pacing term is ~1 ms (2^-10 s) of the pacing rate.
pub const PACING_SHIFT: u32 = 10;
/// Truesize of an skb without payload, x86-64: `tcp_stream_alloc_skb()` allocates the head with
/// `alloc_skb_fclone(MAX_TCP_HEADER = 320)`; 320 + SKB_DATA_ALIGN(sizeof(skb_shared_info) = 320)
/// = 640 B comes from kmalloc-1024, so `SKB_WITH_OVERHEAD(1024)` = 704 B of head and
/// `SKB_TRUESIZE(704)` = 704 + SKB_DATA_ALIGN(sizeof(struct sk_buff) = 232) 256 + 320 = 1280 B.
/// The payload goes into page fragments and adds its length (`skb->truesize += copy`).
pub const SKB_HEAD_TRUESIZE: u64 = 1280;
/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio` defaults (percent).
pub const PACING_SS_RATIO: u64 = 200;
pub const PACING_CA_RATIO: u64 = 120;

/// `skb->truesize` of a segment carrying `payload` bytes.
pub fn truesize(payload: u32) -> u64 { SKB_HEAD_TRUESIZE + payload as u64 }

/// `sk_pacing_rate` in bytes/s (`tcp_update_pacing_rate`); cwnd and ssthresh in bytes as the
/// simulator keeps them, converted to Linux's packets. None before an RTT sample (~0UL).
pub fn pacing_rate(mss: u64, cwnd: u64, ssthresh: u64, packets_out: u64, srtt_us: Option<u64>) -> Option<u64> {
    let srtt_us = srtt_us.filter(|&s| s > 0)?;
    let mss = mss.max(1);
    let (cwnd_p, ssthresh_p) = (cwnd / mss, ssthresh / mss);
    let ratio = if cwnd_p < ssthresh_p / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    // rate = mss · (USEC_PER_SEC / 100) · ratio · max(cwnd, packets_out) / srtt_us
    let r = crate::time::div_u128(mss as u128 * 10_000 * ratio as u128 * cwnd_p.max(packets_out) as u128, srtt_us);
    Some(r.min(u64::MAX as u128) as u64)
}

/// `tcp_small_queue_check()`'s limit for a segment of truesize `skb_truesize`.
pub fn limit(skb_truesize: u64, pacing_rate: Option<u64>, factor: u32) -> u64 {
    let pace = pacing_rate.map_or(u64::MAX, |r| r >> PACING_SHIFT);
    (2 * skb_truesize).max(pace).min(TCP_LIMIT_OUTPUT_BYTES) << factor
}

/// A sender's TSQ state: bytes of truesize below TCP and whether it is waiting for a completion.
#[derive(Clone, Debug, Default)]
pub struct Tsq {
    /// Truesize of the packets handed to the host and not yet completed (`sk_wmem_alloc` − 1).
    pub queued: u64,
    /// Set when a send stopped at the limit (TSQ_THROTTLED): the next completion sends more.
    pub throttled: bool,
    /// Times a send stopped at the limit.
    pub throttles: u64,
}

impl Tsq {
    /// `tcp_small_queue_check()`: true if the sender must stop. `pending` is the truesize of
    /// segments produced in this call and not yet handed to the host; `rtx_skbs` the segments sent
    /// and not cumulatively acknowledged.
    pub fn check(&mut self, limit: u64, pending: u64, rtx_skbs: usize) -> bool {
        if 1 + self.queued + pending <= limit || rtx_skbs <= 1 {
            return false;
        }
        self.throttled = true;
        self.throttles += 1;
        true
    }
    /// A packet of `payload` bytes was handed to the host.
    pub fn sent(&mut self, payload: u32) { self.queued += truesize(payload); }
    /// TX completion of a packet of `payload` bytes; true if the sender is throttled and should
    /// try to send now (`tcp_wfree` queues the socket only when TSQ_THROTTLED is set).
    pub fn completed(&mut self, payload: u32) -> bool {
        self.queued = self.queued.saturating_sub(truesize(payload));
        std::mem::take(&mut self.throttled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel formula by hand for a 1448-byte MSS: T = 1280 + 1448 = 2728 B, so 2·T = 5456 B.
    #[test]
    fn limit_arithmetic() {
        assert_eq!(truesize(1448), 2728);
        // No RTT sample: the rate is ~0UL, >> 10 is huge, tcp_limit_output_bytes (4 MiB) binds.
        assert_eq!(limit(2728, None, 0), 4_194_304);
        assert_eq!(limit(2728, None, 1), 8_388_608);
        // 2 Mbit/s path, slow start with IW10 and srtt 30 ms: rate = 1448 · 10_000 · 200 · 10
        // / 30_000 = 965_333 B/s; >> 10 = 942 B < 2·T.
        let r = pacing_rate(1448, 10 * 1448, u64::MAX / 4, 0, Some(30_000));
        assert_eq!(r, Some(965_333));
        assert_eq!(limit(2728, r, 0), 5456);
        assert_eq!(limit(2728, r, 1), 10_912);
        // Congestion avoidance (cwnd ≥ ssthresh / 2): 120 %. cwnd 100 MSS, srtt 10 ms:
        // 1448 · 10_000 · 120 · 100 / 10_000 = 17_376_000 B/s; >> 10 = 16_968 B > 2·T.
        let r = pacing_rate(1448, 100 * 1448, 150 * 1448, 90, Some(10_000));
        assert_eq!(r, Some(17_376_000));
        assert_eq!(limit(2728, r, 0), 16_968);
        // packets_out above cwnd counts (max(cwnd, packets_out)).
        assert_eq!(pacing_rate(1448, 100 * 1448, 150 * 1448, 200, Some(10_000)), Some(34_752_000));
    }

    /// sk_wmem_alloc starts at 1: with the 2·T limit a third full segment is held, and a socket
    /// with at most one unacknowledged skb is never held.
    #[test]
    fn two_packets_below_tcp() {
        let t = truesize(1448);
        let lim = limit(t, Some(965_333), 0);
        let mut q = Tsq::default();
        assert!(!q.check(lim, 0, 5));
        q.sent(1448);
        assert!(!q.check(lim, 0, 5));
        q.sent(1448);
        assert!(q.check(lim, 0, 5), "1 + 2T > 2T");
        assert!(!Tsq { queued: 2 * t, ..Default::default() }.check(lim, 0, 1), "single skb in the rtx queue");
        assert!(q.completed(1448));
        assert!(!q.check(lim, 0, 5));
        assert!(!q.completed(1448), "not throttled: no wake-up");
        assert_eq!(q.queued, 0);
    }
}
