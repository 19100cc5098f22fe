"""Chodorek et al., "An Analysis of Elastic and Inelastic Traffic in Shared Link": one CBR video flow
(bursty or paced) against N TCP SACK FTP flows over a dumbbell with DropTail, RED or RED+ECN at the
bottleneck. Exp. 1: 2 Mb/s, B = 1 Mb/s, N = 0..10. Exp. 2: 10 Mb/s, N = 1, B = 1..10 Mb/s.
Figs. 2-5: RTP throughput and total TCP throughput, and their packet error rates."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab import plots
from jitterlab.presets.common import Options, caption, flat, run_experiment
from jitterlab.presets import findings as F
from jitterlab.presets.findings import Finding, write_csv
from jitterlab.report import Report
from jitterlab.sweep import Param, Sweep

DESCRIPTION = "Chodorek: CBR video vs N TCP SACK flows over DropTail / RED / RED+ECN (ns-2 dumbbell)"
DURATION_S = 100
WARMUP_S = 10
MAX_N = 10
# The study ran ns-2; we model what its objects do (docs/validation.md): ns-2's DropTail of limit
# 50 holds 49 waiting packets, and Queue/RED's defaults count the queue in bytes of mean_pktsize_
# 500 and scale p by packet size (Chodorek's Table 1 leaves them unchanged).
_RED = {"kind": "red", "limit": "50pkt", "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": False,
        "queue_in_bytes": True, "bytes": True, "mean_pktsize": 500}
QUEUES = {
    "DT": {"kind": "droptail", "limit": "49pkt"},
    "RED": {**_RED, "ecn": False},
    "RED&ECN": {**_RED, "ecn": True},
}
# ns-2 Agent/TCP/Sack1 with a DelAck sink (the `ns2-sack1` stack profile: IW 2, window_ 20
# packets, 100 ms delayed ACKs, RFC 6298 timer with a 200 ms floor, none of Linux's extras), with
# the study's 1000-byte packets: MSS 960 + 40 B of headers.
NS2_TCP = {"stack": "ns2-sack1", "mss": "960B"}


def scenario(rate: str) -> dict[str, Any]:
    traffic: list[dict[str, Any]] = [{"kind": "video", "name": "video", "from": "s1", "to": "d1", "rate": "1Mbit",
                                      "frame_interval": "40ms", "packet_size": "1000B", "mode": "bursty"}]
    for i in range(MAX_N):
        # TCP SACK, 1000 B packets (MSS 960 + 40 B headers), rwnd 20 packets, FTP (unlimited)
        traffic.append({"kind": "ftp", "name": f"ftp{i + 1}", "from": f"s{i + 2}", "to": f"d{i + 2}", **NS2_TCP,
                        "start": "0s", "enabled": True})
    return {
        "name": f"elastic-{rate}",
        "duration": f"{DURATION_S}s",
        "dumbbell": {"pairs": MAX_N + 1, "bottleneck_rate": rate, "bottleneck_delay": "5ms", "queue": QUEUES["DT"],
                     "access_rate": "100Mbit", "access_delay": "1us", "access_queue": {"kind": "droptail", "limit": "49pkt"}},
        "traffic": traffic,
    }


def _queue_param() -> Param:
    return Param("queue", list(QUEUES), [{"dumbbell.queue": q, **({f"traffic[{i + 1}].ecn": True for i in range(MAX_N)} if name == "RED&ECN" else {})}
                                         for name, q in QUEUES.items()])


def _mode_param() -> Param:
    return Param("mode", ["bursty", "paced"], [{"traffic[0].mode": m} for m in ("bursty", "paced")])


#: tables every run stores: the figures and findings read only per-run aggregates (RTP from
#: `rtp_summary`, computed in the worker by `reduce_run`; TCP from `tcp_flows`); the per-packet
#: media table (~100k rows per run) is kept only with `--keep packets`
AGGREGATES = ("runs", "tcp_flows", "flows", "channels", "rtp_summary")
PACKET_TABLES = ("media_packets", "queue_samples", "tcp_series")
RTP_WINDOW_NS = (WARMUP_S * 1_000_000_000, (DURATION_S - 1) * 1_000_000_000)


def reduce_run(res: Any) -> dict[str, Any]:
    """Per run, in the worker: Chodorek's RTP throughput and packet error rate over the measuring
    window (`metrics.rtp_summary`; packets sent in the last second may still be in the network
    when the run stops)."""
    from jitterlab.tables import to_arrow

    return {"rtp_summary": to_arrow(M.rtp_summary(res["media_packets"], res["runs"], window=RTP_WINDOW_NS))}


def stored_tables(keep: tuple[str, ...] = ()) -> tuple[str, ...]:
    return AGGREGATES + (PACKET_TABLES if "packets" in keep else ())


def _with_storage(sw: Sweep, keep: tuple[str, ...]) -> Sweep:
    sw.tables = stored_tables(keep)
    sw.reduce = reduce_run
    return sw


def sweeps(reps: int) -> dict[str, Sweep]:
    start = {f"traffic[{i + 1}].start": {"dist": "uniform", "min": "0s", "max": "1s"} for i in range(MAX_N)}
    n_param = Param("N", list(range(MAX_N + 1)),
                    [{f"traffic[{i + 1}].enabled": i < n for i in range(MAX_N)} for n in range(MAX_N + 1)])
    b_param = Param("B", list(range(1, 11)), [{"traffic[0].rate": f"{b}Mbit"} for b in range(1, 11)])
    one_tcp = {f"traffic[{i + 1}].enabled": i < 1 for i in range(MAX_N)}
    sc2 = scenario("10Mbit")
    for k, v in one_tcp.items():
        idx = int(k.split("[")[1].split("]")[0])
        sc2["traffic"][idx]["enabled"] = v
    return {
        "exp1": Sweep("elastic-exp1", scenario("2Mbit"), seed=7, replications=reps, params=[_queue_param(), _mode_param(), n_param], random=start),
        "exp2": Sweep("elastic-exp2", sc2, seed=7, replications=reps, params=[_queue_param(), _mode_param(), b_param], random=start),
    }


def choice_sweeps(reps: int) -> dict[str, Sweep]:
    """Experiment 1 under the other modelling choices the paper leaves open: plain sinks (ns-2's
    TCPSink, an ACK per segment) for DropTail and RED; RED measuring its queue in packets
    (ns-2's queue_in_bytes_ / bytes_ false) with the preset's delayed-ACK sinks."""
    start = {f"traffic[{i + 1}].start": {"dist": "uniform", "min": "0s", "max": "1s"} for i in range(MAX_N)}
    n_param = Param("N", list(range(MAX_N + 1)),
                    [{f"traffic[{i + 1}].enabled": i < n for i in range(MAX_N)} for n in range(MAX_N + 1)])
    plain = scenario("2Mbit")
    for t in plain["traffic"][1:]:
        t["delack"] = "off"
    red_pkts = {**_RED, "ecn": False, "queue_in_bytes": False, "bytes": False}
    red_pkts.pop("mean_pktsize")
    return {
        "exp1-plain-sinks": Sweep("elastic-exp1-plain-sinks", plain, seed=7, replications=reps,
                                  params=[Param("queue", ["DT", "RED"], [{"dumbbell.queue": QUEUES["DT"]}, {"dumbbell.queue": QUEUES["RED"]}]),
                                          _mode_param(), n_param], random=start),
        "exp1-red-packets": Sweep("elastic-exp1-red-packets", scenario("2Mbit"), seed=7, replications=reps,
                                  params=[Param("queue", ["RED"], [{"dumbbell.queue": red_pkts}]), _mode_param(), n_param], random=start),
    }


def limits(per: pd.DataFrame, queue: str, mode: str, per_limit: float = 0.05) -> np.ndarray:
    """Per replication: the largest N whose RTP PER and that of every smaller N stays <= 5 %
    (the paper's limit of acceptance), from the replication's own N = 0..10 curve."""
    g = per[(per.queue == queue) & (per["mode"] == mode)].pivot_table(index="replication", columns="N", values="rtp_per")
    g = g.reindex(columns=range(MAX_N + 1))
    over = (g.to_numpy() > per_limit)
    first = np.where(over.any(axis=1), over.argmax(axis=1), MAX_N + 1)
    return (first - 1).astype(float)


#: ns-2 running the paper's own setup (validation/ns2/dumbbell.tcl, Debian's `ns`): for the rows that
#: name a threshold, the RTP PER at the points on both sides of it. (finding prefix, queue, rate, [(N, B)]).
NS2_TCL = Path(__file__).resolve().parents[3] / "validation" / "ns2" / "dumbbell.tcl"
NS2_REPS = 2
NS2_ROWS = [("Exp. 1: DropTail, bursty video — RTP PER acceptable (≤ 5 %) up to 4 TCP flows", "DropTail", "2Mb", [(4, 1), (5, 1)]),
            ("Exp. 1: RED, bursty video — only 1–2 TCP flows keep the RTP PER ≤ 5 %", "RED", "2Mb", [(2, 1), (3, 1)]),
            ("Exp. 2: DropTail, bursty video — from B = 6 Mb/s the RTP PER is at once unacceptable", "DropTail", "10Mb", [(1, 5), (1, 6), (1, 7)])]


def _ns2_per(queue: str, rate: str, n: int, b: int, rep: int) -> float:
    """RTP packet error rate at the bottleneck (video drops / video arrivals) of one ns-2 run: Sack1
    TCP with delayed-ACK sinks, window 20, bursty video, TCP starts U(0, 1) s seeded by `rep`."""
    import random
    import subprocess
    import tempfile

    rng = random.Random(rep)
    starts = ",".join(f"{rng.uniform(0, 1):.6f}" for _ in range(n))
    with tempfile.TemporaryDirectory(prefix="jl-ns2-") as d:
        prefix = str(Path(d) / "out")
        subprocess.run(["ns", str(NS2_TCL), queue, str(n), str(b), "20", str(DURATION_S), prefix, starts, "Sack1", rate],
                       capture_output=True, text=True, check=True)
        arr = drop = 0
        with open(prefix + ".tr") as f:
            for line in f:
                if line.split(maxsplit=8)[7] != "0":
                    continue
                arr += line[0] == "+"
                drop += line[0] == "d"
    return drop / arr if arr else float("nan")


def ns2_reference(fs: list[Finding]) -> list[Finding]:
    """The NS2_ROWS findings with their `reference`: ns-2's RTP PER at the threshold's two points
    ({NS2_REPS} replications, median), or why it was skipped."""
    import shutil
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import replace

    if shutil.which("ns") is None:
        why = "ns-2: skipped, `ns` not found (Debian package ns2)"
    elif not NS2_TCL.is_file():
        why = f"ns-2: skipped, {NS2_TCL} is not part of this install"
    else:
        why = ""
    ref: dict[str, str] = {}
    if not why:
        jobs = [(pre, q, r, n, b, k) for pre, q, r, pts in NS2_ROWS for n, b in pts for k in range(NS2_REPS)]
        with ThreadPoolExecutor(2) as ex:
            pers = list(ex.map(lambda j: _ns2_per(*j[1:]), jobs))
        for pre, q, r, pts in NS2_ROWS:
            cells = []
            for n, b in pts:
                v = [x for j, x in zip(jobs, pers) if j[0] == pre and j[3:5] == (n, b)]
                cells.append(f"N = {n}, B = {b}: {float(np.median(v)) * 100:.1f} %")
            ref[pre] = f"ns-2 (the paper's simulator, its setup, {NS2_REPS} runs, whole {DURATION_S} s): RTP PER " + "; ".join(cells)
    return [replace(f, reference=why or ref[f.finding]) if f.finding in {r[0] for r in NS2_ROWS} else f for f in fs]


#: Where each statement is (findings.csv `source`), by the finding's prefix.
SOURCES = [("Exp. 1", "Chodorek, §4, first experiment (Figs. 2-3)"), ("Exp. 2", "Chodorek, §4, second experiment (Figs. 4-5)"),
           ("Both experiments", "Chodorek, §4-5 (Figs. 2-5)")]


def findings(e1: pd.DataFrame, e2: pd.DataFrame, choices: dict[str, pd.DataFrame]) -> list[Finding]:
    """Every quantitative statement of Chodorek et al. against per-replication values."""
    out: list[Finding] = []
    rw = F.RULE_WITHIN

    def v1(q: str, mode: str, n: int, c: str, df: pd.DataFrame = e1) -> np.ndarray:
        return df[(df.queue == q) & (df["mode"] == mode) & (df.N == n)][c].to_numpy(dtype=float)

    def v2(q: str, mode: str, b: int, c: str) -> np.ndarray:
        return e2[(e2.queue == q) & (e2["mode"] == mode) & (e2.B == b)][c].to_numpy(dtype=float)

    qm = [(q, m) for q in QUEUES for m in ("bursty", "paced")]
    share = {k: v1(*k, 1, "rtp_bps") / (v1(*k, 1, "rtp_bps") + v1(*k, 1, "tcp_bps")) for k in qm}
    t = F.tol_approx(0.5, "Chodorek, §4, first experiment (Fig. 2)")
    vs = [F.meets(share[k], t) for k in qm]
    out.append(Finding("Exp. 1: with one TCP flow the bandwidth is shared equally between RTP and TCP", "≈ 1 Mb/s each (N = 1): RTP share 50 %",
                       "RTP share of the throughput: " + ", ".join(f"{q} {m} {F.spread(share[(q, m)]).show(100, '{:.0f}', ' %')}" for q, m in qm),
                       F.worst(vs), "ours: 'shared equally' = the RTP share of the total throughput; every (queue, mode)",
                       tolerance=t.text, source=t.source, kind="value"))
    outs = [F.outcome(v1(*k, MAX_N, "rtp_bps"), v1(*k, 1, "rtp_bps"), "below") for k in qm]
    out.append(Finding("Exp. 1: more TCP flows lower the RTP throughput", "RTP(N = 10) < RTP(N = 1)",
                       F.tally(outs) + " (every queue and mode)", F.count_verdict(outs), F.RULE_ORDER + "; " + F.RULE_COUNT))
    outs = [F.outcome(v1(*k, MAX_N, "tcp_bps") / MAX_N, v1(*k, 1, "tcp_bps"), "below") for k in qm]
    out.append(Finding("Exp. 1: the mean throughput of a single TCP flow falls as N grows", "per-flow TCP(N = 10) < TCP(N = 1)",
                       F.tally(outs), F.count_verdict(outs), F.RULE_ORDER + "; " + F.RULE_COUNT))

    def limit_rows(label: str, per: pd.DataFrame, role: str) -> None:
        tag = "" if label == "preset" else f" [{label}]"
        note = {"preset": "delayed-ACK sinks, RED in byte mode (the preset)", "plain sinks": "plain sinks (an ACK per segment)",
                "RED packet mode": "RED counting packets, delayed-ACK sinks"}[label]
        if "DT" in set(per.queue):
            for mode, n in (("bursty", 4), ("paced", 5)):
                lim = F.spread(limits(per, "DT", mode))
                p4 = F.spread(v1("DT", mode, n, "rtp_per", per))
                out.append(Finding(f"Exp. 1: DropTail, {'bursty' if mode == 'bursty' else 'burstless'} video — RTP PER acceptable (≤ 5 %) "
                                   f"up to {n} TCP flows{tag}", f"{n} flows", f"limit {lim.show(fmt='{:.0f}', unit=' flow(s)')}; "
                                   f"RTP PER at N = {n}: {p4.show(100, '{:.1f}', ' %')} ({note})", F.within(n, lim),
                                   rw + "; limit = per replication, the largest N whose RTP PER (and that of every smaller N) is ≤ 5 %",
                                   F.because(lim.p75 < n and p4.p50 > 0.05,
                                             f"at N = {n} the RTP PER is {p4.p50 * 100:.1f} % (median): "
                                             + ("with an ACK per segment TCP's windows grow twice as fast per round trip and "
                                                "overflow the 50-packet queue more often, on the video's bursts" if label == "plain sinks" else
                                                "the tail-drop queue overflows on the video's frame bursts")), role,
                                   tolerance="exact: a whole number of flows"))
        if "RED" in set(per.queue):
            for mode in ("bursty", "paced"):
                lim = F.spread(limits(per, "RED", mode))
                out.append(Finding(f"Exp. 1: RED, {'bursty' if mode == 'bursty' else 'burstless'} video — only 1–2 TCP flows keep the RTP PER ≤ 5 %{tag}",
                                   "1–2 flows", f"limit {lim.show(fmt='{:.0f}', unit=' flow(s)')} ({note})", F.in_range(lim, 1, 2),
                                   F.rule_range("1", "2 flows") + "; limit as above", "", role, tolerance="exact: a whole number of flows"))

    for label, per in choices.items():
        limit_rows(label, per, "held-out" if label == "preset" else "choice")
    outs = [F.outcome(v1("DT", "paced", n, "rtp_per"), v1("DT", "bursty", n, "rtp_per"), "below") for n in range(1, MAX_N + 1)]
    out.append(Finding("Exp. 1: DropTail — burstless video loses fewer RTP packets than bursty", "paced < bursty RTP PER",
                       F.tally(outs) + " (N = 1..10)", F.count_verdict(outs), F.RULE_ORDER + "; " + F.RULE_COUNT,
                       F.because("tie" in outs, "ties at N = " + ", ".join(str(n) for n, o in zip(range(1, MAX_N + 1), outs) if o == "tie"))))
    outs = [F.outcome(v1("RED", "bursty", n, "rtp_per"), v1("DT", "bursty", n, "rtp_per"), "below") for n in range(1, MAX_N + 1)]
    out.append(Finding("Exp. 1: RED drops fewer RTP packets than DropTail with bursty video", "RED < DT (bursty) RTP PER",
                       F.tally(outs) + " (N = 1..10)", F.count_verdict(outs), F.RULE_ORDER + "; " + F.RULE_COUNT))
    outs = [F.outcome(v1(q, "paced", n, "rtp_per"), v1(q, "bursty", n, "rtp_per"), "below") for q in ("RED",) for n in range(1, MAX_N + 1)]
    out.append(Finding("Exp. 1: RED — results similar for bursty and burstless video", "similar",
                       F.tally(outs).replace("as the paper", "paced below bursty") + " (RTP PER, N = 1..10)", F.similar(outs), F.RULE_ORDER + "; " + F.RULE_SIMILAR))
    outs = [F.outcome(v1("RED&ECN", m, n, "rtp_per"), v1("RED", m, n, "rtp_per"), "above") for m in ("bursty", "paced") for n in range(1, MAX_N + 1)]
    out.append(Finding("Exp. 1: RED with ECN drops more RTP packets than RED without", "RED&ECN > RED RTP PER",
                       F.tally(outs) + " (both modes, N = 1..10)", F.count_verdict(outs), F.RULE_ORDER + "; " + F.RULE_COUNT))
    outs = ([F.outcome(v1("RED&ECN", m, n, "tcp_bps"), v1("RED", m, n, "tcp_bps"), "above") for m in ("bursty", "paced") for n in range(1, MAX_N + 1)]
            + [F.outcome(v2("RED&ECN", m, b, "tcp_bps"), v2("RED", m, b, "tcp_bps"), "above") for m in ("bursty", "paced") for b in range(1, 11)])
    out.append(Finding("Both experiments: ECN lightly improves TCP throughput", "RED&ECN ≥ RED TCP throughput",
                       F.tally(outs) + " (exp. 1 N = 1..10 and exp. 2 B = 1..10, both modes)", F.count_verdict(outs, ties_ok=True),
                       F.RULE_ORDER + "; " + F.RULE_COUNT_TIES_OK))
    outs = [F.outcome(v1(q, "paced", n, "rtp_per"), v1(q, "bursty", n, "rtp_per"), "below") for q in ("DT", "RED") for n in range(1, MAX_N + 1)]
    out.append(Finding("Exp. 1: burstless video improves or at least does not worsen the RTP PER (DropTail and RED)", "paced ≤ bursty",
                       F.tally(outs) + " (DT and RED, N = 1..10)", F.count_verdict(outs, ties_ok=True), F.RULE_ORDER + "; " + F.RULE_COUNT_TIES_OK))

    # ---- experiment 2
    outs = [F.outcome(v2(q, m, 10, "tcp_bps"), v2(q, m, 1, "tcp_bps"), "below") for q, m in qm]
    out.append(Finding("Exp. 2: raising B lowers the TCP throughput", "TCP(B = 10) < TCP(B = 1)", F.tally(outs) + " (every queue and mode)",
                       F.count_verdict(outs), F.RULE_ORDER + "; " + F.RULE_COUNT))
    starve = [k for k in qm if k != ("DT", "bursty")]
    vs = [F.side(v2(*k, 10, "tcp_bps"), 0.5e6, below=True) for k in starve] + [F.side(v2("DT", "bursty", 10, "tcp_bps"), 0.5e6, below=False)]
    out.append(Finding("Exp. 2: B close to capacity starves TCP, except DropTail with bursty video", "TCP starves (B = 10) except DT bursty",
                       "TCP at B = 10: " + ", ".join(f"{q} {m} {F.spread(v2(q, m, 10, 'tcp_bps')).show(1e-6, '{:.2f}', ' Mb/s')}" for q, m in qm),
                       F.worst(vs), F.rule_side("0.5 Mb/s (5 % of the link: 'starved')", True) + " for the five starving cases, "
                       "above it for DT bursty; all must hold"))
    vs = [F.side(v2(*k, 9, "rtp_per"), 0.05, below=True) for k in starve]
    out.append(Finding("Exp. 2: in the starving cases the RTP PER is acceptable up to B = 9 Mb/s", "PER ≤ 5 % at B = 9",
                       "RTP PER at B = 9: " + ", ".join(f"{q} {m} {F.spread(v2(q, m, 9, 'rtp_per')).show(100, '{:.1f}', ' %')}" for q, m in starve),
                       F.worst(vs), F.rule_side("5 %", True) + "; every starving case"))
    vs = [F.side(v2("DT", "bursty", 5, "rtp_per"), 0.05, below=True), F.side(v2("DT", "bursty", 6, "rtp_per"), 0.05, below=False)]
    out.append(Finding("Exp. 2: DropTail, bursty video — from B = 6 Mb/s the RTP PER is at once unacceptable", "PER ≤ 5 % at B = 5, > 5 % at B = 6",
                       f"B = 5: {F.spread(v2('DT', 'bursty', 5, 'rtp_per')).show(100, '{:.1f}', ' %')}, B = 6: "
                       f"{F.spread(v2('DT', 'bursty', 6, 'rtp_per')).show(100, '{:.1f}', ' %')}", F.worst(vs),
                       F.rule_side("5 %", True) + " at B = 5, and above it at B = 6; both must hold"))
    return out


def _metrics(res, x: str) -> pd.DataFrame:
    """Means over replications per (queue, mode, x) of `_per_run`, and the spread the paper does
    not show: <col>_p25, <col>_p75 (the figures' bands)."""
    per = _per_run(res, x)
    mean = per.groupby(["queue", "mode", x]).mean(numeric_only=True).reset_index().drop(columns=["run_id", "replication"])
    g = per.groupby(["queue", "mode", x])[["rtp_bps", "rtp_per", "tcp_bps", "tcp_per"]]
    spread = g.quantile(0.25).add_suffix("_p25").join(g.quantile(0.75).add_suffix("_p75")).reset_index()
    return mean.merge(spread, on=["queue", "mode", x], how="left")


def _per_run(res, x: str) -> pd.DataFrame:
    """Per run: RTP throughput and PER over [warm-up, end], TCP total throughput and PER."""
    runs, tcp = res["runs"], res["tcp_flows"]
    summary = res["rtp_summary"] if "rtp_summary" in res.arrow else M.rtp_summary(res["media_packets"], runs, window=RTP_WINDOW_NS)
    rtp = summary[["run_id", "throughput_bps", "packet_error_rate"]]
    rtp = rtp.rename(columns={"throughput_bps": "rtp_bps", "packet_error_rate": "rtp_per"})
    if len(tcp):
        t = tcp.groupby("run_id").agg(acked=("bytes_acked", "sum"), segs=("segments_sent", "sum"), drops=("drops", "sum")).reset_index()
        t["tcp_bps"] = t.acked * 8.0 / DURATION_S
        t["tcp_per"] = np.where(t.segs > 0, t.drops / t.segs.clip(lower=1), np.nan)
        rtp = rtp.merge(t[["run_id", "tcp_bps", "tcp_per"]], on="run_id", how="left")
    else:
        rtp["tcp_bps"] = np.nan
        rtp["tcp_per"] = np.nan
    rtp = rtp.merge(runs[["run_id", "replication", "queue", "mode", x]], on="run_id")
    rtp["tcp_bps"] = rtp.tcp_bps.fillna(0.0)
    return rtp


def _panel_figure(rep: Report, df: pd.DataFrame, x: str, ycols: tuple[str, str], ylabel: str, scale: float, name: str, cap: str, reps: int, scenario: str) -> None:
    fig, axes = plots.new(width=9, height=9, ncols=2, nrows=3, sharex=True, sharey=True)
    for row, q in enumerate(QUEUES):
        for col, mode in enumerate(("bursty", "paced")):
            ax = axes[row, col]
            g = df[(df.queue == q) & (df["mode"] == mode)].sort_values(x)
            ax.plot(g[x], g[ycols[0]] * scale, linestyle=":", marker="o", color="black", label="RTP (mean)")
            ax.plot(g[x], g[ycols[1]] * scale, linestyle="-", marker="s", color="#555", label="TCP total (mean)")
            if f"{ycols[0]}_p25" in g:  # 25th–75th percentiles over the replications
                h = g
                for ycol, colour, hatch in ((ycols[0], "black", "...."), (ycols[1], "#555", "")):
                    ax.fill_between(h[x], h[f"{ycol}_p25"] * scale, h[f"{ycol}_p75"] * scale, color=colour, alpha=0.15,
                                    hatch=hatch, linewidth=0, label=f"{'RTP' if ycol.startswith('rtp') else 'TCP'} 25–75th pct")
            ax.set_title(f"({'abcdef'[row * 2 + col]}) {q}, {'bursty' if mode == 'bursty' else 'burstless'}", fontsize=9)
            ax.grid(alpha=.3)
            if col == 0:
                ax.set_ylabel(ylabel)
            if row == 2:
                ax.set_xlabel("number of TCP flows N" if x == "N" else "CBR bit rate B (Mb/s)")
    axes[0, 0].legend(fontsize=8)
    plots.caption(fig, caption(scenario, reps, cap + "; lines: means over replications, bands: 25th–75th percentiles"))
    rep.figure(fig, name, cap + " (means with 25th–75th percentile bands)")


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True, reps_choice: int | None = None, keep: tuple[str, ...] = ()) -> Path:
    """Runs the preset into `out`; `keep=("packets",)` also stores each run's per-packet tables
    (media_packets, queue_samples, tcp_series), which no figure needs."""
    reps = reps or 10
    opt = Options(Path(out), jobs, executor, scheduler, progress)
    res = {k: run_experiment(_with_storage(s, keep), k, opt) for k, s in sweeps(reps).items()}
    e1 = _metrics(res["exp1"], "N")
    e2 = _metrics(res["exp2"], "B")
    rep = Report("Chodorek et al. reproduced: elastic and inelastic traffic in a shared link", opt.out,
                 f"jitterlab preset elastic · {reps} replications per point (TCP starts U(0, 1) s), RTP measured over {WARMUP_S}–{DURATION_S - 1} s")
    rep.set_params({"replications": reps, "duration_s": DURATION_S, "rtp_window_s": [WARMUP_S, DURATION_S - 1],
                    **{f"queue.{k}": v for k, v in QUEUES.items()}, **{f"scenario.{k}": v for k, v in flat(scenario("2Mbit")).items() if not k.startswith("traffic[") or k.startswith("traffic[0]") or k.startswith("traffic[1]")}})
    rep.section("Experiment 1 — 2 Mb/s bottleneck, B = 1 Mb/s, N = 0..10 TCP flows")
    _panel_figure(rep, e1, "N", ("rtp_bps", "tcp_bps"), "throughput (Mb/s)", 1e-6, "fig2_throughput_vs_N", "Fig. 2: RTP and total TCP throughput vs N", reps, "elastic-exp1 (2 Mb/s, B = 1 Mb/s)")
    _panel_figure(rep, e1, "N", ("rtp_per", "tcp_per"), "packet error rate (%)", 100, "fig3_per_vs_N", "Fig. 3: RTP and TCP packet error rate vs N", reps, "elastic-exp1 (2 Mb/s, B = 1 Mb/s)")
    rep.table(e1, "Experiment 1 per (queue, mode, N): means over replications (_p25/_p75: percentiles)", "{:.4g}", name="exp1")
    rep.section("Experiment 2 — 10 Mb/s bottleneck, N = 1, B = 1..10 Mb/s")
    _panel_figure(rep, e2, "B", ("rtp_bps", "tcp_bps"), "throughput (Mb/s)", 1e-6, "fig4_throughput_vs_B", "Fig. 4: RTP and TCP throughput vs B", reps, "elastic-exp2 (10 Mb/s, N = 1)")
    _panel_figure(rep, e2, "B", ("rtp_per", "tcp_per"), "packet error rate (%)", 100, "fig5_per_vs_B", "Fig. 5: RTP and TCP packet error rate vs B", reps, "elastic-exp2 (10 Mb/s, N = 1)")
    rep.table(e2, "Experiment 2 per (queue, mode, B): means over replications (_p25/_p75: percentiles)", "{:.4g}", name="exp2")

    choice = {k: run_experiment(_with_storage(sw, keep), k, opt) for k, sw in choice_sweeps(reps_choice or max(2, min(reps, 4))).items()}
    per = {"preset": _per_run(res["exp1"], "N"), "plain sinks": _per_run(choice["exp1-plain-sinks"], "N"),
           "RED packet mode": _per_run(choice["exp1-red-packets"], "N")}
    fs = ns2_reference(F.with_sources(findings(_per_run(res["exp1"], "N"), _per_run(res["exp2"], "B"), per), SOURCES))
    write_csv(fs, opt.out / "findings.csv", reference="ns2")
    rep.section("Findings of the paper against our numbers",
                "Each quantitative statement of the paper with what we measured (median [25th–75th percentile] over replications) and a "
                "verdict computed by the rule in its row. Where a finding turns on a modelling choice the paper leaves open — the TCP sink "
                "(ns-2's TCPSink/DelAck as in the preset, or the plain TCPSink that ACKs every segment) and RED's queue measure (ns-2's "
                "byte-mode defaults as in the preset, or packets) — the row is repeated for the other choice (role 'modelling choice', "
                f"{choice['exp1-plain-sinks']['runs'].replication.nunique()} replications per point). OUT/findings.csv has every row.")
    rep.findings({"elastic": fs})
    path = rep.write()
    if progress:
        print(f"elastic: report {path}", file=sys.stderr)
    return path
