"""Sweeps at scale: workers store their runs and send back receipts; result files are identical
whatever the executor; runs store only the tables asked for (plus aggregates computed in the
worker); the serial fraction of a sweep; the elastic preset's disk footprint.

Over 600 lines: one contract (what a sweep stores, how it combines and resumes) whose tests share
this file's sweep fixtures and its byte-for-byte comparison of the result files."""
import hashlib
import json
import os
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from jitterlab import sweep
from jitterlab.sweep import combine as sw_combine
from jitterlab.sweep import driver as sw_driver
from jitterlab.sweep import executors as sw_exec
from jitterlab.sweep import store as sw_store
from jitterlab.tables import LazyTables
from conftest import run_cli
from test_sweep import SWEEP, write
from _runs import flip, log_entries, pack, record, run_files, to_dir_layout


def _digests(out: Path) -> dict[str, str]:
    """SHA-256 of every result file: combined tables, failures, and each run file's pack (as
    certified by its record; the record itself holds the run's wall time)."""
    d = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.parquet"))}
    d["failures.csv"] = hashlib.sha256((out / "failures.csv").read_bytes()).hexdigest()
    for p in run_files(out):
        d[p.name] = record(p)["pack"]["sha256"]
        assert hashlib.sha256(pack(p)).hexdigest() == d[p.name]
    return d


@pytest.mark.parametrize("duration", ["2s", "90s"])
def test_result_files_identical_for_1_and_2_workers_and_dask(tmp_path, duration):
    """2 s: ~100 media rows a run, stored as Arrow IPC and merged by the client into one Parquet
    row group (`merge_parts`); 90 s: ~4 500, past PARQUET_MIN_ROWS, stored as Parquet and spliced
    into the combined table as they are (one row group a run). Either way every part is the
    native encoder's, and every executor writes the same bytes."""
    f = write(tmp_path, SWEEP.replace('duration = "2s"', f'duration = "{duration}"'))
    receipts: dict[str, list[dict]] = {k: [] for k in "abcd"}
    res = {"a": sweep.run(sweep.load(f), tmp_path / "a", jobs=1, progress=False, on_result=receipts["a"].append),
           "b": sweep.run(sweep.load(f), tmp_path / "b", jobs=2, progress=False, on_result=receipts["b"].append, inline_bytes=0),
           "d": sweep.run(sweep.load(f), tmp_path / "d", jobs=2, progress=False, on_result=receipts["d"].append)}
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        res["c"] = sweep.run(sweep.load(f), tmp_path / "c", executor="dask", scheduler=cluster.scheduler_address, progress=False,
                             on_result=receipts["c"].append, inline_bytes=0)
    # the tables handed back: in memory (a), or read from the combined file when used where the
    # client combined parts it never decoded itself (b, c, d)
    assert "media_packets" in res["b"].arrow._files and "media_packets" not in res["a"].arrow._files  # not yet read
    for k in "bcd":
        for name in ("media_packets", "runs", "channels"):
            assert res[k].arrow[name].equals(res["a"].arrow[name]), (k, name)
    a, b, c, d = (_digests(tmp_path / k) for k in "abcd")
    assert len(a) == 7 + 1 + 12  # 7 combined tables, failures.csv, 12 runs x one pack
    assert a == b == c == d
    import pyarrow.parquet as pq

    media = pq.ParquetFile(tmp_path / "a" / "media_packets.parquet")
    spliced = duration == "90s"
    for k in "abcd":
        assert len(run_files(tmp_path / k)) == 12
        for p in run_files(tmp_path / k):
            off, size, rows = record(p)["parts"]["media_packets"]
            assert (rows >= sweep.PARQUET_MIN_ROWS) == spliced
            head = p.read_bytes()[off:off + 6]
            assert head[:4] == b"PAR1" if spliced else head == b"ARROW1", head
    # spliced: a row group a run, in run order; batched: one row group for the 12 small runs
    assert media.metadata.num_row_groups == (12 if spliced else 1)
    assert [media.metadata.row_group(g).column(0).statistics.min for g in range(media.metadata.num_row_groups)] == \
        (list(range(12)) if spliced else [0])
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
        assert blob == pack(tmp_path / "d" / "runs" / f"{r['run_id']:06d}.run")
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
    logs = [p.name for p in (tmp_path / "o" / "runs").iterdir()]
    assert 1 <= len(logs) <= 2 and all(n.endswith(sweep.LOG_SUFFIX) for n in logs)  # a run log a worker, nothing else
    stored = log_entries(tmp_path / "o")
    assert sorted(stored) == list(range(12))
    for e in stored.values():
        assert sorted(record(e)["parts"]) == ["media_count", "runs"]
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
    # the combining thread's CPU time: its encoding of the 12 runs' tables, within the wall time
    assert 0 < t["combine_cpu_s"] < t["wall_s"]


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
    assert size < 40_000 * 6 and full_size > size, (size, full_size)
    # what each run stored: no media rows unless asked for
    parts = [record(p)["parts"] for p in run_files(tmp_path / "lean")]
    assert len(parts) == 6 and not any("media_packets" in p for p in parts)
    parts = [record(p)["parts"] for p in run_files(tmp_path / "full")]
    assert len(parts) == 6 and all(13_700 <= p["media_packets"][2] <= 13_800 for p in parts)
    pd.testing.assert_frame_equal(res["rtp_summary"], full["rtp_summary"])


