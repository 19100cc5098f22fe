"""rmcat's published-results rows (presets/rmcat_published.py) by hand: each published word's
reading as a bound, the pairing of the ECN case by replication, and the use of §5.1's 1.0 Mbit/s
steps. (§5.7 and RFC 8869's scenarios: tests/test_rmcat.py.)"""
from __future__ import annotations

import pandas as pd
import pytest

from jitterlab.presets import rmcat, rmcat_published as P


def _frames(gcc_use: float, scream_use: float = 0.9) -> dict[str, pd.DataFrame]:
    reps = range(4)
    use51 = pd.DataFrame([{"run_id": i, "cc": cc, "use_1mbit": u + 0.01 * r} for i, (cc, u, r) in
                          enumerate((cc, u, r) for cc, u in (("gcc", gcc_use), ("scream", scream_use)) for r in reps)])
    r51 = pd.DataFrame([{"cc": cc, "qdelay_median_ms": 20.0 + r} for cc in ("gcc", "scream") for r in reps])
    r54 = pd.DataFrame([{"cc": cc, "jain": j} for cc, j in (("gcc", 0.95), ("nada", 0.85)) for _ in reps])
    r56 = pd.DataFrame([{"cc": "gcc", "queue": q, "media_share": s + 0.01 * r} for q, s in (("droptail", 0.10), ("fq_codel", 0.45))
                        for r in reps])
    # NADA: without ECN 0.50, with ECN 0.52 (ratio 0.96); listed with-ECN first so that order alone would mispair
    recn = pd.DataFrame([{"cc": "nada", "ecn": e, "replication": r, "util": (0.52 if e else 0.50) * (1 + 0.1 * r)}
                         for e in (True, False) for r in reps])
    return {"use51": use51, "r51": r51, "r54": r54, "r56": r56, "recn": recn}


def test_published_rows_by_hand():
    """GCC using 70–73 % of the 1.0 Mbit/s steps is below the 80 % reading of 'full'; 85 % is
    above it. Queueing delay 20–23 ms < 100 ms; GCC's Jain 0.95 ≥ 0.9, NADA's 0.85 below it. Beside
    CUBIC on DropTail 10–13 %: the 2013 statement of unfairness (below 35 %) agrees (the 2017
    'inter protocol fairness' rows: tests of rmcat_published_tcp below). NADA without / with ECN:
    0.50 / 0.52 = 0.96 in every replication, within ±10 %."""
    fs = {f.finding: f for f in P.findings(**_frames(0.70))}
    by = lambda s: next(f for k, f in fs.items() if s in k)  # noqa: E731
    assert by("'full link utilization'").verdict == "disagrees" and by("'full link utilization'").source == P.CARLUCCI_TON
    assert by("'contain queuing delays'").verdict == "agrees"
    assert by("'intra protocol fairness'").verdict == "agrees"
    assert by("competing against each other").verdict == "disagrees" and by("competing against each other").source == P.RFC8698_S7
    assert by("before the adaptive threshold").verdict == "agrees"
    assert by("(SCReAM)").verdict == "agrees"
    assert by("ECN").verdict == "agrees" and "0.96 [0.96–0.96]" in by("ECN").measured
    assert next(f for f in P.findings(**_frames(0.85)) if "'full link" in f.finding).verdict == "agrees"
    assert len(fs) == 7


def test_use_of_the_1mbit_steps_by_hand():
    """A flow receiving 1000 B every 10 ms (800 kbit/s) throughout uses 80 % of 1.0 Mbit/s on both
    windows (20–40 s, 85–99 s), whatever it did on the 2.5 / 0.6 Mbit/s steps between."""
    n = 10_000  # 100 s
    media = pd.DataFrame({"run_id": [0] * n, "flow_id": [1] * n, "seq": range(n), "send_ns": [i * 10_000_000 for i in range(n)],
                          "recv_ns": pd.array([i * 10_000_000 + 50_000_000 for i in range(n)], dtype="Int64"), "size": [1000] * n})
    runs = pd.DataFrame({"run_id": [0], "cc": ["gcc"]})
    u = P.use_of_1mbit_steps({"media_packets": media, "runs": runs}, rmcat.STEPS_51)
    assert u.use_1mbit.iloc[0] == pytest.approx(0.8, abs=1e-3)


def _r56(shares: dict[tuple[str, str], list[float]], delays: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"cc": cc, "queue": q, "media_share": s, "delay_median_ms": delays.get((cc, q), [50.0] * 4)[i],
                          "delay_p95_ms": 100.0} for (cc, q), v in shares.items() for i, s in enumerate(v)])


