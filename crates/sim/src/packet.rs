//! Packets as the simulator moves them. A packet lives in the [`PacketPool`] while it is in the
//! network; events and queues carry its [`PktId`] (4 bytes) instead of the packet itself.

pub type NodeId = u32;
pub type AgentId = u32;
pub type ChanId = u32;

/// The two ECN bits of the IP header (RFC 3168 §5). ECT(1) is the L4S identifier (RFC 9331):
/// scalable senders (DCTCP, Prague) set it and an L4S-aware queue (DualPI2) classifies by it.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

impl Ecn {
    /// ECN-capable transport: a queue may mark instead of dropping (RFC 3168 §6.1.1.1).
    pub fn is_ect(self) -> bool { !matches!(self, Ecn::NotEct) }
    /// The two bits as they appear in the IP header's TOS byte (RFC 3168 §5).
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }
    /// The codepoint of the two bits `b & 3`.
    pub fn from_bits(b: u8) -> Ecn {
        match b & 3 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// TCP flag bits (RFC 9293 §3.1, RFC 3168 §6.1).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Up to four SACK blocks as [start, end) byte ranges (RFC 2018 allows 4 without timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// A TCP segment header. Sequence numbers are 64-bit and never wrap inside a run; the pcap writer
/// folds them to 32 bits. `wnd` is the advertised window in bytes, already scaled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u64,
    pub ack: u64,
    pub flags: u8,
    pub wnd: u64,
    /// Payload bytes carried.
    pub len: u32,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub nsack: u8,
    /// Window scale option (SYN only), RFC 7323 §2.
    pub wscale: Option<u8>,
    /// Timestamps option (RFC 7323 §3): (TSval, TSecr), milliseconds as Linux's `TCP_TS_HZ`.
    pub ts: Option<(u32, u32)>,
}

/// What a packet carries above IP.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// RTP over UDP: `seq` is the extended RTP sequence number, `row` the packet's row in the
    /// media table (so a drop anywhere can be attributed without a lookup).
    Media { seq: u64, row: u32, ssrc: u32, src_port: u16, dst_port: u16 },
    Tcp(TcpHeader),
    /// Filler traffic with no transport semantics.
    Raw,
    /// An ICMP-like echo request or reply of the cake-autorate controller (`crate::cake_autorate`),
    /// numbered so that its reply finds the request's send time.
    Probe { seq: u64 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Flow id as it appears in the output tables.
    pub flow: u32,
    pub src: NodeId,
    pub dst: NodeId,
    /// Agent at `dst` that receives the packet.
    pub dst_agent: AgentId,
    /// Bytes on the wire at the IP layer (IP header included), as in the papers' "80-byte IP packets".
    pub size: u32,
    pub ecn: Ecn,
    /// When the source handed the packet to the network.
    pub sent: crate::Time,
    pub body: Body,
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct PktId(pub u32);

/// Slab of packets in flight. Slots are reused, so ids are only valid while the packet lives.
#[derive(Default, Debug)]
pub struct PacketPool {
    slots: Vec<Option<Packet>>,
    free: Vec<u32>,
    live: usize,
    live_bytes: u64,
}

impl PacketPool {
    pub fn new() -> Self { Self::default() }
    pub fn insert(&mut self, p: Packet) -> PktId {
        self.live += 1;
        self.live_bytes += p.size as u64;
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = Some(p);
            PktId(i)
        } else {
            self.slots.push(Some(p));
            PktId((self.slots.len() - 1) as u32)
        }
    }
    /// Panics if `id` is not live: a stale id is a broken invariant of the engine, not a user error.
    pub fn get(&self, id: PktId) -> &Packet { self.slots[id.0 as usize].as_ref().expect("stale packet id") }
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet { self.slots[id.0 as usize].as_mut().expect("stale packet id") }
    pub fn remove(&mut self, id: PktId) -> Packet {
        let p = self.slots[id.0 as usize].take().expect("stale packet id");
        self.free.push(id.0);
        self.live -= 1;
        self.live_bytes -= p.size as u64;
        p
    }
    /// Frees packet `id` without moving it out (cheaper than `remove` when it is not needed).
    pub fn free(&mut self, id: PktId) {
        let slot = &mut self.slots[id.0 as usize];
        let size = slot.as_ref().expect("stale packet id").size;
        *slot = None;
        self.free.push(id.0);
        self.live -= 1;
        self.live_bytes -= size as u64;
    }
    /// Packets currently in the network (queued, on a wire or in a delay line).
    pub fn live(&self) -> usize { self.live }
    pub fn live_bytes(&self) -> u64 { self.live_bytes }
}
