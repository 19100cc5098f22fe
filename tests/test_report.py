"""The HTML report: self-contained, figures present, loads in headless Chromium without errors."""
import re
import shutil
import subprocess

import pandas as pd
import pytest

from jitterlab import plots
from jitterlab.report import Claim, Report


def make_report(tmp_path):
    r = Report("Test report", tmp_path, "unit test")
    r.set_params({"seed": 1, "replications": 3, "scenario": {"a": 1}})
    r.section("Figures", "two figures")
    for i in range(2):
        fig, ax = plots.new()
        ax.plot([0, 1, 2], [0, i, 2 * i], **next(plots.styles()))
        plots.caption(fig, f"figure {i}: scenario t, 3 replications")
        r.figure(fig, f"f{i}", f"caption {i}")
    r.table(pd.DataFrame({"x": [1.0, 2.5], "y": ["a", "b"]}), "a table", name="tbl")
    r.claims([Claim("loss falls as JB grows", "yes", "40 ms: 10 %, 200 ms: 1 %", "agrees"),
              Claim("median OWD", "1.42 s", "1.1 s", "disagrees", "Reno instead of CUBIC")])
    return r.write()


def test_report_is_self_contained(tmp_path):
    path = make_report(tmp_path)
    text = path.read_text()
    assert text.count('class="figspec"') == 2  # both figures interactive
    assert "Plotly.newPlot" in text and not re.search(r"<script[^>]+src=", text)  # plotly.js inline, no CDN
    assert 'data-figures-total="2"' in text
    assert "✘ disagrees" in text and "✔ agrees" in text
    for i in range(2):
        assert (tmp_path / "figures" / f"f{i}.png").stat().st_size > 1000
        assert (tmp_path / "figures" / f"f{i}.svg").read_text().lstrip().startswith("<?xml")
        assert f'href="figures/f{i}.svg"' in text and f'href="figures/f{i}.csv"' in text
        pts = pd.read_csv(tmp_path / "figures" / f"f{i}.csv")
        assert pts.y.tolist() == [0, i, 2 * i]  # the plotted points, as drawn
    assert (tmp_path / "tbl.csv").exists() and 'href="tbl.csv"' in text
    assert "Provenance" in text and "jitterlab version" in text
    with pytest.raises(ValueError):
        Claim("x", "y", "z", "maybe")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def load_in_chromium(path, fragment: str = ""):
    exe = chromium()
    if not exe:
        pytest.skip("chromium is not installed (Debian package 'chromium'; ./run-tests installs it as root)")
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", "--dump-dom", path.resolve().as_uri() + fragment],
                       capture_output=True, text=True, timeout=120)
    return p


def test_report_loads_in_headless_chromium(tmp_path):
    path = make_report(tmp_path)
    p = load_in_chromium(path, "#selftest")
    assert p.returncode == 0, p.stderr[-2000:]
    console_errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Error" in l or "Uncaught" in l)]
    assert not console_errors, console_errors
    assert 'data-figures-loaded="2"' in p.stdout
    # the self-test zoomed the first figure to the left half of its x range and hovered a point
    # of it: figure 0 plots (0, 0), (1, 0), (2, 0), so the first point's tooltip reads (0, 0)
    assert 'data-selftest-zoom="ok"' in p.stdout
    assert 'data-selftest-hover="ok: (0, 0)' in p.stdout


def test_chromium_check_detects_a_broken_figure(tmp_path):
    path = make_report(tmp_path)
    text = path.read_text()
    # corrupt the first figure's data: the page must then report one figure fewer
    i = text.index('class="figspec"')
    i = text.index(">", i) + 1
    path.write_text(text[:i] + "{broken" + text[i:])
    p = load_in_chromium(path)
    assert 'data-figures-loaded="1"' in p.stdout


def test_png_fallback_for_figures_the_converter_cannot_take(tmp_path):
    import numpy as np

    r = Report("img", tmp_path)
    fig, ax = plots.new()
    ax.imshow(np.eye(3))
    r.figure(fig, "img", "an image")
    text = r.write().read_text()
    assert text.count("data:image/png;base64,") == 1 and 'class="figspec"' not in text


