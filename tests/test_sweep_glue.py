"""The Python around a sweep's runs: `sim.run_json` (a run's scenario: the same scenario and JSON as
the reference definition, `scenario.to_json(scenario.with_overrides(base, overrides))`, with a
sweep's non-plain override values checked once and trace files read every run) and loading a sweep
file (its inline scenario used as parsed, not copied)."""
import datetime
import json

import pytest

from jitterlab import ScenarioError, sim
from jitterlab import scenario as scn

BASE = {
    "duration": "1s",
    "links": {"l": {"from": "a", "to": "b", "delay": "0ms", "rate": "1Mbit"}},
    "traffic": [{"kind": "audio", "from": "a", "to": "b"}, {"kind": "audio", "from": "a", "to": "b", "enabled": False}],
}


def reference(base, overrides):
    sc = scn.with_overrides(base, overrides)
    return json.loads(scn.to_json(sc)), scn.to_json(sc)


def test_every_kind_of_value_as_the_reference_sets_it(tmp_path):
    queue = {"kind": "red", "limit": "50pkt", "thresh": 5, "q_weight": 0.002, "ecn": True}
    ov = {"links.l.queue": queue, "links.l.delay": "5ms", "traffic[1].enabled": True, "traffic[0].weight": 2**63,
          "traffic[0].x": 1.5, "traffic[0].none": None, "links.l.jitter": {"dist": "normal", "sd": ["1ms", {"a": 1}]},
          "new.table.key": 3}
    for _ in range(2):  # the second time from the cache of checked values
        got = sim.run_json(BASE, ov, "k-every-kind")
        assert got == reference(BASE, ov)


def test_a_checked_table_is_copied_into_each_run():
    queue = {"kind": "red", "limit": "50pkt"}
    a, _ = sim.run_json(BASE, {"links.l.queue": queue}, "k-copied")
    b, _ = sim.run_json(BASE, {"links.l.queue": queue}, "k-copied")
    a["links"]["l"]["queue"]["limit"] = "1pkt"  # one run's scenario changed: neither the next nor the sweep's value
    assert b["links"]["l"]["queue"] is not a["links"]["l"]["queue"]
    assert b["links"]["l"]["queue"]["limit"] == "50pkt" and queue["limit"] == "50pkt"
    c, js = sim.run_json(BASE, {"links.l.queue": queue}, "k-copied")
    assert c["links"]["l"]["queue"] == {"kind": "red", "limit": "50pkt"} and '"limit": "50pkt"' in js


def test_a_bad_value_is_refused_every_time():
    bad = {"kind": "red", "when": datetime.date(2020, 1, 2)}
    for _ in range(2):  # never cached as checked
        with pytest.raises(ScenarioError, match=r"links\.l\.queue\.when: a TOML date/time \(2020-01-02\)"):
            sim.run_json(BASE, {"links.l.queue": bad}, "k-bad")
    with pytest.raises(ScenarioError, match=r"links\.l\.rate\.x: inf is not a usable number"):
        sim.run_json(BASE, {"links.l.rate": {"x": float("inf")}}, "k-bad")
    with pytest.raises(ScenarioError, match=r"links\.l\.delay: nan is not a usable number"):
        sim.run_json(BASE, {"links.l.delay": float("nan")}, "k-bad")
    with pytest.raises(ScenarioError, match=r"links\.l\.delay: 18446744073709551616 is out of range"):
        sim.run_json(BASE, {"links.l.delay": 2**64}, "k-bad")
    with pytest.raises(ScenarioError, match=r"links\.l\.delay\.x\.: ends with '\.'"):
        sim.run_json(BASE, {"links.l.delay.x.": 1}, "k-bad")
    with pytest.raises(ScenarioError, match=r"duration\.x: duration is a str value, so duration\.x does not exist"):
        sim.run_json(BASE, {"duration.x": 1}, "k-bad")


