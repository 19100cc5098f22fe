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


def sweeps(reps: int, reps_fig7: int, link: str | Link = "fixed") -> dict[str, Sweep]:
    ln = link if isinstance(link, Link) else load_link(link)
    sc = base_scenario(ln)
    audio = copy.deepcopy(sc)
    # 15 s of audio in a 16 s run: packets still in flight at the end would look lost
    audio["duration"] = "16s"
    audio["traffic"][0]["stop"] = "15s"
    bulk = copy.deepcopy(sc)
    bulk["duration"] = f"{_bulk_duration_s(ln)}s"
    bulk["traffic"].append(_tcp("bulk", size=BULK_SIZE, iw=3, start="10s"))
    web = copy.deepcopy(sc)
    web["duration"] = "25s"
    web["traffic"].append(_tcp("web", size=WEB_TOTAL, flows=1, iw=3, start="10s"))
    return {
        "audio": Sweep("pam2013-audio", audio, seed=2013, replications=reps),
        "bulk": Sweep("pam2013-bulk", bulk, seed=2013, replications=reps, random={"traffic[1].start": START}),
        "web": Sweep("pam2013-web", web, seed=2013, replications=reps_fig7,
                     params=[Param("n", [1, 2, 6], [{"traffic[1].flows": n} for n in (1, 2, 6)]),
                             Param("iw", [3, 10], [{"traffic[1].iw": w} for w in (3, 10)])],
                     random={"traffic[1].start": START}),
    }


def _bulk_duration_s(ln: Link) -> int:
    """95 s on the fixed link. On another link, long enough for 28 MB with 30 % to spare after a
    start at 12 s: from a trace's own opportunities (its rate varies, so its mean would not do),
    else from the link's mean rate."""
    if ln.spec == "fixed" or not ln.mean_bps == ln.mean_bps:
        return BULK_DURATION_S
    need = 1.3 * 28e6 * 1500 / 1448  # bytes on the wire: 1448-byte payloads in 1500-byte packets
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


