"""Interactive figures keep every legend entry and hover name of the static ones: for each figure
kind `jitterlab report` and the presets draw (CDF lines, median ± quartile error bars, stacked
levels, points with medians), the legend entries matplotlib shows equal the plotly traces shown
in the legend, in order, and every trace of a labelled series carries its name."""
from __future__ import annotations

import numpy as np
import pytest

from jitterlab import plots


def _mpl_entries(fig) -> list[str]:
    out = []
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is not None:
            out += [t.get_text() for t in leg.get_texts()]
    return out


def _plotly_entries(spec) -> list[str]:
    return [t["name"] for t in spec["data"] if t.get("showlegend")]


X = np.array([40.0, 60.0, 80.0, 100.0])
FIGURES = {
    "cdf": lambda: plots.cdf_figure([("audio only", [1, 2, 3], [0.2, 0.6, 1.0]), ("bulk", [2, 4, 8], [0.1, 0.5, 1.0])], "x", "t"),
    # identical series (equal medians): both entries must survive, and the series must not be moved apart
    "spread": lambda: plots.spread_figure([("RED", X, X / 10, X / 20, X / 5), ("CoDel", X, X / 10, X / 20, X / 5),
                                           ("bulk", X, X / 8, X / 16, X / 4)], "jb", "loss", "Loss vs JB"),
    "levels": lambda: plots.levels_figure([("n=1", _levels()), ("n=6", _levels())], "levels"),
    "points": lambda: plots.points_figure([("web", [1.0, 2.0, 3.0]), ("bulk", [2.0, 2.5, 4.0])], "goodput", "tcp"),
}


def _levels():
    import pandas as pd

    t = np.arange(0, 1, 0.02)
    return pd.DataFrame({"t_s": t, **{f"level_{k}": np.full(len(t), 1.0 / (k + 1)) for k in range(6)}})


@pytest.mark.parametrize("kind", sorted(FIGURES))
def test_interactive_legend_equals_static_legend(kind):
    fig = FIGURES[kind]()
    static = _mpl_entries(fig)
    spec = plots.to_plotly(fig)
    assert _plotly_entries(spec) == static
    # every entry names all traces of its group (hover shows the series, error bars included)
    for name in static:
        group = [t for t in spec["data"] if t.get("legendgroup") == name]
        assert group and all(t["name"] == name for t in group), (name, [t.get("name") for t in group])


def test_error_bar_series_keep_their_name_and_bars():
    fig = FIGURES["spread"]()
    spec = plots.to_plotly(fig)
    red = [t for t in spec["data"] if t.get("name") == "RED"]
    # the median line (legend entry) and its 25–75th percentile bars (hover only)
    assert sum(t["showlegend"] for t in red) == 1 and len(red) == 2
    line = next(t for t in red if t["showlegend"])
    assert line["x"] == [40.0, 60.0, 80.0, 100.0] and line["y"] == [4.0, 6.0, 8.0, 10.0]
    # equal medians are drawn at the same x: no sideways offset between RED and CoDel
    codel = next(t for t in spec["data"] if t.get("name") == "CoDel" and t["showlegend"])
    assert codel["x"] == line["x"] and codel["y"] == line["y"]


def test_bars_alone_hold_the_entry():
    fig, ax = plots.new()
    ax.errorbar([1, 2], [3, 4], yerr=[0.5, 0.5], fmt="none", label="only bars")
    ax.legend()
    assert _plotly_entries(plots.to_plotly(fig)) == ["only bars"]


def test_svg_has_real_text(tmp_path):
    fig = FIGURES["cdf"]()
    fig.savefig(tmp_path / "f.svg")
    svg = (tmp_path / "f.svg").read_text()
    assert ">audio only</text>" in svg or "audio only</text>" in svg


def test_report_pdf_on_request_and_progress(tmp_path):
    from conftest import ROOT, run_cli

    run_cli("simulate", str(ROOT / "scenarios" / "audio-bulk-access.toml"), "--out", str(tmp_path / "a"), "--set", "duration=8s", check=True)
    p = run_cli("report", str(tmp_path / "a"), "--out", str(tmp_path / "r"), check=True)
    assert "report: figure 1: owd_cdf" in p.stderr and not list((tmp_path / "r" / "figures").glob("*.pdf"))
    html = (tmp_path / "r" / "report.html").read_text()
    # the summary comes first
    assert html.index(">Summary<") < html.index(">Media delay<")
    p = run_cli("report", str(tmp_path / "a"), "--out", str(tmp_path / "p"), "--pdf", "--quiet", check=True)
    assert "figure 1" not in p.stderr
    pdf = tmp_path / "p" / "figures" / "owd_cdf.pdf"
    assert pdf.read_bytes().startswith(b"%PDF") and 'href="figures/owd_cdf.pdf"' in (tmp_path / "p" / "report.html").read_text()


def test_titles_sit_below_the_plotly_toolbar():
    spec = plots.to_plotly(FIGURES["levels"]())  # the figure with a title over several panels
    t = spec["layout"]["title"]
    assert t["yref"] == "container" and t["yanchor"] == "top" and t["pad"]["t"] >= plots.MODEBAR_PX
    assert spec["layout"]["margin"]["t"] >= plots.MODEBAR_PX + 13 * 1.5  # the title's line fits under the toolbar


def _legend_check(monkeypatch):
    """Report.figure wrapped: every figure a report adds is compared (static legend entries ==
    interactive ones) before it is saved; returns the list of (figure, static, interactive)."""
    from jitterlab import report as rp

    seen: list[tuple[str, list[str], list[str]]] = []
    orig = rp.Report.figure

    def figure(self, fig, name, caption):
        static = _mpl_entries(fig) + [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        try:
            got = _plotly_entries(plots.to_plotly(fig))
        except ValueError:  # embedded as PNG: its legend is the static one
            got = static
        seen.append((name, static, got))
        return orig(self, fig, name, caption)

    monkeypatch.setattr(rp.Report, "figure", figure)
    return seen


@pytest.mark.parametrize("preset", ["pam2013", "rwnd", "elastic", "mitigations"])
def test_every_report_figure_keeps_its_legend(preset, tmp_path, monkeypatch):
    from jitterlab.presets import get

    seen = _legend_check(monkeypatch)
    get(preset).run(tmp_path, reps=2, jobs=2, progress=False)
    assert seen and any(s for _, s, _ in seen)  # figures with legends went through
    lost = [(n, s, g) for n, s, g in seen if s != g]
    assert not lost, lost


def test_generic_report_figures_keep_their_legends(tmp_path, monkeypatch):
    from conftest import ROOT

    import jitterlab

    seen = _legend_check(monkeypatch)
    jitterlab.sweep(ROOT / "scenarios" / "sweeps" / "buffer-aqm.toml", tmp_path / "s", jobs=2, progress=False)
    jitterlab.report(tmp_path / "s")
    assert [n for n, _, _ in seen] == ["owd_cdf", "ipdv_cdf", "loss_vs_jb", "mos_vs_jb", "levels_over_time", "tcp_goodput", "tcp_completion"]
    assert not [(n, s, g) for n, s, g in seen if s != g]
    assert dict((n, s) for n, s, _ in seen)["loss_vs_jb"] == ["queue=droptail-50", "queue=droptail-500", "queue=codel"]
