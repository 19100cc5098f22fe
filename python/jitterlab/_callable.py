"""Callable modules: `jitterlab.sweep(...)` runs a sweep and `jitterlab.report(...)` writes a
report, while `jitterlab.sweep.load`, `jitterlab.sweep.run`, `jitterlab.report.build` … stay where
they are.

Why a module that is callable, and not a function `jitterlab.sweep` beside a package of another
name: a package attribute cannot be a function and a submodule of the same name at once, because
importing the submodule (`import jitterlab.sweep`, which every worker process and `pickle` do)
rebinds the attribute to the module. Renaming the module instead would break every
`from jitterlab import sweep; sweep.load(...)` and `import jitterlab.sweep as S` in users' code.
So the module's class is swapped for a subclass whose `__call__` calls the module's function: the
one trick, in this one place.

Type checkers see the function (jitterlab/__init__.py imports it under TYPE_CHECKING), so
`sweep(...)` is checked against the function's signature."""
from __future__ import annotations

import sys
from typing import Any, Callable


def make_callable(module_name: str, fn: Callable[..., Any]) -> None:
    """Makes module `module_name` callable as `fn`."""

    class _CallableModule(type(sys)):  # type: ignore[misc]
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

    _CallableModule.__name__ = _CallableModule.__qualname__ = f"CallableModule[{module_name}]"
    sys.modules[module_name].__class__ = _CallableModule
