"""Emergence curves: a claim's effect against one scale variable, and the old pooled line.

Small pure functions over numbers (docs/emergence.md):
- `mean_interval`: the effect at one value of the variable, a Student t interval over seeds of
  the per-seed effects (each seed's effect is paired: numerator and denominator from one model);
- the OLD RULE, kept so that its reading stays on the pages beside the rule that replaced it
  (lenex.scale_study.forecast.seed_trend, each seed fitted alone; docs/emergence.md, "Forecasts:
  the rule"): `fit_trend`, one least-squares line of every per-seed effect on log2 of the
  variable, counting each seed's points as independent; `classify`, its slope's interval against
  0; `crossing`, the value at which that line reaches the paper's full effect (Fieller's inverse
  prediction), or None when the effect does not grow; `emergence`, the three together.
- `record_final_loss`: a point's final in-length validation loss (its curve's, else its own), a scale
  variable that says how far the model trained (lenex.scale_study.predictions' `axis="loss"`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

LEVEL = 0.95  # two-sided, as every leaf interval of the claims (docs/claims.md)


def effect_of(ppl: dict, numerator: int, denominator: int, train_length: int) -> float:
    """e = ln ppl(numerator x L_tr) - ln ppl(denominator x L_tr) of one model (ppl keyed by length,
    as a point records it); a missing length is one error naming it."""
    lengths = {k: str(k * train_length) for k in (numerator, denominator)}
    missing = [n for n in lengths.values() if n not in ppl]
    if missing:
        raise ValueError(f"no perplexity at {', '.join(missing)} tokens (L_tr {train_length}); have {sorted(ppl, key=int)}")
    return math.log(ppl[lengths[numerator]]) - math.log(ppl[lengths[denominator]])


def record_effect(record: dict, effect: dict) -> float | None:
    """One point record's e for a sweep's `effect` ({numerator, denominator, protocol}); None where
    the record lacks the protocol's scores or a length the effect reads (what was measured counts)."""
    from ..records.scale_record import scores_of

    scores = scores_of(record, effect.get("protocol", "lex"))
    if not scores:
        return None
    try:
        return effect_of(scores["ppl"], effect["numerator"], effect["denominator"], record["train_length"])
    except ValueError:
        return None


def record_final_loss(record: dict) -> float | None:
    """A point record's final validation loss at its L_tr (in length: the trainer validates at its
    training length): its training curve's `final_valid_loss` (lenex.training.curve), else the
    point's own `valid_loss`, the validation of its final checkpoint that every point records and
    that a curve's last validation is (lenex.scale_study.sweep_curves); None where neither is."""
    curve = record.get("training_curve")
    if isinstance(curve, dict):
        value, where = (curve.get("summary") or {}).get("final_valid_loss"), "training_curve final_valid_loss"
    else:
        value, where = record.get("valid_loss"), "valid_loss"
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"point {record.get('id', record.get('key', '?'))}: {where} is {value!r}, not a loss")
    return float(value)


def paper_effect(numerator: float, denominator: float) -> float:
    """The paper's effect from its printed perplexities: ln(numerator / denominator)."""
    if numerator <= 0 or denominator <= 0:
        raise ValueError(f"perplexities must be positive, got {numerator} / {denominator}")
    return math.log(numerator / denominator)


@dataclass(frozen=True)
class PointEffect:
    mean: float
    low: float | None  # None: one seed, no interval
    high: float | None
    seeds: int


