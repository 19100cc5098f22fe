//! docs/tcp.md's recipe for a congestion control with an option of its own, tried on a throwaway
//! algorithm: everything about it is in one place (this file stands for `tcp/cc/aimd.rs`), it is
//! registered by one line, read from a scenario entry (its key validated and named on error, shown
//! in the expanded form) and run. And the contract: an algorithm that never sets ssthresh is
//! stopped at its first congestion event instead of running with cwnd = 2^62 − 1 bytes.
use std::sync::{Arc, Once};

use jitterlab_sim::config::{ConfigError, Params};
use jitterlab_sim::record::Tables;
use jitterlab_sim::scenario;
use jitterlab_sim::tcp::cc::{self, cong_avoid_ai, slow_start, Cc, CcParams, CcState, CongestionControl, NoOptions, Registration};
use jitterlab_sim::tcp::TcpConfig;
use serde_json::{json, Value};

// ---- the one file: `tcp/cc/aimd.rs` --------------------------------------------------------------

/// AIMD with a decrease factor of its own: Reno's growth (RFC 5681), and on congestion
/// ssthresh = cwnd = max(β·FlightSize, 2·SMSS).
#[derive(Clone, Debug, PartialEq)]
pub struct AimdConfig {
    /// `aimd_beta`, in (0, 1); Reno's 0.5 by default.
    pub beta: f64,
}

impl AimdConfig {
    fn from_params(p: &mut Params) -> Result<AimdConfig, ConfigError> {
        let beta = p.f64_or("aimd_beta", 0.5)?;
        if !(beta > 0.0 && beta < 1.0) {
            return Err(p.err("aimd_beta", format!("must be in (0, 1), got {beta}")));
        }
        Ok(AimdConfig { beta })
    }
}

impl CcParams for AimdConfig {
    fn build(&self, _cfg: &TcpConfig) -> Cc { Box::new(Aimd { beta: self.beta, acc: 0 }) }
    fn describe(&self) -> Vec<(&'static str, Value)> { vec![("aimd_beta", json!(self.beta))] }
}

pub struct Aimd {
    beta: f64,
    acc: u64,
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str { "aimd" }
    fn cong_avoid(&mut self, st: &mut CcState, acked: u64) {
        if st.in_slow_start() {
            slow_start(st, acked);
        } else {
            cong_avoid_ai(st, acked, &mut self.acc);
        }
    }
    fn on_congestion_event(&mut self, st: &mut CcState) {
        st.ssthresh = ((st.flight as f64 * self.beta) as u64).max(2 * st.mss);
        st.cwnd = st.ssthresh;
        self.acc = 0;
    }
    fn on_rto(&mut self, st: &mut CcState, first: bool) {
        if first {
            self.on_congestion_event(st);
        }
        st.cwnd = st.mss;
    }
}

pub static AIMD: Registration = Registration { name: "aimd", keys: &["aimd_beta"], params: |p| Ok(Arc::new(AimdConfig::from_params(p)?)), ecn: None };

// ---- the registry line (in-tree: `aimd::REGISTRATION,` in `cc::REGISTRY`) -------------------------

fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        cc::register(&AIMD).unwrap();
        cc::register(&NO_SSTHRESH).unwrap();
    });
}

/// Two runs' tables equal column by column (every table, and the whole-run counters).
fn same(a: &Tables, b: &Tables) -> bool {
    a.tcp_flows == b.tcp_flows
        && a.media == b.media
        && a.queue_samples == b.queue_samples
        && a.tcp_series == b.tcp_series
        && (a.sent_bytes, a.delivered_bytes, a.dropped_bytes, a.in_flight_bytes, a.events, a.end_ns, a.tcp_start_ns, a.tcp_end_ns)
            == (b.sent_bytes, b.delivered_bytes, b.dropped_bytes, b.in_flight_bytes, b.events, b.end_ns, b.tcp_start_ns, b.tcp_end_ns)
}

