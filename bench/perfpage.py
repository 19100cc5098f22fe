#!/usr/bin/env python3
"""docs/performance.md's measured rows, written by `bench/run` (never by hand, never by the tests).

Each benchmark that `bench/run` starts records its figures here as one row per measurement: what
was measured, the command that measures it, the date (UTC), the machine (CPU, cores, the load
average when the row was measured: this project's machines are often shared) and the reference
measured beside it in the same run (ns-2 for vs-ns2, the 1-worker row for scaling, ...), so that a
figure is only ever compared with what ran next to it. A row is replaced by the next measurement
of the same `what`; rows of other benchmarks are kept. Only the block between BEGIN and END is
rewritten; the rest of the page (its prose, the history) is left alone.

`bench/run` sets JITTERLAB_PERF_PAGE to the page; a benchmark run by hand records nothing unless
it is set. `python3 bench/perfpage.py core < bench_core-output` records `bench_core`'s lines.
"""
from __future__ import annotations

import datetime
import os
import platform
import re
import sys
from pathlib import Path

BEGIN = "<!-- BEGIN bench/run: rows written by bench/run (bench/perfpage.py); do not edit by hand -->"
END = "<!-- END bench/run -->"
COLUMNS = ("what", "command", "date", "machine", "figure", "reference in the same run")
HEADER = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS)
INTRO = """# Performance

Measured by `bench/run` (never part of the tests) and written here by it (`bench/perfpage.py`):
each row gives the command that measures it, the date, the machine with its load average at the
time, the figure and the reference measured beside it in the same run. Compare a figure only with
its own row's reference: the machines differ and are often shared.

"""


def machine() -> str:
    """CPU model, cores and the 1-minute load average (Linux; the platform's name elsewhere)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = f", load {os.getloadavg()[0]:.1f}"
    except OSError:
        load = ""
    return f"{model}, {os.cpu_count()} cores{load}"


def _cell(s: str) -> str:
    return " ".join(str(s).split()).replace("|", "\\|")


def split_row(line: str) -> list[str]:
    """The cells of a table row (`\\|` inside a cell is kept)."""
    cells = re.split(r"(?<!\\)\|", line.strip())
    return [c.strip() for c in cells[1:-1]]


def rows(text: str) -> list[list[str]]:
    """The generated block's rows (header and rule left out); [] when the page has no block."""
    if BEGIN not in text or END not in text:
        return []
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    lines = [ln for ln in block.strip().splitlines() if ln.startswith("|")]
    return [split_row(ln) for ln in lines[2:]]


def render(text: str, table: list[list[str]]) -> str:
    block = "\n".join([HEADER] + ["| " + " | ".join(r) + " |" for r in table])
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + BEGIN + "\n" + block + "\n" + END + rest.split(END, 1)[1]
    return (text or INTRO) + ("\n" if text and not text.endswith("\n") else "") + BEGIN + "\n" + block + "\n" + END + "\n"


def record(what: str, command: str, figure: str, reference: str, page: str | os.PathLike | None = None,
           date: str | None = None, host: str | None = None) -> None:
    """Writes (or replaces) the row `what` of the page (JITTERLAB_PERF_PAGE when `page` is None;
    nothing when neither is set)."""
    page = page or os.environ.get("JITTERLAB_PERF_PAGE")
    if not page:
        return
    p = Path(page)
    text = p.read_text() if p.exists() else ""
    date = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    new = [_cell(what), _cell(f"`{command}`"), _cell(date), _cell(host or machine()), _cell(figure), _cell(reference)]
    table = rows(text)
    for i, r in enumerate(table):
        if r and r[0] == new[0]:
            table[i] = new
            break
    else:
        table.append(new)
    p.write_text(render(text, table))


def record_core(out: str, command: str) -> None:
    """Rows from `bench_core`'s printout: events/s, events and ns per delivered packet of each scenario."""
    for m in re.finditer(r"bench_core (\w+): (.*?), (\d+) s simulated\n(.*?)(?=\nbench_core |\Z)", out, re.S):
        name, desc, secs, body = m.groups()

        def get(pat: str) -> str:
            g = re.search(pat, body)
            return g.group(1) if g else "?"

        eps, epp, nspp = get(r"events/s +([\d.]+ M)"), get(r"events per delivered packet ([\d.]+)"), get(r"ns per delivered packet +([\d.]+)")
        events, wall, speed = get(r"events +(\d+)"), get(r"wall time \(best of \d+\) +([\d.]+ s)"), get(r"speed-up over real time +(\d+x)")
        record(f"simulator core, {name}: {desc}", command,
               f"{eps} events/s; {epp} events and {nspp} ns per delivered packet ({events} events)",
               f"{secs} s simulated in {wall} (best of the run's repetitions): {speed} real time")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "core":
        text = sys.stdin.read()
        sys.stdout.write(text)
        record_core(text, " ".join(sys.argv[2:]) or "bench/run core")
    else:
        raise SystemExit("usage: bench/perfpage.py core [COMMAND] < bench_core output")
