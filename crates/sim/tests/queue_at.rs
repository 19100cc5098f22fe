//! `queue_at` (Channel::network_queue): whether a link's queue is the sending node's own qdisc,
//! which TCP Small Queues count until the packet leaves it, or a middlebox's in front of the link
//! (the node's own interface hands the packet over at once), as the testbed builds the [access]
//! core link: a userspace link beside the server, whose queue the server's TSQ never sees.
use jitterlab_sim::scenario;
use serde_json::{json, Value};

/// The core link is the bottleneck (2 Mbit/s, a 100-packet FIFO) and one Linux 6.18 download
/// (TSQ on) leaves the server through it.
fn path(queue_at: Option<&str>) -> Value {
    let mut access = json!({"core_rate": "2Mbit", "core_delay": "5ms", "core_queue": {"kind": "droptail", "limit": "100pkt"},
                            "down_rate": "100Mbit", "down_delay": "10ms", "up_rate": "100Mbit", "up_delay": "10ms"});
    if let Some(at) = queue_at {
        access["core_queue_at"] = json!(at);
    }
    json!({"name": "t", "duration": "20s", "access": access, "output": {"queue_sample_interval": "1ms", "queues": ["core"]},
           "traffic": [{"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": "4MB", "start": "1s", "stack": "linux-6.18"}]})
}

/// (drops on the core link, the core link's largest sampled backlog in packets)
fn core(queue_at: Option<&str>) -> (u64, u64) {
    let mut b = scenario::build(&path(queue_at), 1).unwrap();
    b.sim.run_until(b.duration);
    let t = b.sim.finish();
    let ch = t.channels.iter().position(|c| c.name == "core").unwrap() as u32;
    let peak = t.queue_samples.queue.iter().zip(&t.queue_samples.backlog_pkts).filter(|(q, _)| **q == ch).map(|(_, b)| *b).max().unwrap();
    (t.channels[ch as usize].stats.dropped_pkts(), peak)
}

/// On the server's own qdisc TSQ holds the flow to Linux's limit below TCP: the initial window's 10
/// segments (before the first RTT sample the pacing rate is unbounded and only
/// tcp_limit_output_bytes limits, tsq.rs), then two full segments (1 + 2 · T > 2 · T), so the FIFO
/// never overflows; as a middlebox's queue the same download's slow start fills the 100 packets
/// and drops.
#[test]
fn tsq_counts_the_hosts_own_queue_and_not_the_networks() {
    let (drops, peak) = core(None);
    assert_eq!(drops, 0);
    assert!(peak <= 10, "{peak}");
    assert_eq!(core(Some("host")), (drops, peak));
    let (drops, peak) = core(Some("network"));
    assert!(drops > 0 && peak >= 90, "{drops} {peak}");
}

#[test]
fn the_expanded_form_says_where_and_a_bad_value_names_the_key() {
    let e = scenario::expand(&path(Some("network"))).unwrap();
    let core = e["links"].as_array().unwrap().iter().find(|l| l["name"] == "core").unwrap();
    assert_eq!((core["forward"]["queue_at"].as_str(), core["reverse"]["queue_at"].as_str()), (Some("network"), Some("network")));
    let e = scenario::expand(&path(None)).unwrap();
    assert_eq!(e["links"][0]["forward"]["queue_at"], "host");
    let err = scenario::build(&path(Some("router")), 1).err().unwrap().to_string();
    assert!(err.starts_with("access.core_queue_at: must be one of host, network"), "{err}");
}
