#!/usr/bin/env python3
"""Loss episodes of a bulk TCP download from its sender-side capture, the same way for a testbed
pcap (real Linux) and a simulator pcap (`output.pcap`), so that the two can be compared rule by rule
(issue 26, docs/mitigations.md "Retransmissions").

    python scripts/retx_episodes.py SERVER.pcap [SERVER.pcap ...]

Per capture: the data segments the server sent (the largest TCP flow by bytes), which of them
repeat sequence space already sent (retransmissions), the flight (highest sequence sent − highest
cumulative ACK seen, in segments) at each retransmission, the largest flight before the first
retransmission (slow start's peak), and the episodes: retransmissions grouped while each follows the
previous within `--gap` (default 0.25 s, several round trips of these paths), with each episode's
start, retransmissions and peak flight before it. Only headers are read (snaplen 128 suffices).
"""
from __future__ import annotations

import argparse
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


def _records(path: Path):
    b = path.read_bytes()
    if len(b) < 24:
        raise ValueError(f"{path}: not a pcap (shorter than its header)")
    magic = b[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end, nano = "<", magic == b"\x4d\x3c\xb2\xa1"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end, nano = ">", magic == b"\xa1\xb2\x3c\x4d"
    else:
        raise ValueError(f"{path}: offset 0: not a pcap magic number")
    if struct.unpack(end + "I", b[20:24])[0] != 1:
        raise ValueError(f"{path}: offset 20: link type is not Ethernet")
    off = 24
    while off + 16 <= len(b):
        sec, frac, incl, _ = struct.unpack_from(end + "IIII", b, off)
        off += 16
        yield sec * 10**9 + (frac if nano else frac * 1000), b[off:off + incl]
        off += incl


@dataclass
class Flow:
    t: list[int] = field(default_factory=list)      # data segments: time (ns)
    seq: list[int] = field(default_factory=list)
    ln: list[int] = field(default_factory=list)
    at: list[int] = field(default_factory=list)      # ACKs towards the sender
    ack: list[int] = field(default_factory=list)


def flows(path: Path) -> dict[tuple, Flow]:
    out: dict[tuple, Flow] = {}
    for t, fr in _records(path):
        if len(fr) < 14 + 20 or fr[12:14] != b"\x08\x00":
            continue
        ip = fr[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] != 6:
            continue
        tot = struct.unpack_from(">H", ip, 2)[0]
        tcp = ip[ihl:]
        if len(tcp) < 20:
            continue
        sport, dport, seq, ack = struct.unpack_from(">HHII", tcp, 0)
        doff = (tcp[12] >> 4) * 4
        plen = tot - ihl - doff
        src, dst = ip[12:16], ip[16:20]
        if plen > 0:
            out.setdefault((src, sport, dst, dport), Flow())
            f = out[(src, sport, dst, dport)]
            f.t.append(t), f.seq.append(seq), f.ln.append(plen)
        if tcp[13] & 0x10:
            f = out.setdefault((dst, dport, src, sport), Flow())
            f.at.append(t), f.ack.append(ack)
    return out


def _unwrap(x: np.ndarray, base: int) -> np.ndarray:
    """32-bit sequence numbers relative to `base`, unwrapped (a download of < 2 GB)."""
    return (x.astype(np.int64) - base) % (1 << 32)


def analyse(path: Path, gap_s: float = 0.25) -> dict:
    fl = flows(path)
    key = max(fl, key=lambda k: sum(fl[k].ln))
    f = fl[key]
    t = np.array(f.t, dtype=np.int64)
    base = f.seq[0]
    s = _unwrap(np.array(f.seq), base)
    e = s + np.array(f.ln)
    hi = np.maximum.accumulate(e)
    prev_hi = np.concatenate([[0], hi[:-1]])
    rtx = s < prev_hi
    at = np.array(f.at, dtype=np.int64)
    ak = _unwrap(np.array(f.ack), base) if len(f.ack) else np.zeros(0, np.int64)
    ak = np.where(ak > (1 << 31), 0, ak)  # ACKs of the SYN (before the first data byte)
    ack_hi = np.maximum.accumulate(ak) if len(ak) else ak
    mss = int(np.median(f.ln))
    # flight when each data segment left: highest sequence sent − highest ACK seen by then
    idx = np.searchsorted(at, t, side="right") - 1
    acked = np.where(idx >= 0, ack_hi[np.clip(idx, 0, None)] if len(ack_hi) else 0, 0)
    flight = (hi - acked) / mss
    t0 = t[0]
    rt = t[rtx]
    eps = []
    if len(rt):
        starts = np.concatenate([[0], np.nonzero(np.diff(rt) > gap_s * 1e9)[0] + 1])
        ends = np.concatenate([starts[1:], [len(rt)]])
        rti = np.nonzero(rtx)[0]
        for a, b in zip(starts, ends):
            first = rti[a]
            prev_end = rti[a - 1] if a else 0
            peak = float(flight[prev_end:first + 1].max())
            eps.append({"start_s": (rt[a] - t0) / 1e9, "retx": int(b - a), "peak_flight": peak,
                        "len_s": (rt[b - 1] - rt[a]) / 1e9})
    return {"path": str(path), "segments": int(len(t)), "retx": int(rtx.sum()), "mss": mss,
            "ss_peak_flight": float(flight[:np.nonzero(rtx)[0][0]].max()) if rtx.any() else float(flight.max()),
            "first_retx_s": float((rt[0] - t0) / 1e9) if len(rt) else None, "episodes": eps}


def hystart_exit(path: Path, iw: int = 3) -> float | None:
    """The window (segments) at which Linux 6.18's HyStart would have left slow start on the ACKs of
    this capture (`tcp_cubic.c` `hystart_update` with the 2025 round fix, both detectors, not
    pacing): per newly acknowledging ACK the RTT sample is the ACK's time less the send time of the
    last segment it covers, cwnd is the initial window plus the segments acknowledged so far (slow
    start counting every ACKed segment), a round ends once SND.UNA passes the highest sequence sent
    before the ACK that began it, and from 16 segments on the delay test (the round's minimum over
    8 samples above delay_min + clamp(delay_min/8, 4, 16 ms)) and the ACK train (ACKs ≤ 2 ms apart
    spanning delay_min/2) run. None when neither fires before the first retransmission."""
    fl = flows(path)
    f = fl[max(fl, key=lambda k: sum(fl[k].ln))]
    t = np.array(f.t, dtype=np.int64)
    base = f.seq[0]
    e = _unwrap(np.array(f.seq), base) + np.array(f.ln)
    mss = int(np.median(f.ln))
    starts = e - np.array(f.ln)
    rtx = np.nonzero(starts < np.concatenate([[0], np.maximum.accumulate(e)[:-1]]))[0]
    first_rtx = int(t[rtx[0]]) if len(rtx) else np.iinfo(np.int64).max
    sent: dict[int, int] = {}
    for ti, ei in zip(t.tolist(), e.tolist()):
        sent.setdefault(ei, ti)
    ends = np.array(sorted(sent))
    tends = np.array([sent[x] for x in ends])
    hi = np.maximum.accumulate(e)
    una, cwnd = 0, float(iw)
    delay_min = end_seq = curr = None
    cnt = round_start = last = 0
    for ta, a in zip(f.at, _unwrap(np.array(f.ack), base).tolist() if f.ack else []):
        if ta >= first_rtx:
            break
        if a > (1 << 31) or a <= una:
            continue
        i = int(np.searchsorted(ends, a, side="right")) - 1
        if i >= 0:
            rtt = ta - int(tends[i])
            delay_min = rtt if delay_min is None else min(delay_min, rtt)
            if end_seq is None or a > end_seq:
                j = int(np.searchsorted(t, ta, side="left")) - 1
                round_start, last, end_seq, curr, cnt = ta, ta, int(hi[j]) if j >= 0 else 0, None, 0
            if cwnd >= 16:
                if ta - last <= 2_000_000:
                    last = ta
                    if ta - round_start > delay_min / 2:
                        return cwnd
                curr = rtt if curr is None else min(curr, rtt)
                if cnt < 8:
                    cnt += 1
                elif curr > delay_min + min(max(delay_min / 8, 4e6), 16e6):
                    return cwnd
        cwnd += (a - una) / mss
        una = a
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pcap", nargs="+", type=Path)
    ap.add_argument("--gap", type=float, default=0.25)
    ap.add_argument("--episodes", action="store_true", help="list each episode")
    a = ap.parse_args()
    for p in a.pcap:
        try:
            r = analyse(p, a.gap)
        except (OSError, ValueError) as e:
            print(e, file=sys.stderr)
            return 2
        ep = r["episodes"]
        print(f"{p}: {r['segments']} data segments, {r['retx']} retransmitted, slow start peak flight {r['ss_peak_flight']:.0f} "
              f"segments, first retransmission at {r['first_retx_s']:.2f} s, {len(ep)} episodes; retx per episode "
              f"{[x['retx'] for x in ep]}")
        if a.episodes:
            for x in ep:
                print(f"  {x['start_s']:7.2f} s  {x['retx']:4d} retx over {x['len_s']:.2f} s, peak flight before {x['peak_flight']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
