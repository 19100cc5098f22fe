"""Cross-checks of the Rust metrics against independent numpy formulations on random tables,
plus the module doctests and the stub file."""
import ast
import doctest
import pathlib

import numpy as np
import pandas as pd
import pytest

import jitterlab._native as native
from jitterlab import metrics as jm

MS = 1_000_000


def _random_tables(seed=3, n_runs=4, n=400):
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(n_runs):
        send = np.arange(n) * 20 * MS
        owd = (10 + rng.exponential(20, n)).astype(np.int64) * MS // 7
        lost = rng.random(n) < 0.1
        recv = pd.array(send + owd, dtype="Int64")
        recv[lost] = pd.NA
        rows.append(pd.DataFrame({"run_id": run, "flow_id": 1, "seq": np.arange(n), "send_ns": send,
                                  "recv_ns": recv, "size": 80}))
    media = pd.concat(rows, ignore_index=True)
    media = media.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # scramble row order
    runs = pd.DataFrame({"run_id": range(n_runs),
                         "tcp_start_ns": pd.array([2000 * MS] * n_runs, dtype="Int64"),
                         "tcp_end_ns": pd.array([6000 * MS] * n_runs, dtype="Int64")})
    return media, runs


def test_ipdv_table_matches_numpy():
    media, runs = _random_tables()
    vals = []
    for _, g in media.sort_values(["run_id", "seq"]).groupby("run_id"):
        send = g.send_ns.to_numpy()
        owd = (g.recv_ns - g.send_ns).to_numpy(dtype=float, na_value=np.nan)
        inw = (send >= 2000 * MS) & (send <= 6000 * MS)
        d = owd[1:] - owd[:-1]
        ok = inw[1:] & inw[:-1] & ~np.isnan(d)
        vals.append(d[ok] / 1e9)
    want = np.percentile(np.concatenate(vals), [0, 25, 50, 75, 90, 95, 96, 97, 98, 99, 100])
    got = jm.ipdv_table(media, runs).iloc[0].to_numpy()
    assert got == pytest.approx(want, abs=1e-12)


def test_rfc3550_jitter_matches_loop():
    media, runs = _random_tables(seed=5, n_runs=1)
    got = jm.jitter_final(media, runs)["jitter_s"].iloc[0] * 1e9
    g = media.dropna(subset=["recv_ns"]).sort_values(["recv_ns", "send_ns"])
    r, s = g.recv_ns.to_numpy(dtype=np.int64), g.send_ns.to_numpy()
    j = 0.0
    for i in range(1, len(r)):  # reference loop (test only)
        j += (abs((r[i] - r[i - 1]) - (s[i] - s[i - 1])) - j) / 16
    assert got == pytest.approx(j, rel=1e-12)


def test_jb_loss_matches_numpy():
    media, runs = _random_tables(seed=7)
    out = jm.jb_loss(media, runs, jbs_ms=[40, 100]).set_index(["run_id", "jb_s"])
    for run, g in media.groupby("run_id"):
        owd = (g.recv_ns - g.send_ns).to_numpy(dtype=float, na_value=np.nan)
        recv = g.recv_ns.to_numpy(dtype=float, na_value=np.nan)
        pre = (recv >= 0) & (recv < 2000 * MS)
        base = np.nanmin(owd[pre])
        inw = (g.send_ns >= 2000 * MS).to_numpy() & (g.send_ns <= 6000 * MS).to_numpy()
        for jb in (40, 100):
            lost = np.isnan(owd) | (owd > base + jb * MS)
            assert out.loc[(run, jb / 1000), "loss_rate"] == pytest.approx(lost[inw].mean())


def test_doctests_of_the_module():
    res = doctest.testmod(jm)
    assert res.attempted > 0 and res.failed == 0


def test_stub_lists_every_mediaset_method():
    stub = pathlib.Path(native.__file__).with_name("_native.pyi")
    if not stub.exists():
        stub = pathlib.Path(__file__).parents[1] / "python" / "jitterlab" / "_native.pyi"
    tree = ast.parse(stub.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MediaSet")
    in_stub = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)} - {"__new__", "__len__"}
    real = {n for n in dir(native.MediaSet) if not n.startswith("_")}
    assert in_stub == real
    funcs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"grouped_quantiles", "emodel_r", "mos_from_r"} <= funcs
    assert all(hasattr(native, f) for f in funcs)
