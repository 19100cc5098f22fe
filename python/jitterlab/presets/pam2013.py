"""PAM 2013 (Järvinen et al., "Interactive media over a cellular link with competing TCP"): audio
alone, audio + bulk TCP, audio + n short TCP flows with IW3 / IW10. Writes every figure and table of
the paper, the E-model MOS per workload and jitter buffer, and report.html with each finding of
the paper checked against our numbers."""
from __future__ import annotations

import copy
import re
import sys
import warnings
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from jitterlab import _io
from jitterlab import metrics as M
from jitterlab import plots
from jitterlab.presets.common import Options, caption, flat, jb_ms, run_experiment
from jitterlab.presets import findings as F
from jitterlab.presets.findings import Finding, write_csv
from jitterlab.report import Report
from jitterlab.sweep import Param, Sweep

DESCRIPTION = "PAM 2013: audio vs bulk / n short TCP flows (IW3, IW10) over a deep-buffered cellular link"
BASE = Path(__file__).with_name("pam2013.toml")
JBS = list(M.DEFAULT_JBS_MS)
WEB_TOTAL = "372kB"
BULK_SIZE = "28MB"
START = {"dist": "uniform", "min": "10s", "max": "12s"}


LINKS_DIR = Path(__file__).with_name("links")
LINK_KINDS = "fixed, cellular or trace:PATH"
# The bulk run of the fixed link: 28 MB at 3.3 Mbit/s take ~70 s after a start at 10-12 s
BULK_DURATION_S = 95


def _user_error(msg: str) -> Exception:
    from jitterlab.cli import UserError

    return UserError(msg)


def parse_links(values: Sequence[str] | None) -> list[str]:
    """`--link` values (repeatable, each comma-separated) as a list of link specs, in order.
    Raises UserError naming the bad value."""
    out: list[str] = []
    for v in values or ["fixed"]:
        for part in v.split(","):
            spec = part.strip()
            if not spec:
                raise _user_error(f"--link: empty link in {v!r} (expected {LINK_KINDS})")
            if spec.startswith("trace:"):
                if not spec[len("trace:"):].strip():
                    raise _user_error(f"--link {spec}: give the trace file after 'trace:' (a Mahimahi trace)")
            elif spec not in ("fixed", "cellular"):
                raise _user_error(f"--link: unknown link {spec!r} (expected {LINK_KINDS})")
            if spec in out:
                raise _user_error(f"--link: {spec!r} given twice")
            out.append(spec)
    return out


@dataclass(frozen=True)
class Link:
    """One access link the workloads run over: `spec` as the user wrote it, `label` its output
    directory and report column, `access` the scenario's [access] table."""

    spec: str
    label: str
    access: dict[str, Any]
    mean_bps: float
    source: str


def _mean_bps(access: dict[str, Any], base: Path) -> float:
    """Mean downlink capacity of an [access] table, from the Rust expansion of the scenario (the one
    reader of rates, traces and the cellular model; a bad table fails here, naming its key). A
    relative `down_trace` is relative to `base`."""
    from jitterlab import scenario as _scn

    access = dict(access)
    if isinstance(access.get("down_trace"), str) and not Path(access["down_trace"]).is_absolute():
        access["down_trace"] = str(base / access["down_trace"])
    exp = _scn.expand({**_workloads(), "access": access})
    for ln in exp["links"]:
        cap = ln["forward"]["capacity"]
        if ln["to"] == access.get("client", "mobile"):
            return float(cap.get("mean_bps", cap.get("bps", float("nan"))))
    return float("nan")


def load_link(spec: str) -> Link:
    """The [access] table of a link spec; UserError (one line) for a missing file."""
    if spec.startswith("trace:"):
        path = Path(spec[len("trace:"):]).expanduser()
        if not path.is_file():
            raise _user_error(f"--link {spec}: no such trace file {str(path)!r}")
        access = copy.deepcopy(_link_table(LINKS_DIR / "fixed.toml"))
        # the fixed path with the downlink's capacity from the trace (the scenario model: a link
        # direction has exactly one of rate / trace / cellular)
        access.pop("down_rate", None)
        access["down_trace"] = str(path.resolve())
        label = "trace-" + re.sub(r"[^A-Za-z0-9._-]+", "_", path.name)
        return Link(spec, label, access, _mean_bps(access, path.parent), f"{LINKS_DIR / 'fixed.toml'} with down_trace = {path}")
    if _io.name_problem(spec) is not None:  # a link's name is a directory under OUT and a file name here
        raise _user_error(f"--link {spec}: not a link name (fixed, cellular or trace:PATH)")
    f = LINKS_DIR / f"{spec}.toml"
    if not f.is_file():
        raise _user_error(f"--link {spec}: {f} not found (the {spec} link model is not part of this build)")
    access = _link_table(f)
    return Link(spec, spec, access, _mean_bps(access, f.parent), str(f))


def _link_table(path: Path) -> dict[str, Any]:
    doc = tomllib.loads(path.read_text())
    if "access" not in doc:
        raise _user_error(f"{path}: has no [access] table")
    return doc["access"]


def _workloads() -> dict[str, Any]:
    return tomllib.loads(BASE.read_text())


def base_scenario(link: str | Link = "fixed") -> dict[str, Any]:
    """The pam2013 scenario (audio only) over `link` (default: the calibrated fixed link)."""
    ln = link if isinstance(link, Link) else load_link(link)
    sc = _workloads()
    sc["access"] = copy.deepcopy(ln.access)
    return sc


#: The TCP stack the study assumes (docs/tcp.md, "Stack profiles"): the experiments ran on 2012
#: Linux servers and phones, so the era's profile — CUBIC with the HyStart of that time, PRR, no
#: RACK-TLP, no TSQ, one MSS per ACK in slow start — not today's kernel.
STACK = "linux-3.2"


def _tcp(kind: str, stack: str = STACK, **kw: Any) -> dict[str, Any]:
    return {"kind": kind, "name": kind, "stack": stack, "from": "server", "to": "mobile", "cc": "cubic", **kw}


#: The end-to-end round trip the study assumes: the Wibra 2012 slides (same group, same HSPA
#: setup): "With 100ms end-to-end RTT the path BDP is 22-42 packets". The PAM paper gives none.
RTT_S = 0.100


def _seconds(v: Any) -> float:
    mt = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|us)\s*", str(v))
    if not mt:
        raise _user_error(f"pam2013: cannot read the delay {v!r} of the link table")
    return float(mt.group(1)) * {"ms": 1e-3, "s": 1.0, "us": 1e-6}[mt.group(2)]


def with_rtt(access: dict[str, Any], rtt_s: float | None = RTT_S) -> dict[str, Any]:
    """The [access] table with `up_delay` set so that the path's fixed delays (core both ways, the
    downlink's delay and mean jitter, the uplink) add up to `rtt_s`: the extra round trip goes on the
    uplink, which carries only ACKs, so the audio's one-way delay (Fig. 2) is unchanged. None: the
    link file's own up_delay."""
    if rtt_s is None:
        return dict(access)
    fixed = 2 * _seconds(access.get("core_delay", "0ms")) + _seconds(access.get("down_delay", "0ms"))
    j = access.get("down_jitter")
    if isinstance(j, dict) and "mean" in j:
        fixed += _seconds(j["mean"])
    up = rtt_s - fixed
    if up < 0:
        raise _user_error(f"pam2013: a round trip of {rtt_s * 1e3:g} ms is shorter than the link's one-way delays ({fixed * 1e3:g} ms)")
    return {**access, "up_delay": f"{up * 1e3:.3f}ms"}


