"""Figure conventions: readable in grey (line styles and markers, not colour alone), a caption line
with scenario, parameters and replication count on every figure."""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Iterator

LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1))]
MARKERS = ["o", "s", "^", "D", "v", "x", "+", "*"]
GREYS = ["#000000", "#444444", "#777777", "#999999", "#222222", "#555555"]


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (files only; never a display), imported on first use:
    the import is half a second, which a preset spends during its runs (`warm`), not before them."""
    import matplotlib

    matplotlib.use("Agg")  # a no-op once set (matplotlib.use returns at once for the current backend)
    # SVG and PDF keep text as text (searchable, editable, the reader's font), not glyph paths
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["pdf.fonttype"] = 42
    import matplotlib.pyplot as plt

    return plt


def warm() -> threading.Thread:
    """Imports matplotlib in a background thread (the runs that come next run in worker
    processes; the client only waits for them) and returns the thread."""
    t = threading.Thread(target=pyplot, name="jitterlab-import-matplotlib", daemon=True)
    t.start()
    return t


def styles() -> Iterator[dict[str, Any]]:
    """Endless distinct (colour, linestyle, marker) combinations that survive grey printing."""
    plt = pyplot()
    for i in itertools.count():
        yield {"color": plt.get_cmap("tab10")(i % 10), "linestyle": LINESTYLES[i % len(LINESTYLES)],
               "marker": MARKERS[i % len(MARKERS)], "markevery": 0.1}


def new(width: float = 6.4, height: float = 4.0, ncols: int = 1, nrows: int = 1, **kw: Any):
    fig, ax = pyplot().subplots(nrows, ncols, figsize=(width, height), **kw)
    return fig, ax


def caption(fig: Any, text: str) -> None:
    """Adds the caption line (scenario, parameters, replications) under the axes."""
    fig.text(0.01, -0.02, text, ha="left", va="top", fontsize=7.5, color="#333333", wrap=True)


# ------------------------------------------------------------------------------------------------
# matplotlib -> plotly: every figure of every report (presets and `jitterlab report`) is drawn once
# with matplotlib (PNG/SVG files) and shown interactively from the same artists, so the two views
# cannot disagree.

_DASH = {"-": "solid", "--": "dash", "-.": "dashdot", ":": "dot", "solid": "solid", "dashed": "dash",
         "dashdot": "dashdot", "dotted": "dot"}
_SYMBOL = {"o": "circle", "s": "square", "^": "triangle-up", "v": "triangle-down", "D": "diamond", "d": "diamond",
           "x": "x", "+": "cross", "*": "star", ".": "circle", "<": "triangle-left", ">": "triangle-right", "p": "pentagon",
           "h": "hexagon"}
_SHAPE = {"steps-post": "hv", "steps-pre": "vh", "steps-mid": "hvh", "steps": "vh"}


def _rgba(c: Any, alpha: float | None = None) -> str:
    from matplotlib.colors import to_rgba

    r, g, b, a = to_rgba(c)
    if alpha is not None:
        a = alpha
    return f"rgba({int(round(r * 255))},{int(round(g * 255))},{int(round(b * 255))},{a:.3g})"


def _floats(a: Any) -> list[float | None]:
    import numpy as np

    arr: Any = np.ma.filled(np.ma.asarray(a, dtype=float), np.nan).ravel()
    return [None if not np.isfinite(v) else float(v) for v in arr]


def _dash(ls: Any) -> str:
    if isinstance(ls, str):
        return _DASH.get(ls, "solid")
    return "dash"  # an on/off sequence


def _text(s: str) -> str:
    import html as _html

    return _html.escape(s).replace("\n", "<br>")


#: height of plotly's toolbar at the top of a figure (px): titles are placed below it
MODEBAR_PX = 32


def to_plotly(fig: Any) -> dict[str, Any]:
    """The figure as a plotly figure dict (``data`` and ``layout``), built from its artists: lines
    (styles, steps), scatter points, bars (with error bars), filled areas (stack plots,
    fill_between), line collections (error bars, vlines), texts and annotations, titles, labels,
    log scales, limits, tick labels and legends. Raises ValueError for artists it cannot convert
    (images), so the caller can fall back to the PNG."""
    from matplotlib.image import AxesImage

    data: list[dict[str, Any]] = []
    layout: dict[str, Any] = {"template": "none", "font": {"size": 12}, "hovermode": "closest",
                              "margin": {"l": 60, "r": 20, "t": 40, "b": 50}, "annotations": [], "showlegend": False,
                              "legend": {"bgcolor": "rgba(255,255,255,0.8)", "bordercolor": "#999", "borderwidth": 1}}
    w, h = fig.get_size_inches()
    layout["width"], layout["height"] = int(w * 110), int(h * 110)
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    positions: list[tuple[float, ...]] = []
    # a figure-level legend (fig.legend) lists each label once, whichever panel draws it
    fig_labels = {t.get_text() for lg in getattr(fig, "legends", []) for t in lg.get_texts()}
    fig_shown: set[str] = set()
    if fig_labels:
        layout["showlegend"] = True
    for i, ax in enumerate(axes, start=1):
        if ax.images or any(isinstance(c, AxesImage) for c in ax.get_children()):
            raise ValueError("images are not converted")
        sx, sy, kx, ky, xa, ya = _plotly_axes(ax, i, positions)
        layout[kx], layout[ky] = xa, ya
        title = ax.get_title() or ax.get_title("left")
        if title:
            layout["annotations"].append({"text": f"<b>{_text(title)}</b>", "xref": f"{sx} domain", "yref": f"{sy} domain",
                                          "x": 0.5, "y": 1.0, "yanchor": "bottom", "showarrow": False, "font": {"size": 13}})
        legend = ax.get_legend()
        legend_labels = {t.get_text() for t in legend.get_texts()} if legend is not None else set()
        if legend_labels:
            layout["showlegend"] = True
        shown: set[str] = set()

        def base(name: str, group: str | None = None) -> dict[str, Any]:
            if name in legend_labels:
                show = name not in shown
                shown.add(name)
            else:
                show = name in fig_labels and name not in fig_shown
                fig_shown.add(name)
            return {"xaxis": sx, "yaxis": sy, "name": name if not name.startswith("_") else "",
                    "showlegend": show, "legendgroup": group or name}

        part_data, err_lines, err_label = _plotly_containers(ax, base)
        data += part_data
        data += _plotly_lines(ax, base, err_lines, err_label)
        data += _plotly_collections(ax, base, err_label)
        layout["annotations"] += _plotly_texts(ax, sx, sy, xa, ya)
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text():
        # plotly's toolbar (modebar) takes the top ~30 px of the figure: the title goes below it
        layout["title"] = {"text": _text(sup.get_text()), "x": 0.5, "xanchor": "center", "y": 1.0, "yref": "container",
                           "yanchor": "top", "pad": {"t": MODEBAR_PX}}
        layout["margin"]["t"] = MODEBAR_PX + 50
    return {"data": data, "layout": layout}


def _plotly_axes(ax: Any, i: int, positions: list[tuple[float, ...]]) -> tuple[str, str, str, str, dict[str, Any], dict[str, Any]]:
    """Panel `i`'s axis names and layouts (domain, twin axes, scale, limits, grid, tick labels);
    records its box in `positions` (a later panel in the same box is its twin)."""
    import numpy as np
    from matplotlib.ticker import FixedLocator

    sx, sy = ("x", "y") if i == 1 else (f"x{i}", f"y{i}")
    kx, ky = ("xaxis", "yaxis") if i == 1 else (f"xaxis{i}", f"yaxis{i}")
    pos = ax.get_position()
    dom = (pos.x0, pos.x1, pos.y0, pos.y1)
    xa: dict[str, Any] = {"domain": [max(0.0, float(pos.x0)), min(1.0, float(pos.x1))], "anchor": sy, "showline": True, "mirror": True,
                          "linecolor": "#333", "ticks": "outside", "zeroline": False,
                          "title": {"text": _text(ax.get_xlabel())}}
    ya: dict[str, Any] = {"domain": [max(0.0, float(pos.y0)), min(1.0, float(pos.y1))], "anchor": sx, "showline": True, "mirror": True,
                          "linecolor": "#333", "ticks": "outside", "zeroline": False,
                          "title": {"text": _text(ax.get_ylabel())}}
    twin = next((j for j, p in enumerate(positions, start=1) if np.allclose(p, dom)), None)
    if twin is not None:  # twinx: same box, own y axis on the right
        ya.update({"overlaying": "y" if twin == 1 else f"y{twin}", "side": "right", "mirror": False})
        xa.update({"overlaying": "x" if twin == 1 else f"x{twin}", "visible": False})
    positions.append(dom)
    for a, get_scale, get_lim, setter in ((xa, ax.get_xscale, ax.get_xlim, "x"), (ya, ax.get_yscale, ax.get_ylim, "y")):
        lo, hi = get_lim()
        if get_scale() == "log":
            a["type"] = "log"
            if lo > 0 and hi > 0:
                a["range"] = [float(np.log10(lo)), float(np.log10(hi))]
        else:
            a["range"] = [float(lo), float(hi)]
        grid = [gl for gl in (ax.xaxis if setter == "x" else ax.yaxis).get_gridlines() if gl.get_visible()]
        a["showgrid"] = bool(grid)
        a["gridcolor"] = "#e4e4e4"
        axis = ax.xaxis if setter == "x" else ax.yaxis
        params = axis.get_tick_params()
        if not (params.get("labelbottom", True) or params.get("labeltop", False)) if setter == "x" else \
                not (params.get("labelleft", True) or params.get("labelright", False)):
            a["showticklabels"] = False  # shared axes: matplotlib hides the inner tick labels
        if isinstance(axis.get_major_locator(), FixedLocator):  # set_xticks(ticks, labels)
            ticks = list(axis.get_ticklocs())
            labels = [t.get_text() for t in axis.get_ticklabels()]
            if len(ticks) == len(labels) and any(labels):
                a["tickmode"], a["tickvals"], a["ticktext"] = "array", [float(t) for t in ticks], [_text(t) for t in labels]
    return sx, sy, kx, ky, xa, ya


def _plotly_containers(ax: Any, base: Callable[..., dict[str, Any]]) -> tuple[list[dict[str, Any]], set[int], dict[int, str]]:
    """Panel `ax`'s bar traces, and its error-bar series: the ids of their cap lines (not drawn
    as lines) and the label each of their artists takes."""
    from matplotlib.container import BarContainer, ErrorbarContainer
    from matplotlib.patches import Rectangle

    data: list[dict[str, Any]] = []
    bar_patches: set[int] = set()
    err_lines: set[int] = set()
    # an error-bar series carries its label on the container (its line and bars are
    # "_nolegend_"): the line takes the label, the bars the same name and legend group
    err_label: dict[int, str] = {}
    for cont in ax.containers:
        if isinstance(cont, BarContainer):
            rects = [r for r in cont.patches if isinstance(r, Rectangle)]
            bar_patches.update(id(r) for r in rects)
            if not rects:
                continue
            horizontal = getattr(cont, "orientation", "vertical") == "horizontal"
            label = cont.get_label() or ""
            r0 = rects[0]
            tr: dict[str, Any] = {**base(label), "type": "bar", "marker": {"color": _rgba(r0.get_facecolor()),
                                  "line": {"color": _rgba(r0.get_edgecolor()), "width": float(r0.get_linewidth())}}}
            if r0.get_hatch():
                tr["marker"]["pattern"] = {"shape": {"/": "/", "\\": "\\", "x": "x", "-": "-", "|": "|", "+": "+", ".": "."}.get(r0.get_hatch()[0], "")}
            if horizontal:
                tr.update(orientation="h", y=[r.get_y() + r.get_height() / 2 for r in rects], x=[r.get_width() for r in rects],
                          base=[r.get_x() for r in rects], width=[r.get_height() for r in rects])
            else:
                tr.update(x=[r.get_x() + r.get_width() / 2 for r in rects], y=[r.get_height() for r in rects],
                          base=[r.get_y() for r in rects], width=[r.get_width() for r in rects])
            data.append(tr)
        elif isinstance(cont, ErrorbarContainer):
            line, caps, bars = cont.lines
            for c in caps:
                err_lines.add(id(c))
            label = str(cont.get_label() or "")
            for art in ([line] if line is not None else []) + list(bars):
                err_label[id(art)] = label
    return data, err_lines, err_label


def _plotly_lines(ax: Any, base: Callable[..., dict[str, Any]], err_lines: set[int], err_label: dict[int, str]) -> list[dict[str, Any]]:
    """Panel `ax`'s lines (styles, steps, markers; axvline / axhline across the limits)."""
    import numpy as np
    from matplotlib.lines import Line2D

    data: list[dict[str, Any]] = []
    for line in ax.get_lines():
        if not isinstance(line, Line2D) or not line.get_visible() or id(line) in err_lines:
            continue
        x: Any = line.get_xdata(orig=False)
        y: Any = line.get_ydata(orig=False)
        if line.get_transform() != ax.transData:
            # axvline / axhline: one coordinate is an axes fraction (0..1) -> the axis limits
            xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
            if xs.size == 2 and np.allclose(ys, [0, 1]) and xs[0] == xs[1]:
                y = np.array(ax.get_ylim())
            elif ys.size == 2 and np.allclose(xs, [0, 1]) and ys[0] == ys[1]:
                x = np.array(ax.get_xlim())
            else:
                continue
        label = err_label.get(id(line), str(line.get_label()))
        mk = line.get_marker()
        mode = "lines" if line.get_linestyle() not in ("None", "", " ") else ""
        marker: dict[str, Any] = {}
        if mk not in (None, "None", "", " "):
            mode = "lines+markers" if mode else "markers"
            marker = {"symbol": _SYMBOL.get(str(mk), "circle"), "size": max(4.0, float(line.get_markersize())),
                      "color": _rgba(line.get_markerfacecolor()) if line.get_markerfacecolor() not in ("none", None) else "rgba(0,0,0,0)",
                      "line": {"color": _rgba(line.get_markeredgecolor()), "width": 1}}
            me = line.get_markevery()
            if me is not None and len(x) > 50:
                marker["maxdisplayed"] = 12
        if not mode:
            continue
        tr = {**base(label), "type": "scatter", "mode": mode, "x": _floats(x), "y": _floats(y),
              "line": {"color": _rgba(line.get_color(), line.get_alpha()), "width": float(line.get_linewidth()),
                       "dash": _dash(line.get_linestyle()), "shape": _SHAPE.get(line.get_drawstyle(), "linear")}}
        if marker:
            tr["marker"] = marker
        data.append(tr)
    return data


