"""`jitterlab analyze --sender S.pcap --receiver R.pcap [--media auto|udp:PORT|rtp:SSRC] [--out DIR]`,
or `--pairs PAIRS.csv [--exclude-anomalous]` for many replications."""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Mapping

from jitterlab.commands import options

BIG = 64 << 20  # show progress for captures larger than this


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "analyze",
        help="turn sender/receiver captures (pcap, pcapng, gzip) into media_packets, tcp_flows and runs",
        description="Matches each media packet of the sender-side capture to its receiver-side copy, "
        "tracks the competing TCP flows, and flags the anomalies the PAM 2013 study excluded.",
        epilog="examples:\n  jitterlab analyze --sender server.pcap --receiver client.pcap --out out/cap",
        formatter_class=options.ExamplesFormatter
    )
    src = p.add_argument_group("input (one pair, or many)")
    src.add_argument("--sender", help="capture at the media sender (pcap/pcapng, may be .gz)")
    src.add_argument("--receiver", help="capture at the media receiver")
    src.add_argument("--pairs", help="CSV with columns sender,receiver[,run_id,media,clock_offset,tcp_start,<params>...]")
    p.add_argument("--media", default="auto", help="auto (RTP detection), udp:PORT or rtp:SSRC (default auto)")
    p.add_argument("--clock-offset", type=options.duration_ns, default=0,
                   help="receiver clock minus sender clock with a unit, e.g. 3ms or -1.5ms (default 0)")
    p.add_argument("--tcp-start", type=options.nonneg_duration_ns, default=None,
                   help="arrival of the competing TCP traffic after the run start, with a unit, e.g. 10s (default: first SYN)")
    p.add_argument("--t0-ns", type=options.whole(0, options.I64_MAX, "whole nanoseconds since the epoch"), default=None,
                   help="absolute run start in ns since the epoch (default: first sender packet)")
    p.add_argument("--clock-rate", type=options.whole(1, 2**32 - 1, "a clock rate in Hz"), default=None,
                   help="RTP clock rate for a dynamic payload type (Hz)")
    p.add_argument("--spike", type=options.nonneg_duration_ns, default=3_000_000_000,
                   help="delay-spike threshold above the minimum OWD, with a unit (default 3s)")
    p.add_argument("--loss-run", type=options.whole(1, options.I64_MAX), default=50, help="consecutive losses that flag a run (default 50)")
    p.add_argument("--accept-truncated", action="store_true",
                   help="analyse the records before a truncated or corrupt part of a capture instead of refusing it")
    p.add_argument("--exclude-anomalous", action="store_true", help="leave flagged pairs out of the packet and flow tables")
    p.add_argument("--out", help="output directory (Parquet tables + manifest.json)")
    p.add_argument("--force", action="store_true", help="write into a non-empty directory jitterlab did not write")
    p.add_argument("--quiet", action="store_true", help="no summary, no progress")
    return p


class _Progress:
    """Bytes read / total on stderr, for big captures only; a carriage-return line on a terminal."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, phase: str, done: int, total: int, prefix: str = "") -> None:
        if self.quiet or total < BIG:
            return
        now = time.monotonic()
        if done < total and now - self.last < (0.2 if self.tty else 2.0):
            return
        self.last = now
        pct = 100.0 * done / total if total else 100.0
        line = f"{prefix}{phase}: {done / 2**20:,.0f} / {total / 2**20:,.0f} MiB ({pct:.0f}%)"
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _ms(v: Any) -> str:
    try:
        return f"{int(v) / 1e6:.3f} ms"
    except (TypeError, ValueError):
        return "-"


def run(args: argparse.Namespace) -> int:
    from jitterlab import _io, capture
    from jitterlab.cli import UserError

    opts: dict[str, Any] = {
        "media": args.media,
        "clock_offset": args.clock_offset,
        "tcp_start": args.tcp_start,
        "t0_ns": args.t0_ns,
        "clock_rate": args.clock_rate,
        "spike": args.spike,
        "loss_run": args.loss_run,
        "accept_truncated": args.accept_truncated,
    }
    prog = _Progress(args.quiet)
    if args.pairs and (args.sender or args.receiver):
        raise UserError("give either --pairs or --sender/--receiver, not both")
    if not args.pairs and not (args.sender and args.receiver):
        raise UserError("need --sender and --receiver (or --pairs PAIRS.csv)")
    if not args.pairs and args.exclude_anomalous:
        raise UserError("--exclude-anomalous applies to --pairs (many replications)")
    # the output place is checked before hours of analysis, not after
    out_dir = _io.prepare_out(args.out, "capture", force=args.force, lock=True) if args.out else None
    if args.pairs:
        tables = capture.analyze_pairs(
            args.pairs,
            exclude_anomalous=args.exclude_anomalous,
            progress=lambda i, n, ph, d, t: prog(ph, d, t, prefix=f"[pair {i + 1}/{n}] "),
            **opts,
        )
    else:
        if not (args.sender and args.receiver):
            raise UserError("need --sender and --receiver (or --pairs PAIRS.csv)")
        if args.exclude_anomalous:
            raise UserError("--exclude-anomalous applies to --pairs (many replications)")
        tables = capture.analyze(args.sender, args.receiver, progress=prog, **opts)
        tables["runs"] = tables["runs"].assign(excluded=False)

    for w in tables["warnings"].itertuples():
        print(f"jitterlab analyze: warning: run {w.run_id} {w.side}: {w.message}", file=sys.stderr)
    if not args.quiet:
        _summary(tables)
    if out_dir is not None:
        out = capture.write(tables, out_dir, {**opts, "pairs": args.pairs, "exclude_anomalous": args.exclude_anomalous})
        if not args.quiet:
            print(f"wrote {', '.join(sorted(tables))} to {out}")
    return 0


def _summary(t: Mapping[str, Any]) -> None:
    runs = t["runs"]
    for r in runs.to_dict("records"):
        flags = [k[5:] for k in ("flag_delay_spike", "flag_loss_run", "flag_reordering", "flag_duplication") if r[k]]
        excl = " (excluded)" if r.get("excluded") else ""
        print(
            f"run {r['run_id']}: media sent {r['media_sent']}, received {r['media_received']}, lost {r['media_lost']}, "
            f"duplicates {r['duplicates']}, reordered {r['reordered']}; OWD min {_ms(r['min_owd_ns'])}, max {_ms(r['max_owd_ns'])}; "
            f"TCP flows {int((t['tcp_flows']['run_id'] == r['run_id']).sum()) if len(t['tcp_flows']) else 0}, "
            f"tcp_start {_ms(r['tcp_start_ns'])}, tcp_end {_ms(r['tcp_end_ns'])}; "
            f"anomalies: {', '.join(flags) or 'none'}{excl}"
        )
    s = t["rtp_streams"]
    if len(s):
        for x in s[s["side"] == "receiver"].to_dict("records"):
            print(
                f"  RTP 0x{int(x['ssrc']):08x} at receiver: {x['packets']} packets, lost {x['lost']}, "
                f"jitter mean {x['mean_jitter_ms']:.3f} ms, max {x['max_jitter_ms']:.3f} ms (RFC 3550)"
            )
    if len(runs) > 1:
        print(f"{len(runs)} runs, {int(runs['anomalous'].sum())} anomalous, {int(runs['excluded'].sum())} excluded")
