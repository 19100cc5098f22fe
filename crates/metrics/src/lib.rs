//! Media-quality and TCP metrics over jitterlab's shared tables (see shared/design.md §Metric
//! definitions). Pure functions over column slices: no I/O, no Python.
//!
//! Flow of data: [`table::Media::new`] validates the `media_packets` columns, unwraps 16-bit
//! sequence numbers if asked, sorts once by (run, flow, seq), drops duplicate copies (keeping the
//! earliest arrival) and records the streams (run, flow) as contiguous row ranges. Every metric
//! then walks those ranges; nothing is per packet on the Python side.
pub mod delay;
pub mod emodel;
pub mod error;
pub mod loss;
pub mod rtp;
pub mod stats;
pub mod table;

pub use error::{MetricsError, Result};
pub use table::{Media, MediaColumns, MediaOwned, RunTimes, Window};

/// Nanoseconds per millisecond / second, to keep unit conversions explicit.
pub const NS_PER_MS: i64 = 1_000_000;
pub const NS_PER_S: i64 = 1_000_000_000;
