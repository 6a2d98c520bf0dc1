"""The one mechanism that writes every perplexity and attention-resolution cell
(`pipeline.evaluation`, a part of `lenex.pipeline.workflow.Pipeline`).

A job scores a group of cells (`CellSpec`, each made by `Evaluation.cell`) of one model in one
process that loads it once, `python -m lenex.lex.evaluate_model`, and writes each cell to its own
result file. What a preset chooses is the group (`Evaluation.granularity`):

- `model`, at a preset whose evaluations run on CPUs, where a job pays more to start than a small
  cell costs: one job per model (variant, seed), measure and corpus holds every cell of them that a
  table reads. Its cells depend on the preset (its L_tr and seeds), so its rule is made per preset
  and group (`<paper>_eval__<preset>_<variant>_s<seed>_<corpus>`, `<paper>_resolution__...`), and
  it takes precedence over its measure's rule (`Evaluation.rule_orders`).
- `cell`, at a GPU preset, where a job's start-up is small beside a cell's work, the cells run side
  by side and a cluster profile reaches them by rule name: one job per cell, the group of one that
  its measure's rule (`evaluate`, `resolution`: `MEASURE_RULES`) reads off the cell's path. Those
  rules also write any cell no table reads, and the fairseq cross-check's (fairseq.smk).

All of these rules are one rule block (workflow/rules/evaluate.smk) over `Evaluation.rules()`
(`EvaluationRule`): the same command, cell specs and arguments (`span`, `setting`, the model's
expectation from lenex.pipeline.identities) whichever group a cell is in.
"""

from __future__ import annotations

from dataclasses import dataclass

from .settings import quoted_json

#: The rule of each measure (stage): it writes a cell alone, read off the cell's path.
MEASURE_RULES = {"eval": "evaluate", "resolution": "resolution"}
#: Where a cell's result is written, and its measure's rule's output and log patterns.
CELL_LAYOUT = "results/{preset}/{stage}/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.json"
CELL_LOG = "results/{preset}/logs/{stage}/{paper}/{variant}/seed{seed}/{corpus}/{mask}/L{length}.log"
MODEL_LAYOUT = "results/{preset}/models/{paper}/{variant}/seed{seed}.pt"
GRANULARITIES = ("model", "cell")


def cell_extra(preset: str, paper: str, variant: str, corpus: str, seed) -> dict:
    """What a cell's result records besides its measurement."""
    return {"variant": variant, "corpus": corpus, "seed": int(seed), "paper": paper, "preset": preset}


@dataclass(frozen=True)
class CellSpec:
    """One cell: the measure (`stage`) of one model (paper, preset, variant, seed) on one corpus
    (prepared in `data`) under one mask at one length, written to `out`."""
    paper: str
    preset: str
    variant: str
    seed: int
    corpus: str
    mask: str
    length: int
    stage: str
    data: str
    out: str

    def __post_init__(self):
        if self.stage not in MEASURE_RULES:
            raise ValueError(f"cell {self.out}: unknown measure {self.stage!r}; known: {', '.join(MEASURE_RULES)}")

    @property
    def extra(self) -> dict:
        """What its result records besides the measurement (cell_extra)."""
        return cell_extra(self.preset, self.paper, self.variant, self.corpus, self.seed)

    @property
    def model(self) -> tuple:
        """What a job's cells share: the model, measure and corpus (the `model` granularity's group)."""
        return self.preset, self.paper, self.variant, self.seed, self.stage, self.corpus

    def job_cell(self) -> dict:
        """The cell as lenex.lex.evaluate_model's `--cells` lists it."""
        return {"stage": self.stage, "data": self.data, "mask": self.mask, "length": self.length, "out": self.out,
                "extra": self.extra}


