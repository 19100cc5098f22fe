"""Where a sweep's runs are done: `execute` runs one in a worker (and stores it there), the local
executor hands batches of runs to a kept pool of spawned processes, the Dask executor to a
cluster; each yields the runs' receipts as they finish."""
from __future__ import annotations

import itertools
import os
import time
from typing import Any, Callable, Iterable

from jitterlab import _fspath
from jitterlab.sweep.spec import SweepError
from jitterlab.sweep.store import _store
from jitterlab.tables import LazyTables

#: Runs in flight a local worker (queued or running): enough that a worker never waits for the
#: client to hand it the next run, few enough that waiting on them stays cheap.
WINDOW_PER_WORKER = 4


def execute(payload: dict[str, Any]) -> dict[str, Any]:
    """Runs one run (in a worker). When `payload["out"]` is set (a filesystem shared with the
    client) the worker stores the run itself; with `payload["receipt"]` it then returns only a
    receipt (run id, rows per table, times, peak memory), otherwise also the Arrow tables (for a
    run done in the client's own process). Top-level so it pickles."""
    from jitterlab import sim

    global _PEAK_SWEEP
    if payload.get("receipt") and payload.get("sweep_id") != _PEAK_SWEEP:
        # a worker of a kept pool (or a Dask worker) starts another sweep: its peak memory counts
        # from here, not from the sweeps it ran before (the client's own process is left alone)
        _PEAK_SWEEP = payload.get("sweep_id")
        _reset_peak_rss()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        params = {**payload["params"], "replication": payload["rep"], "point": payload["point"]}
        if payload.get("backend", "sim") == "testbed":
            # real time, root, the whole machine: the testbed runs one run at a time (see run())
            from jitterlab import testbed

            res = testbed.run(payload["scenario"], seed=payload["seed"], run_id=payload["run_id"], overrides=payload["overrides"],
                              params=params, out=payload.get("testbed_out"))
        else:
            res = sim.simulate_run(payload["scenario"], payload["overrides"], payload["seed"], payload["run_id"], params,
                                   payload.get("scenario_key"), payload.get("prepared"))
        arrow = res.arrow
        # a run's tables as held: kept native from the simulator to the pack (`LazyTables.held`)
        if isinstance(arrow, LazyTables):
            tables = arrow.held_many(payload["tables"])
        else:
            tables = {n: arrow[n] for n in payload["tables"] if n in arrow}
        if payload.get("reduce") is not None:
            tables.update(payload["reduce"](res))
            tables = {n: t for n, t in tables.items() if n in payload["tables"]}
        out = {"run_id": payload["run_id"], "ok": True, "identity": payload.get("identity"), "tables": tables,
               "requested": list(payload["tables"]), "wall_s": time.perf_counter() - t0, "stored": False}
        if payload.get("summary") is not None:
            # the run's share of the closing summary, while its rows are in memory: the client
            # then neither keeps nor reads back the media rows (jitterlab.summary.run_part)
            from jitterlab import summary

            try:
                out["summary_part"] = summary.run_part(out["tables"], payload["sweep_id"], payload["summary"]["alone"],
                                                       whole_run=payload["summary"].get("whole_run", False))
            except Exception:  # never the run's failure: without its part the summary reads its rows (and says what is wrong)
                out["summary_part"] = None
            out["wall_s"] = time.perf_counter() - t0
    except Exception as e:  # recorded with the run; the sweep goes on
        import traceback  # not at import: a worker whose runs succeed never needs it

        out = {"run_id": payload["run_id"], "ok": False, "error": f"{type(e).__name__}: {e}",
               "traceback": traceback.format_exc(), "wall_s": time.perf_counter() - t0, "stored": False}
    if payload.get("out"):
        pack = _store(_out_path(payload["out"]), out)
        out["stored"] = True
        out["wall_s"] = time.perf_counter() - t0  # storing is the worker's work too
        if payload.get("receipt"):
            # the tables are on the shared storage: only a receipt travels back to the client,
            # carrying the run's pack too when it is small (a tiny run's few kB cost the client
            # less as bytes than as a file to read back). Bytes, not the Arrow tables: pickling
            # Arrow tables cost client and worker ~0.1 ms a table, 10x the pack's decoding.
            tables = out.pop("tables", {})
            out["rows"] = {n: t.num_rows for n, t in tables.items()}
            if pack is not None and len(pack[0]) <= payload.get("inline_bytes", 0):
                out["pack"] = pack
        elif pack is not None:
            out["pack"] = pack  # a run done in the client's own process: its Parquet parts are spliced as they are
    out["cpu_s"] = time.process_time() - c0
    if payload.get("receipt"):
        out["rss_bytes"] = _peak_rss()
    # a run done in the client's own process: the client reads its peak once after the last run
    # (/proc/self/status read and parsed: ~0.1 ms a run)
    return out


