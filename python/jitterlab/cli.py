"""The `jitterlab` command line. Each subcommand lives in `jitterlab/commands/<name>.py` with
`add_parser(subparsers)` and `run(args) -> int`; adding one is one module plus one line in COMMANDS.

User mistakes (a malformed scenario, a damaged capture, a missing file, a bad option, an output
place that cannot be written) end with one line on stderr and exit status 2, never a traceback:
`main` maps every known exception to that line in one place. Anything else is a bug in jitterlab:
one "internal error" line and exit status 1; the traceback is printed only with
JITTERLAB_TRACEBACK=1 in the environment.
"""
from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from typing import NoReturn

# Our parallelism is one process per run; OpenBLAS's thread pool (started by numpy's import, and
# spinning for a while after) only takes CPU from them: ~0.1 s a process. Set before numpy loads;
# sweep workers inherit it. A user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# One line per subcommand module.
COMMANDS = [
    "simulate",
    "sweep",
    "reproduce",
    "analyze",
    "testbed",
    "compare",
    "report",
    "trace",
    "examples",
    "validate",
    "schema",
    "completion",
]


from jitterlab._native import JitterlabError as _JitterlabError


class UserError(_JitterlabError):
    """A mistake in the user's input: printed as one line, exit status 2. A JitterlabError, so the
    handler recognises it even when this module runs as `python -m jitterlab.cli` (then a second
    copy of this class exists)."""


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


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (the usage text is behind --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


EXAMPLES = """examples:
  jitterlab examples my-examples && cd my-examples     # scenarios and sweeps to start from
  jitterlab validate audio-bulk.toml                   # what would run, its cost, warnings
  jitterlab simulate audio-bulk.toml --out out/bulk    # one run; ends with a summary (--json: as JSON)
  jitterlab sweep aqm-sweep.toml --out out/aqm         # parameters x replications, resumable
  jitterlab report out/aqm                             # out/aqm/report/report.html
  jitterlab COMMAND --help                             # each command's options"""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` (one of COMMANDS), that subcommand's alone: a
    command run needs no other's module and options (~5 ms of a `jitterlab sweep` process)."""
    from jitterlab.commands import options

    p = Parser(
        prog="jitterlab",
        description="How competing TCP traffic hurts interactive media over a bottleneck: "
        "simulate, analyse captures, compute media-quality metrics.",
        epilog=EXAMPLES,
        formatter_class=options.ExamplesFormatter,
    )
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS if only is None else [only]:
        mod = importlib.import_module(f"jitterlab.commands.{name}")
        sp = mod.add_parser(sub)
        sp.set_defaults(_run=mod.run)
    return p


def one_line(e: BaseException) -> str:
    """The message of a known exception on one line."""
    if isinstance(e, OSError) and e.strerror:
        why = {errno.ENOSPC: "no space left on the device", errno.EROFS: "read-only file system"}.get(e.errno or 0, e.strerror)
        msg = f"{e.filename}: {why}" if e.filename is not None else why
    else:
        msg = str(e) or type(e).__name__
    return " ".join(msg.split()) if "\n" in msg else msg


def main(argv: list[str] | None = None) -> int:
    from jitterlab import JitterlabError

    if argv is None:
        argv = sys.argv[1:]
    # `jitterlab COMMAND ...`: that command's parser alone (the same usage, help and errors);
    # anything else (no command, --help, --version, a misspelt command) gets every command's
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    name = f"jitterlab {args.command}"
    try:
        try:
            return int(args._run(args) or 0)
        finally:
            from jitterlab import _io

            _io.release_locks()  # the output directories this command locked
    except (UserError, JitterlabError, OSError) as e:
        print(f"{name}: error: {one_line(e)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] in ("matplotlib", "plotly"):
            print(f"jitterlab {args.command}: error: figures need {e.name.split('.')[0]} (pip install matplotlib plotly)", file=sys.stderr)
            return 2
        raise
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print(f"{name}: error: out of memory (lower the scenario's duration or size, or see --max-memory)", file=sys.stderr)
        return 2
    except Exception as e:  # a bug: say so in one line; the traceback on request
        if os.environ.get("JITTERLAB_TRACEBACK"):
            import traceback

            traceback.print_exc()
        print(f"{name}: internal error: {type(e).__name__}: {one_line(e)} "
              "(a bug in jitterlab; set JITTERLAB_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
