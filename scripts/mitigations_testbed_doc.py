#!/usr/bin/env python3
"""docs/mitigations.md's table of the mitigations on real Linux beside the simulator.

    flock /tmp/jitterlab-testbed.lock jitterlab reproduce mitigations --reps 2 --link fixed --testbed --out OUT   # root (and --link cellular; concatenate the two testbed.csv)
    python scripts/mitigations_testbed_doc.py OUT/testbed.csv [--doc]

keeps the run's rows in docs/data/mitigations-testbed.csv and, with --doc, writes the table between
the `mitigations-testbed` markers in docs/mitigations.md: per mitigation and metric the simulator's
mean over its runs → the testbed's mean, and the seed-paired difference with its 95 % interval.
The testbed's side is a measurement of that day's machine; tests/test_mitigations_testbed.py
recomputes the simulator's side against the build.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

from jitterlab import _docblock
from jitterlab.presets.mitigations_testbed import RETX_SEEDS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "mitigations.md"
DATA = ROOT / "docs" / "data" / "mitigations-testbed.csv"
BLOCK = "mitigations-testbed"
MINUS = "\u2212"
SHOW = (("owd_p50_ms", "audio OWD median (ms)", "{:.1f}"), ("owd_p99_ms", "OWD p99 (ms)", "{:.0f}"),
        ("loss40_pct", "loss, 40 ms JB (%)", "{:.1f}"), ("mos_best", "MOS, best JB", "{:.2f}"), ("goodput_Mbps", "goodput (Mbit/s)", "{:.2f}"),
        ("retransmits", "retransmitted segments", "{:.0f}"))


def _f(x: float, fmt: str, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    s = fmt.replace("{:", "{:+") if sign else fmt
    return s.format(x).replace("-", MINUS)


def render(df: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    for link, d in df.groupby("link", sort=False):
        lines += [f"**{link} link** (simulator → real Linux, means over the runs; Δ = testbed − simulator paired by seed, "
                  "mean [95 % interval])", "",
                  "| mitigation | " + " | ".join(c[1] for c in SHOW) + " | retransmitted segments, simulator over "
                  f"{RETX_SEEDS} seeds: median [10th–90th percentile] | runs (disturbed) |",
                  "|---|" + "---|" * (len(SHOW) + 2)]
        for _, r in d.iterrows():
            if r.status != "ran":
                lines.append(f"| {r.mitigation} | " + " | ".join("" for _ in SHOW) + f" | | {r.status} |")
                continue
            cells = [f"{_f(r[f'sim_{c}'], f)} → {_f(r[f'testbed_{c}'], f)}, Δ {_f(r[f'diff_{c}'], f, True)} "
                     f"[{_f(r[f'diff_{c}_lo'], f, True)}, {_f(r[f'diff_{c}_hi'], f, True)}]" for c, _, f in SHOW]
            many = f"{r.sim_retransmits_p50:.0f} [{r.sim_retransmits_p10:.0f}–{r.sim_retransmits_p90:.0f}]"
            lines.append(f"| {r.mitigation} | " + " | ".join(cells) + f" | {many} | {int(r.runs)} ({int(r.disturbed_runs)}) |")
        lines.append("")
    return lines[:-1]


def doc_block(text: str) -> list[str] | None:
    return _docblock.read(text, BLOCK)


def main() -> int:
    return _docblock.kept_run_main(__doc__.splitlines()[0], "OUT/testbed.csv of `jitterlab reproduce mitigations --testbed`", DATA, DOC,
                                   BLOCK, lambda p: render(pd.read_csv(p)), str(Path(__file__).relative_to(ROOT)))


if __name__ == "__main__":
    sys.exit(main())
