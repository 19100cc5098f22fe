"""Findings of a paper against our data, each verdict computed by a rule stated in the table.

The rules live here, once, and every preset uses them:

- ``within(paper, values)`` — a number the paper reports: where it falls in the spread of our
  per-replication values.
- ``side(values, bound, below)`` — a bound the paper states ("below 150 ms"): where our
  interquartile range (IQR) over replications lies relative to it.
- ``in_range(values, lo, hi)`` — a band the paper states ("around 1.5–2.5 s").
- ``order(a, b)`` — an ordering the paper states ("IW10 worse than IW3"): decided only when the
  two IQRs do not overlap, otherwise a tie; ``count_verdict`` turns several orderings into one
  verdict, counting ties as ties.
- ``worst(verdicts)`` — one verdict for a statement made "for every n".

The rules that carry the paper's precision (``Tol``, ``meets``, ``ordered``): every paper value has
a tolerance stated from how the paper gives it (printed digits, a figure's grid, "≈", a pooled tail
percentile's sampling spread) and a ``source``; a value agrees when our median ± spread (25–75th
percentile over replications) meets the paper's value ± tolerance. ``RULES`` states each kind of
rule once; a finding names its kind, and its ``rule`` column adds only what is particular to it
(an operationalisation the paper does not define is said to be ours there).

Percentiles over replications are numpy's linear interpolation (``np.nanquantile``); replications
that have no value (NaN) are left out. An explanation ("why") is attached with ``because(cond,
text)``, which keeps the text only when the measured condition holds, so a sentence is never
printed about data it does not describe.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, cast

import numpy as np

VERDICTS = ("agrees", "partly", "disagrees", "inconclusive", "n/a")
ROLES = ("calibration", "held-out", "choice")
COLUMNS = ("finding", "paper", "tolerance", "source", "measured", "verdict", "rule", "why", "role")

#: Each kind of verdict rule, stated once (the report links every row to its kind).
RULES = {
    "value": ("agrees when our median ± spread (25–75th percentile over replications; over bootstrap resamples of the "
              "replications for a pooled statistic) meets the paper's value ± its tolerance; partly when only our 5–95th "
              "percentile meets it; disagrees otherwise"),
    "bound": ("a bound ('below B'): the paper's set is everything on its side of B, widened by the tolerance; agrees when our "
              "median ± spread (25–75th percentile) meets it, partly when only our 5–95th percentile does, disagrees otherwise"),
    "band": ("a band ('around lo–hi'): the band widened by the tolerance; agrees when our median ± spread meets it, partly when "
             "only our 5–95th percentile does, disagrees otherwise"),
    "order": ("an ordering, compared per workload: A is above B when A's 25th percentile over replications exceeds B's 75th, "
              "below when the reverse holds, a tie when the IQRs overlap; a case where both sides are saturated (the row "
              "names the floor or ceiling) is uninformative and not counted; agrees if every informative case goes the "
              "paper's way, disagrees if any goes the other way, partly if the rest are ties, inconclusive if all are ties "
              "or uninformative"),
    "fact": "a fact of the link as configured (no spread): agrees when it meets the paper's value ± tolerance",
    "legacy": "the rule stated in the row",
}

#: How each kind of tolerance is computed, stated once.
TOLERANCES = {
    "printed": ("a printed number: ± half a unit of its last digit, or the measurement's own accuracy when larger "
                "(a one-way delay from NTP-synchronised tcpdump captures: ± 0.5 ms)"),
    "approx": "'≈ / around / approaches / roughly / nearly': ± 10 % of the value",
    "pooled": ("a percentile pooled over the paper's 50 replications: the 95 % interval of the q-quantile of N samples "
               "(rank N·q ± 1.96·√(N·q·(1−q)), N = 50 × our median samples per replication), turned into values by linear "
               "interpolation between the neighbouring percentiles the paper itself prints; it treats the samples as "
               "independent, so it is the smallest spread a 50-run data set would have"),
    "max": ("a maximum over the paper's data set: ± one standard deviation of the largest of N samples of an exponential "
            "tail (Gumbel: π·θ/√6), θ = (75th − 25th percentile) / ln 3 from the quartiles the slides print"),
    "count": "a pooled rate of rare events: ± √k / N (Poisson) for the k events of N that the paper's value implies",
    "ours": "no number in the source: the threshold is ours, stated in the rule",
}


@dataclass(frozen=True)
class Tol:
    """A paper value with its tolerance: the set [lo, hi] it spans, how that is written, its source."""

    lo: float
    hi: float
    text: str
    source: str
    kind: str = "printed"

    def __post_init__(self) -> None:
        if self.kind not in TOLERANCES:
            raise ValueError(f"tolerance kind must be one of {tuple(TOLERANCES)}, got {self.kind!r}")


def tol(value: float, pm: float, text: str, source: str, kind: str = "printed") -> Tol:
    """value ± pm."""
    return Tol(value - pm, value + pm, text, source, kind)


def tol_printed(value: float, digits: int, source: str, unit_scale: float = 1.0, accuracy: float = 0.0,
                text: str | None = None) -> Tol:
    """A number printed with `digits` decimals (in units of `unit_scale`): ± half a unit of the last
    digit, or `accuracy` when larger. 18.0 ms (digits=1, unit 1e-3, accuracy 0.5 ms) is 18.0 ± 0.5 ms."""
    half = 0.5 * 10.0 ** (-digits) * unit_scale
    pm = max(half, accuracy)
    return tol(value, pm, text or f"± {pm / unit_scale:g}", source, "printed")


def tol_approx(value: float, source: str, rel: float = 0.10) -> Tol:
    return tol(value, abs(value) * rel, f"± {rel * 100:g} % ('≈')", source, "approx")


def tol_pooled(q: float, row: dict[float, float], n: float, source: str) -> Tol:
    """The paper's pooled q-quantile as an interval: the rank interval N·q ± 1.96·√(N·q·(1−q)) of N
    samples, in values by linear interpolation over `row` ({quantile: value}, the paper's own
    printed percentiles, max as 1.0)."""
    qs = sorted(row)
    half = 1.96 * float(np.sqrt(n * q * (1 - q))) / n
    lo, hi = max(q - half, qs[0]), min(q + half, qs[-1])
    vals = [row[k] for k in qs]
    a, b = float(np.interp(lo, qs, vals)), float(np.interp(hi, qs, vals))
    return Tol(a, b, f"{a * 1e3:.0f}–{b * 1e3:.0f} ms (N = {n:.0f})", source, "pooled")


def tol_max(value: float, p25: float, p75: float, source: str) -> Tol:
    theta = (p75 - p25) / float(np.log(3.0))
    sd = float(np.pi) * theta / float(np.sqrt(6.0))
    return tol(value, sd, f"± {sd * 1e3:.1f} ms (θ = {theta * 1e3:.2f} ms)", source, "max")


def tol_count(rate: float, n: float, source: str, digits_half: float = 0.0) -> Tol:
    k = rate * n
    pm = max(float(np.sqrt(k)) / n, digits_half)
    return tol(rate, pm, f"± {pm * 100:.4f} % (k = {k:.1f} of N = {n:.0f})", source, "count")


def tol_bound(bound: float, pm: float, below: bool, text: str, source: str, kind: str = "printed") -> Tol:
    """'below bound' (or above) widened by pm."""
    inf = float("inf")
    return Tol(-inf, bound + pm, text, source, kind) if below else Tol(bound - pm, inf, text, source, kind)


def meets(values: "Spread | Iterable[float]", t: Tol) -> str:
    """The verdict of RULES['value'] / ['bound'] / ['band']: our IQR against [t.lo, t.hi]."""
    s = _sp(values)
    if s.n == 0:
        return "n/a"
    if s.p25 <= t.hi and s.p75 >= t.lo:
        return "agrees"
    if s.p05 <= t.hi and s.p95 >= t.lo:
        return "partly"
    return "disagrees"


def saturated(a: "Spread | Iterable[float]", b: "Spread | Iterable[float]", floor: float | None = None,
              ceiling: float | None = None) -> bool:
    """Both medians at the floor (≤ floor) or both at the ceiling (≥ ceiling): the case says nothing."""
    sa, sb = _sp(a), _sp(b)
    if sa.n == 0 or sb.n == 0:
        return True
    if floor is not None and sa.p50 <= floor and sb.p50 <= floor:
        return True
    return ceiling is not None and sa.p50 >= ceiling and sb.p50 >= ceiling

RULE_WITHIN = ("agrees if the paper's value lies within our 25–75th percentile over replications (inclusive); "
               "partly if within the 5–95th; else disagrees")
RULE_ORDER = ("A is above B when A's 25th percentile over replications exceeds B's 75th (IQRs disjoint), "
              "below when the reverse holds; overlapping or touching IQRs are a tie")
RULE_COUNT = "agrees if every case goes the paper's way; disagrees if any goes the other way; partly if the rest are ties; inconclusive if all are ties"


def rule_side(bound: str, below: bool) -> str:
    w = "below" if below else "above"
    o = "above" if below else "below"
    return (f"agrees if our 25–75th percentile over replications lies strictly {w} {bound}; disagrees if it lies "
            f"entirely at or {o} it; partly if it straddles it")


def rule_range(lo: str, hi: str) -> str:
    return (f"agrees if our 25–75th percentile over replications lies inside [{lo}, {hi}]; disagrees if it does not "
            "overlap that band; partly otherwise")


@dataclass(frozen=True)
class Spread:
    """Percentiles of a statistic over replications."""

    n: int
    p05: float
    p25: float
    p50: float
    p75: float
    p95: float

    def iqr(self, scale: float = 1.0, fmt: str = "{:.0f}") -> str:
        return f"{fmt.format(self.p25 * scale)}–{fmt.format(self.p75 * scale)}"

    def show(self, scale: float = 1.0, fmt: str = "{:.0f}", unit: str = "") -> str:
        """`median [p25–p75]` for the measured column."""
        return f"{fmt.format(self.p50 * scale)}{unit} [{self.iqr(scale, fmt)}]"


def spread(values: Iterable[float]) -> Spread:
    v = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        nan = float("nan")
        return Spread(0, nan, nan, nan, nan, nan)
    q = np.quantile(v, [0.05, 0.25, 0.5, 0.75, 0.95])
    return Spread(len(v), *map(float, q))


def _sp(values: Spread | Iterable[float]) -> Spread:
    return values if isinstance(values, Spread) else spread(values)


def within(paper: float, values: Spread | Iterable[float]) -> str:
    s = _sp(values)
    if s.n == 0:
        return "n/a"
    if s.p25 <= paper <= s.p75:
        return "agrees"
    if s.p05 <= paper <= s.p95:
        return "partly"
    return "disagrees"


def side(values: Spread | Iterable[float], bound: float, below: bool = True) -> str:
    s = _sp(values)
    if s.n == 0:
        return "n/a"
    lo, hi = (s.p25, s.p75) if below else (-s.p75, -s.p25)
    b = bound if below else -bound
    if hi < b:
        return "agrees"
    if lo >= b:
        return "disagrees"
    return "partly"


def in_range(values: Spread | Iterable[float], lo: float, hi: float) -> str:
    s = _sp(values)
    if s.n == 0:
        return "n/a"
    if lo <= s.p25 and s.p75 <= hi:
        return "agrees"
    if s.p75 < lo or s.p25 > hi:
        return "disagrees"
    return "partly"


def order(a: Spread | Iterable[float], b: Spread | Iterable[float]) -> str:
    """'above' (a > b), 'below' (a < b) or 'tie' by disjoint IQRs."""
    sa, sb = _sp(a), _sp(b)
    if sa.n == 0 or sb.n == 0:
        return "tie"
    if sa.p25 > sb.p75:
        return "above"
    if sa.p75 < sb.p25:
        return "below"
    return "tie"


def outcome(a: Spread | Iterable[float], b: Spread | Iterable[float], expect: str = "above") -> str:
    """'win' when a and b are ordered as the paper says (expect 'above' or 'below'), 'loss' when
    they are ordered the other way, 'tie' otherwise."""
    o = order(a, b)
    if o == "tie":
        return "tie"
    return "win" if o == expect else "loss"


RULE_COUNT_TIES_OK = "agrees if no case goes the other way ('improves or at least does not worsen': ties are fine); disagrees otherwise"
RULE_SIMILAR = ("agrees if every case is a tie (no ordering: similar); partly if at most a quarter of the cases are ordered; "
                "disagrees otherwise")


def count_verdict(outcomes: Sequence[str], ties_ok: bool = False) -> str:
    if not outcomes:
        return "n/a"
    if any(o == "loss" for o in outcomes):
        return "disagrees"
    if ties_ok:
        return "agrees"
    if all(o == "win" for o in outcomes):
        return "agrees"
    if all(o == "tie" for o in outcomes):
        return "inconclusive"
    return "partly"


def similar(outcomes: Sequence[str]) -> str:
    """A statement that two things are similar: the ties are what agrees."""
    if not outcomes:
        return "n/a"
    ordered = sum(o != "tie" for o in outcomes)
    if ordered == 0:
        return "agrees"
    return "partly" if ordered <= len(outcomes) / 4 else "disagrees"


def tally(outcomes: Sequence[str]) -> str:
    """'W of N go the paper's way, T ties, L the other way'."""
    w, t, l = (sum(o == k for o in outcomes) for k in ("win", "tie", "loss"))
    return f"{w} of {len(outcomes)} as the paper, {t} tie{'s' if t != 1 else ''}, {l} the other way"