def run(out: str | Path, reps: int | None = None, jobs: int | None = None, executor: str = "local",
        scheduler: str | None = None, progress: bool = True, links: Sequence[str] | None = None) -> Path:
    """Runs the study over each link (default: the calibrated fixed link) into OUT/<link>/, each
    with its findings.csv, and writes one report.html with the links side by side."""
    reps = reps or 50
    reps7 = 3 * reps
    specs = parse_links(links)
    lns = [load_link(s) for s in specs]
    opt = Options(Path(out), jobs, executor, scheduler, progress)
    rep = Report("PAM 2013 reproduced: interactive audio vs competing TCP over a cellular link", opt.out,
                 f"jitterlab preset pam2013 · {reps} replications ({reps7} for Fig. 7) · links: {', '.join(specs)}")
    params: dict[str, Any] = {"replications": reps, "replications_fig7": reps7, "seed": 2013, "tcp_start": "U(10 s, 12 s)",
                              "bulk_size": BULK_SIZE, "web_total": WEB_TOTAL, "jitter_buffers_ms": JBS, "tcp_cc": "cubic",
                              "window": "media packets sent in [tcp_start, tcp_end] (audio-only: whole flow)",
                              "base_delay": "min OWD in the 2 s before tcp_start", "links": specs}
    by_link: dict[str, list[Finding]] = {}
    figs = 0
    for ln in lns:
        lopt = Options(opt.out / ln.label, jobs, executor, scheduler, progress)
        if progress:
            print(f"pam2013 [{ln.spec}]: {reps} replications ({reps7} for Fig. 7) into {lopt.out}/", file=sys.stderr)
        res = {k: run_experiment(s, k, lopt) for k, s in sweeps(reps, reps7, ln).items()}
        params.update({f"{ln.label}.{k}": v for k, v in flat({"access": ln.access}).items()})
        params[f"{ln.label}.source"] = ln.source
        params[f"{ln.label}.mean_downlink_Mbps"] = round(ln.mean_bps / 1e6, 3)
        data = _data(res, reps)
        figs += _figures(rep, res, reps, reps7, ln, multi=len(lns) > 1, data=data)
        fs = findings(res, reps, reps7, ln, data=data)
        write_csv(fs, lopt.out / "findings.csv")
        by_link[ln.label] = fs
    params.update({f"scenario.{k}": v for k, v in flat(_workloads()).items()})
    rep.set_params(params)
    rep.section("Findings of the paper against our numbers",
                "Every quantitative statement of the paper and its slides, with what we measured (median [25th–75th "
                "percentile] over replications unless the cell says otherwise) and a verdict computed by the rule in its row. "
                "Calibration targets (Fig. 2, the Fig. 3 median, the slides' link facts) fixed the fixed link's parameters "
                "(docs/calibration.md); every other row is a held-out prediction: nothing was tuned after looking at it. "
                "A 'why' appears only when the measured condition it states holds. Per link: OUT/<link>/findings.csv."
                + (" A trace link is not calibrated at all: its calibration rows are predictions too."
                   if any(s.startswith("trace:") for s in specs) else ""))
    rep.findings(by_link)
    path = rep.write()
    if progress:
        print(f"pam2013: report {path} ({figs} figures)", file=sys.stderr)
    return path


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
    ax.set_xlim(0, min(600, float(pw["p99_s"].max()) * 1e3 * 1.2))
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

    # ---- Fig. 5: loss vs JB
    _section(rep, "Fig. 5 — loss behind the jitter buffer", "Pure + delay-based loss per replication; median and 25–75th percentiles.")
    ls = jb_ms(M.jb_loss_summary(web_m, web_r, jbs_ms=JBS, by=["n", "iw"]))
    fig, ax = plots.new()
    st = plots.styles()
    for (n, iw), g in ls.groupby(["n", "iw"]):
        s = next(st)
        ax.errorbar(g.jb_ms, g["median"] * 100, yerr=[(g["median"] - g.p25) * 100, (g.p75 - g["median"]) * 100],
                    label=f"n={n}, IW{iw}", capsize=3, color=s["color"], linestyle=s["linestyle"], marker=s["marker"])
    ax.set_xlabel("jitter buffer (ms)"); ax.set_ylabel("loss rate (%)"); ax.set_ylim(0, 100); ax.grid(alpha=.3); ax.legend(fontsize=8)
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
# the paper's Table 1 (seconds), pooled over its 50 replications
PAPER_TABLE1 = {(3, 1): {"90": 0.020072, "99": 0.070158}, (3, 2): {"90": 0.018924, "99": 0.100523},
                (3, 6): {"90": 0.012330, "99": 0.125042}, (10, 1): {"90": 0.016195, "99": 0.172464},
                (10, 2): {"90": 0.019432, "99": 0.160448}, (10, 6): {"90": 0.018741, "99": 0.220447}}


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


