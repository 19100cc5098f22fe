#!/usr/bin/env python3
"""Runs the TCP validation scenarios in ns-2 (Debian package `ns2`) and in jitterlab and prints a
comparison table. Usage (from the repository root):

    python3 validation/ns2/compare.py [--duration 200] [--reps 10] [--only single,elastic-droptail,elastic-red]

Scenarios (docs/validation.md explains each number):
  single            one FTP flow, 2 Mbit/s 5 ms bottleneck, DropTail 50, window 1000 packets:
                    goodput, bottleneck drops, sawtooth period (mean time between cuts of cwnd
                    by more than a quarter, cuts within 1 s of each other counted once).
  elastic-droptail  Chodorek's dumbbell: 4 FTP flows (window 20 packets) + a bursty 1 Mbit/s CBR
                    video (5 x 1000 B every 40 ms), DropTail 50: aggregate TCP goodput, RTP loss.
  elastic-red       the same with RED (thresh 5, maxthresh 15, q_weight 0.002, linterm 10, gentle
                    off; other RED parameters ns-2's defaults).
  elastic-red-ecn   the same with ECN: RED marks (setbit_ true / ecn = true), TCP ECN-capable.
  single-newreno, elastic-newreno
                    the DropTail scenarios with Agent/TCP/Newreno + TCPSink/DelAck against
                    jitterlab's recovery = "newreno" (no SACK).

Each replication draws the TCP start times from U(0, 1) s (seeded by the replication number) and
gives the same times to both simulators: with periodic video and deterministic TCP, single runs
show traffic phase effects (Floyd & Jacobson 1992), so means over replications are compared.
ns-2's DropTail limit L holds L - 1 waiting packets (drop-tail.cc drops when the length after
enqueueing reaches the limit); jitterlab's "Lpkt" holds L, so ns-2's 50 is jitterlab's "49pkt".
jitterlab runs through crates/sim/examples/tcp_run.rs (scenario JSON on stdin). Nothing is tuned:
both sides get the scenario's parameters as written.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TCL = os.path.join(ROOT, "validation", "ns2", "dumbbell.tcl")
MSS = 960  # 1000-byte packets with 40 bytes of TCP/IP headers (Chodorek Table 3)


def build_jitterlab():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "jitterlab-sim", "--example", "tcp_run"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "examples", "tcp_run")


def cuts_of(rows):
    """Times where cwnd falls below 3/4 of its previous value."""
    out, last = [], None
    for t, w in rows:
        if last is not None and w < 0.75 * last:
            out.append(t)
        last = w
    return out


def run_ns2(queue, nflows, video_mbps, window, duration, starts, variant="Sack1"):
    if shutil.which("ns") is None:
        sys.exit("ns-2 not found: apt-get install ns2")
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "out")
        args = ["ns", TCL, queue, str(nflows), str(video_mbps), str(window), str(duration), prefix, ",".join(f"{s:.6f}" for s in starts), variant]
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        acks = [int(float(l.split()[3])) for l in out.splitlines() if l.startswith("tcp ")]
        arrivals, drops = {}, {}
        with open(prefix + ".tr") as f:
            for line in f:
                ev, fid = line[0], line.split()[7]
                if ev == "+":
                    arrivals[fid] = arrivals.get(fid, 0) + 1
                elif ev == "d":
                    drops[fid] = drops.get(fid, 0) + 1
        with open(prefix + ".cwnd") as f:
            rows = [(float(p[0]), float(p[6])) for p in (l.split() for l in f) if p[5] == "cwnd_"]
    tcp_fids = [str(i) for i in range(1, nflows + 1)]
    return {
        "goodput_bps": sum(a * MSS * 8 for a in acks) / duration,
        "tcp_drops": sum(drops.get(f, 0) for f in tcp_fids),
        "rtp_loss": drops.get("0", 0) / arrivals["0"] if video_mbps else None,
        "cuts": cuts_of(rows),
        "timeouts": sum(1 for (_, a), (_, b) in zip(rows, rows[1:]) if b <= 1.0 < a),
    }


def scenario_json(queue, nflows, video_mbps, window, duration, starts, variant="Sack1"):
    pairs = nflows + (1 if video_mbps else 0)
    # ns-2's Agent/TCP/Sack1 with a DelAck sink is the `ns2-sack1` stack profile (docs/tcp.md); the
    # script gives only what dumbbell.tcl sets: packetSize_ and window_.
    tcp = {"stack": "ns2-sack1", "mss": f"{MSS}B", "rwnd": f"{window}pkt", "series": True}
    if variant == "Newreno":
        tcp["recovery"] = "newreno"
    if variant == "Sack1-ECN":
        tcp["ecn"] = True
    traffic = [dict(kind="ftp", name=f"tcp{i}", **{"from": f"s{i}", "to": f"d{i}"}, start=f"{int(round(starts[i - 1] * 1e6))}us", **tcp)
               for i in range(1, nflows + 1)]
    if video_mbps:
        traffic.append({"kind": "video", "name": "video", "from": f"s{pairs}", "to": f"d{pairs}", "rate": f"{video_mbps}Mbit",
                        "frame_interval": "40ms", "packet_size": "1000B", "mode": "bursty"})
    ns2_dt = {"kind": "droptail", "limit": "49pkt"}  # ns-2 DropTail 50 (see the module doc)
    return {
        "name": "validation", "duration": f"{duration}s",
        "dumbbell": {"pairs": pairs, "bottleneck_rate": "2Mbit", "bottleneck_delay": "5ms", "queue": queue,
                     "reverse_queue": ns2_dt, "access_rate": "100Mbit", "access_delay": "1us", "access_queue": ns2_dt},
        "traffic": traffic,
    }


def run_jitterlab(binary, queue, nflows, video_mbps, window, duration, starts, variant="Sack1"):
    v = scenario_json(queue, nflows, video_mbps, window, duration, starts, variant)
    p = subprocess.run([binary, "1"], input=json.dumps(v), capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": p.stderr.strip()}
    r = json.loads(p.stdout)
    video = next((m for m in r["media"] if m["name"] == "video"), None)
    return {
        "goodput_bps": sum(f["goodput_bps"] for f in r["tcp"]),
        "tcp_drops": sum(f["drops"] for f in r["tcp"]),
        "rtp_loss": video["loss"] if video else None,
        "cuts": r["tcp"][0]["cwnd_cuts"],
        "timeouts": r["tcp"][0]["timeouts"],
    }


def period(cuts, merge=1.0):
    """Mean time between congestion events: cwnd cuts, those less than `merge` seconds after the
    previous one counted once (NewReno's cwnd inflation and deflation in one recovery would
    otherwise count twice). The first event ends slow start; the sawtooth follows it."""
    ev = []
    for t in cuts:
        if not ev or t - ev[-1] >= merge:
            ev.append(t)
    c = ev[1:]
    return (c[-1] - c[0]) / (len(c) - 1) if len(c) >= 2 else None


# ns-2's Queue/RED defaults count the queue in bytes (queue_in_bytes_ true, thresholds and limit
# times mean_pktsize_ 500) and scale the drop probability by packet size (bytes_ true); Chodorek's
# Table 1 does not change them, so both sides use them.
RED = {"kind": "red", "limit": "50pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": False,
       "queue_in_bytes": True, "bytes": True, "mean_pktsize": 500}
DT = {"kind": "droptail", "limit": "49pkt"}
SCENARIOS = {
    "single": ("DropTail", DT, 1, 0, 1000, "Sack1"),
    "single-newreno": ("DropTail", DT, 1, 0, 1000, "Newreno"),
    "elastic-droptail": ("DropTail", DT, 4, 1, 20, "Sack1"),
    "elastic-newreno": ("DropTail", DT, 4, 1, 20, "Newreno"),
    "elastic-red": ("RED", RED, 4, 1, 20, "Sack1"),
    "elastic-red-ecn": ("RED", dict(RED, ecn=True), 4, 1, 20, "Sack1-ECN"),
}


def run_pair(binary, name, duration, reps):
    """Both simulators on scenario `name`, replications 0..reps-1 with the same TCP start times:
    {"ns2": [result, ...], "jitterlab": [...]}, or {"error": message} when jitterlab refuses it."""
    nsq, jq, n, video, window, variant = SCENARIOS[name]
    res = {"ns2": [], "jitterlab": []}
    for rep in range(reps):
        rng = random.Random(rep)
        starts = [rng.uniform(0.0, 1.0) for _ in range(n)]
        jl = run_jitterlab(binary, jq, n, video, window, duration, starts, variant)
        if "error" in jl:
            return {"error": jl["error"]}
        res["jitterlab"].append(jl)
        res["ns2"].append(run_ns2(nsq, n, video, window, duration, starts, variant))
    return res


def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=200.0)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--json", help="also write the raw results here")
    a = ap.parse_args()
    binary = build_jitterlab()
    rows, raw = [], {}
    for name in a.only.split(","):
        nsq, jq, n, video, window, variant = SCENARIOS[name]
        res = run_pair(binary, name, a.duration, a.reps)
        raw[name] = res
        if "error" in res:
            rows.append((name, "jitterlab error", res["error"], "", "", ""))
            continue
        g = {k: [r["goodput_bps"] / 1e6 for r in v] for k, v in res.items()}
        gn, gj = mean(g["ns2"]), mean(g["jitterlab"])
        rows.append((name, "TCP goodput [Mbit/s]", f"{gn:.4f}", f"{gj:.4f}", f"{100 * (gj - gn) / gn:+.2f} %", "5 %"))
        rows.append((name, "TCP segments dropped", f"{mean([r['tcp_drops'] for r in res['ns2']]):.1f}", f"{mean([r['tcp_drops'] for r in res['jitterlab']]):.1f}", "", ""))
        if video:
            ln = [100 * r["rtp_loss"] for r in res["ns2"]]
            lj = [100 * r["rtp_loss"] for r in res["jitterlab"]]
            rows.append((name, "RTP loss [%] mean", f"{mean(ln):.2f}", f"{mean(lj):.2f}", f"{mean(lj) - mean(ln):+.2f} pp", "2 pp"))
            rows.append((name, "RTP loss [%] min..max", f"{min(ln):.2f}..{max(ln):.2f}", f"{min(lj):.2f}..{max(lj):.2f}", "", ""))
        else:
            pn = mean([p for p in (period(r["cuts"]) for r in res["ns2"]) if p])
            pj = mean([p for p in (period(r["cuts"]) for r in res["jitterlab"]) if p])
            rows.append((name, "sawtooth period [s]", f"{pn:.2f}", f"{pj:.2f}", f"{100 * (pj - pn) / pn:+.1f} %", ""))
        rows.append((name, "flow-1 cwnd->1 per run*", f"{mean([r['timeouts'] for r in res['ns2']]):.1f}", f"{mean([r['timeouts'] for r in res['jitterlab']]):.1f}", "", ""))
    head = ("scenario", "metric", "ns-2", "jitterlab", "diff", "aim")
    w = [max(len(r[i]) for r in rows + [head]) for i in range(6)]
    line = lambda r: "  ".join(x.ljust(w[i]) for i, x in enumerate(r)).rstrip()
    print(f"duration {a.duration:g} s, {a.reps} replications (TCP starts ~ U(0, 1) s)")
    print("* jitterlab: retransmission timeouts of flow 1; ns-2: times its cwnd_ falls to 1 (timeouts, and with ECN also halvings from 2)")
    print(line(head))
    for r in rows:
        print(line(r))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
