"""A sweep's stored runs (python/jitterlab/sweep/store.py): locally, entries appended to each
process's run log, OUT/runs/*.runlog (a header, then what a run file holds: its pack, its record,
a trailer); a damaged, cut short or partial entry redone with a line naming it; run files
(OUT/runs/<run_id>.run: an object store's layout and the previous version's) read, verified and
resumed as they are; a failed run's error file; an OUT of an older layout (a directory a run) read
and resumed as it is."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import pyarrow as pa

from conftest import run_cli
from jitterlab import sweep
from jitterlab.sweep import store as sw_store
from test_hardening import SWEEP as HARDEN, TABLES, _tables
from test_sweep import write
from _runs import flip, log_entries, run_files, split_logs, to_dir_layout


def _swept_twice(tmp_path: Path) -> tuple[Path, Path, dict[str, pd.DataFrame]]:
    """The 4-run sweep file, an OUT it was run into, and its tables from a second OUT (the reference)."""
    f = tmp_path / "s.toml"
    f.write_text(HARDEN)
    for o in ("ref", "out"):
        assert run_cli("sweep", str(f), "--out", str(tmp_path / o), "--jobs", "1", "--quiet").returncode == 0
    return f, tmp_path / "out", _tables(tmp_path / "ref")


def test_damaged_cut_short_and_partial_log_entries_are_redone(tmp_path):
    """A flipped bit in an entry's pack, an entry whose trailer lost a bit, a log cut inside its
    last entry (a process killed while appending): each run done again with its line, into a new
    run log; the runs before the damage are kept; the tables are the reference's. A damaged
    header hides the entries after it: their runs are done again."""
    f, out, ref = _swept_twice(tmp_path)
    runs = out / "runs"
    (log,) = runs.iterdir()
    e = log_entries(out)
    assert log.name.endswith(sweep.LOG_SUFFIX) and sorted(e) == [0, 1, 2, 3] and all(x.log == log for x in e.values())
    rec = sweep.read_run_record(e[0])
    assert rec["parts"]["media_packets"][2] == 50  # 1 s of 20 ms audio
    # entries one after another in run order, each body 64-byte aligned after its 64-byte header
    assert e[0].offset == 64 and all(e[i + 1].offset == e[i].offset + e[i].length + (-e[i].length % 64) + 64 for i in range(3))
    flip(e[0])
    flip(e[2], e[2].length - 1, 0x01)  # the trailer's magic
    with open(log, "r+b") as fh:
        fh.truncate(e[3].offset + e[3].length // 2)
    (out / "media_packets.parquet").write_bytes(b"")  # combined tables left damaged by a crash: rebuilt
    p = run_cli("sweep", str(f), "--out", str(out), "--jobs", "1", "--quiet")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert f"{out}: runs/{log.name} ends in a partial entry at byte {e[3].offset - 64}; the runs whose entries follow are run again" in lines
    assert f"harden: run 000000: 000000.run in {log.name} (byte 0) does not match its checksum (damaged); running it again" in lines
    assert (f"harden: run 000002: 000002.run in {log.name} (byte {e[2].offset - 64}) is truncated or its trailer is damaged; "
            "running it again") in lines
    assert "3 now, 1 before" in p.stderr
    logs = sorted(runs.iterdir())
    assert len(logs) == 2 and logs[0] == log and logs[1].name.endswith(sweep.LOG_SUFFIX)  # the old one kept: it holds run 1
    assert {i: x.log for i, x in log_entries(out).items()} == {0: logs[1], 1: log, 2: logs[1], 3: logs[1]}
    got = _tables(out)
    for n in TABLES:
        pd.testing.assert_frame_equal(got[n], ref[n])
    # a header that is no entry's (run 2's, the second in the new log): the entries from it on
    # cannot be found, and their runs (2, 3) are done again
    e = log_entries(out)
    data = bytearray(logs[1].read_bytes())
    data[e[2].offset - 64] ^= 0x01
    logs[1].write_bytes(bytes(data))
    entries, why = sw_store._scan_log(logs[1])
    assert [x.run_id for x in entries] == [0] and why == f"{logs[1].name} is damaged at byte {e[2].offset - 64}"
    p = run_cli("sweep", str(f), "--out", str(out), "--jobs", "1", "--quiet")
    assert p.returncode == 0 and "2 now, 2 before" in p.stderr, p.stderr
    got = _tables(out)
    for n in TABLES:
        pd.testing.assert_frame_equal(got[n], ref[n])


def test_damaged_truncated_missing_run_files_are_redone(tmp_path):
    """Run files (an object store's layout, the previous version's locally): a damaged, truncated
    or bad-trailer one is done again with its line, into a run log; killed runs' temporaries
    removed."""
    f, out, ref = _swept_twice(tmp_path)
    runs = out / "runs"
    split_logs(out)
    rec = sweep.read_run_record(runs / "000000.run")
    assert rec["parts"]["media_packets"][2] == 50  # 1 s of 20 ms audio
    # a flipped bit in the middle of a data page of the pack
    m = runs / "000000.run"
    data = bytearray(m.read_bytes())
    data[rec["pack"]["bytes"] // 2] ^= 0x10
    m.write_bytes(bytes(data))
    # a truncated run file; one whose trailer's magic lost a bit
    r = runs / "000001.run"
    r.write_bytes(r.read_bytes()[: r.stat().st_size // 2])
    t = runs / "000002.run"
    data = bytearray(t.read_bytes())
    data[-1] ^= 0x01
    t.write_bytes(bytes(data))
    # a killed run's temporary file, and an older version's temporary directory (their process is gone)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (runs / f"000003.run.tmp{dead.pid}").write_bytes(b"PAR1")
    stale = runs / f"000003.tmp{dead.pid}"
    stale.mkdir()
    (stale / "media_packets.parquet").write_bytes(b"PAR1")
    # and combined tables left damaged by an earlier crash are rebuilt from the runs
    (out / "media_packets.parquet").write_bytes(b"")

    p = run_cli("sweep", str(f), "--out", str(out), "--jobs", "1", "--quiet")
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert "harden: run 000000: 000000.run does not match its checksum (damaged); running it again" in lines
    assert "harden: run 000001: 000001.run is truncated or its trailer is damaged; running it again" in lines
    assert "harden: run 000002: 000002.run is truncated or its trailer is damaged; running it again" in lines
    assert "3 now, 1 before" in p.stderr
    names = sorted(p.name for p in runs.iterdir())  # temporaries and the damaged files removed
    assert names[0] == "000003.run" and len(names) == 2 and names[1].endswith(sweep.LOG_SUFFIX)
    assert sorted(log_entries(out)) == [0, 1, 2]
    got = _tables(out)
    for n in TABLES:
        pd.testing.assert_frame_equal(got[n], ref[n])


def test_collect_leaves_out_unverified_runs(tmp_path, capsys):
    f = tmp_path / "s.toml"
    f.write_text(HARDEN)
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert res.arrow["runs"].num_rows == 4
    runs = tmp_path / "o" / "runs"
    # in a run log: a flipped bit in run 3's pack leaves it out, with its line
    e = log_entries(tmp_path / "o")
    flip(e[3])
    assert list(sweep.collect(tmp_path / "o", sweep.TABLES)["runs"].run_id) == [0, 1, 2]
    assert capsys.readouterr().err.splitlines() == [f"run 000003: {e[3].name} does not match its checksum (damaged); left out of "
                                                    "the combined tables (run the sweep again to redo it)"]
    flip(e[3])  # mended
    split_logs(tmp_path / "o")  # then the same as run files

    def rewrite(p: Path, rec: bytes) -> None:  # the run file with record `rec` and a trailer that fits it
        blob = p.read_bytes()[:sweep.read_run_record(p)["pack"]["bytes"]]
        p.write_bytes(blob + rec + len(rec).to_bytes(8, "little") + sw_store.RUN_MAGIC)

    # a record whose parts reach past the pack's end
    rec = sweep.read_run_record(runs / "000001.run")
    rec["parts"]["runs"][1] += rec["pack"]["bytes"]
    rewrite(runs / "000001.run", (json.dumps(rec) + "\n").encode())
    # a record that is not JSON, one that does not add up to the file's size (a byte more)
    rec = sweep.read_run_record(runs / "000002.run")
    rewrite(runs / "000002.run", (json.dumps(rec) + "\n").encode()[1:])
    p0 = runs / "000000.run"
    data = p0.read_bytes()
    p0.write_bytes(data[:10] + b"x" + data[10:])
    again = sweep.collect(tmp_path / "o", sweep.TABLES)
    assert list(again["runs"].run_id) == [3]  # the one left as it was
    lines = capsys.readouterr().err.splitlines()
    tail = "; left out of the combined tables (run the sweep again to redo it)"
    assert lines == ["run 000000: 000000.run: its record does not match the file's size (damaged)" + tail,
                     "run 000001: 000001.run: its record is damaged" + tail,
                     "run 000002: 000002.run: its record is damaged" + tail]


def test_resume_and_collect_take_the_same_stored_form_of_a_run(tmp_path, capsys):
    """A run stored twice, as the previous version's run file and (newer) as a run-log entry that
    is damaged: the sweep's resume and `collect` both fall back to the run file that verifies
    (`store._stored_runs`, one order for every reader); `collect` used to stop at the damaged
    entry and leave the run out."""
    f = tmp_path / "s.toml"
    f.write_text(HARDEN)
    out = tmp_path / "o"
    sweep.run(sweep.load(f), out, jobs=1, progress=False)
    ref = {n: (out / f"{n}.parquet").read_bytes() for n in ("runs", "media_packets")}
    e = log_entries(out)[2]
    (out / "runs" / "000002.run").write_bytes(e.read_bytes())
    flip(e)
    got = sweep.collect(out, sweep.TABLES)
    assert list(got["runs"].run_id) == [0, 1, 2, 3]
    assert capsys.readouterr().err == ""
    assert {n: (out / f"{n}.parquet").read_bytes() for n in ref} == ref
    again = sweep.run(sweep.load(f), out, jobs=1, progress=False)
    assert (again.ran, again.skipped) == (0, 4)
    assert capsys.readouterr().err == ""
    assert (out / "runs" / "000002.run").exists()  # the run's form, not a leftover
    assert {n: (out / f"{n}.parquet").read_bytes() for n in ref} == ref


def test_an_out_of_the_previous_layout_resumes_without_running_again(tmp_path, capsys):
    """An OUT whose runs the previous version stored (a directory a run: `tables.pack` and its
    `done` record) resumes without running them again and combines to the same bytes; a damaged
    one is done again, with its line, into a run log (its directory removed), a failed one
    (`<run>/error.txt`) is retried, and `collect` reads the mixed layouts alike."""
    f = write(tmp_path)
    ref = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    ref_bytes = {n: (tmp_path / "o" / f"{n}.parquet").read_bytes() for n in sweep.TABLES}
    runs = tmp_path / "o" / "runs"
    for p in run_files(tmp_path / "o"):
        to_dir_layout(p)
    for n in ref_bytes:
        (tmp_path / "o" / f"{n}.parquet").unlink()
    again = sweep.run(sweep.load(f), tmp_path / "o", jobs=2, progress=False)
    assert again.ran == 0 and again.skipped == 12
    assert {n: (tmp_path / "o" / f"{n}.parquet").read_bytes() for n in sweep.TABLES} == ref_bytes
    assert sorted(os.listdir(runs)) == [f"{i:06d}" for i in range(12)]  # left as they were
    pd.testing.assert_frame_equal(sweep.collect(tmp_path / "o")["media_packets"], ref["media_packets"])
    assert sweep.read_run_table(runs / "000004", "runs").equals(ref.arrow["runs"].slice(4, 1))
    # a flipped bit in run 4's pack, run 7 failed (its directory holds error.txt only)
    m = runs / "000004" / sweep.PACK
    data = bytearray(m.read_bytes())
    data[len(data) // 2] ^= 0x08
    m.write_bytes(bytes(data))
    shutil.rmtree(runs / "000007")
    (runs / "000007").mkdir()
    (runs / "000007" / "error.txt").write_text("RuntimeError: an earlier failure\n")
    assert [r["run_id"] for r in sweep.collect(tmp_path / "o").failed] == [7]
    capsys.readouterr()
    fixed = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert fixed.ran == 2 and fixed.skipped == 10 and not fixed.failed
    assert "run 000004: tables.pack does not match its checksum (damaged); running it again" in capsys.readouterr().err
    names = sorted(os.listdir(runs))
    assert names[:10] == [f"{i:06d}" for i in range(12) if i not in (4, 7)] and len(names) == 11 and names[10].endswith(sweep.LOG_SUFFIX)
    assert sorted(log_entries(tmp_path / "o")) == [4, 7]
    assert {n: (tmp_path / "o" / f"{n}.parquet").read_bytes() for n in sweep.TABLES} == ref_bytes
    assert not sweep.collect(tmp_path / "o").failed


def test_a_retried_run_leaves_only_its_new_file(tmp_path, monkeypatch):
    """A failed run leaves runs/<run>.error.txt; retried and failing again, the same file (the new
    error); retried and done, its entry in a run log (the error file removed before the run)."""
    from jitterlab import sim

    f = write(tmp_path)
    real = sim.simulate_run
    why = {"text": "boom"}

    def flaky(base, overrides, seed, run_id, params, cache_key=None, prepared=None):
        if run_id == 2 and why["text"]:
            raise RuntimeError(why["text"])
        return real(base, overrides, seed, run_id, params, cache_key, prepared)

    monkeypatch.setattr(sim, "simulate_run", flaky)
    runs = tmp_path / "o" / "runs"
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert [r["run_id"] for r in res.failed] == [2] and (runs / "000002.error.txt").read_text().startswith("RuntimeError: boom\n\n")
    why["text"] = "again"
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert res.ran == 1 and res.failed[0]["error"] == "RuntimeError: again"
    names = sorted(os.listdir(runs))
    assert len(names) == 2 and "000002.error.txt" in names and any(n.endswith(sweep.LOG_SUFFIX) for n in names)
    assert sorted(log_entries(tmp_path / "o")) == [i for i in range(12) if i != 2]
    why["text"] = ""
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    # the error file removed; run 2 in a log of its own (this process closed its log after each sweep)
    got = sorted(os.listdir(runs))
    assert res.ran == 1 and not res.failed and len(got) == 2 and all(n.endswith(sweep.LOG_SUFFIX) for n in got)
    assert sorted(log_entries(tmp_path / "o")) == list(range(12))
    assert (tmp_path / "o" / "failures.csv").read_text() == "run_id,error\n"


def test_store_appends_a_run_to_this_processs_run_log(tmp_path):
    """A run stored locally (`_store_local`) is appended to this process's run log in OUT/runs/
    (made at the first run): a 64-byte header (the magic, the run id and the body's length, 8
    bytes each, little-endian, then zeros), the body (the pack, the record (JSON) and the trailer:
    the record's length, 8 bytes little-endian, and the run magic), zeros to a multiple of 64; the
    next run's entry right after it. A failed run's error file replaces what a killed run of this
    process id left under its temporary name."""
    runs = tmp_path / "runs"
    try:
        t = pa.table({"run_id": pa.array([7, 7, 7], pa.int64())})
        res = {"run_id": 7, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.5, "identity": {"seed": 1}}
        blob, parts = sw_store._store(tmp_path, res)
        (log,) = runs.iterdir()
        assert log.name.endswith(f"-{os.getpid()}.runlog") and len(log.name.split("-", 1)[0]) == 20
        assert parts == {"runs": [0, parts["runs"][1], 3]} and blob[:6] == b"ARROW1" and len(blob) % 64 == 0
        sha = hashlib.sha256(blob).hexdigest()
        rec = ('{"wall_s": 0.5, "identity": {"seed": 1}, "pack": {"bytes": %d, "sha256": "%s"}, "parts": {"runs": [0, %d, 3]}, '
               '"tables": ["runs"], "requested": ["runs"]}\n' % (len(blob), sha, parts["runs"][1])).encode()
        body = blob + rec + len(rec).to_bytes(8, "little") + b"JLRUN\x00v1"
        entry = b"JLLOG\x00v1" + (7).to_bytes(8, "little") + len(body).to_bytes(8, "little") + bytes(40) + body + bytes(-len(body) % 64)
        assert log.read_bytes() == entry and res["where"] == (log.name, 64, len(body))
        assert res["done_sha256"] == hashlib.sha256(rec).hexdigest()
        e = sw_store.LogEntry(log, 7, 64, len(body))
        assert sweep.read_run_table(e, "runs").equals(t) and sweep.verify_run(e) is None
        # no rows at all: no pack (the SHA-256 of nothing), the record and the trailer, right after
        empty = {"run_id": 8, "ok": True, "tables": {}, "requested": ["runs"], "wall_s": 0.25, "identity": {"seed": 2}}
        assert sw_store._store(tmp_path, empty) == (b"", {})
        rec = (b'{"wall_s": 0.25, "identity": {"seed": 2}, "pack": {"bytes": 0, "sha256": '
               b'"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}, "parts": {}, "tables": [], "requested": ["runs"]}\n')
        body8 = rec + len(rec).to_bytes(8, "little") + b"JLRUN\x00v1"
        assert log.read_bytes()[len(entry):] == (b"JLLOG\x00v1" + (8).to_bytes(8, "little") + len(body8).to_bytes(8, "little") + bytes(40)
                                                 + body8 + bytes(-len(body8) % 64))
        assert empty["where"] == (log.name, len(entry) + 64, len(body8))
        entries, why = sw_store._scan_log(log)
        assert why is None and [(x.run_id, x.offset, x.length) for x in entries] == [(7, 64, len(body)), (8, len(entry) + 64, len(body8))]
        # a failed run: its error file (over what a killed run of this process left), the error, a blank line, the traceback
        (runs / f"000009.error.txt.tmp{os.getpid()}").write_bytes(b"left by a killed run" * 100)
        assert sw_store._store(tmp_path, {"run_id": 9, "ok": False, "error": "ValueError: again", "traceback": "tb"}) is None
        assert (runs / "000009.error.txt").read_text() == "ValueError: again\n\ntb"
        assert sorted(os.listdir(runs)) == ["000009.error.txt", log.name]  # no temporary file left behind
        # a fresh OUT: runs/ made at its first run, its own log
        assert sw_store._store(tmp_path / "fresh", dict(res)) is not None
        (log2,) = (tmp_path / "fresh" / "runs").iterdir()
        assert log2.read_bytes() == entry
    finally:
        sw_store.close_logs()


def test_a_log_removed_under_a_kept_process_is_opened_again(tmp_path):
    """A kept worker serves many sweeps: when its run log is gone (OUT deleted and made again),
    the next run opens a new one instead of appending to the deleted file."""
    import shutil as sh

    t = pa.table({"run_id": pa.array([1], pa.int64())})
    res = {"run_id": 1, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.5, "identity": {"seed": 1}}
    try:
        sw_store._store(tmp_path / "o", dict(res))
        sh.rmtree(tmp_path / "o")
        sw_store._store(tmp_path / "o", dict(res))
        (log,) = (tmp_path / "o" / "runs").iterdir()
        assert [x.run_id for x in sw_store._scan_log(log)[0]] == [1] and sweep.verify_run(log_entries(tmp_path / "o")[1]) is None
    finally:
        sw_store.close_logs()


def test_threads_append_whole_entries(tmp_path):
    """A Dask worker runs tasks in threads: appends from several threads never interleave."""
    import threading

    t = pa.table({"run_id": pa.array(list(range(300)), pa.int64())})

    def store(k: int) -> None:
        for j in range(15):
            rid = k * 100 + j
            sw_store._store(tmp_path, {"run_id": rid, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.1,
                                       "identity": {"seed": rid}})

    try:
        ts = [threading.Thread(target=store, args=(k,)) for k in range(6)]
        for x in ts:
            x.start()
        for x in ts:
            x.join()
        got = log_entries(tmp_path)
        assert sorted(got) == sorted(k * 100 + j for k in range(6) for j in range(15))
        assert all(sweep.verify_run(e) is None and sweep.read_run_record(e)["identity"]["seed"] == i for i, e in got.items())
    finally:
        sw_store.close_logs()


def test_an_append_cut_short_by_a_full_disk_is_taken_back(tmp_path, monkeypatch):
    """A full disk in the middle of an entry: the log is cut back to where the entry began (no
    partial entry that would hide the ones after it), the run fails to store with one line, and
    the next run appends where the last whole entry ended."""
    import errno

    from jitterlab import _io

    t = pa.table({"run_id": pa.array([5] * 10, pa.int64())})
    res = {"run_id": 5, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.5, "identity": {"seed": 1}}
    try:
        sw_store._store(tmp_path, dict(res))
        (log,) = (tmp_path / "runs").iterdir()
        size = log.stat().st_size
        real = os.writev

        def full(fd, bufs):
            real(fd, [bytes(bufs[0][:40])])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(os, "writev", full)
        with pytest.raises(_io.OutputError, match="(?i)no space left"):
            sw_store._store(tmp_path, {**res, "run_id": 6})
        assert log.stat().st_size == size
        monkeypatch.undo()
        sw_store._store(tmp_path, {**res, "run_id": 7})
        entries, why = sw_store._scan_log(log)
        assert why is None and [x.run_id for x in entries] == [5, 7] and all(sweep.verify_run(x) is None for x in entries)
    finally:
        sw_store.close_logs()


def test_a_short_write_is_completed(tmp_path, monkeypatch):
    """The kernel may write less than asked (a signal, a pipe, a full quota's edge): the entry is
    still whole, the rest written after writev's share."""
    real = os.writev
    monkeypatch.setattr(os, "writev", lambda fd, bufs: real(fd, [bytes(bufs[0][:5])]))
    t = pa.table({"run_id": pa.array([3] * 10, pa.int64())})
    res = {"run_id": 3, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.5, "identity": {"seed": 1}}
    try:
        blob, _ = sw_store._store(tmp_path, res)
        e = log_entries(tmp_path)[3]
        assert e.read_bytes()[:len(blob)] == blob and sweep.verify_run(e) is None
        assert sweep.read_run_table(e, "runs").equals(t)
        monkeypatch.delattr(os, "writev")  # a platform without writev
        assert sw_store._store(tmp_path, {**res, "run_id": 4}) is not None and sweep.verify_run(log_entries(tmp_path)[4]) is None
    finally:
        sw_store.close_logs()


def test_an_object_store_of_the_previous_layout_resumes_without_running_again(tmp_path):
    """On an object store (fsspec's memory filesystem) the previous layout's runs (objects
    runs/<run>/tables.pack and runs/<run>/done) are verified and reused as they are; one whose
    `done` object is gone is done again, as one run object, its old objects removed."""
    import uuid

    import fsspec

    fs, root = fsspec.filesystem("memory"), f"/jl-{uuid.uuid4().hex}"
    try:
        f = write(tmp_path)
        first = sweep.run(sweep.load(f), f"memory://{root}", jobs=1, progress=False)
        for i in range(12):
            p = f"{root}/runs/{i:06d}.run"
            data = fs.cat_file(p)
            rec, _ = sw_store._run_record(data, p)
            assert rec is not None
            blob = data[:rec["pack"]["bytes"]]
            fs.pipe_file(f"{root}/runs/{i:06d}/tables.pack", blob)
            done = {"wall_s": rec["wall_s"], "identity": rec["identity"],
                    "files": {"tables.pack": {"bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}},
                    "parts": rec["parts"], "tables": rec["tables"], "requested": rec["requested"]}
            fs.pipe_file(f"{root}/runs/{i:06d}/done", (json.dumps(done) + "\n").encode())
            fs.rm_file(p)
        fs.rm_file(f"{root}/runs/000005/done")  # killed between its pack and its record
        again = sweep.run(sweep.load(f), f"memory://{root}", jobs=1, progress=False)
        assert again.ran == 1 and again.skipped == 11
        names = sorted(p.rsplit("/", 1)[1] for p in fs.ls(f"{root}/runs", detail=False))
        assert names == sorted([f"{i:06d}" for i in range(12) if i != 5] + ["000005.run"])
        for name in ("media_packets", "runs", "channels"):
            assert again.arrow[name].equals(first.arrow[name]), name
    finally:
        if fs.exists(root):
            fs.rm(root, recursive=True)


def test_stored_names_orders_a_runs_entries_as_readers_take_them():
    # run file, then an older version's directory, then the error file; temporaries are no run's
    from jitterlab.sweep.store import _stored_names

    got = _stored_names(["000003.error.txt", "000003", "000003.run", "000004.error.txt", "000005", "000005.tmp12",
                         "000006.run.tmp3", "notes.run"])
    assert got == {3: ["000003.run", "000003", "000003.error.txt"], 4: ["000004.error.txt"], 5: ["000005"]}


def test_a_run_log_is_never_taken_for_a_temporary_file(tmp_path, monkeypatch):
    """Killed runs' temporaries (`*.tmpPID`) are removed before a sweep; a run log never is, even
    one whose name holds ".tmp" (a host named so before the host part lost its dots), and a host's
    dots never reach a log's name."""
    runs = tmp_path / "runs"
    runs.mkdir()
    log = runs / "01795815725128916021-build.tmp7-4242.runlog"
    log.write_bytes(b"")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (runs / f"000003.run.tmp{dead.pid}").write_bytes(b"x")
    assert sw_store._remove_stale_tmp(tmp_path) == 1 and sorted(os.listdir(runs)) == [log.name]
    real = os.uname()
    monkeypatch.setattr(os, "uname", lambda: type("U", (), {"nodename": "build.tmp7.example", "sysname": real.sysname})())
    try:
        t = pa.table({"run_id": pa.array([1], pa.int64())})
        sw_store._store(tmp_path / "o", {"run_id": 1, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.1,
                                         "identity": {"seed": 1}})
        (made,) = (tmp_path / "o" / "runs").iterdir()
        assert made.name.endswith(f"-build_tmp7_example-{os.getpid()}.runlog")
    finally:
        sw_store.close_logs()