fn scenario_with(tcp: Value) -> Value {
    let mut bulk = json!({"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "300kB", "start": "1s"});
    for (k, v) in tcp.as_object().unwrap() {
        bulk[k] = v.clone();
    }
    json!({
        "name": "cc-recipe",
        "duration": "30s",
        "access": {
            "core_rate": "100Mbit", "core_delay": "5ms",
            "down_rate": "4Mbit", "down_delay": "10ms", "down_queue": {"kind": "droptail", "limit": "12pkt"},
            "up_rate": "1Mbit", "up_delay": "10ms"
        },
        "traffic": [bulk],
    })
}

/// From a scenario entry to a finished transfer: the key is read by the algorithm, shown after `cc` in the
/// expanded `tcp` block, and reaches the algorithm (β = 0.7 and 0.5 give different runs; 0.5
/// given equals the default).
#[test]
fn a_throwaway_algorithm_with_its_own_option_runs_from_a_scenario_entry() {
    setup();
    assert!(cc::kinds().contains(&"aimd"));
    // The entry as the scenario loader hands a TOML file's table to the core (TOML → JSON is
    // the loader's: `jitterlab.scenario.load`): `cc = "aimd"` and `aimd_beta = 0.7`.
    let v = scenario_with(json!({"cc": "aimd", "aimd_beta": 0.7}));
    let x = scenario::expand(&v).unwrap();
    let keys: Vec<&String> = x["traffic"][0]["tcp"].as_object().unwrap().keys().collect();
    assert_eq!(x["traffic"][0]["tcp"]["aimd_beta"], json!(0.7));
    assert!(keys.contains(&&"aimd_beta".to_string()), "{keys:?}");
    let t = scenario::run(&v, 5).unwrap();
    let f = &t.tcp_flows;
    assert_eq!((f.cc[0].as_str(), f.bytes_acked[0]), ("aimd", 300_000));
    assert!(f.drops[0] > 0, "no congestion event: the test would not see β");
    let half = scenario::run(&scenario_with(json!({"cc": "aimd", "aimd_beta": 0.5})), 5).unwrap();
    assert_ne!(half.tcp_flows, t.tcp_flows, "aimd_beta did not reach the algorithm");
    assert!(same(&scenario::run(&scenario_with(json!({"cc": "aimd"})), 5).unwrap(), &half), "the default is 0.5");
}

#[test]
fn its_key_is_validated_and_named() {
    setup();
    let e = |tcp: Value| scenario::expand(&scenario_with(tcp)).unwrap_err().to_string();
    assert_eq!(e(json!({"cc": "aimd", "aimd_beta": 1.5})), "traffic[0].aimd_beta: must be in (0, 1), got 1.5");
    assert_eq!(e(json!({"cc": "reno", "aimd_beta": 0.7})), "traffic[0].aimd_beta: only with cc = \"aimd\", not \"reno\"");
    assert!(e(json!({"cc": "aimd", "aimd_bta": 0.7})).starts_with("traffic[0].aimd_bta: unknown key (did you mean \"aimd_beta\"?)"));
    assert_eq!(cc::register(&AIMD).unwrap_err(), "cc: \"aimd\" is already registered");
}

// ---- the contract ------------------------------------------------------------------------------

/// Window-based, and written as the trait once invited: halve cwnd on loss, forget ssthresh.
pub struct NoSsthresh;

impl CongestionControl for NoSsthresh {
    fn name(&self) -> &'static str { "no_ssthresh" }
    fn cong_avoid(&mut self, st: &mut CcState, acked: u64) { slow_start(st, acked) }
    fn on_congestion_event(&mut self, st: &mut CcState) { st.cwnd = (st.cwnd / 2).max(st.mss) }
    fn on_rto(&mut self, st: &mut CcState, _first: bool) { st.cwnd = st.mss }
}

pub static NO_SSTHRESH: Registration = Registration {
    name: "no_ssthresh",
    keys: &[],
    params: |_| Ok(Arc::new(NoOptions(|_| Box::new(NoSsthresh)))),
    ecn: None,
};

/// Before the check, this ran with cwnd = 4,611,686,018,427,387,903 after its first loss (the
/// sender sets cwnd = ssthresh at the end of recovery); now the run stops there, naming it.
#[test]
#[should_panic(expected = "congestion control \"no_ssthresh\" left ssthresh unset after a congestion event")]
fn an_algorithm_that_never_sets_ssthresh_is_stopped_at_its_first_congestion_event() {
    setup();
    let _ = scenario::run(&scenario_with(json!({"cc": "no_ssthresh"})), 5);
}
