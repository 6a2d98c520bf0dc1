"""A claim's check on our cells as a three-valued verdict with stated multiplicity rules.

Every predicate kind becomes leaves of lenex.claims.leaves (a trend or `flat` over a list is the
`all` of its consecutive steps or of its pairs), and the tree is evaluated with a pair of levels,
alpha_hold and alpha_contra, starting at (0.05, 0.05):

- all(k): holds if EVERY child holds at alpha_hold (intersection-union: no correction needed);
  contradicted if ANY child is contradicted at alpha_contra / k (Bonferroni); else inconclusive.
- any(k): holds if ANY child holds at alpha_hold / k (Bonferroni); contradicted if EVERY child
  is contradicted at alpha_contra; else inconclusive.
- not(child): holds if the child is contradicted at alpha_hold, contradicted if it holds at
  alpha_contra.

The deciding leaf (whose interval the claim's record shows): of an `all` that holds, its weakest
holding leaf; of an `any` that holds, its strongest; of a contradiction, the contradicting leaf
(an `all`'s strongest, an `any`'s weakest); of an inconclusive node, its first inconclusive leaf.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from .intervals import Estimate, Sample, difference, log_ratio, positive, value_effect
from .leaves import CONTRADICTED, HOLDS, INCONCLUSIVE, Leaf, judge
from .refs import expand


@dataclass(frozen=True)
class Outcome:
    verdict: str
    decider: Leaf
    leaves: tuple[Leaf, ...]
    by_construction: str | None = None  # why every leaf cannot fail (lenex.claims.cannot_fail), if so
    read_as_exact: str | None = None  # the verdict were its one-replicate values exact (the rule before they were not)


def _list(args) -> list[str]:
    return [r for ref in args for r in expand(ref)]


def leaf_specs(check, words: dict[str, float], mark_reference) -> object:
    """The check as a tree of ("all" | "any", [children]), ("not", child) and leaves
    ("leaf", rule, refs, boundary, kind): `words` gives each threshold's value,
    `mark_reference(ref)` the reference row's cell of a t-test mark."""
    kind, args = next(iter(check.items()))
    if kind in ("all", "any"):
        return (kind, [leaf_specs(sub, words, mark_reference) for sub in args])
    if kind == "not":
        return ("not", leaf_specs(args, words, mark_reference))
    if kind in ("increasing", "decreasing", "nondecreasing"):
        values = _list(args)
        if len(values) < 2:
            raise ValueError(f"a trend needs at least two values, got {len(values)}")
        steps = list(zip(values, values[1:]))
        if kind == "decreasing":
            return ("all", [("leaf", "less", (b, a), 0.0, kind) for a, b in steps])
        rule = "less" if kind == "increasing" else "at_most"
        return ("all", [("leaf", rule, (a, b), 0.0, kind) for a, b in steps])
    if kind == "flat":
        values, band = _list(args), math.log1p(words["flat"])
        return ("all", [("leaf", "within", (a, b), band, kind) for i, a in enumerate(values) for b in values[i + 1:]])
    if kind in ("less", "at_most"):
        return ("leaf", kind, tuple(args), 0.0, kind)
    if kind == "comparable":
        return ("leaf", "within", tuple(args), math.log1p(words["comparable"]), kind)
    if kind in ("ratio_at_least", "ratio_below"):
        rule = "at_least" if kind == "ratio_at_least" else "below"
        return ("leaf", rule, tuple(args[:2]), math.log(words[args[2]]), kind)
    if kind in ("value_at_most", "value_above"):
        return ("leaf", kind, (args[0],), words[args[1]], kind)
    if kind == "mark":  # the reference row against the cell: 'better' = the reference lower
        ref, cell = mark_reference(args[0]), args[0]
        if args[1] == "none":
            return ("leaf", "within", (cell, ref), math.log1p(words["comparable"]), kind)
        return ("leaf", "less", (ref, cell) if args[1] == "better" else (cell, ref), 0.0, kind)
    raise ValueError(f"unknown predicate kind {kind!r}")


# Rules that decide an order (a boundary of 0), which a difference decides as a log-ratio does.
ORDER_RULES = ("less", "at_most")
NO_RATIO = "none: a value is not positive, so a ratio against a threshold is not defined"


