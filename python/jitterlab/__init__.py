"""jitterlab: how competing TCP traffic hurts interactive media over deep-buffered bottlenecks.

The public names below are imported on first use (PEP 562): `import jitterlab` costs the native
module only, so a command such as `jitterlab sweep` (and every sweep worker it spawns) does not pay
for pandas and the metrics unless it uses them."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jitterlab._native import (  # noqa: F401
    CaptureError,
    JitterlabError,
    ScenarioError,
    TableError,
    __version__,
)

if TYPE_CHECKING:  # what the lazy names below are, for type checkers (mypy checks callers against these)
    from jitterlab import metrics as metrics
    from jitterlab.capture import analyze as analyze
    from jitterlab.capture import analyze_pairs as analyze_pairs
    from jitterlab.metrics import (acceptable_over_time as acceptable_over_time, best_jb as best_jb,
                                   emodel_mos as emodel_mos, ipdv_table as ipdv_table, jb_loss as jb_loss,
                                   levels_over_time as levels_over_time, loss_levels as loss_levels,
                                   owd_cdf as owd_cdf, rtp_summary as rtp_summary, tcp_summary as tcp_summary)
    from jitterlab.sim import Result as Result
    from jitterlab.sim import simulate as simulate
    from jitterlab.report import report as report  # the function; the module is callable the same way
    from jitterlab.sweep import sweep as sweep  # the function; the module is callable the same way
    from jitterlab.tables import Tables as Tables
    from jitterlab.tables import load as load

# public name -> (module, attribute in it; None: the module itself)
_LAZY: dict[str, tuple[str, str | None]] = {
    "metrics": ("jitterlab.metrics", None),
    **{n: ("jitterlab.metrics", n) for n in ("acceptable_over_time", "best_jb", "emodel_mos", "ipdv_table", "jb_loss",
                                              "levels_over_time", "loss_levels", "owd_cdf", "rtp_summary", "tcp_summary")},
    "simulate": ("jitterlab.sim", "simulate"),
    "Result": ("jitterlab.sim", "Result"),
    "analyze": ("jitterlab.capture", "analyze"),
    "analyze_pairs": ("jitterlab.capture", "analyze_pairs"),
    # `jitterlab.sweep(...)` runs a sweep (the module is callable)
    "sweep": ("jitterlab.sweep", None),
    # `jitterlab.report(...)` writes a report (the module is callable)
    "report": ("jitterlab.report", None),
    "Tables": ("jitterlab.tables", "Tables"),
    "load": ("jitterlab.tables", "load"),
}

__all__ = ["__version__", "JitterlabError", "ScenarioError", "TableError", "CaptureError"]
__all__ += ["metrics", "owd_cdf", "ipdv_table", "jb_loss", "loss_levels", "levels_over_time",
            "acceptable_over_time", "emodel_mos", "best_jb", "tcp_summary", "rtp_summary"]
__all__ += ["simulate", "Result"]
__all__ += ["analyze", "analyze_pairs"]
__all__ += ["sweep", "report", "Tables", "load"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        mod, attr = _LAZY[name]
        m = importlib.import_module(mod)
        value = m if attr is None else getattr(m, attr)
        globals()[name] = value  # later lookups skip this function
        return value
    try:  # any other submodule (jitterlab.sim, jitterlab.report ...), as a plain import would give
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
