"""`reproduce rmcat`'s RFC 8867 §5.9 (media flows with priority) and §5.11 (multiple bottlenecks)
on the simulator, each with findings by a stated rule (docs/media.md, "RFC 8867 parameters used").

§5.9: §5.4's three flows (3.5 Mbit/s, starts 0 / 20 / 40 s, 120 s, 300 ms DropTail) with MEDIA-1 at
priority 2 and MEDIA-2, MEDIA-3 at priority 1; the RFC expects MEDIA-1's steady rate to be about
twice the others'. A controller takes the weight through `Controller::set_priority` (the scenario
key `priority`): NADA has one (RFC 8698 §4.3 eq. 5's PRIO); GCC and SCReAM have none, the simulator
refuses the key for them, and their rows say so with the simulator's own error line. max_rate is
2.5 Mbit/s here (ours): at 1.5 Mbit/s MEDIA-1's doubled share (~1.7 Mbit/s) would be cut off.

§5.11 (ours, on the RFC's defaults): sender — A — B — C — receiver, two bottlenecks in series, A→B
and B→C, 2 Mbit/s each with a 300 ms DropTail (or FQ-CoDel), 25 ms each (50 ms one way); a greedy
CUBIC flow crosses each bottleneck alone (xs1 → A → B → xr1 and xs2 → B → C → xr2); the media
crosses both; 120 s. The `bottlenecks` parameter runs the path with only the first congested
(`one`: the second TCP flow disabled) or both (`two`). With one greedy flow beside it on each
2 Mbit/s link, the media's max-min fair share is 1 Mbit/s either way, so a controller that adapts to
the tightest bottleneck keeps its rate when the second one congests too.
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
from jitterlab.presets.rmcat_common import _frames, _links, _video, queue_300ms
from jitterlab.report import Report
from jitterlab.sweep import Param, Sweep

# ----------------------------------------------------------------------------- §5.9

CAP_59 = 3.5e6
PRIO_59 = [2.0, 1.0, 1.0]
STARTS_59 = (0, 20, 40)
MAX_RATE_59 = "2.5Mbit"
WINDOW_59 = (60.0, 119.0)
#: "approximately twice" (RFC 8867 §5.9) read as 2 ± 20 % (ours)
RATIO_59 = (1.6, 2.4)

# ----------------------------------------------------------------------------- §5.11

CAP_511 = 2.0e6
HOP_DELAY_511 = "25ms"
WINDOW_511 = (20.0, 119.0)
#: the media's max-min fair share on either bottleneck: half of 2 Mbit/s beside one greedy flow
FAIR_511 = CAP_511 / 2
#: ours: with both bottlenecks congested the media keeps at least this share of its rate with one
KEEP_511 = 0.8
#: ours: a media rate with one bottleneck at most 1.5 × the 150 kbit/s min_rate is the controller's
#: floor, where the ratio says nothing (the verdict is then inconclusive)
FLOOR_511 = 1.5 * 150e3
FQ_CODEL = {"kind": "fq_codel"}


def scenario_59(cc: str = "nada", duration_s: int = 120, starts: tuple[int, ...] = STARTS_59) -> dict[str, Any]:
    """§5.4's path and flows, each flow with its priority weight and max_rate 2.5 Mbit/s."""
    traffic = []
    for i, (s, w) in enumerate(zip(starts, PRIO_59)):
        v = _video(f"video{i}", f"{s}s", f"{duration_s - 1}s")
        traffic.append({**v, "cc": cc, "max_rate": MAX_RATE_59, "priority": w})
    return {"name": "rmcat-5.9", "duration": f"{duration_s}s", "links": _links({"rate": "3.5Mbit"}, queue_300ms(CAP_59)),
            "traffic": traffic}


def refusal(cc: str) -> str | None:
    """The simulator's error line for §5.9 with controller `cc` (a 2 s run), or None if it runs."""
    import jitterlab

    sc = scenario_59(cc, duration_s=2, starts=(0, 0, 0))
    try:
        jitterlab.simulate(sc, seed=1)
    except jitterlab.ScenarioError as e:
        return str(e)
    return None