def test_dask_receipt_for_a_run_the_client_cannot_see_is_an_error(tmp_path, monkeypatch):
    """Workers on other machines writing to their own disks: the client says so at the first
    receipt instead of collecting nothing."""
    f = write(tmp_path)

    def elsewhere(kind, jobs, scheduler):
        return lambda payloads, est: iter([{"run_id": p["run_id"], "ok": True, "stored": True, "wall_s": 0.1, "rows": {}} for p in payloads])

    monkeypatch.setattr(sw_driver, "_executor", elsewhere)
    with pytest.raises(sweep.SweepError, match="a Dask worker stored run 0 where this client cannot see it; --out must be a directory every worker shares"):
        sweep.run(sweep.load(f), tmp_path / "o", executor="dask", scheduler="tcp://nowhere:1", progress=False)


def _ipc(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def _pyarrow_part(t: pa.Table) -> bytes:
    """A part as the version before wrote it (pyarrow: Parquet from 4 096 rows, else IPC)."""
    import pyarrow.parquet as pq

    if t.num_rows < 4096:
        return _ipc(t)
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, use_dictionary=[c.name for c in t.schema if pa.types.is_string(c.type)],
                   column_encoding={c.name: "DELTA_BINARY_PACKED" for c in t.schema if pa.types.is_integer(c.type)})
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("duration", ["2s", "90s"])
@pytest.mark.parametrize("old", ["parquet", "arrow", "ipc-pack", "pyarrow-pack"])
def test_runs_stored_by_an_older_version_are_reused(tmp_path, old, duration):
    """Runs are one pack file each now, every part written by the native encoder; an OUT whose
    runs were stored a file a table (Parquet, then Arrow IPC), in a pack of pyarrow's Arrow IPC
    parts only, or in a pack of pyarrow's Parquet and IPC parts resumes without running them
    again and combines to the same files, byte for byte (each older part is encoded as a worker
    would now)."""
    import pyarrow.parquet as pq

    f = write(tmp_path, SWEEP.replace('duration = "2s"', f'duration = "{duration}"'))
    ref = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    ref_bytes = {n: (tmp_path / "o" / f"{n}.parquet").read_bytes() for n in ("media_packets", "runs", "channels")}
    assert len(run_files(tmp_path / "o")) == 12
    for p in run_files(tmp_path / "o"):  # each run in the previous version's layout first
        done = to_dir_layout(p) / "done"
        rec = json.loads(done.read_text())
        tables = sweep.read_run_tables(done.parent, rec["parts"])
        (done.parent / sweep.PACK).unlink()
        if old.endswith("-pack"):  # the packs of earlier versions: every part Arrow IPC, or pyarrow's Parquet from 4 096 rows
            blob, parts = b"", {}
            for name, t in tables.items():
                img = _ipc(t) if old == "ipc-pack" else _pyarrow_part(t)
                blob += b"\0" * (-len(blob) % sweep.PACK_ALIGN)
                parts[name] = [len(blob), len(img), t.num_rows]
                blob += img
            (done.parent / sweep.PACK).write_bytes(blob)
            rec["parts"] = parts
            rec["files"] = {sweep.PACK: {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}}
        else:
            files = {}
            for name, t in tables.items():
                p = done.parent / f"{name}.{old}"
                if old == "parquet":
                    pq.write_table(t, p)
                else:
                    p.write_bytes(_ipc(t))
                files[p.name] = {"rows": t.num_rows, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
            rec["files"] = files
            del rec["parts"]
        done.write_text(json.dumps(rec))
    for n in ref_bytes:
        (tmp_path / "o" / f"{n}.parquet").unlink()
    again = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert again.ran == 0 and again.skipped == 12
    for name in ("media_packets", "runs", "queue_samples"):
        pd.testing.assert_frame_equal(again[name], ref[name])
    for n, b in ref_bytes.items():
        assert (tmp_path / "o" / f"{n}.parquet").read_bytes() == b, n
    # collect() reads them too
    pd.testing.assert_frame_equal(sweep.collect(tmp_path / "o")["media_packets"], ref["media_packets"])


def test_pack_parts_are_aligned_and_read_in_place(tmp_path):
    import pyarrow.parquet as pq

    """Each table's part starts at a 64-byte boundary and is a Parquet image that decodes to the
    run's table; the pack's size is the recorded one."""
    f = write(tmp_path)
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    d = log_entries(tmp_path / "o")[5]
    rec = record(d)
    assert d.length == rec["pack"]["bytes"] + len((json.dumps(rec) + "\n").encode()) + 16  # pack, record, trailer
    assert d.offset % 64 == 0  # the pack starts 64-byte aligned in its run log
    ends = 0
    for name, (off, length, rows) in sorted(rec["parts"].items(), key=lambda kv: kv[1][0]):
        assert off % 64 == 0 and off >= ends and off - ends < 64
        ends = off + length
        t = sw_store._decode_part(pa.py_buffer(d.read_bytes()[off:off + length]))
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


def test_jitterlab_sweep_imports_neither_pyarrow_nor_numpy(tmp_path):
    """A run's tables stay native from the simulator to its pack and its summary share, and the
    closing summary reads the small combined tables natively: `jitterlab sweep` (its runs in the
    client, --jobs 1) and a worker storing a run import neither pyarrow nor numpy (~0.13 s a
    process), which a table read then imports (here `res.arrow["runs"]`). The uniform draws and
    seeds are numpy's bit for bit without numpy (`_seedseq`; test_sweep.py compares them)."""
    import subprocess
    import sys

    f = write(tmp_path, SWEEP.replace("replications = 3", "replications = 1"))  # pooled OWD quantiles need numpy
    shown = "print(sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))\n"
    cli = ("import sys\nfrom jitterlab import cli\n"
           f"assert cli.main(['sweep', {str(f)!r}, '--out', {str(tmp_path / 'o')!r}, '--jobs', '1', '--quiet']) == 0\n" + shown)
    p = subprocess.run([sys.executable, "-c", cli], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "[]", p.stdout
    assert "summary (4 runs" in p.stdout and "OWD median" in p.stdout  # the closing summary, from the runs' shares
    worker = ("import sys\nimport jitterlab.sweep as S\n"
              f"sw = S.load({str(f)!r}); sp = sw.runs()[0]\n"
              "r = S.execute({'sweep_id': 'w', 'scenario': sw.scenario, 'scenario_key': None, 'seed': sp.seed, 'run_id': 0, 'rep': 0,"
              " 'point': 0, 'overrides': sp.overrides, 'params': sp.params, 'tables': list(S.TABLES), 'reduce': None,"
              f" 'out': {str(tmp_path / 'w')!r}, 'receipt': True, 'summary': {{'alone': True}}}})\n"
              "assert r['ok'] and r['stored'] and r['summary_part']['mos'], r\n" + shown +
              "res = S.run(sw, " + repr(str(tmp_path / "o")) + ", jobs=1, progress=False)\n"
              "assert res.arrow['runs'].num_rows == 4\n" + shown)
    p = subprocess.run([sys.executable, "-c", worker], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["[]", "['numpy', 'pyarrow']"], p.stdout


def test_runs_without_tcp_give_every_worker_the_whole_run_window(tmp_path):
    """A sweep with a point estimated without TCP segments tells every run that the summary's
    window will be the whole run: with 2 workers, the worker that takes run 0 (with TCP: its
    first run) computes its share for that window too, so the close uses the runs' shares and
    reads no media row (without the hint run 0's share would be for the TCP overlap window, and
    the close would read the rows); the summary is the 1-worker one."""
    from jitterlab import summary

    text = SWEEP.replace("replications = 3", "replications = 1").replace(
        '"traffic[0].size" = ["80B", "200B"]', 'tcp = { key = "traffic[1].enabled", values = [true, false] }')
    f = write(tmp_path, text + '[[scenario.traffic]]\nkind = "bulk"\nfrom = "a"\nto = "b"\nsize = "20kB"\n')
    got = {}
    for jobs in (1, 2):
        res = sweep.run(sweep.load(f), tmp_path / f"j{jobs}", jobs=jobs, progress=False, summary=True)
        assert res.arrow.num_rows("runs") == 4 and res.summary_parts and len(res.summary_parts) == 4
        assert {p["window"] for p in res.summary_parts.values()} == {"all"}
        got[jobs] = summary.summarize(res)
        assert "media_packets" in res.arrow._files or "media_packets" in res.arrow._native, jobs  # never read
    assert got[1] == got[2] and got[1]["window"] == "all"
    assert [len(p["tcp"]) for p in got[1]["points"]] == [1, 0, 1, 0]


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

    monkeypatch.setattr(sw_combine._Combiner, "ROW_GROUP", 250)  # ~100 media rows a run
    f = write(tmp_path)
    sw = sweep.load(f)
    sw.tables = sweep.TABLES + ("mixed",)
    sw.reduce = _mixed
    sizes: list[int] = []
    tmp = tmp_path / "o" / f".media_packets.parquet.tmp{__import__('os').getpid()}"

    def seen(_receipt):
        # From the fourth run on (>= 250 rows handed over) a row group is due: wait for the
        # combining thread to write it (it competes with this thread for the GIL on a busy
        # machine), at most 20 s. A combiner that wrote only at the end fails here.
        deadline = time.monotonic() + 20
        while len(sizes) >= 3 and not tmp.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        sizes.append(tmp.stat().st_size if tmp.exists() else 0)

    res = sweep.run(sw, tmp_path / "o", jobs=1, progress=False, on_result=seen)
    meta = pq.ParquetFile(tmp_path / "o" / "media_packets.parquet").metadata
    # 12 runs of ~99 rows in groups of >= 250 rows: 4 groups (the last takes the rest)
    assert meta.num_rows == res.arrow["media_packets"].num_rows and 4 <= meta.num_row_groups <= 5
    assert max(sizes) > 0, "nothing was written before the last run finished"
    stored = log_entries(tmp_path / "o")
    per_run = pa.concat_tables([sweep.read_run_table(stored[i], "media_packets") for i in range(12)])
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
    sw_exec._drop_pool()  # a pool kept from an earlier sweep of this process is not a Counting one
    sw = sweep.load(write(tmp_path))
    sw.replications = 10  # 40 runs
    try:
        res = sweep.run(sw, tmp_path / "o", jobs=2, progress=False)
    finally:
        sw_exec._drop_pool()
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
    got = sw_exec._batches(payloads, [est] * n, workers)
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
    assert isinstance(ref.arrow, LazyTables) and not ref.arrow._files  # small: all kept
    held: dict[str, int] = {}
    finish = sw_combine._Combiner.finish

    def spy(self):
        out = finish(self)  # the thread has taken the last run
        held.update({n: len(p) for n, p in self.parts.items()}, spilled=int(self.spilled))
        return out

    monkeypatch.setattr(sw_combine._Combiner, "HOLD_BYTES", 20_000)  # about two runs' tables
    monkeypatch.setattr(sw_combine._Combiner, "ROW_GROUP", 50)  # a row group (and a held table) every run
    monkeypatch.setattr(sw_combine._Combiner, "COMPACT_PARTS", 4)  # runs (1 row each) compacted every 4
    monkeypatch.setattr(sw_combine._Combiner, "finish", spy)
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
    monkeypatch.setattr(sw_combine._Combiner, "HOLD_BYTES", 10_000)
    res = sweep.collect(tmp_path / "o")
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "o").glob("*.parquet")}
    assert after == before and len(after) == 7
    assert "media_packets" in res.arrow._files and res.arrow["runs"].num_rows == 12
    # a run's tables handed over in memory as the simulator keeps them (native, no pack to
    # splice from) are combined as Arrow tables: the same bytes again
    from jitterlab import sim

    sw = sweep.load(f)
    sp = sw.runs()[5]
    r = sim.simulate_run(sw.scenario, sp.overrides, sp.seed, 5, {**sp.params, "replication": sp.rep, "point": sp.point})
    sweep.collect(tmp_path / "o", fresh={5: {n: r.arrow.held(n) for n in sweep.TABLES}})
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "o").glob("*.parquet")} == before


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


