"""Which models, evaluations and seeds the receptive-field paper needs, as pure functions of
an experiment definition and a preset (the Snakemake rules and the tests both call these).

Scale rules (the paper: R = 12 layers, L_tr = 512, its Table 7):
- windowed attention: the trained window w keeps the paper's ratio TRF / L_tr = w·R / L_tr,
  so w = w_paper · 12/512 · L_tr / R (rounded to a whole token);
- evaluation lengths, the ERF length (4 × L_tr: the paper predicts the 2048-th token) and the
  cache window (w̄ = 4 × L_tr: 2048) are multiples of L_tr, as in the paper;
- a variant may train at a multiple of the preset's L_tr (Table 2: 4× and 2×; Figure 7: ¼×).

Seeds: every table (and the ERF rows under it) reads seeds 1..n of each of its models, n from the
model's budget group (`variant_seeds`: the paper-level `experiment.seeds` for the slope and
window models, a group's own `experiment.seeds` for its models, e.g. Table 3's `seeds`); a
table whose spec says `seeds: first` reads seed 1 only. The c_m figures draw seed 1.
"""

from __future__ import annotations

from ..experiment.presets import check_power_variants, eval_length, group_view, power_variants, seed_list
from ..experiment.presets import model_config as build_model_config

PAPER_LAYERS = 12
PAPER_TRAIN_LENGTH = 512
#: Figures 4-7 and 11-13 show c_m when predicting the 2048-th token with L_tr = 512.
ERF_MULTIPLE = 4
#: Appendix B: cache window w̄ = 2048 = 4 × L_tr.
CACHE_WINDOW_MULTIPLE = 4
PAPER = "receptive-field"
#: Table 5's cache-window checks, as its cells file records them (`extra.cache_window`, the claims'
#: t<N>/check/<name>): the largest |Δ NLL| against the sliding mask, the least speed-up, the models.
CACHE_CHECKS = ("max_abs_diff_vs_sliding_mask", "min_speedup", "n_models")
#: Figures 8-10's exact numbers from Eq. (6), as their cells files record them (the claims' f<N>/<name>;
#: lenex.receptive_field.figures.exact_figure_cells).
EXACT_FIGURE_VALUES = {"8": ("bias_at_0", "bias_at_ltr", "bias_at_far"), "9": ("fit_slope", "fit_intercept"),
                       "10": tuple(f"window_drop_dbar{d}" for d in (32, 64, 128, 256, 512))}


def scaled_window(paper_window: int, n_layer: int, train_length: int) -> int:
    """The window with w·R/L_tr equal to the paper's w_paper·12/512, as a whole number of tokens."""
    if paper_window < 1 or n_layer < 1 or train_length < 1:
        raise ValueError(f"window, layers and L_tr must be positive, got {paper_window}, {n_layer}, {train_length}")
    exact = paper_window * PAPER_LAYERS * train_length / (PAPER_TRAIN_LENGTH * n_layer)
    return max(1, round(exact))


def variant_train_length(variant: dict, base_train_length: int) -> int:
    length = variant.get("train_length_multiple", 1) * base_train_length
    if length != int(length) or length < 4:
        raise ValueError(f"train_length_multiple {variant.get('train_length_multiple')} x L_tr = "
                         f"{length} is not a whole number of at least 4 tokens")
    return int(length)


def model_config(variant_name: str, experiment: dict, preset_view: dict) -> dict:
    """ModelConfig fields of one variant at one preset (the preset as its budget group sees it,
    `variant_view`), by lenex.experiment.presets.model_config. The window is scaled with the preset's base
    L_tr and layers, not with a variant's longer L_tr: Table 2 keeps w = 160 and lengthens L_tr
    to cover its receptive field."""
    variants = experiment["variants"]
    if variant_name not in variants:
        raise ValueError(f"unknown variant {variant_name!r} of {PAPER}; known: {', '.join(variants)}")
    variant = variants[variant_name]
    model = preset_view["model"]
    mask_options = dict(variant.get("mask_options") or {})
    if "paper_window" in variant:
        mask_options["window"] = scaled_window(variant["paper_window"], model["n_layer"], model["train_length"])
    return build_model_config(preset_view, variant_name, variant,
                              position_options=dict(variant.get("position_options") or {}),
                              mask=variant.get("mask", "causal"), mask_options=mask_options,
                              train_length=variant_train_length(variant, model["train_length"]))


