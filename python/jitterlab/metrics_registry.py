"""The media metrics as a registry (issue 29), the shape queue disciplines, congestion controls
and traffic kinds have in Rust: each entry owns its keys (the function's keyword parameters),
their defaults (the function's own) and units and validation (`ARGS`, shared by name), the
tables it reads and the columns it returns with their units; one line registers it, and
tests/test_metrics_registry.py loops over `REGISTRY`, so a new entry is tested by being
registered (recipe: docs/metrics.md "Adding a metric").

The functions are `jitterlab.metrics`'s, unchanged: ``REGISTRY["jb_loss"](media, runs, jbs_ms=[40])``
checks the keywords first (an unknown one, or a value in the wrong unit, raises an error naming
it) and then calls ``jitterlab.metrics.jb_loss``. Not registered: ``emodel_r`` and ``mos_from_r``
(arrays in, arrays out, no table).

>>> m = REGISTRY["jb_loss"]
>>> m.reads, m.arg("jbs_ms").unit, m.arg("jbs_ms").default
(('media_packets', 'runs'), 'ms', (40, 60, 80, 100, 150, 200))
>>> m.units["loss_rate"], m.units["jb_s"]
('fraction', 's')
>>> m.check({"jbs_ms": [0.04]})
Traceback (most recent call last):
...
ValueError: parameter 'jbs_ms': 0.04 ms is not a jitter buffer size; sizes are in milliseconds (did you mean 40?)
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab._metrics_core import _base_window_ns, _jbs_ns, _window

__all__ = ["Arg", "Metric", "ARGS", "COLUMN_UNITS", "REGISTRY", "register", "column_unit"]

Identity = Callable[[pd.DataFrame], bool]


# ----------------------------------------------------------------------------- arguments


def _positive(name: str) -> Callable[[Any], None]:
    def check(v: Any) -> None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ValueError(f"parameter '{name}': must be a positive number (ms), got {v!r}")
    return check


def _jbs_ms(v: Any) -> None:
    _jbs_ns(v)


def _base_window_ms(v: Any) -> None:
    _base_window_ns(v)


def _window_arg(v: Any) -> None:
    _window(v)


def _jb_ms(v: Any) -> None:
    if v is not None:
        _jbs_ns([v], "jb_ms")


def _by(v: Any) -> None:
    if v is None or isinstance(v, str):
        return
    if isinstance(v, (list, tuple)) and all(isinstance(c, str) for c in v):
        return
    raise TypeError(f"parameter 'by': expected None, a column name of runs or a list of them, got {v!r}")


def _q(v: Any) -> None:
    try:
        qs = [float(x) for x in v]
    except (TypeError, ValueError):
        raise TypeError(f"parameter 'q': expected quantiles in [0, 1], got {v!r}") from None
    if not qs or any(not 0.0 <= x <= 1.0 for x in qs):
        raise ValueError(f"parameter 'q': quantiles are fractions in [0, 1], got {v!r}")


def _points(v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < 2:
        raise ValueError(f"parameter 'points': need an integer of at least 2, got {v!r}")


def _codec(v: Any) -> None:
    M._codec(v)


def _params(v: Any) -> None:
    if v is not None and not isinstance(v, dict):
        raise TypeError(f"parameter 'params': expected None or a dict of G.107 parameters, got {v!r}")


def _per(v: Any) -> None:
    if v not in ("flow", "run"):
        raise ValueError("parameter 'per': 'flow' or 'run'")


@dataclass(frozen=True)
class Arg:
    """One keyword parameter: its unit ("ms", "fraction", "" when it has none), its check (raises
    an error naming the parameter), a value the check refuses (for the registry test) and, in an
    entry, the function's default (`ARGS` leaves it None)."""
    name: str
    unit: str
    check: Callable[[Any], None]
    bad: Any
    default: Any = None


#: Every keyword a metric may take, by name: unit, check, a refused value. Defaults are the functions'.
ARGS: dict[str, Arg] = {a.name: a for a in (
    Arg("jbs_ms", "ms", _jbs_ms, [0.04]),  # seconds, not ms
    Arg("jb_ms", "ms", _jb_ms, 0.04),
    Arg("base_window_ms", "ms", _base_window_ms, 0),
    Arg("interval_ms", "ms", _positive("interval_ms"), 0),
    Arg("bin_ms", "ms", _positive("bin_ms"), -20),
    Arg("span_ms", "ms", _positive("span_ms"), 0),
    Arg("window", "", _window_arg, "during"),
    Arg("by", "", _by, 42),
    Arg("q", "fraction", _q, [50]),  # percent, not a fraction
    Arg("points", "", _points, 1),
    Arg("codec", "", _codec, "opus"),
    Arg("params", "", _params, "slr=8"),
    Arg("per", "", _per, "stream"),
)}

