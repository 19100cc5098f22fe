"""Scenario files: TOML read into a plain dict, file references resolved, handed to the simulator.

The simulator (Rust) validates every key and reports errors with the key path; this module only
reads the file, makes Mahimahi trace paths (`trace`, `down_trace`, `bottleneck_trace`, ...)
absolute (relative to the scenario file), applies overrides given as dotted paths
(`{"access.down_rate": "3Mbit"}`) for sweeps, and, in `to_json`, inlines each trace file's text as
`{"path": ..., "data": ...}` under the same key (the Rust core does no I/O).
"""
from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any, Mapping

from jitterlab._native import ScenarioError

Scenario = dict[str, Any]


def load(source: str | Path | Mapping[str, Any]) -> Scenario:
    """Reads a scenario from a TOML file path, a TOML string or a mapping (copied)."""
    if isinstance(source, Mapping):
        sc = copy.deepcopy(dict(source))
        base = Path.cwd()
    else:
        text_given = isinstance(source, str) and ("\n" in source or "=" in source) and not Path(source).exists()
        if text_given:
            text, base, label = str(source), Path.cwd(), "<string>"
        else:
            path = Path(source)
            if not path.exists():
                raise ScenarioError(f"{path}: no such scenario file")
            if path.is_dir():
                raise ScenarioError(f"{path}: is a directory, expected a scenario file (TOML)")
            text, base, label = path.read_text(encoding="utf-8"), path.parent, str(path)
        try:
            sc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{label}: not valid TOML: {e}") from None
    _inline_traces(sc, base, "")
    return sc


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
    """A copy of `node` with every trace path replaced by `{"path", "data"}` (the file's text)."""
    if isinstance(node, dict):
        out = {}
        for key, val in node.items():
            here = f"{path}.{key}" if path else key
            if _is_trace_key(key) and isinstance(val, str):
                f = Path(val)
                try:
                    raw = f.read_bytes()
                except OSError as e:
                    raise ScenarioError(f"{here}: cannot read trace file {str(f)!r}: {e.strerror}") from None
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ScenarioError(f"{here}: {f}: not a text file (byte offset {e.start} is not UTF-8)") from None
                out[key] = {"path": str(f), "data": text}
            else:
                out[key] = _read_traces(val, here)
        return out
    if isinstance(node, list):
        return [_read_traces(v, f"{path}[{i}]") for i, v in enumerate(node)]
    return node


def set_path(sc: Scenario, dotted: str, value: Any) -> None:
    """Sets `a.b[2].c` in the scenario, creating tables as needed."""
    cur: Any = sc
    parts = _split(dotted)
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(cur, list) or part >= len(cur):
                raise ScenarioError(f"{dotted}: index [{part}] does not exist in the scenario")
            if last:
                cur[part] = value
            else:
                cur = cur[part]
        else:
            if not isinstance(cur, dict):
                raise ScenarioError(f"{dotted}: {part!r} is not inside a table")
            if last:
                cur[part] = value
            else:
                cur = cur.setdefault(part, {})


def _split(dotted: str) -> list[str | int]:
    out: list[str | int] = []
    for seg in dotted.split("."):
        while "[" in seg:
            name, rest = seg.split("[", 1)
            if name:
                out.append(name)
            idx, seg = rest.split("]", 1)
            out.append(int(idx))
        if seg:
            out.append(seg)
    return out


def with_overrides(sc: Scenario, overrides: Mapping[str, Any] | None) -> Scenario:
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
