"""Issue 28's held-back variants: the classes of tests/test_hardening3.py met with inputs that file
does not use — other unsafe names (Windows paths, a separator in the middle, `.` alone, zero-width
and bidi characters, long UTF-8), other URL schemes for --out (ftp, http, gs, webhdfs, hdfs,
upper case), other moments of SIGKILL in a sweep (before its first run is stored, half-way) and of a
full disk (a sweep's run files, the schema file). Each ends as its class does: exit 2 and one line
naming the key, URL or path; nothing outside --out; a rerun that gives the tables of an
uninterrupted run."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, run_cli
from jitterlab import _io
from jitterlab.sweep import store
from test_hardening import SWEEP, user_error
from test_hardening3 import _named_scenario, simdir  # noqa: F401 - simdir: a fixture

EXE = str(Path(sys.executable).parent / "jitterlab")

# ---------------------------------------------------------------------------------------------
# other names

OTHER_NAMES = [
    "C:\\x",                 # a Windows drive path
    "C:x",                   # drive-relative
    "..\\..\\x",             # Windows-style climb
    "x/y/z",                 # separators in the middle
    ".",                     # the directory itself
    "a\u200bb",              # zero-width space
    "a\u200db",              # zero-width joiner
    "\u2066x\u2069",         # bidi isolates
    "\u00e9" * 120,          # 240 bytes of UTF-8
    "x" * 65,                # one byte over the limit
    "a b",                   # a space
    "~",                     # a shell's home
    "*",                     # a glob
]


@pytest.mark.parametrize("name", OTHER_NAMES, ids=lambda n: repr(n)[:24])
def test_other_unsafe_node_names_never_become_paths(tmp_path, name):
    out = tmp_path / "deep" / "out"
    p = run_cli("simulate", str(_named_scenario(tmp_path, name)), "--out", str(out))
    line = user_error(p)
    assert "output.pcap" in line or ".to" in line or "name" in line, line
    # nothing written beside the scenario (only OUT's own tree, if that), no capture anywhere
    assert {x.name for x in tmp_path.iterdir()} <= {"deep", "named.toml"}
    assert not list(tmp_path.rglob("*.pcap")) and not (ROOT / "x").exists() and not (ROOT / "C:x").exists()
    # the Python rule says the same as the Rust one that refused it
    assert _io.name_problem(name) is not None


@pytest.mark.parametrize("spec", ["C:\\links", ".", "a\u200bb", "x/..", "\u00e9" * 40])
def test_other_unsafe_preset_link_names(tmp_path, spec):
    out = tmp_path / "o"
    user_error(run_cli("reproduce", "pam2013", "--reps", "2", "--out", str(out), "--link", spec), "--link")
    assert not list(out.rglob("*.parquet"))


# ---------------------------------------------------------------------------------------------
# other URL schemes


@pytest.mark.parametrize("cmd", ["simulate", "report", "testbed"])
@pytest.mark.parametrize("url", ["ftp://127.0.0.1:9/x", "http://127.0.0.1:9/x", "gs://bucket/x", "webhdfs://h/x", "HDFS://h/x"])
def test_other_url_schemes_refused_by_local_commands(simdir, tmp_path, cmd, url):  # noqa: F811
    args = {"simulate": ["simulate", str(ROOT / "scenarios" / "audio-bulk-access.toml")],
            "report": ["report", str(simdir)], "testbed": ["testbed", str(ROOT / "scenarios" / "audio-bulk-access.toml")]}[cmd]
    user_error(run_cli(*args, "--out", url), url.split("://")[0] + "://", "not supported")
    assert not (ROOT / f"{url.split(':')[0]}:").exists() and not (tmp_path / f"{url.split(':')[0]}:").exists()


@pytest.mark.parametrize("url,why", [
    ("ftp://127.0.0.1:9/x", "ftp://127.0.0.1"),      # fsspec's FTP, nobody listening: refused, not hung
    ("http://127.0.0.1:9/x", "http://127.0.0.1"),    # HTTP is read-only in fsspec
    ("gs://bucket/x", "gs://bucket/x"),              # gcsfs not installed
    ("hdfs://h/x", "hdfs://h/x"),                    # pyarrow's HDFS needs a JVM and libhdfs
    ("nosuchscheme://x", "nosuchscheme://x"),
])
def test_other_url_schemes_for_a_sweep_end_in_one_line(tmp_path, url, why):
    f = tmp_path / "s.toml"
    f.write_text(SWEEP)
    p = run_cli("sweep", str(f), "--out", url, "--quiet", "--jobs", "1")
    user_error(p, why)
    assert not (ROOT / f"{url.split(':')[0]}:").exists() and not (tmp_path / f"{url.split(':')[0]}:").exists()


# ---------------------------------------------------------------------------------------------
# other moments of SIGKILL


def _tables(d: Path) -> dict[str, pd.DataFrame]:
    return {n: pd.read_parquet(d / f"{n}.parquet") for n in ("runs", "media_packets", "tcp_flows")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("ref")
    f = d / "s.toml"
    f.write_text(SWEEP.replace("replications = 2", "replications = 6"))
    run_cli("sweep", str(f), "--out", str(d / "o"), "--quiet", "--jobs", "2", check=True)
    return f, _tables(d / "o")


def _done_runs(out: Path) -> int:
    """Finished runs: the runs with a whole entry in OUT's run logs (a run being appended while
    the logs are read is not counted: the scan stops at a partial entry)."""
    try:
        return len(store._log_entries(out, os.listdir(out / "runs")))
    except FileNotFoundError:
        return 0


@pytest.mark.parametrize("moment", ["before-the-first-run", "half-way"])
def test_sigkill_at_another_moment_then_rerun_gives_the_same_tables(tmp_path, reference, moment):
    f, ref = reference
    out = tmp_path / "o"
    p = subprocess.Popen([EXE, "sweep", str(f), "--out", str(out), "--quiet", "--jobs", "2"], cwd=ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        t_end = time.monotonic() + 120
        while time.monotonic() < t_end and p.poll() is None:
            if moment == "before-the-first-run" and (out / "sweep.json").exists():
                break
            if moment == "half-way" and _done_runs(out) >= 6:
                break
            time.sleep(0.005)
        killed = p.poll() is None
        os.killpg(p.pid, signal.SIGKILL)  # the whole group: the test must not leave workers behind
    finally:
        p.wait()
    if not killed:
        pytest.skip(f"the sweep ended before the moment {moment!r} was seen (machine too fast or too slow)")
    if moment == "before-the-first-run":
        assert _done_runs(out) < 12
    assert not (out / "runs.parquet").exists() or _done_runs(out) == 12
    run_cli("sweep", str(f), "--out", str(out), "--quiet", "--jobs", "2", check=True)
    got = _tables(out)
    for n, t in ref.items():
        pd.testing.assert_frame_equal(got[n], t, obj=n)


# ---------------------------------------------------------------------------------------------
# other moments of a full disk


@pytest.fixture
def small_disk(tmp_path):
    d = tmp_path / "small"
    d.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a small tmpfs needs root (mount -t tmpfs)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(d)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.strip()}")
    yield d
    subprocess.run(["umount", "-l", str(d)], capture_output=True)


def test_a_sweep_on_a_full_disk_names_the_path_and_resumes(tmp_path, small_disk, reference):
    f, ref = reference
    out = small_disk / "o"
    # room for a few of the 12 runs (a run stores ~10 kB): the disk fills part-way through
    st = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 48 * 1024))
    p = run_cli("sweep", str(f), "--out", str(out), "--quiet", "--jobs", "1")
    assert p.returncode in (1, 2), p.stderr
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr, p.stderr
    assert "no space left" in p.stderr, p.stderr
    assert not (out / "runs.parquet").exists()
    (small_disk / "filler").unlink()
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    run_cli("sweep", str(f), "--out", str(out), "--quiet", "--jobs", "1", check=True)
    got = _tables(out)
    for n, t in ref.items():
        pd.testing.assert_frame_equal(got[n], t, obj=n)


def test_schema_on_a_full_disk_leaves_no_partial_file(small_disk):
    (small_disk / "filler").write_bytes(b"\0" * (os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize - 8192))
    out = small_disk / "s.json"
    user_error(run_cli("schema", "--out", str(out)), "no space left", str(out))
    assert not out.exists() and [x.name for x in small_disk.iterdir()] == ["filler"]
