"""The real-Linux column of `jitterlab reproduce mitigations --testbed` (root): each mitigation the
testbed can run — every queue kind of the simulator's registry (its own code in the userspace link,
`jitterlab_testbed::aqm`), RWND moderation from the SYN (SO_RCVBUF before connect), IW3 (the route's
initcwnd), BBR (TCP_CONGESTION) — with real Linux TCP and sockets on each link of the study (the
cellular link's opportunities replayed by the userspace link), beside the
simulator on the same scenario, with the difference (testbed − simulator).

Real time is expensive, so the scenario is shortened: audio + an 8 MB CUBIC download from 4 s, 30 s
in all (about 45 s per run); `TB_REPS` testbed runs per mitigation and link (seeds SEED, SEED + 1,
…) against the simulator's runs of the same seeds, each backend's mean with its 95 % Student-t
interval over the runs, and the seed-paired difference (testbed − simulator) with its interval
(`ranks.paired_interval`). A mitigation the testbed cannot honour (moderation after the SYN,
the paced IW, DCTCP on this kernel) is a row with the planner's or the kernel's reason. Run it under
a lock shared by every testbed run on the machine (`flock /tmp/jitterlab-testbed.lock jitterlab reproduce mitigations --testbed`)
where other testbed runs may overlap."""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab.presets import mitigations_catalog as mit
from jitterlab.presets import pam2013
from jitterlab.report import Report

BULK = "8MB"
DURATION = "30s"
START = "4s"
#: testbed runs per mitigation and link, and the simulator's runs beside them (the same seeds)
TB_REPS = 3
COLS = ("owd_p50_ms", "owd_p99_ms", "loss40_pct", "mos_best", "goodput_Mbps", "retransmits")
#: the simulator's retransmissions over this many seeds (median, 10th and 90th percentile): three runs'
#: mean is at the mercy of one run's loss episode, and simulator runs are cheap
RETX_SEEDS = 30
#: payload bytes per segment of the Linux profile's TCP (1500-byte MTU, timestamps: docs/tcp.md)
MSS = 1448
#: the rule of the retransmission comparison (issue 26, docs/mitigations.md "Retransmissions"): the
#: simulator's median over RETX_SEEDS seeds lies within Linux's median's 95 % interval
#: (`median_interval`) widened by this factor on each side (lo / RETX_WIDEN, hi · RETX_WIDEN)
RETX_WIDEN = 1.1


def scenario(link: str | pam2013.Link = "fixed") -> dict[str, Any]:
    sc = pam2013.base_scenario(link)
    sc["duration"] = DURATION
    sc["traffic"].append(mit._tcp("bulk", size=BULK, iw=3, start=START))
    return sc


def why_not(sc: dict[str, Any]) -> str | None:
    """Why the testbed cannot run `sc` (None when it can): the planner's refusal, or a congestion
    control this kernel lacks."""
    from jitterlab import ScenarioError
    from jitterlab.testbed.net import available_cc
    from jitterlab.testbed.plan import plan

    try:
        pl = plan(sc)
    except ScenarioError as e:
        return str(e)
    have = available_cc()
    for f in pl.tcp:
        if f.cc not in have:
            return f"cc = {f.cc!r}: this kernel offers {', '.join(have)}"
    return None


def _metrics(media: pd.DataFrame, runs: pd.DataFrame, tcp: pd.DataFrame) -> dict[str, float]:
    pct = M.owd_percentiles(media, runs, window="overlap", by="run_id")
    jl = M.jb_loss(media, runs, jbs_ms=[40.0])
    bj = M.best_jb(media, runs, jbs_ms=mit.JBS)
    tc = M.tcp_summary(tcp, per="run")
    return {"owd_p50_ms": float(np.median(pct["p50_s"])) * 1e3, "owd_p99_ms": float(np.median(pct["p99_s"])) * 1e3,
            "loss40_pct": float(np.median(jl.loss_rate)) * 100, "mos_best": float(np.median(bj.mos)) if len(bj) else np.nan,
            # an unfinished download has no goodput: NaN, left out of the run's mean
            "goodput_Mbps": float(np.median(gp)) / 1e6 if len(gp := tc.goodput_bps.dropna()) else np.nan,
            # the download's retransmitted segments (the simulator's count; Linux's tcpi_total_retrans)
            "retransmits": float(tcp["retransmits"].sum())}


def compare(sim_runs: list[dict[str, float]], tb_runs: list[dict[str, float]]) -> dict[str, float]:
    """Per metric: each backend's mean over its runs with its 95 % interval, and the difference
    testbed − simulator paired by seed (run k of each) with its interval."""
    from jitterlab.presets.ranks import paired_interval

    out: dict[str, float] = {}
    for c in COLS:
        s = np.array([r[c] for r in sim_runs], dtype=float)
        t = np.array([r[c] for r in tb_runs], dtype=float)
        for name, v in (("sim", s), ("testbed", t), ("diff", t - s[:len(t)])):
            _, mean, lo, hi = paired_interval(v)
            out[f"{name}_{c}"], out[f"{name}_{c}_lo"], out[f"{name}_{c}_hi"] = mean, lo, hi
    return out


def sim_retransmits(sc: dict[str, Any]) -> dict[str, float]:
    """The simulator's retransmitted segments per run over RETX_SEEDS seeds (SEED, SEED + 1, …):
    median, 10th and 90th percentile."""
    from jitterlab import sim

    r = [float(sim.simulate(sc, seed=mit.SEED + k, run_id=k).tcp_flows["retransmits"].sum()) for k in range(RETX_SEEDS)]
    p10, p50, p90 = np.percentile(r, [10, 50, 90])
    return {"sim_retransmits_p10": float(p10), "sim_retransmits_p50": float(p50), "sim_retransmits_p90": float(p90)}


