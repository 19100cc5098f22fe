#!/usr/bin/env python3
"""The stage split of bench/bench_vs_ns2.py (`--split-only`) with two or more builds of the native
module, alternated round by round in this checkout, so that builds are compared under the same
load (this VM's simulator speed drifts by tens of percent within an hour). Not a test.

    .venv/bin/python bench/ab_split.py OLD/_native.abi3.so NEW/_native.abi3.so [--rounds 6]

Each round runs the split in a fresh process once per module (the order reversed every other
round), with the module copied over python/jitterlab/_native.abi3.so; the checkout's own module
is put back at the end. Prints each round's stages, then each build's medians.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(ROOT, "python", "jitterlab", "_native.abi3.so")
SIM = "simulator call (Rust)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("modules", nargs="+", help="builds of python/jitterlab/_native.abi3.so")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--sweep", default=os.path.join(ROOT, "bench", "chodorek-126.toml"))
    a = ap.parse_args()
    got: dict[str, list[dict[str, float]]] = {m: [] for m in a.modules}
    with tempfile.TemporaryDirectory() as tmp:
        keep = os.path.join(tmp, "kept.so")
        shutil.copy(MODULE, keep)
        try:
            for r in range(a.rounds):
                for m in (a.modules if r % 2 == 0 else a.modules[::-1]):
                    shutil.copy(m, MODULE)
                    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench_vs_ns2.py"), "--split-only", a.sweep,
                                          os.path.join(tmp, "out")], cwd=ROOT, capture_output=True, text=True, check=True)
                    d = json.loads(out.stdout.strip().splitlines()[-1])
                    got[m].append(d)
                    tot = sum(d.values())
                    print(f"round {r} {m}: outside the simulator call {100 * (1 - d[SIM] / tot):.1f} % of {tot:.3f} s; "
                          + "; ".join(f"{k} {v:.3f}" for k, v in d.items()), flush=True)
        finally:
            shutil.copy(keep, MODULE)
    for m, rounds in got.items():
        share = [1 - d[SIM] / sum(d.values()) for d in rounds]
        print(f"{m}: outside the simulator call, median {100 * statistics.median(share):.1f} % "
              f"({100 * min(share):.1f}-{100 * max(share):.1f} %), "
              f"{statistics.median(sum(d.values()) - d[SIM] for d in rounds):.3f} s")
        for k in rounds[0]:
            print(f"  {k:45s} {statistics.median(d[k] for d in rounds):.3f} s")


if __name__ == "__main__":
    main()
