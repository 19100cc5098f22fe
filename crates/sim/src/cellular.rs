//! jitterlab's cellular link model: a radio downlink (or uplink) as delivery opportunities.
//!
//! Every TTI (transmission time interval, the scheduler's granularity; HSPA: 2 ms) the model
//!  1. advances the channel: ln C follows a Gauss–Markov (AR(1)) process with stationary standard
//!     deviation `sigma` and correlation e^(−Δt/`coherence`); C is clipped to [`min_rate`,
//!     `max_rate`] and the process's location is solved so that E[C] = `mean_rate` exactly;
//!  2. schedules this user with probability `share` (the rest of the TTIs go to other users); a
//!     scheduled TTI carries C/`share`·TTI bits, so the user's mean stays C;
//!  3. cuts the carried bytes into 1504-byte delivery opportunities (fractions carry over), the
//!     TTI's transport block;
//!  4. sends the block with HARQ: the first transmission fails with probability `bler`, each
//!     retransmission with `bler_retx`, one `harq_rtt` apart; after `harq_max_tx` failed
//!     transmissions RLC retransmits after `rlc_delay` and HARQ starts again — so nothing is lost,
//!     the block is only later, by whole HARQ rounds (plus RLC delays);
//!  5. delivers in order (RLC acknowledged mode): a block leaves no earlier than the block before
//!     it, so a retransmitted block holds back the later ones.
//!
//! Each block's opportunities are stamped with its in-order delivery millisecond (the end of its
//! TTI plus its retransmission delay; the TTI grid is offset from the run's origin by a random
//! whole number of ms below one TTI). The stamps form a Mahimahi trace, so a cellular link runs
//! on exactly the trace mechanism (`link::OppLink`) and can be written out as a trace file.
//!
//! What the trace form cannot say: when a block is held back, packets that arrive during the hold
//! may use its capacity (a trace has no notion of when a block was sent), and an empty TTI's block
//! is sent and may fail as if it carried data. Both make a lightly loaded link look a little worse
//! than a real one; the calibration (docs/calibration.md) is done on the model as it is.
//!
//! Randomness: one stream per channel, `cellular:<channel>` of the run's seed.
use crate::config::{ConfigError, Params};
use crate::trace::{Trace, OPPORTUNITY_BYTES};
use crate::rng::Rng;
use crate::time::Time;

/// The model's parameters in base units (bit/s, ms).
#[derive(Clone, Debug, PartialEq)]
pub struct CellularParams {
    /// `mean_rate`: long-run mean capacity of this user (bit/s), what the channels table reports.
    pub mean_bps: f64,
    /// `min_rate`, `max_rate`: the channel's capacity is clipped to these (bit/s; max may be inf).
    pub min_bps: f64,
    pub max_bps: f64,
    /// `sigma`: standard deviation of ln(capacity) before clipping.
    pub sigma: f64,
    /// `coherence`: time constant of the channel's correlation (ms).
    pub coherence_ms: f64,
    /// `tti`: scheduling granularity (whole ms).
    pub tti_ms: u64,
    /// `share`: fraction of TTIs in which this user is served.
    pub share: f64,
    /// `bler`: block error rate of a first transmission; `bler_retx`: of a HARQ retransmission.
    pub bler: f64,
    pub bler_retx: f64,
    /// `harq_rtt`: time between HARQ transmissions of a block (whole ms).
    pub harq_rtt_ms: u64,
    /// `harq_max_tx`: HARQ transmissions before RLC takes over.
    pub harq_max_tx: u32,
    /// `rlc_delay`: extra delay of an RLC retransmission (whole ms).
    pub rlc_delay_ms: u64,
    /// `iub_cycle`: the Iub flow-control cycle between RNC and Node B (whole ms; 0 = off, the
    /// default): see [`crate::link::IubGate`]. Unlike everything above it depends on the load, so
    /// a link with it has no trace form.
    pub iub_cycle_ms: u64,
}

