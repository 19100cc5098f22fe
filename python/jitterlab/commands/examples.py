"""`jitterlab examples [DIR]`: lists the example scenarios and sweeps shipped inside the package, or
copies them (with the traces they read) into DIR to run and edit."""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from jitterlab.commands import options

#: where the examples live in the installed package
ROOT = Path(__file__).resolve().parents[1] / "examples"


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "examples",
        help="list the example scenarios, or copy them into a directory",
        description="Without DIR: list the example scenarios and sweeps shipped with jitterlab (audio + bulk, a web page, "
        "AQMs, a trace link, sweeps, captures) and how to run each. With DIR: copy them there (files already there are kept).",
        epilog="examples:\n  jitterlab examples\n  jitterlab examples my-examples && cd my-examples\n"
        "  jitterlab simulate audio-bulk.toml --out out/audio-bulk && jitterlab report out/audio-bulk",
        formatter_class=options.ExamplesFormatter,
    )
    p.add_argument("dir", nargs="?", help="directory to copy the examples into (created if missing)")
    return p


def describe(path: Path) -> tuple[str, str]:
    """(first comment sentence, the first command line shown in the file's header)."""
    head = []
    cmd = ""
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        text = line.lstrip("#").strip()
        if text.startswith("jitterlab ") and not cmd:
            cmd = text
        elif not cmd:
            head.append(text)
    what = " ".join(head)
    return (what.split(". ")[0].split(": ")[0].rstrip("."), cmd)


def files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def run(args: argparse.Namespace) -> int:
    from jitterlab.cli import UserError

    if args.dir is None:
        for p in sorted(ROOT.glob("*.toml")):
            what, cmd = describe(p)
            print(f"{p.name:18s} {what}")
            if cmd:
                print(f"{'':18s}   {cmd}")
        print(f"\ncopy them with: jitterlab examples DIR   (from {ROOT})")
        return 0
    dest = Path(args.dir)
    if dest.exists() and not dest.is_dir():
        raise UserError(f"{dest}: exists and is not a directory")
    copied, kept = 0, []
    for f in files():
        rel = f.relative_to(ROOT)
        to = dest / rel
        if to.exists():
            kept.append(str(rel))
            continue
        try:
            to.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, to)
        except OSError as e:
            raise UserError(f"{to}: cannot write: {e.strerror}") from None
        copied += 1
    print(f"{copied} files copied into {dest}/" + (f"; kept {len(kept)} already there: {', '.join(kept)}" if kept else ""), file=sys.stderr)
    return 0
