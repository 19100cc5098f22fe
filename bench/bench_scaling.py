#!/usr/bin/env python3
"""Sweep scaling (issue 14): a sweep's wall time and serial fraction for 1..N workers through the
local executor and a Dask LocalCluster, then a sweep of many tiny runs through both (runs/s and
the cost per run), with each worker's peak memory.

The medium sweep is `bench/run vs-ns2`'s 126 Chodorek points (--duration s simulated each,
--reps replications). The serial part is what the client does outside the workers (planning and
cost checks, handling each receipt, collecting the tables: `SweepResult.timing`); its fraction of
the 1-worker wall time bounds the speed-up on many cores (Amdahl). The client's combining thread
works beside the runs, so it is not in the serial part, but its CPU time bounds the speed-up too
(16 workers cannot finish before one thread has combined their tables): the last column gives it
and its share of the 1-worker wall time. Dask clusters are started
before the clock starts (a cluster is long-lived); the local pool's start is inside the timing.

    python3 bench/bench_scaling.py [--workers 1,2] [--duration 30] [--reps 1] [--tiny-runs 10000] [--tiny-only]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "python"))

TINY = {
    "name": "tiny", "duration": "100ms",
    "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms"}},
    "traffic": [{"kind": "audio", "from": "a", "to": "b"}],
}


def measure(sw, out: str, executor: str, workers: int, cluster=None) -> dict:
    from jitterlab import sweep

    shutil.rmtree(out, ignore_errors=True)
    if executor == "dask":
        res = sweep.run(sw, out, executor="dask", scheduler=cluster.scheduler_address, progress=False)
    else:
        res = sweep.run(sw, out, jobs=workers, progress=False)
    t = dict(res.timing)
    t["serial_fraction"] = sweep.serial_fraction(t)
    t["workers"] = workers
    if len(res.failures):
        raise SystemExit(f"{len(res.failures)} runs failed: {res.failures.iloc[0].error}")
    return t


def row(label: str, executor: str, t: dict, base: dict | None) -> str:
    n = t["runs"]
    speed = base["wall_s"] / t["wall_s"] if base else 1.0
    return (f"| {label} | {executor} | {t['workers']} | {n} | {t['wall_s']:.2f} | {speed:.2f}× | {t['serial_s']:.2f} | "
            f"{100 * t['serial_fraction']:.1f} % | {n / t['wall_s']:.0f} | {1e3 * t['wall_s'] * t['workers'] / n:.2f} | "
            f"{1e3 * t['run_s'] / n:.2f} | {t['worker_peak_rss_bytes'] / 2**20:.0f} | {t['client_peak_rss_bytes'] / 2**20:.0f} | "
            f"{t['combine_cpu_s']:.2f} ({100 * t['combine_cpu_s'] / (base or t)['wall_s']:.1f} %) |")


def record(label: str, ex: str, t: dict, base: dict, a, counts: list[int]) -> None:
    """The row in docs/performance.md (under `bench/run`), beside the 1-worker run of the same invocation."""
    import perfpage

    what = (f"{t['runs']} runs of {a.duration} s (the 126 points x {a.reps})" if label == "medium" else f"{t['runs']} tiny runs of 0.1 s")
    n = t["runs"]
    perfpage.record(f"sweep scaling, {what}, {ex}, {t['workers']} workers", "bench/run scaling" + "".join(f" {x}" for x in sys.argv[1:]),
                    f"{base['wall_s'] / t['wall_s']:.2f}× the 1-worker wall ({t['wall_s']:.2f} s, {n / t['wall_s']:.0f} runs/s); serial part "
                    f"{100 * t['serial_fraction']:.1f} %; combining thread {t['combine_cpu_s']:.2f} s CPU ({1e3 * t['combine_cpu_s'] / n:.3f} ms a run); "
                    f"peak RSS worker {t['worker_peak_rss_bytes'] / 2**20:.0f} MB, client {t['client_peak_rss_bytes'] / 2**20:.0f} MB",
                    f"1 worker, same invocation: {base['wall_s']:.2f} s wall ({n / base['wall_s']:.0f} runs/s), serial part "
                    f"{100 * base['serial_fraction']:.1f} %, combining thread {base['combine_cpu_s']:.2f} s")


def one(spec: str) -> None:
    """One row, in this (fresh) process: prints its timing as JSON."""
    from jitterlab import sweep

    label, ex, w, f, reps, tiny_runs, work = json.loads(spec)
    if label == "medium":
        sw = sweep.load(f)
        sw.replications = reps
    else:
        sw = sweep.from_dict({"sweep": {"name": "tiny", "seed": 1, "replications": tiny_runs}, "scenario": TINY})
    if ex == "dask":
        from dask.distributed import LocalCluster

        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
            t = measure(sw, os.path.join(work, "out"), ex, w, cl)
    else:
        t = measure(sw, os.path.join(work, "out"), ex, w)
    print(json.dumps(t))


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        return one(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", default=None, help="comma-separated worker counts (default 1..cores)")
    ap.add_argument("--duration", type=int, default=30)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--tiny-runs", type=int, default=10_000)
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--tiny-only", action="store_true", help="the tiny runs only (the combining thread's cost a run)")
    a = ap.parse_args()
    counts = [int(x) for x in a.workers.split(",")] if a.workers else list(range(1, (os.cpu_count() or 1) + 1))
    import bench_vs_ns2

    work = tempfile.mkdtemp(prefix="scaling-")
    try:
        f = os.path.join(work, "medium.toml")
        bench_vs_ns2.sweep_file(f, a.duration)
        print(f"{os.cpu_count()} cores; medium sweep: 126 points x {a.reps} replications x {a.duration} s; tiny: {a.tiny_runs} runs of 0.1 s audio")
        print("| sweep | executor | workers | runs | wall s | speed-up | serial s | serial fraction | runs/s | cost/run ms (wall x workers / runs) | in worker ms/run | worker peak RSS MB | client peak RSS MB | combining thread CPU s (of the 1-worker wall) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        executors = ["local"] + ([] if a.no_dask else ["dask"])
        for label in ("tiny",) if a.tiny_only else ("medium", "tiny"):
            for ex in executors:
                base = None
                for w in counts:
                    # each row in a fresh process: the client's peak memory is its own, not the
                    # high-water mark of the rows before it
                    p = subprocess.run([sys.executable, __file__, "--one", json.dumps([label, ex, w, f, a.reps, a.tiny_runs, work])],
                                       capture_output=True, text=True)
                    if p.returncode != 0:
                        raise SystemExit(f"{label}/{ex}/{w}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
                    t = json.loads(p.stdout.strip().splitlines()[-1])
                    base = base or t
                    print(row(label, ex, t, base), flush=True)
                    if t is not base:
                        record(label, ex, t, base, a, counts)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
