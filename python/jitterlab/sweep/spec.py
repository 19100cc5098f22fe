"""A sweep's specification: a base scenario, parameters to vary, replications, random variables
per replication (`load`, `from_dict`), and the runs it expands to (`Sweep.runs`).

A sweep file (TOML):

    [sweep]
    name = "web-iw"
    scenario = "base.toml"          # or an inline [scenario] table in this file
    seed = 1                        # the sweep seed; every run's seed derives from it
    replications = 50

    [sweep.vary]                    # cross product
    "traffic[1].flows" = [1, 2, 6]
    iw = { key = "traffic[1].iw", values = [3, 10] }      # named column "iw"
    workload = { values = [ { label = "bulk", set = { "traffic[1].kind" = "bulk" } }, ... ] }

    [sweep.zip]                     # lists of equal length, walked together, crossed with vary
    "access.down_rate" = ["3Mbit", "4Mbit"]
    "access.down_queue.limit" = ["500pkt", "700pkt"]

    [sweep.random]                  # drawn per replication
    "traffic[1].start" = { dist = "uniform", min = "10s", max = "12s" }

Seeds: replication r of every parameter point gets the same simulator seed and the same random
draws (common random numbers), so points are compared on paired runs. Both derive from
(sweep seed, r) through numpy's SeedSequence; nothing depends on execution order or executor.
"""
from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from jitterlab import _io, _lazy, _seedseq
from jitterlab import scenario as _scn
from jitterlab._native import ScenarioError
from jitterlab.tables import Tables

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
else:  # numpy draws the random parameters (`derive`): a sweep's worker never imports it
    np, pa = _lazy.module("numpy"), _lazy.module("pyarrow")

TABLES = ("media_packets", "tcp_flows", "queue_samples", "runs", "channels", "flows", "tcp_series")
SWEEP_FORMAT = 1


class SweepError(ScenarioError):
    """A malformed sweep file or an output directory holding a different sweep."""


class _Record:
    """A plain record (what `@dataclass` wrote for these classes, without importing dataclasses and
    inspect, ~7 ms of every `jitterlab sweep` process): equal when its fields are, shown with them."""

    __slots__: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.__slots__)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self.__slots__)})"


class Param(_Record):
    """One varied parameter: a column name and, per value, the scenario keys it sets."""

    __slots__ = ("name", "labels", "sets")

    def __init__(self, name: str, labels: list[Any], sets: list[dict[str, Any]]) -> None:
        self.name, self.labels, self.sets = name, labels, sets


class RunSpec(_Record):
    """One run: its id, parameter point, replication, seed, column values and scenario overrides."""

    __slots__ = ("run_id", "point", "rep", "seed", "params", "overrides")

    def __init__(self, run_id: int, point: int, rep: int, seed: int, params: dict[str, Any], overrides: dict[str, Any]) -> None:
        self.run_id, self.point, self.rep, self.seed, self.params, self.overrides = run_id, point, rep, seed, params, overrides

    def key(self) -> str:
        return json.dumps({"params": self.params, "overrides": self.overrides, "seed": self.seed}, sort_keys=True, default=str)


