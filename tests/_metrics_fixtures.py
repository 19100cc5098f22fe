"""Small hand-made tables for the metrics tests."""
from __future__ import annotations

import pandas as pd

MS = 1_000_000


def media(rows, run_dtype="int64"):
    """rows: (run, flow, seq, send_ms, recv_ms or None)."""
    df = pd.DataFrame({
        "run_id": pd.Series([r[0] for r in rows], dtype=run_dtype),
        "flow_id": pd.Series([r[1] for r in rows], dtype="uint32"),
        "seq": pd.Series([r[2] for r in rows], dtype="int64"),
        "send_ns": pd.Series([r[3] * MS for r in rows], dtype="int64"),
        "recv_ns": pd.array([None if r[4] is None else r[4] * MS for r in rows], dtype="Int64"),
        "size": pd.Series([80] * len(rows), dtype="int64"),
        "lost_where": pd.array([None] * len(rows), dtype="string"),
        "ce": pd.Series([False] * len(rows), dtype=bool),
    })
    return df


def cbr(owds_ms, run=1, flow=1, start_ms=0):
    """20 ms CBR stream; owds_ms[i] = OWD of packet i in ms or None (lost)."""
    return [(run, flow, i, start_ms + 20 * i, None if d is None else start_ms + 20 * i + d)
            for i, d in enumerate(owds_ms)]


def runs(spec):
    """spec: {run_id: (tcp_start_ms or None, tcp_end_ms or None, **params)}."""
    ids = list(spec)
    out = {
        "run_id": ids,
        "tcp_start_ns": pd.array([None if spec[i][0] is None else spec[i][0] * MS for i in ids], dtype="Int64"),
        "tcp_end_ns": pd.array([None if spec[i][1] is None else spec[i][1] * MS for i in ids], dtype="Int64"),
    }
    extra = {k for i in ids for k in (spec[i][2] if len(spec[i]) > 2 else {})}
    for k in sorted(extra):
        out[k] = [spec[i][2][k] for i in ids]
    return pd.DataFrame(out)
