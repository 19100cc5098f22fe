"""What every RMCAT case of `reproduce rmcat` shares (presets.rmcat and presets.rmcat_more): RFC
8867 §3's path (sender — router — receiver, the bottleneck in the router), its 300 ms bottleneck
queue, the media source, and the per-run frame metrics."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jitterlab import plots
from jitterlab import rtc_metrics as R
from jitterlab.presets.common import caption
from jitterlab.report import Report

CONTROLLERS = ["gcc", "scream", "nada"]

DELAY = "50ms"
MAX_RATE = 1.5e6


def queue_300ms(bps: float) -> dict[str, Any]:
    """RFC 8867 §4's 300 ms bottleneck queue at capacity `bps`, as a DropTail byte limit."""
    return {"kind": "droptail", "limit": f"{int(bps * 0.3 / 8)}B"}


def _links(capacity: dict[str, Any], queue: dict[str, Any]) -> dict[str, Any]:
    # the bottleneck sits in a router, as in RFC 8867 §3's topology: a host's own first link
    # would let TCP Small Queues keep the TCP flow out of the bottleneck queue
    return {"access": {"from": "sender", "to": "router", "rate": "100Mbit", "delay": "0ms"},
            "bottleneck": {"from": "router", "to": "receiver", **capacity, "delay": DELAY, "queue": queue,
                           "reverse": {"rate": "10Mbit", "queue": {"kind": "droptail", "limit": "1000pkt"}}}}


def _video(name: str, start: str = "0s", stop: str | None = None) -> dict[str, Any]:
    v = {"kind": "video", "name": name, "from": "sender", "to": "receiver", "cc": "gcc", "start": start}
    if stop:
        v["stop"] = stop
    return v


#: RFC 8867 §4.3's audio beside each video source: 20 kbit/s CBR, here 50 B of RTP payload every
#: 20 ms (90 B on the wire with IP+UDP+RTP's 40 B: 36 kbit/s)
AUDIO_SIZE_B, AUDIO_INTERVAL_S = 90, 0.020
AUDIO_BPS = AUDIO_SIZE_B * 8 / AUDIO_INTERVAL_S


def with_audio(traffic: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The traffic with, after all its entries, one audio flow per video entry (same endpoints,
    start and stop): the video entries keep their indexes (traffic[i]) and, as media flow ids
    follow the entries, the videos' ids come before the audios' (`video_ids`)."""
    keep = ("from", "to", "start", "stop")
    audio = [{"kind": "audio", "name": t["name"].replace("video", "audio"), **{k: t[k] for k in keep if k in t},
              "size": f"{AUDIO_SIZE_B}B", "interval": f"{AUDIO_INTERVAL_S * 1e3:g}ms"} for t in traffic if t["kind"] == "video"]
    return traffic + audio


def video_ids(mr: pd.DataFrame) -> list[int]:
    """The video flows' ids in one run of a case built `with_audio`: the first half of its media
    flow ids (one audio flow per video flow, after them all)."""
    ids = sorted(int(x) for x in mr.flow_id.unique())
    return ids[:len(ids) // 2]


def _frames(res, run_id: int, mr: pd.DataFrame) -> dict[str, float]:
    """Frame delay (capture to complete) median and 95th percentile, shown share, freezes per minute."""
    fr = res["rtc_frames"]
    fr = fr[fr.run_id == run_id]
    d = R.frame_delays(fr, mr)
    fd = d.frame_delay_ns.dropna().astype(float) / 1e6
    fz = R.freezes(fr, mr)
    minutes = (fr.capture_ns.max() - fr.capture_ns.min()) / 60e9 if len(fr) else float("nan")
    return {"frame_delay_median_ms": fd.median(), "frame_delay_p95_ms": fd.quantile(0.95),
            "frames_complete": len(fd) / max(len(d), 1), "freezes_per_min": fz.freeze_count.sum() / minutes}


def _rate_panels(rep: Report, res, title: str, name: str, steps: list[tuple[float, float]] | None, reps: int, note: str,
                 end_s: float = 100.0) -> None:
    m, runs = res["media_packets"], res["runs"]
    fig, axes = plots.new(width=10, height=7, nrows=len(CONTROLLERS), sharex=True, sharey=True)
    for ax, cc in zip(axes, CONTROLLERS):
        rid = int(runs[runs.cc == cc].run_id.min())
        mr = m[m.run_id == rid]
        rate = R.media_rate(mr[mr.flow_id.isin(video_ids(mr))], bin_s=0.5, by="send")
        for i, (fid, g) in enumerate(rate.groupby("flow_id")):
            ax.plot(g.t_s, g.rate_bps / 1e6, drawstyle="steps-post", lw=1, label=f"flow {fid} sent")
        if steps:
            t = np.array([s[0] for s in steps] + [end_s])
            ax.step(t, [s[1] / 1e6 for s in steps] + [steps[-1][1] / 1e6], where="post", color="black", lw=1.5, ls="--", label="capacity")
        ax.set_title(cc, fontsize=9); ax.set_ylabel("Mbit/s"); ax.grid(alpha=.3)
    axes[-1].set_xlabel("time (s)"); axes[0].legend(fontsize=7, loc="upper left")
    plots.caption(fig, caption(name, reps, note + "; first replication of each controller; 0.5 s bins, IP bytes"))
    rep.figure(fig, name.replace(".", "_"), title)


def quartile_table(df: pd.DataFrame, keys: list[str], cols: list[str], sort: bool = False) -> pd.DataFrame:
    """Per group of `keys` (in order of appearance unless `sort`): each column's median and 25th / 75th
    percentiles over the runs, as the report's tables show them."""
    g = df.groupby(keys, sort=sort)
    out = g[cols].median().add_suffix("_median")
    for c in cols:
        out[f"{c}_p25"] = g[c].quantile(0.25)
        out[f"{c}_p75"] = g[c].quantile(0.75)
    return out.reset_index()
