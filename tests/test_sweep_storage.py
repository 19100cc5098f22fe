"""Sweeps at scale: workers store their runs and send back receipts; result files are identical
whatever the executor; runs store only the tables asked for (plus aggregates computed in the
worker); the serial fraction of a sweep; the elastic preset's disk footprint."""
import hashlib
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from jitterlab import sweep
from conftest import run_cli
from test_sweep import write


def _digests(out: Path) -> dict[str, str]:
    """SHA-256 of every result file: combined tables, failures, and each run's stored files (as
    certified by its done record)."""
    d = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.parquet"))}
    d["failures.csv"] = hashlib.sha256((out / "failures.csv").read_bytes()).hexdigest()
    for done in sorted((out / "runs").glob("*/done")):
        rec = json.loads(done.read_text())
        for name, meta in rec["files"].items():
            d[f"{done.parent.name}/{name}"] = meta["sha256"]
            assert hashlib.sha256((done.parent / name).read_bytes()).hexdigest() == meta["sha256"]
    return d


def test_result_files_identical_for_1_and_2_workers_and_dask(tmp_path):
    f = write(tmp_path)
    receipts: dict[str, list[dict]] = {k: [] for k in "abcd"}
    sweep.run(sweep.load(f), tmp_path / "a", jobs=1, progress=False, on_result=receipts["a"].append)
    sweep.run(sweep.load(f), tmp_path / "b", jobs=2, progress=False, on_result=receipts["b"].append, inline_bytes=0)
    sweep.run(sweep.load(f), tmp_path / "d", jobs=2, progress=False, on_result=receipts["d"].append)
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        sweep.run(sweep.load(f), tmp_path / "c", executor="dask", scheduler=cluster.scheduler_address, progress=False,
                  on_result=receipts["c"].append, inline_bytes=0)
    a, b, c, d = (_digests(tmp_path / k) for k in "abcd")
    assert len(a) == 7 + 1 + 12  # 7 combined tables, failures.csv, 12 runs x one pack
    assert a == b == c == d
    # the run done in the client hands its tables over in memory; workers send a receipt only
    assert all("tables" in r for r in receipts["a"])
    for k in "bc":
        assert len(receipts[k]) == 12 and all("tables" not in r and r["stored"] for r in receipts[k])
        assert all(r["rows"]["media_packets"] >= 97 for r in receipts[k])
    # ... carrying the run's pack (bytes, not Arrow tables) when it is small (a few kB here,
    # under INLINE_BYTES): the same bytes as its file
    for r in receipts["d"]:
        assert r["stored"] and "tables" not in r
        blob, parts = r["pack"]
        assert blob == (tmp_path / "d" / "runs" / f"{r['run_id']:06d}" / "tables.pack").read_bytes()
        assert sweep.decode_pack(blob, parts, ["media_packets"])["media_packets"].num_rows == r["rows"]["media_packets"]


def _summary(res) -> dict[str, pa.Table]:
    df = res["media_packets"]
    return {"media_count": pa.table({"run_id": pa.array([int(df.run_id.iloc[0])]), "packets": pa.array([len(df)])})}


