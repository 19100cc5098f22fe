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
