"""One self-contained HTML report per experiment: figures embedded (PNG data URIs; PNG and SVG
files written beside it), tables, every parameter, and each finding of a paper set against our
measured value with a verdict that reads without colour ("agrees", "disagrees", "partly")."""
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

VERDICTS = {"agrees": "✔ agrees", "disagrees": "✘ disagrees", "partly": "≈ partly", "inconclusive": "? inconclusive",
            "n/a": "– not measured"}
ROLE_LABELS = {"calibration": "calibration target", "held-out": "held-out prediction", "choice": "modelling choice"}


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
    def __init__(self, title: str, out_dir: str | Path, subtitle: str = ""):
        self.title, self.subtitle = title, subtitle
        self.out = Path(out_dir)
        self.fig_dir = self.out / "figures"
        self.fig_dir.mkdir(parents=True, exist_ok=True)
        self.sections: list[Section] = []
        self.params: dict[str, Any] = {}
        self.figures: list[str] = []

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
        """Saves `fig` as figures/<name>.png and .svg and embeds the PNG."""
        import matplotlib.pyplot as plt

        png = self.fig_dir / f"{name}.png"
        fig.savefig(png, dpi=130, bbox_inches="tight")
        fig.savefig(self.fig_dir / f"{name}.svg", bbox_inches="tight")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        self._cur().blocks.append(_Block("figure", (name, caption, base64.b64encode(buf.getvalue()).decode())))
        self.figures.append(name)
        return png

    def table(self, df: pd.DataFrame, caption: str, float_format: str = "{:.4g}", name: str | None = None) -> None:
        if name:
            df.to_csv(self.out / f"{name}.csv", index=False)
        self._cur().blocks.append(_Block("table", (df, caption, float_format)))

    def claims(self, claims: Iterable[Claim]) -> None:
        self._cur().blocks.append(_Block("claims", list(claims)))

    def findings(self, by_link: Mapping[str, Iterable[Any]]) -> None:
        """The findings table (presets/findings.py `Finding`s), one measured / verdict column pair
        per link, rows matched by the finding's text in the first link's order."""
        self._cur().blocks.append(_Block("findings", {k: list(v) for k, v in by_link.items()}))

    def set_params(self, params: Mapping[str, Any]) -> None:
        self.params.update(params)

    # ------------------------------------------------------------------ rendering
    def _render_table(self, df: pd.DataFrame, caption: str, ff: str) -> str:
        def fmt(v: Any) -> str:
            if isinstance(v, float):
                return "" if v != v else ff.format(v)
            return html.escape(str(v))

        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
        rows = "".join("<tr>" + "".join(f"<td>{fmt(v)}</td>" for v in r) + "</tr>" for r in df.itertuples(index=False))
        return f'<figure class="tbl"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table><figcaption>{html.escape(caption)}</figcaption></figure>'

    def _render_claims(self, claims: list[Claim]) -> str:
        rows = []
        for c in claims:
            rows.append(
                f'<tr class="v-{c.verdict.replace("/", "")}"><td>{html.escape(c.claim)}</td><td>{html.escape(c.paper)}</td>'
                f"<td>{html.escape(c.ours)}</td><td class=verdict>{VERDICTS[c.verdict]}</td><td>{html.escape(c.why)}</td></tr>"
            )
        return ('<table class="claims"><thead><tr><th>Finding</th><th>Paper</th><th>jitterlab</th><th>Verdict</th>'
                "<th>Why</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")

    def _render_findings(self, by_link: dict[str, list[Any]]) -> str:
        links = list(by_link)
        rows: dict[str, dict[str, Any]] = {}
        for link in links:
            for f in by_link[link]:
                rows.setdefault(f.finding, {})[link] = f
        head = "<th>Finding</th><th>Paper</th><th>Role</th><th>Rule</th>" + "".join(
            f"<th>{html.escape(l)}: measured</th><th>{html.escape(l)}: verdict (why)</th>" for l in links)
        body = []
        for text, per in rows.items():
            first = next(iter(per.values()))
            cells = [html.escape(text), html.escape(first.paper), html.escape(ROLE_LABELS.get(first.role, first.role)),
                     html.escape(first.rule)]
            tds = "".join(f"<td>{c}</td>" for c in cells)
            for l in links:
                f = per.get(l)
                if f is None:
                    tds += "<td></td><td class=verdict>–</td>"
                    continue
                why = f'<div class=why>{html.escape(f.why)}</div>' if f.why else ""
                tds += f'<td>{html.escape(f.measured)}</td><td class="verdict v-{f.verdict}">{VERDICTS[f.verdict]}{why}</td>'
            body.append(f'<tr class="finding" data-role="{html.escape(first.role)}">{tds}</tr>')
        return f'<table class="claims findings"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'

    def write(self, name: str = "report.html") -> Path:
        parts = []
        toc = []
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
                    fname, cap, data = b.payload
                    body.append(f'<figure class="fig" id="fig-{fname}"><img alt="{html.escape(cap)}" src="data:image/png;base64,{data}">'
                                f"<figcaption>{html.escape(cap)} <span class=files>(figures/{fname}.png, .svg)</span></figcaption></figure>")
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
        now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(self.title)}</title>
<style>
body {{ font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #111; }}
h1 {{ margin-bottom: .2em; }} .sub {{ color: #444; margin-top: 0; }}
figure {{ margin: 1.2em 0; }} figure.fig img {{ max-width: 100%; border: 1px solid #ccc; }}
figcaption {{ font-size: 13px; color: #333; }} .files {{ color: #777; }}
table {{ border-collapse: collapse; font-size: 13px; }} th, td {{ border: 1px solid #bbb; padding: 3px 6px; text-align: right; }}
th {{ background: #eee; }} table.claims td {{ text-align: left; vertical-align: top; }}
td.verdict {{ white-space: nowrap; font-weight: bold; }}
tr.v-agrees td.verdict, td.v-agrees {{ background: #e3f4e3; }} tr.v-disagrees td.verdict, td.v-disagrees {{ background: #f8dede; }}
tr.v-partly td.verdict, td.v-partly, td.v-inconclusive {{ background: #fbf3d9; }} .why {{ font-weight: normal; white-space: normal; font-size: 12px; }}
table.params th {{ text-align: left; }} table.params td {{ text-align: left; }}
</style></head>
<body data-figures-total="{len(self.figures)}">
<h1>{html.escape(self.title)}</h1><p class="sub">{html.escape(self.subtitle)} — generated {now}</p>
<nav><ul>{''.join(toc)}<li><a href="#parameters">Parameters</a></li></ul></nav>
{''.join(parts)}
<section id="parameters"><h2>Parameters</h2><table class="params">{params}</table></section>
<script>
window.addEventListener("load", function () {{
  var imgs = document.querySelectorAll("figure.fig img"), ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  document.body.setAttribute("data-figures-loaded", String(ok));
}});
</script>
</body></html>
"""
        path = self.out / name
        path.write_text(doc, encoding="utf-8")
        return path
