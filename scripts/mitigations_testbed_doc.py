#!/usr/bin/env python3
"""docs/mitigations.md's table of the mitigations on real Linux beside the simulator.

    flock /tmp/jitterlab-testbed.lock jitterlab reproduce mitigations --reps 2 --link fixed --testbed --out OUT   # root
    python scripts/mitigations_testbed_doc.py OUT/testbed.csv [--doc]

keeps the run's rows in docs/data/mitigations-testbed.csv and, with --doc, writes the table between
the `mitigations-testbed` markers in docs/mitigations.md: per mitigation and metric the simulator's
mean over its runs → the testbed's mean, and the seed-paired difference with its 95 % interval.
The testbed's side is a measurement of that day's machine; tests/test_mitigations_testbed.py
recomputes the simulator's side against the build.
"""
from __future__ import annotations

import argparse
import datetime as dt
import math
import re
import shutil
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "mitigations.md"
DATA = ROOT / "docs" / "data" / "mitigations-testbed.csv"
BLOCK = "mitigations-testbed"
MINUS = "\u2212"
SHOW = (("owd_p50_ms", "audio OWD median (ms)", "{:.1f}"), ("owd_p99_ms", "OWD p99 (ms)", "{:.0f}"),
        ("loss40_pct", "loss, 40 ms JB (%)", "{:.1f}"), ("mos_best", "MOS, best JB", "{:.2f}"), ("goodput_Mbps", "goodput (Mbit/s)", "{:.2f}"))


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
                  "| mitigation | " + " | ".join(c[1] for c in SHOW) + " | runs (disturbed) |",
                  "|---|" + "---|" * (len(SHOW) + 1)]
        for _, r in d.iterrows():
            if r.status != "ran":
                lines.append(f"| {r.mitigation} | " + " | ".join("" for _ in SHOW) + f" | {r.status} |")
                continue
            cells = [f"{_f(r[f'sim_{c}'], f)} → {_f(r[f'testbed_{c}'], f)}, Δ {_f(r[f'diff_{c}'], f, True)} "
                     f"[{_f(r[f'diff_{c}_lo'], f, True)}, {_f(r[f'diff_{c}_hi'], f, True)}]" for c, _, f in SHOW]
            lines.append(f"| {r.mitigation} | " + " | ".join(cells) + f" | {int(r.runs)} ({int(r.disturbed_runs)}) |")
        lines.append("")
    return lines[:-1]


def doc_block(text: str) -> list[str] | None:
    m = re.search(rf"<!-- {BLOCK}:begin -->\n(.*?)<!-- {BLOCK}:end -->", text, re.S)
    return None if m is None else m.group(1).splitlines()[1:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", type=Path, help="OUT/testbed.csv of `jitterlab reproduce mitigations --testbed`")
    ap.add_argument("--doc", action="store_true")
    a = ap.parse_args()
    df = pd.read_csv(a.csv)
    if a.csv.resolve() != DATA.resolve():
        DATA.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(a.csv, DATA)
    lines = render(df)
    if not a.doc:
        print("\n".join(lines))
        return 0
    text = DOC.read_text()
    head = (f"<!-- generated {dt.date.today().isoformat()} by `python scripts/mitigations_testbed_doc.py OUT/testbed.csv --doc` "
            "(kept as docs/data/mitigations-testbed.csv) -->")
    pat = re.compile(rf"(<!-- {BLOCK}:begin -->\n).*?(<!-- {BLOCK}:end -->)", re.S)
    if not pat.search(text):
        sys.exit(f"docs/mitigations.md: no '<!-- {BLOCK}:begin -->' marker")
    DOC.write_text(pat.sub(lambda m: m.group(1) + "\n".join([head, *lines]) + "\n" + m.group(2), text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
