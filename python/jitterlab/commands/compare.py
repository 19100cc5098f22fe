"""`jitterlab compare SCENARIO.toml [--seed N] [--cc NAME] [--out DIR]`: simulator vs testbed."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compare",
        help="run one scenario on the simulator and on the testbed; print OWD, loss, media rate and goodput side by side",
        description="Run one scenario, as its file says (its stack profile and link keys), on the simulator and on the "
        "namespace testbed (needs root), and print audio OWD percentiles (over the overlap window), media "
        "loss, each media flow's rate and OWD median and p90 (adaptive `cc` media too), TCP goodput and completion time "
        "side by side.",
        epilog="examples:\n  sudo jitterlab compare scenarios/testbed/umts-bulk.toml --cc cubic",
        formatter_class=options.ExamplesFormatter
    )
    p.add_argument("scenario", help="scenario file (TOML)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cc", default=None, help="congestion control of every TCP flow on both backends (default: the scenario's)")
    p.add_argument("--out", help="keep both runs' tables under DIR/sim and DIR/testbed")
    p.add_argument("--json", help="also write the table as JSON to this file")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable)")
    return p


def run(args: argparse.Namespace) -> int:
    from jitterlab.cli import UserError
    from jitterlab.commands.simulate import parse_sets
    from jitterlab.compare import compare
    from jitterlab.testbed.net import TestbedError

    from jitterlab import _io

    if args.out:  # a URL is refused before hours of runs; the lock keeps a second compare out
        args.out = str(_io.make_out_dir(args.out))
        _io.hold_lock(args.out)
    if args.json:
        _io.local_out(args.json, "--json")
    try:
        df = compare(args.scenario, seed=args.seed, cc=args.cc, out=args.out, overrides=parse_sets(args.set))
    except TestbedError as e:
        raise UserError(str(e)) from None
    if df.attrs.get("disturbed"):
        print(f"warning: the testbed run was disturbed twice by this machine ({df.attrs['disturbed']}); "
              "its numbers measure the machine as much as the stack", file=sys.stderr)
    for src, err in df.attrs.get("errors", {}).items():
        print(f"warning: {src} run failed: {err}", file=sys.stderr)
    if args.json:
        import json

        doc = {"scenario": args.scenario, "set": args.set, "cc": args.cc, "errors": df.attrs.get("errors", {}),
               "testbed_accuracy": df.attrs.get("accuracy", {}),
               "rows": {k: {c: (None if v != v else v) for c, v in r.items()} for k, r in df.to_dict("index").items()}}
        _io.write_text_atomic(Path(args.json), json.dumps(doc, indent=1, default=str))
    with __import__("pandas").option_context("display.float_format", "{:.2f}".format):
        print(df.to_string())
    return 0