#: The local directory the last run was stored in, as given and as a path (`_out_path`).
_OUT_PATH: tuple[str | None, Any] = (None, None)


def _out_path(out: Any) -> Any:
    """`_fspath.as_path(out)`, the local directory's `Path` made once for a process's runs of a
    sweep: ~28 µs of CPU a run made anew, as a run leaves the CPU's caches cold (a URL's path,
    which holds its filesystem object, is made each time)."""
    global _OUT_PATH
    if type(out) is str and _OUT_PATH[0] == out:
        return _OUT_PATH[1]
    p = _fspath.as_path(out)
    if type(out) is str and not _fspath.is_url(out):
        _OUT_PATH = (out, p)
    return p


#: The sweep whose runs this worker process's peak memory counts from (`execute`).
_PEAK_SWEEP: str | None = None


def _reset_peak_rss() -> None:
    """Restarts this process's VmHWM at its current resident size (Linux >= 4.0: writing 5 to
    /proc/self/clear_refs); where refused, the peak keeps counting from the process's start."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _peak_rss() -> int:
    """Peak resident memory of this process in bytes (a worker's bound, reported by the benchmark):
    Linux's VmHWM, which starts afresh at exec (getrusage's ru_maxrss would carry the parent's
    peak into a spawned worker); 0 where unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


#: Runs shorter than a worker's cost per task (pickling and a pipe: ~2 ms; Dask's scheduler:
#: ~8 ms) travel in batches, each about BATCH_EVENTS of estimated simulation (~0.1 s), counting a
#: run's fixed cost (its tables, storing them: ~1.6 ms) as RUN_FIXED_EVENTS; never so large that
#: a worker gets fewer than TASKS_PER_WORKER tasks (the last tasks keep every worker busy).
BATCH_EVENTS = 2_000_000
RUN_FIXED_EVENTS = 50_000
TASKS_PER_WORKER = 8


