//! Scenarios: the TOML file (handed over as JSON by the Python front) turned into a [`Sim`].
//!
//! A scenario has a `name`, a `duration`, a topology, `[[traffic]]` entries and `[output]`.
//! Topologies are written either as generic links (`[links.NAME]` with `from`, `to`, `rate`,
//! `delay`, `queue`, optional `[links.NAME.reverse]`) or with one of two shorthands that expand
//! into links: `[access]` (server — core — router — bottleneck — client, asymmetric down/up) and
//! `[dumbbell]` (s1..sN — r1 — bottleneck — r2 — d1..dN). Each link is two channels: NAME
//! (from → to) and NAME.rev (to → from). Traffic kinds come from [`crate::traffic::KINDS`], one
//! file per kind.
//!
//! Three parts: [`topology`] reads the links, [`mod@build`] makes the simulation, [`mod@expand`] writes the
//! validated scenario in base units for the Python side.
//!
//! [`Sim`]: crate::engine::Sim
pub mod build;
pub mod expand;
pub mod topology;

pub use build::{build, build_with, channel_capacity, run, run_with, Built, Registries, BUILTIN, DEFAULT_QUEUE_PKTS};
pub use expand::{channel_loss_periods, channel_opportunities, expand, EXPANDED_SCHEMA};
pub use crate::traffic::{Build, StackRecord};
