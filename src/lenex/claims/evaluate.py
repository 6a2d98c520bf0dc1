"""Claims as data: load a `config/claims/<paper>.yaml`, check it against its schema, and evaluate
each claim on the paper's numbers (two-valued, its printed numbers: lenex.claims.predicates) and on
ours (three-valued with intervals: lenex.claims.combine) from the tables' cells files.

A check is a one-key mapping (a predicate kind) whose arguments are cell references
(lenex.claims.refs) and threshold names (a claim's own `thresholds` override the defaults); `all` /
`any` / `not` combine checks. Any referenced cell without a value on a side makes that side
untestable, with the reason naming the cell: a missing number never becomes true or false.
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path

import jsonschema

from ..files import read_yaml
from . import predicates as P
from . import thresholds as T
from .cell_names import cell_key
from .refs import Missing, cell_row, describe, expand, model_of, produced_key, resolve, tables_of
from .leaves import CONTRADICTED, INCONCLUSIVE
from .power import claim_power, seeds_cost, sweep_tokens
from .scale import Budget, scale_note
from .verdicts import BY_CONSTRUCTION, UNTESTABLE, on_ours, ours_outcome, outcome_fields

SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "claims.schema.yaml"
BASIS = "_threshold_basis"  # the key load_claims stamps on each claim (threshold_basis reads it)

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
    lenders = {c["id"]: c.get("check") for c in data["claims"]}
    for claim in data["claims"]:
        # What its thresholds are derived from (lenex.claims.thresholds): the paper's numbers, the check
        # as written (a caller may narrow the check it evaluates; the threshold stays the claim's) and
        # the file's other claims (a `from` override). Private: no record or page shows it.
        claim[BASIS] = {"paper": data["paper"], "check": claim.get("check"), "lenders": lenders}
        unknown = [i for i in (claim.get("given") or {}).get("claims", []) if i not in ids]
        if unknown:  # a fix names the claims of its failure: a typo would make it untestable for good
            raise ValueError(f"{path}: claim {claim['id']!r}: given names no claim of this file: {unknown[0]!r}")
        try:
            for ref in references(claim.get("check")) + threshold_cells(claim):
                tables_of(ref)  # a malformed reference is an error here, before any cell is read
            check_words(claim)
            for word, spec in (claim.get("thresholds") or {}).items():
                if "from" in spec and spec["from"] not in lenders:
                    raise ValueError(f"threshold {word!r}: from names no claim of this file: {spec['from']!r}")
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


def words_named(check) -> list[str]:
    """The threshold words a check uses: those it names, and `comparable` / `flat` for the kinds
    that read them (`mark: none` is equivalence within `comparable`)."""
    if not check:
        return []
    kind, args = next(iter(check.items()))
    if kind == "not":
        return words_named(args)
    if kind in ("all", "any"):
        return [w for sub in args for w in words_named(sub)]
    how = KINDS[kind][1]
    if how in ("pair+t", "one+t"):
        return [args[-1]]
    if how in ("pair+comparable", "list+flat"):
        return [how.split("+")[1]]
    return ["comparable"] if kind == "mark" and args[1] == "none" else []


def words_used(claim: dict) -> list[str]:
    """The threshold words a claim's check and its scale lookup name, in order, once each."""
    used = words_named(claim.get("check")) + ([claim["scale"]["threshold"]] if claim.get("scale") else [])
    return list(dict.fromkeys(used))


def threshold_cells(claim: dict) -> list[str]:
    """The cell references a `cells` threshold override derives from."""
    return [r for spec in (claim.get("thresholds") or {}).values() for pair in spec.get("cells", []) for r in pair]


def threshold_basis(claim: dict, tables: dict[str, dict] | None = None) -> dict[str, T.Threshold]:
    """Word -> lenex.claims.thresholds.Threshold (value, source, derivation) for every word the claim
    uses. A claim loaded by load_claims derives from its paper's bundled numbers (lenex.claims.paper_cells:
    paper_results.csv), whatever cells it is evaluated on: the value is fixed before any run, the same at
    every preset and for a caller that evaluates a narrowed check on a few cells (scripts/gpu). A claim
    made by hand derives from the paper side of `tables`; with neither, its defaults and `value`
    overrides only."""
    basis = claim.get(BASIS)
    if basis:
        from .paper_cells import bundled_paper_tables

        written = {**claim, "check": basis["check"]}
        return T.claim_thresholds(written, words_used(claim), bundled_paper_tables(basis["paper"]), basis["lenders"])
    return T.claim_thresholds(claim, words_used(claim), tables)


def thresholds_of(claim: dict) -> dict[str, float]:
    """Word -> value for one claim, the one way every caller gets a claim's thresholds: the defaults
    (lenex.claims.predicates.THRESHOLDS) with each word it uses at its effective value
    (lenex.claims.thresholds: the paper's words, the contrasted effect, or its own cells' effects)."""
    return {**P.THRESHOLDS, **{w: t.value for w, t in threshold_basis(claim).items()}}


