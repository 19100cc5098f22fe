//! TCP stack profiles: what a TCP endpoint *is*. A scenario names one (`stack = "linux-6.18"` on a
//! TCP traffic entry, or at the top of the file for every entry); each profile is one table below
//! that sets every switch in which real stacks differ, with the kernel version or commit where
//! that switch changed. A key given on the entry overrides the profile's value, key by key.
//!
//! - `linux-6.18` — today's Linux, the kernel the testbed runs; **the default**.
//! - `linux-3.2` — Linux of 2012 (the PAM 2013 and Wibra experiments' era).
//! - `ns2-sack1` — ns-2.35's `Agent/TCP/Sack1` with `TCPSink/Sack1/DelAck` (Chodorek's study and
//!   the ns-2 cross-check).
//!
//! The profile's values are exactly the [`TcpConfig`] its function returns; [`describe`] lists
//! them under their scenario keys (the manifest and docs/tcp.md show that list), and every key of
//! that list has a source line in the profile's `sources`. Tests: `crates/sim/tests/stack_profiles.rs`
//! (every switch moves a table; the docs table matches this file).
use serde_json::{json, Value};

use super::rcvbuf::LinuxRcvConfig;
use super::{FrtoResponse, Recovery, TcpConfig};
use crate::time::Time;

/// The profile a TCP entry gets when neither it nor the scenario names one.
pub const DEFAULT: &str = "linux-6.18";

/// `abc = "all"`: slow start adds every segment an ACK covers (no RFC 3465 limit L).
pub const ABC_ALL: u64 = u32::MAX as u64;

/// One stack profile.
pub struct Profile {
    pub name: &'static str,
    pub summary: &'static str,
    /// Every switch's value. `rcvbuf` there is the fixed window for the profile's own MSS; see
    /// `window_pkts`.
    pub config: fn() -> TcpConfig,
    /// A fixed window given in segments (ns-2's `window_`), so that it follows an entry's own `mss`.
    pub window_pkts: Option<u64>,
    /// Where each switch's value comes from: (scenario key, source).
    pub sources: &'static [(&'static str, &'static str)],
}

/// Every profile (one line each).
pub const PROFILES: &[Profile] = &[LINUX_6_18, LINUX_3_2, NS2_SACK1];

/// The profile named `name`.
pub fn get(name: &str) -> Option<&'static Profile> { PROFILES.iter().find(|p| p.name == name) }

/// The known names, for errors.
pub fn names() -> Vec<&'static str> { PROFILES.iter().map(|p| p.name).collect() }

/// The testbed host's receive-buffer sysctls, as measured on its 6.18 kernel (`sysctl
/// net.ipv4.tcp_rmem net.core.rmem_max`, also inside a fresh network namespace).
const LINUX_6_18_RCV: LinuxRcvConfig = LinuxRcvConfig {
    rmem: [4096, 131_072, 33_554_432],
    rmem_max: 4_194_304,
    so_rcvbuf: None,
    truesize: 2304,
    moderate: true,
    adv_win_scale: None,
    init_rcv_wnd: 0,
};

/// Linux 6.18: the simulator's base [`TcpConfig::default`] (MSS 1460 with timestamps, IW10, CUBIC with
/// HyStart, SACK with PRR and RACK-TLP, Linux's RTO and delayed ACKs, TSQ; every value is in
/// docs/tcp.md's table, generated from [`describe`]) with Linux's receive buffer, slow start
/// counting every ACKed segment and CUBIC's first-epoch growth.
fn linux_6_18() -> TcpConfig {
    TcpConfig {
        linux_rcv: Some(LINUX_6_18_RCV),
        cubic_initial_growth: true,
        cubic_delay_min: true,
        cubic_linux_friendliness: true,
        abc: Some(ABC_ALL),
        push_ack: true,
        rto_rack: true,
        frto: true,
        loss_undo: true,
        ..TcpConfig::default()
    }
}

