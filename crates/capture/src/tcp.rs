//! TCP flow tracking at one capture point: per connection the SYN time, first and last data,
//! payload bytes, data segments, retransmissions and when the last data byte was acknowledged.
//! State is a few dozen bytes per connection, never per segment.
use std::collections::HashMap;

use crate::wire::Addr;

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;

/// Half of a connection: the data one endpoint sends. Sequence numbers are kept relative to the
/// ISN and extended to 64 bits (RFC 9293 §3.4 numbers wrap at 2^32).
#[derive(Clone, Debug, Default)]
pub struct Half {
    pub isn: Option<u32>,
    pub syn_ns: Option<i64>,
    /// Highest relative sequence number sent + 1 (data only; the SYN occupies 0).
    pub high: u64,
    pub first_data_ns: Option<i64>,
    pub last_data_ns: Option<i64>,
    pub segments: u64,
    pub retransmits: u64,
    pub ce: u64,
    /// Highest acknowledgment the other side sent for this half, relative.
    pub acked: u64,
    /// When the other side first acknowledged everything up to `covered` (= `high` if finished).
    pub covered: u64,
    pub covered_ns: Option<i64>,
    /// New data segments sent before the first acknowledgment of data arrived: the initial flight.
    pub initial_flight: u64,
    pub data_acked: bool,
}

impl Half {
    /// Extends a 32-bit sequence number relative to the ISN, near `reference`.
    fn rel(&self, seq: u32, reference: u64) -> u64 {
        let isn = self.isn.unwrap_or(0);
        let r32 = seq.wrapping_sub(isn);
        let d = r32.wrapping_sub(reference as u32) as i32 as i64;
        (reference as i64 + d).max(0) as u64
    }
    pub fn bytes(&self) -> u64 { self.high.saturating_sub(1) }
}

#[derive(Clone, Debug)]
pub struct Flow {
    /// Endpoints as first seen: half 0 sends from `a`.
    pub a: (Addr, u16),
    pub b: (Addr, u16),
    pub half: [Half; 2],
    pub first_ns: i64,
    pub last_ns: i64,
    pub resets: u64,
}

impl Flow {
    /// Index of the half that carried more data (the download in the PAM 2013 setting).
    pub fn data_half(&self) -> usize { if self.half[1].high > self.half[0].high { 1 } else { 0 } }
    /// Time the last data byte was acknowledged, if it was.
    pub fn end_ns(&self) -> Option<i64> {
        let h = &self.half[self.data_half()];
        if h.high > 1 && h.covered >= h.high { h.covered_ns } else { None }
    }
}

/// An address and port.
pub type Endpoint = (Addr, u16);

/// All connections of one capture, in order of first appearance.
#[derive(Default, Debug)]
pub struct TcpTracker {
    /// Both endpoints, the smaller first, so either direction finds the connection.
    index: HashMap<(Endpoint, Endpoint), u32>,
    pub flows: Vec<Flow>,
}

pub struct Segment {
    pub ts_ns: i64,
    pub src: (Addr, u16),
    pub dst: (Addr, u16),
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub payload_len: u32,
    pub ecn: u8,
}