def sweeps(reps: int, reps_fig7: int, link: str | Link = "fixed", stack: str = STACK, rtt_s: float | None = RTT_S) -> dict[str, Sweep]:
    ln = link if isinstance(link, Link) else load_link(link)
    sc = base_scenario(ln)
    sc["access"] = with_rtt(sc["access"], rtt_s)
    audio = copy.deepcopy(sc)
    # 15 s of audio in a 16 s run: packets still in flight at the end would look lost
    audio["duration"] = "16s"
    audio["traffic"][0]["stop"] = "15s"
    bulk = copy.deepcopy(sc)
    bulk["duration"] = f"{_bulk_duration_s(ln)}s"
    bulk["traffic"].append(_tcp("bulk", stack, size=BULK_SIZE, iw=3, start="10s"))
    web = copy.deepcopy(sc)
    web["duration"] = "25s"
    web["traffic"].append(_tcp("web", stack, size=WEB_TOTAL, flows=1, iw=3, start="10s"))
    return {
        "audio": Sweep("pam2013-audio", audio, seed=2013, replications=reps),
        "bulk": Sweep("pam2013-bulk", bulk, seed=2013, replications=reps, random={"traffic[1].start": START}),
        "web": Sweep("pam2013-web", web, seed=2013, replications=reps_fig7,
                     params=[Param("n", [1, 2, 6], [{"traffic[1].flows": n} for n in (1, 2, 6)]),
                             Param("iw", [3, 10], [{"traffic[1].iw": w} for w in (3, 10)])],
                     random={"traffic[1].start": START}),
    }


def _bulk_duration_s(ln: Link) -> int:
    """95 s on the fixed link. On another link, long enough for 28 MB with 60 % to spare after a
    start at 12 s: from a trace's own opportunities (its rate varies, so its mean would not do),
    else from the link's mean rate."""
    if ln.spec == "fixed" or not ln.mean_bps == ln.mean_bps:
        return BULK_DURATION_S
    need = 1.6 * 28e6 * 1500 / 1448  # bytes on the wire (1448-byte payloads in 1500-byte packets), 60 % to spare for recovery at a 100 ms round trip
    if "down_trace" in ln.access:
        ms = np.array([int(x) for x in Path(ln.access["down_trace"]).read_text().split()], dtype=np.int64)
        period = int(ms[-1])
        t0 = 12_000
        loops = int(np.ceil(need / 1504 / len(ms))) + 2
        stamps = (ms[None, :] + period * np.arange(loops)[:, None]).ravel()
        stamps = stamps[stamps > t0]
        k = int(np.ceil(need / 1504))
        if k <= len(stamps):
            return max(BULK_DURATION_S, int(np.ceil(stamps[k - 1] / 1000 + 5)))
    return max(BULK_DURATION_S, int(np.ceil(12 + need * 8 / ln.mean_bps + 5)))


def _first(res, reps: int):
    """The first `reps` replications of a sweep result (Figs. 4-6 use 50, Fig. 7 uses 150)."""
    runs = res["runs"]
    keep = runs[runs["replication"] < reps]
    ids = set(keep.run_id)
    return res["media_packets"][res["media_packets"].run_id.isin(ids)], keep, res["tcp_flows"][res["tcp_flows"].run_id.isin(ids)]


def _data(res: dict, reps: int) -> dict[str, Any]:
    """The tables the figures and the findings read: each media set cut to its replications,
    validated and indexed once (metrics.prepare) for every metric of both."""
    audio_m, audio_r, _ = _first(res["audio"], reps)
    bulk_m, bulk_r, bulk_t = _first(res["bulk"], reps)
    web_m, web_r, web_t = _first(res["web"], reps)
    web7_m, web7_r = res["web"]["media_packets"], res["web"]["runs"]
    audio_m, bulk_m, web_m, web7_m = (M.prepare(m, r) for m, r in ((audio_m, audio_r), (bulk_m, bulk_r), (web_m, web_r), (web7_m, web7_r)))
    return {"audio_m": audio_m, "audio_r": audio_r, "bulk_m": bulk_m, "bulk_r": bulk_r, "bulk_t": bulk_t, "web_m": web_m,
            "web_r": web_r, "web_t": web_t, "web7_m": web7_m, "web7_r": web7_r}


def _cdf_plot(ax, cdf: pd.DataFrame, label: str, style: dict) -> None:
    ax.plot(cdf["owd_s"] * 1e3, cdf["p"], label=label, **style)


def _paper_marks(ax, xs: Sequence[float], ys: Sequence[float], label: str = "paper (reported values)") -> None:
    """The paper's reported values as black crosses beside our curves."""
    ax.plot(list(xs), list(ys), linestyle="none", marker="x", markersize=9, markeredgewidth=2, color="black", label=label)


def parse_stacks(values: Sequence[str] | None) -> list[str]:
    """`--stack` values (repeatable, comma-separated): the study's stack first unless given, each a
    known profile. UserError naming a bad one."""
    from jitterlab import stacks as _stacks

    out: list[str] = []
    for v in values or [STACK]:
        for part in v.split(","):
            name = part.strip()
            if name not in _stacks.names():
                raise _user_error(f"--stack: unknown stack profile {name!r} (known: {', '.join(_stacks.names())})")
            if name in out:
                raise _user_error(f"--stack: {name!r} given twice")
            out.append(name)
    return out


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
    lns = [load_link(s) for s in specs]
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


#: What the study's documents do not state and the preset assumes: (what, value, source or "assumed").
ASSUMPTIONS = [
    ("end-to-end round trip", f"{RTT_S * 1e3:g} ms, the extra on the uplink (ACK path)",
     "Wibra 2012 slides: 'With 100ms end-to-end RTT the path BDP is 22-42 packets'"),
    ("TCP stack", f"{STACK} (2012 Linux: no RACK-TLP, no TSQ, no ABC, the HyStart of the time)",
     "assumed: the paper names no kernel; the experiments predate Linux 3.9 (PAM 2013); the Wibra slides describe slow "
     "start growing 1.5-2 per RTT with delayed ACKs and ABC named as a factor"),
    ("congestion control", "CUBIC", "assumed: Linux's default since 2.6.19"),
    ("downlink rate", "3.3 Mbit/s fixed (fitted on Fig. 3's median)", "slides: 2.7-5 Mbit/s; the value is a calibration"),
    ("downlink buffer", "500 packets DropTail", "slides: 'measured buffer capacity 500+ packets' (unit and upper bound assumed)"),
    ("audio one-way delay model", "fixed delay + exponential jitter (fitted on Fig. 2)", "assumed shape; docs/calibration.md"),
    ("radio losses", "none on the fixed link", "paper: 'hardly any losses'; the 0.05 % of Fig. 2 is a calibration row"),
    ("web workload", "n flows of 372 kB / n starting together at U(10, 12) s, one object each", "paper §2; object split assumed"),
    ("receiver window", "Linux autotuning of the stack profile (no cap)", "assumed: the paper names no phone OS; caps contradict Fig. 3"),
    ("excluded runs", "none (the simulator has no 'wireless phenomena')", "paper §3 filtered runs with multi-second outages"),
]


def _assumptions(rep: Report) -> None:
    rep.section("What the study assumes", "Every parameter the paper and its slides leave open, with the value the preset uses "
                "and its source, or 'assumed'. docs/calibration.md says why.")
    rep.table(pd.DataFrame(ASSUMPTIONS, columns=["what", "value", "source"]), "Assumptions of the pam2013 preset", name="assumptions")


#: The parameters the documents leave open, each varied alone from the study's default on the
#: fixed link: (name, what changes, sweeps() arguments / [access] overrides).
SENSITIVITY: list[tuple[str, str, dict[str, Any]]] = [
    ("rtt-33ms", "round trip of the link file (≈ 33 ms) instead of the slides' 100 ms", {"rtt_s": None}),
    ("stack-linux-6.18", "today's Linux (RACK-TLP, TSQ, ABC) instead of 2012's", {"stack": "linux-6.18"}),
    ("buffer-750kB", "the 500-packet buffer as 750 kB (500 × 1500 B) in bytes", {"access": {"down_queue": {"kind": "droptail", "limit": "750kB"}}}),
    ("link-cellular", "jitterlab's cellular model (links/cellular.toml) instead of the fixed rate", {"link": "cellular"}),
]


def sensitivity(rep: Report, opt: Options, reps: int, reps7: int, base: list[Finding]) -> pd.DataFrame:
    """Runs each SENSITIVITY variant into OUT/sensitivity/<name>/ and writes OUT/sensitivity.csv:
    per finding its verdict by default and under each variant, and which variants flip it."""
    cols: dict[str, dict[str, str]] = {"default": {f.finding: f.verdict for f in base}}
    for name, _, kw in SENSITIVITY:
        ln = load_link(kw.get("link", "fixed"))
        if "access" in kw:
            ln = Link(ln.spec, ln.label, {**ln.access, **kw["access"]}, ln.mean_bps, ln.source)
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
        f"{r.finding}: " + (f"{r.default}, {'flips' if r.flips_under else ''} under {r.flips_under}" if r.flips_under
                            else f"{r.default} under every variant")
        for r in dis.itertuples()) + ".")
    return df


