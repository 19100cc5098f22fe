"""A sweep's run prepared natively (`sim.prepare_run`, `_native.PreparedScenario`; issue 31): the
base parsed by the core once, each run's overrides set into a copy in Rust. The value the core
gets must be the one the JSON path (`sim.run_json`: json.dumps, then serde_json's parse) gives,
for every kind of override, a float being the double its repr names on both; what the native
path does not take goes that path, errors included."""
import json
import math
import pickle
import random
import struct

import pytest

from jitterlab import ScenarioError, _native, scenario, sim

BASE = {
    "name": "glue",
    "duration": "200ms",
    "links": {"l": {"from": "a", "to": "b", "delay": "0ms", "rate": "1Mbit"}},
    "traffic": [{"kind": "audio", "from": "a", "to": "b"}, {"kind": "audio", "from": "a", "to": "b", "enabled": False}],
}


def via_json(base, overrides):
    """The core's value of the JSON path, written by serde_json (shortest round-trip floats: two
    values are equal exactly when their texts are)."""
    return _native.PreparedScenario(sim.run_json(base, overrides)[1]).to_json()


def native(base, overrides, key):
    sc, core = sim.prepare_run(base, overrides, key)
    assert isinstance(core, _native.PreparedScenario), f"{overrides} took the JSON path"
    return sc, core


#: floats that serde_json's default parse (without its `float_roundtrip` feature, as the core was
#: built before) read an ulp away from the double their repr names: a scenario's value is the
#: double its text names, on every path (json.dumps's repr, then serde_json's parse)
SERDE_ROUNDS = [969040.6502940995, 8194529476492183.0, 5.696142291685862e-113, 9.132882523695296e+256]


def bits(f):
    return struct.pack("<d", f)


def test_the_core_reads_a_floats_repr_as_that_double():
    """Read back from the JSON path's value (serde_json writes the shortest round-trip digits),
    these floats are the Python floats bit for bit."""
    for f in [*SERDE_ROUNDS, -0.0, 5e-324, 0.1 + 0.2]:
        got = json.loads(via_json(BASE, {"links.l.x": f}))["links"]["l"]["x"]
        assert bits(got) == bits(f), f


def test_every_kind_of_override_gives_the_json_paths_value():
    queue = {"kind": "red", "limit": "50pkt", "thresh": 5, "q_weight": 0.002, "ecn": True, "nested": [1, -2.5, None, {"a": "b"}]}
    ov = {
        "links.l.queue": queue, "links.l.delay": "5ms", "traffic[1].enabled": True, "traffic[0].weight": 2**63,
        "traffic[0].neg": -(2**63), "traffic[0].u": 2**64 - 1, "traffic[0].zero": 0, "traffic[0].m1": -1,
        "traffic[0].x": 1.5, "traffic[0].none": None, "traffic[0].f0": 0.1 + 0.2, "traffic[0].f1": -0.0,
        "traffic[0].f2": 5e-324, "traffic[0].f3": 1e16, "traffic[0].f4": 1e-5, "traffic[0].f5": 1.7976931348623157e308,
        "traffic[0].f6": 123456789.12345679, "traffic[0].f7": 1.0, "traffic[0].f8": 2.0**53 + 2,
        "traffic[0].s": "é\"\\\n\t\u0000😀", "links.l.queue.limit": "7pkt", "duration": "300ms", "name": "renamed",
        **{f"links.l.r{i}": f for i, f in enumerate(SERDE_ROUNDS)},
    }
    for _ in range(2):  # the second time from the caches (keys, checked tables, the base)
        sc, core = native(BASE, ov, "k-prepared-kinds")
        assert core.to_json() == via_json(BASE, ov)
        assert sc() == sim.run_json(BASE, ov)[0]  # the dict, when read, is run_json's
        assert core.name_or("scenario") == "renamed"
    # an override replacing a list, then setting inside the new one, in order
    ov = {"traffic": [{"kind": "audio", "from": "b", "to": "a"}], "traffic[0].from": "a", "traffic[0].to": "b"}
    assert native(BASE, ov, "k-prepared-kinds")[1].to_json() == via_json(BASE, ov)


