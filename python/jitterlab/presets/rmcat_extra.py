"""`reproduce rmcat`'s RFC 8867 §6.1 (media flows with priority) and §6.3 (multiple bottlenecks) on
the simulator, each with findings by a stated rule (docs/media.md, "RFC 8867 parameters used").

§6.1: "an extension of Section 5.4 where the same test is run with different priority levels": §5.4's
three flows (3.5 Mbit/s, starts 0 / 20 / 40 s, 120 s, 300 ms DropTail) with S1 at priority 2 and S2,
S3 at priority 1; the RFC: S1 "must arrive at a steady-state rate approximately twice that of the
other two flows". A controller takes the weight through `Controller::set_priority` (the scenario
key `priority`): NADA has one (RFC 8698 §4.3 eq. 5's PRIO); GCC and SCReAM have none, the simulator
refuses the key for them, and their rows say so with the simulator's own error line. max_rate is
2.5 Mbit/s here (ours): at 1.5 Mbit/s S1's doubled share (~1.7 Mbit/s) would be cut off.

§6.3, the RFC's parameters: S1 → A → B → C → D → R1, S2 → A → B → R2 (sharing A→B with S1), S3 → C →
D → R3 (sharing C→D with S1); capacities 2 Mbit/s × the path capacity ratios A–B 1.0, B–C 4.0, C–D
0.75 = 2 / 8 / 1.5 Mbit/s, each with a 300 ms DropTail at its own capacity (§4.2); one-way
propagation delay S1–R1 100 ms, S2–R2 40 ms, S3–R3 40 ms (placed as A→B 20 ms, B→C 60 ms, C→D 20 ms,
S2→A and S3→C 20 ms each); each source a video flow and a 20 kbit/s CBR audio flow (§4.3), 0–299 s;
300 s; no competing traffic. The RFC expects "full utilization at both bottleneck links without
starving any of the three congestion-controlled media flows and ensuring fair share of the
available bandwidth at each bottleneck"; the rules that read it are below (`fair_shares`).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from jitterlab import plots
from jitterlab import rtc_metrics as R
from jitterlab.presets import findings as F
from jitterlab.presets.common import caption
from jitterlab.presets.findings import Finding
from jitterlab.presets.rmcat_common import AUDIO_BPS, _links, _video, quartile_table, queue_300ms, video_ids, with_audio
from jitterlab.report import Report
from jitterlab.sweep import Param, Sweep

# ----------------------------------------------------------------------------- §6.1

CAP_61 = 3.5e6
PRIO_61 = [2.0, 1.0, 1.0]
STARTS_61 = (0, 20, 40)
MAX_RATE_61 = "2.5Mbit"
WINDOW_61 = (60.0, 119.0)
#: "approximately twice" (RFC 8867 §6.1) read as 2 ± 20 % (ours)
RATIO_61 = (1.6, 2.4)

# ----------------------------------------------------------------------------- §6.3

#: A→B, B→C, C→D: 2 Mbit/s × the path capacity ratios 1.0, 4.0, 0.75
HOPS_63 = {"ab": ("A", "B", 2.0e6, "20ms"), "bc": ("B", "C", 8.0e6, "60ms"), "cd": ("C", "D", 1.5e6, "20ms")}
#: the two bottlenecks and the sources crossing each (B→C, 8 Mbit/s, carries S1 alone)
SHARED_63 = {"ab": (1, 2), "cd": (1, 3)}
WINDOW_63 = (30.0, 299.0)
#: ours: "full utilization" read as the media received through each bottleneck ≥ 80 % of it
UTIL_63 = 0.8
#: ours: "without starving": each video flow ≥ half its max-min fair share
STARVE_63 = 0.5
#: ours: "fair share at each bottleneck": Jain's index of the flows' rates over their max-min fair
#: shares (Jain's normalised form) ≥ 0.9 at each bottleneck
JAIN_63 = 0.9


def scenario_61(cc: str = "nada", duration_s: int = 120, starts: tuple[int, ...] = STARTS_61) -> dict[str, Any]:
    """§5.4's path and flows, each flow with its priority weight and max_rate 2.5 Mbit/s."""
    traffic = []
    for i, (s, w) in enumerate(zip(starts, PRIO_61)):
        v = _video(f"video{i}", f"{s}s", f"{duration_s - 1}s")
        traffic.append({**v, "cc": cc, "max_rate": MAX_RATE_61, "priority": w})
    return {"name": "rmcat-6.1", "duration": f"{duration_s}s", "links": _links({"rate": "3.5Mbit"}, queue_300ms(CAP_61)),
            "traffic": with_audio(traffic)}