const LINUX_6_18: Profile = Profile {
    name: "linux-6.18",
    summary: "Linux 6.18 with its default sysctls (the testbed's kernel): CUBIC with HyStart, SACK with RACK-TLP and PRR, TSQ, slow start counting ACKed segments, Linux's receive buffer with autotuning",
    config: linux_6_18,
    window_pkts: None,
    sources: &[
        ("mss", "1500-byte MTU less 40 B of headers; the timestamps option leaves 1448 B of payload (mss_cache)"),
        ("iw", "TCP_INIT_CWND = 10 since 2.6.39 (442b9635c569, RFC 6928)"),
        ("cc", "net.ipv4.tcp_congestion_control default cubic since 2.6.19 (597811ec167f)"),
        ("recovery", "net.ipv4.tcp_sack = 1 (RFC 2018/6675)"),
        ("limited_transmit", "RFC 3042, always on in tcp_input.c"),
        ("prr", "Proportional Rate Reduction since 3.2 (a262f0cdf1f2, RFC 6937)"),
        ("rack", "net.ipv4.tcp_recovery = 1: RACK since 4.4 (4f41b1c58a32), RACK-only loss detection since 4.18"),
        ("tlp", "net.ipv4.tcp_early_retrans = 3: tail loss probes since 3.10 (6ba8a3b19e76), RACK-TLP (RFC 8985)"),
        ("rto_rack", "tcp_timeout_mark_lost: with RACK, skbs other than the head not yet due by tcp_rack_skb_timeout (sent within RACK.rtt) are not marked lost at an RTO (since 4.18, RACK-only loss detection); tcp_enter_loss then sets cwnd = tcp_packets_in_flight + 1"),
        ("frto", "net.ipv4.tcp_frto = 2 (default since 2.6.24): tcp_process_loss, RFC 5682's SACK-enhanced F-RTO as rewritten in 3.10 ('tcp: implement RFC5682 F-RTO')"),
        ("frto_response", "undo: 3.10's tcp_process_loss undoes a timeout F-RTO finds spurious (tcp_try_undo_loss, cwnd and ssthresh restored by tcp_undo_cwnd_reduction); the net.ipv4.tcp_frto_response sysctl went with the old F-RTO"),
        ("loss_undo", "tcp_try_undo_loss / tcp_try_undo_recovery in TCP_CA_Loss: tcp_may_undo by tcp_packet_delayed (TSecr before retrans_stamp); DSACK's undo_retrans = 0 route not modelled (no DSACK)"),
        ("timestamps", "net.ipv4.tcp_timestamps = 1"),
        ("min_rto", "TCP_RTO_MIN = HZ/5 (200 ms)"),
        ("rto", "tcp_set_rto: SRTT + max(4·RTTVAR, TCP_RTO_MIN) (mdev_max), not RFC 6298's form"),
        ("delack", "TCP_DELACK_MIN = HZ/25 (40 ms)"),
        ("quickack", "TCP_MAX_QUICKACKS = 16 (tcp_incr_quickack)"),
        ("linux_rcvbuf", "receive buffer managed as Linux 6.18 does (rcvbuf.rs: scaling_ratio, tcp_rcv_space_adjust)"),
        ("tcp_rmem_default", "net.ipv4.tcp_rmem[1] = 131072 since 4.20 (a337531b942b)"),
        ("tcp_rmem_max", "net.ipv4.tcp_rmem[2] = 33554432 on the testbed's 6.18 kernel (sysctl, measured)"),
        ("rmem_max", "net.core.rmem_max = 4194304 on the testbed's 6.18 kernel (sysctl, measured)"),
        ("tcp_adv_win_scale", "none: the window is the buffer times the measured len/truesize ratio since 6.6 (dfa2f0483360)"),
        ("init_rcv_wnd", "0: no route initrwnd; the initial window is the buffer's (tcp_select_initial_window)"),
        ("tcp_moderate_rcvbuf", "net.ipv4.tcp_moderate_rcvbuf = 1 (autotuning)"),
        ("wscale", "net.ipv4.tcp_window_scaling = 1; the shift from tcp_rmem[2] and rmem_max"),
        ("ecn", "net.ipv4.tcp_ecn = 2: ECN accepted when asked, never requested"),
        ("pacing", "off: CUBIC over pfifo/HTB is not paced (sk_pacing_status needs fq or BBR)"),
        ("pace_iw", "no such mechanism in Linux"),
        ("hystart", "tcp_cubic hystart = 1, both detectors (since 2.6.29, ae27e98a5152)"),
        ("hystart_round_fix", "HyStart rounds from slow start's first ACK since 'tcp_cubic: fix incorrect HyStart round start detection' (2025, in 6.14 and stable)"),
        ("cubic_initial_growth", "bictcp_update: cnt at most 20 (cwnd +5 % per RTT) while last_max_cwnd is 0, i.e. until the first reduction"),
        ("cubic_delay_min", "bictcp_update: the target is W_cubic(t + delay_min), delay_min the smallest RTT sample (t += usecs_to_jiffies(ca->delay_min)), not RFC 9438's t + SRTT"),
        ("cubic_linux_friendliness", "bictcp_update, tcp_friendliness = 1: ca->tcp_cwnd + 1 per (cwnd * beta_scale) >> 3 ACKed segments, beta_scale = 15, for the whole epoch (no RFC 9438 switch to alpha = 1); cnt = cwnd / (bic_target - cwnd) in whole segments, at most cwnd / (tcp_cwnd - cwnd), at least 2; bictcp_recalc_ssthresh on the whole-segment snd_cwnd: ssthresh = max(cwnd * 717 / 1024, 2), last_max_cwnd = cwnd * 1741 / 2048 under fast convergence"),
        ("abc", "tcp_slow_start adds every ACKed segment (9f9843a751d0, 3.13; the leftover returned since 4.0)"),
        ("ssthresh", "TCP_INFINITE_SSTHRESH"),
        ("tsq", "TCP Small Queues since 3.6 (46d3ceabd8d9), tcp_limit_output_bytes"),
        ("push_ack", "a full-sized PSH segment sets ICSK_ACK_PUSHED (tcp_measure_rcv_mss, 4720852ed9af, 6.6) and tcp_cleanup_rbuf ACKs it once the reader has emptied the queue; PSH on every second segment of a burst, as the testbed's sender marks it (captures of docs/validation.md)"),
    ],
};