/// Defaults: the PAM 2013 HSPA downlink as calibrated in docs/calibration.md ("Cellular model").
/// Fixed by the standard or assumed: `tti` 2 ms (HSDPA), `harq_rtt` 12 ms (HSDPA: 6 HARQ processes
/// of 2 ms), `bler` 0.1 (the usual first-transmission BLER target), `harq_max_tx` 4, `rlc_delay`
/// 60 ms, `coherence` 1 s. From the paper's slides: `min_rate`/`max_rate` 2.7/5 Mbit/s and `sigma`
/// 0.19 (that range as ±1.645 σ of ln C). Fitted: `share` 0.45 (Fig. 2's 25–75th percentiles),
/// `bler_retx` 0.03 (Fig. 2's maximum), `mean_rate` 3.0 Mbit/s (Fig. 3's median 1.42 s).
pub const DEFAULTS: CellularParams = CellularParams {
    mean_bps: 3.0e6,
    min_bps: 2.7e6,
    max_bps: 5.0e6,
    sigma: 0.19,
    coherence_ms: 1000.0,
    tti_ms: 2,
    share: 0.45,
    bler: 0.1,
    bler_retx: 0.03,
    harq_rtt_ms: 12,
    harq_max_tx: 4,
    rlc_delay_ms: 60,
    iub_cycle_ms: 0,
};

/// Every key of a `cellular = { … }` table.
pub const KEYS: &[&str] = &["mean_rate", "min_rate", "max_rate", "sigma", "coherence", "tti", "share", "bler", "bler_retx", "harq_rtt", "harq_max_tx", "rlc_delay", "iub_cycle"];

fn whole_ms(p: &mut Params, key: &str, default: u64, min: u64) -> Result<u64, ConfigError> {
    let Some(t) = p.duration_opt(key)? else { return Ok(default) };
    if t.ns() % 1_000_000 != 0 {
        return Err(p.err(key, format!("must be a whole number of milliseconds (delivery opportunities are stamped in ms), got {t}")));
    }
    let ms = t.ns() / 1_000_000;
    if ms < min {
        return Err(p.err(key, format!("must be >= {min} ms, got {ms} ms")));
    }
    Ok(ms)
}

fn prob(p: &mut Params, key: &str, default: f64, max: f64) -> Result<f64, ConfigError> {
    let x = p.f64_or(key, default)?;
    if !(0.0..=max).contains(&x) {
        return Err(p.err(key, format!("must be a probability in [0, {max}], got {x}")));
    }
    Ok(x)
}