def worst(verdicts: Sequence[str]) -> str:
    """One verdict for a statement made for every case: disagrees if any case disagrees, agrees if
    all agree, inconclusive if all are inconclusive, partly otherwise."""
    v = [x for x in verdicts if x != "n/a"]
    if not v:
        return "n/a"
    if "disagrees" in v:
        return "disagrees"
    if all(x == "agrees" for x in v):
        return "agrees"
    if all(x == "inconclusive" for x in v):
        return "inconclusive"
    return "partly"


def because(condition: bool, text: str) -> str:
    """The explanation, only when the measured condition it explains holds."""
    return text if bool(condition) else ""


def join_why(*parts: str) -> str:
    return " ".join(p for p in parts if p)


@dataclass
class Finding:
    """One quantitative statement of the paper with our value and a verdict computed by `rule`."""

    finding: str
    paper: str
    measured: str
    verdict: str
    rule: str
    why: str = ""
    role: str = "held-out"  # calibration target, held-out prediction, or a modelling choice shown both ways
    tolerance: str = ""     # the paper value's tolerance (TOLERANCES), "" when it gives no number
    source: str = ""        # where the statement is: paper section / figure, slides, figure summary
    kind: str = "legacy"    # which of RULES decided it; `rule` adds only what is particular to the row
    reference: str = ""     # the same statement in a reference implementation (elastic: ns-2 running the paper's setup)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if self.kind not in RULES:
            raise ValueError(f"kind must be one of {tuple(RULES)}, got {self.kind!r}")

    def rule_text(self) -> str:
        """The whole rule: the kind's statement, then the row's own part."""
        if self.kind == "legacy":
            return self.rule
        return RULES[self.kind] + (f"; {self.rule}" if self.rule else "")