def scenario_511(queue: Mapping[str, Any] | None = None, duration_s: int = 120) -> dict[str, Any]:
    q = dict(queue) if queue is not None else queue_300ms(CAP_511)
    rev = {"rate": "10Mbit", "queue": {"kind": "droptail", "limit": "1000pkt"}}
    edge = {"rate": "100Mbit", "delay": "0ms"}
    links = {"access": {"from": "sender", "to": "A", **edge},
             "bn1": {"from": "A", "to": "B", "rate": "2Mbit", "delay": HOP_DELAY_511, "queue": dict(q), "reverse": rev},
             "bn2": {"from": "B", "to": "C", "rate": "2Mbit", "delay": HOP_DELAY_511, "queue": dict(q), "reverse": dict(rev)},
             "exit": {"from": "C", "to": "receiver", **edge},
             "x1in": {"from": "xs1", "to": "A", **edge}, "x1out": {"from": "B", "to": "xr1", **edge},
             "x2in": {"from": "xs2", "to": "B", **edge}, "x2out": {"from": "C", "to": "xr2", **edge}}
    greedy = {"kind": "bulk", "cc": "cubic", "size": "1GB", "rcvbuf": "1MB"}  # the window never limits it
    traffic = [_video("video", "0s", f"{duration_s - 1}s"),
               {**greedy, "name": "tcp1", "from": "xs1", "to": "xr1"},
               {**greedy, "name": "tcp2", "from": "xs2", "to": "xr2"}]
    return {"name": "rmcat-5.11", "duration": f"{duration_s}s", "links": links, "traffic": traffic}


def bottlenecks_param() -> Param:
    return Param("bottlenecks", ["one", "two"], [{"traffic[2].enabled": False}, {"traffic[2].enabled": True}])


def queue_param() -> Param:
    sets = [{f"links.{b}.queue": q for b in ("bn1", "bn2")} for q in (queue_300ms(CAP_511), FQ_CODEL)]
    return Param("queue", ["droptail", "fq_codel"], sets)


def sweeps(reps: int, cc_param: Any, seed: int, tables: tuple[str, ...]) -> dict[str, Sweep]:
    accept = [cc for cc in ("gcc", "scream", "nada") if refusal(cc) is None]
    cc59 = Param("cc", accept, [{f"traffic[{i}].cc": c for i in range(len(PRIO_59))} for c in accept])
    return {"5.9": Sweep("rmcat-5.9", scenario_59(), seed=seed, replications=reps, params=[cc59], tables=tables),
            "5.11": Sweep("rmcat-5.11", scenario_511(), seed=seed, replications=reps,
                          params=[cc_param(1), bottlenecks_param(), queue_param()], tables=tables + ("tcp_flows",))}


def per_run_59(res: Mapping[str, Any], window: tuple[float, float] = WINDOW_59) -> pd.DataFrame:
    """Per run: each flow's received rate over the window (kbit/s), MEDIA-1's over the mean of the
    other two, the three's use of the capacity, median queueing delay."""
    m, runs = res["media_packets"], res["runs"]
    a, b = window
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        rates = [R.utilisation(mr, [(0.0, CAP_59)], a, b, flows=[f]) * CAP_59 for f in sorted(mr.flow_id.unique())]
        rows.append({"run_id": run.run_id, "cc": run.cc, **{f"media{i + 1}_kbps": r / 1e3 for i, r in enumerate(rates)},
                     "ratio": rates[0] / max(float(np.mean(rates[1:])), 1e-9), "total_util": sum(rates) / CAP_59,
                     "qdelay_median_ms": R.queueing_delay(mr).qdelay_ns.median() / 1e6})
    return pd.DataFrame(rows)


def per_run_511(res: Mapping[str, Any], window: tuple[float, float] = WINDOW_511) -> pd.DataFrame:
    """Per run: the media's received rate over the window (kbit/s), its median and 95th-percentile
    queueing delay (both bottlenecks together), 95th-percentile frame delay."""
    m, runs = res["media_packets"], res["runs"]
    a, b = window
    rows = []
    for _, run in runs.iterrows():
        mr = m[m.run_id == run.run_id]
        q = R.queueing_delay(mr).qdelay_ns / 1e6
        rows.append({"run_id": run.run_id, "cc": run.cc, "bottlenecks": run.bottlenecks, "queue": run.queue,
                     "replication": run.replication, "media_kbps": R.utilisation(mr, [(0.0, CAP_511)], a, b) * CAP_511 / 1e3,
                     "qdelay_median_ms": float(q.median()), "qdelay_p95_ms": float(q.quantile(0.95)),
                     "frame_delay_p95_ms": _frames(res, run.run_id, mr)["frame_delay_p95_ms"]})
    return pd.DataFrame(rows)


