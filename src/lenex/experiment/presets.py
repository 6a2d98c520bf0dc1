"""Scale presets seen from one paper.

A preset (config/presets/<name>.yaml) gives one scale for every paper: `model`, `train`,
`eval`, `resources`, and `positions`: options laid under every variant's own for the models of a
scheme (the scaled quantities of docs/dimensions.md), each an option of the scheme or the group
a derived option keeps (xPos's L_tr / B, from which its `scale_base` follows at the paper's L_tr;
lenex.experiment.preset_spec). The three papers do not share hyper-parameters (LEX trains 24 x 1024 at
L_tr = 1024; the receptive-field paper 12 x 768 at L_tr = 512), so a preset may carry, under
`papers: {<paper>: {...}}`, what one paper changes; data settings (`data`) are not overridable:
one tokenized corpus serves every paper of a preset. Reading, merging, deriving and typing a
preset is lenex.experiment.preset_spec's, in one pass (`paper_view` here is that view of a preset
file a job reads); this module holds what a paper reads off a view: its budget groups, seeds and
models' configs.
"""

from __future__ import annotations

from ..config import DEFAULT_POSITION
from .preset_spec import deep_merge, derived_view


def paper_view(preset: dict, paper: str) -> dict:
    """The preset as `paper` sees it (lenex.experiment.preset_spec.derived_view): its
    `papers.<paper>` block merged over the shared sections, the options derived from the groups its
    `positions` keep written out at the paper's L_tr. The result has no `papers` key, and `paper`
    set, so a header or a plan built from it says which paper's scale it is."""
    return derived_view(preset, paper)[0]


def shared_view(preset: dict) -> dict:
    """The preset's shared sections as no paper changes them (no `papers`), derived options
    written out at the shared L_tr."""
    return derived_view(preset, None)[0]


def eval_length(multiple, train_length: int) -> int:
    """multiple x L_tr as a whole number of tokens; one clear error where it is not whole."""
    length = multiple * train_length
    if length != int(length):
        raise ValueError(f"{multiple} x L_tr = {length} is not a whole number of tokens")
    return int(length)


def group_view(view: dict, group: str | None) -> dict:
    """A paper's view as one budget group sees it: `experiment.groups.<group>` (model, train,
    experiment sample sizes) laid over the paper's view. No group, or a group the preset does not
    size, is the paper's own budget. A group may not change L_tr: every table of a paper scores
    the same tokens at the same multiples of it."""
    groups = (view.get("experiment") or {}).get("groups") or {}
    if group is None or group not in groups:
        return view
    merged = deep_merge(view, groups[group])
    if merged["model"]["train_length"] != view["model"]["train_length"]:
        raise ValueError(f"preset {view.get('name')!r}: experiment.groups.{group} may not change "
                         f"model.train_length ({view['model']['train_length']} -> {merged['model']['train_length']})")
    return merged


def seed_list(view: dict, variant: str | None = None) -> list[int]:
    """Seeds 1..n of every model a paper's claims compare, n = `experiment.seeds` of the view (a
    paper's, or a budget group's through `group_view`; default 1): each is a separately trained
    model of the same variant, so a cell is the mean over them and comparisons pair by seed. A
    variant named in `experiment.power_seeds` trains seeds 1..its count instead: a power rerun
    (docs/claims.md, "Power"), the seeds a power analysis named for an inconclusive claim's cells."""
    experiment = view.get("experiment") or {}
    count = _seed_count(view, "experiment.seeds", experiment.get("seeds", 1))
    power = experiment.get("power_seeds") or {}
    if variant is not None and variant in power:
        more = _seed_count(view, f"experiment.power_seeds.{variant}", power[variant])
        if more < count:
            raise ValueError(f"preset {view.get('name')!r}: experiment.power_seeds.{variant} = {more} is fewer than "
                             f"experiment.seeds = {count}; a power rerun adds seeds, it never drops any")
        count = more
    return list(range(1, count + 1))


def power_variants(view: dict) -> list[str]:
    """The variants a preset's power reruns add seeds to (`experiment.power_seeds`), sorted."""
    return sorted((view.get("experiment") or {}).get("power_seeds") or {})


def check_power_variants(view: dict, variants, paper: str, names: list[str] | None = None) -> None:
    """A power rerun names only variants the paper trains (a misspelt one would add no seeds);
    `names`: the variants its keys name, where a key holds more than the variant."""
    unknown = [name for name in (power_variants(view) if names is None else names) if name not in variants]
    if unknown:
        raise ValueError(f"preset {view.get('name')!r}: experiment.power_seeds names {unknown[0]!r}, "
                         f"no {paper} variant; variants: {', '.join(sorted(variants))}")


