"""The metrics registry (issue 29): one loop over `jitterlab.metrics_registry.REGISTRY` checks every
registered metric on the same small deterministic tables: identical output twice, exactly the
declared columns in the one column convention (groups as columns, units in names, shares in
[0, 1]), its conservation identity where it has one, and that an unknown keyword or a value in the
wrong unit raises an error naming the parameter. A new metric is tested by being registered:
docs/metrics.md "Adding a metric" is tried at the end on a throwaway metric."""
from __future__ import annotations

import doctest
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import jitterlab.metrics as M
import jitterlab.metrics_registry as R
from jitterlab.metrics_registry import ARGS, COLUMN_UNITS, REGISTRY, Metric, column_unit, register

import _metrics_fixtures as F


def _owds(seed: int) -> list[int | None]:
    """100 packets (2 s at 20 ms): 10 ms base, a queue building from 0.4 s to 1.6 s, a few lost."""
    rng = np.random.default_rng(seed)
    out: list[int | None] = []
    for i in range(100):
        t = 20 * i
        q = int(min(t - 400, 1600 - t) * 0.3) if 400 <= t < 1600 else 0
        out.append(None if i in (30 + seed, 31 + seed, 50, 70 + 2 * seed) else 10 + max(q, 0) + int(rng.integers(0, 5)))
    return out


def tables() -> dict[str, pd.DataFrame]:
    media = F.media(F.cbr(_owds(1), run=1) + F.cbr(_owds(2), run=2) + F.cbr(_owds(3), run=3))
    runs = F.runs({1: (400, 1600, {"cc": "cubic"}), 2: (400, 1600, {"cc": "bbr"}), 3: (400, 1600, {"cc": "bbr"})})
    tcp = pd.DataFrame({"run_id": [1, 2, 3, 3], "flow_id": pd.Series([9, 9, 9, 10], dtype="uint32"),
                        "syn_ns": [400 * F.MS] * 4,
                        "end_ns": pd.array([1600 * F.MS, 1500 * F.MS, None, 1200 * F.MS], dtype="Int64"),
                        "bytes": [1_000_000, 800_000, 500_000, 200_000], "segments_sent": [700, 560, 350, 140],
                        "drops": [7, 0, 3, 1]})
    return {"media_packets": media, "runs": runs, "tcp_flows": tcp}


def run(metric: Metric, **kwargs) -> pd.DataFrame:
    t = tables()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fixture has pre-TCP packets: no fallback may be needed
        return metric(*(t[name] for name in metric.reads), **kwargs)


def check_metric(metric: Metric) -> None:
    """Everything the registry promises of one entry; the loop and the recipe test both call it."""
    first, second = run(metric), run(metric)
    assert len(first) > 0, f"{metric.name}: empty on the fixture, nothing checked"
    assert_frame_equal(first, second)  # determinism
    assert tuple(first.columns) == metric.columns, f"{metric.name}: returned columns are not the declared ones"
    for col, unit in metric.units.items():
        if unit == "fraction":
            v = first[col].dropna().to_numpy(dtype=float)
            assert ((v >= 0) & (v <= 1)).all(), f"{metric.name}.{col}: a share outside [0, 1]"
        if unit in ("count", "bytes", "id", "seq", "level"):  # (ns and packets may be float: jitter_ns, mean_length)
            assert pd.api.types.is_integer_dtype(first[col].dtype), f"{metric.name}.{col}: {unit} not integer"
        if unit == "s":
            assert pd.api.types.is_float_dtype(first[col].dtype), f"{metric.name}.{col}: seconds not float"
    if metric.identity is not None:
        assert metric.identity(first), f"{metric.name}: its identity does not hold"
    if "by" in metric.keys:  # groups are columns, first
        grouped = run(metric, by="cc")
        assert tuple(grouped.columns) == ("cc", *metric.columns)
    with pytest.raises(TypeError, match=re.escape(f"'{'no_such_key'}'")):
        metric(*(tables()[n] for n in metric.reads), no_such_key=1)
    for arg in metric.args:
        with pytest.raises((TypeError, ValueError), match=re.escape(f"parameter '{arg.name}'")):
            metric(*(tables()[n] for n in metric.reads), **{arg.name: arg.bad})


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_registered_metric(name):
    check_metric(REGISTRY[name])


def test_the_registry_holds_every_table_metric_and_their_defaults():
    table_metrics = set(M.__all__) - {"CODECS", "DEFAULT_JBS_MS", "TABLE1_COLUMNS", "percentile_column", "MetricsWarning",
                                      "Prepared", "prepare", "overlap_window", "emodel_r", "mos_from_r"}
    assert set(REGISTRY) == table_metrics
    jb = REGISTRY["jb_loss"]
    assert jb.defaults == {"jbs_ms": M.DEFAULT_JBS_MS, "window": "overlap", "base_window_ms": 2000.0}
    assert jb.arg("jbs_ms").unit == "ms" and jb.units["loss_rate"] == "fraction" and jb.units["jb_s"] == "s"
    assert REGISTRY["tcp_summary"].reads == ("tcp_flows",)


def test_checks_run_before_the_function_and_name_the_parameter():
    m = REGISTRY["loss_levels"]
    with pytest.raises(ValueError, match=r"parameter 'jb_ms': 0.04 ms .*\(did you mean 40\?\)"):
        m.check({"jb_ms": 0.04})
    with pytest.raises(TypeError, match=r"metric 'loss_levels': unknown parameter 'jbs_ms'"):
        m.check({"jbs_ms": [40]})
    m.check({"jb_ms": None, "window": (0, 10), "interval_ms": 20})  # accepted values pass
    t = tables()
    with pytest.raises(TypeError, match="parameters by keyword"):  # a positional parameter would skip the checks
        m(t["media_packets"], t["runs"], 0.04)


def test_registration_refuses_what_the_convention_forbids():
    with pytest.raises(KeyError, match="already registered"):
        register(REGISTRY["owd"])
    with pytest.raises(KeyError, match="column 'delay' has no unit"):
        Metric.of(M.owd, "media_packets runs", "run_id flow_id seq send_ns delay")

    def odd(media, runs=None, depth=3):
        return pd.DataFrame()
    with pytest.raises(KeyError, match=r"\['depth'\] not in metrics_registry.ARGS"):
        Metric.of(odd, "media_packets runs", "run_id")
    assert column_unit("goodput_bps") == "bit/s" and column_unit("owd_ns") == "ns"
    assert all(a.name in ARGS for m in REGISTRY.values() for a in m.args)


# --- docs/metrics.md "Adding a metric", its code block run as written -----------------------------

def recipe() -> str:
    text = (Path(__file__).resolve().parents[1] / "docs" / "metrics.md").read_text()
    section = text.split("## Adding a metric", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_adding_a_metric_recipe():
    assert "late_share" not in REGISTRY and "late_share" not in COLUMN_UNITS
    try:
        exec(compile(recipe(), "docs/metrics.md", "exec"), {"__name__": "recipe"})
        check_metric(REGISTRY["late_share"])  # the same loop every registered metric passes
        assert REGISTRY["late_share"].units["late_share"] == "fraction"
    finally:
        REGISTRY.pop("late_share", None)
        COLUMN_UNITS.pop("late_share", None)


def test_the_module_doctest():
    res = doctest.testmod(R, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 3 and res.failed == 0
