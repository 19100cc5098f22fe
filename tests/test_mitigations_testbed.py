"""`reproduce mitigations --testbed`'s column (presets/mitigations_testbed.py): each backend's mean
over its runs with a Student-t interval and the seed-paired difference, computed as stated, and
docs/mitigations.md's stored run whose simulator side is this build's."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jitterlab import scenario as scn
from jitterlab import sim
from jitterlab.presets import mitigations_catalog as mit
from jitterlab.presets import mitigations_testbed as T
from jitterlab.presets import pam2013

ROOT = Path(__file__).resolve().parents[1]


def _run(p50, gp=3.0):
    return {"owd_p50_ms": p50, "owd_p99_ms": 50.0, "loss40_pct": 1.0, "mos_best": 4.0, "goodput_Mbps": gp, "retransmits": 40.0}


def test_compare_by_hand():
    """sim 10 / 12 / 14 ms: mean 12, s = 2, t(0.975, 2) = 4.303 → ± 4.303 · 2 / √3 = 4.969;
    testbed 11 / 14 / 17: differences by seed 1 / 2 / 3 → 2 ± 4.303 · 1 / √3 = 2.484; a testbed
    run without goodput (NaN) is left out of both its mean and its difference."""
    r = T.compare([_run(10.0), _run(12.0), _run(14.0)], [_run(11.0, math.nan), _run(14.0, 2.9), _run(17.0, 2.9)])
    assert (r["sim_owd_p50_ms"], r["testbed_owd_p50_ms"], r["diff_owd_p50_ms"]) == (12.0, 14.0, 2.0)
    assert r["sim_owd_p50_ms_lo"] == pytest.approx(12 - 4.969, abs=1e-3) and r["sim_owd_p50_ms_hi"] == pytest.approx(12 + 4.969, abs=1e-3)
    assert r["diff_owd_p50_ms_lo"] == pytest.approx(2 - 2.484, abs=1e-3) and r["diff_owd_p50_ms_hi"] == pytest.approx(2 + 2.484, abs=1e-3)
    assert r["testbed_goodput_Mbps"] == pytest.approx(2.9) and r["diff_goodput_Mbps"] == pytest.approx(-0.1)


def _doc_script():
    spec = importlib.util.spec_from_file_location("mitigations_testbed_doc", ROOT / "scripts" / "mitigations_testbed_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_doc_table_is_the_stored_run_and_its_sim_side_this_builds():
    """docs/mitigations.md's testbed table is the stored run (docs/data/mitigations-testbed.csv)
    rendered; every simulator mean in it is what this build gives for the row's scenario and seeds."""
    mod = _doc_script()
    df = pd.read_csv(mod.DATA)
    assert mod.doc_block(mod.DOC.read_text()) == mod.render(df), "regenerate: python scripts/mitigations_testbed_doc.py docs/data/mitigations-testbed.csv --doc"
    by = {m.name: m for m in mit.MITIGATIONS}
    ran = df[df.status == "ran"]
    assert len(ran) >= 8, ran[["link", "mitigation", "status"]]
    assert (ran.runs == T.TB_REPS).all(), "the kept run was made with another TB_REPS: rerun the column"
    for _, r in ran.iterrows():
        ln = pam2013.load_link(r.link)
        sc = scn.with_overrides(T.scenario(ln), by[r.mitigation].keys(ln))
        runs = [T._metrics(x.media_packets, x.runs, x.tcp_flows)
                for x in (sim.simulate(sc, seed=mit.SEED + k, run_id=k) for k in range(int(r.runs)))]
        for c in T.COLS:
            want = float(np.nanmean([x[c] for x in runs]))
            assert r[f"sim_{c}"] == pytest.approx(want, rel=1e-9, nan_ok=True), (r.link, r.mitigation, c)
        for c, v in T.sim_retransmits(sc).items():
            assert r[c] == pytest.approx(v, rel=1e-9), (r.link, r.mitigation, c)


def test_the_testbed_refuses_cake_autorate():
    """The cellular link's CAKE is set by cake-autorate, the simulator's controller (probes, timers):
    the testbed says so instead of running the CAKE at its base rate; the fixed shaper it can plan."""
    from jitterlab.presets import mitigations as study
    from jitterlab.testbed.plan import plan

    cell = pam2013.load_link("cellular")
    base = study.sweeps(1, cell, [mit.BASELINE])["bulk"].scenario
    by = {m.name: m for m in mit.MITIGATIONS}
    why = T.why_not(scn.with_overrides(scn.load(base), by["CAKE"].keys(cell)))
    assert why is not None and why.startswith("access.core_queue.autorate: the testbed does not run cake-autorate"), why
    plan(scn.with_overrides(scn.load(base), by["CAKE fixed shaper"].keys(cell)))


