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


#: rows whose bottleneck queue is drop-tail (no AQM): their retransmissions come from slow start's
#: overshoot and timeouts, not from a discipline's drops
NOT_AQM = ("DropTail", "IW3", "RWND from SYN", "RWND after SYN", "paced IW", "BBR")


def _aqm_ratio(d: pd.DataFrame) -> str:
    """One line on the AQM rows of a link: the simulator's 30-seed median over Linux's mean."""
    a = d[(d.status == "ran") & ~d.mitigation.isin(NOT_AQM) & (d.testbed_retransmits > 0)]
    if a.empty:
        return ""
    q = a.sim_retransmits_p50 / a.testbed_retransmits
    lo, hi = a.loc[q.idxmin()], a.loc[q.idxmax()]
    return (f"AQM rows: the simulator's {RETX_SEEDS}-seed median retransmissions are {q.min():.2f}–{q.max():.2f} times Linux's "
            f"mean of its runs ({lo.mitigation} lowest, {hi.mitigation} highest).")


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
        lines += ["", _aqm_ratio(d), ""] if _aqm_ratio(d) else [""]
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


#: a slow start that ends above this many segments is a late exit: on these links HyStart's delay
#: test fires at 36-40 segments in most runs and otherwise one round later, at 52-65
LATE_EXIT = 45


def _sim_runs(sc: dict, seeds: list[int]) -> tuple[list[float], list[float]]:
    """The simulator's retransmissions per seed and the window (segments) at which slow start
    ended (cwnd when ssthresh is first set: HyStart's exit, or the first loss)."""
    from jitterlab import sim

    sc = {**sc, "traffic": [dict(t, series=True) if t["kind"] == "bulk" else t for t in sc["traffic"]]}
    retx, exits = [], []
    for s in seeds:
        r = sim.simulate(sc, seed=s)
        retx.append(float(r.tcp_flows["retransmits"].sum()))
        ts = r.tcp_series[r.tcp_series.ssthresh.notna()]
        exits.append(float(ts.cwnd.iloc[0]) / T.MSS if len(ts) else float("nan"))
    return retx, exits


def retx_rows(linux: pd.DataFrame) -> list[dict]:
    """Per (link, mitigation) of the kept Linux runs: Linux's median retransmissions with its
    distribution-free 95 % interval, the simulator's median over the same seeds and over
    RETX_SEEDS seeds (this build; 10th and 90th percentiles), the verdict of `retx_verdict`, and
    the late slow-start exits (above LATE_EXIT segments) on each side."""
    from jitterlab import scenario as scn
    from jitterlab.presets import mitigations_catalog as mit

    rows = []
    for (link, m), g in linux.groupby(["link", "mitigation"], sort=False):
        sc = T.row_scenario(link, m)
        seeds = [mit.SEED + k for k in range(RETX_SEEDS)]
        retx, exits = _sim_runs(sc, sorted(set(seeds) | {int(s) for s in g.seed}))
        by = dict(zip(sorted(set(seeds) | {int(s) for s in g.seed}), zip(retx, exits)))
        many = np.array([by[s][0] for s in seeds])
        lo, hi = T.median_interval(g.retransmits.to_numpy(float))
        p10, p50, p90 = np.percentile(many, [10, 50, 90])
        rfc, _ = _sim_runs(scn.with_overrides(sc, {f"traffic[{i}].cubic_linux_friendliness": False for i, t in enumerate(sc["traffic"])
                                                   if t["kind"] == "bulk"}), seeds)
        rows.append({"link": link, "mitigation": m, "runs": len(g), "disturbed": int(g.disturbed.sum()),
                     "linux_p50": float(np.median(g.retransmits)), "linux_lo": lo, "linux_hi": hi,
                     "sim_same_p50": float(np.median([by[int(s)][0] for s in g.seed])),
                     "sim_p10": float(p10), "sim_p50": float(p50), "sim_p90": float(p90), "rfc_p50": float(np.median(rfc)),
                     "sim_lo_rel": T.median_interval(many)[0] / float(p50), "sim_hi_rel": T.median_interval(many)[1] / float(p50),
                     "linux_late": int((g.ss_exit_cwnd > LATE_EXIT).sum()), "linux_exits": int(g.ss_exit_cwnd.notna().sum()),
                     "sim_late": int(sum(by[s][1] > LATE_EXIT for s in seeds)),
                     "verdict": T.retx_verdict(float(p50), lo, hi)})
    return rows


