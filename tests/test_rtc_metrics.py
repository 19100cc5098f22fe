"""RFC 8868 metrics for adaptive media (jitterlab.rtc_metrics) on hand-made vectors, and the
adaptive tables of a simulated run."""
import math

import numpy as np
import pandas as pd
import pytest

from jitterlab import rtc_metrics as R
from jitterlab.sim import simulate

MS = 1_000_000


def _media(send_ms, recv_ms, size=1040, flow=1, run=0):
    n = len(send_ms)
    return pd.DataFrame({"run_id": [run] * n, "flow_id": [flow] * n, "seq": list(range(n)),
                         "send_ns": [int(s * MS) for s in send_ms],
                         "recv_ns": pd.array([None if r is None else int(r * MS) for r in recv_ms], dtype="Int64"),
                         "size": [size] * n})


def test_rate_bins_by_arrival_or_send_and_payload():
    # 4 packets of 1040 B sent at 0, 600, 1200, 1800 ms, received 100 ms later except the third
    m = _media([0, 600, 1200, 1800], [100, 700, None, 1900])
    r = R.media_rate(m, bin_s=1.0)
    assert r["t_s"].tolist() == [0.0, 1.0]
    assert r["rate_bps"].tolist() == [2 * 1040 * 8, 1040 * 8]
    s = R.media_rate(m, bin_s=1.0, by="send", wire=False)
    assert s["rate_bps"].tolist() == [2 * 1000 * 8, 2 * 1000 * 8]
    with pytest.raises(ValueError):
        R.media_rate(m, by="arrival")


def test_queueing_delay_is_owd_above_the_flows_minimum():
    # flow 1: OWD 50, 70, 20 ms → 30, 50, 0 above its 20 ms; flow 2 apart: 5, 25 → 0, 20
    m = pd.concat([_media([0, 20, 40], [50, 90, 60]), _media([0, 20], [5, 45], flow=2)])
    q = R.queueing_delay(m)
    assert q[q.flow_id == 1]["qdelay_ns"].tolist() == [30 * MS, 50 * MS, 0]
    assert q[q.flow_id == 2]["qdelay_ns"].tolist() == [0, 20 * MS]


def test_utilisation_integrates_the_capacity_steps():
    # 1 Mbit/s until 1 s, then 2 Mbit/s: [0.5, 1.5) s carries 0.5 + 1.0 = 1.5 Mbit of capacity;
    # 100 packets of 1250 B (= 1 Mbit) received in it → 2/3
    steps = [(0.0, 1e6), (1.0, 2e6)]
    m = _media([500 + 10 * i for i in range(100)], [501 + 10 * i for i in range(100)], size=1250)
    assert R.utilisation(m, steps, 0.5, 1.5) == pytest.approx(1e6 / 1.5e6)
    assert R.capacity_at(steps, [0.0, 0.99, 1.0, 5.0]).tolist() == [1e6, 1e6, 2e6, 2e6]


def test_frame_delay_needs_every_packet():
    # frame 0: packets 0, 1 (arrive 50, 60 ms) → complete at 60, delay 60; frame 1: packets 2, 3,
    # packet 3 lost → incomplete; frame 2: packet 4 at 120 ms, captured at 66 → 54 ms
    m = _media([0, 1, 33, 34, 66], [50, 60, 80, None, 120])
    frames = pd.DataFrame({"run_id": [0, 0, 0], "flow_id": [1, 1, 1], "frame": [0, 1, 2],
                           "capture_ns": [0, 33 * MS, 66 * MS], "bytes": [2000, 2000, 1000],
                           "packets": [2, 2, 1], "first_seq": [0, 2, 4], "key": [True, False, False]})
    d = R.frame_delays(frames, m)
    assert d["complete_ns"].tolist()[0] == 60 * MS and pd.isna(d["complete_ns"].iloc[1])
    assert d["frame_delay_ns"].tolist()[0] == 60 * MS and d["frame_delay_ns"].tolist()[2] == 54 * MS


