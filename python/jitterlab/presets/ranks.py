"""Ranks from paired replications, without chaining.

Every alternative is measured in the same replications (same seed, same TCP start), so two of them
are compared by their paired differences d_r = a_r − b_r: a Student-t interval on the mean of d
over the replications both have (`paired_interval`). Two alternatives are *distinct* when that
interval excludes 0. Ranks (`rank`): sort by the mean value (highest first; for paired data the
mean of d has the same sign as the difference of the means); walk down the order, and an
alternative shares the rank of the group above it only when it is indistinct from *every* member of
that group, otherwise it opens a new group at its position (competition ranking: 1, 1, 3). So no two
alternatives that share a rank are distinct — a chain A ≈ B ≈ C with A, C distinct puts C below A.
Intervals are per pair at `LEVEL`, not corrected for the number of pairs (stated where shown).
"""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

LEVEL = 0.95
#: Student's t, 97.5th percentile, df 1..30 (any statistics table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    """Student's t quantile 0.975 with ``df`` degrees of freedom: the table up to 30, above it the
    Cornish–Fisher expansion around the normal quantile (error < 1e-3 from df 30 on)."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959963984540054
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def paired_interval(d: Any) -> tuple[int, float, float, float]:
    """(n, mean, lo, hi) of the paired differences ``d`` (NaNs left out): the mean ± t·s/√n at
    `LEVEL`. With one difference the interval is undefined (NaN, NaN); with zero spread it is the
    mean itself."""
    v = np.asarray(d, dtype=float)
    v = v[np.isfinite(v)]
    n = len(v)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    m = float(v.mean())
    if n < 2:
        return n, m, math.nan, math.nan
    h = t975(n - 1) * float(v.std(ddof=1)) / math.sqrt(n)
    return n, m, m - h, m + h


def distinct(lo: float, hi: float) -> bool:
    """Whether an interval of a difference excludes 0 (an undefined interval never does)."""
    return bool((lo > 0) or (hi < 0))


def _pairs(a: pd.Series, b: pd.Series) -> np.ndarray:
    """a − b over the replications both have (unique indices), NaNs left out."""
    common = a.index.intersection(b.index)
    d = a.loc[common].to_numpy(float) - b.loc[common].to_numpy(float)
    return d[np.isfinite(d)]


def pairwise(values: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Every ordered pair (a, b), a ≠ b, of per-replication values (each a Series indexed by
    replication): a, b, n (replications both have), mean, lo, hi of a − b, distinct."""
    rows = []
    for a, va in values.items():
        for b, vb in values.items():
            if a == b:
                continue
            n, m, lo, hi = paired_interval(_pairs(va, vb))
            rows.append({"a": a, "b": b, "n": n, "mean": m, "lo": lo, "hi": hi, "distinct": distinct(lo, hi)})
    return pd.DataFrame(rows, columns=["a", "b", "n", "mean", "lo", "hi", "distinct"])


def rank(values: Mapping[str, Any], baseline: str | None = None) -> pd.DataFrame:
    """The ranks of per-replication values (each a Series indexed by replication, or a sequence
    indexed 0..n−1), by the rule in the module's doc: mitigation, n, mean, rank, group (the names
    sharing its rank), and, with a ``baseline``, the paired interval against it (vs_lo, vs_hi).
    Alternatives without any value get no rank."""
    vals = {k: (v if isinstance(v, pd.Series) else pd.Series(np.asarray(v, dtype=float))) for k, v in values.items()}
    vals = {k: v.dropna() for k, v in vals.items()}
    have = [k for k in vals if len(vals[k])]
    means = {k: float(vals[k].mean()) for k in have}
    order = sorted(have, key=lambda k: (-means[k], k))
    pw = pairwise({k: vals[k] for k in have})
    dist = {(r.a, r.b): r.distinct for r in pw.itertuples()}
    ranks: dict[str, int] = {}
    groups: list[list[str]] = []
    for i, k in enumerate(order):
        if groups and not any(dist.get((g, k), False) for g in groups[-1]):
            groups[-1].append(k)
            ranks[k] = ranks[groups[-1][0]]
        else:
            groups.append([k])
            ranks[k] = i + 1
    members = {k: g for g in groups for k in g}
    rows = []
    for k in order + [k for k in vals if k not in have]:
        r: dict[str, Any] = {"mitigation": k, "n": len(vals[k]), "mean": means.get(k, math.nan),
                             "rank": ranks.get(k), "group": " = ".join(members[k]) if k in members else ""}
        if baseline is not None:
            _, _, lo, hi = paired_interval(_pairs(vals[k], vals[baseline])) if baseline in vals and k != baseline else (0, 0.0, 0.0, 0.0)
            r["vs_lo"], r["vs_hi"] = lo, hi
        rows.append(r)
    out = pd.DataFrame(rows)
    out["rank"] = out["rank"].astype("Int64")
    return out
