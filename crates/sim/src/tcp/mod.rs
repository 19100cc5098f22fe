//! TCP for the simulator: a sender and a receiver as explicit state machines (RFC 9293 state
//! names), congestion control behind a trait ([`cc`]), RFC 6298 timers ([`rtt`]), SACK loss
//! recovery (RFC 6675) or NewReno (RFC 6582), delayed ACKs, window scaling, ECN (RFC 3168) and a
//! receive-window hook for hosts ([`WindowPolicy`]). The protocol cores ([`sender::Sender`],
//! [`receiver::Receiver`]) are pure: they take a segment and the time and return segments to send
//! and timer requests, so they can be driven by a test harness without the engine; [`agent`] wires
//! them to the engine and [`workload`] builds the traffic kinds `bulk`, `web` and `ftp`.
//!
//! One connection moves data in one direction (sender → receiver), as every workload here does.
//! Sequence numbers are 64-bit: the SYN is 0, payload bytes are 1..=size, the FIN follows them.
//! Docs: `docs/tcp.md`.
use std::cell::RefCell;
use std::rc::Rc;

use crate::time::Time;

pub mod agent;
pub mod cc;
pub mod ecn_feedback;
pub mod ecn;
pub mod moderation;
pub mod options;
pub mod profile;
pub mod rack;
pub mod rate;
pub mod rcvbuf;
pub mod receiver;
pub mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod timers;
pub mod tsq;
pub mod workload;

pub use agent::{add_connection, ConnSpec, Connection, TcpReceiverAgent, TcpSenderAgent};
pub use moderation::{ModerationConfig, Moderator};

/// IPv4 (20) + TCP (20) header bytes added to every segment's payload on the wire (no options are
/// counted, as in ns-2's `tcpip_base_hdr_size_`, except the timestamps option below).
pub const HEADER_BYTES: u32 = 40;
/// RFC 7323 §3.2: the timestamps option is 10 bytes, 12 with the two NOPs that align it
/// (Linux's `TCPOLEN_TSTAMP_ALIGNED`), on every segment once negotiated.
pub const TS_OPTION_BYTES: u32 = 12;

/// IP bytes of a TCP segment with `hdr`: headers, the timestamps option if present, payload.
pub fn wire_size(hdr: &crate::packet::TcpHeader) -> u32 { HEADER_BYTES + if hdr.ts.is_some() { TS_OPTION_BYTES } else { 0 } + hdr.len }
/// RFC 5681 §3.2 / RFC 6675 §2: DupThresh.
pub const DUP_THRESH: u32 = 3;
/// RFC 7323 §2.3: the largest window scale shift.
pub const MAX_WSCALE: u8 = 14;

/// Loss recovery algorithm.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 6675 conservative SACK-based loss recovery (receiver sends SACK blocks, RFC 2018).
    Sack,
    /// RFC 6582 NewReno (no SACK option).
    NewReno,
}

/// What F-RTO does when it finds a timeout spurious (Linux's `net.ipv4.tcp_frto_response`, which
/// 3.10's rewrite removed).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrtoResponse {
    /// Undo the timeout: cwnd and ssthresh back to their values before it (3.10+:
    /// `tcp_process_loss` → `tcp_try_undo_loss`; before 3.10, `tcp_frto_response = 2`).
    Undo,
    /// Keep the timeout's reduction (`tcp_frto_response = 0`, the default until 3.10:
    /// `tcp_ratehalving_spur_to_response` → `tcp_enter_cwr(sk, 0)`): ssthresh stays as the timeout
    /// set it, and cwnd ends at min(packets in flight + 1, ssthresh).
    RateHalving,
}

