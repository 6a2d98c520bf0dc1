"""A table's cells as data: `table<N>.cells.json`, written by the same step that renders the table.

One record per cell: section, dataset, row label, csv method, our variant, mask, column (multiple of
L_tr, the paper's and our absolute length), the paper's value and ours (null when the paper prints
none / when we did not compute it), with the status in words and, where the table has them, std,
seed count and the t-test mark; where the result records them, each seed's value (`ours_seeds`) and
the per-piece NLLs of a single model (`ours_pieces`: {unit, nll, tokens_sha256}). The claims (lenex.claims) read these files, never the .md/.tex,
so re-rendering the tables re-derives the claims.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..files import atomic_write_text
from .table_data import TableData

CELLS_VERSION = 1


def table_cells(table: TableData, extra: dict | None = None) -> dict:
    """The JSON-ready cells of a rendered table; `extra` holds non-cell data the table shows
    (e.g. the receptive-field ERF rows or the cache-window checks)."""
    cells = []
    for section in table.sections:
        for row in section.rows:
            for column, cell in zip(table.columns, row.cells):
                cells.append(replication({
                    "section": section.label, "dataset": section.dataset, "corpus": section.corpus,
                    "row": row.label, "method": row.method, "variant": row.variant, "mask": cell.mask,
                    "multiple": column.multiple, "paper_length": column.paper_length,
                    "our_length": column.our_length, "paper": cell.paper, "ours": cell.ours,
                    "status": cell.status, "paper_std": cell.paper_std, "paper_mark": cell.paper_mark,
                    "ours_std": cell.ours_std, "ours_mark": cell.ours_mark, "n_seeds": cell.n_seeds,
                }, cell))
    return {"version": CELLS_VERSION, "paper": table.paper, "table": table.table, "metric": table.metric,
            "title": table.title, "cells": cells, "extra": extra or {}}


def replication(record: dict, cell) -> dict:
    """The cell's record with `ours_seeds` / `ours_pieces` where its result records them (a cell
    of an older result has neither key)."""
    for key in ("ours_seeds", "ours_pieces"):
        if getattr(cell, key) is not None:
            record[key] = getattr(cell, key)
    return record


def significance_extra(spec: dict) -> dict:
    """The cells file's `extra` naming the row a table's t-test marks compare with (a variant), for
    the claims' paired tests of a mark (lenex.claims.refs.mark_reference); empty without marks."""
    reference = (spec.get("significance") or {}).get("reference")
    return {"significance_reference": reference} if reference else {}


def write_cells(path: str | Path, table: TableData, extra: dict | None = None) -> None:
    # sort_keys + fixed indent: the file is byte-identical for the same table.
    atomic_write_text(path, json.dumps(table_cells(table, extra), indent=1, sort_keys=True,
                                       ensure_ascii=False) + "\n")
