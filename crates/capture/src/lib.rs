//! Capture analysis: pcap/pcapng in, jitterlab's shared tables out. Streaming; no Python.
//!
//! - [`reader`]: pcap/pcapng (gzip or not) as a stream of borrowed frames.
//! - [`wire`]: checked zero-copy header views and the frame decoder.
//! - [`rtp`], [`tcp`]: per-stream RTP statistics, per-connection TCP state.
//! - [`analyze`]: a sender/receiver capture pair to media_packets, tcp_flows and a runs row.
//! - [`writer`]: a pcap writer for simulated runs and tests.
//! - [`error`]: the crate's one error type; every file-content error carries a byte offset.
pub mod analyze;
pub mod error;
pub mod reader;
pub mod rtp;
pub mod tcp;
pub mod wire;
pub mod writer;

pub use analyze::{analyze, Analysis, MediaSpec, Options};
pub use error::CaptureError;
pub use reader::{CaptureReader, Frame};
pub use writer::{Endpoints, PcapWriter, RtpPacket, TcpOptions, TcpPacket, UdpPacket};
