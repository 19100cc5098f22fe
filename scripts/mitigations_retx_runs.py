#!/usr/bin/env python3
"""Per-seed retransmission counts of the mitigations study's testbed scenario, real Linux and the
simulator, for the rows where they differ most (issue 26).

    python scripts/mitigations_retx_runs.py --link fixed --mitigation PIE --seeds 2013-2022 --out OUT   # root
    python scripts/mitigations_retx_runs.py --sim-only ...                                            # no root

Each testbed run holds /tmp/jitterlab-testbed.lock (flock(2), as `flock(1)` takes it) for its own
duration only, so that other testbed users can interleave. Rows (one per backend, link, mitigation
and seed) are appended to OUT/runs.csv: the download's retransmitted segments (the simulator's count;
Linux's tcpi_total_retrans), Linux's DSACKed retransmissions, goodput, whether the run was disturbed;
the pcaps stay under OUT/testbed/<link>/<mitigation>/seed<N>/. The simulator's row for the same
seed is added beside it.
"""
from __future__ import annotations

import argparse
import csv
import fcntl
import re
import sys
import time
from pathlib import Path

LOCK = "/tmp/jitterlab-testbed.lock"
FIELDS = ("backend", "link", "mitigation", "seed", "retransmits", "dsack_dups", "goodput_Mbps", "disturbed", "wall_s")


def _seeds(s: str) -> list[int]:
    out: list[int] = []
    for part in s.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def _goodput(r) -> float:
    from jitterlab import metrics as M

    return float(M.tcp_summary(r.tcp_flows, per="run").goodput_bps.iloc[0]) / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--link", required=True)
    ap.add_argument("--mitigation", required=True, action="append")
    ap.add_argument("--seeds", required=True, type=_seeds)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--sim-only", action="store_true")
    a = ap.parse_args()

    from jitterlab import scenario as _scn
    from jitterlab import sim
    from jitterlab.presets import mitigations_catalog as mit
    from jitterlab.presets import mitigations_testbed as mt
    from jitterlab.presets import pam2013

    ln = pam2013.load_link(a.link)
    base = mt.scenario(ln)
    by_name = {m.name: m for m in mit.MITIGATIONS}
    a.out.mkdir(parents=True, exist_ok=True)
    path = a.out / "runs.csv"
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        if new:
            w.writeheader()
        for name in a.mitigation:
            if name not in by_name:
                print(f"--mitigation: unknown {name!r}", file=sys.stderr)
                return 2
            sc = _scn.with_overrides(base, by_name[name].keys(ln))
            slug = re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()
            for seed in a.seeds:
                t0 = time.monotonic()
                r = sim.simulate(sc, seed=seed, run_id=0)
                w.writerow({"backend": "sim", "link": ln.label, "mitigation": name, "seed": seed,
                            "retransmits": int(r.tcp_flows["retransmits"].sum()), "dsack_dups": "",
                            "goodput_Mbps": _goodput(r), "disturbed": "",
                            "wall_s": round(time.monotonic() - t0, 1)})
                fh.flush()
                if a.sim_only:
                    continue
                from jitterlab import testbed

                with open(LOCK, "a") as lk:
                    fcntl.flock(lk, fcntl.LOCK_EX)
                    t0 = time.monotonic()
                    print(f"testbed: {name} on {ln.label}, seed {seed}", file=sys.stderr)
                    r = testbed.run(sc, seed=seed, run_id=0, out=a.out / "testbed" / ln.label / slug / f"seed{seed}")
                    wall = time.monotonic() - t0
                tf = r.tcp_flows
                w.writerow({"backend": "testbed", "link": ln.label, "mitigation": name, "seed": seed,
                            "retransmits": int(tf["retransmits"].sum()),
                            "dsack_dups": int(tf["retransmits"].sum() - tf["drops"].sum()),
                            "goodput_Mbps": _goodput(r),
                            "disturbed": int(bool((r.testbed.get("accuracy") or {}).get("disturbed"))), "wall_s": round(wall, 1)})
                fh.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
