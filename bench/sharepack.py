#!/usr/bin/env python3
"""Times the two per-run native calls of `jitterlab sweep` outside the simulator, `_native.run_share_native`
(a run's share of the closing summary) and `_native.encode_pack` (a run's tables encoded, packed and
hashed), with two builds of the native module side by side in one process, alternated, so that both
are compared under the same load. Not a test.

    .venv/bin/python bench/sharepack.py OLD/_native.abi3.so NEW/_native.abi3.so [--rounds 10]

The sweep file (default bench/chodorek-126.toml) is run once in this process (`--jobs 1`, into a
temporary directory) with the checkout's module, recording every call's arguments; each round then
replays all of them on each build (thread CPU time; the order of the builds alternates). Every call
must return the same values (arrays bit for bit, packs byte for byte) from both builds. A recorded
`NativeTable` argument is handed to each build as its own `NativeTable` (a class of one module is not
another's): the table written to Parquet by pyarrow and read back by that build's `read_parquet`, its
null bitmaps as the simulator's (checked).
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

FUNCS = ("run_share_native", "encode_pack")


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


def native_args(calls: list[tuple], mods: dict[str, Any], tmp: str) -> dict[str, list[tuple]]:
    """`calls` for each build of `mods`, every `NativeTable` argument as that build's own (see the
    module's note); a column's null bitmap where the original has one and only there."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out: dict[str, list[tuple]] = {b: [] for b in mods}
    for i, c in enumerate(calls):
        per = {b: list(c) for b in mods}
        for j, a in enumerate(c):
            if type(a).__name__ != "NativeTable":
                continue
            path = f"{tmp}/{i}-{j}.parquet"
            orig = pa.table(a)
            pq.write_table(orig, path)
            for b, m in mods.items():
                t = m.NativeTable.read_parquet(path)
                back = pa.table(t)
                for name in orig.column_names:
                    x, y = orig.column(name).chunks, back.column(name).chunks
                    if [k.buffers()[0] is None for k in x] != [k.buffers()[0] is None for k in y] or not back.equals(orig):
                        raise SystemExit(f"call {i}: column {name} read back differs (null bitmap or values)")
                per[b][j] = t
        for b in mods:
            out[b].append(tuple(per[b]))
    return out


def same(x: Any, y: Any) -> bool:
    import array

    import numpy as np

    if isinstance(x, array.array):
        return x.typecode == y.typecode and x.tobytes() == y.tobytes()
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
    tmp = tempfile.mkdtemp(prefix="sharepack-")
    try:
        per = {f: native_args(args, mods, tmp) for f, args in calls.items()}
    finally:
        shutil.rmtree(tmp)
    for f, args in per.items():
        differ = sum(not same(getattr(mods["old"], f)(*c), getattr(mods["new"], f)(*d)) for c, d in zip(args["old"], args["new"]))
        print(f"{f}: {len(args['old'])} calls, {differ} with different results")
        if differ:
            raise SystemExit(1)
    took: dict[tuple[str, str], list[float]] = {(f, b): [] for f in FUNCS for b in mods}
    for r in range(a.rounds):
        for b in ("old", "new") if r % 2 == 0 else ("new", "old"):
            for f in FUNCS:
                fn, args = getattr(mods[b], f), per[f][b]
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
