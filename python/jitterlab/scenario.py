"""Scenario files: TOML read into a plain dict, file references resolved, handed to the simulator.

The simulator (Rust) validates every key and reports errors with the key path; this module only
reads the file, makes Mahimahi trace paths (`trace`, `down_trace`, `bottleneck_trace`, ...)
absolute (relative to the scenario file), applies overrides given as dotted paths
(`{"access.down_rate": "3Mbit"}`) for sweeps, and, in `to_json`, inlines each trace file's text as
`{"path": ..., "data": ...}` under the same key (the Rust core does no I/O).
"""
from __future__ import annotations

import datetime
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any, Mapping

from jitterlab import _io
from jitterlab._native import ScenarioError

Scenario = dict[str, Any]


def load(source: str | Path | Mapping[str, Any]) -> Scenario:
    """Reads a scenario from a TOML file path, a TOML string or a mapping (copied).

    Files must be regular (no devices or FIFOs), at most `_io.MAX_SCENARIO_BYTES`, and UTF-8; TOML
    nested deeper than `MAX_DEPTH` or holding dates/times (no scenario key takes one) is refused,
    each with one ScenarioError naming the file and the place.
    """
    if isinstance(source, Mapping):
        import copy  # not at import: a scenario file needs no copy (copy, weakref: ~0.8 ms of a sweep's start)

        check_values(source, "<scenario>")
        sc = copy.deepcopy(dict(source))
        base = Path.cwd()
    else:
        text_given = isinstance(source, str) and ("\n" in source or "=" in source) and not Path(source).exists()
        if text_given:
            text, base, label = str(source), Path.cwd(), "<string>"
        else:
            path = Path(source)
            try:
                text = _io.read_text(path, "scenario file", _io.MAX_SCENARIO_BYTES)
            except _io.InputError as e:
                raise ScenarioError(str(e)) from None
            base, label = path.parent, str(path)
        sc = parse_toml(text, label)
    _inline_traces(sc, base, "")
    return sc


def _load_parsed(table: Any) -> Scenario:
    """`load` of a scenario table just parsed from a file by `parse_toml` (its values checked
    there) that nothing else holds (a sweep file's inline [scenario]): used as it is, not copied."""
    if type(table) is not dict:
        return load(table)
    _inline_traces(table, Path.cwd(), "")
    return table


#: Deepest nesting of tables/arrays accepted (scenarios need 4; Python's TOML parser recurses and
#: would raise RecursionError near 1000).
MAX_DEPTH = 32


def parse_toml(text: str, label: str) -> dict[str, Any]:
    """TOML text to a dict, with every failure as one ScenarioError naming `label`."""
    depth = _max_bracket_depth(text)
    if depth > MAX_DEPTH:
        raise ScenarioError(f"{label}: nested {depth} levels deep; at most {MAX_DEPTH} levels of tables and arrays are accepted")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{label}: not valid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError(f"{label}: nested too deeply to read") from None
    check_values(doc, label)
    return doc


def _max_bracket_depth(text: str) -> int:
    """An upper bound on the nesting of inline arrays/tables, found without parsing (brackets
    inside strings count too, which only makes the bound safer)."""
    d = best = 0
    for ch in text:
        if ch in "[{":
            d += 1
            best = max(best, d)
        elif ch in "]}":
            d = max(d - 1, 0)
    return best


