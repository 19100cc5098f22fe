//! A userspace delay line over a TUN device: every IPv4 packet the kernel routes into the device
//! is read, held for the delay of the first rule matching its addresses, and written back into the
//! device, from which the kernel routes it on. It replaces netem's `delay` when the kernel lacks
//! netem. Each delay class is a FIFO (equal delays keep the order), so packets are never
//! reordered within a class.
//!
//! Accuracy: the release time of each packet is compared with its due time (arrival as read + the
//! delay); [`Stats`] reports the lateness distribution. Arrival is stamped when the packet is read,
//! so wake-up latency of the reader adds to the delay without showing in `lateness`; the end-to-end
//! check (audio one-way delay against the configured delay) covers both.
use std::collections::VecDeque;

use crate::error::{os, Result};
use crate::rt;
use crate::tun::Tun;

/// Packets whose (src & src_mask) == src and (dst & dst_mask) == dst get `delay_ns`.
#[derive(Clone, Debug)]
pub struct Rule {
    pub src: u32,
    pub src_mask: u32,
    pub dst: u32,
    pub dst_mask: u32,
    pub delay_ns: i64,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub packets: u64,
    pub bytes: u64,
    pub non_ipv4: u64,
    pub write_errors: u64,
    pub overflow_drops: u64,
    /// Release lateness (ns) of every released packet, up to `max_samples`.
    pub lateness_ns: Vec<i64>,
    /// Largest number of packets held at once.
    pub max_held: usize,
    pub realtime: bool,
}

pub struct Config {
    pub tun: String,
    pub rules: Vec<Rule>,
    pub default_delay_ns: i64,
    /// Packets held at most (beyond: dropped and counted); a delay line is not a queue.
    pub max_held: usize,
    pub max_samples: usize,
    /// SCHED_FIFO priority, 0 = none.
    pub fifo_prio: i32,
}

struct Held {
    due: i64,
    pkt: Vec<u8>,
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Runs until SIGTERM/SIGINT (see [`rt::install_stop_handlers`]); returns the statistics.
pub fn run(cfg: &Config) -> Result<Stats> {
    rt::install_stop_handlers();
    let mut stats = Stats::default();
    if cfg.fifo_prio > 0 {
        stats.realtime = rt::set_fifo(cfg.fifo_prio).is_ok();
    }
    let tun = Tun::open(&cfg.tun)?;
    // One FIFO per distinct delay: the rule index maps to its class.
    let mut delays: Vec<i64> = vec![cfg.default_delay_ns];
    let mut class_of_rule = Vec::new();
    for r in &cfg.rules {
        let c = match delays.iter().position(|&d| d == r.delay_ns) {
            Some(c) => c,
            None => {
                delays.push(r.delay_ns);
                delays.len() - 1
            }
        };
        class_of_rule.push(c);
    }
    let mut queues: Vec<VecDeque<Held>> = delays.iter().map(|_| VecDeque::new()).collect();
    let mut held = 0usize;
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut buf = vec![0u8; 65536];
    let mut pfd = libc::pollfd { fd: tun.fd, events: libc::POLLIN, revents: 0 };

    while !rt::stop_requested() {
        // 1. release everything due
        let mut now = rt::monotonic_ns();
        loop {
            let mut best: Option<usize> = None;
            for (i, q) in queues.iter().enumerate() {
                if let Some(h) = q.front() {
                    if h.due <= now && best.map_or(true, |b| queues[b].front().unwrap().due > h.due) {
                        best = Some(i);
                    }
                }
            }
            let Some(i) = best else { break };
            let h = queues[i].pop_front().unwrap();
            held -= 1;
            if !tun.write(&h.pkt) {
                stats.write_errors += 1;
            }
            now = rt::monotonic_ns();
            if stats.lateness_ns.len() < cfg.max_samples {
                stats.lateness_ns.push(now - h.due);
            }
            spare.push(h.pkt);
        }
        // 2. wait for a packet or the next due time (ns resolution; at most 5 ms so that a stop
        //    request is seen)
        let next_due = queues.iter().filter_map(|q| q.front().map(|h| h.due)).min();
        let wait = next_due.map_or(5_000_000, |d| (d - now).clamp(0, 5_000_000));
        if wait > 0 {
            let ts = rt::timespec(wait);
            let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return Err(os("ppoll"));
            }
        }
        // 3. read everything waiting
        loop {
            let Some(n) = tun.read(&mut buf)? else { break };
            let t = rt::monotonic_ns();
            let pkt = &buf[..n];
            let class = if n >= 20 && pkt[0] >> 4 == 4 {
                let (s, d) = (be32(&pkt[12..16]), be32(&pkt[16..20]));
                cfg.rules
                    .iter()
                    .position(|r| s & r.src_mask == r.src && d & r.dst_mask == r.dst)
                    .map_or(0, |i| class_of_rule[i])
            } else {
                stats.non_ipv4 += 1;
                0
            };
            if held >= cfg.max_held {
                stats.overflow_drops += 1;
                continue;
            }
            let mut v = spare.pop().unwrap_or_default();
            v.clear();
            v.extend_from_slice(pkt);
            stats.packets += 1;
            stats.bytes += n as u64;
            queues[class].push_back(Held { due: t + delays[class], pkt: v });
            held += 1;
            stats.max_held = stats.max_held.max(held);
        }
    }
    Ok(stats)
}