def _plotly_collections(ax: Any, base: Callable[..., dict[str, Any]], err_label: dict[int, str]) -> list[dict[str, Any]]:
    """Panel `ax`'s collections: scatter points, line collections (error bars, vlines), filled areas."""
    import numpy as np
    from matplotlib.collections import LineCollection, PathCollection, PolyCollection

    data: list[dict[str, Any]] = []
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        label = str(coll.get_label())
        if id(coll) in err_label:  # error bars: their series' hover name and legend group (the entry
            label = err_label[id(coll)]  # is the line's, drawn first; bars alone (fmt="none") take it)
        if isinstance(coll, PathCollection):
            off: Any = coll.get_offsets()
            if len(off) == 0:
                continue
            fc: Any = np.atleast_2d(coll.get_facecolor())
            data.append({**base(label), "type": "scatter", "mode": "markers", "x": _floats(off[:, 0]), "y": _floats(off[:, 1]),
                         "marker": {"color": [_rgba(c) for c in fc] if len(fc) > 1 else _rgba(fc[0]) if len(fc) else "black",
                                    "size": 7}})
        elif isinstance(coll, LineCollection):
            lx: list[float | None] = []
            ly: list[float | None] = []
            for seg in coll.get_segments():
                lx += _floats(seg[:, 0]) + [None]
                ly += _floats(seg[:, 1]) + [None]
            cols: Any = np.atleast_2d(coll.get_color())
            data.append({**base(label), "type": "scatter", "mode": "lines", "x": lx, "y": ly, "hoverinfo": "x+y",
                         "line": {"color": _rgba(cols[0]) if len(cols) else "black", "width": float(np.atleast_1d(coll.get_linewidth())[0])}})
        elif isinstance(coll, PolyCollection):
            fc = np.atleast_2d(coll.get_facecolor())
            for k, path in enumerate(coll.get_paths()):
                v: Any = path.vertices
                data.append({**base(label), "type": "scatter", "mode": "lines", "fill": "toself", "x": _floats(v[:, 0]),
                             "y": _floats(v[:, 1]), "fillcolor": _rgba(fc[min(k, len(fc) - 1)]) if len(fc) else "rgba(0,0,0,0.2)",
                             "line": {"width": 0.5, "color": "#333"}, "hoveron": "points+fills"})
    return data


