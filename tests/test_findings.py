"""The findings rules (presets/findings.py) on hand-made inputs, the conditional explanations,
findings.csv, and `reproduce --link` parsing and errors."""
import csv

import numpy as np
import pytest

from conftest import ROOT, UMTS, run_cli, trace_mean_bps, umts_or_shipped
from jitterlab.presets import findings as F

# numpy's linear percentiles of 1..5: p05 1.2, p25 2, p50 3, p75 4, p95 4.8
V = [1.0, 2.0, 3.0, 4.0, 5.0]
TRACE = umts_or_shipped()  # Mahimahi's UMTS trace (Debian's package or ../shared), else the shipped one


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
    assert list(got[0]) == ["finding", "paper", "tolerance", "source", "measured", "verdict", "rule", "why", "role"]
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
    from jitterlab.presets import pam2013, pam2013_scenario

    monkeypatch.setattr(pam2013_scenario, "LINKS_DIR", tmp_path)  # where load_link reads it
    with pytest.raises(UserError) as e:
        pam2013.load_link("cellular")
    assert str(e.value) == f"--link cellular: {tmp_path / 'cellular.toml'} not found (the cellular link model is not part of this build)"


def test_the_study_runs_the_cellular_link_with_its_pam2013_table():
    # links/cellular.pam2013.toml over links/cellular.toml's [access] table, for the pam2013 study only
    from jitterlab.presets import pam2013

    plain, study = pam2013.load_link("cellular"), pam2013.load_link("cellular", study=True)
    assert plain.access["down_loss_burst"] == "100ms" and plain.mean_bps == 3.0e6
    assert study.access["down_loss_burst"] == "40ms" and study.mean_bps == 2.9e6
    # a key of the model's table the overlay does not name is kept
    assert study.access["down_cellular"]["share"] == plain.access["down_cellular"]["share"] == 0.45
    web = pam2013.sweeps(2, 2, "cellular")["web"].scenario["access"]
    assert web["down_cellular"]["mean_rate"] == "2.9Mbit" and web["down_loss_burst"] == "40ms"
    # the fixed link: the study refits only its downlink rate (links/fixed.pam2013.toml)
    fs, fp = pam2013.load_link("fixed", study=True), pam2013.load_link("fixed")
    assert (fs.mean_bps, fp.mean_bps) == (3.05e6, 3.15e6)
    assert {k: v for k, v in fs.access.items() if k != "down_rate"} == {k: v for k, v in fp.access.items() if k != "down_rate"}


def test_bad_cellular_link_names_the_key(tmp_path, monkeypatch):
    from jitterlab import ScenarioError
    from jitterlab.presets import pam2013, pam2013_scenario

    import re
    text = (pam2013.LINKS_DIR / "cellular.toml").read_text()
    bad, k = re.subn(r'mean_rate = "[^"]*"', 'mean_rate = "fast"', text, count=1)  # the [access] table's
    assert k == 1
    (tmp_path / "cellular.toml").write_text(bad)
    monkeypatch.setattr(pam2013_scenario, "LINKS_DIR", tmp_path)  # where load_link reads it
    with pytest.raises(ScenarioError, match=r'access\.down_cellular\.mean_rate: expected a rate like "4Mbit", got "fast"'):
        pam2013.load_link("cellular")


def test_link_means():
    from jitterlab.presets import pam2013

    assert pam2013.load_link("fixed").mean_bps == 3.15e6
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
    # the trace's mean: 1504-byte opportunities over its period (UMTS: 2.02 Mbit/s, Mahimahi's README)
    assert rate.startswith(f"{mean / 1e6:.2f} Mbit/s"), (rate, mean)
    assert {r["finding"]: r["measured"] for r in fixed}["Link: downlink capacity 2.7–5 Mbit/s (slides)"] == "3.05 Mbit/s mean"
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


# ---- tolerances and the rules that use them (hand-computed)

def test_printed_tolerance_is_half_a_digit_or_the_accuracy():
    t = F.tol_printed(0.018, 1, "paper", 1e-3, accuracy=0.0005)   # 18.0 ms from NTP-synced captures
    assert (t.lo, t.hi) == (pytest.approx(0.0175), pytest.approx(0.0185))
    t = F.tol_printed(1.42, 2, "paper")                            # 1.42 s: ± 0.005 s
    assert (t.lo, t.hi) == (pytest.approx(1.415), pytest.approx(1.425)) and t.kind == "printed"
    t = F.tol_approx(0.200, "paper")                               # "approaches 200 ms": ± 10 %
    assert (t.lo, t.hi) == (pytest.approx(0.180), pytest.approx(0.220))


def test_max_tolerance_is_one_gumbel_sd_of_an_exponential_tail():
    # quartiles 15 / 21 ms: theta = 6 ms / ln 3 = 5.4614 ms; SD of the max = pi theta / sqrt 6 = 7.0046 ms
    t = F.tol_max(0.0704, 0.015, 0.021, "paper")
    assert t.lo == pytest.approx(0.0704 - 0.0070046, abs=1e-7) and t.hi == pytest.approx(0.0704 + 0.0070046, abs=1e-7)


def test_count_tolerance_is_poisson():
    # 0.05 % of 37 500 packets: k = 18.75, sqrt(k) / N = 0.011547 %
    t = F.tol_count(0.0005, 37500, "paper")
    assert t.hi - 0.0005 == pytest.approx(4.3301 / 37500, rel=1e-4)


