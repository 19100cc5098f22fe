"""One self-contained HTML report per experiment: interactive figures (hover values, zoom; plotly.js
inlined, so the file works offline), PNG, SVG and CSV files of every figure written beside it and
linked, tables, every parameter, the provenance block (`jitterlab.provenance`), and each finding of
a paper set against our measured value with a verdict that reads without colour ("agrees",
"disagrees", "partly").

Every figure is drawn once with matplotlib (`jitterlab.plots`); the interactive view is built from
the same artists (`plots.to_plotly`), and a figure the converter cannot take is embedded as PNG.
Opening ``report.html#selftest`` runs a self-test (a zoom and a hover on the first figure) and
records the outcome on ``<body>`` (data-selftest-zoom / data-selftest-hover): what the Chromium
test reads."""
from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

import pandas as pd

from jitterlab import _io

if TYPE_CHECKING:
    from jitterlab._fspath import FsPath


VERDICTS = {"agrees": "✔ agrees", "disagrees": "✘ disagrees", "partly": "≈ partly", "inconclusive": "? inconclusive",
            "n/a": "– not measured"}
ROLE_LABELS = {"calibration": "calibration target", "held-out": "held-out prediction", "choice": "modelling choice"}


_SAVER: Any = None


def _save_figure(data: bytes, png: str, svg: str, pdf: bool = False) -> None:
    """Renders a pickled figure to PNG and SVG, and PDF with `pdf` (in a saver process)."""
    import pickle

    from jitterlab import plots

    plt = plots.pyplot()  # the Agg backend and the figure style of the parent
    fig = pickle.loads(data)
    _save_figure_here(fig, Path(png), Path(svg), pdf)
    plt.close(fig)


def _save_later(fig: Any, png: Path, svg: Path, pdf: bool = False, in_process: bool = False) -> Any:
    """Saves `fig` as `png` and `svg` in a pool of saver processes and returns the future (None:
    saved here at once). Rendering (text layout, Agg, SVG) is most of a preset's post-processing
    and pure CPU under the GIL: in other processes the figures render side by side, and beside
    the metrics the preset computes meanwhile. JITTERLAB_FIGURE_PROCS=0 saves in-process."""
    import pickle

    pool = None if in_process else _start_savers()
    try:
        data = pickle.dumps(fig) if pool is not None else None
    except Exception:  # an artist that does not pickle: drawn here
        data = None
    if pool is None or data is None:
        _save_figure_here(fig, png, svg, pdf)
        return None
    return pool.submit(_save_figure, data, str(png), str(svg), pdf)


def _warm() -> None:
    from jitterlab import plots

    plots.pyplot()  # matplotlib imported before the first figure arrives


def _start_savers() -> Any:
    """The saver pool (None: JITTERLAB_FIGURE_PROCS=0), started once; each process imports
    matplotlib at once, while the caller goes on (a preset: during its runs)."""
    global _SAVER
    import os

    procs = int(os.environ.get("JITTERLAB_FIGURE_PROCS", str(min(8, os.cpu_count() or 1))))
    if procs <= 0:
        return None
    if _SAVER is None:
        from concurrent.futures import ProcessPoolExecutor

        from jitterlab import _procs, _spawn

        # spawn: no inherited threads or locks (pyarrow's pools, the sweep's combiner); nor the
        # caller's script run again (a script without a __main__ guard works); savers die with us
        _SAVER = ProcessPoolExecutor(max_workers=procs, mp_context=_spawn.context(),
                                     initializer=_procs.die_with_parent, initargs=(os.getpid(),))
        for _ in range(procs):
            _SAVER.submit(_warm)
    return _SAVER


def _save_figure_here(fig: Any, png: Path, svg: Path, pdf: bool = False) -> None:
    # under a temporary name, renamed when complete (the format named: the name has no suffix)
    _io.write_atomic(png, lambda t: fig.savefig(t, format="png", dpi=130, bbox_inches="tight"))
    _io.write_atomic(svg, lambda t: fig.savefig(t, format="svg", bbox_inches="tight"))
    if pdf:  # for papers; ~0.3 s a figure, so on request
        _io.write_atomic(svg.with_suffix(".pdf"), lambda t: fig.savefig(t, format="pdf", bbox_inches="tight"))


