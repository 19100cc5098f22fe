"""TCP stack profiles (`crates/sim/src/tcp/profile.rs`): what a TCP endpoint of a scenario is.

A TCP traffic entry names one with `stack = "…"` (or the scenario does, at its top level, for every
entry); the default is `linux-6.18`, the testbed's kernel. Each key the entry gives overrides its
profile's value. This module reads the profiles from the native core and renders the table of
docs/tcp.md ("Stack profiles"), which tests/test_docs.py checks against the current build.
"""
from __future__ import annotations

import json
from typing import Any

from jitterlab import _native


_DATA: dict[str, Any] = {}


def _data() -> dict[str, Any]:
    if not _DATA:
        _DATA.update(json.loads(_native.stack_profiles()))
    return _DATA


def default() -> str:
    """The profile of a TCP entry that names none."""
    return str(_data()["default"])


def names() -> list[str]:
    return [p["name"] for p in _data()["profiles"]]


def profile(name: str) -> dict[str, Any]:
    """{name, summary, switches: {key: value}, sources: {key: source}} of one profile."""
    for p in _data()["profiles"]:
        if p["name"] == name:
            return dict(p)
    raise KeyError(f"no stack profile {name!r} (known: {', '.join(names())})")


def _cell(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def markdown_table() -> str:
    """The switches of every profile side by side (one row a scenario key; "–": the switch does not
    exist in that profile, e.g. Linux's receive-buffer sysctls under ns-2's fixed window)."""
    profs = _data()["profiles"]
    keys = sorted({k for p in profs for k in p["switches"]})
    head = "| key | " + " | ".join(f"`{p['name']}`" + (" (default)" if p["name"] == default() else "") for p in profs) + " |"
    rows = [head, "|---|" + "---|" * len(profs)]
    for k in keys:
        rows.append(f"| `{k}` | " + " | ".join(_cell(p["switches"].get(k)) for p in profs) + " |")
    return "\n".join(rows) + "\n"


def markdown_sources() -> str:
    """Each profile's summary and the source of each switch's value."""
    out = []
    for p in _data()["profiles"]:
        out.append(f"**`{p['name']}`**: {p['summary']}.\n")
        for k, src in p["sources"].items():
            out.append(f"- `{k}`: {src}")
        out.append("")
    return "\n".join(out)


def markdown() -> str:
    """The generated part of docs/tcp.md's "Stack profiles" section."""
    return markdown_table() + "\n" + markdown_sources()


if __name__ == "__main__":  # python -m jitterlab.stacks > the section's generated part
    print(markdown(), end="")