def test_parquet_concat_splices_row_groups_as_they_are():
    """`_native.ParquetConcat` (how a sweep's combined tables take a large run's Parquet part):
    the row groups of each image, in order, their column chunks byte for byte (statistics kept);
    an image of another schema, even one differing only in its Arrow type (string against
    large_string: the same Parquet type), is refused with nothing written."""
    import pyarrow.parquet as pq

    from jitterlab import _native

    def img(t: pa.Table, **kw) -> bytes:  # pyarrow's images: any writer's are spliced alike
        sink = pa.BufferOutputStream()
        pq.write_table(t, sink, **{"use_dictionary": ["s"], **kw})
        return sink.getvalue().to_pybytes()

    a = pa.table({"run_id": pa.array([0] * 5, pa.int64()), "x": pa.array([1, 2, None, 4, 5], pa.int64()),
                  "s": pa.array(["a", "b", None, "a", "c"])})
    b = pa.table({"run_id": pa.array([1] * 3, pa.int64()), "x": pa.array([7, 8, 9], pa.int64()), "s": pa.array(["z", "z", "y"])})
    ia, ib = img(a, row_group_size=2), img(b)
    c = _native.ParquetConcat()
    out = c.append(ia)
    out += c.append(ib)
    with pytest.raises(ValueError, match="schema differs"):
        c.append(img(b.cast(pa.schema([("run_id", pa.int64()), ("x", pa.int64()), ("s", pa.large_string())]))))
    with pytest.raises(ValueError, match="schema differs"):
        c.append(img(b.drop_columns(["s"])))
    with pytest.raises(ValueError, match="Parquet"):
        c.append(b"PAR1 not a Parquet file")
    assert c.rows == 8
    out += c.finish()
    with pytest.raises(ValueError):
        c.append(ib)
    f = pq.ParquetFile(pa.BufferReader(out))
    assert f.metadata.num_row_groups == 3 + 1
    assert pq.read_table(pa.BufferReader(out)).equals(pa.concat_tables([a, b]))
    src = pq.ParquetFile(pa.BufferReader(ib)).metadata.row_group(0)
    dst = f.metadata.row_group(3)
    for i in range(3):
        s_col, d_col = src.column(i), dst.column(i)
        s0 = s_col.dictionary_page_offset or s_col.data_page_offset
        d0 = d_col.dictionary_page_offset or d_col.data_page_offset
        assert out[d0:d0 + d_col.total_compressed_size] == ib[s0:s0 + s_col.total_compressed_size]
        assert d_col.statistics == s_col.statistics and set(d_col.encodings) == set(s_col.encodings)
    assert f.metadata.created_by == pq.ParquetFile(pa.BufferReader(ia)).metadata.created_by  # the first image's
    with pytest.raises(ValueError, match="nothing appended"):
        _native.ParquetConcat().finish()


