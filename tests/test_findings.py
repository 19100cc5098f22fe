"""The findings rules (presets/findings.py) on hand-made inputs, the conditional explanations,
findings.csv, and `reproduce --link` parsing and errors."""
import csv

import numpy as np
import pytest

from conftest import ROOT, run_cli, trace_mean_bps, umts_or_shipped
from jitterlab.presets import findings as F

# numpy's linear percentiles of 1..5: p05 1.2, p25 2, p50 3, p75 4, p95 4.8
V = [1.0, 2.0, 3.0, 4.0, 5.0]
UMTS = ROOT.parent / "shared" / "traces" / "TMobile-UMTS-driving.down"
TRACE = umts_or_shipped()  # Mahimahi's UMTS trace from ../shared, else the shipped one


def test_spread_is_numpy_linear_percentiles_without_nan():
    s = F.spread(V + [float("nan")])
    assert (s.n, s.p05, s.p25, s.p50, s.p75, s.p95) == (5, pytest.approx(1.2), 2.0, 3.0, 4.0, pytest.approx(4.8))
    assert F.spread([]).n == 0 and F.within(1.0, []) == "n/a"


def test_within_boundaries_are_inclusive():
    assert F.within(2.0, V) == "agrees"      # exactly the 25th percentile
    assert F.within(4.0, V) == "agrees"      # exactly the 75th
    assert F.within(1.999, V) == "partly"
    assert F.within(1.2, V) == "partly"      # exactly the 5th
    assert F.within(1.1999, V) == "disagrees"
    assert F.within(4.8, V) == "partly"      # exactly the 95th
    assert F.within(4.8001, V) == "disagrees"


def test_side_below_and_above():
    # "below 4": the IQR must lie strictly below; touching the bound with the 75th is a straddle
    assert F.side(V, 4.0001, below=True) == "agrees"
    assert F.side(V, 4.0, below=True) == "partly"
    assert F.side(V, 2.0001, below=True) == "partly"
    assert F.side(V, 2.0, below=True) == "disagrees"   # the whole IQR at or above the bound
    assert F.side(V, 1.9999, below=False) == "agrees"
    assert F.side(V, 2.0, below=False) == "partly"
    assert F.side(V, 4.0, below=False) == "disagrees"
    assert F.side(V, 3.9999, below=False) == "partly"


def test_in_range():
    assert F.in_range(V, 2.0, 4.0) == "agrees"
    assert F.in_range(V, 2.0001, 4.0) == "partly"
    assert F.in_range(V, 4.0, 9.0) == "partly"       # overlaps at the 75th percentile
    assert F.in_range(V, 4.0001, 9.0) == "disagrees"
    assert F.in_range([500.0], 500, float("inf")) == "agrees"
    assert F.in_range([499.0], 500, float("inf")) == "disagrees"


def test_order_needs_disjoint_iqrs():
    lo, hi = [1, 2, 3, 4, 5], [5, 6, 7, 8, 9]            # IQRs 2–4 and 6–8
    assert F.order(hi, lo) == "above" and F.order(lo, hi) == "below"
    touching = [3, 4, 5, 6, 7]                           # IQR 4–6 touches 2–4
    assert F.order(touching, lo) == "tie"
    assert F.outcome(hi, lo, "above") == "win" and F.outcome(lo, hi, "above") == "loss"
    assert F.outcome(touching, lo, "above") == "tie"
    assert F.outcome(lo, hi, "below") == "win"
    # the report's old wording: 47 % vs 10 % with IQRs far apart is an ordering, not "within the spread"
    a, b = [0.45, 0.46, 0.47, 0.48, 0.49], [0.08, 0.09, 0.10, 0.11, 0.12]
    assert F.order(a, b) == "above"


def test_count_verdict_and_tally_count_ties_as_ties():
    assert F.count_verdict(["win"] * 18) == "agrees"
    assert F.count_verdict(["win"] * 16 + ["tie"] * 2) == "partly"
    assert F.count_verdict(["win"] * 17 + ["loss"]) == "disagrees"
    assert F.count_verdict(["tie", "tie"]) == "inconclusive"
    assert F.count_verdict([]) == "n/a"
    assert F.tally(["win"] * 16 + ["tie"] * 2) == "16 of 18 as the paper, 2 ties, 0 the other way"
    assert F.tally(["win", "tie", "loss"]) == "1 of 3 as the paper, 1 tie, 1 the other way"


