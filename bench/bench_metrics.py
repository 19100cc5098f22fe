"""Throughput of the PAM 2013 metric set over a synthetic media_packets table.

    .venv/bin/python bench/bench_metrics.py [--packets 10000000] [--shuffle] [--extended]

Builds `packets` rows (runs of 750 audio packets = 15 s at 20 ms, TCP arriving at 10–12 s),
then times, on one thread, everything the paper reports: prepare (validate, sort check,
de-duplicate), OWD CDF, IPDV Table 1, JB loss for 6 JBs with the Fig. 5 summary, loss period
levels over time (Fig. 6) and the acceptable share for 6 JBs (Fig. 7). Prints seconds and
packets per second. Not a test: numbers depend on the machine.
"""
from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import numpy as np
import pandas as pd

from jitterlab import metrics as jm

MS = 1_000_000


def make_tables(n_packets: int, per_run: int = 750, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n_runs = -(-n_packets // per_run)
    run = np.repeat(np.arange(n_runs, dtype=np.int64), per_run)[:n_packets]
    seq = np.tile(np.arange(per_run, dtype=np.int64), n_runs)[:n_packets]
    send = seq * 20 * MS
    tcp_start = rng.integers(10_000, 12_000, n_runs) * MS
    tcp_end = tcp_start + rng.integers(500, 3_000, n_runs) * MS
    owd = 15 * MS + rng.exponential(3 * MS, n_packets).astype(np.int64)
    during = (send >= tcp_start[run]) & (send <= tcp_end[run])
    owd = owd + during * rng.integers(0, 300 * MS, n_packets)
    lost = rng.random(n_packets) < 0.005
    recv = pd.array(send + owd, dtype="Int64")
    recv[lost] = pd.NA
    media = pd.DataFrame({
        "run_id": run, "flow_id": np.ones(n_packets, dtype=np.uint32), "seq": seq, "send_ns": send,
        "recv_ns": recv, "size": np.full(n_packets, 80, dtype=np.int64),
    })
    runs = pd.DataFrame({
        "run_id": np.arange(n_runs, dtype=np.int64),
        "tcp_start_ns": pd.array(tcp_start, dtype="Int64"), "tcp_end_ns": pd.array(tcp_end, dtype="Int64"),
        "iw": rng.choice([3, 10], n_runs), "n": rng.choice([1, 2, 6], n_runs),
    })
    return media, runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--packets", type=int, default=10_000_000)
    ap.add_argument("--shuffle", action="store_true", help="shuffle rows (forces the sort)")
    ap.add_argument("--extended", action="store_true", help="also time the whole-stream metrics, RTP and E-model")
    a = ap.parse_args()
    media, runs = make_tables(a.packets)
    if a.shuffle:
        media = media.sample(frac=1.0, random_state=0).reset_index(drop=True)
    warnings.simplefilter("ignore", jm.MetricsWarning)
    steps = {}
    t0, c0 = time.perf_counter(), time.process_time()

    def step(name, f):
        s, c = time.perf_counter(), time.process_time()
        out = f()
        steps[name] = (time.perf_counter() - s, time.process_time() - c)
        return out

    p = step("prepare", lambda: jm.prepare(media, runs))
    step("owd_cdf", lambda: jm.owd_cdf(p, window="overlap", by=["iw", "n"]))
    step("ipdv_table", lambda: jm.ipdv_table(p, window="overlap", by=["iw", "n"]))
    step("jb_loss_summary", lambda: jm.jb_loss_summary(p, by=["iw", "n"]))
    step("levels_over_time", lambda: jm.levels_over_time(p, jb_ms=40, by=["iw", "n"]))
    step("acceptable_over_time", lambda: jm.acceptable_over_time(p, by="iw"))
    pam, pam_cpu = time.perf_counter() - t0, time.process_time() - c0
    if a.extended:
        # The rest of the metric set, over every packet (window="all") where that makes sense.
        step("owd_cdf(all)", lambda: jm.owd_cdf(p, window="all", by=["iw", "n"]))
        step("ipdv_table(all)", lambda: jm.ipdv_table(p, window="all", by=["iw", "n"]))
        step("jitter_final(all)", lambda: jm.jitter_final(p, window="all"))
        step("loss_period_stats(all)", lambda: jm.loss_period_stats(p, jb_ms=40, window="all"))
        step("rtp_summary", lambda: jm.rtp_summary(p))
        step("best_jb (6 JBs)", lambda: jm.best_jb(p))
    total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    # One thread does all the work, so CPU time is the one-core figure; wall time also counts
    # waiting for the CPU when the machine is shared.
    print(f"{'step':>24s} {'wall s':>7s} {'cpu s':>7s}")
    for k, (w, c) in steps.items():
        print(f"{k:>24s} {w:7.3f} {c:7.3f}")
    tag = f"{a.packets:,} packets{', shuffled' if a.shuffle else ''}"
    print(f"{'PAM 2013 set':>24s} {pam:7.3f} {pam_cpu:7.3f}  ({a.packets / pam_cpu / 1e6:.1f} M packets per CPU second, {tag})")
    if a.extended:
        print(f"{'with extended set':>24s} {total:7.3f} {total_cpu:7.3f}  ({a.packets / total_cpu / 1e6:.1f} M packets per CPU second, {tag})")


if __name__ == "__main__":
    main()
