"""Our effect between two cells on the log scale, with the interval the data can support.

A cell of ours is a `Sample`: its value and what replicates it (each seed's value, or one model's
per-piece NLLs over named scored tokens), or a value computed exactly. `log_ratio(a, b)` estimates
ln(a / b) by the first test that applies, in this order (docs/claims.md):

1. paired t over seeds: both cells hold >= 2 common seeds; d_s = ln a_s - ln b_s, df = n - 1;
2. paired t over pieces: both cells hold per-piece NLLs of the same scored tokens (the recorded
   hash); d_p = nll_a(p) - nll_b(p), df = n_p - 1 (one model per cell: evaluation noise only);
3. Welch t on the log values: both cells hold >= 2 seeds that cannot be paired;
   (3b. t over seeds against an exact value: one side a mean over >= 2 seeds, the other computed
   exactly, e.g. an ERF against its model's TRF or L_tr; d_s = ln a_s - ln b, df = n - 1;)
4. exact: both values are computed exactly (a degenerate interval): a count fixed by the config
   (L_tr, TRF = w*R), an identity check of two computations;
5. none: one replicate: a side is one measurement of one model (one seed's ERF or recent share, a
   figure's attention statistic, a timing), whatever kind of number it is: no interval, inconclusive;
6. none: no replication recorded (no interval, the verdict is inconclusive).

Where a value is not positive (an attention resolution R(s) may be negative) there is no log
scale: `difference(a, b)` estimates a - b by the same tests (but the per-piece one), which decides
an order (a boundary of 0) as well; a ratio against a threshold is then not defined
(lenex.claims.combine: no interval, inconclusive, said so).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

EXACT = "exact"
NO_REPLICATION = "none: no replication recorded"
# No "over" in it: lenex.claims.power reads a replicated test's n from "over <n> <unit>s".
ONE_REPLICATE = "none: one replicate (one measurement of one model)"


@dataclass(frozen=True)
class Sample:
    """One cell of ours: `value`, each seed's value (`seeds`), one model's per-piece NLLs
    (`pieces`: {unit, nll, tokens_sha256}), `exact` (a count or check computed exactly), or
    `single`: one measurement of one model with no replicate (one seed's ERF, a figure's statistic)."""
    value: float
    seeds: dict[str, float] | None = None
    pieces: dict | None = None
    exact: bool = False
    single: bool = False

    def __post_init__(self):
        if self.exact and self.single:
            raise ValueError("a cell is either computed exactly or one measurement, not both")


@dataclass(frozen=True)
class Estimate:
    """An effect on the log scale and its sampling distribution: Student t with `df` degrees of
    freedom and standard error `se` (se None: no interval; the exact test: a degenerate one)."""
    effect: float
    test: str
    se: float | None = None
    df: float | None = None

    def interval(self, alpha: float) -> tuple[float, float] | None:
        """The two-sided (1 - alpha) interval, None without one."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        if self.test == EXACT:
            return (self.effect, self.effect)
        if self.se is None:
            return None
        half = float(stats.t.ppf(1 - alpha / 2, self.df)) * self.se
        return (self.effect - half, self.effect + half)


def t_of_differences(differences, test: str) -> Estimate:
    """The mean of paired differences and its standard error (df = n - 1)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"a paired t interval needs at least 2 differences, got {d.size}")
    return Estimate(float(d.mean()), test, float(d.std(ddof=1) / math.sqrt(len(d))), len(d) - 1)


def welch(a, b, test: str) -> Estimate:
    """mean(a) - mean(b) with the Welch-Satterthwaite degrees of freedom (unequal variances)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) < 2 or len(b) < 2:
        raise ValueError(f"Welch's t needs at least 2 values per side, got {len(a)} and {len(b)}")
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    # Both variances zero: no spread to weigh, the difference is as exact as the values.
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1)) if se > 0 else len(a) + len(b) - 2
    return Estimate(float(a.mean() - b.mean()), test, se, df)


