"""The receptive-field paper as the workflow sees it (lenex.pipeline.papers.Paper): one model per
corpus, variant and seed (its own rules, workflow/rules/receptive_field.smk), the last-token
protocol, ERF and cache window per model, its own table renderer (lenex.receptive_field.table).
Scale rules and file lists: lenex.receptive_field.targets."""

from __future__ import annotations

from ..pipeline.papers import PAPERS, Paper
from ..pipeline.settings import quoted_json
from . import PAPER_KEY, targets


class ReceptiveField(Paper):
    name = PAPER_KEY
    table_renderer = "lenex.receptive_field.table"
    protocol = "last-token"  # lenex.receptive_field.last_token
    model_paths = r"(?P<corpus>[^/]+)/(?P<variant>[^/]+)/seed(?P<seed>\d+)"
    model_paths_words = "<corpus>/<variant>/seed<s>.pt"
    # Figures whose numbers its claims read: the ERFs of Figures 6, 7 and 11 (listed under no table),
    # Eq. (6)'s exact values of Figures 8 and 10.
    figure_cells = ("figure6", "figure7", "figure8", "figure10", "figure11")

    def variant_view(self, view: dict, experiment: dict, variant: str) -> dict:
        """The preset as the variant's budget group sees it (targets.variant_view)."""
        return targets.variant_view(view, experiment, variant)

    def model_config(self, view: dict, experiment: dict, variant: str) -> dict:
        return targets.model_config(variant, experiment, self.variant_view(view, experiment, variant))

    def seeds(self, view: dict, experiment: dict, variant: str) -> list[int]:
        """The variant's budget group's seeds (targets.variant_seeds)."""
        return targets.variant_seeds(view, experiment, variant)

    def view(self, settings, preset: str, variant: str) -> dict:
        """The preset as one variant's budget group sees it."""
        return self.variant_view(settings.paper_preset(preset, self.name), settings.experiment(self.name), variant)

    def train_fields(self, view: dict, experiment: dict, variant: str, seed) -> dict:
        """The variant's budget group's training with seed s's training seed (the paper's `train.seed`
        + s - 1, Paper.train_seed)."""
        return {**self.variant_view(view, experiment, variant)["train"], "seed": self.train_seed(view, seed)}

    def model_spec(self, view: dict, experiment: dict, path: str):
        """One model per corpus, variant and seed: `<corpus>/<variant>/seed<s>`, trained on that
        corpus (the paper trains on each dataset separately), its checkpoint labelled with it."""
        import dataclasses

        from ..pipeline.specs import path_fields

        found = path_fields(self.model_paths, path, self.name, self.model_paths_words)
        corpus, variant, seed = found["corpus"], found["variant"], found["seed"]
        spec = self.variant_spec(view, experiment, variant, seed, path)
        return dataclasses.replace(spec, corpus=corpus, labels=self.labels(view["name"], variant, corpus=corpus))

    def multiples(self, settings, protocol: str) -> str:
        """The L_ex / L_tr a model is scored at by `protocol` (last-token or cache-window), one word each."""
        lister = {"last-token": targets.last_token_multiples, "cache-window": targets.cache_multiples}[protocol]
        return " ".join(str(m) for m in lister(settings.experiment(self.name)))

    def erf_options(self, settings, preset: str, variant: str, out: str) -> str:
        """Section 5.1's measurement beside the last-token protocol: c_m and the ERF when
        predicting the (4 x L_tr)-th token."""
        segments = self.view(settings, preset, variant)["experiment"]["erf_segments"]
        return f"--erf-out {out} --erf-multiple {targets.ERF_MULTIPLE} --erf-segments {segments}"

    def window_option(self) -> str:
        """Appendix B's cache window, w-bar = 4 x L_tr."""
        return f"--window-multiple {targets.CACHE_WINDOW_MULTIPLE} "

    def timing_option(self, settings, preset: str) -> str:
        return f"--timing-tokens {settings.paper_preset(preset, self.name)['experiment']['cache_timing_tokens']}"

    def figure_kind(self, settings, figure: str) -> str:
        """`erf` for a figure of models' c_m (it names variants), else the analytic figure's own name."""
        return "erf" if settings.experiment(self.name)["figures"][f"figure{figure}"].get("variants") else f"figure{figure}"

    def produced_references(self, settings) -> set[str]:
        return targets.produced_references(settings.experiment(self.name))

    def table_recorded(self, paths, preset: str, table: str) -> dict[str, list[str]]:
        """Its evaluations, the ERFs listed under it, the metas of its corpora."""
        settings = paths.settings
        spec = settings.table_spec(self.name, table)
        skip = paths.corpus_skip(preset)
        view, experiment = settings.paper_preset(preset, self.name), settings.experiment(self.name)
        return {"results": targets.table_results(preset, spec, view, experiment, skip),
                "erf": targets.table_erf_results(preset, spec, view, experiment, skip),
                "metas": paths.corpus_metas(preset, targets.table_corpora(spec, skip))}

    def figure_recorded(self, paths, preset: str, figure: str) -> list[str]:
        return targets.figure_results(preset, paths.settings.experiment(self.name)["figures"][f"figure{figure}"])

    def table_inputs(self, paths, preset: str, table: str) -> dict[str, str]:
        return {"preset_file": paths.settings.preset_file(preset)}

    def table_arguments(self, paths, preset: str, table: str) -> str:
        settings = paths.settings
        recorded = self.table_recorded(paths, preset, table)
        unavailable = targets.table_unavailable(settings.table_spec(self.name, table), paths.corpus_skip(preset))
        return (f"--preset-file {settings.preset_file(preset)} --results {' '.join(recorded['results'])}"
                f" --erf {' '.join(recorded['erf'])} --metas {' '.join(recorded['metas'])}"
                f" --corpora {quoted_json(paths.corpora(preset))} --unavailable {quoted_json(unavailable)}")


PAPER = PAPERS.register(ReceptiveField())
