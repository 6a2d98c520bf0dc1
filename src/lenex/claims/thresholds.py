"""Each claim's threshold for every vague word it uses, and where the value comes from.

The rule (docs/claims.md, "Thresholds for vague words"): a word a claim asks an effect to reach
(`ratio_at_least`, or `not ratio_below`: explodes, rescues, rises, collapses) takes half, on the log
scale, the median of the paper's own log effects over the claim's leaves that assert the effect with
that word, never below the word's default:

    ln t = max(ln default, median_i ln(n_i / d_i) / 2)

computed from the paper's printed cells (lenex.claims.paper_cells), never typed. A leaf whose paper
ratio falls below t stays in the claim, checked as the paper words it: the paper's side fails
there, which the claims file lists under `paper_fails` (lenex.claims.evaluate checks the list). A claim of absence (`ratio_below` only: "rises gradually",
"extrapolates") takes the threshold of the effect it is set against: `from: <claim>` (that claim's
effect leaves) or `cells: [[num, den], ...]` (contrasted cells no claim reads). A `value` override is
the paper's own words naming a number, and wins.

The table of every derived threshold in docs/claims.md is written by lenex.claims.threshold_table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from . import predicates as P

PAPERS = ("lex", "receptive-field", "segmented")

DEFAULT, WORDS, DERIVED, BORROWED, CONTRAST = "default", "words", "derived", "borrowed", "contrast"
# The words the rule before this one (sqrt of the mildest ratio) set per claim; any other word kept its
# default then. Only the table's "old" column reads it.
OLD_RULE_WORDS = ("explodes", "rescues", "collapses")


def derived_value(log_effects, floor: float = 1.0) -> float:
    """exp(median / 2) of the paper's log effects (in the claim's direction: > 0 where the paper shows
    the effect), never below `floor` (the word's default). Half on the log scale: the geometric
    midpoint between no change and the paper's typical effect."""
    effects = list(log_effects)
    if not effects:
        raise ValueError("a derived threshold needs at least one paper effect")
    if not all(math.isfinite(e) for e in effects):
        raise ValueError(f"a paper effect is not finite: {effects}")
    if floor <= 0:
        raise ValueError(f"a threshold floor must be positive, got {floor}")
    return max(floor, math.exp(median(effects) / 2))


def mildest_value(log_effects) -> float:
    """The rule before this one, kept to show beside it: sqrt of the paper's mildest ratio, rounded
    down to two decimals (git history: the thresholds typed in config/claims before)."""
    effects = list(log_effects)
    if not effects:
        raise ValueError("the mildest-effect rule needs at least one paper effect")
    return math.floor(100 * math.exp(min(effects) / 2) + 1e-9) / 100


def effect_pairs(check, word: str, negated: bool = False) -> list[tuple[str, str]]:
    """(num, den) of every leaf of `check` asserting num / den reaches `word`'s threshold: a
    `ratio_at_least`, or a `ratio_below` under an odd number of `not`."""
    if not check:
        return []
    kind, args = next(iter(check.items()))
    if kind == "not":
        return effect_pairs(args, word, not negated)
    if kind in ("all", "any"):
        return [p for sub in args for p in effect_pairs(sub, word, negated)]
    asserting = "ratio_below" if negated else "ratio_at_least"
    return [(args[0], args[1])] if kind == asserting and args[2] == word else []


def ratio_text(value: float) -> str:
    return f"x{value:.3g}"


@dataclass(frozen=True)
class Threshold:
    """One word's value for one claim: how it was found (`source`), from which paper effects
    (log ratios), the old rule's value beside it, and the claim's own leaves whose paper ratio is below it."""
    word: str
    value: float
    source: str
    why: str
    effects: tuple[float, ...] = ()
    old: float | None = None
    paper_below: tuple[tuple[str, str, float], ...] = ()  # (num, den, the paper's ratio)
    lender: str | None = None

    def record(self) -> dict:
        out = {"value": self.value, "source": self.source, "why": self.why}
        if self.effects:
            out["paper_effects"] = {"n": len(self.effects), "min": math.exp(min(self.effects)),
                                    "median": math.exp(median(self.effects)), "max": math.exp(max(self.effects))}
        if self.old is not None:
            out["old_rule_value"] = self.old
        if self.paper_below:
            out["paper_below"] = [{"refs": [n, d], "paper_ratio": r} for n, d, r in self.paper_below]
        if self.lender:
            out["from"] = self.lender
        return out

    def text(self) -> str:
        """'x3.66: half the median log effect of the paper's 12 cells (min x2.42 / median x13.4 /
        max x672)', with the paper's own cells below it."""
        text = f"{self.value:g}: {self.why}" if self.source in (WORDS, DEFAULT) else f"{ratio_text(self.value)}: {self.why}"
        if self.paper_below:
            text += (f"; the paper's own ratio is below it at "
                     + ", ".join(f"{n} / {d} ({ratio_text(r)})" for n, d, r in self.paper_below))
        return text


def _paper(ref: str, tables) -> float | None:
    from .refs import Missing, resolve

    got = resolve(ref, tables, "paper")
    return None if isinstance(got, Missing) else got.value


def paper_log_effects(pairs, tables) -> list[tuple[str, str, float]]:
    """(num, den, ln(num / den)) on the paper's printed numbers, cells without a positive number left
    out (they inform no threshold)."""
    found = []
    for num, den in pairs:
        a, b = _paper(num, tables), _paper(den, tables)
        if a is not None and b is not None and a > 0 and b > 0:
            found.append((num, den, math.log(a / b)))
    return found


def _rule_text(effects, floor: float, value: float, what: str) -> str:
    spread = (f"min {ratio_text(math.exp(min(effects)))} / median {ratio_text(math.exp(median(effects)))} / "
              f"max {ratio_text(math.exp(max(effects)))}")
    text = f"half the median log effect of {what} ({len(effects)} cells: {spread})"
    if value == floor and math.exp(median(effects) / 2) < floor:
        text += f", raised to the word's default {ratio_text(floor)}"
    return text


def claim_thresholds(claim: dict, used: list[str], tables: dict | None,
                     lenders: dict[str, dict] | None = None) -> dict[str, Threshold]:
    """Word -> Threshold for every word in `used` (the words the claim's check and scale lookup
    name). `tables`: the paper-side cells to derive from (None: no derivation, only defaults and
    `value` overrides); `lenders`: claim id -> check of the claims file, for `from` overrides.
    Precedence: a `value` override (the paper's words name the number), then `from` / `cells`
    (the contrasted effect), then the claim's own effect leaves, then the default."""
    overrides = claim.get("thresholds") or {}
    check = claim.get("check")
    out = {}
    for word in dict.fromkeys(used):
        spec = overrides.get(word)
        floor = P.THRESHOLDS.get(word, 1.0)
        if spec is not None and "value" in spec:
            out[word] = Threshold(word, float(spec["value"]), WORDS, spec["why"])
            continue
        own = effect_pairs(check, word)
        if spec is not None:
            if tables is None:
                raise ValueError(f"threshold {word!r} is derived from the paper's numbers: none given")
            if "from" in spec:
                lender = (lenders or {}).get(spec["from"])
                if lender is None:
                    raise ValueError(f"threshold {word!r}: from names no claim of this file: {spec['from']!r}")
                pairs, source, what = effect_pairs(lender, word), BORROWED, f"the paper's effect in {spec['from']}"
                if not pairs:
                    raise ValueError(f"threshold {word!r}: {spec['from']} asserts no {word!r} effect to take it from")
            else:
                pairs, source, what = [tuple(p) for p in spec["cells"]], CONTRAST, "the contrasted cells"
            found = paper_log_effects(pairs, tables)
            if not found:
                raise ValueError(f"threshold {word!r}: the paper prints none of the cells it is derived from")
        elif own and tables is not None:
            found, source, what = paper_log_effects(own, tables), DERIVED, "the paper's cells the claim reads"
            if not found:  # the paper prints none of them: nothing to derive, the default stands
                out[word] = Threshold(word, P.threshold(word), DEFAULT, "the default: the paper prints none of its cells")
                continue
        else:
            if word not in P.THRESHOLDS:
                raise ValueError(f"unknown threshold {word!r}; known: {', '.join(sorted(P.THRESHOLDS))}")
            out[word] = Threshold(word, P.THRESHOLDS[word], DEFAULT, "the default (lenex.claims.predicates)")
            continue
        effects = tuple(e for _, _, e in found)
        value = derived_value(effects, floor)
        why = _rule_text(effects, floor, value, what)
        if source == BORROWED:
            why = f"from {spec['from']}, the effect it is set against: {why}"
        below = tuple((n, d, math.exp(e)) for n, d, e in paper_log_effects(own, tables) if math.exp(e) < value)
        old = mildest_value(effects) if word in OLD_RULE_WORDS else P.THRESHOLDS[word]
        out[word] = Threshold(word, value, source, why, effects, old, below, spec.get("from") if spec else None)
    return out
