#!/usr/bin/env python3
"""Runs the TCP validation scenarios in ns-2 (Debian package `ns2`) and in jitterlab and prints a
comparison table. Usage (from the repository root):

    python3 validation/ns2/compare.py [--duration 200] [--only single,elastic-droptail,elastic-red]

Scenarios (docs/validation.md explains each number):
  single            one FTP flow, 2 Mbit/s 5 ms bottleneck, DropTail 50, window 1000 packets:
                    goodput, bottleneck drops, sawtooth period (mean time between cwnd cuts).
  elastic-droptail  Chodorek's dumbbell: 4 FTP flows (window 20 packets) + a bursty 1 Mbit/s CBR
                    video (5 x 1000 B every 40 ms), DropTail 50: aggregate TCP goodput, RTP loss.
  elastic-red       the same with RED (thresh 5, maxthresh 15, q_weight 0.002, linterm 10, gentle
                    off; other RED parameters ns-2's defaults).
jitterlab runs through crates/sim/examples/tcp_run.rs (scenario JSON on stdin). No numbers here are
tuned: both sides get the parameters of the scenario as written.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TCL = os.path.join(ROOT, "validation", "ns2", "dumbbell.tcl")
MSS = 960  # 1000-byte packets with 40 bytes of TCP/IP headers (Chodorek Table 3)


def build_jitterlab():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "jitterlab-sim", "--example", "tcp_run"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "examples", "tcp_run")


def run_ns2(queue, nflows, video_mbps, window, duration):
    if shutil.which("ns") is None:
        sys.exit("ns-2 not found: apt-get install ns2")
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "out")
        out = subprocess.run(["ns", TCL, queue, str(nflows), str(video_mbps), str(window), str(duration), prefix], capture_output=True, text=True, check=True).stdout
        acks = [int(float(l.split()[3])) for l in out.splitlines() if l.startswith("tcp ")]
        arrivals = {}
        drops = {}
        with open(prefix + ".tr") as f:
            for line in f:
                ev, _t, _a, _b, _typ, _size, _flags, fid = line.split()[:8]
                if ev == "+":
                    arrivals[fid] = arrivals.get(fid, 0) + 1
                elif ev == "d":
                    drops[fid] = drops.get(fid, 0) + 1
        cuts = []
        last = None
        with open(prefix + ".cwnd") as f:
            for line in f:
                p = line.split()
                t, w = float(p[0]), float(p[6])
                if last is not None and w < 0.75 * last:
                    cuts.append(t)
                last = w
    tcp_fids = [str(i) for i in range(1, nflows + 1)]
    return {
        "goodput_bps": sum(a * MSS * 8 for a in acks) / duration,
        "tcp_drops": sum(drops.get(f, 0) for f in tcp_fids),
        "rtp_loss": drops.get("0", 0) / arrivals["0"] if video_mbps else None,
        "rtp_sent": arrivals.get("0", 0),
        "cuts": cuts,
    }


def scenario_json(queue, nflows, video_mbps, window, duration):
    pairs = nflows + (1 if video_mbps else 0)
    tcp = {"mss": f"{MSS}B", "iw": 2, "cc": "reno", "recovery": "sack", "delack": "100ms", "min_rto": "200ms",
           "rcvbuf": f"{window * MSS}B", "series": True}
    traffic = [dict(kind="ftp", name=f"tcp{i}", **{"from": f"s{i}", "to": f"d{i}"}, start=f"{100 * (i - 1)}ms", **tcp) for i in range(1, nflows + 1)]
    if video_mbps:
        traffic.append({"kind": "video", "name": "video", "from": f"s{pairs}", "to": f"d{pairs}", "rate": f"{video_mbps}Mbit",
                        "frame_interval": "40ms", "packet_size": "1000B", "mode": "bursty"})
    return {
        "name": "validation", "duration": f"{duration}s",
        "dumbbell": {"pairs": pairs, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms", "queue": queue,
                     "reverse_queue": {"kind": "droptail", "limit": "50pkt"},
                     "access_rate": "100Mbit", "access_delay": "1us", "access_queue": {"kind": "droptail", "limit": "50pkt"}},
        "traffic": traffic,
    }


def run_jitterlab(binary, queue, nflows, video_mbps, window, duration):
    v = scenario_json(queue, nflows, video_mbps, window, duration)
    p = subprocess.run([binary, "1"], input=json.dumps(v), capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip()}
    r = json.loads(p.stdout)
    bn = next(c for c in r["channels"] if c["name"] == "bottleneck")
    video = next((m for m in r["media"] if m["name"] == "video"), None)
    return {
        "goodput_bps": sum(f["goodput_bps"] for f in r["tcp"]),
        "tcp_drops": sum(f["drops"] for f in r["tcp"]),
        "bottleneck_drops": bn["drops"],
        "rtp_loss": video["loss"] if video else None,
        "rtp_sent": video["sent"] if video else 0,
        "cuts": r["tcp"][0]["cwnd_cuts"],
        "timeouts": sum(f["timeouts"] for f in r["tcp"]),
        "retransmits": sum(f["retransmits"] for f in r["tcp"]),
    }


def period(cuts):
    # Skip the slow-start overshoot: the first cut ends slow start, the sawtooth follows it.
    c = cuts[1:]
    return (c[-1] - c[0]) / (len(c) - 1) if len(c) >= 2 else None


RED = {"kind": "red", "limit": "50pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": False}
DT = {"kind": "droptail", "limit": "50pkt"}
SCENARIOS = {
    "single": ("DropTail", DT, 1, 0, 1000),
    "elastic-droptail": ("DropTail", DT, 4, 1, 20),
    "elastic-red": ("RED", RED, 4, 1, 20),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=200.0)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--json", help="also write the raw results here")
    a = ap.parse_args()
    binary = build_jitterlab()
    rows = []
    raw = {}
    for name in a.only.split(","):
        nsq, jq, n, video, window = SCENARIOS[name]
        ns = run_ns2(nsq, n, video, window, a.duration)
        jl = run_jitterlab(binary, jq, n, video, window, a.duration)
        raw[name] = {"ns2": ns, "jitterlab": jl}
        if "error" in jl:
            rows.append((name, "jitterlab error", jl["error"], "", ""))
            continue
        g_ns, g_jl = ns["goodput_bps"] / 1e6, jl["goodput_bps"] / 1e6
        rows.append((name, "TCP goodput [Mbit/s]", f"{g_ns:.4f}", f"{g_jl:.4f}", f"{100 * (g_jl - g_ns) / g_ns:+.2f} %"))
        rows.append((name, "TCP segments dropped", str(ns["tcp_drops"]), str(jl["tcp_drops"]), ""))
        if video:
            rows.append((name, "RTP loss [%]", f"{100 * ns['rtp_loss']:.2f}", f"{100 * jl['rtp_loss']:.2f}", f"{100 * (jl['rtp_loss'] - ns['rtp_loss']):+.2f} pp"))
            rows.append((name, "RTP packets sent", str(ns["rtp_sent"]), str(jl["rtp_sent"]), ""))
        else:
            p_ns, p_jl = period(ns["cuts"]), period(jl["cuts"])
            if p_ns and p_jl:
                rows.append((name, "sawtooth period [s]", f"{p_ns:.2f}", f"{p_jl:.2f}", f"{100 * (p_jl - p_ns) / p_ns:+.1f} %"))
            rows.append((name, "cwnd cuts", str(len(ns["cuts"])), str(len(jl["cuts"])), ""))
        rows.append((name, "jitterlab timeouts / retransmits", "", f"{jl['timeouts']} / {jl['retransmits']}", ""))
    w = [max(len(r[i]) for r in rows + [("scenario", "metric", "ns-2", "jitterlab", "diff")]) for i in range(5)]
    line = lambda r: "  ".join(x.ljust(w[i]) for i, x in enumerate(r))
    print(f"duration {a.duration:g} s")
    print(line(("scenario", "metric", "ns-2", "jitterlab", "diff")))
    for r in rows:
        print(line(r))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
