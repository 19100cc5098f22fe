//! What the TCP kinds (`bulk`, `web`, `ftp`) share: `name`, `from`, `to`, `start` (a duration or a
//! distribution, drawn once per entry), `flows` (1..=10000), `stagger` (not `web`: a distribution
//! added per connection), the stack keys of [`crate::tcp::workload::tcp_config`], and their cost.
//! Draws come from the stream "traffic:NAME" of the run's seed.
use super::kind::{Build, Cost, Entry, Path};
use crate::config::{ConfigError, Params};
use crate::packet::NodeId;
use crate::rng::Rng;
use crate::tcp::agent::{add_connection, ConnSpec};
use crate::tcp::workload::{dist_opt, tcp_config, Dist};
use crate::tcp::{SharedWindowPolicy, TcpConfig};
use crate::time::Time;

/// Largest transfer accepted (sequence numbers are 64-bit and must not approach overflow).
pub const MAX_SIZE: u64 = 1 << 60;

/// Hops on which a TCP data segment finds another one queued behind it (the bottleneck's standing
/// queue); ACKs are spaced by the data they acknowledge and queue nowhere.
pub const QUEUED_HOPS_TCP: f64 = 1.0;
/// MSS the estimate assumes when the entry gives none (Ethernet's 1500 B less 40 B of headers).
pub const DEFAULT_MSS: f64 = 1460.0;
const TCP_HDR: f64 = 40.0;

/// The shared keys of one TCP entry, read.
pub struct Common {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub start: Dist,
    pub flows: u64,
    pub stagger: Option<Dist>,
    pub cfg: TcpConfig,
}

/// Reads the shared keys of an entry of `kind` (refusing a media controller in `cc` first).
pub fn common(p: &mut Params, b: &mut Build, kind: &str) -> Result<Common, ConfigError> {
    reject_media_cc(p, kind)?;
    let name = p.str_opt("name")?.unwrap_or_else(|| format!("{kind}{}", b.count(kind)));
    let from = b.node(p, "from")?;
    let to = b.node(p, "to")?;
    if from == to {
        return Err(p.err("to", "must differ from `from`"));
    }
    let start = dist_opt(p, "start")?.unwrap_or(Dist::Fixed(Time::ZERO));
    let flows = p.u64_or("flows", 1)?;
    if flows == 0 || flows > 10_000 {
        return Err(p.err("flows", format!("must be between 1 and 10000, got {flows}")));
    }
    let stagger = if kind == "web" { None } else { dist_opt(p, "stagger")? };
    let (cfg, stack) = tcp_config(p, b.stack())?;
    b.record_stack(&name, &cfg, &stack);
    Ok(Common { name, from, to, start, flows, stagger, cfg })
}

/// A media controller named on a TCP entry is a mistake worth its own message (the TCP builder
/// would only list its own controllers): `cc = "gcc"` on `bulk` says where gcc belongs.
fn reject_media_cc(p: &Params, kind: &str) -> Result<(), ConfigError> {
    if let Ok(Some(cc)) = p.duplicate().str_opt("cc") {
        if crate::rtc::CONTROLLERS.iter().any(|(n, _)| *n == cc) {
            return Err(p.err("cc", format!("{cc:?} is a media congestion controller: it needs an RTP source (kind = \"video\" or \"audio\"), not {kind:?}; a {kind} entry takes a TCP one")));
        }
    }
    Ok(())
}

/// One connection per entry of `sizes` (None: unlimited), role `role`.
pub fn add_flows(b: &mut Build, c: Common, role: &str, sizes: &[Option<u64>]) {
    let mut rng = Rng::stream(b.seed, &format!("traffic:{}", c.name));
    let t0 = c.start.draw(&mut rng);
    // The receiving host's RWND moderator (`[hosts.NAME.rwnd]`), shared by its connections.
    let moderated = b.window_policy(c.to, &c.name);
    for (i, size) in sizes.iter().enumerate() {
        let extra = c.stagger.as_ref().map_or(Time::ZERO, |d| d.draw(&mut rng));
        let name = if sizes.len() == 1 { c.name.clone() } else { format!("{}.{i}", c.name) };
        let policy = moderated.as_ref().map(|(m, _)| m.clone() as SharedWindowPolicy);
        // The algorithm's own randomness (BBR's gain-cycle phase) from a stream per connection,
        // so that it never shifts the traffic draws above.
        let cfg = TcpConfig { cc_seed: Rng::stream(b.seed, &format!("cc:{name}")).next_u64(), ..c.cfg.clone() };
        let conn = add_connection(b.sim, ConnSpec { name, role: role.into(), from: c.from, to: c.to, start: t0 + extra, size: *size, cfg, policy });
        if let Some((m, w)) = &moderated {
            m.borrow_mut().register(conn.flow, *w, c.cfg.payload_mss());
            m.borrow_mut().set_start(conn.flow, t0 + extra);
        }
    }
}

/// `size`: bytes, at most [`MAX_SIZE`].
pub fn size(p: &mut Params) -> Result<u64, ConfigError> {
    let s = p.bytes("size")?;
    if s > MAX_SIZE {
        return Err(p.err("size", format!("must be at most 2^60 bytes, got {s} B")));
    }
    Ok(s)
}

/// `segments = min(want, C · T / (8 · (MSS + 40)))` plus 4 per connection (handshake and FIN):
/// a transfer cannot outrun its bottleneck `C`; `want` is the entry's own bound in segments
/// (None: unlimited). One ACK per segment back (an upper bound: delayed ACKs halve it).
pub fn cost(e: &Entry, path: &Path, want: Option<f64>) -> Cost {
    let (flows, mss) = (flows(e), mss(e));
    let cap_segs = path.capacity_bps * e.active_s / (8.0 * (mss + TCP_HDR));
    let segs = want.map_or(cap_segs, |w| w.min(cap_segs)) + 4.0 * flows;
    Cost {
        flows: flows as u64,
        tcp_segments: segs,
        // data one way, one ACK per segment back
        pkt_hops: 2.0 * segs * path.hops,
        sends: 2.0 * segs,
        queued: segs * path.txd_hops.min(QUEUED_HOPS_TCP),
        series_rows: if e.bool("series") == Some(true) { 2.0 * segs } else { 0.0 },
        ..Cost::default()
    }
}

/// The entry's MSS as the estimate reads it.
pub fn mss(e: &Entry) -> f64 { e.bytes("mss").unwrap_or(DEFAULT_MSS).max(1.0) }

/// The entry's `flows` as the estimate reads it.
pub fn flows(e: &Entry) -> f64 { e.u64("flows").unwrap_or(1).max(1) as f64 }
