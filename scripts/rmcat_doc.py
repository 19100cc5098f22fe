#!/usr/bin/env python3
"""The RMCAT study's measured tables in docs/media.md, generated from one run.

    python scripts/rmcat_doc.py [--reps 5] [--out DIR] [--doc]

runs `jitterlab reproduce rmcat --reps 5` into DIR (a temporary directory by default), renders each
case's table (OUT/case_*.csv: the median over replications with its 25th–75th percentiles) and the
findings' verdicts as Markdown and, with --doc, writes them between the markers in docs/media.md,
with §5.6's table against the published results (OUT/case_5_6_published.csv) as its own block.
tests/test_rmcat_doc.py runs the same and checks the doc's block against this build;
tests/test_rmcat_more.py checks the §5.6 rows.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from jitterlab import _docblock

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "media.md"
REPS = 5
BLOCK = "rmcat-measured"
BLOCK_56 = "rmcat-published-56"
MINUS = "\u2212"

# case file → its title in the doc; the metric columns are the preset's (docs/media.md says what each is)
CASES = {
    "5_1": "§5.1 variable capacity, one flow (convergence s after the steps at 40 / 60 / 80 s; use of the 2.5 Mbit/s step)",
    "5_2": "§5.2 variable capacity, several flows",
    "5_3": "§5.3 congested feedback link (media both ways)",
    "5_4": "§5.4 competing media flows, same controller",
    "5_5": "§5.5 round-trip fairness",
    "5_6": "§5.6 media against a long CUBIC flow (share of the 2 Mbit/s, 20–119 s)",
    "5_7": "§5.7 media against short TCP flows",
    "5_8": "§5.8 pause and resume",
    "ecn": "§6.2 ECN (§5.1's steps behind FQ-CoDel)",
    "6_1": "§6.1 media flows with priorities (NADA's PRIO)",
    "6_3": "§6.3 multiple bottlenecks",
    "8869": "RFC 8869 cellular cases (30–60 s)",
    "pam2013": "this project's question: a video call on the PAM 2013 cellular link",
}


def _fmt(x: str) -> str:
    """Three significant figures or whole numbers; the doc's minus sign."""
    v = float(x)
    a = abs(v)
    s = f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}" if a >= 0.995 else f"{v:.3f}"
    return s.replace("-", MINUS)


def _case(path: Path) -> list[str]:
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    cols = list(rows[0]) if rows else []
    metrics = [c[: -len("_median")] for c in cols if c.endswith("_median")]
    keys = [c for c in cols if not c.endswith(("_median", "_p25", "_p75"))]
    lines = ["| " + " | ".join(keys + metrics) + " |", "|" + "---|" * (len(keys) + len(metrics))]
    for r in rows:
        cells = [r[k] for k in keys]
        for m in metrics:
            med, lo, hi = r[f"{m}_median"], r.get(f"{m}_p25", ""), r.get(f"{m}_p75", "")
            if med == "":
                cells.append("")
            elif lo and hi and (_fmt(lo) != _fmt(med) or _fmt(hi) != _fmt(med)):
                cells.append(f"{_fmt(med)} [{_fmt(lo)}–{_fmt(hi)}]")
            else:
                cells.append(_fmt(med))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render(out: Path) -> list[str]:
    """The block's lines: a table per case and the findings' verdicts, from a finished study in OUT."""
    lines: list[str] = []
    for key, title in CASES.items():
        path = out / f"case_{key}.csv"
        if not path.is_file():
            continue
        lines += ["", f"**{title}** (`case_{key}.csv`)", "", *_case(path)]
    with (out / "findings.csv").open(newline="") as f:
        fs = list(csv.DictReader(f))
    lines += ["", "**Findings** (`findings.csv`; each row's rule and measured value are in the report)", "",
              "| finding | verdict |", "|---|---|"]
    lines += [f"| {r['finding']} | {r['verdict']} |" for r in fs]
    return lines[1:]


def render_56(out: Path) -> list[str]:
    """§5.6 against the published results: the study's case_5_6_published.csv, as
    `rmcat_published_tcp.markdown_56` renders its rows (the cells are the study's own strings)."""
    with (out / "case_5_6_published.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    return ["| controller | queue | share (%) | delay above propagation, median (ms) | 95th percentile (ms) | verdict |",
            "|---|---|---|---|---|---|",
            *(f"| {r['controller']} | {r['queue']} | {r['share_pct']} | {r['delay_median_ms']} | {r['delay_p95_ms']} | {r['verdict']} |"
              for r in rows)]


def run_study(out: Path, reps: int) -> None:
    from jitterlab.presets import rmcat

    rmcat.run(out, reps=reps, progress=False)


def doc_block(text: str) -> list[str] | None:
    """The block's lines in the doc (the generated-by line left out)."""
    return _docblock.read(text, BLOCK)


def main() -> int:
    return _docblock.study_main(__doc__.splitlines()[0], DOC, "scripts/rmcat_doc.py", REPS, run_study,
                                lambda out, reps: {BLOCK: render(out), BLOCK_56: render_56(out)})


if __name__ == "__main__":
    sys.exit(main())