def median_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The distribution-free interval of a median: order statistics x(k) and x(n + 1 − k) with
    the largest k whose coverage 1 − 2·P(Bin(n, ½) ≤ k − 1) is at least `level` (n = 10: x(2) and
    x(9), 97.9 %; n = 30: x(10) and x(21), 95.7 %); the range when no k reaches it (n ≤ 5)."""
    from math import comb

    v = np.sort(np.asarray(x, dtype=float))
    n = len(v)
    k = 1
    while k < n // 2 and 1 - 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n >= level:
        k += 1
    return float(v[k - 1]), float(v[n - k])


def retx_verdict(sim_p50: float, lo: float, hi: float) -> bool:
    """Whether the simulator's median retransmissions lie within Linux's interval [lo, hi] widened
    by RETX_WIDEN on each side."""
    return lo / RETX_WIDEN <= sim_p50 <= hi * RETX_WIDEN


def sim_side(sc: dict[str, Any], tb: list[dict[str, float]]) -> dict[str, float]:
    """A row's simulator side beside its testbed runs `tb` (seeds SEED, SEED + 1, …): `compare` over
    the same seeds and `sim_retransmits`. A kept run's rows are recomputed with this after a model
    change (scripts/mitigations_testbed_doc.py --resim)."""
    from jitterlab import sim

    ss = [sim.simulate(sc, seed=mit.SEED + k, run_id=k) for k in range(len(tb))]
    return {**compare([_metrics(x.media_packets, x.runs, x.tcp_flows) for x in ss], tb), **sim_retransmits(sc)}


def row_scenario(link: str | pam2013.Link, mitigation: str) -> dict[str, Any]:
    """The scenario of one row of the column: `scenario(link)` with the mitigation's keys."""
    from jitterlab import scenario as _scn

    ln = link if isinstance(link, pam2013.Link) else pam2013.load_link(link)
    return _scn.with_overrides(scenario(ln), {m.name: m for m in mit.MITIGATIONS}[mitigation].keys(ln))


def skipped(rep: Report, preset: str, progress: bool) -> bool:
    """Whether the testbed cannot run here (root, namespaces): then one line in the report's
    current section and on stderr says why, for any preset's testbed column."""
    from jitterlab.testbed.net import TestbedError, require_root

    try:
        require_root()
    except TestbedError as e:
        rep.text(f"Skipped: {e}.")
        if progress:
            print(f"{preset}: testbed column skipped: {e}", file=sys.stderr)
        return True
    return False


def section(rep: Report, out: Path, x: pd.DataFrame | None = None, progress: bool = True,
            links: list[pam2013.Link] | None = None) -> pd.DataFrame | None:
    """Adds the testbed section to `rep` and writes OUT/testbed.csv (one row per link and
    mitigation) and OUT/testbed_runs.csv (each testbed run's metrics, from which a row's simulator
    side can be recomputed after a model change); a clean skip (one line in the report and on stderr) where the testbed cannot run
    at all."""
    from jitterlab import testbed
    from jitterlab.testbed.net import TestbedError

    rep.section("Real Linux beside the simulator (testbed)",
                f"Each link, audio + an {BULK} CUBIC download from {START} ({DURATION} in all), per mitigation: {TB_REPS} testbed runs "
                f"(real Linux TCP and sockets in namespaces; queue disciplines other than drop-tail are the simulator's own code in "
                f"the userspace link) and {TB_REPS} simulator runs of the same scenario and seeds; each backend's mean with its 95 % "
                "interval, and the difference testbed − simulator paired by seed with its interval.")
    if skipped(rep, "mitigations", progress):
        return None
    avail = mit.availability().set_index("mitigation")
    rows = []
    per_run: list[dict[str, Any]] = []
    from jitterlab import scenario as _scn

    for ln in links or [pam2013.load_link("fixed")]:
        base = scenario(ln)
        for m in mit.MITIGATIONS:
            row: dict[str, Any] = {"link": ln.label, "mitigation": m.name}
            if not avail.loc[m.name, "available"]:
                rows.append({**row, "status": avail.loc[m.name, "status"]})
                continue
            sc = _scn.with_overrides(base, m.keys(ln))
            reason = why_not(sc)
            if reason is not None:
                rows.append({**row, "status": f"the testbed cannot run it: {reason}"})
                continue
            slug = re.sub(r"[^A-Za-z0-9]+", "-", m.name).strip("-").lower()
            tb: list[dict[str, float]] = []
            disturbed = 0
            for k in range(TB_REPS):
                if progress:
                    print(f"mitigations: testbed run {k + 1}/{TB_REPS} for {m.name} on the {ln.label} link ({DURATION})", file=sys.stderr)
                try:
                    r = testbed.run(sc, seed=mit.SEED + k, run_id=k, out=out / "testbed" / ln.label / slug / f"seed{mit.SEED + k}")
                except TestbedError as e:
                    tb = []
                    rows.append({**row, "status": f"the testbed run failed: {e}"})
                    break
                bad = bool((r.testbed.get("accuracy") or {}).get("disturbed"))
                disturbed += bad
                tb.append(_metrics(r.media_packets, r.runs, r.tcp_flows))
                per_run.append({**row, "seed": mit.SEED + k, **tb[-1], "disturbed": int(bad)})
            if not tb:
                continue
            rows.append({**row, **sim_side(sc, tb), "status": "ran", "runs": TB_REPS, "disturbed_runs": disturbed})
    pd.DataFrame(per_run).to_csv(out / "testbed_runs.csv", index=False)
    df = pd.DataFrame(rows)
    rep.table(df, "Simulator and real Linux per link and mitigation (shortened bulk workload)", "{:.2f}", name="testbed")
    return df
