#!/usr/bin/env python3
"""docs/mitigations.md's tables of the mitigations on real Linux beside the simulator.

    flock /tmp/jitterlab-testbed.lock jitterlab reproduce mitigations --reps 2 --link fixed --testbed --out OUT   # root (and --link cellular; concatenate the two testbed.csv and testbed_runs.csv)
    python scripts/mitigations_testbed_doc.py OUT/testbed.csv --runs OUT/testbed_runs.csv [--doc]
    python scripts/mitigations_testbed_doc.py --runs-from OUT [OUT ...]   # a kept run's directories, for rows kept before testbed_runs.csv existed
    python scripts/mitigations_testbed_doc.py --resim [--doc]
    python scripts/mitigations_testbed_doc.py --retx RUNS.csv [--doc]

The first form keeps a run's rows in docs/data/mitigations-testbed.csv and each testbed run's metrics
in docs/data/mitigations-testbed-runs.csv; `--resim` recomputes the simulator side of the kept rows
(its means, the seed-paired differences and the 30-seed retransmissions) from the kept testbed
runs with this build, for a model change; `--retx` keeps more Linux runs of a few rows
(scripts/mitigations_retx_runs.py's runs.csv, its testbed rows) in docs/data/mitigations-retx.csv.
With --doc the two blocks are written between the `mitigations-testbed` and `mitigations-retx`
markers in docs/mitigations.md: per mitigation and metric the simulator's mean over its runs → the
testbed's mean, and the seed-paired difference with its 95 % interval; and per row with more Linux
runs, Linux's median retransmissions with the distribution-free 95 % interval of a median beside
the simulator's median (`mitigations_testbed.retx_verdict`). The testbed's side is a measurement of
that day's machine; tests/test_mitigations_testbed.py recomputes the simulator's side against the build.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from jitterlab import _docblock
from jitterlab.presets import mitigations_testbed as T
from jitterlab.presets.mitigations_testbed import RETX_SEEDS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "mitigations.md"
DATA = ROOT / "docs" / "data" / "mitigations-testbed.csv"
DATA_RUNS = ROOT / "docs" / "data" / "mitigations-testbed-runs.csv"
DATA_RETX = ROOT / "docs" / "data" / "mitigations-retx.csv"
BLOCK = "mitigations-testbed"
BLOCK_RETX = "mitigations-retx"
SCRIPT = "scripts/mitigations_testbed_doc.py"
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


def resim(df: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """`df` (the kept rows) with every ran row's simulator side recomputed by this build beside the
    kept testbed runs of that row (`runs`, seeds in order)."""
    out = df.copy()
    for i, r in df.iterrows():
        if r.status != "ran":
            continue
        tb = runs[(runs.link == r.link) & (runs.mitigation == r.mitigation)].sort_values("seed")
        if len(tb) != int(r.runs):
            raise SystemExit(f"{DATA_RUNS.name}: {r.link} / {r.mitigation}: {len(tb)} kept runs, the table says {int(r.runs)}")
        new = T.sim_side(T.row_scenario(r.link, r.mitigation), [{c: float(x[c]) for c in T.COLS} for _, x in tb.iterrows()])
        for k, v in new.items():
            out.loc[i, k] = v
    return out


def runs_from(df: pd.DataFrame, outs: list[Path]) -> pd.DataFrame:
    """Each testbed run's metrics of the kept rows `df`, read back from the kept run directories
    `outs` (OUT/testbed/<link>/<mitigation>/seed<N>, `jitterlab.testbed.reload`)."""
    import json
    import re

    from jitterlab import testbed
    from jitterlab.presets import mitigations_catalog as mit

    got = []
    for _, r in df[df.status == "ran"].iterrows():
        slug = re.sub(r"[^A-Za-z0-9]+", "-", r.mitigation).strip("-").lower()
        for k in range(int(r.runs)):
            seed = mit.SEED + k
            d = next((o / "testbed" / r.link / slug / f"seed{seed}" for o in outs if (o / "testbed" / r.link / slug / f"seed{seed}").is_dir()), None)
            if d is None:
                raise SystemExit(f"--runs-from: no kept run {r.link}/{slug}/seed{seed} under {', '.join(map(str, outs))}")
            x = testbed.reload(T.row_scenario(r.link, r.mitigation), seed, d, run_id=k)
            acc = json.loads((d / "testbed" / "info.json").read_text()).get("accuracy") or {}
            got.append({"link": r.link, "mitigation": r.mitigation, "seed": seed, **T._metrics(x.media_packets, x.runs, x.tcp_flows),
                        "disturbed": int(bool(acc.get("disturbed")))})
    return pd.DataFrame(got)


def retx_rows(linux: pd.DataFrame) -> list[dict]:
    """Per (link, mitigation) of the kept Linux runs: Linux's median retransmissions with its
    distribution-free 95 % interval, the simulator's median over the same seeds and over
    RETX_SEEDS seeds (this build), and the verdict of `retx_verdict`."""
    from jitterlab import sim

    rows = []
    for (link, m), g in linux.groupby(["link", "mitigation"], sort=False):
        sc = T.row_scenario(link, m)
        same = [float(sim.simulate(sc, seed=int(s)).tcp_flows["retransmits"].sum()) for s in g.seed]
        many = T.sim_retransmits(sc)
        lo, hi = T.median_interval(g.retransmits.to_numpy(float))
        rows.append({"link": link, "mitigation": m, "runs": len(g), "disturbed": int(g.disturbed.sum()),
                     "linux_p50": float(np.median(g.retransmits)), "linux_lo": lo, "linux_hi": hi,
                     "sim_same_p50": float(np.median(same)), **many,
                     "verdict": T.retx_verdict(many["sim_retransmits_p50"], lo, hi)})
    return rows


def render_retx(linux: pd.DataFrame) -> list[str]:
    lines = ["| link | mitigation | Linux runs (disturbed) | Linux: median [95 % interval of the median] | simulator, the same seeds: "
             f"median | simulator, {RETX_SEEDS} seeds: median [10th–90th percentile] | simulator / Linux (medians) | "
             f"rule: simulator's {RETX_SEEDS}-seed median within Linux's interval widened by {T.RETX_WIDEN:g}× |",
             "|---|---|---|---|---|---|---|---|"]
    for r in retx_rows(linux):
        lines.append(f"| {r['link']} | {r['mitigation']} | {r['runs']} ({r['disturbed']}) | {r['linux_p50']:.1f} "
                     f"[{r['linux_lo']:.0f}–{r['linux_hi']:.0f}] | {r['sim_same_p50']:.1f} | {r['sim_retransmits_p50']:.1f} "
                     f"[{r['sim_retransmits_p10']:.0f}–{r['sim_retransmits_p90']:.0f}] | "
                     f"{r['sim_retransmits_p50'] / r['linux_p50']:.2f} | {'holds' if r['verdict'] else 'fails'} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", type=Path, nargs="?", help="OUT/testbed.csv of `jitterlab reproduce mitigations --testbed`")
    ap.add_argument("--runs", type=Path, help="OUT/testbed_runs.csv of the same run (each testbed run's metrics)")
    ap.add_argument("--runs-from", type=Path, nargs="+", help="kept run directories (OUT of the testbed column)")
    ap.add_argument("--resim", action="store_true", help="recompute the kept rows' simulator side with this build")
    ap.add_argument("--retx", type=Path, help="runs.csv of scripts/mitigations_retx_runs.py: keep its testbed rows")
    ap.add_argument("--doc", action="store_true", help="write the blocks into docs/mitigations.md")
    a = ap.parse_args()
    if a.csv is not None:
        _docblock.keep_and_write(a.csv, DATA, DOC, BLOCK, lambda p: render(pd.read_csv(p)), f"python {SCRIPT} OUT/testbed.csv --doc", False)
        if a.runs is not None:
            pd.read_csv(a.runs).to_csv(DATA_RUNS, index=False)
    if a.runs_from:
        runs_from(pd.read_csv(DATA), a.runs_from).to_csv(DATA_RUNS, index=False)
    if a.resim:
        resim(pd.read_csv(DATA), pd.read_csv(DATA_RUNS)).to_csv(DATA, index=False)
    if a.retx is not None:
        got = pd.read_csv(a.retx)
        keep = got[got.backend == "testbed"][["link", "mitigation", "seed", "retransmits", "dsack_dups", "goodput_Mbps", "disturbed"]]
        keep.to_csv(DATA_RETX, index=False)
    blocks = {BLOCK: render(pd.read_csv(DATA))}
    if DATA_RETX.exists():
        blocks[BLOCK_RETX] = render_retx(pd.read_csv(DATA_RETX))
    for name, lines in blocks.items():
        if a.doc:
            _docblock.write(DOC, name, lines, f"python {SCRIPT} {'--resim ' if a.resim else ''}--doc")
        else:
            print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
