"""rmcat's RFC 8867 §5.9 (media flows with priority) and §5.11 (multiple bottlenecks),
presets/rmcat_extra.py: the scenarios' parameters, the controllers' refusal of a priority weight,
the two-bottleneck path's routing by packet conservation, the findings' rules by hand, and each
case's finding on a short run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jitterlab
from jitterlab.presets import rmcat, rmcat_extra as X


def test_59_carries_the_parameters():
    s = X.scenario_59()
    b = s["links"]["bottleneck"]
    # §5.4's path: 3.5 Mbit/s, 50 ms, 300 ms at 3.5 Mbit/s = 131 250 B; 120 s
    assert (s["duration"], b["rate"], b["delay"], b["queue"]["limit"]) == ("120s", "3.5Mbit", "50ms", "131250B")
    assert [(t["start"], t["stop"], t["priority"], t["max_rate"], t["cc"]) for t in s["traffic"]] == [
        ("0s", "119s", 2.0, "2.5Mbit", "nada"), ("20s", "119s", 1.0, "2.5Mbit", "nada"), ("40s", "119s", 1.0, "2.5Mbit", "nada")]


def test_59_runs_the_controllers_with_a_priority_weight():
    for cc in ("gcc", "scream"):
        assert X.refusal(cc) == (f'traffic[0].priority: cc = "{cc}" has no priority weight (nada has one: RFC 8698\'s PRIO; '
                                 "RFC 8699's coupled control is not modelled)")
    assert X.refusal("nada") is None
    sw = X.sweeps(2, rmcat._cc, rmcat.SEED, rmcat.TABLES)
    assert sw["5.9"].params[0].labels == ["nada"]


def test_511_routes_each_tcp_flow_over_its_own_bottleneck():
    """Packet conservation at the routers: B forwards what bn1 delivered to x1out (TCP 1 leaves) or
    on to bn2, which also takes TCP 2 from x2in; C forwards all of bn2 to exit (media) or x2out
    (TCP 2). Up to the packets still on a 25 ms hop at the end (2 Mbit/s · 25 ms ≈ 4 of 1500 B)."""
    r = jitterlab.simulate(X.scenario_511(duration_s=20), seed=3)
    ch = r.tables["channels"].set_index("name")
    tx = ch.tx_pkts.astype(int)
    assert abs(tx["bn1"] - (tx["x1out"] + ch.arrived_pkts["bn2"] - tx["x2in"])) <= 5
    assert abs(tx["bn2"] - (tx["x2out"] + tx["exit"])) <= 5
    # the media crosses both bottlenecks, each TCP flow one: all three moved data, both queues dropped
    assert tx["exit"] > 100 and tx["x1out"] > 1000 and tx["x2out"] > 1000
    assert ch.dropped_pkts["bn1"] > 0 and ch.dropped_pkts["bn2"] > 0
    # `one`: the second TCP flow off, the second bottleneck carries the media alone and drops nothing
    sc = X.scenario_511(duration_s=20)
    sc["traffic"][2]["enabled"] = False
    ch1 = jitterlab.simulate(sc, seed=3).tables["channels"].set_index("name")
    assert int(ch1.tx_pkts["x2in"]) == 0 and int(ch1.dropped_pkts["bn2"]) == 0


def test_findings_by_hand():
    r59 = pd.DataFrame([{"cc": "nada", "ratio": x} for x in (1.7, 1.9, 2.0, 2.2)])
    refused = {"gcc": "traffic[0].priority: no", "scream": "traffic[0].priority: no", "nada": None}
    fs = X.findings_59(r59, ["gcc", "scream", "nada"], refused)
    assert [f.verdict for f in fs] == ["n/a", "n/a", "agrees"] and fs[0].measured == "not run: traffic[0].priority: no"
    # 1.3–1.5: below "about twice" (band 1.6–2.4)
    low = pd.DataFrame([{"cc": "nada", "ratio": x} for x in (1.3, 1.4, 1.4, 1.5)])
    assert X.findings_59(low, ["nada"], {"nada": None})[0].verdict == "disagrees"
    # §5.11: pairs by replication (rows deliberately out of order); rate two / one per seed
    rows = []
    for rep, one, two in ((0, 1000.0, 900.0), (1, 800.0, 720.0), (2, 900.0, 810.0), (3, 1000.0, 950.0)):
        for b, v in (("two", two), ("one", one)):
            for q in ("droptail", "fq_codel"):
                rows.append({"cc": "nada", "queue": q, "bottlenecks": b, "replication": rep,
                             "media_kbps": v if q == "fq_codel" else v * (0.6 if b == "two" else 1.0)})
    r = pd.DataFrame(rows)
    assert np.allclose(X.kept(r, "nada", "fq_codel"), [0.9, 0.9, 0.9, 0.95])
    assert np.allclose(X.kept(r, "nada", "droptail"), [0.54, 0.54, 0.54, 0.57])
    v = {f.finding.split(":")[0]: f.verdict for f in X.findings_511(r, ["nada"])}
    assert v == {"§5.11 nada on droptail": "disagrees", "§5.11 nada on fq_codel": "agrees"}
    # at the controller's floor (median rate with one ≤ 225 kbit/s = 1.5 × 150) the ratio says nothing
    r.loc[(r.queue == "droptail") & (r.bottlenecks == "one"), "media_kbps"] = [230.0, 220.0, 200.0, 225.0]
    assert [f.verdict for f in X.findings_511(r, ["nada"])][0] == "inconclusive"


def _run(sc: dict, seeds=(1, 2)) -> dict:
    out = {"media_packets": [], "runs": [], "rtc_frames": []}
    for i, seed in enumerate(seeds):
        t = jitterlab.simulate(sc, seed=seed).tables
        for k in out:
            df = t[k].copy()
            df["run_id"] = i
            out[k].append(df)
    return {k: pd.concat(v, ignore_index=True) for k, v in out.items()}


def test_59_short_run_nada_weights_its_flows():
    """60 s, the three flows from 0 / 5 / 10 s: over 30–59 s MEDIA-1 (priority 2) gets about twice
    the others (the case's band, 1.6–2.4), as NADA's equilibrium x = PRIO·XREF·RMAX/r_ref says."""
    res = _run(X.scenario_59("nada", duration_s=60, starts=(0, 5, 10)))
    res["runs"]["cc"] = "nada"
    r = X.per_run_59(res, window=(30.0, 59.0))
    lo, hi = X.RATIO_59
    assert ((r.ratio >= lo) & (r.ratio <= hi)).all(), r


@pytest.mark.parametrize("cc", ["gcc", "scream", "nada"])
def test_511_short_run_fq_codel_keeps_the_media_rate(cc):
    """40 s on FQ-CoDel, rates over 10–39 s: congesting the second bottleneck too leaves the media
    at least KEEP_511 of its rate with the first alone (the case's finding)."""
    rates = {}
    for b in ("one", "two"):
        sc = X.scenario_511(X.FQ_CODEL, duration_s=40)
        sc["traffic"][0]["cc"] = cc
        sc["traffic"][2]["enabled"] = b == "two"
        res = _run(sc, seeds=(1,))
        res["runs"] = res["runs"].assign(cc=cc, bottlenecks=b, queue="fq_codel", replication=0)
        rates[b] = float(X.per_run_511(res, window=(10.0, 39.0)).media_kbps.iloc[0])
    assert rates["two"] >= X.KEEP_511 * rates["one"], rates


def test_59_equal_weights_miss_the_band():
    """The same short run with every weight 1: MEDIA-1 gets 1.19 × the others (docs/media.md), outside
    the band, so the weight and not the start order makes §5.9's ratio."""
    sc = X.scenario_59("nada", duration_s=60, starts=(0, 5, 10))
    for t in sc["traffic"]:
        t["priority"] = 1.0
    res = _run(sc)
    res["runs"]["cc"] = "nada"
    r = X.per_run_59(res, window=(30.0, 59.0))
    assert f"{r.ratio.median():.2f}" == "1.19" and (r.ratio < X.RATIO_59[0]).all()


def test_docs_numbers_are_the_builds(tmp_path):
    """docs/media.md's §5.9 and §5.11 numbers (Validation, `reproduce rmcat --reps 5`) from the
    current build: the two sweeps with 5 replications (a few seconds)."""
    from pathlib import Path

    from jitterlab.presets.common import Options, run_experiment

    opt = Options(tmp_path, 2, "local", None, False)
    sw = X.sweeps(5, rmcat._cc, rmcat.SEED, rmcat.TABLES)
    r59 = X.per_run_59(run_experiment(sw["5.9"], "5.9", opt))
    r511 = X.per_run_511(run_experiment(sw["5.11"], "5.11", opt))
    q = lambda v, p: f"{np.quantile(v, p):.2f}"  # noqa: E731
    got = [f"{r59.ratio.median():.2f}\n    [{q(r59.ratio, .25)}–{q(r59.ratio, .75)}]",
           f"({r59.media1_kbps.median() / 1e3:.2f} against {r59.media2_kbps.median() / 1e3:.2f} and "
           f"{r59.media3_kbps.median() / 1e3:.2f} Mbit/s"]
    keep = {cc: f"{np.median(X.kept(r511, cc, 'fq_codel')):.2f}" for cc in rmcat.CONTROLLERS}
    got.append(f"GCC {keep['gcc']}, SCReAM {keep['scream']}, NADA {keep['nada']}")
    one = lambda cc, qu: f"{r511[(r511.cc == cc) & (r511.queue == qu) & (r511.bottlenecks == 'one')].media_kbps.median():.0f}"  # noqa: E731
    got.append(f"({one('gcc', 'fq_codel')}, {one('scream', 'fq_codel')}, {one('nada', 'fq_codel')} kbit/s;")
    got.append(f"(GCC {one('gcc', 'droptail')}, NADA {one('nada', 'droptail')}, SCReAM {one('scream', 'droptail')} kbit/s;")
    doc = (Path(__file__).resolve().parent.parent / "docs" / "media.md").read_text()
    for g in got:
        assert g in doc, f"docs/media.md's §5.9/§5.11 numbers are stale: {g!r} (regenerate: ./jitterlab reproduce rmcat --reps 5)"


def test_reproduce_help_lists_every_rmcat_case():
    """`jitterlab reproduce rmcat --help` names each case the preset runs (one sweep per case)."""
    from conftest import run_cli

    r = run_cli("reproduce", "rmcat", "--help")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    names = {"ecn": "ECN", "8869": "RFC 8869 cellular", "pam2013": "pam2013 (an adaptive call"}
    for key in rmcat.sweeps(2):
        assert names.get(key, f"§{key} ") in text, key
    assert "§5.9 (media flows with priority" in text and "§5.11 (multiple bottlenecks)" in text
