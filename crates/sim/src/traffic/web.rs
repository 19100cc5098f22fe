//! `kind = "web"`: one page of `size` bytes in total over `flows` = n parallel connections that
//! start together; each carries size/n (the remainder goes one byte each to the first connections,
//! so the page is exact). No `stagger`. Shared keys: [`super::tcp_entry`].
use super::kind::{Build, Cost, Entry, Kind, Path};
use super::tcp_entry;
use crate::config::{ConfigError, Params};

pub const KIND: Kind = Kind { name: "web", build, cost: Some(cost), examples: &[r#"{"size": "372kB", "flows": 6, "iw": 3}"#] };

fn build(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    let c = tcp_entry::common(p, b, "web")?;
    let total = tcp_entry::size(p)?;
    let n = c.flows;
    if total < n {
        return Err(p.err("size", format!("must be at least one byte per connection ({n}), got {total} B")));
    }
    let sizes: Vec<Option<u64>> = (0..n).map(|i| Some(total / n + u64::from(i < total % n))).collect();
    tcp_entry::add_flows(b, c, "web", &sizes);
    Ok(())
}

/// The page in segments, plus at most one partial segment per connection.
fn cost(e: &Entry, path: &Path) -> Cost {
    let want = e.bytes("size").map(|b| b / tcp_entry::mss(e) + tcp_entry::flows(e));
    tcp_entry::cost(e, path, want)
}
