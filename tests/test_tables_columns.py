"""Every column of docs/tables.md's media_packets, tcp_flows and runs means one thing, checked on a
run that has them all: a finished and an unfinished sized transfer, an FTP flow without a size,
drops in a small buffer, and media lost on the link."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jitterlab

MSS = 1448  # payload per segment with timestamps (docs/tcp.md)
SC = {
    "duration": "6s",
    "access": {"core_rate": "100Mbit", "core_delay": "5ms", "down_rate": "2Mbit", "down_delay": "10ms",
               "down_queue": {"kind": "droptail", "limit": "20pkt"}, "down_loss": 0.02,
               "up_rate": "2Mbit", "up_delay": "10ms"},
    "traffic": [
        {"kind": "audio", "name": "call", "from": "server", "to": "client"},
        {"kind": "bulk", "name": "small", "from": "server", "to": "client", "size": "60kB", "start": "1s"},
        {"kind": "bulk", "name": "huge", "from": "server", "to": "client", "size": "50MB", "start": "1s"},
        {"kind": "ftp", "name": "ftp", "from": "server", "to": "client", "start": "2s"},
    ],
}


@pytest.fixture(scope="module")
def run():
    return jitterlab.simulate(SC, seed=3)


def test_tcp_flows_columns(run):
    f = run.tcp_flows.set_index(run.flows.set_index("flow_id").loc[run.tcp_flows.flow_id, "name"].to_numpy())
    small, huge, ftp = f.loc["small"], f.loc["huge"], f.loc["ftp"]
    # size: the planned payload; null for FTP
    assert (small["size"], huge["size"]) == (60_000, 50_000_000) and pd.isna(ftp["size"])
    # finished: delivered = acknowledged = planned, and an end
    assert small.bytes == small.bytes_acked == 60_000 and not pd.isna(small.end_ns)
    # unfinished: what arrived (at most 2 Mbit/s over 5 s), no end
    for row in (huge, ftp):
        assert pd.isna(row.end_ns) and 0 < row.bytes_acked <= row.bytes <= 2e6 / 8 * 5
    assert huge.bytes < huge["size"]
    for _, r in f.iterrows():
        assert r.syn_ns <= r.first_data_ns and (pd.isna(r.end_ns) or r.first_data_ns < r.end_ns)
        # every acknowledged byte was sent in a segment; retransmissions are among the segments sent
        assert r.segments_sent * MSS >= r.bytes_acked and r.retransmits <= r.segments_sent
        assert r.ecn_marks == 0 and r.timeouts >= 0  # no ECN in this scenario
    # drops: segments the network dropped; with a 20-packet buffer and 2 % link loss there are some,
    # and a finished transfer resent each (data and FIN by a retransmission, the SYN after a timeout)
    assert f.drops.sum() > 0 and small.retransmits + small.timeouts >= small.drops > 0
    # drops + delivered + in flight: every drop of the flow is in the flows table's accounting
    fl = run.flows.set_index("name")
    for name in ("small", "huge", "ftp"):
        assert fl.loc[name, "dropped_pkts"] == f.loc[name, "drops"]


def test_media_packets_columns(run):
    m = run.media_packets
    assert (m["size"] == 80).all() and not m.ce.any()
    lost = m.recv_ns.isna()
    dropped = m.lost_where.notna()
    # dropped on the link (2 %) or in the buffer: lost_where names the channel; never a received packet
    assert dropped.sum() > 0 and not (dropped & ~lost).any()
    assert set(m.lost_where.dropna()) <= set(run.channels.name)
    # not received and not dropped: still in flight when the run ended (behind a full 20-packet
    # buffer at 2 Mbit/s, 120 ms of queue + 15 ms of propagation)
    flying = m[lost & ~dropped]
    assert len(flying) and (flying.send_ns >= 6_000_000_000 - 200_000_000).all()
    ok = m[~lost]
    assert (ok.recv_ns > ok.send_ns).all() and (np.diff(m.seq.to_numpy()) == 1).all()


def test_runs_window_columns(run):
    r = run.runs.iloc[0]
    f = run.tcp_flows
    assert r.tcp_start_ns == f.syn_ns.min()
    # an unfinished flow ends with the run: tcp_end_ns is the run's end
    assert r.tcp_end_ns == r.end_ns == 6_000_000_000
    assert r.source == "sim" and r.seed == 3
