"""Checks that run when Snakemake builds the DAG, before any job starts and before
Snakemake removes the old output of a job that could never succeed. A part of
`lenex.pipeline.workflow.Pipeline` (`pipeline.checks`); the rules call these from their params and
input functions.

- A training's configs (`checked_train`): the checks lenex.training.train makes before reading any data
  (lenex.training.checks.check_run_configs: bounds, unknown keys, n_head dividing d_model,
  micro-batches dividing the batch; lenex.pipeline.variants.check_model_once: sizes its position
  scheme cannot serve, `PositionScheme.check_sizes`) and, where its corpus is already prepared as this preset
  prepares it, that every split it samples windows from holds one window (check_split_sizes,
  from meta.json). A corpus prepared with other settings is prepared again first, so its
  sizes are checked by the training itself, before its first step.
- A paper's claims (`checked_claims`): the file names its paper, a registered one
  (lenex.pipeline.papers.check_claims_paper), and every ERF, check and figure reference names
  something its tables and figures produce, and every table cell reference a cell of its
  tables (lenex.claims.evaluate.check_produced, lenex.claims.cell_names.table_cells).
"""

from __future__ import annotations

import functools
from pathlib import Path

from ..claims.cell_names import table_cells
from ..training.checks import check_run_configs, check_split_sizes
from .memo import remembered
from .papers import check_claims_paper, registered
from .variants import check_model_once, variants_text
from .settings import quoted_json
from .user_errors import refuse


def longest_document(data: str | Path) -> int:
    """The tokens of the longest document a prepared corpus holds (every split, from meta.json's
    document offsets): no preparation of the same sources keeps a longer one."""
    from ..data.store import read_meta

    longest = 0
    for split in read_meta(data, require=("splits",))["splits"].values():
        ends = [*split.get("doc_offsets", [])[1:], split.get("n_tokens", 0)]
        starts = split.get("doc_offsets", [])
        longest = max([longest, *(end - start for start, end in zip(starts, ends))])
    return longest


def documents_problem(longest: int, shortest_kept: int) -> str | None:
    """Why no document could serve a preset that keeps documents of `shortest_kept` tokens or more
    (L_tr / 4, lenex.pipeline.paths.Paths.shortest_eval_length), or None."""
    if longest >= shortest_kept:
        return None
    return (f"its longest document has {longest} tokens, and documents shorter than train_length / 4 = "
            f"{shortest_kept} are left out, so no document would remain: shorten model.train_length")


class DagChecks:
    """The checks, reading the settings (models, presets, claims files) and the paths (what a preset keeps)."""

    def __init__(self, settings, paths):
        self.settings, self.paths = settings, paths

    def checked_train(self, preset_name: str, paper: str, variant: str, train: dict, data: str,
                      model: dict | None = None) -> str:
        """`--train-config` of a training of `variant` (its ModelConfig fields `model`, else the
        variant's at the preset) on the corpus folder `data`, one shell word, once the model and
        train configs pass lenex.training.train's own checks and the corpus's splits (where it is
        prepared already) hold a training window. An error names the preset's file."""
        model = self.settings.model_config(preset_name, paper, variant) if model is None else model
        preset_file = self.settings.preset_file(preset_name)
        try:
            check_run_configs(model, train)
            check_model_once(variants_text(model), self.settings.stamps)
        except ValueError as err:
            refuse(f"{preset_file}: {paper} {variant}: {err}")
        if self.prepared_as_preset(preset_name, data):
            try:
                check_split_sizes(data, model["train_length"])
            except ValueError as err:
                refuse(f"{preset_file}: model.train_length {model['train_length']} (paper {paper}): {err}")
        elif (Path(data) / "meta.json").is_file():
            # To be prepared again: what the preparation keeps is known from what it kept before.
            shortest = self.paths.shortest_eval_length(preset_name)
            problem = documents_problem(longest_document(data), shortest)
            if problem:
                refuse(f"{preset_file}: model.train_length {model['train_length']} "
                       f"(paper {paper}): {data}/meta.json: {problem}")
        return quoted_json(train)

    def prepared_as_preset(self, preset_name: str, data: str) -> bool:
        """Whether the corpus folder `data` holds a corpus prepared with this preset's settings
        (tokenizer, seed, split fractions, shortest document), which no job will prepare again
        for a setting's sake."""
        from ..data.store import read_meta

        if not (Path(data) / "meta.json").is_file():
            return False
        meta, settings = read_meta(data), self.settings.preset(preset_name)["data"]
        shortest = ((meta.get("skipped") or {}).get("too_short") or {}).get("min_tokens")
        return (str(meta.get("tokenizer", "")).startswith(settings["tokenizer"]) and meta.get("seed") == settings["seed"]
                and meta.get("valid_fraction") == settings["valid_fraction"]
                and meta.get("test_fraction") == settings["test_fraction"]
                and shortest == self.paths.shortest_eval_length(preset_name))

    def checked_claims(self, paper: str) -> str:
        """The claims file of `paper` (an input of its claims job) once every ERF, check and figure
        reference in it names something the paper produces."""
        self._check_claims(paper)
        return f"config/claims/{paper}.yaml"

    @functools.cache
    def _check_claims(self, paper: str) -> None:
        """Checked once per content of the claims file, its schema, the claims code and what the
        paper produces (lenex.pipeline.memo): the check imports scipy and validates a long file."""
        path = self.settings.config_dir / "claims" / f"{paper}.yaml"
        schema = self.settings.schemas / "claims.schema.yaml"
        produced = sorted(self.settings.paper(paper).produced_references(self.settings))
        cells = sorted(table_cells(self.settings.experiment(paper)))
        code = sorted((Path(__file__).resolve().parents[1] / "claims").glob("*.py"))

        def check() -> bool:
            from ..claims.evaluate import check_produced, load_claims

            try:
                claims = load_claims(path, schema)
                check_claims_paper(claims["paper"], paper, f"config/claims/{paper}.yaml")
                check_produced(claims, set(produced), f"config/claims/{paper}.yaml", cells=set(cells))
            except ValueError as err:
                refuse(str(err))
            return True

        remembered(self.settings.stamps, "claims-check", [path, schema, *code], check,
                   extra="\n".join([*produced, *cells, *sorted(registered())]))