def test_runs_store_only_the_tables_asked_for_and_aggregates(tmp_path, capsys):
    f = write(tmp_path)
    sw = sweep.load(f)
    sw.tables = ("runs", "media_count")
    sw.reduce = _summary
    res = sweep.run(sw, tmp_path / "o", jobs=2, progress=False)
    assert sorted(p.name for p in (tmp_path / "o").glob("*.parquet")) == ["media_count.parquet", "runs.parquet"]
    for d in (tmp_path / "o" / "runs").iterdir():
        assert sorted(p.name for p in d.iterdir()) == ["done", "tables.pack"]
        assert sorted(json.loads((d / "done").read_text())["parts"]) == ["media_count", "runs"]
    counts = res["media_count"]
    # 2 s of 20 ms audio minus a start in [0, 50) ms: 98-100 packets per run
    assert list(counts.run_id) == list(range(12)) and counts.packets.between(98, 100).all()
    # asking for more later redoes the runs stored without it, and only once
    sw2 = sweep.load(f)
    sw2.tables = ("runs", "media_count", "media_packets")
    sw2.reduce = _summary
    res2 = sweep.run(sw2, tmp_path / "o", jobs=1, progress=False)
    assert res2.ran == 12 and "run 000000: stored without media_packets; running it again" in capsys.readouterr().err
    assert (res2["media_packets"].groupby("run_id").size().to_numpy() == counts.packets.to_numpy()).all()
    assert sweep.run(sw2, tmp_path / "o", jobs=1, progress=False).ran == 0
    # and asking for less reuses them
    assert sweep.run(sw, tmp_path / "o", jobs=1, progress=False).ran == 0


def test_serial_fraction_is_the_time_outside_the_workers(tmp_path):
    f = write(tmp_path)
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    t = res.timing
    assert t["runs"] == 12 and t["workers"] == 1
    assert t["serial_s"] == pytest.approx(t["prepare_s"] + t["client_s"] + t["collect_s"])
    # one worker: the wall time is the serial part plus the runs themselves (each timed in the worker)
    assert t["serial_s"] + t["run_s"] == pytest.approx(t["wall_s"], rel=0.05, abs=0.05)
    assert sweep.serial_fraction(t) == pytest.approx(t["serial_s"] / t["wall_s"])
    assert sweep.serial_fraction({"serial_s": 1.0, "wall_s": 40.0}) == 0.025
    assert 0 < t["worker_peak_rss_bytes"] and 0 < t["client_peak_rss_bytes"]


def test_elastic_like_sweep_stays_small_on_disk(tmp_path):
    """The elastic preset's storage: per run, the aggregates its figures read; no media rows."""
    from jitterlab.presets import elastic as E

    sw = E.sweeps(1)["exp2"]
    sw.scenario["duration"] = "11s"  # 1 s inside the preset's measuring window (from 10 s)
    b = next(p for p in sw.params if p.name == "B")
    b.labels, b.sets = b.labels[-1:], b.sets[-1:]  # B = 10 Mb/s only: 3 queues x 2 modes
    lean = E._with_storage(sw, ())
    res = sweep.run(lean, tmp_path / "lean", jobs=2, progress=False)
    assert len(res["runs"]) == 6 and set(res.arrow) == set(E.AGGREGATES)
    # 10 Mb/s of 1000-byte packets: 1 250 a second, sent in [10 s, 11 s) (one 40 ms frame of slack)
    assert res["rtp_summary"].sent.between(1200, 1300).all()
    size = sum(p.stat().st_size for p in (tmp_path / "lean").rglob("*") if p.is_file())
    full = sweep.run(E._with_storage(sw, ("packets",)), tmp_path / "full", jobs=2, progress=False)
    full_size = sum(p.stat().st_size for p in (tmp_path / "full").rglob("*") if p.is_file())
    # 275 frames of 50 packets in 11 s
    assert full["media_packets"].groupby("run_id").size().between(13_700, 13_800).all()
    assert size < 40_000 * 6 and full_size > 3 * size, (size, full_size)
    pd.testing.assert_frame_equal(res["rtp_summary"], full["rtp_summary"])


def test_dask_receipt_for_a_run_the_client_cannot_see_is_an_error(tmp_path, monkeypatch):
    """Workers on other machines writing to their own disks: the client says so at the first
    receipt instead of collecting nothing."""
    f = write(tmp_path)

    def elsewhere(kind, jobs, scheduler):
        return lambda payloads, est: iter([{"run_id": p["run_id"], "ok": True, "stored": True, "wall_s": 0.1, "rows": {}} for p in payloads])

    monkeypatch.setattr(sweep, "_executor", elsewhere)
    with pytest.raises(sweep.SweepError, match="a Dask worker stored run 0 where this client cannot see it; --out must be a directory every worker shares"):
        sweep.run(sweep.load(f), tmp_path / "o", executor="dask", scheduler="tcp://nowhere:1", progress=False)