def test_pooled_tolerance_interpolates_the_papers_own_percentiles():
    row = {0.98: 0.043296, 0.99: 0.070158, 1.0: 0.111526}          # Table 1, IW3 n = 1
    t = F.tol_pooled(0.99, row, 3000, "paper")
    # rank half-width 1.96 sqrt(3000 .99 .01) / 3000 = 0.0035605 -> q in [0.98644, 0.99356]
    assert t.lo == pytest.approx(0.043296 + 0.64395 * (0.070158 - 0.043296), rel=1e-4)
    assert t.hi == pytest.approx(0.070158 + 0.35605 * (0.111526 - 0.070158), rel=1e-4)
    # more samples, a narrower interval around the printed value
    t2 = F.tol_pooled(0.99, row, 30000, "paper")
    assert t.lo < t2.lo < 0.070158 < t2.hi < t.hi


def test_meets_compares_our_iqr_with_the_papers_interval():
    # V: p05 1.2, p25 2, p75 4, p95 4.8
    assert F.meets(V, F.Tol(4.0, 5.0, "", "")) == "agrees"           # touches the 75th
    assert F.meets(V, F.Tol(4.0001, 5.0, "", "")) == "partly"        # only the 5-95th reaches it
    assert F.meets(V, F.Tol(4.8, 5.0, "", "")) == "partly"
    assert F.meets(V, F.Tol(4.8001, 5.0, "", "")) == "disagrees"
    assert F.meets(V, F.tol_bound(1.9, 0.0, True, "", "")) == "partly"   # below 1.9: only p05 is
    assert F.meets(V, F.tol_bound(1.9, 0.1, True, "", "")) == "agrees"   # the tolerance reaches p25
    assert F.meets(V, F.tol_bound(5.0, 0.0, False, "", "")) == "disagrees"
    assert F.meets([], F.Tol(0, 1, "", "")) == "n/a"
    # the old rule (paper value inside our IQR) on a simulator's narrow IQR: 18.0 vs 18.2 [18.1-18.3]
    narrow = [0.0181, 0.0182, 0.0182, 0.0182, 0.0183]
    assert F.within(0.018, narrow) == "disagrees"
    assert F.meets(narrow, F.tol_printed(0.018, 1, "", 1e-3, 0.0005)) == "agrees"


def test_ordered_leaves_saturated_cases_out():
    zero, full = [0.0] * 5, [0.9, 0.9, 0.91, 0.92, 0.9]
    lo, hi = [0.1, 0.2, 0.3, 0.4, 0.5], [0.5, 0.6, 0.7, 0.8, 0.9]
    f = F.ordered("t", "A > B", "src", [("sat0", zero, zero), ("sat1", full, [0.89] * 5), ("c", hi, lo)], "above",
                  100, " %", floor=0.01, ceiling=0.85)
    assert f.verdict == "agrees" and f.kind == "order" and f.source == "src"
    assert f.measured.startswith("1 of 1 informative as the paper, 0 ties, 0 the other way, 2 uninformative (saturated)")
    assert "saturated at sat0, sat1." in f.why
    # without the saturation rule the same cases are ties and the verdict only partly
    g = F.ordered("t", "A > B", "src", [("sat0", zero, zero), ("c", hi, lo)], "above")
    assert g.verdict == "partly"
    # all saturated: nothing to decide
    assert F.ordered("t", "A > B", "s", [("s", zero, zero)], floor=0.01).verdict == "inconclusive"


def test_judged_finding_carries_tolerance_source_and_the_rule_once():
    t = F.tol_approx(1.0, "paper §4")
    f = F.judged("done in about 1 s", "≈ 1 s", t, "1.02 s", [1.0, 1.01, 1.02, 1.03, 1.04], rule="ours: SYN to last byte")
    assert f.verdict == "agrees" and f.tolerance == t.text and f.source == "paper §4"
    assert f.rule_text() == F.RULES["value"] + "; ours: SYN to last byte"
    with pytest.raises(ValueError):
        F.Finding("f", "p", "m", "agrees", "r", kind="guess")
    with pytest.raises(ValueError):
        F.Tol(0, 1, "", "", kind="guess")


def test_the_study_round_trip_goes_on_the_uplink():
    from jitterlab.cli import UserError
    from jitterlab.presets import pam2013

    acc = pam2013.load_link("fixed").access
    # 100 ms = 2 × 5 ms core + 8.6 ms downlink + 5.45 ms mean jitter + 75.95 ms uplink
    got = pam2013.with_rtt(acc)
    assert got["up_delay"] == "75.950ms"
    assert {k: v for k, v in got.items() if k != "up_delay"} == {k: v for k, v in acc.items() if k != "up_delay"}
    assert pam2013.with_rtt(acc, None)["up_delay"] == acc["up_delay"] == "10ms"
    with pytest.raises(UserError, match="shorter than the link's one-way delays"):
        pam2013.with_rtt(acc, 0.020)


def test_stack_option_errors_are_one_line(tmp_path):
    p = run_cli("reproduce", "pam2013", "--stack", "linux-9.9", "--out", str(tmp_path))
    assert p.returncode == 2 and "--stack: unknown stack profile 'linux-9.9'" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("reproduce", "elastic", "--stack", "linux-3.2", "--out", str(tmp_path))
    assert p.returncode == 2 and "--stack: only the pam2013 preset" in p.stderr
    p = run_cli("reproduce", "rwnd", "--sensitivity", "--out", str(tmp_path))
    assert p.returncode == 2 and "--sensitivity: only the pam2013 preset" in p.stderr
