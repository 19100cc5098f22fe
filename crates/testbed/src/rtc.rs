//! Adaptive media on real Linux: the simulator's sender logic ([`jitterlab_sim::rtc::sender`]:
//! the same controllers, encoder model, packetiser, pacer and window gate) and its receiver's
//! report collector ([`jitterlab_sim::rtc::feedback::Collector`]), driven by CLOCK_REALTIME over
//! UDP sockets. The media packets are those of [`crate::media`] (RTP header, sequence number, send
//! time); the reports travel as real UDP packets on the reverse path.
//!
//! Clock: both ends map CLOCK_REALTIME to the core's [`Time`] as ns since `epoch_ns` (the run's
//! time zero), so the controller sees send and arrival times on one clock as in the simulator.
//!
//! Report wire format (UDP payload, big-endian): V=2 RTCP-style first byte 0x80, packet type 205
//! (RTPFB), the number of packets n (u16), the report time (i64 ns, CLOCK_REALTIME), the first
//! sequence number (u64), then per packet a u32: `LOST` when not received, else the top bit is
//! ECN-CE and the low 31 bits the report time minus the arrival time in µs. It is padded to the
//! size the scenario's feedback format has on the wire (RFC 8888 or transport-cc,
//! [`Format::report_size`]) when that is larger; 4 B per packet is more than transport-cc's ~1.3,
//! so a report here is up to ~2.5× the modelled size (about 110 B instead of 70 B at 16 packets).
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::AsRawFd;

use jitterlab_sim::rtc::encoder::Encoder;
use jitterlab_sim::rtc::feedback::{Collector, Format, Report, Status};
use jitterlab_sim::rtc::sender::{Next, SenderCore};
use jitterlab_sim::rtc::{Limits, CONTROLLERS};
use jitterlab_sim::rng::Rng;
use jitterlab_sim::time::Time;

use crate::error::{Error, Result};
use crate::media::{IP_UDP_HEADER, PAYLOAD_MIN};
use crate::rt;
use crate::udp::{bind, recv_one, setsockopt_int};

const HEADER: usize = 20;
const LOST: u32 = u32::MAX;
const CE_BIT: u32 = 1 << 31;
/// Packets per report datagram (a longer report is split: 20 + 4·300 B fits a 1500 B MTU).
pub const MAX_PER_DATAGRAM: usize = 300;

/// `Report` → datagrams (payloads), each padded to at least `format`'s IP size minus IP+UDP.
pub fn encode_report(r: &Report, epoch_ns: i64, format: Format) -> Vec<Vec<u8>> {
    let at_ns = epoch_ns + r.at.ns() as i64;
    r.packets
        .chunks(MAX_PER_DATAGRAM)
        .map(|chunk| {
            let mut b = Vec::with_capacity(HEADER + 4 * chunk.len());
            b.extend_from_slice(&[0x80, 205]);
            b.extend_from_slice(&(chunk.len() as u16).to_be_bytes());
            b.extend_from_slice(&at_ns.to_be_bytes());
            b.extend_from_slice(&chunk[0].seq.to_be_bytes());
            for s in chunk {
                let w = match s.recv {
                    None => LOST,
                    Some(t) => {
                        let us = (r.at.saturating_sub(t).ns() / 1000).min((CE_BIT - 1) as u64) as u32;
                        us | if s.ce { CE_BIT } else { 0 }
                    }
                };
                b.extend_from_slice(&w.to_be_bytes());
            }
            let got = chunk.iter().filter(|s| s.recv.is_some()).count() as u32;
            let want = format.report_size(chunk.len() as u32, got) as usize - IP_UDP_HEADER;
            if b.len() < want {
                b.resize(want, 0);
            }
            b
        })
        .collect()
}

