"""Cells files holding only the paper's numbers (ours all null), built from the experiment file and
paper_results.csv: what every claim must hold on, with no run of ours (tests, `--paper-only`)."""
from __future__ import annotations

import importlib
from pathlib import Path

from . import FIGURE_CELLS
from ..tables.cells import significance_extra, table_cells
from ..tables.paper_results import load_paper_results
from ..tables.table_data import build_table
from ..files import read_yaml


# A paper whose tables the library's generic builder does not build names its own, as
# "module:function(spec, paper_df) -> table", imported on use: the library never imports a paper.
PAPER_ONLY_BUILDERS = {"segmented": "lenex.segmented.tables:paper_only_table"}


def paper_tables(experiment_path: str | Path, paper_results: str | Path | None = None) -> dict[str, dict]:
    """Table number -> cells of every table the experiment file declares, paper values only."""
    experiment = read_yaml(experiment_path)
    paper_df = load_paper_results(paper_results)
    tables = {}
    for spec in experiment["tables"].values():
        builder = PAPER_ONLY_BUILDERS.get(experiment["paper"])
        if builder:
            module, function = builder.split(":")
            table = getattr(importlib.import_module(module), function)(spec, paper_df)
        else:
            table = build_table(spec, [], paper_df, {"train_length": spec["paper_train_length"]})
        tables[str(spec["table"])] = table_cells(table, significance_extra(spec))
    for key in FIGURE_CELLS.get(experiment["paper"], []):  # a figure's numbers are ours only
        tables[f"f{key.removeprefix('figure')}"] = {"figure": key.removeprefix("figure"), "values": {}}
    return tables
