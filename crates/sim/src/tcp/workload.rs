//! TCP workloads as scenario traffic kinds (built in [`crate::traffic`]: `bulk.rs`, `web.rs`, `ftp.rs`):
//!
//! - `bulk`: `flows` (default 1) transfers of `size` bytes each, from `start`.
//! - `web`: one page of `size` bytes in total over `flows` = n parallel connections that start
//!   together; each carries size/n (the remainder goes one byte each to the first connections, so
//!   the page is exact).
//! - `ftp`: `flows` unlimited transfers (ns-2's FTP source), from `start`.
//!
//! `start` is a duration or a distribution table (`{ dist = "uniform", min = "10s", max = "12s" }`,
//! `{ dist = "exponential", mean = "1s" }`, `{ dist = "normal", mean, sd }`), drawn once per entry
//! (the web page's connections share the draw). `stagger`, a distribution of the same form, adds an
//! independent delay per connection of `bulk` and `ftp` (N flows with staggered starts). Draws come
//! from the stream "traffic:NAME" of the run's seed.
//!
//! TCP keys shared by the three kinds, read by [`super::options::tcp_config`] over the stack profile (defaults from [`TcpConfig::default`]): `mss`, `iw`, `cc`
//! (reno | cubic | bbr | dctcp), `recovery` (sack | newreno) or `sack` (bool), `limited_transmit`, `prr`, `lost_retransmit`, `rack` (RACK loss detection, default true), `tlp` (tail loss probes, default true), `timestamps` (RFC 7323 option, default true), `min_rto`, `rto` (rfc6298 | linux), `delack` (a duration, a
//! number of ms, or "off"), `quickack` (segments, 0 = off), `rcvbuf` or its alias `rwnd` (bytes, or "20pkt" = 20 MSS), `linux_rcvbuf` / `so_rcvbuf` (Linux's receive buffer, `rcvbuf.rs`; with `tcp_rmem_default`, `tcp_rmem_max`, `rmem_max`), `wscale` (bool or shift), `ecn` (false, true = "ect0", or "ect1" = "l4s"; default the algorithm's, "l4s" for `cc = "dctcp"`, else the profile's), `pacing`, `pace_iw` (spread the initial window over one SYN RTT), `hystart` (CUBIC's, default true), `hystart_round_fix` (default true: HyStart rounds as Linux since early 2025), `cubic_initial_growth`, `cubic_delay_min` and `cubic_linux_friendliness` (CUBIC as Linux's bictcp_update: 5 % per RTT before the first reduction, target at t + min RTT, the Reno estimate at α ≈ 8/15 throughout), `abc` (false, true = L 2, or L), `tsq` (TCP Small Queues, default true), `ssthresh`
//! (initial, bytes), `series` (record `tcp_series`). An algorithm's own keys (DCTCP's
//! `dctcp_shift_g`, `dctcp_alpha_on_init`) are read by its registration (`tcp/cc/`).
use serde_json::Value;

use crate::config::{parse_duration, ConfigError, Params};
use crate::rng::Rng;
use crate::time::Time;

pub use super::options::{tcp_config, Stack, STACK_KEYS};

/// A start-time or stagger distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum Dist {
    Fixed(Time),
    Uniform(Time, Time),
    Exponential(Time),
    /// Truncated at zero.
    Normal(Time, Time),
}

impl Dist {
    pub fn draw(&self, rng: &mut Rng) -> Time {
        match *self {
            Dist::Fixed(t) => t,
            Dist::Uniform(a, b) => Time::from_secs_f64(rng.uniform_range(a.secs_f64(), b.secs_f64())),
            Dist::Exponential(m) => Time::from_secs_f64(rng.exponential(m.secs_f64())),
            Dist::Normal(m, s) => Time::from_secs_f64(rng.normal(m.secs_f64(), s.secs_f64()).max(0.0)),
        }
    }
}

/// Reads `key` as a duration or a distribution table.
pub fn dist_opt(p: &mut Params, key: &str) -> Result<Option<Dist>, ConfigError> {
    match p.value_opt(key) {
        None => Ok(None),
        Some(Value::String(s)) => {
            let x = parse_duration(&s).map_err(|m| p.err(key, m))?;
            if x < 0.0 {
                return Err(p.err(key, format!("must be >= 0, got {s:?}")));
            }
            Ok(Some(Dist::Fixed(Time::from_secs_f64(x))))
        }
        Some(v @ Value::Object(_)) => {
            let mut t = Params::new(&p.key_path(key), &v)?;
            let d = match t.choice("dist", &["uniform", "exponential", "normal"], None)?.as_str() {
                "uniform" => {
                    let (a, b) = (t.duration("min")?, t.duration("max")?);
                    if b < a {
                        return Err(t.err("max", format!("must be >= min ({a}), got {b}")));
                    }
                    Dist::Uniform(a, b)
                }
                "exponential" => Dist::Exponential(t.duration("mean")?),
                _ => Dist::Normal(t.duration("mean")?, t.duration("sd")?),
            };
            t.finish()?;
            Ok(Some(d))
        }
        Some(_) => Err(p.err(key, "expected a duration like \"10s\" or a table like { dist = \"uniform\", min = \"10s\", max = \"12s\" }")),
    }
}
