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
    # on the bound is not below it (the rule is strict, as the simulator's rows)
    at = dict(row, testbed_qdelay_median_ms=100.0, testbed_util_2_5=0.60)
    assert [f.verdict for f in T.findings(pd.DataFrame([at]))][2:] == ["disagrees", "disagrees"]


def _doc_script():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("rmcat_testbed_doc", Path(__file__).resolve().parents[1] / "scripts" / "rmcat_testbed_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_doc_table_is_the_stored_run_and_its_sim_side_this_builds(tmp_path):
    """docs/media.md's §5.1/§5.6 testbed table is the stored run (docs/data/rmcat-testbed.csv)
    rendered, and every simulator cell in it is what this build gives for the row's scenario (the
    median of its SIM_REPS runs); the testbed's cells are that day's measurement."""
    mod = _doc_script()
    df = pd.read_csv(mod.DATA)
    assert mod.doc_block(mod.DOC.read_text()) == mod.render(df), "regenerate: python scripts/rmcat_testbed_doc.py docs/data/rmcat-testbed.csv --doc"
    by = {(c, cc, q): sc for c, cc, q, sc in T.cases(tmp_path)}
    ran = df[df.status == "ran"]
    assert len(ran) >= 6, ran[["case", "cc", "queue", "status"]]
    for _, r in ran.iterrows():
        case = str(r.case)
        sc = by[(case, r.cc, r.queue)]
        ss = [sim.simulate(sc, seed=rmcat.SEED + k, run_id=k) for k in range(T.SIM_REPS)]
        per = T.per_run(case, T.tables(ss, r.cc, r.queue))
        for c in T.COLUMNS[case]:
            want = float(np.median(per[c]))
            assert (np.isnan(want) and np.isnan(r[f"sim_{c}"])) or r[f"sim_{c}"] == pytest.approx(want, rel=1e-9), (case, r.cc, r.queue, c)


def test_reproduce_testbed_hands_rmcat_its_section(tmp_path, monkeypatch):
    """`jitterlab reproduce rmcat --testbed` runs the study with rmcat_testbed.section added to its
    report (and plain `reproduce rmcat` with none), without running anything here."""
    import argparse

    from jitterlab.commands import reproduce

    got = []
    monkeypatch.setattr(rmcat, "run", lambda out, **kw: got.append(kw) or (tmp_path / "report.html"))
    ap = argparse.ArgumentParser()
    reproduce.add_parser(ap.add_subparsers(dest="cmd"))
    for argv, want in ((["rmcat", "--testbed"], [T.section]), (["rmcat"], None)):
        args = ap.parse_args(["reproduce", *argv, "--out", str(tmp_path), "--quiet"])
        reproduce.run(args)
        assert got[-1].get("sections") == want, got[-1]
