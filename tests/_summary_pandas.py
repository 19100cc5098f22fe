"""The closing summary as it was computed with pandas before issue 31 (jitterlab/summary.py at
8c970a6, its `summarize` and helpers, unchanged): the reference the pandas-free summary must
equal byte for byte (tests/test_summary.py). Kept here, not in the package, so that the sweep's
path never imports pandas."""
from __future__ import annotations

import math
import warnings
from typing import Any, Mapping

import numpy as np
import pandas as pd

#: jitter buffers (ms) the summary's MOS is chosen from (the PAM 2013 study's set)
JBS_MS = (40.0, 60.0, 80.0, 100.0, 150.0, 200.0)


def _num(x: Any) -> float | None:
    """A float for JSON, None for NaN/NA."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _points(runs: pd.DataFrame) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """(parameters, runs) per sweep point; one group for a single run or a sweep without points."""
    if "point" not in runs.columns:
        return [({}, runs)]
    skip = {"run_id", "scenario", "seed", "source", "tcp_start_ns", "tcp_end_ns", "end_ns", "events",
            "jitterlab_version", "replication", "point", "t0_epoch_ns"}
    params = [c for c in runs.columns if c not in skip and not c.startswith("random.")]
    out = []
    for _, g in runs.groupby("point", sort=True):
        first = g.iloc[0]
        label = {"point": int(first["point"])}
        for c in params:
            if g[c].nunique(dropna=False) == 1:  # parameters, not per-replication draws
                v = first[c]
                label[c] = v.item() if hasattr(v, "item") else v
        out.append((label, g))
    return out


#: The media columns the summary's metrics read (metrics.prepare).
MEDIA_COLUMNS = ["run_id", "flow_id", "seq", "send_ns", "recv_ns", "size"]


def _columns(tables: Mapping[str, pd.DataFrame], name: str, columns: list[str]) -> pd.DataFrame:
    """Only `columns` of `tables[name]` as pandas, converted from its Arrow table (read from its
    file, and not kept, when a sweep's table is still there), unless the frame exists already: the
    closing summary of a sweep converted (and read back) every media column to use six, 1.2 s of
    the 126-point vs-ns2 sweep's ~4 s."""
    from jitterlab.sim import to_pandas
    from jitterlab.tables import LazyTables

    arrow = getattr(tables, "arrow", None)
    if arrow is not None and name not in getattr(tables, "_pd", {}):
        if isinstance(arrow, LazyTables):
            if set(columns) <= set(arrow.column_names(name)):
                return to_pandas(arrow.read_columns(name, columns))
        elif set(columns) <= set(arrow[name].column_names):
            return to_pandas(arrow[name].select(columns))
    return tables[name]


def _rows_by_run(df: pd.DataFrame) -> dict[Any, np.ndarray]:
    """Row positions of each run in `df`: found once for every point (filtering the whole table
    per point cost a sweep of 126 points 126 passes over its media rows)."""
    return df.groupby("run_id", sort=False).indices if len(df) else {}


def _of_runs(df: pd.DataFrame, by_run: Mapping[Any, np.ndarray], runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of `df` whose run is in `runs`, in `df`'s order (as `df[df.run_id.isin(...)]`)."""
    parts = [by_run[r] for r in pd.unique(runs["run_id"]) if r in by_run]
    # each run's positions are ascending (groupby's indices); several runs' are merged in order
    pos = parts[0] if len(parts) == 1 else np.sort(np.concatenate(parts)) if parts else np.array([], dtype=np.int64)
    if len(pos) and pos[-1] - pos[0] + 1 == len(pos):
        return df.iloc[pos[0]:pos[-1] + 1]  # one stretch (a sweep's tables are in run order): a view, not a copy
    return df.iloc[pos]


def _flow_row(fid: int, names: Mapping[int, str], sent: int, recv: int, median_s: float, p99_s: float,
              by_jb: pd.Series) -> dict[str, Any]:
    row: dict[str, Any] = {"flow_id": fid, "name": names.get(fid, f"flow {fid}")}
    row["packets"] = sent
    row["owd_median_ms"] = _num(median_s * 1e3)
    row["owd_p99_ms"] = _num(p99_s * 1e3)
    row["loss"] = _num(1.0 - recv / sent) if sent else None
    by_jb = by_jb.dropna()
    if len(by_jb):
        best = by_jb[by_jb == by_jb.max()].index[0]
        row["best_jb_ms"] = round(float(best) * 1e3, 6)
        row["mos"] = _num(by_jb[best])
        # equal at every buffer (a call past saving: MOS 1 throughout) has no best buffer to name
        row["mos_same_at_every_jb"] = bool(len(by_jb) > 1 and by_jb.max() == by_jb.min())
    else:
        row["best_jb_ms"], row["mos"], row["mos_same_at_every_jb"] = None, None, False
    return row


def _media(media: pd.DataFrame, runs: pd.DataFrame, names: Mapping[int, str], window: str, jbs_ms: tuple[float, ...],
           by_run: Mapping[Any, np.ndarray] | None = None) -> list[dict[str, Any]]:
    from jitterlab import metrics

    rows = []
    media = _of_runs(media, by_run, runs) if by_run is not None else media[media["run_id"].isin(runs["run_id"])]
    for fid, m in media.groupby("flow_id", sort=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the summary states its own window and base rule
            m = metrics.prepare(m, runs)  # once for the three metrics below (each would prepare its own)
            pct = metrics.owd_percentiles(m, runs, window=window, q=[0.5, 0.99])
            rtp = metrics.rtp_summary(m, runs, window=window)
            mos = metrics.emodel_mos(m, runs, jbs_ms=jbs_ms, window=window)
        rows.append(_flow_row(int(fid), names, int(rtp["sent"].sum()), int(rtp["received"].sum()),
                              pct.iloc[0, -2], pct.iloc[0, -1], mos.groupby("jb_s", sort=True)["mos"].mean()))
    return rows


def _media_by_point(media: pd.DataFrame, runs: pd.DataFrame, names: Mapping[int, str], window: str,
                    jbs_ms: tuple[float, ...]) -> dict[int, list[dict[str, Any]]]:
    """`_media` of every sweep point at once: each metric is called once per flow with the runs
    grouped by `point` (per point, the same streams pooled the same way), instead of once per
    point and flow — the closing summary of the 126-point vs-ns2 sweep made 378 metric calls."""
    from jitterlab import metrics

    point_of = dict(zip(runs["run_id"], runs["point"].astype("int64")))
    out: dict[int, list[dict[str, Any]]] = {}
    for fid, m in media.groupby("flow_id", sort=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the summary states its own window and base rule
            m = metrics.prepare(m, runs)
            pct = metrics.owd_percentiles(m, runs, window=window, q=[0.5, 0.99], by="point")
            rtp = metrics.rtp_summary(m, runs, window=window)
            mos = metrics.emodel_mos(m, runs, jbs_ms=jbs_ms, window=window)
        pct = pct.set_index("point")
        rtp_pt = rtp["run_id"].map(point_of)
        sent = rtp.groupby(rtp_pt, sort=True)["sent"].sum()
        recv = rtp.groupby(rtp_pt, sort=True)["received"].sum()
        by_jb = mos.groupby([mos["run_id"].map(point_of).rename("point"), "jb_s"], sort=True)["mos"].mean()
        for pt in sent.index:  # the points where this flow has streams, as `_media` finds them
            jb = by_jb.xs(pt, level="point") if pt in by_jb.index.get_level_values("point") else by_jb.iloc[:0]
            out.setdefault(int(pt), []).append(_flow_row(int(fid), names, int(sent[pt]), int(recv[pt]),
                                                         pct.loc[pt].iloc[-2], pct.loc[pt].iloc[-1], jb))
    return out


def _tcp(tcp: pd.DataFrame, runs: pd.DataFrame, by_run: Mapping[Any, np.ndarray] | None = None) -> list[dict[str, Any]]:
    tcp = _of_runs(tcp, by_run, runs) if by_run is not None else tcp[tcp["run_id"].isin(runs["run_id"])]
    if not len(tcp):
        return []
    run_end = dict(zip(runs["run_id"], runs["end_ns"])) if "end_ns" in runs.columns else {}
    role = tcp["role"].astype("string").fillna("tcp") if "role" in tcp.columns else pd.Series("tcp", index=tcp.index)
    rows = []
    for r, g in tcp.groupby(role.to_numpy(), sort=True):
        good, comp, done_runs = [], [], 0
        for rid, f in g.groupby("run_id", sort=True):
            syn = pd.to_numeric(f["syn_ns"], errors="coerce").astype("float64")
            end = pd.to_numeric(f["end_ns"], errors="coerce").astype("float64")
            if syn.isna().all():
                continue
            finished = bool(end.notna().all())
            stop = end.max() if finished else _num(run_end.get(rid))
            if stop is None:
                continue
            span = (stop - syn.min()) / 1e9
            if span > 0:
                good.append(float(f["bytes"].sum()) * 8 / span)
            if finished:
                done_runs += 1
                comp.append(span)
        rows.append({
            "role": str(r), "connections": int(len(g)), "runs": int(g["run_id"].nunique()), "finished_runs": done_runs,
            "bytes": int(g["bytes"].sum()),
            "goodput_mbps": _num(np.median(good) / 1e6) if good else None,
            "completion_s": _num(np.median(comp)) if comp else None,
        })
    return rows


def _tcp_run(f: pd.DataFrame, run_end: Any) -> tuple[float | None, float | None]:
    """(goodput in bit/s, completion in s) of one run's connections of one role; None where the
    run gives none (no SYN, no end known; completion only when every connection finished)."""
    syn = pd.to_numeric(f["syn_ns"], errors="coerce").astype("float64")
    end = pd.to_numeric(f["end_ns"], errors="coerce").astype("float64")
    if syn.isna().all():
        return None, None
    finished = bool(end.notna().all())
    stop = end.max() if finished else _num(run_end)
    if stop is None:
        return None, None
    span = (stop - syn.min()) / 1e9
    return (float(f["bytes"].sum()) * 8 / span if span > 0 else None), (span if finished else None)


def _tcp_by_point(tcp: pd.DataFrame, runs: pd.DataFrame) -> dict[int, list[dict[str, Any]]]:
    """`_tcp` of every sweep point at once: one pass over (role, run) instead of two groupings of
    the table per point."""
    point_of = dict(zip(runs["run_id"], runs["point"].astype("int64")))
    run_end = dict(zip(runs["run_id"], runs["end_ns"])) if "end_ns" in runs.columns else {}
    role = tcp["role"].astype("string").fillna("tcp") if "role" in tcp.columns else pd.Series("tcp", index=tcp.index)
    acc: dict[tuple[int, str], dict[str, Any]] = {}
    for (r, rid), f in tcp.groupby([role.to_numpy(), tcp["run_id"].to_numpy()], sort=True):
        if rid not in point_of:
            continue
        a = acc.setdefault((point_of[rid], str(r)), {"connections": 0, "runs": 0, "done": 0, "bytes": 0, "good": [], "comp": []})
        a["connections"] += len(f)
        a["runs"] += 1
        a["bytes"] += int(f["bytes"].sum())
        good, comp = _tcp_run(f, run_end.get(rid))
        if good is not None:
            a["good"].append(good)
        if comp is not None:
            a["done"] += 1
            a["comp"].append(comp)
    out: dict[int, list[dict[str, Any]]] = {}
    for (pt, r), a in sorted(acc.items()):
        out.setdefault(pt, []).append({
            "role": r, "connections": a["connections"], "runs": a["runs"], "finished_runs": a["done"],
            "bytes": a["bytes"],
            "goodput_mbps": _num(np.median(a["good"]) / 1e6) if a["good"] else None,
            "completion_s": _num(np.median(a["comp"])) if a["comp"] else None,
        })
    return out


def summarize(tables: Mapping[str, pd.DataFrame], jbs_ms: tuple[float, ...] = JBS_MS) -> dict[str, Any]:
    """The summary of a run's or a sweep's tables (``media_packets``, ``tcp_flows``, ``runs``,
    ``flows`` when present) as JSON-ready data: ``{"runs", "window", "points": [{"params",
    "runs", "media": [...], "tcp": [...]}]}``. See the module's docstring for the rules."""
    runs = tables["runs"]
    has = set(tables)
    names: dict[int, str] = {}
    if "flows" in has:
        fl = tables["flows"]
        names = {int(a): str(b) for a, b in zip(fl["flow_id"], fl["name"])}
    tcp_start = runs["tcp_start_ns"] if "tcp_start_ns" in runs.columns else pd.Series([], dtype="float64")
    window = "overlap" if len(runs) and tcp_start.notna().all() else "all"
    out: dict[str, Any] = {"runs": int(len(runs)), "window": window, "points": []}
    media = _columns(tables, "media_packets", MEDIA_COLUMNS) if "media_packets" in has else None
    tcp = tables["tcp_flows"] if "tcp_flows" in has else None
    tcp_by_point = _tcp_by_point(tcp, runs) if tcp is not None and "point" in runs.columns else None
    tcp_rows = _rows_by_run(tcp) if tcp is not None and tcp_by_point is None else {}
    batched = media is not None and "point" in runs.columns and len(media) > 0
    media_rows = _rows_by_run(media) if media is not None and not batched else {}
    by_point = _media_by_point(media, runs, names, window, tuple(jbs_ms)) if batched and media is not None else {}
    for params, r in _points(runs):
        p: dict[str, Any] = {"params": params, "runs": int(len(r))}
        if batched:
            p["media"] = by_point.get(int(params["point"]), [])
        else:
            p["media"] = _media(media, r, names, window, tuple(jbs_ms), media_rows) if media is not None else []
        if tcp_by_point is not None:
            p["tcp"] = tcp_by_point.get(int(params["point"]), [])
        else:
            p["tcp"] = _tcp(tcp, r, tcp_rows) if tcp is not None else []
        out["points"].append(p)
    return out
