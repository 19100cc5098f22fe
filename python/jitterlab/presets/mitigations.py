"""Which mitigation helps the call how much, and what it costs the downloads.

The PAM 2013 workloads (audio + a 28 MB bulk download; audio + n = 1, 2, 6 short flows sharing
372 kB with IW3 or IW10) on the fixed and the cellular link (presets/links/), against each
mitigation: the queue at the bottleneck (DropTail as the baseline, RED, CoDel, FQ-CoDel, CAKE, PIE,
DualPI2 with classic TCP and with DCTCP), the receiving host's RWND moderation (after / from the
SYN), the sender (IW3 instead of IW10, a paced initial window, BBR instead of CUBIC). For each: the audio's OWD,
loss behind 40 and 100 ms jitter buffers, the share of packets in level-4/5 loss periods, the
E-model MOS at the best jitter buffer, and what TCP pays (goodput, completion time). One ranked
table per link (rule: `RANK_RULE`), a cost–benefit figure, findings computed by rule; with
`testbed=True` (root) the real-Linux numbers beside the simulator's.

A mitigation whose queue kind or congestion control is not in the simulator's registries in this
build is a row "not available in this build" (`availability`), never an error.
"""
from __future__ import annotations

import copy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab import plots
from jitterlab.presets import findings as F
from jitterlab.presets import pam2013
from jitterlab.presets.common import Options, caption, flat, run_experiment
from jitterlab.presets.findings import Finding, write_csv
from jitterlab.report import Report, _write_csv
from jitterlab.sweep import Param, Sweep

DESCRIPTION = "Mitigations (AQMs, L4S, RWND moderation, IW3, paced IW, BBR) ranked by the call's MOS gain and the downloads' cost"
#: Replications per (link, workload, mitigation). 10 keep the whole study under 2 minutes on 2
#: cores (README, "Performance"); the IQRs of the ranking are over these.
REPS = 10
LINKS = ("fixed", "cellular")
BULK_SIZE = pam2013.BULK_SIZE
WEB_TOTAL = pam2013.WEB_TOTAL
START = pam2013.START
JBS = pam2013.JBS
HOST = "mobile"
BUFFER = "500pkt"  # the links' buffer; every AQM gets the same hard limit
BUDGET = "20kB"  # the WiBrA slides' RWND budget
TABLES = ("media_packets", "tcp_flows", "runs")
SEED = 2013
BASELINE = "DropTail"

RANK_RULE = ("per link and replication, a mitigation's MOS gain is the mean over the 7 workloads of its MOS at the best jitter "
             "buffer minus DropTail's in the same workload and replication (same seed and TCP start); mitigations are sorted by "
             "the median of that gain over replications (highest first); one shares the rank of the one above it when their "
             "gains' 25–75th percentile ranges overlap (findings.order: a tie), otherwise it takes its position in the order")


@dataclass(frozen=True)
class Mitigation:
    """One mitigation: the scenario keys it sets (on top of the workload; traffic[1] is the TCP
    traffic), and the registry entries it needs."""

    name: str
    where: str  # network | receiver | sender | baseline
    what: str
    sets: Mapping[str, Any] = field(default_factory=dict)
    queue: str = "droptail"
    cc: str = "cubic"


# RFC 9332 A.1 / docs/l4s.md: at a few Mbit/s the L queue's step is given in packets
DUALPI2_STEP = "2pkt"
RED = {"kind": "red", "limit": BUFFER, "thresh": 5, "maxthresh": 15, "q_weight": 0.002, "linterm": 10, "gentle": True}


def _q(kind: str, **kw: Any) -> dict[str, Any]:
    return {"access.down_queue": {"kind": kind, "limit": BUFFER, **kw}}


