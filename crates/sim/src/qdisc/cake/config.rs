//! The `[queue]` keys of `kind = "cake"`, with tc's names, defaults and ranges.
use super::{Cake, CakeParams, Framing, ISOLATION};
use crate::config::{rate_bps, ConfigError, Params};
use crate::qdisc::{LinkInfo, Qdisc};
use crate::rng::Rng;
use crate::time::Time;
use serde_json::Value;

/// The `overhead` key: tc's signed byte count (-64..=256).
fn read_overhead(p: &mut Params) -> Result<i32, ConfigError> {
    match p.value_opt("overhead") {
        None => Ok(0),
        Some(Value::Number(n)) if n.as_i64().is_some_and(|v| (-64..=256).contains(&v)) => Ok(n.as_i64().unwrap() as i32),
        Some(v) => Err(p.err("overhead", format!("must be a whole number of bytes in -64..=256 (tc's range), got {v}"))),
    }
}

pub fn build(p: &mut Params, _link: LinkInfo, rng: &mut Rng) -> Result<Box<dyn Qdisc>, ConfigError> {
    Ok(Box::new(Cake::new(read_params(p)?, Rng::stream(rng.next_u64(), "qdisc:cake"))))
}

/// Reads and validates the `[queue]` table of `kind = "cake"`.
pub fn read_params(p: &mut Params) -> Result<CakeParams, ConfigError> {
    let d = CakeParams::default();
    let rate_bytes = match p.value_opt("bandwidth") {
        None => 0,
        Some(Value::String(s)) if s == "unlimited" => 0,
        Some(Value::String(s)) => rate_bps(&s).map_err(|m| p.err("bandwidth", m))? / 8,
        Some(v) => return Err(p.err("bandwidth", format!("expected a rate with a unit (\"4Mbit\") or \"unlimited\", got {v}"))),
    };
    let overhead = read_overhead(p)?;
    let mpu = p.u64_or("mpu", 0)?;
    if mpu > 256 {
        return Err(p.err("mpu", format!("must be in 0..=256 bytes (tc's range), got {mpu}")));
    }
    let framing = match p.choice("atm", &["noatm", "atm", "ptm"], Some("noatm"))?.as_str() {
        "atm" => Framing::Atm,
        "ptm" => Framing::Ptm,
        _ => Framing::None,
    };
    let rtt = p.duration_or("rtt", d.rtt)?;
    // tc: `rtt` sets the interval and target = rtt / 20 unless a target is given.
    let target = match p.duration_opt("target")? {
        Some(t) => t,
        None if p.has("rtt") => Time((rtt.0 / 20).max(1000)),
        None => d.target,
    };
    if rtt == Time::ZERO || rtt.0 > u32::MAX as u64 * 1000 {
        return Err(p.err("rtt", format!("must be in (0, ~4295 s], got {rtt}")));
    }
    if target == Time::ZERO || target > rtt {
        return Err(p.err("target", format!("must be > 0 and at most rtt ({rtt}), got {target}")));
    }
    let names: Vec<&str> = ISOLATION.iter().map(|(n, _)| *n).collect();
    let iso = p.choice("isolation", &names, Some("triple-isolate"))?;
    let flow_mode = ISOLATION.iter().find(|(n, _)| *n == iso).unwrap().1;
    let diffserv = p.str_opt("diffserv")?.unwrap_or_else(|| "besteffort".into());
    if diffserv != "besteffort" {
        let known = ["diffserv3", "diffserv4", "diffserv8", "precedence"];
        let msg = if known.contains(&diffserv.as_str()) {
            format!("{diffserv:?} is not modelled (packets carry no DSCP, so every tin but best effort would stay empty); use \"besteffort\"")
        } else {
            format!("must be \"besteffort\", got {diffserv:?}")
        };
        return Err(p.err("diffserv", msg));
    }
    let ingress = p.bool_or("ingress", false)?;
    // tc's `autorate-ingress`: `bandwidth` (if any) is only the first estimate
    let autorate = p.bool_or("autorate_ingress", false)?;
    let memlimit = p.bytes_opt("memlimit")?;
    if memlimit == Some(0) {
        return Err(p.err("memlimit", "must be > 0"));
    }
    // cake-autorate: the controller sets the shaper, from its base rate (the script's start)
    let mut rate_bytes = rate_bytes;
    let controller = match p.table_opt("autorate")? {
        None => None,
        Some(mut t) => {
            let c = crate::cake_autorate::read_config(&mut t, overhead, framing == Framing::Atm)?;
            t.finish()?;
            if p.has("bandwidth") {
                return Err(p.err("bandwidth", "not with autorate: the controller sets the shaper, starting at autorate.base"));
            }
            if autorate {
                return Err(p.err("autorate_ingress", "not with autorate: one of the two sets the shaper"));
            }
            rate_bytes = c.base_kbps as u64 * 125;
            Some(c)
        }
    };
    Ok(CakeParams { rate_bytes, overhead, mpu: mpu as u32, framing, rtt, target, flow_mode, ingress, memlimit, autorate, controller })
}
