"""Worker processes that do not re-run the caller's script.

jitterlab's pools (sweep workers, the report's figure savers) use the "spawn" start method: a
worker inherits no threads or locks of the client. Plain spawn, however, makes each worker import
the parent's ``__main__`` again — a script calling ``jitterlab.sweep(...)`` at top level, without
``if __name__ == "__main__":``, then starts a sweep inside every worker and the pool breaks
(BrokenProcessPool). Our workers need nothing from ``__main__`` (the work they do lives in
jitterlab's modules), so `context()` gives a spawn context whose processes skip that import. A
caller whose worker code does live in ``__main__`` (a sweep's ``reduce`` defined in the script)
asks for ``context(keep_main=True)``: plain spawn, and the guard is then needed (`HINT`).
"""
from __future__ import annotations

import multiprocessing as mp
import multiprocessing.context as _ctx
from typing import Any

HINT = ("a worker process failed to start; if this runs from a script that defines the sweep's reduce function, "
        "put the call under `if __name__ == \"__main__\":` (or define reduce in a module)")


def _popen_without_main(process_obj: Any) -> Any:
    from multiprocessing import spawn

    orig = spawn.get_preparation_data

    def prep(name: str) -> dict[str, Any]:
        d = orig(name)
        d.pop("init_main_from_path", None)
        d.pop("init_main_from_name", None)
        return d

    spawn.get_preparation_data = prep  # read by the Popen below while it starts the child, then restored
    try:
        return _ctx.SpawnProcess._Popen(process_obj)
    finally:
        spawn.get_preparation_data = orig


class _Process(_ctx.SpawnProcess):
    _start_method = "spawn"

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return _popen_without_main(process_obj)


class _Context(_ctx.SpawnContext):
    Process = _Process


_NO_MAIN = _Context()


def context(keep_main: bool = False) -> Any:
    """A spawn context for a process pool; without `keep_main`, its workers do not import ``__main__``."""
    return mp.get_context("spawn") if keep_main else _NO_MAIN


def defined_in_main(*objs: Any) -> bool:
    """Whether any of `objs` (functions sent to workers) comes from ``__main__``."""
    return any(getattr(o, "__module__", None) == "__main__" for o in objs if o is not None)