@pytest.mark.parametrize("old", ["parquet", "arrow"])
def test_runs_stored_by_an_older_version_are_reused(tmp_path, old):
    """Runs are one pack file each now; an OUT whose runs were stored a file a table (Parquet, then
    Arrow IPC) resumes without running them again and combines to the same tables."""
    import pyarrow.parquet as pq

    f = write(tmp_path)
    ref = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    for done in (tmp_path / "o" / "runs").glob("*/done"):
        rec = json.loads(done.read_text())
        files = {}
        for name, t in sweep.read_run_tables(done.parent, rec["parts"]).items():
            p = done.parent / f"{name}.{old}"
            if old == "parquet":
                pq.write_table(t, p)
            else:
                p.write_bytes(sweep._encode_run_table(t).to_pybytes())
            files[p.name] = {"rows": t.num_rows, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        (done.parent / sweep.PACK).unlink()
        rec["files"] = files
        del rec["parts"]
        done.write_text(json.dumps(rec))
    again = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert again.ran == 0 and again.skipped == 12
    for name in ("media_packets", "runs", "queue_samples"):
        pd.testing.assert_frame_equal(again[name], ref[name])
    # collect() reads them too
    pd.testing.assert_frame_equal(sweep.collect(tmp_path / "o")["media_packets"], ref["media_packets"])


def test_pack_parts_are_aligned_and_read_in_place(tmp_path):
    """Each table's part starts at a 64-byte boundary (Arrow's alignment, so its buffers are used
    where they lie) and decodes to the run's table; the pack's size is the recorded one."""
    f = write(tmp_path)
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    d = tmp_path / "o" / "runs" / "000005"
    rec = json.loads((d / "done").read_text())
    assert (d / sweep.PACK).stat().st_size == rec["files"][sweep.PACK]["bytes"]
    ends = 0
    for name, (off, length, rows) in sorted(rec["parts"].items(), key=lambda kv: kv[1][0]):
        assert off % 64 == 0 and off >= ends and off - ends < 64
        ends = off + length
        t = pa.ipc.open_file(pa.py_buffer((d / sweep.PACK).read_bytes()[off:off + length])).read_all()
        assert t.num_rows == rows
        want = res.arrow[name].filter(pa.compute.equal(res.arrow[name]["run_id"], 5))
        assert t.equals(want), name


def test_a_sweep_does_not_import_pandas(tmp_path):
    """`jitterlab sweep` and its workers never build a DataFrame: pandas (half a second a process)
    stays unimported, in the client and in a worker; so does pyarrow.compute (~50 ms: string
    columns are gathered in Rust)."""
    import subprocess
    import sys

    f = write(tmp_path)
    code = ("import sys, jitterlab.cli, jitterlab.sweep as S\n"
            f"r = S.run(S.load({str(f)!r}), {str(tmp_path / 'o')!r}, jobs=1, progress=False)\n"
            "assert r.arrow['runs'].num_rows == 12 and not r.failed\n"
            "print(sorted(m for m in ('pandas', 'matplotlib', 'dask', 'pyarrow.compute') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", p.stdout


def _mixed(res) -> dict[str, pa.Table]:
    """An aggregate whose column is typed in some runs and all-null (null type) in others."""
    rid = int(res.arrow["runs"].column("run_id")[0].as_py())
    v = pa.array([rid if rid % 3 else None])
    return {"mixed": pa.table({"run_id": pa.array([rid]), "v": v})}


def test_combined_tables_are_built_while_runs_finish(tmp_path, monkeypatch):
    """The combined tables grow as runs finish (row groups of ROW_GROUP rows, in run order), and
    hold exactly the runs' tables; a table whose runs disagree on a column's type is written with
    the types unified, as concatenating all the runs would."""
    import pyarrow.parquet as pq

    monkeypatch.setattr(sweep._Combiner, "ROW_GROUP", 250)  # ~100 media rows a run
    f = write(tmp_path)
    sw = sweep.load(f)
    sw.tables = sweep.TABLES + ("mixed",)
    sw.reduce = _mixed
    sizes: list[int] = []
    tmp = tmp_path / "o" / f".media_packets.parquet.tmp{__import__('os').getpid()}"

    def seen(_receipt):
        sizes.append(tmp.stat().st_size if tmp.exists() else 0)

    res = sweep.run(sw, tmp_path / "o", jobs=1, progress=False, on_result=seen)
    meta = pq.ParquetFile(tmp_path / "o" / "media_packets.parquet").metadata
    # 12 runs of ~99 rows in groups of >= 250 rows: 4 groups (the last takes the rest)
    assert meta.num_rows == res.arrow["media_packets"].num_rows and 4 <= meta.num_row_groups <= 5
    assert max(sizes) > 0, "nothing was written before the last run finished"
    per_run = pa.concat_tables([sweep.read_run_table(tmp_path / "o" / "runs" / f"{i:06d}", "media_packets") for i in range(12)])
    assert pq.read_table(tmp_path / "o" / "media_packets.parquet").equals(per_run)
    mixed = pq.read_table(tmp_path / "o" / "mixed.parquet")
    assert mixed.schema.field("v").type == pa.int64()
    assert mixed.column("v").to_pylist() == [i if i % 3 else None for i in range(12)]
    assert not list((tmp_path / "o").glob(".*tmp*"))


def test_local_pool_keeps_a_bounded_window_of_tasks_in_flight(tmp_path, monkeypatch):
    """The local executor hands a worker pool at most WINDOW_PER_WORKER tasks a worker at a time
    and tops the window up as tasks finish (waiting on every run of a sweep at once made each
    result cost O(runs): 10,000 tiny runs went at 320 runs/s instead of 530 on 2 cores); tiny
    runs travel in batches (here 40 runs, 2 workers: at least 8 tasks a worker, so 2 runs a task)."""
    import concurrent.futures as cf

    seen: dict = {"in_flight": 0, "max": 0, "sizes": []}

    class Counting(cf.ProcessPoolExecutor):
        def submit(self, fn, *a, **k):
            seen["sizes"].append(len(a[0]))
            seen["in_flight"] += 1
            seen["max"] = max(seen["max"], seen["in_flight"])
            fut = super().submit(fn, *a, **k)
            fut.add_done_callback(lambda _f: seen.__setitem__("in_flight", seen["in_flight"] - 1))
            return fut

    monkeypatch.setattr(cf, "ProcessPoolExecutor", Counting)
    sw = sweep.load(write(tmp_path))
    sw.replications = 10  # 40 runs
    res = sweep.run(sw, tmp_path / "o", jobs=2, progress=False)
    assert res.arrow["runs"].num_rows == 40 and not res.failed
    assert list(res.arrow["runs"]["run_id"].to_pylist()) == list(range(40))
    assert seen["sizes"] == [2] * 20
    # 4 tasks a worker x 2 workers, all submitted before the spawned workers can finish one
    assert seen["max"] == 8, seen


@pytest.mark.parametrize("n, est, workers, sizes", [
    (10, 0.0, 1, [1] * 10),                # few runs: at least 8 tasks a worker
    (1000, 0.0, 1, [40] * 25),             # tiny runs: 40 x RUN_FIXED_EVENTS = BATCH_EVENTS
    (1000, 950_000.0, 1, [2] * 500),       # 2 x (950k + 50k) reaches BATCH_EVENTS
    (100, 3e6, 1, [1] * 100),              # long runs go one by one
    (126, 0.0, 16, [1] * 126),             # many workers: 126 // (8 x 16) = 0 -> one a task
    (1001, 0.0, 1, [40] * 25 + [1]),       # the rest in a last, smaller task
    # where each constant binds exactly (a change of one in it moves a boundary):
    (160, 0.0, 2, [10] * 16),              # 160 // (TASKS_PER_WORKER 8 x 2 workers) = 10 a task
    (999, 949_999.0, 1, [3] * 333),        # 2 x (949,999 + 50,000) = 1,999,998: one short, a third run
    (100, 449_999.75, 1, [5] * 20),        # 4 x 499,999.75 = 1,999,999: one short of BATCH_EVENTS
])
def test_batches_of_short_runs(n, est, workers, sizes):
    payloads = [{"run_id": i} for i in range(n)]
    got = sweep._batches(payloads, [est] * n, workers)
    assert [len(b) for b in got] == sizes
    assert [p["run_id"] for b in got for p in b] == list(range(n))  # in order, each once


def _late_mixed(res) -> dict[str, pa.Table]:
    """An aggregate typed in runs 0-5 and all-null in runs 6-11: it turns mixed after the client
    has dropped the earlier runs' tables from memory."""
    rid = int(res.arrow["runs"].column("run_id")[0].as_py())
    return {"mixed": pa.table({"run_id": pa.array([rid]), "v": pa.array([rid if rid < 6 else None])})}


@pytest.mark.parametrize("reduce, parts", [(_mixed, 3), (_late_mixed, 1)])
def test_client_memory_is_bounded_past_hold_bytes(tmp_path, monkeypatch, reduce, parts):
    """Past _Combiner.HOLD_BYTES the client drops the runs' tables it has written (the combined
    tables are then read from their files when first used), with the same files and tables as a
    sweep held in memory; a table that turns mixed-schema after that is read back and unified."""
    import pyarrow.parquet as pq

    f = write(tmp_path)

    def sw():
        s = sweep.load(f)
        s.tables = sweep.TABLES + ("mixed",)
        s.reduce = reduce
        return s

    ref = sweep.run(sw(), tmp_path / "ref", jobs=1, progress=False)
    assert isinstance(ref.arrow, sweep.LazyTables) and not ref.arrow._files  # small: all kept
    held: dict[str, int] = {}
    finish = sweep._Combiner.finish

    def spy(self):
        out = finish(self)  # the thread has taken the last run
        held.update({n: len(p) for n, p in self.parts.items()}, spilled=int(self.spilled))
        return out

    monkeypatch.setattr(sweep._Combiner, "HOLD_BYTES", 20_000)  # about two runs' tables
    monkeypatch.setattr(sweep._Combiner, "ROW_GROUP", 50)  # a row group (and a held table) every run
    monkeypatch.setattr(sweep._Combiner, "COMPACT_PARTS", 4)  # runs (1 row each) compacted every 4
    monkeypatch.setattr(sweep._Combiner, "finish", spy)
    res = sweep.run(sw(), tmp_path / "o", jobs=1, progress=False)
    assert held["spilled"] == 1
    assert held["media_packets"] == 0 and held["runs"] == 0, held
    # The drop comes after run 0. _mixed turns mixed at run 1: run 0 read back from the file,
    # then runs 1..11 appended, the list compacted to one table whenever it reaches 4 parts
    # (lengths 2 3 1 2 3 1 2 3 1 2 3): 3 parts. _late_mixed turns mixed at run 6: runs 0-5 read
    # back as one table, then runs 6..11 (2 3 1 2 3 1): 1 part.
    assert held["mixed"] == parts
    assert "media_packets" in res.arrow._files  # not read until asked for
    assert res.arrow.num_rows("media_packets") == ref.arrow["media_packets"].num_rows
    assert "media_packets=" in repr(res) and "media_packets" in res.arrow._files  # repr reads footers only
    for name in ("media_packets", "runs", "mixed"):
        assert res.arrow[name].equals(ref.arrow[name]), name
        assert pq.read_table(tmp_path / "o" / f"{name}.parquet").equals(pq.read_table(tmp_path / "ref" / f"{name}.parquet")), name
    pd.testing.assert_frame_equal(res["media_packets"], ref["media_packets"])


def test_take_strings_gathers_names_with_nulls():
    """The Rust gather behind the channel-name columns: names[idx], null where idx is negative
    or past the names, a validity bitmap only when something is null; against pyarrow's own
    construction on a million random indices (so the bitmap's bytes and the offsets are checked
    past the first word)."""
    import numpy as np
    from jitterlab import sim

    names = ["bottleneck", "", "access-ü"]
    idx = np.random.default_rng(7).integers(-2, 5, size=1_000_003)
    got = sim._take_strings(names, idx)
    got.validate(full=True)
    want = pa.array([names[i] if 0 <= i < len(names) else None for i in idx.tolist()], type=pa.string())
    assert got.equals(want) and got.null_count == want.null_count
    every = sim._take_strings(names, np.array([2, 0, 1]))
    assert every.to_pylist() == ["access-ü", "bottleneck", ""] and every.buffers()[0] is None
    assert sim._take_strings([], np.array([0, -1])).to_pylist() == [None, None]


def test_collect_writes_the_sweeps_own_files(tmp_path, monkeypatch):
    """`sweep.collect` combines as the sweep does: deleting the combined tables and collecting
    again gives the same bytes; past the memory bound its result reads tables from their files."""
    f = write(tmp_path)
    sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "o").glob("*.parquet")}
    for p in (tmp_path / "o").glob("*.parquet"):
        p.unlink()
    monkeypatch.setattr(sweep._Combiner, "HOLD_BYTES", 10_000)
    res = sweep.collect(tmp_path / "o")
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "o").glob("*.parquet")}
    assert after == before and len(after) == 7
    assert "media_packets" in res.arrow._files and res.arrow["runs"].num_rows == 12


