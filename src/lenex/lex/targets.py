"""Which evaluations the LEX paper's tables and figures read, as pure functions of an experiment
definition (config/experiments/lex.yaml) and a preset's L_tr (the rules in workflow/rules/lex.smk
and the tests both call these; lenex.receptive_field.targets and lenex.segmented.targets are the
other papers').

Paths (all under results/<preset>/):
  eval/lex/<variant>/<corpus>/<mask>/L<length>.json        perplexity (rule evaluate)
  resolution/lex/<variant>/<corpus>/<mask>/L<length>.json  attention resolution (rule resolution)
A row's mask is `mask`, or beyond L_tr its `mask_beyond_train` (lenex.tables.table_data.evaluation_mask).
"""

from __future__ import annotations

from lenex.tables.table_data import evaluation_mask

PAPER = "lex"


def eval_length(multiple: float, train_length: int) -> int:
    """multiple x L_tr as a whole number of tokens; one clear error where it is not whole."""
    length = multiple * train_length
    if length != int(length):
        raise ValueError(f"{multiple} x L_tr = {length} is not a whole number of tokens")
    return int(length)


def table_results(preset: str, spec: dict, train_length: int, skip_corpus=lambda corpus: False,
                  paper: str = PAPER) -> list[str]:
    """Every result file one table reads: sections x rows x columns, each with the row's mask at
    that length. A `resolution` table reads attention-resolution results instead of perplexity."""
    stage = "resolution" if spec["metric"] == "resolution" else "eval"
    paths = set()
    for section in spec["sections"]:
        corpus = section["corpus"]
        if corpus is None or skip_corpus(corpus):
            continue
        for row in section["rows"]:
            for multiple in spec["columns"]:
                length = eval_length(multiple, train_length)
                mask = evaluation_mask(row, length, train_length)
                paths.add(f"results/{preset}/{stage}/{paper}/{row['variant']}/{corpus}/{mask}/L{length}.json")
    return sorted(paths)


def section_results(preset: str, spec: dict, train_length: int, corpus: str,
                    skip_corpus=lambda corpus: False) -> list[str]:
    """The result files of one section (corpus) of a table, e.g. for a figure drawn from it."""
    return [p for p in table_results(preset, spec, train_length, skip_corpus) if f"/{corpus}/" in p]


def table_corpora(spec: dict, skip_corpus=lambda corpus: False) -> list[str]:
    """The corpora of a table's sections this machine can build (their metas go in the header)."""
    return sorted({s["corpus"] for s in spec["sections"] if s["corpus"] and not skip_corpus(s["corpus"])})


def table_unavailable(spec: dict, reason=lambda corpus: None) -> dict:
    """Sections' corpora this machine cannot build, with the reason (for the header)."""
    return {s["corpus"]: reason(s["corpus"]) for s in spec["sections"] if s["corpus"] and reason(s["corpus"])}