def test_worst():
    assert F.worst(["agrees", "agrees"]) == "agrees"
    assert F.worst(["agrees", "partly"]) == "partly"
    assert F.worst(["agrees", "inconclusive"]) == "partly"
    assert F.worst(["inconclusive", "inconclusive"]) == "inconclusive"
    assert F.worst(["partly", "disagrees", "agrees"]) == "disagrees"
    assert F.worst(["n/a"]) == "n/a"


def test_why_only_when_its_condition_holds():
    assert F.because(True, "x") == "x" and F.because(False, "x") == ""
    # an ordering whose IQRs overlap explains the tie ...
    tie = F.ordering("t", "A > B", [("case", [1, 2, 3, 4, 5], [3, 4, 5, 6, 7])], "above")
    assert tie.verdict == "inconclusive" and "IQRs overlap (tie) at case" in tie.why
    # ... and one that goes the paper's way says nothing
    win = F.ordering("t", "A > B", [("case", [0.45, 0.46, 0.47, 0.48, 0.49], [0.08, 0.09, 0.10, 0.11, 0.12])], "above", 100, " %")
    assert win.verdict == "agrees" and win.why == ""
    assert win.measured == "1 of 1 as the paper, 0 ties, 0 the other way — case: 47 % [46–48] vs 10 % [9–11]"
    rev = F.ordering("t", "A > B", [("c1", [1, 2, 3], [7, 8, 9]), ("c2", [1, 2, 3], [2, 3, 4])], "above")
    assert rev.verdict == "disagrees"
    assert "ordered the other way (IQRs disjoint) at c1." in rev.why and "tie) at c2" in rev.why


def test_bootstrap_spread_of_a_pooled_statistic():
    # every replication has the same values: every resample has the same pooled median
    same = [np.array([1.0, 2.0, 3.0])] * 10
    s = F.boot_pooled(same, 0.5)
    assert s.p05 == s.p95 == 2.0 and s.n == 200
    # two kinds of replication: the pooled median moves between them, deterministically (seed 0)
    mixed = [np.array([0.0] * 5)] * 5 + [np.array([10.0] * 5)] * 5
    a, b = F.boot_pooled(mixed, 0.5), F.boot_pooled(mixed, 0.5)
    assert a == b and a.p05 < 5.0 < a.p95


def test_findings_csv_columns_and_rows(tmp_path):
    rows = [F.Finding("f1", "1", "2", "agrees", "r", "", "calibration"),
            F.Finding("f2, with a comma", "p", "m", "inconclusive", "r2", "because", "held-out")]
    p = F.write_csv(rows, tmp_path / "x" / "findings.csv")
    got = list(csv.DictReader(p.open()))
    assert list(got[0]) == ["finding", "paper", "measured", "verdict", "rule", "why", "role"]
    assert [g["finding"] for g in got] == ["f1", "f2, with a comma"] and got[1]["why"] == "because"
    with pytest.raises(ValueError):
        F.Finding("f", "p", "m", "maybe", "r")
    with pytest.raises(ValueError):
        F.Finding("f", "p", "m", "agrees", "r", role="guess")


def test_parse_links():
    from jitterlab.presets.pam2013 import parse_links

    assert parse_links(None) == ["fixed"]
    assert parse_links(["fixed,trace:/a/b", "cellular"]) == ["fixed", "trace:/a/b", "cellular"]
    assert parse_links([" fixed , cellular "]) == ["fixed", "cellular"]


@pytest.mark.parametrize("args, msg", [
    (["--link", "wifi"], "--link: unknown link 'wifi' (expected fixed, cellular or trace:PATH)"),
    (["--link", "fixed,,cellular"], "--link: empty link in 'fixed,,cellular'"),
    (["--link", "trace:"], "--link trace:: give the trace file after 'trace:'"),
    (["--link", "fixed", "--link", "fixed"], "--link: 'fixed' given twice"),
    (["--link", "trace:/no/such.down"], "--link trace:/no/such.down: no such trace file '/no/such.down'"),
])
def test_link_errors_are_one_line_exit_2(tmp_path, args, msg):
    p = run_cli("reproduce", "pam2013", "--reps", "2", "--out", str(tmp_path), *args)
    assert p.returncode == 2, p.stderr
    assert msg in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())  # checked before any run starts


