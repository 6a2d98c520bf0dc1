"""Table 3's statistics: mean ± std over seeds and the paired two-sided t-test against Sandwich.

The paper marks x† when Sandwich is significantly better than x and x* when it is significantly
worse (paired two-sided t-test, α = 0.05); runs are paired by seed. Our std is the sample
standard deviation (ddof = 1; the paper does not say which).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc

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


def mean_std(values) -> tuple[float, float | None]:
    values = np.asarray(values, dtype=np.float64)
    return float(values.mean()), (float(values.std(ddof=1)) if len(values) > 1 else None)


def aggregate_seeds(records: list[dict], reference: str | None = None, alpha: float = 0.05,
                    metric: str = "ppl") -> list[dict]:
    """Per-seed records (variant, corpus, length, seed, metric) -> one record per (variant, corpus,
    length) with the mean, `<metric>_std`, `seeds`, and `significance` against `reference`."""
    groups: dict[tuple, dict[int, dict]] = {}
    for record in records:
        key = (record["variant"], record["corpus"], record["length"])
        by_seed = groups.setdefault(key, {})
        if record["seed"] in by_seed and by_seed[record["seed"]][metric] != record[metric]:
            raise ValueError(f"two different results for {key} seed {record['seed']}")
        by_seed[record["seed"]] = record
    out = []
    for (variant, corpus, length), by_seed in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        seed_list = sorted(by_seed)
        first = by_seed[seed_list[0]]
        mean, std = mean_std([by_seed[s][metric] for s in seed_list])
        merged = {k: v for k, v in first.items() if k not in ("seed", "segment_nll", "checkpoint", "seconds")}
        merged.update({metric: mean, f"{metric}_std": std, "seeds": seed_list, "significance": None,
                       "seed_values": {str(s): by_seed[s][metric] for s in seed_list}})
        if reference is not None and variant != reference:
            ref = groups.get((reference, corpus, length))
            if ref is None:
                raise ValueError(f"no {reference} results on {corpus} at {length} to test {variant} against")
            shared = [s for s in seed_list if s in ref]
            merged["significance"] = compare([ref[s][metric] for s in shared], [by_seed[s][metric] for s in shared], alpha)
        out.append(merged)
    return out
