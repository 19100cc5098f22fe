#!/usr/bin/env python3
"""Measures the pam2013 calibration targets (python/jitterlab/presets/calibration.py) and writes
their table into docs/calibration.md. Usage: scripts/calibrate.py [--check] [--reps N]
--check: exit 1 if the docs' table differs from this build's numbers (writes nothing)."""
import argparse
import sys
from pathlib import Path

from jitterlab.presets import calibration

DOC = Path(__file__).resolve().parents[1] / "docs" / "calibration.md"


def main() -> None:

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--reps", type=int, default=calibration.REPS)
    a = ap.parse_args()
    m = calibration.measure(a.reps)
    print(calibration.markdown(m))
    bad = [f.finding for f in m.findings if f.verdict != "agrees"]
    if a.check:
        text = DOC.read_text(encoding="utf-8")
        block = text[text.index(calibration.BEGIN) + len(calibration.BEGIN):text.index(calibration.END)].strip()
        sys.exit(0 if block == calibration.markdown(m).strip() and not bad else 1)
    if a.reps == calibration.REPS:
        print(f"{DOC}: {'updated' if calibration.update_doc(DOC, m) else 'unchanged'}", file=sys.stderr)
    if bad:
        print("not agreeing: " + "; ".join(bad), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
