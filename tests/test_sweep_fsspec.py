"""Sweeps whose --out is a URL (fsspec): an object store without directories or renames
(`memory://`, as S3 or GCS behave) and a directory reached through fsspec (`local://`) that
worker processes and a Dask cluster share. Same result files, byte for byte, as a local
directory; a run is one object (its pack, its record, a trailer) written in place; damage,
truncation or a partial object found by the trailer, the record and the checksums."""
import hashlib
import subprocess
import sys
import uuid
from pathlib import Path

import fsspec
from fsspec.implementations.memory import MemoryFileSystem
import pytest

from jitterlab import _fspath, sweep
from jitterlab.sweep import combine as sw_combine
from jitterlab._io import OutputError
from test_sweep import write
from _runs import log_entries

RESULT_FILES = ["channels.parquet", "failures.csv", "flows.parquet", "media_packets.parquet", "queue_samples.parquet",
                "runs.parquet", "tcp_flows.parquet", "tcp_series.parquet"]


def _digests_local(d: Path) -> dict[str, str]:
    return {n: hashlib.sha256((d / n).read_bytes()).hexdigest() for n in RESULT_FILES}


def _digests_fs(fs, root: str) -> dict[str, str]:
    return {n: hashlib.sha256(fs.cat_file(f"{root}/{n}")).hexdigest() for n in RESULT_FILES}


@pytest.fixture
def mem():
    """A fresh place in fsspec's in-process memory filesystem (no rename of directories)."""
    root = f"/jl-{uuid.uuid4().hex}"
    fs = fsspec.filesystem("memory")
    yield fs, root
    if fs.exists(root):
        fs.rm(root, recursive=True)


def test_object_store_url_same_files_resume_and_damage(tmp_path, mem, capsys):
    fs, root = mem
    f = write(tmp_path)
    ref = sweep.run(sweep.load(f), tmp_path / "ref", jobs=1, progress=False)
    url = f"memory://{root}"
    res = sweep.run(sweep.load(f), url, jobs=1, progress=False)
    assert str(res.out) == f"memory://{root}" and res.ran == 12
    assert _digests_fs(fs, root) == _digests_local(tmp_path / "ref")
    runs = sorted(fs.ls(f"{root}/runs", detail=False))
    # written in place, one object a run: no temporary names, no directories
    assert [r.rsplit("/", 1)[1] for r in runs] == [f"{i:06d}.run" for i in range(12)]
    local = log_entries(tmp_path / "ref")[5]  # locally, an entry of the run log
    rec = sweep.read_run_record(local)
    data = fs.cat_file(f"{root}/runs/000005.run")
    assert data[:rec["pack"]["bytes"]] == local.read_bytes()[:rec["pack"]["bytes"]] and data[-8:] == b"JLRUN\x00v1"
    assert res.arrow["media_packets"].equals(ref.arrow["media_packets"])
    # resumed: nothing to do
    again = sweep.run(sweep.load(f), url, jobs=1, progress=False)
    assert again.ran == 0 and again.skipped == 12
    # a flipped bit in a pack, an object cut short (a partial upload), and a run whose object
    # never got written: the first two are redone with a line each, the third is done again
    p0 = f"{root}/runs/000000.run"
    data = bytearray(fs.cat_file(p0))
    data[100] ^= 0x04
    fs.pipe_file(p0, bytes(data))
    p1 = f"{root}/runs/000001.run"
    fs.pipe_file(p1, fs.cat_file(p1)[:100])
    fs.rm_file(f"{root}/runs/000002.run")
    capsys.readouterr()
    fixed = sweep.run(sweep.load(f), url, jobs=1, progress=False)
    err = capsys.readouterr().err.splitlines()
    assert [e.split(": ", 1)[1] for e in err if "running it again" in e] == [
        "run 000000: 000000.run does not match its checksum (damaged); running it again",
        "run 000001: 000001.run is truncated or its trailer is damaged; running it again"]
    assert fixed.ran == 3 and fixed.skipped == 9
    assert _digests_fs(fs, root) == _digests_local(tmp_path / "ref")


def test_object_store_url_combined_tables_read_when_used(tmp_path, mem, monkeypatch):
    """Past the client's memory bound the result reads each combined table from the URL."""
    fs, root = mem
    f = write(tmp_path)
    ref = sweep.run(sweep.load(f), tmp_path / "ref", jobs=1, progress=False)
    monkeypatch.setattr(sw_combine._Combiner, "HOLD_BYTES", 10_000)
    res = sweep.run(sweep.load(f), f"memory://{root}", jobs=1, progress=False)
    assert "media_packets" in res.arrow._files
    assert res.arrow.num_rows("media_packets") == ref.arrow["media_packets"].num_rows
    assert res.arrow["media_packets"].equals(ref.arrow["media_packets"])
    assert sweep.collect(f"memory://{root}").arrow["runs"].equals(ref.arrow["runs"])


def test_workers_and_a_dask_cluster_share_a_url(tmp_path):
    """Worker processes store their runs through fsspec at a URL the client reads back: the
    local pool and a Dask LocalCluster give the local directory's files byte for byte."""
    f = write(tmp_path)
    sweep.run(sweep.load(f), tmp_path / "ref", jobs=1, progress=False)
    want = _digests_local(tmp_path / "ref")
    pool = sweep.run(sweep.load(f), f"local://{tmp_path}/pool", jobs=2, progress=False, inline_bytes=0)
    assert str(pool.out) == f"local://{tmp_path}/pool" and pool.ran == 12
    assert _digests_local(tmp_path / "pool") == want
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        res = sweep.run(sweep.load(f), f"local://{tmp_path}/dask", executor="dask", scheduler=cluster.scheduler_address,
                        progress=False)
    assert res.ran == 12 and _digests_local(tmp_path / "dask") == want


