"""Progress of a sweep in a Jupyter notebook: one display updated in place.

In a notebook, standard error is not a terminal, so the terminal bar (`jitterlab.sweep.Progress`)
prints a new line every 10 %. Inside an IPython kernel this bar instead shows one widget
(ipywidgets' progress bar, when installed) or one HTML line (`IPython.display` with a display id),
updated in place. Anywhere else — a terminal, a script, a plain IPython shell — the terminal bar.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable

#: at most this many display updates a second (a sweep of short runs finishes hundreds a second)
_UPDATES_PER_S = 10


def in_notebook() -> bool:
    """True inside a Jupyter (IPython) kernel. Looks only at an IPython already imported: a
    kernel has imported it, and importing it here would cost a script ~0.3 s for nothing."""
    ip_mod = sys.modules.get("IPython")
    get = getattr(ip_mod, "get_ipython", None)
    if get is None:
        return False
    try:
        shell = get()
    except Exception:  # a broken or partial IPython: not a kernel we can draw in
        return False
    if shell is None:
        return False
    # ZMQInteractiveShell: Jupyter's kernel (the terminal shell is TerminalInteractiveShell)
    return type(shell).__name__ == "ZMQInteractiveShell" or "IPKernelApp" in getattr(shell, "config", {})


def _escape(text: str) -> str:
    import html  # a notebook's bar only: not imported by every `jitterlab sweep` process

    return html.escape(text)


class NotebookProgress:
    """The terminal bar's interface (`update(ok)`, `done`, `failed`, `total`) drawn in a notebook."""

    def __init__(self, total: int, skipped: int, label: str):
        from IPython.display import display

        self.total, self.done, self.failed, self.skipped, self.label = total, 0, 0, skipped, label
        self.t0 = time.monotonic()
        self._last = float("-inf")
        self._bar: Any = None
        try:
            import ipywidgets as w

            self._bar = w.IntProgress(value=0, min=0, max=total, description=label[:20], bar_style="info")
            self._text = w.HTML(value=_escape(self.message()))
            display(w.HBox([self._bar, self._text]))
        except ImportError:
            from IPython.display import HTML

            self._html = HTML
            self._handle = display(HTML(self._html_line()), display_id=True)

    def message(self) -> str:
        el = time.monotonic() - self.t0
        eta = el / self.done * (self.total - self.done) if self.done else float("nan")
        return (f"{self.done}/{self.total} runs" + (f" ({self.skipped} already done)" if self.skipped else "")
                + (f", {self.failed} failed" if self.failed else "") + f", {el:.0f} s elapsed"
                + (f", ETA {eta:.0f} s" if self.done and self.done < self.total else ""))

    def _html_line(self) -> str:
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (f'<div><b>{_escape(self.label)}</b> '
                f'<progress value="{self.done}" max="{self.total}" style="width: 30ex"></progress> '
                f'{pct:.0f} % — {_escape(self.message())}</div>')

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        now = time.monotonic()
        if self.done < self.total and now - self._last < 1.0 / _UPDATES_PER_S:
            return
        self._last = now
        if self._bar is not None:
            self._bar.value = self.done
            self._text.value = _escape(self.message())
            if self.done == self.total:
                self._bar.bar_style = "danger" if self.failed else "success"
        else:
            self._handle.update(self._html(self._html_line()))


def make(total: int, skipped: int, label: str, enabled: bool, terminal: Callable[..., Any]) -> Any:
    """The progress bar of a sweep: `NotebookProgress` in a notebook, else `terminal(...)`."""
    if enabled and total > 0 and in_notebook():
        try:
            return NotebookProgress(total, skipped, label)
        except Exception:  # noqa: BLE001 - a display that fails must not fail the sweep
            pass
    return terminal(total, skipped, label, enabled)
