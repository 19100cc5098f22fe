"""Worker processes that die with their parent: the initializer of every process pool jitterlab
starts (the sweep's workers, the report's figure savers). When the main process dies, even by
SIGKILL, a worker exits within WATCH_S; the multiprocessing resource tracker then sees its pipe
close (the last holders are gone) and exits too.

A watch thread, not prctl(PR_SET_PDEATHSIG): the kernel sends that signal when the *thread* that
started the child ends, and a kept pool outlives the thread of the sweep that started it.
"""
from __future__ import annotations

import os
import threading
import time

#: How often a worker looks at its parent (s).
WATCH_S = 0.25


def die_with_parent(parent: int) -> None:
    """Pool initializer: a daemon thread ends this process once `parent` is no longer its parent
    (the kernel re-parents an orphan to init or a subreaper). Started by `parent`, so a worker
    whose parent died before this ran exits at once."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_S)
        os._exit(1)  # no cleanup: nothing a worker holds outlives it usefully

    threading.Thread(target=watch, name="jitterlab-parent-watch", daemon=True).start()
