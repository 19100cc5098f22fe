"""The mitigations study's adaptive call: does a mitigation that rescues the CBR audio also
rescue a call that adapts its rate?

The same links, mitigations, seeds and TCP starts as the audio's workloads, with the audio replaced
by an adaptive video call (`ADAPTIVE_CC`, GCC by default: the controller most deployed calls use;
`run(adaptive_cc=...)` picks another of the simulator's registry) in three of them: beside the
28 MB download, beside a web page of 6 IW10 flows, and in the mixed workload (a download, then a
page behind it). The call's metrics are RFC 8868's as `jitterlab.rtc_metrics` computes them, over
the run's overlap window (the frames captured and the packets sent while TCP runs): received media
rate, frame delay (capture to the arrival of a frame's last packet, complete frames) median and
95th percentile, the share of complete frames, freezes (W3C webrtc-stats rule) and the video
packets' OWD median. Its ranking (`RANK_RULE`) is the audio's rule (`ranks.rank`: paired per
replication, Student-t intervals, no chained ties) on a gain of its own — the share of a 60 s call's
frames shown on time (`call_on_time`), the video counterpart of the audio's call-level MOS — so the
audio ranking keeps its meaning (8 audio workloads, the call-level MOS) and the two stand side by
side.

This module knows only the catalogue and the metrics; `presets.mitigations` runs its sweeps and
passes the TCP cost function in (no import back)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from jitterlab import plots
from jitterlab import rtc_metrics as RM
from jitterlab.presets import findings as F
from jitterlab.presets import ranks as R
from jitterlab.presets.findings import Finding
from jitterlab.presets.mitigations_catalog import BASELINE, MITIGATIONS
from jitterlab.sweep import Param, Sweep

#: The controller of the adaptive call (`--cc`): one of the simulator's media controllers (rtc::CONTROLLERS).
ADAPTIVE_CC = "gcc"
CONTROLLERS = ("gcc", "scream", "nada")
#: The call: RFC 8867's media source (150 kbit/s – 1.5 Mbit/s, 30 fps video, RFC 8888 feedback
#: every 100 ms: the simulator's defaults, written out), starting at 1 Mbit/s — a call that is
#: already running when TCP starts at 10–12 s (GCC here does not probe: from the default 150 kbit/s
#: it would still be ramping up at 8 %/s).
VIDEO = {"kind": "video", "name": "video", "from": "server", "to": "mobile", "min_rate": "150kbit", "max_rate": "1.5Mbit",
         "start_rate": "1Mbit", "feedback": "rfc8888", "feedback_interval": "100ms"}
#: audio sweep → (adaptive workload label, the web sweep's (n, iw) point kept)
WORKLOADS = {"bulk": "video + bulk", "web": "video + n=6 IW10", "mixed": "video + mixed"}
WEB_POINT = (6, 10)
TABLES = ("media_packets", "tcp_flows", "runs", "rtc_frames")
#: A frame is on time when all its packets arrived within this long of its capture (ITU-T G.114 §5:
#: one-way delay above 400 ms is unacceptable for general network planning); an incomplete frame
#: (no retransmission or FEC is modelled) is never on time.
DEADLINE_MS = 400.0
#: The call the ranking judges: 60 s of 30 fps video containing the overlap window, its frames
#: outside the window on time (the audio's `mitigations.CALL_S`, for the same reason: a short
#: window alone would make a few late frames a cliff).
CALL_FRAMES = 60 * 30
RANK_RULE = ("per link and replication, a mitigation's on-time gain is the mean over the 3 adaptive workloads of its share of a "
             "60 s call's frames shown on time (complete within 400 ms of capture; the call contains the overlap window, its "
             "other frames on time) minus DropTail's in the same workload and replication (percentage points; same seed and TCP "
             "start); ordered by the mean gain over replications; two are distinct when the 95 % Student-t interval of their "
             "paired per-replication differences excludes 0 (per pair, not corrected); going down the order one shares the "
             "rank of the group above only when indistinct from every member of it (no chaining) — the audio ranking's rule "
             "(ranks.rank) on this gain")


def video(cc: str = ADAPTIVE_CC) -> dict[str, Any]:
    return {**VIDEO, "cc": cc}


def sweeps(audio: Mapping[str, Sweep], cc: str = ADAPTIVE_CC) -> dict[str, Sweep]:
    """The adaptive sweeps from the audio ones (`mitigations.sweeps`): the same scenario, seed,
    replications, random TCP start and mitigation parameter, with traffic[0] (the audio) replaced
    by the video call — traffic[1] stays the TCP traffic the mitigations' keys name; of the web
    sweep the 6-flow IW10 page only."""
    out = {}
    for k in WORKLOADS:
        s = audio[k]
        sc = copy.deepcopy(s.scenario)
        sc["traffic"][0] = video(cc)
        params = list(s.params)
        if k == "web":
            n, iw = WEB_POINT
            params = [Param("n", [n], [{"traffic[1].flows": n}]), Param("iw", [iw], [{"traffic[1].iw": iw}]), params[-1]]
        out[k] = Sweep(s.name.replace("mitigations-", "mitigations-video-"), sc, seed=s.seed, replications=s.replications,
                       params=params, random=s.random, tables=TABLES)
    return out


def _window(runs: pd.DataFrame, horizon_s: float | None) -> pd.DataFrame:
    """Per run the overlap window [tcp_start, tcp_end] in ns; an unfinished TCP ends at the run's end."""
    end = runs.tcp_end_ns.astype("Float64")
    if horizon_s is not None:
        end = end.fillna(horizon_s * 1e9)
    return pd.DataFrame({"run_id": runs.run_id.to_numpy(), "w0": runs.tcp_start_ns.astype(float).to_numpy(),
                         "w1": end.astype(float).to_numpy()})


