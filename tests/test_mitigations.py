"""The mitigations preset: its ranking rule on a hand-made table, the registry-driven availability,
and a reduced run producing every output file."""
import numpy as np
import pandas as pd
import pytest

import _metrics_fixtures as mf
from conftest import run_cli
from jitterlab import metrics as M
from jitterlab.presets import mitigations as mit
from jitterlab.presets import ranks as R

BUILT = {"queues": ["droptail", "red", "codel", "fq_codel", "pie"], "cc": ["reno", "cubic", "bbr"]}


def test_t_interval_by_hand():
    """d = [1, 2, 3]: mean 2, s = 1, t(0.975, 2) = 4.303, half-width 4.303/sqrt(3) = 2.4843."""
    n, m, lo, hi = R.paired_interval([1, 2, 3])
    assert (n, m) == (3, 2.0)
    assert lo == pytest.approx(2 - 4.303 / np.sqrt(3)) and hi == pytest.approx(2 + 4.303 / np.sqrt(3))
    assert R.t975(1) == 12.706 and R.t975(30) == 2.042
    # above the table: the expansion continues it (t(0.975, 40) = 2.021, t(0.975, 120) = 1.980)
    assert R.t975(40) == pytest.approx(2.021, abs=1e-3) and R.t975(120) == pytest.approx(1.980, abs=1e-3)
    assert R.t975(31) < R.t975(30)
    # one value: no interval, never distinct; zero spread: the mean itself
    assert np.isnan(R.paired_interval([5.0])[2]) and not R.distinct(*R.paired_interval([5.0])[2:])
    assert R.paired_interval([0.4] * 4)[2:] == (0.4, 0.4) and R.distinct(0.4, 0.4)


def test_ranks_do_not_chain():
    """A − B = [0.4, −0.2, 0.6, 0]: mean 0.2, s = sqrt(0.4/3) = 0.3651, half-width 3.182·0.3651/2
    = 0.581: [−0.38, 0.78], indistinct; B − C = [0, 0.6, −0.2, 0.4]: the same spread, indistinct;
    A − C = [0.4]·4: distinct. A and B share rank 1; C is indistinct from B but not from A, so it
    opens rank 3 (the old rule chained it to rank 1). D equals C: it shares C's rank."""
    C = [0.0, 0.0, 0.0, 0.0]
    B = [0.0, 0.6, -0.2, 0.4]
    A = [0.4, 0.4, 0.4, 0.4]
    r = mit.rank({"A": A, "B": B, "C": C, "D": list(C), "E": []}).set_index("mitigation")
    assert list(r.index[:4]) == ["A", "B", "C", "D"]
    assert list(r["rank"].iloc[:4]) == [1, 1, 3, 3] and pd.isna(r.loc["E", "rank"])
    assert r.loc["A", "group"] == "A = B" and r.loc["C", "group"] == "C = D"
    pw = R.pairwise({k: pd.Series(v) for k, v in {"A": A, "B": B, "C": C}.items()}).set_index(["a", "b"])
    assert pw.loc[("A", "B"), "lo"] == pytest.approx(0.2 - 3.182 * np.sqrt(0.4 / 3) / 2)
    assert not pw.loc[("A", "B"), "distinct"] and not pw.loc[("B", "C"), "distinct"] and pw.loc[("A", "C"), "distinct"]


def test_no_two_sharing_a_rank_are_distinct():
    """The rule's invariant on random paired data (seeded): for every pair with the same rank the
    paired interval contains 0, and every better-ranked one has the higher mean."""
    rng = np.random.default_rng(26)
    for _ in range(40):
        k = rng.integers(3, 9)
        base = rng.normal(0, 1, 6)
        vals = {f"m{i}": pd.Series(base + rng.normal(rng.normal(0, 0.6), rng.uniform(0.05, 0.8), 6)) for i in range(k)}
        r = R.rank(vals).set_index("mitigation")
        pw = R.pairwise(vals).set_index(["a", "b"])
        for a in r.index:
            for b in r.index:
                if a != b and r.loc[a, "rank"] == r.loc[b, "rank"]:
                    assert not pw.loc[(a, b), "distinct"], (a, b)
                if r.loc[a, "rank"] < r.loc[b, "rank"]:
                    assert r.loc[a, "mean"] >= r.loc[b, "mean"]


