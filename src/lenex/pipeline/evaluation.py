"""The two paths that write a perplexity or attention-resolution cell, and what they share
(`pipeline.evaluation`, a part of `lenex.pipeline.workflow.Pipeline`).

- **The one-cell path** (rules `evaluate` and `resolution`, `ONE_CELL_RULES`): one job per cell,
  `python -m lenex.scoring.evaluate` or `lenex.lex.resolution`. It builds every cell at a preset
  whose evaluations run on GPUs (a job's start-up is small beside a cell's work there, the cells run
  side by side and a cluster profile reaches them by rule name), and any cell no table reads.
- **The per-model path** (rules `<paper>_eval__<preset>_<variant>_s<seed>_<corpus>` and
  `<paper>_resolution__...`, `PerModelJob`): at a CPU preset, one job per model, measure and
  corpus scores every cell of them that a table reads, in one process that loads the model once
  (`python -m lenex.lex.evaluate_model`), each cell still its own file. Its cells depend on the
  preset, so a rule is made per preset and job; each takes precedence over the one-cell rule of its
  measure (`workflow.ruleorder`, lex.smk).

Both take a cell's arguments from here (`span`, `setting`, `extra`; the expectation of the model
from lenex.pipeline.identities), so a cell's result file is the same whichever path wrote it:
tests/test_evaluation_paths.py runs both on the same cell and compares the files.
"""

from __future__ import annotations

from dataclasses import dataclass

from .settings import quoted_json

#: The one-cell rule of each measure (stage): a cell's path at a GPU preset, and the rule a
#: per-model job takes precedence over at a CPU preset.
ONE_CELL_RULES = {"eval": "evaluate", "resolution": "resolution"}


def cell_extra(preset: str, paper: str, variant: str, corpus: str, seed) -> dict:
    """What a cell's result records besides its measurement, on either path."""
    return {"variant": variant, "corpus": corpus, "seed": int(seed), "paper": paper, "preset": preset}


@dataclass
class PerModelJob:
    """One job of the per-model path: the cells (lenex.lex.evaluate_model's cell specs, each with
    its result path `out`) of one model (variant, seed), measure (stage) and corpus at a preset."""
    preset: str
    paper: str
    variant: str
    seed: int
    stage: str
    corpus: str
    cells: list[dict]

    @property
    def name(self) -> str:
        """The rule's name: one per preset and job (a rule name holds no `-`)."""
        return f"{self.paper}_{self.stage}__{self.preset}_{self.variant}_s{self.seed}_{self.corpus}".replace("-", "_")

    @property
    def outputs(self) -> list[str]:
        return [cell["out"] for cell in self.cells]

    @property
    def log(self) -> str:
        return f"results/{self.preset}/logs/{self.stage}/{self.paper}/{self.variant}/seed{self.seed}/{self.corpus}.log"

    @property
    def one_cell_rule(self) -> str:
        """The one-cell rule that would otherwise write these cells (the job takes precedence over it)."""
        return ONE_CELL_RULES[self.stage]


class Evaluation:
    """Which path a paper's cells take at each preset, and the arguments both give a cell, from the
    settings (the preset's `eval` section, the experiment's span) and the resources (GPUs or not)."""

    def __init__(self, settings, resources):
        self.settings, self.resources = settings, resources

    def per_model_presets(self, paper: str) -> list[str]:
        """The presets at which the paper's table cells take the per-model path: those whose
        evaluations run on CPUs, where a job pays more to start than a small cell costs."""
        return [preset for preset in self.settings.preset_names
                if not self.resources.gpu_stage(preset, "evaluate", paper)]

    def span(self, preset: str, paper: str) -> int:
        """The tokens every length scores (the LEX protocol): the experiment's span_multiple x L_tr."""
        return self.settings.eval_length(preset, self.settings.experiment(paper)["span_multiple"], paper)

    def setting(self, preset: str, paper: str, key: str) -> int:
        """The preset's `eval: <key>` as the paper sees it (max_tokens, batch_tokens)."""
        return self.settings.paper_preset(preset, paper)["eval"][key]

    def extra(self, preset: str, paper: str, variant: str, corpus: str, seed) -> str:
        """`--extra` of a one-cell job, one shell word (cell_extra)."""
        return quoted_json(cell_extra(preset, paper, variant, corpus, seed))
