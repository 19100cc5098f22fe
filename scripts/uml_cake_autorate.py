#!/usr/bin/env python3
"""Linux's CAKE autorate-ingress estimate against the simulator's on the same arrivals (docs/queues.md,
CAKE): turns scripts/uml/cake-autorate.sh's output (a pcap of every packet arriving at the veth whose
ingress feeds CAKE, and CAKE's `tc -s -j` after each phase) into the data file the simulator's test
reads (crates/sim/tests/data/uml-cake-autorate.txt: `a T_NS LEN` per arrival, `e T_NS BYTES_PER_S`
per kernel estimate, times from the first arrival).

  python scripts/uml_cake_autorate.py OUT_DIR [DATA_FILE]

Exit status 2 on bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "crates" / "sim" / "tests" / "data" / "uml-cake-autorate.txt"


def _ns(epoch: str) -> int:
    """tshark's frame.time_epoch ("1795761895.058588587") as integer ns, without float rounding."""
    s, _, frac = epoch.strip().partition(".")
    return int(s) * 1_000_000_000 + int((frac + "000000000")[:9])


def _estimate(v: Any) -> int | None:
    """The first `capacity_estimate` anywhere in tc's JSON (bytes/s, CAKE's avg_peak_bandwidth)."""
    if isinstance(v, dict):
        if "capacity_estimate" in v:
            return int(v["capacity_estimate"])
        v = list(v.values())
    if isinstance(v, list):
        for x in v:
            e = _estimate(x)
            if e is not None:
                return e
    return None


def convert(out: Path) -> list[str]:
    fields = subprocess.run(["tshark", "-r", str(out / "arrivals.pcap"), "-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len"],
                            capture_output=True, text=True, check=True).stdout.split("\n")
    arr = [(_ns(t), int(n)) for t, n in (ln.split("\t") for ln in fields if ln.strip())]
    if not arr:
        raise ValueError("no arrivals in the pcap")
    t0 = arr[0][0]
    lines = [f"a {t - t0} {n}" for t, n in arr]
    for ln in (out / "est.txt").read_text().splitlines():
        t, _, js = ln.partition(" ")
        e = _estimate(json.loads(js))
        if e is None:
            raise ValueError(f"no capacity_estimate in {js[:80]!r}")
        lines.append(f"e {int(t) - t0} {e}")
    return lines


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: uml_cake_autorate.py OUT_DIR [DATA_FILE]", file=sys.stderr)
        return 2
    dest = Path(argv[1]) if len(argv) > 1 else DATA
    try:
        lines = convert(Path(argv[0]))
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        print(f"{argv[0]}: not cake-autorate.sh's output ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    head = "# scripts/uml/cake-autorate.sh in user-mode Linux 6.1, converted by scripts/uml_cake_autorate.py\n"
    dest.write_text(head + "\n".join(sorted(lines, key=lambda x: int(x.split()[1]))) + "\n")
    print(f"{dest}: {sum(1 for x in lines if x[0] == 'a')} arrivals, {sum(1 for x in lines if x[0] == 'e')} estimates")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
