"""docs/performance.md's measured rows (written by `bench/run` through bench/perfpage.py): each row
carries the command that measures it, the date, the machine and the reference measured beside it
in the same run. Structure only: nothing is timed here."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pp():
    spec = importlib.util.spec_from_file_location("perfpage", ROOT / "bench" / "perfpage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_row_has_command_date_machine_and_reference(pp):
    rows = pp.rows((ROOT / "docs" / "performance.md").read_text())
    assert rows, "docs/performance.md has no block of bench/run rows"
    whats = [r[0] for r in rows]
    assert len(set(whats)) == len(whats), "two rows measure the same thing"
    for r in rows:
        assert len(r) == len(pp.COLUMNS), r
        what, command, date, machine, figure, reference = r
        assert re.fullmatch(r"`bench/run [a-z0-9-]+[^`]*`", command), (what, command)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", date), (what, date)
        assert re.search(r"\d+ cores, load \d+\.\d", machine), (what, machine)
        assert figure and reference and "?" not in figure, (what, figure, reference)
    # the done-when figures of issue 31 each have their row
    assert any(w.startswith("Chodorek's 126 points") and "generated" in w for w in whats)
    assert any(w.startswith("Chodorek's 126 points") and "chodorek-126.toml" in w for w in whats)
    assert any(w.startswith("simulator core, tcp") for w in whats)
    assert any(w.startswith("jitterlab's CPU by stage") for w in whats)


def test_a_measurement_replaces_its_own_row_and_keeps_the_rest(pp, tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# P\n\nprose before\n")
    pp.record("a", "bench/run core", "1 M events/s", "ref 1", page=page, date="2026-01-01 00:00 UTC", host="X, 2 cores, load 0.5")
    pp.record("b | c", "bench/run tcp", "2", "ref 2", page=page, date="2026-01-01 00:00 UTC", host="X, 2 cores, load 0.5")
    page.write_text(page.read_text() + "\n## History\n\nkept\n")
    pp.record("a", "bench/run core 60 1", "3 M events/s", "ref 3", page=page, date="2026-01-02 00:00 UTC", host="Y, 4 cores, load 1.0")
    text = page.read_text()
    assert text.startswith("# P\n\nprose before\n") and text.endswith("## History\n\nkept\n")
    assert pp.rows(text) == [["a", "`bench/run core 60 1`", "2026-01-02 00:00 UTC", "Y, 4 cores, load 1.0", "3 M events/s", "ref 3"],
                             ["b \\| c", "`bench/run tcp`", "2026-01-01 00:00 UTC", "X, 2 cores, load 0.5", "2", "ref 2"]]


def test_nothing_is_recorded_without_a_page(pp, tmp_path, monkeypatch):
    monkeypatch.delenv("JITTERLAB_PERF_PAGE", raising=False)
    monkeypatch.chdir(tmp_path)
    pp.record("a", "bench/run core", "1", "r")
    assert list(tmp_path.iterdir()) == []


def test_core_printout_becomes_one_row_a_scenario(pp, tmp_path):
    out = ("bench_core tcp: bursty video over RED, 60 s simulated\n  events                  97263\n"
           "  packets sent            29898 (delivered 23895, dropped 5985, 20.0 %)\n  events per delivered packet 4.07\n"
           "  wall time (best of 5)  0.0060 s\n  events/s                16.21 M\n  ns per delivered packet 251.1\n"
           "  delivered packets/s     3.98 M\n  speed-up over real time 10000x\n")
    page = tmp_path / "p.md"
    pp.record_core(out + out.replace("tcp:", "overload:"), "bench/run core")
    assert not page.exists()  # no page named: nothing written
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("JITTERLAB_PERF_PAGE", str(page))
    try:
        pp.record_core(out + out.replace("tcp:", "overload:"), "bench/run core")
    finally:
        monkeypatch.undo()
    rows = pp.rows(page.read_text())
    assert [r[0] for r in rows] == ["simulator core, tcp: bursty video over RED", "simulator core, overload: bursty video over RED"]
    assert rows[0][4] == "16.21 M events/s; 4.07 events and 251.1 ns per delivered packet (97263 events)"
    assert rows[0][5] == "60 s simulated in 0.0060 s (best of the run's repetitions): 10000x real time"