def mean_interval(values: list[float], level: float = LEVEL) -> PointEffect:
    """Mean of the per-seed effects and its Student t interval (df = n - 1); one seed gives the
    value with no interval."""
    n = len(values)
    if n == 0:
        raise ValueError("no seed has this effect")
    mean = sum(values) / n
    if n == 1:
        return PointEffect(mean, None, None, 1)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = stats.t.ppf(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return PointEffect(mean, mean - half, mean + half, n)


@dataclass(frozen=True)
class Trend:
    intercept: float  # the effect at log2(x) = 0
    slope: float  # change of the effect per doubling of the variable
    slope_se: float
    slope_low: float
    slope_high: float
    t: float  # the t quantile of the interval (df = n - 2)
    residual_sd: float
    n: int
    mean_u: float  # mean of log2(x) over the fitted effects
    sxx: float  # sum of squared deviations of log2(x)


def fit_trend(xs: list[float], ys: list[float], level: float = LEVEL) -> Trend:
    """Least squares of y on u = log2(x) over every per-seed effect (each seed's effect a point,
    so n counts seeds x values); needs at least three points at two or more values."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} values of the variable but {len(ys)} effects")
    if any(x <= 0 for x in xs):
        raise ValueError(f"a log-linear trend needs positive values of the variable, got {sorted(set(xs))}")
    n = len(xs)
    us = [math.log2(x) for x in xs]
    if n < 3 or len(set(us)) < 2:
        raise ValueError(f"a trend needs at least 3 effects at 2 or more values, got {n} at {len(set(us))}")
    mean_u, mean_y = sum(us) / n, sum(ys) / n
    sxx = sum((u - mean_u) ** 2 for u in us)
    slope = sum((u - mean_u) * (y - mean_y) for u, y in zip(us, ys)) / sxx
    intercept = mean_y - slope * mean_u
    sse = sum((y - intercept - slope * u) ** 2 for u, y in zip(us, ys))
    residual_sd = math.sqrt(sse / (n - 2))
    se = residual_sd / math.sqrt(sxx)
    t = stats.t.ppf(0.5 + level / 2, n - 2)
    return Trend(intercept, slope, se, slope - t * se, slope + t * se, t, residual_sd, n, mean_u, sxx)


def classify(trend: Trend, paper: float) -> str:
    """grows: the slope's interval excludes 0 on the side of the paper's effect (the effect moves
    toward the paper's as the variable doubles); shrinks: it excludes 0 on the other side; flat:
    it contains 0. A paper effect of exactly 0 has no side: an error."""
    if paper == 0:
        raise ValueError("the paper's effect is 0: no direction to grow toward")
    sign = 1 if paper > 0 else -1
    low, high = sorted((sign * trend.slope_low, sign * trend.slope_high))
    return "grows" if low > 0 else "shrinks" if high < 0 else "flat"


@dataclass(frozen=True)
class Crossing:
    value: float  # the variable at which the fitted line reaches the paper's effect
    low: float
    high: float  # math.inf where the band never excludes it above


def crossing(trend: Trend, target: float) -> Crossing | None:
    """The x at which intercept + slope log2(x) = target, and the set of x whose confidence band
    of the mean contains target: {u : (a + b u - E)^2 <= t^2 s^2 (1/n + (u - u_mean)^2 / Sxx)},
    a bounded interval whenever the slope's interval excludes 0. None when it does not (the
    effect does not grow or shrink at this level: no budget is predicted)."""
    a, b, c = trend.intercept, trend.slope, (trend.t * trend.residual_sd) ** 2
    quad = b * b - c / trend.sxx
    if quad <= 0:
        return None
    offset = a + b * trend.mean_u - target  # the line's distance from the target at u_mean
    linear, const = 2 * offset * b, offset * offset - c / trend.n
    root = math.sqrt(max(linear * linear - 4 * quad * const, 0.0))
    lo, hi = sorted(((-linear - root) / (2 * quad), (-linear + root) / (2 * quad)))
    estimate = (target - a) / b
    return Crossing(2.0 ** estimate, 2.0 ** (trend.mean_u + lo), 2.0 ** (trend.mean_u + hi))


def emergence(values: list[float], per_seed: list[list[float]], paper: float, level: float = LEVEL) -> dict:
    """The old rule's whole reading of one sweep's effect: per value its effect and interval, the
    pooled line, its class and the crossing ("does not grow" unless it grows toward the paper's
    effect)."""
    points = [mean_interval(effects, level) for effects in per_seed]
    xs = [x for x, effects in zip(values, per_seed) for _ in effects]
    ys = [e for effects in per_seed for e in effects]
    trend = fit_trend(xs, ys, level)
    label = classify(trend, paper)
    cross = crossing(trend, paper) if label == "grows" else None
    return {"points": points, "trend": trend, "class": label, "crossing": cross}
