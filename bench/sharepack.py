#!/usr/bin/env python3
"""Times the two per-run native calls of `jitterlab sweep` outside the simulator, `_native.run_share`
(a run's share of the closing summary) and `_native.encode_pack` (a run's tables encoded, packed and
hashed), with two builds of the native module side by side in one process, alternated, so that both
are compared under the same load. Not a test.

    .venv/bin/python bench/sharepack.py OLD/_native.abi3.so NEW/_native.abi3.so [--rounds 10]

The sweep file (default bench/chodorek-126.toml) is run once in this process (`--jobs 1`, into a
temporary directory) with the checkout's module, recording every call's arguments; each round then
replays all of them on each build (thread CPU time; the order of the builds alternates). Every call
must return the same values (arrays bit for bit, packs byte for byte) from both builds.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import shutil
import statistics
import tempfile
import time
from typing import Any

FUNCS = ("run_share", "encode_pack")


def load(path: str) -> Any:
    # the module's init symbol is PyInit__native whatever the file's directory
    spec = importlib.util.spec_from_file_location("_native", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def capture(sweep_file: str) -> dict[str, list[tuple]]:
    """Every call's arguments of one `jitterlab sweep --jobs 1` run in this process."""
    from jitterlab import _native, _procs, cli

    _procs.keep_freed_memory()  # as the sweep command runs: a run's freed memory serves the next
    calls: dict[str, list[tuple]] = {f: [] for f in FUNCS}
    originals = {f: getattr(_native, f) for f in FUNCS}
    for f, real in originals.items():

        def rec(*a: Any, _f: str = f, _real: Any = real) -> Any:
            calls[_f].append(a)
            return _real(*a)

        setattr(_native, f, rec)
    out = tempfile.mkdtemp(prefix="sharepack-")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            cli.main(["sweep", sweep_file, "--out", out + "/out", "--jobs", "1", "--quiet", "--json"])
    finally:
        shutil.rmtree(out)
        for f, real in originals.items():
            setattr(_native, f, real)
    return calls


def same(x: Any, y: Any) -> bool:
    import numpy as np

    if isinstance(x, dict):
        return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, (list, tuple)):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    return bool(x == y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--sweep", default="bench/chodorek-126.toml")
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    mods = {"old": load(a.old), "new": load(a.new)}
    calls = capture(a.sweep)
    for f, args in calls.items():
        differ = sum(not same(getattr(mods["old"], f)(*c), getattr(mods["new"], f)(*c)) for c in args)
        print(f"{f}: {len(args)} calls, {differ} with different results")
        if differ:
            raise SystemExit(1)
    took: dict[tuple[str, str], list[float]] = {(f, b): [] for f in FUNCS for b in mods}
    for r in range(a.rounds):
        for b in ("old", "new") if r % 2 == 0 else ("new", "old"):
            for f in FUNCS:
                fn, args = getattr(mods[b], f), calls[f]
                t = time.thread_time()
                for c in args:
                    fn(*c)
                took[(f, b)].append(time.thread_time() - t)
    for f in FUNCS:
        old, new = took[(f, "old")], took[(f, "new")]
        print(f"{f:12s} old {statistics.median(old) * 1e3:6.1f} ms [{min(old) * 1e3:.1f}-{max(old) * 1e3:.1f}]   "
              f"new {statistics.median(new) * 1e3:6.1f} ms [{min(new) * 1e3:.1f}-{max(new) * 1e3:.1f}]   "
              f"new/old {statistics.median(new) / statistics.median(old):.2f}  ({a.rounds} rounds, medians [ranges])")


if __name__ == "__main__":
    main()