fn linux_3_2() -> TcpConfig {
    TcpConfig {
        rack: false,
        tlp: false,
        hystart_round_fix: false,
        abc: None,
        tsq: false,
        push_ack: false,
        rto_rack: false,
        frto_response: FrtoResponse::RateHalving,
        linux_rcv: Some(LinuxRcvConfig {
            rmem: [4096, 87_380, 4_194_304],
            rmem_max: 131_071,
            so_rcvbuf: None,
            truesize: 2304,
            moderate: true,
            adv_win_scale: Some(2),
            init_rcv_wnd: 10,
        }),
        ..linux_6_18()
    }
}

const LINUX_3_2: Profile = Profile {
    name: "linux-3.2",
    summary: "Linux 3.2 (2012) with its default sysctls: CUBIC with the HyStart of that time, SACK with PRR and no RACK or TLP, no TSQ, slow start one MSS per ACK, tcp_adv_win_scale = 2",
    config: linux_3_2,
    window_pkts: None,
    sources: &[
        ("mss", "as 6.18: 1448 B of payload with timestamps"),
        ("iw", "TCP_INIT_CWND = 10 since 2.6.39 (442b9635c569)"),
        ("cc", "cubic, the default since 2.6.19"),
        ("recovery", "SACK (RFC 2018/3517)"),
        ("limited_transmit", "RFC 3042, in tcp_input.c since 2.6"),
        ("prr", "PRR is new in 3.2 (a262f0cdf1f2)"),
        ("lost_retransmit", "tcp_mark_lost_retrans (removed in 4.4's RACK work)"),
        ("rack", "absent: RACK arrived in 4.4 (4f41b1c58a32)"),
        ("tlp", "absent: tail loss probes arrived in 3.10 (6ba8a3b19e76); early retransmit in 3.5"),
        ("frto", "net.ipv4.tcp_frto = 2 since 2.6.24 (SACK-enhanced F-RTO); the simulator applies 3.10's rules (tcp_process_loss, 'tcp: implement RFC5682 F-RTO'): 3.2's tcp_enter_frto kept the other segments unmarked until the second ACK and used F-RTO only when nothing but the head had been retransmitted (tcp_use_frto), which is not modelled"),
        ("frto_response", "net.ipv4.tcp_frto_response = 0, the default until 3.10: tcp_process_frto calls tcp_ratehalving_spur_to_response, i.e. tcp_enter_cwr(sk, 0): ssthresh stays as the timeout set it (tcp_enter_frto), cwnd is cut to packets in flight + 1 and lowered to ssthresh by tcp_cwnd_down; the simulator sets the end of that descent at once"),
        ("loss_undo", "tcp_try_undo_loss with tcp_packet_delayed (TSecr before retrans_stamp), in 3.2 as in 6.18 (3.2 also voided undo_marker in tcp_enter_loss when a segment had been retransmitted before, not modelled)"),
        ("timestamps", "net.ipv4.tcp_timestamps = 1"),
        ("min_rto", "TCP_RTO_MIN = HZ/5"),
        ("rto", "tcp_set_rto with mdev_max (Linux's form since 2.6)"),
        ("delack", "TCP_DELACK_MIN = HZ/25"),
        ("quickack", "TCP_MAX_QUICKACKS = 16"),
        ("linux_rcvbuf", "Linux's buffer with autotuning (tcp_moderate_rcvbuf since 2.6.7); the simulator's growth rule is 6.18's (see docs/tcp.md)"),
        ("tcp_rmem_default", "net.ipv4.tcp_rmem[1] = 87380 until 4.20"),
        ("tcp_rmem_max", "net.ipv4.tcp_rmem[2] = 4 MiB until 3.6 (b49960a05e32 raised it to 6 MiB)"),
        ("rmem_max", "net.core.rmem_max = 131071 as 3.x kernels reported on x86-64 (SK_RMEM_MAX)"),
        ("tcp_adv_win_scale", "2 (window = 3/4 of the buffer) until 3.6 (b49960a05e32 set 1)"),
        ("init_rcv_wnd", "TCP_DEFAULT_INIT_RCVWND = 10 segments in tcp_select_initial_window since 2.6.39 (356f039822b8)"),
        ("tcp_moderate_rcvbuf", "net.ipv4.tcp_moderate_rcvbuf = 1"),
        ("wscale", "net.ipv4.tcp_window_scaling = 1"),
        ("ecn", "net.ipv4.tcp_ecn = 2"),
        ("pacing", "absent: internal pacing came with fq in 3.12"),
        ("pace_iw", "no such mechanism in Linux"),
        ("hystart", "tcp_cubic hystart = 1 since 2.6.29"),
        ("hystart_round_fix", "before the 2025 fix the first round starts at the first ACK that sees cwnd >= hystart_low_window (the simulator's older order; other HyStart changes of 3.3-6.1 not modelled)"),
        ("cubic_initial_growth", "bictcp_update: cnt at most 20 while loss_cwnd is 0, as in 2.6 (the same floor as 6.18)"),
        ("cubic_delay_min", "bictcp_update: t = now + msecs_to_jiffies(delay_min >> 3) - epoch_start, the smallest RTT sample as in 6.18"),
        ("cubic_linux_friendliness", "bictcp_update's tcp_friendliness: delta = (cwnd * beta_scale) >> 3 and no switch to alpha = 1, as in 6.18; 3.2 counted ACKs there (ca->ack_cnt++) where 6.18 counts segments, and the simulator counts segments; ssthresh and last_max_cwnd in whole segments as in 6.18"),
        ("abc", "one MSS per ACK: tcp_slow_start without the ACKed count until 3.13 (tcp_abc = 0 by default, removed in 3.9)"),
        ("ssthresh", "TCP_INFINITE_SSTHRESH"),
        ("tsq", "absent: TCP Small Queues arrived in 3.6 (46d3ceabd8d9)"),
        ("push_ack", "absent: before 4720852ed9af (6.6) only a segment shorter than rcv_mss set ICSK_ACK_PUSHED, so full-sized PSH segments waited for the delayed ACK"),
    ],
};

