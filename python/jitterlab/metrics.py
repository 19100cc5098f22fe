"""Media-quality and TCP metrics over the shared tables (``media_packets``, ``runs``, ``tcp_flows``).

Every function takes pandas DataFrames and returns DataFrames; the work is done in Rust
(``jitterlab._native.MediaSet``), vectorised, one sort per table. Definitions: ``docs/metrics.md``.

Pass ``prepare(media, runs)`` instead of ``media`` to reuse one prepared table across calls.

Units (one rule, stated in ``docs/tables.md``): every name carries its unit. Per-packet columns
and one packet's values (``owd_ns``, ``ipdv_ns``, ``base_owd_ns``) are integer nanoseconds, as
in the raw tables (RFC 3550's running jitter J after each packet, ``jitter_ns``, is float ns);
every summary column is a float in seconds (``*_s``: ``jb_s``, ``ta_s``, ``duration_s``,
``jitter_s``, ``owd_s``, ``t_s``) and every share or rate of loss is a fraction in
[0, 1] (``loss_rate``, ``loss_fraction``, ``packet_error_rate``, ``acceptable``). Parameters
take milliseconds and say so (``jbs_ms``, ``jb_ms``, ``bin_ms``, ``span_ms``, ``interval_ms``,
``base_window_ms``); ``emodel_r`` alone takes G.107's own units (``ta_ms``, ``ppl`` in percent).

>>> import pandas as pd
>>> media = pd.DataFrame({"run_id": [1, 1, 1], "flow_id": [7, 7, 7], "seq": [0, 1, 2],
...     "send_ns": [0, 20_000_000, 40_000_000],
...     "recv_ns": pd.array([10_000_000, None, 55_000_000], dtype="Int64"), "size": [80, 80, 80]})
>>> runs = pd.DataFrame({"run_id": [1], "tcp_start_ns": pd.array([None], dtype="Int64"),
...     "tcp_end_ns": pd.array([None], dtype="Int64")})
>>> owd(media, runs, window="all")["owd_ns"].tolist()
[10000000, 15000000]
>>> rtp_summary(media, runs, window="all")["packet_error_rate"].tolist()
[0.3333333333333333]
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from jitterlab import _native
from jitterlab._codecs import CODECS  # noqa: F401  (public here; a module of its own so the summary needs no pandas)
from jitterlab._native import TableError
# validation, preparation, windows, grouping: the ground every metric below stands on
from jitterlab._metrics_core import (  # noqa: F401  (the public names are re-exported)
                                    MIN_JB_MS, MetricsWarning, Prepared, Window, _BASE_SOURCES, _NS_PER_MS, _base_window_ns, _col,
                                    _groups, _int_col, _jb_s, _jbs_ns, _nullable_time, _prep, _warn_base, _win, _with_labels,
                                    overlap_window, prepare)

__all__ = [
    "CODECS",
    "DEFAULT_JBS_MS",
    "TABLE1_COLUMNS",
    "percentile_column",
    "MetricsWarning",
    "Prepared",
    "prepare",
    "overlap_window",
    "owd",
    "owd_percentiles",
    "owd_cdf",
    "ipdv",
    "ipdv_table",
    "interarrival_jitter",
    "jitter_final",
    "base_delay",
    "jb_loss",
    "jb_loss_summary",
    "loss_levels",
    "loss_periods",
    "loss_period_stats",
    "levels_over_time",
    "acceptable_over_time",
    "rtp_summary",
    "tcp_summary",
    "emodel_r",
    "mos_from_r",
    "emodel_mos",
    "best_jb",
]

#: Jitter buffer sizes of the PAM 2013 study (Fig. 5, Fig. 7), ms.
DEFAULT_JBS_MS: tuple[int, ...] = (40, 60, 80, 100, 150, 200)
#: Quantiles of the paper's Table 1 (percentiles of IPDV) and the columns they get (seconds).
TABLE1_Q: list[float] = [0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0]


def percentile_column(q: float) -> str:
    """The column of quantile `q` in a percentile table (seconds, as every duration here):
    ``min_s`` (0), ``p25_s`` (0.25), ``p99.9_s`` (0.999), ``max_s`` (1).

    >>> [percentile_column(q) for q in (0.0, 0.5, 0.999, 1.0)]
    ['min_s', 'p50_s', 'p99.9_s', 'max_s']
    """
    return "min_s" if q == 0 else "max_s" if q == 1 else f"p{q * 100:g}_s"


TABLE1_COLUMNS: list[str] = [percentile_column(q) for q in TABLE1_Q]


# ----------------------------------------------------------------------------- delay


def owd(media: Any, runs: pd.DataFrame | None = None, window: Window = "all") -> pd.DataFrame:
    """One-way delay (RFC 7679) of each received packet sent in the window: run_id, flow_id,
    seq, send_ns, owd_ns."""
    p = _prep(media, runs)
    r = p.native.owd(*_win(p, window))
    return p.frame(r["row"], {"send_ns": p.col("send_ns", r["row"]), "owd_ns": r["owd_ns"]})


def _pooled(p: Prepared, metric: str, window: Window, by: Any, q: Sequence[float]) -> tuple[np.ndarray, pd.DataFrame, np.ndarray]:
    codes, labels = _groups(p, by)
    res = p.native.pooled_quantiles(metric, *_win(p, window), codes, len(labels), [float(x) for x in q])
    return res["quantiles"].reshape(len(labels), len(q)), labels, res["counts"]


def _table(mat: np.ndarray, labels: pd.DataFrame, by: Any, columns: list[str]) -> pd.DataFrame:
    """One row per group: the `by` columns, then `columns` (as every other table here: groups are
    columns, not the index)."""
    df = pd.DataFrame(mat, columns=columns)
    if by is None:
        return df
    return pd.concat([labels.reset_index(drop=True), df], axis=1)


def owd_percentiles(media: Any, runs: pd.DataFrame | None = None, window: Window = "overlap",
                    by: Sequence[str] | str | None = None, q: Sequence[float] = TABLE1_Q) -> pd.DataFrame:
    """Pooled OWD percentiles over replications, one row per group of ``by`` (columns of
    ``runs``): [by…], then one column per quantile in seconds (`percentile_column`: min_s,
    p25_s, …, max_s for Table 1's quantiles, the default)."""
    p = _prep(media, runs)
    mat, labels, _ = _pooled(p, "owd", window, by, q)
    return _table(mat, labels, by, [percentile_column(x) for x in q])


def owd_cdf(media: Any, runs: pd.DataFrame | None = None, window: Window = "overlap",
            by: Sequence[str] | str | None = None, points: int = 201) -> pd.DataFrame:
    """Pooled OWD CDF sampled at ``points`` probabilities: long table [by..., p, owd_s]."""
    if points < 2:
        raise ValueError("parameter 'points': need at least 2")
    p = _prep(media, runs)
    probs = np.linspace(0.0, 1.0, points)
    mat, labels, _ = _pooled(p, "owd", window, by, probs.tolist())
    g = np.repeat(np.arange(len(labels)), points)
    frame = pd.DataFrame({"p": np.tile(probs, len(labels)), "owd_s": mat.ravel()})
    return _with_labels(labels, by, frame, g)


def ipdv(media: Any, runs: pd.DataFrame | None = None, window: Window = "overlap") -> pd.DataFrame:
    """IPDV (RFC 3393/5481, consecutive selection) on the later packet of each pair: run_id,
    flow_id, seq, ipdv_ns."""
    p = _prep(media, runs)
    r = p.native.ipdv(*_win(p, window))
    return p.frame(r["row"], {"ipdv_ns": r["ipdv_ns"]})


def ipdv_table(media: Any, runs: pd.DataFrame | None = None, window: Window = "overlap",
               by: Sequence[str] | str | None = None) -> pd.DataFrame:
    """The paper's Table 1: pooled IPDV percentiles, [by…] then exactly `TABLE1_COLUMNS`
    (min_s, p25_s, p50_s, p75_s, p90_s, p95_s, p96_s, p97_s, p98_s, p99_s, max_s; seconds)."""
    p = _prep(media, runs)
    mat, labels, _ = _pooled(p, "ipdv", window, by, TABLE1_Q)
    return _table(mat, labels, by, TABLE1_COLUMNS)


def interarrival_jitter(media: Any, runs: pd.DataFrame | None = None, window: Window = "all") -> pd.DataFrame:
    """RFC 3550 §6.4.1 jitter after each received packet, in arrival order per stream:
    run_id, flow_id, seq, recv_ns, jitter_ns (send time in place of the RTP timestamp)."""
    p = _prep(media, runs)
    r = p.native.jitter(*_win(p, window))
    return p.frame(r["row"], {"recv_ns": p.col("recv_ns", r["row"]), "jitter_ns": r["jitter_ns"]})


def jitter_final(media: Any, runs: pd.DataFrame | None = None, window: Window = "all") -> pd.DataFrame:
    """Final RFC 3550 jitter per stream (what Wireshark reports, here in seconds): run_id,
    flow_id, jitter_s (NaN when nothing was received)."""
    p = _prep(media, runs)
    return p.stream_frame({"jitter_s": p.native.jitter_final(*_win(p, window)) / 1e9})


# ----------------------------------------------------------------------------- loss


def base_delay(media: Any, runs: pd.DataFrame | None = None, base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Base delay per stream: min OWD of packets received in the ``base_window_ms`` before
    tcp_start_ns. Fallback (warned): min OWD of the whole stream. Columns run_id, flow_id,
    base_owd_ns (nullable), source (pre_tcp, whole_stream, none)."""
    p = _prep(media, runs)
    pre = _base_window_ns(base_window_ms)
    b = p.native.base_delay(pre)
    _warn_base(p, pre)
    base = pd.array(np.where(b["valid"], b["base_ns"], 0), dtype="Int64")
    base[~b["valid"]] = pd.NA
    return p.stream_frame({"base_owd_ns": base, "source": _BASE_SOURCES[b["source"]]})


def jb_loss(media: Any, runs: pd.DataFrame | None = None, jbs_ms: Iterable[float] = DEFAULT_JBS_MS,
            window: Window = "overlap", base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Loss behind each jitter buffer (``jbs_ms``, ms) per stream: run_id, flow_id, jb_s,
    packets (sent in the window), pure, late (OWD > base + JB), loss_rate = (pure + late) /
    packets (fraction)."""
    p = _prep(media, runs)
    jb_ns = _jbs_ns(jbs_ms)
    pre = _base_window_ns(base_window_ms)
    r = p.native.jb_loss(*_win(p, window), pre, jb_ns)
    _warn_base(p, pre)
    n = r["packets"].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, (r["pure"] + r["late"]) / np.maximum(n, 1), np.nan)
    return p.stream_frame({
        "jb_s": _jb_s(jb_ns, tile=len(p.streams["run"])),
        "packets": n, "pure": r["pure"].astype(np.int64), "late": r["late"].astype(np.int64),
        "loss_rate": rate,
    }, repeat=len(jb_ns))


def jb_loss_summary(media: Any, runs: pd.DataFrame | None = None, jbs_ms: Iterable[float] = DEFAULT_JBS_MS,
                    by: Sequence[str] | str | None = None, window: Window = "overlap",
                    base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Fig. 5: median and 25th/75th percentiles of the per-replication loss rate (fractions)
    for each JB (and ``by`` group): [by...], jb_s, replications, median, p25, p75.
    Replications with no packet in the window are left out."""
    p = _prep(media, runs)
    per = jb_loss(p, None, jbs_ms, window, base_window_ms).dropna(subset=["loss_rate"])
    keys = ([] if by is None else ([by] if isinstance(by, str) else list(by)))
    if keys:
        per = per.merge(p.runs[["run_id", *keys]], on="run_id", how="left")
    g = per.groupby([*keys, "jb_s"], sort=True, dropna=False)["loss_rate"]
    out = pd.DataFrame({
        "replications": g.size(),
        "median": g.median(),
        "p25": g.quantile(0.25),
        "p75": g.quantile(0.75),
    })
    return out.reset_index()


def loss_levels(media: Any, runs: pd.DataFrame | None = None, jb_ms: float | None = 40.0,
                window: Window = "overlap", interval_ms: float = 20.0,
                base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Loss period level 0–5 (PAM 2013 Table 2, by duration) of each packet sent in the window
    behind jitter buffer ``jb_ms`` (``None`` = pure loss only): run_id, flow_id, seq, send_ns,
    lost, level. Periods are whole-stream, so one crossing the window edge keeps its length."""
    p = _prep(media, runs)
    pre = _base_window_ns(base_window_ms)
    lv = p.native.levels(pre, None if jb_ms is None else _jbs_ns([jb_ms], "jb_ms")[0], _interval_ns(interval_ms))
    if jb_ms is not None:
        _warn_base(p, pre)
    rows = np.flatnonzero(p.native.window_mask(*_win(p, window))["mask"])
    return p.frame(rows, {"send_ns": p.col("send_ns", rows), "lost": lv["lost"][rows], "level": lv["level"][rows]})


def _interval_ns(interval_ms: float) -> int:
    v = int(round(interval_ms * _NS_PER_MS))
    if v <= 0:
        raise ValueError("parameter 'interval_ms': must be positive")
    return v


def loss_periods(media: Any, runs: pd.DataFrame | None = None, jb_ms: float | None = None,
                 window: Window = "all", interval_ms: float = 20.0,
                 base_window_ms: float = 2000.0) -> pd.DataFrame:
    """RFC 3357 loss periods touching the window (lost = pure, or late behind ``jb_ms``): run_id,
    flow_id, start_seq, length, duration_s (length × interval), level, loss_distance (seq distance from the
    previous lost packet of the stream; 0 for the first)."""
    p = _prep(media, runs)
    pre = _base_window_ns(base_window_ms)
    iv = _interval_ns(interval_ms)
    r = p.native.periods(*_win(p, window), pre, None if jb_ms is None else _jbs_ns([jb_ms], "jb_ms")[0])
    if jb_ms is not None:
        _warn_base(p, pre)
    length = r["length"].astype(np.int64)
    dur_ns = length * iv
    level = 1 + (dur_ns[:, None] >= np.array([40, 80, 120, 200]) * _NS_PER_MS).sum(axis=1)
    df = p.frame(r["first_row"], {})
    df = df.rename(columns={"seq": "start_seq"})
    df["length"] = length
    df["duration_s"] = dur_ns / 1e9
    df["level"] = level.astype(np.int64)
    df["loss_distance"] = r["distance"]
    return df


def loss_period_stats(media: Any, runs: pd.DataFrame | None = None, jb_ms: float | None = None,
                      window: Window = "all", interval_ms: float = 20.0,
                      base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Per stream: periods (RFC 3357 loss period total), lost packets in them, mean and max
    period length. Streams without loss have zeros."""
    p = _prep(media, runs)
    per = loss_periods(p, None, jb_ms, window, interval_ms, base_window_ms)
    base = p.stream_frame({})
    g = per.groupby(["run_id", "flow_id"], sort=False)["length"]
    stats = pd.DataFrame({"periods": g.size(), "lost": g.sum(), "mean_length": g.mean(), "max_length": g.max()}).reset_index()
    out = base.merge(stats, on=["run_id", "flow_id"], how="left")
    for c in ("periods", "lost", "max_length"):
        out[c] = out[c].fillna(0).astype(np.int64)
    out["mean_length"] = out["mean_length"].fillna(0.0)
    return out


def _levels_multi(p: Prepared, jbs_ms: list[float | None], bin_ms: float, span_ms: float, window: Window,
                  by: Any, interval_ms: float, base_window_ms: float) -> tuple[np.ndarray, np.ndarray, pd.DataFrame, int]:
    codes, labels = _groups(p, by)
    pre = _base_window_ns(base_window_ms)
    if not bin_ms > 0 or not span_ms > 0:
        raise ValueError("parameter 'bin_ms'/'span_ms': must be positive")
    jb_ns = [None if jb is None else _jbs_ns([jb], "jb_ms")[0] for jb in jbs_ms]
    r = p.native.levels_over_time_multi(*_win(p, window), pre, jb_ns, _interval_ns(interval_ms), codes,
                                        len(labels), int(round(bin_ms * _NS_PER_MS)), int(round(span_ms * _NS_PER_MS)))
    if any(jb is not None for jb in jbs_ms):
        _warn_base(p, pre)
    nb = int(r["n_bins"])
    return r["normalised"].reshape(len(jbs_ms), len(labels) * nb, 6), r["replications"].astype(np.int64), labels, nb


def levels_over_time(media: Any, runs: pd.DataFrame | None = None, jb_ms: float | None = 40.0,
                     bin_ms: float = 20.0, span_ms: float = 2000.0, window: Window = "overlap",
                     by: Sequence[str] | str | None = None, interval_ms: float = 20.0,
                     base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Fig. 6: per time bin since tcp_start_ns (by send time), packet count per level divided by
    the number of replications (runs with tcp_start_ns in the group): [by...], t_s (bin start),
    replications, level_0 … level_5."""
    p = _prep(media, runs)
    mat, reps, labels, nb = _levels_multi(p, [jb_ms], bin_ms, span_ms, window, by, interval_ms, base_window_ms)
    frame = pd.DataFrame(mat[0], columns=[f"level_{k}" for k in range(6)])
    frame.insert(0, "t_s", np.tile(np.arange(nb) * bin_ms / 1000.0, len(labels)))
    frame.insert(1, "replications", np.repeat(reps, nb))
    return _with_labels(labels, by, frame, np.repeat(np.arange(len(labels)), nb))


def acceptable_over_time(media: Any, runs: pd.DataFrame | None = None, jbs_ms: Iterable[float] = DEFAULT_JBS_MS,
                         bin_ms: float = 20.0, span_ms: float = 2000.0, window: Window = "overlap",
                         by: Sequence[str] | str | None = None, interval_ms: float = 20.0,
                         base_window_ms: float = 2000.0) -> pd.DataFrame:
    """Fig. 7: per JB and time bin, (level 0 + level 1 packets) / replications:
    [by...], jb_s, t_s, acceptable (fraction of a replication's packets per bin)."""
    p = _prep(media, runs)
    jbs = [float(j) for j in jbs_ms]
    jb_ns = _jbs_ns(jbs)
    mat, _, labels, nb = _levels_multi(p, list(jbs), bin_ms, span_ms, window, by, interval_ms, base_window_ms)
    ng = len(labels)
    acc = mat[:, :, 0] + mat[:, :, 1]  # (jb, group*bin)
    # Order: group, jb, bin.
    acc = acc.reshape(len(jbs), ng, nb).transpose(1, 0, 2).ravel()
    frame = pd.DataFrame({
        "jb_s": _jb_s(jb_ns, repeat_each=nb, tile=ng),
        "t_s": np.tile(np.arange(nb) * bin_ms / 1000.0, ng * len(jbs)),
        "acceptable": acc,
    })
    return _with_labels(labels, by, frame, np.repeat(np.arange(ng), len(jbs) * nb))


# ----------------------------------------------------------------------------- throughput


def rtp_summary(media: Any, runs: pd.DataFrame | None = None, window: Window = "overlap") -> pd.DataFrame:
    """Chodorek's RTP metrics per stream over the window: sent, received, bytes_received,
    duration_s, throughput_bps (received bits / duration), packet_error_rate (lost / sent)."""
    p = _prep(media, runs)
    r = p.native.rtp_summary(*_win(p, window))
    return p.stream_frame({
        "sent": r["sent"].astype(np.int64), "received": r["received"].astype(np.int64),
        "bytes_received": r["bytes_received"].astype(np.int64), "duration_s": r["duration_ns"] / 1e9,
        "throughput_bps": r["throughput_bps"], "packet_error_rate": r["packet_error_rate"],
    })


def tcp_summary(tcp_flows: pd.DataFrame, per: str = "flow") -> pd.DataFrame:
    """TCP per flow (``per="flow"``): completion_s = end − syn, goodput_bps = bytes·8 /
    completion, packet_error_rate = drops / segments_sent; unfinished flows (null end_ns) get
    NaN. ``per="run"``: totals per run (bytes, first SYN to last end, summed drops/segments)."""
    t = "tcp_flows"
    run_id = _col(tcp_flows, t, "run_id")
    flow_id = _int_col(tcp_flows, t, "flow_id")
    syn = _int_col(tcp_flows, t, "syn_ns")
    end, end_ok = _nullable_time(tcp_flows, t, "end_ns")
    nbytes = _int_col(tcp_flows, t, "bytes")
    segs = _int_col(tcp_flows, t, "segments_sent")
    drops = _int_col(tcp_flows, t, "drops")
    for name, v in (("bytes", nbytes), ("segments_sent", segs), ("drops", drops)):
        if (v < 0).any():
            raise TableError(f"{t}: column '{name}' has negative values")
    if (end_ok & (end < syn)).any():
        raise TableError(f"{t}: column 'end_ns' is before syn_ns")
    if per == "flow":
        comp = np.where(end_ok, (end - syn) / 1e9, np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            good = np.where(end_ok & (end > syn), nbytes * 8.0 / comp, np.nan)
            per_rate = np.where(segs > 0, drops / np.maximum(segs, 1), np.nan)
        out = pd.DataFrame({"run_id": run_id.to_numpy(), "flow_id": flow_id})
        if "role" in tcp_flows.columns:
            out["role"] = tcp_flows["role"].to_numpy()
        out["bytes"] = nbytes
        out["completion_s"] = comp
        out["goodput_bps"] = good
        out["packet_error_rate"] = per_rate
        return out
    if per != "run":
        raise ValueError("parameter 'per': 'flow' or 'run'")
    df = pd.DataFrame({"run_id": run_id.to_numpy(), "bytes": nbytes, "syn": syn,
                       "end": np.where(end_ok, end, np.iinfo(np.int64).max), "segs": segs, "drops": drops})
    g = df.groupby("run_id", sort=False)
    out = pd.DataFrame({"flows": g.size(), "bytes": g["bytes"].sum(), "start": g["syn"].min(),
                        "end": g["end"].max(), "segs": g["segs"].sum(), "drops": g["drops"].sum()}).reset_index()
    done = out["end"] != np.iinfo(np.int64).max  # any unfinished flow leaves the run unfinished
    out["completion_s"] = np.where(done, (out["end"] - out["start"]) / 1e9, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["goodput_bps"] = np.where(done & (out["completion_s"] > 0), out["bytes"] * 8.0 / out["completion_s"], np.nan)
        out["packet_error_rate"] = np.where(out["segs"] > 0, out["drops"] / out["segs"].clip(lower=1), np.nan)
    return out[["run_id", "flows", "bytes", "completion_s", "goodput_bps", "packet_error_rate"]]


# ----------------------------------------------------------------------------- E-model


def _codec(codec: str | dict[str, float]) -> dict[str, float]:
    if isinstance(codec, dict):
        missing = {"ie", "bpl", "delay_ms"} - set(codec)
        if missing:
            raise ValueError(f"parameter 'codec': missing {sorted(missing)}")
        return codec
    if codec not in CODECS:
        raise ValueError(f"parameter 'codec': unknown preset {codec!r} (known: {', '.join(CODECS)})")
    return CODECS[codec]


def emodel_r(ta_ms: Any, ppl: Any = 0.0, burst_r: Any = 1.0, codec: str | dict[str, float] = "g711_plc",
             params: dict[str, float] | None = None) -> np.ndarray:
    """G.107 R for mouth-to-ear delay ``ta_ms`` (already including codec delay), loss ``ppl``
    (percent) and ``burst_r``; arrays broadcast. ``params`` overrides G.107 Table 3 defaults
    (keys slr, rlr, stmr, lstr, ds, telr, wepl, qdu, nc, nfor, ps, pr, a)."""
    c = _codec(codec)
    t, l, b = np.broadcast_arrays(np.asarray(ta_ms, dtype=np.float64), np.asarray(ppl, dtype=np.float64),
                                  np.asarray(burst_r, dtype=np.float64))
    r = _native.emodel_r(np.ascontiguousarray(t.ravel()), np.ascontiguousarray(l.ravel()),
                         np.ascontiguousarray(b.ravel()), float(c["ie"]), float(c["bpl"]), params)
    return r.reshape(t.shape)


def mos_from_r(r: Any) -> np.ndarray:
    """MOS from R (G.107 Annex B)."""
    a = np.asarray(r, dtype=np.float64)
    return _native.mos_from_r(np.ascontiguousarray(a.ravel())).reshape(a.shape)


def emodel_mos(media: Any, runs: pd.DataFrame | None = None, jbs_ms: Iterable[float] = DEFAULT_JBS_MS,
               codec: str | dict[str, float] = "g711_plc", window: Window = "overlap",
               base_window_ms: float = 2000.0, params: dict[str, float] | None = None) -> pd.DataFrame:
    """E-model per stream and JB: Ta = base OWD + JB + codec delay; Ppl and BurstR from the loss
    (pure + late) behind the JB in the window. Columns run_id, flow_id, jb_s, base_owd_s,
    loss_fraction (G.107's Ppl / 100), burst_r, ta_s, r, mos (NaN when nothing was received)."""
    p = _prep(media, runs)
    c = _codec(codec)
    jb_ns = _jbs_ns(jbs_ms)
    pre = _base_window_ns(base_window_ms)
    r = p.native.emodel(*_win(p, window), pre, jb_ns, float(c["ie"]), float(c["bpl"]),
                        float(c["delay_ms"]), params)
    _warn_base(p, pre)
    # The native E-model works in G.107's units (ms, Ppl in percent); the table follows the rule.
    return p.stream_frame({
        "jb_s": _jb_s(jb_ns, tile=len(p.streams["run"])),
        "base_owd_s": np.asarray(r["base_owd_ms"]) / 1e3,
        "loss_fraction": np.asarray(r["ppl"]) / 100.0,
        "burst_r": r["burst_r"],
        "ta_s": np.asarray(r["ta_ms"]) / 1e3,
        "r": r["r"], "mos": r["mos"],
    }, repeat=len(jb_ns))


def best_jb(media: Any, runs: pd.DataFrame | None = None, jbs_ms: Iterable[float] = DEFAULT_JBS_MS,
            codec: str | dict[str, float] = "g711_plc", window: Window = "overlap",
            base_window_ms: float = 2000.0, params: dict[str, float] | None = None) -> pd.DataFrame:
    """Per stream, the JB of ``jbs_ms`` with the highest MOS (ties: the smaller JB); streams whose
    MOS is undefined are left out. Same columns as ``emodel_mos``."""
    e = emodel_mos(media, runs, jbs_ms, codec, window, base_window_ms, params).dropna(subset=["mos"])
    e = e.sort_values(["run_id", "flow_id", "mos", "jb_s"], ascending=[True, True, False, True], kind="stable")
    return e.drop_duplicates(["run_id", "flow_id"], keep="first").reset_index(drop=True)
