"""`jitterlab trace generate MODEL.toml --duration 60s --seed 1 --out FILE`: writes the Mahimahi
trace (one delivery-opportunity millisecond per line) that jitterlab's cellular model produces, so
that anything that replays Mahimahi traces (mm-link, the testbed, `trace = FILE` in a scenario)
replays the model. MODEL.toml is a table of the model's keys (docs/scenarios.md, "Cellular model");
the stamps are those a simulation with `cellular = {…}` on channel `--channel` uses with the same
seed."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tomllib
from pathlib import Path

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "trace",
        help="write the Mahimahi trace of the cellular link model",
        description="Link traces. `trace generate MODEL.toml --duration 60s --seed 1 --out FILE` writes "
        "the delivery opportunities of jitterlab's cellular model as a Mahimahi trace.",
        epilog="examples:\n  jitterlab trace generate model.toml --duration 120s --seed 1 --out cell.down",
        formatter_class=options.ExamplesFormatter
    )
    tsub = p.add_subparsers(dest="trace_command", metavar="ACTION")
    g = tsub.add_parser("generate", help="write the trace the cellular model produces",
                        description="Write the Mahimahi trace the cellular model in MODEL.toml produces.")
    g.add_argument("model", help="TOML file: a table of the cellular model's keys (mean_rate, sigma, coherence, ...)")
    g.add_argument("--duration", required=True, help="how long, with a unit (e.g. 60s)")
    g.add_argument("--seed", type=int, default=1, help="the run's master seed (default 1)")
    g.add_argument("--channel", default="bottleneck",
                   help="channel whose random stream (cellular:<channel>) to use (default bottleneck, "
                   "the downlink of [access] and [dumbbell])")
    g.add_argument("--out", required=True, help="trace file to write")
    return p


def run(args: argparse.Namespace) -> int:
    from jitterlab import _native
    from jitterlab.cli import UserError

    if args.trace_command != "generate":
        raise UserError("give an action: jitterlab trace generate MODEL.toml --duration 60s --seed 1 --out FILE")
    if not (0 <= args.seed < 2**64):
        raise UserError(f"--seed: must be between 0 and 2^64-1, got {args.seed}")
    path = Path(args.model)
    if not path.is_file():
        raise UserError(f"{path}: no such model file")
    try:
        model = tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not a text file (byte offset {e.start} is not UTF-8)") from None
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not valid TOML: {e}") from None
    try:
        stamps, mean_bps = _native.cellular_trace(json.dumps(model), args.duration, args.seed, args.channel)
    except _native.ScenarioError as e:
        msg = str(e)
        raise UserError(msg if msg.startswith("--") else f"{path}: {msg}") from None
    if not stamps:
        raise UserError(f"{path}: the model produced no delivery opportunity in {args.duration} (mean_rate too low)")
    from jitterlab import _io

    out = _io.local_out(args.out, "--out", "trace generate")
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    try:
        tmp.write_text("".join(f"{s}\n" for s in stamps))
        tmp.replace(out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UserError(f"--out {out}: cannot write: {e.strerror}") from None
    got = len(stamps) * 1504 * 8 / (stamps[-1] / 1000)
    print(f"{out}: {len(stamps):,} opportunities over {stamps[-1] / 1000:.1f} s, mean {got / 1e6:.3f} Mbit/s "
          f"(model mean {mean_bps / 1e6:.3f}); seed {args.seed}, stream cellular:{args.channel}", file=sys.stderr)
    return 0
