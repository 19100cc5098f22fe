//! A TCP traffic entry's connection options: the stack profile it starts from (`stack`), the
//! stack switches it overrides key by key, and the congestion control with the keys its
//! registration reads (`cc/`). Shared by the traffic kinds `bulk`, `web` and `ftp` (`workload.rs`)
//! and the media kinds that carry TCP. Keys and defaults: docs/tcp.md, "Scenario keys".
use serde_json::Value;

use super::{cc, profile, FrtoResponse, Recovery, TcpConfig};
use crate::config::{parse_duration, ConfigError, Params, Size};
use crate::time::Time;

/// A TCP entry's stack: the profile's name and the keys the entry set on top of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub profile: &'static str,
    /// The stack keys the entry gives itself (each overrides the profile's value).
    pub overrides: Vec<String>,
}

/// Every scenario key that sets a stack switch (the profile's keys and their aliases).
pub const STACK_KEYS: &[&str] = &[
    "mss", "iw", "cc", "recovery", "sack", "limited_transmit", "lost_retransmit", "prr", "rack", "tlp", "rto_rack", "frto", "frto_response", "loss_undo", "timestamps", "min_rto", "rto", "delack",
    "quickack", "rcvbuf", "rwnd", "wscale", "linux_rcvbuf", "so_rcvbuf", "tcp_rmem_default", "tcp_rmem_max", "rmem_max", "tcp_adv_win_scale",
    "init_rcv_wnd", "tcp_moderate_rcvbuf", "ecn", "pacing", "pace_iw", "hystart", "hystart_round_fix", "cubic_initial_growth", "cubic_delay_min", "abc", "ssthresh",
    "tsq", "cubic_linux_friendliness",
    "push_ack",
];

