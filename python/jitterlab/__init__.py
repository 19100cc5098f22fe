"""jitterlab: how competing TCP traffic hurts interactive media over deep-buffered bottlenecks."""
from jitterlab._native import (  # noqa: F401
    CaptureError,
    JitterlabError,
    ScenarioError,
    TableError,
    __version__,
)

from jitterlab import metrics  # noqa: E402,F401
from jitterlab.metrics import (  # noqa: E402,F401
    acceptable_over_time,
    best_jb,
    emodel_mos,
    ipdv_table,
    jb_loss,
    levels_over_time,
    loss_levels,
    owd_cdf,
    rtp_summary,
    tcp_summary,
)

__all__ = ["__version__", "JitterlabError", "ScenarioError", "TableError", "CaptureError"]
__all__ += ["metrics", "owd_cdf", "ipdv_table", "jb_loss", "loss_levels", "levels_over_time",
            "acceptable_over_time", "emodel_mos", "best_jb", "tcp_summary", "rtp_summary"]

from jitterlab.sim import Result, simulate  # noqa: E402

__all__ += ["simulate", "Result"]

from jitterlab.capture import analyze, analyze_pairs  # noqa: E402

__all__ += ["analyze", "analyze_pairs"]

# One result type for every source; `jitterlab.sweep(...)` runs a sweep (the module is callable).
from jitterlab import sweep  # noqa: E402
from jitterlab.tables import Tables, load  # noqa: E402

__all__ += ["sweep", "Tables", "load"]
