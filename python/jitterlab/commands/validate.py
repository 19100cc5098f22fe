"""`jitterlab validate FILE [--json]`: checks a scenario or a sweep file without running it and
prints what would run — the scenario as the Rust core expands it (units, defaults, shorthands), the
cost estimate (events, table rows, memory; a sweep's total over its runs) and every warning."""
from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from jitterlab.commands import options


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "validate",
        help="check a scenario or sweep file: expanded scenario, cost estimate, warnings (runs nothing)",
        description="Check a scenario or a sweep file without running it: print the scenario as expanded by the core "
        "(every key in base units, ns / bytes / bit/s), the cost estimate and every warning. Exit status 2 on an error "
        "(one line naming the key), 0 otherwise.",
        epilog="examples:\n  jitterlab validate scenarios/audio-bulk-access.toml\n"
        "  jitterlab validate scenarios/sweeps/buffer-aqm.toml --json | jq .cost",
        formatter_class=options.ExamplesFormatter,
    )
    p.add_argument("file", help="scenario or sweep file (TOML; a sweep has a [sweep] table)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON document on standard output")
    options.add_limits(p)
    return p


def _short(v: Any, n: int = 8) -> Any:
    """Long lists (a trace's opportunities) cut to their first items, for the terminal."""
    if isinstance(v, dict):
        return {k: _short(x, n) for k, x in v.items()}
    if isinstance(v, list):
        return [_short(x, n) for x in v[:n]] + ([f"… {len(v) - n} more"] if len(v) > n else [])
    return v


def _warnings(sc: dict[str, Any], est: dict[str, float], max_memory: float | None, max_events: float | None, share: int) -> list[str]:
    from jitterlab import sim

    out = []
    try:
        sim.check_cost(est, max_memory, max_events, share)
    except sim.ResourceError as e:
        out.append(str(e))
    kinds = [t.get("kind") for t in sc.get("traffic", []) if isinstance(t, dict)]
    if not any(k in ("audio", "video") for k in kinds):
        out.append("no media flow (audio or video): the media metrics and the report's delay figures will be empty")
    if not any(k in ("bulk", "web", "ftp") for k in kinds):
        out.append("no TCP traffic: metrics use the whole run instead of the TCP overlap window")
    return out


def check(path: Path, max_memory: float | None = None, max_events: float | None = None) -> dict[str, Any]:
    """What `validate` prints, as data: kind, expanded scenario, cost, warnings (and a sweep's points)."""
    import jitterlab.sweep as sweep
    from jitterlab import _native, scenario, sim

    doc = tomllib.loads(path.read_text())
    if "sweep" in doc:
        sw = sweep.load(path)
        specs = sw.runs()
        total: dict[str, float] = {}
        first = None
        warns: list[str] = []
        for s in specs:
            sc = scenario.with_overrides(dict(sw.scenario), s.overrides)
            est = dict(_native.estimate_json(scenario.to_json(sc)))
            for k, v in est.items():
                if k in ("events", "media_rows", "tcp_segments", "sample_rows", "memory_bytes"):
                    total[k] = total.get(k, 0.0) + float(v)
            if first is None:
                first = (sc, est)
                warns = _warnings(sc, est, max_memory, max_events, 1)
        assert first is not None
        return {"kind": "sweep", "name": sw.name, "runs": len(specs), "points": [c for c, _ in sw.points()],
                "replications": sw.replications, "expanded": scenario.expand(first[0]), "cost": first[1],
                "cost_total": total, "warnings": warns}
    sc = scenario.load(path)
    est = sim.estimate(sc)
    return {"kind": "scenario", "name": sc.get("name", path.stem), "expanded": scenario.expand(sc), "cost": est,
            "warnings": _warnings(sc, est, max_memory, max_events, 1)}


def run(args: argparse.Namespace) -> int:
    from jitterlab.cli import UserError

    path = Path(args.file)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    try:
        res = check(path, args.max_memory, args.max_events)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not valid TOML: {e}") from None
    if args.json:
        json.dump(res, sys.stdout, default=str)
        sys.stdout.write("\n")
        return 0
    c = res["cost"]
    print(f"{path}: a valid {res['kind']} ({res['name']})")
    if res["kind"] == "sweep":
        t = res["cost_total"]
        print(f"  {res['runs']} runs: {len(res['points'])} parameter points × {res['replications']} replications")
        for pt in res["points"][:12]:
            print("    " + (", ".join(f"{k}={v}" for k, v in pt.items()) or "(the base scenario)"))
        if len(res["points"]) > 12:
            print(f"    … {len(res['points']) - 12} more")
        print(f"  cost of all runs: about {t['events']:.3g} events, {t['media_rows']:.3g} media rows")
        print("  expanded scenario of the first run:")
    else:
        print("  expanded scenario:")
    for line in json.dumps(_short(res["expanded"]), indent=2, default=str, ensure_ascii=False).splitlines():
        print("    " + line)
    print(f"  cost of a run: about {c['events']:.3g} events, {c['media_rows']:.3g} media rows, "
          f"{c['memory_bytes'] / 1e6:.1f} MB of memory, {c['duration_ns'] / 1e9:g} s simulated")
    for w in res["warnings"]:
        print(f"  warning: {w}")
    if not res["warnings"]:
        print("  no warnings")
    return 0