def variant_view(preset_view: dict, experiment: dict, variant_name: str) -> dict:
    """The preset as one variant's budget group sees it (lenex.experiment.presets.group_view): Tables 1, 2 and
    4 need depth so that every scaled window binds, Table 3's seeds need numbers, not depth. A
    group the preset sizes that no variant names is an error (a typo would silently do nothing)."""
    variants = experiment["variants"]
    if variant_name not in variants:
        raise ValueError(f"unknown variant {variant_name!r} of {PAPER}; known: {', '.join(variants)}")
    sized = set(((preset_view.get("experiment") or {}).get("groups") or {}))
    named = {v.get("group") for v in variants.values()} - {None}
    if sized - named:
        raise ValueError(f"preset {preset_view.get('name')!r}: experiment.groups.{sorted(sized - named)[0]} "
                         f"is named by no {PAPER} variant; groups named: {', '.join(sorted(named)) or 'none'}")
    return group_view(preset_view, variants[variant_name].get("group"))


def variant_seeds(preset_view: dict, experiment: dict, variant_name: str, corpus: str | None = None) -> list[int]:
    """Seeds 1..n of one variant's models: its budget group's `experiment.seeds` (the paper's
    where the group sets none), or on `corpus` a power rerun's `power_seeds` of `<corpus>/<variant>`
    (every corpus trains its own models, so a power rerun names the corpus too)."""
    check_power_models(preset_view, experiment)
    view = variant_view(preset_view, experiment, variant_name)
    return seed_list(view, f"{corpus}/{variant_name}") if corpus else seed_list(view)


def check_power_models(preset_view: dict, experiment: dict) -> None:
    """Each key of `experiment.power_seeds` is `<corpus>/<variant>` of a variant of the paper."""
    keys = power_variants(preset_view)
    bare = [key for key in keys if "/" not in key]
    if bare:
        raise ValueError(f"preset {preset_view.get('name')!r}: experiment.power_seeds names {bare[0]!r}; a "
                         f"{PAPER} model is <corpus>/<variant> (each corpus trains its own)")
    check_power_variants(preset_view, experiment["variants"], PAPER, [key.rpartition("/")[2] for key in keys])


def table_seeds(spec: dict, preset_view: dict, experiment: dict, variant_name: str,
                corpus: str | None = None) -> list[int]:
    """The seeds of one row's model a table reads: every seed, or seed 1 (`seeds: first`)."""
    if spec.get("seeds") == "first":
        return [1]
    return variant_seeds(preset_view, experiment, variant_name, corpus)


def eval_dir(preset: str, corpus: str, variant: str, seed: int) -> str:
    return f"results/{preset}/eval/{PAPER}/{corpus}/{variant}/seed{seed}"


def _result_name(spec: dict) -> str:
    return "cache_window.json" if spec.get("protocol") == "cache-window" else "last_token.json"


def table_models(spec: dict, preset_view: dict, experiment: dict,
                 skip_corpus=lambda corpus: False) -> list[tuple[str, str, int]]:
    """(corpus, variant, seed) of every model one table reads: sections x rows x seeds."""
    models = set()
    for section in spec["sections"]:
        corpus = section["corpus"]
        if corpus is None or skip_corpus(corpus):
            continue
        for row in section["rows"]:
            for seed in table_seeds(spec, preset_view, experiment, row["variant"], corpus):
                models.add((corpus, row["variant"], seed))
    return sorted(models)


