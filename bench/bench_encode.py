"""The native module's encoding of a finished sweep's runs, timed in this process (never part of
the tests): each run's tables are read back from OUT/runs/ and encoded again, as a worker encodes
them (`_native.encode_pack`), and the per-packet table column by column (`_native.encode_table`
of that column alone, Parquet). Thread CPU time, best of --reps.

    jitterlab sweep bench/chodorek-126.toml --out OUT --jobs 1 --quiet
    .venv/bin/python bench/bench_encode.py OUT

Compare two builds by swapping the module (python/jitterlab/_native.abi3.so) between runs of this
script on the same OUT: the tables read back do not depend on the build that encodes them.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import time
from typing import Callable

TABLES = ("media_packets", "tcp_flows", "queue_samples", "channels", "flows", "tcp_series", "runs", "rtc_frames", "rtc_series")


def best(f: Callable[[], object], reps: int) -> float:
    out = float("inf")
    for _ in range(reps):
        t = time.thread_time()
        f()
        out = min(out, time.thread_time() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="a finished sweep's output directory")
    ap.add_argument("--table", default="media_packets", help="the table timed column by column")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    from jitterlab import _native
    from jitterlab.sweep import store

    # each run's newest entry in OUT's run logs, its run file (OUT/runs/<run_id>.run), or an older
    # version's run directory
    rd = pathlib.Path(a.out, "runs")
    logged = store._log_entries(pathlib.Path(a.out), os.listdir(rd))
    runs = [store.read_run_tables(e[0], TABLES) for _, e in sorted(logged.items())]
    runs += [store.read_run_tables(d, TABLES) for d in sorted(rd.iterdir())
             if d.name.endswith(store.RUN_FILE) or (d / "done").exists()]
    big = [r[a.table] for r in runs if a.table in r]
    print(f"{len(runs)} runs; {a.table}: {sum(t.num_rows for t in big)} rows")
    print(f"  encode_pack, every run's tables  {best(lambda: [store._encode_pack(r) for r in runs], a.reps) * 1e3:8.1f} ms")
    print(f"  {a.table}, whole table          {best(lambda: [_native.encode_table(t, 0) for t in big], a.reps) * 1e3:8.1f} ms")
    for c in big[0].column_names if big else []:
        cols = [t.select([c]) for t in big]
        print(f"    {c:28s} {best(lambda: [_native.encode_table(t, 0) for t in cols], a.reps) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
