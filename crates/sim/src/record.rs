//! The output tables of design.md, kept columnar while the run goes (no per-packet objects), so the
//! bindings can hand them to numpy/Arrow as they are.
use crate::qdisc::QueueStats;

/// Sentinel for "null" in i64 time columns (a not-received packet, a flow that never started).
pub const NULL_NS: i64 = i64::MIN;
/// Sentinel for "no queue" in `lost_where`.
pub const NOT_LOST: i32 = -1;

/// `media_packets`: one row per media packet sent.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct MediaTable {
    pub flow_id: Vec<u32>,
    pub seq: Vec<u64>,
    pub send_ns: Vec<i64>,
    /// NULL_NS when lost.
    pub recv_ns: Vec<i64>,
    pub size: Vec<u32>,
    /// Channel index that dropped it, NOT_LOST otherwise.
    pub lost_where: Vec<i32>,
    pub ce: Vec<bool>,
}

impl MediaTable {
    pub fn push(&mut self, flow: u32, seq: u64, send_ns: i64, size: u32) -> u32 {
        self.flow_id.push(flow);
        self.seq.push(seq);
        self.send_ns.push(send_ns);
        self.recv_ns.push(NULL_NS);
        self.size.push(size);
        self.lost_where.push(NOT_LOST);
        self.ce.push(false);
        (self.flow_id.len() - 1) as u32
    }
    pub fn len(&self) -> usize { self.flow_id.len() }
    pub fn is_empty(&self) -> bool { self.flow_id.is_empty() }
    /// Room for `n` more rows in every column.
    pub fn reserve(&mut self, n: usize) {
        self.flow_id.reserve(n);
        self.seq.reserve(n);
        self.send_ns.reserve(n);
        self.recv_ns.reserve(n);
        self.size.reserve(n);
        self.lost_where.reserve(n);
        self.ce.reserve(n);
    }
}

/// `queue_samples`.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct QueueSamples {
    pub t_ns: Vec<i64>,
    /// Channel index (names in `Tables::channels`).
    pub queue: Vec<u32>,
    pub backlog_pkts: Vec<u64>,
    pub backlog_bytes: Vec<u64>,
    /// Cumulative drops and marks of the queue at that instant.
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
}

/// `tcp_flows.size` of a transfer without an end.
pub const NULL_SIZE: i64 = -1;

/// `tcp_flows`: one row per TCP connection, written by the TCP agents when the run ends.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct TcpFlowsTable {
    pub flow_id: Vec<u32>,
    pub role: Vec<String>,
    pub iw: Vec<u32>,
    pub cc: Vec<String>,
    pub syn_ns: Vec<i64>,
    pub first_data_ns: Vec<i64>,
    /// Last byte acknowledged; NULL_NS when the transfer did not finish in the run.
    pub end_ns: Vec<i64>,
    /// Payload delivered in order to the receiver by the end of the run, and payload acknowledged.
    pub bytes: Vec<u64>,
    pub bytes_acked: Vec<u64>,
    /// Payload the transfer was to move; NULL_SIZE for an unlimited one (FTP).
    pub size: Vec<i64>,
    pub segments_sent: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub drops: Vec<u64>,
    pub ecn_marks: Vec<u64>,
    pub timeouts: Vec<u64>,
}

/// `tcp_series` (optional, `series = true` on a TCP flow): the sender's state after every ACK,
/// timeout and transmission burst, for plots and tests. `ssthresh` is u64::MAX/4 while unset
/// (RFC 5681's "arbitrarily high"); `srtt_ns` is NULL_NS before the first RTT sample; `inflight`
/// is RFC 6675's pipe (FlightSize outside recovery).
#[derive(Default, Debug, Clone, PartialEq)]
pub struct TcpSeries {
    pub t_ns: Vec<i64>,
    pub flow_id: Vec<u32>,
    pub cwnd: Vec<u64>,
    pub ssthresh: Vec<u64>,
    pub srtt_ns: Vec<i64>,
    pub inflight: Vec<u64>,
}

impl TcpSeries {
    pub fn len(&self) -> usize { self.t_ns.len() }
    pub fn is_empty(&self) -> bool { self.t_ns.is_empty() }
}

/// Per-flow packet accounting kept by the engine (any packet type), for conservation checks and for
/// the `drops` column of `tcp_flows`.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowCounters {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    pub ce_delivered: u64,
}

/// One channel's description and end-of-run counters.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelInfo {
    pub name: String,
    pub from: String,
    pub to: String,
    pub qdisc: String,
    pub rate_bps: u64,
    pub delay_ns: i64,
    pub stats: QueueStats,
    pub backlog_pkts: u64,
    pub backlog_bytes: u64,
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub lost_pkts: u64,
    pub lost_bytes: u64,
}

/// A flow's description (for the tables' readers).
#[derive(Debug, Clone, PartialEq)]
pub struct FlowInfo {
    pub flow_id: u32,
    pub name: String,
    pub kind: String,
}

/// One packet seen by a tap (a capture point on a node's interface, like tcpdump on a host).
#[derive(Debug, Clone, PartialEq)]
pub struct TapRecord {
    pub node: u32,
    pub t_ns: i64,
    /// true: the node sent it (egress); false: the node received it.
    pub outgoing: bool,
    pub pkt: crate::packet::Packet,
}

