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
    r54 = pd.DataFrame([{"cc": "gcc", "jain": 0.95} for _ in reps])
    r56 = pd.DataFrame([{"cc": "gcc", "queue": q, "media_share": s + 0.01 * r} for q, s in (("droptail", 0.10), ("fq_codel", 0.45))
                        for r in reps])
    # NADA: without ECN 0.50, with ECN 0.52 (ratio 0.96); listed with-ECN first so that order alone would mispair
    recn = pd.DataFrame([{"cc": "nada", "ecn": e, "replication": r, "util": (0.52 if e else 0.50) * (1 + 0.1 * r)}
                         for e in (True, False) for r in reps])
    return {"use51": use51, "r51": r51, "r54": r54, "r56": r56, "recn": recn}


def test_published_rows_by_hand():
    """GCC using 70–73 % of the 1.0 Mbit/s steps is below the 80 % reading of 'full'; 85 % is
    above it. Queueing delay 20–23 ms < 100 ms; Jain 0.95 ≥ 0.9. Beside CUBIC: 10–13 % on DropTail
    (outside 35–65 %, so 'inter protocol fairness' disagrees and the 2013 statement of unfairness
    agrees), 45–48 % on FQ-CoDel (inside). NADA without / with ECN: 0.50 / 0.52 = 0.96 in every
    replication, within ±10 %."""
    fs = {f.finding: f for f in P.findings(**_frames(0.70))}
    by = lambda s: next(f for k, f in fs.items() if s in k)  # noqa: E731
    assert by("'full link utilization'").verdict == "disagrees" and by("'full link utilization'").source == P.CARLUCCI_TON
    assert by("'contain queuing delays'").verdict == "agrees"
    assert by("'intra protocol fairness'").verdict == "agrees"
    assert by("CUBIC flow on droptail").verdict == "disagrees" and by("CUBIC flow on fq_codel").verdict == "agrees"
    assert by("before the adaptive threshold").verdict == "agrees"
    assert by("(SCReAM)").verdict == "agrees"
    assert by("(NADA)").verdict == "agrees" and "0.96 [0.96–0.96]" in by("(NADA)").measured
    assert next(f for f in P.findings(**_frames(0.85)) if "'full link" in f.finding).verdict == "agrees"
    assert len(fs) == 8


def test_use_of_the_1mbit_steps_by_hand():
    """A flow receiving 1000 B every 10 ms (800 kbit/s) throughout uses 80 % of 1.0 Mbit/s on both
    windows (20–40 s, 85–99 s), whatever it did on the 2.5 / 0.6 Mbit/s steps between."""
    n = 10_000  # 100 s
    media = pd.DataFrame({"run_id": [0] * n, "flow_id": [1] * n, "seq": range(n), "send_ns": [i * 10_000_000 for i in range(n)],
                          "recv_ns": pd.array([i * 10_000_000 + 50_000_000 for i in range(n)], dtype="Int64"), "size": [1000] * n})
    runs = pd.DataFrame({"run_id": [0], "cc": ["gcc"]})
    u = P.use_of_1mbit_steps({"media_packets": media, "runs": runs}, rmcat.STEPS_51)
    assert u.use_1mbit.iloc[0] == pytest.approx(0.8, abs=1e-3)