def reference_parts(view: dict) -> dict[str, list[str]]:
    """A paper's recorded parts at a preset: those it declares (`reference_parts`) and, where it
    declares some and has power reruns, the part `power` they imply: `<model>/seed<s>` for each model of
    `experiment.power_seeds` and each seed past `experiment.seeds` (the part the power plan names;
    declared once, here, so its files cannot fall into another part by a selector left out)."""
    parts = dict(view.get("reference_parts") or {})
    power = (view.get("experiment") or {}).get("power_seeds") or {}
    if not power or not parts:
        return parts  # a run recorded whole (no declared parts) holds its extra seeds in its one file
    if "power" in parts:
        raise ValueError(f"preset {view.get('name')!r}: reference part 'power' is implied by experiment.power_seeds; "
                         "do not declare it")
    base = len(seed_list({"name": view.get("name"), "experiment": {"seeds": view["experiment"].get("seeds", 1)}}))
    parts["power"] = [f"{model}/seed{s}" for model in sorted(power) for s in seed_list(view, model) if s > base]
    return parts


def _seed_count(view: dict, where: str, count) -> int:
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ValueError(f"preset {view.get('name')!r}: {where} must be a whole number of at least 1, got {count!r}")
    return count


def train_seed(base_seed: int, seed: int) -> int:
    """The training seed of seed s: the preset's own (`base_seed`) + s - 1, so seed 1 is the run a
    preset without seeds makes."""
    if seed < 1:
        raise ValueError(f"seeds are numbered from 1, got {seed}")
    return int(base_seed) + int(seed) - 1


def variant_tokens(view: dict, variant: dict) -> int:
    """Tokens one variant's models train on: its budget group's steps x batch times the L_tr it
    trains at (a variant may train at a `train_length_multiple` of the paper's, as the
    receptive-field Table 2 and Figure 7 models do)."""
    group = group_view(view, variant.get("group"))
    length = group["model"]["train_length"] * variant.get("train_length_multiple", 1)
    return int(group["train"]["steps"] * group["train"]["batch_size"] * length)


def budget_tokens(view: dict, variants: dict) -> int:
    """Tokens each model of the paper trains on at least (the smallest `variant_tokens`): what a
    claim that names no variants compares with the scale study's budgets, so such a claim is never
    called testable on the strength of a larger model's budget."""
    return min(variant_tokens(view, v) for v in variants.values()) if variants else variant_tokens(view, {})


def variant_model(view: dict, name: str, variant: dict) -> dict:
    """ModelConfig fields of one variant at a preset: its budget group's model, then
    `experiment.large_model` for the variants `experiment.large_variants` names (the segmented
    paper's 1.x-billion models), then the variant's own fields."""
    experiment = view.get("experiment") or {}
    large = experiment.get("large_model", {}) if name in experiment.get("large_variants", []) else {}
    return {**group_view(view, variant.get("group"))["model"], **large, **variant}


#: Variant fields that steer the experiment (budget group, the paper's window, a longer L_tr), not the model.
STEERING_FIELDS = ("group", "paper_window", "train_length_multiple")


def model_config(view: dict, name: str, variant: dict, **derived) -> dict:
    """ModelConfig fields of one variant's model at a preset, the one builder of every paper's
    models: `variant_model` without the variant's steering fields, then what the paper derives
    from them laid over (its L_tr, a window scaled to the preset, an explicit default), then the
    preset's `positions` options for the model's scheme laid under its own (its own win)."""
    fields = variant_model(view, name, variant)
    config = {**{k: v for k, v in fields.items() if k not in STEERING_FIELDS}, **derived}
    scaled = (view.get("positions") or {}).get(config.get("position", DEFAULT_POSITION))
    if scaled:
        config["position_options"] = {**scaled, **(config.get("position_options") or {})}
    return config


def shape_name(model: dict) -> str:
    """<layers>x<width>, as the scale study names its shapes (e.g. 8x64)."""
    return f"{model['n_layer']}x{model['d_model']}"


#: What makes a scale-study point the same model as a variant's (lenex.claims.scale.same_scheme).
SCHEME_FIELDS = ("position", "position_options", "mask", "mask_options", "train_length")


def scale_budget(view: dict, variants: dict, named: set[str], models: dict[str, dict] | None = None) -> dict:
    """What a paper's claims compare with the scale study: the tokens every model trains on at
    least and the paper's own model shape, and for each variant in `named` (and of the paper) its
    own tokens and shape, and, given its model config (`models`), the fields that make a study
    point the same scheme as it (lenex.claims.scale.Budget)."""
    by_variant = {name: {"tokens": variant_tokens(view, variants[name]),
                         "shape": shape_name(variant_model(view, name, variants[name]))}
                  for name in sorted(named & set(variants))}
    for name, model in (models or {}).items():
        if name in by_variant:
            by_variant[name]["scheme"] = {k: model.get(k) or ({} if k.endswith("options") else None)
                                          for k in SCHEME_FIELDS}
    return {"tokens": budget_tokens(view, variants), "shape": shape_name(view["model"]), "by_variant": by_variant}