def on_log_scale(refs, ours: dict[str, Sample], paper: dict[str, float | None]) -> bool:
    """Whether a comparison of cells is read on the log scale: every value, ours (each seed's too)
    and the paper's, is positive. Else an order is read on differences (both sides alike)."""
    cells = [ours[r] for r in refs if r in ours]
    return positive(*cells) and all(paper.get(r) is None or paper[r] > 0 for r in refs)


def _estimate(rule: str, refs, boundary: float, ours: dict[str, Sample], log_scale: bool) -> Estimate:
    if rule in ("value_at_most", "value_above"):
        return value_effect(ours[refs[0]], boundary)
    if log_scale:
        return log_ratio(ours[refs[0]], ours[refs[1]])
    if rule in ORDER_RULES:
        return difference(ours[refs[0]], ours[refs[1]])
    return Estimate(0.0, NO_RATIO)


def _paper_effect(rule: str, refs, boundary: float, paper: dict[str, float | None], log_scale: bool) -> float | None:
    values = [paper.get(r) for r in refs]
    if None in values:
        return None
    if rule in ("value_at_most", "value_above"):
        if values[0] <= 0:
            return None
        return math.log(values[0] / boundary) if boundary > 0 else values[0] - boundary
    if not log_scale:
        return values[0] - values[1] if rule in ORDER_RULES else None
    return math.log(values[0] / values[1])


def evaluate_tree(tree, ours: dict[str, Sample], paper: dict[str, float | None],
                  hold_divisor: int = 1, contra_divisor: int = 1) -> Outcome:
    """The tree's verdict at levels ALPHA / hold_divisor and ALPHA / contra_divisor."""
    if tree[0] == "leaf":
        _, rule, refs, boundary, _kind = tree
        # A value predicate's boundary is its limit (on the log scale: 0 against ln(v / limit)).
        limit = boundary if rule in ("value_at_most", "value_above") else None
        log_scale = limit is not None or on_log_scale(refs, ours, paper)
        leaf = judge(rule, refs, _estimate(rule, refs, boundary, ours, log_scale),
                     0.0 if limit is not None else boundary, _paper_effect(rule, refs, boundary, paper, log_scale),
                     hold_divisor, contra_divisor)
        return Outcome(leaf.verdict, leaf, (leaf,))
    if tree[0] == "not":
        inner = evaluate_tree(tree[1], ours, paper, contra_divisor, hold_divisor)
        flipped = {HOLDS: CONTRADICTED, CONTRADICTED: HOLDS}.get(inner.verdict, INCONCLUSIVE)
        return Outcome(flipped, inner.decider, inner.leaves)
    kind, children = tree
    k = len(children)
    if kind == "all":
        outs = [evaluate_tree(c, ours, paper, hold_divisor, contra_divisor * k) for c in children]
        verdict = (CONTRADICTED if any(o.verdict == CONTRADICTED for o in outs)
                   else HOLDS if all(o.verdict == HOLDS for o in outs) else INCONCLUSIVE)
        pick = {HOLDS: min, CONTRADICTED: max}
    else:
        outs = [evaluate_tree(c, ours, paper, hold_divisor * k, contra_divisor) for c in children]
        verdict = (HOLDS if any(o.verdict == HOLDS for o in outs)
                   else CONTRADICTED if all(o.verdict == CONTRADICTED for o in outs) else INCONCLUSIVE)
        pick = {HOLDS: max, CONTRADICTED: min}
    leaves = tuple(leaf for o in outs for leaf in o.leaves)
    deciding = [o for o in outs if o.verdict == verdict]
    if verdict == INCONCLUSIVE:
        decider = deciding[0].decider
    else:
        decider = pick[verdict](deciding, key=lambda o: o.decider.margin).decider
    return Outcome(verdict, decider, leaves)


def direction_of(leaves) -> str:
    """A claim's direction from its leaves': same / opposite when they agree, mixed when not,
    none when no leaf has one."""
    found = {leaf.direction for leaf in leaves} - {"none"}
    return found.pop() if len(found) == 1 else ("mixed" if found else "none")


def median_fraction(leaves) -> float | None:
    fractions = [leaf.effect_fraction for leaf in leaves if leaf.effect_fraction is not None]
    return median(fractions) if fractions else None
