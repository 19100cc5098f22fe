"""Presets: the studies of shared/papers as runnable experiments (`jitterlab reproduce NAME`).

A preset module provides `DESCRIPTION` and `run(out, reps=None, jobs=None, executor="local",
scheduler=None, progress=True) -> Path` (the report). Adding one is one module plus one line here.
"""
from __future__ import annotations

import importlib
from types import ModuleType

PRESETS = {
    "pam2013": "jitterlab.presets.pam2013",
    "elastic": "jitterlab.presets.elastic",
    "rwnd": "jitterlab.presets.rwnd",
    "mitigations": "jitterlab.presets.mitigations",
    "rmcat": "jitterlab.presets.rmcat",
}


def get(name: str) -> ModuleType:
    if name not in PRESETS:
        from jitterlab.cli import UserError

        raise UserError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
    return importlib.import_module(PRESETS[name])