def test_trace_files_are_read_for_every_run(tmp_path):
    t = tmp_path / "a.trace"
    t.write_text("1\n2\n")
    in_table = {"delay": "0ms", "trace": str(t)}  # a table holding a trace key: read each time too
    for k, v in (("links.l.trace", str(t)), ("links.l", {"from": "a", "to": "b", **in_table})):
        t.write_text("1\n2\n")
        first, _ = sim.run_json(BASE, {k: v}, "k-trace")
        t.write_text("3\n4\n")  # the file changed between two runs: the second run reads it anew
        second, js = sim.run_json(BASE, {k: v}, "k-trace")
        assert first["links"]["l"]["trace"] == {"path": str(t), "data": "1\n2\n"}
        assert second["links"]["l"]["trace"] == {"path": str(t), "data": "3\n4\n"}
        assert (second, js) == reference(BASE, {k: v})


def test_a_sweep_files_inline_scenario_is_used_as_parsed(tmp_path, monkeypatch):
    import subprocess
    import sys

    from jitterlab import sweep

    f = tmp_path / "s.toml"
    f.write_text('[sweep]\nname = "x"\n[sweep.vary]\n"links.l.delay" = ["1ms", "2ms"]\n'
                 '[scenario]\nduration = "1s"\n[scenario.links.l]\nfrom = "a"\nto = "b"\ndelay = "0ms"\ntrace = "t/a.trace"\n'
                 '[[scenario.traffic]]\nkind = "audio"\nfrom = "a"\nto = "b"\n')
    monkeypatch.chdir(tmp_path.parent)
    sw = sweep.load(f)  # an inline scenario's trace paths are relative to the working directory, as `scenario.load` of a table
    assert sw.scenario["links"]["l"]["trace"] == str(tmp_path.parent / "t" / "a.trace")
    assert sw.scenario == scn.load({**scn.parse_toml(f.read_text(), "x")["scenario"]})
    f2 = tmp_path / "bad.toml"
    f2.write_text(f.read_text().replace('delay = "0ms"', "delay = 1979-05-27"))
    with pytest.raises(sweep.SweepError, match=r"scenario\.links\.l\.delay: a TOML date/time \(1979-05-27\) .*\(in .*bad\.toml\)"):
        sweep.load(f2)  # checked as the file is read, naming it
    code = f"import sys; from jitterlab import sweep; sweep.load({str(f)!r}); print('copy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_a_workers_storage_path_is_made_once_per_directory(tmp_path):
    from pathlib import Path

    from jitterlab import _fspath
    from jitterlab.sweep import executors

    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    pa_ = executors._out_path(a)
    assert pa_ == Path(a) and executors._out_path(a) is pa_  # the next run of the sweep: the same object
    assert executors._out_path(b) == Path(b) and executors._out_path(a) == Path(a)  # another sweep's OUT: its own
    assert executors._out_path("file://" + a) == Path(a)
    url = "memory://h31g-glue/out"
    got = executors._out_path(url)
    assert isinstance(got, _fspath.FsPath) and str(got) == str(_fspath.as_path(url))
    assert executors._out_path(a) == Path(a)


def test_check_cost_refuses_past_either_limit_and_only_then():
    est = {"memory_bytes": 3e9, "events": 2e6, "media_rows": 1e5, "nodes": 4, "flows": 3, "duration_ns": 60e9}
    what = "2e+06 events, 1e+05 media rows, 4 nodes, 3 flows over 60 s simulated"
    sim.check_cost(est, available=12_000_000_000, share=2)  # 3 GB <= 12 GB / 2 / 2
    sim.check_cost(est, max_memory=3e9, max_events=2e6)  # at the limits: run
    with pytest.raises(sim.ResourceError) as e:
        sim.check_cost(est, available=12_000_000_000, share=3)  # 12 GB / 2 / 3 = 2 GB
    assert str(e.value) == (f"the scenario would need about 3.0 GB of memory ({what}); the limit is 2.0 GB (half the available "
                            "memory shared by 3 parallel runs); shorten `duration` or the traffic, or raise --max-memory")
    with pytest.raises(sim.ResourceError, match=r"the limit is 2\.5 GB \(--max-memory\)"):
        sim.check_cost(est, max_memory=2.5e9, max_events=1)  # memory is named first
    with pytest.raises(sim.ResourceError) as e:
        sim.check_cost(est, max_memory=4e9, max_events=1.5e6)
    assert str(e.value) == (f"the scenario would take about 2e+06 events ({what}); the limit is 1.5e+06 (--max-events); "
                            "shorten `duration` or the traffic, or raise --max-events")
    sim.check_cost({**est, "events": float("nan")}, max_memory=4e9)  # as before: a NaN passes (never above a limit)


