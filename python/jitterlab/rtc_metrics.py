"""Metrics for adaptive real-time media after RFC 8868 ("Evaluating Congestion Control for
Interactive Real-Time Media", §2), over ``media_packets`` and the adaptive tables ``rtc_frames`` /
``rtc_series`` (docs/tables.md). Definitions: docs/media.md, "Metrics".

Units follow docs/tables.md: ``_ns`` integer nanoseconds per packet or frame, ``_s`` float
seconds in summaries, ``_bps`` bit/s; shares are fractions in [0, 1].

>>> import pandas as pd
>>> media = pd.DataFrame({"run_id": [0] * 4, "flow_id": [1] * 4, "seq": [0, 1, 2, 3],
...     "send_ns": [0, 250_000_000, 500_000_000, 750_000_000],
...     "recv_ns": pd.array([50_000_000, 310_000_000, None, 800_000_000], dtype="Int64"),
...     "size": [1000] * 4})
>>> media_rate(media, bin_s=1.0)["rate_bps"].tolist()
[24000.0]
>>> queueing_delay(media)["qdelay_ns"].tolist()
[0, 10000000, 0]
>>> jain_index([1.0, 1.0]), jain_index([1.0, 0.0])
(1.0, 0.5)
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "media_rate",
    "queueing_delay",
    "utilisation",
    "frame_delays",
    "freezes",
    "freezes_from_delays",
    "convergence_time",
    "jain_index",
    "capacity_at",
]

_KEYS = ["run_id", "flow_id"]


def _received(media: pd.DataFrame) -> pd.DataFrame:
    m = media[media["recv_ns"].notna()].reset_index(drop=True)
    m["recv_ns"] = m["recv_ns"].astype("int64")
    return m


def media_rate(media: pd.DataFrame, bin_s: float = 1.0, by: str = "recv", wire: bool = True) -> pd.DataFrame:
    """Media bit rate per flow in bins of ``bin_s`` from t = 0 (RFC 8868 §2.1's "media rate over
    time"): bytes received (``by="recv"``, by arrival time) or sent (``by="send"``) in each bin,
    IP bytes (``wire``) or RTP payload (size − 40 B), over the bin. Columns run_id, flow_id, t_s
    (bin start), rate_bps; bins with no packet are absent."""
    if by not in ("recv", "send"):
        raise ValueError(f"by: must be 'recv' or 'send', got {by!r}")
    m = _received(media) if by == "recv" else media.copy()
    col = "recv_ns" if by == "recv" else "send_ns"
    step = int(round(bin_s * 1e9))
    m["bin"] = m[col].astype("int64") // step
    m["bits"] = (m["size"].astype("int64") - (0 if wire else 40)) * 8
    g = m.groupby(_KEYS + ["bin"], sort=True)["bits"].sum().reset_index()
    g["t_s"] = g["bin"] * bin_s
    g["rate_bps"] = g["bits"] / bin_s
    return g[_KEYS + ["t_s", "rate_bps"]].astype({"rate_bps": "float64"})


def queueing_delay(media: pd.DataFrame) -> pd.DataFrame:
    """Per received packet, its one-way delay minus the smallest one-way delay of its flow
    (RFC 8868 §2.1, "queuing delay": with the media alone on the path this is the delay the flow
    inflicts on itself). Columns run_id, flow_id, seq, recv_ns, qdelay_ns."""
    m = _received(media)
    owd = m["recv_ns"] - m["send_ns"].astype("int64")
    base = owd.groupby([m["run_id"], m["flow_id"]]).transform("min")
    out = m[_KEYS + ["seq", "recv_ns"]].copy()
    out["qdelay_ns"] = (owd - base).astype("int64")
    return out.reset_index(drop=True)


def capacity_at(steps: Sequence[tuple[float, float]], t_s: np.ndarray | float) -> np.ndarray:
    """The capacity (bit/s) at ``t_s`` of a schedule ``steps`` = [(from_s, bit/s), …] sorted by
    time (the first step holds from its time on; before it the first rate)."""
    times = np.array([s[0] for s in steps], dtype=float)
    rates = np.array([s[1] for s in steps], dtype=float)
    i = np.searchsorted(times, np.asarray(t_s, dtype=float), side="right") - 1
    return rates[np.clip(i, 0, len(rates) - 1)]


def utilisation(media: pd.DataFrame, steps: Sequence[tuple[float, float]], start_s: float, end_s: float,
                flows: Iterable[int] | None = None) -> float:
    """Share of the bottleneck capacity the media used in [start_s, end_s) (RFC 8868 §2.1,
    "bandwidth utilization"): IP bits received in the window over the capacity's bits in it
    (the capacity schedule integrated over the window)."""
    m = _received(media)
    if flows is not None:
        m = m[m["flow_id"].isin(list(flows))]
    a, b = int(round(start_s * 1e9)), int(round(end_s * 1e9))
    bits = float(m.loc[(m["recv_ns"] >= a) & (m["recv_ns"] < b), "size"].sum()) * 8
    edges = sorted({start_s, end_s, *[t for t, _ in steps if start_s < t < end_s]})
    cap = sum(float(capacity_at(steps, lo)) * (hi - lo) for lo, hi in zip(edges, edges[1:]))
    return bits / cap if cap > 0 else float("nan")


def frame_delays(frames: pd.DataFrame, media: pd.DataFrame) -> pd.DataFrame:
    """Per frame: complete_ns, the arrival of its last packet when all of them arrived (null
    otherwise: no retransmission or FEC is modelled, so a frame missing a packet is never
    decodable), and frame_delay_ns = complete_ns − capture_ns (RFC 8868 §2.1 lists frame delay
    among the metrics; this is its capture-to-complete form). Columns run_id, flow_id, frame,
    capture_ns, key, complete_ns, frame_delay_ns."""
    f = frames[_KEYS + ["frame", "capture_ns", "packets", "first_seq", "key"]].reset_index(drop=True)
    rep = f.loc[f.index.repeat(f["packets"].astype("int64"))].copy()
    rep["seq"] = rep["first_seq"].astype("int64") + rep.groupby(level=0).cumcount()
    mm = media[_KEYS + ["seq", "recv_ns"]]
    j = rep.merge(mm, on=_KEYS + ["seq"], how="left")
    j["got"] = j["recv_ns"].notna()
    agg = j.groupby(_KEYS + ["frame"], sort=True).agg(n=("got", "size"), got=("got", "sum"),
                                                     last=("recv_ns", "max")).reset_index()
    out = f.merge(agg, on=_KEYS + ["frame"], how="left")
    complete = out["got"] == out["n"]
    out["complete_ns"] = pd.array(np.where(complete, out["last"].astype("float64"), np.nan), dtype="Float64").astype("Int64")
    out["frame_delay_ns"] = out["complete_ns"] - out["capture_ns"].astype("int64")
    return out[_KEYS + ["frame", "capture_ns", "key", "complete_ns", "frame_delay_ns"]]


def freezes(frames: pd.DataFrame, media: pd.DataFrame) -> pd.DataFrame:
    """Video freezes per flow after the W3C WebRTC statistics definition (RTCInboundRtpStreamStats
    freezeCount / totalFreezesDuration): frames are shown in order when complete (a frame shows no
    earlier than the one before it); an interval between two shown frames is a freeze when it is at
    least max(3·δ, δ + 150 ms), δ the mean of the (up to) 30 intervals before it. Columns run_id,
    flow_id, frames_shown, freeze_count, freeze_s (total duration of the freezing intervals)."""
    return freezes_from_delays(frame_delays(frames, media))


def freezes_from_delays(d: pd.DataFrame) -> pd.DataFrame:
    """`freezes` from a `frame_delays` table already computed (its run_id, flow_id, frame and
    complete_ns columns)."""
    rows = []
    for (run, flow), g in d.groupby(_KEYS, sort=True):
        shown = g.sort_values("frame")["complete_ns"].dropna().astype("int64").to_numpy()
        shown = np.maximum.accumulate(shown) if len(shown) else shown
        gaps = np.diff(shown) / 1e9
        # δ_i: the mean of the (up to) 30 gaps before gap i, from a running sum
        i = np.arange(1, len(gaps))
        lo = np.maximum(0, i - 30)
        cs = np.concatenate([[0.0], np.cumsum(gaps)])
        mean = (cs[i] - cs[lo]) / (i - lo) if len(i) else np.zeros(0)
        hit = gaps[1:] >= np.maximum(3 * mean, mean + 0.150)
        rows.append({"run_id": run, "flow_id": flow, "frames_shown": len(shown), "freeze_count": int(hit.sum()),
                     "freeze_s": float(gaps[1:][hit].sum())})
    return pd.DataFrame(rows, columns=_KEYS + ["frames_shown", "freeze_count", "freeze_s"])


def convergence_time(media: pd.DataFrame, flow_id: int, at_s: float, capacity_bps: float, rise: bool,
                     max_rate_bps: float, limit_s: float, run_id: int | None = None) -> float:
    """Seconds after a capacity change at ``at_s`` until the flow's sending rate settled (RFC 8868
    §2.1 "convergence time"; the RFC gives no rule, so this one is ours, docs/media.md): checked
    every 100 ms over the last second, on a rise until the RTP payload rate reaches 80 % of
    min(capacity, max_rate), on a fall until the IP rate is at most the new capacity. NaN when not
    within ``limit_s``."""
    m = media[media["flow_id"] == flow_id]
    if run_id is not None:
        m = m[m["run_id"] == run_id]
    t = m["send_ns"].astype("int64").to_numpy()
    ip = m["size"].astype("int64").to_numpy() * 8
    pay = ip - 40 * 8
    order = np.argsort(t, kind="stable")
    t, ip, pay = t[order], ip[order], pay[order]
    cip, cpay = np.concatenate([[0], np.cumsum(ip)]), np.concatenate([[0], np.cumsum(pay)])
    for k in range(1, int(round(limit_s * 10)) + 1):
        x = at_s + k / 10
        a = max(x - 1.0, at_s - 1.0)
        i, j = np.searchsorted(t, int(round(a * 1e9))), np.searchsorted(t, int(round(x * 1e9)))
        span = x - a
        if rise and (cpay[j] - cpay[i]) / span >= 0.8 * min(capacity_bps, max_rate_bps):
            return k / 10
        if not rise and (cip[j] - cip[i]) / span <= capacity_bps:
            return k / 10
    return float("nan")


def jain_index(x: Iterable[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²) (RFC 8868 §2.1 names Jain's index for sharing
    between flows): 1 when all equal, 1/n when one flow takes everything."""
    v = np.asarray(list(x), dtype=float)
    if len(v) == 0 or not np.any(v):
        return float("nan")
    return float(v.sum() ** 2 / (len(v) * (v ** 2).sum()))
