"""`jitterlab report` on the outputs of simulate, analyze and sweep: the figures of any output,
inputs overlaid, provenance recorded, and the interactive page checked in headless Chromium
(every figure drawn, no console error, a zoom and a hover work)."""
from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from conftest import run_cli
from jitterlab import provenance
from test_report import chromium, load_in_chromium

SCENARIO = "scenarios/audio-bulk-access.toml"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("report-cmd")
    sim, cap, sw = d / "sim", d / "capture", d / "sweep"
    run_cli("simulate", SCENARIO, "--seed", "3", "--out", str(sim), "--set", 'output.pcap=["server","client"]', check=True)
    run_cli("analyze", "--sender", str(sim / "pcap" / "server.pcap"), "--receiver", str(sim / "pcap" / "client.pcap"),
            "--out", str(cap), "--quiet", check=True)
    run_cli("sweep", "scenarios/sweeps/buffer-aqm.toml", "--out", str(sw), "--jobs", "1", "--quiet", check=True)
    return {"dir": d, "sim": sim, "capture": cap, "sweep": sw}


def page_state(path, selftest: bool = True):
    p = load_in_chromium(path, fragment="#selftest" if selftest else "")
    assert p.returncode == 0, p.stderr[-2000:]
    errors = [l for l in p.stderr.splitlines() if "CONSOLE" in l and ("Error" in l or "Uncaught" in l)]
    body = re.search(r"<body([^>]*)>", p.stdout)
    assert body, p.stdout[:2000]
    attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
    return attrs, errors


def test_manifests_carry_provenance(outputs):
    man = json.loads((outputs["sim"] / "manifest.json").read_text())
    prov = man["provenance"]
    assert man["schema_version"] == provenance.SCHEMA_VERSION == prov["schema_version"]
    assert prov["seeds"] == [3]
    assert prov["scenario_sha256"] == provenance.scenario_hash(man["scenario"])
    assert "simulate" in prov["command_line"] and SCENARIO in prov["command_line"]
    for k in ("jitterlab_version", "host", "kernel", "time_utc", "commit"):
        assert k in prov
    cap = json.loads((outputs["capture"] / "manifest.json").read_text())["provenance"]
    assert cap["seeds"] == [] and cap["scenario_sha256"] is None and "analyze" in cap["command_line"]
    sw = json.loads((outputs["sweep"] / "sweep.json").read_text())
    # 3 replications: 3 seeds, shared by the 3 queue points (common random numbers)
    assert len(sw["provenance"]["seeds"]) == 3 and sw["provenance"]["sweep_seed"] == 7
    assert sw["schema_version"] == provenance.SCHEMA_VERSION


def test_overlay_of_a_simulation_and_the_analysis_of_its_own_captures(outputs):
    out = outputs["dir"] / "r-overlay"
    run_cli("report", str(outputs["sim"]), str(outputs["capture"]), "--label", "sim", "--label", "capture", "--out", str(out), check=True)
    s = pd.read_csv(out / "summary.csv").set_index("group")
    assert list(s.index) == ["sim", "capture"]
    # the capture pair is the simulator's own tap: the same packets, so the same numbers
    for c in ("owd_p50_ms", "owd_p99_ms", "loss_40ms_jb_pct", "goodput_median_Mbps"):
        assert s.loc["sim", c] == pytest.approx(s.loc["capture", c], rel=1e-9), c
    # a bulk download filling a 500-packet buffer at 4 Mbit/s: ~1.5 s of queue at its peak
    assert s.loc["sim", "owd_p99_ms"] > 500
    pts = pd.read_csv(out / "figures" / "owd_cdf.csv")
    assert set(pts.series) == {"sim", "capture"}  # both inputs in one figure
    html = (out / "report.html").read_text()
    for name in ("owd_cdf", "ipdv_cdf", "loss_vs_jb", "mos_vs_jb", "levels_over_time", "tcp_goodput", "tcp_completion"):
        assert f'href="figures/{name}.svg"' in html and (out / "figures" / f"{name}.svg").exists(), name
    assert 'href="summary.csv"' in html
    assert "scenario SHA-256" in html and provenance.scenario_hash(json.loads((outputs["sim"] / "manifest.json").read_text())["scenario"]) in html
    assert not re.search(r"<script[^>]+src=", html), "the page must not load scripts from elsewhere"


def test_sweep_report_groups_by_the_varied_parameter_and_works_in_chromium(outputs):
    out = outputs["dir"] / "r-sweep"
    run_cli("report", str(outputs["sweep"]), "--out", str(out), check=True)
    s = pd.read_csv(out / "summary.csv").set_index("group")
    assert list(s.index) == ["queue=droptail-50", "queue=droptail-500", "queue=codel"]
    assert (s["runs"] == 3).all()
    # physics: 500 packets of 1500 B at 4 Mbit/s hold 1.5 s; 50 packets 0.15 s; CoDel aims at 5 ms
    assert s.loc["queue=droptail-500", "owd_p99_ms"] > 800
    assert 100 < s.loc["queue=droptail-50", "owd_p99_ms"] < 250
    assert s.loc["queue=codel", "owd_p50_ms"] < s.loc["queue=droptail-50", "owd_p50_ms"]
    if not chromium():
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    attrs, errors = page_state(out / "report.html")
    assert not errors, errors
    assert attrs["data-figures-total"] == "7" and attrs["data-figures-loaded"] == "7"
    assert attrs["data-selftest-zoom"] == "ok"
    assert attrs["data-selftest-hover"].startswith("ok:"), attrs["data-selftest-hover"]


def test_analyze_report_works_in_chromium(outputs):
    out = outputs["dir"] / "r-capture"
    run_cli("report", str(outputs["capture"]), "--out", str(out), check=True)
    if not chromium():
        pytest.skip("chromium is not installed (Debian package 'chromium')")
    attrs, errors = page_state(out / "report.html")
    assert not errors, errors
    assert attrs["data-figures-loaded"] == attrs["data-figures-total"] == "7"
    assert attrs["data-selftest-zoom"] == "ok" and attrs["data-selftest-hover"].startswith("ok:")


def test_user_mistakes_are_one_line_and_status_2(outputs, tmp_path):
    p = run_cli("report", str(tmp_path))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "not a jitterlab output" in p.stderr
    p = run_cli("report", str(outputs["dir"]))
    assert p.returncode == 2 and "give them as separate arguments" in p.stderr
    p = run_cli("report", str(outputs["sim"]), "--label", "a", "--label", "b")
    assert p.returncode == 2 and "--label" in p.stderr
    p = run_cli("report", str(outputs["sim"]), str(outputs["sim"]))
    assert p.returncode == 2 and "--label" in p.stderr


def test_version(root):
    p = run_cli("--version", check=True)
    assert re.fullmatch(r"jitterlab \d+\.\d+\.\d+.*( \(commit [0-9a-f]{40}(-dirty)?\))?\n", p.stdout), p.stdout
    assert provenance.version() in p.stdout
