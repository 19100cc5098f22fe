"""A module imported when first used: `np = _lazy.module("numpy")` at the top of a module whose
functions need numpy only on some paths (a sweep's worker stores its runs and computes their
summary shares without pyarrow or numpy: importing them cost each process ~0.13 s, issue 31)."""
from __future__ import annotations

import importlib
from typing import Any


class _Module:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def module(name: str) -> Any:
    """A stand-in for module `name`: each attribute read imports it (once; then a dict lookup)."""
    return _Module(name)
