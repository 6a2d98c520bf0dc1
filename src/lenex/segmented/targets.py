"""What the segmented-sequences rules (workflow/rules/segmented.smk) build, as pure functions
of a preset's `segmented` view and the experiment file (config/experiments/segmented.yaml).

Seeds: the pretrained model (the costly parent) is one per preset; everything after it, the
domain adaptation and every continued run, is trained with seeds 1..n (the preset's
`papers.segmented.experiment.seeds`, or a power rerun's `power_seeds` of the model:
lenex.experiment.presets.seed_list), seed s drawing its epoch's pieces,
their order and its segments with the continued training's seed + s - 1 (docs/segmented.md: what
the seeds cover, and what not). A table cell is the mean over seeds; the figures draw seed 1.

Paths (all under results/<preset>/):
  models/segmented/pretrained/<model>.pt   pretrained at L_t (own stand-in) or fetched (HF)
  models/segmented/<model>/seed<s>/ootb.pt         + one epoch of domain adaptation at L_t (Section 4.3)
  models/segmented/<model>/seed<s>/da.pt           + one more epoch at L_t (Table 5)
  models/segmented/<model>/seed<s>/<method>-x<k>.pt  continued from that seed's ootb to L_e = k L_t (Section 4.4)
  eval/segmented/<model>/seed<s>/<run>/L<length>.json  Section 4.5 perplexity
"""

from __future__ import annotations

from ..experiment.presets import model_config as build_model_config
from ..experiment.presets import check_power_variants, seed_list, train_seed
from .tables import run_name

PAPER = "segmented"
#: Figure 3's numbers, as its cells file records them (`values`, the claims' f3/<name>): the mean
#: median attention weight x keys past L_t before (OOTB) and after segmented training.
FIGURE3_VALUES = {"before": "before_mean_median", "after": "after_mean_median"}
GPT2_TOKENIZER_PREFIXES = ("gpt2", "openai-community/gpt2")


def hf_checkpoints(view: dict) -> dict:
    return view.get("experiment", {}).get("hf_checkpoints") or {}


def uses_hf(view: dict) -> bool:
    return bool(hf_checkpoints(view))


def base_train_length(view: dict, model: str) -> int:
    """The model's L_t: the preset's, unless `experiment.train_lengths` names the model."""
    return int(view.get("experiment", {}).get("train_lengths", {}).get(model, view["model"]["train_length"]))


def model_config(view: dict, experiment: dict, model: str) -> dict:
    """ModelConfig fields of an own stand-in: the preset's model (or `large_model` for the
    paper's 1.x-billion models), the variant's position scheme, the model's L_t."""
    if model not in experiment["variants"]:
        raise ValueError(f"unknown model {model!r} for paper segmented; known: {', '.join(experiment['variants'])}")
    return build_model_config(view, model, experiment["variants"][model], train_length=base_train_length(view, model))


def continued_train_config(view: dict, seed: int = 1) -> dict:
    """TrainConfig fields (and warmup_fraction) of domain adaptation and continued pretraining for
    seed s: `experiment.continued` with its seed (default 1) + s - 1."""
    config = dict(view["experiment"].get("continued", {}))
    return {**config, "seed": train_seed(config.get("seed", 1), seed)}


def needs_retokenizing(view: dict, model: str) -> bool:
    name = hf_checkpoints(view).get(model)
    return name is not None and not name.startswith(GPT2_TOKENIZER_PREFIXES)


def domain_data(preset: str, view: dict, model: str) -> str:
    """The arXiv stand-in's prepared folder for this model (its own tokenizer's copy for HF
    models whose tokenizer is not GPT-2's)."""
    if needs_retokenizing(view, model):
        return f"results/{preset}/data/segmented/arxiv-{model}"
    return f"results/{preset}/data/arxiv"


def domain_meta(preset: str, view: dict, model: str) -> str:
    return f"{domain_data(preset, view, model)}/meta.json"


def eval_path(preset: str, model: str, run: str, length: int, seed: int) -> str:
    return f"results/{preset}/eval/{PAPER}/{model}/seed{seed}/{run}/L{length}.json"


def table_results(preset: str, view: dict, experiment: dict, table_key: str) -> list[str]:
    """Every evaluation one table reads, of every seed. Under the released checkpoints, a model
    without one (an extra scheme's stand-in) is not run: its cells say "not computed"."""
    spec = experiment["tables"][table_key]
    paths = []
    for section in spec["sections"]:
        for row in section["rows"]:
            for multiple in spec["columns"]:
                model = row["variant"]
                if uses_hf(view) and model not in hf_checkpoints(view):
                    continue
                length = round(multiple * base_train_length(view, model))
                paths += [eval_path(preset, model, run_name(row["method"], multiple), length, seed)
                          for seed in model_seeds(view, experiment, model)]
    return sorted(set(paths))


def model_seeds(view: dict, experiment: dict, model: str) -> list[int]:
    """The seeds of one model's runs after its pretrained parent (its domain adaptation and every
    continued run): the paper's `experiment.seeds`, or a power rerun's `power_seeds` of the model,
    which then gives every run of that model the seeds (a seed's runs continue from its own
    domain-adapted model, so they go together)."""
    check_power_variants(view, experiment["variants"], PAPER)
    return seed_list(view, model)


def figure2_results(preset: str, view: dict, experiment: dict) -> list[str]:
    """OOTB perplexity of each figure-2 model at every multiple of its L_t (seed 1)."""
    models = experiment["figures"]["figure2"].get("variants", ["gpt2", "pythia", "bloom"])
    multiples = view["experiment"].get("figure2_multiples", [1, 2, 3, 4, 5])
    return [eval_path(preset, m, "ootb", k * base_train_length(view, m), 1) for m in models for k in multiples]


def figure3_model(experiment: dict) -> str:
    return experiment["figures"]["figure3"].get("variants", ["pythia"])[0]


def figure3_results(preset: str, view: dict, experiment: dict) -> list[str]:
    """Attention medians of the RoPE model before (OOTB) and after chunk-0.25 to 4 L_t, at 4 L_t (seed 1)."""
    model = figure3_model(experiment)
    length = 4 * base_train_length(view, model)
    return [f"results/{preset}/eval/{PAPER}/{model}/seed1/{run}/attention_L{length}.json"
            for run in ("ootb", "chunk-0.25-x4")]


def describe_models(view: dict, experiment: dict) -> dict[str, str]:
    """model -> what stands in for it, for table headers."""
    out = {}
    for model, variant in experiment["variants"].items():
        if uses_hf(view) and model not in hf_checkpoints(view):
            out[model] = f"no released checkpoint (an extra scheme, `{variant['position']}`): not run at this preset"
            continue
        if uses_hf(view):
            out[model] = f"Hugging Face `{hf_checkpoints(view)[model]}`, L_t {base_train_length(view, model)}"
            continue
        cfg = model_config(view, experiment, model)
        out[model] = (f"own {cfg['n_layer']} layers x {cfg['d_model']} ({variant['position']}), "
                      f"L_t {cfg['train_length']}, pretrained {view['train']['steps']} steps x "
                      f"{view['train']['batch_size']} sequences on `{experiment['train_corpus']}`")
    return out
