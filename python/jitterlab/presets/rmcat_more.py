"""`reproduce rmcat`'s further cases: RFC 8867 §5.7 (media against short TCP flows) and RFC 8869's
cellular cases, on the simulator, each with its findings by a stated rule (docs/media.md).

§5.7, parameters as the ns-3 RMCAT model's rmcat-wired suite encodes RFC 8867 (its comments quote the
draft's traffic timeline): 2 Mbit/s bottleneck, 50 ms one way, 300 ms DropTail; two media flows
5–299 s; ten short TCP flows, each a sequence of downloads of 30–50 KiB with exponential gaps of mean
10 s (RFC 8868 §5.1's short-flow model), two of them ON at the start, from 10 s to 290 s; 300 s.
Here each short flow's downloads are a Poisson process of rate 1/10 s conditioned on its mean count
(28 in 280 s): 28 connections whose starts are uniform on [10 s, 290 s] (exactly the process given
its count), each a new connection (slow start from IW10, as ns-3's fresh BulkSend per download); the
flow's download size is fixed, the ten flows' sizes spread evenly over 30–50 KiB (mean 40 KiB as
the uniform draw's); the two ON flows add a download at 10 s.

RFC 8869 §2 (cellular): its cases (§2.1 varying network load, §2.2 bad radio coverage, both with
mobility) are defined on a system-level LTE simulation (cells, UEs, schedulers) that jitterlab does not have. What this preset
runs instead, with one video flow of each controller (and its audio) on RFC 8867's path (50 ms, media 150 kbit/s –
1.5 Mbit/s) whose bottleneck is jitterlab's per-user cellular model (docs/scenarios.md): `low load`
= the model's calibrated HSPA defaults (3 Mbit/s mean, 45 % of TTIs); `high load` = a loaded cell
(1 Mbit/s mean, 0.5–2 Mbit/s, 15 % of TTIs: three times the users; ours); `trace` = the high-load
model's channel written once as a Mahimahi trace (`jitterlab trace generate`'s code, seed
`TRACE_SEED`) and replayed in every replication; `bad coverage` = a cell-edge user (0.6 Mbit/s mean,
block errors 30 % / 10 %; ours); `mobility` = a fast-varying channel (1.5 Mbit/s mean, σ 0.5, 0.2 s
coherence; ours). 91 s, measured over 30–60 s (RFC 8869 §2.1.2's simulation duration and evaluation
period; after GCC's ramp
from 150 kbit/s).
"""
from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pandas as pd

from jitterlab import rtc_metrics as R
from jitterlab.presets import findings as F
from jitterlab.presets.findings import Finding
from jitterlab.presets.rmcat_common import MAX_RATE, _frames, _links, _rate_panels, _video, quartile_table, queue_300ms, video_ids, with_audio
from jitterlab.report import Report
from jitterlab.sweep import Param, Sweep

# ----------------------------------------------------------------------------- §5.7

CAP_57 = 2.0e6
SHORT_FLOWS = 10
SHORT_ON = 2
SHORT_FROM_S, SHORT_TO_S = 10.0, 290.0
SHORT_GAP_S = 10.0
SHORT_KIB = (30.0, 50.0)
#: each short flow's downloads in [10 s, 290 s): the Poisson count's mean
SHORT_COUNT = int(round((SHORT_TO_S - SHORT_FROM_S) / SHORT_GAP_S))
WINDOW_57 = (20.0, 299.0)
#: the short flows' offered load: 10 flows × 28 downloads × 40 KiB over 280 s (+ the 2 at 10 s)
SHORT_LOAD_BPS = (SHORT_FLOWS * SHORT_COUNT + SHORT_ON) * sum(SHORT_KIB) / 2 * 1024 * 8 / (SHORT_TO_S - SHORT_FROM_S)
#: no starvation (ours; RFC 8867 gives no number): the weaker media flow gets at least half of an
#: equal share of what the short flows leave
STARVE_SHARE = 0.5
STARVE_BPS = STARVE_SHARE * (CAP_57 - SHORT_LOAD_BPS) / 2
JAIN_BOUND = 0.9


