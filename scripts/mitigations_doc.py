#!/usr/bin/env python3
"""The mitigations study's measured tables in docs/mitigations.md, generated from one run.

    python scripts/mitigations_doc.py [--reps 5] [--out DIR] [--doc]

runs `jitterlab reproduce mitigations --reps 5` (both links, the adaptive call with GCC) into DIR
(a temporary directory by default), renders the audio ranking, the adaptive call's ranking and the
study's findings as Markdown and, with --doc, writes them between the markers in
docs/mitigations.md. tests/test_mitigations_doc.py runs the same and checks the doc's blocks
against this build, so the tables cannot go stale silently.
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

from jitterlab import _docblock

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "mitigations.md"
REPS = 5
BLOCKS = ("mitigations-ranking", "mitigations-adaptive", "mitigations-findings")
MINUS = "\u2212"


def _num(x: str, fmt: str) -> str:
    return format(float(x), fmt).replace("-", MINUS)


def _pct(x: str) -> str:
    return _num(x, "+.1f") + " %"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _rank(r: dict[str, str], key: str = "rank") -> str:
    return r[key] if r[key] else "n/a"


def _ranking(out: Path, reps: int) -> list[str]:
    lines = ["| link | mitigation | rank | MOS gain [95 % CI] | bulk goodput (Mbit/s, vs DropTail) | web completion | page behind a download |",
             "|---|---|---|---|---|---|---|"]
    for r in _rows(out / "ranking.csv"):
        if r["status"] != "available":
            lines.append(f"| {r['link']} | {r['mitigation']} | {r['status']} | | | | |")
            continue
        gain = _num(r["mos_gain"], ".2f")
        if r["mitigation"] != "DropTail":
            gain += f" [{_num(r['mos_gain_lo'], '.2f')}, {_num(r['mos_gain_hi'], '.2f')}]"
        bulk = f"{float(r['bulk_goodput_Mbps']):.2f}, {_pct(r['bulk_goodput_change_pct'])}"
        if int(r["bulk_unfinished"]):
            bulk += f", {r['bulk_unfinished']} of {reps} unfinished"
        web = _pct(r["web_completion_change_pct"]) + (f", {r['web_unfinished']} unfinished" if int(r["web_unfinished"]) else "")
        page = _pct(r["mixed_page_change_pct"]) + (f", {r['mixed_unfinished']} unfinished" if int(r["mixed_unfinished"]) else "")
        lines.append(f"| {r['link']} | {r['mitigation']} | {_rank(r)} | {gain} | {bulk} | {web} | {page} |")
    return lines


def _adaptive(out: Path) -> list[str]:
    lines = ["| link | mitigation | on-time rank (audio rank) | gain, points [95 % CI] | frames on time | media rate (kbit/s, vs DropTail) | frame delay p95 (ms) |",
             "|---|---|---|---|---|---|---|"]
    for r in _rows(out / "adaptive_ranking.csv"):
        gain = _num(r["on_time_gain"], ".1f")
        if r["mitigation"] != "DropTail":
            gain += f" [{_num(r['on_time_gain_lo'], '.1f')}, {_num(r['on_time_gain_hi'], '.1f')}]"
        rate = f"{float(r['media_kbps']):.0f}" + ("" if r["mitigation"] == "DropTail" else f", {_num(r['rate_change_pct'], '+.0f')} %")
        lines.append(f"| {r['link']} | {r['mitigation']} | {_rank(r)} ({_rank(r, 'audio_rank')}) | {gain} | "
                     f"{float(r['call_on_time_pct']):.1f} % | {rate} | {float(r['frame_delay_p95_ms']):.0f} |")
    return lines


def _findings(out: Path) -> list[str]:
    lines = ["| link | call | finding | verdict |", "|---|---|---|---|"]
    for name, call in (("findings.csv", "audio"), ("adaptive_findings.csv", "adaptive")):
        for r in _rows(out / name):
            lines.append(f"| {r['link']} | {call} | {r['finding']} | {r['verdict']} |")
    return lines


def render(out: Path, reps: int) -> dict[str, list[str]]:
    """Each block's table lines (without the generated-by line), from a finished study in OUT."""
    return {"mitigations-ranking": _ranking(out, reps), "mitigations-adaptive": _adaptive(out),
            "mitigations-findings": _findings(out)}


def run_study(out: Path, reps: int) -> None:
    from jitterlab.presets import mitigations

    mitigations.run(out, reps=reps, progress=False, links=["fixed", "cellular"])


def doc_blocks(text: str) -> dict[str, list[str]]:
    """The table lines of each block in the doc (the generated-by line left out)."""
    return {name: lines for name in BLOCKS if (lines := _docblock.read(text, name)) is not None}


def main() -> int:
    return _docblock.study_main(__doc__.splitlines()[0], DOC, "scripts/mitigations_doc.py", REPS, run_study, render)


if __name__ == "__main__":
    sys.exit(main())
