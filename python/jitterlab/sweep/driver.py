"""Running a sweep (`run`): checks the runs' cost and OUT, skips the runs already finished and
verified, hands the others to an executor and combines their tables as they finish."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from jitterlab import _fspath, _io, _native, _progress
from jitterlab._native import ScenarioError
from jitterlab.sweep.combine import (SweepResult, _Combiner, _combined_digest, _current_combined, _failures_csv,
                                     _write_combined_record)
from jitterlab.sweep.executors import _executor, _peak_rss
from jitterlab.sweep.spec import Sweep, SweepError
from jitterlab.sweep.store import (ERROR_FILE, LogEntry, Out, _check_out, close_logs, _remove, _remove_stale_tmp, _run_file, _stored_runs,
                                   _verify_run)

#: A receipt carries the run's pack (its stored file's bytes) when it is at most this many bytes
#: (a tiny run's few kB cost less to send than to read back from its file); larger ones stay on
#: storage and the client reads them.
INLINE_BYTES = 64 * 1024


class Progress:
    """A one-line progress bar with ETA on stderr (a line every 10 % when not a terminal)."""

    def __init__(self, total: int, skipped: int, label: str, enabled: bool = True):
        self.total, self.done, self.failed, self.label = total, 0, 0, label
        self.skipped = skipped
        self.t0 = time.monotonic()
        self.enabled = enabled and total > 0
        self.tty = sys.stderr.isatty()
        self.last_decile = -1

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        if not self.enabled:
            return
        el = time.monotonic() - self.t0
        eta = el / self.done * (self.total - self.done)
        frac = self.done / self.total
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        msg = (f"{self.label} [{bar}] {self.done}/{self.total} runs"
               + (f" ({self.skipped} already done)" if self.skipped else "")
               + (f", {self.failed} failed" if self.failed else "")
               + f", {el:.0f} s elapsed, ETA {eta:.0f} s")
        if self.tty:
            print("\r" + msg, end="" if self.done < self.total else "\n", file=sys.stderr, flush=True)
        elif int(frac * 10) != self.last_decile or self.done == self.total:
            self.last_decile = int(frac * 10)
            print(msg, file=sys.stderr, flush=True)


def _prepare(out: str | Path | _fspath.FsPath) -> Out:
    """The output place, checked and created: a local directory, or a URL (`_fspath`)."""
    p = _fspath.as_path(out)
    if isinstance(p, _fspath.FsPath):
        return _fspath.prepare(p, "sweep")
    return _io.prepare_out(p, "sweep", force=True)


def run(sweep: Sweep, out: str | Path | _fspath.FsPath, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True,
        on_result: Callable[[dict[str, Any]], None] | None = None,
        max_memory: float | None = None, max_events: float | None = None, inline_bytes: int = INLINE_BYTES,
        summary: bool = False) -> SweepResult:
    """Runs every run of the sweep not yet finished in `out`, then collects the tables.

    With `summary`, each run also computes its share of `jitterlab.summary.summarize` while its
    rows are in memory (`SweepResult.summary_parts`), and the client keeps no media rows for
    the result (`media_packets` is read from its file when first asked for): what `jitterlab
    sweep`, which prints the summary and nothing else of the rows, asks for.

    Workers store each run under `out` (storage they share with the client) and send back a
    receipt, with the run's tables only when they total at most `inline_bytes` (0: never).

    Before anything runs: `out` must not hold another kind of result, and every parameter point's estimated cost must fit the limits (sim.check_cost, memory shared among the
    parallel jobs). Runs whose files no longer match their checksums are redone."""
    try:
        if _fspath.is_url(out) or isinstance(out, _fspath.FsPath):
            from jitterlab import _storelock  # an object store's lock (uuid, socket: not imported for a local OUT)

            with _storelock.hold(_fspath.as_path(out)):  # type: ignore[arg-type]  # one writer: a lock object in the store
                return _run(sweep, out, jobs, executor, scheduler, progress, on_result, max_memory, max_events, inline_bytes, summary)
        # one writer: a second sweep into this directory is refused until this one ends
        with _io.out_lock(_io.prepare_out(_fspath.as_path(out), "sweep", force=True)):  # type: ignore[arg-type]
            return _run(sweep, out, jobs, executor, scheduler, progress, on_result, max_memory, max_events, inline_bytes, summary)
    except Exception as e:
        # an object store's client fails with its own exceptions (a botocore ClientError, not an
        # OSError): one line naming the URL; every run stored before it is kept for the next try
        try:
            msg = _fspath.storage_error(e, _fspath.as_path(out)) if _fspath.is_url(out) or isinstance(out, _fspath.FsPath) else None
        except Exception:
            msg = None
        if msg is None:
            raise
        raise _io.OutputError(f"{msg} (the runs stored before it are kept: run the sweep again to go on)") from None


def _run(sweep: Sweep, out: str | Path | _fspath.FsPath, jobs: int | None, executor: str, scheduler: str | None, progress: bool,
         on_result: Callable[[dict[str, Any]], None] | None, max_memory: float | None, max_events: float | None,
         inline_bytes: int, summary: bool = False) -> SweepResult:
    # the command line refuses a foreign non-empty --out (without --force) before this; here only a
    # file, an unwritable place or another kind of result is refused
    t_start = time.perf_counter()
    out = _prepare(out)
    if isinstance(out, _fspath.FsPath) and sweep.backend == "testbed":
        raise SweepError(f"{out}: the testbed's runs are stored on this machine; --out must be a local directory")
    specs = sweep.runs()
    key = _scenario_key(sweep.scenario)
    est_events: dict[int, float] = {}  # a parameter point's estimated events (sizes the batches of runs)
    # a point estimated without TCP segments: the summary's window will be the whole run, so every
    # run computes its share for that window from its first run on (with several workers, a worker
    # whose first runs have TCP would otherwise compute theirs for the overlap window, and the
    # close would read every media row again); a wrong guess only costs that fallback
    no_tcp = False
    # the scenario and its JSON prepared for the estimate, by run id: a run done in this process
    # reuses its own instead of preparing it again (workers prepare theirs)
    prepared: dict[int, tuple[Any, Any]] = {}
    if sweep.backend == "sim":
        from jitterlab import sim

        share = 1 if executor != "local" else min(jobs or os.cpu_count() or 1, max(len(specs), 1))
        # one estimate per parameter point (its first replication): random draws such as start
        # times move the cost little, and a point's keys are all checked this way
        avail = sim.available_memory()
        for sp in specs:
            if sp.point in est_events:
                continue
            try:
                prepared[sp.run_id] = sim.prepare_run(sweep.scenario, sp.overrides, key)
                est = _native.estimate_json(prepared[sp.run_id][1])
                est_events[sp.point] = float(est["events"])
                no_tcp = no_tcp or not est.get("tcp_segments", 1.0)
                sim.check_cost(est, max_memory, max_events, share, avail)
            except ScenarioError as e:
                raise SweepError(f"run {sp.run_id} ({', '.join(f'{k}={v}' for k, v in sp.params.items()) or 'base'}): {e}") from None
    sweep_digest = _check_out(out, specs, sweep)
    _remove_stale_tmp(out)
    todo = []
    done_sha: dict[int, str] = {}  # run id: SHA-256 of its record (finished runs)
    # one directory listing, not a stat per run (sweeps of 10,000 tiny runs)
    listing = _fspath.names(out / "runs")
    tried, present = _stored_runs(out, listing)
    located: dict[int, LogEntry] = {}  # finished runs stored in a run log: where
    stale: list[Out] = []  # what runs done again, and finished runs, leave of earlier attempts
    for s in specs:
        rid = f"{s.run_id:06d}"
        # its log entries, then a run file, then an older version's run directory (read as they
        # are); the first that verifies is the run's. A log is never removed: it holds other runs
        files = present.get(s.run_id, [])
        why = None
        for d in tried.get(s.run_id, []):
            w, sha = _verify_run(d, sweep.tables, {"sweep": sweep_digest, "seed": s.seed})
            if w is None and sha is not None:
                done_sha[s.run_id] = sha
                if isinstance(d, LogEntry):
                    located[s.run_id] = d
                stale += [f for f in files if f is not d]
                break
            why = why or w
        else:
            if why is not None:
                print(f"{sweep.name}: run {rid}: {why}; running it again", file=sys.stderr)
            stale += files
            todo.append(s)
    for p in stale:  # before the runs: a retried run's new file is never taken for a leftover
        _remove(p)
    skipped = len(specs) - len(todo)
    local = executor == "local"
    n_workers = 1 if sweep.backend == "testbed" else (jobs or os.cpu_count() or 1) if local else 0
    inline = local and (n_workers == 1 or len(todo) <= 1)
    # Workers store their runs themselves (on storage shared with the client: this machine's disk,
    # or for Dask a directory every worker mounts) and send back a receipt; only a run done in
    # this process hands its tables over in memory.
    # absolute: a kept worker pool keeps the working directory it was started in
    out_s = str(out) if isinstance(out, _fspath.FsPath) else os.path.abspath(out)
    names, testbed = list(sweep.tables), sweep.backend == "testbed"
    sweep_id = f"{os.getpid()}-{time.time_ns()}"  # this invocation (workers' peak memory counts from its first run)
    payloads = [{"sweep_id": sweep_id, "scenario": sweep.scenario, "scenario_key": key, "seed": s.seed, "run_id": s.run_id, "rep": s.rep, "point": s.point,
                 "overrides": s.overrides, "params": s.params, "tables": names, "reduce": sweep.reduce,
                 "identity": {"sweep": sweep_digest, "params": s.params, "seed": s.seed},  # `run_identity`, as JSON writes it
                 "out": out_s, "receipt": not inline, "inline_bytes": inline_bytes, "backend": sweep.backend,
                 "testbed_out": os.path.join(out_s, "testbed", f"{s.run_id:06d}") if testbed else None,
                 "prepared": prepared.get(s.run_id) if inline else None,
                 "summary": {"alone": sweep.replications == 1, "whole_run": no_tcp} if summary else None} for s in todo]
    prepared.clear()  # what a run needs is in its payload
    if sweep.backend == "testbed":
        if not local:
            raise SweepError("sweep.backend = \"testbed\": runs need this machine's namespaces; use --executor local")
        jobs = 1  # one real-time run at a time, never in parallel
    bar = _progress.make(len(todo), skipped, sweep.name, progress, Progress)  # in place in a notebook
    todo_ids = {s.run_id for s in todo}
    digest = None if todo else _combined_digest(specs, done_sha)
    current = None if digest is None else _current_combined(out, tuple(sweep.tables), digest)
    combiner = None if current is not None else \
        _Combiner(out, tuple(sweep.tables), [s.run_id for s in specs], [s.run_id for s in specs if s.run_id not in todo_ids],
                  lazy=("media_packets",) if summary else (), located=located)
    t_runs = time.perf_counter()
    client_s = run_s = cpu_s = 0.0
    peak_rss = 0
    acc: dict[str, Any] = {"client_s": 0.0, "run_s": 0.0, "cpu_s": 0.0, "peak_rss": 0, "fails": [], "done_sha": done_sha, "parts": {}}
    if combiner is not None:
        it = iter(_executor(executor, jobs, scheduler)(payloads, [est_events.get(s.point, 0.0) for s in todo]))
        try:
            _loop_results(it, out, local, inline, combiner, bar, on_result, acc)
        except BaseException:
            combiner.abort()
            getattr(it, "close", lambda: None)()  # the executor stops its runs now, not when collected
            raise
        finally:
            if inline:  # a later sweep of this process (a library user runs many) starts a run log of its own
                close_logs()
    client_s, run_s, cpu_s, peak_rss = acc["client_s"], acc["run_s"], acc["cpu_s"], acc["peak_rss"]
    if inline and todo:  # the runs were done in this process, whose receipts carry no peak (`execute`)
        peak_rss = max(peak_rss, _peak_rss())
    t_collect = time.perf_counter()
    # from the receipts (a failed run's error file starts with the same line): no scan of OUT/runs/
    fails = sorted(acc["fails"], key=lambda r: r["run_id"])
    if current is not None:  # every run verified and the combined tables made of exactly them
        combined = current
    else:
        assert combiner is not None
        combined = combiner.finish()
        # certifies the combined tables (after they are in place): a rerun reuses them
        _write_combined_record(out, tuple(sweep.tables), None if fails else _combined_digest(specs, acc["done_sha"]))
    _fspath.write_text(out / "failures.csv", _failures_csv(fails))
    result = SweepResult(out, combined, fails, len(todo), skipped)
    if summary:
        result.summary_parts = acc["parts"]
    t_end = time.perf_counter()
    result.timing = {"wall_s": t_end - t_start, "prepare_s": t_runs - t_start, "runs_wall_s": t_collect - t_runs,
                     "client_s": client_s, "collect_s": t_end - t_collect, "run_s": run_s, "run_cpu_s": cpu_s,
                     "serial_s": (t_runs - t_start) + client_s + (t_end - t_collect), "workers": n_workers,
                     "worker_peak_rss_bytes": peak_rss, "client_peak_rss_bytes": _peak_rss(), "runs": len(todo),
                     "combine_cpu_s": combiner.cpu_s if combiner is not None else 0.0}
    return result


def _loop_results(it: Iterable[dict[str, Any]], out: Out, local: bool, inline: bool, combiner: _Combiner, bar: Progress,
                  on_result: Callable[[dict[str, Any]], None] | None, acc: dict[str, Any]) -> None:
    """The client's loop over the runs' receipts: hands each run to the combiner, keeps the
    counts and the progress bar. `acc` gathers client_s (the client's own time, serial), run_s,
    cpu_s (the workers'), the workers' peak_rss and fails (the failed runs' first error lines)."""
    it = iter(it)
    client_s = run_s = cpu_s = 0.0
    peak_rss = 0
    while True:
        t0 = time.perf_counter()
        res = next(it, None)
        t1 = time.perf_counter()
        if res is None:
            break
        if inline:  # the run itself was done in next(): its wall time is the worker's, the rest is ours
            client_s += max(t1 - t0 - res["wall_s"], 0.0)
        if not local and res.get("stored") and run_s == 0.0 and \
                not (out / "runs" / res["where"][0] if res.get("where") else _run_file(out, res["run_id"], res["ok"])).exists():
            # checked on the first receipt: a worker wrote somewhere this client does not see
            raise SweepError(f"{out}: a Dask worker stored run {res['run_id']} where this client cannot see it; "
                             "--out must be a directory every worker shares with the client (same path)")
        combiner.add(res["run_id"], res.get("tables") if res["ok"] else None, res["ok"], res.get("pack"), res.get("where"))
        if res.get("done_sha256"):
            acc["done_sha"][int(res["run_id"])] = res["done_sha256"]
        if res.get("summary_part") is not None:
            acc["parts"][int(res["run_id"])] = res["summary_part"]
        if not res["ok"]:
            acc["fails"].append({"run_id": int(res["run_id"]), "error": str(res.get("error", "")).split("\n", 1)[0]})
        run_s += res["wall_s"]
        cpu_s += res.get("cpu_s", 0.0)
        peak_rss = max(peak_rss, res.get("rss_bytes", 0))
        bar.update(res["ok"])
        if on_result:
            on_result(res)
        client_s += time.perf_counter() - t1
        acc.update(client_s=client_s, run_s=run_s, cpu_s=cpu_s, peak_rss=peak_rss)


def serial_fraction(timing: Mapping[str, float]) -> float:
    """The share of a sweep's wall time spent outside the workers (`SweepResult.timing`): planning
    and checks before the first run, the client's handling of each result, collecting the tables.
    With one worker the rest is the runs themselves, so this is the serial part of Amdahl's law."""
    return timing["serial_s"] / timing["wall_s"] if timing["wall_s"] > 0 else 0.0


def _scenario_key(sc: Mapping[str, Any]) -> str:
    """A digest of the base scenario (workers cache its prepared JSON under it)."""
    return _native.sha256_hex(json.dumps(sc, sort_keys=True, default=str).encode())[:32]