@dataclass(frozen=True)
class CellGroup:
    """The cells one evaluation job scores, all of one model, measure and corpus at a preset."""
    cells: tuple[CellSpec, ...]
    granularity: str

    def __post_init__(self):
        if not self.cells or len({cell.model for cell in self.cells}) != 1:
            raise ValueError(f"an evaluation job scores cells of one model, measure and corpus; got "
                             f"{sorted({cell.model for cell in self.cells})}")

    @property
    def first(self) -> CellSpec:
        return self.cells[0]

    @property
    def rule(self) -> str:
        """Its rule's name: its measure's rule for a cell alone, else one per preset and group (a
        rule name holds no `-`)."""
        c = self.first
        if self.granularity == "cell":
            return MEASURE_RULES[c.stage]
        return f"{c.paper}_{c.stage}__{c.preset}_{c.variant}_s{c.seed}_{c.corpus}".replace("-", "_")

    @property
    def outputs(self) -> list[str]:
        return [cell.out for cell in self.cells]

    @property
    def log(self) -> str:
        """Its job's log: its measure's rule's for a cell alone, else one per model, measure and corpus."""
        c = self.first
        if self.granularity == "cell":
            return CELL_LOG.format(preset=c.preset, stage=c.stage, paper=c.paper, variant=c.variant, seed=c.seed,
                                   corpus=c.corpus, mask=c.mask, length=c.length)
        return f"results/{c.preset}/logs/{c.stage}/{c.paper}/{c.variant}/seed{c.seed}/{c.corpus}.log"


class EvaluationRule:
    """One rule of the mechanism, as the rule block of evaluate.smk reads it: a measure's rule (no
    `group`: its one cell is read off the path's wildcards, and its output file) or a group's rule
    (its cells known when the rule is made). Inputs and params are functions of a job's wildcards."""

    def __init__(self, evaluation: Evaluation, stage: str, group: CellGroup | None = None):
        self.evaluation, self.stage, self.group = evaluation, stage, group

    @property
    def name(self) -> str:
        return self.group.rule if self.group else MEASURE_RULES[self.stage]

    @property
    def outputs(self) -> list[str]:
        return self.group.outputs if self.group else [CELL_LAYOUT.replace("{stage}", self.stage)]

    @property
    def log(self) -> str:
        return self.group.log if self.group else CELL_LOG.replace("{stage}", self.stage)

    @property
    def model(self) -> str:
        """The checkpoint: the train rule's output (a pattern for a measure's rule)."""
        if not self.group:
            return MODEL_LAYOUT
        c = self.group.first
        return MODEL_LAYOUT.format(preset=c.preset, paper=c.paper, variant=c.variant, seed=c.seed)

    def _model_of(self, wildcards) -> tuple:
        """(preset, paper, variant, seed, corpus) of a job."""
        c = self.group.first if self.group else wildcards
        return c.preset, c.paper, c.variant, c.seed, c.corpus

    @property
    def threads(self):
        resources = self.evaluation.resources
        if not self.group:
            return resources.stage_threads("evaluate")
        c = self.group.first
        return resources.settings.rule_resources(c.preset, "evaluate", "threads", 1, c.paper)

    @property
    def resources(self) -> dict:
        """`resources:`; the preset's evaluate runtime bounds one cell, a group's job scores len(cells)."""
        resources = self.evaluation.resources
        if not self.group:
            return resources.stage_resources("evaluate")
        c = self.group.first
        return resources.stage_resources_at(c.preset, "evaluate", c.paper, runs=len(self.group.cells))

    def data(self, wildcards) -> list[str]:
        preset, _, _, _, corpus = self._model_of(wildcards)
        return self.evaluation.paths.data_files(preset, corpus)

    def code(self, wildcards) -> str:
        preset, paper, variant, _, _ = self._model_of(wildcards)
        return self.evaluation.code.stamp(self.evaluation.scorer, preset, paper, variant)

    def cells(self, wildcards, output) -> str:
        """`--cells`, one shell word: the group's cells, or the one cell of the path (its result
        written to the rule's output, which a rule made from this one may move: the cross-check's)."""
        if self.group:
            cells = self.group.cells
        else:
            w = wildcards
            cells = [self.evaluation.cell(w.preset, w.paper, w.variant, w.seed, w.corpus, w.mask, w.length,
                                          self.stage, out=output[0])]
        return quoted_json([cell.job_cell() for cell in cells])

    def span(self, wildcards) -> int:
        preset, paper, *_ = self._model_of(wildcards)
        return self.evaluation.span(preset, paper)

    def max_tokens(self, wildcards) -> int:
        preset, paper, *_ = self._model_of(wildcards)
        return self.evaluation.setting(preset, paper, "max_tokens")

    def batch_tokens(self, wildcards) -> int:
        preset, paper, *_ = self._model_of(wildcards)
        return self.evaluation.setting(preset, paper, "batch_tokens")

    def expect(self, wildcards) -> str:
        """What the checkpoint must record (lenex.records.provenance): another model is refused."""
        preset, paper, variant, seed, _ = self._model_of(wildcards)
        return self.evaluation.identities.expect(preset, paper, variant, seed)