def _call(run, base_ms, window_owds, pre=100, post=25):
    """One run's audio: `pre` packets at the base OWD before TCP starts, the window's OWDs (None =
    lost), `post` packets after; TCP runs over exactly the window's send times."""
    owds = [base_ms] * pre + list(window_owds) + [base_ms] * post
    start, end = 20 * pre, 20 * (pre + len(window_owds) - 1)
    return mf.cbr(owds, run=run), (start, end)


def test_fewer_losses_at_every_buffer_never_rank_below_droptail():
    """Constructed from packet data: per replication, DropTail loses 10 of the window's 50 packets
    (isolated) and delays 6 more to 140 ms (late behind 40–100 ms buffers); the mitigation loses 9
    (in one burst) and delays 5, with the same median OWD (20 ms). It loses fewer packets behind
    every jitter buffer, so its call-level MOS is higher at every buffer and it ranks above
    DropTail. The window's own best-JB MOS (mos_best, G.107's burst ratio over 50 packets) ranks
    it *below* DropTail: the cliff this measure removes."""
    rows, spec, mits = [], {}, {}
    for rep in range(3):
        dt = [20] * 50
        for i in range(10):
            dt[2 + 5 * i + (rep % 2)] = None
        for i in (0, 10, 20, 30, 40, 45):  # apart from the losses (2 or 3 mod 5)
            dt[i] = 140
        mt = [20] * 50
        for i in range(9):
            mt[10 + rep + i] = None
        for i in range(5):
            mt[30 + 3 * i] = 140
        for name, w in ((mit.BASELINE, dt), ("X", mt)):
            run = len(spec) + 1
            pk, (s0, s1) = _call(run, 20, w)
            rows += pk
            spec[run] = (s0, s1)
            mits[run] = (name, rep)
    media, runs = mf.media(rows), mf.runs(spec)
    jl = M.jb_loss(media, runs, jbs_ms=mit.JBS)
    lost = (jl.pure + jl.late).to_numpy().reshape(len(spec), len(mit.JBS))
    for run, (name, rep) in mits.items():
        if name == "X":  # fewer lost packets behind every buffer than DropTail's run of the same replication
            other = next(r for r, v in mits.items() if v == (mit.BASELINE, rep))
            assert (lost[run - 1] < lost[other - 1]).all()
    cq = mit.call_quality(media, runs)
    bj = M.best_jb(media, runs, jbs_ms=mit.JBS)[["run_id", "mos"]].rename(columns={"mos": "mos_best"})
    df = cq.merge(bj, on="run_id").assign(mitigation=lambda d: d.run_id.map(lambda r: mits[r][0]),
                                          replication=lambda d: d.run_id.map(lambda r: mits[r][1]),
                                          link="fixed", workload="n=1 IW3", completion_s=10.0, goodput_bps=1e6)
    x = mit.paired(df)
    assert (x[x.mitigation == "X"].mos_gain > 0).all()
    assert (x[x.mitigation == "X"].mos_best_gain < 0).all()  # the old measure's verdict
    r = mit.rank({m: mit.gains_per_replication(x, m) for m in (mit.BASELINE, "X")}).set_index("mitigation")
    assert r.loc["X", "rank"] == 1 and r.loc[mit.BASELINE, "rank"] == 2
    old = mit.rank({m: mit.gains_per_replication(x, m, "mos_best_gain") for m in (mit.BASELINE, "X")}).set_index("mitigation")
    assert old.loc["X", "rank"] == 2


def test_call_mos_by_hand():
    """G.107 with its defaults, G.711 + PLC (Ie 0, Bpl 25.1), BurstR 1: Ppl = 30 lost / 3000 call
    packets = 1 %, Ie_eff = 95 · 1/(1 + 25.1) = 3.6398; a 50-packet window dilutes into the 60 s
    call, a 4000-packet window is its own call. Monotone in the lost packets at equal delay."""
    ta = 100.0
    want = M.mos_from_r(M.emodel_r(ta, 1.0, 1.0))
    assert mit.call_mos(30, 50, ta) == pytest.approx(want)
    assert mit.call_mos(40, 4000, ta) == pytest.approx(want)
    r0 = float(M.emodel_r(ta, 0.0))
    assert float(M.emodel_r(ta, 1.0)) == pytest.approx(r0 - 95 / 26.1, abs=1e-6)
    v = mit.call_mos(np.arange(0, 3001, 50), 50, ta)
    assert (np.diff(v) <= 0).all() and v[0] > v[-1]


