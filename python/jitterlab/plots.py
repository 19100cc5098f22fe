"""Figure conventions: readable in grey (line styles and markers, not colour alone), a caption line
with scenario, parameters and replication count on every figure."""
from __future__ import annotations

import itertools
from typing import Any, Iterator

import matplotlib

matplotlib.use("Agg")  # files only; never a display
import matplotlib.pyplot as plt  # noqa: E402

LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
MARKERS = ["o", "s", "^", "D", "v", "x", "+", "*"]
GREYS = ["#000000", "#444444", "#777777", "#999999", "#222222", "#555555"]


def styles() -> Iterator[dict[str, Any]]:
    """Endless distinct (colour, linestyle, marker) combinations that survive grey printing."""
    for i in itertools.count():
        yield {"color": plt.get_cmap("tab10")(i % 10), "linestyle": LINESTYLES[i % len(LINESTYLES)],
               "marker": MARKERS[i % len(MARKERS)], "markevery": 0.1}


def new(width: float = 6.4, height: float = 4.0, ncols: int = 1, nrows: int = 1, **kw: Any):
    fig, ax = plt.subplots(nrows, ncols, figsize=(width, height), **kw)
    return fig, ax


def caption(fig: Any, text: str) -> None:
    """Adds the caption line (scenario, parameters, replications) under the axes."""
    fig.text(0.01, -0.02, text, ha="left", va="top", fontsize=7.5, color="#333333", wrap=True)