def judged(finding: str, paper: str, t: Tol, measured: str, values: "Spread | Iterable[float]", kind: str = "value",
           rule: str = "", why: str = "", role: str = "held-out") -> Finding:
    """A finding decided by `meets`: the paper's value as printed, `t` its tolerance and source."""
    return Finding(finding, paper, measured, meets(values, t), rule, why, role, tolerance=t.text, source=t.source, kind=kind)


def ordered(text: str, paper: str, source: str, pairs: Sequence[tuple[str, Any, Any]],
            expect: str = "above", scale: float = 1.0, unit: str = "", fmt: str = "{:.0f}", floor: float | None = None,
            ceiling: float | None = None, rule: str = "", role: str = "held-out") -> Finding:
    """RULES['order']: one outcome per workload (label, A, B); saturated cases are uninformative."""
    sp = [(lab, _sp(x), _sp(y)) for lab, x, y in pairs]
    outs = ["n/a" if saturated(x, y, floor, ceiling) else outcome(x, y, expect) for _, x, y in sp]
    inf = [o for o in outs if o != "n/a"]
    w, t, l = (sum(o == k for o in inf) for k in ("win", "tie", "loss"))
    u = len(outs) - len(inf)
    tallied = (f"{w} of {len(inf)} informative as the paper, {t} tie{'s' if t != 1 else ''}, {l} the other way"
               + (f", {u} uninformative (saturated)" if u else ""))
    detail = "; ".join(f"{lab}: {x.show(scale, fmt, unit)} vs {y.show(scale, fmt, unit)}" for lab, x, y in sp)
    names = lambda k: ", ".join(lab for (lab, _, _), o in zip(sp, outs) if o == k)
    why = join_why(because(t > 0, "IQRs overlap (tie) at " + names("tie") + "."),
                   because(l > 0, "ordered the other way (IQRs disjoint) at " + names("loss") + "."),
                   because(u > 0, "saturated at " + names("n/a") + "."))
    v = count_verdict(inf) if inf else "inconclusive"
    return Finding(text, paper, tallied + " — " + detail, v, rule, why, role, tolerance="", source=source, kind="order")


