//! Adaptive media: an `audio` or `video` entry with `cc` (docs/media.md). Keys: `cc`, `min_rate`,
//! `max_rate`, `start_rate`, `frame_interval` (video) or `interval` (audio), `mtu`, `key_interval`
//! (video), `feedback` ("rfc8888" | "twcc"), `feedback_interval`, `feedback_via` (a channel the
//! feedback must cross), `pause` (windows without frames), `priority` (the controller's priority
//! weight, > 0: NADA's PRIO; refused for a controller without one); shared keys: [`super::kind::endpoints`].
use super::kind::{endpoints, Build, Cost, Entry, Path};
use crate::config::{ConfigError, Params};
use crate::media::RTP_OVERHEAD;
use crate::rng::Rng;
use crate::rtc::agent::{ReceiverSpec, RtcReceiver, RtcSender, SenderSpec};
use crate::rtc::encoder::Encoder;
use crate::rtc::feedback::{Format, Mailbox};
use crate::rtc::{controller_names, Limits, CONTROLLERS};
use crate::time::Time;

/// Frame interval of 30 frames/s, the RMCAT evaluations' video (RFC 8867 §4.3 uses 30 fps sources).
pub const VIDEO_FRAME_INTERVAL: Time = Time(33_333_333);

/// Keys that belong to the constant-rate source and mean nothing with a controller.
const CBR_ONLY: &[&str] = &["rate", "mode", "packet_size", "size"];

/// Builds an adaptive `video` or `audio` entry (`cc` given).
pub fn build(p: &mut Params, b: &mut Build, kind: &str) -> Result<(), ConfigError> {
    let video = kind == "video";
    let e = endpoints(p, b, kind)?;
    let names = controller_names();
    p.note_choice("cc", &names); // the schema's walk then tries every controller (and reads their keys)
    let cc = p.str("cc")?;
    let Some(factory) = CONTROLLERS.iter().find(|(n, _)| *n == cc).map(|(_, f)| *f) else {
        return Err(p.err("cc", format!("unknown media congestion controller {cc:?} (known: {})", names.join(", "))));
    };
    for k in CBR_ONLY {
        if p.has(k) {
            return Err(p.err(k, format!("not with cc = {cc:?}: the controller sets the rate (give min_rate, max_rate, start_rate)")));
        }
    }
    // RFC 8867 §4.3's media source (and the ns-3 RMCAT model's R_min / R_max): 150 kbit/s – 1.5 Mbit/s
    let (dmin, dmax) = if video { (150_000, 1_500_000) } else { (6_000, 64_000) };
    let min = p.rate_opt("min_rate")?.map_or(dmin, |r| r.0);
    let max = p.rate_opt("max_rate")?.map_or(dmax, |r| r.0);
    if min > max {
        let key = if p.has("min_rate") { "min_rate" } else { "max_rate" };
        return Err(p.err(key, format!("min_rate ({min} bit/s) must not exceed max_rate ({max} bit/s)")));
    }
    let start_rate = p.rate_opt("start_rate")?.map_or(min, |r| r.0);
    if start_rate < min || start_rate > max {
        return Err(p.err("start_rate", format!("must be between min_rate ({min} bit/s) and max_rate ({max} bit/s), got {start_rate} bit/s")));
    }
    let interval = if video { p.duration_or("frame_interval", VIDEO_FRAME_INTERVAL)? } else { p.duration_or("interval", Time::from_ms(20))? };
    if interval == Time::ZERO {
        return Err(p.err(if video { "frame_interval" } else { "interval" }, "must be > 0"));
    }
    let mtu = p.bytes_opt("mtu")?.unwrap_or(1200);
    if mtu <= RTP_OVERHEAD as u64 || mtu > 65_535 {
        return Err(p.err("mtu", format!("must be more than {RTP_OVERHEAD} B (IP+UDP+RTP headers) and at most 65535 B, got {mtu} B")));
    }
    let key_interval = if video { p.duration_opt("key_interval")? } else { None };
    if key_interval == Some(Time::ZERO) {
        return Err(p.err("key_interval", "must be > 0 (leave it out for key frames only on big rate changes)"));
    }
    let format = Format::parse(&p.choice("feedback", Format::NAMES, Some("rfc8888"))?).expect("checked");
    // libwebrtc's transport-cc default send interval, and NADA's DELTA (RFC 8698 §4.1)
    let fb_interval = p.duration_or("feedback_interval", Time::from_ms(100))?;
    if fb_interval == Time::ZERO {
        return Err(p.err("feedback_interval", "must be > 0"));
    }
    if let Some(via) = p.str_opt("feedback_via")? {
        check_feedback_via(p, b, &via, e.from, e.to)?;
    }
    let pauses = parse_pauses(p, e.start, e.stop)?;
    let limits = Limits { min_bps: min as f64, max_bps: max as f64, start_bps: start_rate as f64 };
    let mut controller = factory(&limits);
    if let Some(w) = p.f64_opt("priority")? {
        if !(w.is_finite() && w > 0.0) {
            return Err(p.err("priority", format!("must be a number > 0 (a weight; 1 is the default), got {w}")));
        }
        if !controller.set_priority(w) {
            return Err(p.err("priority", format!("cc = {cc:?} has no priority weight (nada has one: RFC 8698's PRIO; RFC 8699's coupled control is not modelled)")));
        }
    }
    let flow = b.add_flow(&e.name, kind);
    let fb_flow = b.add_flow(&format!("{}.feedback", e.name), "feedback");
    let src_id = b.sim.next_agent_id();
    let sink_id = src_id + 1;
    let mailbox: Mailbox = Default::default();
    let rng = Rng::stream(b.seed, &format!("encoder:{}", e.name));
    let spec = SenderSpec {
        name: e.name.clone(),
        flow,
        dst: e.to,
        dst_agent: sink_id,
        start: e.start,
        stop: e.stop,
        interval,
        mtu: mtu as u32,
        ecn: e.ecn,
        controller,
        encoder: Encoder::new(video, limits.start_bps, key_interval, rng),
        pauses,
    };
    let got = b.sim.add_agent(e.from, Box::new(RtcSender::new(spec, mailbox.clone())));
    debug_assert_eq!(got, src_id);
    let presence = b.media_presence(e.to);
    let rx = ReceiverSpec {
        name: format!("{}.sink", e.name),
        flow: fb_flow,
        sender_node: e.from,
        sender_agent: src_id,
        format,
        interval: fb_interval,
        until: e.stop + Time::from_secs(1),
        presence,
    };
    let got = b.sim.add_agent(e.to, Box::new(RtcReceiver::new(rx, mailbox)));
    debug_assert_eq!(got, sink_id);
    Ok(())
}

