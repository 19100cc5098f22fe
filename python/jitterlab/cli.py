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
    "report",
]


class UserError(Exception):
    """A mistake in the user's input: printed as one line, exit status 2."""


def version_line() -> str:
    """``jitterlab X.Y.Z (commit C)``; the commit is left out when unknown."""
    from jitterlab import provenance

    c = provenance.commit()
    return f"jitterlab {provenance.version()}" + (f" (commit {c})" if c else "")


class _Version(argparse.Action):
    """--version, computed only when asked (it may run git)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kw: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and git commit, then exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(version_line())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jitterlab",
        description="How competing TCP traffic hurts interactive media over a bottleneck: "
        "simulate, analyse captures, compute media-quality metrics.",
    )
    p.add_argument("--version", action=_Version)
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
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] in ("matplotlib", "plotly"):
            print(f"jitterlab {args.command}: error: figures need {e.name.split('.')[0]} (pip install matplotlib plotly)", file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        print(f"jitterlab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