impl CellularParams {
    /// Reads a `cellular = { … }` table; every error names the key.
    // `!(x >= 0.0)` and the like on purpose: NaN must fail every check.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn parse(p: &mut Params) -> Result<CellularParams, ConfigError> {
        let d = DEFAULTS;
        let mean_bps = p.rate_opt("mean_rate")?.map(|r| r.0 as f64).unwrap_or(d.mean_bps);
        let min_bps = match p.value_opt("min_rate") {
            None => d.min_bps,
            Some(serde_json::Value::String(s)) if s.trim() == "0" => 0.0,
            Some(v) => {
                let s = v.as_str().ok_or_else(|| p.err("min_rate", format!("expected a rate as a string with a unit, got {v}")))?;
                crate::config::parse_rate(s).map_err(|m| p.err("min_rate", m))?
            }
        };
        let max_bps = match p.value_opt("max_rate") {
            None => d.max_bps,
            Some(serde_json::Value::String(s)) if s.trim() == "inf" => f64::INFINITY,
            Some(v) => {
                let s = v.as_str().ok_or_else(|| p.err("max_rate", format!("expected a rate as a string with a unit (or \"inf\"), got {v}")))?;
                crate::config::parse_rate(s).map_err(|m| p.err("max_rate", m))?
            }
        };
        if !(min_bps >= 0.0) {
            return Err(p.err("min_rate", format!("must be >= 0, got {min_bps} bit/s")));
        }
        if !(min_bps < mean_bps) {
            return Err(p.err("min_rate", format!("must be below mean_rate ({mean_bps} bit/s), got {min_bps} bit/s")));
        }
        if !(max_bps > mean_bps) {
            return Err(p.err("max_rate", format!("must be above mean_rate ({mean_bps} bit/s), got {max_bps} bit/s")));
        }
        let sigma = p.f64_or("sigma", d.sigma)?;
        if !(0.0..=3.0).contains(&sigma) {
            return Err(p.err("sigma", format!("must be between 0 and 3 (standard deviation of ln capacity), got {sigma}")));
        }
        let coherence_ms = match p.duration_opt("coherence")? {
            None => d.coherence_ms,
            Some(t) => t.ns() as f64 / 1e6,
        };
        if !(coherence_ms > 0.0) {
            return Err(p.err("coherence", "must be > 0"));
        }
        let tti_ms = whole_ms(p, "tti", d.tti_ms, 1)?;
        let share = p.f64_or("share", d.share)?;
        if !(share > 0.0 && share <= 1.0) {
            return Err(p.err("share", format!("must be in (0, 1] (the fraction of TTIs that serve this user), got {share}")));
        }
        let bler = prob(p, "bler", d.bler, 0.99)?;
        let bler_retx = prob(p, "bler_retx", d.bler_retx, 0.99)?;
        let harq_rtt_ms = whole_ms(p, "harq_rtt", d.harq_rtt_ms, 1)?;
        let harq_max_tx = p.u64_or("harq_max_tx", d.harq_max_tx as u64)?;
        if !(1..=32).contains(&harq_max_tx) {
            return Err(p.err("harq_max_tx", format!("must be between 1 and 32, got {harq_max_tx}")));
        }
        let rlc_delay_ms = whole_ms(p, "rlc_delay", d.rlc_delay_ms, 0)?;
        let iub_cycle_ms = whole_ms(p, "iub_cycle", d.iub_cycle_ms, 0)?;
        let out = CellularParams { mean_bps, min_bps, max_bps, sigma, coherence_ms, tti_ms, share, bler, bler_retx, harq_rtt_ms, harq_max_tx: harq_max_tx as u32, rlc_delay_ms, iub_cycle_ms };
        if out.location().is_none() {
            return Err(p.err("mean_rate", "no channel process has this mean within min_rate and max_rate"));
        }
        Ok(out)
    }

    /// μ of ln C such that E[clip(e^X, min, max)] = mean for X ~ N(μ, σ²) (bisection; E is
    /// increasing in μ).
    pub fn location(&self) -> Option<f64> {
        if self.sigma == 0.0 {
            return Some(self.mean_bps.ln());
        }
        let (mut lo, mut hi) = (self.mean_bps.ln() - 20.0 * self.sigma - 20.0, self.mean_bps.ln() + 20.0);
        if clipped_lognormal_mean(lo, self.sigma, self.min_bps, self.max_bps) > self.mean_bps || clipped_lognormal_mean(hi, self.sigma, self.min_bps, self.max_bps) < self.mean_bps {
            return None;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if clipped_lognormal_mean(mid, self.sigma, self.min_bps, self.max_bps) < self.mean_bps { lo = mid } else { hi = mid }
        }
        Some(0.5 * (lo + hi))
    }

    /// The expanded form (base units) for `expand_scenario`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": "cellular",
            "mean_bps": self.mean_bps,
            "min_bps": self.min_bps,
            "max_bps": if self.max_bps.is_finite() { serde_json::json!(self.max_bps) } else { serde_json::Value::Null },
            "sigma": self.sigma,
            "coherence_ns": (self.coherence_ms * 1e6).round() as u64,
            "tti_ns": self.tti_ms * 1_000_000,
            "share": self.share,
            "bler": self.bler,
            "bler_retx": self.bler_retx,
            "harq_rtt_ns": self.harq_rtt_ms * 1_000_000,
            "harq_max_tx": self.harq_max_tx,
            "rlc_delay_ns": self.rlc_delay_ms * 1_000_000,
            "iub_cycle_ns": self.iub_cycle_ms * 1_000_000,
        })
    }
}

