"""A sweep's run scenario prepared for the core (`prepare_run`; issue 31), and the reference
path it falls back to (`run_json`: the scenario as a dict and its JSON text, as
`scenario.to_json(scenario.with_overrides(base, overrides))` gives them). A process runs one
sweep's base many times: it is serialised (traces read) and parsed by the core once, and each run
only sets its overrides."""
from __future__ import annotations

import json
import math
from typing import Any, Mapping

from jitterlab import _native
from jitterlab import scenario as _scn

_BASE_JSON: dict[str, str] = {}


def run_json(base: Mapping[str, Any], overrides: Mapping[str, Any] | None, cache_key: str | None = None) -> tuple[dict[str, Any], str]:
    """The scenario `base` (already `scenario.load`ed) with `overrides` set, and its JSON for the
    core, as `scenario.to_json(scenario.with_overrides(base, overrides))` gives them. A sweep runs
    one base many times: with `cache_key` the base's trace files are read and it is serialised
    once per process, and each run only parses that JSON back (a fresh copy, in C) and sets its
    overrides (checked like a scenario's values, trace files read: once per value, `_value`)."""
    text = _BASE_JSON.get(cache_key) if cache_key else None
    if text is None:
        text = _scn.to_json(dict(base))
        if cache_key:
            _BASE_JSON.clear()  # one sweep at a time per process: bounded memory
            _VALUES.clear()
            _BASE_NATIVE.clear()
            _BASE_JSON[cache_key] = text
    sc = json.loads(text)
    if overrides:
        keys = _KEYS
        for k, v in overrides.items():
            got = keys.get(k) if type(k) is str else None
            if got is None:
                got = _key(k)
            parts, trace = got
            t = type(v)
            # most values (a sweep's labels' numbers and strings) go in as they are
            if not ((t is str and not trace) or t is bool or t is float and math.isfinite(v)
                    or t is int and -(2**63) <= v < 2**64 or v is None):
                v = _value(k, v, parts, trace)
            if not _set_fast(sc, parts, v):
                _scn.set_path(sc, k, v)  # the slow path names what is wrong with the key
    return sc, json.dumps(sc, sort_keys=True)


#: the base scenario of this process's sweep parsed by the core once (`prepare_run`), by cache key
_BASE_NATIVE: dict[str, Any] = {}


class _Deferred:
    """A run's scenario as a dict, built when first asked for (`run_json`'s dict: a sweep's run
    reads only its tables). Picklable: a `Result` travels with it."""

    __slots__ = ("args", "value")

    def __init__(self, base: Mapping[str, Any], overrides: Mapping[str, Any] | None, cache_key: str | None):
        self.args: tuple[Any, ...] | None = (base, overrides, cache_key)
        self.value: dict[str, Any] | None = None

    def __call__(self) -> dict[str, Any]:
        if self.args is not None:
            self.value = run_json(*self.args)[0]
            self.args = None
        assert self.value is not None
        return self.value

    def __getstate__(self) -> dict[str, Any]:
        return {"value": self()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.args, self.value = None, state["value"]


def prepare_run(base: Mapping[str, Any], overrides: Mapping[str, Any] | None,
                cache_key: str | None = None) -> tuple[dict[str, Any] | _Deferred, Any]:
    """A run's scenario for the core, as `run_json`: (the scenario as a dict, what the core takes:
    `_native.estimate_json` and `_native.simulate_native` accept either). With `cache_key` (a
    sweep), the base is parsed by the core once per process and the overrides are set into a copy
    of it natively (`_native.PreparedScenario.with_overrides`: plain values, tables of them after
    their check, `_value`, at paths that exist); the dict is then built only when read. Anything
    else (a trace file, a path to be created, a value the JSON path writes its own way, any error)
    takes `run_json`'s path, with its checks and messages."""
    if cache_key is None:
        return run_json(base, overrides)
    nat = _BASE_NATIVE.get(cache_key)
    if nat is None:
        text = _BASE_JSON.get(cache_key)
        if text is None:
            run_json(base, None, cache_key)  # serialises the base once (traces read) and resets the caches
            text = _BASE_JSON[cache_key]
        _BASE_NATIVE.clear()
        nat = _BASE_NATIVE[cache_key] = _native.PreparedScenario(text)
    items = _native_items(overrides) if overrides else []
    got = None
    if items is not None:
        try:
            got = nat.with_overrides(items)
        except Exception:  # anything unusual: the Python path says what
            got = None
    if got is None:
        return run_json(base, overrides, cache_key)
    return _Deferred(base, overrides, cache_key), got


def _native_items(overrides: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], Any]] | None:
    """`overrides` as (path, value) for `PreparedScenario.with_overrides`, a value not plain
    checked first (`_value`, as `run_json` checks it); None where `run_json` must do the run:
    a trace file's key, a key not yet parsed well, a check that fails (its message is run_json's)."""
    keys = _KEYS
    out = []
    try:
        for k, v in overrides.items():
            got = keys.get(k) if type(k) is str else None
            if got is None:
                got = _key(k)
            parts, trace = got
            if trace:
                return None
            t = type(v)
            if not (t is str or t is bool or t is float and math.isfinite(v) or t is int and -(2**63) <= v < 2**64 or v is None):
                v = _value(k, v, parts, trace)
            out.append((parts, v))
    except Exception:
        return None
    return out