MITIGATIONS: tuple[Mitigation, ...] = (
    Mitigation(BASELINE, "baseline", f"the link's own {BUFFER} drop-tail buffer"),
    Mitigation("RED", "network", "RED, thresholds 5 / 15 packets, w 0.002, max_p 0.1, gentle (the rwnd preset's)", _q("red", **{k: v for k, v in RED.items() if k not in ("kind", "limit")}), "red"),
    Mitigation("CoDel", "network", "CoDel, target 5 ms, interval 100 ms (RFC 8289 defaults)", _q("codel"), "codel"),
    Mitigation("FQ-CoDel", "network", "FQ-CoDel, 1024 flow queues, quantum 1514 B (RFC 8290 defaults)", _q("fq_codel"), "fq_codel"),
    Mitigation("CAKE", "network", "CAKE with its defaults (COBALT, triple isolation, no shaper: the link's rate limits), memory limit "
               "750 kB = the other queues' 500 packets of 1500 B", {"access.down_queue": {"kind": "cake", "memlimit": "750kB"}}, "cake"),
    Mitigation("PIE", "network", "PIE, target 15 ms (RFC 8033 defaults)", _q("pie"), "pie"),
    Mitigation("DualPI2 + CUBIC", "network", "DualPI2 (RFC 9332) with classic CUBIC in its C queue; Linux's defaults but the L queue's "
               "step at 2 packets (see DualPI2 + DCTCP)", _q("dualpi2", step_thresh=DUALPI2_STEP), "dualpi2"),
    Mitigation("DualPI2 + DCTCP", "network", "DualPI2 with DCTCP senders (ECN with ECT(1), DCTCP's default: the L queue); the step "
               "threshold in packets (2), as docs/l4s.md advises for few-Mbit/s links: Linux's 1 ms step is shorter than one "
               "packet's serialisation here (3.6 ms at 3.3 Mbit/s) and starves DCTCP",
               {**_q("dualpi2", step_thresh=DUALPI2_STEP), "traffic[1].cc": "dctcp"}, "dualpi2", "dctcp"),
    Mitigation("RWND after SYN", "receiver", f"{BUDGET} advertised-window budget at the mobile host, split between its flows, from the first ACK after the SYN",
               {f"hosts.{HOST}.rwnd": {"budget": BUDGET, "from_syn": False}}),
    Mitigation("RWND from SYN", "receiver", f"the same {BUDGET} budget already in the SYN-ACK (caps the initial-window burst too)",
               {f"hosts.{HOST}.rwnd": {"budget": BUDGET, "from_syn": True}}),
    Mitigation("IW3", "sender", "initial window 3 instead of the workload's (no change where the workload is IW3 already)", {"traffic[1].iw": 3}),
    Mitigation("paced IW", "sender", "the initial window spread evenly over one SYN RTT (`pace_iw = true`: segments SRTT/IW apart), "
               "unpaced from the first ACK of data on (Linux's own pacing leaves the first 10 segments unpaced)", {"traffic[1].pace_iw": True}),
    Mitigation("BBR", "sender", "BBR (v1, as Linux's tcp_bbr.c) instead of CUBIC", {"traffic[1].cc": "bbr"}, cc="bbr"),
)


