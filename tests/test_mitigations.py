"""The mitigations preset: its ranking rule on a hand-made table, the registry-driven availability,
and a reduced run producing every output file."""
import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from jitterlab.presets import mitigations as mit

BUILT = {"queues": ["droptail", "red", "codel", "fq_codel", "pie"], "cc": ["reno", "cubic", "bbr"]}


def test_rank_rule_on_a_hand_made_table():
    """Numpy's linear quantiles, by hand: B = [2.9, 3.0, 3.1, 3.2] has median 3.05, IQR 2.975–3.125;
    A = [3]*4 (median 3) overlaps it, so A ties with B and shares rank 1; D = [0.9, 1.05, 1.1, 2]
    has median 1.075, IQR 1.0125–1.325 (disjoint from A's): rank 3; C = [1]*4 lies entirely below
    D's IQR (1 < 1.0125): rank 4, not a tie."""
    r = mit.rank({"A": [3, 3, 3, 3], "B": [2.9, 3.0, 3.1, 3.2], "C": [1, 1, 1, 1], "D": [0.9, 1.05, 1.1, 2]}).set_index("mitigation")
    assert list(r.index) == ["B", "A", "D", "C"]
    assert list(r["rank"]) == [1, 1, 3, 4]
    assert list(r["tie"]) == [False, True, False, False]
    assert r.loc["B", "median"] == pytest.approx(3.05) and r.loc["D", "p25"] == pytest.approx(1.0125)
    assert r.loc["D", "p75"] == pytest.approx(1.325)
    # a chain of overlaps keeps one rank; no values: no rank
    r2 = mit.rank({"x": [2, 3], "y": [1.5, 2.5], "z": [1, 2], "w": []}).set_index("mitigation")
    assert list(r2["rank"].iloc[:3]) == [1, 1, 1] and pd.isna(r2.loc["w", "rank"])


def test_gains_are_paired_by_replication_and_averaged_over_workloads():
    rows = []
    for rep, (a, b) in enumerate([(1.0, 2.0), (1.5, 4.0)]):
        for wl, base in (("bulk", 1.0), ("n=1 IW3", 2.0)):
            rows.append({"link": "fixed", "workload": wl, "replication": rep, "mitigation": mit.BASELINE, "run_id": len(rows),
                         "mos_best": base, "completion_s": 10.0, "goodput_bps": 1e6})
            rows.append({"link": "fixed", "workload": wl, "replication": rep, "mitigation": "X", "run_id": len(rows),
                         "mos_best": base + (a if wl == "bulk" else b), "completion_s": 12.0, "goodput_bps": 0.5e6})
    x = mit.paired(pd.DataFrame(rows))
    assert (x[x.mitigation == mit.BASELINE].mos_gain == 0).all()
    assert np.allclose(x[x.mitigation == "X"].completion_change_pct, 20.0)
    assert np.allclose(x[x.mitigation == "X"].goodput_change_pct, -50.0)
    # replication 0: mean(1, 2) = 1.5; replication 1: mean(1.5, 4) = 2.75
    assert list(mit.gains_per_replication(x, "X")) == [1.5, 2.75]


def test_availability_comes_from_the_registry():
    a = mit.availability(BUILT).set_index("mitigation")
    assert list(a.index) == [m.name for m in mit.MITIGATIONS]
    off = set(a.index[~a.available])
    assert off == {"CAKE", "DualPI2 + CUBIC", "DualPI2 + DCTCP"}
    assert a.loc["CAKE", "status"] == "not available in this build (queue kind 'cake' not in the simulator's registry)"
    assert "congestion control 'dctcp'" in a.loc["DualPI2 + DCTCP", "status"]
    # the L4S pieces registered: only DCTCP's congestion control still missing
    full = {"queues": BUILT["queues"] + ["cake", "dualpi2"], "cc": BUILT["cc"]}
    b = mit.availability(full).set_index("mitigation")
    assert set(b.index[~b.available]) == {"DualPI2 + DCTCP"}
    assert b.loc["DualPI2 + DCTCP", "status"] == "not available in this build (congestion control 'dctcp' not in the simulator's registry)"
    # the sweeps run exactly the available ones
    ok = list(a.index[a.available])
    sw = mit.sweeps(2, "fixed", ok)
    assert sw["bulk"].params[0].labels == ok and sw["web"].params[-1].name == "mitigation"
    # the live registry: every mitigation whose pieces are registered is available
    from jitterlab import _native

    reg = _native.sim_registry()
    live = mit.availability().set_index("mitigation")
    for m in mit.MITIGATIONS:
        assert live.loc[m.name, "available"] == (m.queue in reg["queues"] and m.cc in reg["cc"])


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, monkeypatch_module):
    out = tmp_path_factory.mktemp("mitigations")
    monkeypatch_module.setattr(mit, "BULK_SIZE", "1MB")  # reduced size: a 1 MB download
    path = mit.run(out, reps=2, jobs=2, links=["fixed"], progress=False)
    return out, path


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_smoke_run_writes_every_output(smoke):
    out, path = smoke
    assert path == out / "report.html"
    for f in ("report.html", "ranking.csv", "metrics.csv", "per_run.csv", "availability.csv", "findings.csv",
              "figures/cost_benefit.png", "figures/cost_benefit.svg", "figures/cost_benefit.csv"):
        assert (out / f).is_file() and (out / f).stat().st_size > 0, f
    rk = pd.read_csv(out / "ranking.csv")
    assert list(rk.mitigation.sort_values()) == sorted(m.name for m in mit.MITIGATIONS)
    av = mit.availability().set_index("mitigation")
    for _, r in rk.iterrows():
        if av.loc[r.mitigation, "available"]:
            assert r["rank"] >= 1 and np.isfinite(r.mos_best)
        else:
            assert r.status.startswith("not available in this build") and np.isnan(r["rank"])
    assert rk.set_index("mitigation").loc[mit.BASELINE, "mos_gain"] == 0
    html = path.read_text()
    assert "not available in this build" in html and "Cost and benefit" in html and mit.RANK_RULE[:25] in html