def test_url_refusals(tmp_path, mem):
    fs, root = mem
    f = write(tmp_path)
    # a place holding something jitterlab did not write
    fs.pipe_file(f"{root}/photo.jpg", b"\xff\xd8")
    with pytest.raises(OutputError, match="did not write"):
        sweep.run(sweep.load(f), f"memory://{root}", jobs=1, progress=False)
    # the testbed's runs stay on this machine
    sw = sweep.load(f)
    sw.backend = "testbed"
    with pytest.raises(sweep.SweepError, match="--out must be a local directory"):
        sweep.run(sw, f"memory://{root}-tb", jobs=1, progress=False)
    # on the command line: one line, exit status 2 (an unknown protocol; a foreign place)
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "photo.jpg").write_bytes(b"\xff\xd8")
    for out, msg in ((f"nosuchproto://{root}", "nosuchproto"), (f"local://{tmp_path}/foreign", "did not write")):
        p = subprocess.run([sys.executable, "-m", "jitterlab.cli", "sweep", str(f), "--out", out, "--quiet"],
                           capture_output=True, text=True)
        assert p.returncode == 2 and msg in p.stderr and "Traceback" not in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_cli_sweep_to_a_url(tmp_path):
    f = write(tmp_path)
    p = subprocess.run([sys.executable, "-m", "jitterlab.cli", "sweep", str(f), "--out", f"local://{tmp_path}/o", "--jobs", "1",
                        "--quiet"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"tables in local://{tmp_path}/o/" in p.stderr
    assert sorted(x.name for x in (tmp_path / "o").iterdir()) == sorted(RESULT_FILES + ["runs", "sweep.json"])  # no combined.json on a URL
    assert _fspath.is_url("s3://bucket/x") and not _fspath.is_url("file:///tmp/x") and not _fspath.is_url("/tmp/x")


class FlakyStoreError(Exception):
    """What an object store's client raises: a botocore ClientError (SlowDown, AccessDenied) is
    not an OSError."""


class _FlakyFS(MemoryFileSystem):
    """The memory filesystem, failing with FlakyStoreError from the `fail_at`-th run file on."""

    protocol = "jlflaky"
    fail_at: int | None = None
    records = 0

    @classmethod
    def _strip_protocol(cls, path):
        return super()._strip_protocol(str(path).removeprefix("jlflaky://"))

    def pipe_file(self, path, value, *args, **kwargs):
        if str(path).endswith(".run"):
            type(self).records += 1
            if self.fail_at is not None and self.records >= self.fail_at:
                raise FlakyStoreError("SlowDown: Please reduce your request rate.")
        return super().pipe_file(path, value, *args, **kwargs)


def test_a_storage_failure_that_is_not_an_oserror_is_one_line_and_keeps_the_stored_runs(tmp_path, capsys):
    from jitterlab import cli

    fsspec.register_implementation("jlflaky", _FlakyFS, clobber=True)
    root = f"/jl-{uuid.uuid4().hex}"
    f = write(tmp_path)
    total = len(sweep.load(f).runs())
    _FlakyFS.records, _FlakyFS.fail_at = 0, 3
    try:
        with pytest.raises(OutputError, match=r"^jlflaky:///?jl-.*: the storage failed: FlakyStoreError: SlowDown.*runs stored before it are kept"):
            sweep.run(sweep.load(f), f"jlflaky://{root}", jobs=1, progress=False)
        fs = fsspec.filesystem("jlflaky")
        assert len(fs.glob(f"{root}/runs/*.run")) == 2  # the runs stored before the failure
        # the command line: one line, exit status 2, no traceback
        _FlakyFS.records = 0
        assert cli.main(["sweep", str(f), "--out", f"jlflaky://{root}", "--jobs", "1", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "FlakyStoreError: SlowDown" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        # the storage recovers: the sweep goes on from what was stored
        _FlakyFS.fail_at = None
        res = sweep.run(sweep.load(f), f"jlflaky://{root}", jobs=1, progress=False)
        assert res.skipped == 4 and res.ran == total - 4, (res.skipped, res.ran)
        # an exception of ours (a bug, not the storage's) is not dressed up as a storage failure
        assert _fspath.storage_error(KeyError("x"), _fspath.as_path(f"jlflaky://{root}")) is None
        assert _fspath.storage_error(FlakyStoreError("x"), tmp_path) is None
    finally:
        _FlakyFS.fail_at = None
        fsspec.filesystem("jlflaky").rm(root, recursive=True)


def test_tables_and_report_read_a_sweep_at_a_url(tmp_path, mem):
    from jitterlab import tables

    fs, root = mem
    f = write(tmp_path)
    sweep.run(sweep.load(f), tmp_path / "local", jobs=1, progress=False)
    sweep.run(sweep.load(f), f"memory://{root}", jobs=1, progress=False)
    here, there = tables.load(tmp_path / "local"), tables.load(f"memory://{root}")
    assert there.source == "sweep" and sorted(there.arrow) == sorted(here.arrow)
    for name in here.arrow:
        assert there.arrow[name].equals(here.arrow[name]), name
    # the report command, in another process: a URL it can reach (local://), the report written here
    p = subprocess.run([sys.executable, "-m", "jitterlab.cli", "report", f"local://{tmp_path}/local", "--label", "url"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "report" / "report.html").is_file()
    assert "local://" in (tmp_path / "report" / "report.html").read_text()
    p = subprocess.run([sys.executable, "-m", "jitterlab.cli", "report", "nosuchproto://x/y"], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 2 and "nosuchproto" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
