"""PAM 2013 (Järvinen et al., "Interactive media over a cellular link with competing TCP"): audio
alone, audio + bulk TCP, audio + n short TCP flows with IW3 / IW10. Writes every figure and table of
the paper, the E-model MOS per workload and jitter buffer, and report.html with each finding of
the paper checked against our numbers.

This module runs the study (`run`, `sensitivity`); its parts: `pam2013_scenario` (the links, the
scenario and sweeps), `pam2013_figures` (one function a figure), `pam2013_findings` (one function
a figure's findings). Their public names are importable from here as before."""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from jitterlab import plots
from jitterlab.presets.common import Options, caption, flat, run_experiment
from jitterlab.presets.findings import Finding, write_csv
from jitterlab.report import Report
# the study's parts (setup, figures, findings); their names stay importable from here
from jitterlab.presets.pam2013_figures import _figures, _section
from jitterlab.presets.pam2013_findings import (IW_PHASE_S, PAPER_TABLE1, PAPER_TABLE1_ROWS, RAMP_S,  # noqa: F401
                                                calibration_findings, findings)
from jitterlab.presets.pam2013_scenario import (BASE, BULK_DURATION_S, BULK_SIZE, JBS, LINK_KINDS, LINKS_DIR,  # noqa: F401
                                                RTT_S, STACK, START, WEB_TOTAL, Link, _bulk_duration_s, _data, _tcp,
                                                _mean_bps, _workloads, base_scenario, load_link, parse_links, parse_stacks, sweeps,
                                                with_rtt)

DESCRIPTION = "PAM 2013: audio vs bulk / n short TCP flows (IW3, IW10) over a deep-buffered cellular link"


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True, links: Sequence[str] | None = None,
        stacks: Sequence[str] | None = None, sensitivity_runs: bool = False) -> Path:
    """Runs the study over each link (default: the calibrated fixed link) and each TCP stack
    (default: the study's 2012-era `STACK`) into OUT/<link>/ (OUT/<link>-<stack>/ for a stack other
    than the study's), each with its findings.csv, and writes one report.html with them side by side."""
    reps = reps or 50
    reps7 = 3 * reps
    specs = parse_links(links)
    stks = parse_stacks(stacks)
    lns = [load_link(s, study=True) for s in specs]
    opt = Options(Path(out), jobs, executor, scheduler, progress)
    rep = Report("PAM 2013 reproduced: interactive audio vs competing TCP over a cellular link", opt.out,
                 f"jitterlab preset pam2013 · {reps} replications ({reps7} for Fig. 7) · links: {', '.join(specs)} · "
                 f"stacks: {', '.join(stks)} · round trip {RTT_S * 1e3:g} ms")
    params: dict[str, Any] = {"replications": reps, "replications_fig7": reps7, "seed": 2013, "tcp_start": "U(10 s, 12 s)",
                              "bulk_size": BULK_SIZE, "web_total": WEB_TOTAL, "jitter_buffers_ms": JBS, "tcp_cc": "cubic",
                              "tcp_stack": stks, "round_trip_ms": RTT_S * 1e3,
                              "window": "media packets sent in [tcp_start, tcp_end] (audio-only: whole flow)",
                              "base_delay": "min OWD in the 2 s before tcp_start", "links": specs}
    by_link: dict[str, list[Finding]] = {}
    figs = 0
    for ln0 in lns:
        for stk in stks:
            ln = ln0 if stk == STACK else Link(ln0.spec, f"{ln0.label}-{stk}", ln0.access, ln0.mean_bps, ln0.source)
            lopt = Options(opt.out / ln.label, jobs, executor, scheduler, progress)
            if progress:
                print(f"pam2013 [{ln.label}]: {reps} replications ({reps7} for Fig. 7) into {lopt.out}/", file=sys.stderr)
            res = {k: run_experiment(s, k, lopt) for k, s in sweeps(reps, reps7, ln, stk).items()}
            params.update({f"{ln.label}.{k}": v for k, v in flat({"access": with_rtt(ln.access)}).items()})
            params[f"{ln.label}.source"] = ln.source
            params[f"{ln.label}.mean_downlink_Mbps"] = round(ln.mean_bps / 1e6, 3)
            params[f"{ln.label}.stack"] = stk
            data = _data(res, reps)
            figs += _figures(rep, res, reps, reps7, ln, multi=len(lns) * len(stks) > 1, data=data)
            fs = findings(res, reps, reps7, ln, data=data)
            write_csv(fs, lopt.out / "findings.csv")
            by_link[ln.label] = fs
    params.update({f"scenario.{k}": v for k, v in flat(_workloads()).items()})
    rep.set_params(params)
    rep.section("Findings of the paper against our numbers",
                "Every quantitative statement of the paper and its slides: the paper's value with the tolerance its precision "
                "implies and its source (hover the finding), what we measured (median [25th–75th percentile] over replications "
                "unless the cell says otherwise) and a verdict by the rule its kind links to. Calibration targets (Fig. 2, the "
                "Fig. 3 median, the slides' link facts) fixed the link's parameters (docs/calibration.md); every other row is a "
                "held-out prediction, counted apart in the headline. A 'why' is a measured condition of the runs behind its row. "
                "Per link: OUT/<link>/findings.csv."
                + (" A trace link is not calibrated at all: its calibration rows are predictions too."
                   if any(s.startswith("trace:") for s in specs) else ""))
    rep.findings(by_link)
    if sensitivity_runs:
        sensitivity(rep, opt, reps, reps7, next(iter(by_link.values())))
    _assumptions(rep)
    path = rep.write()
    if progress:
        print(f"pam2013: report {path} ({figs} figures)", file=sys.stderr)
    return path