def test_the_commit_is_gits_and_a_git_that_hangs_or_fails_gives_none(tmp_path, monkeypatch):
    """`provenance` runs git without the subprocess module: the same commit string as git gives
    (with -dirty as `git status` says), None for a git that fails, is missing or hangs (killed)."""
    import os
    import subprocess
    import sys
    import time

    from jitterlab import provenance

    if os.path.isfile(os.path.join(os.path.dirname(provenance.__file__), "_commit.txt")):
        pytest.skip("an installed wheel's baked commit")
    here = os.path.dirname(provenance.__file__)
    head = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    assert provenance._commit() == head.stdout.strip() + ("-dirty" if dirty else "")
    assert provenance._git(["-C", str(tmp_path), "rev-parse", "HEAD"], 5) == (128, "")  # not a repository: its status, stderr dropped
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nexec /bin/sleep 30\n")
    (fake / "git").chmod(0o755)
    monkeypatch.setenv("PATH", str(fake))
    t = time.monotonic()
    assert provenance._git(["status"], 0.5) is None and time.monotonic() - t < 5  # killed at its timeout
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert provenance._git(["status"], 5) is None and provenance._commit() is None
    code = "import sys; from jitterlab import provenance; provenance._commit(); print('subprocess' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_held_many_is_held_of_each_name_present():
    from jitterlab import _native
    from jitterlab.tables import LazyTables

    t = LazyTables()
    a, b = _native.NativeTable.empty(), _native.NativeTable.empty()
    t.native("a", a)
    t.native("b", b)
    t["c"] = "arrow table c"  # as held once read
    got = t.held_many(["c", "x", "b", "a"])
    assert list(got) == ["c", "b", "a"] and got["a"] is a and got["b"] is b and got["c"] == "arrow table c"
    assert got == {n: t.held(n) for n in ["c", "x", "b", "a"] if n in t}


def test_native_sha256_is_hashlibs(tmp_path):
    """The SHA-256 the sweep path uses instead of hashlib (`_native.sha256_hex`, `sha256_fd`):
    FIPS 180-2's example, and hashlib's digest of inputs around the 1 MiB read size."""
    import hashlib
    import os

    from jitterlab import _fspath, _io, _native

    assert _native.sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert _native.sha256_hex(b"") == hashlib.sha256(b"").hexdigest()
    for n in (0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20):
        data = os.urandom(n)
        f = tmp_path / f"f{n}"
        f.write_bytes(data)
        want = hashlib.sha256(data).hexdigest()
        assert _native.sha256_hex(data) == want and _io.sha256_file(f) == want and _fspath.sha256(f) == want
    with open(tmp_path / f"f{1 << 20}", "rb", buffering=0) as fh:
        fh.read(10)  # from where the descriptor stands, which it leaves open
        assert _native.sha256_fd(fh.fileno()) == hashlib.sha256((tmp_path / f"f{1 << 20}").read_bytes()[10:]).hexdigest()
        assert fh.read() == b""
    with pytest.raises(FileNotFoundError, match="nope"):
        _io.sha256_file(tmp_path / "nope")  # open()'s own error, naming the file
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        with pytest.raises(IsADirectoryError):
            _native.sha256_fd(fd)
    finally:
        os.close(fd)
    url = "memory://h31g-glue/sha"
    p = _fspath.as_path(url)
    p.write_bytes(b"abc")
    assert _fspath.sha256(p) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_native_sha256_takes_any_byte_buffer():
    import hashlib

    from jitterlab import _native

    data = bytes(range(256)) * 5000
    for buf in (memoryview(data)[7:1_000_003], bytearray(data[:4097]), memoryview(data)[::3]):
        assert _native.sha256_hex(buf) == hashlib.sha256(bytes(buf)).hexdigest()