#: an override key's path and whether its last key names a trace file (a sweep sets the same
#: few keys in every run: each parsed once)
_KEYS: dict[str, tuple[tuple[str | int, ...], bool]] = {}
#: this process's sweep's override values that are not plain, each checked once, by key and the
#: value's identity (the value is kept, so its id is not reused): a run's scenario gets a fresh
#: copy of it (`_value`). Cleared with the base (`run_json`) and when full.
_VALUES: dict[tuple[str, int], tuple[Any, Any]] = {}


def _key(dotted: Any) -> tuple[tuple[str | int, ...], bool]:
    parts = tuple(_scn.split_path(dotted))  # a malformed key: its ScenarioError
    last = parts[-1]
    got = (parts, isinstance(last, str) and _scn._is_trace_key(last))
    if isinstance(dotted, str):
        if len(_KEYS) >= 4096:  # a bound
            _KEYS.clear()
        _KEYS[dotted] = got
    return got


def _value(k: str, v: Any, parts: tuple[str | int, ...], trace: bool) -> Any:
    """Override `v` of key `k` (at `parts`) as a run's scenario takes it: checked
    (`scenario.check_values`), trace files inlined. A path under a trace key is read each time (as
    before the cache); any other value is checked once a sweep, and a flat table of plain values
    (a queue's settings) is then copied by `dict`."""
    if trace and isinstance(v, str):
        last = parts[-1]
        return _scn._read_traces({last: v}, k.rsplit(".", 1)[0] if "." in k else "")[last]
    ck = (k, id(v))
    got = _VALUES.get(ck)
    if got is not None and got[0] is v:
        return dict(v) if got[1] else _scn._read_traces(v, k)
    _scn.check_values({k: v}, "<override>")
    out = _scn._read_traces(v, k)
    if len(_VALUES) >= 1024:  # a bound
        _VALUES.clear()
    _VALUES[ck] = (v, type(v) is dict and all(_plain(x) and not (isinstance(x, str) and _scn._is_trace_key(y))
                                              for y, x in v.items()))
    return out


def _plain(v: Any) -> bool:
    """A value `scenario.check_values` would accept as it is (no walk needed)."""
    if isinstance(v, (str, bool)) or v is None:
        return True
    if isinstance(v, int):
        return -(2**63) <= v < 2**64
    return isinstance(v, float) and math.isfinite(v)


def _set_fast(sc: dict[str, Any], parts: tuple[str | int, ...], value: Any) -> bool:
    """`scenario.set_path` for a path whose every step exists with the right type; False (nothing
    changed) otherwise, so the caller takes the slow path and its error messages."""
    cur: Any = sc
    for p in parts[:-1]:
        if isinstance(p, int):
            if not (isinstance(cur, list) and p < len(cur)):
                return False
        elif not (isinstance(cur, dict) and p in cur):
            return False
        cur = cur[p]
    p = parts[-1]
    if isinstance(p, int):
        if not (isinstance(cur, list) and p < len(cur)):
            return False
    elif not isinstance(cur, dict):
        return False
    cur[p] = value
    return True