def ordering(text: str, paper: str, pairs: Sequence[tuple[str, Iterable[float], Iterable[float]]], expect: str = "above",
             scale: float = 1.0, unit: str = "", fmt: str = "{:.0f}", role: str = "held-out") -> Finding:
    """A statement that orders cases ("A above B in every case"): one outcome per (label, A, B),
    counted by `count_verdict`; the why names the ties and the reversed cases, if any."""
    sp = [(lab, spread(x), spread(y)) for lab, x, y in pairs]
    outs = [outcome(x, y, expect) for _, x, y in sp]
    detail = "; ".join(f"{lab}: {x.show(scale, fmt, unit)} vs {y.show(scale, fmt, unit)}" for lab, x, y in sp)
    ties = [lab for (lab, _, _), o in zip(sp, outs) if o == "tie"]
    losses = [lab for (lab, _, _), o in zip(sp, outs) if o == "loss"]
    why = join_why(because(bool(ties), "IQRs overlap (tie) at " + ", ".join(ties) + "."),
                   because(bool(losses), "ordered the other way (IQRs disjoint) at " + ", ".join(losses) + "."))
    return Finding(text, paper, tally(outs) + " — " + detail, count_verdict(outs), RULE_ORDER + "; " + RULE_COUNT, why, role)


def with_sources(findings: Sequence[Finding], by_prefix: Sequence[tuple[str, str]]) -> list[Finding]:
    """Each finding whose `source` is empty gets the source of the first prefix its text starts with."""
    from dataclasses import replace

    out = []
    for f in findings:
        src = next((s for pre, s in by_prefix if f.finding.startswith(pre)), "")
        out.append(replace(f, source=src) if src and not f.source else f)
    return out