# ----------------------------------------------------------------------------- columns

#: Units of the columns whose name has no unit suffix (``_ns``, ``_s``, ``_bps`` carry theirs).
COLUMN_UNITS: dict[str, str] = {
    "run_id": "id", "flow_id": "id", "seq": "seq", "start_seq": "seq", "source": "label",
    "packets": "packets", "pure": "packets", "late": "packets", "sent": "packets", "received": "packets",
    "lost": "packets", "length": "packets", "mean_length": "packets", "max_length": "packets",
    "loss_distance": "packets", "periods": "count", "replications": "count", "flows": "count",
    "bytes": "bytes", "bytes_received": "bytes", "level": "level",
    "loss_rate": "fraction", "loss_fraction": "fraction", "packet_error_rate": "fraction",
    "acceptable": "fraction", "p": "fraction", "median": "fraction", "p25": "fraction", "p75": "fraction",
    "burst_r": "ratio", "r": "R", "mos": "MOS",
    **{f"level_{k}": "packets/replication" for k in range(6)},
}
_SUFFIXES = (("_ns", "ns"), ("_bps", "bit/s"), ("_s", "s"))


def column_unit(column: str) -> str:
    """A column's unit: its name's suffix (``_ns``, ``_s``, ``_bps``), else `COLUMN_UNITS`."""
    for suffix, unit in _SUFFIXES:
        if column.endswith(suffix):
            return unit
    if column not in COLUMN_UNITS:
        raise KeyError(f"column {column!r} has no unit: name it with _ns/_s/_bps or add it to COLUMN_UNITS")
    return COLUMN_UNITS[column]


# ----------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Metric:
    """One registered metric. `columns` are those returned with ``by=None`` (a ``by`` puts its
    columns first); `identity`, where one exists, is a conservation law its output keeps."""
    name: str
    fn: Callable[..., pd.DataFrame]
    reads: tuple[str, ...]
    columns: tuple[str, ...]
    identity: Identity | None = None
    args: tuple[Arg, ...] = field(default=())

    @classmethod
    def of(cls, fn: Callable[..., pd.DataFrame], reads: str, columns: str, identity: Identity | None = None) -> Metric:
        """The entry of `fn`: tables ``reads`` (its positional parameters, space separated), its
        keyword parameters with their defaults from its signature and units and checks from `ARGS`."""
        tables = tuple(reads.split())
        sig = inspect.signature(fn).parameters
        keys = [n for n in sig if n not in ("media", "runs", "tcp_flows")]
        unknown = [n for n in keys if n not in ARGS]
        if unknown:
            raise KeyError(f"metric {fn.__name__!r}: parameter(s) {unknown} not in metrics_registry.ARGS")
        args = tuple(Arg(a.name, a.unit, a.check, a.bad, sig[n].default) for n in keys for a in [ARGS[n]])
        cols = tuple(columns.split())
        for c in cols:
            column_unit(c)
        return cls(fn.__name__, fn, tables, cols, identity, args)

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise TypeError(f"metric {self.name!r}: unknown parameter {name!r} (known: {', '.join(self.keys)})")

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.args)

    @property
    def defaults(self) -> dict[str, Any]:
        return {a.name: a.default for a in self.args}

    @property
    def units(self) -> dict[str, str]:
        return {c: column_unit(c) for c in self.columns}

    def check(self, kwargs: Mapping[str, Any]) -> None:
        """Refuse an unknown keyword or a value its `Arg` refuses; the error names the parameter."""
        for k, v in kwargs.items():
            self.arg(k).check(v)

    def __call__(self, *tables: Any, **kwargs: Any) -> pd.DataFrame:
        if len(tables) > len(self.reads):
            raise TypeError(f"metric {self.name!r}: takes the tables {', '.join(self.reads)} by position, "
                            "its parameters by keyword")
        self.check(kwargs)
        return self.fn(*tables, **kwargs)


REGISTRY: dict[str, Metric] = {}


def register(metric: Metric, into: dict[str, Metric] | None = None) -> Metric:
    """Add `metric` (to `REGISTRY` unless `into` names another); a name is registered once."""
    reg = REGISTRY if into is None else into
    if metric.name in reg:
        raise KeyError(f"metric {metric.name!r} is already registered")
    reg[metric.name] = metric
    return metric


# ----------------------------------------------------------------------------- identities


def _rows_sorted(cols: Sequence[str]) -> Identity:
    return lambda d: bool((np.diff(d[list(cols)].to_numpy(dtype=float), axis=1) >= 0).all())


