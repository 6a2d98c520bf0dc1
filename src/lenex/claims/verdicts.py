"""A claim's verdict on ours, one of five, and the fields of its record (docs/claims.md):

- holds / contradicted / inconclusive: the three-valued check on our cells (lenex.claims.combine);
- untestable: a cell not computed, a claim marked `untestable: {ours: ...}`, or a contradiction the
  scale study shows to need a larger budget or shape than the run's (lenex.claims.scale), quoted;
- by-construction: the claim cannot fail given our setup (`by_construction`), every comparison of
  its check cannot fail given the recorded cells, or every cell is an exact curve of an equation
  (lenex.claims.cannot_fail); it is still checked and shown (`outcome`), and kept out of every count.
"""
from __future__ import annotations

from dataclasses import replace

from .cannot_fail import equations_only, why_cannot_fail
from .combine import Outcome, direction_of, evaluate_tree, leaf_specs, median_fraction
from .intervals import ONE_REPLICATE, Sample
from .leaves import CONTRADICTED, HOLDS, INCONCLUSIVE
from .refs import Missing, mark_reference, resolve, sample

UNTESTABLE, BY_CONSTRUCTION = "untestable", "by-construction"
VERDICTS = (HOLDS, CONTRADICTED, INCONCLUSIVE, UNTESTABLE, BY_CONSTRUCTION)


def leaf_refs(tree) -> list[str]:
    if tree[0] == "leaf":
        return list(tree[2])
    if tree[0] == "not":
        return leaf_refs(tree[1])
    return [r for child in tree[1] for r in leaf_refs(child)]


def ours_outcome(check, tables: dict[str, dict], words: dict[str, float], named: list[str]) -> Outcome | list[str]:
    """The check's three-valued outcome on our cells, or the reasons it cannot be tested (every
    missing cell named); `named`: the cells the check names (lenex.claims.evaluate.references)."""
    missing = [got.reason for ref in dict.fromkeys(named)
               for got in [resolve(ref, tables, "ours")] if isinstance(got, Missing)]
    if missing:  # before any mark looks for its reference row: a paper-only cells file names none
        return list(dict.fromkeys(missing))
    tree = leaf_specs(check, words, lambda ref: mark_reference(ref, tables))
    refs = list(dict.fromkeys(leaf_refs(tree)))
    ours = {r: sample(r, tables) for r in refs}
    missing = [s.reason for s in ours.values() if isinstance(s, Missing)]
    if missing:
        return list(dict.fromkeys(missing))
    paper = {r: _paper_value(r, tables) for r in refs}
    samples = {r: s for r, s in ours.items() if isinstance(s, Sample)}
    exact = equations_only(refs, tables)
    if exact:  # whatever its combinators: a check of the equation alone is by construction, shown as checked
        whole = evaluate_tree(tree, samples, paper)
        return Outcome(whole.verdict, whole.decider, tuple(replace(leaf, cannot_fail=exact) for leaf in whole.leaves),
                       by_construction=exact)
    live, dead = prune(tree, lambda rule, leaf_refs: why_cannot_fail(rule, leaf_refs, tables))
    shown = tuple(replace(evaluate_tree(spec, samples, paper).decider, cannot_fail=why) for spec, why in dead)
    if live is None:  # every leaf cannot fail: the check as a whole is by construction, shown as checked
        whole = evaluate_tree(tree, samples, paper)
        return Outcome(whole.verdict, whole.decider, shown, by_construction="; ".join(dict.fromkeys(w for _, w in dead)))
    outcome = evaluate_tree(live, samples, paper)
    return Outcome(outcome.verdict, outcome.decider, outcome.leaves + shown,
                   read_as_exact=exact_reading(live, samples, paper, outcome))


def exact_reading(tree, samples: dict[str, Sample], paper: dict, outcome: Outcome) -> str | None:
    """Where a counted comparison reads one replicate (inconclusive, no interval): the check's verdict
    were those single measurements exact, as the rules before this one read them, so a change of
    label stays visible beside the verdict it replaced; None where no comparison reads one."""
    if not any(leaf.test.startswith(ONE_REPLICATE) for leaf in outcome.leaves):
        return None
    as_exact = {r: replace(s, single=False, exact=True) if s.single else s for r, s in samples.items()}
    return evaluate_tree(tree, as_exact, paper).verdict


def prune(tree, why) -> tuple[object | None, list[tuple[object, str]]]:
    """The tree without its leaves that cannot fail (`why(rule, refs)`: the reason, or None), and
    those leaves with their reasons. Only an `all` (or a lone leaf) drops them: a leaf that cannot
    fail adds nothing to an intersection; under `any` or `not` it would decide, so it stays."""
    if tree[0] == "leaf":
        reason = why(tree[1], tree[2])
        return (None, [(tree, reason)]) if reason else (tree, [])
    if tree[0] != "all":
        return tree, []
    kept, dead = [], []
    for child in tree[1]:
        live, gone = prune(child, why)
        dead += gone
        if live is not None:
            kept.append(live)
    return (("all", kept) if kept else None), dead


def _paper_value(ref: str, tables: dict[str, dict]) -> float | None:
    got = resolve(ref, tables, "paper")
    return None if isinstance(got, Missing) else got.value


def outcome_fields(outcome: Outcome | None) -> dict:
    """The record's fields from the outcome's deciding leaf and all its leaves (null without one)."""
    if outcome is None:
        return {"outcome": None, "interval": None, "level": None, "adjustment": None, "test": None,
                "direction": "none", "significant": None, "effect_fraction": None, "parts": []}
    decider = outcome.decider.record()
    counted = [leaf for leaf in outcome.leaves if not leaf.cannot_fail]
    return {"outcome": outcome.verdict, "interval": decider["interval"], "level": decider["level"],
            "adjustment": decider["adjustment"], "test": decider["test"], "direction": direction_of(counted),
            "significant": decider["significant"], "effect_fraction": median_fraction(counted),
            "parts": [leaf.record() for leaf in outcome.leaves]}


def on_ours(verdict: str) -> bool | None:
    """The two-valued field kept for old readers: true only for holds, false only for contradicted."""
    return {HOLDS: True, CONTRADICTED: False}.get(verdict)