def check_words(claim: dict) -> None:
    """Every word the claim uses has a value (a default or its own), and every override is used by
    its check or its scale lookup: an unused override is a typo or a left-over, an error either way."""
    words = {**P.THRESHOLDS, **(claim.get("thresholds") or {})}
    used = words_used(claim)
    for word in used:
        if word not in words:
            raise ValueError(f"unknown threshold {word!r}; known: {', '.join(sorted(words))}")
    unused = sorted(set(claim.get("thresholds") or {}) - set(used))
    if unused:
        raise ValueError(f"threshold override {unused[0]!r} is used by none of its predicates")


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


def evaluate(check, tables: dict[str, dict], side: str, words: dict[str, float] | None = None) -> Verdict:
    """The check on one side, with the claim's threshold `words` (default: THRESHOLDS); null (with
    every missing cell named) when a cell has no value."""
    values = {ref: resolve(ref, tables, side) for ref in references(check)}
    missing = [v.reason for v in values.values() if isinstance(v, Missing)]
    if missing:
        return Verdict(None, list(dict.fromkeys(missing)))
    return Verdict(_holds(check, values, words or P.THRESHOLDS), [])


def paper_failures(check, tables: dict[str, dict], words: dict[str, float] | None = None) -> list[str]:
    """The cells of the comparisons that fail on the paper's printed numbers, in order: under `all`,
    those of each failing part; a failing predicate, `any` or `not` names all its cells. Empty where
    the check holds on the paper or a cell has no paper value."""
    values = {ref: resolve(ref, tables, "paper") for ref in references(check)}
    if any(isinstance(v, Missing) for v in values.values()):
        return []
    return list(dict.fromkeys(_failing(check, values, words or P.THRESHOLDS)))


def _failing(check, values, words) -> list[str]:
    if _holds(check, values, words):
        return []
    kind, args = next(iter(check.items()))
    if kind == "all":
        return [r for sub in args for r in _failing(sub, values, words)]
    return references(check)


def where_paper_holds(check, tables: dict[str, dict], words: dict[str, float] | None = None):
    """The check without its parts that fail on the paper's printed numbers (under `all`, recursively;
    a failing predicate, `any` or `not` goes whole): what a claim narrowed to the paper's agreeing cells
    would check, the rule before `paper_fails`; None where nothing is left or a cell has no paper value."""
    values = {ref: resolve(ref, tables, "paper") for ref in references(check)}
    if any(isinstance(v, Missing) for v in values.values()):
        return None
    return _kept(check, values, words or P.THRESHOLDS)


def _kept(check, values, words):
    if _holds(check, values, words):
        return check
    kind, args = next(iter(check.items()))
    if kind != "all":
        return None
    kept = [k for k in (_kept(sub, values, words) for sub in args) if k is not None]
    return {"all": kept} if kept else None


def check_paper_fails(claim: dict, failing: list[str]) -> None:
    """A claim's listed failure on the paper's numbers (`paper_fails.cells`) is exactly where its check
    fails on them: a listed cell that does not fail is a stale note, a failing one not listed would go
    unexplained beside it; either is one error naming the claim and the cells. (A claim listing none
    that fails is recorded as failing; tests/test_claims.py holds every claims file to listing it.)"""
    if not claim.get("paper_fails"):
        return
    listed = [r for ref in claim["paper_fails"]["cells"] for r in expand(ref)]
    if set(listed) != set(failing):
        raise ValueError(f"claim {claim['id']!r}: on the paper's numbers its check fails on "
                         f"{', '.join(failing) or 'no cell'}, but paper_fails lists {', '.join(listed) or 'none'}")


def _holds(check, values, words) -> bool:
    kind, args = next(iter(check.items()))
    if kind == "not":
        return not _holds(args, values, words)
    if kind == "all":
        return all(_holds(sub, values, words) for sub in args)
    if kind == "any":
        return any(_holds(sub, values, words) for sub in args)
    func, how = KINDS[kind]
    number = lambda ref: values[ref].value  # noqa: E731
    if how == "list":
        return func([number(r) for ref in args for r in expand(ref)])
    if how == "list+flat":
        return func([number(r) for ref in args for r in expand(ref)], words["flat"])
    if how == "pair":
        return func(number(args[0]), number(args[1]))
    if how == "pair+comparable":
        return func(number(args[0]), number(args[1]), words["comparable"])
    if how == "pair+t":
        return func(number(args[0]), number(args[1]), words[args[2]])
    if how == "one+t":
        return func(number(args[0]), words[args[1]])
    return func(values[args[0]].mark, args[1])  # mark