/// `feedback_via` must name a channel on the path from the receiver back to the sender.
fn check_feedback_via(p: &Params, b: &Build, via: &str, from: crate::packet::NodeId, to: crate::packet::NodeId) -> Result<(), ConfigError> {
    let Some(ch) = b.sim.channel_id(via) else {
        let names: Vec<&str> = b.sim.channels().iter().map(|c| c.name.as_str()).collect();
        return Err(p.err("feedback_via", format!("no channel named {via:?} (channels: {})", names.join(", "))));
    };
    if !b.sim.path(to, from).contains(&ch) {
        let path: Vec<&str> = b.sim.path(to, from).iter().map(|&c| b.sim.channel(c).name.as_str()).collect();
        return Err(p.err("feedback_via", format!("the feedback from {:?} to {:?} does not cross {via:?} (it takes {})", b.sim.node_name(to), b.sim.node_name(from), path.join(", "))));
    }
    Ok(())
}

/// `pause = [["40s", "60s"], …]`: windows [from, to) without frames, in order, not overlapping,
/// within [start, stop).
fn parse_pauses(p: &mut Params, start: Time, stop: Time) -> Result<Vec<(Time, Time)>, ConfigError> {
    let Some(v) = p.value_opt("pause") else { return Ok(vec![]) };
    let key = p.key_path("pause");
    let serde_json::Value::Array(items) = v else {
        return Err(ConfigError::new(key, "expected a list of [from, to] pairs, e.g. [[\"40s\", \"60s\"]]"));
    };
    let mut out: Vec<(Time, Time)> = vec![];
    for (i, it) in items.iter().enumerate() {
        let at = format!("{key}[{i}]");
        let pair = match it.as_array().map(|a| a.as_slice()) {
            Some([serde_json::Value::String(a), serde_json::Value::String(b)]) => (a.clone(), b.clone()),
            _ => return Err(ConfigError::new(at, format!("expected [from, to] as two durations, got {it}"))),
        };
        let d = |s: &str| crate::config::duration_ns(s).map_err(|m| ConfigError::new(at.clone(), m));
        let (a, b) = (d(&pair.0)?, d(&pair.1)?);
        if a < 0 || b <= a {
            return Err(ConfigError::new(at, format!("needs 0 <= from < to, got {:?} to {:?}", pair.0, pair.1)));
        }
        let (a, b) = (Time(a as u64), Time(b as u64));
        if a < start || b > stop {
            return Err(ConfigError::new(at, format!("must lie within start ({start}) and stop ({stop})")));
        }
        if out.last().is_some_and(|&(_, e)| a < e) {
            return Err(ConfigError::new(at, "pauses must be in order and must not overlap"));
        }
        out.push((a, b));
    }
    Ok(out)
}

/// At most `max_rate` in packets of up to `mtu` bytes (audio: one per interval), plus one
/// feedback report per feedback interval back; two flows (media and feedback).
pub fn cost(e: &Entry, path: &Path, video: bool) -> Cost {
    let n = if video {
        let bps = e.rate_bps("max_rate").unwrap_or(1.5e6);
        let mtu = e.bytes("mtu").unwrap_or(1200.0).max(41.0);
        let fi = e.dur_ns("frame_interval").unwrap_or(33_333_333.0).max(1.0);
        e.active_s * bps / (8.0 * (mtu - 40.0)) + e.active_s * 1e9 / fi
    } else {
        e.active_s * 1e9 / e.dur_ns("interval").unwrap_or(20e6).max(1.0)
    };
    let reports = e.active_s * 1e9 / e.dur_ns("feedback_interval").unwrap_or(100e6).max(1.0);
    Cost { flows: 2, media_rows: n, pkt_hops: (n + reports) * path.hops, sends: n + reports, queued: n * path.opp_hops, ..Cost::default() }
}