def _mixed_big(res) -> dict[str, pa.Table]:
    """`_mixed` with PARQUET_MIN_ROWS rows a run: stored as Parquet parts, spliced when they agree."""
    rid = int(res.arrow["runs"].column("run_id")[0].as_py())
    n = sweep.PARQUET_MIN_ROWS
    v = pa.array([rid] * n, pa.int64()) if rid % 3 else pa.nulls(n)
    return {"mixed": pa.table({"run_id": pa.array([rid] * n, pa.int64()), "v": v})}


@pytest.mark.parametrize("jobs", [1, 2])
def test_spliced_parts_of_another_schema_are_unified(tmp_path, jobs):
    """Large parts whose schemas disagree (a column all null in one run, typed in another): the
    client splices the first ones, finds the next one's schema differs (in memory, jobs=1; in the
    Parquet image's footer, jobs=2, where the parts travel as bytes) and writes the table at the
    end with the types unified, as concatenating all the runs would."""
    import pyarrow.parquet as pq

    sw = sweep.load(write(tmp_path))
    sw.tables = ("runs", "mixed")
    sw.reduce = _mixed_big
    sweep.run(sw, tmp_path / "o", jobs=jobs, progress=False)
    assert len(run_files(tmp_path / "o")) == 12
    for p in run_files(tmp_path / "o"):  # exactly PARQUET_MIN_ROWS rows: a Parquet part
        off = record(p)["parts"]["mixed"][0]
        assert p.read_bytes()[off:off + 4] == b"PAR1"
    mixed = pq.read_table(tmp_path / "o" / "mixed.parquet")
    assert mixed.schema.field("v").type == pa.int64()
    n = sweep.PARQUET_MIN_ROWS
    assert mixed.column("v").to_pylist() == [x for i in range(12) for x in [i if i % 3 else None] * n]
    assert mixed.column("run_id").to_pylist() == [i for i in range(12) for _ in range(n)]
    assert not list((tmp_path / "o").glob(".*tmp*"))


