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
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import pandas as pd

from jitterlab import _callable, _io

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
