"""One scenario on both the simulator and the testbed, summarised side by side: the first media
flow's OWD percentiles over the overlap window (the whole flow when there is no TCP), media loss,
each media flow's rate and OWD median and 90th percentile (adaptive media included: `cc` on a
`video` or `audio` entry runs the same controller code on both backends), TCP goodput and
completion time. Both backends run the scenario as its file says: the same stack profile
(`stack`, docs/tcp.md) and link keys; nothing is added to it. `cc` (the command's `--cc`) is the
one explicit override: it names every TCP flow's congestion control, on both backends."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from jitterlab import scenario as _scn

TCP_KINDS = ("bulk", "web", "ftp")
PCTS = (5, 25, 50, 75, 90, 95, 99)


def with_cc(sc: dict, cc: str | None) -> dict:
    """Every TCP flow gets `cc` (None: the scenario's own)."""
    sc = copy.deepcopy(sc)
    if cc is None:
        return sc
    for t in sc.get("traffic") or []:
        if isinstance(t, dict) and t.get("kind") in TCP_KINDS:
            t["cc"] = cc
    return sc


def summary(res: Any) -> dict[str, float]:
    """The compared numbers of one run (sim or testbed Result)."""
    m, t = res.media_packets, res.tcp_flows
    r = res.runs.iloc[0]
    out: dict[str, float] = {}
    if len(m):
        m = m[m.flow_id == m.flow_id.min()]
        has_tcp = len(t) > 0 and pd.notna(r.get("tcp_start_ns")) and pd.notna(r.get("tcp_end_ns"))
        w = m[(m.send_ns >= r.tcp_start_ns) & (m.send_ns <= r.tcp_end_ns)] if has_tcp else m
        got = w[w.recv_ns.notna()]
        owd = ((got.recv_ns - got.send_ns).astype("int64") / 1e6).to_numpy()
        out["media_pkts"] = float(len(w))
        out["loss_pct"] = 100.0 * (1 - len(got) / len(w)) if len(w) else float("nan")
        for p in PCTS:
            out[f"owd_p{p}_ms"] = float(np.percentile(owd, p)) if len(owd) else float("nan")
        out["owd_max_ms"] = float(owd.max()) if len(owd) else float("nan")
    out.update(per_flow(res))
    if len(t):
        done = t[t.end_ns.notna()]
        span = (t.end_ns.max() - t.syn_ns.min()) / 1e9 if len(done) else float("nan")
        out["tcp_flows"] = float(len(t))
        out["tcp_completed"] = float(len(done))
        out["tcp_completion_s"] = float(span)
        out["tcp_goodput_mbps"] = float(t.bytes.sum() * 8 / span / 1e6) if len(done) else float("nan")
        out["tcp_retransmits"] = float(t.retransmits.sum())
    return out


def _window(m: pd.DataFrame, a: float, b: float) -> dict[str, float]:
    """Media rate (IP bits of the packets sent in [a, b] that arrived, over b − a) and the OWD
    median and 90th percentile of those packets."""
    w = m[(m.send_ns >= a) & (m.send_ns <= b)]
    got = w[w.recv_ns.notna()]
    owd = ((got.recv_ns - got.send_ns).astype("int64") / 1e6).to_numpy()
    nan = float("nan")
    return {"rate_kbps": float(got["size"].sum()) * 8 / ((b - a) / 1e9) / 1e3 if b > a else nan,
            "owd_p50_ms": float(np.percentile(owd, 50)) if len(owd) else nan,
            "owd_p90_ms": float(np.percentile(owd, 90)) if len(owd) else nan}


def per_flow(res: Any) -> dict[str, float]:
    """Each media flow (audio, video, adaptive or not) by name: `NAME.rate_kbps`, `NAME.owd_p50_ms`,
    `NAME.owd_p90_ms` over the flow's sending span, and `NAME.tcp.…` over the window the TCP flows
    were active, when there are any (adaptive media changes its rate when TCP comes)."""
    m, fl = res.media_packets, res.flows
    r = res.runs.iloc[0]
    names = dict(zip(fl.flow_id, fl.name)) if len(fl) else {}
    out: dict[str, float] = {}
    has_tcp = len(res.tcp_flows) > 0 and pd.notna(r.get("tcp_start_ns")) and pd.notna(r.get("tcp_end_ns"))
    for fid, g in m.groupby("flow_id", sort=True):
        name = names.get(fid, f"flow{fid}")
        for k, v in _window(g, float(g.send_ns.min()), float(g.send_ns.max())).items():
            out[f"{name}.{k}"] = v
        if has_tcp:
            for k, v in _window(g, float(r.tcp_start_ns), float(r.tcp_end_ns)).items():
                out[f"{name}.tcp.{k}"] = v
    return out


def compare(scenario: str | Path | Mapping[str, Any], seed: int = 1, cc: str | None = None, out: str | Path | None = None,
            overrides: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Runs both backends; returns a table with one row per quantity and columns sim, testbed, diff_pct."""
    from jitterlab import sim, testbed

    sc = with_cc(_scn.with_overrides(_scn.load(scenario), overrides), cc)
    cols: dict[str, dict[str, float]] = {}
    errors: dict[str, str] = {}
    try:
        rs = sim.simulate(sc, seed=seed)
        cols["sim"] = summary(rs)
        if out:
            sim.write(rs, Path(out) / "sim")
    except Exception as e:  # the simulator may lack a feature the scenario uses
        errors["sim"] = f"{type(e).__name__}: {e}"
    rt = _undisturbed_run(sc, seed, Path(out) / "testbed" if out else None)
    if out:
        testbed.write(rt, Path(out) / "testbed")
    cols["testbed"] = summary(rt)
    keys = list(dict.fromkeys(k for c in cols.values() for k in c))
    df = pd.DataFrame({src: [cols.get(src, {}).get(k, float("nan")) for k in keys] for src in ("sim", "testbed")}, index=keys)
    df["diff_pct"] = 100.0 * (df["testbed"] - df["sim"]) / df["sim"].where(df["sim"] != 0)
    df.attrs["errors"] = errors
    acc = getattr(rt, "testbed", {}).get("accuracy", {})
    df.attrs["accuracy"] = acc
    df.attrs["disturbed"] = acc.get("disturbed")  # after one rerun: its figures are not the stack's
    return df


def _undisturbed_run(sc: Mapping[str, Any], seed: int, out: Path | None) -> Any:
    """A testbed run; a run disturbed by the machine (`testbed.realtime`) is run once more, and
    the second is kept either way (its `testbed["accuracy"]` says whether it was disturbed)."""
    import shutil

    from jitterlab import testbed

    rt = testbed.run(sc, seed=seed, out=out)
    why = rt.testbed.get("accuracy", {}).get("disturbed")
    if why is None:
        return rt
    import sys

    print(f"compare: testbed run disturbed ({why}); running it once more", file=sys.stderr)
    if out is not None:
        shutil.rmtree(out, ignore_errors=True)
    return testbed.run(sc, seed=seed, out=out)
