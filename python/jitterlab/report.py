"""`jitterlab report DIR [DIR ...]` and `jitterlab.report(...)`: the standard figures of any output
directory (a simulation, a testbed run, a capture analysis, a sweep), several overlaid, in one
self-contained HTML report (`jitterlab.report_html.Report`, whose names stay importable from here).

This module is callable: `jitterlab.report(...)` is `report(...)` (see `jitterlab._callable`)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import pandas as pd

from jitterlab import _callable, _io
# the report page (its names stay importable from here: presets build their reports with it)
from jitterlab.report_html import ROLE_LABELS, VERDICTS, Claim, Report, Section, _json_script_safe, _write_csv  # noqa: F401

if TYPE_CHECKING:
    from jitterlab._fspath import FsPath


# ------------------------------------------------------------------------------------------------
# `jitterlab report DIR [DIR ...]`: the standard figures of any output directory


@dataclass
class Output:
    """One result directory as the report reads it.

    Attributes
    ----------
    path : Path or FsPath
        The directory, or the URL (`jitterlab._fspath.FsPath`) it was read from.
    label : str
        Name of the directory's curves in overlaid figures.
    source : str
        ``sim``, ``testbed``, ``capture`` or ``sweep``.
    tables : dict of str to DataFrame
        The tables found (media_packets, tcp_flows, runs, …).
    params : list of str
        Columns of ``runs`` that group the runs (a sweep's varied parameters).
    manifest : dict
        manifest.json or sweep.json as written.
    """

    path: Path | FsPath
    label: str
    source: str
    tables: dict[str, pd.DataFrame]
    params: list[str]
    manifest: dict[str, Any]

    @property
    def provenance(self) -> dict[str, Any]:
        return dict(self.manifest.get("provenance") or {"note": "not recorded (written before provenance existed)"})


class OutputError(ValueError):
    """A directory that is not a jitterlab output."""


#: The tables a report reads, with the columns it needs of each (docs/tables.md).
_NEEDED_COLUMNS = {"runs": ("run_id", "tcp_start_ns", "tcp_end_ns"),
                   "media_packets": ("run_id", "flow_id", "seq", "send_ns", "recv_ns", "size"),
                   "tcp_flows": ("run_id", "flow_id")}
#: Largest manifest.json / sweep.json read (a sweep's is a few kB; a 10,000-run one a few MB).
MAX_MANIFEST_BYTES = 64 << 20


def _read_manifest(f: Any) -> dict[str, Any]:
    """A manifest.json or sweep.json as a dict; OutputError naming the file when it is not one."""
    try:
        raw = f.read_bytes()
        if len(raw) > MAX_MANIFEST_BYTES:
            raise OutputError(f"{f}: {len(raw):,} bytes, more than a manifest's limit of {MAX_MANIFEST_BYTES:,}")
        man = json.loads(raw)
    except OSError as e:
        raise OutputError(f"{f}: cannot read: {e.strerror or e}") from None
    except RecursionError:
        raise OutputError(f"{f}: nested too deeply to be a jitterlab manifest") from None
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise OutputError(f"{f}: not valid JSON ({e})") from None
    if not isinstance(man, dict):
        raise OutputError(f"{f}: expected a JSON object, got {type(man).__name__}")
    return man


def load_output(path: str | Path, label: str | None = None) -> Output:
    """Reads a simulate, sweep, analyze or testbed output directory.

    Raises
    ------
    OutputError
        When `path` holds no manifest.json / sweep.json, or no media_packets and no tcp_flows.
    """
    from jitterlab import _fspath
    from jitterlab.tables import to_pandas

    p = _fspath.as_path(path)  # a local directory or an fsspec URL (a sweep written to s3://…)
    if not p.is_dir():
        raise OutputError(f"{p}: no such directory")
    if (p / "sweep.json").is_file():
        man = _read_manifest(p / "sweep.json")
        source = "sweep"
        params = man.get("params", [])
        if not isinstance(params, list) or not all(isinstance(x, str) for x in params):
            raise OutputError(f"{p / 'sweep.json'}: params: expected a list of names, got {json.dumps(params)[:80]}")
    elif (p / "manifest.json").is_file():
        man = _read_manifest(p / "manifest.json")
        source = man.get("source", "sim")
        if not isinstance(source, str):
            raise OutputError(f"{p / 'manifest.json'}: source: expected a string, got {json.dumps(source)[:80]}")
        params = []
    else:
        subs = sorted(d.name for d in p.iterdir() if d.is_dir() and ((d / "sweep.json").is_file() or (d / "manifest.json").is_file()))
        hint = f"; it holds the outputs {', '.join(subs)}: give them as separate arguments" if subs else ""
        raise OutputError(f"{p}: not a jitterlab output (no manifest.json or sweep.json){hint}")
    tables = {}
    files: list[Path | _fspath.FsPath] = list(p.glob("*.parquet"))
    for f in sorted(files, key=lambda f: f.name):
        name = f.name.removesuffix(".parquet")
        if name not in _NEEDED_COLUMNS:  # what a report reads; other tables are not opened
            continue
        try:
            t = _fspath.read_parquet(f)
        except (OSError, ValueError) as e:  # ArrowInvalid is a ValueError: truncated, garbage
            raise OutputError(f"{f}: not a readable Parquet file ({' '.join(str(e).split())[:160]})") from None
        missing = [c for c in _NEEDED_COLUMNS[name] if c not in t.column_names]
        if missing and (t.num_rows or name == "runs"):  # an empty table may be stored without columns
            raise OutputError(f"{f}: has no column {missing[0]!r} (not a jitterlab {name} table)")
        tables[name] = to_pandas(t)
    if "runs" not in tables or ("media_packets" not in tables and "tcp_flows" not in tables):
        raise OutputError(f"{p}: no runs.parquet with media_packets.parquet or tcp_flows.parquet")
    prov = man.get("provenance")
    if prov is not None and not isinstance(prov, dict):
        raise OutputError(f"{p}: provenance: expected a table, got {type(prov).__name__}")
    params = [c for c in params if c in tables["runs"].columns]
    return Output(p, label or (p.name if isinstance(p, _fspath.FsPath) else p.resolve().name), source, tables, params, man)


#: Marks a directory as a report's own output (hidden, so the emptiness check ignores it).
REPORT_MARK = ".jitterlab-report"


def prepare_out(out: str | Path, inputs: Iterable[Any] = (), force: bool = False, option: str = "--out") -> Path:
    """Checks, creates and locks a report's output directory, by the rules of every command's
    --out: a local directory (a URL is refused before anything is written), never `/` nor a
    directory that is or holds one of `inputs`; empty, or a report's own earlier output (marked
    REPORT_MARK), unless `force`. The directory is locked (`_io.hold_lock`) before it is looked at."""
    d = _io.local_out(out, option, "report")
    full = d.resolve()
    if full == Path(full.anchor):
        raise _io.OutputError(f"{option} {d}: is the root directory; choose a directory of its own")
    for i in inputs:
        if isinstance(i, (str, Path)):
            p = Path(i).resolve()
            if p == full or full in p.parents:
                raise _io.OutputError(f"{option} {d}: holds the input {i}; write the report to a directory of its own")
    _io.hold_lock(_io.make_out_dir(d, option), option)
    try:
        entries = [e for e in os.listdir(d) if not e.startswith(".")]
    except OSError as e:
        raise _io._oserror(d, e, "list the output directory") from None
    if entries and not (d / REPORT_MARK).is_file() and not force:
        raise _io.OutputError(f"{option} {d}: is a non-empty directory that holds no earlier report; choose another, "
                              "empty it, or pass --force to write into it")
    _io.write_text_atomic(d / REPORT_MARK, "a jitterlab report's output directory\n")
    return d


def _combine(outputs: list[Output]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Tables of all outputs in one set: run ids made distinct, a `group` column in runs
    (input label and sweep parameters), and the groups in order of appearance."""
    tables: dict[str, list[pd.DataFrame]] = {"media_packets": [], "tcp_flows": [], "runs": []}
    order: list[str] = []
    offset = 0
    for o in outputs:
        runs = o.tables["runs"].copy()
        ids = runs["run_id"].astype("int64")
        parts = [runs[c].astype(str).radd(f"{c}=") for c in o.params]
        if len(outputs) > 1 or not parts:
            parts.insert(0, pd.Series([o.label] * len(runs), index=runs.index))
        group = parts[0].astype(str)
        for s in parts[1:]:
            group = group + ", " + s
        runs["group"] = group.to_numpy()
        runs["run_id"] = ids + offset
        for g in runs.sort_values("run_id")["group"]:
            if g not in order:
                order.append(g)
        tables["runs"].append(runs[["run_id", "group", "tcp_start_ns", "tcp_end_ns"]])
        for name in ("media_packets", "tcp_flows"):
            t = o.tables.get(name)
            if t is not None and len(t):
                t = t.copy()
                t["run_id"] = t["run_id"].astype("int64") + offset
                tables[name].append(t)
        offset += int(ids.max()) + 1 if len(ids) else 0
    out = {k: pd.concat(v, ignore_index=True) if v else pd.DataFrame() for k, v in tables.items()}
    return out, order


