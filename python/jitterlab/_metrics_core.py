"""What every metric of `jitterlab.metrics` is built on: the tables' columns checked (one
TableError line naming the table and column), a media table prepared once for the Rust core
(`Prepared`, `prepare`), the measurement windows, grouping, and the base delay's fallbacks.
Public names are `jitterlab.metrics`'s (it re-exports them); this module has no API of its own."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Sequence, Union

import numpy as np
import pandas as pd
from pandas.api import types as pdt

from jitterlab import _native
from jitterlab._native import TableError

_BASE_SOURCES = np.array(["pre_tcp", "whole_stream", "none"], dtype=object)
_NS_PER_MS = 1_000_000

Window = Union[str, tuple[int, int]]


class MetricsWarning(UserWarning):
    """A metric used a documented fallback (e.g. base delay without pre-TCP packets)."""


# ----------------------------------------------------------------------------- validation


def _col(df: pd.DataFrame, table: str, name: str) -> pd.Series:
    if not isinstance(df, pd.DataFrame):
        raise TableError(f"{table}: expected a pandas DataFrame, got {type(df).__name__}")
    if name not in df.columns:
        raise TableError(f"{table}: missing column '{name}'")
    return df[name]


def _int_col(df: pd.DataFrame, table: str, name: str) -> np.ndarray:
    """Integer column without nulls as a contiguous int64 array."""
    s = _col(df, table, name)
    if not pdt.is_integer_dtype(s.dtype) or pdt.is_bool_dtype(s.dtype):
        raise TableError(f"{table}: column '{name}' must have an integer dtype, got {s.dtype}")
    if s.isna().any():
        raise TableError(f"{table}: column '{name}' has null values")
    if s.dtype == np.uint64 and len(s) and int(s.max()) > np.iinfo(np.int64).max:
        raise TableError(f"{table}: column '{name}' has values beyond int64")
    return np.ascontiguousarray(s.to_numpy(dtype=np.int64))


def _nullable_time(df: pd.DataFrame, table: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Nullable ns column (Int64, int64, or float64 with NaN) as (values int64, valid bool)."""
    s = _col(df, table, name)
    if pdt.is_bool_dtype(s.dtype) or not (pdt.is_integer_dtype(s.dtype) or pdt.is_float_dtype(s.dtype)):
        raise TableError(f"{table}: column '{name}' must be nullable Int64 or float64 ns, got {s.dtype}")
    valid = ~s.isna().to_numpy(dtype=bool)
    if pdt.is_float_dtype(s.dtype):
        f = s.to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.isfinite(f[valid]).all():
            raise TableError(f"{table}: column '{name}' has infinite values")
        vals = np.where(valid, f, 0.0).astype(np.int64)
    else:
        vals = s.to_numpy(dtype=np.int64, na_value=0)
    return np.ascontiguousarray(vals), np.ascontiguousarray(valid)


def _run_index(runs: pd.DataFrame) -> pd.Index:
    ids = _col(runs, "runs", "run_id")
    if not (pdt.is_integer_dtype(ids.dtype) or pdt.is_string_dtype(ids.dtype) or ids.dtype == object):
        raise TableError(f"runs: column 'run_id' must be integer or string, got {ids.dtype}")
    if ids.isna().any():
        raise TableError("runs: column 'run_id' has null values")
    idx = pd.Index(ids)
    if not idx.is_unique:
        raise TableError("runs: column 'run_id' has duplicate values")
    return idx


# ----------------------------------------------------------------------------- preparation


