"""Tables 2-5 of the segmented-sequences paper: paper / ours / Δ per cell.

    python -m lenex.segmented.tables --spec config/experiments/segmented.yaml --table-key table3 \
        --results R.json.. --preset-file P.yaml --models JSON --metas M.json.. --out-md T.md --out-tex T.tex [--out-cells T.cells.json]

The paper's columns are multiples of each model's own L_t (`L_t`, `2L_t`, `4L_t` in
paper_results.csv); ours are the same multiples of our L_t. A row's `method` is the csv key
`model:method`, its `variant` our stand-in model. Which of our runs fills a cell:
`ootb`/`out-of-the-box` -> the domain-adapted checkpoint (evaluated at every length, APE
interpolated), `domain-adaptation` -> one more epoch of it at L_t (Table 5), any other method
-> that continued pretraining to L_e = column x L_t, evaluated at L_e. A cell is the mean over
the seeds of that run (± their std where there are several; lenex.tables.seeds): the seeds cover
the domain adaptation and continued training after the one pretrained model (docs/segmented.md).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import run_cli
from ..files import read_yaml
from ..tables.header import RUN_FACTS, build_header, split_size, stand_in
from ..experiment.presets import paper_view
from ..tables.raw_results import read_recorded
from ..tables.formatting import format_delta, format_metric
from ..tables.paper_results import load_paper_results, paper_value_text
from ..tables.render import add_table_arguments, load_results, load_table_spec, write_table
from ..tables.seeds import mean_over_seeds
from ..tables.table_data import (MISSING, NOT_COMPUTED, OK, Cell, Column, Row, Section, TableData, add_replication,
                                 add_spread, header_lines)

PAPER = "segmented"
#: Table 1 of the paper: each released model's L_t.
PAPER_TRAIN_LENGTH = {"gpt2-small": 1024, "pythia-small": 2048, "gpt2": 1024, "pythia": 2048, "bloom": 2048}


def run_name(method: str, multiple: float) -> str:
    """Which of our runs fills the cell of csv method `model:method` at `multiple` x L_t."""
    kind = method.split(":", 1)[1]
    if kind in ("ootb", "out-of-the-box"):
        return "ootb"
    if kind == "domain-adaptation":
        return "da"
    return f"{kind}-x{multiple:g}"


def length_label(multiple: float) -> str:
    return "L_t" if multiple == 1 else f"{multiple:g}L_t"


def _joined(values) -> str:
    return ", ".join(str(v) for v in sorted(set(values))) or "?"


#: The fields that name one cell of this paper's tables: a model's run at a length.
CELL_KEY = ("model", "run", "length", "base_train_length")
#: What the seeds cover (the headers say it).
SEEDS_COVER = ("the seeds cover the domain adaptation and continued training (their data sampling and order), "
               "not the one pretrained model per stand-in")


def build_segmented_table(spec: dict, results: list[dict], paper_df, header: dict) -> TableData:
    results = mean_over_seeds(results, spec["metric"], CELL_KEY)
    models = [row["variant"] for sec in spec["sections"] for row in sec["rows"]]
    our_train_length = {r["model"]: r["base_train_length"] for r in results}
    # An extra scheme's stand-in has no released model, so no paper L_t of its own.
    released = [v for v in models if v in PAPER_TRAIN_LENGTH]
    models_run = [v for v in models if v in our_train_length]
    columns = [Column(float(m), _joined(round(m * PAPER_TRAIN_LENGTH[v]) for v in released),
                      _joined(round(m * our_train_length[v]) for v in models_run)) for m in spec["columns"]]
    table = TableData(title=spec["title"], paper=PAPER, table=str(spec["table"]), metric=spec["metric"],
                      scale_statement=header["scale_statement"], header_lines=header["lines"], columns=columns)
    for sec in spec["sections"]:
        rows = []
        for row in sec["rows"]:
            cells = [_cell(spec, sec, row, m, results, paper_df) for m in spec["columns"]]
            rows.append(Row(row["label"], row["method"], row["variant"], cells))
        table.sections.append(Section(sec["label"], sec["dataset"], sec["corpus"], header["stand_in"], rows))
    return table


def _cell(spec, sec, row, multiple, results, paper_df) -> Cell:
    paper_text = paper_value_text(paper_df, PAPER, spec["table"], sec["dataset"], row["method"],
                                  length_label(multiple), spec["metric"])
    paper = None if paper_text is None else float(paper_text)
    run = run_name(row["method"], multiple)
    found = [r for r in results if r["model"] == row["variant"] and r["run"] == run
             and r["length"] == round(multiple * r["base_train_length"])]
    matches = {float(r[spec["metric"]]) for r in found}
    if not matches:
        return Cell(paper_text or MISSING, NOT_COMPUTED, MISSING, NOT_COMPUTED, paper)
    if len(matches) > 1:
        raise ValueError(f"conflicting results for {row['variant']}/{run} at {multiple:g} x L_t: {sorted(matches)}")
    ours = matches.pop()
    delta = None if paper is None else ours - paper
    cell = Cell(paper_text or MISSING, format_metric(ours), MISSING if delta is None else format_delta(delta), OK,
                paper, ours, delta)
    if found[0].get("seeds"):
        add_spread(cell, spec, found[0], spec["metric"])
    return add_replication(cell, found[0])


def header_facts(view: dict, models: dict[str, str], corpora: dict, metas: dict[str, dict], hf: bool) -> dict:
    """What only this paper's headers say, laid over the shared facts by lenex.tables.header's
    build_header: its scale statement (the released models, or stand-ins), which model stood in for
    which, the domain data, compute equivalence and the evaluation (`lines`), the domain's stand-in."""
    domain = metas.get("arxiv", {})
    (test_docs, test_tokens), (train_docs, train_tokens) = split_size(domain, "test"), split_size(domain, "train")
    arxiv = stand_in("arxiv", corpora.get("arxiv", {}), "arXiv")
    exp = view.get("experiment", {})
    verdict = ("the paper's models (Hugging Face checkpoints), continued as in Section 4.4" if hf
               else "NOT the paper's scale: the pipeline's own small models stand in for the released ones")
    lines = [(f"Model `{name}`", text) for name, text in models.items()]
    lines += [
        ("Domain data (adaptation, continued pretraining, evaluation)",
         f"`arxiv`: {arxiv}; train {train_docs} documents / {train_tokens} tokens, "
         f"test {test_docs} documents / {test_tokens} tokens"),
        ("Compute equivalence", f"every continued run and the extra domain adaptation see one epoch's tokens "
         f"({exp.get('epoch_tokens') or 'the whole train split'}); chunk/prefix run L_e/L_t epochs"),
        ("Evaluation", "Section 4.5: one document per test piece of L_e tokens, no packing, no sliding window, "
         f"remainder dropped; mean of per-piece perplexity; at most {view['eval']['max_tokens']} tokens per cell"),
    ]
    return {"scale_statement": f"Ours: preset `{view['name']}` — {verdict}", "lines": lines, "stand_in": arxiv}


