//! Adaptive real-time media: an RTP source whose rate a congestion controller sets from receiver
//! feedback (the RMCAT architecture, RFC 8836 §3).
//!
//! - [`encoder`]: the synthetic video (or audio) encoder of RFC 8593 §4, with its lag in following
//!   a new target, frame-size noise and key frames.
//! - [`feedback`]: per-packet receive reports as RFC 8888 or transport-wide CC feedback
//!   (draft-holmer-rmcat-transport-wide-cc-extensions-01) send them, with their sizes on the wire.
//! - [`Controller`]: one trait; GCC ([`gcc`]), SCReAM ([`scream`]), NADA ([`nada`]), one file each
//!   and one line each in [`CONTROLLERS`].
//! - [`agent`]: the sending host (encoder → packetiser → pacer, window gate for self-clocked
//!   controllers) and the receiving host (records arrivals, sends feedback on the reverse path).
//!
//! Controllers see only what a real sender sees: its own send times and sizes and what the reports
//! say (arrival times on the receiver's clock, losses, ECN-CE); they never read the network.
pub mod agent;
pub mod encoder;
pub mod feedback;
pub mod gcc;
pub mod nada;
pub mod scream;
pub mod sender;

use crate::time::Time;

/// The rates a controller works within (bit/s), as the scenario gives them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub min_bps: f64,
    pub max_bps: f64,
    pub start_bps: f64,
}

/// One media packet as a report describes it back to its sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketResult {
    /// Transport-wide sequence number (the media's RTP sequence number here: one stream per flow).
    pub seq: u64,
    pub send: Time,
    /// IP bytes.
    pub size: u32,
    /// Arrival on the receiver's clock; None: reported lost.
    pub recv: Option<Time>,
    pub ce: bool,
}

/// What the sender knows when a report arrives.
#[derive(Clone, Debug)]
pub struct FeedbackInfo<'a> {
    /// The report's packets, in sequence order, each reported for the first time.
    pub packets: &'a [PacketResult],
    /// Round-trip sample: report arrival − send time of the newest packet received − the time the
    /// receiver held that packet before reporting (RFC 8888 §3.1's report timestamp makes this
    /// possible); None when the report holds no received packet.
    pub rtt: Option<Time>,
    /// Bytes sent and not yet reported (received or lost), after this report.
    pub in_flight: u64,
    /// Bytes waiting in the sender's RTP queue (the encoder's output not yet paced out).
    pub queue_bytes: u64,
    /// Age of the oldest packet in the RTP queue.
    pub queue_delay: Time,
}

/// A real-time media congestion controller (the hooks are named after the events a sender sees).
pub trait Controller {
    /// A media packet left the sender (after the pacer and, for windowed controllers, the window).
    fn on_sent(&mut self, _seq: u64, _size: u32, _now: Time) {}
    /// A feedback report arrived.
    fn on_feedback(&mut self, fb: &FeedbackInfo, now: Time);
    /// The rate the encoder should produce (bit/s), within the limits.
    fn target_rate(&self) -> f64;
    /// The rate the pacer sends at (bit/s).
    fn pacing_rate(&self) -> f64 { self.target_rate() * PACING_FACTOR }
    /// Bytes that may be in flight (self-clocked controllers); None: no window.
    fn window(&self) -> Option<u64> { None }
    /// Age beyond which the sender discards its RTP queue and asks the encoder for a key frame;
    /// None: never (the queue only drains).
    fn queue_discard(&self) -> Option<Time> { None }
    /// Takes the flow's priority weight (a scenario's `priority`, > 0; 1 is the default); false
    /// when the controller has no such weight, and the scenario then refuses the key. NADA has one:
    /// RFC 8698 §4.3 eq. 5's PRIO. GCC (draft-ietf-rmcat-gcc-02) and SCReAM (RFC 8298) have none;
    /// RFC 8699's coupled congestion control would give them weighted shares, and is not modelled.
    fn set_priority(&mut self, _weight: f64) -> bool { false }
    /// One controller-specific number for the `rtc_series` table (GCC: the delay-based estimate
    /// A_hat; SCReAM: cwnd in bytes; NADA: the reference rate r_ref); NaN when none.
    fn state(&self) -> f64 { f64::NAN }
}

/// libwebrtc's pacer sends at 2.5 × the target rate (`PacingController`'s default pacing factor),
/// so a frame leaves in well under a frame interval without bursting it at line rate.
pub const PACING_FACTOR: f64 = 2.5;

/// Builds a controller from the flow's limits.
pub type ControllerFactory = fn(&Limits) -> Box<dyn Controller>;

/// Every controller a scenario may name (`cc = "…"` on a media entry), one line each.
pub const CONTROLLERS: &[(&str, ControllerFactory)] = &[
    ("gcc", gcc::build),
    ("scream", scream::build),
    ("nada", nada::build),
];

/// The names in [`CONTROLLERS`], for error messages.
pub fn controller_names() -> Vec<&'static str> { CONTROLLERS.iter().map(|(n, _)| *n).collect() }
