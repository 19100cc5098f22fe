"""Generated blocks in the docs: the lines between `<!-- NAME:begin -->` and `<!-- NAME:end -->`,
the first of them a `<!-- generated … -->` line saying by which command. The scripts that write a
docs table (scripts/*_doc.py) and the tests that check it against the build read and write them
here, so a block means the same to both."""
from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path
from typing import Callable, Sequence


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {re.escape(name)}:begin -->\n)(.*?)(<!-- {re.escape(name)}:end -->)", re.S)


def read(text: str, name: str) -> list[str] | None:
    """The block's lines without its generated-by line; None when the doc has no such block."""
    m = _pattern(name).search(text)
    if m is None:
        return None
    lines = m.group(2).splitlines()
    return lines[1:] if lines and lines[0].startswith("<!-- generated") else lines


def write(doc: Path, name: str, lines: Sequence[str], command: str) -> None:
    """Replaces the block's lines in `doc` (a generated-by line naming `command` and today's date
    first); raises ValueError naming the marker when the doc has none."""
    text = doc.read_text()
    pat = _pattern(name)
    if not pat.search(text):
        raise ValueError(f"{doc.name}: no '<!-- {name}:begin -->' marker")
    head = f"<!-- generated {dt.date.today().isoformat()} by `{command}` -->"
    body = "\n".join([head, *lines]) + "\n"
    doc.write_text(pat.sub(lambda m: m.group(1) + body + m.group(3), text))


def keep_and_write(csv: Path, data: Path, doc: Path, name: str, render: Callable[[Path], list[str]], command: str,
                   to_doc: bool) -> list[str]:
    """A measured run's table: copies `csv` to `data` (the kept run), renders it and, with `to_doc`,
    writes it as block `name` of `doc`. Returns the rendered lines."""
    if csv.resolve() != data.resolve():
        data.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(csv, data)
    lines = render(data)
    if to_doc:
        write(doc, name, lines, command)
    return lines


def study_main(description: str, doc: Path, script: str, default_reps: int, run_study: Callable[[Path, int], None],
               blocks: Callable[[Path, int], dict[str, list[str]]]) -> int:
    """The command line of a script that runs a study and renders its blocks: `--reps N`,
    `--out DIR` (kept; a temporary directory by default), `--doc` (write them into `doc`, else print)."""
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--reps", type=int, default=default_reps)
    ap.add_argument("--out", type=Path, help="the study's output directory (kept; default: a temporary one)")
    ap.add_argument("--doc", action="store_true", help=f"write the blocks into {doc.parent.name}/{doc.name}")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = a.out or Path(tmp)
        run_study(out, a.reps)
        got = blocks(out, a.reps)
    for name, lines in got.items():
        if a.doc:
            write(doc, name, lines, f"python {script} --reps {a.reps} --doc")
        else:
            print("\n".join(lines) + "\n")
    return 0


def kept_run_main(description: str, what: str, data: Path, doc: Path, name: str, render: Callable[[Path], list[str]],
                  script: str) -> int:
    """The command line of a script that keeps a measured run's CSV (`what`) as `data` and renders
    it as block `name` of `doc` (`--doc`; else prints it)."""
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("csv", type=Path, help=what)
    ap.add_argument("--doc", action="store_true")
    a = ap.parse_args()
    lines = keep_and_write(a.csv, data, doc, name, render, f"python {script} OUT/testbed.csv --doc", a.doc)
    if not a.doc:
        print("\n".join(lines))
    return 0
