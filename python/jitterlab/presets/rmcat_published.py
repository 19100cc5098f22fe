"""`reproduce rmcat`'s comparison with published results: each published statement about GCC,
SCReAM or NADA with its source, our value from the RFC 8867 case closest to it, and a verdict by a
rule that respects how precisely it was published (docs/media.md, "Published results").

What could be read of the publications (through the project's search tools, which return the start
of a page: abstracts, not the result sections; and the RFCs' own text) states qualities, not numbers
— "full link utilization", "low latency", "consistent behaviour without ECN", "fair share". Each
such word gets a stated reading (ours) as a bound, and the finding says it is ours. No number from a
figure or table of these papers is compared, because none could be read here; docs/media.md lists
what is missing. The §5.6 rows (sharing with TCP) are in rmcat_published_tcp.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from jitterlab import rtc_metrics as R
from jitterlab.presets import findings as F
from jitterlab.presets.findings import Finding

CARLUCCI_TON = ("Carlucci, De Cicco, Holmer, Mascolo, 'Congestion Control for Web Real-Time Communication', IEEE/ACM ToN 25(5), "
                "2017, abstract")
DECICCO_2013 = ("De Cicco, Carlucci, Mascolo, 'Experimental investigation of the Google congestion control for real-time flows', "
                "ACM SIGCOMM FhMN workshop 2013, abstract (GCC before the adaptive threshold)")
RFC8298 = "RFC 8298 (SCReAM), abstract"
RFC8698 = "RFC 8698 (NADA), abstract"
RFC8698_S7 = "RFC 8698 §7 (NADA's ns-3 evaluations of the RMCAT test cases, summarised)"
#: our readings of the published words (none of them is a number)
FULL_USE = 0.80      # "full link utilization" / "high video throughput": ≥ 80 % of the capacity the media may use
LOW_DELAY_MS = 100.0  # "contain queuing delays" / "low latency": median queueing delay below 100 ms (RFC 8867 §5.1's done-when)
FAIR_JAIN = 0.9       # "intra protocol fairness": Jain's index ≥ 0.9
FAIR_TCP = (0.35, 0.65)  # "inter protocol fairness" beside one TCP flow: a media share of 35–65 % (half ± 15 points)
CONSISTENT = (0.9, 1.1)  # "consistent sender behavior" without ECN: the rate without / with ECN within ±10 %


def use_of_1mbit_steps(res51: Mapping[str, Any], steps: Sequence[tuple[float, float]]) -> pd.DataFrame:
    """Per §5.1 run, the media's use of the capacity on the 1.0 Mbit/s steps (20–40 s after the
    start-up, 85–99 s after the rise at 80 s), where the capacity is below the 1.5 Mbit/s max_rate
    and "full use" is possible: received IP bits over the capacity's bits in both windows."""
    m, runs = res51["media_packets"], res51["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        a, b = R.utilisation(mr, steps, 20.0, 40.0), R.utilisation(mr, steps, 85.0, 99.0)
        rows.append({"run_id": run.run_id, "cc": run.cc, "use_1mbit": (a * 20.0 + b * 14.0) / 34.0})
    return pd.DataFrame(rows)


def _consistent(recn: pd.DataFrame, cc: str) -> np.ndarray:
    """Per replication (the ECN case's runs of one seed differ only in ECT(0)), the capacity use
    without ECN over the use with ECT(0)."""
    d = recn[recn.cc == cc].pivot_table(index="replication", columns="ecn", values="util")
    return (d[False] / d[True]).to_numpy(float)


def findings(use51: pd.DataFrame, r51: pd.DataFrame, r54: pd.DataFrame, r56: pd.DataFrame, recn: pd.DataFrame) -> list[Finding]:
    """The published statements against our cases, one row each."""
    fs: list[Finding] = []
    g = lambda df, cc: df[df.cc == cc]  # noqa: E731
    u = g(use51, "gcc").use_1mbit
    fs.append(Finding("Published (GCC): 'full link utilization' — §5.1's 1.0 Mbit/s steps", CARLUCCI_TON,
                      F.spread(u * 100).show(unit=" %"), F.side(u, FULL_USE, below=False),
                      F.rule_side(f"{FULL_USE:.0%}", False) + " (our reading of 'full'; received IP bits over capacity, 20–40 s and 85–99 s)",
                      source=CARLUCCI_TON))
    q = g(r51, "gcc").qdelay_median_ms
    fs.append(Finding("Published (GCC): 'contain queuing delays' — §5.1's median self-inflicted queueing delay", CARLUCCI_TON,
                      F.spread(q).show(unit=" ms"), F.side(q, LOW_DELAY_MS, below=True),
                      F.rule_side(f"{LOW_DELAY_MS:.0f} ms", True) + " (our reading: RFC 8867 §5.1's 100 ms)", source=CARLUCCI_TON))
    j = g(r54, "gcc").jain
    fs.append(Finding("Published (GCC): 'intra protocol fairness' — §5.4's three GCC flows, Jain's index 60–119 s", CARLUCCI_TON,
                      F.spread(j).show(fmt="{:.3f}"), F.side(j, FAIR_JAIN, below=False), F.rule_side(f"{FAIR_JAIN}", False),
                      source=CARLUCCI_TON))
    lo = FAIR_TCP[0]  # §5.6 beside CUBIC per controller and queue: rmcat_published_tcp
    s = r56[(r56.cc == "gcc") & (r56.queue == "droptail")].media_share
    fs.append(Finding("Published (GCC before the adaptive threshold): 'not able to provide a fair bandwidth utilization' beside a TCP flow "
                      "— §5.6 on DropTail", DECICCO_2013, F.spread(s * 100).show(unit=" %"), F.side(s, lo, below=True),
                      F.rule_side(f"{lo:.0%}", True) + " (unfair: below the fair band's lower edge); a statement about an older GCC, "
                      "shown for comparison: agreement means our GCC behaves as that version did", source=DECICCO_2013))
    u, q = g(use51, "scream").use_1mbit, g(r51, "scream").qdelay_median_ms
    fs.append(Finding("Published (SCReAM): 'low latency and high video throughput' in simulated bottleneck scenarios — §5.1", RFC8298,
                      f"use {F.spread(u * 100).show(unit=' %')}; queueing delay {F.spread(q).show(unit=' ms')}",
                      F.worst([F.side(u, FULL_USE, below=False), F.side(q, LOW_DELAY_MS, below=True)]),
                      F.rule_side(f"{FULL_USE:.0%}", False) + " (use); and " + F.rule_side(f"{LOW_DELAY_MS:.0f} ms", True)
                      + " (median queueing delay); our readings of 'high' and 'low'; one verdict: the worse", source=RFC8298))
    j = g(r54, "nada").jain
    fs.append(Finding("Published (NADA): 'NADA flows can obtain their fair share of bandwidth when competing against each other' — "
                      "§5.4's three NADA flows, Jain's index 60–119 s", RFC8698_S7, F.spread(j).show(fmt="{:.3f}"),
                      F.side(j, FAIR_JAIN, below=False), F.rule_side(f"{FAIR_JAIN}", False) + " (our reading of 'fair share')",
                      source=RFC8698_S7))
    c = _consistent(recn, "nada")
    fs.append(Finding("Published (NADA): 'consistent sender behavior in the absence of [ECN] markings' — the ECN case, capacity use "
                      "without ECN over with ECT(0)", RFC8698, F.spread(c).show(fmt="{:.2f}"), F.in_range(c, *CONSISTENT),
                      F.rule_range(f"{CONSISTENT[0]}", f"{CONSISTENT[1]}") + " (our reading of 'consistent': within ±10 %; per "
                      "replication, same seed)", source=RFC8698))
    return fs