@dataclass
class Claim:
    """A finding of the paper and what we measured."""

    claim: str
    paper: str
    ours: str
    verdict: str  # agrees | disagrees | partly | n/a
    why: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {sorted(VERDICTS)}, got {self.verdict!r}")


@dataclass
class _Block:
    kind: str
    payload: Any


@dataclass
class Section:
    title: str
    intro: str = ""
    blocks: list[_Block] = field(default_factory=list)


def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "x"


class Report:
    """An HTML report under construction: sections of text, figures, tables and claims.

    Parameters
    ----------
    title, subtitle : str
        Heading of the page.
    out_dir : str or Path
        Where ``report.html``, ``figures/`` and the tables' CSV files go.
    """

    def __init__(self, title: str, out_dir: str | Path, subtitle: str = "", *, pdf: bool = False, savers: bool = True,
                 progress: bool = False):
        self.title, self.subtitle = title, subtitle
        self.out = Path(out_dir)
        self.fig_dir = self.out / "figures"
        self.fig_dir.mkdir(parents=True, exist_ok=True)
        self.sections: list[Section] = []
        self.params: dict[str, Any] = {}
        self.figures: list[str] = []
        self.csvs: list[str] = []
        self.provenance: list[tuple[str, Mapping[str, Any]]] = []
        #: figures being saved as PNG and SVG in other processes (waited for in `write`)
        self._saves: list[Any] = []
        #: also figures/<name>.pdf; saver processes (worth their start-up, ~1 s of CPU each, only
        #: for many figures); a line on stderr per figure
        self.pdf, self.savers, self.progress = pdf, savers, progress
        if savers:
            _start_savers()  # their start (matplotlib's import) overlaps what comes before the figures
        from jitterlab import plots

        plots.warm()  # and this process's own import of matplotlib too

    def section(self, title: str, intro: str = "") -> Section:
        s = Section(title, intro)
        self.sections.append(s)
        return s

    def _cur(self) -> Section:
        if not self.sections:
            self.section("Results")
        return self.sections[-1]

    def text(self, text: str) -> None:
        self._cur().blocks.append(_Block("text", text))

    def figure(self, fig: Any, name: str, caption: str) -> Path:
        """Saves `fig` as figures/<name>.png, .svg and .csv (the plotted points, one row per point
        and series) and adds it to the page: interactive when `plots.to_plotly` converts it,
        else the PNG embedded. Returns the PNG's path."""
        from jitterlab import plots

        plt = plots.pyplot()
        png = self.fig_dir / f"{name}.png"
        if self.progress:
            print(f"report: figure {len(self.figures) + 1}: {name}", file=sys.stderr, flush=True)
        self._saves.append(_save_later(fig, png, self.fig_dir / f"{name}.svg", self.pdf, in_process=not self.savers))
        payload: Any = None
        try:
            spec = plots.to_plotly(fig)
            payload = ("plotly", json.dumps(_clean(spec), separators=(",", ":"), allow_nan=False))
            _points_csv(spec, self.fig_dir / f"{name}.csv")
        except (ValueError, TypeError):  # an artist the converter does not know: the PNG it is
            payload = None
        if payload is None:
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
            payload = ("png", base64.b64encode(buf.getvalue()).decode())
        plt.close(fig)
        self._cur().blocks.append(_Block("figure", (name, caption, payload)))
        self.figures.append(name)
        return png

    def table(self, df: pd.DataFrame, caption: str, float_format: str = "{:.4g}", name: str | None = None) -> None:
        """Adds a table; with `name` it is also written as <name>.csv and linked."""
        if name:
            _write_csv(df, self.out / f"{name}.csv")
            self.csvs.append(f"{name}.csv")
        self._cur().blocks.append(_Block("table", (df, caption, float_format, name)))

    def add_provenance(self, label: str, prov: Mapping[str, Any]) -> None:
        """Adds the provenance block of one input (a manifest's ``provenance``) to the page."""
        self.provenance.append((label, dict(prov)))

    def claims(self, claims: Iterable[Claim]) -> None:
        self._cur().blocks.append(_Block("claims", list(claims)))

    def findings(self, by_link: Mapping[str, Iterable[Any]]) -> None:
        """The findings table (presets/findings.py `Finding`s), one measured / verdict column pair
        per link, rows matched by the finding's text in the first link's order."""
        self._cur().blocks.append(_Block("findings", {k: list(v) for k, v in by_link.items()}))

    def set_params(self, params: Mapping[str, Any]) -> None:
        self.params.update(params)

    # ------------------------------------------------------------------ rendering
    def _render_table(self, df: pd.DataFrame, caption: str, ff: str, name: str | None = None) -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, float):
                return "" if v != v else ff.format(v)
            return html.escape(str(v))

        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
        rows = "".join("<tr>" + "".join(f"<td>{fmt(v)}</td>" for v in r) + "</tr>" for r in df.itertuples(index=False))
        link = f' <a class=files href="{html.escape(name)}.csv">(CSV)</a>' if name else ""
        return (f'<figure class="tbl"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
                f"<figcaption>{html.escape(caption)}{link}</figcaption></figure>")

    def _render_claims(self, claims: list[Claim]) -> str:
        rows = []
        for c in claims:
            rows.append(
                f'<tr class="v-{c.verdict.replace("/", "")}"><td>{html.escape(c.claim)}</td><td>{html.escape(c.paper)}</td>'
                f"<td>{html.escape(c.ours)}</td><td class=verdict>{VERDICTS[c.verdict]}</td><td>{html.escape(c.why)}</td></tr>"
            )
        return ('<table class="claims"><thead><tr><th>Finding</th><th>Paper</th><th>jitterlab</th><th>Verdict</th>'
                "<th>Why</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")

    def _render_figure(self, fname: str, cap: str, payload: tuple[str, str]) -> str:
        kind, data = payload
        f = html.escape(fname)
        links = (f'<span class=files>files: <a href="figures/{f}.svg">SVG</a> · '
                 + (f'<a href="figures/{f}.pdf">PDF</a> · ' if self.pdf else "") + f'<a href="figures/{f}.png">PNG</a>'
                 + (f' · <a href="figures/{f}.csv">CSV</a>' if kind == "plotly" else "") + "</span>")
        if kind == "plotly":
            body = (f'<div class="plot" id="plot-{f}"></div>'
                    f'<script type="application/json" class="figspec" data-target="plot-{f}">{_json_script_safe(data)}</script>')
        else:
            body = f'<img alt="{html.escape(cap)}" src="data:image/png;base64,{data}">'
        return f'<figure class="fig" id="fig-{f}">{body}<figcaption>{html.escape(cap)} {links}</figcaption></figure>'

    def _render_provenance(self) -> str:
        from jitterlab import provenance

        found = list(self.provenance)
        if not found:  # a preset: its sweeps live in OUT/<experiment>/sweep.json beside the report
            for f in sorted(self.out.glob("*/sweep.json")) + sorted(self.out.glob("manifest.json")):
                try:
                    prov = json.loads(f.read_text()).get("provenance")
                except (OSError, ValueError):
                    prov = None
                if isinstance(prov, dict):
                    found.append((f.parent.name if f.name == "sweep.json" else "input", prov))
        blocks = [*found, ("this report", provenance.collect())]
        keys = list(provenance.LABELS)
        extra = sorted({k for _, p in blocks for k in p} - set(keys))
        head = "".join(f"<th>{html.escape(lab)}</th>" for lab, _ in blocks)
        rows = []
        for k in keys + extra:
            cells = []
            for _, p in blocks:
                v = p.get(k)
                if k == "seeds" and isinstance(v, list) and len(v) > 8:
                    text = f"{len(v)} seeds: " + ", ".join(map(str, v[:4])) + ", …, " + str(v[-1])
                else:
                    text = "–" if v is None or v == [] else (v if isinstance(v, str) else json.dumps(v, default=str))
                cells.append(f"<td><code>{html.escape(str(text))}</code></td>")
            rows.append(f"<tr><th>{html.escape(provenance.LABELS.get(k, k))}</th>{''.join(cells)}</tr>")
        return f'<table class="params prov"><thead><tr><th></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'

    def _render_findings(self, by_link: dict[str, list[Any]]) -> str:
        """One line a finding: statement (linked to its rule kind), paper ± tolerance, then ours ±
        spread and the verdict per link; the headline counts calibration and held-out rows apart;
        each rule kind and tolerance kind stated once below; the 'why' texts as numbered notes."""
        from jitterlab.presets.findings import RULES, TOLERANCES

        links = list(by_link)
        rows: dict[str, dict[str, Any]] = {}
        for link in links:
            for f in by_link[link]:
                rows.setdefault(f.finding, {})[link] = f
        head_counts = []
        for link in links:
            parts = []
            for role in ("calibration", "held-out", "choice"):
                fs = [f for f in by_link[link] if f.role == role]
                if fs:
                    c = {v: sum(f.verdict == v for f in fs) for v in VERDICTS}
                    parts.append(f"{ROLE_LABELS.get(role, role)}s: {c['agrees']} of {len(fs)} agree"
                                 + "".join(f", {c[v]} {w}" for v, w in (("partly", "partly"), ("disagrees", "disagree"),
                                                                         ("inconclusive", "inconclusive")) if c[v]))
            head_counts.append(f"<li><b>{html.escape(link)}</b>: {html.escape('; '.join(parts))}</li>")
        head = "<th>#</th><th>Finding</th><th>Paper ± tolerance</th>" + "".join(
            f"<th>{html.escape(l)}: measured</th><th>{html.escape(l)}: verdict</th>" for l in links)
        body, notes, kinds = [], [], set()
        for k, (text, per) in enumerate(rows.items(), 1):
            first = next(iter(per.values()))
            kind = getattr(first, "kind", "legacy")
            kinds.add(kind)
            own = first.rule
            src = getattr(first, "source", "")
            title = html.escape("; ".join(x for x in (f"source: {src}" if src else "", f"rule: {own}" if own else "") if x))
            rule_link = f' <a class=rk href="#rule-{kind}">[{kind}]</a>' if kind != "legacy" else ""
            tol = getattr(first, "tolerance", "")
            paper = html.escape(first.paper) + (f' <span class=tol>{html.escape(tol)}</span>' if tol else "")
            role = ' <span class=role>calibration</span>' if first.role == "calibration" else (
                ' <span class=role>choice</span>' if first.role == "choice" else "")
            tds = (f"<td>{k}</td><td title=\"{title}\">{html.escape(text)}{role}{rule_link}</td><td>{paper}</td>")
            for l in links:
                f = per.get(l)
                if f is None:
                    tds += "<td></td><td class=verdict>–</td>"
                    continue
                mark = ""
                if f.why:
                    notes.append(f'<li id="why-{k}-{_slug(l)}"><b>#{k} [{html.escape(l)}]</b> {html.escape(f.why)}</li>')
                    mark = f' <a class=why href="#why-{k}-{_slug(l)}">why</a>'
                ref = getattr(f, "reference", "")
                refs = f'<div class=why>{html.escape(ref)}</div>' if ref else ""
                tds += f'<td>{html.escape(f.measured)}{refs}</td><td class="verdict v-{f.verdict}">{VERDICTS[f.verdict]}{mark}</td>'
            body.append(f'<tr class="finding" data-role="{html.escape(first.role)}">{tds}</tr>')
        rules = "".join(f'<li id="rule-{k}"><b>{k}</b>: {html.escape(RULES[k])}</li>' for k in RULES if k in kinds and k != "legacy")
        tols = "".join(f"<li><b>{k}</b>: {html.escape(v)}</li>" for k, v in TOLERANCES.items())
        out = (f'<ul class=headline>{"".join(head_counts)}</ul>'
               f'<table class="claims findings"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')
        if rules:
            out += f"<p><b>Rules</b> (each row links its kind; hover a finding for its source and its own part of the rule):</p><ul class=rules>{rules}</ul>"
            out += f"<p><b>Tolerances</b> of the paper's values:</p><ul class=rules>{tols}</ul>"
        if notes:
            out += f"<p><b>Why</b> (measured conditions of the runs behind the row):</p><ol class=whys>{''.join(notes)}</ol>"
        return out

    def write(self, name: str = "report.html") -> Path:
        """Writes the page (one self-contained HTML file) and returns its path, once every
        figure's PNG and SVG files are written."""
        from jitterlab import plots

        saves, self._saves = self._saves, []
        pending = [f for f in saves if f is not None]
        if self.progress and pending:
            print(f"report: waiting for {len(pending)} figure files", file=sys.stderr, flush=True)
        for f in pending:
            f.result()  # a failed save raises here

        parts = []
        toc = []
        interactive = False
        for s in self.sections:
            sid = _slug(s.title)
            toc.append(f'<li><a href="#{sid}">{html.escape(s.title)}</a></li>')
            body = [f'<section id="{sid}"><h2>{html.escape(s.title)}</h2>']
            if s.intro:
                body.append(f"<p>{html.escape(s.intro)}</p>")
            for b in s.blocks:
                if b.kind == "text":
                    body.append(f"<p>{html.escape(b.payload)}</p>")
                elif b.kind == "figure":
                    fname, cap, payload = b.payload
                    interactive |= payload[0] == "plotly"
                    body.append(self._render_figure(fname, cap, payload))
                elif b.kind == "table":
                    body.append(self._render_table(*b.payload))
                elif b.kind == "claims":
                    body.append(self._render_claims(b.payload))
                elif b.kind == "findings":
                    body.append(self._render_findings(b.payload))
            body.append("</section>")
            parts.append("\n".join(body))
        params = "".join(f"<tr><th>{html.escape(str(k))}</th><td><code>{html.escape(v if isinstance(v, str) else json.dumps(v, default=str))}</code></td></tr>"
                         for k, v in self.params.items())
        files = [f'<li><a href="figures/{html.escape(f)}.svg">figures/{html.escape(f)}.svg</a> '
                 f'(<a href="figures/{html.escape(f)}.png">PNG</a>'
                 + (f', <a href="figures/{html.escape(f)}.csv">CSV</a>' if (self.fig_dir / f"{f}.csv").exists() else "") + ")</li>"
                 for f in self.figures]
        files += [f'<li><a href="{html.escape(c)}">{html.escape(c)}</a></li>' for c in self.csvs]
        now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lib = f"<script>{_script_safe(plots.plotly_js())}</script>" if interactive else ""
        doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(self.title)}</title>
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #111; }}
h1 {{ margin-bottom: .2em; }} .sub {{ color: #444; margin-top: 0; }}
figure {{ margin: 1.2em 0; }} figure.fig img {{ max-width: 100%; border: 1px solid #ccc; }}
figure.fig .plot {{ max-width: 100%; overflow-x: auto; border: 1px solid #ccc; }}
figcaption {{ font-size: 13px; color: #333; }} .files {{ color: #777; }}
table {{ border-collapse: collapse; font-size: 13px; }} th, td {{ border: 1px solid #bbb; padding: 3px 6px; text-align: right; }}
th {{ background: #eee; }} table.claims td {{ text-align: left; vertical-align: top; }}
td.verdict {{ white-space: nowrap; font-weight: bold; }}
tr.v-agrees td.verdict, td.v-agrees {{ background: #e3f4e3; }} tr.v-disagrees td.verdict, td.v-disagrees {{ background: #f8dede; }}
tr.v-partly td.verdict, td.v-partly, td.v-inconclusive {{ background: #fbf3d9; }} .why {{ font-weight: normal; white-space: normal; font-size: 12px; }}
table.params th {{ text-align: left; }} table.params td {{ text-align: left; word-break: break-all; }}
</style>{lib}</head>
<body data-figures-total="{len(self.figures)}">
<h1>{html.escape(self.title)}</h1><p class="sub">{html.escape(self.subtitle)} — generated {now}</p>
<nav><ul>{''.join(toc)}<li><a href="#files">Files</a></li><li><a href="#provenance">Provenance</a></li><li><a href="#parameters">Parameters</a></li></ul></nav>
{''.join(parts)}
<section id="files"><h2>Files</h2><ul>{''.join(files)}</ul></section>
<section id="provenance"><h2>Provenance</h2>{self._render_provenance()}</section>
<section id="parameters"><h2>Parameters</h2><table class="params">{params}</table></section>
<script>{_PAGE_JS}</script>
</body></html>
"""
        path = self.out / name
        _io.write_text_atomic(path, doc)
        return path


def _clean(o: Any) -> Any:
    """A plotly figure dict as plain JSON values: numpy scalars and arrays to Python, NaN and
    infinities to null (a gap, as matplotlib draws them)."""
    import math

    import numpy as np

    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, np.ndarray):
        return [_clean(v) for v in o.tolist()]
    if isinstance(o, np.generic):
        o = o.item()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def _script_safe(text: str) -> str:
    """Text to put inside <script>: a literal "</" would end the element early."""
    return text.replace("</", "<\\/")


#: JSON escapes for the characters that matter inside an HTML <script> element: "<" (a "</script>"
#: ends the element, a "<!--" switches the parser into its escaped state and can swallow the
#: next "</script>"), ">" and "&" for good measure, and U+2028/U+2029 (line terminators to older
#: JavaScript parsers). In JSON these occur only inside strings, where the escape means the same.
_JSON_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _json_script_safe(text: str) -> str:
    """JSON text to put inside <script type="application/json">: parses to the same value."""
    return text.translate(_JSON_SCRIPT_ESCAPES)


def _points_csv(spec: Mapping[str, Any], path: Path) -> None:
    """The plotted points of a plotly figure dict: series, x, y (and base for bars)."""
    rows = []
    for i, tr in enumerate(spec["data"]):
        name = tr.get("name") or f"series {i}"
        for x, y in zip(tr.get("x", []), tr.get("y", [])):
            if x is not None and y is not None:
                rows.append((name, x, y))
    _write_csv(pd.DataFrame(rows, columns=["series", "x", "y"]), path)


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """A CSV file under its final name only when complete (`_io.write_atomic`)."""
    _io.write_atomic(path, lambda t: df.to_csv(t, index=False))


# Renders every figure, counts those drawn (data-figures-loaded), and with #selftest zooms and
# hovers the first interactive figure and records the outcome on <body>.
_PAGE_JS = r"""
(function () {
  var body = document.body, ok = 0, plotted = [];
  var imgs = document.querySelectorAll("figure.fig img");
  function done() {
    for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
    body.setAttribute("data-figures-loaded", String(ok));
    if (location.hash === "#selftest") selftest();
  }
  function selftest() {
    var gd = plotted[0];
    if (!gd) { body.setAttribute("data-selftest-zoom", "no figure"); return; }
    var r = gd._fullLayout.xaxis.range.slice(), mid = (r[0] + r[1]) / 2, want = [r[0], mid];
    Plotly.relayout(gd, {"xaxis.range": want}).then(function () {
      var got = gd._fullLayout.xaxis.range;
      body.setAttribute("data-selftest-zoom", Math.abs(got[1] - mid) < 1e-9 * Math.max(1, Math.abs(mid)) ? "ok" : "failed");
      for (var c = 0; c < gd.data.length; c++) {
        var tr = gd.data[c];
        if (tr.type !== "scatter" || !tr.x || (tr.xaxis && tr.xaxis !== "x")) continue;
        for (var p = 0; p < tr.x.length; p++) {
          var xl = tr.x[p] === null ? null : gd._fullLayout.xaxis.d2l(tr.x[p]);  // log axes: range in log10
          if (xl !== null && tr.y[p] !== null && xl >= r[0] && xl <= mid) {
            Plotly.Fx.hover(gd, [{curveNumber: c, pointNumber: p}]);
            var t = gd.querySelector(".hoverlayer .hovertext");
            body.setAttribute("data-selftest-hover", t ? "ok: " + t.textContent : "no tooltip");
            return;
          }
        }
      }
      body.setAttribute("data-selftest-hover", "no point to hover");
    });
  }
  var specs = document.querySelectorAll("script.figspec"), pending = specs.length;
  if (!pending) { window.addEventListener("load", done); return; }
  for (var i = 0; i < specs.length; i++) (function (el) {
    var div = document.getElementById(el.getAttribute("data-target"));
    var finish = function () { if (--pending === 0) done(); };
    try {
      var spec = JSON.parse(el.textContent);
      Plotly.newPlot(div, spec.data, spec.layout, {displaylogo: false, responsive: true}).then(function () {
        if (div.querySelector(".main-svg")) { ok++; plotted.push(div); }
        finish();
      }, function (e) { console.error("figure " + div.id + ": " + e); finish(); });
    } catch (e) {
      console.error("figure " + div.id + ": " + e);
      finish();
    }
  })(specs[i]);
})();
"""