/// `rtc_frames`: one row per frame an adaptive media source encoded (RFC 8593's encoder model).
/// The frame's packets are `first_seq .. first_seq + packets` of the flow in `media_packets`.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct RtcFrames {
    pub flow_id: Vec<u32>,
    pub frame: Vec<u64>,
    /// When the encoder produced the frame (the capture instant).
    pub capture_ns: Vec<i64>,
    /// Payload bytes (RTP headers not counted).
    pub bytes: Vec<u64>,
    pub packets: Vec<u32>,
    pub first_seq: Vec<u64>,
    pub key: Vec<bool>,
}

impl RtcFrames {
    pub fn len(&self) -> usize { self.flow_id.len() }
    pub fn is_empty(&self) -> bool { self.flow_id.is_empty() }
}

/// `rtc_series`: an adaptive source's controller after every feedback report it received.
#[derive(Default, Debug, Clone, PartialEq)]
pub struct RtcSeries {
    pub t_ns: Vec<i64>,
    pub flow_id: Vec<u32>,
    /// The controller's target for the encoder, and the rate the encoder produces (bit/s).
    pub target_bps: Vec<f64>,
    pub encoder_bps: Vec<f64>,
    /// The sender's RTT sample from this report (NULL_NS: none).
    pub rtt_ns: Vec<i64>,
    pub in_flight_bytes: Vec<u64>,
    /// Bytes waiting in the sender's RTP queue (behind the pacer or the window).
    pub queue_bytes: Vec<u64>,
    /// One controller-specific number (GCC: A_hat in bit/s; SCReAM: cwnd in bytes; NADA: r_ref).
    pub state: Vec<f64>,
}

impl RtcSeries {
    pub fn len(&self) -> usize { self.t_ns.len() }
    pub fn is_empty(&self) -> bool { self.t_ns.is_empty() }
}

/// Everything a run produces.
#[derive(Default, Clone)]
pub struct Tables {
    pub media: MediaTable,
    pub queue_samples: QueueSamples,
    pub tcp_flows: TcpFlowsTable,
    pub tcp_series: TcpSeries,
    pub channels: Vec<ChannelInfo>,
    pub flows: Vec<FlowInfo>,
    pub flow_counters: Vec<FlowCounters>,
    /// Arrival of the competing TCP traffic (first SYN) and end of the last TCP flow; NULL_NS if none.
    pub tcp_start_ns: i64,
    pub tcp_end_ns: i64,
    /// Whole-run accounting: sent = delivered + dropped + in_flight (bytes and packets).
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    pub in_flight_pkts: u64,
    pub in_flight_bytes: u64,
    pub events: u64,
    pub end_ns: i64,
    /// Packets seen at tapped nodes, in time order (empty unless taps were asked for).
    pub taps: Vec<TapRecord>,
    /// Node names by node id.
    pub nodes: Vec<String>,
    /// Snap length of the pcap export (0 = default 65535).
    pub pcap_snaplen: u32,
    /// Adaptive media only (empty otherwise).
    pub rtc_frames: RtcFrames,
    pub rtc_series: RtcSeries,
}

/// The derived form, with the adaptive-media tables shown only when a run has them: the golden
/// digests hash this text, and runs without adaptive media must keep theirs.
impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Tables");
        d.field("media", &self.media)
            .field("queue_samples", &self.queue_samples)
            .field("tcp_flows", &self.tcp_flows)
            .field("tcp_series", &self.tcp_series)
            .field("channels", &self.channels)
            .field("flows", &self.flows)
            .field("flow_counters", &self.flow_counters)
            .field("tcp_start_ns", &self.tcp_start_ns)
            .field("tcp_end_ns", &self.tcp_end_ns)
            .field("sent_pkts", &self.sent_pkts)
            .field("sent_bytes", &self.sent_bytes)
            .field("delivered_pkts", &self.delivered_pkts)
            .field("delivered_bytes", &self.delivered_bytes)
            .field("dropped_pkts", &self.dropped_pkts)
            .field("dropped_bytes", &self.dropped_bytes)
            .field("in_flight_pkts", &self.in_flight_pkts)
            .field("in_flight_bytes", &self.in_flight_bytes)
            .field("events", &self.events)
            .field("end_ns", &self.end_ns)
            .field("taps", &self.taps)
            .field("nodes", &self.nodes)
            .field("pcap_snaplen", &self.pcap_snaplen);
        if !self.rtc_frames.is_empty() || !self.rtc_series.is_empty() {
            d.field("rtc_frames", &self.rtc_frames).field("rtc_series", &self.rtc_series);
        }
        d.finish()
    }
}

impl Tables {
    pub fn counters_mut(&mut self, flow: u32) -> &mut FlowCounters {
        let i = flow as usize;
        if self.flow_counters.len() <= i {
            self.flow_counters.resize(i + 1, FlowCounters::default());
        }
        &mut self.flow_counters[i]
    }
    pub fn counters(&self, flow: u32) -> FlowCounters { self.flow_counters.get(flow as usize).copied().unwrap_or_default() }

    /// Checks sent = delivered + dropped + in flight, in packets and bytes.
    pub fn check_conservation(&self) -> Result<(), String> {
        if self.sent_bytes != self.delivered_bytes + self.dropped_bytes + self.in_flight_bytes {
            return Err(format!("bytes: sent {} != delivered {} + dropped {} + in flight {}", self.sent_bytes, self.delivered_bytes, self.dropped_bytes, self.in_flight_bytes));
        }
        if self.sent_pkts != self.delivered_pkts + self.dropped_pkts + self.in_flight_pkts {
            return Err(format!("packets: sent {} != delivered {} + dropped {} + in flight {}", self.sent_pkts, self.delivered_pkts, self.dropped_pkts, self.in_flight_pkts));
        }
        Ok(())
    }
}