def _ms(jb_s: pd.Series) -> pd.Series:
    """Jitter buffer sizes of a metrics table (seconds) in ms for display, rounded so that 0.07 s
    shows as 70, not 70.00000000000001."""
    return (jb_s * 1e3).round(6)


def build(outputs: list[Output], out_dir: str | Path, title: str | None = None, jb_ms: float = 40.0, *, pdf: bool = False,
          progress: bool = False) -> Path:
    """Writes the report of one or more outputs (overlaid: one curve per input and parameter
    point) into `out_dir` and returns the path of report.html.

    Figures: OWD CDF, IPDV CDF, loss behind a jitter buffer, MOS (G.107 E-model) against the
    jitter buffer, loss-period levels over time (runs with competing TCP), TCP goodput and
    completion time. Delay metrics use the TCP overlap window when every run has competing TCP,
    else the whole run.
    """
    import warnings

    import numpy as np

    from jitterlab import metrics, plots

    if not outputs:
        raise OutputError("no output directory given")
    t, order = _combine(outputs)
    media, runs, tcp = t["media_packets"], t["runs"], t["tcp_flows"]
    names = " + ".join(o.label for o in outputs)
    # seven figures: drawn here (saver processes would cost more to start, ~1 s of CPU each, than they save)
    rep = Report(title or f"jitterlab report: {names}", out_dir,
                 ", ".join(f"{o.label} ({o.source}, {len(o.tables['runs'])} runs)" for o in outputs),
                 pdf=pdf, savers=False, progress=progress)
    for o in outputs:
        rep.add_provenance(o.label, o.provenance)
    rep.set_params({f"input {o.label}": {"path": str(o.path), "source": o.source, "runs": len(o.tables["runs"]),
                                         "grouped by": o.params or None} for o in outputs})
    has_tcp = bool(len(runs)) and bool(runs["tcp_start_ns"].notna().all())
    window = "overlap" if has_tcp else "all"
    wtext = "while the competing TCP ran (tcp_start_ns to tcp_end_ns)" if has_tcp else "over the whole run"
    reps = runs.groupby("group")["run_id"].nunique().to_dict()
    caption = f"{names} · window: {wtext} · runs per curve: " + ", ".join(f"{g}: {reps.get(g, 0)}" for g in order)
    summary: dict[str, dict[str, Any]] = {g: {"group": g, "runs": reps.get(g, 0)} for g in order}
    jbs = list(metrics.DEFAULT_JBS_MS)

    rep.section("Media delay", f"One-way delay and IPDV of the media packets, {wtext}.")
    if len(media):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", metrics.MetricsWarning)
            prep = metrics.prepare(media, runs)
            cdf = metrics.owd_cdf(prep, window=window, by="group")
            curves = [(g, cdf.loc[cdf.group == g, "owd_s"].to_numpy() * 1e3, cdf.loc[cdf.group == g, "p"].to_numpy()) for g in order if (cdf.group == g).any()]
            fig = plots.cdf_figure(curves, "one-way delay (ms)", "OWD CDF")
            plots.caption(fig, caption)
            rep.figure(fig, "owd_cdf", f"CDF of the one-way delay, pooled over runs. {caption}")
            for g, x, p in curves:
                summary[g]["owd_p50_ms"] = float(np.interp(0.5, p, x))
                summary[g]["owd_p99_ms"] = float(np.interp(0.99, p, x))
            ip = metrics.ipdv(prep, window=window).merge(runs[["run_id", "group"]], on="run_id")
            probs = np.linspace(0, 1, 201)
            icurves = [(g, np.quantile(ip.loc[ip.group == g, "ipdv_ns"].to_numpy(dtype=float), probs) / 1e6, probs)
                       for g in order if (ip.group == g).any()]
            fig = plots.cdf_figure(icurves, "IPDV (ms), RFC 3393 consecutive packets", "IPDV CDF")
            plots.caption(fig, caption)
            rep.figure(fig, "ipdv_cdf", f"CDF of the inter-packet delay variation. {caption}")

            rep.section("Loss and quality behind a jitter buffer",
                        "A packet is lost when it never arrives or arrives later than the base delay plus the jitter buffer.")
            jl = metrics.jb_loss_summary(prep, jbs_ms=jbs, by="group", window=window)
            series = [(g, _ms(d.jb_s), d["median"] * 100, d.p25 * 100, d.p75 * 100) for g in order for d in [jl[jl.group == g]] if len(d)]
            fig = plots.spread_figure(series, "jitter buffer (ms)", "loss incl. late packets (%)", "Loss vs jitter buffer")
            plots.caption(fig, caption)
            rep.figure(fig, "loss_vs_jb", f"Median and 25th–75th percentiles over runs of the loss rate behind each jitter buffer. {caption}")
            for g, x, med, _, _ in series:
                summary[g][f"loss_{jb_ms:g}ms_jb_pct"] = float(np.interp(jb_ms, np.asarray(x, float), np.asarray(med, float)))
            mos = metrics.emodel_mos(prep, jbs_ms=jbs, window=window).merge(runs[["run_id", "group"]], on="run_id")
            gm = mos.groupby(["group", "jb_s"])["mos"]
            ms = pd.DataFrame({"med": gm.median(), "p25": gm.quantile(0.25), "p75": gm.quantile(0.75)}).reset_index()
            series = [(g, _ms(d.jb_s), d.med, d.p25, d.p75) for g in order for d in [ms[ms.group == g]] if len(d)]
            fig = plots.spread_figure(series, "jitter buffer (ms)", "MOS (G.107 E-model, G.711 with PLC)", "MOS vs jitter buffer",
                                      ylim=(1.0, 4.5))
            plots.caption(fig, caption)
            rep.figure(fig, "mos_vs_jb", "Median and 25th–75th percentiles over streams of the MOS at each jitter buffer "
                       f"(series drawn at the same x: equal values overlap). {caption}")
            for g, x, med, _, _ in series:
                summary[g]["mos_best_median"] = float(np.nanmax(np.asarray(med, float)))
            if has_tcp:
                rep.section("Loss periods over time", f"Loss-period levels (PAM 2013 Table 2) behind a {jb_ms:g} ms jitter buffer, "
                            "per 20 ms bin since the competing TCP started, packets per replication.")
                lv = metrics.levels_over_time(prep, jb_ms=jb_ms, by="group")
                panels = [(g, lv[lv.group == g]) for g in order if (lv.group == g).any()]
                fig = plots.levels_figure(panels, f"Loss-period levels, {jb_ms:g} ms jitter buffer")
                plots.caption(fig, caption)
                rep.figure(fig, "levels_over_time", f"Level 0 = received in time; 1–5 = loss periods of growing length. {caption}")
    else:
        rep.text("No media packets in the input(s).")

    if len(tcp):
        rep.section("Competing TCP", "Goodput (bytes received × 8 / time from SYN to the last byte acknowledged) and completion time per flow.")
        # captures cannot count drops (null); goodput and completion do not need them
        ts = metrics.tcp_summary(tcp.assign(drops=tcp["drops"].fillna(0))).merge(runs[["run_id", "group"]], on="run_id")
        groups = [(g, ts.loc[ts.group == g, "goodput_bps"].to_numpy() / 1e6) for g in order if (ts.group == g).any()]
        fig = plots.points_figure(groups, "goodput (Mbit/s)", "TCP goodput per flow")
        plots.caption(fig, caption)
        rep.figure(fig, "tcp_goodput", f"Each point a flow; black: median and 25th–75th percentiles. {caption}")
        comp = [(g, ts.loc[ts.group == g, "completion_s"].dropna().to_numpy()) for g in order]
        curves = [(g, np.sort(c), np.arange(1, len(c) + 1) / len(c)) for g, c in comp if len(c)]
        fig = plots.cdf_figure(curves, "completion time (s)", "TCP completion time")
        fig.axes[0].set_ylabel("fraction of flows ≤ x")
        plots.caption(fig, caption)
        rep.figure(fig, "tcp_completion", f"CDF of the flows' completion times (unfinished flows left out). {caption}")
        for g, v in groups:
            fin = v[np.isfinite(v)]
            summary[g]["tcp_flows"] = int((ts.group == g).sum())
            summary[g]["goodput_median_Mbps"] = float(np.median(fin)) if len(fin) else float("nan")
    rep.section("Summary")
    rep.table(pd.DataFrame(list(summary.values())), "One row per curve.", name="summary")
    rep.sections.insert(0, rep.sections.pop())  # the answer first, the figures it comes from after
    return rep.write()


