"""Capture-analysis throughput and memory: writes a synthetic sender/receiver capture pair of the
given total size with jitterlab's PcapWriter (20 ms RTP audio plus bulk TCP downloads with their
ACKs, full 1514-byte frames), then times `jitterlab.capture.analyze` on it in a fresh process and
reports MB/s (pair bytes / wall time) and the peak RSS. Repeats at a second, smaller size so the
memory figure can be seen not to grow with capture length.

    python bench/bench_capture.py                # 1 GB pair (+ a 128 MB pair for the memory check)
    python bench/bench_capture.py --size-mb 256  # quicker

The captures go to a temporary directory (or --dir) and are deleted unless --keep: never commit
them. Timings are with the files in the page cache (just written), i.e. parsing speed, not disk
speed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
MSS = 1448


def write_pair(d: Path, total_bytes: int, snaplen: int = 65535) -> tuple[Path, Path]:
    from jitterlab import _native

    s, r = d / "sender.pcap", d / "receiver.pcap"
    total = total_bytes
    flows = 4
    # 100 Mbit/s of 1514-byte frames: one data segment every 121 us, shared round-robin by the flows.
    gap = 121_000
    seq = [1] * flows
    # Bytes per record in the file: 16-byte record header + min(frame, snaplen).
    def rec(frame: int) -> int:
        return 16 + min(frame, max(snaplen, 54))

    with _native.PcapWriter(str(s), snaplen) as ws, _native.PcapWriter(str(r), snaplen) as wr:
        for f in range(flows):
            ws.write_tcp(T0, "10.0.1.1", "10.0.0.1", 40000 + f, 80, 0, 0, 0x02, mss=1460, wscale=7, sack_permitted=True)
            ws.write_tcp(T0 + 40 * MS, "10.0.0.1", "10.0.1.1", 80, 40000 + f, 0, 1, 0x12, mss=1460, wscale=7, sack_permitted=True)
        t = T0 + 50 * MS
        next_audio = T0
        audio_seq = 0
        written = 0
        k = 0
        while written < total:
            while next_audio <= t:
                args = ("10.0.0.1", "10.0.1.1", 5004, 5004, 0x1234, audio_seq & 0xFFFF, (audio_seq * 160) & 0xFFFFFFFF, 80)
                ws.write_rtp(next_audio, *args)
                wr.write_rtp(next_audio + 30 * MS + (audio_seq * 7919 % 40) * MS, *args)
                audio_seq += 1
                next_audio += 20 * MS
                written += 2 * rec(94)
            f = k % flows
            a = ("10.0.0.1", "10.0.1.1", 80, 40000 + f, seq[f] & 0xFFFFFFFF, 1, 0x10)
            ws.write_tcp(t, *a, payload_len=MSS, timestamps=(k, 0))
            wr.write_tcp(t + 30 * MS, *a, payload_len=MSS, timestamps=(k, 0))
            seq[f] += MSS
            if k % 2 == 1:
                ack = ("10.0.1.1", "10.0.0.1", 40000 + f, 80, 1, seq[f] & 0xFFFFFFFF, 0x10)
                ws.write_tcp(t + 60 * MS, *ack, timestamps=(0, k))
                wr.write_tcp(t + 30 * MS, *ack, timestamps=(0, k))
                written += 2 * rec(14 + 20 + 32)
            written += 2 * rec(14 + 20 + 32 + MSS)
            t += gap
            k += 1
    return s, r


CHILD = r"""
import json, resource, sys, time
from jitterlab.capture import analyze
t = time.perf_counter()
res = analyze(sys.argv[1], sys.argv[2])
dt = time.perf_counter() - t
run = res["runs"].iloc[0]
print(json.dumps({"seconds": dt, "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "media_rows": len(res["media_packets"]), "tcp_flows": len(res["tcp_flows"]),
                  "frames": int(run.sender_frames + run.receiver_frames), "lost": int(run.media_lost)}))
"""

BASE = r"""
import json, resource
import jitterlab.capture
print(json.dumps({"max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def measure(s: Path, r: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(s), str(r)], capture_output=True, text=True, check=True).stdout
    m = json.loads(out)
    size = s.stat().st_size + r.stat().st_size
    m["pair_bytes"] = size
    m["mb_per_s"] = size / 1e6 / m["seconds"]
    return m


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="total size of the capture pair in MB (default 1024)")
    ap.add_argument("--small-mb", type=int, default=128, help="second, smaller pair for the memory comparison (0: skip)")
    ap.add_argument("--snaplen", type=int, default=65535, help="bytes kept per frame, as tcpdump -s (default 65535: whole frames)")
    ap.add_argument("--dir", help="where to write the captures (default: a temporary directory)")
    ap.add_argument("--keep", action="store_true", help="keep the captures")
    args = ap.parse_args()
    base = json.loads(subprocess.run([sys.executable, "-c", BASE], capture_output=True, text=True, check=True).stdout)
    results = {"python_baseline_rss_mib": base["max_rss_kib"] / 1024}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for label, mb in (("large", args.size_mb), ("small", args.small_mb)):
            if mb <= 0:
                continue
            d = Path(tmp) / label
            d.mkdir()
            t = time.perf_counter()
            s, r = write_pair(d, mb * 1_000_000, args.snaplen)
            wrote = time.perf_counter() - t
            m = measure(s, r)
            m["write_seconds"] = wrote
            results[label] = m
            print(
                f"{label}: pair {m['pair_bytes'] / 1e6:,.0f} MB analysed in {m['seconds']:.2f} s = {m['mb_per_s']:,.0f} MB/s; "
                f"peak RSS {m['max_rss_kib'] / 1024:,.0f} MiB (Python + pandas alone: {results['python_baseline_rss_mib']:,.0f} MiB); "
                f"{m['frames']:,} frames, {m['media_rows']} media rows, {m['tcp_flows']} TCP flows",
                flush=True,
            )
            if args.keep:
                keep = Path(args.dir or ".") / f"bench-capture-{label}"
                keep.mkdir(exist_ok=True)
                for p in (s, r):
                    os.replace(p, keep / p.name)
                print(f"kept {keep}")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