_FIXED = tomllib.loads((LINKS_DIR / "fixed.toml").read_text())["access"]

#: What the study's documents do not state and the preset assumes: (what, value, source or "assumed").
ASSUMPTIONS = [
    ("end-to-end round trip", f"{RTT_S * 1e3:g} ms, the extra on the uplink (ACK path)",
     "Wibra 2012 slides: 'With 100ms end-to-end RTT the path BDP is 22-42 packets'"),
    ("TCP stack", f"{STACK} (2012 Linux: no RACK-TLP, no TSQ, no ABC, the HyStart of the time)",
     "assumed: the paper names no kernel; the experiments predate Linux 3.9 (PAM 2013); the Wibra slides describe slow "
     "start growing 1.5-2 per RTT with delayed ACKs and ABC named as a factor"),
    ("congestion control", "CUBIC", "assumed: Linux's default since 2.6.19"),
    ("downlink rate", f"{_FIXED['down_rate']} fixed (fitted on Fig. 3's median)", "slides: 2.7-5 Mbit/s; the value is a calibration"),
    ("downlink buffer", "500 packets DropTail", "slides: 'measured buffer capacity 500+ packets' (unit and upper bound assumed; Fig. 3's "
     "median fixes only buffer / rate, so 600 or 750 packets at a scaled rate meet the calibration rows too: variants buffer-600pkt, "
     "buffer-750pkt)"),
    ("audio one-way delay model", "fixed delay + exponential jitter (fitted on Fig. 2)", "assumed shape; docs/calibration.md"),
    ("radio losses", f"{_FIXED['down_loss'] * 100:g} % of the time, in outages of {_FIXED['down_loss_burst']} mean",
     "paper: 'hardly any losses'; the 0.05 % of Fig. 2 is a calibration row; outage length assumed"),
    ("cellular link (--link cellular)", "links/cellular.toml with links/cellular.pam2013.toml over it: 40 ms outages, 2.9 Mbit/s mean",
     "refitted on Fig. 2's loss and Fig. 3's median for the 2012 stack at 100 ms (docs/calibration.md, 'Cellular model', step 5)"),
    ("HSPA burst behaviour (Iub flow control)", "none on the fixed link; `iub_cycle` of the cellular model, off by default",
     "assumed off: the calibration rows do not constrain it (docs/calibration.md, 'Held-out predictions')"),
    ("web workload", "n flows of 372 kB / n starting together at U(10, 12) s, one object each", "paper §2; object split assumed"),
    ("receiver window", "Linux autotuning of the stack profile (no cap)", "assumed: the paper names no phone OS; caps contradict Fig. 3"),
    ("excluded runs", "none (the simulator has no 'wireless phenomena')", "paper §3 filtered runs with multi-second outages"),
]


def _assumptions(rep: Report) -> None:
    rep.section("What the study assumes", "Every parameter the paper and its slides leave open, with the value the preset uses "
                "and its source, or 'assumed'. docs/calibration.md says why.")
    rep.table(pd.DataFrame(ASSUMPTIONS, columns=["what", "value", "source"]), "Assumptions of the pam2013 preset", name="assumptions")


