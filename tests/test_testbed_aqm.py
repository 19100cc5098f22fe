"""Real Linux TCP in front of the simulator's own queue disciplines (root only; about 15 s per
discipline): the testbed's userspace link runs every discipline of the simulator's registry but
drop-tail (CoDel, FQ-CoDel, PIE, RED, and CAKE, FQ-PIE, DualPI2 where built) on a kernel that has
none of them. Physics the test asserts, with margins load cannot break: a CUBIC download
through a 4 Mbit/s link with a 500-packet pfifo keeps the audio's median OWD above 500 ms
(test_testbed_runs.py::test_bulk_download_fills_the_buffer: 500 packets are 1.5 s at 4 Mbit/s);
every AQM keeps it below 100 ms (their targets are 5-20 ms of queueing, or 5-15 packets = 15-45 ms
for RED, over a 15 ms path), and it does so by dropping: its counters show drops, and the download
still completes."""
import numpy as np
import pytest

import conftest
from conftest import ROOT

_reason = conftest.testbed_skip_reason()
pytestmark = pytest.mark.skipif(_reason is not None, reason=_reason or "")

SC = ROOT / "scenarios" / "testbed" / "audio-bulk.toml"
# an AQM bites within a second; 4 MB from 1 s take ~8 s at 4 Mbit/s
RUN = {"traffic[1].size": "4MB", "traffic[1].start": "1s", "duration": "12s"}
# the same 500-packet buffer for every discipline; RED with the rwnd preset's parameters; CAKE's
# buffer is a memory limit (500 x 1500 B)
TABLES = {
    "red": {"kind": "red", "limit": "500pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": True},
    "cake": {"kind": "cake", "memlimit": "750kB"},
}


def _aqms() -> list[str]:
    """Every discipline of the simulator's registry but drop-tail (the kernel's pfifo): what h-cake
    and h-l4s register is tested the same way as soon as it is built in."""
    from jitterlab import _native

    return [k for k in _native.sim_registry()["queues"] if k != "droptail"]


def _overlap_owd_ms(res) -> np.ndarray:
    m, r = res.media_packets, res.runs.iloc[0]
    w = m[(m.send_ns >= r.tcp_start_ns) & (m.send_ns <= r.tcp_end_ns) & m.recv_ns.notna()]
    return ((w.recv_ns - w.send_ns).astype("int64") / 1e6).to_numpy()


@pytest.mark.parametrize("kind", _aqms())
def test_cubic_download_through_the_simulators_aqm(kind, tmp_path):
    from jitterlab import testbed

    res = testbed.run(SC, out=tmp_path, overrides={**RUN, "access.down_queue": TABLES.get(kind, {"kind": kind, "limit": "500pkt"})})
    t = res.tcp_flows
    assert t.cc.iloc[0] == "cubic" and t.bytes.iloc[0] == 4_000_000, t
    owd = _overlap_owd_ms(res)
    assert len(owd) > 200
    assert np.median(owd) < 100, (kind, np.median(owd))
    ch = res.channels.set_index("name").loc["bottleneck"]
    assert ch.qdisc == f"userspace-{kind}"
    # it controls the queue by dropping (Linux's sockets here are not ECN-capable)
    assert ch.dropped_pkts > 0, ch
    dl = {c["name"]: c for c in res.testbed["delay_line"]["channels"]}["bottleneck"]
    assert dl["qdisc"] == kind and dl["arrived"] == dl["dequeued"] + dl["dropped"], dl
