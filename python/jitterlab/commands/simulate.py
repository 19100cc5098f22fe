"""`jitterlab simulate SCENARIO.toml --seed N --out DIR`: one run on the built-in simulator."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "simulate",
        help="run one scenario on the built-in simulator",
        description="Run one scenario (TOML) on the built-in simulator and write its tables "
        "(media_packets, tcp_flows, queue_samples, runs, channels, flows) as Parquet plus manifest.json. "
        "The run's cost is estimated first; a scenario that would exceed the limits is refused with the estimate. "
        "TCP endpoints are the stack profile the scenario names (`stack = \"linux-6.18\" | \"linux-3.2\" | \"ns2-sack1\"`, "
        "on the file or a TCP entry; default linux-6.18, the testbed's kernel), each key on an entry overriding one switch "
        "(docs/tcp.md, \"Stack profiles\"); the manifest records the profile and the overrides.",
        epilog="examples:\n  jitterlab simulate scenarios/audio-bulk-access.toml --out out/bulk\n  jitterlab simulate web.toml --out out/web --seed 7 --set access.down_rate=3Mbit\n  jitterlab simulate web.toml --out out/web --json | jq .points[0].media",
        formatter_class=options.ExamplesFormatter
    )
    p.add_argument("scenario", help="scenario file (TOML)")
    p.add_argument("--seed", type=options.seed, default=1, help="master seed (default 1)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set access.down_rate=3Mbit (repeatable; VALUE is TOML)")
    options.add_limits(p)
    options.add_json(p)
    p.add_argument("--force", action="store_true", help="write into a non-empty directory jitterlab did not write")
    return p


def parse_sets(items: list[str], option: str = "--set") -> dict[str, Any]:
    """KEY=VALUE items to {dotted key: value}; VALUE is TOML, a bare word a string. The key path is
    checked here, so a garbled one is reported against the option."""
    import tomllib

    from jitterlab import scenario
    from jitterlab.cli import UserError

    out = {}
    for it in items:
        if "=" not in it:
            raise UserError(f"{option} {it!r}: expected KEY=VALUE")
        k, v = it.split("=", 1)
        k = k.strip()
        try:
            scenario.split_path(k)
        except scenario.ScenarioError as e:
            raise UserError(f"{option} {it!r}: {e}") from None
        try:
            val = tomllib.loads(f"x = {v}")["x"]
        except tomllib.TOMLDecodeError:
            val = v  # a bare word is taken as a string
        except RecursionError:
            raise UserError(f"{option} {it!r}: value nested too deeply") from None
        try:
            scenario.check_values({k: val}, option)
        except scenario.ScenarioError as e:
            raise UserError(f"{option} {it!r}: {e}") from None
        out[k] = val
    return out


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from jitterlab import _io, sim

    t0 = time.perf_counter()
    overrides = parse_sets(args.set)
    out = _io.prepare_out(args.out, "sim", force=args.force, lock=True)
    res = sim.simulate(args.scenario, seed=args.seed, overrides=overrides, pcap_dir=Path(out) / "pcap",
                       max_memory=args.max_memory, max_events=args.max_events)
    out = sim.write(res, out)
    tot = res.totals
    name = str(res.arrow["runs"].column("scenario")[0].as_py())  # from Arrow: `res.runs` would import pandas for one name
    m = res.arrow["media_packets"]
    recv = m.num_rows - m.column("recv_ns").null_count
    print(
        f"{name}: seed {args.seed}, {tot['events']:,} events in {time.perf_counter() - t0:.2f} s; "
        f"media {m.num_rows} sent / {recv} received; tcp flows {res.arrow['tcp_flows'].num_rows}; tables in {out}/"
        + (f"; captures: {', '.join(sorted(res.pcap.values()))}" if res.pcap else ""),
        file=sys.stderr,
    )
    options.print_summary(args, res, {"scenario": name, "seed": args.seed, "out": str(out)})
    return 0