fn ns2_sack1() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        iw: 2,
        cc: "reno".into(),
        cc_params: None,
        recovery: Recovery::Sack,
        limited_transmit: true,
        prr: false,
        lost_retransmit: false,
        rack: false,
        tlp: false,
        rto_rack: false,
        frto: false,
        frto_response: FrtoResponse::Undo,
        loss_undo: false,
        timestamps: false,
        min_rto: Time::from_ms(200),
        rto_linux: false,
        delack: Some(Time::from_ms(100)),
        quickack: 0,
        rcvbuf: 20 * 1000,
        linux_rcv: None,
        wscale: true,
        wscale_shift: None,
        ecn: false,
        ect1: false,
        pacing: false,
        pace_iw: false,
        hystart: false,
        hystart_round_fix: false,
        cubic_initial_growth: false,
        cubic_delay_min: false,
        cubic_linux_friendliness: false,
        abc: None,
        initial_ssthresh: super::cc::SSTHRESH_UNSET,
        tsq: false,
        push_ack: false,
        series: false,
        cc_seed: 0,
    }
}

const NS2_SACK1: Profile = Profile {
    name: "ns2-sack1",
    summary: "ns-2.35's Agent/TCP/Sack1 with TCPSink/Sack1/DelAck at ns-default.tcl's values: Reno with RFC 6675-style SACK recovery, windowInit_ 2, window_ 20 packets, 100 ms delayed ACKs, no options",
    config: ns2_sack1,
    window_pkts: Some(20),
    sources: &[
        ("mss", "Agent/TCP packetSize_ 1000"),
        ("iw", "Agent/TCP windowInit_ 2"),
        ("cc", "Reno (Sack1 is Reno's window law)"),
        ("recovery", "Agent/TCP/Sack1: SACK scoreboard recovery"),
        ("limited_transmit", "on: Sack1 sends new data on the first duplicate ACKs when the window allows (singledup_)"),
        ("prr", "absent: cwnd = ssthresh on entering recovery"),
        ("lost_retransmit", "absent: a lost retransmission waits for the timeout"),
        ("rack", "absent"),
        ("tlp", "absent"),
        ("frto", "absent: Agent/TCP/Sack1's timeout resends from the first unacknowledged segment (go-back-N); ns-2 has no F-RTO"),
        ("loss_undo", "absent: ns-2's sender never undoes a timeout"),
        ("timestamps", "no TCP options (tcpip_base_hdr_size_ 40)"),
        ("min_rto", "Agent/TCP minrto_ 0.2 as the validation sets it (ns-default.tcl: 0.2 in 2.35)"),
        ("rto", "RFC 6298's SRTT + 4·RTTVAR, floored (rtt_timeout)"),
        ("delack", "Agent/TCPSink/DelAck interval_ 100ms"),
        ("quickack", "none: ns-2 has no quick-ACK mode"),
        ("rcvbuf", "Agent/TCP window_ 20 packets, a fixed window (no receive buffer model)"),
        ("linux_rcvbuf", "no receive buffer: the window is fixed"),
        ("wscale", "no options; the fixed window is advertised whole"),
        ("ecn", "Agent/TCP ecn_ 0"),
        ("pacing", "absent"),
        ("pace_iw", "absent"),
        ("hystart", "absent (Reno)"),
        ("hystart_round_fix", "absent (Reno)"),
        ("cubic_initial_growth", "absent (Reno; RFC 9438's curve if cc = cubic is given)"),
        ("cubic_delay_min", "absent (Reno; RFC 9438's target W_cubic(t + SRTT) if cc = cubic is given)"),
        ("cubic_linux_friendliness", "absent (Reno; RFC 9438's Reno-friendly estimate if cc = cubic is given)"),
        ("abc", "one segment per ACK in slow start (opencwnd)"),
        ("ssthresh", "Agent/TCP ssthresh_ 0 = unlimited"),
        ("tsq", "absent: the whole window goes to the queue at once"),
        ("push_ack", "absent: ns-2's segments carry no PSH and TCPSink/DelAck ignores it"),
    ],
};

