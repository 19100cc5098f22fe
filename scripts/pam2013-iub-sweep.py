#!/usr/bin/env python3
"""What the pam2013 findings would say if the HSPA link had Iub flow control (`iub_cycle`, the
cellular model's burst behaviour, docs/scenarios.md): runs the study (50 replications, 150 for
Fig. 7, seed 2013, the 2012 stack at the 100 ms round trip — as `reproduce pam2013`) on the
cellular link for each cycle given (ms; 0 = off) and prints, as markdown, the verdict counts, the
verdicts that differ between cycles, and Table 1's 99th-percentile IPDV cells beside the paper's.

This is a sensitivity analysis, not a calibration: the calibration rows do not constrain the
cycle (scripts/calibrate-cellular.py cell.iub_cycle=...; docs/calibration.md, "Held-out
predictions"). Usage: scripts/pam2013-iub-sweep.py OUT [CYCLE_MS ...] (default 0 20 40 80 120 160);
runs are cached under OUT/iub-<cycle>/ (about 25 s a cycle on two cores)."""
import sys
from pathlib import Path

from jitterlab.presets.common import Options, run_experiment
from jitterlab.presets.pam2013 import STACK, Link, PAPER_TABLE1, findings, load_link, sweeps


def link(cycle_ms: int) -> Link:
    ln = load_link("cellular", study=True)
    acc = dict(ln.access)
    acc["down_cellular"] = {**acc["down_cellular"], "iub_cycle": f"{cycle_ms}ms"}
    return Link(ln.spec, ln.label, acc, ln.mean_bps, ln.source)


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    out = Path(argv[0])
    cycles = [int(c) for c in argv[1:]] or [0, 20, 40, 80, 120, 160]
    by = {}
    for c in cycles:
        ln = link(c)
        opt = Options(out / f"iub-{c}", None, "local", None, False)
        res = {k: run_experiment(s, k, opt) for k, s in sweeps(50, 150, ln, STACK).items()}
        by[c] = {f.finding: f for f in findings(res, 50, 150, ln)}
    first = by[cycles[0]]
    print("| iub_cycle | calibration rows agreeing | held-out agree | partly | disagree |")
    print("|---|---|---|---|---|")
    for c in cycles:
        cal = [f for f in by[c].values() if f.role == "calibration"]
        held = [f for f in by[c].values() if f.role == "held-out"]
        n = lambda v: sum(f.verdict == v for f in held)  # noqa: E731
        print(f"| {c} ms{' (off)' if c == 0 else ''} | {sum(f.verdict == 'agrees' for f in cal)} of {len(cal)} | "
              f"{n('agrees')} of {len(held)} | {n('partly')} | {n('disagrees')} |")
    print()
    print("| finding | " + " | ".join(f"{c} ms" for c in cycles) + " |")
    print("|---|" + "---|" * len(cycles))
    for name, f in first.items():
        vs = [by[c][name].verdict if name in by[c] else "n/a" for c in cycles]
        if len(set(vs)) > 1:
            print(f"| {name} | " + " | ".join(vs) + " |")
    print()
    key = next(n for n in first if n.startswith("Table 1: 99th percentile"))
    cells = ", ".join(f"IW{iw} n={n} {PAPER_TABLE1[(iw, n)]['99'] * 1e3:.0f}" for iw, n in sorted(PAPER_TABLE1))
    print(f"Table 1, 99th percentile of IPDV (paper: {cells} ms):")
    print()
    for c in cycles:
        print(f"- {c} ms: {by[c][key].measured}")


if __name__ == "__main__":
    main(sys.argv[1:])