def _section(rep: Report, title: str, intro: str) -> None:
    """The section `title`, made current: new the first time, reused for the next link, so each
    figure's section holds that figure for every link, one after the other."""
    for sec in rep.sections:
        if sec.title == title:
            rep.sections.remove(sec)
            rep.sections.append(sec)
            return
    rep.section(title, intro)


def _figures(rep: Report, res: dict, reps: int, reps7: int, ln: Link, multi: bool = False, data: dict[str, Any] | None = None) -> int:
    d = data or _data(res, reps)
    audio_m, audio_r, bulk_m, bulk_r, bulk_t = d["audio_m"], d["audio_r"], d["bulk_m"], d["bulk_r"], d["bulk_t"]
    web_m, web_r, web_t, web7_m, web7_r = d["web_m"], d["web_r"], d["web_t"], d["web7_m"], d["web7_r"]
    n_fig = 0
    tag = f"[{ln.spec}] " if multi else ""
    sub = f"{ln.label}/"
    (rep.fig_dir / ln.label).mkdir(parents=True, exist_ok=True)
    link_note = f"link {ln.spec}"

    # ---- Fig. 2: audio alone
    _section(rep, "Fig. 2 — audio alone", "OWD of the audio flow with no competing traffic (whole flow).")
    cdf = M.owd_cdf(audio_m, audio_r, window="all", points=401)
    pct = M.owd_percentiles(audio_m, audio_r, window="all").iloc[0]
    loss = M.rtp_summary(audio_m, audio_r, window="all")
    loss_rate = 1 - loss.received.sum() / loss.sent.sum()
    fig, ax = plots.new()
    _cdf_plot(ax, cdf, "audio only", next(plots.styles()))
    # paper §3: median 18.0 ms, max 70.4 ms; Wibra slides: 25th / 75th percentile 15 / 21 ms
    _paper_marks(ax, [15.0, 18.0, 21.0, 70.4], [0.25, 0.5, 0.75, 1.0])
    ax.legend(fontsize=8, loc="lower right")
    ax.axvline(pct["p50_s"] * 1e3, color="#555", linestyle=":")
    ax.annotate(f"median {pct['p50_s'] * 1e3:.1f} ms", (pct["p50_s"] * 1e3, 0.5), xytext=(8, -4), textcoords="offset points")
    ax.annotate(f"max {pct['max_s'] * 1e3:.1f} ms", (pct["max_s"] * 1e3, 1.0), xytext=(-70, -14), textcoords="offset points")
    ax.set_xlabel("one-way delay (ms)"); ax.set_ylabel("CDF"); ax.set_xlim(0, max(80, pct["max_s"] * 1e3 * 1.1)); ax.grid(alpha=.3)
    plots.caption(fig, caption("pam2013-audio", reps, f"{link_note}; 15 s audio alone; loss {loss_rate * 100:.2f} %"))
    rep.figure(fig, f"{sub}fig2_audio_only_cdf", f"{tag}Fig. 2: CDF of one-way delay, audio only (whole flow).")
    n_fig += 1

    # ---- Fig. 3: bulk
    _section(rep, "Fig. 3 — audio with a bulk TCP download", f"OWD of audio packets sent while a {BULK_SIZE} download runs.")
    cdf = M.owd_cdf(bulk_m, bulk_r, window="overlap", points=401)
    pb = M.owd_percentiles(bulk_m, bulk_r, window="overlap").iloc[0]
    fig, ax = plots.new()
    _cdf_plot(ax, cdf, "audio + bulk TCP", next(plots.styles()))
    _paper_marks(ax, [500.0, 1420.0], [0.25, 0.5])  # paper §3: 25th percentile 0.5 s, median 1.42 s
    ax.legend(fontsize=8, loc="lower right")
    ax.annotate(f"median {pb['p50_s'] * 1e3:.0f} ms", (pb["p50_s"] * 1e3, 0.5), xytext=(8, -4), textcoords="offset points")
    ax.set_xlabel("one-way delay (ms)"); ax.set_ylabel("CDF"); ax.grid(alpha=.3)
    tcp = M.tcp_summary(bulk_t)
    plots.caption(fig, caption("pam2013-bulk", reps, f"{link_note}; {BULK_SIZE} CUBIC download from U(10,12) s; goodput median {np.nanmedian(tcp.goodput_bps) / 1e6:.2f} Mbit/s"))
    rep.figure(fig, f"{sub}fig3_bulk_cdf", f"{tag}Fig. 3: CDF of one-way delay, audio + bulk TCP (packets overlapping the transfer).")
    n_fig += 1

    # ---- Fig. 4: web
    _section(rep, "Fig. 4 — audio with n short TCP flows", f"n parallel flows sharing {WEB_TOTAL}, IW3 or IW10; packets overlapping the transfers.")
    cdf = M.owd_cdf(web_m, web_r, window="overlap", by=["n", "iw"], points=401)
    pw = M.owd_percentiles(web_m, web_r, window="overlap", by=["n", "iw"])
    fig, ax = plots.new()
    st = plots.styles()
    for (n, iw), g in cdf.groupby(["n", "iw"]):
        _cdf_plot(ax, g, f"n={n}, IW{iw}", next(st))
    ax.set_xlabel("one-way delay (ms)"); ax.set_ylabel("CDF"); ax.grid(alpha=.3); ax.legend(fontsize=8)
    # paper §3: IW3 below 150 ms up to the 75th percentile (every n); IW10 n = 1, 2 medians below 150 ms;
    # six IW10 flows' median ≈ 200 ms
    _paper_marks(ax, [150.0, 150.0, 200.0], [0.75, 0.5, 0.5], "paper: 150 ms bounds (IW3 p75, IW10 n=1,2 median), 6×IW10 median ≈ 200 ms")
    ax.legend(fontsize=7)
    ax.set_xlim(0, max(260, min(600, float(pw["p99_s"].max()) * 1e3 * 1.2)))
    plots.caption(fig, caption("pam2013-web", reps, f"{link_note}; {WEB_TOTAL} over n CUBIC flows from U(10,12) s"))
    rep.figure(fig, f"{sub}fig4_web_cdf", f"{tag}Fig. 4: CDF of one-way delay, audio + n short TCP flows, per (n, IW).")
    n_fig += 1
    rep.table(_ms_table(pw), f"{tag}OWD percentiles (ms) per (n, IW)", "{:.1f}", name=f"{sub}owd_percentiles_web")

    # ---- Table 1: IPDV
    _section(rep, "Table 1 — IPDV", "IP packet delay variation (RFC 5481 consecutive selection), pooled over replications, ms "
             "(the paper's table is in seconds).")
    # in ms with the same columns as the OWD table above (the paper's 0.020072 s is 20.072 ms here)
    t1 = _ms_table(M.ipdv_table(web_m, web_r, window="overlap", by=["iw", "n"]))
    rep.table(t1, f"{tag}Table 1: CDF of IPDV for an audio flow competing with n short TCP flows (ms)", "{:.1f}", name=f"{sub}table1_ipdv")
    if not multi or ln.label == "fixed":
        cols = [c for c in t1.columns if c not in ("iw", "n")]
        paper_t1 = pd.DataFrame([{"iw": iw, "n": n, **{c: v * 1e3 for c, v in zip(cols, _T1[(iw, n)])}} for iw, n in _T1])
        rep.table(paper_t1, "The paper's Table 1 as printed (its seconds in ms), for comparison", "{:.1f}")

    # ---- Fig. 5: loss vs JB
    _section(rep, "Fig. 5 — loss behind the jitter buffer", "Pure + delay-based loss per replication; median and 25–75th percentiles.")
    ls = jb_ms(M.jb_loss_summary(web_m, web_r, jbs_ms=JBS, by=["n", "iw"]))
    fig, ax = plots.new()
    st = plots.styles()
    for (n, iw), g in ls.groupby(["n", "iw"]):
        s = next(st)
        ax.errorbar(g.jb_ms, g["median"] * 100, yerr=[(g["median"] - g.p25) * 100, (g.p75 - g["median"]) * 100],
                    label=f"n={n}, IW{iw}", capsize=3, color=s["color"], linestyle=s["linestyle"], marker=s["marker"])
    _paper_marks(ax, [40.0], [100.0], "paper: IW10 ≈ 100 % at small JB")  # paper §4, text of Fig. 5
    ax.set_xlabel("jitter buffer (ms)"); ax.set_ylabel("loss rate (%)"); ax.set_ylim(0, 105); ax.grid(alpha=.3)
    # the paper's mark after our curves, in the order the interactive figure lists them
    h, lab = ax.get_legend_handles_labels()
    ax.legend(h[1:] + h[:1], lab[1:] + lab[:1], fontsize=8)
    plots.caption(fig, caption("pam2013-web", reps, f"{link_note}; base delay = min OWD in the 2 s before TCP starts"))
    rep.figure(fig, f"{sub}fig5_loss_vs_jb", f"{tag}Fig. 5: loss rate vs jitter buffer, audio + n short TCP flows (median, IQR).")
    n_fig += 1
    rep.table(ls.assign(median=ls["median"] * 100, p25=ls.p25 * 100, p75=ls.p75 * 100), f"{tag}Loss rate (%) per (n, IW, JB)", "{:.1f}", name=f"{sub}fig5_loss")
    if ln.mean_bps == ln.mean_bps:
        rate = ln.mean_bps
        burst = {(n, iw): n * iw * 1500 * 8 / rate for n in (1, 2, 6) for iw in (3, 10)}
        over = [f"{n} × IW{iw} ({burst[(n, iw)] * 1e3:.0f} ms)" for n in (1, 2, 6) for iw in (3, 10) if burst[(n, iw)] > 0.040]
        rep.text(f"{tag}The initial windows of all n flows enter the buffer at once: n × IW × 1500 B, at the link's mean "
                 f"{rate / 1e6:.2f} Mbit/s " + ", ".join(f"{n} × IW{iw} = {burst[(n, iw)] * 1e3:.0f} ms" for n in (1, 2, 6) for iw in (3, 10))
                 + " of queue. The bursts alone exceed a 40 ms jitter buffer for: " + (", ".join(over) if over else "none")
                 + "; the rest of the delay-based loss comes from the later slow-start rounds.")

    # ---- Fig. 6: levels over time
    _section(rep, "Fig. 6 — loss period levels over time", "Packets per 20 ms bin since the TCP start, per loss period level, divided by the replication count.")
    cases = [(1, 3), (2, 3), (6, 3), (1, 10)]
    for jb in (40, 100):
        lot = M.levels_over_time(web_m, web_r, jb_ms=jb, by=["n", "iw"])
        fig, axes = plots.new(width=10, height=6.4, ncols=2, nrows=2, sharex=True, sharey=True)
        greys = plots.LEVEL_COLORS  # level 0 visible against white
        for ax, (n, iw), t in zip(axes.ravel(), cases, "abcd"):
            g = lot[(lot.n == n) & (lot.iw == iw)]
            ax.stackplot(g.t_s, *[g[f"level_{k}"] for k in range(6)], labels=[f"level {k}" for k in range(6)], colors=greys, edgecolor="#333", linewidth=0.2)
            ax.set_title(f"({t}) n={n}, IW{iw}", fontsize=10); ax.set_xlim(0, 2)
            # paper §4: recovery after the initial window around 0.2 s (n = 1), samples decline around 1 s
            for x in (0.2, 1.0):
                ax.axvline(x, color="black", linestyle=":", linewidth=1)
        axes[1, 0].set_xlabel("time since TCP start (s)"); axes[1, 1].set_xlabel("time since TCP start (s)")
        axes[0, 0].set_ylabel("packets per bin / replications"); axes[1, 0].set_ylabel("packets per bin / replications")
        axes[0, 1].legend(fontsize=7, loc="upper right")
        plots.caption(fig, caption("pam2013-web", reps, f"{link_note}; jitter buffer {jb} ms, 20 ms bins"))
        rep.figure(fig, f"{sub}fig6_levels_jb{jb}", f"{tag}Fig. 6: loss period levels over time with a {jb} ms jitter buffer.")
        n_fig += 1

    # ---- Fig. 7: acceptable share
    _section(rep, "Fig. 7 — acceptable loss period level over time", f"Levels 0 and 1 together, n = 1, 2, 6 pooled, {reps7} replications per (n, IW).")
    acc = jb_ms(M.acceptable_over_time(web7_m, web7_r, jbs_ms=JBS, by="iw"))
    fig, axes = plots.new(width=10, height=4, ncols=2, sharey=True)
    for ax, iw in zip(axes, (3, 10)):
        st = plots.styles()
        for jb, g in acc[acc.iw == iw].groupby("jb_ms"):
            ax.plot(g.t_s, g.acceptable, label=f"JB {int(jb)} ms", **next(st))
        ax.set_title(f"({'ab'[iw == 10]}) IW{iw}"); ax.set_xlabel("time since TCP start (s)"); ax.set_xlim(0, 2); ax.grid(alpha=.3)
    axes[0].set_ylabel("acceptable packets per bin / replications"); axes[1].legend(fontsize=8)
    plots.caption(fig, caption("pam2013-web", reps7, f"{link_note}; n = 1, 2, 6 pooled; acceptable = levels 0 + 1"))
    rep.figure(fig, f"{sub}fig7_acceptable", f"{tag}Fig. 7: acceptable share over time for IW3 and IW10, per jitter buffer.")
    n_fig += 1

    # ---- E-model
    _section(rep, "E-model MOS per workload and jitter buffer", "ITU-T G.107 with G.711 + PLC: mouth-to-ear delay = base OWD + JB + codec delay; loss and burstiness behind the JB.")
    rows = []
    for label, (m, r) in {"audio only": (audio_m, audio_r), "bulk": (bulk_m, bulk_r)}.items():
        with warnings.catch_warnings():
            # audio alone has no TCP start: its base delay is, by design, the whole-stream minimum
            warnings.simplefilter("ignore", M.MetricsWarning)
            e = jb_ms(M.emodel_mos(m, r, jbs_ms=JBS, window="all" if label == "audio only" else "overlap"))
        for jb, g in e.groupby("jb_ms"):
            rows.append({"workload": label, "jb_ms": jb, "mos_median": g.mos.median(), "ppl_median_pct": g.loss_fraction.median() * 100})
    e = jb_ms(M.emodel_mos(web_m, web_r, jbs_ms=JBS)).merge(web_r[["run_id", "n", "iw"]], on="run_id")
    for (n, iw, jb), g in e.groupby(["n", "iw", "jb_ms"]):
        rows.append({"workload": f"web n={n} IW{iw}", "jb_ms": jb, "mos_median": g.mos.median(), "ppl_median_pct": g.loss_fraction.median() * 100})
    mos = pd.DataFrame(rows)
    best = mos.loc[mos.groupby("workload").mos_median.idxmax()][["workload", "jb_ms", "mos_median"]]
    fig, ax = plots.new()
    st = plots.styles()
    n_wl = mos.workload.nunique()
    for i, (wl, g) in enumerate(mos.groupby("workload", sort=False)):
        # spread sideways (±4 ms) so curves with the same MOS (e.g. all at 1.0) stay visible
        ax.plot(g.jb_ms + plots.dodge(i, n_wl, 8.0), g.mos_median, label=wl, **next(st))
    ax.set_xlabel("jitter buffer (ms)"); ax.set_ylabel("MOS (median over replications)"); ax.set_ylim(1, 4.5); ax.grid(alpha=.3); ax.legend(fontsize=7)
    plots.caption(fig, caption("pam2013", reps, f"{link_note}; G.711 with PLC (Ie 0, Bpl 25.1), codec delay 20 ms; "
                               "curves shifted up to ±4 ms sideways so equal values do not hide each other"))
    rep.figure(fig, f"{sub}mos_vs_jb", f"{tag}E-model MOS vs jitter buffer per workload.")
    n_fig += 1
    rep.table(mos, f"{tag}MOS and effective loss per workload and JB", "{:.2f}", name=f"{sub}mos")
    rep.table(best.rename(columns={"jb_ms": "best_jb_ms"}), f"{tag}Jitter buffer with the highest median MOS per workload", "{:.2f}", name=f"{sub}best_jb")
    return n_fig