def _batches(payloads: list[dict], est_events: list[float], workers: int) -> list[list[dict]]:
    """The payloads, in order, cut into tasks of about BATCH_EVENTS (see above)."""
    cap = max(1, len(payloads) // (TASKS_PER_WORKER * max(workers, 1)))
    out: list[list[dict]] = []
    cur: list[dict] = []
    acc = 0.0
    for p, e in zip(payloads, est_events):
        cur.append(p)
        acc += e + RUN_FIXED_EVENTS
        if acc >= BATCH_EVENTS or len(cur) >= cap:
            out.append(cur)
            cur, acc = [], 0.0
    if cur:
        out.append(cur)
    return out


def execute_batch(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`execute` for each payload of a task (a worker's batch of short runs), in order."""
    return [execute(p) for p in payloads]


_POOL: tuple[int, Any, bool] | None = None  # (workers, the pool, keep_main)


def _pool(n: int, keep_main: bool = False) -> Any:
    """The local executor's pool of `n` worker processes, kept for the next sweep of this process
    (a preset runs 3-4 sweeps: starting 2 spawned workers, each importing jitterlab, costs ~0.25 s
    of wall a sweep on 2 cores). Spawned: workers inherit no threads (pyarrow's pools, the
    combiner) or locks of the client, and do not re-run the caller's script (`jitterlab._spawn`:
    a script without a `__main__` guard works) unless `keep_main` (a reduce defined there)."""
    global _POOL
    if _POOL is not None and (_POOL[0], _POOL[2]) == (n, keep_main) and not getattr(_POOL[1], "_broken", False):
        return _POOL[1]
    _drop_pool()
    from concurrent.futures import ProcessPoolExecutor

    from jitterlab import _procs, _spawn

    _POOL = (n, ProcessPoolExecutor(max_workers=n, mp_context=_spawn.context(keep_main),
                                    initializer=_procs.sweep_worker, initargs=(os.getpid(),)), keep_main)
    return _POOL[1]


def _drop_pool(cancel: bool = False) -> None:
    """Shuts the kept pool down (`cancel`: its queued tasks dropped, running ones waited for)."""
    global _POOL
    if _POOL is not None:
        pool, _POOL = _POOL[1], None
        pool.shutdown(wait=True, cancel_futures=cancel)


def _executor(kind: str, jobs: int | None, scheduler: str | None) -> Callable[[list[dict], list[float]], Iterable[dict]]:
    """The executor `kind` as a function of the payloads and their runs' estimated events,
    yielding the receipts as runs finish."""
    if kind == "local":
        n = jobs or os.cpu_count() or 1

        def local(payloads: list[dict], est_events: list[float]) -> Iterable[dict]:
            if n == 1 or len(payloads) <= 1:
                for p in payloads:
                    yield execute(p)
                return
            from concurrent.futures import FIRST_COMPLETED, wait
            from concurrent.futures.process import BrokenProcessPool

            from jitterlab import _spawn

            keep_main = _spawn.defined_in_main(payloads[0].get("reduce"))
            ex = _pool(n, keep_main)
            finished = False
            try:
                # A window of WINDOW_PER_WORKER tasks a worker in flight, topped up as each
                # finishes: wait() installs a waiter on every future it is given, so waiting on
                # all of a sweep's futures at once cost O(runs) a result, O(runs^2) a sweep
                # (10,000 tiny runs: 3/4 of the client's time). Finished futures are dropped
                # as they are handed on: the client holds no more receipts than it keeps.
                todo = iter(_batches(payloads, est_events, n))
                pending = {ex.submit(execute_batch, b) for b in itertools.islice(todo, WINDOW_PER_WORKER * n)}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        pending.update(ex.submit(execute_batch, b) for b in itertools.islice(todo, 1))
                        try:
                            got = f.result()
                        except BrokenProcessPool as e:
                            if keep_main:
                                raise SweepError(_spawn.HINT) from e
                            raise
                        yield from got
                finished = True
            finally:
                if not finished:  # an error, an interrupt or an abandoned sweep: no run may outlive it
                    _drop_pool(cancel=True)

        return local
    if kind == "dask":
        def dask(payloads: list[dict], est_events: list[float]) -> Iterable[dict]:
            try:
                from dask.distributed import Client, as_completed
            except ImportError as e:  # pragma: no cover - dask is a declared dependency
                raise SweepError(f"--executor dask needs dask.distributed: {e}") from None
            if not scheduler:
                raise SweepError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
            with _dask_client(Client, scheduler) as client:
                workers = sum(client.nthreads().values()) or 1
                batches = _batches(payloads, est_events, workers)
                for f in as_completed(client.map(execute_batch, batches, pure=False)):
                    res = f.result()
                    f.release()  # the cluster forgets each receipt once the client has it
                    yield from res

        return dask
    raise SweepError(f"executor: must be local or dask, got {kind!r}")


def _dask_client(client_cls: Any, scheduler: str) -> Any:
    """A Dask client of `scheduler`, or one SweepError line: a place that does not answer, and one
    that answers with something other than Dask's protocol (its bytes read as a frame length can
    ask for gigabytes: a MemoryError that is no shortage of memory here)."""
    try:
        return client_cls(scheduler, timeout=30)
    except (OSError, TimeoutError) as e:
        raise SweepError(f"--scheduler {scheduler}: no Dask scheduler answers there ({type(e).__name__}: {e})") from None
    except (Exception, MemoryError) as e:
        raise SweepError(f"--scheduler {scheduler}: not a Dask scheduler (its answer is not Dask's protocol: {type(e).__name__})") from None