def test_resume_splices_stored_parquet_parts_to_the_same_bytes(tmp_path):
    """A resumed sweep whose finished runs hold Parquet parts (90 s runs: ~4 500 media rows)
    splices them from their packs on storage and writes the same combined files as the first
    time; the one run redone is stored as before."""
    f = write(tmp_path, SWEEP.replace('duration = "2s"', 'duration = "90s"'))
    sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    first = {p.name: p.read_bytes() for p in (tmp_path / "o").glob("*.parquet")}
    pack7 = pack(log_entries(tmp_path / "o")[7])
    flip(log_entries(tmp_path / "o")[7])  # damaged: done again, into another run log
    for p in (tmp_path / "o").glob("*.parquet"):
        p.unlink()
    again = sweep.run(sweep.load(f), tmp_path / "o", jobs=2, progress=False)
    assert again.ran == 1 and again.skipped == 11
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").glob("*.parquet")} == first
    assert pack(log_entries(tmp_path / "o")[7]) == pack7


def test_local_pool_is_kept_for_the_next_sweep_and_dropped_after_an_error(tmp_path):
    """A process's sweeps share one local pool of the same size (a preset's 3-4 sweeps start their
    workers once); a sweep that ends in an error takes its pool down with it (no run of it
    outlives it), and the next sweep starts a fresh one."""
    sw_exec._drop_pool()
    f = write(tmp_path)
    sweep.run(sweep.load(f), tmp_path / "a", jobs=2, progress=False)
    pool = sw_exec._POOL
    assert pool is not None and pool[0] == 2
    sweep.run(sweep.load(f), tmp_path / "b", jobs=2, progress=False)
    assert sw_exec._POOL is pool

    def boom(_res):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        sweep.run(sweep.load(f), tmp_path / "c", jobs=2, progress=False, on_result=boom)
    assert sw_exec._POOL is None
    res = sweep.run(sweep.load(f), tmp_path / "c", jobs=2, progress=False)
    assert sw_exec._POOL is not None and sw_exec._POOL is not pool and res.arrow["runs"].num_rows == 12