def _plotly_texts(ax: Any, sx: str, sy: str, xa: dict[str, Any], ya: dict[str, Any]) -> list[dict[str, Any]]:
    """Panel `ax`'s texts and annotations, placed in data or axes coordinates."""
    import numpy as np
    from matplotlib.text import Annotation

    anns: list[dict[str, Any]] = []
    for t in ax.texts:
        if not t.get_visible() or not t.get_text():
            continue
        if isinstance(t, Annotation):
            x, y = t.xy
            ref = t.xycoords if isinstance(t.xycoords, str) else "data"
        else:
            x, y = t.get_position()
            ref = "data" if t.get_transform() == ax.transData else "axes fraction"
        ann: dict[str, Any] = {"text": _text(t.get_text()), "x": float(x), "y": float(y), "showarrow": False,
                               "font": {"size": float(t.get_fontsize()), "color": _rgba(t.get_color())}}
        if ref == "data":
            ann.update(xref=sx, yref=sy)
            if ann["x"] > 0 and xa.get("type") == "log":
                ann["x"] = float(np.log10(ann["x"]))
            if ann["y"] > 0 and ya.get("type") == "log":
                ann["y"] = float(np.log10(ann["y"]))
        else:
            ann.update(xref=f"{sx} domain", yref=f"{sy} domain")
        if isinstance(t, Annotation) and t.get_anncoords() == "offset points":
            ox, oy = t.xyann
            ann.update(xshift=float(ox) * 1.4, yshift=float(oy) * 1.4)
        ann["xanchor"] = {"left": "left", "right": "right", "center": "center"}.get(t.get_horizontalalignment(), "left")
        if isinstance(t, Annotation) and t.get_anncoords() == "offset points":
            ann["xanchor"] = "left" if t.xyann[0] >= 0 else "right"
        anns.append(ann)
    return anns


