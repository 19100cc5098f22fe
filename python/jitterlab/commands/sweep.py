"""`jitterlab sweep FILE --out DIR|URL [--jobs N] [--executor local|dask --scheduler ADDRESS]`."""
from __future__ import annotations

import argparse
import sys

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "sweep",
        help="run a parameter sweep with replications (resumable)",
        description="Run every run of a sweep file (parameters x replications) and store each finished run at once "
        "under OUT/runs/; re-running into the same OUT skips finished runs. Combined tables go to OUT/<table>.parquet.",
        epilog="examples:\n  jitterlab sweep scenarios/sweeps/buffer-aqm.toml --out out/aqm --jobs 4\n  jitterlab sweep aqm-sweep.toml --out out/aqm --json > summary.json",
        formatter_class=options.ExamplesFormatter
    )
    p.add_argument("file", help="sweep file (TOML)")
    p.add_argument("--out", required=True, help="output directory, or a URL for fsspec (s3://bucket/dir, gcs://…; "
                   "with --executor dask, a place every worker shares with the client)")
    p.add_argument("--jobs", type=options.whole(1, 4096), default=None, help="local worker processes (default: all cores)")
    p.add_argument("--executor", choices=["local", "dask"], default="local")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    options.add_limits(p)
    options.add_json(p)
    p.add_argument("--force", action="store_true", help="write into a non-empty directory jitterlab did not write")
    return p


def run(args: argparse.Namespace) -> int:
    import jitterlab.sweep as sweep  # the module, not the function of that name
    from jitterlab import _fspath, _io, _procs

    _procs.keep_freed_memory()  # this process does the runs of --jobs 1 (and holds their results)

    sw = sweep.load(args.file)
    if _fspath.is_url(args.out):
        _fspath.prepare(_fspath.FsPath.from_url(args.out))
    else:
        _io.prepare_out(args.out, "sweep", force=args.force, lock=True)
    res = sweep.run(sw, args.out, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler, progress=not args.quiet,
                    max_memory=args.max_memory, max_events=args.max_events, summary=True)
    from jitterlab.tables import LazyTables

    arrow = res.arrow
    # counted without making an Arrow table (a sweep's tables: a LazyTables)
    n_ok = arrow.num_rows("runs") if isinstance(arrow, LazyTables) else arrow["runs"].num_rows
    print(f"{sw.name}: {n_ok} runs finished ({res.ran} now, {res.skipped} before), {len(res.failed)} failed; tables in {res.out}/",
          file=sys.stderr)
    options.print_summary(args, res, {"sweep": sw.name, "out": str(res.out), "failed": len(res.failed)})
    if res.failed:
        print(f"failed runs are listed in {res.out}/failures.csv (errors in runs/<id>.error.txt)", file=sys.stderr)
        return 1
    return 0