def test_point_labels_do_not_overprint():
    # the rwnd budget trade-off's cluster: "none", 80 kB and 60 kB within 1 % of each other
    fig, ax = plots.new()
    xs = [1.0, 1.01, 1.02, 1.03, 1.2, 2.6, 2.85]
    ys = [90, 89.5, 88, 84, 2, 1, 0.2]
    ax.plot(xs, ys, marker="s")
    anns = plots.label_points(ax, xs, ys, ["none", "80 kB", "60 kB", "40 kB", "20 kB", "10 kB", "5 kB"])
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = [a.get_window_extent(r) for a in anns]
    overlaps = [(anns[i].get_text(), anns[j].get_text()) for i in range(len(boxes)) for j in range(i) if boxes[i].overlaps(boxes[j])]
    assert not overlaps, overlaps
    assert all(ax.bbox.contains(b.x0, b.y0) and ax.bbox.contains(b.x1, b.y1) for b in boxes)


def test_legend_above_leaves_the_axes_free():
    fig, ax = plots.new()
    ax.bar([0, 1], [80, 90], label="x")
    leg = plots.legend_above(ax, ncol=1)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert leg.get_window_extent(r).y0 >= ax.get_window_extent(r).y1 - 1


def test_converted_figure_keeps_what_matplotlib_drew():
    import numpy as np

    fig, ax = plots.new()
    ax.plot([1, 2, 3], [4, 5, 6], label="line", linestyle="--", drawstyle="steps-post")
    ax.bar([1, 2], [3, 4], label="bars")
    ax.fill_between([0, 1], [0, 0], [1, 1])
    ax.axvline(2.5)
    ax.set_xscale("log")
    ax.set_xticks([1, 2], ["a", "b"])
    ax.set_title("T")
    ax.legend()
    spec = plots.to_plotly(fig)
    kinds = [(t["type"], t.get("name")) for t in spec["data"]]
    assert ("bar", "bars") in kinds and ("scatter", "line") in kinds
    line = next(t for t in spec["data"] if t.get("name") == "line")
    assert line["y"] == [4.0, 5.0, 6.0] and line["line"]["dash"] == "dash" and line["line"]["shape"] == "hv"
    bar = next(t for t in spec["data"] if t["type"] == "bar")
    assert bar["y"] == [3, 4] and bar["x"] == [1.0, 2.0]
    vline = [t for t in spec["data"] if t["type"] == "scatter" and t.get("x") == [2.5, 2.5]]
    assert len(vline) == 1 and vline[0]["y"] == list(ax.get_ylim())
    xa = spec["layout"]["xaxis"]
    assert xa["type"] == "log" and xa["ticktext"] == ["a", "b"]
    assert np.allclose(xa["range"], np.log10(ax.get_xlim()))
    assert any("T" in a["text"] for a in spec["layout"]["annotations"])


def test_figures_saved_in_saver_processes_match_saving_here(tmp_path, monkeypatch):
    """Figures are rendered to PNG/SVG in other processes (most of a preset's post-processing);
    the PNG is byte for byte what saving in this process gives, and every file is there once
    `write` returns."""
    from jitterlab import report

    def draw():
        fig, ax = plots.new()
        ax.plot([0, 1, 2], [0, 1, 4], label="a", **next(plots.styles()))
        ax.legend()
        plots.caption(fig, "figure: scenario t, 3 replications")
        return fig

    r = Report("saver", tmp_path / "a", "unit test")
    r.figure(draw(), "f", "caption")
    assert r._saves and r._saves[0] is not None  # handed to a saver process
    r.write()
    assert (tmp_path / "a" / "figures" / "f.svg").stat().st_size > 1000
    monkeypatch.setenv("JITTERLAB_FIGURE_PROCS", "0")
    r2 = Report("saver", tmp_path / "b", "unit test")
    r2.figure(draw(), "f", "caption")
    assert r2._saves == [None]
    r2.write()
    assert (tmp_path / "a" / "figures" / "f.png").read_bytes() == (tmp_path / "b" / "figures" / "f.png").read_bytes()