# ----------------------------------------------------------------------------- findings

IW_PHASE_S = 0.3  # SYN round trip + the largest initial-window burst (6 × IW10 = 90 kB: 0.27 s at 2.7 Mbit/s)
RAMP_S = 5.0      # "soon after the bulk transfer starts": packets sent from 5 s after the TCP start on
# the paper's Table 1 (seconds), pooled over its 50 replications: min, 25, 50, 75, 90, 95, 96, 97, 98, 99th, max
_T1_Q = (0.0, 0.25, 0.5, 0.75, 0.90, 0.95, 0.96, 0.97, 0.98, 0.99, 1.0)
_T1 = {(3, 1): (-0.020107, -0.011373, -0.000206, 0.009194, 0.020072, 0.029445, 0.031174, 0.034697, 0.043296, 0.070158, 0.111526),
       (3, 2): (-0.020102, -0.011242, -0.000281, 0.008824, 0.018924, 0.028301, 0.029892, 0.039526, 0.050787, 0.100523, 0.182076),
       (3, 6): (-0.020107, -0.011696, -0.000588, 0.001666, 0.012330, 0.025413, 0.031916, 0.059762, 0.081594, 0.125042, 0.282826),
       (10, 1): (-0.020414, -0.012084, -0.000482, 0.001835, 0.016195, 0.020696, 0.029253, 0.030297, 0.050413, 0.172464, 0.242798),
       (10, 2): (-0.020128, -0.019264, -0.000919, 0.003032, 0.019432, 0.030032, 0.031393, 0.041291, 0.070785, 0.160448, 0.322197),
       (10, 6): (-0.020098, -0.019541, -0.009664, 0.000454, 0.018741, 0.030004, 0.040417, 0.069099, 0.121090, 0.220447, 0.589717)}
