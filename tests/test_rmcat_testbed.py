"""`jitterlab reproduce rmcat --testbed`'s column (presets/rmcat_testbed.py): the RFC 8867 cases in
the [access] form the testbed builds are the simulator's cases, every row plans on the testbed, and
the comparison and the §5.1 rules on a testbed run are computed as stated. The testbed run itself
is in test_rmcat_testbed_run (real time, root)."""
import numpy as np
import pandas as pd
import pytest

from jitterlab import sim
from jitterlab.presets import rmcat
from jitterlab.presets import rmcat_testbed as T


def _short(sc, s="25s"):
    sc = dict(sc)
    sc["duration"] = s
    return sc


@pytest.mark.parametrize("case", ["5.1", "5.6"])
def test_access_form_is_the_same_path(tmp_path, case):
    """The [access] form gives the simulator the very packets of the case's [links.*] form (25 s,
    seed 3): the same hops, delays, queue and capacity. (§5.6's CUBIC loses its fixed window in
    the testbed's form, which moves its ACKs a little; compared here with the window put back.)"""
    if case == "5.1":
        sc = rmcat.scenario_51()
        p = tmp_path / "t.trace"
        p.write_text(sc["links"]["bottleneck"]["trace"]["data"])
        acc = T.access_form(sc, str(p))
    else:
        sc = rmcat.scenario_56()
        acc = T.access_form(sc)
        assert "rcvbuf" not in acc["traffic"][1] and sc["traffic"][1]["rcvbuf"] == "1MB"
        acc["traffic"][1]["rcvbuf"] = "1MB"
    assert acc["access"]["down_delay"] == rmcat.DELAY and acc["access"]["core_rate"] == "100Mbit"
    a = sim.simulate(_short(sc), seed=3).media_packets
    b = sim.simulate(_short(acc), seed=3).media_packets
    assert len(a) > 1000
    cols = ["flow_id", "seq", "send_ns", "recv_ns", "size"]
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))


def test_every_row_plans_on_the_testbed(tmp_path):
    """3 controllers × (§5.1 + §5.6 on DropTail and FQ-CoDel) = 9 rows, each one the testbed's
    planner accepts (no root needed to plan), §5.1 over the step trace written beside them."""
    from jitterlab.presets import mitigations_testbed

    rows = T.cases(tmp_path)
    assert [(c, cc, q) for c, cc, q, _ in rows] == (
        [("5.1", cc, "droptail") for cc in rmcat.CONTROLLERS]
        + [("5.6", cc, q) for q in T.QUEUES for cc in rmcat.CONTROLLERS])
    assert (tmp_path / "rmcat-5.1.trace").read_text() == rmcat.scenario_51()["links"]["bottleneck"]["trace"]["data"]
    for c, cc, q, sc in rows:
        assert sc["traffic"][0]["cc"] == cc
        assert mitigations_testbed.why_not(sc) is None, (c, cc, q, mitigations_testbed.why_not(sc))
    fq = [sc for c, _, q, sc in rows if c == "5.6" and q == "fq_codel"][0]
    assert fq["access"]["down_queue"]["kind"] == "fq_codel"


def test_compare_and_findings_by_hand():
    sim_runs = pd.DataFrame({"conv_40s": [4.0, 5.0, 9.0], "conv_60s": [1.0, 2.0, 3.0], "conv_80s": [6.0, 7.0, 8.0],
                             "qdelay_median_ms": [10.0, 20.0, 30.0], "util_2_5": [0.6, 0.62, 0.64], "frame_delay_p95_ms": [100.0] * 3})
    tb = pd.DataFrame({"conv_40s": [6.0], "conv_60s": [np.nan], "conv_80s": [11.0], "qdelay_median_ms": [25.0],
                       "util_2_5": [0.59], "frame_delay_p95_ms": [150.0]})
    row = T.compare("5.1", "gcc", "droptail", sim_runs, tb)
    # medians 5 / 2 / 7 / 20 / 0.62 / 100; testbed − sim over sim
    assert row["sim_conv_40s"] == 5.0 and row["testbed_conv_40s"] == 6.0 and row["diff_conv_40s_pct"] == pytest.approx(20.0)
    assert row["diff_qdelay_median_ms_pct"] == pytest.approx(25.0) and row["diff_frame_delay_p95_ms_pct"] == pytest.approx(50.0)
    fs = T.findings(pd.DataFrame([row]))
    # rises: max(6, 11) = 11 s ≥ 10 → disagrees; the drop never converged (NaN → ∞) → disagrees;
    # 25 ms < 100 → agrees; 0.59 < 0.60 → disagrees
    assert [f.verdict for f in fs] == ["disagrees", "disagrees", "agrees", "disagrees"]
    assert fs[0].measured == "11.0 s" and fs[1].measured == "inf s" and fs[2].measured == "25 ms"
