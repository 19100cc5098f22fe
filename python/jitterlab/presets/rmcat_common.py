"""What every RMCAT case of `reproduce rmcat` shares (presets.rmcat and presets.rmcat_more): RFC
8867 §3's path (sender — router — receiver, the bottleneck in the router), its 300 ms bottleneck
queue, the media source, and the per-run frame metrics."""
from __future__ import annotations

from typing import Any

import pandas as pd

from jitterlab import rtc_metrics as R

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