@dataclass
class Prepared:
    """A validated, sorted, de-duplicated ``media_packets`` table with its ``runs`` table."""

    native: Any
    runs: pd.DataFrame
    run_ids: pd.Index
    streams: dict[str, np.ndarray]

    def col(self, name: str, rows: np.ndarray | None = None) -> np.ndarray:
        """A prepared column (sorted by run, flow, seq), optionally at some rows only."""
        if rows is None:
            return self.native.gather(name)
        return self.native.gather(name, np.ascontiguousarray(rows, dtype=np.int64))

    @property
    def duplicates(self) -> int:
        """Input rows dropped as later copies of the same (run, flow, seq)."""
        return int(self.native.duplicates)

    def frame(self, rows: np.ndarray, extra: dict[str, Any]) -> pd.DataFrame:
        """run_id, flow_id, seq of prepared rows plus extra columns."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        out = {
            "run_id": self.run_ids.take(self.col("run", rows)),
            "flow_id": self.col("flow", rows),
            "seq": self.col("seq", rows),
        }
        out.update(extra)
        return pd.DataFrame(out)

    def stream_frame(self, extra: dict[str, Any], repeat: int = 1) -> pd.DataFrame:
        run = np.repeat(self.streams["run"], repeat)
        out = {"run_id": self.run_ids.take(run), "flow_id": np.repeat(self.streams["flow"], repeat)}
        out.update(extra)
        return pd.DataFrame(out)


def prepare(media: pd.DataFrame, runs: pd.DataFrame | None = None, *, unwrap16: bool = False) -> Prepared:
    """Validate and prepare ``media_packets`` (and ``runs``) once for several metrics.

    ``runs`` may be omitted when only ``window="all"`` metrics are wanted. ``unwrap16`` extends
    16-bit RTP sequence numbers per (run, flow) in send order. Duplicate rows of one
    (run, flow, seq) count once: the earliest arrival (a lost copy only if none arrived).
    Raises ``TableError`` naming the column for missing columns, wrong dtypes, negative delays.
    """
    if isinstance(media, Prepared):
        return media
    for name in ("run_id", "flow_id", "seq", "send_ns", "recv_ns", "size"):
        _col(media, "media_packets", name)
    run_col = media["run_id"]
    if not (pdt.is_integer_dtype(run_col.dtype) or pdt.is_string_dtype(run_col.dtype) or run_col.dtype == object):
        raise TableError(f"media_packets: column 'run_id' must be integer or string, got {run_col.dtype}")
    if runs is None:
        uniq = pd.unique(run_col.to_numpy())
        runs = pd.DataFrame({
            "run_id": uniq,
            "tcp_start_ns": pd.array([None] * len(uniq), dtype="Int64"),
            "tcp_end_ns": pd.array([None] * len(uniq), dtype="Int64"),
        })
    run_ids = _run_index(runs)
    ts, ts_ok = _nullable_time(runs, "runs", "tcp_start_ns")
    te, te_ok = _nullable_time(runs, "runs", "tcp_end_ns")
    codes = run_ids.get_indexer(run_col)
    if (codes < 0).any():
        bad = run_col.iloc[int(np.flatnonzero(codes < 0)[0])]
        bad = bad.item() if isinstance(bad, np.generic) else bad
        raise TableError(f"media_packets: column 'run_id' value {bad!r} is not in the runs table")
    flow = _int_col(media, "media_packets", "flow_id")
    seq = _int_col(media, "media_packets", "seq")
    send = _int_col(media, "media_packets", "send_ns")
    recv, received = _nullable_time(media, "media_packets", "recv_ns")
    size = _int_col(media, "media_packets", "size")
    native = _native.MediaSet(
        np.ascontiguousarray(codes, dtype=np.int64), flow, seq, send, recv, received, size,
        ts, ts_ok, te, te_ok, unwrap16,
    )
    return Prepared(native, runs.reset_index(drop=True), run_ids, dict(native.streams()))


def _prep(media: Any, runs: pd.DataFrame | None) -> Prepared:
    return media if isinstance(media, Prepared) else prepare(media, runs)


def _window(window: Window) -> tuple[str, int, int]:
    if isinstance(window, str):
        if window not in ("all", "overlap"):
            raise ValueError(f"parameter 'window': expected 'all', 'overlap' or (lo_ns, hi_ns), got {window!r}")
        return window, 0, 0
    try:
        lo, hi = window
    except (TypeError, ValueError):
        raise ValueError(f"parameter 'window': expected 'all', 'overlap' or (lo_ns, hi_ns), got {window!r}") from None
    return "absolute", int(lo), int(hi)


def _win(p: Prepared, window: Window) -> tuple[str, int, int]:
    w = _window(window)
    if w[0] == "overlap" and not p.runs["tcp_start_ns"].notna().any():
        warnings.warn("window='overlap' but no run has tcp_start_ns: no packet is selected "
                      "(use window='all' for audio-only runs)", MetricsWarning, stacklevel=3)
    return w


def _groups(p: Prepared, by: Sequence[str] | str | None) -> tuple[np.ndarray, pd.DataFrame]:
    """Group code per run (uint32) and the group labels (one row per group)."""
    if by is None:
        return np.zeros(len(p.run_ids), dtype=np.uint32), pd.DataFrame(index=[0])
    cols = [by] if isinstance(by, str) else list(by)
    for c in cols:
        _col(p.runs, "runs", c)
    g = p.runs.groupby(cols, sort=True, dropna=False)
    codes = g.ngroup().to_numpy(dtype=np.uint32)
    labels = g.size().reset_index()[cols]
    return np.ascontiguousarray(codes), labels


def _with_labels(labels: pd.DataFrame, by: Any, frame: pd.DataFrame, group_col: np.ndarray) -> pd.DataFrame:
    if by is None:
        return frame
    lab = labels.take(group_col).reset_index(drop=True)
    return pd.concat([lab, frame.reset_index(drop=True)], axis=1)


def _base_window_ns(base_window_ms: float) -> int:
    if not base_window_ms > 0:
        raise ValueError("parameter 'base_window_ms': must be positive")
    return int(round(base_window_ms * _NS_PER_MS))


def _warn_base(p: Prepared, pre_ns: int) -> None:
    src = p.native.base_delay(pre_ns)["source"]
    n = int((src == 1).sum())
    if n:
        warnings.warn(
            f"base delay: {n} stream(s) had no packet received in the {pre_ns / 1e9:g} s before "
            "tcp_start_ns (or no tcp_start_ns); used the minimum OWD of the whole stream instead",
            MetricsWarning,
            stacklevel=3,
        )


#: the smallest non-zero jitter buffer taken (ms): below it a size is a unit mistake (0.04 meant
#: as seconds), not a buffer — one 20 ms audio packet interval is already 20
MIN_JB_MS = 1.0


def _jbs_ns(jbs_ms: Iterable[float] | float, name: str = "jbs_ms") -> list[int]:
    if isinstance(jbs_ms, (int, float)) and name == "jbs_ms":
        raise TypeError(f"parameter '{name}': expected a list of jitter buffer sizes in ms, e.g. [40, 60], got {jbs_ms!r}")
    try:
        vals = [float(j) for j in jbs_ms]  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise TypeError(f"parameter '{name}': expected jitter buffer sizes in ms (numbers), got {jbs_ms!r}") from None
    out = [int(round(j * _NS_PER_MS)) for j in vals]
    if not out or any(j < 0 for j in out):
        raise ValueError(f"parameter '{name}': need at least one non-negative jitter buffer size (ms)")
    small = [j for j in vals if 0 < j < MIN_JB_MS]
    if small:
        raise ValueError(f"parameter '{name}': {small[0]:g} ms is not a jitter buffer size; sizes are in milliseconds "
                         f"(did you mean {small[0] * 1e3:g}?)")
    return out


def _jb_s(jb_ns: list[int], repeat_each: int = 1, tile: int = 1) -> np.ndarray:
    """Jitter buffer sizes as float seconds, from the integer ns used for the computation, so
    equal sizes compare equal (40 ms → 0.04 exactly as the literal)."""
    return np.tile(np.repeat(np.asarray(jb_ns, dtype=np.int64) / 1e9, repeat_each), tile)


def overlap_window(runs: pd.DataFrame) -> pd.DataFrame:
    """The TCP overlap window of each run: run_id, start_ns, end_ns (nullable: open end), and
    duration_s (NaN when the run has no TCP or it never ended)."""
    _run_index(runs)
    s, s_ok = _nullable_time(runs, "runs", "tcp_start_ns")
    e, e_ok = _nullable_time(runs, "runs", "tcp_end_ns")
    if (s_ok & e_ok & (e < s)).any():
        raise TableError("runs: column 'tcp_end_ns' is before tcp_start_ns")
    start = pd.array(s, dtype="Int64")
    start[~s_ok] = pd.NA
    end = pd.array(e, dtype="Int64")
    end[~e_ok] = pd.NA
    dur = np.where(s_ok & e_ok, (e - s) / 1e9, np.nan)
    return pd.DataFrame({"run_id": runs["run_id"].to_numpy(), "start_ns": start, "end_ns": end, "duration_s": dur})