def refusal(cc: str) -> str | None:
    """The simulator's error line for §6.1 with controller `cc` (a 2 s run), or None if it runs."""
    import jitterlab

    sc = scenario_61(cc, duration_s=2, starts=(0, 0, 0))
    try:
        jitterlab.simulate(sc, seed=1)
    except jitterlab.ScenarioError as e:
        return str(e)
    return None


def fair_shares(cap: Mapping[str, float] | None = None, audio_bps: float = AUDIO_BPS) -> dict[int, float]:
    """The video flows' max-min fair shares (bit/s, IP bytes) on §6.3's path by water-filling: each
    bottleneck's capacity less its sources' audio, split equally among the unfrozen video flows at
    the tightest link, that link's flows frozen, repeat. With the RFC's numbers, C→D (1.5 − 2 × 0.036)
    / 2 = 0.714 Mbit/s for S1 and S3, then A→B leaves S2 2.0 − 0.072 − 0.714 = 1.214 Mbit/s."""
    cap = dict(cap) if cap is not None else {k: v[2] for k, v in HOPS_63.items() if k in SHARED_63}
    left = {k: c - audio_bps * len(SHARED_63[k]) for k, c in cap.items()}
    share: dict[int, float] = {}
    while len(share) < 3:
        live = {k: [f for f in SHARED_63[k] if f not in share] for k in left}
        k = min((k for k in live if live[k]), key=lambda k: left[k] / len(live[k]))
        x = left[k] / len(live[k])
        for f in live[k]:
            share[f] = x
            for j in left:
                if f in SHARED_63[j]:
                    left[j] -= x
    return dict(sorted(share.items()))


def scenario_63(cc: str = "gcc", duration_s: int = 300) -> dict[str, Any]:
    """§6.3's path and flows (the module's docstring); the video flows' controller `cc`."""
    rev = {"rate": "10Mbit", "queue": {"kind": "droptail", "limit": "1000pkt"}}
    links: dict[str, Any] = {k: {"from": a, "to": b, "rate": f"{c / 1e6:g}Mbit", "delay": d, "queue": queue_300ms(c),
                                 "reverse": dict(rev)} for k, (a, b, c, d) in HOPS_63.items()}
    edge = {"rate": "100Mbit", "delay": "0ms"}
    links.update({"s1": {"from": "S1", "to": "A", **edge}, "r1": {"from": "D", "to": "R1", **edge},
                  "s2": {"from": "S2", "to": "A", "rate": "100Mbit", "delay": "20ms"}, "r2": {"from": "B", "to": "R2", **edge},
                  "s3": {"from": "S3", "to": "C", "rate": "100Mbit", "delay": "20ms"}, "r3": {"from": "D", "to": "R3", **edge}})
    stop = f"{duration_s - 1}s"
    video = [{**_video(f"video{i}", "0s", stop), "from": f"S{i}", "to": f"R{i}", "cc": cc} for i in (1, 2, 3)]
    return {"name": "rmcat-6.3", "duration": f"{duration_s}s", "links": links, "traffic": with_audio(video)}


def sweeps(reps: int, cc_param: Any, seed: int, tables: tuple[str, ...]) -> dict[str, Sweep]:
    accept = [cc for cc in ("gcc", "scream", "nada") if refusal(cc) is None]
    cc61 = Param("cc", accept, [{f"traffic[{i}].cc": c for i in range(len(PRIO_61))} for c in accept])
    return {"6.1": Sweep("rmcat-6.1", scenario_61(), seed=seed, replications=reps, params=[cc61], tables=tables),
            "6.3": Sweep("rmcat-6.3", scenario_63(), seed=seed, replications=reps, params=[cc_param(3)], tables=tables)}


