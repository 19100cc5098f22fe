"""The short answer `simulate` and `sweep` end with: per media flow the one-way delay's median and
99th percentile, the loss and the best jitter buffer's MOS; per TCP role the goodput and completion.

`summarize(tables)` returns it as plain data (what `--json` prints); `format_summary` as lines.
Rules, stated once:

- Window: the TCP overlap window (docs/metrics.md) when every run has TCP traffic, else the whole
  run; the summary names which.
- Media (per flow, pooled over the runs of a sweep point): OWD percentiles pooled over packets;
  loss = 1 − received / sent (pure loss, no jitter buffer); MOS = the E-model's mean over runs for
  each jitter buffer of ``jbs_ms``, the buffer with the highest mean (ties: the smaller) reported.
- TCP (per role: bulk, web, ftp): per run, delivered bytes (`tcp_flows.bytes`) of the role's
  connections over the time from their first SYN to their last end (the run's end for a transfer
  still running); goodput is the median over runs, completion the median over runs that finished
  every transfer (null when none did), finished = runs whose transfers all finished.

Computed from the Arrow tables with the metrics' native core (`_native.MediaSet`, the one
`jitterlab.metrics` uses) and numpy, without pandas: importing pandas and converting the tables
to it was most of the closing summary's cost (docs/performance.md, issue 31), and `jitterlab
sweep` needs pandas nowhere else. The figures are those of the metrics functions, to the last bit
(tests/test_summary.py compares the JSON with the pandas computation it replaced,
tests/_summary_pandas.py). A sweep whose runs computed their shares (`run_part`) is summarised
from them and its small tables in Python, without pyarrow or numpy (read natively: `_Cols`).

Over 600 lines: the summary's two paths (from the media rows, with numpy; from the runs' shares,
in Python) apply one set of rules through shared helpers, kept beside each other.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

from jitterlab import _lazy, _native
from jitterlab._codecs import CODECS

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
else:  # a sweep's worker computes its runs' shares (`run_part`) from native tables: neither is imported there
    np, pa = _lazy.module("numpy"), _lazy.module("pyarrow")

#: jitter buffers (ms) the summary's MOS is chosen from (the PAM 2013 study's set)
JBS_MS = (40.0, 60.0, 80.0, 100.0, 150.0, 200.0)
#: The media columns the summary reads (a sweep's table still in its file: these alone, not kept).
MEDIA_COLUMNS = ["run_id", "flow_id", "seq", "send_ns", "recv_ns", "size"]
#: The E-model's codec and base-delay window: `metrics.emodel_mos`'s defaults (a test holds them equal).
CODEC = "g711_plc"
BASE_WINDOW_MS = 2000.0
#: What pandas showed (and `--json` printed) for a null in a text or nullable-integer column.
NA = "<NA>"
#: Columns of `runs` that are not a sweep point's parameters.
_NOT_PARAMS = {"run_id", "scenario", "seed", "source", "tcp_start_ns", "tcp_end_ns", "end_ns", "events",
               "jitterlab_version", "replication", "point", "t0_epoch_ns"}


def _num(x: Any) -> float | None:
    """A float for JSON, None for NaN/null."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _arrow(tables: Mapping[str, Any], name: str, columns: list[str] | None = None) -> pa.Table:
    """Table `name` as Arrow; with `columns`, those only (a sweep's table still in its file is
    read for them alone and not kept). A mapping of pandas DataFrames is converted."""
    from jitterlab._native import TableError

    arrow = getattr(tables, "arrow", None)
    if arrow is None:
        from jitterlab.tables import to_arrow

        t = to_arrow(tables[name])
    elif columns is not None and hasattr(arrow, "read_columns"):
        missing = [c for c in columns if c not in arrow.column_names(name)]
        if missing:
            raise TableError(f"{name}: missing column '{missing[0]}'")
        return arrow.read_columns(name, columns)
    else:
        t = arrow[name]
    if columns is None:
        return t
    missing = [c for c in columns if c not in t.column_names]
    if missing:
        raise TableError(f"{name}: missing column '{missing[0]}'")
    return t.select(columns)


def _rows(tables: Mapping[str, Any], name: str) -> int:
    """Rows of table `name` (a sweep's table still in its file: from the file's footer)."""
    arrow = getattr(tables, "arrow", None)
    if arrow is None:
        return len(tables[name])
    return arrow.num_rows(name) if hasattr(arrow, "num_rows") else arrow[name].num_rows


