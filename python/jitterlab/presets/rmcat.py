"""RMCAT test cases (RFC 8867, "Test Cases for Evaluating Congestion Control for Interactive
Real-Time Media") for the adaptive media controllers GCC, SCReAM and NADA on the simulator, with
RFC 8868's metrics (jitterlab.rtc_metrics; definitions in docs/media.md).

Cases (parameters from RFC 8867's text; docs/media.md, "RFC 8867 parameters used", lists where they still differ):
sender — router (100 Mbit/s) — receiver, the bottleneck in the router; one-way propagation delay 50 ms, bottleneck DropTail of 300 ms at the case's reference capacity, media
150 kbit/s – 1.5 Mbit/s starting at 150 kbit/s, 30 fps video, RFC 8888 feedback every 100 ms; beside
each video a 20 kbit/s CBR audio flow (RFC 8867 §4.3; rmcat_common.with_audio).

- §5.1 variable available capacity, one flow: 1.0 Mbit/s from 0 s, 2.5 from 40 s, 0.6 from 60 s,
  1.0 from 80 s; 100 s (the steps replayed as a Mahimahi trace).
- §5.2 variable capacity, two flows: 4.0 / 2.0 / 3.5 / 1.0 / 2.0 Mbit/s from 0 / 25 / 50 / 75 /
  100 s; 125 s; 300 ms DropTail at 2 Mbit/s.
- §5.3 congested feedback link with bi-directional media: forward 2.0 → 1.0 (20 s) → 0.5 (40 s) →
  2.0 Mbit/s (60 s), backward 2.0 → 0.8 (35 s) → 2.0 Mbit/s (70 s) (the 1 Mbit/s reference × the
  RFC's ratios; 300 ms queues at 1 Mbit/s); a video flow each way; 100 s.
- §5.4 competing media flows, same controller: 3 flows starting at 0, 20, 40 s; 3.5 Mbit/s; 120 s.
- §5.5 RTT fairness: 5 flows, one-way delays 10 / 25 / 50 / 100 / 150 ms, starting at 0 / 10 / 20 /
  30 / 40 s; 4 Mbit/s; 300 s.
- §5.6 media against a long TCP flow: 2 Mbit/s; CUBIC bulk from 0 s, media 5–119 s; 120 s; on
  DropTail (300 ms and 1000 ms, the RFC's two sizes) and on FQ-CoDel (RFC 8290 defaults).
- §5.8 pause and resume: §5.4's three flows all from 0 s, the second paused 40–60 s.
- §6.2 ECN: "running all the basic test cases with ... ECN ... enabled"; here §5.1's steps behind
  FQ-CoDel with ECN, the media with and without ECT(0) (one basic case, and FQ-CoDel as the marking
  queue: ours).

- This project's question: an adaptive video call on the PAM 2013 cellular link, alone and beside the
  study's 28 MB download.
- §5.7 (media against short TCP flows) and RFC 8869's cellular cases: presets.rmcat_more.
- §6.1 (media flows with priority) and §6.3 (multiple bottlenecks): presets.rmcat_extra.

§5.1 and §5.6 on real Linux beside the simulator: presets.rmcat_testbed (`--testbed`, root).
RFC 8869's Wi-Fi cases are not here."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from jitterlab import plots
from jitterlab import rtc_metrics as R
from jitterlab.presets import findings as F
from jitterlab.presets import rmcat_extra, rmcat_more, rmcat_published, rmcat_published_tcp
from jitterlab.presets.common import Options, caption, flat, run_experiment
from jitterlab.presets.findings import Finding, write_csv
# the path and media of every case, shared with rmcat_more (its further cases)
from jitterlab.presets.rmcat_common import (CONTROLLERS, DELAY, MAX_RATE, _frames, _links, _rate_panels, _video, quartile_table, queue_300ms,  # noqa: F401
                                             video_ids, with_audio)
from jitterlab.report import Report
from jitterlab.sweep import Param, Sweep

DESCRIPTION = ("RFC 8867's RMCAT test cases (variable capacity, competing media, media vs long and short TCP, priority, multiple "
               "bottlenecks) and RFC 8869's "
               "cellular situations for GCC, SCReAM, NADA, with published results beside")
SEED = 8867
STEPS_51 = [(0.0, 1.0e6), (40.0, 2.5e6), (60.0, 0.6e6), (80.0, 1.0e6)]
# §5.2: two flows on a varying capacity
STEPS_52 = [(0.0, 4.0e6), (25.0, 2.0e6), (50.0, 3.5e6), (75.0, 1.0e6), (100.0, 2.0e6)]
# §5.5: five flows with these one-way propagation delays, starting 10 s apart
RTT_55_MS = [10, 25, 50, 100, 150]
# §5.3, forward (sender → receiver) and backward capacities: the reference capacity, 1 Mbit/s, ×
# the path capacity ratios of RFC 8867's Tables 3 and 4
REF_53 = 1.0e6
STEPS_53_FWD = [(0.0, 2.0e6), (20.0, 1.0e6), (40.0, 0.5e6), (60.0, 2.0e6)]
STEPS_53_BWD = [(0.0, 2.0e6), (35.0, 0.8e6), (70.0, 2.0e6)]
# our convergence bounds (RFC 8867/8868 state none; docs/media.md): after a rise, a fall
RISE_S, FALL_S = 10.0, 2.5
QDELAY_BOUND_MS = 100.0
UTIL_BOUND = 0.60
JAIN_BOUND = 0.9
RESUME_BOUND = 1.2
TABLES = ("media_packets", "runs", "rtc_series", "rtc_frames")


FQ_CODEL = {"kind": "fq_codel"}
# §5.6's bottleneck queues: RFC 8867 §5.6 lists [300 ms, 1000 ms] at 2 Mbit/s (250 000 B); FQ-CoDel
# is ours (§4.2 encourages AQMs such as FQ-CoDel)
QUEUES_56 = {"droptail": queue_300ms(2e6),
             "droptail_1000ms": {"kind": "droptail", "limit": f"{int(2e6 * 1.0 / 8)}B"}, "fq_codel": FQ_CODEL}


def step_trace(steps: list[tuple[float, float]], end_s: int) -> str:
    """A Mahimahi trace for the capacity schedule: opportunity k (1504 bytes) at the first
    millisecond by which the schedule has carried k·1504 bytes."""
    times = np.arange(1, end_s * 1000 + 1)
    rate = R.capacity_at(steps, (times - 1) / 1000.0)
    carried = np.cumsum(rate / 8.0 / 1000.0)
    k = np.floor(carried / 1504.0 + 1e-9).astype(np.int64)
    per_ms = np.diff(np.concatenate([[0], k]))
    return "".join(f"{t}\n" * int(n) for t, n in zip(times, per_ms) if n)


def scenario_51() -> dict[str, Any]:
    return {"name": "rmcat-5.1", "duration": "100s",
            "links": _links({"trace": {"path": "rmcat-5.1.trace", "data": step_trace(STEPS_51, 100)}}, queue_300ms(1.0e6)),
            "traffic": with_audio([_video("video", stop="99s")])}


def scenario_52() -> dict[str, Any]:
    return {"name": "rmcat-5.2", "duration": "125s",
            "links": _links({"trace": {"path": "rmcat-5.2.trace", "data": step_trace(STEPS_52, 125)}}, queue_300ms(2e6)),
            "traffic": with_audio([_video(f"video{i}", stop="124s") for i in range(2)])}


def scenario_55() -> dict[str, Any]:
    """§5.5: each flow from its own sender, whose access link carries the flow's one-way delay,
    into the router; the 4 Mbit/s bottleneck itself adds none."""
    links: dict[str, Any] = {f"access{i}": {"from": f"sender{i}", "to": "router", "rate": "100Mbit", "delay": f"{d}ms"}
                             for i, d in enumerate(RTT_55_MS)}
    links["bottleneck"] = {"from": "router", "to": "receiver", "rate": "4Mbit", "delay": "0ms", "queue": queue_300ms(4e6),
                           "reverse": {"rate": "10Mbit", "queue": {"kind": "droptail", "limit": "1000pkt"}}}
    traffic = with_audio([{**_video(f"video{i}", f"{10 * i}s", "299s"), "from": f"sender{i}"} for i in range(len(RTT_55_MS))])
    return {"name": "rmcat-5.5", "duration": "300s", "links": links, "traffic": traffic}


def scenario_53() -> dict[str, Any]:
    """§5.3: media both ways; each flow's feedback crosses the other direction's bottleneck. The
    queues hold 300 ms at the reference capacity, 1 Mbit/s (RFC 8867 §4.2 and §5.3), as §5.1's and
    §5.2's at theirs."""
    links = _links({"trace": {"path": "rmcat-5.3-fwd.trace", "data": step_trace(STEPS_53_FWD, 100)}}, queue_300ms(REF_53))
    links["bottleneck"]["reverse"] = {"trace": {"path": "rmcat-5.3-bwd.trace", "data": step_trace(STEPS_53_BWD, 100)},
                                      "queue": queue_300ms(REF_53)}
    back = {**_video("video_back", stop="99s"), "from": "receiver", "to": "sender"}
    return {"name": "rmcat-5.3", "duration": "100s", "links": links, "traffic": with_audio([_video("video", stop="99s"), back])}