def test_a_kept_pool_writes_where_a_relative_out_points_now(tmp_path, monkeypatch):
    """The kept pool's workers were started in another working directory: a relative OUT is
    resolved by the client, so the runs land where it points now."""
    f = write(tmp_path)
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    sweep.run(sweep.load(f), "o", jobs=2, progress=False)
    monkeypatch.chdir(tmp_path / "two")
    res = sweep.run(sweep.load(f), "o", jobs=2, progress=False)
    assert res.ran == 12 and len(run_files(tmp_path / "two" / "o")) == 12


def test_run_parts_switch_format_at_the_documented_size_and_encode_as_documented():
    """docs/tables.md's storage rules, by behaviour and with their literal numbers (a change of the
    constant fails here, not only where the code names it): a run's table of 4 096 rows or more
    is a Parquet image, 4 095 an Arrow IPC one (marked as the native encoder's; LZ4 frames from
    64 kB of buffers), both written by the native encoder. Parquet: text columns dictionary-encoded, integer columns
    DELTA_BINARY_PACKED, other columns plain, snappy pages, statistics of each column chunk, at
    most 2^20 rows a row group (pyarrow's default, so a part spliced as it is never holds a larger
    group than the client's merged ones)."""
    import pyarrow.parquet as pq

    def table(n: int) -> pa.Table:
        return pa.table({"run_id": pa.array([0] * n, pa.int64())})

    assert bytes(sw_store._encode_run_table(table(4096))[:4]) == b"PAR1"
    ipc = sw_store._encode_run_table(table(4095))
    assert bytes(ipc[:6]) == b"ARROW1" and sw_store._native_part(ipc) and len(ipc) > 4095 * 8
    assert pa.ipc.open_file(pa.py_buffer(ipc)).read_all().equals(table(4095))
    # an IPC part's buffers are LZ4 frames from 64 kB (65 536 bytes) on, plain below
    small = {n: pa.table({"a": pa.array([7] * n, pa.int64()), "b": pa.array([1] * n, pa.int64()), "c": pa.array([2] * n, pa.int64()),
                          "d": pa.array([3] * n, pa.int64())}) for n in (2047, 2048)}  # 4 columns x 8 bytes: 65 504 / 65 536 bytes
    assert small[2047].get_total_buffer_size() < 65536 <= small[2048].get_total_buffer_size()
    plain, lz4 = (sw_store._encode_run_table(small[n]) for n in (2047, 2048))
    assert plain[:6] == lz4[:6] == b"ARROW1"
    assert len(plain) > 65504 and len(lz4) < 8192, (len(plain), len(lz4))  # constant columns: LZ4 frames are tiny
    for buf, n in ((plain, 2047), (lz4, 2048)):
        assert pa.ipc.open_file(pa.py_buffer(buf)).read_all().equals(small[n])
    t = pa.table({"run_id": pa.array([3, 3, 3], pa.int64()), "s": pa.array(["a", None, "a"]), "b": pa.array([True, False, True]),
                  "x": pa.array([0.5, 1.5, None]), "u": pa.array([1, 2, 3], pa.uint32())})
    f = pq.ParquetFile(pa.BufferReader(sw_store._parquet_image(t)))
    col = {f.metadata.row_group(0).column(i).path_in_schema: f.metadata.row_group(0).column(i) for i in range(5)}
    assert "DELTA_BINARY_PACKED" in col["run_id"].encodings and "DELTA_BINARY_PACKED" in col["u"].encodings
    assert "RLE_DICTIONARY" in col["s"].encodings and col["s"].has_dictionary_page
    for c in ("b", "x"):
        assert set(col[c].encodings) <= {"PLAIN", "RLE"} and not col[c].has_dictionary_page, (c, col[c].encodings)
    assert all(c.compression == "SNAPPY" for c in col.values())
    assert (col["run_id"].statistics.min, col["run_id"].statistics.max) == (3, 3) and col["s"].statistics.null_count == 1
    assert col["x"].statistics.null_count == 1 and (col["x"].statistics.min, col["x"].statistics.max) == (0.5, 1.5)
    assert pq.read_table(pa.BufferReader(sw_store._parquet_image(t))).equals(t)
    f = pq.ParquetFile(pa.BufferReader(sw_store._parquet_image(table((1 << 20) + 1))))
    assert [f.metadata.row_group(g).num_rows for g in range(f.metadata.num_row_groups)] == [1 << 20, 1]