def _values(c: pa.ChunkedArray | pa.Array, dtype: type | None = None) -> np.ndarray:
    """A fixed-width column's values as a numpy array of `dtype` (int64 unless given; a null's
    slot holds whatever it holds: read only where valid), straight from its buffer: pyarrow's
    `to_numpy` imports pandas."""
    dtype = np.int64 if dtype is None else dtype
    if c.type != pa.from_numpy_dtype(dtype):
        c = c.cast(pa.from_numpy_dtype(dtype))
    parts: list[np.ndarray] = [np.frombuffer(a.buffers()[1], dtype=dtype, count=len(a), offset=a.offset * np.dtype(dtype).itemsize)
             for a in (c.chunks if isinstance(c, pa.ChunkedArray) else [c]) if len(a)]
    # joined by numpy, not by pyarrow's combine_chunks: its allocator's first large blocks cost a
    # sweep's summary more system time (page faults) than its whole computation
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _valid(c: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Where a column is not null, as a bool array (from its validity bitmaps)."""
    parts: list[np.ndarray] = []
    for a in c.chunks if isinstance(c, pa.ChunkedArray) else [c]:
        bitmap = a.buffers()[0] if len(a) and a.null_count else None
        if bitmap is None:
            parts.append(np.ones(len(a), dtype=bool))
        else:
            bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
            parts.append(bits[a.offset:a.offset + len(a)].astype(bool))
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=bool)


def _ids(c: pa.ChunkedArray) -> np.ndarray:
    """An id column (run_id, flow_id: int64 in every table jitterlab writes) as int64."""
    return _values(c) if pa.types.is_integer(c.type) else np.asarray(c.to_pylist(), dtype=object)


def _lookup(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The position in `keys` (distinct) of each of `values`, -1 where none: through a table where
    they span a small range (run and flow ids do), else by sorting."""
    if not len(values) or not len(keys):
        return np.full(len(values), -1, dtype=np.int64)
    if values.dtype == np.int64 and keys.dtype == np.int64:
        lo, hi = int(min(values.min(), keys.min())), int(max(values.max(), keys.max()))
        if hi - lo < 1 << 22:
            table = np.full(hi - lo + 1, -1, dtype=np.int64)
            table[keys - lo] = np.arange(len(keys))
            return table[values - lo]
    order = np.argsort(keys, kind="stable")
    pos = np.minimum(np.searchsorted(keys[order], values), len(keys) - 1)
    return np.where(keys[order][pos] == values, order[pos], -1)


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (counted where they span a small range: no sort of every row;
    and no numpy.ma, which np.unique without its return options imports)."""
    if len(values) and values.dtype == np.int64:
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < 1 << 22:
            return np.flatnonzero(np.bincount(values - lo)).astype(np.int64) + lo
    return np.unique(values)


def _median(xs: list[float]) -> float:
    """numpy's median (the middle value, or the mean of the two middle ones: (a + b) / 2), without
    importing numpy.ma as `np.median` does on its first call."""
    v = sorted(xs)
    k = len(v) // 2
    return v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2


class _Cols:
    """A small table (`runs`, `flows`, `tcp_flows`: a row a run, flow or connection) as Python
    lists, from an Arrow table or a native one (`_native.NativeTable`, a sweep's combined file read
    by the native module): `jitterlab sweep`'s closing summary imports neither pyarrow nor numpy."""

    def __init__(self, t: Any):
        self.t = t
        self.native = isinstance(t, _native.NativeTable)
        self.column_names: list[str] = list(t.column_names)
        self.num_rows: int = int(t.num_rows)
        self._got: dict[str, list[Any]] = {}

    def col(self, name: str) -> list[Any]:
        got = self._got.get(name)
        if got is None:
            got = self._got[name] = self.t.to_pylist(name) if self.native else self.t.column(name).to_pylist()
        return got

    def kind(self, name: str) -> str:
        """"int", "float", "str" or another (as the column's Arrow type)."""
        if self.native:
            return str(self.t.column_kinds[self.column_names.index(name)])
        ty = self.t.schema.field(name).type
        return ("int" if pa.types.is_integer(ty) else "float" if pa.types.is_floating(ty)
                else "str" if pa.types.is_string(ty) or pa.types.is_large_string(ty) else "other")

    def null_count(self, name: str) -> int:
        return sum(v is None for v in self.col(name))


def _small(tables: Mapping[str, Any], name: str, columns: list[str] | None = None) -> _Cols:
    """Small table `name` (`_Cols`): held native, or its local file read by the native module,
    where it can be; else as `_arrow` gives it. With `columns`: TableError when one is missing."""
    from jitterlab._native import TableError
    from jitterlab.tables import LazyTables

    arrow = getattr(tables, "arrow", None)
    nt = arrow.native_table(name) if isinstance(arrow, LazyTables) else None
    if nt is None or "other" in nt.column_kinds:
        return _Cols(_arrow(tables, name, columns))
    missing = [c for c in columns or () if c not in nt.column_names]
    if missing:
        raise TableError(f"{name}: missing column '{missing[0]}'")
    return _Cols(nt)


def _label_values(runs: _Cols, name: str) -> list[Any]:
    """A column of `runs` as the values pandas had (jitterlab.tables.to_pandas): an integer
    column with nulls is float there (NaN) unless it is one of the nullable Int64 ones; a null in
    text or Int64 was pd.NA (`NA`); in a float column NaN."""
    from jitterlab.tables import NULLABLE

    vals, kind = runs.col(name), runs.kind(name)
    if kind == "float" or (kind == "int" and runs.null_count(name) and name not in NULLABLE):
        return [math.nan if v is None else float(v) for v in vals]
    if kind in ("int", "str"):
        return [NA if v is None else v for v in vals]
    return vals


def _same(vals: list[Any]) -> bool:
    """One value only (NaNs are one value, as pandas' `nunique(dropna=False)` counts them)."""
    return len({"nan" if isinstance(v, float) and math.isnan(v) else v for v in vals}) == 1


def _points(runs: _Cols | pa.Table) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """The sweep points in ascending order: their labels (`point` and every parameter column whose
    value is the same in all the point's runs, not per-replication draws), their run counts, and
    each run's point index. One point of every run when `runs` has no `point` column."""
    runs = runs if isinstance(runs, _Cols) else _Cols(runs)
    if "point" not in runs.column_names:
        return [{}], [runs.num_rows], [0] * runs.num_rows
    point = [int(v) for v in runs.col("point")]
    order = sorted(set(point))
    pos = {p: k for k, p in enumerate(order)}
    code = [pos[p] for p in point]
    params = [c for c in runs.column_names if c not in _NOT_PARAMS and not c.startswith("random.")]
    cols = {c: _label_values(runs, c) for c in params}
    members: list[list[int]] = [[] for _ in order]
    for i, k in enumerate(code):
        members[k].append(i)
    labels = []
    for pt, rows in zip(order, members):
        label: dict[str, Any] = {"point": pt}
        for c in params:
            v = cols[c]
            if _same([v[i] for i in rows]):
                label[c] = v[rows[0]]
        labels.append(label)
    return labels, [len(m) for m in members], code


def _means(values: list[float], group: list[int], n_groups: int) -> list[float]:
    """Per group, the mean of its non-NaN values (NaN where none), summed in row order with
    Kahan's compensation as pandas' groupby mean sums (pandas/_libs/groupby.pyx, group_mean), so
    the MOS is the one the pandas summary printed, to the last bit."""
    s, comp, n = [0.0] * n_groups, [0.0] * n_groups, [0] * n_groups
    for v, g in zip(values, group):
        if v != v:  # NaN
            continue
        y = v - comp[g]
        t = s[g] + y
        c = t - s[g] - y
        comp[g] = 0.0 if c != c else c  # an infinite value: no compensation (pandas GH#50367)
        s[g] = t
        n[g] += 1
    return [s[g] / n[g] if n[g] else math.nan for g in range(n_groups)]


def _flow_row(fid: int, names: Mapping[int, str], sent: int, recv: int, median_s: float, p99_s: float,
              by_jb: list[tuple[float, float]]) -> dict[str, Any]:
    """One media flow of one point; `by_jb`: (jitter buffer in s, mean MOS), ascending buffers."""
    row: dict[str, Any] = {"flow_id": fid, "name": names.get(fid, f"flow {fid}")}
    row["packets"] = sent
    row["owd_median_ms"] = _num(median_s * 1e3)
    row["owd_p99_ms"] = _num(p99_s * 1e3)
    row["loss"] = _num(1.0 - recv / sent) if sent else None
    by_jb = [(jb, m) for jb, m in by_jb if not math.isnan(m)]
    if by_jb:
        top = max(m for _, m in by_jb)
        best_jb, best = next((jb, m) for jb, m in by_jb if m == top)
        row["best_jb_ms"] = round(best_jb * 1e3, 6)
        row["mos"] = _num(best)
        # equal at every buffer (a call past saving: MOS 1 throughout) has no best buffer to name
        row["mos_same_at_every_jb"] = bool(len(by_jb) > 1 and top == min(m for _, m in by_jb))
    else:
        row["best_jb_ms"], row["mos"], row["mos_same_at_every_jb"] = None, None, False
    return row


def _run_times(runs: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    from jitterlab._native import TableError

    if name not in runs.column_names:
        raise TableError(f"runs: missing column '{name}'")
    return _values(runs.column(name)), _valid(runs.column(name))


#: Media rows prepared at once (whole points; at least one): a batch's arrays are a few MB, and
#: the next batch reuses their memory, where one table-wide batch faulted in fresh pages for every
#: copy (on the 126-point vs-ns2 sweep, the system time of those faults was most of the summary's CPU).
BATCH_ROWS = 1 << 18


def _stretches(t: pa.Table, runs: pa.Table) -> tuple[list[list[np.ndarray]], np.ndarray, np.ndarray]:
    """The table's record batches as numpy columns (flow, seq, send, recv, size, received: views
    of Arrow's buffers where they can be), its stretches of rows of one (run, flow), one row each
    of (batch, first row, rows, run's position in `runs` (-1 where it is not there), flow's
    position in the flows), and the flows (distinct flow ids, ascending). A stretch's flow is
    looked up once, not a row at a time: a run's rows are in flow order (every table jitterlab
    writes), so its stretches are as many as its flows."""
    keys = _ids(runs.column("run_id"))
    cols, rows = [], []
    for rb in t.to_batches():
        if not rb.num_rows:
            continue
        cols.append([_values(rb.column(c)) for c in ("flow_id", "seq", "send_ns", "recv_ns", "size")] + [_valid(rb.column("recv_ns"))])
        rid, fid = _ids(rb.column("run_id")), cols[-1][0]
        first = np.concatenate([[0], np.flatnonzero((rid[1:] != rid[:-1]) | (fid[1:] != fid[:-1])) + 1])
        n = np.diff(np.append(first, len(rid)))
        rows.append(np.stack([np.full(len(first), len(cols) - 1), first, n, _lookup(rid[first], keys), fid[first]], axis=1))
    if not rows:
        return cols, np.zeros((0, 5), dtype=np.int64), np.zeros(0, dtype=np.int64)
    stretch = np.concatenate(rows)
    flows = _distinct(stretch[:, 4])
    stretch[:, 4] = _lookup(stretch[:, 4], flows)
    return cols, stretch, flows


def _batches(stretch: np.ndarray, point: np.ndarray | list[int]) -> list[np.ndarray]:
    """The stretches grouped into batches of whole points (ascending), each batch's in run order."""
    point = np.asarray(point, dtype=np.int64)
    stretch = stretch[stretch[:, 3] >= 0]  # rows of runs not in the table are not the summary's
    pt = point[stretch[:, 3]]
    order = np.lexsort((np.arange(len(stretch)), stretch[:, 3], pt))  # by point, then run, then row
    stretch, pt = stretch[order], pt[order]
    out, lo, rows = [], 0, 0
    for i in range(len(stretch)):
        rows += int(stretch[i, 2])
        if i + 1 == len(stretch) or (pt[i + 1] != pt[i] and rows >= BATCH_ROWS):
            b = stretch[lo:i + 1]
            out.append(b[np.lexsort((np.arange(len(b)), b[:, 3]))])
            lo, rows = i + 1, 0
    return out


def _media(t: pa.Table, runs: pa.Table, point: list[int], n_points: int, names: Mapping[int, str], window: str,
           jbs_ms: tuple[float, ...]) -> dict[int, list[dict[str, Any]]]:
    """The media rows of every point, by point index, each point's flows in ascending order.

    A prepared table per batch of points; its "runs" are the (run, flow) pairs, so each metric is
    one call whose groups are (flow, point): every figure is a function of one stream (run, flow)
    or pools a group's streams, so the pairs give what each flow prepared alone gives, and a
    point's streams are in one batch, in run order (the order the MOS means sum them in)."""
    pt = np.asarray(point, dtype=np.int64)
    cols, stretch, flows = _stretches(t, runs)
    nf = len(flows)
    (ts, ts_ok), (te, te_ok) = _run_times(runs, "tcp_start_ns"), _run_times(runs, "tcp_end_ns")
    rep = lambda a: np.ascontiguousarray(np.repeat(a, nf))  # noqa: E731  (a run's value for each of its pairs)
    times = (rep(ts), rep(ts_ok), rep(te), rep(te_ok))
    n_groups = nf * n_points
    group = (np.arange(nf)[None, :] * n_points + pt[:, None]).ravel().astype(np.uint32)  # pair r * nf + f
    q = np.full((n_groups, 2), np.nan)
    sent, recv = np.zeros(n_groups, dtype=np.int64), np.zeros(n_groups, dtype=np.int64)
    jb_ns, jbs, jb_code = _jb_codes(jbs_ms)
    c = CODECS[CODEC]
    mos, mos_group = [], []
    for b in _batches(stretch, pt):
        # a stretch's rows are of one (run, flow) pair: joined by the native module into its
        # prepared table (no numpy concatenation, no copy of one)
        flow, seq, send, recv_ns, size, received = ([cols[k][j][lo:lo + n] for k, lo, n, *_ in b.tolist()] for j in range(6))
        ms = _native.MediaSet.from_chunks((b[:, 3] * nf + b[:, 4]).tolist(), flow, seq, send, recv_ns, received, size, *times)
        # the batch's (flow, point)s; `_distinct`, not np.unique, whose plain form imports numpy.ma (~20 ms)
        in_batch = _distinct(group[(_distinct(b[:, 3])[:, None] * nf + np.arange(nf)).ravel()].astype(np.int64))
        q[in_batch] = ms.pooled_quantiles("owd", window, 0, 0, group, n_groups, _PROBS)["quantiles"].reshape(n_groups, 2)[in_batch]
        rtp = ms.rtp_summary(window, 0, 0)
        sg = group[ms.streams()["run"]].astype(np.int64)  # each stream's (flow, point)
        np.add.at(sent, sg, rtp["sent"].astype(np.int64))
        np.add.at(recv, sg, rtp["received"].astype(np.int64))
        mos.append(np.asarray(ms.emodel(window, 0, 0, int(round(BASE_WINDOW_MS * 1e6)), jb_ns, float(c["ie"]), float(c["bpl"]),
                                        float(c["delay_ms"]), None)["mos"], dtype=np.float64))
        mos_group.append(np.repeat(sg, len(jb_ns)) * len(jbs) + np.tile(jb_code, len(sg)))
    if not mos:
        return {}
    return _media_rows(flows.tolist(), n_points, names, sent.tolist(), recv.tolist(), q.tolist(), np.concatenate(mos).tolist(),
                       np.concatenate(mos_group).tolist(), jbs.tolist())


def _media_rows(flows: list[int], n_points: int, names: Mapping[int, str], sent: list[int], recv: list[int], q: list[list[float]],
                mos: list[float], mos_group: list[int], jbs: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The media rows by point index from the figures of each group (flow f, point p: group f *
    n_points + p): packets sent and received, OWD median and p99 (`q`), and every stream's MOS at
    each jitter buffer (`mos`, its group and buffer in `mos_group`, streams in run order)."""
    n_groups, nj = len(flows) * n_points, len(jbs)
    mean = _means(mos, mos_group, n_groups * nj)
    has = [False] * n_groups
    for gj in mos_group:
        has[gj // nj] = True
    jb_s = [j / 1e9 for j in jbs]
    out: dict[int, list[dict[str, Any]]] = {}
    for f in range(len(flows)):
        for pt in range(n_points):
            g = f * n_points + pt
            if has[g]:  # the points where this flow has streams
                by_jb = list(zip(jb_s, mean[g * nj:(g + 1) * nj]))
                out.setdefault(pt, []).append(_flow_row(int(flows[f]), names, int(sent[g]), int(recv[g]), float(q[g][0]), float(q[g][1]), by_jb))
    return out


#: Sweeps (their ids) in which this process has run a run without TCP: the summary's window is
#: then the whole run, so the later runs' parts are computed for that window alone (`run_part`).
_NO_TCP: set[str] = set()
#: The OWD quantiles of the summary.
_PROBS = [0.5, 0.99]


_JB_CODES: dict[tuple[float, ...], tuple[list[int], np.ndarray, np.ndarray]] = {}


def _jb_codes(jbs_ms: tuple[float, ...]) -> tuple[list[int], np.ndarray, np.ndarray]:
    """The jitter buffers in ns as given, the distinct ones ascending, each given one's position
    there (computed once a set: a sweep's every run asks)."""
    got = _JB_CODES.get(jbs_ms)
    if got is None:
        jb_ns = _jb_ns(jbs_ms)
        jbs, jb_code = np.unique(np.asarray(jb_ns, dtype=np.int64), return_inverse=True)  # ascending, as pandas grouped
        got = _JB_CODES[jbs_ms] = (jb_ns, jbs, jb_code)
    return got


def _jb_ns(jbs_ms: tuple[float, ...]) -> list[int]:
    """The jitter buffers in ns, as given."""
    return [int(round(float(j) * 1e6)) for j in jbs_ms]


def run_part(tables: Mapping[str, pa.Table], sweep_id: str, alone: bool, jbs_ms: tuple[float, ...] = JBS_MS,
             whole_run: bool = False) -> dict[str, Any] | None:
    """One run's share of a sweep's summary, computed while the run's rows are in memory (by
    whoever ran it: `sweep.run(..., summary=True)`), so that `summarize` reads no media row
    (docs/performance.md, issue 31). Per media stream of the run (one a flow, ascending): for the
    window the summary will use, the packets sent and received, the E-model's MOS at each jitter
    buffer and, when the run is its point's only one (`alone`), the OWD's median and 99th
    percentile (its point's pooled ones), else the OWD values to pool at the close. Every figure
    is a function of one stream, or pools the point's, so it is the one `_media` computes from
    the rows. The window: the whole run for a run without TCP, or once this process has run one
    in this sweep (the summary's window is then the whole run); else the TCP overlap window. A
    part without the window the close needs (a sweep whose runs without TCP came after others)
    makes `summarize` compute from the rows instead. `whole_run`: the sweep expects runs without
    TCP (its cost estimate found a point without TCP segments), so the window is the whole run from
    this run on. None: no part (a table or column missing)."""
    if whole_run:
        _NO_TCP.add(sweep_id)
    runs, t = tables.get("runs"), tables.get("media_packets")
    if runs is None or runs.num_rows != 1 or t is None or any(c not in t.column_names for c in MEDIA_COLUMNS):
        return None
    if "tcp_start_ns" not in runs.column_names or "tcp_end_ns" not in runs.column_names:
        return None
    if isinstance(runs, _native.NativeTable) and isinstance(t, _native.NativeTable):
        return _run_part_native(runs, t, sweep_id, alone, jbs_ms)
    if runs.column("tcp_start_ns").null_count:
        _NO_TCP.add(sweep_id)
    window = "all" if sweep_id in _NO_TCP else "overlap"
    cols = [[_values(rb.column(c)) for c in ("flow_id", "seq", "send_ns", "recv_ns", "size")] + [_valid(rb.column("recv_ns"))]
            for rb in t.select(MEDIA_COLUMNS).to_batches() if rb.num_rows]
    if not cols:
        return {"window": window, "flows": np.zeros(0, dtype=np.int64)}
    flow, seq, send, recv_ns, size, received = ([c[j] for c in cols] for j in range(6))
    start, end = (runs.column(name)[0].as_py() for name in ("tcp_start_ns", "tcp_end_ns"))
    c = CODECS[CODEC]
    # in one native call: the prepared table (a stream a flow), RTP counts, E-model, OWD quantiles
    # (or values): what MediaSet.from_chunks, rtp_summary, emodel and pooled_quantiles give
    part: dict[str, Any] = {"window": window}
    part.update(_native.run_share(flow, seq, send, recv_ns, received, size, start, end, window, int(round(BASE_WINDOW_MS * 1e6)),
                                  _jb_codes(jbs_ms)[0], float(c["ie"]), float(c["bpl"]), float(c["delay_ms"]), _PROBS if alone else None))
    if alone:
        part["q"] = part.pop("quantiles")  # flow-major, two a flow
    return part


def _run_part_native(runs: Any, t: Any, sweep_id: str, alone: bool, jbs_ms: tuple[float, ...]) -> dict[str, Any]:
    """`run_part` of a run's tables kept native (`_native.NativeTable`): its media rows read in
    place by `_native.run_share_native`, the part's arrays `array.array`s (neither numpy nor
    pyarrow is imported); "q" holds the quantiles flat (flow-major, two a flow)."""
    import array

    start, end = runs.to_pylist("tcp_start_ns")[0], runs.to_pylist("tcp_end_ns")[0]
    if start is None:
        _NO_TCP.add(sweep_id)
    window = "all" if sweep_id in _NO_TCP else "overlap"
    if not t.num_rows:
        return {"window": window, "flows": array.array("q")}
    c = CODECS[CODEC]
    part: dict[str, Any] = {"window": window}
    part.update(_native.run_share_native(t, start, end, window, int(round(BASE_WINDOW_MS * 1e6)), _jb_ns(jbs_ms), float(c["ie"]),
                                         float(c["bpl"]), float(c["delay_ms"]), _PROBS if alone else None))
    if alone:
        part["q"] = part.pop("quantiles")
    return part


def _media_from_parts(parts: list[dict[str, Any]], point: list[int], n_points: int, names: Mapping[int, str],
                      jbs_ms: tuple[float, ...]) -> dict[int, list[dict[str, Any]]]:
    """`_media`'s rows from the runs' parts (`run_part`; `parts[r]` of the run in row r of `runs`),
    in Python (a part's arrays: `array.array`s or numpy's; a few values a stream): numpy only to
    pool the OWD values of points with several runs."""
    jb_ns = _jb_ns(jbs_ms)
    jbs = sorted(set(jb_ns))  # ascending, as pandas grouped
    jb_code = [jbs.index(j) for j in jb_ns]
    flows = sorted({int(f) for p in parts for f in p["flows"]})
    fpos = {f: k for k, f in enumerate(flows)}
    n_groups = len(flows) * n_points
    q = [[math.nan, math.nan] for _ in range(n_groups)]
    sent, recv = [0] * n_groups, [0] * n_groups
    mos: list[float] = []
    mos_group: list[int] = []
    vals, val_group = [], []
    for r, p in enumerate(parts):  # in run order: the MOS means sum each group's streams in that order
        if not len(p["flows"]):
            continue
        sg = [fpos[int(f)] * n_points + point[r] for f in p["flows"]]  # each stream's (flow, point): distinct in a run
        for g, a, b in zip(sg, p["sent"], p["received"]):
            sent[g] += int(a)
            recv[g] += int(b)
        mos.extend(float(x) for x in p["mos"])  # stream-major: a value a jitter buffer
        mos_group.extend(g * len(jbs) + c for g in sg for c in jb_code)
        if "q" in p:
            flat = [float(x) for x in p["q"]]
            for k, g in enumerate(sg):
                q[g] = flat[2 * k:2 * k + 2]
        else:
            vals.append(p["owd"])
            val_group.append([sg[int(k)] for k in p["owd_stream"]])
    if vals:
        pooled = _native.grouped_quantiles(np.concatenate([np.asarray(v, dtype=np.float64) for v in vals]),
                                           np.asarray([g for vg in val_group for g in vg], dtype=np.uint32), n_groups, _PROBS)
        q = pooled["quantiles"].reshape(n_groups, 2).tolist()
    if not mos_group:
        return {}
    return _media_rows(flows, n_points, names, sent, recv, q, mos, mos_group, jbs)


def _usable_parts(tables: Mapping[str, Any], runs: _Cols, window: str, counts: list[int]) -> list[dict[str, Any]] | None:
    """The runs' parts in the order of `runs` when every run has one for `window` (and, where a
    part holds its quantiles, each point has one run); else None (computed from the rows)."""
    got = getattr(tables, "summary_parts", None)
    if got is None or not runs.num_rows or "run_id" not in runs.column_names:
        return None
    parts = [got.get(r) for r in runs.col("run_id")]
    if any(p is None or (len(p["flows"]) and p["window"] != window) for p in parts):
        return None
    if any("q" in p for p in parts) and any(n != 1 for n in counts):
        return None
    return parts


def _tcp(t: _Cols, runs: _Cols, point: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The TCP rows of every point, by point index, each point's roles in ascending order."""
    if not t.num_rows:  # a sweep with no TCP: a table of no runs (a run_id column only)
        return {}
    run_ids = runs.col("run_id")
    point_of = dict(zip(run_ids, point))
    run_end = dict(zip(run_ids, runs.col("end_ns"))) if "end_ns" in runs.column_names else {}
    rid = t.col("run_id")
    role = ["tcp" if r is None else str(r) for r in t.col("role")] if "role" in t.column_names else ["tcp"] * len(rid)
    syn, end, nbytes = (t.col(c) for c in ("syn_ns", "end_ns", "bytes"))
    rows: dict[tuple[str, Any], list[int]] = {}
    for i, key in enumerate(zip(role, rid)):
        if key[1] in point_of:
            rows.setdefault(key, []).append(i)
    acc: dict[tuple[int, str], dict[str, Any]] = {}
    for (r, x) in sorted(rows):
        idx = rows[(r, x)]
        a = acc.setdefault((point_of[x], r), {"connections": 0, "runs": 0, "done": 0, "bytes": 0, "good": [], "comp": []})
        delivered = sum(nbytes[i] for i in idx if nbytes[i] is not None)
        a["connections"] += len(idx)
        a["runs"] += 1
        a["bytes"] += delivered
        good, comp = _tcp_run([syn[i] for i in idx], [end[i] for i in idx], delivered, run_end.get(x))
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
            "goodput_mbps": _num(_median(a["good"]) / 1e6) if a["good"] else None,
            "completion_s": _num(_median(a["comp"])) if a["comp"] else None,
        })
    return out


def _tcp_run(syn: list[Any], end: list[Any], delivered: int, run_end: Any) -> tuple[float | None, float | None]:
    """(goodput in bit/s, completion in s) of one run's connections of one role; None where the
    run gives none (no SYN, no end known; completion only when every connection finished)."""
    starts = [float(s) for s in syn if s is not None]
    if not starts:
        return None, None
    finished = all(e is not None for e in end)
    stop = float(max(end)) if finished else _num(run_end)
    if stop is None:
        return None, None
    span = (stop - min(starts)) / 1e9
    return (float(delivered) * 8 / span if span > 0 else None), (span if finished else None)


def summarize(tables: Mapping[str, Any], jbs_ms: tuple[float, ...] = JBS_MS) -> dict[str, Any]:
    """The summary of a run's or a sweep's tables (``media_packets``, ``tcp_flows``, ``runs``,
    ``flows`` when present; a `jitterlab.tables.Tables` or a mapping of DataFrames) as JSON-ready
    data: ``{"runs", "window", "points": [{"params", "runs", "media": [...], "tcp": [...]}]}``.
    See the module's docstring for the rules."""
    # the small tables as Python lists (`_Cols`): read by the native module where they can be
    runs = _small(tables, "runs")
    has = set(tables)
    names: dict[int, str] = {}
    if "flows" in has:
        fl = _small(tables, "flows", ["flow_id", "name"])
        names = {int(a): str(b) for a, b in zip(fl.col("flow_id"), fl.col("name"))}
    # every run has TCP (a table without the column counts as such, as before: the metrics then say what is missing)
    all_tcp = "tcp_start_ns" not in runs.column_names or runs.null_count("tcp_start_ns") == 0
    window = "overlap" if runs.num_rows and all_tcp else "all"
    labels, counts, point = _points(runs)
    media: dict[int, list[dict[str, Any]]] = {}
    parts = _usable_parts(tables, runs, window, counts)
    if parts is not None:  # computed by each run while its rows were in memory
        media = _media_from_parts(parts, point, len(labels), names, tuple(jbs_ms))
    elif "media_packets" in has and _rows(tables, "media_packets"):
        media = _media(_arrow(tables, "media_packets", MEDIA_COLUMNS), _arrow(tables, "runs"), point, len(labels), names, window,
                       tuple(jbs_ms))
    tcp = _tcp(_small(tables, "tcp_flows"), runs, point) if "tcp_flows" in has else {}
    return {"runs": int(runs.num_rows), "window": window,
            "points": [{"params": label, "runs": n, "media": media.get(k, []), "tcp": tcp.get(k, [])}
                       for k, (label, n) in enumerate(zip(labels, counts))]}


def _f(v: float | None, fmt: str, unit: str = "") -> str:
    return "n/a" if v is None else f"{v:{fmt}}{unit}"


def format_summary(s: Mapping[str, Any], max_points: int = 12) -> str:
    """The summary as a few lines for a terminal (at most ``max_points`` sweep points)."""
    win = "TCP overlap window" if s["window"] == "overlap" else "whole run"
    lines = [f"summary ({s['runs']} run{'s' if s['runs'] != 1 else ''}; media over the {win}):"]
    pts = s["points"]
    for p in pts[:max_points]:
        ind = "  "
        if p["params"]:
            lines.append("  " + ", ".join(f"{k}={v}" for k, v in p["params"].items()) + f" ({p['runs']} runs)")
            ind = "    "
        for m in p["media"]:
            lines.append(f"{ind}{m['name']}: OWD median {_f(m['owd_median_ms'], '.1f', ' ms')}, p99 {_f(m['owd_p99_ms'], '.1f', ' ms')}, "
                         f"loss {_f(None if m['loss'] is None else m['loss'] * 100, '.2f', ' %')}, "
                         f"MOS {_f(m['mos'], '.2f')} "
                         + ("(the same at every JB)" if m.get("mos_same_at_every_jb") else f"(best JB {_f(m['best_jb_ms'], 'g', ' ms')})"))
        for t in p["tcp"]:
            lines.append(f"{ind}{t['role']} TCP ({t['connections']} conn.): goodput {_f(t['goodput_mbps'], '.2f', ' Mbit/s')}, "
                         f"completion {_f(t['completion_s'], '.2f', ' s')}, finished in {t['finished_runs']}/{t['runs']} runs")
        if not p["media"] and not p["tcp"]:
            lines.append(f"{ind}(no media or TCP flows)")
    if len(pts) > max_points:
        lines.append(f"  … {len(pts) - max_points} more points (--json prints all)")
    return "\n".join(lines)
