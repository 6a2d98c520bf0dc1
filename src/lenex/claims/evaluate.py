"""Claims as data: load a `config/claims/<paper>.yaml`, check it against its schema, and evaluate
each claim's predicate on the paper's numbers and on ours from the tables' cells files.

A check is a one-key mapping (a predicate kind, lenex.claims.predicates) whose arguments are cell
references (lenex.claims.refs) and threshold names; `all` / `any` / `not` combine checks. Any referenced
cell without a value on a side makes that side's verdict null, with the reason naming the cell:
a missing number never becomes true or false.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jsonschema

from ..files import read_yaml
from . import predicates as P
from .refs import Missing, describe, expand, resolve, tables_of
from .scale import Budget, scale_note

SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "claims.schema.yaml"

# kind -> (function, how its arguments are read): "list" = one list of references; "pair" = two
# references; "pair+t" = two references and a threshold name; "one+t" = a reference and a threshold.
# `all` / `any` / `not` combine checks.
KINDS = {
    "increasing": (P.increasing, "list"), "decreasing": (P.decreasing, "list"),
    "nondecreasing": (P.nondecreasing, "list"), "less": (P.less, "pair"), "at_most": (P.at_most, "pair"),
    "ratio_at_least": (P.ratio_at_least, "pair+t"), "ratio_below": (P.ratio_below, "pair+t"),
    "comparable": (P.comparable, "pair+comparable"), "flat": (P.flat, "list+flat"),
    "value_at_most": (P.value_at_most, "one+t"), "value_above": (P.value_above, "one+t"),
    "mark": (P.mark_is, "mark"),
}


@dataclass
class Verdict:
    holds: bool | None
    reasons: list[str]


def load_claims(path: str | Path, schema_path: str | Path = SCHEMA) -> dict:
    """The claims file, validated; an error names the file and the claim id."""
    path = Path(path)
    data = read_yaml(path)  # a syntax error or a duplicate key names the file and line
    schema = read_yaml(schema_path)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: [str(p) for p in e.path])
    if errors:
        raise ValueError(f"{path}: " + "; ".join(_where(data, e) + e.message for e in errors[:5]))
    ids = [c["id"] for c in data["claims"]]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ValueError(f"{path}: duplicate claim ids: {', '.join(duplicated)}")
    for claim in data["claims"]:
        try:
            for ref in references(claim.get("check")):
                tables_of(ref)  # a malformed reference is an error here, before any cell is read
            _thresholds(claim.get("check"))
            if claim.get("scale"):
                P.threshold(claim["scale"]["threshold"])
        except ValueError as err:
            raise ValueError(f"{path}: claim {claim['id']!r}: {err}") from err
    return data


def _where(data, error) -> str:
    path = list(error.path)
    if len(path) >= 2 and path[0] == "claims" and isinstance(path[1], int):
        claim = data["claims"][path[1]]
        name = claim.get("id", f"#{path[1] + 1}") if isinstance(claim, dict) else f"#{path[1] + 1}"
        rest = "/".join(str(p) for p in path[2:])
        return f"claim {name!r}{' at ' + rest if rest else ''}: "
    return f"at {'/'.join(map(str, path)) or 'top level'}: "


def _thresholds(check) -> None:
    if not check:
        return
    kind, args = next(iter(check.items()))
    if kind == "not":
        _thresholds(args)
    elif kind in ("all", "any"):
        for sub in args:
            _thresholds(sub)
    elif KINDS[kind][1] in ("pair+t", "one+t"):
        P.threshold(args[-1])


def references(check) -> list[str]:
    """Every cell reference of a check, lists expanded, in order of appearance."""
    if not check:
        return []
    kind, args = next(iter(check.items()))
    if kind == "not":
        return references(args)
    if kind in ("all", "any"):
        return [r for sub in args for r in references(sub)]
    how = KINDS[kind][1]
    if how.startswith("list"):
        return [r for ref in args for r in expand(ref)]
    refs = args[:-1] if how in ("pair+t", "one+t", "mark") else args
    return [r for ref in refs for r in expand(ref)]


def evaluate(check, tables: dict[str, dict], side: str) -> Verdict:
    """The check on one side; null (with every missing cell named) when a cell has no value."""
    values = {ref: resolve(ref, tables, side) for ref in references(check)}
    missing = [v.reason for v in values.values() if isinstance(v, Missing)]
    if missing:
        return Verdict(None, list(dict.fromkeys(missing)))
    return Verdict(_holds(check, values), [])


def _holds(check, values) -> bool:
    kind, args = next(iter(check.items()))
    if kind == "not":
        return not _holds(args, values)
    if kind == "all":
        return all(_holds(sub, values) for sub in args)
    if kind == "any":
        return any(_holds(sub, values) for sub in args)
    func, how = KINDS[kind]
    number = lambda ref: values[ref].value  # noqa: E731
    if how == "list":
        return func([number(r) for ref in args for r in expand(ref)])
    if how == "list+flat":
        return func([number(r) for ref in args for r in expand(ref)], P.threshold("flat"))
    if how == "pair":
        return func(number(args[0]), number(args[1]))
    if how == "pair+comparable":
        return func(number(args[0]), number(args[1]), P.threshold("comparable"))
    if how == "pair+t":
        return func(number(args[0]), number(args[1]), P.threshold(args[2]))
    if how == "one+t":
        return func(number(args[0]), P.threshold(args[1]))
    return func(values[args[0]].mark, args[1])  # mark


def evaluate_claim(claim: dict, tables: dict[str, dict], budget: Budget | None = None) -> dict:
    """One claim's record: id, statement, source, on_paper, on_ours, evidence (text). With the
    preset's `budget`, a claim that names its phenomena (`scale`) and fails on ours says whether the
    scale study sees them at that budget (lenex.claims.scale): untestable at this scale if not, and
    its record gains `scale` ({trained_tokens, first_seen_tokens})."""
    check = claim.get("check")
    untestable = claim.get("untestable") or {}
    record = {"id": claim["id"], "statement": claim["statement"], "source": claim["source"]}
    notes, scale_facts = [], None
    for side in ("paper", "ours"):
        if side in untestable or not check:
            record[f"on_{side}"] = None
            notes.append(f"not testable on {side}: {untestable.get(side, 'no check given')}")
            continue
        verdict = evaluate(check, tables, side)
        record[f"on_{side}"] = verdict.holds
        if verdict.holds is None:
            notes.append(f"not testable on {side}: " + "; ".join(verdict.reasons))
    if record["on_ours"] is False and claim.get("scale") and budget is not None:
        note = scale_note(claim["scale"], budget)
        record["on_ours"] = None if note.untestable else False
        scale_facts = note.facts()
        notes.append(note.why)
    cells = [describe(ref, tables) for ref in dict.fromkeys(references(check))]
    record["evidence"] = "; ".join(cells + notes)
    if scale_facts is not None:
        record["scale"] = scale_facts  # the budgets as numbers, for pages that weigh the gap
    return record


def evaluate_paper(claims: dict, tables: dict[str, dict], budget: Budget | None = None) -> list[dict]:
    return [evaluate_claim(c, tables, budget) for c in claims["claims"]]
