"""`jitterlab sweep FILE --out DIR [--jobs N] [--executor local|dask --scheduler ADDRESS]`."""
from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "sweep",
        help="run a parameter sweep with replications (resumable)",
        description="Run every run of a sweep file (parameters x replications) and store each finished run at once "
        "under OUT/runs/; re-running into the same OUT skips finished runs. Combined tables go to OUT/<table>.parquet.",
    )
    p.add_argument("file", help="sweep file (TOML)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--jobs", type=int, default=None, help="local worker processes (default: all cores)")
    p.add_argument("--executor", choices=["local", "dask"], default="local")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    from jitterlab import sweep
    from jitterlab.cli import UserError

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs: must be >= 1, got {args.jobs}")
    sw = sweep.load(args.file)
    res = sweep.run(sw, args.out, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler, progress=not args.quiet)
    n_ok = res.arrow["runs"].num_rows
    print(f"{sw.name}: {n_ok} runs finished ({res.ran} now, {res.skipped} before), {len(res.failures)} failed; tables in {res.out}/",
          file=sys.stderr)
    if len(res.failures):
        print(f"failed runs are listed in {res.out}/failures.csv (errors in runs/<id>/error.txt)", file=sys.stderr)
        return 1
    return 0
