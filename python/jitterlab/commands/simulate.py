"""`jitterlab simulate SCENARIO.toml --seed N --out DIR`: one run on the built-in simulator."""
from __future__ import annotations

import argparse
import sys
import time


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "simulate",
        help="run one scenario on the built-in simulator",
        description="Run one scenario (TOML) on the built-in simulator and write its tables "
        "(media_packets, tcp_flows, queue_samples, runs, channels, flows) as Parquet plus manifest.json.",
    )
    p.add_argument("scenario", help="scenario file (TOML)")
    p.add_argument("--seed", type=int, default=1, help="master seed (default 1)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario key, e.g. --set access.down_rate=3Mbit (repeatable; VALUE is TOML)")
    return p


def parse_sets(items: list[str]) -> dict:
    import tomllib

    from jitterlab.cli import UserError

    out = {}
    for it in items:
        if "=" not in it:
            raise UserError(f"--set {it!r}: expected KEY=VALUE")
        k, v = it.split("=", 1)
        try:
            out[k.strip()] = tomllib.loads(f"x = {v}")["x"]
        except tomllib.TOMLDecodeError:
            out[k.strip()] = v  # a bare word is taken as a string
    return out


def run(args: argparse.Namespace) -> int:
    from jitterlab import sim

    t0 = time.perf_counter()
    from pathlib import Path

    res = sim.simulate(args.scenario, seed=args.seed, overrides=parse_sets(args.set), pcap_dir=Path(args.out) / "pcap")
    out = sim.write(res, args.out)
    tot = res.totals
    m = res.media_packets
    recv = m["recv_ns"].notna().sum()
    print(
        f"{res.runs['scenario'].iloc[0]}: seed {args.seed}, {tot['events']:,} events in {time.perf_counter() - t0:.2f} s; "
        f"media {len(m)} sent / {recv} received; tcp flows {len(res.tcp_flows)}; tables in {out}/"
        + (f"; captures: {', '.join(sorted(res.pcap.values()))}" if res.pcap else ""),
        file=sys.stderr,
    )
    return 0
