//! Traffic kinds: what a `[[traffic]]` entry of a scenario may be. Each kind is one file that owns
//! its keys, their defaults and validation ([`Kind::build`], reading the entry through [`crate::config::Params`],
//! which refuses keys nobody read), its cost for the estimate ([`Kind::cost`]) and an example entry
//! the registry-loop tests run ([`Kind::examples`]); it is registered by one line in [`KINDS`].
//! Recipe: docs/traffic.md.
//!
//! Kinds build on the models (`crate::media`, `crate::rtc`, `crate::tcp`) and never the other way
//! round: the models know nothing of scenarios. The scenario builder (`crate::scenario`) hands each
//! entry to its kind with a [`Build`]: the simulation under construction and what the entries
//! share (the run's seed and duration, the hosts' RWND moderators, the default TCP stack).
pub mod adaptive;
pub mod audio;
pub mod bulk;
pub mod ftp;
pub mod kind;
pub mod tcp_entry;
pub mod video;
pub mod web;

pub use kind::{endpoints, Build, Builder, Cost, CostFn, Endpoints, Entry, HostModeration, Kind, Path, StackRecord};

/// Every traffic kind a scenario may name, one line each.
pub const KINDS: &[Kind] = &[audio::KIND, video::KIND, bulk::KIND, web::KIND, ftp::KIND];

/// The names in [`KINDS`], for error messages and `sim_registry`.
pub fn kinds() -> Vec<&'static str> { KINDS.iter().map(|k| k.name).collect() }

/// Looks `name` up in `registry`.
pub fn find<'r>(registry: &'r [Kind], name: &str) -> Option<&'r Kind> { registry.iter().find(|k| k.name == name) }
