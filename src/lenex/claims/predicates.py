"""The predicate kinds a claim is made of: small pure functions over cell values.

Every vague word of the papers gets ONE threshold, here and nowhere else (docs/claims.md says why
each value): a claims file names a threshold, it never writes a number of its own.
"""
from __future__ import annotations

FLAT = 0.02

THRESHOLDS = {
    # "explodes" / "fails to extrapolate": perplexity at least 1.25 x the reference cell (usually the
    # same row at L_tr). The mildest failure the papers call one: receptive-field Table 1, arXiv,
    # w = 120: 6.77 -> 8.9 (x1.31).
    "explodes": 1.25,
    # "flat" / "stable" / "the same": every value within 2% of the smallest (max / min - 1 <= 0.02).
    "flat": FLAT,
    # "rises" / "increases gradually" (asked of the scale study, whose ratios are against L_tr): at
    # least 1 + flat times the reference, the least rise the "flat" band does not swallow.
    "rises": 1 + FLAT,
    # "comparable" / "close" / "about the same": |a / b - 1| <= 5%.
    "comparable": 0.05,
    # "rescues" / "fixes": the perplexity without the fix is at least twice the perplexity with it.
    "rescues": 2.0,
    # "equals" for two ways to compute the same log-likelihoods: largest |delta NLL| <= 1e-4 nats.
    "identical": 1e-4,
    # "faster": a speed-up factor above 1.
    "faster": 1.0,
}


def threshold(name: str) -> float:
    if name not in THRESHOLDS:
        raise ValueError(f"unknown threshold {name!r}; known: {', '.join(sorted(THRESHOLDS))}")
    return THRESHOLDS[name]


def _pairs(values):
    values = list(values)
    if len(values) < 2:
        raise ValueError(f"a trend needs at least two values, got {len(values)}")
    return zip(values, values[1:])


def increasing(values) -> bool:
    """Strictly rising along the list (e.g. over longer columns, or a stated order of rows)."""
    return all(a < b for a, b in _pairs(values))


def decreasing(values) -> bool:
    return all(a > b for a, b in _pairs(values))


def nondecreasing(values) -> bool:
    return all(a <= b for a, b in _pairs(values))


def less(a: float, b: float) -> bool:
    return a < b


def at_most(a: float, b: float) -> bool:
    return a <= b


def ratio_at_least(num: float, den: float, factor: float) -> bool:
    """num / den >= factor, e.g. "explodes" (factor = THRESHOLDS['explodes'])."""
    return num >= factor * den


def ratio_below(num: float, den: float, factor: float) -> bool:
    return num < factor * den


def flat(values, tolerance: float) -> bool:
    """Every value within `tolerance` (relative) of the smallest."""
    values = list(values)
    if not values or min(values) <= 0:
        raise ValueError(f"flat needs positive values, got {values}")
    return max(values) / min(values) - 1 <= tolerance


def comparable(a: float, b: float, tolerance: float) -> bool:
    if b == 0:
        raise ValueError("comparable: the second value is 0")
    return abs(a / b - 1) <= tolerance


def value_at_most(value: float, limit: float) -> bool:
    return value <= limit


def value_above(value: float, limit: float) -> bool:
    return value > limit


def mark_is(mark: str | None, expected: str) -> bool:
    """A t-test mark: 'better' (reference significantly better), 'worse', or 'none' (no mark)."""
    return (mark or "none") == expected