def test_gains_are_paired_by_replication_and_averaged_over_workloads():
    rows = []
    for rep, (a, b) in enumerate([(1.0, 2.0), (1.5, 4.0)]):
        for wl, base in (("bulk", 1.0), ("n=1 IW3", 2.0)):
            rows.append({"link": "fixed", "workload": wl, "replication": rep, "mitigation": mit.BASELINE, "run_id": len(rows),
                         "mos_call": base, "mos_best": base, "completion_s": 10.0, "goodput_bps": 1e6})
            rows.append({"link": "fixed", "workload": wl, "replication": rep, "mitigation": "X", "run_id": len(rows),
                         "mos_call": base + (a if wl == "bulk" else b), "mos_best": base, "completion_s": 12.0, "goodput_bps": 0.5e6})
    x = mit.paired(pd.DataFrame(rows))
    assert (x[x.mitigation == mit.BASELINE].mos_gain == 0).all()
    assert (x.mos_best_gain == 0).all()
    assert np.allclose(x[x.mitigation == "X"].completion_change_pct, 20.0)
    assert np.allclose(x[x.mitigation == "X"].goodput_change_pct, -50.0)
    # replication 0: mean(1, 2) = 1.5; replication 1: mean(1.5, 4) = 2.75
    assert list(mit.gains_per_replication(x, "X")) == [1.5, 2.75]


def test_unfinished_transfers_keep_their_costs():
    """Run 1 finished: 1 MB from SYN at 10 s to 20 s, 0.8 Mbit/s. Run 2: 500 kB finished at 15 s and
    a flow from 11 s still running at the run's end (30 s) with 300 kB delivered: completion is the
    lower bound 30 − 10 = 20 s, goodput 800 kB · 8 / 20 s = 0.32 Mbit/s, flagged unfinished;
    without a horizon both stay NaN (the metrics module's convention)."""
    S = 1_000_000_000
    t = pd.DataFrame({"run_id": [1, 2, 2], "flow_id": [1, 1, 2], "role": ["web"] * 3, "syn_ns": [10 * S, 10 * S, 11 * S],
                      "end_ns": pd.array([20 * S, 15 * S, None], dtype="Int64"), "bytes": [1_000_000, 500_000, 300_000],
                      "segments_sent": [700, 350, 210], "drops": [0, 0, 0]})
    c = mit.tcp_costs(t, 30.0).set_index("run_id")
    assert c.loc[1, "completion_s"] == 10.0 and c.loc[1, "goodput_bps"] == pytest.approx(0.8e6) and not c.loc[1, "unfinished"]
    assert c.loc[2, "completion_s"] == 20.0 and c.loc[2, "goodput_bps"] == pytest.approx(0.32e6) and c.loc[2, "unfinished"]
    n = mit.tcp_costs(t, None).set_index("run_id")
    assert np.isnan(n.loc[2, "goodput_bps"]) and n.loc[2, "unfinished"]


@pytest.mark.parametrize("ratio, verdict", [(0.97, "agrees"), (0.90, "disagrees")])
def test_cake_cost_finding_pairs_replications(ratio, verdict):
    """CAKE's download at 97 % of FQ-CoDel's in every replication: −3 % ≥ −5 %, agrees; at 90 %:
    −10 %, disagrees (the rule: the IQR of the paired change against −5 %)."""
    rows = []
    for rep, g in enumerate([3.0e6, 2.9e6, 3.1e6]):
        for m, v in (("FQ-CoDel", g), ("CAKE", g * ratio)):
            rows.append({"link": "fixed", "workload": "bulk", "mitigation": m, "replication": rep, "goodput_bps": v,
                         "owd_p50_ms": 20.0, "mos_gain": 1.0, "completion_change_pct": 0.0, "loss40": 0.0})
    f = [f for f in mit.findings(pd.DataFrame(rows), "fixed") if f.finding.startswith("CAKE as deployed")][0]
    assert f.verdict == verdict and f"{(ratio - 1) * 100:+.1f} %" in f.measured