def table_results(preset: str, spec: dict, preset_view: dict, experiment: dict,
                  skip_corpus=lambda corpus: False) -> list[str]:
    """Every evaluation file one table reads: sections x rows x seeds."""
    return sorted(f"{eval_dir(preset, *model)}/{_result_name(spec)}"
                  for model in table_models(spec, preset_view, experiment, skip_corpus))


def last_token_multiples(experiment: dict) -> list[float]:
    """The L_ex / L_tr a model is scored at: every column of the last-token tables."""
    found = set()
    for spec in experiment["tables"].values():
        if spec.get("protocol", "last-token") == "last-token":
            found.update(spec["columns"])
    return sorted(found)


def cache_multiples(experiment: dict) -> list[float]:
    found = set()
    for spec in experiment["tables"].values():
        if spec.get("protocol") == "cache-window":
            found.update(spec["columns"])
    return sorted(found)


def lengths(multiples, train_length: int) -> list[int]:
    return [eval_length(multiple, train_length) for multiple in multiples]


def figure_results(preset: str, figure: dict, kind: str = "erf.json") -> list[str]:
    """The ERF files of the models one c_m figure draws (seed 1)."""
    return [f"{eval_dir(preset, figure['corpus'], v, 1)}/{kind}" for v in figure.get("variants", [])]


def windows_note(experiment: dict, preset_view: dict) -> str:
    """The header line saying how windows were scaled (paper w -> ours)."""
    model = preset_view["model"]
    pairs = sorted({(v["paper_window"], scaled_window(v["paper_window"], model["n_layer"], model["train_length"]))
                    for v in experiment["variants"].values() if "paper_window" in v})
    ratio = f"w·R/L_tr kept at the paper's w·12/512 (R = {model['n_layer']}, L_tr = {model['train_length']})"
    return ratio + ": " + ", ".join(f"w {p} → {o}" for p, o in pairs)


def table_corpora(spec: dict, skip_corpus=lambda corpus: False) -> list[str]:
    return sorted({s["corpus"] for s in spec["sections"] if s["corpus"] and not skip_corpus(s["corpus"])})


def table_unavailable(spec: dict, reason=lambda corpus: None) -> dict:
    """Sections' corpora this machine cannot build, with the reason (for the header)."""
    return {s["corpus"]: reason(s["corpus"]) for s in spec["sections"] if s["corpus"] and reason(s["corpus"])}


def table_erf_results(preset: str, spec: dict, preset_view: dict, experiment: dict,
                      skip_corpus=lambda corpus: False) -> list[str]:
    """The ERF files listed under a table (`erf: true`): every row's model, every seed the table reads."""
    if not spec.get("erf"):
        return []
    return sorted(f"{eval_dir(preset, *model)}/erf.json"
                  for model in table_models(spec, preset_view, experiment, skip_corpus))


def produced_references(experiment: dict) -> set[str]:
    """What the tables produce beyond their cells, as the claims name it: the ERF row of every
    model of a table with `erf: true` (t<N>/erf/<corpus>/<variant>; its TRF and L_tr are read
    through the same row) and the checks of a cache-window table (t<N>/check/<name>)."""
    produced = set()
    for key, spec in experiment["tables"].items():
        table = key.removeprefix("table")
        if spec.get("erf"):
            produced |= {f"t{table}/erf/{s['corpus']}/{row['variant']}" for s in spec["sections"] if s.get("corpus")
                         for row in s["rows"]}
        if spec.get("protocol") == "cache-window":
            produced |= {f"t{table}/check/{name}" for name in CACHE_CHECKS}
    for key, spec in experiment.get("figures", {}).items():  # each figure's own cells file
        figure = key.removeprefix("figure")
        produced |= {f"f{figure}/erf/{spec['corpus']}/{variant}" for variant in spec.get("variants", [])
                     if spec.get("corpus")}
        produced |= {f"f{figure}/{name}" for name in EXACT_FIGURE_VALUES.get(figure, ())}
    return produced
