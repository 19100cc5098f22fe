"""What every preset shares: running its experiments as sweeps into OUT/<experiment>/, captions."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jitterlab.sweep as _sweep  # the module (`from jitterlab import sweep` is the function)


@dataclass
class Options:
    out: Path
    jobs: int | None = None
    executor: str = "local"
    scheduler: str | None = None
    progress: bool = True


def run_experiment(sw: _sweep.Sweep, name: str, opt: Options) -> _sweep.SweepResult:
    t0 = time.perf_counter()
    res = _sweep.run(sw, opt.out / name, jobs=opt.jobs, executor=opt.executor, scheduler=opt.scheduler, progress=opt.progress)
    if opt.progress:
        print(f"  {name}: {len(res['runs'])} runs ({res.ran} new) in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if len(res.failures):
        first = res.failures.iloc[0]
        raise RuntimeError(f"{name}: {len(res.failures)} runs failed; first (run {first.run_id}): {first.error}")
    return res


def jb_ms(df: Any) -> Any:
    """A metrics table with its ``jb_s`` column (seconds, the API's unit) shown as ``jb_ms`` in the
    same place, rounded to whole µs so that grouping and ``== 40.0`` are exact and the report
    tables and CSVs keep their millisecond columns."""
    i = list(df.columns).index("jb_s")
    out = df.drop(columns="jb_s")
    out.insert(i, "jb_ms", (df["jb_s"] * 1e3).round(3))
    return out


def fmt_ms(x: float) -> str:
    return f"{x * 1e3:.1f} ms"


def caption(scenario: str, reps: int | str, extra: str = "") -> str:
    return f"jitterlab · scenario {scenario} · {reps} replications" + (f" · {extra}" if extra else "")


def flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flattens a scenario dict into dotted keys for the report's parameter table."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            out.update(flat(v, key))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for i, x in enumerate(v):
                out.update(flat(x, f"{key}[{i}]"))
        else:
            out[key] = v
    return out
