//! `kind = "video"`: `rate` (bit rate B), `frame_interval` ("40ms"), `packet_size` ("1000B"),
//! `mode` ("bursty" | "paced"). Packets per frame = round(B · frame_interval / (8 · packet_size)),
//! at least one (Chodorek: 25 frames/s, 1000 B packets, 5·B packets per frame with B in Mbit/s).
//! With `cc`, an adaptive source instead ([`super::adaptive`]). Shared keys: [`super::kind::endpoints`].
use super::adaptive;
use super::kind::{endpoints, Build, Cost, Entry, Kind, Path};
use crate::config::{ConfigError, Params};
use crate::media::{Pattern, RTP_OVERHEAD};
use crate::time::Time;

/// (The adaptive example starts at its ceiling: the estimate counts the ceiling, which a source
/// ramping up from 150 kbit/s reaches only after seconds.)
pub const KIND: Kind = Kind {
    name: "video",
    build,
    cost: Some(cost),
    examples: &[r#"{"rate": "1Mbit", "stop": "2s"}"#, r#"{"rate": "1Mbit", "mode": "paced", "stop": "2s"}"#, r#"{"cc": "gcc", "start_rate": "400kbit", "max_rate": "400kbit", "stop": "2s"}"#],
};

/// Hops on which a bursty video frame queues behind its first packet: the first link (the frame
/// leaves at one instant) and the bottleneck it reaches next; later, faster links see it spaced.
pub const QUEUED_HOPS_BURSTY: f64 = 2.0;

fn build(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    if p.has("cc") {
        return adaptive::build(p, b, "video");
    }
    let e = endpoints(p, b, "video")?;
    let rate = p.rate("rate")?;
    let fi = p.duration_or("frame_interval", Time::from_ms(40))?;
    if fi == Time::ZERO {
        return Err(p.err("frame_interval", "must be > 0"));
    }
    let size = p.bytes_opt("packet_size")?.unwrap_or(1000);
    if size < RTP_OVERHEAD as u64 || size > 65_535 {
        return Err(p.err("packet_size", format!("must be between {RTP_OVERHEAD} B and 65535 B, got {size} B")));
    }
    let mode = p.choice("mode", &["bursty", "paced"], Some("bursty"))?;
    let per_frame = ((rate.0 as f64 * fi.secs_f64()) / (8.0 * size as f64)).round().max(1.0) as u32;
    super::audio::add_pair(b, e, "video", Pattern::Video { size: size as u32, per_frame, frame_interval: fi, paced: mode == "paced" });
    Ok(())
}

/// `T · B / (8 · packet_size)` packets; bursty video sends a frame per timer and all but a frame's
/// first packet wait behind another on its first [`QUEUED_HOPS_BURSTY`] hops.
fn cost(e: &Entry, path: &Path) -> Cost {
    if e.has("cc") {
        return adaptive::cost(e, path, true);
    }
    let size = e.bytes("packet_size").unwrap_or(1000.0).max(1.0);
    let bps = e.rate_bps("rate").unwrap_or(0.0);
    let n = e.active_s * bps / (8.0 * size);
    let mut c = Cost { flows: 1, media_rows: n, pkt_hops: n * path.hops, queued: n * path.opp_hops, ..Cost::default() };
    if e.str("mode").unwrap_or("bursty") == "paced" {
        c.sends = n;
    } else {
        let fi = e.dur_ns("frame_interval").unwrap_or(40e6).max(1.0) * 1e-9;
        let k = (bps * fi / (8.0 * size)).round().max(1.0);
        c.sends = n / k;
        c.queued += n * (k - 1.0) / k * path.txd_hops.min(QUEUED_HOPS_BURSTY);
    }
    c
}
