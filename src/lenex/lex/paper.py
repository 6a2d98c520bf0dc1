"""The LEX paper as the workflow sees it (lenex.pipeline.papers.Paper): its models are the
generic `train` rule's, one per variant and seed (the preset's `papers.lex.experiment.seeds`), its
cells the generic evaluation's, every seed's on the same tokens, its tables the library's renderer
(each cell the mean over seeds) with a header file of their own (rule lex_table_header). File
lists: lenex.lex.targets."""

from __future__ import annotations

import shlex

from ..pipeline.papers import Paper
from ..pipeline.settings import quoted_json
from lenex.experiment.presets import model_config, seed_list
from . import targets


class Lex(Paper):
    name = targets.PAPER
    table_renderer = "lenex.tables.render"
    same_tokens = True  # lenex.scoring.evaluate: every length scores the same span of tokens
    figure_cells = ("figure2",)  # Figure 2's curves are computed exactly: its claim reads their numbers

    def model_config(self, view: dict, experiment: dict, variant: str) -> dict:
        return model_config(view, variant, experiment["variants"][variant])

    def preset_seeds(self, pipeline, preset: str) -> list[int]:
        """The seeds of every LEX model at a preset: its variants share one budget (no groups)."""
        return seed_list(pipeline.paper_preset(preset, self.name))

    def model_path(self, preset: str, variant: str, seed) -> str:
        return targets.model_path(preset, variant, int(seed))

    def table_recorded(self, pipeline, preset: str, table: str) -> dict[str, list[str]]:
        """Its results (evaluations or resolutions, every seed) and the metas of its corpora (its header's)."""
        spec = pipeline.table_spec(self.name, table)
        skip = pipeline.corpus_skip(preset)
        return {"results": targets.table_results(preset, spec, pipeline.train_length(preset, self.name),
                                                 self.preset_seeds(pipeline, preset), skip),
                "metas": pipeline.corpus_metas(preset, targets.table_corpora(spec, skip))}

    def produced_references(self, pipeline) -> set[str]:
        """Figure 2's numbers (its cells file's `values`)."""
        return {f"f2/{name}" for name in targets.FIGURE2_VALUES}

    def figure_recorded(self, pipeline, preset: str, figure: str) -> list[str]:
        """Figure 1 draws Table 2's PG22 section; Figure 2 is analytic (no recorded file)."""
        return self.section_recorded(pipeline, preset, "2", "pg22") if figure == "1" else []

    def section_recorded(self, pipeline, preset: str, table: str, corpus: str) -> list[str]:
        """The results of one section (corpus) of a table."""
        return targets.section_results(preset, pipeline.table_spec(self.name, table),
                                       pipeline.train_length(preset, self.name), corpus,
                                       self.preset_seeds(pipeline, preset), pipeline.corpus_skip(preset))

    def header_recorded(self, pipeline, preset: str) -> list[str]:
        return [pipeline.train_meta(preset, self.name)]

    def table_inputs(self, pipeline, preset: str, table: str) -> dict[str, str]:
        return {"header": self.header_file(preset, table)}

    def header_file(self, preset: str, table: str) -> str:
        """The header facts of one table (rule lex_table_header, lenex.tables.header)."""
        return f"results/{preset}/tables/{self.name}/table{table}.header.json"

    def header_arguments(self, pipeline, preset: str, table: str) -> str:
        """lenex.tables.header's arguments for one table: the scale, corpora, training data and
        results it describes."""
        recorded = self.table_recorded(pipeline, preset, table)
        unavailable = targets.table_unavailable(pipeline.table_spec(self.name, table), pipeline.corpus_skip(preset))
        return (f"--preset-file {pipeline.preset_file(preset)} --paper {self.name}"
                f" --corpora {quoted_json(pipeline.corpora(preset))} --metas {' '.join(recorded['metas'])}"
                f" --train-meta {pipeline.train_meta(preset, self.name)}"
                f" --train-stands-in-for {shlex.quote(pipeline.experiment(self.name)['train_stands_in_for'])}"
                f" --unavailable {quoted_json(unavailable)} --results {' '.join(recorded['results'])}")

    def paper_head_dim(self, pipeline) -> int:
        """The head dimension of the paper's own model (its `paper` preset: 1024 / 16)."""
        model = pipeline.paper_preset("paper", self.name)["model"]
        return model["d_model"] // model["n_head"]

    def table_arguments(self, pipeline, preset: str, table: str) -> str:
        results = self.table_recorded(pipeline, preset, table)["results"]
        return "--results " + " ".join(results) + f" --header {self.header_file(preset, table)}"

    def evaluation_jobs(self, pipeline, preset: str) -> dict[tuple, list[dict]]:
        """The tables' cells at a CPU preset as evaluation jobs, one per model (variant and seed),
        measure and corpus: {(variant, seed, stage, corpus): [cell spec with its result path]} (lenex.lex.evaluate_model,
        targets.job_cells). A job there pays more to start than a tiny cell costs. At a preset whose
        evaluations run on GPUs none: each cell is its own job of the one-cell rules (`evaluate`,
        `resolution`), which run side by side and which a cluster profile reaches by name."""
        if pipeline.gpu_stage(preset, "evaluate", self.name):
            return {}
        jobs = targets.job_cells(pipeline.experiment(self.name)["tables"], pipeline.train_length(preset, self.name),
                                 self.preset_seeds(pipeline, preset), pipeline.corpus_skip(preset))
        return {key: [self.cell_spec(preset, cell, key[1]) for cell in cells] for key, cells in jobs.items()}

    def cell_spec(self, preset: str, cell: tuple, seed: int) -> dict:
        """One cell of one seed's model as lenex.lex.evaluate_model scores it (`extra`: what its
        result records besides the measurement)."""
        stage, variant, corpus, mask, length = cell
        return {"stage": stage, "data": f"results/{preset}/data/{corpus}", "mask": mask, "length": length,
                "out": targets.cell_path(preset, cell, seed),
                "extra": {"variant": variant, "corpus": corpus, "seed": seed, "paper": self.name, "preset": preset}}


PAPER = Lex()