def table_header(header: dict) -> dict:
    """The header as this paper's tables print it: its scale statement and its own lines, then the
    scaled scheme options its models ran with (where the preset scales any), the seeds and the run's
    revision, device and date (as every table's header lines say them)."""
    seeds = header.get("seeds") and f"{header['seeds']}; {SEEDS_COVER}"
    run = {"seeds": seeds, **{key: header[key] for key in ("scaled_scheme_options", *RUN_FACTS) if key in header}}
    return {"scale_statement": header["scale_statement"], "lines": header["lines"] + header_lines(run),
            "stand_in": header["stand_in"]}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_table_arguments(parser)
    parser.add_argument("--preset-file", required=True)
    parser.add_argument("--models", required=True, help="JSON: model -> what stands in for it")
    parser.add_argument("--corpora", default="{}", help="JSON: the config's corpora section")
    parser.add_argument("--metas", nargs="*", default=[], help="meta.json of the domain corpus")
    parser.add_argument("--hf", action="store_true", help="the results come from the released HF models")
    args = parser.parse_args(argv)
    spec = load_table_spec(args.spec, args.table_key, json.loads(args.extra_schemes))
    view = paper_view(read_yaml(args.preset_file), PAPER)
    metas = {Path(m).parent.name: read_recorded(m) for m in args.metas}
    results = load_results(args.results, args.spec, label="model", expect=args.expect)
    corpora = json.loads(args.corpora)
    facts = header_facts(view, json.loads(args.models), corpora, metas, args.hf)
    header = table_header(build_header(view, corpora, metas, results, facts=facts))
    write_table(build_segmented_table(spec, results, load_paper_results(), header), args)

if __name__ == "__main__":
    run_cli(main)
