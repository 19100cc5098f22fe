//! `pace_iw`: the initial window spread over one SYN RTT, then no pacing (the mitigations study's
//! "paced IW"). Times at the probed bottleneck queue, computed from the path.
mod common;
use common::*;
use jitterlab_sim::tcp::TcpConfig;
use jitterlab_sim::Time;

const MSS: u32 = 1460;

/// Arrival times at the bottleneck of the first transmissions of data segments.
fn data_arrivals(pace_iw: bool, iw: u32) -> (Vec<Time>, Path) {
    let path = Path::default();
    let cfg = TcpConfig { pace_iw, timestamps: false, ..reno(MSS, iw) };
    let run = build(&path, cfg, Some(40 * MSS as u64), Time::ZERO, pass());
    let (_, log) = run_to_end(run, Time::from_secs(5));
    let log = log.borrow();
    (log.iter().filter(|a| a.len > 0).map(|a| a.t).collect(), path)
}

#[test]
fn initial_window_leaves_srtt_over_iw_apart() {
    let iw = 10;
    let (t, path) = data_arrivals(true, iw);
    // The SYN's RTT sample: 40-byte SYN and SYN-ACK (no options counted) over the idle path.
    let srtt = path.rtt(40, 40);
    let gap = Time(srtt.ns() / iw as u64);
    for k in 1..iw as usize {
        assert_eq!(t[k] - t[k - 1], gap, "segment {k}");
    }
    // The first ACK of data ends pacing: the segments it releases leave back to back, one
    // serialisation on the 1 Gbit/s access link apart.
    let back_to_back = path.access_rate.tx_time(MSS as u64 + 40);
    let after: Vec<Time> = t.iter().copied().filter(|&x| x > t[0] + srtt).collect();
    assert!(after.len() >= 3);
    assert!(after.windows(2).any(|w| w[1] - w[0] == back_to_back), "{after:?}");
}

#[test]
fn without_it_the_initial_window_is_a_burst() {
    let (t, path) = data_arrivals(false, 10);
    let back_to_back = path.access_rate.tx_time(MSS as u64 + 40);
    for k in 1..10 {
        assert_eq!(t[k] - t[k - 1], back_to_back, "segment {k}");
    }
}
