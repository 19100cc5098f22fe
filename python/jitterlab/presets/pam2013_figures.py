"""The PAM 2013 study's figures and tables, one function each (Figs. 2-7, Table 1, the E-model's MOS),
and the report sections they go in."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab import plots
from jitterlab.presets.common import caption, jb_ms
from jitterlab.report import Report
from jitterlab.presets.pam2013_findings import _T1, _ms_table
from jitterlab.presets.pam2013_scenario import BULK_SIZE, JBS, WEB_TOTAL, Link, _data


def _cdf_plot(ax, cdf: pd.DataFrame, label: str, style: dict) -> None:
    ax.plot(cdf["owd_s"] * 1e3, cdf["p"], label=label, **style)


def _paper_marks(ax, xs: Sequence[float], ys: Sequence[float], label: str = "paper (reported values)") -> None:
    """The paper's reported values as black crosses beside our curves."""
    ax.plot(list(xs), list(ys), linestyle="none", marker="x", markersize=9, markeredgewidth=2, color="black", label=label)


def _section(rep: Report, title: str, intro: str) -> None:
    """The section `title`, made current: new the first time, reused for the next link, so each
    figure's section holds that figure for every link, one after the other."""
    for sec in rep.sections:
        if sec.title == title:
            rep.sections.remove(sec)
            rep.sections.append(sec)
            return
    rep.section(title, intro)


@dataclass
class _Fig:
    """What every figure of one link's run needs besides its data: the report, the replication
    counts, the link, and the figures' tag, subdirectory and caption note."""

    rep: Report
    reps: int
    reps7: int
    ln: Link
    multi: bool
    tag: str
    sub: str
    link_note: str


def _figures(rep: Report, res: dict, reps: int, reps7: int, ln: Link, multi: bool = False, data: dict[str, Any] | None = None) -> int:
    """Every figure and table of the paper for one link's runs, each in its section; returns the
    number of figures."""
    d = data or _data(res, reps)
    (rep.fig_dir / ln.label).mkdir(parents=True, exist_ok=True)
    f = _Fig(rep, reps, reps7, ln, multi, f"[{ln.spec}] " if multi else "", f"{ln.label}/", f"link {ln.spec}")
    return sum(part(d, f) for part in (_fig2, _fig3, _fig4, _table1, _fig5, _fig6, _fig7, _emodel))


def _fig2(d: dict[str, Any], f: _Fig) -> int:
    """Fig. 2 (audio alone)."""
    rep, reps, tag, sub, link_note = f.rep, f.reps, f.tag, f.sub, f.link_note
    audio_m, audio_r = d["audio_m"], d["audio_r"]
    n_fig = 0
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
    return n_fig


def _fig3(d: dict[str, Any], f: _Fig) -> int:
    """Fig. 3 (a bulk download)."""
    rep, reps, tag, sub, link_note = f.rep, f.reps, f.tag, f.sub, f.link_note
    bulk_m, bulk_r, bulk_t = d["bulk_m"], d["bulk_r"], d["bulk_t"]
    n_fig = 0
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
    return n_fig


def _fig4(d: dict[str, Any], f: _Fig) -> int:
    """Fig. 4 (n short flows)."""
    rep, reps, tag, sub, link_note = f.rep, f.reps, f.tag, f.sub, f.link_note
    web_m, web_r = d["web_m"], d["web_r"]
    n_fig = 0
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
    return n_fig


def _table1(d: dict[str, Any], f: _Fig) -> int:
    """Table 1 (IPDV)."""
    rep, ln, multi, tag, sub = f.rep, f.ln, f.multi, f.tag, f.sub
    web_m, web_r = d["web_m"], d["web_r"]
    n_fig = 0
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
    return n_fig


def _fig5(d: dict[str, Any], f: _Fig) -> int:
    """Fig. 5 (loss behind the jitter buffer)."""
    rep, reps, ln, tag, sub, link_note = f.rep, f.reps, f.ln, f.tag, f.sub, f.link_note
    web_m, web_r = d["web_m"], d["web_r"]
    n_fig = 0
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
    return n_fig


def _fig6(d: dict[str, Any], f: _Fig) -> int:
    """Fig. 6 (loss period levels over time)."""
    rep, reps, tag, sub, link_note = f.rep, f.reps, f.tag, f.sub, f.link_note
    web_m, web_r = d["web_m"], d["web_r"]
    n_fig = 0
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
    return n_fig


def _fig7(d: dict[str, Any], f: _Fig) -> int:
    """Fig. 7 (the acceptable share)."""
    rep, reps7, tag, sub, link_note = f.rep, f.reps7, f.tag, f.sub, f.link_note
    web7_m, web7_r = d["web7_m"], d["web7_r"]
    n_fig = 0
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
    return n_fig


def _emodel(d: dict[str, Any], f: _Fig) -> int:
    """The E-model's MOS per workload and jitter buffer."""
    rep, reps, tag, sub, link_note = f.rep, f.reps, f.tag, f.sub, f.link_note
    audio_m, audio_r, bulk_m, bulk_r, web_m, web_r = d["audio_m"], d["audio_r"], d["bulk_m"], d["bulk_r"], d["web_m"], d["web_r"]
    n_fig = 0
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
