"""The segmented-sequences paper as the workflow sees it (lenex.pipeline.papers.Paper): pretrained
models (own stand-ins, or the released checkpoints), domain adaptation, continued pretraining and
the Section 4.5 evaluation (its own rules, workflow/rules/segmented.smk), its own table renderer
(lenex.segmented.tables), and Figure 3, whose numbers no table has. File lists:
lenex.segmented.targets."""

from __future__ import annotations

from ..config import TrainConfig
from ..pipeline.identities import EXPECTED_MODEL_FIELDS, SHAPE_FIELDS
from ..pipeline.papers import PAPERS, Paper
from ..pipeline.specs import ModelSpec
from ..pipeline.settings import quoted_json
from . import targets

#: The domain corpus every model adapts to, continues on and is evaluated on.
DOMAIN = "arxiv"
#: The trainer of domain adaptation and continued pretraining (a checkpoint continued on segments).
CONTINUED = "lenex.segmented.continued"


class Segmented(Paper):
    name = targets.PAPER
    table_renderer = "lenex.segmented.tables"
    figure_cells = ("figure3",)
    model_label = "model"
    models_per_corpus = False  # one corpus: a claim's models (what more seeds train) are its models
    model_paths = (r"pretrained/(?P<model>[^/]+)|(?P<adapted>[^/]+)/seed(?P<seed>\d+)/"
                   r"(?P<run>ootb|da|(?P<method>full|chunk-[0-9.]+|prefix-[0-9.]+)-x(?P<beta>\d+))")
    model_paths_words = "pretrained/<model>.pt or <model>/seed<s>/<run>.pt (run: ootb, da, <method>-x<beta>)"

    def paper_only_table(self, spec: dict, paper_df) -> dict:
        from .tables import build_segmented_table

        return build_segmented_table(spec, [], paper_df, {"scale_statement": "paper only", "lines": [], "stand_in": None})

    def model_config(self, view: dict, experiment: dict, variant: str) -> dict:
        return targets.model_config(view, experiment, variant)

    def view(self, settings, preset: str) -> dict:
        return settings.paper_preset(preset, self.name)

    def presets(self, settings, released: bool) -> str:
        """The presets whose models are the released checkpoints (fetched), or own stand-ins
        (pretrained), as a wildcard pattern ("-" matches no preset)."""
        names = [p for p in settings.preset_names if targets.uses_hf(self.view(settings, p)) == released]
        return "|".join(names) or "-"

    def hf_checkpoint(self, settings, preset: str, model: str) -> str:
        """The released checkpoint that is `model` at the preset."""
        return targets.hf_checkpoints(self.view(settings, preset))[model]

    def domain_data(self, settings, preset: str, model: str, meta: bool = False) -> str:
        """The arXiv stand-in's prepared folder in the model's tokenizer (or its meta.json)."""
        view = self.view(settings, preset)
        return targets.domain_meta(preset, view, model) if meta else targets.domain_data(preset, view, model)

    def adapted_from(self, preset: str, model: str, run: str, seed) -> str:
        """The checkpoint a domain adaptation starts from: the pretrained model (`ootb`, one per
        preset), or seed s's OOTB checkpoint (`da`, one more epoch)."""
        if run == "ootb":
            return f"results/{preset}/models/{self.name}/pretrained/{model}.pt"
        return f"results/{preset}/models/{self.name}/{model}/seed{seed}/ootb.pt"

    def train_seed(self, view: dict, seed) -> int:
        """Seed s's training seed: the pretrained model is one per preset, the seeds are those of
        the runs after it (domain adaptation, continued pretraining)."""
        return targets.continued_train_config(view, int(seed))["seed"]

    def continued_train_config(self, settings, preset: str, seed) -> dict:
        """Domain adaptation's and continued pretraining's training for seed s (targets.continued_train_config)."""
        return targets.continued_train_config(self.view(settings, preset), int(seed))

    def expect(self, identities, preset: str, model: str, run: str, seed) -> str:
        """`--expect` of a job reading the checkpoint of `model` after `run` (seed s), one shell word."""
        settings = identities.settings
        return quoted_json(self.expected_of(self.view(settings, preset), settings.experiment(self.name), model, run, seed))

    def expected_of(self, view: dict, experiment: dict, model: str, run: str, seed) -> dict:
        """What the checkpoint of `model` after `run` (seed s) must record: its labels and seed,
        and the model it was built as (the whole config when pretrained here; the shape, scheme
        included, once adaptation or continued pretraining changed its L_t). A released
        checkpoint records no identity: nothing is expected of it but what it is, by name."""
        released = targets.uses_hf(view)
        if run == "pretrained" and released:
            return {}
        train_seed = view["train"].get("seed", TrainConfig().seed) if run == "pretrained" else self.train_seed(view, seed)
        fields = () if released else EXPECTED_MODEL_FIELDS if run == "pretrained" else SHAPE_FIELDS
        config = self.model_config(view, experiment, model)
        return {**self.labels(view["name"], model, run=run), "seed": int(train_seed),
                **{k: config[k] for k in fields if k in config}}

    def fetched_models(self, settings, preset: str) -> str | None:
        """At a preset of released checkpoints the pretrained models are fetched (segmented_fetch_hf)."""
        return "pretrained/" if targets.uses_hf(self.view(settings, preset)) else None

    def trains_from_scratch(self, path: str) -> bool:
        """Only the own stand-ins (pretrained/<model>) train from scratch; every run after them continues one."""
        return path.startswith("pretrained/")

    def model_spec(self, view: dict, experiment: dict, path: str):
        """`pretrained/<model>`: an own stand-in trained once per preset at its L_t on the paper's
        training corpus (at a preset of released checkpoints, rule segmented_fetch_hf makes it
        instead: `fetched_models`); `<model>/seed<s>/<run>`: seed s's domain adaptation (`ootb`,
        `da`: one epoch, `full` at L_t) or continued pretraining (`<method>-x<beta>`: `method` at
        beta x L_t) on the domain corpus, from the checkpoint it continues (`adapted_from`), which
        must be what `expected_of` says."""
        import dataclasses

        from ..pipeline.specs import Continuation, path_fields

        found = path_fields(self.model_paths, path, self.name, self.model_paths_words)
        preset = view["name"]
        output, workdir = f"results/{preset}/models/{self.name}/{path}.pt", f"results/{preset}/train/{self.name}/{path}"
        if found["model"] is not None:
            model = found["model"]
            spec = self.variant_spec(view, experiment, model, 1, path)
            return dataclasses.replace(spec, seed=None, output=output, workdir=workdir, train=view["train"],
                                       labels=self.labels(preset, model, run="pretrained"), run="pretrained")
        model, seed, run = found["adapted"], found["seed"], found["run"]
        self.check_variant(experiment, model)
        method, extend_by = (found["method"], int(found["beta"])) if found["method"] else ("full", 1)
        continued = Continuation(init=self.adapted_from(preset, model, run, seed), method=method, extend_by=extend_by,
                                 epoch_tokens=view["experiment"].get("epoch_tokens") or 0,
                                 expect=self.expected_of(view, experiment, model, self.init_run(run), seed),
                                 module=CONTINUED)
        return ModelSpec(paper=self.name, preset=preset, variant=model, seed=seed, corpus=DOMAIN,
                         data=targets.domain_data(preset, view, model), output=output, workdir=workdir,
                         labels=self.labels(preset, model, run=run), train=targets.continued_train_config(view, int(seed)),
                         continued=continued, data_inputs=(targets.domain_meta(preset, view, model),), run=run)

    def init_run(self, run: str) -> str:
        """The run whose checkpoint a training of `run` starts from."""
        return "pretrained" if run == "ootb" else "ootb"

    def evaluation_options(self, settings, preset: str) -> str:
        view = self.view(settings, preset)
        return f"--max-tokens {view['eval']['max_tokens']} --batch-tokens {view['eval']['batch_tokens']}"

    def evaluation_extra(self, settings, preset: str, model: str, run: str, seed) -> dict:
        """What every Section 4.5 result records besides its measurement."""
        return {"model": model, "run": run, "seed": int(seed),
                "base_train_length": targets.base_train_length(self.view(settings, preset), model),
                "paper": self.name, "preset": preset}

    def attention_options(self, settings, preset: str, model: str) -> str:
        """Figure 3's statistic: queries past the model's L_t, over at most `attention_pieces` pieces."""
        view = self.view(settings, preset)
        return (f"--train-length {targets.base_train_length(view, model)}"
                f" --max-pieces {view['experiment'].get('attention_pieces', 4)}")

    def domain_meta(self, paths, preset: str) -> str:
        """The domain corpus's meta.json as prepared (GPT-2 tokens): what the headers describe."""
        return paths.data_files(preset, DOMAIN)[-1]

    def produced_references(self, settings) -> set[str]:
        """Figure 3's numbers (its cells file's `values`)."""
        return {f"f3/{name}" for name in targets.FIGURE3_VALUES.values()}

    def table_recorded(self, paths, preset: str, table: str) -> dict[str, list[str]]:
        view, experiment = self.view(paths.settings, preset), paths.settings.experiment(self.name)
        return {"results": targets.table_results(preset, view, experiment, f"table{table}"),
                "metas": [self.domain_meta(paths, preset)]}

    def figure_recorded(self, paths, preset: str, figure: str) -> list[str]:
        lister = {"2": targets.figure2_results, "3": targets.figure3_results}
        return lister[figure](preset, self.view(paths.settings, preset), paths.settings.experiment(self.name))

    def header_recorded(self, paths, preset: str) -> list[str]:
        return [self.domain_meta(paths, preset)]

    def hf_flag(self, settings, preset: str) -> str:
        """--hf where the preset's models are the released checkpoints."""
        return "--hf" if targets.uses_hf(self.view(settings, preset)) else ""

    def table_arguments(self, paths, preset: str, table: str) -> str:
        settings = paths.settings
        models = quoted_json(targets.describe_models(self.view(settings, preset), settings.experiment(self.name)))
        results = self.table_recorded(paths, preset, table)["results"]
        return (f"--results {' '.join(results)} --preset-file {settings.preset_file(preset)} --models {models}"
                f" --corpora {quoted_json(paths.corpora(preset))}"
                f" --metas {self.domain_meta(paths, preset)} {self.hf_flag(settings, preset)}")


PAPER = PAPERS.register(Segmented())
