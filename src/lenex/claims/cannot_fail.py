"""Leaves that cannot fail, found from what the cells record rather than assumed (docs/claims.md,
"Leaves that cannot fail"). Such a leaf is still evaluated and shown, marked with why, and left out
of its claim's hold: a claim whose every leaf cannot fail is by construction.

Three cases, each read from the recorded cells:
- one model output repeated: the same model (corpus, variant) in one table at two lengths that both
  reach at least the tokens its last token can see (the cells' `extra.reach`: n_layer x window for
  a windowed mask or a cache window). The last-token protocol scores the same tokens at every
  length, so the two cells are one output (up to float round-off);
- an ERF bounded above by what it is compared with: `at_most(erf, x)` with x at least its cap, or
  `less(erf, x)` with x above it, where the cap is the tokens the ERF row was measured on
  (`length`) or, for a windowed model, its TRF = w*R (`trf`), whichever is smaller: an ERF never
  exceeds either (lenex.receptive_field.erf);
- an equation's curve: every cell of the comparison is a figure's number computed exactly from the
  paper's equation (its cells file says `exact`): no trained model enters it, so it is no evidence
  about our models (`equations_only`; a check all of whose cells are such is by construction).

Not a case: `less(L_tr, erf)` of a model that attends to the whole measured window. Its ERF can fall
below L_tr whatever its reach (at preset workstation ALiBi with every head's slope equal to h = 0,
or with the slopes shifted by -3, attend to every token and measure ERFs of 3 and 31-43 against an
L_tr of 64), so the comparison can fail and stays counted.
"""
from __future__ import annotations

from .refs import _CELL, _ERF, _find_cell, exact_curve, resolve, tables_of



def same_output(refs, tables: dict[str, dict]) -> str | None:
    """Why two cells are one model output (both lengths at or past the model's recorded reach),
    or None."""
    if len(refs) != 2 or not all(_CELL.match(r) for r in refs) or tables_of(refs[0]) != tables_of(refs[1]):
        return None
    table = tables[tables_of(refs[0])]
    a, b = (_find_cell(r, table) for r in refs)
    if (a.get("corpus"), a.get("variant")) != (b.get("corpus"), b.get("variant")):
        return None
    reach = (table.get("extra") or {}).get("reach", {}).get(f"{a.get('corpus')}/{a.get('variant')}")
    if reach is None or min(a["our_length"], b["our_length"]) < reach:
        return None
    # One reason per model (not per pair of lengths), so a claim's note names each model once.
    return (f"one model output repeated: {a['dataset']} {a['variant']}'s last token sees at most {reach} tokens "
            f"(n_layer x window, recorded), so every length from {reach} on scores the same output")


def erf_cap(ref: str, tables: dict[str, dict]) -> tuple[float, str] | None:
    """The most an ERF reference can be, recorded in its row, and why: the tokens it was measured on,
    or the model's TRF = w*R where that is smaller (its last token sees no further back); None for
    another reference or a row without a length."""
    match = _ERF.match(ref)
    if not match or match.group(2) != "erf":
        return None
    rows = [r for r in tables[tables_of(ref)].get("extra", {}).get("erf", [])
            if r["corpus"] == match.group(3) and r["variant"] == match.group(4)]
    if not rows or rows[0].get("length") is None:
        return None
    length, trf = rows[0]["length"], rows[0].get("trf")
    if trf is not None and trf < length:
        return float(trf), f"the ERF of a model whose last token sees at most TRF = w·R = {trf:g} tokens"
    return float(length), f"the ERF is measured on {length:g} tokens"


def erf_within_cap(rule: str, refs, tables: dict[str, dict]) -> str | None:
    """Why an ERF cannot exceed the value it is compared with (its cap, `erf_cap`, is at most that
    value: `at_most`, or below it: `less`), or None."""
    if len(refs) != 2 or rule not in ("at_most", "less"):
        return None
    cap = erf_cap(refs[0], tables)
    bound = resolve(refs[1], tables, "ours")
    if cap is None or not hasattr(bound, "value"):
        return None
    if bound.value < cap[0] or (rule == "less" and bound.value == cap[0]):
        return None
    return (f"{cap[1]}, so it cannot exceed {bound.value:g}: the comparison is at or beyond the most it can be")


def equations_only(refs, tables: dict[str, dict]) -> str | None:
    """Why cells are no evidence about a trained model (every one is a figure's number computed exactly
    from an equation, lenex.claims.refs.exact_curve), or None."""
    refs = list(refs)
    if not refs or not all(exact_curve(r, tables) for r in refs):
        return None
    figures = sorted({tables_of(r) for r in refs}, key=lambda k: int(k[1:]))
    named = ", ".join(f"Figure {k[1:]}" for k in figures)
    return (f"every cell is an exact curve of the paper's equation ({named}: computed, no trained model), "
            "so it checks the equation, not our models")


def why_cannot_fail(rule: str, refs, tables: dict[str, dict]) -> str | None:
    """Why a leaf (`rule` over `refs`) cannot fail, or is no evidence about our models, given what the
    cells record; None otherwise."""
    why = equations_only(refs, tables)
    if why:
        return why
    if rule == "within":  # an equivalence of one output with itself always holds (an order need not)
        return same_output(refs, tables)
    return erf_within_cap(rule, refs, tables)