def kept(r: pd.DataFrame, cc: str, queue: str) -> np.ndarray:
    """Per replication (the runs of one seed differ only in the second TCP flow), the media's rate
    with both bottlenecks congested over its rate with the first alone."""
    d = r[(r.cc == cc) & (r.queue == queue)].pivot_table(index="replication", columns="bottlenecks", values="media_kbps")
    return (d["two"] / d["one"]).to_numpy(float)


def findings_59(r: pd.DataFrame, controllers: list[str], refused: Mapping[str, str | None]) -> list[Finding]:
    lo, hi = RATIO_59
    src = "RFC 8867 §5.9 (media flows with priority: MEDIA-1 at priority 2 about twice MEDIA-2 and MEDIA-3 at 1); band ours"
    fs = []
    for cc in controllers:
        text = f"§5.9 {cc}: MEDIA-1 (priority 2) settles at about twice the rate of MEDIA-2 and MEDIA-3 (priority 1), 60–119 s"
        why = refused.get(cc)
        if why is not None:
            fs.append(Finding(text, src, f"not run: {why}", "n/a", "the simulator refuses the priority key for this controller"))
            continue
        a = r[r.cc == cc]
        fs.append(Finding(text, src, F.spread(a.ratio).show(fmt="{:.2f}"), F.in_range(a.ratio, lo, hi),
                          F.rule_range(f"{lo}", f"{hi}") + " (MEDIA-1's received rate over the mean of the other two)"))
    return fs


def findings_511(r: pd.DataFrame, controllers: list[str]) -> list[Finding]:
    fs = []
    for queue in ("droptail", "fq_codel"):
        for cc in controllers:
            k = kept(r, cc, queue)
            one = r[(r.cc == cc) & (r.queue == queue) & (r.bottlenecks == "one")].media_kbps
            floor = bool(np.median(one) <= FLOOR_511 / 1e3)
            fs.append(Finding(f"§5.11 {cc} on {queue}: a second congested bottleneck in series (same max-min fair share, "
                              f"{FAIR_511 / 1e6:g} Mbit/s) leaves the media at least {KEEP_511:.0%} of its rate with one (20–119 s)",
                              "RFC 8867 §5.11 (multiple bottlenecks: the media adapts to the tightest bottleneck); path and bounds ours",
                              f"two / one {F.spread(k).show(fmt='{:.2f}')}; rate with one {F.spread(one).show(unit=' kbit/s')}",
                              "inconclusive" if floor else F.side(k, KEEP_511, below=False),
                              F.rule_side(f"{KEEP_511}", False) + f" (per replication, same seed); inconclusive when the median rate "
                              f"with one is at most {FLOOR_511 / 1e3:.0f} kbit/s (1.5 × min_rate: the controller's floor)"))
    return fs


def _table(df: pd.DataFrame, keys: list[str], cols: list[str]) -> pd.DataFrame:
    g = df.groupby(keys, sort=False)
    out = g[cols].median().add_suffix("_median")
    for c in cols:
        out[f"{c}_p25"] = g[c].quantile(0.25)
        out[f"{c}_p75"] = g[c].quantile(0.75)
    return out.reset_index()


def _figure_59(rep: Report, res: Mapping[str, Any], reps: int) -> None:
    m, runs = res["media_packets"], res["runs"]
    ccs = list(dict.fromkeys(runs.cc))
    fig, axes = plots.new(width=10, height=max(3.4, 2.6 * len(ccs)), nrows=len(ccs), sharex=True, sharey=True, squeeze=False)
    for ax, cc in zip(axes[:, 0], ccs):
        rid = int(runs[runs.cc == cc].run_id.min())
        rate = R.media_rate(m[m.run_id == rid], bin_s=0.5, by="send")
        for i, (_, g) in enumerate(rate.groupby("flow_id")):
            ax.plot(g.t_s, g.rate_bps / 1e6, drawstyle="steps-post", lw=1, label=f"MEDIA-{i + 1} (priority {PRIO_59[i]:g})")
        ax.axhline(CAP_59 / 1e6, color="black", ls="--", lw=1.5, label="capacity")
        ax.set_title(cc, fontsize=9); ax.set_ylabel("Mbit/s"); ax.grid(alpha=.3); ax.legend(fontsize=7, loc="upper left")
    axes[-1, 0].set_xlabel("time (s)")
    plots.caption(fig, caption("rmcat-5.9", reps, "first replication of each controller with a priority weight; 0.5 s bins, IP bytes"))
    rep.figure(fig, "rmcat-5_9", "Three flows with priorities 2 / 1 / 1 on 3.5 Mbit/s (RFC 8867 §5.9).")