def test_combined_tables_encode_integers_as_deltas(tmp_path):
    """The combined Parquet tables: integer columns DELTA_BINARY_PACKED (send and receive times,
    sequence numbers and run ids rise in small steps), text columns dictionary-encoded, other
    columns plain. A media table of periodic packets then costs about a byte a row, against ~13
    plain+snappy (`bench/run vs-ns2`'s 2.97 M rows: 1.8 MB against 38.9 MB)."""
    import pyarrow.parquet as pq

    res = sweep.run(sweep.load(write(tmp_path)), tmp_path / "out", jobs=1, progress=False)
    f = pq.ParquetFile(tmp_path / "out" / "media_packets.parquet")
    rows = f.metadata.num_rows
    assert rows == len(res["media_packets"]) > 1000
    enc = {f.metadata.row_group(0).column(i).path_in_schema: set(f.metadata.row_group(0).column(i).encodings)
           for i in range(f.metadata.num_columns)}
    for c in ("run_id", "flow_id", "seq", "send_ns", "recv_ns", "size"):
        assert "DELTA_BINARY_PACKED" in enc[c], (c, enc[c])
    assert "RLE_DICTIONARY" in enc["lost_where"] and "DELTA_BINARY_PACKED" not in enc["ce"]
    # against the same rows written with pyarrow's defaults (dictionary pages, snappy)
    plain = pa.BufferOutputStream()
    pq.write_table(pq.read_table(tmp_path / "out" / "media_packets.parquet"), plain)
    size = (tmp_path / "out" / "media_packets.parquet").stat().st_size
    assert size * 2 < plain.getvalue().size, (size, plain.getvalue().size)
    # the values read back as written
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "out" / "media_packets.parquet").astype(res["media_packets"].dtypes),
                                  res["media_packets"].reset_index(drop=True))
