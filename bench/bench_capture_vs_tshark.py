"""Capture analysis against Wireshark on the same capture: the simulator's taps write a pair of
captures with 1 million RTP packets each (8 Mbit/s of paced 1000-byte video, 1000 s; snaplen 128 as tcpdump -s 128 in the study); then
`jitterlab.capture.analyze` (parse + match both files) and `tshark -q -z rtp,streams` (one file,
RTP stream statistics) are timed, best of 3. Prints packets/s and the wall-time ratio.

    python bench/bench_capture_vs_tshark.py [--packets 1000000]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--packets", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--snaplen", type=int, default=128, help="bytes kept per frame (the study's tcpdump -s 128; 65535 = whole frames)")
    args = ap.parse_args()
    import jitterlab
    from jitterlab.capture import analyze

    pps = 1000  # 8 Mbit/s of 1000 B packets
    secs = args.packets / pps
    sc = {"name": "bench-capture", "duration": f"{secs + 1}s",
          "links": {"l": {"from": "a", "to": "b", "rate": "10Mbit", "delay": "10ms", "jitter": {"dist": "exponential", "mean": "1ms"}}},
          "traffic": [{"kind": "video", "from": "a", "to": "b", "rate": "8Mbit", "packet_size": "1000B", "frame_interval": "40ms",
                       "mode": "paced", "stop": f"{secs}s"}],
          "output": {"pcap": ["a", "b"], "pcap_snaplen": args.snaplen}}
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        res = jitterlab.simulate(sc, seed=1, pcap_dir=d)
        n = len(res.media_packets)
        print(f"wrote a capture pair of {n:,} RTP packets each in {time.perf_counter() - t0:.1f} s "
              f"({Path(res.pcap['a']).stat().st_size / 1e6:.0f} + {Path(res.pcap['b']).stat().st_size / 1e6:.0f} MB)")
        best_jl = min(_time(lambda: analyze(res.pcap["a"], res.pcap["b"], t0_ns=res.pcap_epoch_ns)) for _ in range(args.repeat))
        print(f"jitterlab analyze (both files, match): {best_jl:.3f} s = {2 * n / best_jl / 1e6:.2f} M packets/s parsed and matched")
        ts = shutil.which("tshark")
        if not ts:
            print("tshark not installed (apt-get install tshark): no ratio")
            return
        cmd = [ts, "-q", "-n", "-z", "rtp,streams", "-o", "rtp.heuristic_rtp:TRUE", "-r", res.pcap["b"]]
        best_ts = min(_time(lambda: subprocess.run(cmd, capture_output=True, check=True)) for _ in range(args.repeat))
        print(f"tshark -q -z rtp,streams (receiver file only): {best_ts:.3f} s = {n / best_ts / 1e6:.2f} M packets/s")
        print(f"ratio: tshark / jitterlab wall time = {best_ts / best_jl:.1f}x (jitterlab reads twice the packets)")


def _time(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
