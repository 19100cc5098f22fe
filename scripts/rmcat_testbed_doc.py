#!/usr/bin/env python3
"""docs/media.md's table of RFC 8867 §5.1 and §5.6 on real Linux beside the simulator.

    flock /tmp/jitterlab-testbed.lock jitterlab reproduce rmcat --testbed --out OUT   # root, ~20 min
    python scripts/rmcat_testbed_doc.py OUT/testbed.csv [--doc]
    python scripts/rmcat_testbed_doc.py --resim [--doc]   # after a model change: the kept rows' simulator side from this build

keeps the run's rows in docs/data/rmcat-testbed.csv and, with --doc, writes the table between the
`rmcat-testbed` markers in docs/media.md. The testbed's side is a measurement of that day's
machine; the simulator's side is recomputed by tests/test_rmcat_testbed.py against the build.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from jitterlab import _docblock

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "media.md"
DATA = ROOT / "docs" / "data" / "rmcat-testbed.csv"
BLOCK = "rmcat-testbed"
MINUS = "\u2212"
#: per case the columns shown: (csv column, label, format)
SHOW = {"5.1": (("conv_40s", "rise 40 s (s)", "{:.1f}"), ("conv_60s", "drop 60 s (s)", "{:.1f}"), ("conv_80s", "rise 80 s (s)", "{:.1f}"),
                ("qdelay_median_ms", "qdelay median (ms)", "{:.0f}"), ("util_2_5", "use of 2.5 Mbit/s", "{:.2f}")),
        "5.6": (("media_share", "media share", "{:.2f}"), ("delay_median_ms", "delay above propagation (ms)", "{:.0f}"),
                ("frame_delay_p95_ms", "frame delay p95 (ms)", "{:.0f}"))}


def _cell(sim: float, tb: float, fmt: str) -> str:
    if pd.isna(tb) and pd.isna(sim):
        return "n/a"
    s = f"{fmt.format(sim)} → {fmt.format(tb)}"
    return s.replace("nan", "not reached").replace("-", MINUS)


def render(df: pd.DataFrame) -> list[str]:
    lines: list[str] = []
    for case, cols in SHOW.items():
        d = df[df.case.astype(str) == case]
        if not len(d):
            continue
        lines += [f"**§{case}** (simulator, median of 3 runs → real Linux, one run)", "",
                  "| controller | queue | " + " | ".join(c[1] for c in cols) + " | run |",
                  "|---|---|" + "---|" * (len(cols) + 1)]
        for _, r in d.iterrows():
            if r.status != "ran":
                lines.append(f"| {r.cc} | {r.queue} | " + " | ".join("" for _ in cols) + f" | {r.status} |")
                continue
            cells = [_cell(r[f"sim_{c}"], r[f"testbed_{c}"], f) for c, _, f in cols]
            dist = r.get("disturbed")
            lines.append(f"| {r.cc} | {r.queue} | " + " | ".join(cells) + f" | {'disturbed: ' + str(dist) if isinstance(dist, str) and dist else 'undisturbed'} |")
        lines.append("")
    return lines[:-1]


def doc_block(text: str) -> list[str] | None:
    return _docblock.read(text, BLOCK)


def resim(df: pd.DataFrame) -> pd.DataFrame:
    """The kept rows with their simulator side (median of SIM_REPS runs, and the relative
    difference to the kept testbed value) recomputed by this build."""
    import tempfile

    from jitterlab import sim
    from jitterlab.presets import rmcat
    from jitterlab.presets import rmcat_testbed as T

    out = df.copy()
    with tempfile.TemporaryDirectory() as tmp:
        by = {(c, cc, q): sc for c, cc, q, sc in T.cases(Path(tmp))}
        for i, r in df[df.status == "ran"].iterrows():
            case = str(r.case)
            ss = [sim.simulate(by[(case, r.cc, r.queue)], seed=rmcat.SEED + k, run_id=k) for k in range(T.SIM_REPS)]
            per = T.per_run(case, T.tables(ss, r.cc, r.queue))
            tb = pd.DataFrame({c: [r[f"testbed_{c}"]] for c in T.COLUMNS[case]})
            for k, v in T.compare(case, r.cc, r.queue, per, tb).items():
                if k.startswith(("sim_", "diff_")):
                    out.loc[i, k] = v
    return out


def main() -> int:
    if "--resim" in sys.argv[1:]:
        resim(pd.read_csv(DATA)).to_csv(DATA, index=False)
        lines = render(pd.read_csv(DATA))
        if "--doc" in sys.argv[1:]:
            _docblock.write(DOC, BLOCK, lines, f"python {Path(__file__).relative_to(ROOT)} --resim --doc")
        else:
            print("\n".join(lines))
        return 0
    return _docblock.kept_run_main(__doc__.splitlines()[0], "OUT/testbed.csv of `jitterlab reproduce rmcat --testbed`", DATA, DOC,
                                   BLOCK, lambda p: render(pd.read_csv(p)), str(Path(__file__).relative_to(ROOT)))


if __name__ == "__main__":
    sys.exit(main())