def plotly_js() -> str:
    """plotly.js (minified) from the plotly Python package, to inline into reports (no CDN)."""
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


# ------------------------------------------------------------------------------------------------
# The standard figures of any output (`jitterlab report`), one function per figure, each taking
# the metric tables with a `group` column (one curve or bar set per group, in the order given).

#: Loss-period level colours, light (level 0 = acceptable) to dark (level 5): every level, level 0
#: included, stands out against the white background and in grey print (decreasing luminance).
LEVEL_COLORS = ["#9ecae1", "#fdd0a2", "#fd8d3c", "#d94801", "#8c2d04", "#3f007d"]


def dodge(i: int, n: int, width: float) -> float:
    """Offset of series i of n (within ±width/2) so markers at equal values sit side by side
    instead of on top of each other.

    >>> [dodge(i, 3, 6.0) for i in range(3)]
    [-2.0, 0.0, 2.0]
    """
    return (i - (n - 1) / 2) * width / max(n, 1)


_dodge = dodge


def legend_above(ax: Any, ncol: int, **kw: Any) -> Any:
    """A legend in one row above the axes, where it cannot cover data."""
    return ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=ncol, frameon=False, **{"fontsize": 8, **kw})


def label_points(ax: Any, xs: Any, ys: Any, labels: list[str], fontsize: float = 7) -> list[Any]:
    """Labels points without overprinting: each label takes the first of a ring of offsets
    around its point whose box overlaps no label placed before it and no labelled point; a label
    pushed away from its point gets a thin leader line. Call it after the axes' data, scales and
    limits are set (positions are measured on the drawn figure). Returns the annotations."""
    import numpy as np

    fig = ax.figure
    fig.canvas.draw()  # fixes the limits and the layout the boxes are measured in
    renderer = fig.canvas.get_renderer()
    pts = ax.transData.transform(np.column_stack([np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)]))
    scale = fig.dpi / 72.0  # points -> pixels
    r_mark = 4 * scale
    candidates = [(4, 4), (4, -11), (-4, 4), (-4, -11), (10, -3), (-10, -3)]
    candidates += [(dx * k, dy * k) for k in (2, 3, 4, 5) for dx, dy in ((6, 6), (6, -8), (-6, 6), (-6, -8), (10, 0), (-10, 0), (0, 9), (0, -12))]
    placed: list[Any] = []
    out = []
    for (px, py), text in zip(pts, labels):
        best = None
        xy = ax.transData.inverted().transform((px, py))
        for dx, dy in candidates:
            ann = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize,
                              ha="left" if dx >= 0 else "right")
            ann.update_positions(renderer)
            bb = ann.get_window_extent(renderer).expanded(1.05, 1.1)
            inside = ax.bbox.x0 <= bb.x0 and bb.x1 <= ax.bbox.x1 and ax.bbox.y0 <= bb.y0 and bb.y1 <= ax.bbox.y1
            clash = not inside or any(bb.overlaps(b) for b in placed) or any(
                bb.x0 - r_mark < qx < bb.x1 + r_mark and bb.y0 - r_mark < qy < bb.y1 + r_mark for qx, qy in pts)
            if not clash:
                best = (ann, bb, (dx, dy))
                break
            ann.remove()
        if best is None:  # nowhere free: the farthest ring
            dx, dy = candidates[-1]
            ann = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", fontsize=fontsize, ha="left" if dx >= 0 else "right")
            ann.update_positions(renderer)
            best = (ann, ann.get_window_extent(renderer), (dx, dy))
        ann, bb, (dx, dy) = best
        if abs(dx) > 10 or abs(dy) > 12:  # pushed away: a leader line back to the point
            ax.annotate("", xy, xytext=(dx, dy), textcoords="offset points",
                        arrowprops={"arrowstyle": "-", "color": "#777", "linewidth": 0.5, "shrinkA": 0, "shrinkB": 3})
        placed.append(bb)
        out.append(ann)
    return out