/// Reads the entry's `stack` (or the scenario's, `default_stack`) and the TCP keys shared by every
/// kind, each over the profile's value.
pub fn tcp_config(p: &mut Params, default_stack: &str) -> Result<(TcpConfig, Stack), ConfigError> {
    let known = profile::names();
    let name = p.choice("stack", &known, Some(default_stack))?;
    let prof = profile::get(&name).expect("checked");
    let overrides: Vec<String> = STACK_KEYS.iter().filter(|k| p.has(k)).map(|k| k.to_string()).collect();
    let d = (prof.config)();
    let mss = p.bytes_opt("mss")?.unwrap_or(d.mss as u64);
    if !(64..=65_495).contains(&mss) {
        return Err(p.err("mss", format!("must be between 64 B and 65495 B, got {mss} B")));
    }
    let iw = p.u64_or("iw", d.iw as u64)?;
    if iw == 0 || iw > 1000 {
        return Err(p.err("iw", format!("must be between 1 and 1000 segments, got {iw}")));
    }
    // The registry's names: an unknown one is refused with the list of known ones. The algorithm
    // reads its own keys (its file's `REGISTRATION`); another algorithm's key is refused.
    let cc = p.choice("cc", &cc::kinds(), Some(&d.cc))?;
    let reg = cc::registration(&cc).expect("checked");
    // (Kept only when there are options: an algorithm without any builds from its defaults, and
    // the config equals its profile's.)
    let params = (reg.params)(p)?;
    let cc_params = (!params.describe().is_empty()).then(|| cc::CcOptions { name: reg.name, params });
    for other in cc::registry() {
        if let Some(k) = other.keys.iter().find(|k| p.has(k) && !reg.keys.contains(k)) {
            return Err(p.err(k, format!("only with cc = {:?}, not {cc:?}", other.name)));
        }
    }
    let dflt_recovery = if d.recovery == Recovery::Sack { "sack" } else { "newreno" };
    let recovery = match p.choice("recovery", &["sack", "newreno"], Some(dflt_recovery))?.as_str() {
        "sack" => Recovery::Sack,
        _ => Recovery::NewReno,
    };
    // `sack = false` is the same as `recovery = "newreno"`.
    let recovery = match p.value_opt("sack") {
        None => recovery,
        Some(_) if p.has("recovery") => return Err(p.err("sack", "give either sack or recovery, not both")),
        Some(Value::Bool(true)) => Recovery::Sack,
        Some(Value::Bool(false)) => Recovery::NewReno,
        Some(_) => return Err(p.err("sack", "expected true or false")),
    };
    let limited_transmit = p.bool_or("limited_transmit", d.limited_transmit)?;
    let lost_retransmit = p.bool_or("lost_retransmit", d.lost_retransmit)?;
    let prr = p.bool_or("prr", d.prr)?;
    let rack = p.bool_or("rack", d.rack)?;
    let tlp = p.bool_or("tlp", d.tlp)?;
    let timestamps = p.bool_or("timestamps", d.timestamps)?;
    let min_rto = p.duration_or("min_rto", d.min_rto)?;
    if min_rto == Time::ZERO {
        return Err(p.err("min_rto", "must be > 0"));
    }
    let rto_linux = p.choice("rto", &["rfc6298", "linux"], Some(if d.rto_linux { "linux" } else { "rfc6298" }))? == "linux";
    let delack = delack(p, d.delack)?;
    let quickack = p.u64_or("quickack", d.quickack as u64)?;
    if quickack > 1_000_000 {
        return Err(p.err("quickack", format!("must be at most 1000000 segments, got {quickack}")));
    }
    let rcvbuf_given = p.has("rcvbuf") || p.has("rwnd");
    // `rcvbuf` and its alias `rwnd`: bytes, or packets of one MSS ("20pkt", as ns-2's window_).
    let mut win = |key: &str| -> Result<Option<u64>, ConfigError> {
        Ok(p.size_opt(key)?.map(|s| match s {
            Size::Bytes(b) => b,
            Size::Packets(n) => n.saturating_mul(mss),
        }))
    };
    let rcvbuf = match (win("rcvbuf")?, win("rwnd")?) {
        (Some(_), Some(_)) => return Err(p.err("rwnd", "give either rcvbuf or rwnd, not both")),
        (Some(b), None) | (None, Some(b)) => b,
        // A profile's window in segments follows the entry's MSS (ns-2's window_).
        (None, None) => prof.window_pkts.map_or(d.rcvbuf, |n| n * mss),
    };
    let rkey = if p.has("rwnd") { "rwnd" } else { "rcvbuf" };
    if rcvbuf < mss {
        return Err(p.err(rkey, format!("must hold at least one segment ({mss} B), got {rcvbuf} B")));
    }
    // `wscale`: true (shift chosen from the buffer), false, or the shift itself (0..=14).
    let (wscale, wscale_shift) = match p.value_opt("wscale") {
        None => (d.wscale, None),
        Some(Value::Bool(b)) => (b, None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(s) if s <= super::MAX_WSCALE as u64 => (true, Some(s as u8)),
            _ => return Err(p.err("wscale", format!("a shift must be 0..=14 (RFC 7323 §2.3), got {n}"))),
        },
        Some(_) => return Err(p.err("wscale", "expected true, false or a shift 0..=14")),
    };
    if !wscale && rcvbuf > 65_535 && (rcvbuf_given || d.linux_rcv.is_none()) {
        return Err(p.err(rkey, format!("above 65535 B needs wscale = true, got {rcvbuf} B")));
    }
    if rcvbuf > (65_535u64 << super::MAX_WSCALE) {
        return Err(p.err(rkey, "exceeds the largest scaled window (65535·2^14 B)"));
    }
    let linux_rcv = linux_rcv(p, &d, mss, rcvbuf_given, rkey)?;
    // `ecn`: false, true / "ect0" (RFC 3168), or "ect1" / "l4s" (the L4S identifier, RFC 9331).
    // Default: the algorithm's when it has one (DCTCP's ECT(1)), else the profile's.
    let (ecn, ect1) = match p.value_opt("ecn") {
        None => match reg.ecn {
            Some(cc::EcnDefault::Ect0) => (true, false),
            Some(cc::EcnDefault::Ect1) => (true, true),
            None => (d.ecn, d.ect1),
        },
        Some(Value::Bool(b)) => (b, false),
        Some(Value::String(s)) if s == "off" => (false, false),
        Some(Value::String(s)) if s == "ect0" => (true, false),
        Some(Value::String(s)) if s == "ect1" || s == "l4s" => (true, true),
        Some(v) => return Err(p.err("ecn", format!("expected true, false, \"ect0\", \"ect1\" or \"l4s\", got {v}"))),
    };
    let pacing = p.bool_or("pacing", d.pacing)?;
    let pace_iw = p.bool_or("pace_iw", d.pace_iw)?;
    let hystart = p.bool_or("hystart", d.hystart)?;
    let hystart_round_fix = p.bool_or("hystart_round_fix", d.hystart_round_fix)?;
    let cubic_initial_growth = p.bool_or("cubic_initial_growth", d.cubic_initial_growth)?;
    let cubic_delay_min = p.bool_or("cubic_delay_min", d.cubic_delay_min)?;
    let rto_rack = p.bool_or("rto_rack", d.rto_rack)?;
    let frto = p.bool_or("frto", d.frto)?;
    let frto_response = match p.value_opt("frto_response") {
        None => d.frto_response,
        Some(Value::String(s)) if s == "undo" => FrtoResponse::Undo,
        Some(Value::String(s)) if s == "rate-halving" => FrtoResponse::RateHalving,
        Some(v) => return Err(p.err("frto_response", format!("expected \"undo\" or \"rate-halving\", got {v}"))),
    };
    let loss_undo = p.bool_or("loss_undo", d.loss_undo)?;
    let cubic_linux_friendliness = p.bool_or("cubic_linux_friendliness", d.cubic_linux_friendliness)?;
    let (abc, initial_ssthresh) = abc_ssthresh(p, &d, mss)?;
    let tsq = p.bool_or("tsq", d.tsq)?;
    let push_ack = p.bool_or("push_ack", d.push_ack)?;
    let series = p.bool_or("series", false)?;
    let cfg = TcpConfig { mss: mss as u32, iw: iw as u32, cc, cc_params, recovery, limited_transmit, prr, lost_retransmit, rack, tlp, rto_rack, frto, frto_response, loss_undo, timestamps, min_rto, rto_linux, delack, quickack: quickack as u32, rcvbuf, linux_rcv, wscale, wscale_shift, ecn, ect1, pacing, pace_iw, hystart, hystart_round_fix, cubic_initial_growth, cubic_delay_min, cubic_linux_friendliness, abc, initial_ssthresh, tsq, push_ack, series, cc_seed: 0 };
    Ok((cfg, Stack { profile: prof.name, overrides }))
}