def test_a_rerun_reuses_the_combined_tables_only_when_they_are_made_of_its_runs(tmp_path, monkeypatch):
    """OUT/combined.json certifies the combined tables: the SHA-256 over each run's id and record
    (which holds its pack's SHA-256) and each table file's SHA-256. A rerun whose runs are all
    finished and verified, with that digest, reads the tables from their files instead of
    splicing every run again; a run redone, a table file changed, a damaged record or a failed
    run: combined again (the same bytes, runs being deterministic)."""
    f = write(tmp_path)
    out = tmp_path / "o"
    first = sweep.run(sweep.load(f), out, jobs=1, progress=False)
    rec = json.loads((out / sweep.COMBINED).read_text())
    assert set(rec["sha256"]) == set(sweep.TABLES)
    assert rec["sha256"]["media_packets"] == hashlib.sha256((out / "media_packets.parquet").read_bytes()).hexdigest()
    runs = log_entries(out)
    want = hashlib.sha256("".join(f"{i} {hashlib.sha256((json.dumps(record(e)) + chr(10)).encode()).hexdigest()}\n"
                                  for i, e in sorted(runs.items())).encode()).hexdigest()
    assert rec["digest"] == want and len(runs) == 12
    files = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("*.parquet")}
    made = []
    orig = sw_combine._Combiner.__init__

    def counting(self, *a, **k):
        made.append(1)
        orig(self, *a, **k)

    monkeypatch.setattr(sw_combine._Combiner, "__init__", counting)
    again = sweep.run(sweep.load(f), out, jobs=1, progress=False)
    assert made == [] and again.skipped == 12 and again.ran == 0
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.glob("*.parquet")} == files  # not rewritten
    for name in sweep.TABLES:
        assert again.arrow[name].equals(first.arrow[name]), name

    def rerun_combines() -> None:
        n = len(made)
        sweep.run(sweep.load(f), out, jobs=1, progress=False)
        assert len(made) == n + 1
        assert {p.name: p.read_bytes() for p in out.glob("*.parquet")} == {k: v[0] for k, v in files.items()}

    # a damaged or foreign record
    (out / sweep.COMBINED).write_text(json.dumps({**rec, "digest": "0" * 64}))
    rerun_combines()
    (out / sweep.COMBINED).write_text("{not json")
    rerun_combines()
    assert json.loads((out / sweep.COMBINED).read_text()) == rec  # written again
    # a combined table changed: another table's file of as many rows in its place, or one byte
    assert first.arrow["flows"].num_rows == first.arrow["runs"].num_rows
    (out / "flows.parquet").write_bytes((out / "runs.parquet").read_bytes())
    rerun_combines()
    b = bytearray((out / "media_packets.parquet").read_bytes())
    b[100] ^= 1
    (out / "media_packets.parquet").write_bytes(bytes(b))
    rerun_combines()
    # a run redone: its record (its wall time) differs, so does the digest
    flip(log_entries(out)[4])
    rerun_combines()
    assert json.loads((out / sweep.COMBINED).read_text())["digest"] != rec["digest"]
    assert len(made) == 5