def cdf_figure(curves: list[tuple[str, Any, Any]], xlabel: str, title: str, log_x: bool = False) -> Any:
    """CDF lines: curves = [(label, x values, probabilities)]."""
    fig, ax = new()
    for (label, x, p), st in zip(curves, styles()):
        ax.plot(x, p, label=label, **st)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of packets ≤ x")
    ax.set_ylim(0, 1.0)
    if log_x:
        ax.set_xscale("log")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if curves:
        ax.legend(fontsize=8, loc="lower right")
    return fig


def spread_figure(series: list[tuple[str, Any, Any, Any, Any]], xlabel: str, ylabel: str, title: str,
                  dodge: float = 0.0, ylim: tuple[float, float] | None = None) -> Any:
    """Median with its 25th–75th percentile bar per x: series = [(label, x, median, p25, p75)];
    `dodge` spreads the series sideways (in x units) so equal values do not overprint."""
    import numpy as np

    fig, ax = new()
    n = len(series)
    for i, ((label, x, med, lo, hi), st) in enumerate(zip(series, styles())):
        x = np.asarray(x, dtype=float) + _dodge(i, n, dodge)
        med, lo, hi = (np.asarray(v, dtype=float) for v in (med, lo, hi))
        ax.errorbar(x, med, yerr=[med - lo, hi - med], label=label, capsize=3, color=st["color"],
                    linestyle=st["linestyle"], marker=st["marker"])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend(fontsize=8)
    return fig


