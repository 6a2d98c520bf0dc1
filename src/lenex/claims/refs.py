"""Cell references of the claims files, and their values on one side (the paper's or ours).

    t2/pg22/lex@8            Table 2, dataset pg22, csv method lex, column 8 x L_tr
    t2/pg22/lex@1,2,4,8      the same row at four columns (a list, in that order)
    t1/erf/arxiv/window-40   the ERF of a model listed under receptive-field Table 1, the mean over
                             its seeds (`trf`: its TRF, `ltr`: its L_tr, `recent`: its share of
                             the cumulative gradient on the most recent L_tr tokens); f6/erf/...:
                             the same row in an ERF figure's own cells file (Figures 6, 7, 11)
    t5/check/min_speedup     a number of Table 5's cache-window check (cells file `extra.cache_window`)
    f3/after_mean_median     a number a figure's cells file records (`values`), e.g. segmented Figure 3

A reference that matches no cell, or more than one, is an error in the claims file; a cell that
exists but has no value on a side resolves to Missing with the reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..tables.formatting import format_metric
from .intervals import Sample

_CELL = re.compile(r"^t(\d+)/([^/@]+)/([^/@]+)@([0-9.,]+)$")
# An ERF row under a table (t<N>) or in an ERF figure's own cells file (f<N>, Figures 6, 7, 11).
_ERF = re.compile(r"^[tf](\d+)/(erf|trf|ltr|recent)/([^/@]+)/([^/@]+)$")
_CHECK = re.compile(r"^t(\d+)/check/(\w+)$")
_FIGURE = re.compile(r"^f(\d+)/(\w+)$")
SIDES = ("paper", "ours")


@dataclass(frozen=True)
class Value:
    value: float
    mark: str | None = None  # the t-test mark of the cell on this side


@dataclass(frozen=True)
class Missing:
    reason: str


def expand(ref: str) -> list[str]:
    """'t2/pg22/lex@1,2' -> ['t2/pg22/lex@1', 't2/pg22/lex@2']; other references stay one."""
    match = _CELL.match(ref)
    if not match or "," not in match.group(4):
        return [ref]
    stem = ref.rsplit("@", 1)[0]
    return [f"{stem}@{x}" for x in match.group(4).split(",")]


def tables_of(ref: str) -> str:
    """The key of the cells file a reference reads: the table number, or f<N> for figure N."""
    match = _FIGURE.match(ref)
    if match:
        return f"f{match.group(1)}"
    for pattern in (_CELL, _ERF, _CHECK):
        match = pattern.match(ref)
        if match:
            return ("f" if ref.startswith("f") else "") + match.group(1)
    raise ValueError(f"bad cell reference {ref!r}: expected t<N>/<dataset>/<method>@<multiple>, "
                     "t<N>/erf|trf|ltr/<corpus>/<variant>, t<N>/check/<name> or f<N>/<name>")


def produced_key(ref: str) -> str | None:
    """What a reference beyond table cells reads, as its paper's tables and figures produce it
    (`Paper.produced_references`): t1/trf/arxiv/w and t1/ltr/arxiv/w read the row t1/erf/arxiv/w;
    None for a table cell (checked against the cells file when the claims are evaluated)."""
    match = _ERF.match(ref)
    if match:
        return f"{ref[0]}{match.group(1)}/erf/{match.group(3)}/{match.group(4)}"
    return ref if _CHECK.match(ref) or _FIGURE.match(ref) else None


def resolve(ref: str, tables: dict[str, dict], side: str) -> Value | Missing:
    """The value of one reference on `side` ('paper' or 'ours') in the cells files `tables`
    (table number -> cells file content)."""
    table = tables.get(tables_of(ref))
    if table is None:
        raise ValueError(f"{ref}: no cells file for table {tables_of(ref)} (known: {', '.join(sorted(tables))})")
    if _CELL.match(ref):
        return _cell_value(ref, table, side)
    if side == "paper":
        return Missing(f"{ref}: the paper prints no number for it in paper_results.csv")
    if _FIGURE.match(ref):
        name = _FIGURE.match(ref).group(2)
        value = table.get("values", {}).get(name)
        return Missing(f"{ref}: the figure records no {name}") if value is None else Value(float(value))
    match = _ERF.match(ref)
    if match:
        kind, corpus, variant = match.group(2), match.group(3), match.group(4)
        rows = [r for r in table.get("extra", {}).get("erf", []) if r["corpus"] == corpus and r["variant"] == variant]
        if not rows:
            return Missing(f"{ref}: no ERF of {variant} on {corpus} under Table {tables_of(ref)}")
        value = rows[0].get({"ltr": "train_length", "recent": "recent_share"}.get(kind, kind))
        if value is None and kind == "recent":
            return Missing(f"{ref}: no share of the most recent L_tr tokens recorded for {variant} on {corpus}")
        return Missing(f"{ref}: {variant} has no TRF (not windowed)") if value is None else Value(float(value))
    name = _CHECK.match(ref).group(2)
    checks = table.get("extra", {}).get("cache_window")
    if not checks or checks.get(name) is None:
        return Missing(f"{ref}: Table {tables_of(ref)} records no {name}")
    return Value(float(checks[name]))


def cell_row(ref: str) -> tuple[str, str, str] | None:
    """(table number, dataset, method) of a table cell reference, the row it reads; None for others."""
    match = _CELL.match(ref)
    return match.groups()[:3] if match else None


def _find_cell(ref: str, table: dict) -> dict:
    _, dataset, method, multiple = _CELL.match(ref).groups()
    found = [c for c in table["cells"] if c["dataset"] == dataset and c["method"] == method
             and float(c["multiple"]) == float(multiple)]
    if len(found) != 1:
        what = "no cell" if not found else f"{len(found)} cells"
        raise ValueError(f"{ref}: {what} of Table {table['table']} match dataset {dataset!r}, method {method!r}, "
                         f"column {multiple} x L_tr")
    return found[0]


def _cell_value(ref: str, table: dict, side: str) -> Value | Missing:
    cell = _find_cell(ref, table)
    if cell[side] is None:
        why = "the paper prints no number there" if side == "paper" else cell["status"]
        return Missing(f"{ref}: {why}")
    return Value(float(cell[side]), cell[f"{side}_mark"])


def sample(ref: str, tables: dict[str, dict]) -> Sample | Missing:
    """Our value of a reference with what replicates it (lenex.claims.intervals.Sample): a table
    cell's per-seed values and per-piece NLLs as its cells file records them; an ERF over its
    seeds; a TRF, L_tr, identity check or equation's curve computed exactly (`computed_exactly`);
    any other number (one seed's ERF or recent share, a figure's statistic, a timing) as one
    measurement without replication."""
    got = resolve(ref, tables, "ours")
    if isinstance(got, Missing):
        return got
    if _CELL.match(ref):
        cell = _find_cell(ref, tables[tables_of(ref)])
        return Sample(got.value, cell.get("ours_seeds"), cell.get("ours_pieces"))
    erf_seeds = _erf_seeds(ref, tables)
    if erf_seeds:
        return Sample(got.value, seeds=erf_seeds)
    return Sample(got.value, exact=True) if computed_exactly(ref, tables) else Sample(got.value, single=True)


# Table 5's checks computed exactly: two computations of the same NLLs compared (deterministic
# arithmetic, the same on a rerun); its speed-up is a wall-clock timing, a measurement.
EXACT_CHECKS = ("max_abs_diff_vs_sliding_mask", "n_models")


def computed_exactly(ref: str, tables: dict[str, dict]) -> bool:
    """Whether our value of a reference beyond table cells is computed exactly rather than measured on
    a model: a model's L_tr and TRF (= w*R, from its config), an identity check of Table 5, and a
    figure's number whose cells file says `exact` (an equation's curve: LEX Figure 2, receptive-field
    Figures 8 and 10). A measured ERF, recent share, attention statistic or timing is not: without
    seeds to pair it is one replicate (lenex.claims.intervals.ONE_REPLICATE)."""
    if _FIGURE.match(ref):
        return exact_curve(ref, tables)
    match = _ERF.match(ref)
    if match:
        return match.group(2) in ("trf", "ltr")
    match = _CHECK.match(ref)
    return bool(match) and match.group(2) in EXACT_CHECKS


def exact_curve(ref: str, tables: dict[str, dict]) -> bool:
    """Whether a reference reads a figure's number computed exactly from an equation (its cells file
    says `exact`), with no trained model in it."""
    return bool(_FIGURE.match(ref)) and bool((tables.get(tables_of(ref)) or {}).get("exact"))


def _erf_seeds(ref: str, tables: dict[str, dict]) -> dict[str, float] | None:
    """Each seed's ERF of an ERF reference whose row is a mean over >= 2 seeds (`erf_seeds`), else
    None (one model's ERF is one measurement; its TRF and L_tr are computed exactly)."""
    match = _ERF.match(ref)
    if not match or match.group(2) != "erf":
        return None
    rows = [r for r in tables[tables_of(ref)].get("extra", {}).get("erf", [])
            if r["corpus"] == match.group(3) and r["variant"] == match.group(4)]
    seeds = rows[0].get("erf_seeds") or {}
    return {str(k): float(v) for k, v in seeds.items()} if len(seeds) >= 2 else None


def model_of(ref: str, tables: dict[str, dict]) -> tuple[str, str] | None:
    """(corpus, variant) of the model a table cell or an ERF reference reads; None for a check or a
    figure's number."""
    if _CELL.match(ref):
        cell = _find_cell(ref, tables[tables_of(ref)])
        return (cell.get("corpus") or cell["dataset"], cell["variant"])
    match = _ERF.match(ref)
    return (match.group(3), match.group(4)) if match else None


def mark_reference(ref: str, tables: dict[str, dict]) -> str:
    """The reference of the cell a t-test mark compares `ref` with: the same dataset and column in
    the row of the table's significance reference (its cells file's `extra.significance_reference`,
    a variant)."""
    table = tables.get(tables_of(ref))
    if table is None or not _CELL.match(ref):
        raise ValueError(f"{ref}: a mark reads a table cell (t<N>/<dataset>/<method>@<multiple>)")
    reference = table.get("extra", {}).get("significance_reference")
    if not reference:
        raise ValueError(f"{ref}: the cells file of Table {table['table']} names no significance reference")
    cell = _find_cell(ref, table)
    rows = [c for c in table["cells"] if c["variant"] == reference and c["dataset"] == cell["dataset"]
            and float(c["multiple"]) == float(cell["multiple"])]
    if len(rows) != 1:
        raise ValueError(f"{ref}: {len(rows)} cells of the reference {reference!r} beside it in Table {table['table']}")
    return f"t{tables_of(ref)}/{cell['dataset']}/{rows[0]['method']}@{cell['multiple']:g}"


def describe(ref: str, tables: dict[str, dict]) -> str:
    """'t2/pg22/lex@8: paper 24.89, ours 31.20' for the evidence column (a t-test mark in brackets)."""
    parts = []
    for side in SIDES:
        got = resolve(ref, tables, side)
        if isinstance(got, Missing):
            parts.append(f"{side} —")
        else:
            mark = f" [{got.mark}]" if got.mark else ""
            # Token counts (ERF, TRF, L_tr; an ERF mean over seeds may be fractional) print as
            # counts, perplexities as the tables do.
            shown = f"{got.value:g}" if _ERF.match(ref) else format_metric(got.value)
            parts.append(f"{side} {shown}{mark}")
    return f"{ref}: {', '.join(parts)}"