def test_cake_is_shaped_as_deployed():
    """95 % of the link's rate: the fixed link's calibrated 3.15 Mbit/s → 2992 kbit (kbit rounded
    down); on the cellular model cake-autorate between its 2.7 Mbit/s minimum (min and base) and its
    5 Mbit/s maximum, in front of the radio, and as an extra row the fixed shaper at 95 % of the
    minimum → 2565 kbit; the unshaped variant keeps CAKE's default (no bandwidth key); DualPI2 at
    tc-dualpi2(8)'s 1 ms step with RFC 9332's 1-packet minimum."""
    by = {m.name: m for m in mit.MITIGATIONS}
    from jitterlab.presets import pam2013

    fixed, cell = pam2013.load_link("fixed"), pam2013.load_link("cellular")
    assert fixed.mean_bps == 3.15e6  # docs/calibration.md
    assert by["CAKE"].keys(fixed)["access.down_queue"]["bandwidth"] == "2992kbit"
    # on the cellular model in front of the radio (the core link's queue), set by cake-autorate
    # between the model's 2.7 and 5 Mbit/s (min = base); the radio keeps its buffer
    auto = {"pinger": "mobile", "reflector": "server", "min": "2700kbit", "base": "2700kbit", "max": "5000kbit"}
    assert by["CAKE"].keys(cell) == {"access.core_queue": {"kind": "cake", "memlimit": "750kB", "autorate": auto},
                                     "access.core_queue_at": "network"}
    assert by["CAKE"].keys(fixed) == by["CAKE fixed shaper"].keys(fixed)
    # the fixed shaper an extra row: 95 % of the model's minimum
    assert by["CAKE fixed shaper"].keys(cell) == {"access.core_queue": {"kind": "cake", "memlimit": "750kB", "bandwidth": "2565kbit"},
                                                  "access.core_queue_at": "network"}
    assert "bandwidth" not in by["CAKE unshaped"].keys(fixed)["access.down_queue"]
    q = by["DualPI2 + DCTCP"].keys(fixed)["access.down_queue"]
    assert (q["step_thresh"], q["min_qlen_step"]) == ("1ms", 1)
    sw = mit.sweeps(1, cell, ["DropTail", "CAKE", "CAKE fixed shaper", "IW3", "BBR"])
    mp = sw["bulk"].params[-1]
    assert mp.sets[mp.labels.index("CAKE")]["access.core_queue"]["autorate"] == auto
    assert mp.sets[mp.labels.index("CAKE fixed shaper")]["access.core_queue"]["bandwidth"] == "2565kbit"
    # the mixed workload: a sender's mitigation applies to the download and the page
    mx = sw["mixed"].params[-1]
    assert mx.sets[mx.labels.index("IW3")] == {"traffic[1].iw": 3, "traffic[2].iw": 3}
    assert mx.sets[mx.labels.index("BBR")] == {"traffic[1].cc": "bbr", "traffic[2].cc": "bbr"}


def test_availability_comes_from_the_registry():
    a = mit.availability(BUILT).set_index("mitigation")
    assert list(a.index) == [m.name for m in mit.MITIGATIONS]
    off = set(a.index[~a.available])
    assert off == {"CAKE", "CAKE fixed shaper", "CAKE unshaped", "DualPI2 + CUBIC", "DualPI2 + DCTCP", "DualPI2 + DCTCP, 2-pkt step"}
    assert a.loc["CAKE", "status"] == "not available in this build (queue kind 'cake' not in the simulator's registry)"
    assert "congestion control 'dctcp'" in a.loc["DualPI2 + DCTCP", "status"]
    # the L4S pieces registered: only DCTCP's congestion control still missing
    full = {"queues": BUILT["queues"] + ["cake", "dualpi2"], "cc": BUILT["cc"]}
    b = mit.availability(full).set_index("mitigation")
    assert set(b.index[~b.available]) == {"DualPI2 + DCTCP", "DualPI2 + DCTCP, 2-pkt step"}
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
    monkeypatch_module.setattr(mit, "MIXED_BULK", "5MB")  # the mixed workload's download, still running when the page starts at 20 s
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
    # each finding says which link's runs it judges (the links' rows share their statements)
    fd = pd.read_csv(out / "findings.csv")
    assert set(fd.link) == set(rk.link) and len(fd) == len(fd.drop_duplicates(["link", "finding"]))
    av = mit.availability().set_index("mitigation")
    for _, r in rk.iterrows():
        if av.loc[r.mitigation, "available"]:
            assert r["rank"] >= 1 and np.isfinite(r.mos_best)
        else:
            assert r.status.startswith("not available in this build") and np.isnan(r["rank"])
    assert rk.set_index("mitigation").loc[mit.BASELINE, "mos_gain"] == 0
    # both costs (and the mixed workload's) for every ranked row, never empty
    ranked = rk[rk["rank"].notna()]
    for c in ("bulk_goodput_Mbps", "bulk_goodput_change_pct", "web_completion_change_pct", "mixed_page_change_pct",
              "mixed_goodput_change_pct", "mos_call", "mos_best"):
        assert np.isfinite(ranked[c]).all(), c
    # no two sharing a rank are distinct in pairs.csv
    pw = pd.read_csv(out / "pairs.csv").set_index(["a", "b"])
    for _, g in ranked.groupby("rank"):
        for a in g.mitigation:
            for b in g.mitigation:
                assert a == b or not pw.loc[(a, b), "distinct"]
    fig = pd.read_csv(out / "figures" / "cost_benefit.csv")
    assert len(fig) > 0
    html = path.read_text()
    assert "not available in this build" in html and "Cost and benefit" in html and mit.RANK_RULE[:25] in html