/// Everything configurable about one connection (both ends read it).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Sender maximum segment size: payload bytes per full segment.
    pub mss: u32,
    /// Initial window in segments (RFC 3390: 3 for MSS 1095..2190; RFC 6928: 10).
    pub iw: u32,
    /// Congestion control: a name in [`cc::registry`].
    pub cc: String,
    /// The algorithm's own options as its registration read them from the scenario entry; None:
    /// its defaults ([`cc::build`]).
    pub cc_params: Option<cc::CcOptions>,
    pub recovery: Recovery,
    /// RFC 3042 limited transmit.
    pub limited_transmit: bool,
    /// RFC 6937 Proportional Rate Reduction during SACK recovery (Linux's since 3.2) instead of
    /// RFC 6675's "cwnd = ssthresh, send while cwnd − pipe ≥ SMSS".
    pub prr: bool,
    /// Detect lost retransmissions from SACK information during recovery, as Linux's
    /// `tcp_mark_lost_retrans` (an extension of RFC 6675, whose sender waits for the RTO).
    pub lost_retransmit: bool,
    /// RACK loss detection (RFC 8985, Linux's default `net.ipv4.tcp_recovery = 1`, `rack.rs`) on
    /// SACK connections: time-based instead of RFC 6675's DupThresh / IsLost; Linux's
    /// lost-retransmission detection is RACK's then (`lost_retransmit` is not read). false: RFC
    /// 6675 as written (ns-2's SACK sender).
    pub rack: bool,
    /// Tail loss probes (RFC 8985 §7, Linux's `net.ipv4.tcp_early_retrans = 3`) on SACK
    /// connections.
    pub tlp: bool,
    /// At a retransmission timeout, with RACK, spare the segments sent within RACK.rtt of now
    /// (not yet due by RACK's clock) from the "every unSACKed segment is lost" rule and set cwnd
    /// to what is still in flight plus one segment, as Linux's `tcp_timeout_mark_lost` and
    /// `tcp_enter_loss` (`net/ipv4/tcp_input.c`). false: RFC 6675 §5.1, every unSACKed segment
    /// lost, cwnd = 1 SMSS. Read only with `rack`.
    pub rto_rack: bool,
    /// F-RTO (RFC 5682 §3 with SACK, Linux's `net.ipv4.tcp_frto = 2`, `tcp_process_loss`) on SACK
    /// connections: after the timeout's retransmission is acknowledged, send new data instead of
    /// more retransmissions, and declare the timeout spurious (undo it) if the next ACK covers
    /// data sent before the timeout and never retransmitted.
    pub frto: bool,
    /// F-RTO's response to a spurious timeout (read only with `frto`).
    pub frto_response: FrtoResponse,
    /// Undo a timeout whose retransmission was not needed (Linux's `tcp_try_undo_loss` /
    /// `tcp_try_undo_recovery` in the Loss state): on a SACK connection with the timestamps
    /// option, an ACK whose TSecr is older than the first retransmission of the episode
    /// (`tcp_packet_delayed`) restores cwnd and ssthresh and returns to Open. Linux's other
    /// evidence, DSACK, is not modelled (the receiver sends none).
    pub loss_undo: bool,
    /// TCP timestamps option (RFC 7323 §3, Linux's `net.ipv4.tcp_timestamps = 1`): 12 option bytes
    /// on every segment (so MSS 1460 carries 1448 payload bytes), TSval/TSecr echo, RTT samples
    /// from TSecr where Karn's rule forbids the ACK timing. Used when both ends set it.
    pub timestamps: bool,
    /// Lower bound of RTO (RFC 6298 §2.4: 1 s; Linux: 200 ms).
    pub min_rto: Time,
    /// Compute RTO as Linux does: SRTT + max(4·RTTVAR, min_rto) (see [`rtt::RttEstimator::linux`]).
    pub rto_linux: bool,
    /// Delayed-ACK timer; None = ACK every segment (RFC 5681 §4.2 allows up to 500 ms; Linux 40 ms).
    pub delack: Option<Time>,
    /// Linux's quick-ACK mode: after the first data segment and after out-of-order data, ACK the
    /// next min(rcvbuf/(2·MSS), quickack) segments at once. Linux: 16 (TCP_MAX_QUICKACKS);
    /// 0 = RFC 5681's delayed ACKs only (as ns-2).
    pub quickack: u32,
    /// Receive buffer in bytes: the most the receiver will advertise.
    pub rcvbuf: u64,
    /// The receive buffer as Linux manages it (`rcvbuf.rs`: SO_RCVBUF, scaling ratio, window
    /// rounding, autotuning); None = a fixed window of `rcvbuf` bytes (ns-2's `window_`).
    pub linux_rcv: Option<rcvbuf::LinuxRcvConfig>,
    /// Offer the window scale option (RFC 7323 §2).
    pub wscale: bool,
    /// The receiver's shift when scaling is on; None = the smallest that covers `rcvbuf`.
    pub wscale_shift: Option<u8>,
    /// Negotiate ECN (RFC 3168 §6.1.1).
    pub ecn: bool,
    /// With `ecn`, send ECT(1), the L4S identifier (RFC 9331 §4.1), instead of ECT(0): DualPI2
    /// then queues the flow in its L queue (scalable congestion controls: DCTCP, Prague).
    pub ect1: bool,
    /// Pace segments at the congestion controller's pacing rate.
    pub pacing: bool,
    /// The "paced IW" mitigation: the initial window's segments leave evenly spread over one SYN
    /// RTT (SRTT/IW apart), and pacing ends with the first ACK of data. Linux has no such switch:
    /// its `pacing` leaves the first ten segments unpaced (sch_fq), so it does not pace the IW.
    pub pace_iw: bool,
    /// CUBIC's hybrid slow start as in Linux (`tcp_cubic.c` `hystart = 1`, the default); ignored
    /// by Reno.
    pub hystart: bool,
    /// HyStart counts rounds below `hystart_low_window` too, as Linux since early 2025 (mainline
    /// and stable, "tcp_cubic: fix incorrect HyStart round start detection"); false: as Linux from
    /// 6.1 (4e1fddc98d25) up to that fix.
    pub hystart_round_fix: bool,
    /// CUBIC grows cwnd by at least 5 % per RTT until its first window reduction, as Linux's
    /// `bictcp_update` (`cnt` at most 20 while `last_max_cwnd` is 0, since 2.6); false: RFC 9438's
    /// curve from W_max = cwnd, K = 0 after a HyStart exit.
    pub cubic_initial_growth: bool,
    /// CUBIC's target is W_cubic(t + delay_min), delay_min being the smallest RTT sample, as
    /// Linux's `bictcp_update` (`t += usecs_to_jiffies(ca->delay_min)`); false: W_cubic(t + SRTT)
    /// as RFC 9438 §4.4. Over a standing queue SRTT runs far above the minimum and the RFC's
    /// target runs that far ahead on the curve.
    pub cubic_delay_min: bool,
    /// CUBIC's Reno-friendly estimate as Linux's `bictcp_update` (`tcp_friendliness = 1`): W_est
    /// (`ca->tcp_cwnd`) grows one segment per ⌊cwnd·15/8⌋ ACKed segments (`beta_scale` = 15) for
    /// the whole epoch; false: RFC 9438 §4.3, α = 3(1 − β)/(1 + β) until W_est reaches
    /// cwnd_prior, then α = 1, which Linux never does. On, the growth per ACKed segment is
    /// also Linux's 1/cnt in whole segments (cnt = cwnd / (bic_target − cwnd), at most
    /// cwnd / (tcp_cwnd − cwnd), at least 2), not the RFC's (target − cwnd)/cwnd, and a
    /// reduction is `bictcp_recalc_ssthresh` on the whole-segment cwnd (ssthresh = ⌊cwnd·717/1024⌋,
    /// W_max = ⌊cwnd·1741/2048⌋ under fast convergence), not 0.7 and 0.85 of the byte cwnd.
    pub cubic_linux_friendliness: bool,
    /// RFC 3465 byte counting with limit L (segments); None = packet counting.
    pub abc: Option<u64>,
    /// Initial ssthresh in bytes (RFC 5681 §3.1: arbitrarily high).
    pub initial_ssthresh: u64,
    /// TCP Small Queues as Linux (`tsq.rs`): at most ~2 packets (or ~1 ms at the pacing rate) of
    /// this connection queued below TCP at its host; more on TX completion. false: the whole
    /// window goes to the host's queue at once (ns-2, older simulator behaviour).
    pub tsq: bool,
    /// Linux's answer to PSH since 6.6: the sender marks PSH on every second segment of a burst
    /// of new data (as the testbed's 6.18 sender does), and the receiver, when the application
    /// has read everything, ACKs at once if a PSH segment arrived since its last ACK
    /// (`tcp_measure_rcv_mss` sets ICSK_ACK_PUSHED for a full-sized PSH segment, 4720852ed9af;
    /// `tcp_cleanup_rbuf` sends the ACK). false: PSH neither sent nor heeded (full-sized segments
    /// before 6.6; ns-2).
    pub push_ack: bool,
    /// Record cwnd/ssthresh/srtt/in-flight rows in `Tables::tcp_series`.
    pub series: bool,
    /// Seed of the algorithm's own randomness (BBR's gain-cycle start phase); the scenario
    /// builder draws it per connection from the run's seed.
    pub cc_seed: u64,
}