/// A datagram → `Report` on the core's clock; None when it is not a report.
pub fn decode_report(b: &[u8], epoch_ns: i64) -> Option<Report> {
    if b.len() < HEADER || b[0] != 0x80 || b[1] != 205 {
        return None;
    }
    let n = u16::from_be_bytes([b[2], b[3]]) as usize;
    let at_ns = i64::from_be_bytes(b[4..12].try_into().ok()?);
    let first = u64::from_be_bytes(b[12..20].try_into().ok()?);
    if b.len() < HEADER + 4 * n || at_ns < epoch_ns {
        return None;
    }
    let at = Time((at_ns - epoch_ns) as u64);
    let packets = (0..n)
        .map(|i| {
            let w = u32::from_be_bytes(b[HEADER + 4 * i..HEADER + 4 * i + 4].try_into().expect("4 bytes"));
            let recv = (w != LOST).then(|| at.saturating_sub(Time::from_us((w & !CE_BIT) as u64)));
            Status { seq: first + i as u64, recv, ce: w != LOST && w & CE_BIT != 0 }
        })
        .collect();
    Some(Report { at, packets })
}

/// Waits until the socket is readable or CLOCK_REALTIME reaches `until_ns` (at most 5 ms, so a
/// stop signal is seen); true when readable.
fn wait_readable(fd: i32, until_ns: i64) -> bool {
    let d = (until_ns - rt::realtime_ns()).clamp(0, 5_000_000);
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ts = rt::timespec(d);
    unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) > 0 }
}

fn now_t(epoch_ns: i64) -> Time { Time((rt::realtime_ns() - epoch_ns).max(0) as u64) }

#[derive(Clone, Debug)]
pub struct SendConfig {
    pub dst: Ipv4Addr,
    pub dst_port: u16,
    /// The sender's own port: reports arrive here.
    pub port: u16,
    /// Run time zero (CLOCK_REALTIME ns): the core's clock reads ns since it.
    pub epoch_ns: i64,
    /// First frame, end of frames, end of the loop (queued packets and reports are still handled
    /// after `stop_ns`, as the simulator's sender handles them).
    pub start_ns: i64,
    pub stop_ns: i64,
    pub end_ns: i64,
    pub interval_ns: i64,
    pub cc: String,
    pub limits: Limits,
    pub video: bool,
    pub key_interval_ns: Option<i64>,
    /// [from, to) windows without frames, ns from `epoch_ns` (the scenario's `pause`).
    pub pauses_ns: Vec<(i64, i64)>,
    pub mtu: u32,
    /// The encoder's random stream: `Rng::stream(seed, "encoder:NAME")`, as the simulator's.
    pub seed: u64,
    pub name: String,
    pub ssrc: u32,
    pub payload_type: u8,
    pub clock_rate: u32,
    pub tos: u8,
    pub fifo_prio: i32,
}

/// One series row: t, target, encoder rate, RTT (-1: none), in flight, queue bytes, state.
pub type SeriesRow = (i64, f64, f64, i64, u64, u64, f64);
/// One frame row: frame, capture, bytes, packets, first seq, key.
pub type FrameRow = (u64, i64, u64, u32, u64, bool);

#[derive(Clone, Debug, Default)]
pub struct SendLog {
    pub seq: Vec<i64>,
    pub send_ns: Vec<i64>,
    pub size: Vec<i64>,
    pub frames: Vec<FrameRow>,
    pub series: Vec<SeriesRow>,
    pub reports: u64,
    pub malformed: u64,
    pub send_errors: u64,
    pub discarded: u64,
    pub realtime: bool,
}

/// Builds the sender's core as the simulator builds it (`traffic::adaptive`).
pub fn core_for(cfg: &SendConfig) -> Result<SenderCore> {
    let Some(factory) = CONTROLLERS.iter().find(|(n, _)| *n == cfg.cc).map(|(_, f)| *f) else {
        let names: Vec<&str> = CONTROLLERS.iter().map(|(n, _)| *n).collect();
        return Err(Error::Invalid(format!("cc: unknown media congestion controller {:?} (known: {})", cfg.cc, names.join(", "))));
    };
    let key = cfg.key_interval_ns.map(|k| Time(k as u64));
    let enc = Encoder::new(cfg.video, cfg.limits.start_bps, key, Rng::stream(cfg.seed, &format!("encoder:{}", cfg.name)));
    Ok(SenderCore::new(factory(&cfg.limits), enc, cfg.mtu))
}