#: The parameters the documents leave open, each varied alone from the study's default on the
#: fixed link: (name, what changes, sweeps() arguments / [access] overrides / `cellular` model keys over the link file's).
SENSITIVITY: list[tuple[str, str, dict[str, Any]]] = [
    ("rtt-33ms", "round trip of the link file (≈ 33 ms) instead of the slides' 100 ms", {"rtt_s": None}),
    ("stack-linux-6.18", "today's Linux (RACK-TLP, TSQ, ABC) instead of 2012's", {"stack": "linux-6.18"}),
    ("buffer-750kB", "the 500-packet buffer as 750 kB (500 × 1500 B) in bytes", {"access": {"down_queue": {"kind": "droptail", "limit": "750kB"}}}),
    # '500+ packets' bounds the buffer from below only, and Fig. 3's median fixes only the time a full
    # buffer takes to drain (500 × 1500 B at the study's 3.05 Mbit/s: 1.97 s): a larger buffer with the rate scaled
    # to keep that time meets every calibration row as well (docs/calibration.md, 'Held-out predictions')
    ("buffer-600pkt", "600 packets ('500+' leaves the upper bound open) at 3.66 Mbit/s, the rate scaled so that a full buffer "
     "drains in the same 1.97 s (Fig. 3's median still agrees)", {"access": {"down_queue": {"kind": "droptail", "limit": "600pkt"},
                                                                          "down_rate": "3.66Mbit"}}),
    ("buffer-750pkt", "750 packets at 4.575 Mbit/s, scaled the same way (inside the slides' 2.7–5 Mbit/s)",
     {"access": {"down_queue": {"kind": "droptail", "limit": "750pkt"}, "down_rate": "4.575Mbit"}}),
    ("link-cellular", "jitterlab's cellular model (links/cellular.toml) instead of the fixed rate", {"link": "cellular"}),
    ("link-cellular-iub80", "the cellular model with HSDPA's Iub flow control, an 80 ms cycle (`iub_cycle`: the calibration rows do not "
     "constrain it; 80 ms is the value of scripts/pam2013-iub-sweep.py closest to Table 1's single-flow cells, not a fit)",
     {"link": "cellular", "cellular": {"iub_cycle": "80ms"}}),
]


def sensitivity(rep: Report, opt: Options, reps: int, reps7: int, base: list[Finding]) -> pd.DataFrame:
    """Runs each SENSITIVITY variant into OUT/sensitivity/<name>/ and writes OUT/sensitivity.csv:
    per finding its verdict by default and under each variant, and which variants flip it."""
    cols: dict[str, dict[str, str]] = {"default": {f.finding: f.verdict for f in base}}
    for name, _, kw in SENSITIVITY:
        ln = load_link(kw.get("link", "fixed"), study=True)
        if "access" in kw:  # the mean rate again: a variant may change it (the capacity and BDP rows read it)
            acc = {**ln.access, **kw["access"]}
            ln = Link(ln.spec, ln.label, acc, _mean_bps(acc, LINKS_DIR), ln.source)
        if "cellular" in kw:
            acc = {**ln.access, "down_cellular": {**ln.access["down_cellular"], **kw["cellular"]}}
            ln = Link(ln.spec, ln.label, acc, ln.mean_bps, ln.source)
        lopt = Options(opt.out / "sensitivity" / name, opt.jobs, opt.executor, opt.scheduler, opt.progress)
        res = {k: run_experiment(sw, k, lopt) for k, sw in
               sweeps(reps, reps7, ln, kw.get("stack", STACK), kw.get("rtt_s", RTT_S)).items()}
        fs = findings(res, reps, reps7, ln)
        write_csv(fs, lopt.out / "findings.csv")
        cols[name] = {f.finding: f.verdict for f in fs}
    rows = []
    for f in base:
        r: dict[str, Any] = {"finding": f.finding, "role": f.role}
        r.update({k: v.get(f.finding, "n/a") for k, v in cols.items()})
        r["flips_under"] = ", ".join(k for k in cols if k != "default" and r[k] != r["default"])
        rows.append(r)
    df = pd.DataFrame(rows)
    df.to_csv(opt.out / "sensitivity.csv", index=False)
    _section(rep, "Sensitivity — what each disagreement depends on",
             "Each parameter the paper and its slides leave open, varied alone from the study's default (fixed link): "
             + "; ".join(f"{n}: {w}" for n, w, _ in SENSITIVITY) + f". {reps} replications each. OUT/sensitivity.csv.")
    names = list(cols)
    code = {"agrees": 3, "partly": 2, "inconclusive": 1, "disagrees": 0, "n/a": np.nan}
    z = np.array([[code[r[k]] for k in names] for r in rows], dtype=float)
    fig, ax = plots.new(width=8, height=0.28 * len(rows) + 1.5)
    ax.imshow(z, aspect="auto", cmap="RdYlGn", vmin=0, vmax=3, interpolation="nearest")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), [f"{i + 1}. {r['finding'][:60]}" for i, r in enumerate(rows)], fontsize=7)
    for i, r in enumerate(rows):
        for j, k in enumerate(names):
            ax.text(j, i, r[k][:5], ha="center", va="center", fontsize=6)
    plots.caption(fig, caption("pam2013", reps, "verdict per finding (rows) and variant (columns); green agrees, red disagrees"))
    rep.figure(fig, "sensitivity", "Sensitivity: the verdict of each finding under each variant of what the documents leave open.")
    rep.table(df, "Verdicts under each variant (OUT/sensitivity.csv); flips_under names the variants that change the default's verdict")
    dis = df[df["default"] != "agrees"]
    rep.text("What each row that does not agree by default depends on: " + "; ".join(
        f"{r['finding']}: {r['default']}" + (", " + ", ".join(f"{r[k]} under {k}" for k in names[1:] if r[k] != r["default"])
                                             if r["flips_under"] else " under every variant (no single open parameter changes it)")
        for r in dis.to_dict("records")) + ".")
    return df