def per_run_61(res: Mapping[str, Any], window: tuple[float, float] = WINDOW_61) -> pd.DataFrame:
    """Per run: each flow's received rate over the window (kbit/s), S1's over the mean of the
    other two, the three's use of the capacity, median queueing delay."""
    m, runs = res["media_packets"], res["runs"]
    a, b = window
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        rates = [R.utilisation(mr, [(0.0, CAP_61)], a, b, flows=[f]) * CAP_61 for f in video_ids(mr)]
        rows.append({"run_id": run.run_id, "cc": run.cc, **{f"media{i + 1}_kbps": r / 1e3 for i, r in enumerate(rates)},
                     "ratio": rates[0] / max(float(np.mean(rates[1:])), 1e-9), "total_util": sum(rates) / CAP_61,
                     "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6})
    return pd.DataFrame(rows)


def per_run_63(res: Mapping[str, Any], window: tuple[float, float] = WINDOW_63) -> pd.DataFrame:
    """Per run: each video flow's received rate over the window (kbit/s) and over its max-min fair
    share, each bottleneck's use (the media received through it — video and audio of the sources
    crossing it — over its capacity; a lower bound, as a packet dropped later on S1's path is not
    counted), Jain's index of the normalised rates at each bottleneck, median queueing delay of S1."""
    m, runs = res["media_packets"], res["runs"]
    a, b = window
    fair = fair_shares()
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        ids = sorted(mr.flow_id.unique())  # traffic order: video1..3, then audio1..3
        if len(ids) != 6:
            raise ValueError(f"rmcat-6.3 run {run.run_id}: {len(ids)} media flows, expected 6")
        video, audio = dict(zip((1, 2, 3), ids[:3])), dict(zip((1, 2, 3), ids[3:]))
        bps = {f: R.utilisation(mr, [(0.0, 1.0)], a, b, flows=[video[f]]) for f in video}
        abps = {f: R.utilisation(mr, [(0.0, 1.0)], a, b, flows=[audio[f]]) for f in audio}
        norm = {f: bps[f] / fair[f] for f in bps}
        row = {"run_id": run.run_id, "cc": run.cc, **{f"video{f}_kbps": bps[f] / 1e3 for f in bps},
               **{f"video{f}_fair": norm[f] for f in norm}, "min_fair": min(norm.values())}
        for k, srcs in SHARED_63.items():
            row[f"util_{k}"] = sum(bps[f] + abps[f] for f in srcs) / HOPS_63[k][2]
            row[f"jain_{k}"] = R.jain_index([norm[f] for f in srcs])
        row["util_min"] = min(row[f"util_{k}"] for k in SHARED_63)
        row["jain_min"] = min(row[f"jain_{k}"] for k in SHARED_63)
        s1 = mr[mr.flow_id == video[1]]
        row["s1_qdelay_median_ms"] = R.queueing_delay(s1).qdelay_ns.median() / 1e6
        rows.append(row)
    return pd.DataFrame(rows)


def findings_63(r: pd.DataFrame, controllers: list[str]) -> list[Finding]:
    a, b = WINDOW_63
    fair = fair_shares()
    src = ("RFC 8867 §6.3 (multiple bottlenecks: \"full utilization at both bottleneck links without starving any of the three "
           "congestion-controlled media flows and ensuring fair share of the available bandwidth at each bottleneck\"); bounds ours")
    shares = ", ".join(f"S{f} {x / 1e6:.3f}" for f, x in fair.items())
    fs = []
    for cc in controllers:
        x = r[r.cc == cc]
        fs.append(Finding(f"§6.3 {cc}: both bottlenecks fully used (the media received through A→B and through C→D ≥ "
                          f"{UTIL_63:.0%} of each, {a:g}–{b:g} s)", src, f"lower of the two {F.spread(x.util_min).show(fmt='{:.2f}')}",
                          F.side(x.util_min, UTIL_63, below=False), F.rule_side(f"{UTIL_63}", False) + " (per run, the lower of the two)"))
        fs.append(Finding(f"§6.3 {cc}: no video flow starves (each gets ≥ {STARVE_63:.0%} of its max-min fair share: {shares} Mbit/s)",
                          src, f"lowest rate / fair share {F.spread(x.min_fair).show(fmt='{:.2f}')}",
                          F.side(x.min_fair, STARVE_63, below=False), F.rule_side(f"{STARVE_63}", False) + " (per run, the lowest flow)"))
        fs.append(Finding(f"§6.3 {cc}: fair share at each bottleneck (Jain's index of the rates over their max-min fair shares ≥ "
                          f"{JAIN_63} at A→B (S1, S2) and at C→D (S1, S3))", src,
                          f"lower of the two {F.spread(x.jain_min).show(fmt='{:.3f}')}", F.side(x.jain_min, JAIN_63, below=False),
                          F.rule_side(f"{JAIN_63}", False) + " (per run, the lower of the two)"))
    return fs


def findings_61(r: pd.DataFrame, controllers: list[str], refused: Mapping[str, str | None]) -> list[Finding]:
    lo, hi = RATIO_61
    src = "RFC 8867 §6.1 (media flows with priority: S1 at priority 2 “approximately twice” S2 and S3 at 1); band ours"
    fs = []
    for cc in controllers:
        text = f"§6.1 {cc}: S1 (priority 2) arrives at a steady-state rate approximately twice that of S2 and S3 (priority 1), 60–119 s"
        why = refused.get(cc)
        if why is not None:
            fs.append(Finding(text, src, f"not run: {why}", "n/a", "the simulator refuses the priority key for this controller"))
            continue
        a = r[r.cc == cc]
        fs.append(Finding(text, src, F.spread(a.ratio).show(fmt="{:.2f}"), F.in_range(a.ratio, lo, hi),
                          F.rule_range(f"{lo}", f"{hi}") + " (S1's received rate over the mean of the other two)"))
    return fs


def _figure_61(rep: Report, res: Mapping[str, Any], reps: int) -> None:
    m, runs = res["media_packets"], res["runs"]
    ccs = list(dict.fromkeys(runs.cc))
    fig, axes = plots.new(width=10, height=max(3.4, 2.6 * len(ccs)), nrows=len(ccs), sharex=True, sharey=True, squeeze=False)
    for ax, cc in zip(axes[:, 0], ccs):
        rid = int(runs[runs.cc == cc].run_id.min())
        mr = m[m.run_id == rid]
        rate = R.media_rate(mr[mr.flow_id.isin(video_ids(mr))], bin_s=0.5, by="send")
        for i, (_, g) in enumerate(rate.groupby("flow_id")):
            ax.plot(g.t_s, g.rate_bps / 1e6, drawstyle="steps-post", lw=1, label=f"S{i + 1} video (priority {PRIO_61[i]:g})")
        ax.axhline(CAP_61 / 1e6, color="black", ls="--", lw=1.5, label="capacity")
        ax.set_title(cc, fontsize=9); ax.set_ylabel("Mbit/s"); ax.grid(alpha=.3); ax.legend(fontsize=7, loc="upper left")
    axes[-1, 0].set_xlabel("time (s)")
    plots.caption(fig, caption("rmcat-6.1", reps, "first replication of each controller with a priority weight; 0.5 s bins, IP bytes"))
    rep.figure(fig, "rmcat-6_1", "Three flows with priorities 2 / 1 / 1 on 3.5 Mbit/s (RFC 8867 §6.1).")


def _figure_63(rep: Report, res: Mapping[str, Any], reps: int) -> None:
    m, runs = res["media_packets"], res["runs"]
    ccs = list(dict.fromkeys(runs.cc))
    fair = fair_shares()
    fig, axes = plots.new(width=10, height=max(3.4, 2.6 * len(ccs)), nrows=len(ccs), sharex=True, sharey=True, squeeze=False)
    for ax, cc in zip(axes[:, 0], ccs):
        rid = int(runs[runs.cc == cc].run_id.min())
        mr = m[m.run_id == rid]
        rate = R.media_rate(mr[mr.flow_id.isin(video_ids(mr))], bin_s=1.0, by="recv")
        for i, (_, g) in enumerate(rate.groupby("flow_id")):
            line, = ax.plot(g.t_s, g.rate_bps / 1e6, drawstyle="steps-post", lw=1, label=f"S{i + 1} video received")
            ax.axhline(fair[i + 1] / 1e6, color=line.get_color(), ls=":", lw=1)
        ax.set_title(cc, fontsize=9); ax.set_ylabel("Mbit/s"); ax.grid(alpha=.3); ax.legend(fontsize=7, loc="upper left")
    axes[-1, 0].set_xlabel("time (s)")
    plots.caption(fig, caption("rmcat-6.3", reps, "first replication of each controller; 1 s bins, IP bytes; dotted: each "
                               "flow's max-min fair share (" + ", ".join(f"S{f} {x / 1e6:.3f}" for f, x in fair.items())
                               + " Mbit/s; S1's line lies under S3's)"))
    rep.figure(fig, "rmcat-6_3", "Three video flows over two bottlenecks, A→B 2 Mbit/s (S1, S2) and C→D 1.5 Mbit/s (S1, S3) "
               "(RFC 8867 §6.3).")


def section(rep: Report, res: Mapping[str, Any], controllers: list[str]) -> tuple[list[Finding], dict[str, pd.DataFrame]]:
    """The report's §6.1 and §6.3 sections; returns their findings and per-run tables."""
    refused = {cc: refusal(cc) for cc in controllers}
    r61, r63 = per_run_61(res["6.1"]), per_run_63(res["6.3"])
    rep.section("§6.1 Media flows with priority",
                "§5.4's three flows on 3.5 Mbit/s from 0, 20, 40 s; S1 at priority 2, the others at 1; max_rate 2.5 Mbit/s. "
                "Only controllers with a priority weight run (NADA: RFC 8698's PRIO); for the others the simulator refuses the key: "
                + "; ".join(f"{cc}: {why}" for cc, why in refused.items() if why) + ".")
    reps = len(set(res["6.1"]["runs"].replication))
    _figure_61(rep, res["6.1"], reps)
    rep.table(quartile_table(r61, ["cc"], ["media1_kbps", "media2_kbps", "media3_kbps", "ratio", "total_util", "qdelay_median_ms"]),
              "§6.1 per controller: each flow's received rate over 60–119 s (kbit/s), S1's over the mean of the other two, "
              "their use of the capacity, median queueing delay", "{:.2f}", name="case_6_1")
    rep.section("§6.3 Multiple bottlenecks",
                "S1 → A → B → C → D → R1, S2 → A → B → R2, S3 → C → D → R3; A→B 2, B→C 8, C→D 1.5 Mbit/s, 300 ms DropTail each; "
                "one-way delay S1 100 ms, S2 and S3 40 ms; a video and a 20 kbit/s audio flow per source, 0–299 s; 300 s, rates over "
                f"{WINDOW_63[0]:g}–{WINDOW_63[1]:g} s.")
    _figure_63(rep, res["6.3"], reps)
    rep.table(quartile_table(r63, ["cc"], ["video1_kbps", "video2_kbps", "video3_kbps", "util_ab", "util_cd", "jain_ab", "jain_cd",
                                   "s1_qdelay_median_ms"]),
              "§6.3 per controller: each video flow's received rate (kbit/s), each bottleneck's use by the media, Jain's index of "
              "the rates over their max-min fair shares at each bottleneck, S1's median queueing delay (ms)", "{:.2f}",
              name="case_6_3")
    return findings_61(r61, controllers, refused) + findings_63(r63, controllers), {"case_6_1": r61, "case_6_3": r63}
