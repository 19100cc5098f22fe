"""The real-Linux column of `jitterlab reproduce rmcat --testbed` (root): the RFC 8867 cases the
testbed can run — §5.1 (variable capacity, one flow: the capacity steps replayed as a Mahimahi
trace by the testbed's userspace link) and §5.6 (media against a long CUBIC flow, on the 300 ms
DropTail and on FQ-CoDel) — per controller, the controller's own code in the testbed's RTP sender
and receiver (crates/testbed/src/rtc.rs) over UDP sockets through namespaces, real Linux CUBIC
beside it, and the simulator on the very same scenario.

The cases are the simulator's (`rmcat.scenario_51`, `rmcat.scenario_56`) written in the [access]
shorthand the testbed builds: sender → router at 100 Mbit/s with no delay, the bottleneck from the
router to the receiver with the case's 50 ms one way, its queue and its capacity, and the reverse
path at 10 Mbit/s behind a 1000-packet queue — the same path as the [links.*] form (the simulator
gives identical packets on both, `tests/test_rmcat_testbed.py`). One change for the testbed: §5.6's
CUBIC flow drops the simulator's fixed receive window (`rcvbuf`, which Linux does not have) and
keeps Linux's autotuned one, which at 2 Mbit/s and a 300 ms queue never limits it either.

Real time is the cost: §5.1 takes 100 s and §5.6 120 s per run, so the whole column (3 controllers ×
(§5.1 + §5.6 on 2 queues)) takes about 17 minutes; it is on request (`--testbed`), one testbed run
per row against the median of `SIM_REPS` simulator runs. Run it under the lock every testbed run on
the machine shares (`flock /tmp/jitterlab-testbed.lock jitterlab reproduce rmcat --testbed`)."""
from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from jitterlab.presets import rmcat
from jitterlab.presets.findings import Finding
from jitterlab.presets.rmcat_common import CONTROLLERS
from jitterlab.report import Report

SIM_REPS = 3
#: the §5.6 queues run on the testbed (the done-when's two; the 1000 ms DropTail only adds time)
QUEUES = ("droptail", "fq_codel")
#: per case, the per-run metrics compared (rmcat.per_run_51 / per_run_56's columns)
COLUMNS = {"5.1": ("conv_40s", "conv_60s", "conv_80s", "qdelay_median_ms", "util_2_5", "frame_delay_p95_ms"),
           "5.6": ("media_share", "delay_median_ms", "qdelay_median_ms", "frame_delay_p95_ms")}
_HOSTS = {"sender": "server", "receiver": "client"}


def access_form(sc: dict[str, Any], trace_path: str | None = None) -> dict[str, Any]:
    """The case `sc` (rmcat_common._links' topology) in the [access] shorthand: the same hops,
    delays, queues and capacity; a trace capacity is read from `trace_path`."""
    sc = copy.deepcopy(sc)
    links = sc.pop("links")
    b = links["bottleneck"]
    acc: dict[str, Any] = {"core_rate": links["access"]["rate"], "core_delay": links["access"]["delay"],
                           "down_delay": b["delay"], "down_queue": b["queue"],
                           "up_rate": b["reverse"]["rate"], "up_delay": b["delay"], "up_queue": b["reverse"]["queue"]}
    if "trace" in b:
        if trace_path is None:
            raise ValueError("a trace capacity needs trace_path")
        acc["down_trace"] = trace_path
    else:
        acc["down_rate"] = b["rate"]
    sc["access"] = acc
    for t in sc["traffic"]:
        t["from"], t["to"] = _HOSTS[t["from"]], _HOSTS[t["to"]]
        t.pop("rcvbuf", None)  # Linux has no fixed window; its autotuned one does not limit this flow
    return sc


def cases(trace_dir: Path, controllers: Sequence[str] = CONTROLLERS) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(case, controller, queue, scenario) for every row of the column; writes §5.1's trace into
    `trace_dir` (the testbed reads the trace from a file)."""
    s51 = rmcat.scenario_51()
    trace = trace_dir / "rmcat-5.1.trace"
    trace_dir.mkdir(parents=True, exist_ok=True)
    trace.write_text(s51["links"]["bottleneck"]["trace"]["data"])
    a51 = access_form(s51, str(trace))
    rows = []
    for cc in controllers:
        sc = copy.deepcopy(a51)
        sc["traffic"][0]["cc"] = cc
        rows.append(("5.1", cc, "droptail", sc))
    for q in QUEUES:
        for cc in controllers:
            sc = access_form(rmcat.scenario_56())
            sc["access"]["down_queue"] = dict(rmcat.QUEUES_56[q])
            sc["traffic"][0]["cc"] = cc
            rows.append(("5.6", cc, q, sc))
    return rows


def tables(results: Sequence[Any], cc: str, queue: str) -> dict[str, pd.DataFrame]:
    """One result set as rmcat's per-run functions read it (runs with `cc` and `queue`)."""
    def cat(name: str) -> pd.DataFrame:
        return pd.concat([r.table(name) if name == "rtc_frames" else getattr(r, name) for r in results], ignore_index=True)

    runs = cat("runs").assign(cc=cc, queue=queue)
    return {"media_packets": cat("media_packets"), "runs": runs, "rtc_frames": cat("rtc_frames"), "tcp_flows": cat("tcp_flows")}


