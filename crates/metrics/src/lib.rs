//! Media-quality and TCP metrics over jitterlab's shared tables (see shared/design.md §Metric
//! definitions). Pure functions over column slices: no I/O, no Python.
//!
//! Flow of data: [`table::Media::new`] validates the `media_packets` columns, unwraps 16-bit
//! sequence numbers if asked, sorts once by (run, flow, seq), drops duplicate copies (keeping the
//! earliest arrival) and records the streams (run, flow) as contiguous row ranges. Every metric
//! then walks those ranges through a [`table::MediaView`] (borrowed slices: of a `Media`, or of one
//! run's own columns where they already are the prepared form, [`one_run::OneRun`]); nothing is
//! per packet on the Python side.
/// `fn $name(args) -> R` calling `$body` (an `#[inline(always)]` function of the same arguments)
/// compiled with AVX2 where the CPU has it: the module is built for baseline x86-64, whose SSE2
/// has no 64-bit compare, so a row loop's min/max and window tests on i64 columns would not
/// vectorise. The same operations either way: the same results.
macro_rules! avx2_dispatch {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($a:ident: $t:ty),*) -> $r:ty = $body:ident) => {
        $(#[$doc])*
        $vis fn $name($($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($a: $t),*) -> $r { $body($($a),*) }
                // SAFETY: the CPU has AVX2 (checked just above)
                return unsafe { avx2($($a),*) };
            }
            $body($($a),*)
        }
    };
}

pub mod delay;
pub mod emodel;
pub mod error;
pub mod loss;
pub mod one_run;
pub mod rtp;
pub mod share;
pub mod stats;
pub mod table;

pub use error::{MetricsError, Result};
pub use one_run::{OneRun, RunColumns};
pub use table::{Media, MediaColumns, MediaOwned, MediaView, RunTimes, Window};

/// Nanoseconds per millisecond / second, to keep unit conversions explicit.
pub const NS_PER_MS: i64 = 1_000_000;
pub const NS_PER_S: i64 = 1_000_000_000;
