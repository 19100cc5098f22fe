"""A sweep's progress in a Jupyter notebook (python/jitterlab/_progress.py): one display, updated in
place, instead of a new stderr line every 10 %. The kernel is faked: an `IPython` module whose
`get_ipython()` returns a shell of Jupyter's class name, and a display that records calls."""
from __future__ import annotations

import sys
import tomllib
import types

import pytest

import jitterlab
from jitterlab import _progress

SWEEP = tomllib.loads("""
[sweep]
name = "nb"
seed = 3
replications = 2
[sweep.vary]
"links.l.rate" = ["1Mbit", "2Mbit"]
[scenario]
duration = "1s"
[scenario.links.l]
from = "a"
to = "b"
rate = "1Mbit"
delay = "10ms"
[[scenario.traffic]]
kind = "audio"
from = "a"
to = "b"
""")


class ZMQInteractiveShell:  # the class name is what a Jupyter kernel's shell is called
    config: dict = {}


class TerminalInteractiveShell:
    config: dict = {}


class Handle:
    def __init__(self, log, obj):
        self.log, self.shown = log, [obj]

    def update(self, obj):
        self.shown.append(obj)


def fake_ipython(monkeypatch, shell_cls, widgets: bool):
    """`shell_cls`: the class of what get_ipython() returns (None: no shell, as outside IPython)."""
    log: dict = {"display": []}
    ip = types.ModuleType("IPython")
    ip.get_ipython = lambda: None if shell_cls is None else shell_cls()  # type: ignore[attr-defined]
    disp = types.ModuleType("IPython.display")

    class HTML:
        def __init__(self, data):
            self.data = data

    def display(obj, display_id=None):
        log["display"].append(obj)
        if display_id:
            h = Handle(log, obj)
            log["handle"] = h
            return h
        return None

    disp.HTML, disp.display = HTML, display  # type: ignore[attr-defined]
    ip.display = disp  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ip)
    monkeypatch.setitem(sys.modules, "IPython.display", disp)
    if widgets:
        w = types.ModuleType("ipywidgets")

        class IntProgress:
            def __init__(self, **kw):
                self.__dict__.update(kw)

        class HTMLw:
            def __init__(self, value):
                self.value = value

        class HBox:
            def __init__(self, children):
                self.children = children

        w.IntProgress, w.HTML, w.HBox = IntProgress, HTMLw, HBox  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "ipywidgets", w)
    else:
        monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import raises ImportError
    return log


def test_no_ipython_no_kernel(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert not _progress.in_notebook()


def test_html_display_updated_in_place(monkeypatch, tmp_path, capfd):
    log = fake_ipython(monkeypatch, ZMQInteractiveShell, widgets=False)
    assert _progress.in_notebook()
    res = jitterlab.sweep(SWEEP, tmp_path / "out", jobs=1)
    assert res.ran == 4
    # one display, created once; every later state went through its handle
    assert len(log["display"]) == 1
    last = log["handle"].shown[-1].data
    assert "4/4 runs" in last and '<progress value="4" max="4"' in last and "<b>nb</b>" in last
    assert "[####" not in capfd.readouterr().err  # no terminal bar beside it


def test_widget_when_ipywidgets_is_there(monkeypatch, tmp_path, capfd):
    log = fake_ipython(monkeypatch, ZMQInteractiveShell, widgets=True)
    jitterlab.sweep(SWEEP, tmp_path / "out", jobs=1)
    (box,) = log["display"]
    bar, text = box.children
    assert (bar.value, bar.max, bar.bar_style) == (4, 4, "success")
    assert text.value.startswith("4/4 runs")
    assert "[####" not in capfd.readouterr().err


@pytest.mark.parametrize("shell", [TerminalInteractiveShell, None], ids=["ipython-terminal", "no-shell"])
def test_terminal_ipython_keeps_the_terminal_bar(monkeypatch, tmp_path, capfd, shell):
    log = fake_ipython(monkeypatch, shell, widgets=False)
    assert not _progress.in_notebook()
    jitterlab.sweep(SWEEP, tmp_path / "out", jobs=1)
    assert log["display"] == []
    assert "4/4 runs" in capfd.readouterr().err


def test_progress_false_shows_nothing(monkeypatch, tmp_path):
    log = fake_ipython(monkeypatch, ZMQInteractiveShell, widgets=False)
    jitterlab.sweep(SWEEP, tmp_path / "out", jobs=1, progress=False)
    assert log["display"] == []


def test_html_escapes_the_label(monkeypatch):
    log = fake_ipython(monkeypatch, ZMQInteractiveShell, widgets=False)
    bar = _progress.make(2, 0, "<script>x</script>", True, terminal=lambda *a: pytest.fail("terminal bar"))
    bar.update(True)
    bar.update(False)
    last = log["handle"].shown[-1].data
    assert "<script>" not in last and "&lt;script&gt;" in last and "1 failed" in last