def short_size(i: int) -> str:
    """Flow i's download size: the ten flows spread evenly over 30–50 KiB (bin centres)."""
    lo, hi = SHORT_KIB
    return f"{int(round((lo + (hi - lo) * (i + 0.5) / SHORT_FLOWS) * 1024))}B"


def short_flows() -> list[dict[str, Any]]:
    """The ten short TCP flows (and the two ON flows' first downloads) as traffic entries."""
    span = f"{SHORT_TO_S - SHORT_FROM_S:g}s"
    out = []
    for i in range(SHORT_FLOWS):
        base = {"kind": "bulk", "from": "sender", "to": "receiver", "cc": "cubic", "size": short_size(i)}
        out.append({**base, "name": f"short{i}", "flows": SHORT_COUNT, "start": f"{SHORT_FROM_S:g}s",
                    "stagger": {"dist": "uniform", "min": "0s", "max": span}})
        if i < SHORT_ON:
            out.append({**base, "name": f"short{i}_on", "start": f"{SHORT_FROM_S:g}s"})
    return out


def scenario_57() -> dict[str, Any]:
    return {"name": "rmcat-5.7", "duration": "300s", "links": _links({"rate": "2Mbit"}, queue_300ms(CAP_57)),
            "traffic": with_audio([_video(f"video{i}", "5s", "299s") for i in range(2)] + short_flows())}


def per_run_57(res: Mapping[str, Any]) -> pd.DataFrame:
    """Per run: each media flow's received rate over 20–299 s, the weaker one's, Jain's index of
    the two, median and 95th-percentile queueing delay, frame delay p95, the short downloads'
    median completion time (first SYN to last byte) and how many finished."""
    m, runs, t = res["media_packets"], res["runs"], res["tcp_flows"]
    a, b = WINDOW_57
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        rates = [R.utilisation(mr, [(0.0, CAP_57)], a, b, flows=[f]) * CAP_57 for f in video_ids(mr)]
        q = R.queueing_delay(mr).qdelay_ns / 1e6
        fr = res["rtc_frames"]
        fd = R.frame_delays(fr[fr.run_id == run.run_id], mr).frame_delay_ns.dropna().astype(float) / 1e6
        tr = t[t.run_id == run.run_id]
        done = tr.end_ns.notna()
        comp = (tr.end_ns[done].astype("int64") - tr.syn_ns[done].astype("int64")) / 1e9
        rows.append({"run_id": run.run_id, "cc": run.cc, "media_kbps_low": min(rates) / 1e3, "media_kbps_high": max(rates) / 1e3,
                     "jain": R.jain_index(rates), "qdelay_median_ms": float(q.median()), "qdelay_p95_ms": float(q.quantile(0.95)),
                     "frame_delay_p95_ms": float(fd.quantile(0.95)), "short_completion_median_s": float(comp.median()),
                     "short_done": int(done.sum()), "short_total": len(tr)})
    return pd.DataFrame(rows)


def findings_57(r: pd.DataFrame, controllers: list[str]) -> list[Finding]:
    fs = []
    for cc in controllers:
        a = r[r.cc == cc]
        fs.append(Finding(f"§5.7 {cc}: no media flow starves beside ten short TCP flows (the weaker of the two gets ≥ "
                          f"{STARVE_BPS / 1e3:.0f} kbit/s over 20–299 s)",
                          "RFC 8867 §5.7 (\"avoid flow starvation ... streaming at least at the minimum media bit rate\", 150 kbit/s); bound ours, "
                          "stricter: half an equal "
                          f"share of what the short flows leave, ({CAP_57 / 1e6:g} − {SHORT_LOAD_BPS / 1e6:.2f}) / 2 Mbit/s",
                          F.spread(a.media_kbps_low).show(unit=" kbit/s"), F.side(a.media_kbps_low, STARVE_BPS / 1e3, below=False),
                          F.rule_side(f"{STARVE_BPS / 1e3:.0f} kbit/s", False)))
        fs.append(Finding(f"§5.7 {cc}: the two media flows share fairly beside the short flows (Jain ≥ {JAIN_BOUND}, 20–299 s)",
                          "RFC 8867 §5.7; bound ours (as §5.2/§5.4)", F.spread(a.jain).show(fmt="{:.3f}"),
                          F.side(a.jain, JAIN_BOUND, below=False), F.rule_side(f"{JAIN_BOUND}", False)))
    return fs