def test_identical_scenarios_give_identical_runs(smoke):
    """IW3 as a mitigation on a workload that is IW3 already is the same scenario with the same
    seed: every metric equals DropTail's (determinism; the paired gain is exactly 0)."""
    out, _ = smoke
    x = pd.read_csv(out / "per_run.csv")
    iw3 = x[x.workload.str.endswith("IW3") | (x.workload == "bulk")]
    a = iw3[iw3.mitigation == "IW3"].set_index(["workload", "replication"]).sort_index()
    b = iw3[iw3.mitigation == mit.BASELINE].set_index(["workload", "replication"]).sort_index()
    cols = ["owd_p50_ms", "owd_p99_ms", "loss40", "mos_best", "completion_s"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert (a.mos_gain == 0).all()
    # and the mitigations change something where they act: FQ-CoDel isolates the audio from the bulk download
    bulk = x[x.workload == "bulk"].groupby("mitigation").owd_p50_ms.median()
    assert bulk["FQ-CoDel"] < 60 < bulk[mit.BASELINE], bulk


def test_testbed_flag_only_for_mitigations(tmp_path):
    p = run_cli("reproduce", "rwnd", "--testbed", "--out", str(tmp_path), "--quiet")
    assert p.returncode == 2 and "--testbed: only the mitigations preset" in p.stderr and "Traceback" not in p.stderr


def test_testbed_column_knows_what_it_cannot_run():
    """Without running anything: the planner's refusals become the rows' reasons (moderation after
    the SYN, pacing), while the queue kinds of the registry, moderation from the SYN, IW3 and BBR
    are runnable (cc availability aside, which depends on the kernel)."""
    from jitterlab import scenario as scn
    from jitterlab.presets import mitigations_testbed as mt

    base = mt.scenario("fixed")
    by = {m.name: m for m in mit.MITIGATIONS}
    after = mt.why_not(scn.with_overrides(base, dict(by["RWND after SYN"].sets)))
    assert after is not None and after.startswith("hosts.mobile.rwnd.from_syn")
    paced = mt.why_not(scn.with_overrides(base, dict(by["paced IW"].sets)))
    assert paced is not None and paced.startswith("traffic[1].pace_iw")
    for name in ("DropTail", "RED", "CoDel", "FQ-CoDel", "PIE", "RWND from SYN", "IW3"):
        assert mt.why_not(scn.with_overrides(base, dict(by[name].sets))) is None, name


def test_testbed_column_skips_cleanly_without_root(tmp_path, monkeypatch):
    from jitterlab import testbed_net
    from jitterlab.presets import mitigations_testbed as mt
    from jitterlab.report import Report

    def no_root() -> None:
        raise testbed_net.TestbedError("the testbed needs root (network namespaces, qdiscs, tcpdump)")

    monkeypatch.setattr(testbed_net, "require_root", no_root)
    rep = Report("t", tmp_path)
    assert mt.section(rep, tmp_path, None, progress=False) is None
    blocks = rep.sections[-1].blocks
    assert [b.kind for b in blocks] == ["text"] and blocks[0].payload.startswith("Skipped: the testbed needs root")
    assert not (tmp_path / "testbed.csv").exists()