impl TcpTracker {
    pub fn on_segment(&mut self, s: &Segment) {
        let key = if s.src <= s.dst { (s.src, s.dst) } else { (s.dst, s.src) };
        let next = self.flows.len() as u32;
        let idx = *self.index.entry(key).or_insert(next) as usize;
        if idx == self.flows.len() {
            self.flows.push(Flow {
                a: s.src,
                b: s.dst,
                half: [Half::default(), Half::default()],
                first_ns: s.ts_ns,
                last_ns: s.ts_ns,
                resets: 0,
            });
        }
        let f = &mut self.flows[idx];
        f.last_ns = s.ts_ns;
        let d = if s.src == f.a { 0 } else { 1 };
        let (h0, h1) = f.half.split_at_mut(1);
        let (me, other) = if d == 0 { (&mut h0[0], &mut h1[0]) } else { (&mut h1[0], &mut h0[0]) };
        if s.flags & RST != 0 {
            f.resets += 1;
        }
        if s.flags & SYN != 0 {
            if me.isn.is_none() || me.high <= 1 {
                me.isn = Some(s.seq);
                me.high = me.high.max(1);
            }
            if me.syn_ns.is_none() {
                me.syn_ns = Some(s.ts_ns);
            }
        }
        if s.payload_len > 0 {
            if me.isn.is_none() {
                // Connection already open when the capture began: count from the first byte seen.
                me.isn = Some(s.seq.wrapping_sub(1));
                me.high = 1;
            }
            let start = me.rel(s.seq, me.high);
            let end = start + s.payload_len as u64;
            me.segments += 1;
            if s.ecn == 3 {
                me.ce += 1;
            }
            if start < me.high {
                // Starts below data already sent: a retransmission (RFC 9293 §3.10.7.4 would
                // call it a duplicate at the receiver). Partial overlaps count too.
                me.retransmits += 1;
            } else if !me.data_acked {
                me.initial_flight += 1;
            }
            me.high = me.high.max(end);
            me.first_data_ns.get_or_insert(s.ts_ns);
            me.last_data_ns = Some(s.ts_ns);
        }
        if s.flags & ACK != 0 && other.isn.is_some() {
            let a = other.rel(s.ack, other.acked.max(1));
            if a > other.acked {
                other.acked = a;
            }
            if other.high > 1 && a > 1 {
                other.data_acked = true;
            }
            if other.high > 1 && a >= other.high && other.covered < other.high {
                other.covered = other.high;
                other.covered_ns = Some(s.ts_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::v4_mapped;

    fn ep(last: u8, port: u16) -> (Addr, u16) { (v4_mapped([10, 0, 0, last]), port) }

    #[test]
    fn handshake_transfer_retransmit_and_final_ack() {
        let (c, s) = (ep(2, 40000), ep(1, 80));
        let mut t = TcpTracker::default();
        let mut seg = |ts, src, dst, seq, ack, flags, len| {
            t.on_segment(&Segment { ts_ns: ts, src, dst, seq, ack, flags, payload_len: len, ecn: 0 });
        };
        // Server ISN near the wrap, so data crosses 2^32.
        let isn = u32::MAX - 1000;
        seg(0, c, s, 7, 0, SYN, 0);
        seg(10, s, c, isn, 8, SYN | ACK, 0);
        seg(20, c, s, 8, isn.wrapping_add(1), ACK, 0);
        for i in 0..3u32 {
            seg(30 + i as i64, s, c, isn.wrapping_add(1 + 1000 * i), 8, ACK, 1000);
        }
        seg(40, c, s, 8, isn.wrapping_add(1001), ACK, 0);
        seg(50, s, c, isn.wrapping_add(1001), 8, ACK, 1000); // retransmission
        seg(60, s, c, isn.wrapping_add(3001), 8, ACK, 500);
        seg(70, c, s, 8, isn.wrapping_add(3501), ACK, 0);
        let f = &t.flows[0];
        assert_eq!(f.data_half(), 1);
        let h = &f.half[1];
        assert_eq!((h.bytes(), h.segments, h.retransmits, h.initial_flight), (3500, 5, 1, 3));
        assert_eq!((f.half[0].syn_ns, h.first_data_ns, h.last_data_ns), (Some(0), Some(30), Some(60)));
        assert_eq!(f.end_ns(), Some(70));
    }

    #[test]
    fn unfinished_transfer_has_no_end() {
        let (c, s) = (ep(2, 40001), ep(1, 80));
        let mut t = TcpTracker::default();
        t.on_segment(&Segment { ts_ns: 5, src: s, dst: c, seq: 100, ack: 1, flags: ACK, payload_len: 100, ecn: 3 });
        t.on_segment(&Segment { ts_ns: 6, src: s, dst: c, seq: 200, ack: 1, flags: ACK, payload_len: 100, ecn: 0 });
        t.on_segment(&Segment { ts_ns: 7, src: c, dst: s, seq: 1, ack: 200, flags: ACK, payload_len: 0, ecn: 0 });
        let f = &t.flows[0];
        assert_eq!((f.half[0].bytes(), f.half[0].ce, f.end_ns()), (200, 1, None));
    }
}
