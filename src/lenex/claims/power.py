"""What would decide an inconclusive claim: from the observed spread of its paired differences, the
number of seeds (or scored pieces) at which its interval would clear its boundary, and which way
its leaves lean (docs/claims.md, "Power").

For a leaf with effect e, standard error se over n paired differences (sd = se * sqrt(n)) and a
boundary c, the gap is how far e is past c on the side it lies (toward holding or toward being
contradicted, by the leaf's own rule). The n that decides it at level alpha with power p, were the
true effect e and the spread sd, is the least n >= 2 with

    (t(1 - alpha/2, n - 1) + t(p, n - 1)) * sd / sqrt(n) <= gap

(p = 0.5: the n at which the observed effect's own interval would just clear c). A holding side is
asked at the leaf's holding level, a contradiction at its contradicting level (Bonferroni inside
`all`). An unpaired (Welch) or unreplicated leaf has no such n, said so.
"""
from __future__ import annotations

import math
import re

from scipy import stats

from .leaves import RULES

POWER = 0.8  # the usual design power: four chances in five to decide, were the observed effect true
MOST = 10 ** 7  # beyond this many seeds or pieces the effect is, for any run, at its boundary
_OVER = re.compile(r"over (\d+) (\w+?)s?\b")


def units_needed(gap: float, sd: float, alpha: float, power: float = POWER) -> int | None:
    """The least n >= 2 with (t(1 - alpha/2, n-1) + t(power, n-1)) * sd / sqrt(n) <= gap; None when
    gap <= 0 (the effect is at or past the other side) or no n up to MOST suffices."""
    if sd < 0 or not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"need sd >= 0, alpha and power in (0, 1); got sd={sd}, alpha={alpha}, power={power}")
    if gap <= 0:
        return None
    if sd == 0:
        return 2

    def enough(n: int) -> bool:
        return (stats.t.ppf(1 - alpha / 2, n - 1) + stats.t.ppf(power, n - 1)) * sd / math.sqrt(n) <= gap

    if not enough(MOST):
        return None
    lo, hi = 2, 2
    while not enough(hi):
        lo, hi = hi, hi * 2
    while lo < hi:  # the least n that is enough (enough() is monotone in n)
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if not enough(mid) else (lo, mid)
    return lo


def lean(rule: str, effect: float, boundary: float) -> tuple[str, float]:
    """Which verdict the point estimate is on the side of ('holds', 'contradicted' or 'neither'),
    and how far past the boundary it is (the gap; 0 for neither)."""
    spec = RULES[rule]
    toward_hold, toward_contra = spec.hold(effect, effect, boundary), spec.contra(effect, effect, boundary)
    if toward_hold > 0:
        return "holds", toward_hold
    if toward_contra > 0:
        return "contradicted", toward_contra
    return "neither", 0.0


def replication(test: str | None) -> tuple[int, str] | None:
    """(n, unit) of a paired test ('paired t over 5 seeds' -> (5, 'seed'); 'over 256 segments' ->
    (256, 'segment')); None for an unpaired, exact or unreplicated one."""
    if not test or test.startswith("Welch") or "over" not in test:
        return None
    match = _OVER.search(test)
    return (int(match.group(1)), match.group(2)) if match else None


def leaf_power(part: dict, power: float = POWER) -> dict | None:
    """For one leaf's record: which way it leans, whether its own interval already lies on the
    contradicting side (significantly against, at its holding level), and the n that would decide
    it toward its lean; None for a leaf without a paired replicate."""
    got = replication(part.get("test"))
    if got is None or part.get("se") is None:
        return None
    n, unit = got
    side, gap = lean(part["rule"], part["effect"], part["boundary"])
    level = part["contra_level"] if side == "contradicted" else part["level"]
    needed = units_needed(gap, part["se"] * math.sqrt(n), 1 - level, power) if side != "neither" else None
    interval = part.get("interval")
    against = bool(interval) and RULES[part["rule"]].contra(*interval, part["boundary"]) > 0
    return {"leans": side, "significantly_against": against, "n": n, "unit": unit, "needed": needed,
            "level": level}


