"""Which evaluations the LEX paper's tables and figures read, as pure functions of an experiment
definition (config/experiments/lex.yaml) and a preset's L_tr (the rules in workflow/rules/lex.smk
and the tests both call these; lenex.receptive_field.targets and lenex.segmented.targets are the
other papers').

Every variant trains with seeds 1..n (the preset's `papers.lex.experiment.seeds`, or a power rerun's
`power_seeds` for its variant: lenex.experiment.presets.seed_list), and every seed's model is scored on the same tokens, so a table cell is the mean over
seeds and two cells pair seed by seed. Paths (all under results/<preset>/), one file per model and
cell (evaluated_cells; lenex.pipeline.evaluation groups them into jobs):
  models/lex/<variant>/seed<s>.pt                                   the model of seed s
  eval/lex/<variant>/seed<s>/<corpus>/<mask>/L<length>.json        perplexity
  resolution/lex/<variant>/seed<s>/<corpus>/<mask>/L<length>.json  attention resolution
A row's mask is `mask`, or beyond L_tr its `mask_beyond_train` (lenex.tables.table_data.evaluation_mask).
"""

from __future__ import annotations

from typing import Callable

from lenex.experiment.presets import eval_length
from lenex.tables.table_data import evaluation_mask

PAPER = "lex"
#: Figure 2's numbers, as its cells file records them (the claims' f2/<name>), each computed exactly
#: from Eq. 10-11 (lenex.lex.figures.figure2_cells): the total variation of each curve over the far
#: half of the drawn distances in units of its value at distance 0, and its attention resolution R.
FIGURE2_VALUES = ("rope_far_variation", "xpos_far_variation", "xpos_text_far_variation",
                  "rope_resolution", "xpos_resolution", "xpos_text_resolution")


def table_cells(spec: dict, train_length: int, skip_corpus=lambda corpus: False) -> set[tuple]:
    """The cells one table reads, as (stage, variant, corpus, mask, length): sections x rows x
    columns, each with the row's mask at that length; the stage is `resolution` for a table of
    attention resolution, else `eval` (perplexity)."""
    stage = "resolution" if spec["metric"] == "resolution" else "eval"
    cells = set()
    for section in spec["sections"]:
        corpus = section["corpus"]
        if corpus is None or skip_corpus(corpus):
            continue
        for row in section["rows"]:
            for multiple in spec["columns"]:
                length = eval_length(multiple, train_length)
                cells.add((stage, row["variant"], corpus, evaluation_mask(row, length, train_length), length))
    return cells


def model_path(preset: str, variant: str, seed: int, paper: str = PAPER) -> str:
    """The model of one variant and seed (the generic `train` rule writes it)."""
    return f"results/{preset}/models/{paper}/{variant}/seed{seed}.pt"


def cell_path(preset: str, cell: tuple, seed: int, paper: str = PAPER) -> str:
    """One seed's result of one cell (stage, variant, corpus, mask, length)."""
    stage, variant, corpus, mask, length = cell
    return f"results/{preset}/{stage}/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json"


#: The seeds of each variant's models: one list for every variant, or a function of the variant
#: (a preset with power reruns gives some variants more seeds than others).
Seeds = list[int] | Callable[[str], list[int]]


def seeds_of(seeds: Seeds) -> Callable[[str], list[int]]:
    """The seeds of a variant, from either form of `Seeds`."""
    return seeds if callable(seeds) else (lambda variant: seeds)


def table_results(preset: str, spec: dict, train_length: int, seeds: Seeds, skip_corpus=lambda corpus: False,
                  paper: str = PAPER) -> list[str]:
    """Every result file one table reads: each of its cells (table_cells) of every seed."""
    of = seeds_of(seeds)
    return sorted(cell_path(preset, c, s, paper) for c in table_cells(spec, train_length, skip_corpus) for s in of(c[1]))


def evaluated_cells(tables: dict, train_length: int, seeds: Seeds,
                    skip_corpus=lambda corpus: False) -> list[tuple]:
    """Every cell the paper's tables read, once per seed of its variant, as (stage, variant, corpus,
    mask, length, seed), sorted by cell: what its evaluation jobs score (lenex.pipeline.evaluation
    groups them, e.g. one job per model, measure and corpus, so that a table or figure that reads
    one corpus or one measure, Figure 1 or Table 3, starts only the jobs it needs)."""
    of = seeds_of(seeds)
    cells = sorted(set().union(*(table_cells(spec, train_length, skip_corpus) for spec in tables.values())))
    return [(*cell, seed) for cell in cells for seed in of(cell[1])]


def section_results(preset: str, spec: dict, train_length: int, corpus: str, seeds: Seeds,
                    skip_corpus=lambda corpus: False) -> list[str]:
    """The result files of one section (corpus) of a table, every seed, e.g. for a figure drawn from it."""
    return [p for p in table_results(preset, spec, train_length, seeds, skip_corpus) if f"/{corpus}/" in p]


def table_corpora(spec: dict, skip_corpus=lambda corpus: False) -> list[str]:
    """The corpora of a table's sections this machine can build (their metas go in the header)."""
    return sorted({s["corpus"] for s in spec["sections"] if s["corpus"] and not skip_corpus(s["corpus"])})


def table_unavailable(spec: dict, reason=lambda corpus: None) -> dict:
    """Sections' corpora this machine cannot build, with the reason (for the header)."""
    return {s["corpus"]: reason(s["corpus"]) for s in spec["sections"] if s["corpus"] and reason(s["corpus"])}