def _jb_loss(d: pd.DataFrame) -> bool:  # JB loss >= pure loss; a larger JB never loses more late packets
    late = d.pivot(index=["run_id", "flow_id"], columns="jb_s", values="late").to_numpy()
    return bool((d["pure"] + d["late"] <= d["packets"]).all() and (d["loss_rate"] * d["packets"] >= d["pure"] - 1e-9).all()
                and (np.diff(late, axis=1) <= 0).all())


def _levels(d: pd.DataFrame) -> bool:  # a packet has level 0 exactly when it is not lost
    return bool(((d["level"] == 0) == ~d["lost"].astype(bool)).all() and d["level"].between(0, 5).all())


def _periods(d: pd.DataFrame) -> bool:
    return bool((d["length"] >= 1).all() and d["level"].between(1, 5).all() and (d["duration_s"] > 0).all())


def _period_stats(d: pd.DataFrame) -> bool:
    return bool((d["lost"] >= d["periods"]).all() and (d["max_length"] >= d["mean_length"]).all())


def _rtp(d: pd.DataFrame) -> bool:  # sent - received = lost, as a share
    per = (d["sent"] - d["received"]) / d["sent"]
    return bool((d["received"] <= d["sent"]).all() and np.allclose(per, d["packet_error_rate"]))


def _emodel(d: pd.DataFrame) -> bool:
    # G.107's R is not clipped (it may be negative); MOS is, to [1, 4.5]; Ta = base + JB + codec delay
    return bool(d["mos"].between(1.0, 4.5).all() and (d["ta_s"] >= d["jb_s"] + d["base_owd_s"] - 1e-12).all())


def _one_per_stream(d: pd.DataFrame) -> bool:
    return not d.duplicated(["run_id", "flow_id"]).any() and _emodel(d)


def _nonnegative(col: str) -> Identity:
    return lambda d: bool((d[col].dropna() >= 0).all())


# ----------------------------------------------------------------------------- the registry: one line each

MEDIA = "media_packets runs"
_PCT = " ".join(M.TABLE1_COLUMNS)
register(Metric.of(M.owd, MEDIA, "run_id flow_id seq send_ns owd_ns", _nonnegative("owd_ns")))
register(Metric.of(M.owd_percentiles, MEDIA, _PCT, _rows_sorted(M.TABLE1_COLUMNS)))
register(Metric.of(M.owd_cdf, MEDIA, "p owd_s", lambda d: bool((np.diff(d["owd_s"]) >= 0).all())))
register(Metric.of(M.ipdv, MEDIA, "run_id flow_id seq ipdv_ns"))
register(Metric.of(M.ipdv_table, MEDIA, _PCT, _rows_sorted(M.TABLE1_COLUMNS)))
register(Metric.of(M.interarrival_jitter, MEDIA, "run_id flow_id seq recv_ns jitter_ns", _nonnegative("jitter_ns")))
register(Metric.of(M.jitter_final, MEDIA, "run_id flow_id jitter_s", _nonnegative("jitter_s")))
register(Metric.of(M.base_delay, MEDIA, "run_id flow_id base_owd_ns source", _nonnegative("base_owd_ns")))
register(Metric.of(M.jb_loss, MEDIA, "run_id flow_id jb_s packets pure late loss_rate", _jb_loss))
register(Metric.of(M.jb_loss_summary, MEDIA, "jb_s replications median p25 p75", _rows_sorted(["p25", "median", "p75"])))
register(Metric.of(M.loss_levels, MEDIA, "run_id flow_id seq send_ns lost level", _levels))
register(Metric.of(M.loss_periods, MEDIA, "run_id flow_id start_seq length duration_s level loss_distance", _periods))
register(Metric.of(M.loss_period_stats, MEDIA, "run_id flow_id periods lost mean_length max_length", _period_stats))
register(Metric.of(M.levels_over_time, MEDIA, "t_s replications " + " ".join(f"level_{k}" for k in range(6))))
register(Metric.of(M.acceptable_over_time, MEDIA, "jb_s t_s acceptable"))
register(Metric.of(M.rtp_summary, MEDIA,
                   "run_id flow_id sent received bytes_received duration_s throughput_bps packet_error_rate", _rtp))
register(Metric.of(M.tcp_summary, "tcp_flows", "run_id flow_id bytes completion_s goodput_bps packet_error_rate"))
register(Metric.of(M.emodel_mos, MEDIA, "run_id flow_id jb_s base_owd_s loss_fraction burst_r ta_s r mos", _emodel))
register(Metric.of(M.best_jb, MEDIA, "run_id flow_id jb_s base_owd_s loss_fraction burst_r ta_s r mos", _one_per_stream))
