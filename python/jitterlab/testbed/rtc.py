"""Adaptive media (`cc`) on the testbed, the driver's side: starting a flow's `rtc_recv` and
`rtc_send` workers (crates/testbed/src/rtc.rs, the simulator's controller code) and turning their
logs into the simulator's tables (`rtc_frames`, `rtc_series`, the `NAME.feedback` flow)."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jitterlab.testbed.model import Media, Plan


def start(workers: Any, pl: Plan, m: Media, seed: int) -> tuple[str, str]:
    """An adaptive flow's receiver and sender (worker roles rtc_recv, rtc_send); times relative to
    the run's zero, as the simulator's: reports until 1 s after the flow's stop, the sender's loop
    (queued packets, reports) until the run's end."""
    assert m.rtc is not None, "an adaptive flow"
    r, end = m.rtc, pl.duration_ns
    stop = min(m.stop_ns, end)
    _, ro = workers.start(m.dst, "rtc_recv", {"port": m.port, "fb_dst": pl.host_addr(m.src), "fb_port": m.port + 1, "epoch_ns": 0,
                                              "until_ns": min(stop + 1_000_000_000, end), "stop_ns": end, "format": r["format"],
                                              "interval_ns": r["fb_interval_ns"], "fifo_prio": 60}, sync=True)
    _, so = workers.start(m.src, "rtc_send", {"dst": pl.host_addr(m.dst), "dst_port": m.port, "port": m.port + 1, "epoch_ns": 0,
                                              "start_ns": m.start_ns, "stop_ns": stop, "end_ns": end, "interval_ns": m.interval_ns,
                                              "cc": r["cc"], "min_bps": r["min_bps"], "max_bps": r["max_bps"], "start_bps": r["start_bps"],
                                              "video": r["video"], "key_interval_ns": r["key_interval_ns"],
                                              "pauses_ns": r["pauses_ns"], "mtu": r["mtu"], "seed": seed, "name": m.name,
                                              "ssrc": 0x4A4C0000 + m.flow_id, "pt": 96 if r["video"] else 111,
                                              "clock_rate": 90_000 if r["video"] else 48_000, "tos": m.tos, "fifo_prio": 60}, sync=True)
    return so, ro


def first_ce(r: Any, order: np.ndarray, idx: np.ndarray, pos: np.ndarray, got: np.ndarray) -> np.ndarray:
    """ECN-CE of each sent packet's first arrival (the rtc receiver records the TOS byte)."""
    return np.where(got, r["ce"][order][idx][pos], False).astype(bool)


def frames(s: Any, flow_id: int, run_id: int, t0: int) -> pd.DataFrame:
    """The sender's frames as the simulator's rtc_frames (docs/tables.md)."""
    n = len(s["frame"])
    return pd.DataFrame({"run_id": np.full(n, run_id, dtype=np.int64), "flow_id": np.full(n, flow_id, dtype=np.int64),
                         "frame": s["frame"].astype(np.int64), "capture_ns": s["capture_ns"].astype(np.int64) - t0,
                         **{k: s[k].astype(np.int64) for k in ("bytes", "packets", "first_seq")}, "key": s["key"].astype(bool)})


def series(s: Any, flow_id: int, run_id: int, t0: int) -> pd.DataFrame:
    """The controller after each report as the simulator's rtc_series (rates and state rounded to
    whole bit/s; NaN state and a report without a received packet's RTT are null)."""
    n = len(s["t_ns"])

    def rounded(v: np.ndarray) -> pd.arrays.IntegerArray:
        ok = np.isfinite(v)
        return pd.arrays.IntegerArray(np.where(ok, np.round(np.where(ok, v, 0)), 0).astype(np.int64), ~ok)

    rtt = s["rtt_ns"].astype(np.int64)
    return pd.DataFrame({"run_id": np.full(n, run_id, dtype=np.int64), "t_ns": s["t_ns"].astype(np.int64) - t0,
                         "flow_id": np.full(n, flow_id, dtype=np.int64), "target_bps": rounded(s["target_bps"]),
                         "encoder_bps": rounded(s["encoder_bps"]), "rtt_ns": pd.arrays.IntegerArray(np.maximum(rtt, 0), rtt < 0),
                         "in_flight_bytes": s["in_flight_bytes"].astype(np.int64), "queue_bytes": s["queue_bytes"].astype(np.int64),
                         "state": rounded(s["state"])})


def feedback_flow(s: Any, r: Any, m: Media) -> dict[str, Any]:
    """The `NAME.feedback` row of `flows`: reports the receiver sent (and their IP bytes), reports
    the sender applied."""
    fb = int(r["reports"]) if "reports" in getattr(r, "files", ()) else 0
    return {"flow_id": m.flow_id + 1, "name": f"{m.name}.feedback", "kind": "feedback", "sent_pkts": fb,
            "sent_bytes": int(r["report_bytes"]) if fb else 0, "delivered_pkts": int(s["reports"]), "delivered_bytes": 0,
            "dropped_pkts": 0, "dropped_bytes": 0}