def test_link_only_for_pam2013(tmp_path):
    p = run_cli("reproduce", "elastic", "--out", str(tmp_path), "--link", "fixed")
    assert p.returncode == 2 and "--link: only the pam2013 and mitigations presets" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_missing_link_file_is_one_line_naming_it(tmp_path, monkeypatch):
    from jitterlab.cli import UserError
    from jitterlab.presets import pam2013

    monkeypatch.setattr(pam2013, "LINKS_DIR", tmp_path)
    with pytest.raises(UserError) as e:
        pam2013.load_link("cellular")
    assert str(e.value) == f"--link cellular: {tmp_path / 'cellular.toml'} not found (the cellular link model is not part of this build)"


def test_bad_cellular_link_names_the_key(tmp_path, monkeypatch):
    from jitterlab import ScenarioError
    from jitterlab.presets import pam2013

    import re
    text = (pam2013.LINKS_DIR / "cellular.toml").read_text()
    bad, k = re.subn(r'mean_rate = "[^"]*"', 'mean_rate = "fast"', text)
    assert k == 1
    (tmp_path / "cellular.toml").write_text(bad)
    monkeypatch.setattr(pam2013, "LINKS_DIR", tmp_path)
    with pytest.raises(ScenarioError, match=r'access\.down_cellular\.mean_rate: expected a rate like "4Mbit", got "fast"'):
        pam2013.load_link("cellular")


def test_link_means():
    from jitterlab.presets import pam2013

    assert pam2013.load_link("fixed").mean_bps == 3.3e6
    # the cellular model's mean comes from the Rust expansion of presets/links/cellular.toml (mean_rate)
    cell = pam2013.load_link("cellular")
    assert cell.mean_bps == pytest.approx(float(cell.access["down_cellular"]["mean_rate"].rstrip("Mbit")) * 1e6, rel=0.02)
    t = pam2013.load_link(f"trace:{TRACE}")
    assert "down_rate" not in t.access and t.access["down_trace"] == str(TRACE.resolve())
    assert t.mean_bps == pytest.approx(trace_mean_bps(TRACE))
    if TRACE == UMTS:
        # 1504-byte opportunities over the 928.424 s period (shared/traces/README.md: 2.02 Mbit/s)
        assert t.mean_bps == pytest.approx(156262 * 1504 * 8 / 928.424)


def test_pam2013_on_a_trace_link_side_by_side(tmp_path):
    p = run_cli("reproduce", "pam2013", "--reps", "2", "--out", str(tmp_path), "--jobs", "2", "--quiet",
                "--link", f"fixed,trace:{TRACE}")
    assert p.returncode == 0, p.stderr
    label = f"trace-{TRACE.name}"
    mean = trace_mean_bps(TRACE)
    fixed = list(csv.DictReader((tmp_path / "fixed" / "findings.csv").open()))
    trace = list(csv.DictReader((tmp_path / label / "findings.csv").open()))
    assert [r["finding"] for r in fixed] == [r["finding"] for r in trace]
    rate = {r["finding"]: r["measured"] for r in trace}["Link: downlink capacity 2.7–5 Mbit/s (slides)"]
    # the trace's mean: 1504-byte opportunities over its period (UMTS: 2.02 Mbit/s, shared/traces/README.md)
    assert rate.startswith(f"{mean / 1e6:.2f} Mbit/s"), (rate, mean)
    assert {r["finding"]: r["measured"] for r in fixed}["Link: downlink capacity 2.7–5 Mbit/s (slides)"] == "3.30 Mbit/s mean"
    assert (tmp_path / "figures" / label / "fig4_web_cdf.png").exists()
    html = (tmp_path / "report.html").read_text()
    assert f"{label}: measured" in html and "fixed: measured" in html
    # one section per figure, holding the figure of each link in turn
    import re
    assert re.findall(r"<h2>([^<]*)</h2>", html).count("Fig. 4 — audio with n short TCP flows") == 1
    caps = re.findall(r"<figcaption>\[([^\]]+)\] Fig. 4:", html)
    assert caps == ["fixed", f"trace:{TRACE}"]
    assert "A trace link is not calibrated at all" in html
    # the trace is slower than the fixed link, and slower still after 12 s than on average: the bulk
    # run is sized from the trace's own opportunities, so the 28 MB download completes in every run
    import json
    import pandas as pd
    sc = json.loads((tmp_path / label / "bulk" / "sweep.json").read_text())["scenario"]
    assert int(sc["duration"].rstrip("s")) > 12 + 28e6 * 8 / (mean * 1.005) * 1.3
    flows = pd.read_parquet(tmp_path / label / "bulk" / "tcp_flows.parquet")
    assert flows.end_ns.notna().all() and (flows.bytes == 28_000_000).all()
