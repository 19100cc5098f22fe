//! Receiver feedback for congestion control: what a report holds and how many bytes it takes.
//!
//! The receiver reports every media packet once, in sequence order, from the first one not yet
//! reported up to the newest received; a gap in between is reported lost (RFC 8888 §3.1's R bit,
//! transport-wide CC's "not received" symbol). Reports go out every `feedback_interval` while
//! packets arrive; a report whose packet is lost or delayed on the reverse path loses or delays
//! that information, as with a real client.
//!
//! The core's packets carry no payload, so a report travels beside its packet: the receiver files
//! it in a [`Mailbox`] under the packet's send instant (one report per receiver per instant), and
//! the sender takes it out when the packet arrives.
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::time::Time;

/// IPv4 (20) + UDP (8).
pub const IP_UDP: u32 = 28;

/// The two feedback formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// RFC 8888 "RTP Control Protocol (RTCP) Feedback for Congestion Control".
    Rfc8888,
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01 (libwebrtc's transport-cc).
    Twcc,
}

impl Format {
    pub const NAMES: &'static [&'static str] = &["rfc8888", "twcc"];
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "rfc8888" => Some(Format::Rfc8888),
            "twcc" => Some(Format::Twcc),
            _ => None,
        }
    }

    /// IP bytes of a report on `n` packets of which `received` arrived, one SSRC.
    pub fn report_size(self, n: u32, received: u32) -> u32 {
        match self {
            // RFC 8888 §3.1: RTCP header with sender SSRC (8), per SSRC: SSRC (4), begin_seq (2),
            // num_reports (2), 2 bytes per packet padded to 32 bits; report timestamp (4).
            Format::Rfc8888 => IP_UDP + 8 + 8 + (2 * n).next_multiple_of(4) + 4,
            // draft-holmer §3.1: RTCP header with both SSRCs (12), base sequence number (2), packet
            // status count (2), reference time (3), feedback packet count (1); status chunks of
            // 2 bytes (a status vector chunk holds 7 two-bit symbols); one receive delta byte per
            // received packet (deltas under 63.75 ms at 250 µs resolution); padded to 32 bits.
            Format::Twcc => IP_UDP + (20 + 2 * n.div_ceil(7) + received).next_multiple_of(4),
        }
    }
}

/// One packet's line in a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub seq: u64,
    /// Arrival time; None: not received when the report was made.
    pub recv: Option<Time>,
    pub ce: bool,
}

/// A report as the receiver made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// When the receiver sent it (RFC 8888's report timestamp).
    pub at: Time,
    pub packets: Vec<Status>,
}

/// Reports in transit, by send instant.
pub type Mailbox = Rc<RefCell<BTreeMap<u64, Report>>>;

/// Reports older than this are dropped from a mailbox when a newer one is collected (their packet
/// was lost on the reverse path).
pub const STALE: Time = Time::from_secs(10);

/// The receiver's record of arrivals not yet reported.
#[derive(Debug, Default)]
pub struct Collector {
    /// First sequence number not yet reported.
    next: u64,
    /// Arrivals at or after `next`, by sequence number.
    pending: BTreeMap<u64, (Time, bool)>,
}

impl Collector {
    pub fn on_arrival(&mut self, seq: u64, at: Time, ce: bool) {
        if seq >= self.next {
            self.pending.entry(seq).or_insert((at, ce));
        }
        // an arrival already reported lost stays lost: each packet is reported once
    }

    /// The report of everything from the first unreported packet up to the newest arrival; None
    /// when nothing arrived since the last report.
    pub fn report(&mut self, at: Time) -> Option<Report> {
        let (&last, _) = self.pending.last_key_value()?;
        let packets = (self.next..=last)
            .map(|seq| match self.pending.get(&seq) {
                Some(&(t, ce)) => Status { seq, recv: Some(t), ce },
                None => Status { seq, recv: None, ce: false },
            })
            .collect();
        self.pending.clear();
        self.next = last + 1;
        Some(Report { at, packets })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_formats() {
        // RFC 8888, 10 packets: 28 + 8 + 8 + 20 + 4 = 68; 11 packets: 22 B of statuses pad to 24
        assert_eq!(Format::Rfc8888.report_size(10, 10), 68);
        assert_eq!(Format::Rfc8888.report_size(11, 11), 72);
        // transport-cc, 10 packets all received: 20 + 2·2 chunks + 10 deltas = 34 → 36, + 28
        assert_eq!(Format::Twcc.report_size(10, 10), 64);
        // 7 packets, 3 received: 20 + 2 + 3 = 25 → 28, + 28
        assert_eq!(Format::Twcc.report_size(7, 3), 56);
    }

    #[test]
    fn gaps_are_reported_lost_once() {
        let mut c = Collector::default();
        assert!(c.report(Time::from_ms(1)).is_none());
        c.on_arrival(0, Time::from_ms(10), false);
        c.on_arrival(2, Time::from_ms(12), true);
        let r = c.report(Time::from_ms(20)).unwrap();
        assert_eq!(
            r.packets,
            vec![
                Status { seq: 0, recv: Some(Time::from_ms(10)), ce: false },
                Status { seq: 1, recv: None, ce: false },
                Status { seq: 2, recv: Some(Time::from_ms(12)), ce: true },
            ]
        );
        // seq 1 arrives late (reordered): already reported, not again
        c.on_arrival(1, Time::from_ms(21), false);
        assert!(c.report(Time::from_ms(30)).is_none());
        c.on_arrival(3, Time::from_ms(31), false);
        assert_eq!(c.report(Time::from_ms(40)).unwrap().packets.len(), 1);
    }
}
