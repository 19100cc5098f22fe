//! jitterlab's simulator core: a deterministic, packet-level, discrete-event network simulator for
//! the question "how does competing TCP traffic hurt an interactive media flow over a bottleneck?".
//!
//! Contract: no I/O, no wall clock, no global state (but for [`config::record`]'s thread-local
//! recorder, off unless it runs, which observes the keys read and changes nothing). Given a scenario and a seed, [`scenario::run`]
//! returns the same [`record::Tables`] bit for bit. Time is integer nanoseconds ([`Time`]); events at
//! the same instant run in the order they were decided ([`event::EventQueue`]); every component
//! draws from its own named random stream ([`rng::Rng::stream`]).
pub mod cake_autorate;
pub mod cellular;
pub mod config;
pub mod engine;
pub mod estimate;
pub mod event;
pub mod link;
pub mod media;
pub mod minmax;
pub mod packet;
pub mod qdisc;
pub mod record;
pub mod rng;
pub mod rtc;
pub mod scenario;
pub mod schema;
pub mod tcp;
pub mod time;
pub mod trace;
pub mod traffic;

pub use engine::{Agent, Ctx, Sim};
pub use packet::{Body, Ecn, Packet};
pub use time::{Rate, Time};
