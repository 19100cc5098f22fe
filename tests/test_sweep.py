"""Sweeps: expansion and seeds, storage and resume, failures, executors."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from jitterlab import sweep
from conftest import ROOT, run_cli
from _runs import log_entries

SWEEP = """
[sweep]
name = "tiny"
seed = 11
replications = 3

[sweep.vary]
rate = { key = "links.l.rate", values = ["1Mbit", "2Mbit"] }
"traffic[0].size" = ["80B", "200B"]

[sweep.random]
"traffic[0].start" = { dist = "uniform", min = "0ms", max = "50ms" }

[scenario]
name = "tiny"
duration = "2s"
[scenario.links.l]
from = "a"
to = "b"
rate = "1Mbit"
delay = "10ms"
jitter = { dist = "exponential", mean = "2ms" }
[[scenario.traffic]]
kind = "audio"
from = "a"
to = "b"
"""


def write(tmp_path: Path, text: str = SWEEP, name: str = "s.toml") -> Path:
    f = tmp_path / name
    f.write_text(text)
    return f


def test_seeds_and_uniform_draws_are_numpys_without_numpy():
    """`_seedseq` is numpy's SeedSequence (generate_state as uint64) and default_rng's PCG64
    `random()`, bit for bit: over seeds of one and several 32-bit words (0, 2^32 - 1, 2^32 + 5,
    2^64 - 1, a 100-bit one) and entropy lists of 2 and 3 entries (a sweep's (seed, rep) and
    (seed, rep, 1 + i)); a sweep plans its seeds and uniform draws with it."""
    import numpy as np

    from jitterlab import _seedseq

    for a in (0, 1, 11, 2**32 - 1, 2**32 + 5, 2**64 - 1, 2**100 + 3):
        for rest in ([0], [7], [3, 1], [2**33, 12]):
            e = [a, *rest]
            want = [int(x) for x in np.random.SeedSequence(e).generate_state(4, dtype=np.uint64)]
            assert _seedseq.SeedSequence(e).generate_state64(4) == want, e
            g, mine = np.random.default_rng(np.random.SeedSequence(e)), _seedseq.PCG64(_seedseq.SeedSequence(e))
            assert [mine.random() for _ in range(20)] == [g.random() for _ in range(20)], e


def test_expansion_seeds_and_draws(tmp_path):
    sw = sweep.load(write(tmp_path))
    specs = sw.runs()
    assert len(specs) == 2 * 2 * 3
    assert [s.run_id for s in specs] == list(range(12))
    by_rep = {}
    for s in specs:
        by_rep.setdefault(s.rep, set()).add((s.seed, s.params["traffic[0].start"]))
    # common random numbers: one seed and one draw per replication, whatever the point
    assert all(len(v) == 1 for v in by_rep.values())
    assert len({next(iter(v)) for v in by_rep.values()}) == 3
    for s in specs:
        x = float(s.params["traffic[0].start"].removesuffix("ms"))
        assert 0 <= x < 50
        assert s.overrides["links.l.rate"] == s.params["rate"]
    # deterministic across loads
    assert [s.key() for s in sweep.load(write(tmp_path)).runs()] == [s.key() for s in specs]


def test_zip_and_labelled_values(tmp_path):
    text = SWEEP.replace('[sweep.random]\n"traffic[0].start" = { dist = "uniform", min = "0ms", max = "50ms" }\n', "") + """