class Sweep(_Record):
    """A sweep: the base scenario, its parameters (crossed), zipped parameters (walked together),
    replications and random draws per replication, the backend, the tables stored per run
    (presets keep only what their figures read) and `reduce`, computed in the worker from each
    run's full tables (a top-level function, so it pickles): aggregate tables {name:
    pyarrow.Table}, stored with the run when their names are in `tables`, so the per-packet
    tables they summarise need not be stored at all."""

    __slots__ = ("name", "scenario", "seed", "replications", "params", "zipped", "random", "backend", "tables", "reduce")

    def __init__(self, name: str, scenario: dict[str, Any], seed: int = 1, replications: int = 1,
                 params: list[Param] | None = None, zipped: list[Param] | None = None,
                 random: dict[str, dict[str, Any]] | None = None, backend: str = "sim",
                 tables: tuple[str, ...] = TABLES,
                 reduce: Callable[[Tables], Mapping[str, pa.Table]] | None = None) -> None:
        self.name, self.scenario, self.seed, self.replications = name, scenario, seed, replications
        self.params = [] if params is None else params
        self.zipped = [] if zipped is None else zipped
        self.random = {} if random is None else random
        self.backend, self.tables, self.reduce = backend, tables, reduce

    def points(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(column values, scenario overrides) of every parameter point, in a fixed order."""
        axes: list[list[tuple[dict, dict]]] = []
        for p in self.params:
            axes.append([({p.name: lab}, s) for lab, s in zip(p.labels, p.sets)])
        if self.zipped:
            n = len(self.zipped[0].labels)
            z = []
            for i in range(n):
                zcols: dict[str, Any] = {}
                zsets: dict[str, Any] = {}
                for p in self.zipped:
                    zcols[p.name] = p.labels[i]
                    zsets.update(p.sets[i])
                z.append((zcols, zsets))
            axes.append(z)
        out = []
        for combo in itertools.product(*axes) if axes else [()]:
            cols: dict[str, Any] = {}
            sets: dict[str, Any] = {}
            for c, s in combo:
                cols.update(c)
                sets.update(s)
            out.append((cols, sets))
        return out

    def runs(self) -> list[RunSpec]:
        specs = []
        pts = self.points()
        # replication r's seed and draws are the same at every point (common random numbers)
        per_rep = [derive(self.seed, r, self.random) for r in range(self.replications)]
        for pi, (cols, sets) in enumerate(pts):
            for r in range(self.replications):
                seed, draws = per_rep[r]
                params = {**cols, **{k: v for k, v in draws.items()}}
                specs.append(RunSpec(pi * self.replications + r, pi, r, seed, params, {**sets, **draws}))
        return specs


_NUM_UNIT = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-zµ/]*)\s*$")


def _num_unit(v: Any, where: str) -> tuple[float, str]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v), ""
    if isinstance(v, str):
        m = _NUM_UNIT.match(v)
        if m:
            return float(m.group(1)), m.group(2)
    raise SweepError(f"{where}: expected a number or a number with a unit like \"10s\", got {v!r}")


def derive(sweep_seed: int, rep: int, random: Mapping[str, Mapping[str, Any]]) -> tuple[int, dict[str, Any]]:
    """Simulator seed and random draws of replication `rep` (independent of the parameter point)."""
    # numpy's SeedSequence and PCG64, bit for bit, in Python (`_seedseq`): planning a sweep
    # imports numpy only for the draws it alone makes (normal, exponential, choice)
    sim_seed = _seedseq.SeedSequence([int(sweep_seed), int(rep)]).generate_state64(1)[0] & 0x7FFF_FFFF_FFFF_FFFF
    draws: dict[str, Any] = {}
    for i, key in enumerate(sorted(random)):
        spec = random[key]
        entropy = [int(sweep_seed), int(rep), 1 + i]
        where = f"sweep.random.{key}"
        dist = spec.get("dist")
        if dist == "uniform":
            lo, u1 = _num_unit(spec.get("min"), where + ".min")
            hi, u2 = _num_unit(spec.get("max"), where + ".max")
            if u1 != u2:
                raise SweepError(f"{where}: min and max need the same unit, got {u1!r} and {u2!r}")
            x, unit = lo + (hi - lo) * _seedseq.PCG64(_seedseq.SeedSequence(entropy)).random(), u1
            draws[key] = f"{x!r}{unit}" if unit else x
            continue
        g = np.random.default_rng(np.random.SeedSequence(entropy))
        if dist == "normal":
            mu, unit = _num_unit(spec.get("mean"), where + ".mean")
            sd, _ = _num_unit(spec.get("sd"), where + ".sd")
            x = g.normal(mu, sd)
        elif dist == "exponential":
            mu, unit = _num_unit(spec.get("mean"), where + ".mean")
            x = g.exponential(mu)
        elif dist == "choice":
            vals = spec.get("values")
            if not isinstance(vals, list) or not vals:
                raise SweepError(f"{where}.values: expected a non-empty list")
            draws[key] = vals[int(g.integers(len(vals)))]
            continue
        else:
            raise SweepError(f"{where}.dist: must be one of uniform, normal, exponential, choice, got {dist!r}")
        # repr() keeps every bit of the float, so the scenario sees exactly the drawn value
        draws[key] = f"{x!r}{unit}" if unit else x
    return sim_seed, draws


def _param(name: str, v: Any, where: str) -> Param:
    if isinstance(v, list):
        return Param(name, list(v), [{name: x} for x in v])
    if isinstance(v, dict):
        unknown = set(v) - {"key", "values"}
        if unknown:
            raise SweepError(f"{where}.{sorted(unknown)[0]}: unknown key (use key, values)")
        vals = v.get("values")
        if not isinstance(vals, list) or not vals:
            raise SweepError(f"{where}.values: expected a non-empty list")
        if "key" in v:
            return Param(name, list(vals), [{v["key"]: x} for x in vals])
        labels, sets = [], []
        for i, it in enumerate(vals):
            if not (isinstance(it, dict) and "label" in it and isinstance(it.get("set"), dict)):
                raise SweepError(f"{where}.values[{i}]: expected {{ label = ..., set = {{ ... }} }}")
            labels.append(it["label"])
            sets.append(dict(it["set"]))
        return Param(name, labels, sets)
    raise SweepError(f"{where}: expected a list of values or a table with values")


def load(path: str | Path) -> Sweep:
    path = Path(path)
    try:
        text = _io.read_text(path, "sweep file", _io.MAX_SCENARIO_BYTES)
        doc = _scn.parse_toml(text, str(path))
    except (_io.InputError, ScenarioError) as e:
        raise SweepError(str(e)) from None
    return from_dict(doc, base=path.parent, _parsed=True)


def from_dict(doc: Mapping[str, Any], base: Path | None = None, _parsed: bool = False) -> Sweep:
    """The sweep of a sweep file's tables (`_parsed`: `doc` was just read from the file by `load`
    and nothing else holds it, so its inline scenario is not copied)."""
    base = base or Path.cwd()
    unknown = set(doc) - {"sweep", "scenario"}
    if unknown:
        raise SweepError(f"{sorted(unknown)[0]}: unknown top-level table (use [sweep] and optionally [scenario])")
    sw = doc.get("sweep")
    if not isinstance(sw, dict):
        raise SweepError("sweep: missing [sweep] table")
    allowed = {"name", "scenario", "seed", "replications", "vary", "zip", "random", "backend"}
    for k in sw:
        if k not in allowed:
            raise SweepError(f"sweep.{k}: unknown key (known: {', '.join(sorted(allowed))})")
    if "scenario" in sw and "scenario" in doc:
        raise SweepError("sweep.scenario: give either a scenario file or an inline [scenario] table, not both")
    if "scenario" in sw:
        f = Path(sw["scenario"])
        sc = _scn.load(f if f.is_absolute() else base / f)
    elif "scenario" in doc:
        sc = _scn._load_parsed(doc["scenario"]) if _parsed else _scn.load(doc["scenario"])
    else:
        raise SweepError("sweep.scenario: missing (a scenario file, or an inline [scenario] table)")
    seed = sw.get("seed", 1)
    if not isinstance(seed, int) or seed < 0:
        raise SweepError(f"sweep.seed: expected a whole number >= 0, got {seed!r}")
    reps = sw.get("replications", 1)
    if not isinstance(reps, int) or reps < 1:
        raise SweepError(f"sweep.replications: expected a whole number >= 1, got {reps!r}")
    params = [_param(k, v, f"sweep.vary.{k}") for k, v in (sw.get("vary") or {}).items()]
    zipped = [_param(k, v, f"sweep.zip.{k}") for k, v in (sw.get("zip") or {}).items()]
    if zipped and len({len(p.labels) for p in zipped}) != 1:
        raise SweepError("sweep.zip: all lists must have the same length, got " + ", ".join(f"{p.name}={len(p.labels)}" for p in zipped))
    random = sw.get("random") or {}
    for k, v in random.items():
        if not isinstance(v, dict):
            raise SweepError(f"sweep.random.{k}: expected a table like {{ dist = \"uniform\", min = \"10s\", max = \"12s\" }}")
    backend = sw.get("backend", "sim")
    if backend not in ("sim", "testbed"):
        raise SweepError(f"sweep.backend: must be \"sim\" or \"testbed\", got {backend!r}")
    s = Sweep(str(sw.get("name", sc.get("name", "sweep"))), sc, seed, reps, params, zipped, dict(random), backend)
    derive(seed, 0, s.random)  # validates the random specs now rather than in a worker
    return s
