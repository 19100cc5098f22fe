"""`jitterlab compare`'s per-media-flow rows (rate, OWD median and p90), on hand-made tables: what
a reader of an adaptive call compares between the backends (no root needed)."""
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jitterlab.compare import per_flow, summary


def _res(tcp: bool) -> SimpleNamespace:
    # audio (flow 0): 1000 B every 100 ms for 1 s, OWD 10, 20, ..., 100 ms (10 packets, none lost);
    # video (flow 1): 4 packets of 1200 B at 0, 0.3, 0.6, 0.9 s, OWD 50 ms, the one at 0.6 s lost
    a_send = np.arange(10) * 100_000_000
    a = pd.DataFrame({"flow_id": 0, "seq": np.arange(10), "send_ns": a_send, "recv_ns": pd.array(a_send + (np.arange(10) + 1) * 10_000_000, dtype="Int64"),
                      "size": 1000})
    v_send = np.array([0, 300, 600, 900]) * 1_000_000
    v = pd.DataFrame({"flow_id": 1, "seq": np.arange(4), "send_ns": v_send, "recv_ns": pd.array([50_000_000, 350_000_000, None, 950_000_000], dtype="Int64"),
                      "size": 1200})
    runs = pd.DataFrame({"tcp_start_ns": [300_000_000 if tcp else None], "tcp_end_ns": [600_000_000 if tcp else None]})
    tcp_flows = pd.DataFrame({"end_ns": [600_000_000], "syn_ns": [300_000_000], "bytes": [1000], "retransmits": [0]}) if tcp else pd.DataFrame()
    flows = pd.DataFrame({"flow_id": [0, 1, 2], "name": ["audio", "video", "video.feedback"]})
    return SimpleNamespace(media_packets=pd.concat([a, v], ignore_index=True), runs=runs, tcp_flows=tcp_flows, flows=flows)


def test_rates_and_delays_per_media_flow():
    out = per_flow(_res(tcp=False))
    # audio: 10 × 8000 bit over its sending span 0 .. 0.9 s
    assert out["audio.rate_kbps"] == pytest.approx(80_000 / 0.9 / 1e3)
    # OWDs 10 .. 100 ms: median 55 ms, p90 (numpy's linear interpolation) 91 ms
    assert out["audio.owd_p50_ms"] == pytest.approx(55.0)
    assert out["audio.owd_p90_ms"] == pytest.approx(91.0)
    # video: 3 of 4 packets arrived, 3 × 9600 bit over 0.9 s; every OWD 50 ms
    assert out["video.rate_kbps"] == pytest.approx(28_800 / 0.9 / 1e3)
    assert out["video.owd_p50_ms"] == out["video.owd_p90_ms"] == pytest.approx(50.0)
    assert not any(k.startswith("video.tcp") for k in out)


def test_the_tcp_window_rows_and_the_summary():
    out = per_flow(_res(tcp=True))
    # [0.3, 0.6] s: audio packets sent at 0.3, 0.4, 0.5, 0.6 s (OWD 40 .. 70 ms), video at 0.3
    # (50 ms) and 0.6 s (lost)
    assert out["audio.tcp.rate_kbps"] == pytest.approx(4 * 8000 / 0.3 / 1e3)
    assert out["audio.tcp.owd_p50_ms"] == pytest.approx(55.0)
    assert out["video.tcp.rate_kbps"] == pytest.approx(9600 / 0.3 / 1e3)
    s = summary(_res(tcp=True))
    assert s["video.tcp.owd_p90_ms"] == pytest.approx(50.0) and s["owd_p50_ms"] == pytest.approx(55.0)
