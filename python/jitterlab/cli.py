"""The `jitterlab` command line. Each subcommand lives in `jitterlab/commands/<name>.py` with
`add_parser(subparsers)` and `run(args) -> int`; adding one is one module plus one line in COMMANDS.

User mistakes (a malformed scenario, a damaged capture, a missing file) end with one clear line on
stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# One line per subcommand module.
COMMANDS = [
    "simulate",
    "sweep",
    "reproduce",
    "analyze",
    "testbed",
    "compare",
    "trace",
]


class UserError(Exception):
    """A mistake in the user's input: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jitterlab",
        description="How competing TCP traffic hurts interactive media over a bottleneck: "
        "simulate, analyse captures, compute media-quality metrics.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        mod = importlib.import_module(f"jitterlab.commands.{name}")
        sp = mod.add_parser(sub)
        sp.set_defaults(_run=mod.run)
    return p


def main(argv: list[str] | None = None) -> int:
    from jitterlab import JitterlabError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except (UserError, JitterlabError, FileNotFoundError, IsADirectoryError, PermissionError) as e:
        print(f"jitterlab {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"jitterlab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
