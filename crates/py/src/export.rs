//! pcap export of the simulator's taps (like ns-3's pcap tracing): one file per tapped node with
//! every packet it sent or received, as Ethernet + IPv4 frames, so a simulated run opens in
//! Wireshark and reads back through `jitterlab analyze`. Lives in the bindings crate because it
//! joins the simulator core (no I/O) with the capture crate's writer.
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use jitterlab_capture::writer::{Endpoints, PcapWriter, RtpPacket, TcpOptions, TcpPacket};
use jitterlab_sim::packet::{tcp_flags, Body, Ecn};
use jitterlab_sim::record::Tables;

/// Wall-clock time of simulated t = 0 in the captures (2023-11-14 22:13:20 UTC), so tools show a
/// plausible date; `jitterlab analyze` reports times relative to the first sender packet anyway.
pub const EPOCH_NS: i64 = 1_700_000_000_000_000_000;
/// RTP clock of the exported streams (payload type 0, PCMU, 8 kHz); the timestamp is the send time.
const RTP_CLOCK_HZ: i64 = 8_000;

/// Address of node `i`: 10.0.x.y, unique for up to 62 500 nodes.
pub fn node_addr(i: u32) -> Ipv4Addr { Ipv4Addr::new(10, (i / 62_500) as u8, ((i / 250) % 250) as u8, (i % 250 + 1) as u8) }

fn ecn_bits(e: Ecn) -> u8 { e.bits() }

/// Longest node name that becomes a file name (`<name>.pcap` stays well under NAME_MAX = 255).
pub const MAX_FILE_NAME: usize = 64;

/// Why `name` cannot be a file name inside the output directory, or None. Allowed: ASCII letters,
/// digits, `_`, `-`, `.` and `+`, not starting with `.` or `-`, at most MAX_FILE_NAME bytes. So no
/// `/`, `..`, NUL, absolute path, option-like or hidden name, and no Unicode look-alike (a
/// fullwidth solidus or a right-to-left override) can reach the filesystem.
pub fn file_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if name.len() > MAX_FILE_NAME {
        return Some(format!("is {} bytes long (at most {MAX_FILE_NAME})", name.len()));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))) {
        return Some(format!("contains {:?}; a name written to a file may hold only A-Z a-z 0-9 _ - . +", c));
    }
    if name.starts_with('.') || name.starts_with('-') {
        return Some("starts with '.' or '-'".into());
    }
    None
}

/// Writes `<dir>/<node>.pcap` for every tapped node; returns (node name, path) pairs. Each file is
/// written as `.<node>.pcap.tmp` and renamed when complete, so a full disk leaves no truncated
/// capture under a final name. A node name that is no safe file name (`file_name_problem`) is
/// refused before anything is written.
pub fn write_taps(t: &Tables, node_names: &[String], dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    for r in &t.taps {
        let name = &node_names[r.node as usize];
        if let Some(why) = file_name_problem(name) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("node name {name:?} {why}")));
        }
    }
    std::fs::create_dir_all(dir)?;
    let res = write_tmp(t, node_names, dir);
    if res.is_err() {
        // nothing half-written stays behind, under a final name or a temporary one
        for r in &t.taps {
            let _ = std::fs::remove_file(tmp_path(dir, &node_names[r.node as usize]));
        }
    }
    let order = res?;
    for (_, path) in &order {
        std::fs::rename(tmp_path(dir, path.file_stem().and_then(|s| s.to_str()).unwrap_or_default()), path)?;
    }
    Ok(order)
}

fn tmp_path(dir: &Path, name: &str) -> PathBuf { dir.join(format!(".{name}.pcap.tmp")) }

fn write_tmp(t: &Tables, node_names: &[String], dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut writers: HashMap<u32, (PathBuf, PcapWriter<BufWriter<File>>)> = HashMap::new();
    // window scale announced by each (node, port) in its SYN (RFC 7323 §2.2)
    let mut wscale: HashMap<(u32, u16), u8> = HashMap::new();
    let mut order = vec![];
    for r in &t.taps {
        let w = match writers.entry(r.node) {
            std::collections::hash_map::Entry::Occupied(e) => &mut e.into_mut().1,
            std::collections::hash_map::Entry::Vacant(v) => {
                let name = &node_names[r.node as usize];
                let path = dir.join(format!("{name}.pcap"));
                let file = File::create(tmp_path(dir, name))?;
                order.push((name.clone(), path.clone()));
                &mut v.insert((path, PcapWriter::new(BufWriter::new(file), if t.pcap_snaplen == 0 { 65_535 } else { t.pcap_snaplen })?)).1
            }
        };
        let p = &r.pkt;
        let ts = EPOCH_NS + r.t_ns;
        let (src, dst) = (node_addr(p.src), node_addr(p.dst));
        match &p.body {
            Body::Media { seq, ssrc, src_port, dst_port, .. } => {
                w.write_rtp(&RtpPacket {
                    ts_ns: ts,
                    ep: Endpoints { src, dst, sport: *src_port, dport: *dst_port },
                    ecn: ecn_bits(p.ecn),
                    ssrc: *ssrc,
                    seq: (*seq & 0xffff) as u16,
                    rtp_ts: ((p.sent.ns() as i64 * RTP_CLOCK_HZ / 1_000_000_000) & 0xffff_ffff) as u32,
                    payload_type: 0,
                    marker: false,
                    ip_len: p.size,
                })?;
            }
            Body::Tcp(h) => {
                if h.flags & tcp_flags::SYN != 0 {
                    wscale.insert((p.src, h.src_port), h.wscale.unwrap_or(0));
                }
                let shift = wscale.get(&(p.src, h.src_port)).copied().unwrap_or(0);
                let sack: Vec<(u32, u32)> = h.sack[..h.nsack as usize].iter().map(|&(a, b)| (a as u32, b as u32)).collect();
                let syn = h.flags & tcp_flags::SYN != 0;
                // the window field of a SYN is never scaled (RFC 7323 §2.2)
                let window = if syn { h.wnd.min(65_535) } else { (h.wnd >> shift).min(65_535) } as u16;
                w.write_tcp(&TcpPacket {
                    ts_ns: ts,
                    ep: Endpoints { src, dst, sport: h.src_port, dport: h.dst_port },
                    ecn: ecn_bits(p.ecn),
                    seq: h.seq as u32,
                    ack: h.ack as u32,
                    flags: h.flags,
                    window,
                    options: TcpOptions {
                        mss: if syn { Some(1460) } else { None },
                        wscale: if syn { h.wscale } else { None },
                        sack_permitted: syn,
                        timestamps: h.ts,
                        sack: &sack,
                    },
                    payload_len: h.len,
                })?;
            }
            Body::Raw | Body::Probe { .. } => {}
        }
    }
    for (_, (_, w)) in writers.drain() {
        // flushed and synced: a rename must not publish data still in the page cache only
        w.finish()?.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    Ok(order)
}