def _logs(values) -> np.ndarray:
    values = np.asarray(list(values), dtype=np.float64)
    if (values <= 0).any():
        raise ValueError(f"a log-scale comparison needs positive values, got {values.tolist()}")
    return np.log(values)


def pieces_pair(a: dict | None, b: dict | None) -> bool:
    """Whether two piece records score the very same tokens (same hash, same number of pieces)."""
    return bool(a and b and a.get("tokens_sha256") and a["tokens_sha256"] == b.get("tokens_sha256")
                and len(a["nll"]) == len(b["nll"]) >= 2)


def positive(*samples: Sample) -> bool:
    """Whether every value of these cells (each seed's too) is positive: a ratio of them is defined."""
    return all(v > 0 for x in samples for v in [x.value, *(x.seeds or {}).values()])


def log_ratio(a: Sample, b: Sample) -> Estimate:
    """ln(a / b) by the first test that applies (the module's list)."""
    return _contrast(a, b, _logs, "")


def difference(a: Sample, b: Sample) -> Estimate:
    """a - b by the same tests on the values themselves: the order of two cells where a value is not
    positive (an attention resolution R(s) can be), which has no log scale; no per-piece test (the
    pieces are NLLs, a log scale)."""
    return _contrast(a, b, lambda values: np.asarray(list(values), dtype=np.float64), ", on differences")


def _contrast(a: Sample, b: Sample, scale, scale_note: str) -> Estimate:
    common = sorted(set(a.seeds or {}) & set(b.seeds or {}), key=str)
    if len(common) >= 2:
        d = scale(a.seeds[s] for s in common) - scale(b.seeds[s] for s in common)
        return t_of_differences(d, f"paired t over {len(common)} seeds{scale_note}")
    if not scale_note and pieces_pair(a.pieces, b.pieces):
        d = np.asarray(a.pieces["nll"], dtype=np.float64) - np.asarray(b.pieces["nll"], dtype=np.float64)
        unit = a.pieces.get("unit", "piece")
        return t_of_differences(d, f"paired t over {len(d)} {unit}s (one model each: evaluation noise only)")
    if len(a.seeds or {}) >= 2 and len(b.seeds or {}) >= 2:
        return welch(scale(a.seeds.values()), scale(b.seeds.values()),
                     f"Welch t, unpaired ({len(a.seeds)} and {len(b.seeds)} seeds){scale_note}")
    if len(a.seeds or {}) >= 2 and b.exact:
        return t_of_differences(scale(a.seeds.values()) - scale([b.value])[0],
                                f"t over {len(a.seeds)} seeds against an exact value{scale_note}")
    if len(b.seeds or {}) >= 2 and a.exact:
        return t_of_differences(scale([a.value])[0] - scale(b.seeds.values()),
                                f"t over {len(b.seeds)} seeds against an exact value{scale_note}")
    effect = float(scale([a.value])[0] - scale([b.value])[0])
    return Estimate(effect, _unreplicated(a, b) + ("" if a.exact and b.exact else scale_note))


def _unreplicated(*samples: Sample) -> str:
    """The test of cells without a replicate to pair: exact where every one is computed exactly, one
    replicate where one is a single measurement of a model, else no replication recorded."""
    if all(x.exact for x in samples):
        return EXACT
    return ONE_REPLICATE if any(x.single for x in samples) else NO_REPLICATION


def value_effect(value: Sample, limit: float) -> Estimate:
    """A value against a limit: ln(v / limit) where both are positive, else v - limit; over
    seeds (one-sample t on ln v_s - ln limit) where the value is a mean over >= 2 seeds."""
    if len(value.seeds or {}) >= 2 and limit > 0:
        return t_of_differences(_logs(value.seeds.values()) - math.log(limit), f"t over {len(value.seeds)} seeds")
    effect = math.log(value.value / limit) if value.value > 0 and limit > 0 else value.value - limit
    return Estimate(effect, _unreplicated(value))
