//! The media source and sink: RTP over UDP on an exact schedule.
//!
//! Each UDP payload is an RTP header (RFC 3550 §5.1: V=2, payload type, 16-bit sequence number,
//! timestamp at `clock_rate`, SSRC) followed by the 64-bit sequence number and the CLOCK_REALTIME
//! send time in ns (both big-endian), then zero padding up to the configured IP packet size. The
//! receiver stamps arrivals with the kernel's receive time (SO_TIMESTAMPNS), so its own scheduling
//! delay does not count as network delay.
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;

use crate::error::{Error, Result};
use crate::rt;
use crate::udp::{bind, recv_one, setsockopt_int};

/// IPv4 (20) + UDP (8) header bytes.
pub const IP_UDP_HEADER: usize = 28;
/// RTP fixed header (12) + sequence (8) + send time (8).
pub const PAYLOAD_MIN: usize = 28;

#[derive(Clone, Debug)]
pub struct SendConfig {
    pub dst: Ipv4Addr,
    pub dst_port: u16,
    pub src_port: u16,
    /// First tick (CLOCK_REALTIME ns) and end (no tick at or after it).
    pub start_ns: i64,
    pub stop_ns: i64,
    pub interval_ns: i64,
    /// Packets per tick and their spacing within the tick (0 = back to back: a bursty frame).
    pub per_tick: u32,
    pub spacing_ns: i64,
    /// IP packet size incl. IP, UDP and RTP headers.
    pub ip_size: usize,
    pub ssrc: u32,
    pub payload_type: u8,
    pub clock_rate: u32,
    pub tos: u8,
    pub fifo_prio: i32,
}

#[derive(Clone, Debug, Default)]
pub struct SendLog {
    pub seq: Vec<i64>,
    pub sched_ns: Vec<i64>,
    pub send_ns: Vec<i64>,
    pub size: Vec<i64>,
    pub send_errors: u64,
    pub realtime: bool,
}

/// Sends on the schedule start + k·interval + j·spacing until stop or a stop signal.
pub fn send(cfg: &SendConfig) -> Result<SendLog> {
    if cfg.ip_size < IP_UDP_HEADER + PAYLOAD_MIN || cfg.ip_size > 1500 {
        return Err(Error::Invalid(format!("media packet size {} B: must be {}..1500 (IP+UDP+RTP+seq+time)", cfg.ip_size, IP_UDP_HEADER + PAYLOAD_MIN)));
    }
    if cfg.interval_ns <= 0 || cfg.per_tick == 0 {
        return Err(Error::Invalid("media interval and packets per tick must be > 0".into()));
    }
    rt::install_stop_handlers();
    let mut log = SendLog::default();
    if cfg.fifo_prio > 0 {
        log.realtime = rt::set_fifo(cfg.fifo_prio).is_ok();
    }
    let sock = bind(cfg.src_port, None)?;
    let fd = sock.as_raw_fd();
    if cfg.tos != 0 {
        setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_TOS, cfg.tos as i32, "setsockopt IP_TOS")?;
    }
    let dst = SocketAddrV4::new(cfg.dst, cfg.dst_port);
    let mut buf = vec![0u8; cfg.ip_size - IP_UDP_HEADER];
    buf[0] = 0x80;
    buf[1] = cfg.payload_type & 0x7f;
    buf[8..12].copy_from_slice(&cfg.ssrc.to_be_bytes());
    let ticks_per_interval = (cfg.interval_ns as i128 * cfg.clock_rate as i128 / 1_000_000_000) as u32;
    let mut seq: u64 = 0;
    let mut k: i64 = 0;
    'outer: loop {
        let tick = cfg.start_ns + k * cfg.interval_ns;
        if tick >= cfg.stop_ns {
            break;
        }
        for j in 0..cfg.per_tick as i64 {
            let t = tick + j * cfg.spacing_ns;
            if !rt::sleep_until_realtime(t) || rt::stop_requested() {
                break 'outer;
            }
            buf[2..4].copy_from_slice(&(seq as u16).to_be_bytes());
            buf[4..8].copy_from_slice(&(ticks_per_interval.wrapping_mul(k as u32)).to_be_bytes());
            buf[12..20].copy_from_slice(&seq.to_be_bytes());
            let now = rt::realtime_ns();
            buf[20..28].copy_from_slice(&now.to_be_bytes());
            if sock.send_to(&buf, dst).is_err() {
                log.send_errors += 1;
            }
            log.seq.push(seq as i64);
            log.sched_ns.push(t);
            log.send_ns.push(now);
            log.size.push(cfg.ip_size as i64);
            seq += 1;
        }
        k += 1;
    }
    Ok(log)
}