def call_on_time(late: Any, window_frames: Any) -> np.ndarray:
    """The share (%) of a `CALL_FRAMES`-frame call's frames shown on time when ``late`` of the
    window's ``window_frames`` were not (the call is at least the window). Monotone: fewer late
    frames never give a lower share."""
    late = np.asarray(late, dtype=float)
    return 100.0 * (1.0 - late / np.maximum(float(CALL_FRAMES), np.asarray(window_frames, dtype=float)))


def call_metrics(res: Mapping[str, Any], horizon_s: float | None) -> pd.DataFrame:
    """Per run, the adaptive call over its overlap window: media_kbps (received IP bits of the
    packets sent in the window over its length), owd_p50_ms (video packets sent in the window),
    frame_delay_p50_ms / frame_delay_p95_ms (frames captured in the window and complete),
    frames_complete (their share), late_frames (not complete within `DEADLINE_MS`: incomplete or
    late), call_on_time_pct (`call_on_time`), freezes and freeze_s (W3C rule, frames of the window)."""
    m, runs, fr = res["media_packets"], res["runs"], res["rtc_frames"]
    win = _window(runs, horizon_s)
    f = fr.merge(win, on="run_id")
    f = f[(f.capture_ns >= f.w0) & (f.capture_ns <= f.w1)].drop(columns=["w0", "w1"])
    d = RM.frame_delays(f, m)
    d["fd_ms"] = d.frame_delay_ns.astype("Float64").astype(float) / 1e6
    fz = RM.freezes_from_delays(d).groupby("run_id")[["freeze_count", "freeze_s"]].sum()
    g = d.groupby("run_id")
    d["on_time"] = d.fd_ms <= DEADLINE_MS  # NaN (incomplete) compares False
    frames = pd.DataFrame({"frames": g.size(), "complete": g.fd_ms.count(), "on_time": d.groupby("run_id").on_time.sum(),
                           "frame_delay_p50_ms": g.fd_ms.median(), "frame_delay_p95_ms": g.fd_ms.quantile(0.95)})
    s = m.merge(win, on="run_id")
    s = s[(s.send_ns >= s.w0) & (s.send_ns <= s.w1) & s.recv_ns.notna()]
    s = s.assign(owd_ms=(s.recv_ns.astype("int64") - s.send_ns.astype("int64")) / 1e6, bits=s["size"].astype(float) * 8)
    pk = s.groupby("run_id").agg(bits=("bits", "sum"), owd_p50_ms=("owd_ms", "median"))
    out = win.set_index("run_id").join(pk).join(frames).join(fz)
    dur = (out.w1 - out.w0) / 1e9
    with np.errstate(invalid="ignore", divide="ignore"):
        out["media_kbps"] = np.where(dur > 0, out.bits.fillna(0.0) / dur / 1e3, np.nan)
        out["frames_complete"] = out.complete / out.frames
    out["frames"] = out.frames.fillna(0).astype(int)
    out["late_frames"] = out.frames - out.on_time.fillna(0).astype(int)
    out["call_on_time_pct"] = call_on_time(out.late_frames, out.frames)
    out["freezes"] = out.freeze_count.fillna(0).astype(int)
    out["freeze_s"] = out.freeze_s.fillna(0.0)
    cols = ["media_kbps", "owd_p50_ms", "frame_delay_p50_ms", "frame_delay_p95_ms", "frames", "frames_complete", "late_frames",
            "call_on_time_pct", "freezes", "freeze_s"]
    return out[cols].reset_index()


