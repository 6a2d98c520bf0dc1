"""Three-valued leaf predicates on our cells: an effect on the log scale, its interval at a stated
level, and a verdict (holds / contradicted / inconclusive), beside the paper's effect from its
printed numbers (docs/claims.md, "Verdicts on ours").

Every leaf is one comparison against a boundary c on the log scale:

| rule | effect e | holds | contradicted |
|---|---|---|---|
| less(a, b) | ln(a/b) | upper < 0 | lower > 0 |
| at_most(a, b) | ln(a/b) | upper <= 0 | lower > 0 |
| at_least(n, d, t) | ln(n/d) | lower >= ln t | upper < ln t |
| below(n, d, t) | ln(n/d) | upper < ln t | lower >= ln t |
| within(a, b, tol) | ln(a/b) | interval inside [-ln(1+tol), ln(1+tol)] | interval entirely outside |
| value_at_most(v, L) | ln(v/L) (v - L where v <= 0) | upper <= 0 | lower > 0 |
| value_above(v, L) | ln(v/L) | lower > 0 | upper <= 0 |

An exact value (the `exact` test) has no uncertainty: the leaf holds when the rule does and is
contradicted otherwise. Without an interval the leaf is inconclusive.
"""
from __future__ import annotations

from dataclasses import dataclass

from .intervals import EXACT, Estimate

HOLDS, CONTRADICTED, INCONCLUSIVE = "holds", "contradicted", "inconclusive"
ALPHA = 0.05


@dataclass(frozen=True)
class Rule:
    """How far an interval (lo, hi) is past the boundary c toward holding and toward contradicting
    (a slack: > 0, or >= 0 where `strict` is False, decides), and whether e has a direction."""
    hold: object
    hold_strict: bool
    contra: object
    contra_strict: bool
    signed: bool = True


RULES = {
    "less": Rule(lambda lo, hi, c: -hi, True, lambda lo, hi, c: lo, True),
    "at_most": Rule(lambda lo, hi, c: -hi, False, lambda lo, hi, c: lo, True),
    "at_least": Rule(lambda lo, hi, c: lo - c, False, lambda lo, hi, c: c - hi, True),
    "below": Rule(lambda lo, hi, c: c - hi, True, lambda lo, hi, c: lo - c, False),
    "within": Rule(lambda lo, hi, c: min(c - hi, lo + c), False, lambda lo, hi, c: max(lo - c, -c - hi), True,
                   signed=False),
    "value_at_most": Rule(lambda lo, hi, c: -hi, False, lambda lo, hi, c: lo, True),
    "value_above": Rule(lambda lo, hi, c: lo, True, lambda lo, hi, c: -hi, False),
}


def _passes(slack: float, strict: bool) -> bool:
    return slack > 0 if strict else slack >= 0


@dataclass(frozen=True)
class Leaf:
    """One evaluated comparison: its verdict at the level it was asked at, the interval that decided
    it (at `alpha`), and the paper's effect beside ours."""
    rule: str
    refs: tuple[str, ...]
    boundary: float  # c on the log scale (0, ln t, or the band's half-width ln(1 + tol))
    verdict: str
    effect: float
    interval: tuple[float, float] | None
    alpha: float
    divisor: int  # alpha = ALPHA / divisor (Bonferroni)
    test: str
    paper_effect: float | None
    margin: float  # how far past its boundary the deciding interval is (0 when inconclusive)
    se: float | None = None  # the estimate's standard error and degrees of freedom (the power reads them)
    df: float | None = None
    contra_divisor: int = 1  # the Bonferroni divisor a contradiction of it is asked at
    cannot_fail: str | None = None  # why it cannot fail given the recorded models (lenex.claims.cannot_fail)

    @property
    def significant(self) -> bool | None:
        """The interval excludes the boundary of its comparison (0, or ln t; the band's centre 0
        for an equivalence)."""
        if self.interval is None:
            return None
        point = 0.0 if self.rule == "within" else self.boundary
        return self.interval[0] > point or self.interval[1] < point

    @property
    def direction(self) -> str:
        """same / opposite: the sign of our effect against the paper's; none where the comparison
        has no sign (an equivalence), the paper prints no number, or either effect is 0."""
        if not RULES[self.rule].signed or self.paper_effect is None or self.effect == 0 or self.paper_effect == 0:
            return "none"
        return "same" if (self.effect > 0) == (self.paper_effect > 0) else "opposite"

    @property
    def effect_fraction(self) -> float | None:
        """Our log-ratio over the paper's (null for an equivalence, or with no paper number, or 0)."""
        if not RULES[self.rule].signed or not self.paper_effect:
            return None
        return self.effect / self.paper_effect

    def record(self) -> dict:
        return {"rule": self.rule, "refs": list(self.refs), "verdict": self.verdict, "effect": self.effect,
                "paper_effect": self.paper_effect, "boundary": self.boundary,
                "interval": None if self.interval is None else list(self.interval),
                "level": 1 - self.alpha, "adjustment": adjustment(self.divisor), "test": self.test,
                "direction": self.direction, "significant": self.significant, "effect_fraction": self.effect_fraction,
                "contra_level": 1 - ALPHA / self.contra_divisor, "se": self.se, "df": self.df,
                **({"cannot_fail": self.cannot_fail} if self.cannot_fail else {})}


def adjustment(divisor: int) -> str:
    return "none" if divisor == 1 else f"Bonferroni: alpha = {ALPHA:g} / {divisor}"


def judge(rule: str, refs, estimate: Estimate, boundary: float, paper_effect: float | None,
          hold_divisor: int, contra_divisor: int) -> Leaf:
    """The leaf's verdict: holds when its interval at ALPHA / hold_divisor is past the boundary on
    the claimed side, contradicted when its interval at ALPHA / contra_divisor is past it on the
    other, else inconclusive; the recorded interval is the one that decided (the holding level's
    when inconclusive)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; known: {', '.join(RULES)}")
    spec = RULES[rule]
    fields = dict(rule=rule, refs=tuple(refs), boundary=boundary, effect=estimate.effect, test=estimate.test,
                  paper_effect=paper_effect, contra_divisor=contra_divisor, se=estimate.se, df=estimate.df)
    hold_alpha, contra_alpha = ALPHA / hold_divisor, ALPHA / contra_divisor
    held = estimate.interval(hold_alpha)
    if held is None:
        return Leaf(**fields, verdict=INCONCLUSIVE, interval=None, alpha=hold_alpha, divisor=hold_divisor, margin=0.0)
    slack = spec.hold(*held, boundary)
    if _passes(slack, spec.hold_strict):
        return Leaf(**fields, verdict=HOLDS, interval=held, alpha=hold_alpha, divisor=hold_divisor, margin=slack)
    against = estimate.interval(contra_alpha)
    contra = spec.contra(*against, boundary)
    if _passes(contra, spec.contra_strict) or estimate.test == EXACT:
        return Leaf(**fields, verdict=CONTRADICTED, interval=against, alpha=contra_alpha, divisor=contra_divisor,
                    margin=contra)
    return Leaf(**fields, verdict=INCONCLUSIVE, interval=held, alpha=hold_alpha, divisor=hold_divisor, margin=0.0)