def scenario_ecn() -> dict[str, Any]:
    """RFC 8867's ECN case, on §5.1's capacity steps behind FQ-CoDel (RFC 8290, marking ECT
    packets): the media sends ECT(0) or not (the `ecn` parameter)."""
    sc = scenario_51()
    sc["name"] = "rmcat-ecn"
    sc["links"]["bottleneck"]["queue"] = {"kind": "fq_codel", "ecn": True}
    return sc


def scenario_pam2013(workload: str = "alone") -> dict[str, Any]:
    """This project's question for an adaptive call: a video call (server → mobile) on the PAM 2013
    link with jitterlab's calibrated cellular model (presets/links/cellular.toml: ~3 Mbit/s, 500-packet
    buffer), alone or beside the study's 28 MB CUBIC download from U(10, 12) s; 60 s."""
    from jitterlab.presets import pam2013

    sc = pam2013.base_scenario("cellular")
    sc["name"] = "rmcat-pam2013"
    sc["duration"] = "60s"
    sc["traffic"] = [{"kind": "video", "name": "video", "from": "server", "to": "mobile", "cc": "gcc"},
                     {"kind": "bulk", "name": "bulk", "from": "server", "to": "mobile", "cc": "cubic", "abc": True,
                      "size": pam2013.BULK_SIZE, "iw": 10, "start": "10s", "enabled": workload == "bulk"}]
    return sc