impl TcpConfig {
    /// SMSS, the payload of a full segment (RFC 5681): the MSS less the timestamps option when it
    /// is on (RFC 7323 §3.2; Linux's `mss_cache`: 1448 for MSS 1460).
    pub fn payload_mss(&self) -> u32 { self.mss.saturating_sub(if self.timestamps { TS_OPTION_BYTES } else { 0 }).max(1) }
}

impl Default for TcpConfig {
    /// Linux-like defaults: MSS 1460 (1500-byte packets) with the timestamps option (1448 payload
    /// bytes), IW10, CUBIC with HyStart, SACK recovery with PRR and RACK-TLP, limited transmit,
    /// min RTO 200 ms applied as Linux does (to the variance term), delayed ACK 40 ms with 16
    /// quick ACKs, TCP Small Queues,
    /// 3 MiB receive window (tcp_rmem max 6 MiB with
    /// tcp_adv_win_scale = 1), window scaling on, ECN and pacing off.
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            iw: 10,
            cc: "cubic".into(),
            cc_params: None,
            recovery: Recovery::Sack,
            limited_transmit: true,
            prr: true,
            lost_retransmit: true,
            rack: true,
            tlp: true,
            rto_rack: false,
            frto: false,
            frto_response: FrtoResponse::Undo,
            loss_undo: false,
            timestamps: true,
            min_rto: Time::from_ms(200),
            rto_linux: true,
            delack: Some(Time::from_ms(40)),
            quickack: 16,
            rcvbuf: 3 * 1024 * 1024,
            linux_rcv: None,
            wscale: true,
            wscale_shift: None,
            ecn: false,
            ect1: false,
            pacing: false,
            pace_iw: false,
            hystart: true,
            hystart_round_fix: true,
            cubic_initial_growth: false,
            cubic_delay_min: false,
            cubic_linux_friendliness: false,
            abc: None,
            initial_ssthresh: cc::SSTHRESH_UNSET,
            tsq: true,
            push_ack: false,
            series: false,
            cc_seed: 0,
        }
    }
}

