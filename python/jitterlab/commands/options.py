"""Option types shared by the commands: every unit goes through the scenario's own parsers
(`jitterlab._native.parse_duration_ns/parse_rate_bps/parse_size`), so `--clock-offset 1sec` means
what `"1sec"` means in a scenario, and a bad value is one argparse line naming the option."""
from __future__ import annotations

import argparse
import math

I64_MAX = 2**63 - 1


def duration_ns(s: str) -> int:
    """A duration with a unit ("5ms", "-1.5ms", "1sec"); a bare number is refused with a hint."""
    from jitterlab import _native

    try:
        return int(_native.parse_duration_ns(s))
    except ValueError as e:
        msg = str(e)
        if "needs a unit" in msg:
            msg = f"{s!r} has no unit; write e.g. {s.strip()}s or {s.strip()}ms (units: ns, us, ms, s, min)"
        raise argparse.ArgumentTypeError(msg) from None


def nonneg_duration_ns(s: str) -> int:
    v = duration_ns(s)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {s!r}")
    return v


def size_bytes(s: str) -> int:
    from jitterlab import _native

    try:
        n, unit = _native.parse_size(s)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if unit != "B":
        raise argparse.ArgumentTypeError(f"expected bytes (e.g. 8GB, 512MiB), got {s!r}")
    return int(n)


def whole(lo: int, hi: int, what: str = "a whole number"):
    """An int in [lo, hi]; "1e3" is accepted when it is whole."""

    def parse(s: str) -> int:
        try:
            v = int(s, 10)
        except ValueError:
            try:
                f = float(s)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected {what}, got {s!r}") from None
            if not math.isfinite(f) or f != int(f):
                raise argparse.ArgumentTypeError(f"expected {what}, got {s!r}") from None
            v = int(f)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo} and {hi}, got {s!r}")
        return v

    return parse


seed = whole(0, 2**64 - 1, "a seed (whole number)")


def count(s: str) -> float:
    """A positive count written as 1e9 or 1000000000."""
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number like 1e10, got {s!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be > 0, got {s!r}")
    return v


def add_limits(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-memory", type=size_bytes, default=None, metavar="SIZE",
                   help="refuse a run whose estimated memory exceeds SIZE, e.g. 16GB (default: half the available memory)")
    p.add_argument("--max-events", type=count, default=None, metavar="N",
                   help="refuse a run whose estimated event count exceeds N (default 2e10)")


def add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON document on standard output (messages stay on standard error)")


def print_summary(args: argparse.Namespace, tables: object, extra: dict) -> None:
    """The run's summary (jitterlab.summary) on standard output: lines, or one JSON document."""
    import json
    import sys

    from jitterlab import summary

    s = summary.summarize(tables)  # type: ignore[arg-type]
    if getattr(args, "json", False):
        json.dump({**extra, **s}, sys.stdout, default=str)
        sys.stdout.write("\n")
    else:
        print(summary.format_summary(s))


class ExamplesFormatter(argparse.HelpFormatter):
    """argparse's formatter, but an epilog that starts with "examples:" keeps its lines as written
    (the description is still wrapped to the terminal)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)
