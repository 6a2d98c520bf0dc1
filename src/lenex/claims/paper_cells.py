"""Cells files holding only the paper's numbers (ours all null), built from the experiment file and
paper_results.csv: what every claim must hold on with no run of ours (tests/test_claims.py), and
what each claim's effect thresholds are derived from (lenex.claims.thresholds), the same at every
preset because no run of ours enters. Each paper builds its own tables
(Paper.paper_only_table)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..files import read_yaml
from ..pipeline.papers import paper_named
from ..tables.cells import significance_extra, table_cells
from ..tables.paper_results import load_paper_results

EXPERIMENTS = Path(__file__).resolve().parents[3] / "config" / "experiments"


def paper_tables(experiment_path: str | Path, paper_results: str | Path | None = None) -> dict[str, dict]:
    """Table number -> cells of every table the experiment file declares, paper values only."""
    experiment = read_yaml(experiment_path)
    paper_df = load_paper_results(paper_results)
    tables = {}
    for spec in experiment["tables"].values():
        table = paper_named(experiment["paper"]).paper_only_table(spec, paper_df)
        tables[str(spec["table"])] = table_cells(table, significance_extra(spec))
    for key in paper_named(experiment["paper"]).figure_cells:  # a figure's numbers are ours only
        tables[f"f{key.removeprefix('figure')}"] = {"figure": key.removeprefix("figure"), "values": {}}
    return tables


@lru_cache(maxsize=None)
def bundled_paper_tables(paper: str) -> dict[str, dict]:
    """The paper-only cells of `paper` (config/experiments/<paper>.yaml and the bundled
    paper_results.csv), built once per process; callers must not modify them."""
    path = EXPERIMENTS / f"{paper}.yaml"
    if not path.exists():
        raise ValueError(f"no experiment file for paper {paper!r}: {path}")
    return paper_tables(path)