def levels_figure(panels: list[tuple[str, Any]], title: str) -> Any:
    """Stacked loss-period levels over time, one panel per group: panels = [(label, frame with
    t_s and level_0 … level_5)]."""
    import numpy as np

    n = max(1, len(panels))
    fig, axs = new(width=6.4, height=1.9 * n + 0.6, nrows=n, sharex=True, squeeze=False)
    for ax, (label, g) in zip(axs[:, 0], panels):
        ax.stackplot(np.asarray(g["t_s"], dtype=float), *[np.asarray(g[f"level_{k}"], dtype=float) for k in range(6)],
                     labels=[f"level {k}" for k in range(6)], colors=LEVEL_COLORS, edgecolor="#333", linewidth=0.3)
        ax.set_ylabel("packets / replication")
        ax.set_title(label, fontsize=9)
        ax.grid(True, alpha=0.3)
    axs[0, 0].legend(fontsize=7, ncol=6, loc="upper center", bbox_to_anchor=(0.5, 1.45), frameon=False)
    axs[-1, 0].set_xlabel("time since the competing TCP started (s)")
    fig.suptitle(title)
    return fig


def points_figure(groups: list[tuple[str, Any]], ylabel: str, title: str, log_y: bool = False) -> Any:
    """Every value of each group as a point (spread sideways) with the group's median and
    25th–75th percentiles: groups = [(label, values)]."""
    import numpy as np

    fig, ax = new(width=max(6.4, 1.1 * len(groups) + 2))
    for i, ((label, v), st) in enumerate(zip(groups, styles())):
        v = np.asarray(v, dtype=float)
        v = v[np.isfinite(v)]
        if not len(v):
            continue
        off = (np.arange(len(v)) % 15 - 7) / 40.0
        ax.scatter(i + off, v, s=10, color=st["color"], alpha=0.6, label=label)
        q = np.percentile(v, [25, 50, 75])
        ax.errorbar([i + 0.3], [q[1]], yerr=[[q[1] - q[0]], [q[2] - q[1]]], color="black", marker="D", capsize=4)
    ax.set_xticks(range(len(groups)), [lab for lab, _ in groups], rotation=20, ha="right")
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel(ylabel)
    if log_y:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    return fig