/// Standard normal CDF via erfc (Numerical Recipes' Chebyshev erfc, fractional error < 1.2e-7).
fn phi(x: f64) -> f64 {
    if x == f64::INFINITY {
        return 1.0;
    }
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t * (-z * z - 1.26551223
        + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
        .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// E[clip(e^X, a, b)] for X ~ N(mu, s²), s > 0, 0 <= a < b <= inf.
pub fn clipped_lognormal_mean(mu: f64, s: f64, a: f64, b: f64) -> f64 {
    let la = if a > 0.0 { a.ln() } else { f64::NEG_INFINITY };
    let lb = b.ln();
    let lower = if a > 0.0 { a * phi((la - mu) / s) } else { 0.0 };
    let upper = if b.is_finite() { b * (1.0 - phi((lb - mu) / s)) } else { 0.0 };
    let mid = (mu + 0.5 * s * s).exp() * (phi((lb - mu - s * s) / s) - phi((la - mu - s * s) / s));
    lower + upper + mid
}

/// One transport block as the model sent it (for tests and inspection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// TTI index; the block's TTI ends at (tti + 1)·TTI + phase ms.
    pub tti: u64,
    /// Delivery opportunities (1504 B each) the block carries.
    pub opps: u32,
    /// HARQ retransmissions (each one `harq_rtt` later) and RLC retransmissions (each `rlc_delay`).
    pub harq_retx: u32,
    pub rlc_retx: u32,
    /// When the block would arrive on its own, and when in-order delivery releases it (ms).
    pub own_ms: u64,
    pub delivered_ms: u64,
}

/// The channel process and scheduler of one link direction.
pub struct Generator {
    p: CellularParams,
    rng: Rng,
    mu: f64,
    rho: f64,
    x: f64,
    credit: f64,
    tti: u64,
    /// Offset of the TTI grid from the run's time origin (ms, < TTI): the radio's clock has no
    /// relation to when the run starts.
    pub phase_ms: u64,
    last_delivered: u64,
    /// Capacity C of the last TTI (bit/s), for tests.
    pub last_capacity: f64,
}

impl Generator {
    /// The generator of channel `channel` in the run seeded with `seed` (stream `cellular:<channel>`).
    pub fn new(p: &CellularParams, seed: u64, channel: &str) -> Generator {
        let mut rng = Rng::stream(seed, &format!("cellular:{channel}"));
        let phase_ms = ((rng.uniform() * p.tti_ms as f64) as u64).min(p.tti_ms - 1);
        let mu = p.location().expect("checked when parsed");
        let rho = (-(p.tti_ms as f64) / p.coherence_ms).exp();
        // Start in the stationary distribution so the first seconds are not special.
        let x = rng.normal(mu, p.sigma);
        Generator { p: p.clone(), rng, mu, rho, x, credit: 0.0, tti: 0, phase_ms, last_delivered: 0, last_capacity: 0.0 }
    }

    /// Runs one TTI; returns its block (opps may be 0: nothing delivered).
    pub fn step(&mut self) -> Block {
        let p = &self.p;
        let k = self.tti;
        self.tti += 1;
        if k > 0 {
            let innov = self.rng.normal(0.0, p.sigma * (1.0 - self.rho * self.rho).sqrt());
            self.x = self.mu + self.rho * (self.x - self.mu) + innov;
        }
        let c = self.x.exp().clamp(p.min_bps, p.max_bps);
        self.last_capacity = c;
        let served = p.share >= 1.0 || self.rng.uniform() < p.share;
        if served {
            self.credit += c / p.share * p.tti_ms as f64 * 1e-3 / 8.0;
        }
        let opps = (self.credit / OPPORTUNITY_BYTES as f64).floor();
        self.credit -= opps * OPPORTUNITY_BYTES as f64;
        let opps = opps as u32;
        let end = (k + 1) * p.tti_ms + self.phase_ms;
        if opps == 0 {
            return Block { tti: k, opps, harq_retx: 0, rlc_retx: 0, own_ms: end, delivered_ms: end.max(self.last_delivered) };
        }
        let (mut harq_retx, mut rlc_retx) = (0u32, 0u32);
        let mut delay = 0u64;
        'rlc: loop {
            for tx in 0..p.harq_max_tx {
                let fail = if tx == 0 { p.bler } else { p.bler_retx };
                if self.rng.uniform() >= fail {
                    break 'rlc;
                }
                if tx + 1 < p.harq_max_tx {
                    harq_retx += 1;
                    delay += p.harq_rtt_ms;
                }
            }
            // HARQ gave up: RLC retransmits the block after its status round trip.
            rlc_retx += 1;
            delay += p.rlc_delay_ms;
            if rlc_retx > 1000 {
                break; // unreachable in practice (bler <= 0.99); keeps the loop bounded
            }
        }
        let own_ms = end + delay;
        let delivered_ms = own_ms.max(self.last_delivered);
        self.last_delivered = delivered_ms;
        Block { tti: k, opps, harq_retx, rlc_retx, own_ms, delivered_ms }
    }
}

