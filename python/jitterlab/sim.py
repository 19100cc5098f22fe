"""Running the built-in simulator from Python: `simulate(scenario, seed)` returns the shared tables
(design.md) as pandas DataFrames built straight from the simulator's columns."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from jitterlab import _native
from jitterlab import scenario as _scn

NULL_NS = np.iinfo(np.int64).min
FORMAT_VERSION = 1


def _nullable_ns(a: np.ndarray) -> pd.arrays.IntegerArray:
    a = np.asarray(a, dtype=np.int64)
    return pd.arrays.IntegerArray(a, a == NULL_NS)


@dataclass
class Result:
    """Tables of one run. `media_packets`, `tcp_flows`, `queue_samples`, `runs` follow design.md;
    `channels` and `flows` describe the topology and traffic with end-of-run counters."""

    media_packets: pd.DataFrame
    tcp_flows: pd.DataFrame
    queue_samples: pd.DataFrame
    runs: pd.DataFrame
    channels: pd.DataFrame
    flows: pd.DataFrame
    scenario: dict[str, Any] = field(repr=False)
    seed: int = 0

    def tables(self) -> dict[str, pd.DataFrame]:
        return {
            "media_packets": self.media_packets,
            "tcp_flows": self.tcp_flows,
            "queue_samples": self.queue_samples,
            "runs": self.runs,
            "channels": self.channels,
            "flows": self.flows,
        }


def simulate(
    scenario: str | Path | Mapping[str, Any],
    seed: int = 1,
    run_id: int = 0,
    overrides: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
) -> Result:
    """Runs a scenario (TOML path, TOML text or dict) on the simulator.

    `overrides` set dotted scenario keys before the run; `params` are extra columns for the
    `runs` table (sweep parameters). Raises jitterlab.ScenarioError naming the key on bad input.

    >>> r = simulate({"duration": "1s",
    ...               "links": {"l": {"from": "a", "to": "b", "rate": "1Mbit", "delay": "10ms"}},
    ...               "traffic": [{"kind": "audio", "from": "a", "to": "b"}]}, seed=1)
    >>> len(r.media_packets), int((r.media_packets.recv_ns - r.media_packets.send_ns).iloc[0])
    (50, 10640000)
    """
    if seed < 0 or seed >= 2**64:
        raise _native.ScenarioError(f"seed: must be between 0 and 2^64-1, got {seed}")
    sc = _scn.with_overrides(_scn.load(scenario), overrides)
    raw = _native.simulate_json(_scn.to_json(sc), int(seed))
    return _to_result(raw, sc, int(seed), run_id, params or {})


def _to_result(raw: dict, sc: dict, seed: int, run_id: int, params: Mapping[str, Any]) -> Result:
    channels = pd.DataFrame(raw["channels"])
    names = channels["name"].to_numpy(dtype=object) if len(channels) else np.array([], dtype=object)

    m = raw["media_packets"]
    n = len(m["seq"])
    lw = np.asarray(m["lost_where"])
    lost_where = pd.array(np.where(lw >= 0, names[np.clip(lw, 0, max(len(names) - 1, 0))] if len(names) else None, None), dtype="string")
    media = pd.DataFrame(
        {
            "run_id": np.full(n, run_id, dtype=np.int64),
            "flow_id": np.asarray(m["flow_id"], dtype=np.int64),
            "seq": np.asarray(m["seq"], dtype=np.int64),
            "send_ns": m["send_ns"],
            "recv_ns": _nullable_ns(m["recv_ns"]),
            "size": np.asarray(m["size"], dtype=np.int64),
            "lost_where": lost_where,
            "ce": m["ce"],
        }
    )

    f = raw["tcp_flows"]
    k = len(f["flow_id"])
    tcp = pd.DataFrame(
        {
            "run_id": np.full(k, run_id, dtype=np.int64),
            "flow_id": np.asarray(f["flow_id"], dtype=np.int64),
            "role": pd.array(f["role"], dtype="string"),
            "iw": np.asarray(f["iw"], dtype=np.int64),
            "cc": pd.array(f["cc"], dtype="string"),
            "syn_ns": _nullable_ns(f["syn_ns"]),
            "first_data_ns": _nullable_ns(f["first_data_ns"]),
            "end_ns": _nullable_ns(f["end_ns"]),
            "bytes": np.asarray(f["bytes"], dtype=np.int64),
            "bytes_acked": np.asarray(f["bytes_acked"], dtype=np.int64),
            "segments_sent": np.asarray(f["segments_sent"], dtype=np.int64),
            "retransmits": np.asarray(f["retransmits"], dtype=np.int64),
            "drops": np.asarray(f["drops"], dtype=np.int64),
            "ecn_marks": np.asarray(f["ecn_marks"], dtype=np.int64),
            "timeouts": np.asarray(f["timeouts"], dtype=np.int64),
        }
    )

    q = raw["queue_samples"]
    qi = np.asarray(q["queue"], dtype=np.int64)
    qs = pd.DataFrame(
        {
            "run_id": np.full(len(qi), run_id, dtype=np.int64),
            "t_ns": q["t_ns"],
            "queue": pd.array(names[qi] if len(qi) else np.array([], dtype=object), dtype="string"),
            "backlog_pkts": np.asarray(q["backlog_pkts"], dtype=np.int64),
            "backlog_bytes": np.asarray(q["backlog_bytes"], dtype=np.int64),
            "drops": np.asarray(q["drops"], dtype=np.int64),
            "marks": np.asarray(q["marks"], dtype=np.int64),
        }
    )

    t = raw["totals"]
    row: dict[str, Any] = {
        "run_id": run_id,
        "scenario": sc.get("name", "scenario"),
        "seed": seed,
        "source": "sim",
        "tcp_start_ns": t["tcp_start_ns"],
        "tcp_end_ns": t["tcp_end_ns"],
        "end_ns": t["end_ns"],
        "events": t["events"],
        "jitterlab_version": _native.__version__,
    }
    for key, val in params.items():
        row.setdefault(key, val)
    runs = pd.DataFrame([row])
    for c in ("tcp_start_ns", "tcp_end_ns"):
        runs[c] = _nullable_ns(runs[c].to_numpy(dtype=np.int64))

    flows = pd.DataFrame(raw["flows"])
    if len(flows):
        flows.insert(0, "run_id", run_id)
    if len(channels):
        channels.insert(0, "run_id", run_id)
    res = Result(media, tcp, qs, runs, channels, flows, sc, seed)
    res.totals = t  # type: ignore[attr-defined]
    return res


def write(result: Result, out: str | Path) -> Path:
    """Writes each table as Parquet plus manifest.json (format version, scenario, seed, version)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, df in result.tables().items():
        df.to_parquet(out / f"{name}.parquet", index=False)
    manifest = {
        "format_version": FORMAT_VERSION,
        "jitterlab_version": _native.__version__,
        "source": "sim",
        "seed": result.seed,
        "scenario": result.scenario,
        "tables": sorted(f"{n}.parquet" for n in result.tables()),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return out