/// Runs the adaptive sender until `end_ns` or a stop signal.
pub fn send(cfg: &SendConfig) -> Result<SendLog> {
    if cfg.interval_ns <= 0 || cfg.start_ns < cfg.epoch_ns {
        return Err(Error::Invalid("rtc sender: interval must be > 0 and start at or after the epoch".into()));
    }
    let mut core = core_for(cfg)?;
    rt::install_stop_handlers();
    let mut log = SendLog::default();
    if cfg.fifo_prio > 0 {
        log.realtime = rt::set_fifo(cfg.fifo_prio).is_ok();
    }
    let sock = bind(cfg.port, None)?;
    let fd = sock.as_raw_fd();
    sock.set_nonblocking(true).map_err(|e| Error::Os { what: "set_nonblocking".into(), source: e })?;
    if cfg.tos != 0 {
        setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_TOS, cfg.tos as i32, "setsockopt IP_TOS")?;
    }
    let dst = SocketAddrV4::new(cfg.dst, cfg.dst_port);
    let mut pkt = vec![0u8; 1500];
    pkt[0] = 0x80;
    pkt[1] = cfg.payload_type & 0x7f;
    pkt[8..12].copy_from_slice(&cfg.ssrc.to_be_bytes());
    let mut rbuf = vec![0u8; 2048];
    let interval = Time(cfg.interval_ns as u64);
    let mut slot: i64 = 0;
    loop {
        let now = rt::realtime_ns();
        if now >= cfg.end_ns || rt::stop_requested() {
            break;
        }
        let frame_at = cfg.start_ns + slot * cfg.interval_ns;
        // RFC 8867 §5.8's pause: no frame in a window, the frame clock keeps its grid
        let paused = |t: i64| cfg.pauses_ns.iter().any(|&(a, b)| cfg.epoch_ns + a <= t && t < cfg.epoch_ns + b);
        if frame_at < cfg.stop_ns && now >= frame_at && paused(frame_at) {
            slot += 1;
        } else if frame_at < cfg.stop_ns && now >= frame_at {
            let t = now_t(cfg.epoch_ns);
            let f = core.encode(interval, t);
            log.frames.push((f.frame, f.capture.ns() as i64 + cfg.epoch_ns, f.bytes, f.packets, f.first_seq, f.key));
            // RTP timestamp of the frame slot (one per frame: all its packets share it)
            let ts = (slot as i128 * cfg.interval_ns as i128 * cfg.clock_rate as i128 / 1_000_000_000) as u32;
            pkt[4..8].copy_from_slice(&ts.to_be_bytes());
            slot += 1;
        }
        // reports
        while let Ok((n, _)) = sock.recv_from(&mut rbuf) {
            match decode_report(&rbuf[..n], cfg.epoch_ns) {
                Some(r) => {
                    let s = core.on_report(&r, now_t(cfg.epoch_ns));
                    log.reports += 1;
                    log.series.push((s.t.ns() as i64 + cfg.epoch_ns, s.target_bps, s.encoder_bps, s.rtt.map_or(-1, |r| r.ns() as i64), s.in_flight, s.queue_bytes, s.state));
                }
                None => log.malformed += 1,
            }
        }
        // pacer
        core.discard_old(now_t(cfg.epoch_ns));
        let mut wake = cfg.end_ns;
        loop {
            let t_ns = rt::realtime_ns();
            match core.poll(Time((t_ns - cfg.epoch_ns).max(0) as u64)) {
                Next::Idle => break,
                Next::At(t) => {
                    wake = wake.min(t.ns() as i64 + cfg.epoch_ns);
                    break;
                }
                Next::Send { seq, size } => {
                    // the smallest packet that holds the sequence number and send time
                    let ip = (size as usize).clamp(IP_UDP_HEADER + PAYLOAD_MIN, 1500);
                    pkt[2..4].copy_from_slice(&(seq as u16).to_be_bytes());
                    pkt[12..20].copy_from_slice(&seq.to_be_bytes());
                    pkt[20..28].copy_from_slice(&t_ns.to_be_bytes());
                    if sock.send_to(&pkt[..ip - IP_UDP_HEADER], dst).is_err() {
                        log.send_errors += 1;
                    }
                    log.seq.push(seq as i64);
                    log.send_ns.push(t_ns);
                    log.size.push(ip as i64);
                }
            }
        }
        let next_frame = cfg.start_ns + slot * cfg.interval_ns;
        if next_frame < cfg.stop_ns {
            wake = wake.min(next_frame);
        }
        wait_readable(fd, wake);
    }
    log.discarded = core.discarded;
    Ok(log)
}

