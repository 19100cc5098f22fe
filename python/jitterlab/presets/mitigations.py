"""Which mitigation helps the call how much, and what it costs the downloads.

The PAM 2013 workloads (audio + a 28 MB bulk download; audio + n = 1, 2, 6 short flows sharing
372 kB with IW3 or IW10) and a mixed one (audio + a download + a web page behind it) on the fixed
and the cellular link (presets/links/), against each mitigation as deployed: the queue at the
bottleneck (DropTail as the baseline, RED, CoDel, FQ-CoDel, CAKE shaped and unshaped, PIE,
DualPI2 with classic TCP and with DCTCP), the receiving host's RWND moderation (after / from the
SYN), the sender (IW3 instead of IW10, a paced initial window, BBR instead of CUBIC). For each: the audio's OWD,
loss behind 40 and 100 ms jitter buffers, the share of packets in level-4/5 loss periods, the
E-model MOS of a 60 s call containing the event (the ranking's measure, `call_mos`) and of the
window alone, and what TCP pays (goodput, completion time). One ranked table per link (rule:
`RANK_RULE`, no chained ties: `ranks`), a cost–benefit figure, findings computed by rule; with
`testbed=True` (root) the real-Linux numbers beside the simulator's.

A mitigation whose queue kind or congestion control is not in the simulator's registries in this
build is a row "not available in this build" (`availability`), never an error.
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab import plots
from jitterlab.presets import findings as F
from jitterlab.presets import mitigations_adaptive as A
from jitterlab.presets import pam2013
from jitterlab.presets import ranks as R
from jitterlab.capture import duration_ns
from jitterlab.presets.common import Options, caption, flat, run_experiment
from jitterlab.presets.findings import Finding, write_csv
from jitterlab.report import Report, _write_csv
from jitterlab.sweep import Param, Sweep
# the catalogue (mitigations as deployed, workloads' constants), also read by the testbed column;
# its names stay importable from here
from jitterlab.presets.mitigations_catalog import (BASELINE, BUDGET, BUFFER, BULK_SIZE, CAKE_MEM, CAKE_SHARE,  # noqa: F401
                                                   DUALPI2_STEP, HOST, JBS, LINKS, MITIGATIONS, MIXED_BULK, MIXED_DURATION,
                                                   MIXED_PAGE_FLOWS, MIXED_PAGE_START, RED, REPS, SEED, STACK, START, TABLES,
                                                   WEB_TOTAL, WORKLOADS, Mitigation, _cake_shaped, _q, _tcp, availability,
                                                   cake_autorate_table, cake_bandwidth_bps)

DESCRIPTION = "Mitigations (AQMs, L4S, RWND moderation, IW3, paced IW, BBR) ranked by the call's MOS gain and the downloads' cost"
RANK_RULE = ("per link and replication, a mitigation's MOS gain is the mean over the 8 workloads of its call-level MOS (E-model, "
             "G.711 + PLC, over a 60 s call containing the run's overlap window, at the one jitter buffer of 40–200 ms best for "
             "the call) minus DropTail's in the same workload and replication (same seed and TCP start); mitigations are "
             "ordered by the mean gain over replications; two are distinct when the 95 % Student-t interval of their paired "
             "per-replication differences excludes 0 (per pair, not corrected for the number of pairs); going down the order, "
             "one shares the rank of the group above only when it is indistinct from every member of that group (no chaining), "
             "otherwise it takes its position in the order")


def sweeps(reps: int, link: str | pam2013.Link = "fixed", available: Iterable[str] | None = None) -> dict[str, Sweep]:
    """The bulk, web and mixed sweeps of one link over the available mitigations (the `mitigation`
    parameter last, so its keys override the workload's: IW3 sets traffic[1].iw on an IW10 point;
    in the mixed workload a sender's keys apply to both transfers)."""
    ln = link if isinstance(link, pam2013.Link) else pam2013.load_link(link)
    names = set(available) if available is not None else set(availability().query("available").mitigation)
    mits = [m for m in MITIGATIONS if m.name in names]
    mp = Param("mitigation", [m.name for m in mits], [m.keys(ln) for m in mits])
    sc = pam2013.base_scenario(ln)
    bulk = copy.deepcopy(sc)
    # room for a mitigation that slows the download by a third: unfinished downloads would have no completion
    bulk["duration"] = f"{int(np.ceil(pam2013._bulk_duration_s(ln) * 4 / 3))}s"
    bulk["traffic"].append(_tcp("bulk", size=BULK_SIZE, iw=3, start="10s"))
    web = copy.deepcopy(sc)
    web["duration"] = "25s"
    web["traffic"].append(_tcp("web", size=WEB_TOTAL, flows=1, iw=3, start="10s"))
    # audio + a download + a web page at once: the page (6 flows, IW10) arrives behind the download's queue
    mixed = copy.deepcopy(sc)
    mixed["duration"] = MIXED_DURATION
    mixed["traffic"].append(_tcp("bulk", size=MIXED_BULK, iw=3, start="10s"))
    mixed["traffic"].append(_tcp("web", size=WEB_TOTAL, flows=MIXED_PAGE_FLOWS, iw=10, start=MIXED_PAGE_START))
    # a sender-side mitigation is the server's: it applies to both of its TCP transfers
    both = [{**k, **{"traffic[2]" + key[len("traffic[1]"):]: v for key, v in k.items() if key.startswith("traffic[1].")}}
            for k in mp.sets]
    rnd = {"traffic[1].start": START}
    return {
        "bulk": Sweep(f"mitigations-{ln.label}-bulk", bulk, seed=SEED, replications=reps, params=[mp], random=rnd, tables=TABLES),
        "web": Sweep(f"mitigations-{ln.label}-web", web, seed=SEED, replications=reps,
                     params=[Param("n", [1, 2, 6], [{"traffic[1].flows": n} for n in (1, 2, 6)]),
                             Param("iw", [3, 10], [{"traffic[1].iw": w} for w in (3, 10)]), mp],
                     random=rnd, tables=TABLES),
        "mixed": Sweep(f"mitigations-{ln.label}-mixed", mixed, seed=SEED, replications=reps, params=[Param("mitigation", mp.labels, both)],
                       random=rnd, tables=TABLES),
    }


# ----------------------------------------------------------------------------- metrics

def tcp_costs(t: pd.DataFrame, horizon_s: float | None) -> pd.DataFrame:
    """Per run: completion_s (first SYN to last byte acknowledged), goodput_bps (bytes delivered · 8
    / completion) and unfinished (a flow had not finished when the run ended). An unfinished run's
    completion is the run's end minus its first SYN (``horizon_s``: a lower bound) and its goodput
    the bytes delivered by then over that time, so the cost columns are never empty; without a
    horizon they stay NaN."""
    tc = M.tcp_summary(t, per="run")[["run_id", "bytes", "completion_s", "goodput_bps"]]
    syn = pd.DataFrame({"run_id": t.run_id.to_numpy(), "syn_ns": t.syn_ns.to_numpy(np.int64)}).groupby("run_id").syn_ns.min()
    tc["unfinished"] = tc.completion_s.isna()
    if horizon_s is not None:
        lower = horizon_s - tc.run_id.map(syn).to_numpy(float) / 1e9
        u = tc.unfinished.to_numpy()
        tc.loc[u, "completion_s"] = lower[u]
        with np.errstate(invalid="ignore", divide="ignore"):
            tc.loc[u, "goodput_bps"] = tc.bytes.to_numpy(float)[u] * 8.0 / lower[u]
    return tc.drop(columns=["bytes"])


def per_run(res: Mapping[str, Any], link: str, horizon_s: Mapping[str, float] | None = None) -> pd.DataFrame:
    """One row per run of a link's two sweeps: link, workload, mitigation, replication, the audio's
    OWD median / 99th percentile (ms), loss behind 40 / 100 ms JBs, the share of packets in level-4/5
    loss periods behind a 40 ms JB, the MOS and JB at the best jitter buffer; the TCP traffic's
    completion time (first SYN to last byte) and goodput (`tcp_costs`; ``horizon_s``: each sweep's
    duration, for unfinished transfers). Every metric is the metrics module's (design.md
    definitions), on the packets sent while TCP runs (the overlap window); mos_call is the call-level
    measure the ranking uses (`call_mos`)."""
    out = []
    for wl, r in res.items():
        m, runs, t = r["media_packets"], r["runs"], r["tcp_flows"]
        keys = ["run_id", "mitigation", "replication"] + (["n", "iw"] if wl == "web" else [])
        base = runs[keys].copy()
        base["workload"] = wl if wl != "web" else base.n.map(lambda n: f"n={n}") + base.iw.map(lambda w: f" IW{w}")
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
        base = base.merge(call_quality(m, runs), on="run_id", how="left")
        hz = (horizon_s or {}).get(wl)
        if wl == "mixed":  # the page's completion behind the download, the download's goodput
            page = tcp_costs(t[t.role == "web"], hz)[["run_id", "completion_s", "unfinished"]]
            dl = tcp_costs(t[t.role == "bulk"], hz)[["run_id", "goodput_bps", "unfinished"]]
            tc = page.merge(dl, on="run_id", how="outer", suffixes=("", "_bulk"))
            tc["unfinished"] = tc.pop("unfinished").astype(bool) | tc.pop("unfinished_bulk").astype(bool)
        else:
            tc = tcp_costs(t, hz)
        base = base.merge(tc, on="run_id", how="left")
        out.append(base)
    df = pd.concat(out, ignore_index=True)
    df.insert(0, "link", link)
    return df.drop(columns=[c for c in ("n", "iw") if c in df.columns])


#: The call the ranking judges: 60 s of G.711 + PLC audio (20 ms packets, PAM 2013's) that contains the
#: run's overlap window; its packets outside the window are unaffected (no loss, base delay). A window
#: longer than 60 s (the bulk download's) is the call itself.
CALL_S = 60.0
AUDIO_INTERVAL_S = 0.020
CODEC = "g711_plc"


def call_mos(lost: Any, window_packets: Any, ta_ms: Any, call_s: float = CALL_S) -> np.ndarray:
    """E-model MOS of the call at one jitter buffer: Ppl = the window's lost packets (pure + late
    behind that buffer) over the call's packets (max(call_s / 20 ms, the window's)), BurstR = 1
    (G.107's random loss: a Gilbert burst ratio describes stationary loss, not one event in a call;
    the event's burst length is the level45 column), mouth-to-ear delay ``ta_ms`` = base OWD + JB +
    codec delay. Monotone: fewer lost packets at the same delay never give a lower MOS."""
    call = np.maximum(np.round(call_s / AUDIO_INTERVAL_S), np.asarray(window_packets, dtype=float))
    ppl = 100.0 * np.asarray(lost, dtype=float) / call
    return M.mos_from_r(M.emodel_r(ta_ms, ppl, 1.0, CODEC))


def call_quality(m: pd.DataFrame, runs: pd.DataFrame, jbs_ms: Sequence[float] = JBS) -> pd.DataFrame:
    """Per run: mos_call, the `call_mos` at the jitter buffer (of ``jbs_ms``, one for the whole call)
    that maximises it, and that buffer (jb_call_ms; ties: the smaller)."""
    jl = M.jb_loss(m, runs, jbs_ms=jbs_ms)
    e = M.emodel_mos(m, runs, jbs_ms=jbs_ms, codec=CODEC)[["run_id", "flow_id", "jb_s", "ta_s"]]
    d = jl.merge(e, on=["run_id", "flow_id", "jb_s"], how="left").dropna(subset=["ta_s"])
    d["mos_call"] = call_mos(d.pure + d.late, d.packets, d.ta_s * 1e3)
    d = d.dropna(subset=["mos_call"]).sort_values(["run_id", "mos_call", "jb_s"], ascending=[True, False, True], kind="stable")
    d = d.drop_duplicates("run_id", keep="first")
    return pd.DataFrame({"run_id": d.run_id.to_numpy(), "mos_call": d.mos_call.to_numpy(float),
                         "jb_call_ms": (d.jb_s.to_numpy(float) * 1e3).round(3)})


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Adds, per run, the difference to DropTail's run of the same link, workload and replication:
    mos_gain (of the call-level MOS, the ranking's), mos_best_gain (of the MOS at the window's best
    jitter buffer), completion_change_pct, goodput_change_pct."""
    cols = {"mos_call": "_call0", "mos_best": "_mos0", "completion_s": "_c0", "goodput_bps": "_g0"}
    have = {k: v for k, v in cols.items() if k in df.columns}
    b = df[df.mitigation == BASELINE][["link", "workload", "replication", *have]].rename(columns=have)
    x = df.merge(b, on=["link", "workload", "replication"], how="left")
    if "mos_call" in have:
        x["mos_gain"] = x.mos_call - x._call0
    if "mos_best" in have:
        x["mos_best_gain"] = x.mos_best - x._mos0
    with np.errstate(invalid="ignore", divide="ignore"):
        x["completion_change_pct"] = (x.completion_s / x._c0 - 1.0) * 100.0
        x["goodput_change_pct"] = (x.goodput_bps / x._g0 - 1.0) * 100.0
    return x.drop(columns=list(have.values()))


def gains_per_replication(x: pd.DataFrame, mitigation: str, col: str = "mos_gain") -> pd.Series:
    """The rank rule's statistic: per replication (the index), the mean over workloads of the
    paired gain."""
    d = x[x.mitigation == mitigation]
    return d.groupby("replication")[col].mean().astype(float)


def rank(gains: Mapping[str, Any]) -> pd.DataFrame:
    """The ranking rule (`RANK_RULE`, `ranks.rank`) on per-replication gains per mitigation:
    mitigation, n, mean, rank, group, and the paired interval against DropTail (vs_lo, vs_hi) when
    DropTail is among them."""
    return R.rank(gains, baseline=BASELINE if BASELINE in gains else None)


def summary(x: pd.DataFrame) -> pd.DataFrame:
    """Per (link, workload, mitigation): medians over replications (OWD percentiles are per run,
    then the median over runs), completion and goodput change against DropTail, and how many
    replications' TCP traffic had not finished when the run ended (`tcp_costs`)."""
    g = x.groupby(["link", "workload", "mitigation"], sort=False)
    out = g.agg(replications=("run_id", "size"), owd_p50_ms=("owd_p50_ms", "median"), owd_p99_ms=("owd_p99_ms", "median"),
                loss40_pct=("loss40", "median"), loss100_pct=("loss100", "median"), level45_pct=("level45_share", "median"),
                mos_call=("mos_call", "median"), jb_call_ms=("jb_call_ms", "median"), mos_gain=("mos_gain", "median"),
                mos_best=("mos_best", "median"), jb_best_ms=("jb_best_ms", "median"),
                completion_s=("completion_s", "median"), completion_change_pct=("completion_change_pct", "median"),
                goodput_Mbps=("goodput_bps", "median"), goodput_change_pct=("goodput_change_pct", "median"),
                unfinished=("unfinished", "sum"))
    for c in ("loss40_pct", "loss100_pct", "level45_pct"):
        out[c] *= 100
    out["goodput_Mbps"] /= 1e6
    out["unfinished"] = out["unfinished"].astype(int)
    return out.reset_index()


def ranking(x: pd.DataFrame, avail: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ranked table of every link and the pairwise comparisons behind it. Ranked table: the
    rank and its group, the mean call-level MOS gain with its paired 95 % interval against DropTail,
    the medians over the 8 workloads of the per-workload medians (audio, incl. the MOS at the best
    jitter buffer of the window), and both TCP costs for every ranked row: the bulk download's
    goodput (Mbit/s and change) with its unfinished count, the web pages' completion time change
    with theirs; unavailable mitigations as rows with their status and no numbers. Pairs: every
    ordered pair's mean difference of gains with its interval (`ranks.pairwise`)."""
    rows, pairs = [], []
    summ = summary(x)
    for link, lx in x.groupby("link", sort=False):
        ok = [m.name for m in MITIGATIONS if m.name in set(lx.mitigation)]
        gains = {k: gains_per_replication(lx, k) for k in ok}
        rk = rank(gains).set_index("mitigation")
        pairs.append(R.pairwise(gains).assign(link=link))
        sm = summ[summ.link == link]
        for m in MITIGATIONS:
            st = avail.set_index("mitigation").loc[m.name, "status"]
            if m.name not in rk.index:
                rows.append({"link": link, "mitigation": m.name, "where": m.where, "status": st})
                continue
            s = sm[sm.mitigation == m.name]
            web = lx[(lx.mitigation == m.name) & lx.workload.str.startswith("n=")]
            bulk = s[s.workload == "bulk"]
            mixed = s[s.workload == "mixed"]
            r = rk.loc[m.name]
            rows.append({"link": link, "mitigation": m.name, "where": m.where, "status": st, "rank": r["rank"], "group": r["group"],
                         "mos_gain": r["mean"], "mos_gain_lo": r["vs_lo"], "mos_gain_hi": r["vs_hi"],
                         "mos_call": s.mos_call.median(), "mos_best": s.mos_best.median(),
                         "owd_p50_ms": s.owd_p50_ms.median(), "owd_p99_ms": s.owd_p99_ms.median(),
                         "loss40_pct": s.loss40_pct.median(), "loss100_pct": s.loss100_pct.median(), "level45_pct": s.level45_pct.median(),
                         "bulk_goodput_Mbps": float(bulk.goodput_Mbps.iloc[0]) if len(bulk) else np.nan,
                         "bulk_goodput_change_pct": float(bulk.goodput_change_pct.iloc[0]) if len(bulk) else np.nan,
                         "bulk_unfinished": int(bulk.unfinished.iloc[0]) if len(bulk) else 0,
                         "web_completion_change_pct": float(np.nanmedian(web.completion_change_pct)) if web.completion_change_pct.notna().any() else np.nan,
                         "web_unfinished": int(web.unfinished.sum()),
                         "mixed_page_change_pct": float(mixed.completion_change_pct.iloc[0]) if len(mixed) else np.nan,
                         "mixed_goodput_change_pct": float(mixed.goodput_change_pct.iloc[0]) if len(mixed) else np.nan,
                         "mixed_unfinished": int(mixed.unfinished.iloc[0]) if len(mixed) else 0})
    df = pd.DataFrame(rows)
    df["rank"] = df["rank"].astype("Int64")
    order = {l: i for i, l in enumerate(dict.fromkeys(df.link))}
    df = df.sort_values(["link", "rank"], key=lambda s: s if s.name != "link" else s.map(order), na_position="last",
                        kind="stable").reset_index(drop=True)
    pw = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame()
    if len(pw):
        pw = pw[["link", *[c for c in pw.columns if c != "link"]]]
    return df, pw


# ----------------------------------------------------------------------------- findings

def findings(x: pd.DataFrame, link: str) -> list[Finding]:
    """Statements from the literature and the project's notes, each checked by a stated rule."""
    lx = x[x.link == link]
    have = set(lx.mitigation)
    fs: list[Finding] = []

    def vals(mit: str, col: str, wl: str | None = None, web: bool = False) -> np.ndarray:
        d = lx[lx.mitigation == mit]
        d = d[d.workload == wl] if wl else (d[d.workload.str.startswith("n=")] if web else d)
        return d[col].to_numpy(float)

    aqms = [m.name for m in MITIGATIONS if m.where == "network" and m.name in have]
    if aqms:
        fs.append(F.ordering("Every AQM at the bottleneck keeps the bulk download's queue short: the audio's median OWD below DropTail's",
                             "AQM literature (RFC 7567 §2: AQM to control queueing delay)",
                             [(m, vals(m, "owd_p50_ms", "bulk"), vals(BASELINE, "owd_p50_ms", "bulk")) for m in aqms], expect="below", unit=" ms"))
    if "FQ-CoDel" in have:
        others = [m for m in aqms if m not in ("FQ-CoDel", "CAKE", "CAKE fixed shaper", "CAKE unshaped")]  # CAKE queues per flow too
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
    if {"CAKE", "FQ-CoDel"} <= have:
        # paired per replication: the deployed CAKE's download against FQ-CoDel's in the same seed
        g = lx[lx.workload == "bulk"].pivot_table(index="replication", columns="mitigation", values="goodput_bps")
        rel = ((g["CAKE"] / g["FQ-CoDel"] - 1.0) * 100.0).to_numpy(float)
        sp = F.spread(rel)
        fs.append(Finding("CAKE as deployed (shaped) costs the bulk download at most 5 % against FQ-CoDel",
                          "issue 26 (CAKE unshaped halved the download); tc-cake(8) on the shaper; cake-autorate on the cellular link", sp.show(fmt="{:+.1f}", unit=" %"),
                          F.side(sp, -5.0, below=False), F.rule_side("−5 %", False), role="held-out"))
    costs = [(m, vals(m, "completion_change_pct", web=True)) for m in (aqms + ["RWND after SYN", "RWND from SYN", "IW3", "paced IW", "BBR"]) if m in have]
    if costs:
        verdicts = [F.side(c, 25.0, below=True) for _, c in costs]
        fs.append(Finding("Mitigations cost the web pages little: completion time at most 25 % longer than with DropTail",
                          "the rwnd preset's question (cost to TCP); testbed notes: ~12 % for a 20 kB budget over 6 flows",
                          "; ".join(f"{m}: {F.spread(c).show(fmt='{:+.0f}', unit=' %')}" for m, c in costs), F.worst(verdicts),
                          F.rule_side("+25 %", True) + "; one verdict for all: the worst (findings.worst)"))
    return fs


# ----------------------------------------------------------------------------- report

#: The cost–benefit figure's x axes: both costs, one row of panels each.
COSTS = (("web_completion_change_pct", "web completion time vs DropTail (%, median)"),
         ("bulk_goodput_change_pct", "bulk goodput vs DropTail (%, median)"),
         ("mixed_page_change_pct", "page behind a download: completion vs DropTail (%, median)"))


def _cost_benefit(rep: Report, rk: pd.DataFrame, reps: int) -> None:
    links = list(dict.fromkeys(rk.link))
    fig, axes = plots.new(width=5.2 * len(links), height=4.2 * len(COSTS), ncols=len(links), nrows=len(COSTS), sharey=True, squeeze=False)
    fig.subplots_adjust(hspace=0.3)
    # one style per mitigation, the same in every panel (a legend, not point labels: they collide)
    names = [m.name for m in MITIGATIONS if m.name != BASELINE and m.name in set(rk.loc[rk["rank"].notna(), "mitigation"])]
    st = plots.styles()
    style = {n: next(st) for n in names}
    for row, (col, xlabel) in enumerate(COSTS):
        for j, link in enumerate(links):
            ax = axes[row][j]
            d = rk[(rk.link == link) & rk["rank"].notna()].set_index("mitigation")
            for n in names:
                if n not in d.index:
                    continue
                r = d.loc[n]
                y, lo, hi = float(r.mos_gain), float(r.mos_gain_lo), float(r.mos_gain_hi)
                yerr = [[y - lo], [hi - y]] if np.isfinite(lo) and np.isfinite(hi) else None
                # an unfinished download is drawn hollow: its goodput is what arrived by the run's end
                hollow = (col == "bulk_goodput_change_pct" and int(r.bulk_unfinished) > 0) or (col.startswith("mixed") and int(r.mixed_unfinished) > 0)
                ax.errorbar([float(r[col])], [y], yerr=yerr, fmt=style[n]["marker"], color=style[n]["color"],
                            mfc="none" if hollow else style[n]["color"], capsize=2, markersize=6,
                            label=n if (row, j) == (0, 0) else None)
            ax.axhline(0, color="#999", linewidth=0.8); ax.axvline(0, color="#999", linewidth=0.8)
            if row == 0:
                ax.set_title(f"{link} link")
            ax.set_xlabel(xlabel); ax.grid(alpha=.3)
        axes[row][0].set_ylabel("call MOS gain (mean, 95 % CI)")
    fig.legend(loc="lower center", ncol=min(5, max(1, len(names))), fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1.0))
    plots.caption(fig, caption("mitigations", reps, "call-level MOS (E-model, G.711 + PLC, 60 s call containing the overlap window), "
                               "mean over the 8 workloads per replication, paired 95 % t interval against DropTail; up = better call, "
                               "right = slower pages (top, bottom: a page arriving behind an 8 MB download) or a faster download "
                               "(middle); hollow = unfinished in some runs (goodput from the bytes delivered by the run's end, "
                               "completion = the run's end)"))
    rep.figure(fig, "cost_benefit", "Cost and benefit: the call's MOS gain against both costs (web pages' completion time, bulk "
               "download's goodput), per mitigation and link.")


def _adaptive_section(rep: Report, out: Path, vx: pd.DataFrame, audio_rank: pd.DataFrame, lns: Sequence[pam2013.Link], cc: str,
                      reps: int) -> None:
    """The adaptive call's ranking, per-workload table and findings (`mitigations_adaptive`), and
    their CSVs (adaptive_ranking.csv, adaptive_pairs.csv, adaptive_metrics.csv, adaptive_per_run.csv;
    its findings join findings.csv's rows in adaptive_findings.csv)."""
    vrk, vpairs = A.ranking(vx, audio_rank)
    vsum = A.summary(vx)
    rep.section(f"The adaptive call ({cc})", f"The audio replaced by an adaptive video call ({cc}, RFC 8867's media source "
                "150 kbit/s – 1.5 Mbit/s from 1 Mbit/s) in three workloads — beside the bulk download, beside a 6-flow IW10 page, "
                "and the mixed one — with the same links, mitigations, seeds and TCP starts. Metrics after RFC 8868 over the "
                "overlap window (docs/mitigations.md): received media rate, frame delay (capture to last packet, complete frames) "
                "median and 95th percentile, complete frames, late frames (not complete within 400 ms) and the share of a 60 s "
                "call's frames on time, freezes (W3C webrtc-stats rule, summed over replications). Rank "
                "rule: " + A.RANK_RULE + ". audio_rank: the audio ranking's rank of the same mitigation.")
    page = vrk.assign(rank=[str(int(r)) if pd.notna(r) else "—" for r in vrk["rank"]],
                      audio_rank=[str(int(r)) if pd.notna(r) else "—" for r in vrk["audio_rank"]])
    rep.table(page, f"Mitigations ranked by the adaptive call's on-time gain over DropTail, per link ({reps} replications)", "{:.2f}",
              name="adaptive_ranking")
    _write_csv(vrk, out / "adaptive_ranking.csv")  # numeric ranks (the page shows "—" for none)
    _write_csv(vpairs, out / "adaptive_pairs.csv")
    _write_csv(vx, out / "adaptive_per_run.csv")
    rep.table(vsum, "The adaptive call per link, workload and mitigation (medians over replications; freezes summed)", "{:.2f}",
              name="adaptive_metrics")
    A.figure(rep, vrk, audio_rank, reps)
    fs = {ln.label: A.findings(vx, vrk, ln.label, audio_rank) for ln in lns}
    write_csv([f for v in fs.values() for f in v], out / "adaptive_findings.csv", links=[k for k, v in fs.items() for _ in v])
    rep.text("Findings about the adaptive call, each verdict by the rule in its row:")
    rep.findings(fs)


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True, links: Sequence[str] | None = None,
        testbed: bool = False, adaptive_cc: str = A.ADAPTIVE_CC) -> Path:
    """Runs the study into OUT/<link>/{bulk,web,mixed}/ (the audio) and OUT/<link>/video-<cc>-{bulk,web,mixed}/
    (the adaptive call, controller ``adaptive_cc``) and writes report.html, ranking.csv, metrics.csv,
    per_run.csv, availability.csv, findings.csv and the adaptive call's adaptive_*.csv."""
    reps = reps or REPS
    specs = pam2013.parse_links(links or list(LINKS))
    lns = [pam2013.load_link(s) for s in specs]
    opt = Options(Path(out), jobs, executor, scheduler, progress)
    avail = availability()
    ok = list(avail.query("available").mitigation)
    if progress:
        print(f"mitigations: {reps} replications, links {', '.join(specs)}, {len(ok)} of {len(avail)} mitigations available, into {opt.out}/",
              file=sys.stderr)
    parts, vparts = [], []
    for ln in lns:
        lopt = Options(opt.out / ln.label, jobs, executor, scheduler, progress)
        sw = sweeps(reps, ln, ok)
        hz = {k: int(duration_ns(s.scenario["duration"]) or 0) / 1e9 for k, s in sw.items()}
        res = {k: run_experiment(s, k, lopt) for k, s in sw.items()}
        parts.append(per_run(res, ln.label, hz))
        # one directory per controller: another --cc into the same OUT adds its own sweeps
        vres = {k: run_experiment(s, f"video-{adaptive_cc}-{k}", lopt) for k, s in A.sweeps(sw, adaptive_cc).items()}
        vparts.append(A.per_run(vres, ln.label, hz, tcp_costs))
    x = paired(pd.concat(parts, ignore_index=True))
    vx = A.paired(pd.concat(vparts, ignore_index=True))
    rep = Report("Mitigations: which fix helps the call how much, and what the downloads pay", opt.out,
                 f"jitterlab preset mitigations · {reps} replications per (link, workload, mitigation) · links: {', '.join(specs)}")
    params: dict[str, Any] = {"replications": reps, "seed": SEED, "tcp_start": "U(10 s, 12 s)", "bulk_size": BULK_SIZE, "web_total": WEB_TOTAL,
                              "workloads": f"bulk (IW3); n = 1, 2, 6 × IW3 / IW10; mixed: {MIXED_BULK} download (IW3) + at {MIXED_PAGE_START} a page of "
                                           f"{MIXED_PAGE_FLOWS} IW10 flows", "call": f"{CALL_S:g} s of audio containing the overlap window", "jitter_buffers_ms": JBS, "tcp_cc": "cubic",
                              "buffer": BUFFER, "rwnd_budget": BUDGET, "rank_rule": RANK_RULE, "links": specs,
                              "window": "media packets sent in [tcp_start, tcp_end]", "base_delay": "min OWD in the 2 s before tcp_start",
                              "level45": "share of the window's packets in loss periods of level 4 or 5 (>= 120 ms) behind a 40 ms JB",
                              "mos_call": "E-model (G.711 + PLC, BurstR 1) over the call, at its best jitter buffer",
                              "mos_best": "E-model (G.711 + PLC) over the overlap window at the jitter buffer with the highest MOS of each run",
                              "adaptive_call": f"traffic[0] = {A.video(adaptive_cc)} in the workloads {', '.join(A.WORKLOADS.values())}",
                              "adaptive_rank_rule": A.RANK_RULE}
    for m in MITIGATIONS:
        for ln in lns:
            k = m.keys(ln)
            params[f"mitigation.{m.name}" + (f" ({ln.label})" if m.per_link else "")] = m.what + (f" · keys: {k}" if k else "")
    for ln in lns:
        params.update({f"{ln.label}.{k}": v for k, v in flat({"access": ln.access}).items()})
    rep.set_params(params)
    rk, pairs = ranking(x, avail)
    summ = summary(x)
    _write_csv(x, opt.out / "per_run.csv")
    _write_csv(avail, opt.out / "availability.csv")
    rep.section("Ranking", "Rank rule: " + RANK_RULE + ". The call-level MOS cannot fall off a cliff: a short event is part of "
                "a 60 s call whose other packets are unaffected, so each lost packet costs the call a little and a mitigation "
                "that loses fewer packets at every jitter buffer never scores below one that loses more (docs/mitigations.md). "
                "mos_best is the older per-window measure (the MOS over the overlap window alone at its best jitter buffer, "
                "floor 1.0), kept as a column. Audio columns: the median over the 8 workloads of each workload's median over "
                "replications. TCP, for every ranked row: the bulk download's goodput (Mbit/s, and change against DropTail in "
                "the same replication) and the web pages' completion time change (first SYN to last byte); a transfer unfinished "
                "when its run ended counts with the bytes it delivered by then (goodput) and the run's end (completion, a lower "
                "bound), and bulk_unfinished / web_unfinished count those runs. pairs.csv: every pair's mean difference of "
                "gains with its 95 % interval. Rows 'not available in this build' come from the simulator's registries "
                "(availability.csv).")
    show = rk.drop(columns=["where"])
    page = show.assign(rank=[str(int(r)) if pd.notna(r) else "—" for r in show["rank"]])
    rep.table(page, "Mitigations ranked by the call's MOS gain over DropTail, per link", "{:.2f}", name="ranking")
    _write_csv(show, opt.out / "ranking.csv")  # the CSV keeps the rank numeric (empty when not ranked)
    _write_csv(pairs, opt.out / "pairs.csv")
    for link, d in rk.groupby("link", sort=False):
        top = d[d["rank"] == 1]
        worse = d[d["rank"].notna() & (d.mos_gain_hi < 0)]

        def bulk(r: Any) -> str:
            un = f", unfinished in {r.bulk_unfinished} of {reps} runs" if r.bulk_unfinished else ""
            return f"bulk goodput {r.bulk_goodput_change_pct:+.0f} %{un}"

        rep.text(f"{link} link: rank 1 — " + ", ".join(f"{r.mitigation} (MOS gain {r.mos_gain:+.2f}, web completion {r.web_completion_change_pct:+.0f} %, "
                                                     f"{bulk(r)})" for r in top.itertuples())
                 + (". Below DropTail (the whole 95 % interval of the paired gain under 0): " + ", ".join(worse.mitigation) if len(worse) else "") + ".")
    _cost_benefit(rep, rk, reps)
    rep.section("Per workload", "Medians over replications per (link, workload, mitigation); OWD percentiles per run, then the median.")
    rep.table(summ, "Audio quality and TCP cost per link, workload and mitigation", "{:.2f}", name="metrics")
    by_link: dict[str, list[Finding]] = {}
    for ln in lns:
        by_link[ln.label] = findings(x, ln.label)
    allf = [f for fs in by_link.values() for f in fs]
    write_csv(allf, opt.out / "findings.csv", links=[k for k, fs in by_link.items() for _ in fs])
    rep.section("Findings", "Statements about the mitigations, each with what we measured (median [25th–75th percentile] over replications) "
                "and a verdict computed by the rule in its row.")
    rep.findings(by_link)
    _adaptive_section(rep, opt.out, vx, rk, lns, adaptive_cc, reps)
    if testbed:
        from jitterlab.presets import mitigations_testbed

        mitigations_testbed.section(rep, opt.out, x, progress, lns)
    path = rep.write()
    if progress:
        print(f"mitigations: report {path}", file=sys.stderr)
    return path