def test_published_tcp_rows_by_hand():
    """§5.6 against the published words, by hand (4 replications; IQR = 25th–75th percentile).
    GCC 'inter protocol fairness' = 35–65 %: 10–13 % disagrees, 45–48 % agrees. NADA / SCReAM
    'substantial share' ≥ 25 %: 21–24 % (IQR 21.75–23.25) disagrees, 24–27 % (24.75–26.25)
    straddles (partly), 40–43 % agrees. SCReAM's 0.4 s cap (0.35–0.45 s, between the 0.3 s and
    1.0 s buffers): its share on the 300 ms DropTail (40–43 %) above the 1000 ms one's (3–6 %)
    agrees; swapped, it disagrees."""
    from jitterlab.presets import rmcat_published_tcp as T

    v = lambda a: [a + 0.01 * i for i in range(4)]  # noqa: E731
    shares = {("gcc", "droptail"): v(0.10), ("gcc", "droptail_1000ms"): v(0.10), ("gcc", "fq_codel"): v(0.45),
              ("nada", "droptail"): v(0.21), ("nada", "droptail_1000ms"): v(0.24), ("nada", "fq_codel"): v(0.40),
              ("scream", "droptail"): v(0.40), ("scream", "droptail_1000ms"): v(0.03), ("scream", "fq_codel"): v(0.40)}
    fs = T.findings_56(_r56(shares, {}))
    assert len(fs) == 3 * 3 + 1
    got = {(f.finding.split("(")[1].split(")")[0], f.finding.split(" on ")[-1].split(" (")[0]): f.verdict for f in fs
           if "media share" in f.finding}
    assert got == {("GCC", "300 ms DropTail"): "disagrees", ("GCC", "1000 ms DropTail"): "disagrees", ("GCC", "FQ-CoDel"): "agrees",
                   ("NADA", "300 ms DropTail"): "disagrees", ("NADA", "1000 ms DropTail"): "partly", ("NADA", "FQ-CoDel"): "agrees",
                   ("SCReAM", "300 ms DropTail"): "agrees", ("SCReAM", "1000 ms DropTail"): "disagrees", ("SCReAM", "FQ-CoDel"): "agrees"}
    cap = [f for f in fs if "QDELAY_TARGET_HI" in f.finding]
    assert [f.verdict for f in cap] == ["agrees"] and "0.35–0.45 s" in cap[0].tolerance and cap[0].source == T.RFC8298_S4123
    swapped = {**shares, ("scream", "droptail"): v(0.03), ("scream", "droptail_1000ms"): v(0.40)}
    assert [f.verdict for f in T.findings_56(_r56(swapped, {})) if "QDELAY_TARGET_HI" in f.finding] == ["disagrees"]
    # 10, 11, 12, 13 %: median 11.5 (shown 12, round half to even), quartiles 10.75 and 12.25
    assert "share 12 % [11–12]" in fs[0].measured and "delay above propagation 50 ms [50–50]" in fs[0].measured
    tab = T.table_56(_r56(shares, {}))
    assert len(tab) == 9 and list(tab.verdict) == [got[(c, q)] for c, q in zip(tab.controller, tab.queue)]
    assert tab.share_pct.iloc[0] == "12 [11–12]" and tab.our_reading.iloc[3].endswith("(≥ 25%)")


def test_delay_above_propagation_by_hand():
    """100 packets received at 20.0 s, 20.5 s, … 69.5 s with one-way delays 50 + i ms (i = 0…99): above
    the 50 ms propagation the delays are 0…99 ms, median 49.5, 95th percentile 94.05 (numpy's
    linear interpolation: rank 0.95 × 99 = 94.05). A packet received at 119 s (outside [20, 119))
    with 5 s of delay and a lost packet change nothing."""
    from jitterlab.presets import rmcat_published_tcp as T

    recv = [int((20.0 + 0.5 * i) * 1e9) for i in range(100)] + [119_000_000_000, pd.NA]
    owd = [int((50 + i) * 1e6) for i in range(100)] + [5_000_000_000, 0]
    media = pd.DataFrame({"recv_ns": pd.array(recv, dtype="Int64"),
                          "send_ns": [(r if r is not pd.NA else 0) - d for r, d in zip(recv, owd)]})
    d50, d95 = T.delay_above_propagation(media, 50.0, 20.0, 119.0)
    assert d50 == pytest.approx(49.5) and d95 == pytest.approx(94.05)


def test_docs_56_table_is_the_builds(tmp_path):
    """docs/media.md's §5.6 table against the published results ('Published results') from the
    current build: the §5.6 sweep with 5 replications, its rows as `markdown_56` renders them."""
    from pathlib import Path

    from jitterlab.presets import rmcat_published_tcp as T
    from jitterlab.presets.common import Options, run_experiment

    opt = Options(tmp_path, 2, "local", None, False)
    r56 = rmcat.per_run_56(run_experiment(rmcat.sweeps(5)["5.6"], "5.6", opt))
    doc = (Path(__file__).resolve().parent.parent / "docs" / "media.md").read_text()
    rows = T.markdown_56(T.table_56(r56))
    assert len(rows) == 9
    for row in rows:
        assert row in doc, f"docs/media.md's §5.6 published table is stale: {row!r} (regenerate: ./jitterlab reproduce rmcat --reps 5)"