PAPER_TABLE1_ROWS = {k: dict(zip(_T1_Q, v)) for k, v in _T1.items()}
PAPER_TABLE1 = {k: {"90": v[4], "99": v[9]} for k, v in _T1.items()}

# Where each statement is (the `source` column).
SRC_SLIDES = "Wibra 2012 slides, 'Background TCP and Audio: Observations' (not the PAM paper)"
SRC_FIG2 = "paper §3, text of Fig. 2"
SRC_FIG3 = "paper §3, text of Fig. 3"
SRC_FIG4 = "paper §3, text of Fig. 4"
SRC_T1 = "paper §3, Table 1"
SRC_FIG5 = "paper §4, text of Fig. 5"
SRC_FIG6 = "paper §4, text of Fig. 6; figure summary"
SRC_FIG7 = "paper §4, Fig. 7; figure summary"


def _ms_table(t: pd.DataFrame) -> pd.DataFrame:
    """A Table 1 style percentile table in ms for the report: min_s, p25_s, … -> pmin, p25, … (ms)."""
    ren = {c: "p" + c.removesuffix("_s").removeprefix("p") for c in M.TABLE1_COLUMNS}
    return t.rename(columns=ren).assign(**{v: (lambda d, v=v: d[v] * 1e3) for v in ren.values()})


def _per_run_owd(m, r, qs: list[float], window: str) -> pd.DataFrame:
    """Per replication: OWD quantiles (columns '25', '50', … '100' for the max), with the runs' columns."""
    t = M.owd_percentiles(m, None if isinstance(m, M.Prepared) else r, window=window, by="run_id", q=qs)
    t = t.rename(columns={M.percentile_column(q): f"{q * 100:g}" for q in qs})
    return r.merge(t, on="run_id", how="left")


def _levels(m, r, jb: float) -> pd.DataFrame:
    """Loss period level of each packet in the overlap window, with t = seconds since the TCP start."""
    lv = M.loss_levels(m, None if isinstance(m, M.Prepared) else r, jb_ms=jb, window="overlap")
    st = r.set_index("run_id").tcp_start_ns
    return lv.assign(t=(lv.send_ns.to_numpy() - st.reindex(lv.run_id).to_numpy()) / 1e9)


def _share(lv: pd.DataFrame, run_ids, t0: float, t1: float, min_level: int, max_level: int = 5) -> np.ndarray:
    """Per replication: share of its packets sent in [t0, t1) s whose level is in [min_level, max_level]
    (NaN for a replication with no packet there)."""
    sel = lv[(lv.t >= t0) & (lv.t < t1)]
    hit = (sel.level >= min_level) & (sel.level <= max_level)
    return sel.assign(hit=hit).groupby("run_id").hit.mean().reindex(list(run_ids)).to_numpy(dtype=float)


def _count(lv: pd.DataFrame, run_ids, t0: float, t1: float, max_level: int) -> np.ndarray:
    """Per replication: packets sent in [t0, t1) s at level <= max_level (0 when none)."""
    sel = lv[(lv.t >= t0) & (lv.t < t1) & (lv.level <= max_level)]
    return sel.groupby("run_id").size().reindex(list(run_ids), fill_value=0).to_numpy(dtype=float)


def _buffer_pkts(access: dict[str, Any]) -> float:
    q = access.get("down_queue") or {}
    lim = str(q.get("limit", "")) if isinstance(q, dict) else ""
    mt = re.fullmatch(r"\s*([0-9.]+)\s*(pkt|B|kB|KB|MB)?\s*", lim)
    if not mt:
        return float("nan")
    v, u = float(mt.group(1)), mt.group(2) or "pkt"
    return v if u == "pkt" else v * {"B": 1, "kB": 1e3, "KB": 1024, "MB": 1e6}[u] / 1500


def _ms(x: float) -> str:
    return f"{x * 1e3:.0f} ms"


def _conditions(d: dict[str, Any], ln: Link) -> pd.DataFrame:
    """Measured conditions of each web run, for the 'why' texts: TCP drops and retransmissions, the
    audio's peak queueing (largest OWD above the pre-TCP base, in ms and in 1500-byte packets at the
    link's mean rate), when it peaked (s since the TCP start) and the handshake round trip."""
    web_m, web_r, web_t = d["web_m"], d["web_r"], d["web_t"]
    ow = M.owd(web_m, None, window="overlap").merge(web_r[["run_id", "tcp_start_ns"]], on="run_id")
    base = M.owd(web_m, None, window="all").merge(web_r[["run_id", "tcp_start_ns"]], on="run_id")
    base = base[(base.send_ns < base.tcp_start_ns) & (base.send_ns >= base.tcp_start_ns - 2_000_000_000)].groupby("run_id").owd_ns.min()
    i = ow.groupby("run_id").owd_ns.idxmax()
    peak = ow.loc[i].set_index("run_id")
    t = web_t.groupby("run_id").agg(drops=("drops", "sum"), retx=("retransmits", "sum"),
                                    rtt=("first_data_ns", "min"), syn=("syn_ns", "min"))
    out = web_r[["run_id", "n", "iw"]].set_index("run_id").join(t)
    out["rtt_s"] = (out.rtt - out.syn) / 1e9
    out["peak_ms"] = (peak.owd_ns - base.reindex(peak.index)) / 1e6
    out["peak_t_s"] = (peak.send_ns - peak.tcp_start_ns) / 1e9
    rate = ln.mean_bps if ln.mean_bps == ln.mean_bps else 3.3e6
    out["peak_pkts"] = out.peak_ms / 1e3 * rate / 12000
    return out.reset_index()


