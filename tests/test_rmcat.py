"""The rmcat preset (RFC 8867 cases for GCC, SCReAM, NADA): its capacity trace by hand, the
scenarios' RFC parameters, and a run producing every output with the §5.1 findings holding."""
import csv

import pytest

from jitterlab.presets import rmcat


def test_step_trace_by_hand():
    # 1 203 200 bit/s carries 1504 B every 10 ms; doubled from 0.5 s: every 5 ms
    one = rmcat.step_trace([(0.0, 1_203_200.0)], 1).split()
    assert one == [str(10 * k) for k in range(1, 101)]
    two = [int(x) for x in rmcat.step_trace([(0.0, 1_203_200.0), (0.5, 2_406_400.0)], 1).split()]
    assert two[:50] == [10 * k for k in range(1, 51)]
    assert two[50:53] == [505, 510, 515] and len(two) == 150
    # §5.1's schedule: 1.0 Mbit/s for 40 s = 40e6/8/1504 = 3324.5 → 3324 opportunities by 40 s
    t = [int(x) for x in rmcat.step_trace(rmcat.STEPS_51, 100).split()]
    assert sum(1 for x in t if x <= 40_000) == 3324


def test_scenarios_carry_the_rfc_parameters():
    s51 = rmcat.scenario_51()
    assert s51["duration"] == "100s" and s51["links"]["bottleneck"]["delay"] == "50ms"
    # 300 ms at 1 Mbit/s
    assert s51["links"]["bottleneck"]["queue"] == {"kind": "droptail", "limit": "37500B"}
    assert rmcat.STEPS_51 == [(0.0, 1.0e6), (40.0, 2.5e6), (60.0, 0.6e6), (80.0, 1.0e6)]
    s54 = rmcat.scenario_54()
    assert [v["start"] for v in s54["traffic"]] == ["0s", "20s", "40s"] and s54["links"]["bottleneck"]["rate"] == "3.5Mbit"
    s55 = rmcat.scenario_55()
    assert [s55["links"][f"access{i}"]["delay"] for i in range(5)] == ["10ms", "25ms", "50ms", "100ms", "150ms"]
    assert [t["start"] for t in s55["traffic"]] == ["0s", "10s", "20s", "30s", "40s"]
    s56 = rmcat.scenario_56()
    assert s56["traffic"][0]["start"] == "5s" and s56["traffic"][1]["cc"] == "cubic"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("rmcat")
    path = rmcat.run(out, reps=2, jobs=2, progress=False)
    return out, path


def test_run_writes_report_figures_and_findings(smoke):
    out, path = smoke
    assert path.exists() and path.name == "report.html"
    for f in ("rmcat-5_1.png", "rmcat-5_2.png", "rmcat-5_3.png", "rmcat-5_4.png", "rmcat-5_8.png", "rmcat_5_6_share.png"):
        assert (out / "figures" / f).exists()
    rows = list(csv.DictReader((out / "findings.csv").open(encoding="utf-8")))
    assert len(rows) == 4 * 3 + 3 + 3 + 3 + 3 + 3 + 1 + 3 + 1 + 3
    # FQ-CoDel beats DropTail for the media's share with every controller
    assert [r["verdict"] for r in rows if "larger share" in r["finding"]] == ["agrees"]
    # the PAM 2013 download drives every adaptive call past G.114's 400 ms (deep 500-packet buffer)
    assert [r["verdict"] for r in rows if r["finding"].startswith("PAM 2013")] == ["agrees"] * 3
    # ECN: marks replace drops for every controller
    assert [r["verdict"] for r in rows if r["finding"].startswith("ECN")] == ["agrees"]
    # issue 27's done-when for §5.1 holds for every controller
    for r in rows:
        if r["finding"].startswith("§5.1"):
            assert r["verdict"] == "agrees", r