def test_random_floats_give_the_json_paths_value():
    """Doubles of every magnitude and decimals of few digits, each set as a key of its own."""
    r = random.Random(31)
    floats = []
    for i in range(3000):
        if i % 3 == 0:
            f = struct.unpack("<d", struct.pack("<Q", r.getrandbits(64)))[0]
        else:
            f = r.random() * 10.0 ** r.randint(-30, 30)
            f = round(f, r.randint(0, 8)) if i % 3 == 1 else f
        if math.isfinite(f):
            floats.append(f)
    ov = {f"links.l.f{i}": f for i, f in enumerate(floats)}
    got = native(BASE, ov, "k-prepared-floats")[1].to_json()
    assert got == via_json(BASE, ov)
    # each the double it names (a parse that misses the nearest double, as serde_json's default
    # does for about one in five such draws, fails here)
    back = json.loads(got)["links"]["l"]
    assert [i for i, f in enumerate(floats) if bits(back[f"f{i}"]) != bits(f)] == []


@pytest.mark.parametrize("ov", [
    {"new.table.key": 3},                          # a table to create: set_path's way
    {"traffic[5].enabled": True},                  # an index past the list
    {"duration.x": 1},                             # a step through a string (set_path's error)
    {"links.l.x": (1, 2)},                         # a tuple (json.dumps writes a list)
    {"links.l.x": {1: "a"}},                       # a key json.dumps writes as text
    {"links.l.trace": "no-such.trace"},            # a trace file (read by Python)
    {"links.l.x": float("nan")},                   # refused by the Python path's check
    {"links.l.x": 2**64},
    {"links.l.x": "\ud800"},                       # not UTF-8: json.dumps escapes it, serde_json refuses
])
def test_what_the_native_path_does_not_take_goes_the_json_path(ov):
    try:
        want = sim.run_json(BASE, ov, "k-prepared-other")
    except Exception as e:
        with pytest.raises(type(e)) as got:
            sim.prepare_run(BASE, ov, "k-prepared-other")
        assert str(got.value) == str(e)
        return
    assert sim.prepare_run(BASE, ov, "k-prepared-other") == want


def test_the_native_paths_refusals():
    core = _native.PreparedScenario(scenario.to_json(BASE))
    assert core.with_overrides([]) is core  # nothing to set: the base itself (never changed)
    assert core.with_overrides([(("traffic", 2, "x"), 1)]) is None
    assert core.with_overrides([(("traffic", -1, "x"), 1)]) is None
    assert core.with_overrides([(("links", "l", "x"), object())]) is None
    assert core.with_overrides([(("links", "l", "x"), [1, {"a": {2}}])]) is None
    assert core.with_overrides([(("links", "l", "x"), 1), (("nope", "x"), 1)]) is None  # all or nothing
    assert json.loads(core.to_json()) == json.loads(scenario.to_json(BASE))  # the base unchanged
    assert _native.PreparedScenario(json.dumps({"name": 3})).name_or("d") is None
    assert _native.PreparedScenario("{}").name_or("d") == "d"
    with pytest.raises(ScenarioError, match="not valid JSON"):
        _native.PreparedScenario("{")


def test_a_native_run_has_the_json_paths_tables_estimate_and_scenario():
    ov = {"links.l.delay": "7ms", "links.l.queue": {"kind": "droptail", "limit": "5pkt"}, "traffic[1].enabled": True,
          "traffic[1].start": "0.0123456789s"}
    sc, core = native(BASE, ov, "k-prepared-run")
    assert dict(_native.estimate_json(core)) == dict(_native.estimate_json(sim.run_json(BASE, ov)[1]))
    got = sim.simulate_run(BASE, ov, 9, 4, {"p": 1}, "k-prepared-run")
    ref = sim.simulate_run(BASE, ov, 9, 4, {"p": 1})  # no cache key: the JSON path
    for n in sim.Result.NAMES:
        assert got.arrow[n].equals(ref.arrow[n], check_metadata=True), n
    assert got.arrow["runs"].column("scenario").to_pylist() == ["glue"]
    assert got.arrow["media_packets"].num_rows > 10 and got.arrow["media_packets"].column("flow_id").to_pylist().count(1) > 0
    assert got.scenario == ref.scenario == sim.run_json(BASE, ov)[0]
    back = pickle.loads(pickle.dumps(sim.simulate_run(BASE, ov, 9, 4, {}, "k-prepared-run")))
    assert back.scenario == ref.scenario
    # a scenario without a name: the runs table says "scenario", as `simulate` does
    base = {k: v for k, v in BASE.items() if k != "name"}
    got = sim.simulate_run(base, {"links.l.delay": "1ms"}, 1, 0, {}, "k-prepared-noname")
    assert got.arrow["runs"].column("scenario").to_pylist() == ["scenario"]
