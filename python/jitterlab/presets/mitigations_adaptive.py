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
replication, Student-t intervals, no chained ties) on a gain of its own, so the audio ranking keeps
its meaning (8 audio workloads, the call-level MOS) and the two stand side by side.

This module knows only the catalogue and the metrics; `presets.mitigations` runs its sweeps and
passes the TCP cost function in (no import back)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from jitterlab import rtc_metrics as RM
from jitterlab.presets import findings as F
from jitterlab.presets import ranks as R
from jitterlab.presets.findings import Finding
from jitterlab.presets.mitigations_catalog import BASELINE, MITIGATIONS
from jitterlab.sweep import Param, Sweep

#: The controller of the adaptive call (one of `_native.sim_registry()`'s media controllers).
ADAPTIVE_CC = "gcc"
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
RANK_RULE = ("per link and replication, a mitigation's frame-delay gain is the mean over the 3 adaptive workloads of DropTail's "
             "95th-percentile frame delay minus its own (ms, complete frames captured in the overlap window; same seed and TCP "
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


def call_metrics(res: Mapping[str, Any], horizon_s: float | None) -> pd.DataFrame:
    """Per run, the adaptive call over its overlap window: media_kbps (received IP bits of the
    packets sent in the window over its length), owd_p50_ms (video packets sent in the window),
    frame_delay_p50_ms / frame_delay_p95_ms (frames captured in the window and complete),
    frames_complete (their share), freezes and freeze_s (W3C rule, frames of the window)."""
    m, runs, fr = res["media_packets"], res["runs"], res["rtc_frames"]
    win = _window(runs, horizon_s).set_index("run_id")
    rows = []
    for rid, w in win.iterrows():
        mr = m[m.run_id == rid]
        sent = mr[(mr.send_ns >= w.w0) & (mr.send_ns <= w.w1)]
        got = sent[sent.recv_ns.notna()]
        f = fr[(fr.run_id == rid) & (fr.capture_ns >= w.w0) & (fr.capture_ns <= w.w1)]
        d = RM.frame_delays(f, mr)
        fd = d.frame_delay_ns.dropna().astype(float) / 1e6
        fz = RM.freezes(f, mr)
        dur = (w.w1 - w.w0) / 1e9
        owd = (got.recv_ns.astype("int64") - got.send_ns.astype("int64")) / 1e6
        rows.append({"run_id": rid, "media_kbps": float(got["size"].sum()) * 8 / dur / 1e3 if dur > 0 else np.nan,
                     "owd_p50_ms": float(owd.median()) if len(owd) else np.nan,
                     "frame_delay_p50_ms": float(fd.median()) if len(fd) else np.nan,
                     "frame_delay_p95_ms": float(fd.quantile(0.95)) if len(fd) else np.nan,
                     "frames": len(d), "frames_complete": len(fd) / len(d) if len(d) else np.nan,
                     "freezes": int(fz.freeze_count.sum()), "freeze_s": float(fz.freeze_s.sum())})
    return pd.DataFrame(rows)


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
            page = costs(t[t.role == "web"], hz)[["run_id", "completion_s"]]
            tc = page.merge(costs(t[t.role == "bulk"], hz)[["run_id", "goodput_bps", "unfinished"]], on="run_id", how="outer")
        else:
            tc = costs(t, hz)
        out.append(base.merge(tc, on="run_id", how="left"))
    df = pd.concat(out, ignore_index=True)
    df.insert(0, "link", link)
    return df


def paired(df: pd.DataFrame) -> pd.DataFrame:
    """Adds per run the difference to DropTail's run of the same link, workload and replication:
    fd_gain_ms (DropTail's frame_delay_p95_ms minus this run's: the ranking's), rate_change_pct
    (media rate against DropTail's) and goodput_change_pct."""
    b = df[df.mitigation == BASELINE][["link", "workload", "replication", "frame_delay_p95_ms", "media_kbps", "goodput_bps"]]
    b = b.rename(columns={"frame_delay_p95_ms": "_fd0", "media_kbps": "_r0", "goodput_bps": "_g0"})
    x = df.merge(b, on=["link", "workload", "replication"], how="left")
    x["fd_gain_ms"] = x._fd0 - x.frame_delay_p95_ms
    with np.errstate(invalid="ignore", divide="ignore"):
        x["rate_change_pct"] = (x.media_kbps / x._r0 - 1.0) * 100.0
        x["goodput_change_pct"] = (x.goodput_bps / x._g0 - 1.0) * 100.0
    return x.drop(columns=["_fd0", "_r0", "_g0"])


def gains_per_replication(x: pd.DataFrame, mitigation: str, col: str = "fd_gain_ms") -> pd.Series:
    """Per replication (the index) the mean over the adaptive workloads of the paired gain."""
    return x[x.mitigation == mitigation].groupby("replication")[col].mean().astype(float)


def summary(x: pd.DataFrame) -> pd.DataFrame:
    """Per (link, workload, mitigation): medians over replications of the call's metrics and of
    its paired changes, and the freezes summed over replications."""
    g = x.groupby(["link", "workload", "mitigation"], sort=False)
    return g.agg(replications=("run_id", "size"), media_kbps=("media_kbps", "median"), rate_change_pct=("rate_change_pct", "median"),
                 owd_p50_ms=("owd_p50_ms", "median"), frame_delay_p50_ms=("frame_delay_p50_ms", "median"),
                 frame_delay_p95_ms=("frame_delay_p95_ms", "median"), fd_gain_ms=("fd_gain_ms", "median"),
                 frames_complete=("frames_complete", "median"), freezes=("freezes", "sum"), freeze_s=("freeze_s", "median"),
                 goodput_Mbps=("goodput_bps", lambda v: float(np.nanmedian(v)) / 1e6 if v.notna().any() else np.nan)).reset_index()


def ranking(x: pd.DataFrame, audio_rank: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per link the ranked mitigations by `RANK_RULE`: rank, group, mean frame-delay gain with its
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
            row = {"link": link, "mitigation": name, "rank": r["rank"], "group": r["group"], "fd_gain_ms": r["mean"],
                   "fd_gain_lo": r["vs_lo"], "fd_gain_hi": r["vs_hi"]}
            for c in ("media_kbps", "rate_change_pct", "frame_delay_p50_ms", "frame_delay_p95_ms", "frames_complete", "owd_p50_ms"):
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


#: G.114's 400 ms (one-way delay above it unacceptable for general network planning, §5): a frame
#: later than this is too late for a conversation.
FRAME_BOUND_MS = 400.0


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


def _same_rescue(rk: pd.DataFrame, audio_rank: pd.DataFrame, link: str) -> Finding:
    """Whether the audio's rank-1 mitigations are also rank 1 for the adaptive call."""
    a = audio_rank[(audio_rank.link == link) & audio_rank["rank"].notna()]
    v = rk[rk.link == link].set_index("mitigation")
    top = [m for m in a[a["rank"] == 1].mitigation if m in v.index]
    also = [m for m in top if v.loc[m, "rank"] == 1]
    verdict = "n/a" if not top else ("agrees" if len(also) == len(top) else ("disagrees" if not also else "partly"))
    return Finding("The mitigations that rescue the CBR audio (audio rank 1) also rescue the adaptive call (frame-delay rank 1)",
                   "this study's question (issue 27)", f"audio rank 1: {', '.join(top) or '—'}; of these also rank 1 for the adaptive call: "
                   f"{', '.join(also) or 'none'}", verdict, "agrees if every audio rank-1 mitigation is in the adaptive call's rank-1 "
                   "group; disagrees if none is; partly otherwise (both ranks by ranks.rank, no chaining)", role="held-out")