# ----------------------------------------------------------------------------- RFC 8869, cellular

LOW_LOAD = {"mean_rate": "3.0Mbit", "min_rate": "2.7Mbit", "max_rate": "5Mbit", "sigma": 0.19, "coherence": "1s", "tti": "2ms",
            "share": 0.45, "bler": 0.1, "bler_retx": 0.03, "harq_rtt": "12ms", "harq_max_tx": 4, "rlc_delay": "60ms"}
HIGH_LOAD = {**LOW_LOAD, "mean_rate": "1.0Mbit", "min_rate": "0.5Mbit", "max_rate": "2Mbit", "share": 0.15}
#: RFC 8869's bad radio coverage (ours): a user at the cell edge — a low rate and three times the
#: block errors (first transmission 30 %, retransmissions 10 %), the cell itself not loaded
BAD_COVERAGE = {**LOW_LOAD, "mean_rate": "0.6Mbit", "min_rate": "0.3Mbit", "max_rate": "1.2Mbit", "bler": 0.3, "bler_retx": 0.1}
#: RFC 8869's mobility (ours): a fast-varying channel — σ of ln(rate) 0.5 (clipped to 0.3–5 Mbit/s)
#: and a 0.2 s coherence time instead of the calibrated 0.19 and 1 s
MOBILITY = {**LOW_LOAD, "mean_rate": "1.5Mbit", "min_rate": "0.3Mbit", "max_rate": "5Mbit", "sigma": 0.5, "coherence": "200ms"}
MEAN_BPS = {"low load": 3.0e6, "high load": 1.0e6, "trace": 1.0e6, "bad coverage": 0.6e6, "mobility": 1.5e6}
TRACE_SEED = 8869
#: RFC 8869 §2.1.2: "Simulation duration: 91 s", "Evaluation period: 30 s - 60 s"
CELL_DURATION_S = 91
WINDOW_8869 = (30.0, 60.0)
#: ours: the media uses at least half of what it could (min of the mean capacity and max_rate)
CELL_USE = 0.5
CELL_QDELAY_MS = 100.0


def cell_trace(model: Mapping[str, Any] = HIGH_LOAD, seed: int = TRACE_SEED, duration_s: int = CELL_DURATION_S) -> str:
    """The model's channel as a Mahimahi trace (what `jitterlab trace generate` writes)."""
    from jitterlab import _native

    stamps, _ = _native.cellular_trace(json.dumps(dict(model)), f"{duration_s + 10}s", seed, "bottleneck")
    return "".join(f"{s}\n" for s in stamps)