def per_run(res: Mapping[str, Mapping[str, Any]], link: str, horizon_s: Mapping[str, float],
            costs: Callable[[pd.DataFrame, float | None], pd.DataFrame]) -> pd.DataFrame:
    """One row per run of a link's adaptive sweeps: link, workload, mitigation, replication, the
    call's metrics (`call_metrics`) and what TCP got (``costs``: `mitigations.tcp_costs`; in the
    mixed workload the page's completion and the download's goodput)."""
    out = []
    for k, r in res.items():
        runs, t = r["runs"], r["tcp_flows"]
        hz = horizon_s.get(k)
        base = runs[["run_id", "mitigation", "replication"]].copy()
        base["workload"] = WORKLOADS[k]
        base = base.merge(call_metrics(r, hz), on="run_id", how="left")
        if k == "mixed":
            page = costs(t[t.role == "web"], hz)[["run_id", "completion_s", "unfinished"]]
            tc = page.merge(costs(t[t.role == "bulk"], hz)[["run_id", "goodput_bps", "unfinished"]], on="run_id", how="outer",
                            suffixes=("", "_bulk"))
            tc["unfinished"] = tc.pop("unfinished").astype(bool) | tc.pop("unfinished_bulk").astype(bool)
        else:
            tc = costs(t, hz)
        out.append(base.merge(tc, on="run_id", how="left"))
    df = pd.concat(out, ignore_index=True)
    df.insert(0, "link", link)
    return df


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Adds per run the difference to DropTail's run of the same link, workload and replication:
    on_time_gain (this run's call_on_time_pct minus DropTail's, points: the ranking's), rate_change_pct
    (media rate against DropTail's) and goodput_change_pct."""
    b = df[df.mitigation == BASELINE][["link", "workload", "replication", "call_on_time_pct", "media_kbps", "goodput_bps"]]
    b = b.rename(columns={"call_on_time_pct": "_ot0", "media_kbps": "_r0", "goodput_bps": "_g0"})
    x = df.merge(b, on=["link", "workload", "replication"], how="left")
    x["on_time_gain"] = x.call_on_time_pct - x._ot0
    with np.errstate(invalid="ignore", divide="ignore"):
        x["rate_change_pct"] = (x.media_kbps / x._r0 - 1.0) * 100.0
        x["goodput_change_pct"] = (x.goodput_bps / x._g0 - 1.0) * 100.0
    return x.drop(columns=["_ot0", "_r0", "_g0"])


def gains_per_replication(x: pd.DataFrame, mitigation: str, col: str = "on_time_gain") -> pd.Series:
    """Per replication (the index) the mean over the adaptive workloads of the paired gain."""
    return x[x.mitigation == mitigation].groupby("replication")[col].mean().astype(float)


def summary(x: pd.DataFrame) -> pd.DataFrame:
    """Per (link, workload, mitigation): medians over replications of the call's metrics and of
    its paired changes, and the freezes summed over replications."""
    g = x.groupby(["link", "workload", "mitigation"], sort=False)
    return g.agg(replications=("run_id", "size"), media_kbps=("media_kbps", "median"), rate_change_pct=("rate_change_pct", "median"),
                 owd_p50_ms=("owd_p50_ms", "median"), frame_delay_p50_ms=("frame_delay_p50_ms", "median"),
                 frame_delay_p95_ms=("frame_delay_p95_ms", "median"), late_frames=("late_frames", "median"),
                 call_on_time_pct=("call_on_time_pct", "median"), on_time_gain=("on_time_gain", "median"),
                 frames_complete=("frames_complete", "median"), freezes=("freezes", "sum"), freeze_s=("freeze_s", "median"),
                 goodput_Mbps=("goodput_bps", lambda v: float(np.nanmedian(v)) / 1e6 if v.notna().any() else np.nan)).reset_index()


def ranking(x: pd.DataFrame, audio_rank: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per link the ranked mitigations by `RANK_RULE`: rank, group, mean on-time gain with its
    paired interval against DropTail, the medians over the adaptive workloads of the call's
    metrics, and (``audio_rank``: `mitigations.ranking`'s table) the audio's rank beside it. And
    every ordered pair's comparison (`ranks.pairwise`)."""
    rows, pairs = [], []
    summ = summary(x)
    for link, lx in x.groupby("link", sort=False):
        ok = [m.name for m in MITIGATIONS if m.name in set(lx.mitigation)]
        gains = {k: gains_per_replication(lx, k) for k in ok}
        rk = R.rank(gains, baseline=BASELINE).set_index("mitigation")
        pairs.append(R.pairwise(gains).assign(link=link))
        for name in ok:
            s, r = summ[(summ.link == link) & (summ.mitigation == name)], rk.loc[name]
            row = {"link": link, "mitigation": name, "rank": r["rank"], "group": r["group"], "on_time_gain": r["mean"],
                   "on_time_gain_lo": r["vs_lo"], "on_time_gain_hi": r["vs_hi"]}
            for c in ("call_on_time_pct", "media_kbps", "rate_change_pct", "frame_delay_p50_ms", "frame_delay_p95_ms", "frames_complete",
                      "owd_p50_ms"):
                row[c] = float(s[c].median())
            row["freezes"] = int(s.freezes.sum())
            if audio_rank is not None:
                a = audio_rank[(audio_rank.link == link) & (audio_rank.mitigation == name)]
                row["audio_rank"] = a["rank"].iloc[0] if len(a) else pd.NA
            rows.append(row)
    df = pd.DataFrame(rows)
    df["rank"] = df["rank"].astype("Int64")
    if "audio_rank" in df:
        df["audio_rank"] = df["audio_rank"].astype("Int64")
    order = {l: i for i, l in enumerate(dict.fromkeys(df.link))}
    df = df.sort_values(["link", "rank"], key=lambda s: s if s.name != "link" else s.map(order), kind="stable").reset_index(drop=True)
    pw = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame()
    return df, pw


FRAME_BOUND_MS = DEADLINE_MS


def findings(x: pd.DataFrame, rk: pd.DataFrame, link: str, audio_rank: pd.DataFrame | None = None) -> list[Finding]:
    """Statements about the adaptive call, each by a stated rule."""
    lx, fs = x[x.link == link], []
    have = set(lx.mitigation)

    def vals(mit: str, col: str, wl: str) -> np.ndarray:
        return lx[(lx.mitigation == mit) & (lx.workload == wl)][col].to_numpy(float)

    aqms = [m.name for m in MITIGATIONS if m.where == "network" and m.name in have]
    if aqms:
        fs.append(F.ordering("Every AQM keeps the adaptive call's 95th-percentile frame delay beside the bulk download below DropTail's",
                             "RFC 7567 §2 (AQM controls queueing delay); the audio's finding, for the adaptive call",
                             [(m, vals(m, "frame_delay_p95_ms", WORKLOADS["bulk"]), vals(BASELINE, "frame_delay_p95_ms", WORKLOADS["bulk"]))
                              for m in aqms], expect="below", unit=" ms"))
    if "FQ-CoDel" in have:
        fs.append(F.ordering("Flow queueing gives the adaptive call a higher media rate beside the bulk download than DropTail",
                             "RFC 8290 §1 (flow isolation); RFC 8867 §5.6's expectation that the media avoids starvation beside TCP",
                             [("FQ-CoDel", vals("FQ-CoDel", "media_kbps", WORKLOADS["bulk"]), vals(BASELINE, "media_kbps", WORKLOADS["bulk"]))],
                             expect="above", unit=" kbit/s"))
    d = lx[lx.mitigation == BASELINE].groupby("replication").frame_delay_p95_ms.max().to_numpy(float)
    sp = F.spread(d)
    fs.append(Finding(f"DropTail leaves the adaptive call's frames too late for a conversation: the worst workload's 95th-percentile "
                      f"frame delay above {FRAME_BOUND_MS:.0f} ms", "ITU-T G.114 §5 (400 ms); the PAM 2013 question for an adaptive call",
                      sp.show(unit=" ms"), F.side(sp, FRAME_BOUND_MS, below=False), F.rule_side(f"{FRAME_BOUND_MS:.0f} ms", False)
                      + " (per replication the largest of the 3 workloads' 95th percentiles)"))
    if audio_rank is not None:
        fs.append(_same_rescue(rk, audio_rank, link))
    return fs


#: A rescued call (ours): at least 95 % of its 60 s call's frames on time (median over the adaptive
#: workloads of the medians over replications), i.e. at most one frame in twenty late or lost.
RESCUED_PCT = 95.0


def _same_rescue(rk: pd.DataFrame, audio_rank: pd.DataFrame, link: str) -> Finding:
    """Whether the audio's rank-1 mitigations also rescue the adaptive call (`RESCUED_PCT`)."""
    a = audio_rank[(audio_rank.link == link) & audio_rank["rank"].notna()]
    v = rk[rk.link == link].set_index("mitigation")
    top = [m for m in a[a["rank"] == 1].mitigation if m in v.index]
    ok = [m for m in top if float(v.loc[m, "call_on_time_pct"]) >= RESCUED_PCT]
    verdict = "n/a" if not top else ("agrees" if len(ok) == len(top) else ("disagrees" if not ok else "partly"))
    shown = "; ".join(f"{m}: {float(v.loc[m, 'call_on_time_pct']):.1f} % on time (on-time rank {v.loc[m, 'rank']})" for m in top)
    base = f"; DropTail: {float(v.loc[BASELINE, 'call_on_time_pct']):.1f} %" if BASELINE in v.index else ""
    return Finding("The mitigations that rescue the CBR audio (audio rank 1) also rescue the adaptive call (at least "
                   f"{RESCUED_PCT:.0f} % of a 60 s call's frames on time)", "this study's question (issue 27)",
                   (shown or "no audio rank 1") + base, verdict,
                   f"agrees if every audio rank-1 mitigation's call_on_time_pct (median over the adaptive workloads) is at least "
                   f"{RESCUED_PCT:.0f} % (ours: at most one frame in twenty late or lost); disagrees if none is; partly otherwise",
                   role="held-out")


def figure(rep: Any, rk: pd.DataFrame, audio_rank: pd.DataFrame, reps: int) -> None:
    """Audio against adaptive call: per link, each mitigation's audio MOS gain (x, its paired 95 %
    interval) against its adaptive on-time gain (y, likewise); up and right = rescues both."""
    links = list(dict.fromkeys(rk.link))
    fig, axes = plots.new(width=5.2 * len(links), height=4.4, ncols=len(links), squeeze=False, sharey=True)
    st = plots.styles()
    names = [m.name for m in MITIGATIONS if m.name != BASELINE and m.name in set(rk.mitigation)]
    style = {n: next(st) for n in names}
    for j, link in enumerate(links):
        ax = axes[0][j]
        v = rk[rk.link == link].set_index("mitigation")
        a = audio_rank[audio_rank.link == link].set_index("mitigation")
        for n in names:
            if n not in v.index or n not in a.index or pd.isna(a.loc[n, "rank"]):
                continue
            x, y = float(a.loc[n, "mos_gain"]), float(v.loc[n, "on_time_gain"])
            xe = [[x - float(a.loc[n, "mos_gain_lo"])], [float(a.loc[n, "mos_gain_hi"]) - x]]
            ye = [[y - float(v.loc[n, "on_time_gain_lo"])], [float(v.loc[n, "on_time_gain_hi"]) - y]]
            ok = all(np.isfinite(e[0][0]) for e in (xe, ye))
            ax.errorbar([x], [y], xerr=xe if ok else None, yerr=ye if ok else None, fmt=style[n]["marker"], color=style[n]["color"],
                        capsize=2, markersize=6, label=n if j == 0 else None)
        ax.axhline(0, color="#999", linewidth=0.8); ax.axvline(0, color="#999", linewidth=0.8)
        ax.set_title(f"{link} link"); ax.set_xlabel("audio: call MOS gain over DropTail"); ax.grid(alpha=.3)
    axes[0][0].set_ylabel("adaptive call: frames on time, gain (points)")
    fig.legend(loc="lower center", ncol=min(5, max(1, len(names))), fontsize=8, frameon=False, bbox_to_anchor=(0.5, 1.0))
    plots.caption(fig, f"jitterlab · scenario mitigations · {reps} replications · mean gain over workloads with its paired 95 % "
                  "interval against DropTail; x: the audio ranking's call-level MOS (8 workloads), y: the adaptive call's share of a "
                  "60 s call's frames on time (3 workloads); up and right = rescues both")
    rep.figure(fig, "audio_vs_adaptive", "Does a mitigation that rescues the CBR audio also rescue the adaptive call? Each "
               "mitigation's audio gain against its adaptive-call gain, per link.")
