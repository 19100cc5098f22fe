"""The public API as a user's code sees it: mypy checks calls to simulate, sweep, analyze, load and
report against real signatures; stubtest finds the package's annotations true at runtime; argument
mistakes name the argument; unit mistakes are refused; captures asked for by the scenario are kept
through the API; a plain script runs a sweep and a report without a `__main__` guard."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

import jitterlab
from conftest import ROOT

SCENARIO = ROOT / "scenarios" / "audio-bulk-access.toml"
LINK = {"duration": "1s", "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms"}},
        "traffic": [{"kind": "audio", "from": "a", "to": "b"}]}


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install mypy; scripts/requirements.txt installs it)")
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_mypy_checks_callers_against_real_signatures(tmp_path):
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent("""\
        import jitterlab
        from jitterlab import report, sweep
        bad = jitterlab.simulate("sc.toml", seed="1")
        s = sweep("f.toml", "out", jobs=2)
        reveal_type(s)
        reveal_type(report("out"))
        reveal_type(jitterlab.load("out"))
        reveal_type(jitterlab.analyze("a.pcap", "b.pcap"))
        """))
    p = _mypy("mypy", "--config-file", str(ROOT / "pyproject.toml"), str(user))
    out = p.stdout
    assert 'user.py:3: error: Argument "seed" to "simulate" has incompatible type "str"; expected "int"' in out, out
    assert "Found 1 error" in out, out  # sweep(...) and report(...) are functions, not "module not callable"
    assert 'Revealed type is "jitterlab.sweep.combine.SweepResult"' in out
    assert 'Revealed type is "pathlib.Path"' in out
    assert 'Revealed type is "jitterlab.tables.Tables"' in out


def test_stubtest_is_clean_over_the_package():
    p = _mypy("mypy.stubtest", "jitterlab", "--mypy-config-file", str(ROOT / "pyproject.toml"),
              "--allowlist", str(ROOT / "tests" / "stubtest-allowlist.txt"))
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]


def test_argument_mistakes_name_the_argument():
    with pytest.raises(TypeError, match=r"parameter 'seed': expected an int, got str 'x'"):
        jitterlab.simulate(LINK, seed="x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"parameter 'overrides'"):
        jitterlab.simulate(LINK, overrides=["duration=2s"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"parameter 'jobs'"):
        jitterlab.sweep({"sweep": {"name": "s", "scenario": str(SCENARIO)}}, "/nonexistent/out", jobs=0)
    with pytest.raises(TypeError, match=r"parameter 'outputs'"):
        jitterlab.report([1])  # type: ignore[list-item]


@pytest.mark.filterwarnings("ignore::jitterlab.metrics.MetricsWarning")
def test_unit_mistakes_in_metric_arguments_are_refused():
    m = jitterlab.simulate(LINK).media_packets
    # 0.04 is 40 ms written in seconds: a 40 µs buffer is no buffer
    with pytest.raises(ValueError, match=r"parameter 'jbs_ms': 0.04 ms is not a jitter buffer size; .*did you mean 40\?"):
        jitterlab.jb_loss(m, jbs_ms=[0.04])
    with pytest.raises(ValueError, match=r"parameter 'jb_ms'"):
        jitterlab.loss_levels(m, jb_ms=0.2)
    with pytest.raises(TypeError, match=r"parameter 'jbs_ms': expected a list"):
        jitterlab.emodel_mos(m, jbs_ms=40)  # type: ignore[arg-type]
    assert len(jitterlab.jb_loss(m, jbs_ms=[0, 1, 40], window="all")) == 3  # 0 (no buffer) and 1 ms are sizes


def test_output_pcap_is_honoured_through_the_api(tmp_path):
    r = jitterlab.simulate(SCENARIO, overrides={"output.pcap": ["server", "client"], "duration": "6s"})
    assert sorted(r.pcap) == ["client", "server"]
    assert all(open(p, "rb").read(4) in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") for p in r.pcap.values())
    out = r.save(tmp_path / "run")
    assert sorted(p.name for p in (out / "pcap").iterdir()) == ["client.pcap", "server.pcap"]
    assert r.pcap["server"] == str(out / "pcap" / "server.pcap")
    back = jitterlab.load(out)
    assert back.source == "sim" and len(back["media_packets"]) == len(r.media_packets)
    cap = jitterlab.analyze(r.pcap["server"], r.pcap["client"])
    assert len(cap["media_packets"]) == len(r.media_packets)


def test_unsaved_captures_go_when_the_process_ends(tmp_path):
    code = (f"import jitterlab; r = jitterlab.simulate({str(SCENARIO)!r}, overrides={{'output.pcap': ['client'], 'duration': '2s'}}); "
            "import os; p = r.pcap['client']; assert os.path.getsize(p) > 0; print(p)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    path = p.stdout.strip()
    assert path.endswith("client.pcap") and not __import__("os").path.exists(path)


def test_a_plain_script_runs_a_sweep_and_a_report(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent(f"""\
        import jitterlab
        from jitterlab import sweep
        res = sweep({{"sweep": {{"name": "s", "scenario": {str(SCENARIO)!r}, "replications": 3}}}}, {str(tmp_path / 'out')!r},
                    jobs=2, progress=False)
        print("runs", len(res["runs"]))
        print("report", jitterlab.report({str(tmp_path / 'out')!r}).name)
        """))  # no `if __name__ == "__main__":` on purpose
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.splitlines() == ["runs 3", "report report.html"]


def test_tables_have_a_notebook_view():
    r = jitterlab.simulate(LINK)
    h = r._repr_html_()
    assert "<code>media_packets</code></td><td style='text-align:right'>50</td>" in h
    assert "run_id, flow_id, seq, send_ns, recv_ns, size, lost_where, ce" in h
