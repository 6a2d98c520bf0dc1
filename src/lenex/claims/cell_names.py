"""The table cells a paper's tables produce, named as its claims file names them: what the DAG
build checks each cell reference against (lenex.pipeline.dag_checks) without reading a cells file.
Nothing heavy is imported here: the check runs on every `snakemake` call."""

from __future__ import annotations


def table_cells(experiment: dict) -> set[str]:
    """Every table cell an experiment definition's tables produce, as a claims file names it
    (`t<N>/<dataset>/<method>@<multiple>`, the multiple as `cell_key` writes it): each section's
    rows at the table's columns, as the table builders lay out their cells files."""
    cells = set()
    for table in experiment["tables"].values():
        for section in table.get("sections") or []:
            columns = section.get("columns", table.get("columns") or [])
            for row in section.get("rows") or []:
                for multiple in row.get("columns", columns):
                    cells.add(cell_key(table["table"], section["dataset"], row["method"], multiple))
    return cells


def cell_key(table, dataset: str, method: str, multiple) -> str:
    """t2/pg22/lex@0.25, t2/pg22/lex@8: one spelling of each multiple (8 for 8, 8.0 or 8.00)."""
    return f"t{int(table)}/{dataset}/{method}@{float(multiple):g}"
