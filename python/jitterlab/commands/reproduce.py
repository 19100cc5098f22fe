"""`jitterlab reproduce pam2013|rwnd|elastic|mitigations|rmcat [--reps N] [--out DIR] [--link fixed|cellular|trace:PATH]
[--stack NAME] [--testbed]`: a study as one command."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from jitterlab.presets import PRESETS

    p = sub.add_parser(
        "reproduce",
        help="reproduce a study (tables, figures, report.html)",
        description="Run a preset study on the simulator: its sweeps, every figure and table of the paper, and one "
        "self-contained report.html checking the paper's findings against our numbers. Finished runs are kept in "
        "OUT, so an interrupted reproduce resumes.",
        epilog="examples:\n  jitterlab reproduce pam2013                    # -> out/pam2013/report.html\n  jitterlab reproduce mitigations --reps 10 --link fixed,cellular\n  jitterlab reproduce pam2013 --link trace:python/jitterlab/examples/traces/cellular-2mbit.down"
        "\n\nrmcat's cases (docs/media.md):\n  RFC 8867 §5.1 and §5.2 (variable capacity), §5.3 (congested feedback link),\n"
        "  §5.4 (competing media), §5.5 (RTT fairness), §5.6 and §5.7 (media against long and short TCP),\n"
        "  §5.8 (pause and resume), §6.1 (media flows with priority: the controllers with a priority weight),\n"
        "  §6.2 ECN (on §5.1), §6.3 (multiple bottlenecks); RFC 8869 cellular; pam2013 (an adaptive call on the PAM 2013 link)",
        formatter_class=options.ExamplesFormatter
    )
    p.add_argument("preset", choices=sorted(PRESETS), help="the study")
    p.add_argument("--reps", type=int, default=None, help="replications per configuration (preset default, e.g. 50)")
    p.add_argument("--out", default=None, help="output directory (default out/<preset>)")
    p.add_argument("--jobs", type=int, default=None, help="local worker processes (default: all cores)")
    p.add_argument("--executor", choices=["local", "dask"], default="local")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (with --executor dask)")
    p.add_argument("--link", action="append", default=None, metavar="LINK",
                   help="pam2013 and mitigations: the access link, fixed (default, calibrated), cellular (jitterlab's cellular model) or "
                   "trace:PATH (the fixed path with a Mahimahi downlink trace); repeat or comma-separate for several links "
                   "side by side in one report (OUT/<link>/ each)")
    p.add_argument("--stack", action="append", default=None, metavar="STACK",
                   help="pam2013: the TCP stack profile(s) of the servers (default linux-3.2, the study's era; e.g. "
                   "--stack linux-3.2,linux-6.18 puts today's Linux beside it, OUT/<link>-<stack>/)")
    p.add_argument("--sensitivity", action="store_true",
                   help="pam2013: also run each parameter the study's documents leave open (round trip, stack era, buffer "
                   "unit, link model) varied alone, and write OUT/sensitivity.csv with the findings each one flips")
    p.add_argument("--keep", action="append", default=None, choices=["packets"],
                   help="elastic: also store every run's per-packet tables (media_packets, queue_samples, tcp_series); by default "
                   "it stores the per-run aggregates its figures read (pam2013 and rwnd keep packets: their figures need them)")
    p.add_argument("--cc", default=None, metavar="CONTROLLER",
                   help="mitigations only: the adaptive video call's congestion controller (gcc, the default; scream; nada)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--testbed", action="store_true",
                   help="mitigations and rmcat (needs root): also run on the testbed, with real Linux TCP, each mitigation "
                   "(mitigations) or RFC 8867 §5.1 and §5.6 per controller (rmcat, ~17 min), beside the simulator's numbers")
    return p


def run(args: argparse.Namespace) -> int:
    from jitterlab.cli import UserError
    from jitterlab.presets import get

    if args.reps is not None and args.reps < 2:
        raise UserError(f"--reps: must be >= 2 (percentiles across replications), got {args.reps}")
    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs: must be >= 1, got {args.jobs}")
    mod = get(args.preset)
    extra: dict[str, Any] = {}
    if args.testbed:
        if args.preset not in ("mitigations", "rmcat"):
            raise UserError(f"--testbed: only the mitigations and rmcat presets have a testbed column, not {args.preset}")
        if args.preset == "rmcat":  # its column is a section the study adds (rmcat_testbed imports rmcat)
            from jitterlab.presets import rmcat_testbed

            extra["sections"] = [rmcat_testbed.section]
        else:
            extra["testbed"] = True
    if args.cc is not None:
        if args.preset != "mitigations":
            raise UserError(f"--cc: only the mitigations preset has an adaptive call to choose a controller for, not {args.preset}")
        from jitterlab.presets.mitigations_adaptive import CONTROLLERS

        if args.cc not in CONTROLLERS:
            raise UserError(f"--cc: unknown controller {args.cc!r} (known: {', '.join(CONTROLLERS)})")
        extra["adaptive_cc"] = args.cc
    if args.link is not None:
        if args.preset not in ("pam2013", "mitigations"):
            raise UserError(f"--link: only the pam2013 and mitigations presets run over alternative links, not {args.preset}")
        from jitterlab.presets.pam2013 import load_link, parse_links

        specs = parse_links(args.link)
        for s in specs:  # every link checked before the first run starts
            load_link(s)
        extra["links"] = specs
    if args.stack is not None:
        if args.preset != "pam2013":
            raise UserError(f"--stack: only the pam2013 preset runs side by side stacks, not {args.preset}")
        from jitterlab.presets.pam2013 import parse_stacks

        extra["stacks"] = parse_stacks(args.stack)
    if args.sensitivity:
        if args.preset != "pam2013":
            raise UserError(f"--sensitivity: only the pam2013 preset has a sensitivity table, not {args.preset}")
        extra["sensitivity_runs"] = True
    if args.keep and args.preset == "elastic":
        extra["keep"] = tuple(args.keep)
    t0 = time.perf_counter()
    from jitterlab import _io

    out = str(_io.make_out_dir(args.out or f"out/{args.preset}"))
    _io.hold_lock(out)  # one reproduce per OUT (its sweeps lock their own directories too)
    path = mod.run(out, reps=args.reps, jobs=args.jobs, executor=args.executor,
                   scheduler=args.scheduler, progress=not args.quiet, **extra)
    print(f"{args.preset}: done in {time.perf_counter() - t0:.1f} s; open {path}", file=sys.stderr)
    return 0
