"""`jitterlab report DIR [DIR ...] [--label NAME ...] [--out DIR]`: figures of any output."""
from __future__ import annotations

import argparse
import sys

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "report",
        help="figures and an interactive HTML report of simulate / sweep / analyze / testbed outputs",
        description="Reads one or more output directories (of simulate, sweep, analyze or testbed) and writes "
        "report.html (self-contained, interactive) with figures as SVG/PNG/CSV: OWD and IPDV CDFs, loss and MOS "
        "against the jitter buffer, loss-period levels over time, TCP goodput and completion. Several directories "
        "are overlaid in each figure; a sweep's runs are grouped by its parameters.",
        epilog="examples:\n  jitterlab report out/aqm                      # -> out/aqm/report/report.html\n  jitterlab report out/a out/b --label A --label B --out out/ab --pdf",
        formatter_class=options.ExamplesFormatter
    )
    p.add_argument("dirs", nargs="+", metavar="DIR", help="output directory, or a sweep's fsspec URL (s3://…; its report is written to ./report)")
    p.add_argument("--label", action="append", default=[], help="name of the DIR in the same position (repeatable; default: its name)")
    p.add_argument("--out", default=None, help="report directory (default: DIR/report for one DIR, ./report otherwise)")
    p.add_argument("--title", default=None, help="page title")
    p.add_argument("--force", action="store_true", help="write into a non-empty --out that holds no earlier report")
    p.add_argument("--jb", type=float, default=40.0, help="jitter buffer (ms) of the levels figure and summary (default 40)")
    p.add_argument("--pdf", action="store_true", help="also write each figure as PDF (figures/<name>.pdf), for papers")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import jitterlab.report as report  # the module, not the function of that name
    from jitterlab.cli import UserError

    if len(args.label) > len(args.dirs):
        raise UserError(f"--label: {len(args.label)} labels for {len(args.dirs)} directories")
    labels = args.label + [None] * (len(args.dirs) - len(args.label))
    try:
        outs = [report.load_output(d, lab) for d, lab in zip(args.dirs, labels)]
    except report.OutputError as e:
        raise UserError(str(e)) from None
    seen = [o.label for o in outs]
    dup = {x for x in seen if seen.count(x) > 1}
    if dup:
        raise UserError(f"--label: two inputs are both called {sorted(dup)[0]!r}; name them with --label")
    from jitterlab import _fspath

    # beside a single local input; a URL's report is written here (a report is a local file)
    local_one = len(args.dirs) == 1 and not _fspath.is_url(args.dirs[0])
    out = args.out if args.out else (Path(args.dirs[0]) / "report" if local_one else Path("report"))  # a URL stays a str: prepare_out refuses it
    out = report.prepare_out(out, [o.path for o in outs], force=args.force)
    path = report.build(outs, out, title=args.title, jb_ms=args.jb, pdf=args.pdf, progress=not args.quiet)
    print(f"report: {path}", file=sys.stderr)
    return 0
