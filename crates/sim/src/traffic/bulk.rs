//! `kind = "bulk"`: `flows` (default 1) transfers of `size` bytes each, from `start` (plus
//! `stagger` per connection). Shared keys: [`super::tcp_entry`].
use super::kind::{Build, Cost, Entry, Kind, Path};
use super::tcp_entry;
use crate::config::{ConfigError, Params};

pub const KIND: Kind = Kind { name: "bulk", build, cost: Some(cost), examples: &[r#"{"size": "200kB"}"#, r#"{"size": "50kB", "flows": 3, "cc": "cubic"}"#] };

fn build(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    let c = tcp_entry::common(p, b, "bulk")?;
    let size = tcp_entry::size(p)?;
    let sizes = vec![Some(size); c.flows as usize];
    tcp_entry::add_flows(b, c, "bulk", &sizes);
    Ok(())
}

/// Each connection sends `size / MSS` segments, within what the path carries.
fn cost(e: &Entry, path: &Path) -> Cost {
    let want = e.bytes("size").map(|b| tcp_entry::flows(e) * b / tcp_entry::mss(e));
    tcp_entry::cost(e, path, want)
}