class Evaluation:
    """The cells each paper's tables read, their groups at each preset, the rules that score them,
    and the arguments every cell is given, from the settings (the preset's `eval` section, the
    experiment's span), the resources (GPUs or not) and the corpora's paths."""

    def __init__(self, settings, resources, paths, identities, code):
        self.settings, self.resources, self.paths = settings, resources, paths
        self.identities, self.code = identities, code
        self._rules: list[EvaluationRule] | None = None
        self.scorer: str | None = None  # the entry point its rules run (Evaluation.rules)

    def cell(self, preset: str, paper: str, variant: str, seed, corpus: str, mask: str, length, stage: str,
             out: str | None = None) -> CellSpec:
        """A cell's spec (the one place one is made); its result goes to CELL_LAYOUT unless `out` says
        otherwise (the cross-check's own tree)."""
        seed, length = int(seed), int(length)
        out = out or CELL_LAYOUT.format(preset=preset, stage=stage, paper=paper, variant=variant, seed=seed,
                                        corpus=corpus, mask=mask, length=length)
        return CellSpec(paper, preset, variant, seed, corpus, mask, length, stage,
                        self.paths.corpus_folder(preset, corpus), out)

    def granularity(self, preset: str, paper: str) -> str:
        """How a paper's table cells are grouped into jobs at a preset: `model` where its evaluations
        run on CPUs, `cell` where they run on GPUs (the module's docstring says why)."""
        return "cell" if self.resources.gpu_stage(preset, "evaluate", paper) else "model"

    def table_cells(self, preset: str, paper: str) -> list[CellSpec]:
        """Every cell a paper's tables read at a preset, every seed's, in the order its jobs score them
        (the paper's `evaluation_cells`; none for a paper whose cells other rules write)."""
        listed = getattr(self.settings.paper(paper), "evaluation_cells", None)
        if listed is None:
            return []
        return [self.cell(preset, paper, variant, seed, corpus, mask, length, stage)
                for stage, variant, corpus, mask, length, seed in listed(self.paths, preset)]

    def groups(self, preset: str, paper: str, granularity: str | None = None) -> list[CellGroup]:
        """The jobs of a paper's table cells at a preset: at `model` granularity one per model,
        measure and corpus, at `cell` one per cell (the preset's granularity unless one is given)."""
        granularity = granularity or self.granularity(preset, paper)
        if granularity not in GRANULARITIES:
            raise ValueError(f"unknown evaluation granularity {granularity!r}; known: {', '.join(GRANULARITIES)}")
        grouped: dict = {}
        for cell in self.table_cells(preset, paper):
            grouped.setdefault(cell.model if granularity == "model" else cell.out, []).append(cell)
        return [CellGroup(tuple(cells), granularity) for cells in grouped.values()]

    def rules(self, scorer: str | None = None) -> list[EvaluationRule]:
        """Every rule of the mechanism, each running `scorer` (the entry point that scores a group
        of cells, which the rule file names): each measure's rule, then a rule per group of the
        presets whose groups are not single cells (a cell alone is its measure's rule's job). Made once."""
        self.scorer = scorer or self.scorer
        if self._rules is not None:
            return self._rules
        made = [EvaluationRule(self, stage) for stage in MEASURE_RULES]
        for paper in self.settings.papers():
            for preset in self.settings.preset_names:
                if self.granularity(preset, paper.name) != "cell":
                    made += [EvaluationRule(self, group.first.stage, group) for group in self.groups(preset, paper.name)]
        self._rules = made
        return made

    def rule_orders(self) -> list[tuple[str, str]]:
        """Each group's rule over its measure's rule, which could write the same cells."""
        return [(rule.name, MEASURE_RULES[rule.stage]) for rule in self.rules() if rule.group]

    def span(self, preset: str, paper: str) -> int:
        """The tokens every length scores (the LEX protocol): the experiment's span_multiple x L_tr."""
        return self.settings.eval_length(preset, self.settings.experiment(paper)["span_multiple"], paper)

    def setting(self, preset: str, paper: str, key: str) -> int:
        """The preset's `eval: <key>` as the paper sees it (max_tokens, batch_tokens)."""
        return self.settings.paper_preset(preset, paper)["eval"][key]
