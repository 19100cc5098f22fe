#!/usr/bin/env python3
"""Times the simulator call of `jitterlab sweep` (`_native.simulate_tables`: scenario build, event
loop, the tables' columns) on every scenario of a points file, this thread's CPU time, with one or
more builds of the native module side by side, alternated, so that two builds are compared under
the same load. Not a test.

    python3 bench/points_jsonl.py POINTS.jsonl
    .venv/bin/python bench/simcall.py POINTS.jsonl OLD/_native.abi3.so NEW/_native.abi3.so [--rounds 4]

Prints one line per build and round (CPU seconds, the events total, which must agree between
builds that make the same events), then each build's range.
"""
from __future__ import annotations

import argparse
import importlib.util
import time


def load(path: str):
    # the module's init symbol is PyInit__native whatever the file's directory
    spec = importlib.util.spec_from_file_location("_native", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("points")
    ap.add_argument("modules", nargs="+", help="paths of _native.abi3.so builds")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    with open(a.points) as f:
        lines = [l for l in f if l.strip()]
    mods = [load(p) for p in a.modules]
    got: dict[str, list[float]] = {p: [] for p in a.modules}
    for r in range(a.rounds):
        for p, m in zip(a.modules, mods):
            t = time.thread_time()
            events = sum(m.simulate_tables(l, a.seed, i)["totals"]["events"] for i, l in enumerate(lines))
            cpu = time.thread_time() - t
            got[p].append(cpu)
            print(f"round {r + 1} {p}: {len(lines)} runs, simulator call CPU {cpu:.3f} s, events {events}")
    for p, v in got.items():
        print(f"{p}: {min(v):.3f}-{max(v):.3f} s over {len(v)} rounds")


if __name__ == "__main__":
    main()
