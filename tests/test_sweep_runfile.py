"""A sweep's run files (python/jitterlab/sweep/store.py): one file a run, OUT/runs/<run_id>.run
(its pack, its record, a trailer), written under a temporary name and renamed into place; a
damaged, truncated or partial one redone with a line naming it; a failed run's error file; an
OUT of the previous layout (a directory a run) read and resumed as it is."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa

from conftest import run_cli
from jitterlab import sweep
from jitterlab.sweep import store as sw_store
from test_hardening import SWEEP as HARDEN, TABLES, _tables
from test_sweep import write
from _runs import run_files, to_dir_layout


def test_damaged_truncated_missing_runs_are_redone(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(HARDEN)
    ref_out, out = tmp_path / "ref", tmp_path / "out"
    assert run_cli("sweep", str(f), "--out", str(ref_out), "--jobs", "1", "--quiet").returncode == 0
    assert run_cli("sweep", str(f), "--out", str(out), "--jobs", "1", "--quiet").returncode == 0
    ref = _tables(ref_out)
    runs = out / "runs"
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
    assert sorted(p.name for p in runs.iterdir()) == [f"{i:06d}.run" for i in range(4)]  # temporaries removed
    got = _tables(out)
    for n in TABLES:
        pd.testing.assert_frame_equal(got[n], ref[n])


def test_collect_leaves_out_unverified_runs(tmp_path, capsys):
    f = tmp_path / "s.toml"
    f.write_text(HARDEN)
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert res.arrow["runs"].num_rows == 4
    runs = tmp_path / "o" / "runs"

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


def test_an_out_of_the_previous_layout_resumes_without_running_again(tmp_path, capsys):
    """An OUT whose runs the previous version stored (a directory a run: `tables.pack` and its
    `done` record) resumes without running them again and combines to the same bytes; a damaged
    one is done again, with its line, into a run file (its directory removed), a failed one
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
    assert sorted(os.listdir(runs)) == sorted([f"{i:06d}" for i in range(12) if i not in (4, 7)] + ["000004.run", "000007.run"])
    assert {n: (tmp_path / "o" / f"{n}.parquet").read_bytes() for n in sweep.TABLES} == ref_bytes
    assert not sweep.collect(tmp_path / "o").failed


def test_a_retried_run_leaves_only_its_new_file(tmp_path, monkeypatch):
    """A failed run leaves runs/<run>.error.txt; retried and failing again, the same file (the new
    error); retried and done, its run file alone (the error file removed before the run)."""
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
    assert sorted(os.listdir(runs)) == sorted([f"{i:06d}.run" for i in range(12) if i != 2] + ["000002.error.txt"])
    why["text"] = ""
    res = sweep.run(sweep.load(f), tmp_path / "o", jobs=1, progress=False)
    assert res.ran == 1 and not res.failed and sorted(os.listdir(runs)) == [f"{i:06d}.run" for i in range(12)]
    assert (tmp_path / "o" / "failures.csv").read_text() == "run_id,error\n"


def test_store_replaces_a_killed_runs_temporary_file_and_an_earlier_attempt(tmp_path):
    """A run stored locally (`_store_local`: one file created under a temporary name, written
    with one writev and renamed into place) over what a killed run of this process id left (its
    temporary file, longer than the new one) and an earlier attempt (the run's file): the run
    file holds exactly the new bytes, its pack, its record (JSON) and the trailer (the record's
    length, 8 bytes little-endian, and the magic), and nothing else is left in runs/."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / f"000007.run.tmp{os.getpid()}").write_bytes(b"left by a killed run" * 100)
    (runs / "000007.run").write_bytes(b"an earlier attempt")
    t = pa.table({"run_id": pa.array([7, 7, 7], pa.int64())})
    res = {"run_id": 7, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.5, "identity": {"seed": 1}}
    blob, parts = sw_store._store(tmp_path, res)
    assert sorted(os.listdir(runs)) == ["000007.run"]
    assert parts == {"runs": [0, parts["runs"][1], 3]} and blob[:6] == b"ARROW1" and len(blob) % 64 == 0
    sha = hashlib.sha256(blob).hexdigest()
    rec = ('{"wall_s": 0.5, "identity": {"seed": 1}, "pack": {"bytes": %d, "sha256": "%s"}, "parts": {"runs": [0, %d, 3]}, '
           '"tables": ["runs"], "requested": ["runs"]}\n' % (len(blob), sha, parts["runs"][1])).encode()
    data = (runs / "000007.run").read_bytes()
    assert data == blob + rec + len(rec).to_bytes(8, "little") + b"JLRUN\x00v1"
    assert res["done_sha256"] == hashlib.sha256(rec).hexdigest()
    assert sweep.read_run_table(runs / "000007.run", "runs").equals(t) and sweep.verify_run(runs / "000007.run") is None
    # no rows at all: no pack (the SHA-256 of nothing), the record and the trailer
    empty = {"run_id": 8, "ok": True, "tables": {}, "requested": ["runs"], "wall_s": 0.25, "identity": {"seed": 2}}
    assert sw_store._store(tmp_path, empty) == (b"", {})
    rec = (b'{"wall_s": 0.25, "identity": {"seed": 2}, "pack": {"bytes": 0, "sha256": '
           b'"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}, "parts": {}, "tables": [], "requested": ["runs"]}\n')
    assert (runs / "000008.run").read_bytes() == rec + len(rec).to_bytes(8, "little") + b"JLRUN\x00v1"
    # a failed run: its error file, the error, a blank line, the traceback
    assert sw_store._store(tmp_path, {"run_id": 9, "ok": False, "error": "ValueError: again", "traceback": "tb"}) is None
    assert (runs / "000009.error.txt").read_text() == "ValueError: again\n\ntb"
    assert sorted(os.listdir(runs)) == ["000007.run", "000008.run", "000009.error.txt"]  # no temporary file left behind
    # a fresh OUT: runs/ made at its first run
    assert sw_store._store(tmp_path / "fresh", dict(res)) is not None
    assert (tmp_path / "fresh" / "runs" / "000007.run").read_bytes() == data


def test_a_short_write_is_completed(tmp_path, monkeypatch):
    """The kernel may write less than asked (a signal, a pipe, a full quota's edge): the run file
    is still complete, the rest written after writev's share."""
    real = os.writev
    monkeypatch.setattr(os, "writev", lambda fd, bufs: real(fd, [bytes(bufs[0][:5])]))
    t = pa.table({"run_id": pa.array([3] * 10, pa.int64())})
    res = {"run_id": 3, "ok": True, "tables": {"runs": t}, "requested": ["runs"], "wall_s": 0.5, "identity": {"seed": 1}}
    blob, _ = sw_store._store(tmp_path, res)
    p = tmp_path / "runs" / "000003.run"
    assert p.read_bytes()[:len(blob)] == blob and sweep.verify_run(p) is None
    assert sweep.read_run_table(p, "runs").equals(t)
    monkeypatch.delattr(os, "writev")  # a platform without writev
    assert sw_store._store(tmp_path, dict(res)) is not None and sweep.verify_run(p) is None


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
