"""Leaves that cannot fail, found from what the cells record rather than assumed (docs/claims.md,
"Leaves that cannot fail"). Such a leaf is still evaluated and shown, marked with why, and left out
of its claim's hold: a claim whose every leaf cannot fail is by construction.

Two cases, each read from the recorded model:
- one model output repeated: the same model (corpus, variant) in one table at two lengths that both
  reach at least the tokens its last token can see (the cells' `extra.reach`: n_layer x window for
  a windowed mask or a cache window). The last-token protocol scores the same tokens at every
  length, so the two cells are one output (up to float round-off);
- an ERF measured within the length it is compared with: `at_most(erf, x)` where the ERF row was
  measured on `length` tokens and x >= length: an ERF never exceeds the tokens it is measured on.
"""
from __future__ import annotations

from .refs import _CELL, _ERF, _find_cell, resolve, tables_of



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


def erf_within_length(refs, tables: dict[str, dict]) -> str | None:
    """Why an ERF cannot exceed the value it is compared with (it was measured on no more tokens),
    or None."""
    if len(refs) != 2:
        return None
    match = _ERF.match(refs[0])
    if not match or match.group(2) != "erf":
        return None
    rows = [r for r in tables[tables_of(refs[0])].get("extra", {}).get("erf", [])
            if r["corpus"] == match.group(3) and r["variant"] == match.group(4)]
    bound = resolve(refs[1], tables, "ours")
    if not rows or rows[0].get("length") is None or not hasattr(bound, "value") or bound.value < rows[0]["length"]:
        return None
    return (f"the ERF is measured on {rows[0]['length']} tokens, so it cannot exceed {bound.value:g}: "
            "the comparison is at the length it is measured at")


def why_cannot_fail(rule: str, refs, tables: dict[str, dict]) -> str | None:
    """Why a leaf (`rule` over `refs`) cannot fail given what the cells record, or None."""
    if rule == "within":  # an equivalence of one output with itself always holds (an order need not)
        return same_output(refs, tables)
    return erf_within_length(refs, tables) if rule == "at_most" else None
