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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

VERDICTS = {"agrees": "✔ agrees", "disagrees": "✘ disagrees", "partly": "≈ partly", "n/a": "– not measured"}


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

    def __init__(self, title: str, out_dir: str | Path, subtitle: str = ""):
        self.title, self.subtitle = title, subtitle
        self.out = Path(out_dir)
        self.fig_dir = self.out / "figures"
        self.fig_dir.mkdir(parents=True, exist_ok=True)
        self.sections: list[Section] = []
        self.params: dict[str, Any] = {}
        self.figures: list[str] = []
        self.csvs: list[str] = []
        self.provenance: list[tuple[str, Mapping[str, Any]]] = []

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
        import matplotlib.pyplot as plt

        from jitterlab import plots

        png = self.fig_dir / f"{name}.png"
        fig.savefig(png, dpi=130, bbox_inches="tight")
        fig.savefig(self.fig_dir / f"{name}.svg", bbox_inches="tight")
        try:
            spec: dict[str, Any] | None = plots.to_plotly(fig)
        except ValueError:
            spec = None
        payload: Any
        if spec is not None:
            _points_csv(spec, self.fig_dir / f"{name}.csv")
            payload = ("plotly", json.dumps(spec, separators=(",", ":"), allow_nan=False))
        else:
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
            df.to_csv(self.out / f"{name}.csv", index=False)
            self.csvs.append(f"{name}.csv")
        self._cur().blocks.append(_Block("table", (df, caption, float_format, name)))

    def add_provenance(self, label: str, prov: Mapping[str, Any]) -> None:
        """Adds the provenance block of one input (a manifest's ``provenance``) to the page."""
        self.provenance.append((label, dict(prov)))

    def claims(self, claims: Iterable[Claim]) -> None:
        self._cur().blocks.append(_Block("claims", list(claims)))

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
        links = (f'<span class=files>files: <a href="figures/{f}.svg">SVG</a> · <a href="figures/{f}.png">PNG</a>'
                 + (f' · <a href="figures/{f}.csv">CSV</a>' if kind == "plotly" else "") + "</span>")
        if kind == "plotly":
            body = (f'<div class="plot" id="plot-{f}"></div>'
                    f'<script type="application/json" class="figspec" data-target="plot-{f}">{_script_safe(data)}</script>')
        else:
            body = f'<img alt="{html.escape(cap)}" src="data:image/png;base64,{data}">'
        return f'<figure class="fig" id="fig-{f}">{body}<figcaption>{html.escape(cap)} {links}</figcaption></figure>'

    def _render_provenance(self) -> str:
        from jitterlab import provenance

        blocks = [*self.provenance, ("this report", provenance.collect())]
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

    def write(self, name: str = "report.html") -> Path:
        """Writes the page (one self-contained HTML file) and returns its path."""
        from jitterlab import plots

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
tr.v-agrees td.verdict {{ background: #e3f4e3; }} tr.v-disagrees td.verdict {{ background: #f8dede; }} tr.v-partly td.verdict {{ background: #fbf3d9; }}
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
        path.write_text(doc, encoding="utf-8")
        return path


def _script_safe(text: str) -> str:
    """Text to put inside <script>: a literal "</" would end the element early."""
    return text.replace("</", "<\\/")


def _points_csv(spec: Mapping[str, Any], path: Path) -> None:
    """The plotted points of a plotly figure dict: series, x, y (and base for bars)."""
    rows = []
    for i, tr in enumerate(spec["data"]):
        name = tr.get("name") or f"series {i}"
        for x, y in zip(tr.get("x", []), tr.get("y", [])):
            if x is not None and y is not None:
                rows.append((name, x, y))
    pd.DataFrame(rows, columns=["series", "x", "y"]).to_csv(path, index=False)


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
        if (tr.type !== "scatter" || !tr.x) continue;
        for (var p = 0; p < tr.x.length; p++) {
          if (tr.x[p] !== null && tr.y[p] !== null && tr.x[p] >= r[0] && tr.x[p] <= mid) {
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
