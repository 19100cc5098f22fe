#!/usr/bin/env python3
"""TCP benchmark: a 28 MB bulk transfer over a 4 Mbit/s, 20 ms bottleneck with a 500-packet
DropTail (sender access 100 Mbit/s, 1 ms), in jitterlab (Reno + SACK, IW2, delayed ACKs 100 ms,
1460-byte MSS: the same TCP as ns-2's Sack1/DelAck) and in ns-2 (bench/bench_tcp.tcl), run
alternately in the same invocation. Prints the best of --reps wall times, jitterlab's events/s and
both completion times (a sanity check that both did the same work). Usage:

    python3 bench/bench_tcp.py [--reps 3] [--bytes 28000000]

jitterlab's wall time is measured inside the process (scenario build + run + tables, no process
start); ns-2's is the whole `ns` process (its Tcl start-up is ~0.1 s, reported separately).
"""
import argparse
import json
import os
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scenario(nbytes, stop):
    return {
        "name": "bench-tcp", "duration": f"{stop}s",
        "links": {
            "access": {"from": "server", "to": "router", "rate": "100Mbit", "delay": "1ms", "queue": {"kind": "droptail", "limit": "1000pkt"}},
            "bottleneck": {"from": "router", "to": "client", "rate": "4Mbit", "delay": "20ms", "queue": {"kind": "droptail", "limit": "500pkt"}},
        },
        "traffic": [{"kind": "bulk", "name": "bulk", "from": "server", "to": "client", "size": f"{nbytes}B", "mss": "1460B", "iw": 2,
                     "cc": "reno", "recovery": "sack", "lost_retransmit": False, "prr": False, "rack": False, "tlp": False, "timestamps": False, "rto": "rfc6298", "delack": "100ms", "quickack": 0, "tsq": False, "rcvbuf": "146000000B"}],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--bytes", type=int, default=28_000_000)
    ap.add_argument("--stop", type=float, default=100.0)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--profile", "dist", "-q", "-p", "jitterlab-sim", "--example", "tcp_run"], cwd=ROOT, check=True)
    binary = os.path.join(ROOT, "target", "dist", "examples", "tcp_run")
    v = json.dumps(scenario(a.bytes, a.stop))
    tcl = os.path.join(ROOT, "bench", "bench_tcp.tcl")
    jl, ns, ns_empty = [], [], []
    for _ in range(a.reps):
        r = json.loads(subprocess.run([binary, "1"], input=v, capture_output=True, text=True, check=True).stdout)
        jl.append(r)
        t0 = time.perf_counter()
        out = subprocess.run(["ns", tcl, str(a.bytes), str(a.stop)], capture_output=True, text=True, check=True).stdout
        ns.append((time.perf_counter() - t0, out))
        t0 = time.perf_counter()
        subprocess.run(["ns", tcl, "0", "0"], capture_output=True, text=True, check=True)
        ns_empty.append(time.perf_counter() - t0)
    best = min(jl, key=lambda r: r["wall_s"])
    ns_best = min(ns, key=lambda x: x[0])
    ns_done = next((l.split()[1] for l in ns_best[1].splitlines() if l.startswith("done")), "not finished")
    f = best["tcp"][0]
    print(f"28 MB bulk, 4 Mbit/s, 500-packet buffer ({a.bytes} B, {a.stop:g} s simulated), best of {a.reps}")
    print(f"jitterlab: wall {best['wall_s']:.3f} s, {best['events']} events, {best['events_per_s'] / 1e6:.2f} M events/s, "
          f"transfer done at {f['end_s']:.3f} s, {f['retransmits']} retransmits")
    print(f"ns-2     : wall {ns_best[0]:.3f} s (process; empty-script start-up {min(ns_empty):.3f} s), transfer done at {float(ns_done):.3f} s" if ns_done != "not finished" else f"ns-2: wall {ns_best[0]:.3f} s, not finished")


if __name__ == "__main__":
    main()