def test_smoke_run_has_the_adaptive_call(smoke):
    """The adaptive call's rows (2 replications): every available mitigation in each of the 3
    adaptive workloads, with its metrics; its ranking ranks each of them beside the audio's rank;
    the audio's per-run table keeps its 8 workloads only (the audio ranking's meaning). FQ-CoDel
    isolates the call from the bulk download: its 95th-percentile frame delay is below DropTail's in
    every replication."""
    from jitterlab.presets import mitigations_adaptive as A

    out, path = smoke
    ok = set(mit.availability().query("available").mitigation)
    v = pd.read_csv(out / "adaptive_per_run.csv")
    got = v.groupby(["workload", "mitigation"]).replication.nunique()
    want = pd.MultiIndex.from_product([sorted(A.WORKLOADS.values()), sorted(ok)])
    assert set(got.index) == set(want) and (got == 2).all()
    for c in ("media_kbps", "frame_delay_p95_ms", "frames_complete", "call_on_time_pct", "freezes"):
        assert np.isfinite(v[c]).all(), c
    assert set(pd.read_csv(out / "per_run.csv").workload) == set(mit.WORKLOADS)
    rk = pd.read_csv(out / "adaptive_ranking.csv")
    assert set(rk.mitigation) == ok and rk["rank"].notna().all() and rk.audio_rank.notna().all()
    assert rk.set_index("mitigation").loc[mit.BASELINE, "on_time_gain"] == 0
    b = v[v.workload == A.WORKLOADS["bulk"]].pivot_table(index="replication", columns="mitigation", values="frame_delay_p95_ms")
    assert (b["FQ-CoDel"] < b[mit.BASELINE]).all(), b
    assert len(pd.read_csv(out / "adaptive_findings.csv")) >= 3
    assert "The adaptive call (gcc)" in path.read_text()
    fig = pd.read_csv(out / "figures" / "audio_vs_adaptive.csv")
    assert len(fig) > 0 and (out / "figures" / "audio_vs_adaptive.png").is_file()


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


def test_cc_flag_names_a_known_controller_for_mitigations_only(tmp_path):
    p = run_cli("reproduce", "mitigations", "--cc", "vegas", "--out", str(tmp_path), "--quiet")
    assert p.returncode == 2 and "--cc: unknown controller 'vegas' (known: gcc, scream, nada)" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("reproduce", "rmcat", "--cc", "nada", "--out", str(tmp_path), "--quiet")
    assert p.returncode == 2 and "--cc: only the mitigations preset" in p.stderr and "Traceback" not in p.stderr


def test_testbed_flag_only_for_mitigations_and_rmcat(tmp_path):
    p = run_cli("reproduce", "rwnd", "--testbed", "--out", str(tmp_path), "--quiet")
    assert p.returncode == 2 and "--testbed: only the mitigations and rmcat presets" in p.stderr and "Traceback" not in p.stderr


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
    from jitterlab.testbed import net as testbed_net
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