#[derive(Clone, Debug)]
pub struct RecvConfig {
    pub port: u16,
    /// Stop listening at this CLOCK_REALTIME ns (or on a stop signal).
    pub stop_ns: i64,
    pub fifo_prio: i32,
    /// A UDP socket already bound to `port` (duplicated, the caller keeps its own), so that the
    /// receiver can be listening before its worker says "ready"; None = bind here.
    pub fd: Option<i32>,
}

#[derive(Clone, Debug, Default)]
pub struct RecvLog {
    pub seq: Vec<i64>,
    pub send_ns: Vec<i64>,
    pub recv_ns: Vec<i64>,
    pub size: Vec<i64>,
    pub malformed: u64,
    pub realtime: bool,
}

/// Receives media packets until stop; one record per packet received (duplicates included).
pub fn receive(cfg: &RecvConfig) -> Result<RecvLog> {
    rt::install_stop_handlers();
    let mut log = RecvLog::default();
    if cfg.fifo_prio > 0 {
        log.realtime = rt::set_fifo(cfg.fifo_prio).is_ok();
    }
    let sock = bind(cfg.port, cfg.fd)?;
    let fd = sock.as_raw_fd();
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1, "setsockopt SO_TIMESTAMPNS")?;
    let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, 4 << 20, "setsockopt SO_RCVBUF");
    let mut buf = vec![0u8; 2048];
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    while !rt::stop_requested() && rt::realtime_ns() < cfg.stop_ns {
        let ts = rt::timespec(5_000_000);
        let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if r <= 0 {
            continue;
        }
        while let Some((n, recv_ns, _)) = recv_one(fd, &mut buf) {
            if n < PAYLOAD_MIN || buf[0] >> 6 != 2 {
                log.malformed += 1;
                continue;
            }
            let seq = u64::from_be_bytes(buf[12..20].try_into().unwrap());
            let send_ns = i64::from_be_bytes(buf[20..28].try_into().unwrap());
            log.seq.push(seq as i64);
            log.send_ns.push(send_ns);
            log.recv_ns.push(recv_ns);
            log.size.push((n + IP_UDP_HEADER) as i64);
        }
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loopback: every packet arrives with its sequence number and send time, on schedule.
    #[test]
    fn loopback_schedule_and_payload() {
        let start = rt::realtime_ns() + 50_000_000;
        let port = 40000 + (std::process::id() % 20000) as u16;
        let rx = std::thread::spawn(move || receive(&RecvConfig { port, stop_ns: start + 400_000_000, fifo_prio: 0, fd: None }).unwrap());
        let log = send(&SendConfig {
            dst: Ipv4Addr::LOCALHOST, dst_port: port, src_port: 0, start_ns: start, stop_ns: start + 200_000_000,
            interval_ns: 20_000_000, per_tick: 2, spacing_ns: 1_000_000, ip_size: 80, ssrc: 7, payload_type: 0,
            clock_rate: 8000, tos: 0, fifo_prio: 0,
        })
        .unwrap();
        let r = rx.join().unwrap();
        assert_eq!(log.seq.len(), 20);
        assert_eq!(log.sched_ns[2] - log.sched_ns[0], 20_000_000);
        assert_eq!(log.sched_ns[1] - log.sched_ns[0], 1_000_000);
        assert_eq!(r.seq, (0..20).collect::<Vec<i64>>());
        assert_eq!(r.send_ns, log.send_ns);
        assert!(r.size.iter().all(|&s| s == 80));
        assert!(r.recv_ns.iter().zip(&r.send_ns).all(|(a, b)| a >= b));
    }

    #[test]
    fn rejects_tiny_packets() {
        let e = send(&SendConfig {
            dst: Ipv4Addr::LOCALHOST, dst_port: 9, src_port: 0, start_ns: 0, stop_ns: 0, interval_ns: 1, per_tick: 1,
            spacing_ns: 0, ip_size: 40, ssrc: 0, payload_type: 0, clock_rate: 8000, tos: 0, fifo_prio: 0,
        });
        assert!(e.is_err());
    }
}
