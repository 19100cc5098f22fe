"""`jitterlab schema [--out FILE]`: prints the JSON Schema of the scenario format (generated from
the core's scenario parser; python/jitterlab/schema.py), for editors (e.g. VS Code's Even Better
TOML, taplo) and CI checks."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of the scenario format (for editors)",
        description="Print the JSON Schema (draft 2020-12) of the scenario TOML format, generated from the simulator's "
        "scenario parser: every table's keys, their types and units, every registry's choices (queues, congestion "
        "controls, traffic kinds, stack profiles). Required keys and ranges are checked by `jitterlab validate`.",
        epilog="examples:\n  jitterlab schema > jitterlab-scenario.schema.json\n"
        "  jitterlab schema --out .vscode/jitterlab-scenario.schema.json",
        formatter_class=options.ExamplesFormatter,
    )
    p.add_argument("--out", metavar="FILE", help="write the schema to FILE (replaced atomically) instead of standard output")
    return p


def run(args: argparse.Namespace) -> int:
    from jitterlab import _io
    from jitterlab.schema import schema_text

    text = schema_text()
    if args.out is None:
        sys.stdout.write(text)
        return 0
    out = _io.local_out(args.out, "--out", "schema")
    if out.is_dir():
        raise _io.OutputError(f"--out {out}: is a directory, expected a file name")
    if not out.parent.is_dir():
        raise _io.OutputError(f"--out {out}: directory {out.parent} does not exist")
    _io.write_text_atomic(out, text)
    print(f"wrote {out}", file=sys.stderr)
    return 0
