"""Cells files holding only the paper's numbers (ours all null), built from the experiment file and
paper_results.csv: what every claim must hold on with no run of ours (tests/test_claims.py). A
paper whose tables the library's generic builder does not build (segmented) is built by its own."""
from __future__ import annotations

from pathlib import Path

from lenex.pipeline.papers import paper_named
from lenex.segmented.tables import build_segmented_table
from lenex.files import read_yaml
from lenex.tables.cells import significance_extra, table_cells
from lenex.tables.paper_results import load_paper_results
from lenex.tables.table_data import build_table

PAPER_ONLY_HEADER = {"scale_statement": "paper only", "lines": [], "stand_in": None}


def paper_tables(experiment_path: str | Path, paper_results: str | Path | None = None) -> dict[str, dict]:
    """Table number -> cells of every table the experiment file declares, paper values only."""
    experiment = read_yaml(experiment_path)
    paper_df = load_paper_results(paper_results)
    tables = {}
    for spec in experiment["tables"].values():
        if experiment["paper"] == "segmented":
            table = build_segmented_table(spec, [], paper_df, PAPER_ONLY_HEADER)
        else:
            table = build_table(spec, [], paper_df, {"train_length": spec["paper_train_length"]})
        tables[str(spec["table"])] = table_cells(table, significance_extra(spec))
    for key in paper_named(experiment["paper"]).figure_cells:  # a figure's numbers are ours only
        tables[f"f{key.removeprefix('figure')}"] = {"figure": key.removeprefix("figure"), "values": {}}
    return tables
