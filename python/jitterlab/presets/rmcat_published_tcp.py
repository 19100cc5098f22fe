"""RFC 8867 §5.6 (media beside a long CUBIC flow) against what GCC's, NADA's and SCReAM's authors
published about sharing with TCP: per controller and bottleneck queue the media's share and its
queueing delay (median [25th–75th percentile] over replications), the published statement, our
reading of it as a bound and the verdict (docs/media.md, "Published results").

What could be read (docs/media.md lists each source and what could not be read): statements, not
numbers, about sharing with TCP — GCC "inter protocol fairness" (Carlucci et al. 2017, abstract),
NADA "sustains a substantial share of bottleneck bandwidth when coexisting with TCP" (Zhu & Pan, PV
2013, abstract) and "can sustain a reasonable throughput when competing against loss-based TCP
flows" (RFC 8698 §7), SCReAM "performs well in simple bandwidth-limited bottleneck test cases with
competing FTP flows" (RFC 8298 §4.1.2.3) — and one printed number: SCReAM's queue-delay target,
raised beside loss-based flows, is capped at QDELAY_TARGET_HI = 0.4 s (RFC 8298 §4.1.1, used in
§4.1.2.3), with a large tail-drop buffer its worst case.
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

import numpy as np
import pandas as pd

from jitterlab.presets import findings as F
from jitterlab.presets.findings import Finding
from jitterlab.presets.rmcat_published import CARLUCCI_TON, FAIR_TCP, RFC8698_S7

ZHU_PV13 = ("Zhu & Pan, 'NADA: A Unified Congestion Control Scheme for Low-Latency Interactive Video', IEEE Packet Video 2013 "
            "(doi:10.1109/PV.2013.6691448), abstract (ns-2 simulations with drop-tail, RED, CoDel, PIE)")
RFC8298_S4123 = "RFC 8298 §4.1.2.3 (SCReAM's competing-flows compensation)"
#: our reading of 'substantial share' / 'reasonable throughput' / 'performs well' beside one TCP flow:
#: at least half of an equal share (50 %) of the bottleneck
SUBSTANTIAL = 0.25
#: RFC 8298's QDELAY_TARGET_HI, printed "0.4 s": ± half a unit of the last digit (0.05 s). The
#: target cannot rise above it, so a queue that TCP holds above it leaves SCReAM behind: §5.6's
#: 300 ms DropTail stays under the cap, its 1000 ms DropTail does not, whatever the tolerance
SCREAM_QDELAY_HI = F.tol_printed(0.4, 1, RFC8298_S4123)
#: the two DropTail queues of §5.6 in seconds at 2 Mbit/s (RFC 8867 §5.6's [300 ms, 1000 ms])
BUFFER_S = {"droptail": 0.3, "droptail_1000ms": 1.0}
#: (controller, the published words, source, kind): "band" reads as FAIR_TCP, "floor" as ≥ SUBSTANTIAL
STATEMENTS: Mapping[str, tuple[str, str, str]] = {
    "gcc": ("'inter protocol fairness'", CARLUCCI_TON + "; the paper's bottleneck queue is not in its abstract", "band"),
    "nada": ("'sustains a substantial share of bottleneck bandwidth when coexisting with TCP'; 'reasonable throughput when "
             "competing against loss-based TCP flows'", f"{ZHU_PV13}; {RFC8698_S7}", "floor"),
    "scream": ("'performs well in simple bandwidth-limited bottleneck test cases with competing FTP flows'", RFC8298_S4123, "floor"),
}
NAMES = {"gcc": "GCC", "nada": "NADA", "scream": "SCReAM"}
QUEUE_TEXT = {"droptail": "300 ms DropTail", "droptail_1000ms": "1000 ms DropTail", "fq_codel": "FQ-CoDel"}


def delay_above_propagation(media: pd.DataFrame, prop_ms: float, start_s: float, end_s: float) -> tuple[float, float]:
    """Median and 95th percentile (ms) of the received media packets' one-way delay minus the
    path's propagation delay, for packets received in [start_s, end_s): the queueing delay
    including TCP's standing queue (RFC 8868's "queuing delay" takes the flow's own minimum as the
    base, which beside a TCP flow that started first already holds TCP's queue) plus the packet's
    transmission time at the bottleneck (≤ 6 ms for 1500 B at 2 Mbit/s)."""
    m = media[media.recv_ns.notna()]
    recv = m.recv_ns.astype("int64")
    m = m[(recv >= start_s * 1e9) & (recv < end_s * 1e9)]
    if m.empty:
        return float("nan"), float("nan")
    d = (m.recv_ns.astype("int64") - m.send_ns.astype("int64")).to_numpy(float) / 1e6 - prop_ms
    return float(np.median(d)), float(np.quantile(d, 0.95))


def _share_rule(kind: str) -> tuple[str, str]:
    """(the rule's text, our reading) of a statement of kind 'band' or 'floor'."""
    lo, hi = FAIR_TCP
    if kind == "band":
        return (F.rule_range(f"{lo:.0%}", f"{hi:.0%}") + " (the media's share; the delay is shown, not judged)",
                f"fair beside one flow: half ± 15 points ({lo:.0%}–{hi:.0%})")
    return (F.rule_side(f"{SUBSTANTIAL:.0%}", False) + " (the media's share; the delay is shown, not judged)",
            f"at least half an equal share (≥ {SUBSTANTIAL:.0%})")


def _verdict(share: pd.Series, kind: str) -> str:
    return F.in_range(share, *FAIR_TCP) if kind == "band" else F.side(share, SUBSTANTIAL, below=False)


def findings_56(r56: pd.DataFrame) -> list[Finding]:
    """One row per controller and §5.6 queue (the share against the controller's published words),
    and for SCReAM one row ordering its share on the two DropTail sizes by the 0.4 s cap. `r56`
    has per run cc, queue, media_share and delay_median_ms / delay_p95_ms (`delay_above_propagation`
    over the share's window)."""
    fs: list[Finding] = []
    for cc, (words, source, kind) in STATEMENTS.items():
        for q in QUEUE_TEXT:
            a = r56[(r56.cc == cc) & (r56.queue == q)]
            if a.empty:
                continue
            rule, _ = _share_rule(kind)
            fs.append(Finding(f"Published ({NAMES[cc]}): {words} — §5.6's media share beside one CUBIC flow on {QUEUE_TEXT[q]} (20–119 s)",
                              source, f"share {F.spread(a.media_share * 100).show(unit=' %')}; median delay above propagation "
                              f"{F.spread(a.delay_median_ms).show(unit=' ms')}", _verdict(a.media_share, kind), rule, source=source))
    t = SCREAM_QDELAY_HI
    shallow, deep = (r56[(r56.cc == "scream") & (r56.queue == q)].media_share * 100 for q in ("droptail", "droptail_1000ms"))
    if len(shallow) and len(deep) and BUFFER_S["droptail"] < t.lo and t.hi < BUFFER_S["droptail_1000ms"]:
        f = F.ordering(f"Published (SCReAM): its delay target beside loss-based flows is capped at QDELAY_TARGET_HI = 0.4 s, and a "
                       f"tail-drop queue with a large buffer is its worst case — §5.6's share on the 300 ms DropTail (under the cap) "
                       f"above that on the 1000 ms DropTail (over it)", RFC8298_S4123, [("scream", shallow, deep)], unit=" %")
        fs.append(dataclasses.replace(f, tolerance=f"0.4 s {t.text} s: {t.lo:.2f}–{t.hi:.2f} s, between the buffers' 0.3 s and 1.0 s",
                                      source=RFC8298_S4123))
    return fs


def table_56(r56: pd.DataFrame) -> pd.DataFrame:
    """The report's table: per controller and queue the share and delay with their interquartile
    ranges, the published words, the source, our reading and the verdict of the share's row."""
    rows = []
    for cc, (words, source, kind) in STATEMENTS.items():
        for q in QUEUE_TEXT:
            a = r56[(r56.cc == cc) & (r56.queue == q)]
            if a.empty:
                continue
            rows.append({"controller": NAMES[cc], "queue": QUEUE_TEXT[q], "share_pct": F.spread(a.media_share * 100).show(),
                         "delay_median_ms": F.spread(a.delay_median_ms).show(), "delay_p95_ms": F.spread(a.delay_p95_ms).show(),
                         "published": words, "source": source, "our_reading": _share_rule(kind)[1],
                         "verdict": _verdict(a.media_share, kind)})
    return pd.DataFrame(rows)


def markdown_56(tab: pd.DataFrame) -> list[str]:
    """docs/media.md's rows of `table_56` (controller, queue, share %, median and 95th-percentile
    delay above propagation in ms, verdict), as `reproduce rmcat` writes them to
    case_5_6_published.csv."""
    return [f"| {r.controller} | {r.queue} | {r.share_pct} | {r.delay_median_ms} | {r.delay_p95_ms} | {r.verdict} |"
            for r in tab.itertuples()]