/// Why a model with `iub_cycle` has no trace (nor a testbed replay): its gate depends on the load.
pub const NO_TRACE_FORM: &str = "iub_cycle: the Iub flow-control gate depends on the load, so this model has no trace form (set iub_cycle = \"0ms\" to write or replay its trace)";

/// Extra milliseconds generated beyond a run's duration, so that a replay that runs a little
/// longer (the testbed) still finds the same opportunities.
pub const MARGIN_MS: u64 = 10_000;

/// Most delivery opportunities the model generates for one channel (8 bytes each: 400 MB), about
/// 4.4 hours at 5 Mbit/s; longer runs are refused before anything is generated.
pub const MAX_OPPORTUNITIES: f64 = 50e6;

/// Refuses horizons whose opportunities would not fit in [`MAX_OPPORTUNITIES`].
pub fn check_horizon(p: &CellularParams, horizon_ms: u64) -> Result<(), String> {
    let n = p.mean_bps * horizon_ms as f64 * 1e-3 / (8.0 * OPPORTUNITY_BYTES as f64);
    if n > MAX_OPPORTUNITIES {
        return Err(format!("the cellular model would generate about {n:.3e} delivery opportunities for {:.0} s at {:.3} Mbit/s (limit {MAX_OPPORTUNITIES:.0e}); shorten the run", horizon_ms as f64 / 1e3, p.mean_bps / 1e6));
    }
    Ok(())
}

/// The opportunity stamps the model produces for the TTIs that end by `horizon_ms` (roughly).
pub fn stamps(p: &CellularParams, seed: u64, channel: &str, horizon_ms: u64) -> Vec<u64> {
    let mut g = Generator::new(p, seed, channel);
    let n = horizon_ms.div_ceil(p.tti_ms);
    let expect = (p.mean_bps * horizon_ms as f64 * 1e-3 / 8.0 / OPPORTUNITY_BYTES as f64 * 1.05).min(MAX_OPPORTUNITIES);
    let mut out = Vec::with_capacity(expect as usize + 16);
    for _ in 0..n {
        let b = g.step();
        for _ in 0..b.opps {
            out.push(b.delivered_ms);
        }
    }
    out
}

/// The trace a channel uses in a run of `duration` (generated for duration + [`MARGIN_MS`]).
pub fn trace_for_run(p: &CellularParams, seed: u64, channel: &str, duration: Time) -> Result<Trace, String> {
    let horizon = duration.ns().div_ceil(1_000_000) + MARGIN_MS;
    check_horizon(p, horizon)?;
    Trace::from_stamps(stamps(p, seed, channel, horizon)).map_err(|_| "the model produced no delivery opportunity (mean_rate too low for the duration)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfc_matches_known_values() {
        // erfc(0) = 1, erfc(1) = 0.157299207050285, erfc(-1) = 1.842700792949715 (A&S table 7.1).
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157299207050285).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842700792949715).abs() < 1e-7);
        assert!((phi(1.959963984540054) - 0.975).abs() < 1e-7);
    }

    #[test]
    fn unclipped_mean_is_the_lognormal_mean() {
        // E[e^X] = e^(mu + s²/2) without clipping.
        let m = clipped_lognormal_mean(1.0, 0.5, 0.0, f64::INFINITY);
        assert!((m / (1.0f64 + 0.125).exp() - 1.0).abs() < 1e-6, "{m}");
    }
}
