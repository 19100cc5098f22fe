#!/usr/bin/env python3
"""Measures the cellular preset (python/jitterlab/presets/links/cellular.toml) against its
calibration targets — only what the PAM 2013 paper reports about the link itself:
Fig. 2 (audio alone: median 18.0 ms, 25-75th percentiles 15-21 ms, max 70.4 ms, loss 0.05 %),
Fig. 3's median (1.42 s, audio OWD while a 28 MB bulk download runs), the slides' 2.7-5 Mbit/s and
one-way BDP of 3-13 packets; links/cellular.pam2013.toml over its [access] table. Usage: scripts/calibrate-cellular.py [KEY=JSON ...] where KEY is an
[access] key or cell.<model key> (e.g. cell.share=0.5 down_delay='"9ms"', cell.iub_cycle='"40ms"').
The path's round trip is the study's 100 ms (pam2013_scenario.with_rtt), as `reproduce pam2013
--link cellular` runs it. docs/calibration.md, "Cellular model", reports its output."""
import json
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from jitterlab import simulate
from jitterlab.presets.pam2013_scenario import load_link, with_rtt

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "python/jitterlab/presets"


def scenario(access: dict) -> dict:
    sc = tomllib.loads((PRESETS / "pam2013.toml").read_text())  # workloads; the link is `access`
    sc["access"] = access
    return sc


def audio_alone(access: dict, seeds: range) -> dict:
    sc = scenario(access)
    sc["duration"], sc["traffic"][0]["stop"] = "16s", "15s"  # as the pam2013 preset's audio sweep
    owd, lost, n = [], 0, 0
    for s in seeds:
        m = simulate(sc, seed=s).media_packets
        rec = m.recv_ns.notna()
        owd.append((m.recv_ns[rec] - m.send_ns[rec]).astype("int64").to_numpy() / 1e6)
        lost, n = lost + int((~rec).sum()), n + len(m)
    o = np.concatenate(owd)
    return {"p25_ms": np.percentile(o, 25), "median_ms": np.median(o), "p75_ms": np.percentile(o, 75),
            "max_ms": o.max(), "above_40ms_pct": 100 * (o > 40).mean(), "loss_pct": 100 * lost / n, "runs": len(seeds)}


def bulk(access: dict, seeds: range) -> dict:
    sc = scenario(access)
    sc["duration"] = "95s"
    sc["traffic"].append({"kind": "bulk", "name": "bulk", "stack": "linux-3.2", "from": "server", "to": "mobile", "cc": "cubic",
                          "size": "28MB", "iw": 3, "start": "10s"})
    rng = np.random.default_rng(2013)
    owd, goodput = [], []
    for s in seeds:
        sc["traffic"][1]["start"] = f"{rng.uniform(10, 12):.6f}s"  # U(10 s, 12 s) as the preset
        r = simulate(sc, seed=s)
        m, run, f = r.media_packets, r.runs.iloc[0], r.tcp_flows.iloc[0]
        lo = int(run.tcp_start_ns)
        hi = int(run.tcp_end_ns) if pd.notna(run.tcp_end_ns) else 95_000_000_000
        w = m[(m.send_ns >= lo) & (m.send_ns <= hi) & m.recv_ns.notna()]
        owd.append((w.recv_ns - w.send_ns).astype("int64").to_numpy() / 1e9)
        if pd.notna(f.end_ns):
            goodput.append(28e6 * 8 / ((f.end_ns - f.syn_ns) / 1e9) / 1e6)
    o = np.concatenate(owd)
    return {"median_s": np.median(o), "p25_s": np.percentile(o, 25), "p90_s": np.percentile(o, 90),
            "goodput_mbit_s": float(np.mean(goodput)), "completed": len(goodput), "runs": len(seeds)}


def main(argv: list[str]) -> None:
    access = load_link("cellular", study=True).access  # with cellular.pam2013.toml, as the study runs it
    access["down_cellular"] = dict(access["down_cellular"])
    for kv in argv:
        k, v = kv.split("=", 1)
        if k.startswith("cell."):
            access["down_cellular"][k[5:]] = json.loads(v)
        else:
            access[k] = json.loads(v)
    access = with_rtt(access)  # the study's 100 ms round trip on the uplink, as `reproduce pam2013` runs the link
    fmt = lambda d: ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())
    for i in range(3):
        print(f"audio alone, seeds {50 * i + 1}-{50 * i + 50}: " + fmt(audio_alone(access, range(50 * i + 1, 50 * i + 51))))
    print("audio + 28 MB bulk, seeds 1-12: " + fmt(bulk(access, range(1, 13))))
    c = access["down_cellular"]
    print(f"model mean {c.get('mean_rate')}, range {c.get('min_rate')}-{c.get('max_rate')}")


if __name__ == "__main__":
    main(sys.argv[1:])