def per_run(case: str, res: dict[str, pd.DataFrame]) -> pd.DataFrame:
    return rmcat.per_run_51(res) if case == "5.1" else rmcat.per_run_56(res)


def compare(case: str, cc: str, queue: str, sim_runs: pd.DataFrame, tb_run: pd.DataFrame) -> dict[str, Any]:
    """One row: per metric the simulator's median over its runs, the testbed's value and the
    relative difference (testbed − simulator) / simulator."""
    row: dict[str, Any] = {"case": case, "cc": cc, "queue": queue, "status": "ran"}
    for c in COLUMNS[case]:
        s, t = float(np.median(sim_runs[c])), float(tb_run[c].iloc[0])
        row[f"sim_{c}"], row[f"testbed_{c}"] = s, t
        row[f"diff_{c}_pct"] = (t - s) / s * 100 if s else np.nan
    return row


def findings(df: pd.DataFrame) -> list[Finding]:
    """§5.1's done-when rules on each controller's testbed run (one run: its value strictly on the
    bound's side agrees, else disagrees; a step never followed counts as infinitely slow)."""
    fs = []
    src = "RFC 8867 §5.1 (issue 27's done-when), real Linux (testbed), one run"
    for _, r in df[(df.case == "5.1") & (df.status == "ran")].iterrows():
        worst_rise = max(r.testbed_conv_40s, r.testbed_conv_80s)
        for what, v, bound, below, fmt in (
                (f"follows each rise within {rmcat.RISE_S:.0f} s", worst_rise, rmcat.RISE_S, True, "{:.1f} s"),
                (f"falls below the capacity within {rmcat.FALL_S} s of the drop", r.testbed_conv_60s, rmcat.FALL_S, True, "{:.1f} s"),
                (f"median queueing delay below {rmcat.QDELAY_BOUND_MS:.0f} ms", r.testbed_qdelay_median_ms, rmcat.QDELAY_BOUND_MS, True,
                 "{:.0f} ms"),
                (f"uses at least {rmcat.UTIL_BOUND:.0%} of the 2.5 Mbit/s step", r.testbed_util_2_5, rmcat.UTIL_BOUND, False, "{:.2f}")):
            v = np.inf if np.isnan(v) else v  # never converged
            ok = v < bound if below else v > bound
            fs.append(Finding(f"§5.1 {r.cc} on the testbed: the media rate {what}", src, fmt.format(v), "agrees" if ok else "disagrees",
                              f"agrees if the testbed run's value lies strictly {'below' if below else 'above'} the bound, disagrees otherwise"))
    return fs


def section(rep: Report, out: Path, progress: bool = True, controllers: Sequence[str] = CONTROLLERS) -> pd.DataFrame | None:
    """Adds the testbed section to `rep` and writes OUT/testbed.csv; a clean skip (one line in
    the report and on stderr) where the testbed cannot run."""
    from jitterlab import sim, testbed
    from jitterlab.presets import mitigations_testbed
    from jitterlab.testbed.net import TestbedError

    rep.section("Real Linux beside the simulator (testbed)",
                f"RFC 8867 §5.1 and §5.6 ({', '.join(QUEUES)}) per controller: one testbed run (the controller's code over UDP "
                f"sockets in namespaces, real Linux CUBIC; queues other than drop-tail are the simulator's own code in the userspace link) "
                f"and the median of {SIM_REPS} simulator runs of the same scenario ([access] form); difference = (testbed − simulator) "
                "/ simulator.")
    if mitigations_testbed.skipped(rep, "rmcat", progress):
        return None
    rows = []
    for case, cc, q, sc in cases(out / "testbed", controllers):
        reason = mitigations_testbed.why_not(sc)
        if reason is not None:
            rows.append({"case": case, "cc": cc, "queue": q, "status": f"the testbed cannot run it: {reason}"})
            continue
        if progress:
            print(f"rmcat: testbed run §{case} {cc} {q} ({sc['duration']})", file=sys.stderr)
        try:
            tb = testbed.run(sc, seed=rmcat.SEED, out=out / "testbed" / f"{case}-{cc}-{q}")
        except TestbedError as e:
            rows.append({"case": case, "cc": cc, "queue": q, "status": f"the testbed run failed: {e}"})
            continue
        ss = [sim.simulate(sc, seed=rmcat.SEED + k, run_id=k) for k in range(SIM_REPS)]
        row = compare(case, cc, q, per_run(case, tables(ss, cc, q)), per_run(case, tables([tb], cc, q)))
        row["disturbed"] = str((tb.testbed.get("accuracy") or {}).get("disturbed") or "")
        rows.append(row)
    df = pd.DataFrame(rows)
    rep.table(df, "Simulator (median of its runs) and real Linux (one run) per case, controller and queue", "{:.2f}", name="testbed")
    fs = findings(df)
    if fs:
        rep.text("The §5.1 rules on the testbed's runs:")
        rep.findings({"testbed": fs})
    return df
