"""The PAM 2013 study's findings: every quantitative statement of the paper and its slides against
the data of one link (`findings`, `calibration_findings`), with the paper's Table 1 as printed."""
from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pandas as pd

from jitterlab import metrics as M
from jitterlab.presets import findings as F
from jitterlab.presets.common import jb_ms
from jitterlab.presets.findings import Finding
from jitterlab.presets.pam2013_scenario import JBS, Link, _data

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
    out = calibration_findings(d, ln)
    cond = _conditions(d, ln)
    jl = jb_ms(M.jb_loss(d["web_m"], None, jbs_ms=JBS)).merge(d["web_r"][["run_id", "n", "iw"]], on="run_id")
    out += _fig3_findings(d, ln)
    out += _fig4_findings(d, cond, jl)
    out += _table1_findings(d)
    out += _fig5_findings(jl)
    out += _fig6_findings(d, cond)
    out += _fig7_findings(d)
    return out


def _loss(jl: pd.DataFrame, n: int, iw: int, jb: float, what: str = "loss_rate") -> np.ndarray:
    """Per replication of (n, IW) behind jitter buffer `jb`: column `what` of `jl` (M.jb_loss's
    table with n and iw), or with ``what="late"`` the share of packets late."""
    g = jl[(jl.n == n) & (jl.iw == iw) & (jl.jb_ms == jb)]
    if what == "late":
        return (g.late / g.packets.clip(lower=1)).to_numpy(dtype=float)
    return g[what].to_numpy(dtype=float)


def _fig3_findings(d: dict[str, Any], ln: Link) -> list[Finding]:
    """The findings of Fig. 3 (a bulk download)."""
    bulk_m, bulk_r = d["bulk_m"], d["bulk_r"]
    out: list[Finding] = []
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
    return out


def _fig4_findings(d: dict[str, Any], cond: pd.DataFrame, jl: pd.DataFrame) -> list[Finding]:
    """The findings of Fig. 4 (n short flows)."""
    web_m, web_r = d["web_m"], d["web_r"]
    out: list[Finding] = []
    # ---- Fig. 4
    w = _per_run_owd(web_m, web_r, [0.5, 0.75], "overlap")

    def col(c: str, n: int, iw: int) -> np.ndarray:
        return w[(w.n == n) & (w.iw == iw)][c].to_numpy(dtype=float)

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

    loss = functools.partial(_loss, jl)

    late63 = F.spread(loss(6, 3, 40.0, "late"))
    t = F.tol_approx(0.40, SRC_FIG4)
    out.append(F.judged("Fig. 4: six IW3 flows raise the delay of roughly 40 % of the packets (an earlier increase)", "≈ 40 % of the packets", t,
                        late63.show(100, "{:.0f}", " %") + " delayed more than 40 ms above the base delay", late63,
                        rule="ours: 'raised' = OWD above the pre-TCP base delay + 40 ms (the paper reads it off the CDF's knee and does not define it)"))
    return out


def _table1_findings(d: dict[str, Any]) -> list[Finding]:
    """The findings of Table 1 (IPDV)."""
    web_m, web_r = d["web_m"], d["web_r"]
    out: list[Finding] = []
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
    return out


def _fig5_findings(jl: pd.DataFrame) -> list[Finding]:
    """The findings of Fig. 5 (loss behind the jitter buffer)."""
    out: list[Finding] = []
    # ---- Fig. 5
    loss = functools.partial(_loss, jl)
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
    return out


def _fig6_findings(d: dict[str, Any], cond: pd.DataFrame) -> list[Finding]:
    """The findings of Fig. 6 (loss period levels over time)."""
    web_m, web_r = d["web_m"], d["web_r"]
    out: list[Finding] = []
    # ---- Fig. 6 (40 ms JB)
    lv40 = _levels(web_m, web_r, 40.0)
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
    return out


def _fig7_findings(d: dict[str, Any]) -> list[Finding]:
    """The findings of Fig. 7 (the acceptable share)."""
    web7_m, web7_r = d["web7_m"], d["web7_r"]
    out: list[Finding] = []
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