def findings(res: dict, reps: int, reps7: int, ln: Link, data: dict[str, Any] | None = None) -> list[Finding]:
    """Every quantitative statement of the paper and its slides against the data of one link
    (`data`: `_data(res, reps)`, when the figures prepared it already)."""
    d = data or _data(res, reps)
    audio_m, audio_r, bulk_m, bulk_r = d["audio_m"], d["audio_r"], d["bulk_m"], d["bulk_r"]
    web_m, web_r, web7_m, web7_r = d["web_m"], d["web_r"], d["web7_m"], d["web7_r"]
    out: list[Finding] = []
    rw = F.RULE_WITHIN

    # ---- the link itself and Fig. 2 (calibration targets)
    a = _per_run_owd(audio_m, audio_r, [0.25, 0.5, 0.75, 1.0], "all")
    med, p25, p75 = (F.spread(a[c]) for c in ("50", "25", "75"))
    out.append(Finding("Link: downlink capacity 2.7–5 Mbit/s (slides)", "2.7–5 Mbit/s",
                       f"{ln.mean_bps / 1e6:.2f} Mbit/s mean", F.in_range([ln.mean_bps], 2.7e6, 5e6),
                       "agrees if the link's mean capacity lies in the band", role="calibration"))
    bdp = a["50"].to_numpy() * ln.mean_bps / (1500 * 8)
    out.append(Finding("Link: one-way bandwidth-delay product 3–13 packets (slides)", "3–13 packets",
                       F.spread(bdp).show(fmt="{:.1f}", unit=" packets") + " (mean rate × audio-alone median OWD)",
                       F.in_range(bdp, 3, 13), F.rule_range("3", "13 packets"), role="calibration"))
    buf = _buffer_pkts(ln.access)
    out.append(Finding("Link: buffer of 500+ packets (slides)", "≥ 500 packets", f"{buf:.0f} packets" if buf == buf else "not a packet limit",
                       F.in_range([buf], 500, float("inf")) if buf == buf else "n/a", "agrees if the downlink buffer holds ≥ 500 packets of 1500 B",
                       role="calibration"))
    out.append(Finding("Fig. 2: audio alone, median one-way delay", "18.0 ms", med.show(1e3, "{:.1f}", " ms"),
                       F.within(0.018, med), rw, role="calibration"))
    maxes = [np.array([x]) for x in a["100"].dropna()]
    mxp = F.boot_stat(maxes, np.max)[0]
    out.append(Finding("Fig. 2: audio alone, maximum one-way delay", "70.4 ms", mxp.show(1e3, "{:.1f}", " ms") + " (max over all replications)",
                       F.within(0.0704, mxp), rw + " (" + F.RULE_BOOT + ")",
                       F.because(mxp.p95 < 0.0704, f"even the 95th percentile of the pooled maximum ({mxp.p95 * 1e3:.1f} ms) is below "
                                 "70.4 ms: the link's delay tail is lighter than the measured one"), role="calibration"))
    v25, v75 = F.within(0.015, p25), F.within(0.021, p75)
    out.append(Finding("Fig. 2: audio alone, 25–75th percentile 15–21 ms", "15–21 ms",
                       f"25th {p25.show(1e3, '{:.1f}', ' ms')}, 75th {p75.show(1e3, '{:.1f}', ' ms')}", F.worst([v25, v75]),
                       rw + " (each end), both must hold", role="calibration"))
    above40 = M.owd(audio_m, None, window="all").assign(hi=lambda d: d.owd_ns > 40e6).groupby("run_id").hi.mean()
    out.append(Finding("Fig. 2: delays below 40 ms except a handful of packets", "a handful above 40 ms",
                       F.spread(above40).show(100, "{:.2f}", " %") + " above 40 ms", F.side(above40, 0.01, below=True),
                       F.rule_side("1 % of the packets", True), role="calibration"))
    lost = M.rtp_summary(audio_m, None, window="all")
    per_run_lost = [np.r_[np.ones(int(r.sent - r.received)), np.zeros(int(r.received))] for r in lost.itertuples()]
    lp = F.boot_stat(per_run_lost, np.mean)[0]
    n_lost, n_sent = int(lost.sent.sum() - lost.received.sum()), int(lost.sent.sum())
    has_loss = float(ln.access.get("down_loss", 0) or 0) > 0
    out.append(Finding("Fig. 2: audio alone, loss rate", "0.05 %", lp.show(100, "{:.3f}", " %") + f" (pooled over replications: {n_lost} "
                       f"of {n_sent} packets)", F.within(0.0005, lp), rw + " (" + F.RULE_BOOT + ")",
                       F.join_why(F.because(n_lost == 0 and not has_loss, "no packet lost: the link has no radio losses (no down_loss)"),
                                  F.because(n_lost == 0 and has_loss, "no packet lost in these replications although the link has "
                                            "down_loss: its losses are rare"),
                                  F.because(n_lost > 0 and lp.p75 < 0.0005, f"{n_lost} packets lost, fewer than 0.05 % of {n_sent}")),
                       role="calibration"))

    # ---- Fig. 3: bulk
    b = _per_run_owd(bulk_m, bulk_r, [0.25, 0.5], "overlap")
    out.append(Finding("Fig. 3: bulk download, median one-way delay", "1.42 s", F.spread(b["50"]).show(1, "{:.2f}", " s"),
                       F.within(1.42, b["50"]), rw, role="calibration"))
    ow = M.owd(bulk_m, None, window="overlap").merge(bulk_r[["run_id", "tcp_start_ns"]], on="run_id")
    ow["t"] = (ow.send_ns - ow.tcp_start_ns) / 1e9
    ow["s"] = ow.owd_ns / 1e9
    first1 = ow[ow.s >= 1.0].groupby("run_id").t.min()
    ramp_share = (ow.assign(before=ow.t < ow.run_id.map(first1).fillna(np.inf)).groupby("run_id").before.mean())
    rs = F.spread(ramp_share)
    s25 = F.spread(b["25"])
    out.append(Finding("Fig. 3: bulk download, 25th percentile one-way delay", "0.5 s", s25.show(1, "{:.2f}", " s"),
                       F.within(0.5, s25), rw,
                       F.join_why(F.because(s25.p25 > 0.5 and rs.p50 < 0.25,
                                            f"only {rs.p50 * 100:.0f} % of a transfer's audio packets (median) are sent before the queue first "
                                            "reaches 1 s: the ramp is short, so few packets see less than 0.5 s"),
                                  F.because(s25.p75 < 0.5 and rs.p50 > 0.25,
                                            f"{rs.p50 * 100:.0f} % of a transfer's audio packets (median) are sent before the queue first "
                                            "reaches 1 s: the ramp is long"))))
    post = ow[ow.t >= RAMP_S]
    band = post.assign(inb=(post.s >= 1.5) & (post.s <= 2.5)).groupby("run_id").inb.mean()
    post_med = F.spread(post.groupby("run_id").s.median())
    vb = F.side(band, 0.5, below=False)
    drain = 500 * 1500 * 8 / ln.mean_bps if ln.mean_bps == ln.mean_bps else float("nan")
    out.append(Finding("Fig. 3: during a bulk download the delay stays around 1.5–2.5 s", "1.5–2.5 s",
                       f"{F.spread(band).show(100, '{:.0f}', ' %')} of the packets sent ≥ {RAMP_S:g} s after the start lie in 1.5–2.5 s; "
                       f"their median OWD {post_med.show(1, '{:.2f}', ' s')}", vb,
                       F.rule_side("half of the packets (share in 1.5–2.5 s)", False),
                       F.because(vb != "agrees" and post_med.p75 < 1.5 and drain == drain,
                                 f"a full 500-packet buffer drains in {drain:.2f} s at the link's mean {ln.mean_bps / 1e6:.2f} Mbit/s"
                                 + (f", so a queue of 1.5 s needs {1.5 / drain * 100:.0f} % of it standing; CUBIC keeps "
                                    f"{post_med.p50 / drain * 100:.0f} % (median)" if drain > 1.5 else
                                    ": the buffer cannot hold 1.5 s at this rate"))))

    # ---- Fig. 4
    w = _per_run_owd(web_m, web_r, [0.5, 0.75], "overlap")

    def col(c: str, n: int, iw: int) -> np.ndarray:
        return w[(w.n == n) & (w.iw == iw)][c].to_numpy(dtype=float)

    lv40 = _levels(web_m, web_r, 40.0)
    owp = M.owd(web_m, None, window="overlap").merge(web_r[["run_id", "n", "iw", "tcp_start_ns"]], on="run_id")
    owp["t"] = (owp.send_ns - owp.tcp_start_ns) / 1e9

    def later_share(n: int, iw: int, above_s: float) -> float:
        g = owp[(owp.n == n) & (owp.iw == iw) & (owp.owd_ns > above_s * 1e9)]
        return float((g.t >= IW_PHASE_S).mean()) if len(g) else float("nan")

    vs = {n: F.side(col("75", n, 3), 0.150, below=True) for n in (1, 2, 6)}
    bad = [n for n, v in vs.items() if v != "agrees"]
    late = {n: later_share(n, 3, 0.150) for n in bad}
    out.append(Finding("Fig. 4: with IW3 the one-way delay stays below 150 ms up to the 75th percentile, for every n",
                       "75th pct < 150 ms (n = 1, 2, 6)",
                       "75th pct: " + ", ".join(f"n={n} {F.spread(col('75', n, 3)).show(1e3, '{:.0f}', ' ms')}" for n in (1, 2, 6)),
                       F.worst(list(vs.values())), F.rule_side("150 ms", True) + "; for every n",
                       F.because(bool(late) and all(x > 0.5 for x in late.values()),
                                 "of the packets above 150 ms, " + ", ".join(f"n={n}: {x * 100:.0f} %" for n, x in late.items())
                                 + f" were sent ≥ {IW_PHASE_S:g} s after the TCP start, after the initial windows: the queue the "
                                 "later slow-start rounds build, not the IW burst")))
    v10 = {n: F.side(col("50", n, 10), 0.150, below=True) for n in (1, 2)}
    late10 = {n: later_share(n, 10, 0.150) for n, v in v10.items() if v != "agrees"}
    out.append(Finding("Fig. 4: with IW10 the median one-way delay stays below 150 ms with one and two flows", "median < 150 ms (IW10, n = 1, 2)",
                       ", ".join(f"n={n} {F.spread(col('50', n, 10)).show(1e3, '{:.0f}', ' ms')}" for n in (1, 2)),
                       F.worst(list(v10.values())), F.rule_side("150 ms", True) + "; for n = 1 and 2",
                       F.because(bool(late10) and all(x > 0.5 for x in late10.values()),
                                 "of the packets above 150 ms, " + ", ".join(f"n={n}: {x * 100:.0f} %" for n, x in late10.items())
                                 + f" were sent ≥ {IW_PHASE_S:g} s after the TCP start: the later slow-start rounds")))
    m610 = F.spread(col("50", 6, 10))
    out.append(Finding("Fig. 4: the median one-way delay with six IW10 flows approaches 200 ms", "≈ 200 ms", m610.show(1e3, "{:.0f}", " ms"),
                       F.within(0.200, m610), rw))

    out.append(F.ordering("Fig. 4: every IW10 case has a higher one-way delay than six IW3 flows", "IW10 (n = 1, 2, 6) > 6 × IW3",
                         [(f"n={n} IW10 vs 6×IW3", col("50", n, 10), col("50", 6, 3)) for n in (1, 2, 6)], "above", 1e3, " ms"))
    out.append(F.ordering("Fig. 4: IW10 gives a notably higher one-way delay than IW3 for the same n", "IW10 > IW3 for n = 1, 2, 6",
                         [(f"n={n}", col("50", n, 10), col("50", n, 3)) for n in (1, 2, 6)], "above", 1e3, " ms"))
    out.append(F.ordering("Fig. 4: six flows delay the audio more than one (same IW)", "n = 6 > n = 1",
                         [(f"IW{iw}", col("50", 6, iw), col("50", 1, iw)) for iw in (3, 10)], "above", 1e3, " ms"))
    jl = jb_ms(M.jb_loss(web_m, None, jbs_ms=JBS)).merge(web_r[["run_id", "n", "iw"]], on="run_id")

    def loss(n: int, iw: int, jb: float, what: str = "loss_rate") -> np.ndarray:
        g = jl[(jl.n == n) & (jl.iw == iw) & (jl.jb_ms == jb)]
        if what == "late":
            return (g.late / g.packets.clip(lower=1)).to_numpy(dtype=float)
        return g[what].to_numpy(dtype=float)

    late63 = F.spread(loss(6, 3, 40.0, "late"))
    out.append(Finding("Fig. 4: six IW3 flows raise the delay of roughly 40 % of the packets (an earlier increase)", "≈ 40 % of the packets",
                       late63.show(100, "{:.0f}", " %") + " delayed more than 40 ms above the base delay", F.within(0.40, late63),
                       rw + "; 'raised' = OWD above the pre-TCP base delay + 40 ms"))

    # ---- Table 1
    ip = M.ipdv(web_m, None, window="overlap").merge(web_r[["run_id", "n", "iw"]], on="run_id")
    per_run_ipdv = {(iw, n): [g.ipdv_ns.to_numpy() / 1e9 for _, g in ip[(ip.n == n) & (ip.iw == iw)].groupby("run_id")]
                    for iw in (3, 10) for n in (1, 2, 6)}
    bq = {k: F.boot_pooled(v, [0.90, 0.99]) for k, v in per_run_ipdv.items()}
    boot = {q: {k: bq[k][i] for k in bq} for i, q in enumerate(("90", "99"))}
    for q in ("90", "99"):
        bs = boot[q]
        vv = [F.within(PAPER_TABLE1[k][q], bs[k]) for k in bs]
        out.append(Finding(f"Table 1: {q}th percentile of IPDV per (IW, n)", ", ".join(f"IW{iw} n={n} {PAPER_TABLE1[(iw, n)][q] * 1e3:.0f}" for iw, n in bs) + " ms",
                           ", ".join(f"IW{iw} n={n} {bs[(iw, n)].show(1e3, '{:.0f}')}" for iw, n in bs) + " ms",
                           F.worst(vv), rw + " (each cell; " + F.RULE_BOOT + "); all cells must hold",
                           F.because("agrees" in vv and F.worst(vv) != "agrees",
                                     "agrees at " + ", ".join(f"IW{iw} n={n}" for (iw, n), v in zip(bs, vv) if v == "agrees") + " only")))
    b99 = boot["99"]
    outs = [F.outcome(b99[(10, n)], b99[(3, n)], "above") for n in (1, 2, 6)]
    out.append(Finding("Table 1: high-end IPDV (99th percentile) larger with IW10 than IW3 for each n", "IW10 > IW3 (n = 1, 2, 6)",
                       F.tally(outs) + " — " + "; ".join(f"n={n}: {b99[(3, n)].show(1e3)} vs {b99[(10, n)].show(1e3)} ms" for n in (1, 2, 6)),
                       F.count_verdict(outs), F.RULE_ORDER + " (" + F.RULE_BOOT + "); " + F.RULE_COUNT,
                       F.because("tie" in outs, "IQRs overlap (tie) at " + ", ".join(f"n={n}" for n, o in zip((1, 2, 6), outs) if o == "tie") + ".")))

    # ---- Fig. 5
    v = {n: F.side(loss(n, 10, 40.0), 0.8, below=False) for n in (1, 2, 6)}
    out.append(Finding("Fig. 5: IW10 drives the loss to nearly 100 % at small jitter buffers", "≈ 100 % at 40 ms (IW10)",
                       "40 ms JB: " + ", ".join(f"n={n} {F.spread(loss(n, 10, 40.0)).show(100, '{:.0f}', ' %')}" for n in (1, 2, 6)),
                       F.worst(list(v.values())), F.rule_side("80 % ('nearly 100 %')", False) + "; for every n"))
    l63 = F.spread(loss(6, 3, 40.0))
    out.append(Finding("Fig. 5: IW3 with many parallel flows also loses a lot", "significant loss, n = 6 IW3",
                       "40 ms JB: " + l63.show(100, "{:.0f}", " %"), F.side(l63, 0.3, below=False),
                       F.rule_side("30 % ('significant')", False)))
    out.append(F.ordering("Fig. 5: IW10 loses more than IW3 (same n, same jitter buffer)", "IW10 > IW3 in all 18 (n, JB) cases",
                         [(f"n={n} {int(jb)} ms", loss(n, 10, jb), loss(n, 3, jb)) for n in (1, 2, 6) for jb in JBS], "above", 100, " %"))
    pure = jl[jl.jb_ms == 40.0]
    pshare = (pure.pure / (pure.pure + pure.late).clip(lower=1)).to_numpy(dtype=float)
    out.append(Finding("Fig. 5: the losses are almost solely delay-based, not pure losses", "almost solely delay-based",
                       F.spread(pshare).show(100, "{:.1f}", " %") + " of the 40 ms-JB losses are pure (all (n, IW))",
                       F.side(pshare, 0.05, below=True), F.rule_side("5 % pure losses", True)))

    # ---- Fig. 6 (40 ms JB)
    ids = {(n, iw): web_r[(web_r.n == n) & (web_r.iw == iw)].run_id.tolist() for n in (1, 2, 6) for iw in (3, 10)}
    T = IW_PHASE_S
    lvl5_1 = F.spread(_share(lv40, ids[(1, 3)], 0, 2, 5))
    early1, late1 = _share(lv40, ids[(1, 3)], 0, T, 2), _share(lv40, ids[(1, 3)], T, 1.0, 2)
    va = [F.side(lvl5_1, 0.05, below=True), {"win": "agrees", "tie": "inconclusive", "loss": "disagrees"}[F.outcome(late1, early1, "below")]]
    out.append(Finding("Fig. 6a: one IW3 flow — the loss period level does not fall to the worst level and recovers right after the initial window (≈ 0.2 s)",
                       "level 5 not reached; quick recovery",
                       f"level-5 share {lvl5_1.show(100, '{:.0f}', ' %')}; levels ≥ 2: {F.spread(early1).show(100, '{:.0f}', ' %')} in 0–{T:g} s, "
                       f"{F.spread(late1).show(100, '{:.0f}', ' %')} in {T:g}–1 s",
                       F.worst(va), F.rule_side("5 % at level 5", True) + "; and levels ≥ 2 lower after the IW phase than in it (" + F.RULE_ORDER + "); both must hold",
                       F.because(va[1] != "agrees" and F.spread(late1).p50 > 0.2,
                                 f"after the IW phase {F.spread(late1).p50 * 100:.0f} % of the packets (median) are still at level ≥ 2: "
                                 "the later slow-start rounds keep the queue above base + 40 ms")))
    e1, e2 = _share(lv40, ids[(1, 3)], 0, T, 2), _share(lv40, ids[(2, 3)], 0, T, 2)
    mid2, lat2 = _share(lv40, ids[(2, 3)], T, 2 * T, 2), _share(lv40, ids[(2, 3)], 2 * T, 1.5, 2)
    ob = [F.outcome(e2, e1, "above"), F.outcome(mid2, e2, "below"), F.outcome(lat2, mid2, "above")]
    out.append(Finding("Fig. 6b: two IW3 flows — the initial windows hurt more than one flow's, the level recovers once they are through, "
                       "then worsens again as the windows open", "worse IW phase; recovery; worse again",
                       f"levels ≥ 2: IW phase 0–{T:g} s n=2 {F.spread(e2).show(100, '{:.0f}', ' %')} vs n=1 {F.spread(e1).show(100, '{:.0f}', ' %')}; "
                       f"{T:g}–{2 * T:g} s {F.spread(mid2).show(100, '{:.0f}', ' %')}; {2 * T:g}–1.5 s {F.spread(lat2).show(100, '{:.0f}', ' %')} — " + F.tally(ob),
                       F.count_verdict(ob), F.RULE_ORDER + "; " + F.RULE_COUNT,
                       F.because(ob[1] != "win", f"no recovery after the IW phase: levels ≥ 2 stay at {F.spread(mid2).p50 * 100:.0f} % (median) in "
                                 f"{T:g}–{2 * T:g} s")))
    dur = F.spread(((web_r.tcp_end_ns - web_r.tcp_start_ns) / 1e9).to_numpy(dtype=float))
    out.append(Finding("Fig. 6: the short transfers start to complete around 1 s after the TCP start (the samples decline)", "≈ 1 s",
                       dur.show(1, "{:.2f}", " s") + " from the first SYN to the last byte (all n, IW)", F.within(1.0, dur), rw))
    w6 = F.spread(_share(lv40, ids[(6, 3)], 0, 60, 4))
    out.append(Finding("Fig. 6c: six IW3 flows — the level is very bad from the start for almost the whole transfer", "levels 4–5 dominate",
                       w6.show(100, "{:.0f}", " %") + " of the packets at level 4–5 (whole transfer)", F.side(w6, 0.5, below=False),
                       F.rule_side("half of the packets", False)))
    w110 = F.spread(_share(lv40, ids[(1, 10)], 0, 60, 5))
    out.append(Finding("Fig. 6d: one IW10 flow — the worst level dominates until the transfer completes, like six IW3 flows", "level 5 dominant",
                       w110.show(100, "{:.0f}", " %") + " of the packets at level 5 (whole transfer)", F.side(w110, 0.5, below=False),
                       F.rule_side("half of the packets", False)))
    oi = [F.outcome(_share(lv40, ids[k], 0, T, 2), _share(lv40, ids[k], T, 60, 2), "above") for k in ids]
    out.append(Finding("Fig. 6 / conclusions: the worst effect of a short transfer is during the initial windows", "IW phase worst, every (n, IW)",
                       F.tally(oi) + f" (levels ≥ 2 in 0–{T:g} s vs after)", F.count_verdict(oi), F.RULE_ORDER + "; " + F.RULE_COUNT,
                       F.because("loss" in oi, "later worse than the IW phase at " + ", ".join(f"n={n} IW{iw}" for (n, iw), o in zip(ids, oi) if o == "loss")
                                 + ": the slow-start rounds after the IW build a larger queue than the IW itself")))

    # ---- Fig. 7 (all replications, n pooled)
    acc: dict[tuple[int, float], np.ndarray] = {}
    for jb in JBS:
        lv = _levels(web7_m, web7_r, jb)
        for iw in (3, 10):
            acc[(iw, jb)] = _count(lv, web7_r[web7_r.iw == iw].run_id.tolist(), 0, 2.0, 1)
    out.append(F.ordering("Fig. 7: fewer acceptable packets (levels 0–1) with IW10 than IW3 at every jitter buffer", "IW10 < IW3 for every JB",
                         [(f"{int(jb)} ms", acc[(10, jb)], acc[(3, jb)]) for jb in JBS], "below", 1, " pkts"))
    return out