def test_freezes_follow_the_webrtc_stats_rule():
    # frames every 40 ms; frame 10 lost; frames 20..22 shown 400 ms late. Intervals: 40 ms, one
    # of 80 ms (the lost frame: < max(3·40, 40+150) = 190 ms, no freeze), one of 440 ms (freeze)
    n = 30
    cap = [40 * i for i in range(n)]
    rec = [c + 10 for c in cap]
    rec[10] = None
    for i in range(20, n):
        rec[i] += 400
    m = _media(cap, rec)
    frames = pd.DataFrame({"run_id": [0] * n, "flow_id": [1] * n, "frame": list(range(n)), "capture_ns": [c * MS for c in cap],
                           "bytes": [1000] * n, "packets": [1] * n, "first_seq": list(range(n)), "key": [False] * n})
    f = R.freezes(frames, m)
    assert f["frames_shown"].tolist() == [n - 1]
    assert f["freeze_count"].tolist() == [1]
    assert f["freeze_s"].tolist() == [pytest.approx(0.440)]


def test_convergence_rule():
    # sending 1000 B payload (1040 B on the wire) every 10 ms = 0.8 Mbit/s payload from 0 to 5 s,
    # then every 5 ms (1.6 Mbit/s) from 5 s. Rise at 5 s to 2 Mbit/s, max_rate 1.5 Mbit/s: 80 % of
    # 1.5 = 1.2 Mbit/s of payload over the last second: 0.8·(1−x) + 1.6·x ≥ 1.2 ⇔ x ≥ 0.5 s
    send = [10 * i for i in range(500)] + [5000 + 5 * i for i in range(400)]
    m = _media(send, send)
    assert R.convergence_time(m, 1, 5.0, 2e6, True, 1.5e6, 10) == pytest.approx(0.5)
    # a fall to 1 Mbit/s is met at once (0.832 Mbit/s on the wire ≤ 1 Mbit/s); to 0.5 never
    assert R.convergence_time(m, 1, 3.0, 1e6, False, 1.5e6, 1) == pytest.approx(0.1)
    assert math.isnan(R.convergence_time(m, 1, 3.0, 0.5e6, False, 1.5e6, 1))


def test_jain_index():
    assert R.jain_index([1, 1, 1]) == 1.0
    assert R.jain_index([3, 0, 0]) == pytest.approx(1 / 3)
    # (1+2+3)² / (3·14) = 36/42
    assert R.jain_index([1, 2, 3]) == pytest.approx(36 / 42)
    assert math.isnan(R.jain_index([]))


def test_simulated_adaptive_run_fills_the_tables():
    sc = {"duration": "5s", "links": {"l": {"from": "a", "to": "b", "rate": "2Mbit", "delay": "20ms"}},
          "traffic": [{"kind": "video", "from": "a", "to": "b", "cc": "nada", "feedback": "twcc"}]}
    r = simulate(sc, seed=1)
    fr, se = r.rtc_frames, r.rtc_series
    # 30 fps for 5 s: frames k = 0..150 (the 150th at 4.99999995 s)
    assert len(fr) == 151 and fr["frame"].tolist() == list(range(151))
    # every packet of every frame is a media_packets row of the flow (the tail may still wait)
    assert fr["packets"].sum() - len(r.media_packets) in range(0, 10)
    assert se["target_bps"].between(150_000, 1_500_000).all()
    assert set(r.flows["kind"]) == {"video", "feedback"}
    d = R.frame_delays(fr, r.media_packets)
    # on an idle 2 Mbit/s path a complete frame takes at least the 20 ms propagation delay
    assert (d["frame_delay_ns"].dropna() >= 20 * MS).all()
    # a CBR run keeps the tables empty
    cbr = simulate({**sc, "traffic": [{"kind": "video", "from": "a", "to": "b", "rate": "1Mbit"}]}, seed=1)
    assert len(cbr.rtc_frames) == 0 and len(cbr.rtc_series) == 0
