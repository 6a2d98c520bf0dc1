"""The segmented-sequences paper as the workflow sees it (lenex.pipeline.papers.Paper): pretrained
models (own stand-ins, or the released checkpoints), domain adaptation, continued pretraining and
the Section 4.5 evaluation (its own rules, workflow/rules/segmented.smk), its own table renderer
(lenex.segmented.tables), and Figure 3, whose numbers no table has. File lists:
lenex.segmented.targets."""

from __future__ import annotations

from ..config import TrainConfig
from ..pipeline.identities import EXPECTED_MODEL_FIELDS, SHAPE_FIELDS
from ..pipeline.papers import Paper
from ..pipeline.settings import quoted_json
from . import targets

#: The domain corpus every model adapts to, continues on and is evaluated on.
DOMAIN = "arxiv"


class Segmented(Paper):
    name = targets.PAPER
    table_renderer = "lenex.segmented.tables"
    figure_cells = ("figure3",)
    model_label = "model"

    def model_config(self, view: dict, experiment: dict, variant: str) -> dict:
        return targets.model_config(view, experiment, variant)

    def view(self, pipeline, preset: str) -> dict:
        return pipeline.paper_preset(preset, self.name)

    def presets(self, pipeline, released: bool) -> str:
        """The presets whose models are the released checkpoints (fetched), or own stand-ins
        (pretrained), as a wildcard pattern ("-" matches no preset)."""
        names = [p for p in pipeline.preset_names if targets.uses_hf(self.view(pipeline, p)) == released]
        return "|".join(names) or "-"

    def hf_checkpoint(self, pipeline, preset: str, model: str) -> str:
        """The released checkpoint that is `model` at the preset."""
        return targets.hf_checkpoints(self.view(pipeline, preset))[model]

    def domain_data(self, pipeline, preset: str, model: str, meta: bool = False) -> str:
        """The arXiv stand-in's prepared folder in the model's tokenizer (or its meta.json)."""
        view = self.view(pipeline, preset)
        return targets.domain_meta(preset, view, model) if meta else targets.domain_data(preset, view, model)

    def train_seed(self, view: dict, seed) -> int:
        """Seed s's training seed: the pretrained model is one per preset, the seeds are those of
        the runs after it (domain adaptation, continued pretraining)."""
        return targets.continued_train_config(view, int(seed))["seed"]

    def continued_train_config(self, pipeline, preset: str, seed) -> dict:
        """Domain adaptation's and continued pretraining's training for seed s (targets.continued_train_config)."""
        return targets.continued_train_config(self.view(pipeline, preset), int(seed))

    def epoch_tokens(self, pipeline, preset: str) -> int:
        """Tokens of one epoch of adaptation or continued pretraining (0: the whole train split)."""
        return self.view(pipeline, preset)["experiment"].get("epoch_tokens") or 0

    def identity(self, pipeline, preset: str, model: str, run: str) -> str:
        """`--identity` of a training of `model` (run `pretrained`, `ootb`, `da` or a continued one)."""
        return pipeline.identity(preset, self.name, model, run=run)

    def expect(self, pipeline, preset: str, model: str, run: str, seed) -> str:
        """`--expect` of a job reading the checkpoint of `model` after `run` (seed s): its labels and seed,
        and the model it was built as (the whole config when pretrained here; the shape, scheme
        included, once adaptation or continued pretraining changed its L_t). A released
        checkpoint records no identity: nothing is expected of it but what it is, by name."""
        released = targets.uses_hf(self.view(pipeline, preset))
        if run == "pretrained" and released:
            return quoted_json({})
        view = self.view(pipeline, preset)  # the pretrained model is one per preset, the runs after it per seed
        train_seed = view["train"].get("seed", TrainConfig().seed) if run == "pretrained" else self.train_seed(view, seed)
        fields = () if released else EXPECTED_MODEL_FIELDS if run == "pretrained" else SHAPE_FIELDS
        return quoted_json(pipeline.expected_model(preset, self.name, model, train_seed, fields, run=run))

    def init_run(self, run: str) -> str:
        """The run whose checkpoint a training of `run` starts from."""
        return "pretrained" if run == "ootb" else "ootb"

    def evaluation_options(self, pipeline, preset: str) -> str:
        view = self.view(pipeline, preset)
        return f"--max-tokens {view['eval']['max_tokens']} --batch-tokens {view['eval']['batch_tokens']}"

    def evaluation_extra(self, pipeline, preset: str, model: str, run: str, seed) -> dict:
        """What every Section 4.5 result records besides its measurement."""
        return {"model": model, "run": run, "seed": int(seed),
                "base_train_length": targets.base_train_length(self.view(pipeline, preset), model),
                "paper": self.name, "preset": preset}

    def attention_options(self, pipeline, preset: str, model: str) -> str:
        """Figure 3's statistic: queries past the model's L_t, over at most `attention_pieces` pieces."""
        view = self.view(pipeline, preset)
        return (f"--train-length {targets.base_train_length(view, model)}"
                f" --max-pieces {view['experiment'].get('attention_pieces', 4)}")

    def domain_meta(self, pipeline, preset: str) -> str:
        """The domain corpus's meta.json as prepared (GPT-2 tokens): what the headers describe."""
        return pipeline.data_files(preset, DOMAIN)[-1]

    def produced_references(self, pipeline) -> set[str]:
        """Figure 3's numbers (its cells file's `values`)."""
        return {f"f3/{name}" for name in targets.FIGURE3_VALUES.values()}

    def table_recorded(self, pipeline, preset: str, table: str) -> dict[str, list[str]]:
        view, experiment = pipeline.paper_preset(preset, self.name), pipeline.experiment(self.name)
        return {"results": targets.table_results(preset, view, experiment, f"table{table}"),
                "metas": [self.domain_meta(pipeline, preset)]}

    def figure_recorded(self, pipeline, preset: str, figure: str) -> list[str]:
        lister = {"2": targets.figure2_results, "3": targets.figure3_results}
        return lister[figure](preset, pipeline.paper_preset(preset, self.name), pipeline.experiment(self.name))

    def header_recorded(self, pipeline, preset: str) -> list[str]:
        return [self.domain_meta(pipeline, preset)]

    def hf_flag(self, pipeline, preset: str) -> str:
        """--hf where the preset's models are the released checkpoints."""
        return "--hf" if targets.uses_hf(self.view(pipeline, preset)) else ""

    def table_arguments(self, pipeline, preset: str, table: str) -> str:
        view = pipeline.paper_preset(preset, self.name)
        models = quoted_json(targets.describe_models(view, pipeline.experiment(self.name)))
        results = self.table_recorded(pipeline, preset, table)["results"]
        return (f"--results {' '.join(results)} --preset-file {pipeline.preset_file(preset)} --models {models}"
                f" --corpora {quoted_json(pipeline.corpora(preset))}"
                f" --metas {self.domain_meta(pipeline, preset)} {self.hf_flag(pipeline, preset)}")


PAPER = Segmented()