def write_csv(findings: Sequence[Finding], path: str | Path, reference: str | None = None,
              links: Sequence[str] | None = None) -> Path:
    """findings.csv; with `reference` (e.g. "ns2") one more column of that name holds each row's `reference`;
    with `links` (one per finding) a first column `link` says which link's runs a row judges."""
    if links is not None and len(links) != len(findings):
        raise ValueError(f"{len(links)} links for {len(findings)} findings")
    from jitterlab import _io

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        with tmp.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow((("link",) if links is not None else ()) + COLUMNS + ((reference,) if reference else ()))
            for i, x in enumerate(findings):
                w.writerow(([links[i]] if links is not None else []) + [x.rule_text() if c == "rule" else getattr(x, c) for c in COLUMNS]
                           + ([x.reference] if reference else []))

    _io.write_atomic(path, write)  # complete under its final name, or absent
    return path


RULE_BOOT = ("for a statistic pooled over replications (as the paper pools them), the spread is that of the same statistic "
             "over 200 bootstrap resamples of the replications (seed 0)")


def boot_pooled(per_run: Sequence[np.ndarray], q: float | Sequence[float], resamples: int = 200, seed: int = 0) -> Any:
    """Spread of the pooled q-quantile of the values of `per_run` (one array per replication)
    over bootstrap resamples of the replications; a list of Spreads when q is a list."""
    scalar = bool(np.isscalar(q))
    qs: list[float] = [float(cast(float, q))] if scalar else [float(v) for v in cast(Sequence[float], q)]
    out = boot_stat(per_run, lambda x: np.quantile(x, qs), len(qs), resamples, seed)
    return out[0] if scalar else out


def boot_stat(per_run: Sequence[np.ndarray], stat: Callable[[np.ndarray], Any], k: int = 1, resamples: int = 200,
              seed: int = 0) -> list[Spread]:
    """Spread of `stat` (k numbers) of the values of resampled replications, concatenated."""
    runs = [np.asarray(x, dtype=float) for x in per_run if len(x)]
    if not runs:
        return [spread([]) for _ in range(k)]
    rng = np.random.default_rng(seed)
    lens = np.array([len(x) for x in runs])
    flat_vals = np.concatenate(runs)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    stats = np.empty((resamples, k))
    for b in range(resamples):  # per resample, not per packet
        pick = rng.integers(0, len(runs), len(runs))
        ln = lens[pick]
        # the positions of the picked runs' values, concatenated: start of each run + 0..len-1
        offs = np.repeat(starts[pick] - (np.cumsum(ln) - ln), ln)
        stats[b] = stat(flat_vals[offs + np.arange(ln.sum())])
    return [spread(stats[:, i]) for i in range(k)]
