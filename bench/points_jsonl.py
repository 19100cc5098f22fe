#!/usr/bin/env python3
"""Writes the scenarios of `bench/run vs-ns2`'s sweep (Chodorek's 126 points) as JSON lines, each
line the core's JSON of one run (overrides applied, files inlined), for the engine-only benchmark
`cargo run --profile dist -p jitterlab-sim --example bench_points -- FILE`: its events, events per
delivered packet and table fingerprint over the sweep's scenarios, with no Python on the path (two
builds giving the same fingerprint produced the same tables).

    python3 bench/points_jsonl.py OUT.jsonl [--duration 60]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--duration", type=int, default=60, help="simulated seconds per point")
    a = ap.parse_args()
    import bench_vs_ns2

    from jitterlab import sim, sweep

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "vs-ns2.toml")
        bench_vs_ns2.sweep_file(path, a.duration)
        sw = sweep.load(path)
    with open(a.out, "w") as f:
        for spec in sw.runs():
            f.write(sim.run_json(sw.scenario, spec.overrides)[1] + "\n")
    print(f"{len(sw.runs())} scenarios written to {a.out}")


if __name__ == "__main__":
    main()
