#!/usr/bin/env python3
"""jitterlab against ns-2 on identical work: Chodorek's 126 points (experiment 1: 2 Mb/s, B = 1,
N = 0..10; experiment 2: 10 Mb/s, N = 1, B = 1..10; each × DropTail / RED / RED+ECN × bursty / paced
video), 60 s simulated each, the `elastic` preset's model (ns-2's TCP Sack1 with DelAck sinks,
window 20 packets, RED as Chodorek's Table 1), the same TCP start times on both sides.

Both sides are whole processes on one core with their results on disk: `jitterlab sweep --jobs 1`
(one process for the 126 runs, tables in Parquet) and one `ns` process per point (ns-2 has no
sweep driver; each writes its bottleneck queue trace, bench/vs_ns2.tcl). Prints wall and CPU time
(user + sys of the child processes: robust on a loaded machine) of each and the ratios, alternating
the two --pairs times and keeping the best of each; before each timed run the side's previous
output is deleted and every dirty page written back (os.sync), outside the timing, so neither side
pays for the other's files. ns-2 is skipped, with the reason, without `ns`.

    python3 bench/bench_vs_ns2.py [--pairs 1] [--duration 60] [--keep DIR] [--sweep FILE]

--sweep times another sweep file of the same 126 points (bench/chodorek-126.toml, written by hand)
in place of the generated one; ns-2 runs the same points either way. Under `bench/run` the figures
go to docs/performance.md (bench/perfpage.py), each beside the ns-2 run of the same invocation.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
TCL = os.path.join(ROOT, "bench", "vs_ns2.tcl")
MAX_N = 10
SEED = 7


def points() -> list[dict]:
    """The 126 points in sweep order: queue × mode × (exp. 1 N = 0..10, exp. 2 B = 1..10)."""
    cases = [{"exp": 1, "rate": 2, "n": n, "b": 1} for n in range(MAX_N + 1)] + [{"exp": 2, "rate": 10, "n": 1, "b": b} for b in range(1, 11)]
    return [{"queue": q, "mode": m, **c} for q in ("DT", "RED", "RED&ECN") for m in ("bursty", "paced") for c in cases]


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml(str(k))} = {_toml(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def sweep_file(path: str, duration: int) -> None:
    """The 126 points as one sweep file (the `elastic` preset's scenario and queue settings)."""
    from jitterlab.presets import elastic as E

    sc = E.scenario("2Mbit")
    sc["name"] = "vs-ns2"
    sc["duration"] = f"{duration}s"
    queue = {"values": [{"label": name, "set": {"dumbbell.queue": q, **({f"traffic[{i + 1}].ecn": True for i in range(MAX_N)} if name == "RED&ECN" else {})}}
                        for name, q in E.QUEUES.items()]}
    mode = {"values": [{"label": m, "set": {"traffic[0].mode": m}} for m in ("bursty", "paced")]}
    case = {"values": [{"label": f"e{c['exp']}-N{c['n']}-B{c['b']}",
                        "set": {"dumbbell.bottleneck_rate": f"{c['rate']}Mbit", "traffic[0].rate": f"{c['b']}Mbit",
                                **{f"traffic[{i + 1}].enabled": i < c["n"] for i in range(MAX_N)}}}
                       for c in points()[:21]]}
    random = {f"traffic[{i + 1}].start": {"dist": "uniform", "min": "0s", "max": "1s"} for i in range(MAX_N)}
    lines = ["[sweep]", 'name = "vs-ns2"', f"seed = {SEED}", "replications = 1", "", "[sweep.vary]",
             f"queue = {_toml(queue)}", f"mode = {_toml(mode)}", f"case = {_toml(case)}", "", "[sweep.random]"]
    lines += [f"{_toml(k)} = {_toml(v)}" for k, v in random.items()]
    lines += ["", "[scenario]"] + [f"{_toml(k)} = {_toml(v)}" for k, v in sc.items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def starts() -> list[float]:
    """The TCP start times of replication 0, exactly as the sweep draws them."""
    from jitterlab import sweep as S

    _, draws = S.derive(SEED, 0, {f"traffic[{i + 1}].start": {"dist": "uniform", "min": "0s", "max": "1s"} for i in range(MAX_N)})
    return [float(draws[f"traffic[{i + 1}].start"].removesuffix("s")) for i in range(MAX_N)]


def timed(fn) -> tuple[float, float, object]:
    """(wall s, CPU s of the children, result) of fn()."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), out


def clean(out: str) -> None:
    """Removes a side's previous output and writes back every dirty page before the next timed
    run: otherwise one side's deletion and the kernel's writeback of the other side's files
    (ns-2 writes 834 MB) land in the timing (0.3-0.5 s of jitterlab's 2 s on a 2-core VM)."""
    shutil.rmtree(out, ignore_errors=True)
    os.sync()


def run_jitterlab(sweep_path: str, out: str) -> int:
    subprocess.run([os.path.join(ROOT, ".venv", "bin", "jitterlab"), "sweep", sweep_path, "--out", out, "--jobs", "1", "--quiet"], check=True)
    import pyarrow.parquet as pq

    # ParquetFile, not pq.read_table: that imports pandas (through pyarrow.dataset) into this
    # process, and with it numpy.ma, which `split`'s closing summary would then find loaded where
    # a fresh `jitterlab sweep` imports it itself
    with pq.ParquetFile(os.path.join(out, "tcp_flows.parquet")) as f:
        t = f.read(columns=["bytes_acked"])
    return int(sum(t.column("bytes_acked").to_pylist())) // 960


def run_ns2(out: str, duration: int, st: list[float]) -> int:
    os.makedirs(out)
    acked = 0
    for i, p in enumerate(points()):
        q = "DropTail" if p["queue"] == "DT" else "RED"
        variant = "Sack1-ECN" if p["queue"] == "RED&ECN" else "Sack1"
        r = subprocess.run(["ns", TCL, q, str(p["n"]), str(p["rate"]), str(p["b"]), p["mode"], str(duration), os.path.join(out, f"{i:03d}"),
                            ",".join(f"{s:.9f}" for s in st[:max(p["n"], 1)]), variant], capture_output=True, text=True, check=True)
        acked += sum(int(float(l.split()[3])) for l in r.stdout.splitlines() if l.startswith("tcp "))
    return acked


def split(sweep_path: str, out: str) -> dict[str, float]:
    """Where jitterlab's CPU time goes in the same sweep, run in this process with the stages
    wrapped: the simulator call (Rust: scenario build, event loop, the columns as native tables),
    the run's result (its runs table built natively, the tables wrapped for lazy reading), storing the runs, combining them (in a thread while the runs go on), each run's share of the closing summary,
    and the rest (planning, seeds, overrides); plus the imports a fresh `jitterlab` process pays, timed in a
    child, and the rest of the summary `jitterlab sweep` prints at the end."""
    from jitterlab import _native, _procs, sim, sweep
    from jitterlab.sweep import combine, executors

    _procs.keep_freed_memory()  # as `jitterlab sweep` sets its process

    acc: dict[str, float] = {}

    def wrap(mod, name, key):
        f = getattr(mod, name)

        def g(*a, **k):
            # this thread's CPU only: the combiner's thread runs at the same time
            t = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                acc[key] = acc.get(key, 0.0) + time.thread_time() - t
        setattr(mod, name, g)
        return f

    def wrap_thread(cls, name, key):
        # the combiner works in a thread beside the runs: its own CPU time (thread_time)
        f = getattr(cls, name)

        def g(*a, **k):
            t = time.thread_time()
            try:
                return f(*a, **k)
            finally:
                acc[key] = acc.get(key, 0.0) + time.thread_time() - t
        setattr(cls, name, g)
        return f

    from jitterlab import summary

    # the simulator call: scenario build, event loop, the core's columns as native tables
    # (`simulate_native`); `_to_result`: the runs table (native) and the run's result around them
    saved = [(m, n, wrap(m, n, k)) for m, n, k in ((_native, "simulate_native", "simulator call (Rust)"),
                                                  (sim, "_to_result", "run result (runs table, native tables)"),
                                                  (executors, "_store", "storing runs (a pack a run, SHA-256)"),
                                                  (summary, "run_part", "closing summary (each run's share)"))]
    saved += [(combine._Combiner, n, wrap_thread(combine._Combiner, n, "combined tables (a thread during the runs)")) for n in ("_advance", "finish")]
    shutil.rmtree(out, ignore_errors=True)
    try:
        t = time.process_time()
        res = sweep.run(sweep.load(sweep_path), out, jobs=1, progress=False, summary=True)  # as `jitterlab sweep` runs it
        total = time.process_time() - t
    finally:
        for m, n, f in saved:
            setattr(m, n, f)
    acc["planning, seeds, overrides, checks"] = total - sum(acc.values())
    # what `jitterlab sweep` does after the runs: its closing summary, from each run's share
    # (computed by the run while its rows were in memory) and the small tables
    t = time.process_time()
    summary.summarize(res)
    acc["closing summary (after the runs)"] = time.process_time() - t
    imp = timed(lambda: subprocess.run([sys.executable, "-c", "import jitterlab.cli, jitterlab.commands.sweep, jitterlab.sweep, jitterlab.summary"], check=True))[1]
    acc["interpreter start and imports"] = imp
    return acc


def outside_share(acc: dict[str, float]) -> float:
    """The share of a split's CPU outside the simulator call."""
    tot = sum(acc.values())
    return (tot - sum(v for k, v in acc.items() if k.startswith("simulator call"))) / tot if tot > 0 else 0.0


def du(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=1, help="alternating jitterlab/ns-2 pairs; the best of each is kept")
    ap.add_argument("--duration", type=int, default=60, help="simulated seconds per point")
    ap.add_argument("--keep", default=None, help="leave both sides' outputs in this directory")
    ap.add_argument("--no-split", action="store_true", help="skip the in-process split of jitterlab's time by stage")
    ap.add_argument("--split-rounds", type=int, default=5,
                    help="fresh processes the split is run in; the row gives their median share outside the simulator call "
                         "and that round's stages (one round on a shared VM moves the share by ±2 points)")
    ap.add_argument("--no-ns2", action="store_true", help="run jitterlab only (profiling its side)")
    ap.add_argument("--sweep", default=None, help="time this sweep file of the same points instead of the generated one (its duration wins)")
    ap.add_argument("--split-only", nargs=2, metavar=("SWEEP", "OUT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.split_only:  # the split, in this fresh process: its stages as JSON on the last line
        print(json.dumps(split(*a.split_only)))
        return
    work = a.keep or tempfile.mkdtemp(prefix="vs-ns2-")
    os.makedirs(work, exist_ok=True)
    sw = os.path.join(work, "vs-ns2.toml")
    sweep_file(sw, a.duration)
    if a.sweep:
        sw = os.path.abspath(a.sweep)
    which = f"sweep file {os.path.relpath(sw, ROOT)}" if a.sweep else "the generated sweep file"
    cmd = "bench/run vs-ns2" + "".join(f" {x}" for x in sys.argv[1:])
    import perfpage
    st = starts()
    have_ns = shutil.which("ns") is not None and not a.no_ns2
    jl, ns = [], []
    try:
        for _ in range(a.pairs):
            clean(os.path.join(work, "jitterlab"))
            jl.append(timed(lambda: run_jitterlab(sw, os.path.join(work, "jitterlab"))))
            if have_ns:
                clean(os.path.join(work, "ns2"))
                ns.append(timed(lambda: run_ns2(os.path.join(work, "ns2"), a.duration, st)))
        j = min(jl, key=lambda x: x[0])
        print(f"126 Chodorek points × {a.duration} s simulated, one core each, whole processes, results on disk; best of {a.pairs}")
        print(f"jitterlab sweep --jobs 1: wall {j[0]:.2f} s, CPU {j[1]:.2f} s, {j[2]} TCP packets acked, "
              f"{du(os.path.join(work, 'jitterlab')) / 1e6:.1f} MB written")
        if have_ns:
            n = min(ns, key=lambda x: x[0])
            print(f"ns-2.35 (126 processes): wall {n[0]:.2f} s, CPU {n[1]:.2f} s, {n[2]} TCP packets acked, "
                  f"{du(os.path.join(work, 'ns2')) / 1e6:.1f} MB written")
            print(f"ratio ns-2 / jitterlab: wall {n[0] / j[0]:.1f}×, CPU {n[1] / j[1]:.1f}×")
            perfpage.record(f"Chodorek's 126 points × {a.duration} s, one core, whole processes, results on disk ({which})", cmd,
                            f"`jitterlab sweep --jobs 1`: CPU {j[1]:.2f} s, wall {j[0]:.2f} s (best of {a.pairs}); {j[2]} TCP packets acked; "
                            f"**{n[1] / j[1]:.1f}× ns-2 in CPU**, {n[0] / j[0]:.1f}× in wall",
                            f"ns-2.35, one `ns` per point: CPU {n[1]:.2f} s, wall {n[0]:.2f} s (best of {a.pairs}); {n[2]} TCP packets acked")
        else:
            print("ns-2: skipped (--no-ns2)" if a.no_ns2 else "ns-2: skipped (`ns` not found on PATH; Debian/Ubuntu: apt-get install ns2)")
        if not a.no_split:
            # in fresh processes: this one imported the presets (and with them numpy.ma, pandas…) to
            # write the sweep file, which a `jitterlab sweep` process never loads. Several rounds: the
            # median round by share outside the simulator call is reported, with the range of all
            rounds = []
            for _ in range(max(a.split_rounds, 1)):
                clean(os.path.join(work, "split"))
                got = subprocess.run([sys.executable, __file__, "--split-only", sw, os.path.join(work, "split")], check=True,
                                     capture_output=True, text=True)
                rounds.append(json.loads(got.stdout.strip().splitlines()[-1]))
            shares = sorted((outside_share(r), i) for i, r in enumerate(rounds))
            acc = rounds[shares[len(shares) // 2][1]]
            spread = f"{100 * shares[0][0]:.1f}–{100 * shares[-1][0]:.1f} % over {len(rounds)} rounds"
            tot = sum(acc.values())
            print(f"jitterlab's CPU time by stage (the same sweep in one process, plus a fresh process's imports; {tot:.2f} s):")
            for k, v in acc.items():
                print(f"  {k:38s} {v:6.2f} s  {100 * v / tot:5.1f} %")
            loop = sum(v for k, v in acc.items() if k.startswith("simulator call"))
            print(f"outside the simulator call: {tot - loop:.2f} s = {100 * (tot - loop) / tot:.1f} % (the median round; {spread})")
            perfpage.record(f"jitterlab's CPU by stage, the 126 points × {a.duration} s in one process ({which})", cmd,
                            f"outside the simulator call **{100 * (tot - loop) / tot:.1f} %** of {tot:.2f} s (the median round; {spread}): "
                            + "; ".join(f"{k} {v:.2f} s ({100 * v / tot:.0f} %)" for k, v in acc.items()),
                            f"ns-2.35's CPU on the same points in this invocation: {n[1]:.2f} s (the simulator call alone {n[1] / loop:.1f}× faster)"
                            if have_ns else "ns-2 not run in this invocation (--no-ns2): no reference")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
