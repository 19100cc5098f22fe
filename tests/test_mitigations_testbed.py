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
