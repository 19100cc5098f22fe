"""The simulator's BBR against real Linux BBR on the namespace testbed (root only; about 30 s).

docs/validation.md ("BBR against real Linux BBR"): on the 4 Mbit/s, 500-packet path of
`scenarios/testbed/audio-bulk.toml` the goodputs agree within 5 % (the simulator is ~2 % faster:
1460 B of payload per 1500 B packet against Linux's 1448 B per 1514 B frame), and both keep the
audio OWD far below what the 500-packet buffer allows. The audio OWD percentiles do NOT agree
within 15 % (Linux's max filter keeps noisy high rate samples and it queues more); that miss is
documented, not asserted.
"""
import pytest

from conftest import ROOT, testbed_skip_reason


_reason = testbed_skip_reason()
pytestmark = pytest.mark.skipif(_reason is not None, reason=_reason or "")


def test_bbr_goodput_matches_linux_bbr():
    from jitterlab.compare import compare

    df = compare(ROOT / "scenarios" / "testbed" / "audio-bulk.toml", seed=1, cc="bbr")
    assert not df.attrs["errors"], df.attrs["errors"]
    g = df.loc["tcp_goodput_mbps"]
    # 3 MB at 4 Mbit/s: both near the link's payload rate, within 5 % of each other.
    assert abs(g["diff_pct"]) <= 5.0, df
    assert 3.5 < g["sim"] < 4.0 and 3.5 < g["testbed"] < 4.0, df
    # 500 packets at 4 Mbit/s are 1.5 s of queue; BBR (either) keeps the audio median within
    # 15.2 ms of path delay plus about 2 BDP (2 x 11 packets x 3 ms).
    for side in ("sim", "testbed"):
        assert df.loc["owd_p50_ms", side] < 15.2 + 66.0, df
