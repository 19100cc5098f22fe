"""The mitigations study's adaptive call (presets/mitigations_adaptive.py): its sweeps are the
audio's with the call in place of the audio, its metrics are computed over the overlap window by
hand-checkable rules, and its ranking is the audio's rule on the frame-delay gain. The whole run
(rows for every mitigation and workload) is checked by test_mitigations.py's smoke run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jitterlab.presets import mitigations as mit
from jitterlab.presets import mitigations_adaptive as A

MS = 1_000_000


def test_sweeps_replace_the_audio_and_keep_everything_else():
    audio = mit.sweeps(3, "fixed", ["DropTail", "FQ-CoDel", "IW3"])
    v = A.sweeps(audio, "nada")
    assert set(v) == {"bulk", "web", "mixed"}
    for k, s in v.items():
        a = audio[k]
        assert s.scenario["traffic"][0] == {**A.VIDEO, "cc": "nada"}
        assert s.scenario["traffic"][1:] == a.scenario["traffic"][1:]  # traffic[1] is still the TCP the mitigations name
        assert (s.seed, s.replications, s.random, s.scenario["duration"]) == (a.seed, a.replications, a.random, a.scenario["duration"])
        assert s.params[-1].labels == a.params[-1].labels and s.params[-1].sets == a.params[-1].sets
        assert "rtc_frames" in s.tables and s.name != a.name
    assert [(p.name, p.labels) for p in v["web"].params[:2]] == [("n", [6]), ("iw", [10])]
    assert A.sweeps(audio)["bulk"].scenario["traffic"][0]["cc"] == "gcc"  # the stated default


def _one_run() -> dict[str, pd.DataFrame]:
    """Ten frames of one packet (1000 B) captured every 100 ms from 1.0 s, the k-th arriving
    (10 + 10k) ms after capture; frames 4–6 lost; one frame at 0.5 s (delay 500 ms) before the
    window [1.0 s, 2.0 s]."""
    cap = [500] + [1000 + 100 * k for k in range(10)]
    delay = [500] + [10 + 10 * k for k in range(10)]
    lost = {5, 6, 7}  # row indices of frames 4, 5, 6
    n = len(cap)
    media = pd.DataFrame({"run_id": [0] * n, "flow_id": [1] * n, "seq": range(n), "send_ns": [c * MS for c in cap],
                          "recv_ns": pd.array([None if i in lost else (c + d) * MS for i, (c, d) in enumerate(zip(cap, delay))], dtype="Int64"),
                          "size": [1000] * n})
    frames = pd.DataFrame({"run_id": [0] * n, "flow_id": [1] * n, "frame": range(n), "capture_ns": [c * MS for c in cap],
                           "packets": [1] * n, "first_seq": range(n), "key": [False] * n})
    runs = pd.DataFrame({"run_id": [0], "tcp_start_ns": [1000 * MS], "tcp_end_ns": pd.array([2000 * MS], dtype="Int64")})
    return {"media_packets": media, "rtc_frames": frames, "runs": runs}


def test_call_metrics_by_hand():
    """In the window: 7 packets of 1000 B in 1 s = 56 kbit/s; complete frames' delays 10, 20, 30,
    40, 80, 90, 100 ms: median 40, 95th percentile (linear) 90 + 0.7 · 10 = 97 ms; 7 of 10 frames
    complete; shown at 1.01, 1.12, 1.23, 1.34, 1.78 s …: the 0.44 s gap is ≥ max(3 · 0.11, 0.11 +
    0.15) s, one freeze of 0.44 s. The frame before the window (500 ms) is not counted."""
    r = A.call_metrics(_one_run(), horizon_s=None).iloc[0]
    assert r.media_kbps == pytest.approx(56.0)
    assert r.owd_p50_ms == pytest.approx(40.0) and r.frame_delay_p50_ms == pytest.approx(40.0)
    assert r.frame_delay_p95_ms == pytest.approx(97.0)
    assert (r.frames, r.frames_complete) == (10, pytest.approx(0.7))
    # the 3 lost frames are late, the 7 complete ones on time (≤ 100 ms < 400 ms): 1 − 3 / 1800 of a 60 s call
    assert r.late_frames == 3 and r.call_on_time_pct == pytest.approx(100.0 * (1 - 3 / 1800))
    assert (r.freezes, r.freeze_s) == (1, pytest.approx(0.44))
    # an unfinished TCP: the window ends at the run's end (the horizon), 2.5 s: 56 kbit over 1.5 s
    res = _one_run()
    res["runs"]["tcp_end_ns"] = pd.array([None], dtype="Int64")
    assert A.call_metrics(res, horizon_s=2.5).iloc[0].media_kbps == pytest.approx(56.0 / 1.5)


def test_call_on_time_by_hand():
    """A 60 s call of 30 fps has 1800 frames: 18 late frames of a short window cost 1 point; a
    window longer than the call is its own call (3600 frames, 36 late = 1 %). Monotone in the late
    frames."""
    assert A.call_on_time(18, 40) == pytest.approx(99.0)
    assert A.call_on_time(36, 3600) == pytest.approx(99.0)
    v = A.call_on_time(np.arange(0, 1801, 100), 45)
    assert (np.diff(v) < 0).all() and v[0] == 100.0 and v[-1] == 0.0


def test_on_time_gain_is_paired_and_ranked_by_the_audio_rule():
    """Per replication the mitigation's call_on_time_pct minus DropTail's, mean over workloads:
    FQ-CoDel gains (99 − 90 + 98 − 94) / 2 = 6.5 points in every replication (rank 1), RED loses a
    point in replication 0 and gains one in 1 (interval contains 0: DropTail's rank); the media
    rate change is against DropTail's run of the same replication."""
    rows = []
    for rep in range(2):
        for wl, base, x in (("video + bulk", 90.0, 99.0), ("video + mixed", 94.0, 98.0)):
            for m, ot, kbps in ((mit.BASELINE, base, 400.0), ("FQ-CoDel", x, 800.0), ("RED", base + (-1.0 if rep == 0 else 1.0), 400.0)):
                rows.append({"link": "fixed", "workload": wl, "replication": rep, "mitigation": m, "run_id": len(rows),
                             "call_on_time_pct": ot, "frame_delay_p95_ms": 100.0, "media_kbps": kbps, "goodput_bps": 1e6,
                             "owd_p50_ms": 50.0, "frame_delay_p50_ms": 50.0, "frames_complete": 1.0, "late_frames": 0,
                             "freezes": 0, "freeze_s": 0.0})
    x = A.paired(pd.DataFrame(rows))
    assert (x[x.mitigation == mit.BASELINE].on_time_gain == 0).all()
    assert list(A.gains_per_replication(x, "FQ-CoDel")) == [6.5, 6.5]
    assert list(A.gains_per_replication(x, "RED")) == [-1.0, 1.0]
    assert np.allclose(x[x.mitigation == "FQ-CoDel"].rate_change_pct, 100.0)
    rk, pairs = A.ranking(x)
    r = rk.set_index("mitigation")
    assert r.loc["FQ-CoDel", "rank"] == 1 and r.loc["FQ-CoDel", "on_time_gain"] == 6.5
    assert r.loc["RED", "rank"] == r.loc[mit.BASELINE, "rank"] == 2
    assert len(pairs) == 6


def test_same_rescue_finding_reads_the_on_time_share():
    """The audio's rank-1 mitigations rescue the call when at least 95 % of its frames are on time:
    both (98, 96) agrees; one of them at 94 % partly; both below disagrees."""
    audio = pd.DataFrame({"link": ["fixed"] * 3, "mitigation": ["FQ-CoDel", "CAKE", "DropTail"], "rank": pd.array([1, 1, 3], dtype="Int64")})
    v = lambda a, b: pd.DataFrame({"link": ["fixed"] * 3, "mitigation": ["FQ-CoDel", "CAKE", "DropTail"],  # noqa: E731
                                   "rank": pd.array([1, 2, 3], dtype="Int64"), "call_on_time_pct": [a, b, 60.0]})
    got = [A._same_rescue(v(a, b), audio, "fixed") for a, b in ((98.0, 96.0), (98.0, 94.0), (90.0, 94.0))]
    assert [f.verdict for f in got] == ["agrees", "partly", "disagrees"]
    assert "CAKE: 96.0 % on time (on-time rank 2); DropTail: 60.0 %" in got[0].measured
