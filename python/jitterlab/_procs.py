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


#: glibc's mallopt parameters (malloc.h) and the values `keep_freed_memory` sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
TRIM_THRESHOLD = 256 << 20
MMAP_THRESHOLD = 64 << 20


def keep_freed_memory() -> bool:
    """Lets this process reuse the memory a run frees for the next run instead of handing it back
    to the kernel: glibc's malloc keeps blocks under MMAP_THRESHOLD in its heap (not a fresh
    mapping each) and returns its heap's free top only past TRIM_THRESHOLD. A sweep's runs each
    allocate and free the same few MB (the simulator's columns, the summary's prepared rows);
    with glibc's adaptive defaults many of those pages were unmapped and faulted in again, run
    after run (`jitterlab sweep` on the 126 vs-ns2 points: 39-41 k page faults against 16.5 k;
    docs/performance.md, issue 31). For processes that do runs (the sweep command, its workers),
    not for a library user's process. False where the C library has no mallopt (not glibc).
    Called through the native module: ctypes' import cost ~2.5 ms of each such process."""
    from jitterlab import _native

    return _native.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and _native.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def sweep_worker(parent: int) -> None:
    """Initializer of a sweep's local workers: `die_with_parent` and `keep_freed_memory`."""
    die_with_parent(parent)
    keep_freed_memory()