def check_values(node: Any, label: str) -> None:
    """Refuses values JSON cannot carry to the simulator (TOML dates and times) and nesting deeper
    than MAX_DEPTH, naming the key path. Iterative, so no input can exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(node, "", 0)]
    while stack:
        v, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ScenarioError(f"{label}: {path or '<root>'}: nested deeper than {MAX_DEPTH} levels")
        t = type(v)
        if t is str or t is bool:  # most leaves: nothing to check (and no ABC check for Mapping)
            continue
        if t is dict or isinstance(v, Mapping):
            for k, x in v.items():
                stack.append((x, f"{path}.{k}" if path else str(k), depth + 1))
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                stack.append((x, f"{path}[{i}]", depth + 1))
        elif isinstance(v, (datetime.date, datetime.time)):  # datetime is a date
            raise ScenarioError(f"{path or '<root>'}: a TOML date/time ({v.isoformat()}) is not a scenario value; "
                                "durations are strings like \"10s\"" + ("" if label.startswith("<") else f" (in {label})"))
        elif isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**64:
            raise ScenarioError(f"{path or '<root>'}: {v} is out of range (whole numbers must fit 64 bits)" + ("" if label.startswith("<") else f" (in {label})"))
        elif isinstance(v, float) and not math.isfinite(v):
            raise ScenarioError(f"{path or '<root>'}: {v} is not a usable number" + ("" if label.startswith("<") else f" (in {label})"))


def _is_trace_key(key: str) -> bool:
    return key == "trace" or key.endswith("_trace")


def _inline_traces(node: Any, base: Path, path: str) -> None:
    """Makes `trace` / `*_trace` file references absolute (relative to `base`)."""
    if isinstance(node, dict):
        for key in list(node.keys()):
            val = node[key]
            here = f"{path}.{key}" if path else key
            if _is_trace_key(key) and isinstance(val, str):
                node[key] = str(Path(val) if Path(val).is_absolute() else (base / val))
            else:
                _inline_traces(val, base, here)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _inline_traces(item, base, f"{path}[{i}]")


def _read_traces(node: Any, path: str) -> Any:
    """A copy of `node` with every trace path replaced by `{"path", "data"}` (the file's text, read
    by the bounded reader: devices, oversized and non-UTF-8 files are refused naming the key)."""
    if isinstance(node, dict):
        out = {}
        for key, val in node.items():
            here = f"{path}.{key}" if path else key
            if _is_trace_key(key) and isinstance(val, str):
                try:
                    text = _io.read_text(val, "trace file", _io.MAX_TRACE_BYTES)
                except _io.InputError as e:
                    raise ScenarioError(f"{here}: {e}") from None
                out[key] = {"path": val, "data": text}
            else:
                out[key] = _read_traces(val, here)
        return out
    if isinstance(node, list):
        return [_read_traces(v, f"{path}[{i}]") for i, v in enumerate(node)]
    return node


def set_path(sc: Scenario, dotted: str, value: Any) -> None:
    """Sets `a.b[2].c` in the scenario, creating tables as needed. A malformed path, an index that
    does not exist and a key under a non-table are ScenarioErrors naming the path."""
    cur: Any = sc
    parts = split_path(dotted)
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        shown = _join(parts[: i + 1])
        if isinstance(part, int):
            if not isinstance(cur, list):
                raise ScenarioError(f"{dotted}: {_join(parts[:i]) or '<root>'} is not an array, so [{part}] does not exist")
            if part >= len(cur):
                raise ScenarioError(f"{dotted}: index [{part}] does not exist in the scenario ({_join(parts[:i])} has {len(cur)} entries)")
            if last:
                cur[part] = value
            else:
                cur = cur[part]
        else:
            if not isinstance(cur, dict):
                what = "an array (write [N] to pick an entry)" if isinstance(cur, list) else f"a {type(cur).__name__} value"
                raise ScenarioError(f"{dotted}: {_join(parts[:i]) or '<root>'} is {what}, so {shown} does not exist")
            if last:
                cur[part] = value
            else:
                cur = cur.setdefault(part, {})


_SEG = re.compile(r"[A-Za-z0-9_\-]+")


def split_path(dotted: str) -> list[str | int]:
    """`a.b[2].c` -> ["a", "b", 2, "c"]. Keys are bare TOML keys (letters, digits, _ and -);
    indexes are whole numbers >= 0. Anything else is refused with the reason."""
    if not isinstance(dotted, str) or not dotted.strip():
        raise ScenarioError(f"{dotted!r}: empty key path")
    out: list[str | int] = []
    s = dotted.strip()
    i = 0
    expect_key = True
    while i < len(s):
        if s[i] == "[":
            j = s.find("]", i)
            if j < 0:
                raise ScenarioError(f"{dotted}: unclosed '[' at character {i}")
            idx = s[i + 1 : j].strip()
            if not idx.isdigit():
                raise ScenarioError(f"{dotted}: index [{idx}] must be a whole number >= 0 (array entries are picked by position, e.g. traffic[1])")
            if not out:
                raise ScenarioError(f"{dotted}: an index needs a key before it, e.g. traffic[0]")
            out.append(int(idx))
            i = j + 1
            expect_key = False
        elif s[i] == ".":
            if expect_key:
                raise ScenarioError(f"{dotted}: empty key at character {i}")
            i += 1
            expect_key = True
        else:
            if not expect_key:
                raise ScenarioError(f"{dotted}: expected '.' or '[' at character {i}")
            m = _SEG.match(s, i)
            if not m:
                raise ScenarioError(f"{dotted}: unexpected character {s[i]!r} at {i} (keys are letters, digits, _ and -)")
            out.append(m.group(0))
            i = m.end()
            expect_key = False
    if expect_key:
        raise ScenarioError(f"{dotted}: ends with '.'")
    return out


def _join(parts: list[str | int]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


_split = split_path


def with_overrides(sc: Scenario, overrides: Mapping[str, Any] | None) -> Scenario:
    import copy

    out = copy.deepcopy(sc)
    for k, v in (overrides or {}).items():
        set_path(out, k, v)
    return out


def to_json(sc: Scenario) -> str:
    """The scenario as the Rust core takes it: JSON with trace files inlined."""
    return json.dumps(_read_traces(sc, ""), sort_keys=True)


def expand(sc: Scenario | str | Path) -> dict[str, Any]:
    """The scenario parsed, validated and expanded by the Rust core (the one place where keys,
    units and defaults are interpreted): every link direction's capacity, delay, queue, jitter,
    loss and reordering, and the traffic, in base units (ns, bytes, bit/s). Shape: docs/scenarios.md
    ("Expanded form"). Raises ScenarioError naming the key."""
    from jitterlab import _native

    if not isinstance(sc, dict):
        sc = load(sc)
    return json.loads(_native.expand_scenario(to_json(sc)))
