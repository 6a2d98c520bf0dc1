"""One interface per paper, and the registry the workflow finds the papers in.

Each paper package of the tree defines one `Paper` in its `paper.py` and registers it there:

    PAPER = PAPERS.register(Lex())

The registry (`PAPERS`, lenex.registry) imports the `paper.py` of every package of lenex, so a new
paper package is found without a reinstall; a paper outside the tree declares itself under the entry
points `lenex.papers` of its own package, named by the paper (`toy = "toy.paper:PAPER"`).
`registered` reads the registry: the library, the rules, the Snakefile and the tests never list the
papers, they ask for one by name (`paper_named`) or go over the configured ones.
A paper's own rules, if it has any, are `workflow/rules/<package>.smk` (`rule_file`), which the
Snakefile includes for each configured paper (lenex.pipeline.settings.Settings.paper_rule_files);
its claims file names it (`check_claims_paper`). What a paper
tells the workflow: its models' configs, the recorded files (evaluations, corpus metas) each of
its tables and figures reads, the files its table jobs read besides them, its table renderer's
arguments, the header facts only it knows (through its renderer), and the figures that carry
numbers no table has (each writes its own cells file, which its claims read).

A paper is given the part of the pipeline it needs, never the whole pipeline
(lenex.pipeline.workflow): its file lists take `paths` (lenex.pipeline.paths.Paths: a preset's
corpora and their files, with the settings as `paths.settings`), its models, training and claims
take `settings` (lenex.pipeline.settings.Settings: the config, presets and experiment files). A
function of a preset takes the preset's name and, where it builds models, the preset as the paper
sees it (`view`, lenex.experiment.presets.paper_view). Every model a claim compares is trained with
seeds 1..n (`seeds`: the view's `experiment.seeds`, or a budget group's), seed s with the
preset's training seed + s - 1 (`train_seed`, `train_config`), so each cell is a mean over seeds
and two cells pair seed by seed (lenex.tables.seeds, lenex.claims.intervals).
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod

from ..experiment.presets import seed_list, train_seed
from ..registry import Registry

PAPER_ENTRY_POINTS = "lenex.papers"


class Paper(ABC):
    """One paper as the workflow sees it (see the module's docstring): `paths` where a method lists
    files, `settings` where it reads only the config, presets and experiment files."""

    #: The paper's one name: config/experiments/<name>.yaml, results/<preset>/.../<name>/, {paper}.
    name: str
    #: The module that renders one of its tables (`python -m <module>`, rule paper_table).
    table_renderer: str
    #: Its figures whose numbers no table has: each writes <figure>.cells.json beside its PNG.
    figure_cells: tuple[str, ...] = ()
    #: What its results and checkpoints call a variant (a label of lenex.records.provenance.RESULT_LABELS).
    model_label: str = "variant"
    #: How its evaluations score (lenex.tables.diagnostics): each piece whole ("whole-piece"), or only the
    #: last token of each segment ("last-token").
    protocol: str = "whole-piece"
    #: Whether every evaluation length scores the same tokens (the beyond-L_tr step is then exact).
    same_tokens: bool = False
    #: Whether each corpus its cells are scored on trains its own models (a claim's cells of two corpora
    #: read two models), or one model of a variant is scored on every corpus (LEX's, trained on one mix).
    models_per_corpus: bool = True
    #: Its model paths under results/<preset>/models/<paper>/ (without .pt): a regular expression whose
    #: named groups are the path's fields (`model_spec` reads them; variant and seed here), and the same
    #: in words for an error. They are also how its evaluations' paths name the model they score
    #: (results/<preset>/<stage>/<paper>/<model>/...: `model_layout`, `trained_models`).
    model_paths: str = r"(?P<variant>[^/]+)/seed(?P<seed>\d+)"
    model_paths_words: str = "<variant>/seed<s>.pt"

    @property
    def model_layout(self) -> str:
        """`model_paths` with its groups unnamed: a model path inside a longer pattern."""
        return re.sub(r"\(\?P<\w+>", "(?:", self.model_paths)

    def paper_only_table(self, spec: dict, paper_df) -> dict:
        """One table of `spec` built with the paper's numbers alone (no result of ours): what the
        claims' thresholds and paper-side checks read (lenex.claims.paper_cells)."""
        from ..tables.table_data import build_table

        return build_table(spec, [], paper_df, {"train_length": spec["paper_train_length"]})

    def claims_arguments(self) -> str:
        """lenex.claims.render's arguments that follow from how the paper trains its models."""
        return "" if self.models_per_corpus else "--one-model-per-variant"

    @abstractmethod
    def model_config(self, view: dict, experiment: dict, variant: str) -> dict:
        """ModelConfig fields of one variant's model (`view`: the preset as this paper sees it),
        built by lenex.experiment.presets.model_config with what the paper derives laid over."""

    def seeds(self, view: dict, experiment: dict, variant: str) -> list[int]:
        """The seeds of one variant's models at a preset: 1..`experiment.seeds` of the view
        (lenex.experiment.presets.seed_list), or a power rerun's `power_seeds` of the variant; a
        paper with budget groups reads the variant's group."""
        return seed_list(view, variant)

    def train_seed(self, view: dict, seed) -> int:
        """The training seed of seed s (lenex.experiment.presets.train_seed): the preset's `train.seed` + s - 1."""
        return train_seed(view["train"].get("seed", 1), int(seed))

    def train_config(self, settings, preset: str, variant: str, seed) -> dict:
        """TrainConfig fields of one variant's model of seed s at a preset (`train_fields`)."""
        return self.train_fields(settings.paper_preset(preset, self.name), settings.experiment(self.name), variant, seed)

    def train_fields(self, view: dict, experiment: dict, variant: str, seed) -> dict:
        """TrainConfig fields of one variant's model of seed s: the paper's training at the preset
        (`view`) with seed s's training seed."""
        return {**view["train"], "seed": self.train_seed(view, seed)}

    def model_spec(self, view: dict, experiment: dict, path: str):
        """The spec (lenex.pipeline.specs.ModelSpec) of the model whose checkpoint is
        results/<preset>/models/<paper>/<path>.pt, from the preset as the paper sees it (`view`)
        and its experiment file alone; the pipeline's `specs` part completes it (its corpus's
        files, its checks, backend and launch). Here: one model per variant and seed,
        `<variant>/seed<s>`, trained on the paper's training corpus; a paper laying its models out
        otherwise says so."""
        from .specs import path_fields

        found = path_fields(self.model_paths, path, self.name, self.model_paths_words)
        return self.variant_spec(view, experiment, found["variant"], found["seed"], path)

    def variant_spec(self, view: dict, experiment: dict, variant: str, seed: int, path: str):
        """The spec of seed `seed` of `variant`, trained from scratch on the paper's training corpus,
        its checkpoint at models/<paper>/<path>.pt: `model_spec`'s, which a paper laying its models
        out otherwise changes where they differ."""
        from ..experiment.schemes import module_files
        from .specs import ModelSpec

        preset = view["name"]
        self.check_variant(experiment, variant)
        return ModelSpec(paper=self.name, preset=preset, variant=variant, seed=seed, corpus=None,
                         output=f"results/{preset}/models/{self.name}/{path}.pt",
                         workdir=f"results/{preset}/train/{self.name}/{path}", labels=self.labels(preset, variant),
                         model=self.model_config(view, experiment, variant),
                         train=self.train_fields(view, experiment, variant, seed),
                         scheme_files=tuple(module_files(experiment["variants"][variant])))

    def labels(self, preset: str, variant: str, **more) -> dict:
        """What a model of `variant` records (and what reads it expects): the paper, the preset and
        the variant under the paper's name for it (`model_label`); `more`: what else its path names."""
        return {"paper": self.name, "preset": preset, self.model_label: variant, **more}

    def check_variant(self, experiment: dict, variant: str) -> None:
        """`variant` is one of the paper's (its experiment file's), or one error naming them."""
        variants = experiment["variants"]
        if variant not in variants:
            from .user_errors import refuse

            refuse(f"unknown variant {variant!r} for paper {self.name!r}; known: {', '.join(variants)}")

    def fetched_models(self, settings, preset: str) -> str | None:
        """A regular expression of its model paths (under results/<preset>/models/<paper>/) that a
        preset fetches instead of training (released checkpoints), or None: the training rule
        leaves them to the rule that fetches them."""
        return None

    def trains_from_scratch(self, path: str) -> bool:
        """Whether the model at results/<preset>/models/<paper>/<path>.pt trains from scratch for
        the preset's steps (a plan estimates its hours from them), or continues another checkpoint."""
        return True

    @abstractmethod
    def table_recorded(self, paths, preset: str, table: str) -> dict[str, list[str]]:
        """The recorded files one table reads, by role (results, metas, ...): its job's inputs,
        which under `from_raw` its raw results stand in for."""

    @abstractmethod
    def figure_recorded(self, paths, preset: str, figure: str) -> list[str]:
        """The recorded files one figure reads."""

    @abstractmethod
    def table_arguments(self, paths, preset: str, table: str) -> str:
        """The table renderer's own arguments, beyond the ones every renderer takes
        (lenex.tables.render.add_table_arguments): its results, header facts, corpora ..."""

    def header_recorded(self, paths, preset: str) -> list[str]:
        """Recorded files its headers read beyond each table's own (e.g. the training corpus's meta)."""
        return []

    def table_inputs(self, paths, preset: str, table: str) -> dict[str, str]:
        """A table job's inputs that are not recorded results (a header file, the preset file)."""
        return {}

    def produced_references(self, settings) -> set[str]:
        """What its tables and figures produce beyond table cells, as its claims name it (ERF rows
        t<N>/erf/<corpus>/<variant>, checks t<N>/check/<name>, figure numbers f<N>/<name>): a claim
        naming anything else is an error when the DAG is built (lenex.claims.evaluate.check_produced)."""
        return set()

    def diagnostic_recorded(self, paths, preset: str) -> list[str]:
        """The evaluations its diagnostics read (lenex.tables.diagnostics): every recorded file but the corpus metas."""
        return [f for f in self.recorded(paths, preset) if not f.endswith("/meta.json")]

    def trained_models(self, paths, preset: str) -> list[str]:
        """The model paths (under results/<preset>/models/<paper>/, without .pt) its diagnostics' evaluations
        score, read off those evaluations' paths by `model_layout`, but the ones a preset fetches
        instead of training (`fetched_models`): the models whose training curves its page shows."""
        found = re.compile(rf"results/{re.escape(preset)}/[^/]+/{re.escape(self.name)}/(?P<model>{self.model_layout})/")
        fetched = self.fetched_models(paths.settings, preset)
        models = {m.group("model") for path in self.diagnostic_recorded(paths, preset) if (m := found.match(path))}
        return sorted(m for m in models if not (fetched and re.match(fetched, m)))

    def recorded(self, paths, preset: str) -> list[str]:
        """Every recorded file its tables, figures and headers read: its raw results."""
        experiment = paths.settings.experiment(self.name)
        files = list(self.header_recorded(paths, preset))
        for key in experiment["tables"]:
            for group in self.table_recorded(paths, preset, key.removeprefix("table")).values():
                files += group
        for key in experiment.get("figures", {}):
            files += self.figure_recorded(paths, preset, key.removeprefix("figure"))
        return sorted(set(files))


#: The papers by name: the tree's register themselves in lenex/<package>/paper.py; one outside it by
#: an entry point `lenex.papers` of its package.
PAPERS = Registry("paper", members="lenex.*.paper", entry_points=PAPER_ENTRY_POINTS, member_type=Paper,
                  known="registered", hint=" (a paper registers itself in its package's paper.py, "
                  "`PAPER = PAPERS.register(...)`; a paper outside lenex declares the entry point "
                  f"`{PAPER_ENTRY_POINTS}` in its package)")


@functools.cache
def registered() -> dict[str, Paper]:
    """Every paper, by name: the tree's (each package's paper.py) and those the entry points
    `lenex.papers` of installed packages declare."""
    PAPERS.refresh()
    return dict(PAPERS)


def rule_file(name: str) -> str:
    """The rule file of paper `name`'s own rules, relative to the Snakefile: workflow/rules/ and its
    package's name (the paper's name with `-` as `_`)."""
    return f"workflow/rules/{name.replace('-', '_')}.smk"


def check_claims_paper(declared, paper: str, source: str) -> None:
    """A claims file's `paper` is a registered paper, and the one whose claims it holds (`paper`):
    one error naming the file otherwise (the claims schema takes any name; the registry decides)."""
    try:
        paper_named(declared)
    except ValueError as err:
        raise ValueError(f"{source}: paper: {err}") from None
    if declared != paper:
        raise ValueError(f"{source}: paper: {declared!r} is not the paper these claims are read for, {paper!r}")


def paper_named(name: str) -> Paper:
    """The registered paper `name`, or one error naming the registered ones."""
    papers = registered()
    if name not in papers:
        raise ValueError(PAPERS.unknown(name))
    return papers[name]