fn ms(t: Time) -> Value { json!(format!("{}ms", t.ns() as f64 / 1e6)) }

/// The profile's switches under their scenario keys, in a fixed order, with the values of `c`
/// (for the manifest, the expanded form and docs/tcp.md).
pub fn describe(c: &TcpConfig) -> Vec<(&'static str, Value)> {
    let mut v: Vec<(&'static str, Value)> = vec![
        ("mss", json!(format!("{}B", c.mss))),
        ("iw", json!(c.iw)),
        ("cc", json!(c.cc)),
        ("recovery", json!(match c.recovery { Recovery::Sack => "sack", Recovery::NewReno => "newreno" })),
        ("limited_transmit", json!(c.limited_transmit)),
        ("prr", json!(c.prr)),
        ("rack", json!(c.rack)),
        ("tlp", json!(c.tlp)),
        ("frto", json!(c.frto)),
        ("loss_undo", json!(c.loss_undo)),
        ("timestamps", json!(c.timestamps)),
        ("min_rto", ms(c.min_rto)),
        ("rto", json!(if c.rto_linux { "linux" } else { "rfc6298" })),
        ("delack", c.delack.map_or(json!("off"), ms)),
        ("quickack", json!(c.quickack)),
        ("linux_rcvbuf", json!(c.linux_rcv.is_some())),
    ];
    // With RACK, loss of a retransmission is RACK's to detect: the switch is not read.
    if !c.rack {
        v.insert(7, ("lost_retransmit", json!(c.lost_retransmit)));
    } else {
        // The timeout's RACK rule exists only with RACK.
        let at = v.iter().position(|(k, _)| *k == "tlp").expect("tlp") + 1;
        v.insert(at, ("rto_rack", json!(c.rto_rack)));
    }
    // F-RTO's response exists only with F-RTO.
    if c.frto {
        let at = v.iter().position(|(k, _)| *k == "frto").expect("frto") + 1;
        v.insert(at, ("frto_response", json!(match c.frto_response { FrtoResponse::Undo => "undo", FrtoResponse::RateHalving => "rate-halving" })));
    }
    match &c.linux_rcv {
        Some(l) => v.extend([
            ("tcp_rmem_default", json!(format!("{}B", l.rmem[1]))),
            ("tcp_rmem_max", json!(format!("{}B", l.rmem[2]))),
            ("rmem_max", json!(format!("{}B", l.rmem_max))),
            ("tcp_adv_win_scale", l.adv_win_scale.map_or(json!("measured"), |s| json!(s))),
            ("init_rcv_wnd", json!(l.init_rcv_wnd)),
            ("tcp_moderate_rcvbuf", json!(l.moderate)),
        ]),
        None => v.push(("rcvbuf", json!(format!("{}B", c.rcvbuf)))),
    }
    // The algorithm's own options follow `cc` (none for the built-ins a profile names).
    if let Some(o) = &c.cc_params {
        let at = v.iter().position(|(k, _)| *k == "cc").expect("cc") + 1;
        v.splice(at..at, o.params.describe());
    }
    v.extend([
        ("wscale", json!(c.wscale)),
        ("ecn", json!(match (c.ecn, c.ect1) { (false, _) => "off", (true, false) => "ect0", (true, true) => "ect1" })),
        ("pacing", json!(c.pacing)),
        ("pace_iw", json!(c.pace_iw)),
        ("hystart", json!(c.hystart)),
        ("hystart_round_fix", json!(c.hystart_round_fix)),
        ("cubic_initial_growth", json!(c.cubic_initial_growth)),
        ("cubic_delay_min", json!(c.cubic_delay_min)),
        ("cubic_linux_friendliness", json!(c.cubic_linux_friendliness)),
        ("abc", match c.abc { None => json!(false), Some(ABC_ALL) => json!("all"), Some(l) => json!(l) }),
        ("ssthresh", if c.initial_ssthresh >= super::cc::SSTHRESH_UNSET { json!("infinite") } else { json!(format!("{}B", c.initial_ssthresh)) }),
        ("tsq", json!(c.tsq)),
        ("push_ack", json!(c.push_ack)),
    ]);
    v
}