def test_no_combined_record_while_a_run_fails(tmp_path, monkeypatch):
    """A sweep with a failed run writes no OUT/combined.json (and drops an older one): the next
    run does the failed run again and must combine again."""
    f = write(tmp_path)
    out = tmp_path / "o"
    sweep.run(sweep.load(f), out, jobs=1, progress=False)
    assert (out / sweep.COMBINED).exists()
    flip(log_entries(out)[2])
    from jitterlab import sim

    real = sim.simulate_run

    def flaky(base, overrides, seed, run_id, params, cache_key=None):
        if run_id == 2:
            raise RuntimeError("boom")
        return real(base, overrides, seed, run_id, params, cache_key)

    monkeypatch.setattr(sim, "simulate_run", flaky)
    res = sweep.run(sweep.load(f), out, jobs=1, progress=False)
    assert len(res.failed) == 1 and not (out / sweep.COMBINED).exists()


def test_a_kept_worker_reports_its_peak_memory_from_the_sweeps_first_run(tmp_path, monkeypatch):
    """`worker_peak_rss_bytes` is a worker's peak over this sweep's runs, not over the sweeps it
    ran before (the local pool is kept from sweep to sweep; Dask workers are long-lived): a worker
    resets its VmHWM when the first run of another sweep reaches it (once a sweep, not per run),
    and the client's own process never does. The reset itself: a peak made and freed is gone."""
    import numpy as np

    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux's /proc/self/clear_refs (VmHWM reset)")
    big = np.ones(40_000_000)  # 320 MB resident
    del big
    before = sw_exec._peak_rss()
    sw_exec._reset_peak_rss()
    after = sw_exec._peak_rss()
    assert before > 300 * 2**20 and after < before - 250 * 2**20, (before, after)

    resets = []
    monkeypatch.setattr(sw_exec, "_reset_peak_rss", lambda: resets.append(1))
    monkeypatch.setattr(sw_exec, "_PEAK_SWEEP", None)
    sw = sweep.load(write(tmp_path))
    spec = sw.runs()[0]
    base = {"scenario": sw.scenario, "scenario_key": None, "seed": spec.seed, "run_id": 0, "rep": 0, "point": 0,
            "overrides": spec.overrides, "params": spec.params, "tables": ["runs"], "reduce": None, "out": None, "receipt": True}
    for sid, want in (("a", 1), ("a", 1), ("b", 2), ("b", 2)):
        res = sweep.execute({**base, "sweep_id": sid})
        assert res["ok"] and res["rss_bytes"] > 0 and len(resets) == want
    sweep.execute({**base, "sweep_id": "c", "receipt": False})  # a run done in the client itself
    assert len(resets) == 2
