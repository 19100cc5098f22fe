//! The sender's SACK scoreboard (RFC 6675 §3): one entry per segment sent and not cumulatively
//! acknowledged, with its SACKed / lost / retransmitted marks, and the RFC's queries over it —
//! IsLost (§4), SetPipe (§4), NextSeg rules (1) and (3) (§4) — plus Linux's lost-retransmission
//! detection (`tcp_mark_lost_retrans`). It knows nothing of windows or timers: the recovery policy
//! (`recovery.rs`), RACK (`rack.rs`) and the sender decide what the marks mean.
//!
//! Sequence numbers are the sender's 64-bit ones; lengths are sequence space (payload bytes, or 1
//! for the FIN).
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use super::DUP_THRESH;
use crate::time::Time;

/// One segment in flight (scoreboard entry, RFC 6675 §3).
#[derive(Clone, Debug)]
pub struct Seg {
    pub seq: u64,
    /// Sequence space taken (payload bytes, or 1 for the FIN).
    pub len: u32,
    pub fin: bool,
    /// Last (re)transmission time.
    pub sent: Time,
    pub sacked: bool,
    /// Presumed lost (RFC 6675 IsLost, RACK, or every unSACKed segment after an RTO).
    pub lost: bool,
    /// Retransmitted in the current recovery episode (RFC 6675 pipe rule S2).
    pub rexmit: bool,
    /// Ever retransmitted (Karn's rule, RFC 6298 §3).
    pub ever_rexmit: bool,
    /// SND.NXT when it was last retransmitted (Linux's lost-retransmission detection).
    pub rexmit_nxt: u64,
    /// TSval carried by its last transmission (RFC 7323 §3), when the option is on.
    pub tsval: Option<u32>,
    /// Delivery-rate state at the last transmission (`tcp_skb_cb.tx`, `tcp_rate_skb_sent`).
    pub tx: TxRate,
}

/// What `tcp_rate.c` stamps on a segment when it is (re)sent.
#[derive(Copy, Clone, Debug, Default)]
pub struct TxRate {
    /// The connection's `delivered` then.
    pub delivered: u64,
    /// The connection's `delivered_time` then; None once the segment was counted as delivered by
    /// a SACK (Linux zeroes `delivered_mstamp`), so that it is not sampled twice.
    pub delivered_time: Option<Time>,
    /// Send time of the first segment of the flight it belongs to (`first_tx_mstamp`).
    pub first_tx: Time,
    /// The connection was application-limited then.
    pub app_limited: bool,
}

impl Seg {
    pub fn new(seq: u64, len: u32, fin: bool, now: Time) -> Seg {
        Seg { seq, len, fin, sent: now, sacked: false, lost: false, rexmit: false, ever_rexmit: false, rexmit_nxt: 0, tsval: None, tx: TxRate::default() }
    }
    pub fn end(&self) -> u64 { self.seq + self.len as u64 }
}

/// The scoreboard: segments in sequence order, HighSACK and the count of bytes ever marked lost.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// End of the highest SACKed segment (RFC 6675 HighSACK, exclusive).
    high_sacked: u64,
    /// Bytes ever marked lost (`tcp_sock.lost`), counted once per marking.
    lost_total: u64,
    /// SetPipe, SACKed segments and lost unSACKed segments, kept as the marks change (Linux keeps
    /// `sacked_out`, `lost_out`, `retrans_out` the same way): every ACK asks, and a scan of the
    /// whole window each time was a fifth of the sender's work.
    counts: Counts,
}

/// What one segment adds to the scoreboard's running counts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Counts {
    pipe: u64,
    sacked: u64,
    lost_unsacked: u64,
}

impl Counts {
    fn of(g: &Seg) -> Counts {
        if g.sacked {
            return Counts { pipe: 0, sacked: 1, lost_unsacked: 0 };
        }
        let len = g.len as u64;
        Counts { pipe: if g.lost { 0 } else { len } + if g.rexmit { len } else { 0 }, sacked: 0, lost_unsacked: g.lost as u64 }
    }
    fn add(&mut self, c: Counts) {
        self.pipe += c.pipe;
        self.sacked += c.sacked;
        self.lost_unsacked += c.lost_unsacked;
    }
    fn sub(&mut self, c: Counts) {
        self.pipe -= c.pipe;
        self.sacked -= c.sacked;
        self.lost_unsacked -= c.lost_unsacked;
    }
}