/// A host's say over the windows its TCP receivers advertise (the RWND moderation of the WiBrA
/// slides plugs in here). The receiver calls [`WindowPolicy::on_open`] when a connection's SYN
/// arrives, [`WindowPolicy::on_close`] when its FIN arrives, and [`WindowPolicy::cap`] each time it
/// builds a SYN-ACK or ACK; the advertised window is min(free buffer, cap). The receiver never
/// shrinks a window it already offered (RFC 9293 §3.8.6.2.2), so a lower cap takes effect as the
/// data already allowed is consumed, as in Linux. Share one policy between the receivers of a host
/// with `Rc<RefCell<_>>` (the simulator is single-threaded per run).
pub trait WindowPolicy {
    fn on_open(&mut self, _flow: u32, _now: Time) {}
    /// The handshake completed (the ACK of the SYN-ACK arrived).
    fn on_established(&mut self, _flow: u32, _now: Time) {}
    fn on_close(&mut self, _flow: u32, _now: Time) {}
    /// The window (bytes beyond RCV.NXT) just advertised to flow `flow`, after the no-shrink rule
    /// and window-scale rounding: what that flow's sender may now send.
    fn on_advertise(&mut self, _flow: u32, _wnd: u64, _now: Time) {}
    /// Largest window (bytes) flow `flow` may advertise now; `free` is what the buffer allows.
    fn cap(&mut self, flow: u32, now: Time, free: u64) -> u64;
    /// The SO_RCVBUF the host gives flow `flow` now (None: it sets none). A receiver given one
    /// manages its buffer as Linux does (`rcvbuf.rs`), whatever its own configuration says.
    fn so_rcvbuf(&mut self, _flow: u32, _now: Time) -> Option<u64> { None }
}

/// A policy shared by the receivers of one host.
pub type SharedWindowPolicy = Rc<RefCell<dyn WindowPolicy>>;

/// A timer request from a protocol core.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum TimerCmd {
    #[default]
    Keep,
    Set(Time),
    Cancel,
}
