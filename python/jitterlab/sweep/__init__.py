"""Sweeps: a base scenario, parameters to vary, replications, random variables per replication;
every run done by a worker, stored under OUT/runs/, and combined into OUT/<table>.parquet.

`jitterlab.sweep("file.toml", "out/dir")` runs one (`sweep`; this package is callable, see
`jitterlab._callable` for why). Its parts, each with its own contract:

- `spec`: the sweep file (`load`, `from_dict`), the runs it expands to and their seeds;
- `store`: each run's stored tables, their checksums and `verify_run`;
- `executors`: `execute` (one run, in a worker) and the local and Dask executors;
- `combine`: the combined tables built while the runs finish, `collect`, `SweepResult`;
- `driver`: `run`, which plans, skips finished runs, executes and combines.

Layered in that order: a part imports only the parts listed before it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from jitterlab import _callable, _fspath
from jitterlab.sweep.combine import COMBINED, SweepResult, collect
from jitterlab.sweep.driver import INLINE_BYTES, Progress, run, serial_fraction
from jitterlab.sweep.executors import (BATCH_EVENTS, RUN_FIXED_EVENTS, TASKS_PER_WORKER, WINDOW_PER_WORKER, execute,
                                       execute_batch)
from jitterlab.sweep.spec import SWEEP_FORMAT, TABLES, Param, RunSpec, Sweep, SweepError, derive, from_dict, load
from jitterlab.sweep.store import (ERROR_FILE, LOG_SUFFIX, MAX_GROUP_ROWS, PACK, PACK_ALIGN, PARQUET_MIN_ROWS, RUN_EXT, RUN_FILE, LogEntry, Out, decode_pack,
                                   read_run_pack, read_run_record, read_run_table, read_run_tables, run_identity, verify_run)

__all__ = ["sweep", "run", "load", "from_dict", "collect", "Sweep", "Param", "RunSpec", "SweepResult", "SweepError",
           "derive", "execute", "execute_batch", "Progress", "serial_fraction", "verify_run", "run_identity",
           "read_run_tables", "read_run_table", "read_run_pack", "read_run_record", "decode_pack", "Out", "TABLES", "SWEEP_FORMAT",
           "COMBINED", "INLINE_BYTES", "PACK", "PACK_ALIGN", "RUN_EXT", "RUN_FILE", "ERROR_FILE", "LOG_SUFFIX", "LogEntry", "PARQUET_MIN_ROWS",
           "MAX_GROUP_ROWS", "BATCH_EVENTS", "RUN_FIXED_EVENTS", "TASKS_PER_WORKER", "WINDOW_PER_WORKER"]


def sweep(spec: str | Path | Mapping[str, Any] | Sweep, out: str | Path, *, jobs: int | None = None, executor: str = "local",
          scheduler: str | None = None, progress: bool = True, on_result: Callable[[dict[str, Any]], None] | None = None,
          max_memory: float | None = None, max_events: float | None = None) -> SweepResult:
    """Runs a sweep: ``jitterlab.sweep("file.toml", "out/dir", jobs=4)``.

    Parameters
    ----------
    spec : str, Path, mapping or Sweep
        A sweep file, the parsed TOML document as a dict, or a loaded `Sweep`.
    out : str or Path
        Output directory (resumable: finished runs are skipped).
    jobs, executor, scheduler, progress, on_result, max_memory, max_events
        As `run`: local worker processes (default: all cores), ``"local"`` or ``"dask"`` (with
        the scheduler's address), a progress bar on stderr, a callback per finished run, cost limits.
        From a plain script no ``if __name__ == "__main__":`` guard is needed (see `jitterlab._spawn`).

    Returns
    -------
    SweepResult
        The combined tables (`jitterlab.tables.Tables`), failures and counts.
    """
    if not isinstance(spec, (str, Path, Mapping, Sweep)):
        raise TypeError(f"parameter 'spec': expected a sweep file, a dict or a Sweep, got {type(spec).__name__}")
    if not isinstance(out, (str, Path, _fspath.FsPath)):
        raise TypeError(f"parameter 'out': expected a directory path, got {type(out).__name__} {out!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"parameter 'jobs': a number of worker processes (1 or more), got {jobs!r}")
    sw = spec if isinstance(spec, Sweep) else load(spec) if isinstance(spec, (str, Path)) else from_dict(spec)
    return run(sw, out, jobs=jobs, executor=executor, scheduler=scheduler, progress=progress, on_result=on_result,
               max_memory=max_memory, max_events=max_events)


_callable.make_callable(__name__, sweep)  # `jitterlab.sweep(...)` is `sweep(...)`