def trace_steps(bin_s: float = 1.0) -> list[tuple[float, float]]:
    """The generated trace's capacity per `bin_s` bin (1504-byte opportunities), as a step schedule."""
    stamps = np.array([int(x) for x in cell_trace().split()], dtype=float) / 1e3
    counts = np.bincount((stamps // bin_s).astype(int), minlength=CELL_DURATION_S)[:CELL_DURATION_S]
    return [(i * bin_s, float(c) * 1504 * 8 / bin_s) for i, c in enumerate(counts)]


def scenario_8869() -> dict[str, Any]:
    """One video flow over RFC 8867's path with the cellular model as the bottleneck (the `link`
    parameter picks the model or the trace); 300 ms DropTail at the low-load mean rate."""
    return {"name": "rmcat-8869", "duration": f"{CELL_DURATION_S}s", "links": _links({"cellular": dict(LOW_LOAD)}, queue_300ms(3.0e6)),
            "traffic": with_audio([_video("video", stop=f"{CELL_DURATION_S - 1}s")])}


def link_param() -> Param:
    trace = {"trace": {"path": "rmcat-8869-high-load.trace", "data": cell_trace()}}
    return Param("link", list(MEAN_BPS), [{"links.bottleneck.cellular": dict(LOW_LOAD)},
                                          {"links.bottleneck.cellular": dict(HIGH_LOAD), "links.bottleneck.queue": queue_300ms(1e6)},
                                          {"links.bottleneck": {**_links(trace, queue_300ms(1e6))["bottleneck"]}},
                                          {"links.bottleneck.cellular": dict(BAD_COVERAGE), "links.bottleneck.queue": queue_300ms(0.6e6)},
                                          {"links.bottleneck.cellular": dict(MOBILITY), "links.bottleneck.queue": queue_300ms(1.5e6)}])


def per_run_8869(res: Mapping[str, Any]) -> pd.DataFrame:
    """Per run: received media rate over the evaluation period (30–60 s), its use of min(mean capacity, max_rate), median
    and 95th-percentile queueing delay, frame delay p95, complete frames."""
    m, runs = res["media_packets"], res["runs"]
    a, b = WINDOW_8869
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        mr = mr[mr.flow_id.isin(video_ids(mr))]  # the adaptive flow (its audio is 36 kbit/s CBR)
        cap = MEAN_BPS[run.link]
        kbps = R.utilisation(mr, [(0.0, cap)], a, b) * cap / 1e3
        q = R.queueing_delay(mr)
        q = q[(q.recv_ns >= a * 1e9) & (q.recv_ns < b * 1e9)].qdelay_ns / 1e6
        rows.append({"run_id": run.run_id, "cc": run.cc, "link": run.link, "media_kbps": kbps,
                     "use": kbps * 1e3 / min(cap, MAX_RATE), "qdelay_median_ms": float(q.median()),
                     "qdelay_p95_ms": float(q.quantile(0.95)), **{k: v for k, v in _frames(res, run.run_id, mr).items()
                                                                 if k in ("frame_delay_p95_ms", "frames_complete")}})
    return pd.DataFrame(rows)


def findings_8869(r: pd.DataFrame, controllers: list[str]) -> list[Finding]:
    fs = []
    for link in MEAN_BPS:
        for cc in controllers:
            a = r[(r.cc == cc) & (r.link == link)]
            src = "RFC 8869 §2 (cellular: the media should follow the radio link's capacity without a standing queue); bounds ours"
            fs.append(Finding(f"RFC 8869 cellular, {link}, {cc}: the media uses ≥ {CELL_USE:.0%} of min(mean capacity, max_rate) "
                              f"and its median queueing delay stays below {CELL_QDELAY_MS:.0f} ms ({WINDOW_8869[0]:g}–{WINDOW_8869[1]:g} s)", src,
                              f"use {F.spread(a.use * 100).show(unit=' %')}; queueing delay {F.spread(a.qdelay_median_ms).show(unit=' ms')}",
                              F.worst([F.side(a.use, CELL_USE, below=False), F.side(a.qdelay_median_ms, CELL_QDELAY_MS, below=True)]),
                              F.rule_side(f"{CELL_USE:.0%}", False) + "; and " + F.rule_side(f"{CELL_QDELAY_MS:.0f} ms", True)
                              + "; one verdict: the worse (findings.worst)"))
    return fs


# ----------------------------------------------------------------------------- the preset's part

def sweeps(reps: int, cc_param: Any, seed: int, tables: tuple[str, ...]) -> dict[str, Sweep]:
    return {"5.7": Sweep("rmcat-5.7", scenario_57(), seed=seed, replications=reps, params=[cc_param(2)], tables=tables + ("tcp_flows",)),
            "8869": Sweep("rmcat-8869", scenario_8869(), seed=seed, replications=reps, params=[cc_param(1), link_param()], tables=tables)}


def section(rep: Report, res: Mapping[str, Any], controllers: list[str]) -> tuple[list[Finding], dict[str, pd.DataFrame]]:
    """The report's §5.7 and RFC 8869 sections; returns their findings and per-run tables."""
    r57, r8869 = per_run_57(res["5.7"]), per_run_8869(res["8869"])
    rep.section("§5.7 Media against short TCP flows",
                f"2 Mbit/s, 300 ms DropTail; two media flows 5–299 s; ten short TCP flows (CUBIC), each {SHORT_COUNT} downloads of "
                f"30–50 KiB started uniformly in [10 s, 290 s] (a Poisson process of mean gap 10 s given its count), two also at "
                f"10 s; their offered load {SHORT_LOAD_BPS / 1e3:.0f} kbit/s. Rates over 20–299 s.")
    _rate_panels(rep, res["5.7"], "Two media flows beside ten short TCP flows on 2 Mbit/s (RFC 8867 §5.7).", "rmcat-5.7",
                 [(0.0, CAP_57)], len(set(res["5.7"]["runs"].replication)), "media 5–299 s; short flows 10–290 s", end_s=300.0)
    rep.table(quartile_table(r57, ["cc"], ["media_kbps_low", "media_kbps_high", "jain", "qdelay_median_ms", "qdelay_p95_ms",
                                   "frame_delay_p95_ms", "short_completion_median_s", "short_done"]),
              "§5.7 per controller: the weaker and the stronger media flow's received rate (kbit/s), Jain's index, queueing "
              "delay median / 95th percentile, frame delay p95 (ms), the short downloads' median completion time (s) and how many "
              "finished — median, 25th, 75th percentile over replications", "{:.2f}", name="case_5_7")
    rep.section("RFC 8869 cellular cases on the cellular model and on a generated trace",
                "One video flow (and its 20 kbit/s audio) on RFC 8867's path whose bottleneck is jitterlab's cellular model: low load (the calibrated HSPA "
                "defaults, 3 Mbit/s mean), high load (1 Mbit/s mean, 15 % of TTIs), the high-load model's channel written as a "
                f"Mahimahi trace (seed {TRACE_SEED}) and replayed, bad coverage (a cell-edge user: 0.6 Mbit/s mean, block errors "
                f"30 % / 10 %) and mobility (1.5 Mbit/s mean, σ 0.5, 0.2 s coherence); {CELL_DURATION_S} s, measured over "
                f"{WINDOW_8869[0]:g}–{WINDOW_8869[1]:g} s (RFC 8869 §2.1.2). RFC 8869's own cases need a "
                "system-level LTE simulation; these are their situations on a per-user model (docs/media.md).")
    tr = res["8869"]["runs"]
    on_trace = {"media_packets": res["8869"]["media_packets"], "runs": tr[tr.link == "trace"]}
    _rate_panels(rep, on_trace, "Media rate over the generated high-load cellular trace against its capacity (RFC 8869).",
                 "rmcat-8869-trace", trace_steps(), len(set(tr.replication)), f"capacity: the trace's, 1 s bins (seed {TRACE_SEED})",
                 end_s=float(CELL_DURATION_S))
    rep.table(quartile_table(r8869, ["link", "cc"], ["media_kbps", "use", "qdelay_median_ms", "qdelay_p95_ms", "frame_delay_p95_ms",
                                             "frames_complete"]),
              "RFC 8869 cellular per link and controller: received media rate (kbit/s), its use of min(mean capacity, max_rate), "
              "queueing delay median / 95th percentile, frame delay p95 (ms), complete frames", "{:.2f}", name="case_8869")
    return findings_57(r57, controllers) + findings_8869(r8869, controllers), {"case_5_7": r57, "case_8869": r8869}
