"""One writer per object-store output (python/jitterlab/_storelock.py): a lock object in the store
with an owner id and a heartbeat. A second writer is refused in one line (exit 2); a stale lock
(no heartbeat for STALE_S) is taken over; a lock replaced between write and read-back is noticed;
a store without exclusive create still gets check-write-read back. A local `file://` URL is a
local directory and keeps the flock(2) of `_io.out_lock`."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import fsspec
import pytest

from conftest import ROOT, run_cli
from jitterlab import _io, _storelock, cli
from jitterlab._fspath import FsPath

SWEEP = """
[sweep]
name = "lk"
seed = 1
replications = 2
[scenario]
duration = "1s"
[scenario.links.l]
from = "a"
to = "b"
rate = "1Mbit"
delay = "10ms"
[[scenario.traffic]]
kind = "audio"
from = "a"
to = "b"
"""


@pytest.fixture
def sweep_file(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SWEEP)
    return f


def foreign_lock(url: str, age_s: float) -> None:
    fs, path = fsspec.core.url_to_fs(url)
    fs.makedirs(path, exist_ok=True)
    fs.pipe_file(f"{path}/.jitterlab.lock", json.dumps({"owner": "someone-else", "host": "elsewhere", "pid": 4242,
                                                        "command": "jitterlab sweep", "heartbeat": time.time() - age_s}).encode())


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_memory_url_second_writer_refused_in_one_line(sweep_file, capsys):
    url = "memory://lock-busy"
    foreign_lock(url, age_s=5)
    assert cli.main(["sweep", str(sweep_file), "--out", url, "--quiet", "--jobs", "1"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "another jitterlab process (pid 4242 on elsewhere" in line and "--out memory:///lock-busy:" in line
    fs = fsspec.filesystem("memory")
    assert not fs.exists("/lock-busy/sweep.json")  # nothing written
    assert json.loads(fs.cat_file("/lock-busy/.jitterlab.lock"))["owner"] == "someone-else"  # theirs kept


def test_memory_url_lock_taken_and_released(sweep_file, capsys):
    url = "memory://lock-free"
    assert cli.main(["sweep", str(sweep_file), "--out", url, "--quiet", "--jobs", "1"]) == 0
    fs = fsspec.filesystem("memory")
    assert fs.exists("/lock-free/sweep.json") and not fs.exists("/lock-free/.jitterlab.lock")


def test_stale_lock_is_taken_over(sweep_file, capsys):
    url = "memory://lock-stale"
    foreign_lock(url, age_s=_storelock.STALE_S + 60)
    assert cli.main(["sweep", str(sweep_file), "--out", url, "--quiet", "--jobs", "1"]) == 0
    assert "taking over a stale lock (pid 4242 on elsewhere" in capsys.readouterr().err
    assert not fsspec.filesystem("memory").exists("/lock-stale/.jitterlab.lock")


def test_lock_replaced_before_read_back_is_refused():
    out = FsPath.from_url("memory://lock-race")
    out.mkdir()

    class Raced(_storelock.StoreLock):
        def _create(self) -> bool:
            ok = super()._create()
            foreign_lock("memory://lock-race", age_s=0)  # the other writer's put lands after ours
            return ok

    with pytest.raises(_io.OutputError, match="another jitterlab process"):
        Raced(out).acquire()


class NoExclusive:
    """A filesystem without exclusive create ("xb" refused), as some object stores."""

    def __init__(self, fs):
        self.fs = fs

    def open(self, path, mode="rb", **kw):
        if "x" in mode:
            raise NotImplementedError("no exclusive create")
        return self.fs.open(path, mode, **kw)

    def __getattr__(self, name):
        return getattr(self.fs, name)


def test_store_without_exclusive_create(monkeypatch):
    monkeypatch.setattr(_storelock, "SETTLE_S", 0.0)
    out = FsPath(NoExclusive(fsspec.filesystem("memory")), "/lock-noexcl", "memory")
    out.mkdir()
    a = _storelock.StoreLock(out)
    a.acquire()
    with pytest.raises(_io.OutputError, match="another jitterlab process"):
        _storelock.StoreLock(out).acquire()
    a.release()
    b = _storelock.StoreLock(out)
    b.acquire()
    b.release()
    assert not out.fs.exists("/lock-noexcl/.jitterlab.lock")


def test_heartbeat_notices_a_lock_taken_away(monkeypatch, capsys):
    monkeypatch.setattr(_storelock, "HEARTBEAT_S", 0.01)
    out = FsPath.from_url("memory://lock-beat")
    out.mkdir()
    lk = _storelock.StoreLock(out)
    lk.acquire()
    before = json.loads(out.fs.cat_file("/lock-beat/.jitterlab.lock"))["heartbeat"]
    foreign_lock("memory://lock-beat", age_s=0)
    assert lk._thread is not None
    lk._thread.join(timeout=30)
    assert not lk._thread.is_alive() and lk.lost == "pid 4242 on elsewhere"
    assert "this sweep's lock was taken" in capsys.readouterr().err
    lk.release()  # leaves the other's lock alone
    assert json.loads(out.fs.cat_file("/lock-beat/.jitterlab.lock"))["owner"] == "someone-else"
    assert before > 0


HOLDER = textwrap.dedent("""
    import sys
    from jitterlab import _io, _storelock
    from jitterlab._fspath import FsPath
    kind, where = sys.argv[1], sys.argv[2]
    if kind == "store":
        cm = _storelock.hold(FsPath.from_url(where))
    else:
        cm = _io.out_lock(where)
    with cm:
        print("held", flush=True)
        sys.stdin.read()
""")


@pytest.mark.parametrize("kind", ["store", "flock"])
def test_second_process_refused(tmp_path, sweep_file, kind):
    d = tmp_path / "out"
    d.mkdir()
    # fsspec's local:// goes through the store lock; file:// is a local directory (flock)
    url = f"local://{d}" if kind == "store" else f"file://{d}"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, kind, url if kind == "store" else str(d)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        p = run_cli("sweep", str(sweep_file), "--out", url, "--quiet", "--jobs", "1")
        assert p.returncode == 2, p.stderr
        assert "another jitterlab process" in one_error_line(p.stderr)
        assert not (d / "sweep.json").exists()
    finally:
        holder.communicate("")
    assert holder.returncode == 0
    p = run_cli("sweep", str(sweep_file), "--out", url, "--quiet", "--jobs", "1")  # free again
    assert p.returncode == 0, p.stderr
    assert (d / "sweep.json").exists() and not (d / ".jitterlab.lock").exists()


def test_two_takers_of_one_stale_lock_one_wins(monkeypatch):
    # B found the same stale lock as A; B's removal and its own lock land while A settles: A reads
    # back B's lock and refuses, B keeps it
    monkeypatch.setattr(_storelock, "SETTLE_S", 0.0)
    url = "memory://lock-two-takers"
    foreign_lock(url, age_s=_storelock.STALE_S + 60)
    out = FsPath.from_url(url)
    b = _storelock.StoreLock(out)

    class A(_storelock.StoreLock):
        def _create(self) -> bool:
            ok = super()._create()
            if ok:  # A's lock is written; now B, which also saw the stale one, removes it and writes its own
                self.path.unlink()
                assert b._create()
            return ok

    with pytest.raises(_io.OutputError, match="another jitterlab process"):
        A(out).acquire()
    assert json.loads((out / ".jitterlab.lock").read_bytes())["owner"] == b.owner