def evaluate_claim(claim: dict, tables: dict[str, dict], budget: Budget | None = None,
                   per_variant: bool = False) -> dict:
    """One claim's record: id, statement, source, on_paper (the paper's printed numbers, two-valued),
    the verdict on ours (one of lenex.claims.verdicts.VERDICTS) with its deciding interval, level,
    test, direction, significance, effect fraction and every leaf (`parts`), on_ours (true only
    for holds, false only for contradicted) and the evidence in words. With the preset's `budget`,
    a contradicted claim that names its phenomena (`scale`) asks the scale study whether they show
    only beyond this run's budget or shape (lenex.claims.scale): untestable at this scale if so,
    quoted; its record gains `scale` either way."""
    basis = threshold_basis(claim, tables)
    words = {**P.THRESHOLDS, **{w: t.value for w, t in basis.items()}}
    check = claim.get("check")
    untestable = claim.get("untestable") or {}
    record = {"id": claim["id"], "statement": claim["statement"], "source": claim["source"]}
    notes, outcome, scale_facts = [], None, None
    if "paper" in untestable or not check:
        record["on_paper"] = None
        notes.append(f"not testable on paper: {untestable.get('paper', 'no check given')}")
    else:
        paper = evaluate(check, tables, "paper", words)
        record["on_paper"] = paper.holds
        if paper.holds is None:
            notes.append("not testable on paper: " + "; ".join(paper.reasons))
        else:
            failing = paper_failures(check, tables, words)
            check_paper_fails(claim, failing)
            if failing:  # the claim as the paper words it, its own numbers against part of it: said, not narrowed
                record["paper_fails_on"] = failing
                why = (claim.get("paper_fails") or {}).get("why", "not listed under paper_fails")
                notes.append(f"paper: fails on {', '.join(failing)} ({why})")
    if "ours" in untestable or not check:
        verdict = UNTESTABLE
        notes.append(f"not testable on ours: {untestable.get('ours', 'no check given')}")
    else:
        got = ours_outcome(check, tables, words, references(check))
        if isinstance(got, list):
            verdict = UNTESTABLE
            notes.append("not testable on ours: " + "; ".join(got))
        else:
            outcome, verdict = got, got.verdict
            dead = [leaf for leaf in got.leaves if leaf.cannot_fail]
            if got.by_construction:
                verdict = BY_CONSTRUCTION
                notes.append(f"by construction (from the recorded models): {got.by_construction}")
            elif dead:
                notes.append(f"{len(dead)} of {len(got.leaves)} comparisons cannot fail and are not counted toward "
                             "its hold: " + "; ".join(dict.fromkeys(leaf.cannot_fail for leaf in dead)))
            if got.read_as_exact is not None:
                record["read_as_exact"] = got.read_as_exact
                notes.append("one replicate: a comparison reads one measurement of one model, which has no interval "
                             f"(inconclusive); read as exact values, the check would be {got.read_as_exact}")
    narrowed_check = where_paper_holds(check, tables, words) if record.get("paper_fails_on") else None
    if narrowed_check is not None and "ours" not in untestable:
        # The rule before paper_fails narrowed such a claim to these parts: its verdict stays visible beside.
        got = ours_outcome(narrowed_check, tables, words, references(narrowed_check))
        record["where_paper_holds"] = UNTESTABLE if isinstance(got, list) else (
            BY_CONSTRUCTION if got.by_construction else got.verdict)
    if verdict == CONTRADICTED and claim.get("scale") and budget is not None:
        note = scale_note(claim["scale"], budget, words)
        verdict = UNTESTABLE if note.untestable else CONTRADICTED
        scale_facts = note.facts()
        notes.append(note.why)
    if claim.get("by_construction"):
        verdict = BY_CONSTRUCTION
        notes.append(f"by construction: {claim['by_construction']}")
    record.update(verdict=verdict, on_ours=on_ours(verdict), **outcome_fields(outcome))
    for key in ("narrowed", "paper_fails", "by_construction", "thresholds", "smallest_effect", "given"):
        if claim.get(key):
            record[key] = claim[key]
    if basis:  # the value each word took and how (docs/claims.md, "Thresholds for vague words")
        record["thresholds_used"] = {w: t.record() for w, t in basis.items()}
    models, tokens = claim_models(references(check), tables, per_variant), budget.tokens if budget is not None else None
    if claim.get("smallest_effect") and outcome is not None:
        why = negligible(record["parts"], float(claim["smallest_effect"]["value"]))
        if why:
            record["negligible"] = why
            notes.append(f"negligible: {why} ({claim['smallest_effect']['why']})")
    if verdict == INCONCLUSIVE:
        record["power"] = claim_power(record["parts"])
        if record["power"] is not None:
            record["power"]["cost"] = seeds_cost(record["power"], len(models), tokens or 0) if tokens else None
            record["power"]["models"] = models
    if verdict == CONTRADICTED and claim.get("sweep"):
        record["sweep"] = {**claim["sweep"], "models": len(models),
                           "tokens": {v: sweep_tokens(v, len(models), tokens) for v in claim["sweep"]["variables"]}
                           if tokens and models else None}
    cells = [describe(ref, tables) for ref in dict.fromkeys(references(check))]
    record["evidence"] = "; ".join(cells + notes)
    if scale_facts is not None:
        record["scale"] = scale_facts  # the budgets and the quoted point, for pages that weigh the gap
    return record