def scenario_54() -> dict[str, Any]:
    return {"name": "rmcat-5.4", "duration": "120s", "links": _links({"rate": "3.5Mbit"}, queue_300ms(3.5e6)),
            "traffic": with_audio([_video(f"video{i}", f"{s}s", "119s") for i, s in enumerate((0, 20, 40))])}


def scenario_58() -> dict[str, Any]:
    """§5.8: §5.4's three flows on 3.5 Mbit/s, all from 0 s; the second pauses 40–60 s."""
    sc = scenario_54()
    sc["name"] = "rmcat-5.8"
    for t in sc["traffic"]:
        t["start"] = "0s"
    sc["traffic"][1]["pause"] = [["40s", "60s"]]  # flow ID 2 of RFC 8867's Table 5: the second video
    return sc


def scenario_56() -> dict[str, Any]:
    return {"name": "rmcat-5.6", "duration": "120s", "links": _links({"rate": "2Mbit"}, queue_300ms(2e6)),
            "traffic": with_audio([_video("video", "5s", "119s"),
                                   {"kind": "bulk", "name": "tcp", "from": "sender", "to": "receiver", "cc": "cubic", "size": "1GB",
                                    "rcvbuf": "1MB"}])}  # a greedy flow: the window never limits it


def _cc(n_flows: int) -> Param:
    return Param("cc", CONTROLLERS, [{f"traffic[{i}].cc": c for i in range(n_flows)} for c in CONTROLLERS])


def sweeps(reps: int) -> dict[str, Sweep]:
    return {
        "5.1": Sweep("rmcat-5.1", scenario_51(), seed=SEED, replications=reps, params=[_cc(1)], tables=TABLES),
        "5.2": Sweep("rmcat-5.2", scenario_52(), seed=SEED, replications=reps, params=[_cc(2)], tables=TABLES),
        "5.5": Sweep("rmcat-5.5", scenario_55(), seed=SEED, replications=reps, params=[_cc(len(RTT_55_MS))], tables=TABLES),
        "5.3": Sweep("rmcat-5.3", scenario_53(), seed=SEED, replications=reps, params=[_cc(2)], tables=TABLES),
        "ecn": Sweep("rmcat-ecn", scenario_ecn(), seed=SEED, replications=reps,
                     params=[_cc(1), Param("ecn", [False, True], [{"traffic[0].ecn": False}, {"traffic[0].ecn": True}])], tables=TABLES),
        "pam2013": Sweep("rmcat-pam2013", scenario_pam2013(), seed=SEED, replications=reps,
                         params=[_cc(1), Param("workload", ["alone", "bulk"], [{"traffic[1].enabled": False}, {"traffic[1].enabled": True}])],
                         random={"traffic[1].start": {"dist": "uniform", "min": "10s", "max": "12s"}}, tables=TABLES + ("tcp_flows",)),
        "5.4": Sweep("rmcat-5.4", scenario_54(), seed=SEED, replications=reps, params=[_cc(3)], tables=TABLES),
        "5.8": Sweep("rmcat-5.8", scenario_58(), seed=SEED, replications=reps, params=[_cc(3)], tables=TABLES),
        "5.6": Sweep("rmcat-5.6", scenario_56(), seed=SEED, replications=reps,
                     params=[_cc(1), Param("queue", list(QUEUES_56), [{"links.bottleneck.queue": dict(q)} for q in QUEUES_56.values()])],
                     tables=TABLES + ("tcp_flows",)),
        **rmcat_more.sweeps(reps, _cc, SEED, TABLES),
        **rmcat_extra.sweeps(reps, _cc, SEED, TABLES),
    }


def per_run_51(res) -> pd.DataFrame:
    """Per run: convergence after each step, median queueing delay, use of the 2.5 Mbit/s step."""
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        flow = video_ids(mr)[0]
        conv: dict[str, float] = {}
        for (at, cap), (_, prev) in zip(STEPS_51[1:], STEPS_51[:-1]):
            conv[f"conv_{int(at)}s"] = R.convergence_time(mr, flow, at, cap, cap > prev, MAX_RATE, 30.0)
        rises = [conv["conv_40s"], conv["conv_80s"]]
        rows.append({"run_id": run.run_id, "cc": run.cc, **conv,
                     "worst_rise_s": max(np.inf if np.isnan(x) else x for x in rises),
                     "fall_s": np.inf if np.isnan(conv["conv_60s"]) else conv["conv_60s"],
                     "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6,
                     "util_2_5": R.utilisation(mr, STEPS_51, 45.0, 60.0), **_frames(res, run.run_id, mr)})
    return pd.DataFrame(rows)