/// `delack`: a duration, a bare number of milliseconds, or "off" / false (RFC 5681 §4.2: at
/// most 500 ms).
fn delack(p: &mut Params, default: Option<Time>) -> Result<Option<Time>, ConfigError> {
    Ok(match p.value_opt("delack") {
        None => default,
        Some(Value::Bool(false)) => None,
        Some(Value::String(s)) if s == "off" => None,
        // A bare number is milliseconds.
        Some(Value::Number(n)) => match n.as_f64() {
            Some(ms) if ms > 0.0 && ms <= 500.0 => Some(Time::from_secs_f64(ms * 1e-3)),
            _ => return Err(p.err("delack", format!("must be in (0, 500] ms (RFC 5681 §4.2) or \"off\", got {n}"))),
        },
        Some(Value::String(s)) => {
            let x = parse_duration(&s).map_err(|m| p.err("delack", m))?;
            if !(x > 0.0 && x <= 0.5) {
                return Err(p.err("delack", format!("must be in (0, 500ms] (RFC 5681 §4.2) or \"off\", got {s:?}")));
            }
            Some(Time::from_secs_f64(x))
        }
        Some(_) => return Err(p.err("delack", "expected a duration like \"40ms\" or \"off\"")),
    })
}

/// Linux's receive buffer (`rcvbuf.rs`) and its host sysctls, or None for a fixed window; `rkey` is
/// the fixed window's key as given (`rcvbuf` or `rwnd`), for errors.
fn linux_rcv(p: &mut Params, d: &TcpConfig, mss: u64, rcvbuf_given: bool, rkey: &str) -> Result<Option<super::rcvbuf::LinuxRcvConfig>, ConfigError> {
    // Linux's receive buffer (`rcvbuf.rs`): on in the Linux profiles (`linux_rcvbuf`), or
    // `so_rcvbuf` (SO_RCVBUF set before connect, doubled by the kernel, no autotuning); host sysctls
    // `tcp_rmem_default`, `tcp_rmem_max` (tcp_rmem[1], [2]), `rmem_max` (net.core.rmem_max),
    // `tcp_adv_win_scale`, `tcp_moderate_rcvbuf` and the initial-window cap `init_rcv_wnd`. A fixed
    // window (`rcvbuf` / `rwnd`) replaces the buffer unless `linux_rcvbuf = true` is also given.
    let linux_given = p.has("linux_rcvbuf");
    let linux_on = p.bool_or("linux_rcvbuf", d.linux_rcv.is_some() && !rcvbuf_given)?;
    let so_rcvbuf = p.bytes_opt("so_rcvbuf")?;
    let ld = d.linux_rcv.clone().unwrap_or_default();
    let rmem1 = p.bytes_opt("tcp_rmem_default")?;
    let rmem2 = p.bytes_opt("tcp_rmem_max")?;
    let rmem_max = p.bytes_opt("rmem_max")?;
    let adv = match p.value_opt("tcp_adv_win_scale") {
        None => ld.adv_win_scale,
        Some(Value::String(s)) if s == "measured" => None,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(s @ 1..=4) => Some(s as u8),
            _ => return Err(p.err("tcp_adv_win_scale", format!("must be 1..=4 (the window is the buffer less buffer >> s) or \"measured\", got {n}"))),
        },
        Some(v) => return Err(p.err("tcp_adv_win_scale", format!("expected 1..=4 or \"measured\", got {v}"))),
    };
    let init_rcv_wnd = p.u64_or("init_rcv_wnd", ld.init_rcv_wnd)?;
    if init_rcv_wnd > 65_535 {
        return Err(p.err("init_rcv_wnd", format!("must be at most 65535 segments, got {init_rcv_wnd}")));
    }
    let moderate = p.bool_or("tcp_moderate_rcvbuf", ld.moderate)?;
    let linux_keys = ["tcp_rmem_default", "tcp_rmem_max", "rmem_max", "tcp_adv_win_scale", "init_rcv_wnd", "tcp_moderate_rcvbuf"];
    Ok(if linux_on || so_rcvbuf.is_some() {
        if rcvbuf_given && (linux_given || so_rcvbuf.is_some()) {
            return Err(p.err(rkey, "give either rcvbuf (a fixed window) or Linux's buffer (linux_rcvbuf / so_rcvbuf), not both"));
        }
        if so_rcvbuf == Some(0) {
            return Err(p.err("so_rcvbuf", "must be > 0"));
        }
        let rmem = [ld.rmem[0], rmem1.unwrap_or(ld.rmem[1]), rmem2.unwrap_or(ld.rmem[2])];
        if rmem[1] < mss || rmem[2] < rmem[1] {
            return Err(p.err("tcp_rmem_max", format!("need one segment <= tcp_rmem_default <= tcp_rmem_max, got {} and {}", rmem[1], rmem[2])));
        }
        Some(super::rcvbuf::LinuxRcvConfig { rmem, rmem_max: rmem_max.unwrap_or(ld.rmem_max).max(1), so_rcvbuf, adv_win_scale: adv, init_rcv_wnd, moderate, ..ld })
    } else {
        if let Some(k) = linux_keys.iter().find(|k| p.has(k)) {
            return Err(p.err(k, "only with Linux's receive buffer (linux_rcvbuf = true, a Linux stack, or so_rcvbuf), not with a fixed window"));
        }
        None
    })
}

/// `abc` (RFC 3465's limit L, or "all") and the initial `ssthresh`.
fn abc_ssthresh(p: &mut Params, d: &TcpConfig, mss: u64) -> Result<(Option<u64>, u64), ConfigError> {
    let abc = match p.value_opt("abc") {
        None => d.abc,
        Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(2),
        Some(Value::String(s)) if s == "all" => Some(profile::ABC_ALL),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(l) if (1..profile::ABC_ALL).contains(&l) => Some(l),
            _ => return Err(p.err("abc", format!("L must be an integer >= 1, got {n}"))),
        },
        Some(_) => return Err(p.err("abc", "expected true (L = 2), false, \"all\" (every ACKed segment, as Linux since 3.13) or the limit L in segments")),
    };
    let initial_ssthresh = match p.value_opt("ssthresh") {
        Some(Value::String(s)) if s == "infinite" => cc::SSTHRESH_UNSET,
        Some(_) => match p.bytes_opt("ssthresh")? {
            Some(b) if b < 2 * mss => return Err(p.err("ssthresh", format!("must be at least 2 segments, got {b} B"))),
            Some(b) => b,
            None => d.initial_ssthresh,
        },
        None => d.initial_ssthresh,
    };
    Ok((abc, initial_ssthresh))
}
