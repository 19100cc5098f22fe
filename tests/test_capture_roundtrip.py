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


def test_simulator_tcp_flows_round_trip_through_analyze(tmp_path):
    """TCP half: a run with a web page (3 flows, IW10, losses in a 30-packet buffer) and a bulk
    download, exported at the server and the client, gives back the simulator's tcp_flows."""
    sc = {
        "duration": "20s",
        "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "4Mbit", "down_delay": "10ms", "up_rate": "1Mbit",
                   "down_queue": {"kind": "droptail", "limit": "30pkt"}},
        "traffic": [{"kind": "audio", "from": "server", "to": "client"},
                    {"kind": "web", "from": "server", "to": "client", "size": "372kB", "flows": 3, "iw": 10, "start": "2s"},
                    {"kind": "bulk", "from": "server", "to": "client", "size": "1MB", "start": "5s"}],
        "output": {"pcap": ["server", "client"]},
    }
    res = jitterlab.simulate(sc, seed=3, pcap_dir=tmp_path)
    t = analyze(res.pcap["server"], res.pcap["client"], t0_ns=res.pcap_epoch_ns)
    want = res.tcp_flows
    assert want.retransmits.sum() > 0, "the scenario should make TCP retransmit"
    got = t["tcp_flows"]
    # the simulator's data sender uses port 32768 + flow id (crates/sim/src/tcp/agent.rs)
    got = got.assign(flow_id=got.sport - 32768).sort_values("flow_id").reset_index(drop=True)
    cols = ["flow_id", "iw", "syn_ns", "first_data_ns", "end_ns", "bytes", "segments_sent", "retransmits", "ecn_marks"]
    want = want[cols].sort_values("flow_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(got[cols].astype(want.dtypes.to_dict()), want)
    for c in ("tcp_start_ns", "tcp_end_ns"):
        assert int(t["runs"][c].iloc[0]) == int(res.runs[c].iloc[0])