/// A segment of the scoreboard open for change; the counts follow its marks when it is dropped.
pub struct SegMut<'a> {
    g: &'a mut Seg,
    counts: &'a mut Counts,
    before: Counts,
}

impl Deref for SegMut<'_> {
    type Target = Seg;
    fn deref(&self) -> &Seg { self.g }
}

impl DerefMut for SegMut<'_> {
    fn deref_mut(&mut self) -> &mut Seg { self.g }
}

impl Drop for SegMut<'_> {
    fn drop(&mut self) {
        self.counts.sub(self.before);
        self.counts.add(Counts::of(self.g));
    }
}

impl Scoreboard {
    pub fn len(&self) -> usize { self.segs.len() }
    pub fn is_empty(&self) -> bool { self.segs.is_empty() }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Seg> { self.segs.iter() }
    pub fn get(&self, i: usize) -> &Seg { &self.segs[i] }
    pub fn get_mut(&mut self, i: usize) -> SegMut<'_> {
        let g = &mut self.segs[i];
        let before = Counts::of(g);
        SegMut { g, counts: &mut self.counts, before }
    }
    pub fn front(&self) -> Option<&Seg> { self.segs.front() }
    pub fn high_sacked(&self) -> u64 { self.high_sacked }
    pub fn lost_total(&self) -> u64 { self.lost_total }

    /// A newly sent segment (above every other); returns its index.
    pub fn push(&mut self, g: Seg) -> usize {
        debug_assert!(self.segs.back().is_none_or(|b| b.end() <= g.seq));
        self.counts.add(Counts::of(&g));
        self.segs.push_back(g);
        self.segs.len() - 1
    }

    /// Removes the segments wholly below `ackno` (cumulatively acknowledged), oldest first.
    pub fn pop_acked(&mut self, ackno: u64) -> Option<Seg> {
        if self.segs.front()?.end() > ackno {
            return None;
        }
        let g = self.segs.pop_front()?;
        self.counts.sub(Counts::of(&g));
        Some(g)
    }

    /// Applies SACK blocks (RFC 2018): marks every segment wholly inside a block above `snd_una`
    /// as SACKed, calls `on_sacked` for each newly SACKed one, and returns the newly SACKed bytes.
    pub fn sack(&mut self, blocks: &[(u64, u64)], snd_una: u64, mut on_sacked: impl FnMut(&mut Seg)) -> u64 {
        let mut newly = 0;
        for &(s, e) in blocks {
            if e <= snd_una || s >= e {
                continue;
            }
            let start = self.segs.partition_point(|g| g.end() <= s);
            for g in self.segs.iter_mut().skip(start) {
                if g.seq >= e {
                    break;
                }
                if g.seq >= s && g.end() <= e && !g.sacked {
                    self.counts.sub(Counts::of(g));
                    g.sacked = true;
                    newly += g.len as u64;
                    self.high_sacked = self.high_sacked.max(g.end());
                    on_sacked(g);
                    self.counts.add(Counts::of(g));
                }
            }
        }
        newly
    }

    /// Marks segment `i` lost (counted in [`Scoreboard::lost_total`] the first time).
    pub fn mark_lost(&mut self, i: usize) {
        let g = &mut self.segs[i];
        if !g.lost {
            self.lost_total += g.len as u64;
        }
        self.counts.sub(Counts::of(g));
        g.lost = true;
        self.counts.add(Counts::of(g));
    }

    /// A retransmission of segment `i` is found lost as well (RACK): it becomes eligible for
    /// NextSeg rule (1) again and counts as lost once more (Linux's `tp->lost`).
    pub fn mark_retransmission_lost(&mut self, i: usize) {
        let g = &mut self.segs[i];
        self.counts.sub(Counts::of(g));
        g.rexmit = false;
        g.lost = true;
        self.counts.add(Counts::of(g));
        self.lost_total += g.len as u64;
    }

    /// Segments SACKed and not yet cumulatively acknowledged (Linux's `sacked_out`).
    pub fn sacked_segs(&self) -> u64 { self.counts.sacked }

    /// Some unSACKed segment is marked lost (Linux's `lost_out > 0`).
    pub fn any_lost(&self) -> bool { self.counts.lost_unsacked > 0 }

    /// RFC 6675 §4 IsLost: an unSACKed segment is lost when DupThresh discontiguous SACKed
    /// segments lie above it, or more than (DupThresh − 1)·SMSS SACKed bytes.
    pub fn mark_lost_dupthresh(&mut self, mss: u64) {
        let mut n_above = 0u32;
        let mut bytes_above = 0u64;
        for g in self.segs.iter_mut().rev() {
            if g.sacked {
                n_above += 1;
                bytes_above += g.len as u64;
            } else if (n_above >= DUP_THRESH || bytes_above > (DUP_THRESH as u64 - 1) * mss) && !g.lost {
                self.lost_total += g.len as u64;
                self.counts.sub(Counts::of(g));
                g.lost = true;
                self.counts.add(Counts::of(g));
            }
        }
    }

    /// Linux's `tcp_mark_lost_retrans` (not in RFC 6675): a retransmission is lost when data sent
    /// after it (beyond the SND.NXT of its sending) has been SACKed; it becomes eligible for
    /// NextSeg rule (1) again instead of waiting for the RTO. Returns how many were found.
    pub fn mark_lost_retransmits(&mut self) -> u64 {
        let high = self.high_sacked;
        let mut n = 0;
        for g in self.segs.iter_mut() {
            if g.rexmit && !g.sacked && high > g.rexmit_nxt {
                self.counts.sub(Counts::of(g));
                g.rexmit = false;
                g.lost = true;
                self.counts.add(Counts::of(g));
                n += 1;
            }
        }
        n
    }

    /// After a retransmission timeout every unSACKed segment is presumed lost and resent in order
    /// (RFC 6675 §5.1); the episode's retransmission marks are forgotten.
    pub fn mark_all_lost(&mut self) {
        for g in self.segs.iter_mut() {
            g.rexmit = false;
            if !g.sacked {
                if !g.lost {
                    self.lost_total += g.len as u64;
                }
                g.lost = true;
            }
        }
        // every unSACKed segment now adds nothing to pipe and one to the lost ones
        self.counts = Counts { pipe: 0, sacked: self.counts.sacked, lost_unsacked: self.segs.len() as u64 - self.counts.sacked };
    }

    /// Linux's `tcp_timeout_mark_lost` with RACK: as [`Scoreboard::mark_all_lost`], except that a
    /// segment other than the first for which `recent` holds (not yet due by RACK's clock) keeps
    /// its marks and stays in flight. Returns how many were spared.
    pub fn mark_lost_on_timeout(&mut self, recent: impl Fn(&Seg) -> bool) -> usize {
        let mut spared = 0;
        for (i, g) in self.segs.iter_mut().enumerate() {
            if g.sacked {
                g.rexmit = false;
                continue;
            }
            if i > 0 && recent(g) {
                spared += 1;
                continue;
            }
            g.rexmit = false;
            if !g.lost {
                self.lost_total += g.len as u64;
            }
            g.lost = true;
        }
        self.counts = self.segs.iter().fold(Counts::default(), |mut c, g| {
            c.add(Counts::of(g));
            c
        });
        spared
    }

    /// `tcp_undo_cwnd_reduction(sk, true)`: no segment is presumed lost any more (the timeout was
    /// spurious); retransmission marks stay, as Linux's `SACKED_RETRANS`.
    pub fn unmark_lost(&mut self) {
        for g in self.segs.iter_mut() {
            if g.lost {
                self.counts.sub(Counts::of(g));
                g.lost = false;
                self.counts.add(Counts::of(g));
            }
        }
    }

    /// Forget per-episode retransmission marks (RFC 6675 HighRxt reset).
    pub fn clear_episode(&mut self) {
        for g in self.segs.iter_mut() {
            if g.rexmit {
                self.counts.sub(Counts::of(g));
                g.rexmit = false;
                self.counts.add(Counts::of(g));
            }
        }
    }

    /// RFC 6675 §4 SetPipe over the scoreboard (Linux's `tcp_packets_in_flight` in bytes): per
    /// unSACKed octet, 1 if not lost plus 1 if retransmitted in this episode.
    pub fn pipe(&self) -> u64 { self.counts.pipe }

    /// The counts recomputed from the marks (what the running ones must equal; for tests).
    #[doc(hidden)]
    pub fn recount(&self) -> (u64, u64, bool) {
        let pipe = self.segs.iter().filter(|s| !s.sacked).map(|s| if s.lost { 0 } else { s.len as u64 } + if s.rexmit { s.len as u64 } else { 0 }).sum();
        (pipe, self.segs.iter().filter(|g| g.sacked).count() as u64, self.segs.iter().any(|g| g.lost && !g.sacked))
    }

    /// RFC 6675 §4 NextSeg rule (1) (also used after an RTO): the first lost, unSACKed segment not
    /// yet retransmitted in this episode.
    pub fn next_lost(&self) -> Option<usize> { self.segs.iter().position(|g| g.lost && !g.sacked && !g.rexmit) }

    /// RFC 6675 §4 NextSeg rule (3): an unSACKed, not retransmitted segment below HighSACK.
    pub fn next_rule3(&self) -> Option<usize> {
        let high = self.high_sacked;
        self.segs.iter().position(|g| !g.sacked && !g.rexmit && g.end() <= high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Segments 0..n of one MSS each (segment i covers [1 + i·MSS, 1 + (i+1)·MSS)), sent at i ms.
    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(Seg::new(1 + i * MSS, MSS as u32, false, Time::from_ms(i)));
        }
        b
    }
    fn blk(a: u64, e: u64) -> (u64, u64) { (1 + a * MSS, 1 + e * MSS) }
    fn marks(b: &Scoreboard, f: impl Fn(&Seg) -> bool) -> Vec<usize> { b.iter().enumerate().filter(|(_, g)| f(g)).map(|(i, _)| i).collect() }

    /// The running counts (pipe, SACKed segments, any lost unSACKed) equal a recount from the
    /// marks after every operation of 20,000 drawn at random: sends, cumulative ACKs, SACK blocks,
    /// each way of marking lost, retransmissions through `get_mut`, RTOs and episode ends.
    #[test]
    fn running_counts_equal_a_recount_after_every_change() {
        let mut b = Scoreboard::default();
        let (mut next, mut una) = (1u64, 1u64);
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut draw = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for step in 0..20_000u32 {
            let len = 1 + draw(MSS) as u32;
            match draw(10) {
                0 | 1 => {
                    b.push(Seg::new(next, len, false, Time::ZERO));
                    next += len as u64;
                }
                2 if !b.is_empty() => {
                    let k = draw(b.len() as u64) as usize;
                    una = b.get(k).end();
                    while b.pop_acked(una).is_some() {}
                }
                3 | 4 if !b.is_empty() => {
                    let i = draw(b.len() as u64) as usize;
                    let j = (i + 1 + draw(4) as usize).min(b.len());
                    let blocks = [(b.get(i).seq, b.get(j - 1).end())];
                    b.sack(&blocks, una, |_| {});
                }
                5 if !b.is_empty() => {
                    let i = draw(b.len() as u64) as usize;
                    if draw(2) == 0 { b.mark_lost(i) } else { b.mark_retransmission_lost(i) }
                }
                6 if !b.is_empty() => {
                    let i = draw(b.len() as u64) as usize;
                    let mut g = b.get_mut(i);
                    g.rexmit = true;
                    g.rexmit_nxt = next;
                }
                7 => b.mark_lost_dupthresh(MSS),
                8 => {
                    b.mark_lost_retransmits();
                }
                _ => {
                    if draw(8) == 0 { b.mark_all_lost() } else { b.clear_episode() }
                }
            }
            assert_eq!((b.pipe(), b.sacked_segs(), b.any_lost()), b.recount(), "after step {step}");
        }
    }

    /// RFC 2018 blocks: only whole segments inside a block count; a block below SND.UNA, an empty
    /// block and a repeated block add nothing; HighSACK is the end of the highest SACKed segment.
    #[test]
    fn sack_marks_whole_segments_once() {
        let mut b = board(10);
        let mut seen = vec![];
        // Block [2, 4) plus half of segment 5 (not whole: not SACKed).
        let n = b.sack(&[blk(2, 4), (1 + 5 * MSS, 1 + 5 * MSS + 500)], 1, |g| seen.push(g.seq));
        assert_eq!(n, 2 * MSS);
        assert_eq!(seen, vec![1 + 2 * MSS, 1 + 3 * MSS]);
        assert_eq!(b.high_sacked(), 1 + 4 * MSS);
        assert_eq!(b.sack(&[blk(2, 4), (7, 7), blk(0, 1)], 1 + MSS, |_| {}), 0, "nothing new");
        assert_eq!(b.sack(&[blk(6, 7)], 1, |_| {}), MSS);
        assert_eq!(b.high_sacked(), 1 + 7 * MSS);
    }

    /// RFC 6675 §4 IsLost with DupThresh = 3: segment 0 with SACKed 1, 2 above is not lost (two
    /// segments, 2·SMSS bytes, not more than (3 − 1)·SMSS); a third SACKed segment makes 0 lost.
    /// With SMSS 1000 and 500-byte SACKed segments, bytes never decide before the count does.
    #[test]
    fn is_lost_needs_three_sacked_segments_above() {
        let mut b = board(6);
        b.sack(&[blk(1, 3)], 1, |_| {});
        b.mark_lost_dupthresh(MSS);
        assert!(marks(&b, |g| g.lost).is_empty());
        b.sack(&[blk(4, 5)], 1, |_| {});
        b.mark_lost_dupthresh(MSS);
        assert_eq!(marks(&b, |g| g.lost), vec![0], "3 SACKed above 0; only 1 above 3");
        assert_eq!(b.lost_total(), MSS);
        b.mark_lost_dupthresh(MSS);
        assert_eq!(b.lost_total(), MSS, "a segment is counted lost once");
        // Bytes rule: SMSS 400 makes 2 SACKed segments (2000 B > 800 B) enough.
        let mut b = board(4);
        b.sack(&[blk(2, 4)], 1, |_| {});
        b.mark_lost_dupthresh(400);
        assert_eq!(marks(&b, |g| g.lost), vec![0, 1]);
    }

    /// SetPipe: SACKed octets count 0, lost 0, a retransmission adds its length again.
    #[test]
    fn pipe_counts_rfc6675() {
        let mut b = board(10);
        assert_eq!(b.pipe(), 10 * MSS);
        b.sack(&[blk(3, 6)], 1, |_| {});
        b.mark_lost_dupthresh(MSS);
        // 0, 1, 2 lost; 3..5 SACKed; 6..9 in flight.
        assert_eq!(b.pipe(), 4 * MSS);
        assert_eq!(b.next_lost(), Some(0));
        b.get_mut(0).rexmit = true;
        assert_eq!(b.pipe(), 5 * MSS, "lost and retransmitted: 0 + 1");
        assert_eq!(b.next_lost(), Some(1));
        b.clear_episode();
        assert_eq!(b.pipe(), 4 * MSS);
    }

    /// NextSeg rule (3): only unSACKed, unretransmitted segments below HighSACK qualify.
    #[test]
    fn rule3_stays_below_high_sack() {
        let mut b = board(6);
        b.sack(&[blk(2, 3)], 1, |_| {});
        assert_eq!(b.next_rule3(), Some(0));
        b.get_mut(0).rexmit = true;
        b.get_mut(1).rexmit = true;
        assert_eq!(b.next_rule3(), None, "3..5 lie above HighSACK");
    }

    /// `tcp_mark_lost_retrans`: a retransmission sent when SND.NXT was 1 + 10·MSS is lost once a
    /// SACK covers data above that (segment 10); a SACK up to exactly that point is not enough.
    #[test]
    fn lost_retransmission_detected_by_later_sack() {
        let mut b = board(12);
        b.sack(&[blk(1, 4)], 1, |_| {});
        b.mark_lost_dupthresh(MSS);
        {
            let mut g = b.get_mut(0);
            g.rexmit = true;
            g.rexmit_nxt = 1 + 10 * MSS;
        }
        b.sack(&[blk(1, 10)], 1, |_| {});
        assert_eq!(b.mark_lost_retransmits(), 0);
        b.sack(&[blk(10, 11)], 1, |_| {});
        assert_eq!(b.mark_lost_retransmits(), 1);
        assert_eq!(b.next_lost(), Some(0));
    }

    /// After an RTO: every unSACKed segment lost, retransmission marks cleared; cumulative ACKs
    /// pop whole segments only.
    #[test]
    fn rto_marks_and_cumulative_ack() {
        let mut b = board(5);
        b.sack(&[blk(2, 3)], 1, |_| {});
        b.get_mut(0).rexmit = true;
        b.mark_all_lost();
        assert_eq!(marks(&b, |g| g.lost), vec![0, 1, 3, 4]);
        assert_eq!(b.lost_total(), 4 * MSS);
        assert!(marks(&b, |g| g.rexmit).is_empty());
        assert_eq!(b.pop_acked(1 + MSS + 10).map(|g| g.seq), Some(1));
        assert!(b.pop_acked(1 + MSS + 10).is_none(), "segment 1 only partly acknowledged");
        assert_eq!(b.len(), 4);
    }
}
