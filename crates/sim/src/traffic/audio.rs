//! `kind = "audio"`: one RTP packet of `size` IP bytes (default "80B") every `interval` (default
//! "20ms"), the PAM 2013 study's VoIP flow; with `cc`, an adaptive source instead
//! ([`super::adaptive`]). Shared keys: [`super::kind::endpoints`].
use super::adaptive;
use super::kind::{endpoints, Build, Cost, Endpoints, Entry, Kind, Path};
use crate::config::{ConfigError, Params};
use crate::media::{CbrSource, MediaSink, Pattern, RTP_OVERHEAD};
use crate::time::Time;

pub const KIND: Kind = Kind { name: "audio", build, cost: Some(cost), examples: &[r#"{"stop": "2s"}"#, r#"{"cc": "nada", "stop": "2s"}"#] };

/// Default packet interval: 20 ms, the study's (and G.711's usual) packetisation.
pub const INTERVAL_MS: u64 = 20;

fn build(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    if p.has("cc") {
        return adaptive::build(p, b, "audio");
    }
    let e = endpoints(p, b, "audio")?;
    let size = p.bytes_opt("size")?.unwrap_or(80);
    if size < RTP_OVERHEAD as u64 || size > 65_535 {
        return Err(p.err("size", format!("must be between {RTP_OVERHEAD} B (IP+UDP+RTP headers) and 65535 B, got {size} B")));
    }
    let interval = p.duration_or("interval", Time::from_ms(INTERVAL_MS))?;
    if interval == Time::ZERO {
        return Err(p.err("interval", "must be > 0"));
    }
    add_pair(b, e, "audio", Pattern::Audio { size: size as u32, interval });
    Ok(())
}

/// A constant-rate source at `e.from` and its sink at `e.to` (the video kind's too).
pub(super) fn add_pair(b: &mut Build, e: Endpoints, kind: &str, pattern: Pattern) {
    let flow = b.add_flow(&e.name, kind);
    let sink_id = b.sim.next_agent_id() + 1;
    b.sim.add_agent(e.from, Box::new(CbrSource::new(e.name.clone(), flow, e.to, sink_id, pattern, e.start, e.stop, e.ecn)));
    let presence = b.media_presence(e.to);
    let got = b.sim.add_agent(e.to, Box::new(MediaSink::new(format!("{}.sink", e.name), presence)));
    debug_assert_eq!(got, sink_id);
}

/// One packet per interval over the active time, each one row and one send.
fn cost(e: &Entry, path: &Path) -> Cost {
    if e.has("cc") {
        return adaptive::cost(e, path, false);
    }
    let n = e.active_s * 1e9 / e.dur_ns("interval").unwrap_or(INTERVAL_MS as f64 * 1e6).max(1.0);
    Cost { flows: 1, media_rows: n, pkt_hops: n * path.hops, sends: n, queued: n * path.opp_hops, ..Cost::default() }
}