def _why_queue(c: pd.DataFrame, n: int, iw: int) -> str:
    """'n=2 IW3: 7 TCP segments lost, …; the audio's peak queueing 170 ms (≈ 45 packets) 0.96 s after the TCP start, i.e.
    in round trip 10 of 100 ms' (medians over the runs of that workload)."""
    g = c[(c.n == n) & (c.iw == iw)]
    if not len(g):
        return ""
    rtt = float(g.rtt_s.median())
    t = float(g.peak_t_s.median())
    rnd = int(t // rtt) + 1 if rtt > 0 else 0
    return (f"n={n} IW{iw}: {int(g.drops.sum())} TCP segments lost (radio outages and buffer together), {int(g.retx.sum())} "
            f"retransmissions in {len(g)} runs; the audio's "
            f"peak queueing {g.peak_ms.median():.0f} ms (≈ {g.peak_pkts.median():.0f} packets, median) {t:.2f} s after the TCP "
            f"start, i.e. in round trip {rnd} of {rtt * 1e3:.0f} ms")


NTP = 0.0005  # a one-way delay from NTP-synchronised captures is not known to better than ± 0.5 ms


def calibration_findings(d: dict[str, Any], ln: Link) -> list[Finding]:
    """The calibration rows (the slides' link facts, Fig. 2, Fig. 3's median) from the audio and bulk
    data of `d` (`_data`); `calibration.measure` runs only these."""
    audio_m, audio_r, bulk_m, bulk_r = d["audio_m"], d["audio_r"], d["bulk_m"], d["bulk_r"]
    out: list[Finding] = []
    cal = "calibration"

    # ---- the link itself (the slides) and Fig. 2 (calibration targets)
    a = _per_run_owd(audio_m, audio_r, [0.25, 0.5, 0.75, 1.0], "all")
    med, p25, p75 = (F.spread(a[c]) for c in ("50", "25", "75"))
    t = F.Tol(2.65e6, 5.5e6, "2.7 ± 0.05 to 5 ± 0.5 Mbit/s (printed)", SRC_SLIDES)
    out.append(Finding("Link: downlink capacity 2.7–5 Mbit/s (slides)", "2.7–5 Mbit/s", f"{ln.mean_bps / 1e6:.2f} Mbit/s mean",
                       F.meets([ln.mean_bps], t), "the link's mean capacity", role=cal, tolerance=t.text, source=t.source, kind="fact"))
    bdp = a["50"].to_numpy() * ln.mean_bps / (1500 * 8)
    t = F.Tol(2.7, 14.3, "± 10 % ('around')", SRC_SLIDES, "approx")
    out.append(F.judged("Link: one-way bandwidth-delay product 3–13 packets (slides)", "around 3–13 packets", t,
                        F.spread(bdp).show(fmt="{:.1f}", unit=" packets"), bdp, "band",
                        "ours: BDP = mean rate × audio-alone median OWD / 1500 B", role=cal))
    buf = _buffer_pkts(ln.access)
    t = F.Tol(500, float("inf"), "'500+': at least 500", SRC_SLIDES)
    out.append(Finding("Link: buffer of 500+ packets (slides)", "≥ 500 packets", f"{buf:.0f} packets" if buf == buf else "not a packet limit",
                       F.meets([buf], t) if buf == buf else "n/a", "the downlink buffer in 1500-byte packets", role=cal,
                       tolerance=t.text, source=t.source, kind="fact"))
    t = F.tol_printed(0.018, 1, SRC_FIG2, 1e-3, NTP, "± 0.5 ms (NTP accuracy; printed ± 0.05)")
    out.append(F.judged("Fig. 2: audio alone, median one-way delay", "18.0 ms", t, med.show(1e3, "{:.1f}", " ms"), med, role=cal))
    maxes = [np.array([x]) for x in a["100"].dropna()]
    mxp = F.boot_stat(maxes, np.max)[0]
    t = F.tol_max(0.0704, 0.015, 0.021, SRC_FIG2 + "; θ from the Wibra slides' quartiles")
    out.append(F.judged("Fig. 2: audio alone, maximum one-way delay", "70.4 ms", t,
                        mxp.show(1e3, "{:.1f}", " ms") + " (max over all replications, bootstrap)", mxp,
                        why=F.because(mxp.p75 < t.lo, f"even our bootstrap 75th percentile of the pooled maximum ({mxp.p75 * 1e3:.1f} ms) "
                                      f"is below {t.lo * 1e3:.1f} ms: the link's delay tail is lighter than the measured one"), role=cal))
    t25 = F.tol(0.015, NTP, "± 0.5 ms (whole ms printed; NTP accuracy)", "Wibra 2012 slides (audio one-way delays 15–21 ms)")
    t75 = F.tol(0.021, NTP, t25.text, t25.source)
    v25, v75 = F.meets(p25, t25), F.meets(p75, t75)
    out.append(Finding("Fig. 2: audio alone, 25–75th percentile 15–21 ms", "15–21 ms",
                       f"25th {p25.show(1e3, '{:.1f}', ' ms')}, 75th {p75.show(1e3, '{:.1f}', ' ms')}", F.worst([v25, v75]),
                       "each end against its printed value; both must hold", role=cal, tolerance=t25.text, source=t25.source, kind="value"))
    above40 = M.owd(audio_m, None, window="all").assign(hi=lambda d: d.owd_ns > 40e6).groupby("run_id").hi.mean()
    t = F.tol_bound(0.01, 0.0, True, "ours: 'a handful' = below 1 % of the packets", SRC_FIG2, "ours")
    out.append(F.judged("Fig. 2: delays below 40 ms except a handful of packets", "a handful above 40 ms", t,
                        F.spread(above40).show(100, "{:.2f}", " %") + " above 40 ms", above40, "bound",
                        "ours: 'a handful' read as below 1 % of the packets", role=cal))
    lost = M.rtp_summary(audio_m, None, window="all")
    per_run_lost = [np.r_[np.ones(int(r.sent - r.received)), np.zeros(int(r.received))] for r in lost.itertuples()]
    lp = F.boot_stat(per_run_lost, np.mean)[0]
    n_lost, n_sent = int(lost.sent.sum() - lost.received.sum()), int(lost.sent.sum())
    has_loss = float(ln.access.get("down_loss", 0) or 0) > 0
    t = F.tol_count(0.0005, 50 * 750, SRC_FIG2, 0.00005)
    out.append(F.judged("Fig. 2: audio alone, loss rate", "0.05 %", t, lp.show(100, "{:.3f}", " %") + f" (pooled: {n_lost} of {n_sent} "
                        "packets, bootstrap)", lp,
                        why=F.join_why(F.because(n_lost == 0 and not has_loss, "no packet lost: the link has no radio losses (no down_loss)"),
                                       F.because(n_lost == 0 and has_loss, "no packet lost in these replications although the link has "
                                                 "down_loss: its outages are rare")), role=cal))

    b = _per_run_owd(bulk_m, bulk_r, [0.5], "overlap")
    t = F.tol_printed(1.42, 2, SRC_FIG3, text="± 0.005 s (printed; NTP accuracy smaller)")
    out.append(F.judged("Fig. 3: bulk download, median one-way delay", "1.42 s", t, F.spread(b["50"]).show(1, "{:.2f}", " s"), b["50"],
                        role=cal))
    return out


def findings(res: dict, reps: int, reps7: int, ln: Link, data: dict[str, Any] | None = None) -> list[Finding]:
    """Every quantitative statement of the paper and its slides against the data of one link
    (`data`: `_data(res, reps)`, when the figures prepared it already). Each paper value carries its
    tolerance and source (findings.TOLERANCES); verdicts follow findings.RULES."""
    d = data or _data(res, reps)
    bulk_m, bulk_r = d["bulk_m"], d["bulk_r"]
    web_m, web_r, web7_m, web7_r = d["web_m"], d["web_r"], d["web7_m"], d["web7_r"]
    out = calibration_findings(d, ln)

    # ---- Fig. 3: bulk
    b = _per_run_owd(bulk_m, bulk_r, [0.25, 0.5], "overlap")
    ow = M.owd(bulk_m, None, window="overlap").merge(bulk_r[["run_id", "tcp_start_ns"]], on="run_id")
    ow["t"] = (ow.send_ns - ow.tcp_start_ns) / 1e9
    ow["s"] = ow.owd_ns / 1e9
    first1 = ow[ow.s >= 1.0].groupby("run_id").t.min()
    rs = F.spread(ow.assign(before=ow.t < ow.run_id.map(first1).fillna(np.inf)).groupby("run_id").before.mean())
    s25 = F.spread(b["25"])
    bt = d["bulk_t"]
    bdrops = int(bt.drops.sum()) if "drops" in bt else 0
    t = F.tol_printed(0.5, 1, SRC_FIG3, text="± 0.05 s (printed)")
    out.append(F.judged("Fig. 3: bulk download, 25th percentile one-way delay", "0.5 s", t, s25.show(1, "{:.2f}", " s"), s25,
                        why=F.because(s25.p25 > t.hi, f"{rs.p50 * 100:.0f} % of a transfer's audio packets (median) are sent before "
                                      "its queue first reaches 1 s: the ramp is short")))
    post = ow[ow.t >= RAMP_S]
    post_med = F.spread(post.groupby("run_id").s.median())
    t = F.Tol(1.35, 2.75, "± 10 % ('around')", SRC_FIG3, "approx")
    drain = _buffer_pkts(ln.access) * 1500 * 8 / ln.mean_bps if ln.mean_bps == ln.mean_bps else float("nan")
    out.append(F.judged("Fig. 3: during a bulk download the delay stays around 1.5–2.5 s", "around 1.5–2.5 s", t,
                        f"median OWD of the packets sent ≥ {RAMP_S:g} s after the start {post_med.show(1, '{:.2f}', ' s')}", post_med, "band",
                        f"ours: a transfer's median OWD from {RAMP_S:g} s after its start ('soon after … remains'); checked against the "
                        "paper's own numbers: a rule asking half the packets to lie in 1.5–2.5 s would be failed by the paper's data "
                        "(median 1.42 s < 1.5 s), this one is met by it",
                        F.because(post_med.p75 < t.lo and drain == drain, f"{bdrops} TCP drops in {len(bt)} transfers; a full buffer "
                                  f"drains in {drain:.2f} s at the mean {ln.mean_bps / 1e6:.2f} Mbit/s and CUBIC keeps "
                                  f"{post_med.p50 / drain * 100:.0f} % of it (median)")))

    # ---- Fig. 4
    w = _per_run_owd(web_m, web_r, [0.5, 0.75], "overlap")

    def col(c: str, n: int, iw: int) -> np.ndarray:
        return w[(w.n == n) & (w.iw == iw)][c].to_numpy(dtype=float)

    cond = _conditions(d, ln)
    lv40 = _levels(web_m, web_r, 40.0)
    t150 = F.tol_bound(0.150, 0.005, True, "± 5 ms (printed '150ms')", SRC_FIG4)
    vs = {n: F.meets(col("75", n, 3), t150) for n in (1, 2, 6)}
    bad = [n for n, v in vs.items() if v != "agrees"]
    out.append(Finding("Fig. 4: with IW3 the one-way delay stays below 150 ms up to the 75th percentile, for every n",
                       "75th pct < 150 ms (n = 1, 2, 6)",
                       "75th pct: " + ", ".join(f"n={n} {F.spread(col('75', n, 3)).show(1e3, '{:.0f}', ' ms')}" for n in (1, 2, 6)),
                       F.worst(list(vs.values())), "for every n", F.because(bool(bad), "; ".join(_why_queue(cond, n, 3) for n in bad)),
                       tolerance=t150.text, source=t150.source, kind="bound"))
    v10 = {n: F.meets(col("50", n, 10), t150) for n in (1, 2)}
    bad10 = [n for n, v in v10.items() if v != "agrees"]
    out.append(Finding("Fig. 4: with IW10 the median one-way delay stays below 150 ms with one and two flows", "median < 150 ms (IW10, n = 1, 2)",
                       ", ".join(f"n={n} {F.spread(col('50', n, 10)).show(1e3, '{:.0f}', ' ms')}" for n in (1, 2)),
                       F.worst(list(v10.values())), "for n = 1 and 2", F.because(bool(bad10), "; ".join(_why_queue(cond, n, 10) for n in bad10)),
                       tolerance=t150.text, source=t150.source, kind="bound"))
    m610 = F.spread(col("50", 6, 10))
    t = F.tol_approx(0.200, SRC_FIG4)
    out.append(F.judged("Fig. 4: the median one-way delay with six IW10 flows approaches 200 ms", "≈ 200 ms", t, m610.show(1e3, "{:.0f}", " ms"),
                        m610, why=F.because(m610.p25 > t.hi, _why_queue(cond, 6, 10))))
    out.append(F.ordered("Fig. 4: every IW10 case has a higher one-way delay than six IW3 flows", "IW10 (n = 1, 2, 6) > 6 × IW3", SRC_FIG4,
                         [(f"n={n} IW10 vs 6×IW3", col("50", n, 10), col("50", 6, 3)) for n in (1, 2, 6)], "above", 1e3, " ms",
                         rule="medians per replication"))
    out.append(F.ordered("Fig. 4: IW10 gives a notably higher one-way delay than IW3 for the same n", "IW10 > IW3 for n = 1, 2, 6", SRC_FIG4,
                         [(f"n={n}", col("50", n, 10), col("50", n, 3)) for n in (1, 2, 6)], "above", 1e3, " ms", rule="medians per replication"))
    out.append(F.ordered("Fig. 4: six flows delay the audio more than one (same IW)", "n = 6 > n = 1", SRC_FIG4,
                         [(f"IW{iw}", col("50", 6, iw), col("50", 1, iw)) for iw in (3, 10)], "above", 1e3, " ms", rule="medians per replication"))
    jl = jb_ms(M.jb_loss(web_m, None, jbs_ms=JBS)).merge(web_r[["run_id", "n", "iw"]], on="run_id")

    def loss(n: int, iw: int, jb: float, what: str = "loss_rate") -> np.ndarray:
        g = jl[(jl.n == n) & (jl.iw == iw) & (jl.jb_ms == jb)]
        if what == "late":
            return (g.late / g.packets.clip(lower=1)).to_numpy(dtype=float)
        return g[what].to_numpy(dtype=float)

    late63 = F.spread(loss(6, 3, 40.0, "late"))
    t = F.tol_approx(0.40, SRC_FIG4)
    out.append(F.judged("Fig. 4: six IW3 flows raise the delay of roughly 40 % of the packets (an earlier increase)", "≈ 40 % of the packets", t,
                        late63.show(100, "{:.0f}", " %") + " delayed more than 40 ms above the base delay", late63,
                        rule="ours: 'raised' = OWD above the pre-TCP base delay + 40 ms (the paper reads it off the CDF's knee and does not define it)"))

    # ---- Table 1
    ip = M.ipdv(web_m, None, window="overlap").merge(web_r[["run_id", "n", "iw"]], on="run_id")
    per_run_ipdv = {(iw, n): [g.ipdv_ns.to_numpy() / 1e9 for _, g in ip[(ip.n == n) & (ip.iw == iw)].groupby("run_id")]
                    for iw in (3, 10) for n in (1, 2, 6)}
    bq = {k: F.boot_pooled(v, [0.90, 0.99]) for k, v in per_run_ipdv.items()}
    nper = {k: 50 * float(np.median([len(x) for x in v])) if v else 0.0 for k, v in per_run_ipdv.items()}
    for i, q in enumerate(("90", "99")):
        tq = {k: F.tol_pooled(float(q) / 100, PAPER_TABLE1_ROWS[k], nper[k], SRC_T1) for k in bq}
        vv = {k: F.meets(bq[k][i], tq[k]) for k in bq}
        out.append(Finding(f"Table 1: {q}th percentile of IPDV per (IW, n)",
                           ", ".join(f"IW{iw} n={n} {PAPER_TABLE1[(iw, n)][q] * 1e3:.0f}" for iw, n in bq) + " ms",
                           ", ".join(f"IW{iw} n={n} {bq[(iw, n)][i].show(1e3, '{:.0f}')}" for iw, n in bq) + " ms (bootstrap)",
                           F.worst(list(vv.values())), "each cell; all cells must hold",
                           F.because("agrees" in vv.values() and F.worst(list(vv.values())) != "agrees",
                                     "agrees at " + ", ".join(f"IW{iw} n={n}" for (iw, n), v in vv.items() if v == "agrees") + " only"),
                           tolerance="; ".join(f"IW{iw} n={n} {tq[(iw, n)].text}" for iw, n in bq), source=SRC_T1, kind="value"))
    b99 = {k: bq[k][1] for k in bq}
    out.append(F.ordered("Table 1: high-end IPDV (99th percentile) larger with IW10 than IW3 for each n", "IW10 > IW3 (n = 1, 2, 6)", SRC_T1,
                         [(f"n={n}", b99[(10, n)], b99[(3, n)]) for n in (1, 2, 6)], "above", 1e3, " ms",
                         rule="spreads over bootstrap resamples of the replications"))

    # ---- Fig. 5
    t = F.tol_approx(1.0, SRC_FIG5)
    v = {n: F.meets(loss(n, 10, 40.0), t) for n in (1, 2, 6)}
    out.append(Finding("Fig. 5: IW10 drives the loss to nearly 100 % at small jitter buffers", "≈ 100 % at 40 ms (IW10)",
                       "40 ms JB: " + ", ".join(f"n={n} {F.spread(loss(n, 10, 40.0)).show(100, '{:.0f}', ' %')}" for n in (1, 2, 6)),
                       F.worst(list(v.values())), "ours: 'small jitter buffers' = 40 ms; for every n", tolerance=t.text, source=t.source, kind="value"))
    l63 = F.spread(loss(6, 3, 40.0))
    t = F.tol_bound(0.30, 0.0, False, "ours: 'significant' = at least 30 %", SRC_FIG5, "ours")
    out.append(F.judged("Fig. 5: IW3 with many parallel flows also loses a lot", "significant loss, n = 6 IW3", t,
                        "40 ms JB: " + l63.show(100, "{:.0f}", " %"), l63, "bound", "ours: 'significant' read as ≥ 30 % at a 40 ms JB"))
    out.append(F.ordered("Fig. 5: IW10 loses more than IW3 (same n, same jitter buffer)", "IW10 > IW3 in all 18 (n, JB) cases", SRC_FIG5,
                         [(f"n={n} {int(jb)} ms", loss(n, 10, jb), loss(n, 3, jb)) for n in (1, 2, 6) for jb in JBS], "above", 100, " %",
                         floor=0.01, ceiling=0.85, rule="ours: saturated when both medians are ≤ 1 % or both ≥ 85 % (nothing or nearly "
                         "everything lost either way)"))
    pure = jl[jl.jb_ms == 40.0]
    pshare = (pure.pure / (pure.pure + pure.late).clip(lower=1)).to_numpy(dtype=float)
    t = F.tol_bound(0.05, 0.0, True, "ours: 'almost solely' = below 5 % pure", SRC_FIG5, "ours")
    out.append(F.judged("Fig. 5: the losses are almost solely delay-based, not pure losses", "almost solely delay-based", t,
                        F.spread(pshare).show(100, "{:.1f}", " %") + " of the 40 ms-JB losses are pure (all (n, IW))", pshare, "bound",
                        "ours: 'almost solely' read as below 5 % pure losses"))

    # ---- Fig. 6 (40 ms JB)
    ids = {(n, iw): web_r[(web_r.n == n) & (web_r.iw == iw)].run_id.tolist() for n in (1, 2, 6) for iw in (3, 10)}
    T = IW_PHASE_S
    phase = f"ours: the IW phase = the first {T:g} s after the TCP start (SYN round trip + the largest initial-window burst)"
    lvl5_1 = F.spread(_share(lv40, ids[(1, 3)], 0, 2, 5))
    early1, late1 = _share(lv40, ids[(1, 3)], 0, T, 2), _share(lv40, ids[(1, 3)], T, 1.0, 2)
    t5 = F.tol_bound(0.05, 0.0, True, "ours: 'not reached' = below 5 % at level 5", SRC_FIG6, "ours")
    va = [F.meets(lvl5_1, t5), {"win": "agrees", "tie": "inconclusive", "loss": "disagrees"}[F.outcome(late1, early1, "below")]]
    out.append(Finding("Fig. 6a: one IW3 flow — the loss period level does not fall to the worst level and recovers right after the initial window (≈ 0.2 s)",
                       "level 5 not reached; quick recovery",
                       f"level-5 share {lvl5_1.show(100, '{:.0f}', ' %')}; levels ≥ 2: {F.spread(early1).show(100, '{:.0f}', ' %')} in 0–{T:g} s, "
                       f"{F.spread(late1).show(100, '{:.0f}', ' %')} in {T:g}–1 s",
                       F.worst(va), "ours: 'not reached' = level-5 share below 5 % (bound rule), and levels ≥ 2 lower after the IW phase "
                       "than in it; both must hold; " + phase,
                       F.because(va[1] != "agrees", _why_queue(cond, 1, 3)), source=SRC_FIG6, tolerance=t5.text, kind="order"))
    e1, e2 = _share(lv40, ids[(1, 3)], 0, T, 2), _share(lv40, ids[(2, 3)], 0, T, 2)
    mid2, lat2 = _share(lv40, ids[(2, 3)], T, 2 * T, 2), _share(lv40, ids[(2, 3)], 2 * T, 1.5, 2)
    ob = [F.outcome(e2, e1, "above"), F.outcome(mid2, e2, "below"), F.outcome(lat2, mid2, "above")]
    out.append(Finding("Fig. 6b: two IW3 flows — the initial windows hurt more than one flow's, the level recovers once they are through, "
                       "then worsens again as the windows open", "worse IW phase; recovery; worse again",
                       f"levels ≥ 2: IW phase 0–{T:g} s n=2 {F.spread(e2).show(100, '{:.0f}', ' %')} vs n=1 {F.spread(e1).show(100, '{:.0f}', ' %')}; "
                       f"{T:g}–{2 * T:g} s {F.spread(mid2).show(100, '{:.0f}', ' %')}; {2 * T:g}–1.5 s {F.spread(lat2).show(100, '{:.0f}', ' %')} — " + F.tally(ob),
                       F.count_verdict(ob), "shares of packets at level ≥ 2 per replication; " + phase,
                       F.because(ob[1] != "win", _why_queue(cond, 2, 3)), source=SRC_FIG6, kind="order"))
    dur = F.spread(((web_r.tcp_end_ns - web_r.tcp_start_ns) / 1e9).to_numpy(dtype=float))
    t = F.tol_approx(1.0, SRC_FIG6)
    out.append(F.judged("Fig. 6: the short transfers start to complete around 1 s after the TCP start (the samples decline)", "≈ 1 s", t,
                        dur.show(1, "{:.2f}", " s") + " from the first SYN to the last byte (all n, IW)", dur))
    w6 = F.spread(_share(lv40, ids[(6, 3)], 0, 60, 4))
    th = F.tol_bound(0.5, 0.0, False, "ours: 'very bad / dominant' = at least half of the packets", SRC_FIG6, "ours")
    out.append(F.judged("Fig. 6c: six IW3 flows — the level is very bad from the start for almost the whole transfer", "levels 4–5 dominate", th,
                        w6.show(100, "{:.0f}", " %") + " of the packets at level 4–5 (whole transfer)", w6, "bound",
                        "ours: 'very bad' = levels 4–5, 'dominate' = at least half of the packets"))
    w110 = F.spread(_share(lv40, ids[(1, 10)], 0, 60, 5))
    out.append(F.judged("Fig. 6d: one IW10 flow — the worst level dominates until the transfer completes, like six IW3 flows", "level 5 dominant", th,
                        w110.show(100, "{:.0f}", " %") + " of the packets at level 5 (whole transfer)", w110, "bound",
                        "ours: 'dominant' = at least half of the packets"))
    out.append(F.ordered("Fig. 6 / conclusions: the worst effect of a short transfer is during the initial windows", "IW phase worst, every (n, IW)",
                         SRC_FIG6, [(f"n={n} IW{iw}", _share(lv40, ids[(n, iw)], 0, T, 2), _share(lv40, ids[(n, iw)], T, 60, 2))
                                    for n, iw in ids], "above", 100, " %", floor=0.0, ceiling=0.99,
                         rule="shares at level ≥ 2, IW phase vs after; " + phase + "; saturated when both medians are 0 % or ≥ 99 %"))

    # ---- Fig. 7: per workload (n), all replications
    acc: dict[tuple[int, int, float], np.ndarray] = {}
    for jb in JBS:
        lv = _levels(web7_m, web7_r, jb)
        for n in (1, 2, 6):
            for iw in (3, 10):
                acc[(n, iw, jb)] = _count(lv, web7_r[(web7_r.iw == iw) & (web7_r.n == n)].run_id.tolist(), 0, 2.0, 1)
    out.append(F.ordered("Fig. 7: fewer acceptable packets (levels 0–1) with IW10 than IW3 at every jitter buffer", "IW10 < IW3 for every JB", SRC_FIG7,
                         [(f"n={n} {int(jb)} ms", acc[(n, 10, jb)], acc[(n, 3, jb)]) for n in (1, 2, 6) for jb in JBS], "below", 1, " pkts",
                         floor=0.0, rule="acceptable packets in the first 2 s per replication; compared per n (the paper pools n = 1, 2, 6, "
                         "which mixes three workloads in one spread); saturated when both medians are 0"))
    return out