def claim_power(parts: list[dict], power: float = POWER) -> dict | None:
    """What would decide an inconclusive claim, read as the `all` of its counted inconclusive leaves:
    contradicted as soon as one leaf leaning that way is (the fewest n among them), else held when
    every leaf leaning to hold does (the most n among them). Also how many leaves lean each way and
    how many are significantly against at their own level. None without a paired replicate."""
    open_ = [(p, leaf_power(p, power)) for p in parts if p["verdict"] == "inconclusive" and not p.get("cannot_fail")]
    found = [(p, got) for p, got in open_ if got is not None]
    if not found:
        return None
    against = [got for _, got in found if got["leans"] == "contradicted"]
    toward = [got for _, got in found if got["leans"] == "holds"]
    if against:
        decide, pick = "contradicted", min(against, key=lambda g: g["needed"] or math.inf)
    elif toward and len(toward) == len(found):
        decide, pick = "holds", max(toward, key=lambda g: g["needed"] or math.inf)
    else:
        decide, pick = "neither", found[0][1]
    needed = pick["needed"] if decide != "neither" else None
    return {"decides": decide, "needed": needed, "n": pick["n"], "unit": pick["unit"], "level": pick["level"],
            "power": power, "leaning": {"holds": len(toward), "contradicted": len(against),
                                        "significantly_against": sum(g["significantly_against"] for _, g in found),
                                        "of": len(open_)}}


def power_text(found: dict | None, cost: str | None = None) -> str:
    """'contradiction needs 9 seeds (now 3) at 99.8%, power 0.8; leans: 9 of 23 significantly against'."""
    if found is None:
        return "no paired replicate: no n decides it"
    lean_ = found["leaning"]
    leans = (f"leaves lean {lean_['holds']} to hold, {lean_['contradicted']} against "
             f"({lean_['significantly_against']} significantly, at their own level), of {lean_['of']} open")
    if found["needed"] is None:
        return f"no n decides it at the observed effect (it sits on its boundary); {leans}"
    word = "contradiction" if found["decides"] == "contradicted" else "hold"
    cost_text = f", {cost}" if cost else ""
    return (f"{word} needs {found['needed']:,} {found['unit']}s (now {found['n']}) at {100 * found['level']:.4g}%, "
            f"power {found['power']:g}{cost_text}; {leans}")


def seeds_cost(found: dict | None, models: int, tokens: int) -> str | None:
    """The cost of deciding by more seeds: (needed - now) more seeds of each of the claim's `models`,
    each training at least `tokens` (the paper's fewest per model; the cost model's input is
    trainings x tokens); by more scored pieces, the
    factor of scored tokens (evaluation only). None when no n decides it."""
    if found is None or found["needed"] is None:
        return None
    more = found["needed"] - found["n"]
    if found["unit"] != "seed":
        return f"{found['needed'] / found['n']:.3g}x the scored tokens (evaluation only)"
    return (f"{more * models:,} more trainings ({models} models x {more} seeds) of at least {tokens:,} tokens each: "
            f"at least {more * models * tokens:,} training tokens")


# What one point of each sweep trains per model of a claim: a budget sweep at four
# budgets x2 apart from the run's (1 + 2 + 4 + 8 = 15 budgets' worth), the heads sweep at four head
# counts at the run's budget, the corpus sweep on a second long-document corpus; three seeds each.
SWEEP_BUDGETS = {"budget": 1 + 2 + 4 + 8, "heads": 4, "corpus": 1}
SWEEP_SEEDS = 3


def sweep_tokens(variable: str, models: int, tokens: int) -> int:
    """Training tokens of one sweep of `variable` over a claim's `models`, each trained on `tokens`
    at the run's budget: SWEEP_BUDGETS[variable] x SWEEP_SEEDS x models x tokens."""
    if variable not in SWEEP_BUDGETS:
        raise ValueError(f"unknown sweep {variable!r}; known: {', '.join(SWEEP_BUDGETS)}")
    if models < 1 or tokens < 1:
        raise ValueError(f"a sweep needs at least one model and one token, got {models} and {tokens}")
    return SWEEP_BUDGETS[variable] * SWEEP_SEEDS * models * tokens