def test_median_interval_by_hand():
    """Distribution-free 95 % interval of a median: n = 10 → x(2), x(9) (coverage 1 − 2·11/1024 =
    97.9 %; x(3), x(8) would cover 89.1 %); n = 30 → x(10), x(21) (95.7 %); n = 5 → the range
    (93.8 %, no k reaches 95 %)."""
    assert T.median_interval(np.arange(10, 0, -1)) == (2.0, 9.0)
    assert T.median_interval(np.arange(1, 31)) == (10.0, 21.0)
    assert T.median_interval(np.array([5.0, 1, 3, 2, 4])) == (1.0, 5.0)


def test_retx_verdict_by_hand():
    """Linux's interval [50, 70] widened by RETX_WIDEN = 1.1: 77 holds, 77.1 fails; 45.5 holds
    (50 / 1.1 = 45.45), 45.4 fails."""
    assert T.RETX_WIDEN == 1.1
    assert T.retx_verdict(77.0, 50.0, 70.0) and not T.retx_verdict(77.1, 50.0, 70.0)
    assert T.retx_verdict(45.5, 50.0, 70.0) and not T.retx_verdict(45.4, 50.0, 70.0)


def test_retx_block_is_the_kept_linux_runs_and_this_builds():
    """docs/mitigations.md's retransmission table is the kept Linux runs (docs/data/mitigations-retx.csv)
    beside this build's simulator (render_retx recomputes the simulator's side)."""
    mod = _doc_script()
    got = _docblock_read(mod)
    assert got == mod.render_retx(pd.read_csv(mod.DATA_RETX)), "regenerate: python scripts/mitigations_testbed_doc.py --doc"


def _docblock_read(mod):
    from jitterlab import _docblock

    return _docblock.read(mod.DOC.read_text(), mod.BLOCK_RETX)


def test_retransmissions_as_linux():
    """Issue 26: through the same queue code the simulator's download retransmits as often as real
    Linux's: in every kept row with at least 10 Linux runs the simulator's median over RETX_SEEDS
    seeds lies within Linux's median's 95 % interval widened by RETX_WIDEN; the Linux runs do
    retransmit (a comparison with nothing would pass anything) and every retransmission repairs
    a loss (no D-SACKed one)."""
    mod = _doc_script()
    linux = pd.read_csv(mod.DATA_RETX)
    rows = [r for r in mod.retx_rows(linux) if r["runs"] >= 10]
    assert len(rows) >= 3, [(r["link"], r["mitigation"], r["runs"]) for r in rows]
    assert (linux.dsack_dups == 0).all()
    for r in rows:
        assert r["linux_p50"] >= 20, r
        assert r["verdict"], (r["link"], r["mitigation"], r["sim_p50"], r["linux_lo"], r["linux_hi"])


def test_capture_episodes_count_the_simulators_own_retransmissions(tmp_path):
    """scripts/retx_episodes.py on the simulator's own capture of the server counts exactly the
    retransmissions the simulator reports, and its HyStart emulation finds the window at which
    the simulator's HyStart left slow start (seed 2015: the late exit at 59 segments; 2013: 38)."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from retx_episodes import analyse, hystart_exit

    sc = T.row_scenario("fixed", "PIE")
    sc["output"] = {"pcap": ["server"], "pcap_snaplen": 128}
    sc["traffic"][1]["series"] = True
    for seed in (2013, 2015):
        r = sim.simulate(sc, seed=seed, pcap_dir=tmp_path / str(seed))
        pcap = tmp_path / str(seed) / "server.pcap"
        assert analyse(pcap)["retx"] == int(r.tcp_flows.retransmits.sum()) > 0
        ts = r.tcp_series[r.tcp_series.ssthresh.notna()]
        exit_cwnd = float(ts.ssthresh.iloc[0]) / T.MSS
        assert hystart_exit(pcap) == pytest.approx(exit_cwnd, abs=0.5)
        assert exit_cwnd == pytest.approx({2013: 38, 2015: 59}[seed], abs=0.5)
