"""docs/validation.md, "BBR with link jitter" (issue 26): the simulator's side of its table, recomputed
— BBR's audio OWD over the overlap window on `scenarios/testbed/fixed-bulk-bbr-jitter.toml` with the
downlink's jitter after the queue (the file), before it (moved to the core link) and without it.
The order is the mechanism: after the queue the jitter bunches the ACKs, BBR's bandwidth samples run
high and it queues ~60 ms more."""
import copy
import re
import tomllib
from pathlib import Path

from jitterlab import sim
from jitterlab.compare import summary

ROOT = Path(__file__).resolve().parents[1]
SC = ROOT / "scenarios" / "testbed" / "fixed-bulk-bbr-jitter.toml"
SEEDS = (2013, 2014, 2015)


def _row(label: str, side: str) -> tuple[list[float], list[float]]:
    doc = (ROOT / "docs" / "validation.md").read_text()
    m = re.search(rf"^\| {re.escape(label)} \| {re.escape(side)} \| 2013 / 2014 / 2015 \| ([^|]+) \| ([^|]+) \|$", doc, re.M)
    assert m, f"docs/validation.md: no row {label!r} / {side!r}"
    return [float(x) for x in m.group(1).split("/")], [float(x) for x in m.group(2).split("/")]


def _measure(sc: dict) -> tuple[list[float], list[float]]:
    xs = [summary(sim.simulate(sc, seed=s)) for s in SEEDS]
    return [round(x["owd_p50_ms"], 1) for x in xs], [round(x["owd_p90_ms"], 1) for x in xs]


def test_bbr_jitter_table_simulator_side():
    base = tomllib.loads(SC.read_text())
    after = _measure(base)
    assert after == _row("jitter after the queue (the scenario as written)", "simulator")
    before = copy.deepcopy(base)
    before["access"]["core_jitter"] = before["access"].pop("down_jitter")
    b = _measure(before)
    assert b == _row("jitter before the queue (`core_jitter` in place of `down_jitter`)", "simulator")
    none = copy.deepcopy(base)
    del none["access"]["down_jitter"]
    n = _measure(none)
    assert n == _row("no jitter", "simulator")
    # the mechanism's size: the jitter after the queue adds > 50 ms to BBR's median, before it < 15 ms
    assert min(after[0]) - max(n[0]) > 50 and max(b[0]) - min(n[0]) < 15
