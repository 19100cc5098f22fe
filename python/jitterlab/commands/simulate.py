"""`jitterlab simulate SCENARIO.toml --seed N --out DIR`."""
from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("simulate", help="run one scenario on the built-in simulator")
    p.add_argument("scenario", help="scenario file (TOML)")
    p.add_argument("--seed", type=int, default=1, help="master seed (default 1)")
    p.add_argument("--out", required=True, help="output directory (Parquet tables + manifest.json)")
    return p


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError("simulate is being built")