#[derive(Clone, Debug)]
pub struct RecvConfig {
    pub port: u16,
    /// Where reports go (the sender's address and port).
    pub fb_dst: Ipv4Addr,
    pub fb_port: u16,
    pub epoch_ns: i64,
    /// Reports stop after this instant; the loop ends at `stop_ns`.
    pub until_ns: i64,
    pub stop_ns: i64,
    pub format: Format,
    pub interval_ns: i64,
    pub fifo_prio: i32,
    /// A socket already bound to `port` (duplicated), as in [`crate::media::RecvConfig`].
    pub fd: Option<i32>,
}

#[derive(Clone, Debug, Default)]
pub struct RecvLog {
    pub seq: Vec<i64>,
    pub send_ns: Vec<i64>,
    pub recv_ns: Vec<i64>,
    pub size: Vec<i64>,
    pub ce: Vec<bool>,
    pub reports: u64,
    pub report_bytes: u64,
    pub malformed: u64,
    pub realtime: bool,
}

/// Receives media and sends a report every `interval_ns` while packets come in (the first
/// `interval_ns` after the first arrival, as the simulator's receiver), until `stop_ns`.
pub fn receive(cfg: &RecvConfig) -> Result<RecvLog> {
    if cfg.interval_ns <= 0 {
        return Err(Error::Invalid("feedback interval must be > 0".into()));
    }
    rt::install_stop_handlers();
    let mut log = RecvLog::default();
    if cfg.fifo_prio > 0 {
        log.realtime = rt::set_fifo(cfg.fifo_prio).is_ok();
    }
    let sock = bind(cfg.port, cfg.fd)?;
    let fd = sock.as_raw_fd();
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1, "setsockopt SO_TIMESTAMPNS")?;
    setsockopt_int(fd, libc::IPPROTO_IP, libc::IP_RECVTOS, 1, "setsockopt IP_RECVTOS")?;
    let _ = setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, 4 << 20, "setsockopt SO_RCVBUF");
    let fb = SocketAddrV4::new(cfg.fb_dst, cfg.fb_port);
    let mut collector = Collector::default();
    let mut next_report: Option<i64> = None;
    let mut buf = vec![0u8; 2048];
    while !rt::stop_requested() && rt::realtime_ns() < cfg.stop_ns {
        wait_readable(fd, next_report.unwrap_or(cfg.stop_ns));
        while let Some((n, recv_ns, tos)) = recv_one(fd, &mut buf) {
            if n < PAYLOAD_MIN || buf[0] >> 6 != 2 || recv_ns < cfg.epoch_ns {
                log.malformed += 1;
                continue;
            }
            let seq = u64::from_be_bytes(buf[12..20].try_into().expect("8 bytes"));
            let ce = tos & 3 == 3;
            collector.on_arrival(seq, Time((recv_ns - cfg.epoch_ns) as u64), ce);
            log.seq.push(seq as i64);
            log.send_ns.push(i64::from_be_bytes(buf[20..28].try_into().expect("8 bytes")));
            log.recv_ns.push(recv_ns);
            log.size.push((n + IP_UDP_HEADER) as i64);
            log.ce.push(ce);
            if next_report.is_none() {
                next_report = Some(recv_ns + cfg.interval_ns);
            }
        }
        let Some(due) = next_report else { continue };
        if rt::realtime_ns() < due {
            continue;
        }
        if let Some(r) = collector.report(now_t(cfg.epoch_ns)) {
            for d in encode_report(&r, cfg.epoch_ns, cfg.format) {
                log.report_bytes += (d.len() + IP_UDP_HEADER) as u64;
                let _ = sock.send_to(&d, fb);
            }
            log.reports += 1;
        }
        // the simulator's receiver: reports stop after `until` and restart with the next arrival
        next_report = Some(due + cfg.interval_ns).filter(|&t| t <= cfg.until_ns);
    }
    Ok(log)
}

#[cfg(test)]
mod tests;