def per_run_56(res) -> pd.DataFrame:
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        share = R.utilisation(mr, [(0.0, 2e6)], 20.0, 119.0)
        d50, d95 = rmcat_published_tcp.delay_above_propagation(mr, float(DELAY.removesuffix("ms")), 20.0, 119.0)
        rows.append({"run_id": run.run_id, "cc": run.cc, "queue": run.queue, "media_share": share, "delay_median_ms": d50, "delay_p95_ms": d95,
                     "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6,
                     "qdelay_p95_ms": R.queueing_delay(mr).qdelay_ns.quantile(0.95) / 1e6, **_frames(res, run.run_id, mr)})
    return pd.DataFrame(rows)


def per_run_53(res) -> pd.DataFrame:
    """Per run and direction: convergence after each of its direction's steps (rises and falls
    as in §5.1), median queueing delay, use of its direction's capacity over the run."""
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        # media flow ids follow the traffic entries (each followed by its feedback flow): forward first
        ids = video_ids(mr)
        for fid, steps, dirn in ((ids[0], STEPS_53_FWD, "forward"), (ids[-1], STEPS_53_BWD, "backward")):
            f = mr[mr.flow_id == fid]
            worst_rise, worst_fall = 0.0, 0.0
            for (at, cap), (_, prev) in zip(steps[1:], steps[:-1]):
                c = R.convergence_time(f, int(fid), at, cap, cap > prev, MAX_RATE, 30.0)
                c = np.inf if np.isnan(c) else c
                if cap > prev:
                    worst_rise = max(worst_rise, c)
                else:
                    worst_fall = max(worst_fall, c)
            rows.append({"run_id": run.run_id, "cc": run.cc, "direction": dirn, "worst_rise_s": worst_rise, "worst_fall_s": worst_fall,
                         "qdelay_median_ms": R.queueing_delay(f).qdelay_ns.median() / 1e6,
                         "util": R.utilisation(f, steps, 0.0, 99.0)})
    return pd.DataFrame(rows)


