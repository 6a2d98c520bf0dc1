"""What a rule tells a job about the model it trains or reads: the labels a training
records in its checkpoint (`--identity`, lenex.records.provenance), the identity an evaluation,
measurement or conversion expects of the checkpoint its target names (`--expect`), and what a
table or figure job expects of the result files it reads. A part of
`lenex.pipeline.workflow.Pipeline` (`pipeline.identities`), reading the settings.

An expectation is what the target path says: the labels (paper, preset, variant or model and
run, the corpus of a receptive-field model), the seed the training ran with (the train config's:
the model of seed<s> trains with the preset's seed + s - 1, `Paper.train_config`) and the model the
variant builds at the preset (position scheme and options, mask, shape, training length). The
vocabulary is the corpus's, which every scorer compares with the corpus's meta.json anyway.
"""

from __future__ import annotations

import re

from .settings import quoted_json

#: ModelConfig fields an expectation names: what the rule decides but the vocabulary (the corpus's,
#: compared with its meta.json by every scorer) and a scheme's options. The options are the
#: training's params (a retuned variant retrains, and its evaluations follow the new model), and
#: the tables compare them with each result's model (lenex.records.provenance.check_result_models): in
#: `--expect` they would rewrite every evaluation command of a retuned variant
#: (tests/test_lex_workflow.py).
EXPECTED_MODEL_FIELDS = ("n_layer", "d_model", "n_head", "d_ff", "dropout", "position", "position_module", "mask",
                         "train_length")
#: The shape of a model that continued pretraining changed (its L_t, its position table).
SHAPE_FIELDS = ("n_layer", "d_model", "n_head", "d_ff", "position")
#: Where result files lie: what table and figure jobs read, one file per cell or measurement.
RESULT_LAYOUT = re.compile(r"^results/\{preset\}/(eval|resolution)/.*\.json$")


class Identities:
    """What a job is told about its model, from the settings (each paper's models and labels)."""

    def __init__(self, settings):
        self.settings = settings

    # -- labels ---------------------------------------------------------------------------------
    def model_labels(self, preset_name: str, paper: str, variant: str, **more) -> dict:
        """The labels a model of `variant` records (and its evaluations expect): the variant under
        its paper's name for it (`Paper.model_label`: the segmented paper's `model`); `more`: what
        else its path names (a receptive-field model's corpus, a segmented model's run)."""
        return self.settings.paper(paper).labels(preset_name, variant, **more)

    def identity(self, preset_name: str, paper: str, variant: str, **more) -> str:
        """`--identity` of a training, one shell word."""
        return quoted_json(self.model_labels(preset_name, paper, variant, **more))

    # -- expectations of a checkpoint -------------------------------------------------------------
    def expected_model(self, preset_name: str, paper: str, variant: str, train_seed: int,
                       fields=EXPECTED_MODEL_FIELDS, **more) -> dict:
        """What the checkpoint of `variant` at a preset must record: its labels, the seed it trained
        with (`train_seed`, its train config's) and the model fields the rule trains it with."""
        config = self.settings.model_config(preset_name, paper, variant)
        return {**self.model_labels(preset_name, paper, variant, **more), "seed": int(train_seed),
                **{k: config[k] for k in fields if k in config}}

    def expect(self, preset_name: str, paper: str, variant: str, seed, **more) -> str:
        """`--expect` of a job that reads the model of `variant`, seed s (1..n: the path's seed<s>),
        one shell word; it trained with its paper's train config for seed s (`Paper.train_config`)."""
        train_seed = self.settings.paper(paper).train_config(self.settings, preset_name, variant, seed)["seed"]
        return quoted_json(self.expected_model(preset_name, paper, variant, train_seed, **more))

    # -- expectations of result files (table and figure jobs) --------------------------------------
    def results_expect(self, preset_name: str, paper: str, rules) -> str:
        """`--expect` of a table or figure job, one shell word: the labels every result it reads
        records (its paper and preset) and the layouts of the result files, the output patterns
        of the workflow's `rules` under results/{preset}/eval/ or resolution/, whose wildcards a
        result's own labels must equal (lenex.records.provenance.check_result_paths)."""
        return quoted_json({"labels": {"paper": paper, "preset": preset_name}, "layouts": result_layouts(rules)})


def result_layouts(rules) -> list[str]:
    """The output patterns of the rules that write result files (evaluations, measurements)."""
    from snakemake.io import strip_wildcard_constraints  # a pattern's {name,regex} -> {name}

    patterns = {strip_wildcard_constraints(str(f)) for rule in rules for f in rule.output}
    return sorted(p for p in patterns if RESULT_LAYOUT.match(p))
