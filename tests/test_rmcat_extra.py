"""rmcat's RFC 8867 §6.1 (media flows with priority) and §6.3 (multiple bottlenecks),
presets/rmcat_extra.py: the scenarios' parameters (RFC 8867's text), the controllers' refusal of a
priority weight, the two-bottleneck path's routing by packet conservation, the max-min fair shares
and the findings' rules by hand, and §6.1's finding on a short run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jitterlab
from jitterlab.presets import rmcat, rmcat_extra as X


def test_61_carries_the_parameters():
    s = X.scenario_61()
    b = s["links"]["bottleneck"]
    # §5.4's path: 3.5 Mbit/s, 50 ms, 300 ms at 3.5 Mbit/s = 131 250 B; 120 s
    assert (s["duration"], b["rate"], b["delay"], b["queue"]["limit"]) == ("120s", "3.5Mbit", "50ms", "131250B")
    assert [(t["start"], t["stop"], t["priority"], t["max_rate"], t["cc"]) for t in s["traffic"][:3]] == [
        ("0s", "119s", 2.0, "2.5Mbit", "nada"), ("20s", "119s", 1.0, "2.5Mbit", "nada"), ("40s", "119s", 1.0, "2.5Mbit", "nada")]
    # §4.3's audio beside each video, with its timeline, no weight (CBR)
    assert [(t["kind"], t["start"], t["stop"], "priority" in t) for t in s["traffic"][3:]] == [
        ("audio", "0s", "119s", False), ("audio", "20s", "119s", False), ("audio", "40s", "119s", False)]


def test_61_runs_the_controllers_with_a_priority_weight():
    for cc in ("gcc", "scream"):
        assert X.refusal(cc) == (f'traffic[0].priority: cc = "{cc}" has no priority weight (nada has one: RFC 8698\'s PRIO; '
                                 "RFC 8699's coupled control is not modelled)")
    assert X.refusal("nada") is None
    sw = X.sweeps(2, rmcat._cc, rmcat.SEED, rmcat.TABLES)
    assert sw["6.1"].params[0].labels == ["nada"]


def test_63_carries_the_rfcs_parameters():
    """RFC 8867 §6.3: 2 Mbit/s × 1.0 / 4.0 / 0.75 on A–B / B–C / C–D, 300 ms queues at each link's
    capacity (2e6 · 0.3 / 8 = 75 000 B, 300 000 B, 56 250 B), one-way delays S1–R1 100 ms, S2–R2
    and S3–R3 40 ms, a video and a 20 kbit/s audio flow per source 0–299 s, 300 s."""
    s = X.scenario_63()
    ln = s["links"]
    assert [(ln[k]["from"], ln[k]["to"], ln[k]["rate"], ln[k]["queue"]["limit"]) for k in ("ab", "bc", "cd")] == [
        ("A", "B", "2Mbit", "75000B"), ("B", "C", "8Mbit", "300000B"), ("C", "D", "1.5Mbit", "56250B")]
    ms = lambda k: int(ln[k]["delay"].removesuffix("ms"))  # noqa: E731
    assert ms("s1") + ms("ab") + ms("bc") + ms("cd") + ms("r1") == 100
    assert ms("s2") + ms("ab") + ms("r2") == 40 and ms("s3") + ms("cd") + ms("r3") == 40
    assert s["duration"] == "300s"
    assert [(t["kind"], t["from"], t["to"], t["start"], t["stop"]) for t in s["traffic"]] == [
        (k, f"S{i}", f"R{i}", "0s", "299s") for k in ("video", "audio") for i in (1, 2, 3)]
    # 90 B every 20 ms: 50 B of RTP payload = 20 kbit/s (§4.3), 36 kbit/s on the wire
    assert X.AUDIO_BPS == 36_000 and all(t["size"] == "90B" and t["interval"] == "20ms" for t in s["traffic"][3:])


def test_63_routes_each_flow_over_its_hops():
    """Packet conservation at the routers on a 20 s run: B forwards what A→B carried to R2 (S2) or
    on to B→C (S1); C forwards B→C's packets and S3's to C→D; D splits C→D's to R1 and R3. Up to
    the packets still on a hop at the end (1.5–8 Mbit/s over ≤ 60 ms: a few dozen)."""
    r = jitterlab.simulate(X.scenario_63(duration_s=20), seed=3)
    tx = r.tables["channels"].set_index("name").tx_pkts.astype(int)
    assert abs(tx["ab"] - (tx["r2"] + tx["bc"])) <= 5
    assert abs(tx["bc"] + tx["s3"] - tx["cd"]) <= 45
    assert abs(tx["cd"] - (tx["r1"] + tx["r3"])) <= 5
    assert min(tx["r1"], tx["r2"], tx["r3"]) > 500


def test_63_fair_shares_by_hand():
    # C→D: (1.5 − 2 × 0.036) / 2 = 0.714 for S1 and S3; A→B then leaves S2 2.0 − 0.072 − 0.714 = 1.214
    assert X.fair_shares() == pytest.approx({1: 714e3, 2: 1214e3, 3: 714e3})
    # no audio, C→D as wide as A→B: A→B and C→D each split equally, 1.0 Mbit/s for everyone
    assert X.fair_shares({"ab": 2e6, "cd": 2e6}, audio_bps=0) == pytest.approx({1: 1e6, 2: 1e6, 3: 1e6})
    # A→B the tighter: S1 and S2 get 0.5, S3 the rest of C→D
    assert X.fair_shares({"ab": 1e6, "cd": 1.5e6}, audio_bps=0) == pytest.approx({1: 0.5e6, 2: 0.5e6, 3: 1e6})


def test_findings_by_hand():
    r59 = pd.DataFrame([{"cc": "nada", "ratio": x} for x in (1.7, 1.9, 2.0, 2.2)])
    refused = {"gcc": "traffic[0].priority: no", "scream": "traffic[0].priority: no", "nada": None}
    fs = X.findings_61(r59, ["gcc", "scream", "nada"], refused)
    assert [f.verdict for f in fs] == ["n/a", "n/a", "agrees"] and fs[0].measured == "not run: traffic[0].priority: no"
    # 1.3–1.5: below "about twice" (band 1.6–2.4)
    low = pd.DataFrame([{"cc": "nada", "ratio": x} for x in (1.3, 1.4, 1.4, 1.5)])
    assert X.findings_61(low, ["nada"], {"nada": None})[0].verdict == "disagrees"
    # §6.3: per run the lower bottleneck use, the lowest flow's rate / fair share, the lower Jain
    r63 = pd.DataFrame([{"cc": "nada", "util_min": u, "min_fair": m, "jain_min": j}
                        for u, m, j in ((0.95, 0.60, 0.95), (0.96, 0.70, 0.97), (0.97, 0.55, 0.92), (0.94, 0.65, 0.93))])
    assert [f.verdict for f in X.findings_63(r63, ["nada"])] == ["agrees", "agrees", "agrees"]
    r63["util_min"] = [0.70, 0.75, 0.78, 0.79]
    r63["min_fair"] = [0.30, 0.40, 0.45, 0.49]
    r63["jain_min"] = [0.70, 0.80, 0.85, 0.89]
    assert [f.verdict for f in X.findings_63(r63, ["nada"])] == ["disagrees", "disagrees", "disagrees"]


def test_63_per_run_by_hand():
    """per_run_63 on synthetic packets over a 10 s window: S1 / S2 / S3 video as 446 / 1518 / 1339
    packets of 1000 B, each audio 500 of 90 B (36 kbit/s): rates, normalised rates, bottleneck use
    and Jain by hand."""
    rows = []
    for fid, n in ((0, 446), (2, 1518), (4, 1339), (6, 500), (7, 500), (8, 500)):
        size = 1000 if fid < 6 else 90
        for k in range(n):
            t = int(k * 10e9 / n)
            rows.append({"run_id": 0, "flow_id": fid, "seq": k, "send_ns": t, "recv_ns": t + 1, "size": size, "lost_where": None})
    m = pd.DataFrame(rows)
    res = {"media_packets": m, "runs": pd.DataFrame([{"run_id": 0, "cc": "nada"}])}
    r = X.per_run_63(res, window=(0.0, 10.0)).iloc[0]
    # 446 × 8000 b / 10 s = 356.8 kbit/s; 1518 → 1214.4; 1339 → 1071.2; audio 500 × 720 b / 10 s = 36 kbit/s
    assert (round(r.video1_kbps, 1), round(r.video2_kbps, 1), round(r.video3_kbps, 1)) == (356.8, 1214.4, 1071.2)
    assert r.video1_fair == pytest.approx(356.8 / 714) and r.min_fair == pytest.approx(356.8 / 714)
    # A→B: (356.8 + 36 + 1214.4 + 36) / 2000 = 0.8216; C→D: (356.8 + 36 + 1071.2 + 36) / 1500 = 1.0
    assert r.util_ab == pytest.approx(0.8216) and r.util_cd == pytest.approx(1.0) and r.util_min == pytest.approx(0.8216)
    # Jain at C→D of 0.4997 and 1.5003: (2.0)² / (2 × (0.2497 + 2.2509)) = 0.7998
    x1, x3 = 356.8 / 714, 1071.2 / 714
    assert r.jain_cd == pytest.approx((x1 + x3) ** 2 / (2 * (x1 ** 2 + x3 ** 2))) and r.jain_min == r.jain_cd


def _run(sc: dict, seeds=(1, 2)) -> dict:
    out = {"media_packets": [], "runs": [], "rtc_frames": []}
    for i, seed in enumerate(seeds):
        t = jitterlab.simulate(sc, seed=seed).tables
        for k in out:
            df = t[k].copy()
            df["run_id"] = i
            out[k].append(df)
    return {k: pd.concat(v, ignore_index=True) for k, v in out.items()}


def test_61_short_run_nada_weights_its_flows():
    """60 s, the three flows from 0 / 5 / 10 s: over 30–59 s S1 (priority 2) gets about twice
    the others (the case's band, 1.6–2.4), as NADA's equilibrium x = PRIO·XREF·RMAX/r_ref says."""
    res = _run(X.scenario_61("nada", duration_s=60, starts=(0, 5, 10)))
    res["runs"]["cc"] = "nada"
    r = X.per_run_61(res, window=(30.0, 59.0))
    lo, hi = X.RATIO_61
    assert ((r.ratio >= lo) & (r.ratio <= hi)).all(), r


def test_61_equal_weights_miss_the_band():
    """The same short run with every weight 1: S1 gets 1.20 × the others (docs/media.md), outside
    the band, so the weight and not the start order makes §6.1's ratio."""
    sc = X.scenario_61("nada", duration_s=60, starts=(0, 5, 10))
    for t in sc["traffic"][:3]:
        t["priority"] = 1.0
    res = _run(sc)
    res["runs"]["cc"] = "nada"
    r = X.per_run_61(res, window=(30.0, 59.0))
    assert f"{r.ratio.median():.2f}" == "1.20" and (r.ratio < X.RATIO_61[0]).all()


def test_reproduce_help_lists_every_rmcat_case():
    """`jitterlab reproduce rmcat --help` names each case the preset runs (one sweep per case)."""
    from conftest import run_cli

    r = run_cli("reproduce", "rmcat", "--help")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    names = {"ecn": "§6.2 ECN", "8869": "RFC 8869 cellular", "pam2013": "pam2013 (an adaptive call"}
    for key in rmcat.sweeps(2):
        assert names.get(key, f"§{key} ") in text, key
    assert "§6.1 (media flows with priority" in text and "§6.3 (multiple bottlenecks)" in text and "§6.2 ECN" in text