def evaluate_paper(claims: dict, tables: dict[str, dict], budget: Budget | None = None,
                   emergence: dict[str, list[dict]] | None = None, per_variant: bool = False,
                   designed: dict[str, list[dict]] | None = None) -> list[dict]:
    """Every claim's record; a claim `given` others (a fix of a failure) is untestable on ours where
    one of them does not hold on ours: a fix of an absent failure cannot be judged. A claim that
    `emergence` (lenex.claims.emergence.readings_by_claim) reads gains its trends, whatever its verdict,
    and one a sweep is designed for (`designed`, lenex.claims.designed_sweeps) that sweep's plan.
    `per_variant`: one model of a variant is scored on every corpus (LEX), so more seeds of a claim
    train one model per variant its cells read, not one per corpus and variant."""
    records = [evaluate_claim(c, tables, budget, per_variant) for c in claims["claims"]]
    for record in records:
        if (emergence or {}).get(record["id"]):
            record["emergence"] = emergence[record["id"]]
        if (designed or {}).get(record["id"]):  # lenex.claims.designed_sweeps: the sweeps planned for it
            record["designed_sweeps"] = designed[record["id"]]
    verdicts = {r["id"]: r["verdict"] for r in records}
    for claim, record in zip(claims["claims"], records):
        given = claim.get("given")
        if not given:
            continue
        unknown = [i for i in given["claims"] if i not in verdicts]
        if unknown:
            raise ValueError(f"claim {claim['id']!r}: given names no claim of this paper: {unknown[0]!r}")
        absent = [f"{i} is {verdicts[i]}" for i in given["claims"] if verdicts[i] != "holds"]
        if absent and record["verdict"] not in (UNTESTABLE, BY_CONSTRUCTION):
            record.update(verdict=UNTESTABLE, on_ours=None)
            record.pop("power", None)
            record.pop("sweep", None)
            record["evidence"] += (f"; not testable on ours: the failure it fixes is not established on ours "
                                   f"({', '.join(absent)}): {given['why']}")
    return records


def negligible(parts: list[dict], smallest: float) -> str | None:
    """Why the claim's effects are negligible: every counted signed comparison's interval lies inside
    +-ln(1 + smallest), the smallest effect of interest; None otherwise (or with no interval)."""
    band = math.log1p(smallest)
    shown = [p for p in parts if not p.get("cannot_fail") and p["rule"] != "within"]
    if not shown or any(p["interval"] is None or not -band < p["interval"][0] <= p["interval"][1] < band for p in shown):
        return None
    widest = max(max(abs(p["interval"][0]), abs(p["interval"][1])) for p in shown)
    return f"every effect's interval lies within ±{widest:.2g} on the log scale, inside ±ln(1 + {smallest:g})"


def claim_models(refs: list[str], tables: dict[str, dict], per_variant: bool = False) -> list[str]:
    """The models a claim's cells read, what one more seed of it trains: `corpus/variant` where each
    corpus trains its own, the variant alone where one model is scored on every corpus (`per_variant`)."""
    found = set()
    for ref in refs:
        got = model_of(ref, tables)
        if got:
            found.add(got[1] if per_variant else "/".join(got))
    return sorted(found)


def check_produced(claims: dict, produced: set[str], where, cells: set[str] | None = None) -> None:
    """Every ERF, check and figure reference of a claims file names something its paper produces
    (`produced`, from the experiment definitions), and, given `cells` (table_cells), every table
    cell reference one of its cells: one ValueError naming the file (`where`), the claim and the
    reference, with the nearest names produced."""
    for claim in claims["claims"]:
        for ref in references(claim.get("check")):
            key, names = produced_key(ref), produced
            if key is None and cells is not None and cell_row(ref) is not None:
                table, dataset, method = cell_row(ref)
                key, names = cell_key(table, dataset, method, ref.rsplit("@", 1)[1]), cells
            if key is None or key in names:
                continue
            close = difflib.get_close_matches(key, sorted(names), n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(close)}?" if close else f"it produces {len(names)} such names"
            raise ValueError(f"{where}: claim {claim['id']!r}: {ref} names nothing its tables and figures "
                             f"produce ({hint})")
