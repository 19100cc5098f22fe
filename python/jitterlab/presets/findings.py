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
COLUMNS = ("finding", "paper", "measured", "verdict", "rule", "why", "role")

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

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")


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


def write_csv(findings: Sequence[Finding], path: str | Path) -> Path:
    from jitterlab import _io

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(tmp: Path) -> None:
        with tmp.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for x in findings:
                w.writerow([getattr(x, c) for c in COLUMNS])

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