def report(outputs: str | Path | Sequence[str | Path], out: str | Path | None = None, *, labels: Sequence[str] | None = None,
           title: str | None = None, jb_ms: float = 40.0, pdf: bool = False, progress: bool = False) -> Path:
    """The report of one or more output directories, as `jitterlab report DIR... --out OUT`:
    ``jitterlab.report("runs/web", "runs/web/report")``. `out` defaults to ``<the one
    input>/report``; `pdf` adds figures/<name>.pdf; `progress` prints a line per figure on stderr.
    Returns the path of report.html."""
    import os

    if isinstance(outputs, (str, os.PathLike)):
        outputs = [outputs]
    outs = list(outputs)
    if not outs:
        raise ValueError("parameter 'outputs': no output directory given")
    for o in outs:
        if not isinstance(o, (str, os.PathLike)):
            raise TypeError(f"parameter 'outputs': expected directory paths, got {type(o).__name__} {o!r}")
    labs: list[str | None] = list(labels or [])
    if len(labs) > len(outs):
        raise ValueError(f"parameter 'labels': {len(labs)} labels for {len(outs)} outputs")
    labs += [None] * (len(outs) - len(labs))
    if not isinstance(jb_ms, (int, float)) or isinstance(jb_ms, bool) or not 1.0 <= jb_ms:
        raise ValueError(f"parameter 'jb_ms': a jitter buffer in milliseconds (at least 1), got {jb_ms!r}")
    loaded = [load_output(o, lab) for o, lab in zip(outs, labs)]
    dest = Path(out) if out is not None else Path(outs[0]) / "report"
    return build(loaded, dest, title=title, jb_ms=float(jb_ms), pdf=pdf, progress=progress)


_callable.make_callable(__name__, report)  # `jitterlab.report(...)` is `report(...)`