def render_retx(linux: pd.DataFrame) -> list[str]:
    rows = retx_rows(linux)
    lines = ["| link | mitigation | Linux runs (disturbed) | Linux: median [95 % interval of the median] | simulator, the same seeds: "
             f"median | simulator, {RETX_SEEDS} seeds: median [10th–90th percentile] | simulator / Linux (medians) | "
             f"late slow-start exits (above {LATE_EXIT} segments): Linux, simulator | "
             f"rule: simulator's {RETX_SEEDS}-seed median within Linux's interval widened by {T.RETX_WIDEN:g}× | "
             f"RFC 9438's α switch (`cubic_linux_friendliness = false`), {RETX_SEEDS} seeds: median, rule |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['link']} | {r['mitigation']} | {r['runs']} ({r['disturbed']}) | {r['linux_p50']:.1f} "
                     f"[{r['linux_lo']:.0f}–{r['linux_hi']:.0f}] | {r['sim_same_p50']:.1f} | {r['sim_p50']:.1f} "
                     f"[{r['sim_p10']:.0f}–{r['sim_p90']:.0f}] | {r['sim_p50'] / r['linux_p50']:.2f} | "
                     f"{r['linux_late']} of {r['linux_exits']}, {r['sim_late']} of {RETX_SEEDS} | {'holds' if r['verdict'] else 'fails'} | "
                     f"{r['rfc_p50']:.1f}, {'holds' if T.retx_verdict(r['rfc_p50'], r['linux_lo'], r['linux_hi']) else 'fails'} |")
    ratios = [r["sim_p50"] / r["linux_p50"] for r in rows]
    held = sum(r["verdict"] for r in rows)
    lo = min(r["sim_lo_rel"] for r in rows) - 1
    hi = max(r["sim_hi_rel"] for r in rows) - 1
    lines += ["", f"Over these rows the simulator's {RETX_SEEDS}-seed median is {min(ratios):.2f}–{max(ratios):.2f} times Linux's "
              f"median, and {held} of {len(rows)} rows hold the rule. The simulator's own {RETX_SEEDS}-seed median is a sample too: "
              f"its 95 % interval reaches {_f(100 * lo, '{:.0f}', True)} % to {_f(100 * hi, '{:.0f}', True)} % of it in these rows, "
              f"the rule widens Linux's interval by {T.RETX_WIDEN:g}× for it."]
    return lines


def linux_runs(path: Path) -> pd.DataFrame:
    """The testbed rows of scripts/mitigations_retx_runs.py's runs.csv, each with the window at
    which slow start ended on its sender-side capture (retx_episodes.py; OUT/testbed/<link>/
    <mitigation>/seed<N>/server.pcap beside the CSV): where HyStart would have left it, else, when
    a loss came first, the largest flight before the first retransmission."""
    import re

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from retx_episodes import analyse, hystart_exit

    got = pd.read_csv(path)
    keep = got[got.backend == "testbed"].drop_duplicates(["link", "mitigation", "seed"], keep="last")
    keep = keep[["link", "mitigation", "seed", "retransmits", "dsack_dups", "goodput_Mbps", "disturbed"]].copy()
    exits = []
    for _, r in keep.iterrows():
        slug = re.sub(r"[^A-Za-z0-9]+", "-", r.mitigation).strip("-").lower()
        pcap = path.parent / "testbed" / r.link / slug / f"seed{int(r.seed)}" / "server.pcap"
        exits.append((hystart_exit(pcap) or analyse(pcap)["ss_peak_flight"]) if pcap.exists() else None)
    keep["ss_exit_cwnd"] = exits
    return keep


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
        linux_runs(a.retx).to_csv(DATA_RETX, index=False)
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
