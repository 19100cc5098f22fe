//! Stack profiles (`tcp/profile.rs`): every switch of every profile changes at least one table of a
//! small scenario (no switch that does nothing), a key overrides its profile's value, the
//! scenario-wide `stack` applies to every entry that names none, unknown names list the known
//! ones, and the expanded form records profile, overrides and every switch.
use jitterlab_sim::scenario;
use jitterlab_sim::tcp::profile::{self, PROFILES};
use serde_json::{json, Value};

/// The bottlenecks the switches are tried on: `clean` (500-packet DropTail, no loss: slow start,
/// HyStart and the receive buffer decide), `lossy` (RED with ECN and 1 % loss: recovery),
/// `heavy` (5 % loss, 30-packet DropTail: timeouts and lost retransmissions).
const SCENES: [&str; 3] = ["clean", "lossy", "heavy"];

/// Audio, a 3 MB download and six web flows over a 4 Mbit/s bottleneck, 20 ms each way.
fn scene(which: &str, stack: &str, extra: &Value, host: Option<Value>) -> Value {
    let mut bulk = json!({"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "3MB", "start": "0.5s", "stack": stack, "series": true});
    let mut web = json!({"kind": "web", "name": "web", "from": "server", "to": "client", "size": "300kB", "flows": 6, "start": "2s", "stack": stack, "series": true});
    for (k, v) in extra.as_object().unwrap() {
        bulk[k] = v.clone();
        web[k] = v.clone();
    }
    let mut access = json!({"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "15ms", "up_rate": "10Mbit", "up_delay": "15ms"});
    match which {
        "clean" => access["down_queue"] = json!({"kind": "droptail", "limit": "500pkt"}),
        "lossy" => {
            access["down_queue"] = json!({"kind": "red", "limit": "100pkt", "thresh": 5, "maxthresh": 40, "q_weight": 0.002, "gentle": true, "ecn": true});
            access["down_loss"] = json!(0.01);
        }
        _ => {
            access["down_queue"] = json!({"kind": "droptail", "limit": "30pkt"});
            access["down_loss"] = json!(0.05);
        }
    }
    let mut v = json!({
        "name": "stack-switches", "duration": "10s", "access": access,
        "traffic": [{"kind": "audio", "name": "audio", "from": "server", "to": "client"}, bulk, web],
    });
    if let Some(h) = host {
        v["hosts"] = json!({"client": {"rwnd": h}});
    }
    v
}

/// Switches that cannot matter under their profile's own values, and why.
const EXEMPT: &[(&str, &str, &str)] = &[
    ("ns2-sack1", "wscale", "ns-2's fixed 20-packet window needs no scaling: the shift is 0 either way"),
    ("ns2-sack1", "loss_undo", "the undo needs the timestamps option's echo (tcp_packet_delayed), which ns-2's segments do not carry"),
    ("ns2-sack1", "push_ack", "the ACK after a read is the reader of Linux's buffer (tcp_cleanup_rbuf); ns-2's fixed window has none"),
];

fn tables(v: &Value) -> String {
    let mut t = scenario::run(v, 3).unwrap_or_else(|e| panic!("{e}"));
    t.events = 0;
    format!("{t:?}")
}

/// A value other than `v` for switch `key` (same type, one that can matter).
fn other(key: &str, v: &Value) -> Value {
    match (key, v) {
        (_, Value::Bool(b)) if key != "abc" => json!(!b),
        ("abc", _) if *v != json!(false) => json!(false),
        ("mss", _) => json!("1200B"),
        ("iw", Value::Number(n)) => json!(if n.as_u64() == Some(10) { 3 } else { 10 }),
        ("cc", Value::String(s)) => json!(if s == "cubic" { "reno" } else { "cubic" }),
        ("recovery", _) => json!("newreno"),
        ("min_rto", _) => json!("1s"),
        ("rto", Value::String(s)) => json!(if s == "linux" { "rfc6298" } else { "linux" }),
        ("delack", Value::String(s)) => json!(if s == "40ms" { "100ms" } else { "40ms" }),
        ("quickack", Value::Number(n)) => json!(if n.as_u64() == Some(0) { 16 } else { 0 }),
        ("rcvbuf", _) => json!("8kB"),
        ("tcp_rmem_default", _) => json!("16kB"),
        ("tcp_rmem_max", _) => json!("150kB"),
        ("rmem_max", _) => json!("4000B"),
        ("tcp_adv_win_scale", Value::String(_)) => json!(2),
        ("tcp_adv_win_scale", _) => json!("measured"),
        ("init_rcv_wnd", Value::Number(n)) => json!(if n.as_u64() == Some(0) { 4 } else { 0 }),
        ("ecn", Value::String(s)) => json!(if s == "off" { "ect0" } else { "off" }),
        ("abc", Value::Bool(false)) => json!("all"),
        ("ssthresh", _) => json!("30kB"),
        ("frto_response", Value::String(s)) => json!(if s == "undo" { "rate-halving" } else { "undo" }),
        _ => panic!("no alternative for {key} = {v}"),
    }
}

/// Switches that need a particular setting of the scenario to matter: (key, extra keys, host).
fn variant(key: &str) -> (Value, Option<Value>) {
    match key {
        // SO_RCVBUF is capped by rmem_max: only a host that sets it sees the sysctl.
        "rmem_max" => (json!({}), Some(json!({"budget": "40kB", "mechanism": "so_rcvbuf"}))),
        // HyStart's round rule matters only while HyStart runs (CUBIC) — Reno stacks run it with CUBIC.
        "hystart" | "hystart_round_fix" | "cubic_initial_growth" | "cubic_delay_min" | "cubic_linux_friendliness" => (json!({"cc": "cubic", "hystart": true, "rwnd": "500pkt"}), None),
        // The probe and the RTO floor answer tail losses: short flows (a 60 kB download, six web
        // flows of 10 kB). With Linux 6.6's ACK of a lone PSH segment the 3 MB download recovers
        // every loss of these scenes by SACK.
        "tlp" | "min_rto" => (json!({"size": "60kB"}), None),
        // The timeout's rules act only at a timeout with data out: an RTO floor of 15 ms fires the
        // timer while the queue grows (the latest RTT above SRTT + 4·RTTVAR), with segments sent
        // within RACK.rtt and originals that were only late.
        "rto_rack" | "frto" | "frto_response" | "loss_undo" => (json!({"min_rto": "15ms"}), None),
        // Pacing the IW is a mitigation of its own; it shows with IW10.
        "pace_iw" => (json!({"iw": 10}), None),
        // The buffer's initial window and its share of the buffer show when the sender's first
        // flight exceeds them: an initial window of 100 segments.
        "linux_rcvbuf" | "tcp_adv_win_scale" => (json!({"iw": 100}), None),
        _ => (json!({}), None),
    }
}

#[test]
fn every_switch_of_every_profile_moves_a_table() {
    let mut dead = vec![];
    for p in PROFILES {
        let cfg = (p.config)();
        for (key, value) in profile::describe(&cfg) {
            let (mut extra, host) = variant(key);
            if key == "hystart" {
                extra.as_object_mut().unwrap().remove("hystart");
            }
            if EXEMPT.iter().any(|(n, k, _)| *n == p.name && *k == key) {
                continue;
            }
            let mut changed = extra.clone();
            changed[key] = other(key, &value);
            let moved = SCENES.iter().any(|w| tables(&scene(w, p.name, &extra, host.clone())) != tables(&scene(w, p.name, &changed, host.clone())));
            if !moved {
                dead.push(format!("{}: {key} = {value} -> {}", p.name, other(key, &value)));
            }
        }
    }
    assert!(dead.is_empty(), "switches that change no table: {dead:#?}");
}

#[test]
fn a_key_overrides_its_profile_and_the_scenario_stack_is_the_default() {
    let entry = |extra: Value| {
        let mut e = json!({"kind": "bulk", "name": "b", "from": "server", "to": "client", "size": "100kB"});
        for (k, v) in extra.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    };
    let sc = |top: Option<&str>, e: Value| {
        let mut v = json!({"name": "s", "duration": "2s", "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "10ms", "up_rate": "1Mbit", "up_delay": "10ms"}, "traffic": [e]});
        if let Some(s) = top {
            v["stack"] = json!(s);
        }
        scenario::expand(&v).unwrap()["traffic"][0].clone()
    };
    let t = sc(None, entry(json!({})));
    assert_eq!(t["stack"], json!(profile::DEFAULT));
    assert_eq!(t["stack_overrides"], json!([]));
    assert_eq!(t["tcp"]["abc"], json!("all"));
    assert_eq!(t["tcp"]["tcp_rmem_max"], json!("33554432B"));
    let t = sc(Some("linux-3.2"), entry(json!({})));
    assert_eq!(t["stack"], json!("linux-3.2"));
    assert_eq!((t["tcp"]["rack"].clone(), t["tcp"]["abc"].clone(), t["tcp"]["tsq"].clone()), (json!(false), json!(false), json!(false)));
    assert_eq!(t["tcp"]["tcp_adv_win_scale"], json!(2));
    assert_eq!((t["tcp"]["frto"].clone(), t["tcp"]["frto_response"].clone()), (json!(true), json!("rate-halving")));
    // The entry's own stack beats the scenario's; a key beats the profile.
    let t = sc(Some("linux-3.2"), entry(json!({"stack": "ns2-sack1", "iw": 4, "mss": "960B"})));
    assert_eq!(t["stack"], json!("ns2-sack1"));
    assert_eq!(t["stack_overrides"], json!(["mss", "iw"]));
    assert_eq!(t["tcp"]["iw"], json!(4));
    // ns-2's window_ is in packets: it follows the entry's MSS.
    assert_eq!(t["tcp"]["rcvbuf"], json!("19200B"));
    assert_eq!(t["tcp"]["cc"], json!("reno"));
    // A fixed window given on a Linux stack replaces Linux's buffer.
    let t = sc(None, entry(json!({"rwnd": "20pkt"})));
    assert_eq!((t["tcp"]["linux_rcvbuf"].clone(), t["tcp"]["rcvbuf"].clone()), (json!(false), json!("29200B")));
}

#[test]
fn unknown_profiles_list_the_known_ones() {
    let base = |top: Value, e: Value| json!({"name": "s", "duration": "2s", "stack": top, "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "10ms", "up_rate": "1Mbit", "up_delay": "10ms"}, "traffic": [e]});
    let e = json!({"kind": "bulk", "from": "server", "to": "client", "size": "1kB", "stack": "linux-2.6"});
    let err = scenario::run(&base(json!("linux-6.18"), e), 1).unwrap_err().to_string();
    assert!(err.starts_with("traffic[0].stack:") && err.contains("linux-6.18") && err.contains("linux-3.2") && err.contains("ns2-sack1"), "{err}");
    let e = json!({"kind": "bulk", "from": "server", "to": "client", "size": "1kB"});
    let err = scenario::run(&base(json!("bsd"), e), 1).unwrap_err().to_string();
    assert!(err.starts_with("stack:") && err.contains("linux-6.18"), "{err}");
    // A switch's value outside its set is named with the ones it takes.
    let e = json!({"kind": "bulk", "from": "server", "to": "client", "size": "1kB", "frto_response": "eifel"});
    let err = scenario::run(&base(json!("linux-3.2"), e), 1).unwrap_err().to_string();
    assert!(err.starts_with("traffic[0].frto_response:") && err.contains("\"undo\" or \"rate-halving\""), "{err}");
}
