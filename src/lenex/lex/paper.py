"""The LEX paper as the workflow sees it (lenex.pipeline.papers.Paper): its models are the
generic `train` rule's, one per variant and seed (the preset's `papers.lex.experiment.seeds`), its
cells the generic evaluation's, every seed's on the same tokens, its tables the library's renderer
(each cell the mean over seeds) with a header file of their own (rule lex_table_header). File
lists: lenex.lex.targets."""

from __future__ import annotations

import shlex

from ..pipeline.papers import PAPERS, Paper
from ..pipeline.settings import quoted_json
from ..experiment.presets import check_power_variants, model_config, seed_list
from . import targets


class Lex(Paper):
    name = targets.PAPER
    table_renderer = "lenex.tables.render"
    same_tokens = True  # lenex.scoring.evaluate: every length scores the same span of tokens
    models_per_corpus = False  # one model per variant, trained on the mix, scored on every corpus
    figure_cells = ("figure2",)  # Figure 2's curves are computed exactly: its claim reads their numbers

    def model_config(self, view: dict, experiment: dict, variant: str) -> dict:
        return model_config(view, variant, experiment["variants"][variant])

    def preset_seeds(self, settings, preset: str):
        """The seeds of each LEX variant's models at a preset, a function of the variant: its
        variants share one budget (no groups), and a power rerun adds seeds to those it names."""
        view = settings.paper_preset(preset, self.name)
        check_power_variants(view, settings.experiment(self.name)["variants"], self.name)
        return lambda variant: seed_list(view, variant)

    def model_path(self, preset: str, variant: str, seed) -> str:
        return targets.model_path(preset, variant, int(seed))

    def table_recorded(self, paths, preset: str, table: str) -> dict[str, list[str]]:
        """Its results (evaluations or resolutions, every seed) and the metas of its corpora (its header's)."""
        settings = paths.settings
        spec = settings.table_spec(self.name, table)
        skip = paths.corpus_skip(preset)
        return {"results": targets.table_results(preset, spec, settings.train_length(preset, self.name),
                                                 self.preset_seeds(settings, preset), skip),
                "metas": paths.corpus_metas(preset, targets.table_corpora(spec, skip))}

    def produced_references(self, settings) -> set[str]:
        """Figure 2's numbers (its cells file's `values`)."""
        return {f"f2/{name}" for name in targets.FIGURE2_VALUES}

    def figure_recorded(self, paths, preset: str, figure: str) -> list[str]:
        """Figure 1 draws Table 2's PG22 section; Figure 2 is analytic (no recorded file)."""
        return self.section_recorded(paths, preset, "2", "pg22") if figure == "1" else []

    def section_recorded(self, paths, preset: str, table: str, corpus: str) -> list[str]:
        """The results of one section (corpus) of a table."""
        settings = paths.settings
        return targets.section_results(preset, settings.table_spec(self.name, table),
                                       settings.train_length(preset, self.name), corpus,
                                       self.preset_seeds(settings, preset), paths.corpus_skip(preset))

    def header_recorded(self, paths, preset: str) -> list[str]:
        return [paths.train_meta(preset, self.name)]

    def table_inputs(self, paths, preset: str, table: str) -> dict[str, str]:
        return {"header": self.header_file(preset, table)}

    def header_file(self, preset: str, table: str) -> str:
        """The header facts of one table (rule lex_table_header, lenex.tables.header)."""
        return f"results/{preset}/tables/{self.name}/table{table}.header.json"

    def header_arguments(self, paths, preset: str, table: str) -> str:
        """lenex.tables.header's arguments for one table: the scale, corpora, training data and
        results it describes."""
        settings = paths.settings
        recorded = self.table_recorded(paths, preset, table)
        unavailable = targets.table_unavailable(settings.table_spec(self.name, table), paths.corpus_skip(preset))
        return (f"--preset-file {settings.preset_file(preset)} --paper {self.name}"
                f" --corpora {quoted_json(paths.corpora(preset))} --metas {' '.join(recorded['metas'])}"
                f" --train-meta {paths.train_meta(preset, self.name)}"
                f" --train-stands-in-for {shlex.quote(settings.experiment(self.name)['train_stands_in_for'])}"
                f" --unavailable {quoted_json(unavailable)} --results {' '.join(recorded['results'])}")

    def paper_head_dim(self, settings) -> int:
        """The head dimension of the paper's own model (its `paper` preset: 1024 / 16)."""
        model = settings.paper_preset("paper", self.name)["model"]
        return model["d_model"] // model["n_head"]

    def table_arguments(self, paths, preset: str, table: str) -> str:
        results = self.table_recorded(paths, preset, table)["results"]
        return "--results " + " ".join(results) + f" --header {self.header_file(preset, table)}"

    def evaluation_cells(self, paths, preset: str) -> list[tuple]:
        """The tables' cells at a preset, every seed's, as (stage, variant, corpus, mask, length,
        seed) (targets.evaluated_cells): lenex.pipeline.evaluation makes each a CellSpec and groups
        them into jobs as the preset says."""
        settings = paths.settings
        return targets.evaluated_cells(settings.experiment(self.name)["tables"], settings.train_length(preset, self.name),
                                       self.preset_seeds(settings, preset), paths.corpus_skip(preset))


PAPER = PAPERS.register(Lex())
