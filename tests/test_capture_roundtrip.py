"""Round trip, media half: a simulated run's media_packets written as a sender/receiver capture
pair (what the simulator's pcap tap will do at the media source and sink) and read back by
`analyze` gives the same table. The TCP half waits for the simulator's TCP and its pcap taps
(see docs/capture.md, "Round trip with the simulator")."""
from __future__ import annotations

import pandas as pd
import pytest

import jitterlab
from jitterlab.capture import analyze, media_to_pcap

EPOCH = 1_700_000_000_000_000_000

SCENARIO = {
    "name": "roundtrip",
    "duration": "6s",
    "links": {
        "l": {
            "from": "a",
            "to": "b",
            "rate": "2Mbit",
            "delay": "20ms",
            # Random per-packet delay that may reorder, and random loss: the capture side must
            # recover both from timestamps alone.
            "jitter": {"dist": "exponential", "mean": "15ms"},
            "reorder": True,
            "loss": 0.03,
        }
    },
    "traffic": [
        {"kind": "audio", "from": "a", "to": "b"},
        {"kind": "audio", "from": "a", "to": "b", "name": "audio_b"},
    ],
}


@pytest.fixture(scope="module")
def sim():
    return jitterlab.simulate(SCENARIO, seed=7)


def test_simulated_media_round_trips_through_pcap(sim, tmp_path):
    want = sim.media_packets
    assert want.recv_ns.isna().sum() > 0, "the scenario should lose packets"
    s, r = tmp_path / "s.pcap", tmp_path / "r.pcap"
    media_to_pcap(want, s, r, t0_epoch_ns=EPOCH)
    t = analyze(s, r, t0_ns=EPOCH)
    got = t["media_packets"]
    # Capture flow ids follow the order of first packets; map them back through the SSRC
    # (media_to_pcap uses ssrc_base + simulator flow id, as the tap should).
    ssrc_to_sim = {int(f.ssrc): int(f.ssrc) - 0x4A4C0000 for f in t["media_flows"].itertuples()}
    got = got.assign(flow_id=got.flow_id.map({int(f.flow_id): ssrc_to_sim[int(f.ssrc)] for f in t["media_flows"].itertuples()}))
    cols = ["flow_id", "seq", "send_ns", "recv_ns", "size", "ce"]
    key = ["flow_id", "seq"]
    pd.testing.assert_frame_equal(
        got[cols].sort_values(key).reset_index(drop=True),
        want[cols].sort_values(key).reset_index(drop=True),
    )
    run = t["runs"].iloc[0]
    assert run.media_lost == int(want.recv_ns.isna().sum())
    # Reordering as the capture sees it equals what the simulator's table implies.
    rx = want.dropna(subset=["recv_ns"]).sort_values("recv_ns", kind="stable")
    expected_reordered = sum(int((g.seq < g.seq.cummax().shift(fill_value=-1)).sum()) for _, g in rx.groupby("flow_id"))
    assert run.reordered == expected_reordered


def test_simulator_taps_round_trip_through_analyze(tmp_path):
    """The simulator's own pcap export (output.pcap at the sender and receiver hosts) read back by
    analyze gives the simulator's media_packets, loss, reordering and CE included."""
    sc = dict(SCENARIO, output={"pcap": ["a", "b"]})
    res = jitterlab.simulate(sc, seed=11, pcap_dir=tmp_path)
    assert set(res.pcap) == {"a", "b"}
    t = analyze(res.pcap["a"], res.pcap["b"], t0_ns=res.pcap_epoch_ns)
    got = t["media_packets"]
    m = {int(f.flow_id): int(f.ssrc) - 0x4A4C0000 for f in t["media_flows"].itertuples()}
    got = got.assign(flow_id=got.flow_id.map(m))
    cols = ["flow_id", "seq", "send_ns", "recv_ns", "size", "ce"]
    want = res.media_packets[cols].sort_values(["flow_id", "seq"]).reset_index(drop=True)
    got = got[cols].sort_values(["flow_id", "seq"]).reset_index(drop=True)
    assert want.recv_ns.isna().sum() > 0
    pd.testing.assert_frame_equal(got.astype(want.dtypes.to_dict()), want)