def availability(registry: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Per mitigation: whether this build can run it, from the simulator's registries (queue kinds
    and congestion controls, `_native.sim_registry()`), and why not."""
    if registry is None:
        from jitterlab import _native

        registry = _native.sim_registry()
    queues, ccs = set(registry.get("queues", ())), set(registry.get("cc", ()))
    rows = []
    for m in MITIGATIONS:
        missing = [f"queue kind {m.queue!r}" for _ in [0] if m.queue not in queues] + [f"congestion control {m.cc!r}" for _ in [0] if m.cc not in ccs]
        rows.append({"mitigation": m.name, "where": m.where, "available": not missing,
                     "status": "available" if not missing else "not available in this build (" + ", ".join(missing) + " not in the simulator's registry)"})
    return pd.DataFrame(rows)


#: Mitigations are deployed today: the hosts are today's Linux (docs/tcp.md, "Stack profiles").
STACK = "linux-6.18"


def _tcp(kind: str, **kw: Any) -> dict[str, Any]:
    return pam2013._tcp(kind, stack=STACK, **kw)


def sweeps(reps: int, link: str | pam2013.Link = "fixed", available: Iterable[str] | None = None) -> dict[str, Sweep]:
    """The bulk and web sweeps of one link over the available mitigations (the `mitigation`
    parameter last, so its keys override the workload's: IW3 sets traffic[1].iw on an IW10 point)."""
    ln = link if isinstance(link, pam2013.Link) else pam2013.load_link(link)
    names = set(available) if available is not None else set(availability().query("available").mitigation)
    mits = [m for m in MITIGATIONS if m.name in names]
    mp = Param("mitigation", [m.name for m in mits], [dict(m.sets) for m in mits])
    sc = pam2013.base_scenario(ln)
    bulk = copy.deepcopy(sc)
    # room for a mitigation that slows the download by a third: unfinished downloads would have no completion
    bulk["duration"] = f"{int(np.ceil(pam2013._bulk_duration_s(ln) * 4 / 3))}s"
    bulk["traffic"].append(_tcp("bulk", size=BULK_SIZE, iw=3, start="10s"))
    web = copy.deepcopy(sc)
    web["duration"] = "25s"
    web["traffic"].append(_tcp("web", size=WEB_TOTAL, flows=1, iw=3, start="10s"))
    rnd = {"traffic[1].start": START}
    return {
        "bulk": Sweep(f"mitigations-{ln.label}-bulk", bulk, seed=SEED, replications=reps, params=[mp], random=rnd, tables=TABLES),
        "web": Sweep(f"mitigations-{ln.label}-web", web, seed=SEED, replications=reps,
                     params=[Param("n", [1, 2, 6], [{"traffic[1].flows": n} for n in (1, 2, 6)]),
                             Param("iw", [3, 10], [{"traffic[1].iw": w} for w in (3, 10)]), mp],
                     random=rnd, tables=TABLES),
    }


# ----------------------------------------------------------------------------- metrics

def per_run(res: Mapping[str, Any], link: str) -> pd.DataFrame:
    """One row per run of a link's two sweeps: link, workload, mitigation, replication, the audio's
    OWD median / 99th percentile (ms), loss behind 40 / 100 ms JBs, the share of packets in level-4/5
    loss periods behind a 40 ms JB, the MOS and JB at the best jitter buffer; the TCP traffic's
    completion time (first SYN to last byte) and goodput. Every metric is the metrics module's
    (design.md definitions), on the packets sent while TCP runs (the overlap window)."""
    out = []
    for wl, r in res.items():
        m, runs, t = r["media_packets"], r["runs"], r["tcp_flows"]
        keys = ["run_id", "mitigation", "replication"] + (["n", "iw"] if wl == "web" else [])
        base = runs[keys].copy()
        base["workload"] = "bulk" if wl == "bulk" else base.n.map(lambda n: f"n={n}") + base.iw.map(lambda w: f" IW{w}")
        pct = M.owd_percentiles(m, runs, window="overlap", by="run_id")
        base = base.merge(pd.DataFrame({"run_id": pct["run_id"].to_numpy(), "owd_p50_ms": pct["p50_s"].to_numpy() * 1e3,
                                        "owd_p99_ms": pct["p99_s"].to_numpy() * 1e3}), on="run_id", how="left")
        jl = M.jb_loss(m, runs, jbs_ms=[40.0, 100.0])
        for jb in (40, 100):
            s = jl[np.isclose(jl.jb_s, jb / 1e3)][["run_id", "loss_rate"]].rename(columns={"loss_rate": f"loss{jb}"})
            base = base.merge(s, on="run_id", how="left")
        lv = M.loss_levels(m, runs, jb_ms=40.0, window="overlap")
        share = lv.assign(hi=lv.level >= 4).groupby("run_id").hi.mean().rename("level45_share").reset_index()
        base = base.merge(share, on="run_id", how="left")
        bj = M.best_jb(m, runs, jbs_ms=JBS)[["run_id", "mos", "jb_s"]].rename(columns={"mos": "mos_best"})
        bj["jb_best_ms"] = (bj.pop("jb_s") * 1e3).round(3)
        base = base.merge(bj, on="run_id", how="left")
        tc = M.tcp_summary(t, per="run")[["run_id", "completion_s", "goodput_bps"]]
        base = base.merge(tc, on="run_id", how="left")
        out.append(base)
    df = pd.concat(out, ignore_index=True)
    df.insert(0, "link", link)
    return df.drop(columns=[c for c in ("n", "iw") if c in df.columns])


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Adds, per run, the difference to DropTail's run of the same link, workload and replication:
    mos_gain, completion_change_pct, goodput_change_pct."""
    b = df[df.mitigation == BASELINE][["link", "workload", "replication", "mos_best", "completion_s", "goodput_bps"]]
    b = b.rename(columns={"mos_best": "_mos0", "completion_s": "_c0", "goodput_bps": "_g0"})
    x = df.merge(b, on=["link", "workload", "replication"], how="left")
    x["mos_gain"] = x.mos_best - x._mos0
    with np.errstate(invalid="ignore", divide="ignore"):
        x["completion_change_pct"] = (x.completion_s / x._c0 - 1.0) * 100.0
        x["goodput_change_pct"] = (x.goodput_bps / x._g0 - 1.0) * 100.0
    return x.drop(columns=["_mos0", "_c0", "_g0"])


def gains_per_replication(x: pd.DataFrame, mitigation: str) -> np.ndarray:
    """The rank rule's statistic: per replication, the mean over workloads of the paired MOS gain."""
    d = x[x.mitigation == mitigation]
    return d.groupby("replication").mos_gain.mean().to_numpy(float)


def rank(gains: Mapping[str, Iterable[float]]) -> pd.DataFrame:
    """The ranking rule (`RANK_RULE`) on per-replication gains per mitigation: name, n, median,
    p25, p75, rank, tie (whether it shares the rank of the one above)."""
    sp = {k: F.spread(v) for k, v in gains.items()}
    names = sorted(sp, key=lambda k: (-sp[k].p50 if sp[k].n else np.inf, k))
    rows: list[dict[str, Any]] = []
    for i, k in enumerate(names):
        s = sp[k]
        tie = i > 0 and s.n > 0 and sp[names[i - 1]].n > 0 and F.order(sp[names[i - 1]], s) == "tie"
        r = rows[-1]["rank"] if tie else (i + 1 if s.n else None)
        rows.append({"mitigation": k, "n": s.n, "median": s.p50, "p25": s.p25, "p75": s.p75, "rank": r, "tie": bool(tie)})
    return pd.DataFrame(rows)


def summary(x: pd.DataFrame) -> pd.DataFrame:
    """Per (link, workload, mitigation): medians over replications (OWD percentiles are per run,
    then the median over runs), completion and goodput change against DropTail."""
    g = x.groupby(["link", "workload", "mitigation"], sort=False)
    out = g.agg(replications=("run_id", "size"), owd_p50_ms=("owd_p50_ms", "median"), owd_p99_ms=("owd_p99_ms", "median"),
                loss40_pct=("loss40", "median"), loss100_pct=("loss100", "median"), level45_pct=("level45_share", "median"),
                mos_best=("mos_best", "median"), jb_best_ms=("jb_best_ms", "median"), mos_gain=("mos_gain", "median"),
                completion_s=("completion_s", "median"), completion_change_pct=("completion_change_pct", "median"),
                goodput_Mbps=("goodput_bps", "median"), goodput_change_pct=("goodput_change_pct", "median"),
                unfinished=("completion_s", lambda s: int(s.isna().sum())))
    for c in ("loss40_pct", "loss100_pct", "level45_pct"):
        out[c] *= 100
    out["goodput_Mbps"] /= 1e6
    return out.reset_index()


def ranking(x: pd.DataFrame, avail: pd.DataFrame) -> pd.DataFrame:
    """The ranked table of every link: the rank rule's gains, the medians over the 7 workloads of
    the per-workload medians (audio) and the TCP costs (bulk goodput change, web completion time
    change); unavailable mitigations as rows with their status and no numbers."""
    rows = []
    summ = summary(x)
    for link, lx in x.groupby("link", sort=False):
        ok = [m.name for m in MITIGATIONS if m.name in set(lx.mitigation)]
        rk = rank({k: gains_per_replication(lx, k) for k in ok}).set_index("mitigation")
        sm = summ[summ.link == link]
        for m in MITIGATIONS:
            st = avail.set_index("mitigation").loc[m.name, "status"]
            if m.name not in rk.index:
                rows.append({"link": link, "mitigation": m.name, "where": m.where, "status": st})
                continue
            s = sm[sm.mitigation == m.name]
            web = lx[(lx.mitigation == m.name) & (lx.workload != "bulk")]
            bulk = s[s.workload == "bulk"]
            rows.append({"link": link, "mitigation": m.name, "where": m.where, "status": st, "rank": rk.loc[m.name, "rank"],
                         "mos_gain": rk.loc[m.name, "median"], "mos_gain_p25": rk.loc[m.name, "p25"], "mos_gain_p75": rk.loc[m.name, "p75"],
                         "mos_best": s.mos_best.median(), "owd_p50_ms": s.owd_p50_ms.median(), "owd_p99_ms": s.owd_p99_ms.median(),
                         "loss40_pct": s.loss40_pct.median(), "loss100_pct": s.loss100_pct.median(), "level45_pct": s.level45_pct.median(),
                         "bulk_unfinished": int(bulk.unfinished.iloc[0]) if len(bulk) else 0,
                         "bulk_goodput_Mbps": float(bulk.goodput_Mbps.iloc[0]) if len(bulk) else np.nan,
                         "bulk_goodput_change_pct": float(bulk.goodput_change_pct.iloc[0]) if len(bulk) else np.nan,
                         "web_completion_change_pct": float(np.nanmedian(web.completion_change_pct)) if web.completion_change_pct.notna().any() else np.nan})
    df = pd.DataFrame(rows)
    df["rank"] = df["rank"].astype("Int64")
    return df.sort_values(["link", "rank"], key=lambda s: s if s.name != "link" else s.map({l: i for i, l in enumerate(dict.fromkeys(df.link))}),
                          na_position="last", kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------- findings

def findings(x: pd.DataFrame, link: str) -> list[Finding]:
    """Statements from the literature and the project's notes, each checked by a stated rule."""
    lx = x[x.link == link]
    have = set(lx.mitigation)
    fs: list[Finding] = []

    def vals(mit: str, col: str, wl: str | None = None, web: bool = False) -> np.ndarray:
        d = lx[lx.mitigation == mit]
        d = d[d.workload == wl] if wl else (d[d.workload != "bulk"] if web else d)
        return d[col].to_numpy(float)

    aqms = [m for m in ("RED", "CoDel", "FQ-CoDel", "CAKE", "PIE", "DualPI2 + CUBIC", "DualPI2 + DCTCP") if m in have]
    if aqms:
        fs.append(F.ordering("Every AQM at the bottleneck keeps the bulk download's queue short: the audio's median OWD below DropTail's",
                             "AQM literature (RFC 7567 §2: AQM to control queueing delay)",
                             [(m, vals(m, "owd_p50_ms", "bulk"), vals(BASELINE, "owd_p50_ms", "bulk")) for m in aqms], expect="below", unit=" ms"))
    if "FQ-CoDel" in have:
        others = [m for m in aqms if m not in ("FQ-CoDel", "CAKE")]  # CAKE queues per flow too
        fs.append(F.ordering("Flow queueing protects the sparse audio flow: FQ-CoDel's MOS gain (mean over workloads) is above every single-queue AQM's",
                             "RFC 8290 §1 (sparse flows get priority)",
                             [(m, gains_per_replication(lx, "FQ-CoDel"), gains_per_replication(lx, m)) for m in others],
                             expect="above", scale=1, fmt="{:.2f}"))
    if {"RWND after SYN", "RWND from SYN"} <= have:
        cases = [(w, vals("RWND from SYN", "loss40", w), vals("RWND after SYN", "loss40", w)) for w in ("n=6 IW10", "n=6 IW3", "n=2 IW10")]
        fs.append(F.ordering("Moderating from the SYN caps the initial-window burst: loss behind a 40 ms JB below moderation after the SYN "
                                            "for many parallel flows", "the WiBrA slides leave the IW burst open; design.md 'moderation from the SYN'",
                             cases, expect="below", scale=100, unit=" %"))
    if "IW3" in have:
        cases = [(f"n={n}", vals("IW3", "loss40", f"n={n} IW10"), vals(BASELINE, "loss40", f"n={n} IW10")) for n in (1, 2, 6)]
        fs.append(F.ordering("IW3 instead of IW10 lowers the loss behind a 40 ms JB of the IW10 web workloads",
                             "PAM 2013 §4 (IW10 hurts more than IW3)", cases, expect="below", scale=100, unit=" %"))
    if "BBR" in have:
        v = vals("BBR", "owd_p50_ms", "bulk")
        sp = F.spread(v)
        fs.append(Finding("BBR keeps the bulk download's queue short: the audio's median OWD below 100 ms",
                          "shared/testbed-notes.md (real Linux BBR: 40 ms against CUBIC's 1.1 s)", sp.show(unit=" ms"),
                          F.side(sp, 100.0, below=True), F.rule_side("100 ms", True)))
    costs = [(m, vals(m, "completion_change_pct", web=True)) for m in (aqms + ["RWND after SYN", "RWND from SYN", "IW3", "paced IW", "BBR"]) if m in have]
    if costs:
        verdicts = [F.side(c, 25.0, below=True) for _, c in costs]
        fs.append(Finding("Mitigations cost the web pages little: completion time at most 25 % longer than with DropTail",
                          "the rwnd preset's question (cost to TCP); testbed notes: ~12 % for a 20 kB budget over 6 flows",
                          "; ".join(f"{m}: {F.spread(c).show(fmt='{:+.0f}', unit=' %')}" for m, c in costs), F.worst(verdicts),
                          F.rule_side("+25 %", True) + "; one verdict for all: the worst (findings.worst)"))
    return fs


# ----------------------------------------------------------------------------- report

def _cost_benefit(rep: Report, rk: pd.DataFrame, reps: int) -> None:
    links = list(dict.fromkeys(rk.link))
    fig, axes = plots.new(width=5.2 * len(links), height=4.6, ncols=len(links), sharey=True)
    axes = np.atleast_1d(axes)
    # one style per mitigation, the same in every panel (a legend, not point labels: they collide)
    names = [m.name for m in MITIGATIONS if m.name != BASELINE and m.name in set(rk.loc[rk["rank"].notna(), "mitigation"])]
    st = plots.styles()
    style = {n: next(st) for n in names}
    for ax, link in zip(axes, links):
        d = rk[(rk.link == link) & rk["rank"].notna()].set_index("mitigation")
        for n in names:
            if n not in d.index:
                continue
            r = d.loc[n]
            y, lo, hi = float(r.mos_gain), float(r.mos_gain_p25), float(r.mos_gain_p75)
            ax.errorbar([float(r.web_completion_change_pct)], [y], yerr=[[y - lo], [hi - y]], fmt=style[n]["marker"], color=style[n]["color"],
                        capsize=2, markersize=6, label=n if ax is axes[0] else None)
        ax.axhline(0, color="#999", linewidth=0.8); ax.axvline(0, color="#999", linewidth=0.8)
        ax.set_title(f"{link} link"); ax.set_xlabel("web completion time vs DropTail (%, median)"); ax.grid(alpha=.3)
    axes[0].set_ylabel("MOS gain over DropTail (median, IQR)")
    fig.legend(loc="lower center", ncol=min(5, max(1, len(names))), fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1.0))
    plots.caption(fig, caption("mitigations", reps, "MOS at the best jitter buffer, G.711 + PLC, mean over the 7 workloads per replication; "
                               "up = better call, right = slower pages"))
    rep.figure(fig, "cost_benefit", "Cost and benefit: the call's MOS gain against the web pages' completion time lost, per mitigation and link.")


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True, links: Sequence[str] | None = None,
        testbed: bool = False) -> Path:
    """Runs the study into OUT/<link>/{bulk,web}/ and writes report.html, ranking.csv,
    metrics.csv, per_run.csv, availability.csv and findings.csv."""
    reps = reps or REPS
    specs = pam2013.parse_links(links or list(LINKS))
    lns = [pam2013.load_link(s) for s in specs]
    opt = Options(Path(out), jobs, executor, scheduler, progress)
    avail = availability()
    ok = list(avail.query("available").mitigation)
    if progress:
        print(f"mitigations: {reps} replications, links {', '.join(specs)}, {len(ok)} of {len(avail)} mitigations available, into {opt.out}/",
              file=sys.stderr)
    parts = []
    for ln in lns:
        lopt = Options(opt.out / ln.label, jobs, executor, scheduler, progress)
        res = {k: run_experiment(s, k, lopt) for k, s in sweeps(reps, ln, ok).items()}
        parts.append(per_run(res, ln.label))
    x = paired(pd.concat(parts, ignore_index=True))
    rep = Report("Mitigations: which fix helps the call how much, and what the downloads pay", opt.out,
                 f"jitterlab preset mitigations · {reps} replications per (link, workload, mitigation) · links: {', '.join(specs)}")
    params: dict[str, Any] = {"replications": reps, "seed": SEED, "tcp_start": "U(10 s, 12 s)", "bulk_size": BULK_SIZE, "web_total": WEB_TOTAL,
                              "workloads": "bulk (IW3); n = 1, 2, 6 × IW3 / IW10", "jitter_buffers_ms": JBS, "tcp_cc": "cubic",
                              "buffer": BUFFER, "rwnd_budget": BUDGET, "rank_rule": RANK_RULE, "links": specs,
                              "window": "media packets sent in [tcp_start, tcp_end]", "base_delay": "min OWD in the 2 s before tcp_start",
                              "level45": "share of the window's packets in loss periods of level 4 or 5 (>= 120 ms) behind a 40 ms JB",
                              "mos": "E-model (G.711 + PLC) at the jitter buffer with the highest MOS of each run"}
    for m in MITIGATIONS:
        params[f"mitigation.{m.name}"] = m.what + (f" · keys: {dict(m.sets)}" if m.sets else "")
    for ln in lns:
        params.update({f"{ln.label}.{k}": v for k, v in flat({"access": ln.access}).items()})
    rep.set_params(params)
    rk = ranking(x, avail)
    summ = summary(x)
    _write_csv(x, opt.out / "per_run.csv")
    _write_csv(avail, opt.out / "availability.csv")
    rep.section("Ranking", "Rank rule: " + RANK_RULE + ". Audio columns: the median over the 7 workloads of each workload's median "
                "over replications; TCP: the bulk download's goodput and the web pages' completion time (first SYN to last byte), "
                "both against DropTail's in the same replication; bulk_unfinished counts the replications whose download had not "
                "finished when the run ended (their goodput and completion are not defined, so the medians are over the others, "
                "and empty when none finished). Rows 'not available in this build' come from the simulator's registries "
                "(availability.csv).")
    show = rk.drop(columns=["where"])
    page = show.assign(rank=[str(int(r)) if pd.notna(r) else "—" for r in show["rank"]])
    rep.table(page, "Mitigations ranked by the call's MOS gain over DropTail, per link", "{:.2f}", name="ranking")
    _write_csv(show, opt.out / "ranking.csv")  # the CSV keeps the rank numeric (empty when not ranked)
    for link, d in rk.groupby("link", sort=False):
        top = d[d["rank"] == 1]
        worse = d[d["rank"].notna() & (d.mos_gain_p75 < 0)]
        def bulk(r: Any) -> str:
            if r.bulk_unfinished:
                return f"the bulk download unfinished in {r.bulk_unfinished} of {reps} runs"
            return f"bulk goodput {r.bulk_goodput_change_pct:+.0f} %"

        rep.text(f"{link} link: rank 1 — " + ", ".join(f"{r.mitigation} (MOS gain {r.mos_gain:+.2f}, web completion {r.web_completion_change_pct:+.0f} %, "
                                                     f"{bulk(r)})" for r in top.itertuples())
                 + (". Below DropTail (the whole IQR of the gain under 0): " + ", ".join(worse.mitigation) if len(worse) else "") + ".")
    rep.text("Each run's audio metrics are over its own overlap window (packets sent while its TCP traffic runs, design.md), so a "
             "mitigation that lengthens the transfers also lengthens the window it is judged on; the MOS at the best jitter buffer "
             "(40–200 ms) has a floor of 1.0 where every buffer loses most packets, so gains between such cases are 0.")
    _cost_benefit(rep, rk, reps)
    rep.section("Per workload", "Medians over replications per (link, workload, mitigation); OWD percentiles per run, then the median.")
    rep.table(summ, "Audio quality and TCP cost per link, workload and mitigation", "{:.2f}", name="metrics")
    by_link: dict[str, list[Finding]] = {}
    for ln in lns:
        by_link[ln.label] = findings(x, ln.label)
    allf = [f for fs in by_link.values() for f in fs]
    write_csv(allf, opt.out / "findings.csv")
    rep.section("Findings", "Statements about the mitigations, each with what we measured (median [25th–75th percentile] over replications) "
                "and a verdict computed by the rule in its row.")
    rep.findings(by_link)
    if testbed:
        from jitterlab.presets import mitigations_testbed

        mitigations_testbed.section(rep, opt.out, x, progress, lns)
    path = rep.write()
    if progress:
        print(f"mitigations: report {path}", file=sys.stderr)
    return path
