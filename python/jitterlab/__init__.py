"""jitterlab: how competing TCP traffic hurts interactive media over deep-buffered bottlenecks."""
from jitterlab._native import (  # noqa: F401
    CaptureError,
    JitterlabError,
    ScenarioError,
    TableError,
    __version__,
)

__all__ = ["__version__", "JitterlabError", "ScenarioError", "TableError", "CaptureError"]

from jitterlab.sim import Result, simulate  # noqa: E402

__all__ += ["simulate", "Result"]