def _figure_511(rep: Report, tab: pd.DataFrame, controllers: list[str], reps: int) -> None:
    fig, ax = plots.new(width=8, height=4)
    x = np.arange(len(controllers))
    groups = [(q, b) for q in ("droptail", "fq_codel") for b in ("one", "two")]
    for j, (q, b) in enumerate(groups):
        t = tab[(tab.queue == q) & (tab.bottlenecks == b)].set_index("cc").loc[controllers]
        med = t.media_kbps_median.to_numpy()
        err = [med - t.media_kbps_p25.to_numpy(), t.media_kbps_p75.to_numpy() - med]
        ax.bar(x + (j - 1.5) * 0.2, med, 0.2, yerr=err, capsize=3, label=f"{q}, {b} congested",
               color=["#333333", "#777777", "#bbbbbb", "#eeeeee"][j], edgecolor="black")
    ax.axhline(FAIR_511 / 1e3, color="black", ls=":", lw=1)
    ax.set_xticks(x, controllers); ax.set_ylabel("media rate (kbit/s)"); ax.grid(alpha=.3, axis="y")
    plots.legend_above(ax, ncol=2)
    plots.caption(fig, caption("rmcat-5.11", reps, "bars median, whiskers 25–75th percentile over replications; dotted: the "
                               "max-min fair share, 1 Mbit/s"))
    rep.figure(fig, "rmcat_5_11_rate", "The media's rate over two bottlenecks in series, one or both congested (RFC 8867 §5.11).")


def section(rep: Report, res: Mapping[str, Any], controllers: list[str]) -> tuple[list[Finding], dict[str, pd.DataFrame]]:
    """The report's §5.9 and §5.11 sections; returns their findings and per-run tables."""
    refused = {cc: refusal(cc) for cc in controllers}
    r59, r511 = per_run_59(res["5.9"]), per_run_511(res["5.11"])
    rep.section("§5.9 Media flows with priority",
                "§5.4's three flows on 3.5 Mbit/s from 0, 20, 40 s; MEDIA-1 at priority 2, the others at 1; max_rate 2.5 Mbit/s. "
                "Only controllers with a priority weight run (NADA: RFC 8698's PRIO); for the others the simulator refuses the key: "
                + "; ".join(f"{cc}: {why}" for cc, why in refused.items() if why) + ".")
    reps = len(set(res["5.9"]["runs"].replication))
    _figure_59(rep, res["5.9"], reps)
    rep.table(_table(r59, ["cc"], ["media1_kbps", "media2_kbps", "media3_kbps", "ratio", "total_util", "qdelay_median_ms"]),
              "§5.9 per controller: each flow's received rate over 60–119 s (kbit/s), MEDIA-1's over the mean of the other two, "
              "their use of the capacity, median queueing delay", "{:.2f}", name="case_5_9")
    rep.section("§5.11 Multiple bottlenecks",
                "sender — A — B — C — receiver; A→B and B→C 2 Mbit/s, 25 ms each, 300 ms DropTail or FQ-CoDel; a greedy CUBIC "
                "flow on each bottleneck alone; the media crosses both; only the first congested (one) or both (two); 120 s, "
                "rates over 20–119 s.")
    tab = _table(r511, ["queue", "bottlenecks", "cc"], ["media_kbps", "qdelay_median_ms", "qdelay_p95_ms", "frame_delay_p95_ms"])
    _figure_511(rep, tab, controllers, reps)
    rep.table(tab,
              "§5.11 per queue, congested bottlenecks and controller: the media's received rate (kbit/s), its queueing delay "
              "median / 95th percentile over the whole path, frame delay p95 (ms)", "{:.2f}", name="case_5_11")
    return findings_59(r59, controllers, refused) + findings_511(r511, controllers), {"case_5_9": r59, "case_5_11": r511}
