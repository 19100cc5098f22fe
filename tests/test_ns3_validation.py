"""jitterlab against ns-3 (the `ns3` wheel from PyPI, 3.44) on the dumbbells of
validation/ns3/compare.py: bulk TCP and an 80-byte audio stream through CoDel, FQ-CoDel, PIE,
FQ-PIE, COBALT (CAKE with one queue), FQ-COBALT (CAKE without its shaper, one queue per flow), and
DCTCP behind RED marking; BBR behind a 100-packet FIFO.
Bounds: aggregate TCP goodput within 5 %; audio OWD median and 90th percentile within 5 % plus
1.202 ms — ns-3's point-to-point device queue holds one packet beside the one on the wire, out of
the queue disc's sight (the AQM examples of ns-3 set it to 1 packet, its minimum), so every audio
packet in ns-3 can wait up to one more 1502-byte serialisation at 10 Mbit/s than in jitterlab,
where the link takes packets from the queue disc only when it is free. Skipped, with the reason,
when the wheel or g++ is missing (run-tests installs both)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("ns3_compare", ROOT / "validation" / "ns3" / "compare.py")
cmp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cmp)

pytestmark = pytest.mark.skipif(cmp.why_unavailable() is not None, reason=f"ns-3 cross-check: {cmp.why_unavailable()}")

DURATION = 30.0
DEVICE_QUEUE_MS = 1502 * 8 / 10e6 * 1e3  # one PPP frame at the 10 Mbit/s bottleneck


@pytest.fixture(scope="module")
def bins():
    return cmp.build_ns3(), cmp.build_jitterlab()


#: ns-3 3.44's TcpCubic counts its Reno-friendly window as Linux's bictcp_update does (m_ackCnt,
#: m_tcpCwnd, (cwnd·15) >> 3), and so does the simulator since issue 26; with RFC 9438's rule the
#: simulator's audio p90 here was 1.8 ms below ns-3's (inside the bound), with Linux's it is 3.2 ms
#: below. The RFC rule's faster probing had hidden a gap whose cause is not found (docs/validation-ns3.md).
CUBIC2_P90 = "audio OWD p90 3.2 ms below ns-3's with Linux's Reno-friendly rule on both sides (issue 26); cause not found"


@pytest.mark.parametrize("name", ["codel", pytest.param("codel-cubic2", marks=pytest.mark.xfail(reason=CUBIC2_P90, strict=True)),
                                  "fq_codel", "pie", "fq_pie", "cobalt", "cake", "dctcp"])
def test_aqm_matches_ns3(bins, name):
    r = cmp.run_pair(*bins, name, DURATION)
    n, j = r["ns3"], r["jitterlab"]
    assert abs(j["goodput_bps"] - n["goodput_bps"]) / n["goodput_bps"] < 0.05, r
    for k in ("owd_p50_ms", "owd_p90_ms"):
        assert abs(j[k] - n[k]) <= 0.05 * n[k] + DEVICE_QUEUE_MS, (k, r)
    # The AQM acts on both sides (drop and mark counts themselves differ: docs/validation.md).
    key = "marks" if cmp.SCENARIOS[name][6] else "drops"
    assert n[key] > 0 and j[key] > 0


def test_bbr_goodput_matches_ns3(bins):
    # Only goodput: ns-3's TcpBbr keeps about one BDP queued here where the simulator's keeps a
    # few packets, as real Linux BBR does on the testbed (docs/validation.md, "BBR").
    r = cmp.run_pair(*bins, "bbr", DURATION)
    assert abs(r["jitterlab"]["goodput_bps"] - r["ns3"]["goodput_bps"]) / r["ns3"]["goodput_bps"] < 0.05, r