def per_run_shared(res, steps: list[tuple[float, float]], start_s: float, end_s: float) -> pd.DataFrame:
    """Per run: Jain's index of the flows' received rates over [start_s, end_s), their total use of
    the capacity, median queueing delay over all flows."""
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        rates = [R.utilisation(mr, steps, start_s, end_s, flows=[f]) for f in video_ids(mr)]
        rows.append({"run_id": run.run_id, "cc": run.cc, "jain": R.jain_index(rates), "total_util": sum(rates),
                     "lowest_share": min(rates) / max(sum(rates), 1e-12), "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6})
    return pd.DataFrame(rows)


def per_run_pam2013(res) -> pd.DataFrame:
    """Per run: the call's media rate, queueing delay and frames in [12 s, 60 s) (after the
    download's latest start), and the download's bytes."""
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        late = mr[mr.send_ns >= 12_000_000_000]
        fr = res["rtc_frames"]
        fr = fr[(fr.run_id == run.run_id) & (fr.capture_ns >= 12_000_000_000)]
        d = R.frame_delays(fr, mr).frame_delay_ns.dropna().astype(float) / 1e6
        rows.append({"run_id": run.run_id, "cc": run.cc, "workload": run.workload,
                     "media_kbps": float(late.loc[late.recv_ns.notna(), "size"].sum()) * 8 / 48.0 / 1e3,
                     "qdelay_median_ms": R.queueing_delay(mr)[lambda q: q.recv_ns >= 12_000_000_000].qdelay_ns.median() / 1e6,
                     "frame_delay_median_ms": d.median(), "frame_delay_p95_ms": d.quantile(0.95),
                     "frames_complete": len(d) / max(len(fr), 1)})
    return pd.DataFrame(rows)


def per_run_58(res) -> pd.DataFrame:
    """Per run: the three flows' total sending rate in the 5 s after the resume at 60 s over the
    capacity, the 95th-percentile queueing delay then against 30–40 s, Jain's index over 80–119 s."""
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        sent = mr[(mr.send_ns >= 60_000_000_000) & (mr.send_ns < 65_000_000_000)]["size"].sum() * 8 / 5.0
        q = R.queueing_delay(mr)
        p95 = lambda a, b: q[(q.recv_ns >= a * 1e9) & (q.recv_ns < b * 1e9)].qdelay_ns.quantile(0.95) / 1e6
        rates = [R.utilisation(mr, [(0.0, 3.5e6)], 80.0, 119.0, flows=[f]) for f in video_ids(mr)]
        rows.append({"run_id": run.run_id, "cc": run.cc, "resume_load": float(sent) / 3.5e6, "qdelay_p95_before_ms": p95(30, 40),
                     "qdelay_p95_resume_ms": p95(60, 70), "jain_after": R.jain_index(rates)})
    return pd.DataFrame(rows)


def per_run_ecn(res) -> pd.DataFrame:
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        v = mr[mr.flow_id.isin(video_ids(mr))]  # the ECT(0) flow; its audio sends Not-ECT
        rows.append({"run_id": run.run_id, "cc": run.cc, "ecn": bool(run.ecn), "replication": run.replication,
                     "loss": float(v.recv_ns.isna().mean()),
                     "ce": float(v.ce.fillna(False).astype(bool).mean()), "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6,
                     "util": R.utilisation(mr, STEPS_51, 0.0, 99.0), **_frames(res, run.run_id, mr)})
    return pd.DataFrame(rows)


def per_run_54(res) -> pd.DataFrame:
    m, runs = res["media_packets"], res["runs"]
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        rates = [R.utilisation(mr, [(0.0, 3.5e6)], 60.0, 119.0, flows=[f]) * 3.5e6 for f in video_ids(mr)]
        rows.append({"run_id": run.run_id, "cc": run.cc, "jain": R.jain_index(rates), "total_util": sum(rates) / 3.5e6,
                     "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6})
    return pd.DataFrame(rows)


def findings(r51: pd.DataFrame, r53: pd.DataFrame, r54: pd.DataFrame, r56: pd.DataFrame, recn: pd.DataFrame,
             r52: pd.DataFrame | None = None, r55: pd.DataFrame | None = None, r58: pd.DataFrame | None = None) -> list[Finding]:
    fs: list[Finding] = []
    for cc in CONTROLLERS:
        a = r51[r51.cc == cc]
        src = "RFC 8867 §5.1 (issue 27's done-when)"
        fs.append(Finding(f"§5.1 {cc}: the media rate follows each rise of the capacity within {RISE_S:.0f} s",
                          f"{src}: follow each step; bound ours (RFCs give none)",
                          F.spread(a.worst_rise_s).show(fmt="{:.1f}", unit=" s"), F.side(a.worst_rise_s, RISE_S, below=True),
                          F.rule_side(f"{RISE_S:.0f} s", True) + " (per run the slower of the rises at 40 s and 80 s; "
                          "rule: payload rate of the last second ≥ 80 % of min(capacity, max_rate))"))
        fs.append(Finding(f"§5.1 {cc}: the media rate falls below the capacity within {FALL_S} s of the drop at 60 s",
                          f"{src}: follow each step; bound ours",
                          F.spread(a.fall_s).show(fmt="{:.1f}", unit=" s"), F.side(a.fall_s, FALL_S, below=True),
                          F.rule_side(f"{FALL_S} s", True) + " (rule: IP rate of the last second ≤ the new capacity)"))
        fs.append(Finding(f"§5.1 {cc}: median self-inflicted queueing delay below {QDELAY_BOUND_MS:.0f} ms", src,
                          F.spread(a.qdelay_median_ms).show(fmt="{:.0f}", unit=" ms"), F.side(a.qdelay_median_ms, QDELAY_BOUND_MS, below=True),
                          F.rule_side(f"{QDELAY_BOUND_MS:.0f} ms", True)))
        fs.append(Finding(f"§5.1 {cc}: at least {UTIL_BOUND:.0%} of the 2.5 Mbit/s step used (45–60 s)", src,
                          F.spread(a.util_2_5 * 100).show(fmt="{:.0f}", unit=" %"), F.side(a.util_2_5, UTIL_BOUND, below=False),
                          F.rule_side(f"{UTIL_BOUND:.0%}", False) + " (received IP bits / capacity bits; the 1.5 Mbit/s "
                          "max_rate allows 62 % at most with headers)"))
    for cc in CONTROLLERS:
        a = r53[r53.cc == cc]
        worst = np.maximum(a.worst_fall_s.to_numpy(), 0.0)
        fs.append(Finding(f"§5.3 {cc}: with media both ways and feedback crossing the other direction's bottleneck, each flow falls "
                          f"below its capacity within {FALL_S} s of each drop",
                          "RFC 8867 §5.3 (congested feedback link); bound ours", F.spread(worst).show(fmt="{:.1f}", unit=" s"),
                          F.side(worst, FALL_S, below=True), F.rule_side(f"{FALL_S} s", True) + " (per run and direction the slowest drop)"))
    for cc in CONTROLLERS:
        a = r54[r54.cc == cc]
        fs.append(Finding(f"§5.4 {cc}: three flows of one controller share 3.5 Mbit/s fairly (Jain ≥ {JAIN_BOUND}, 60–119 s)",
                          "RFC 8867 §5.4: the flows \"converge to an optimum bit rate to accommodate all the flows\" (read as equal shares); bound ours",
                          F.spread(a.jain).show(fmt="{:.3f}"), F.side(a.jain, JAIN_BOUND, below=False), F.rule_side(f"{JAIN_BOUND}", False)))
    fs.append(F.ordering("§5.6: FQ-CoDel gives each controller a larger share beside CUBIC than a 300 ms DropTail",
                         "RFC 8290 §1 (flow queueing isolates flows)",
                         [(cc, r56[(r56.cc == cc) & (r56.queue == "fq_codel")].media_share * 100,
                           r56[(r56.cc == cc) & (r56.queue == "droptail")].media_share * 100) for cc in CONTROLLERS],
                         expect="above", unit=" %"))
    for label, r, src in (("§5.2 two flows on a varying capacity (0–124 s)", r52, "RFC 8867 §5.2 (it expects adaptation; sharing read as in §5.4)"),
                          ("§5.5 five flows with one-way delays 10–150 ms (50–299 s)", r55, "RFC 8867 §5.5 (\"how fast and fairly the competing flows converge ... irrespective of the RTT\")")):
        if r is None:
            continue
        for cc in CONTROLLERS:
            a = r[r.cc == cc]
            fs.append(Finding(f"{label}, {cc}: fair sharing (Jain ≥ {JAIN_BOUND})", f"{src}: the flows share the capacity; bound ours",
                              F.spread(a.jain).show(fmt="{:.3f}"), F.side(a.jain, JAIN_BOUND, below=False), F.rule_side(f"{JAIN_BOUND}", False)))
    for cc in CONTROLLERS:
        if r58 is None:
            break
        a = r58[r58.cc == cc]
        fs.append(Finding(f"§5.8 {cc}: a flow resuming after a 20 s pause does not flood the bottleneck (all three flows send at most "
                          f"{RESUME_BOUND:.1f} × the capacity in the 5 s after the resume)",
                          "RFC 8867 §5.8 (after the resume the flows \"converge to the same original fair share\"); the no-flood bound ours", F.spread(a.resume_load).show(fmt="{:.2f}"),
                          F.side(a.resume_load, RESUME_BOUND, below=True), F.rule_side(f"{RESUME_BOUND:.1f}", True)))
    for cc in CONTROLLERS:
        a = r56[(r56.cc == cc) & (r56.queue == "fq_codel")]
        fs.append(Finding(f"§5.6 {cc} on FQ-CoDel: the media gets its fair share of 2 Mbit/s beside a CUBIC flow (35–65 %, 20–119 s)",
                          "RFC 8290 §1 (flow queueing isolates flows); band ours",
                          F.spread(a.media_share * 100).show(fmt="{:.0f}", unit=" %"), F.in_range(a.media_share, 0.35, 0.65),
                          F.rule_range("35 %", "65 %"), role="held-out"))
    fs.append(F.ordering("§6.2 ECN: with ECT(0) media behind FQ-CoDel the media loses fewer packets than without (marks replace drops)",
                         "RFC 3168 §5 / RFC 8290 §4.1.2 (an ECT packet is marked where it would be dropped)",
                         [(cc, recn[(recn.cc == cc) & ~recn.ecn].loss * 100, recn[(recn.cc == cc) & recn.ecn].loss * 100) for cc in CONTROLLERS],
                         expect="above", unit=" %", fmt="{:.2f}"))
    return fs


def _table(df: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    return quartile_table(df, keys, cols, sort=True)  # these sections' tables list their groups sorted


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True,
        sections: Sequence[Callable[[Report, Path, bool], Any]] = ()) -> Path:
    """Runs the cases into OUT and writes report.html, findings.csv and each case's tables;
    `sections(report, OUT, progress)` add theirs before the report is written (e.g.
    rmcat_testbed.section, `--testbed`)."""
    reps = reps or 5
    opt = Options(Path(out), jobs, executor, scheduler, progress)
    if progress:
        print(f"rmcat: {reps} replications into {opt.out}/", file=sys.stderr)
    res = {k: run_experiment(s, k, opt) for k, s in sweeps(reps).items()}
    rep = Report("RMCAT test cases (RFC 8867): GCC, SCReAM and NADA on the simulator", opt.out,
                 f"jitterlab preset rmcat · {reps} replications (the encoder's noise and key frames differ by seed) · docs/media.md")
    params: dict[str, Any] = {"replications": reps, "seed": SEED, "controllers": CONTROLLERS, "one_way_delay": DELAY,
                              "queue": "DropTail of 300 ms at the case's capacity (byte limit)", "max_rate_bps": MAX_RATE,
                              "min_rate_bps": 150e3, "feedback": "RFC 8888 every 100 ms", "steps_5_1": STEPS_51,
                              "convergence_bounds_s": {"rise": RISE_S, "fall": FALL_S}}
    params.update({f"5.6.{k}": v for k, v in flat(scenario_56()).items()})
    rep.set_params(params)

    r51, r53, r54, r56 = per_run_51(res["5.1"]), per_run_53(res["5.3"]), per_run_54(res["5.4"]), per_run_56(res["5.6"])
    recn = per_run_ecn(res["ecn"])
    rpam = per_run_pam2013(res["pam2013"])
    r52 = per_run_shared(res["5.2"], STEPS_52, 0.0, 124.0)
    r55 = per_run_shared(res["5.5"], [(0.0, 4e6)], 50.0, 299.0)
    r58 = per_run_58(res["5.8"])
    rep.section("§5.1 Variable available capacity with a single flow",
                "Capacity 1.0 → 2.5 (40 s) → 0.6 (60 s) → 1.0 Mbit/s (80 s), 50 ms one way, 300 ms DropTail at 1 Mbit/s.")
    _rate_panels(rep, res["5.1"], "Media sending rate against the bottleneck capacity, per controller (RFC 8867 §5.1).", "rmcat-5.1",
                 STEPS_51, reps, "capacity steps as a Mahimahi trace")
    rep.table(_table(r51, ["cc"], ["conv_40s", "conv_60s", "conv_80s", "qdelay_median_ms", "util_2_5", "frame_delay_median_ms",
                                    "frame_delay_p95_ms", "frames_complete", "freezes_per_min"]),
              "§5.1 per controller: convergence time after each step (s), median queueing delay, use of the 2.5 Mbit/s step, "
              "frame delay (capture to last packet, complete frames), share of complete frames, freezes per minute "
              "(W3C webrtc-stats rule; docs/media.md) — median, 25th, 75th percentile over replications", "{:.2f}", name="case_5_1")
    rep.section("§5.2 Variable available capacity with two flows",
                "Capacity 4.0 → 2.0 (25 s) → 3.5 (50 s) → 1.0 (75 s) → 2.0 Mbit/s (100 s); two flows from 0 s; 300 ms DropTail at 2 Mbit/s.")
    _rate_panels(rep, res["5.2"], "Two flows of one controller on a varying capacity (RFC 8867 §5.2).", "rmcat-5.2", STEPS_52, reps,
                 "capacity steps as a Mahimahi trace", end_s=125.0)
    rep.table(_table(r52, ["cc"], ["jain", "total_util", "lowest_share", "qdelay_median_ms"]),
              "§5.2 per controller: Jain's index of the two flows over 0–124 s, their total use of the capacity, the smaller "
              "flow's share of the total, median queueing delay", "{:.3f}", name="case_5_2")
    rep.section("§5.3 Congested feedback link with bi-directional media flows",
                "Forward 2.0 → 1.0 (20 s) → 0.5 (40 s) → 2.0 Mbit/s (60 s); backward 2.0 → 0.8 (35 s) → 2.0 Mbit/s (70 s); a video "
                "flow each way, each one's feedback on the other's bottleneck.")
    _rate_panels(rep, res["5.3"], "Media both ways: each flow's sending rate (forward flow first) against its direction's capacity "
                 "(dashed: forward) (RFC 8867 §5.3).", "rmcat-5.3", STEPS_53_FWD, reps, "backward capacity 2.0 / 0.8 (35 s) / 2.0 (70 s) Mbit/s")
    rep.table(_table(r53, ["cc", "direction"], ["worst_rise_s", "worst_fall_s", "qdelay_median_ms", "util"]),
              "§5.3 per controller and direction: slowest convergence after a rise and after a drop of its direction's capacity (s), "
              "median queueing delay, use of its direction's capacity", "{:.2f}", name="case_5_3")
    rep.section("§5.4 Competing media flows with the same controller", "3 flows from 0, 20, 40 s on 3.5 Mbit/s.")
    _rate_panels(rep, res["5.4"], "Three flows of one controller sharing 3.5 Mbit/s (RFC 8867 §5.4).", "rmcat-5.4", None, reps,
                 "flows start at 0, 20, 40 s")
    rep.table(_table(r54, ["cc"], ["jain", "total_util", "qdelay_median_ms"]),
              "§5.4 per controller: Jain's index of the three flows' received rates over 60–119 s, their total use of the capacity, "
              "median queueing delay", "{:.3f}", name="case_5_4")
    rep.section("§5.5 Round-trip time fairness", "Five flows with one-way delays 10, 25, 50, 100, 150 ms starting 10 s apart on "
                "4 Mbit/s, 300 s; shares over 50–299 s.")
    rep.table(_table(r55, ["cc"], ["jain", "total_util", "lowest_share", "qdelay_median_ms"]),
              "§5.5 per controller: Jain's index of the five flows over 50–299 s, their total use, the smallest flow's share, "
              "median queueing delay", "{:.3f}", name="case_5_5")
    rep.section("§5.6 Media against a long TCP flow (CUBIC), DropTail (300 ms, 1000 ms) and FQ-CoDel",
                "2 Mbit/s; CUBIC bulk from 0 s, media 5–119 s; share = media's received IP bits over the capacity, 20–119 s.")
    tab = _table(r56, ["queue", "cc"], ["media_share", "delay_median_ms", "qdelay_median_ms", "qdelay_p95_ms", "frame_delay_p95_ms", "frames_complete",
                                        "freezes_per_min"])
    fig, ax = plots.new(width=7, height=4)
    x = np.arange(len(CONTROLLERS))
    for j, q in enumerate(QUEUES_56):
        t = tab[tab.queue == q].set_index("cc").loc[CONTROLLERS]
        med = t.media_share_median.to_numpy() * 100
        err = [med - t.media_share_p25.to_numpy() * 100, t.media_share_p75.to_numpy() * 100 - med]
        ax.bar(x + (j - 1) * 0.27, med, 0.27, yerr=err, capsize=3, label=q, color=["#555555", "#999999", "#dddddd"][j], edgecolor="black")
    ax.axhline(50, color="black", ls=":", lw=1)
    ax.set_xticks(x, CONTROLLERS); ax.set_ylabel("media share of 2 Mbit/s (%)"); ax.set_ylim(0, 100); ax.grid(alpha=.3, axis="y")
    plots.legend_above(ax, ncol=3)
    plots.caption(fig, caption("rmcat-5.6", reps, "bars median, whiskers 25–75th percentile over replications; dotted: half"))
    rep.figure(fig, "rmcat_5_6_share", "Media share beside a CUBIC download, per controller and bottleneck queue (RFC 8867 §5.6).")
    rep.table(tab, "§5.6 per queue and controller: media share, median one-way delay above the 50 ms propagation (ms, 20–119 s; "
              "TCP's standing queue included), median and 95th-percentile queueing delay above the flow's own minimum (ms), frame delay, "
              "complete frames, freezes per minute", "{:.2f}", name="case_5_6")
    rep.table(rmcat_published_tcp.table_56(r56), "§5.6 against the published results on sharing with TCP: per controller and "
              "queue the media's share (%) and its one-way delay above the 50 ms propagation (ms; median and 95th percentile "
              "of the packets in 20–119 s), each median [25th–75th percentile] over replications; the "
              "published words, their source, our reading of them as a bound and the verdict on the share (docs/media.md, "
              "'Published results')", name="case_5_6_published")
    rep.section("§5.8 Media pause and resume", "§5.4's three flows on 3.5 Mbit/s, all from 0 s; the second pauses 40–60 s.")
    _rate_panels(rep, res["5.8"], "Three flows, the second paused 40–60 s (RFC 8867 §5.8).", "rmcat-5.8", None, reps,
                 "flow 2 paused 40–60 s", end_s=120.0)
    rep.table(_table(r58, ["cc"], ["resume_load", "qdelay_p95_before_ms", "qdelay_p95_resume_ms", "jain_after"]),
              "§5.8 per controller: the three flows' sending rate in 60–65 s over the capacity, 95th-percentile queueing delay "
              "in 30–40 s and in 60–70 s, Jain's index over 80–119 s", "{:.3f}", name="case_5_8")
    rep.section("§6.2 ECN: §5.1's capacity steps behind FQ-CoDel, media with and without ECT(0)",
                "FQ-CoDel marks ECT packets where it would drop them (RFC 8290). NADA and SCReAM take CE as a congestion signal "
                "(RFC 8698 §4.2's p_mark, RFC 8298's BETA_ECN); GCC (the draft) does not read ECN and reacts to the delay alone.")
    rep.table(_table(recn, ["cc", "ecn"], ["loss", "ce", "qdelay_median_ms", "util", "frame_delay_p95_ms", "frames_complete"]),
              "ECN per controller: share of media packets lost and CE-marked, median queueing delay, use of the capacity over "
              "0–99 s, 95th-percentile frame delay (ms), complete frames", "{:.4f}", name="case_ecn")
    rep.section("This project's question for an adaptive call: the PAM 2013 cellular link with and without the 28 MB download",
                "A video call (server → mobile) on the calibrated cellular model (~3 Mbit/s, 500-packet DropTail), alone or beside "
                "the PAM 2013 bulk download (CUBIC, IW10, from U(10, 12) s); measured over 12–60 s.")
    rep.table(_table(rpam, ["workload", "cc"], ["media_kbps", "qdelay_median_ms", "frame_delay_median_ms", "frame_delay_p95_ms",
                                                 "frames_complete"]),
              "The call per workload and controller: received media rate (kbit/s), median queueing delay, frame delay median and "
              "95th percentile (ms, capture to complete), share of complete frames", "{:.1f}", name="case_pam2013")
    fs = findings(r51, r53, r54, r56, recn, r52, r55, r58)
    more, more_runs = rmcat_more.section(rep, res, CONTROLLERS)
    fs += more
    extra, extra_runs = rmcat_extra.section(rep, res, CONTROLLERS)
    fs += extra
    fs += rmcat_published.findings(rmcat_published.use_of_1mbit_steps(res["5.1"], STEPS_51), r51, r54, r56, recn)
    fs += rmcat_published_tcp.findings_56(r56)
    for cc in CONTROLLERS:
        a = rpam[(rpam.cc == cc) & (rpam.workload == "bulk")]
        fs.append(Finding(f"PAM 2013 cellular link with the 28 MB download, {cc}: 95th-percentile frame delay above 400 ms",
                          "ITU-T G.114 §5 (one-way delay above 400 ms unacceptable for general network planning); "
                          "the question of this project", F.spread(a.frame_delay_p95_ms).show(fmt="{:.0f}", unit=" ms"),
                          F.side(a.frame_delay_p95_ms, 400.0, below=False), F.rule_side("400 ms", False), role="held-out"))
    write_csv(fs, opt.out / "findings.csv")
    for name, df in (("case_5_1", r51), ("case_5_2", r52), ("case_5_3", r53), ("case_5_4", r54), ("case_5_5", r55), ("case_5_6", r56),
                     ("case_5_8", r58), ("case_ecn", recn), ("case_pam2013", rpam), *more_runs.items(), *extra_runs.items()):
        df.to_csv(opt.out / f"{name}_per_run.csv", index=False)
    rep.section("Findings", "Each statement with its source, our value (median [25th–75th percentile] over replications) and a "
                "verdict by the rule in its row. The RFCs define the metrics but give no bounds for convergence or fairness; "
                "the bounds marked 'ours' are stated here and in docs/media.md. OUT/findings.csv has every row.")
    rep.findings({"rmcat": fs})
    for add in sections:
        add(rep, opt.out, progress)
    path = rep.write()
    if progress:
        print(f"rmcat: report {path}", file=sys.stderr)
    return path
