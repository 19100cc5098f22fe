//! `kind = "ftp"`: `flows` unlimited transfers (ns-2's FTP source), from `start` (plus `stagger`
//! per connection). Shared keys: [`super::tcp_entry`].
use super::kind::{Build, Cost, Entry, Kind, Path};
use super::tcp_entry;
use crate::config::{ConfigError, Params};

pub const KIND: Kind = Kind { name: "ftp", build, cost: Some(cost), examples: &[r#"{}"#, r#"{"flows": 2, "cc": "bbr"}"#] };

fn build(p: &mut Params, b: &mut Build) -> Result<(), ConfigError> {
    let c = tcp_entry::common(p, b, "ftp")?;
    let sizes = vec![None; c.flows as usize];
    tcp_entry::add_flows(b, c, "ftp", &sizes);
    Ok(())
}

/// No size: only the path's capacity bounds it.
fn cost(e: &Entry, path: &Path) -> Cost { tcp_entry::cost(e, path, None) }