[sweep.zip]
"links.l.delay" = ["5ms", "20ms"]
"links.l.queue" = [{ kind = "droptail", limit = "10pkt" }, { kind = "droptail", limit = "20pkt" }]
"""
    # labelled values set several keys at once
    text = text.replace('"traffic[0].size" = ["80B", "200B"]',
                        'codec = { values = [ { label = "g711", set = { "traffic[0].size" = "200B" } }, { label = "amr", set = { "traffic[0].size" = "72B", "traffic[0].interval" = "20ms" } } ] }')
    sw = sweep.load(write(tmp_path, text))
    pts = sw.points()
    assert len(pts) == 2 * 2 * 2
    assert {p[0]["codec"] for p in pts} == {"g711", "amr"}
    assert all((p[1]["links.l.delay"] == "5ms") == (p[1]["links.l.queue"]["limit"] == "10pkt") for p in pts)


@pytest.mark.parametrize("patch, message", [
    (("replications = 3", "replications = 0"), "sweep.replications: expected a whole number >= 1"),
    (('max = "50ms"', 'max = "50s"'), "min and max need the same unit"),
    (("[sweep.vary]", "[sweep.vary]\nbogus = 3"), "sweep.vary.bogus: expected a list"),
    (("seed = 11", "seed = 11\ncolour = 1"), "sweep.colour: unknown key"),
])
def test_bad_sweep_files(tmp_path, patch, message):
    with pytest.raises(sweep.SweepError, match=message):
        sweep.load(write(tmp_path, SWEEP.replace(*patch)))


def test_runs_are_stored_and_collected(tmp_path):
    sw = sweep.load(write(tmp_path))
    res = sweep.run(sw, tmp_path / "out", jobs=1, progress=False)
    runs = res["runs"]
    assert list(runs.run_id) == list(range(12))
    assert set(runs.columns) >= {"rate", "traffic[0].size", "traffic[0].start", "replication", "point", "seed"}
    media = res["media_packets"]
    # 2 s of 20 ms audio minus the random start: every run sent 98-100 packets
    counts = media.groupby("run_id").size()
    assert counts.between(97, 100).all() and len(counts) == 12
    # seeds were applied: runs with the same point and a different replication differ
    for name in sweep.TABLES:
        assert (tmp_path / "out" / f"{name}.parquet").exists()
    again = sweep.run(sw, tmp_path / "out", jobs=1, progress=False)
    assert again.ran == 0 and again.skipped == 12
    pd.testing.assert_frame_equal(again["media_packets"], media)


def test_failing_run_is_recorded_and_sweep_goes_on(tmp_path):
    f = write(tmp_path, SWEEP.replace('values = ["1Mbit", "2Mbit"]', 'values = ["1Mbit", "-2Mbit"]'))
    p = run_cli("sweep", str(f), "--out", str(tmp_path / "o"), "--jobs", "1", "--quiet")
    assert p.returncode == 1, p.stderr
    fails = pd.read_csv(tmp_path / "o" / "failures.csv")
    assert len(fails) == 6 and fails.error.str.contains('links.l.rate: must be > 0, got "-2Mbit"').all()
    runs = pd.read_parquet(tmp_path / "o" / "runs.parquet")
    assert len(runs) == 6 and (runs.rate == "1Mbit").all()


def test_other_sweep_in_same_out_is_refused(tmp_path):
    sw = sweep.load(write(tmp_path))
    sweep.run(sw, tmp_path / "out", jobs=1, progress=False)
    sw2 = sweep.load(write(tmp_path, SWEEP.replace("seed = 11", "seed = 12")))
    with pytest.raises(sweep.SweepError, match="holds results of a different sweep"):
        sweep.run(sw2, tmp_path / "out", jobs=1, progress=False)


def _long_sweep(tmp_path: Path) -> Path:
    return write(tmp_path, SWEEP.replace("replications = 3", "replications = 60"), "long.toml")


def test_interrupted_sweep_resumes_to_identical_tables(tmp_path):
    f = _long_sweep(tmp_path)
    ref = sweep.run(sweep.load(f), tmp_path / "ref", jobs=1, progress=False)
    out = tmp_path / "killed"
    exe = Path(sys.executable).parent / "jitterlab"
    proc = subprocess.Popen([str(exe), "sweep", str(f), "--out", str(out), "--jobs", "1", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done = log_entries(out) if (out / "runs").exists() else {}
        if len(done) >= 20:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # a run killed while appending its entry to the run log is not finished (the log's scan stops
    # at the partial entry and the run is done again)
    finished_before = len(log_entries(out))
    assert 20 <= finished_before < 240, "the sweep must be killed mid-way for this test to mean anything"
    res = sweep.run(sweep.load(f), out, jobs=1, progress=False)
    assert res.skipped == finished_before and res.ran == 240 - finished_before
    for name in ("media_packets", "runs", "queue_samples"):
        pd.testing.assert_frame_equal(res[name], ref[name])


def test_process_pool_matches_inline(tmp_path):
    f = write(tmp_path)
    a = sweep.run(sweep.load(f), tmp_path / "a", jobs=1, progress=False)
    b = sweep.run(sweep.load(f), tmp_path / "b", jobs=2, progress=False)
    for name in ("media_packets", "runs"):
        pd.testing.assert_frame_equal(a[name], b[name])


def test_dask_local_cluster_matches_local(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    f = write(tmp_path)
    a = sweep.run(sweep.load(f), tmp_path / "a", jobs=1, progress=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        b = sweep.run(sweep.load(f), tmp_path / "b", executor="dask", scheduler=cluster.scheduler_address, progress=False)
    for name in ("media_packets", "runs", "queue_samples"):
        pd.testing.assert_frame_equal(a[name], b[name])
