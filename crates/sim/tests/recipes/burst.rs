//! `kind = "burst"`: `count` RTP packets of `size` IP bytes leave `from` back to back at `at`.
use jitterlab_sim::config::{ConfigError, Params};
use jitterlab_sim::media::{CbrSource, MediaSink, Pattern};
use jitterlab_sim::time::Time;
use jitterlab_sim::traffic::kind::{Build, Cost, Entry, Kind, Path};

pub const KIND: Kind = Kind { name: "burst", build, cost: Some(cost), examples: &[r#"{"count": 30, "at": "1s"}"#] };

fn build(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    let name = p.str_opt("name")?.unwrap_or_else(|| format!("burst{}", b.count("burst")));
    let (from, to) = (b.node(p, "from")?, b.node(p, "to")?);
    let at = p.duration_or("at", Time::ZERO)?;
    let count = p.u64_or("count", 10)?;
    if count == 0 || count > 10_000 {
        return Err(p.err("count", format!("must be between 1 and 10000, got {count}")));
    }
    let size = p.bytes_opt("size")?.unwrap_or(1000);
    if !(40..=65_535).contains(&size) {
        return Err(p.err("size", format!("must be between 40 B (IP+UDP+RTP headers) and 65535 B, got {size} B")));
    }
    // one bursty "frame" of `count` packets, and no second one (the source stops 1 ns later)
    let pattern = Pattern::Video { size: size as u32, per_frame: count as u32, frame_interval: Time::from_secs(1), paced: false };
    let flow = b.add_flow(&name, "burst");
    let sink = b.sim.next_agent_id() + 1;
    b.sim.add_agent(from, Box::new(CbrSource::new(name.clone(), flow, to, sink, pattern, at, at + Time(1), false)));
    let presence = b.media_presence(to);
    b.sim.add_agent(to, Box::new(MediaSink::new(format!("{name}.sink"), presence)));
    Ok(())
}

/// `count` rows and sends; all but the first packet wait behind another on the first two hops.
fn cost(e: &Entry, path: &Path) -> Cost {
    let n = e.u64("count").unwrap_or(10) as f64;
    Cost { flows: 1, media_rows: n, pkt_hops: n * path.hops, sends: 1.0, queued: (n - 1.0) * path.txd_hops.min(2.0) + n * path.opp_hops, ..Cost::default() }
}
