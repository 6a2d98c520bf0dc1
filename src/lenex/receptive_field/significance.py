"""Table 3's statistics: the paired two-sided t-test against Sandwich beside the mean ± std over seeds
(lenex.tables.seeds).

The paper marks x† when Sandwich is significantly better than x and x* when it is significantly
worse (paired two-sided t-test, α = 0.05); runs are paired by seed. Our std is the sample
standard deviation (ddof = 1; the paper does not say which).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc

from ..tables.seeds import group_by_seed, mean_over_seeds

BETTER, WORSE = "better", "worse"


def paired_t_test(a, b) -> tuple[float, float]:
    """(t, two-sided p) for H0: mean(a - b) = 0 over paired samples. Constant differences give
    t = ±inf, p = 0 (or t = 0, p = 1 when they are all zero)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"a paired t-test needs two equal-length lists of at least 2 values, got {len(np.atleast_1d(d))}")
    mean, sd = d.mean(), d.std(ddof=1)
    if sd == 0:
        return (0.0, 1.0) if mean == 0 else (math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(len(d)))
    df = len(d) - 1
    # P(|T| > |t|) for Student's t with df degrees of freedom, via the regularized incomplete beta.
    return float(t), float(betainc(df / 2.0, 0.5, df / (df + t * t)))


def compare(reference, other, alpha: float = 0.05) -> str | None:
    """'better' when the reference (Sandwich) has significantly lower perplexity than `other`,
    'worse' when significantly higher, None otherwise (or with fewer than two seeds)."""
    if len(reference) != len(other):
        raise ValueError(f"paired samples differ in size: {len(reference)} vs {len(other)}")
    if len(reference) < 2:
        return None
    t, p = paired_t_test(other, reference)
    if p >= alpha:
        return None
    return BETTER if t > 0 else WORSE


def aggregate_seeds(records: list[dict], reference: str | None = None, alpha: float = 0.05,
                    metric: str = "ppl") -> list[dict]:
    """Per-seed records -> one record per cell, the mean over seeds (lenex.tables.seeds.mean_over_seeds:
    `<metric>_std`, `seeds`, `seed_values`), with `significance` against `reference` (None for the
    reference itself, or without one)."""
    groups, _ = group_by_seed(records, metric)
    by_cell = {(variant, corpus, length): by_seed for (variant, corpus, _mask, length, _ltr), by_seed in groups.items()}
    out = mean_over_seeds(records, metric)
    for merged in out:
        merged["significance"] = None
        if reference is None or merged["variant"] == reference or "seeds" not in merged:
            continue
        ref = by_cell.get((reference, merged["corpus"], merged["length"]))
        if ref is None:
            raise ValueError(f"no {reference} results on {merged['corpus']} at {merged['length']} to test "
                             f"{merged['variant']} against")
        shared = [s for s in merged["seeds"] if s in ref]
        merged["significance"] = compare([ref[s][metric] for s in shared],
                                         [merged["seed_values"][str(s)] for s in shared], alpha)
    return out
