"""`jitterlab testbed SCENARIO.toml [--seed N] --out DIR` and `jitterlab testbed --cleanup`: one run
with real Linux TCP in network namespaces (needs root)."""
from __future__ import annotations

import argparse
import sys
import time

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "testbed",
        help="run one scenario on the namespace testbed (real Linux TCP; needs root)",
        description="Run one scenario (the simulator's TOML, [access] or [dumbbell]) with real sockets in network "
        "namespaces: veth links, HTB + pfifo/bfifo (or an AQM the kernel has) at each fixed-rate channel, a userspace "
        "link over TUN for propagation delay, jitter, loss and the queues of trace / cellular channels (Mahimahi's "
        "semantics), tcpdump at the sender and receiver. Writes the same tables as "
        "`jitterlab simulate` (source = testbed) plus the pcaps. `--cleanup` removes namespaces left by killed runs. "
        "TCP is the kernel's: the stack profile must be linux-6.18 (the default); switches Linux can take per namespace, "
        "route or socket are applied (tcp_rmem, timestamps, SACK, RACK, TLP, ECN, initcwnd, rto_min, SO_RCVBUF), any "
        "other is refused with the reason.",
        epilog="examples:\n  sudo jitterlab testbed scenarios/testbed/audio-alone.toml --out out/tb\n  sudo jitterlab testbed --cleanup",
        formatter_class=options.ExamplesFormatter
    )
    p.add_argument("scenario", nargs="?", help="scenario file (TOML)")
    p.add_argument("--seed", type=int, default=1, help="recorded with the results (the testbed itself draws nothing)")
    p.add_argument("--out", help="output directory")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario key (repeatable)")
    p.add_argument("--delay", choices=["auto", "netem", "tun"], default="auto",
                   help="propagation delay from netem (auto: when the kernel has it and no channel needs the userspace link) or the userspace link over TUN")
    p.add_argument("--cleanup", action="store_true", help="remove namespaces of testbed runs whose driver is gone, then exit")
    p.add_argument("--all", action="store_true", help="with --cleanup: also namespaces of runs still alive")
    p.add_argument("--accuracy", action="store_true",
                   help="measure the delay line (audio alone: OWD error and jitter; audio + bulk: release lateness) and exit")
    return p


def run(args: argparse.Namespace) -> int:
    from jitterlab.cli import UserError
    from jitterlab.commands.simulate import parse_sets
    from jitterlab.testbed.net import TestbedError, cleanup, require_root

    try:
        if args.cleanup:
            require_root()
            removed = cleanup(all_runs=args.all)
            print(f"removed {len(removed)} namespace(s)" + (": " + ", ".join(removed) if removed else ""), file=sys.stderr)
            return 0
        if args.accuracy:
            import json

            from jitterlab import testbed

            require_root()
            r = testbed.accuracy(args.out)
            for run in r.values():
                run["delay_line"] = {k: v for k, v in run["delay_line"].items() if not isinstance(v, list)}
            print(json.dumps(r, indent=1))
            return 0
        if not args.scenario or not args.out:
            raise UserError("give a scenario file and --out DIR (or --cleanup)")
        from jitterlab import testbed

        from jitterlab import _io

        args.out = str(_io.make_out_dir(args.out))
        _io.hold_lock(args.out)  # one writer per output
        t0 = time.perf_counter()
        res = testbed.run(args.scenario, seed=args.seed, out=args.out, overrides=parse_sets(args.set), delay=args.delay)
        out = testbed.write(res, args.out)
    except TestbedError as e:
        raise UserError(str(e)) from None
    m = res.media_packets
    recv = m["recv_ns"].notna().sum()
    owd = (m["recv_ns"] - m["send_ns"]).dropna().astype("int64") / 1e6
    dl = res.testbed.get("delay_line", {})
    print(f"{res.runs['scenario'].iloc[0]}: testbed run in {time.perf_counter() - t0:.1f} s; media {len(m)} sent / {recv} received"
          + (f", OWD median {owd.median():.1f} ms p99 {owd.quantile(0.99):.1f} ms" if len(owd) else "")
          + f"; tcp flows {len(res.tcp_flows)}; delay line lateness p50 {dl.get('lateness_p50_us', float('nan')):.0f} us "
          f"p99 {dl.get('lateness_p99_us', float('nan')):.0f} us; tables and pcaps in {out}/", file=sys.stderr)
    for err in res.testbed.get("worker_errors", []):
        print(f"warning: worker: {err}", file=sys.stderr)
    return 0