/// [`describe`] as one JSON object.
pub fn describe_json(c: &TcpConfig) -> Value { Value::Object(describe(c).into_iter().map(|(k, v)| (k.to_string(), v)).collect()) }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_switch_of_every_profile_has_a_source() {
        for p in PROFILES {
            let keys: Vec<&str> = describe(&(p.config)()).into_iter().map(|(k, _)| k).collect();
            for k in &keys {
                assert!(p.sources.iter().any(|(s, _)| s == k), "{}: no source for {k}", p.name);
            }
            for (s, _) in p.sources {
                assert!(keys.contains(s), "{}: source for {s}, which the profile does not describe", p.name);
            }
        }
    }

    #[test]
    fn the_default_profile_exists_and_names_are_unique() {
        assert!(get(DEFAULT).is_some());
        let mut n = names();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), PROFILES.len());
    }

    #[test]
    fn era_profile_differs_from_today_where_the_kernel_changed() {
        let (new, old) = ((LINUX_6_18.config)(), (LINUX_3_2.config)());
        assert!(new.rack && !old.rack && new.tlp && !old.tlp && new.tsq && !old.tsq);
        assert_eq!((new.abc, old.abc), (Some(ABC_ALL), None));
        let (nl, ol) = (new.linux_rcv.unwrap(), old.linux_rcv.unwrap());
        assert_eq!((nl.rmem[1], ol.rmem[1]), (131_072, 87_380));
        assert_eq!((nl.adv_win_scale, ol.adv_win_scale), (None, Some(2)));
    }
}
