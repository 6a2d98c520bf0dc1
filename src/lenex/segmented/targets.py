"""What the segmented-sequences rules (workflow/rules/segmented.smk) build, as pure functions
of a preset's `segmented` view and the experiment file (config/experiments/segmented.yaml).

Paths (all under results/<preset>/):
  models/segmented/pretrained/<model>.pt   pretrained at L_t (own stand-in) or fetched (HF)
  models/segmented/<model>/ootb.pt         + one epoch of domain adaptation at L_t (Section 4.3)
  models/segmented/<model>/da.pt           + one more epoch at L_t (Table 5)
  models/segmented/<model>/<method>-x<k>.pt  continued from ootb to L_e = k L_t (Section 4.4)
  eval/segmented/<model>/<run>/L<length>.json  Section 4.5 perplexity
"""

from __future__ import annotations

from ..presets import model_config as build_model_config
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


def continued_train_config(view: dict) -> dict:
    return dict(view["experiment"].get("continued", {}))


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


def eval_path(preset: str, model: str, run: str, length: int) -> str:
    return f"results/{preset}/eval/{PAPER}/{model}/{run}/L{length}.json"


def table_results(preset: str, view: dict, experiment: dict, table_key: str) -> list[str]:
    """Every evaluation one table reads. Under the released checkpoints, a model without one (an
    extra scheme's stand-in) is not run: its cells say "not computed"."""
    spec = experiment["tables"][table_key]
    paths = []
    for section in spec["sections"]:
        for row in section["rows"]:
            for multiple in spec["columns"]:
                model = row["variant"]
                if uses_hf(view) and model not in hf_checkpoints(view):
                    continue
                length = round(multiple * base_train_length(view, model))
                paths.append(eval_path(preset, model, run_name(row["method"], multiple), length))
    return sorted(set(paths))


def figure2_results(preset: str, view: dict, experiment: dict) -> list[str]:
    """OOTB perplexity of each figure-2 model at every multiple of its L_t."""
    models = experiment["figures"]["figure2"].get("variants", ["gpt2", "pythia", "bloom"])
    multiples = view["experiment"].get("figure2_multiples", [1, 2, 3, 4, 5])
    return [eval_path(preset, m, "ootb", k * base_train_length(view, m)) for m in models for k in multiples]


def figure3_model(experiment: dict) -> str:
    return experiment["figures"]["figure3"].get("variants", ["pythia"])[0]


def figure3_results(preset: str, view: dict, experiment: dict) -> list[str]:
    """Attention medians of the RoPE model before (OOTB) and after chunk-0.25 to 4 L_t, at 4 L_t."""
    model = figure3_model(experiment)
    length = 4 * base_train_length(view, model)
    return [f"results/{preset}/eval/{PAPER}/{model}/{run}/attention_L{length}.json"
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
