"""A scale preset, typed once: the sections of config/presets/<name>.yaml as dataclasses, their
bounds and defaults declared here (and on lenex.config's ModelConfig and TrainConfig) and nowhere
else, and the options a preset derives from the groups it keeps (docs/dimensions.md).

A preset is read here in one pass: a paper's `papers.<paper>` block merged over the shared
sections (`derived_view`), the options it derives written out, and the result typed (`type_view`).
`read_preset` does so for a preset file's values (already checked against its schema) and each
paper's view of it once, when the DAG is built: a value out of bounds, a model whose heads do not
divide its width or a derived option that is no whole number is one line naming the file and key
then, not a job's traceback. What a paper then reads off a view (its seeds, its models' configs):
lenex.experiment.presets.

The schema's bounded fields are written from the dataclasses: `python -m
lenex.experiment.preset_spec --write` rewrites workflow/schemas/preset.schema.yaml, and a test
checks that the committed schema is what it writes, so the two cannot drift apart.

Derived options (`DERIVED_OPTIONS`): where a preset keeps a dimensionless group of a scheme
(xPos's L_tr / B, ALiBi's broadest slope x L_tr, the span of Sandwich's curve over L_tr, T5's
bucket lengths over L_tr) it writes that group under `positions`, and the scheme's option follows
from the L_tr of the paper that reads it: no preset restates a consequence of another of its
values. The schema's `positions` lists the groups, written from `DERIVED_OPTIONS` too.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..config import ModelConfig, TrainConfig, bound_problem, bounded, build_dataclass, check_bounds, field_kind

SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "preset.schema.yaml"


def bounded_items(kind: type, low=None, *, above=None):
    """A list or mapping field whose every item (every value) is a number of `kind` within the
    bounds (inclusive `low`, exclusive `above`); unset by default."""
    return field(default=None, metadata={"item_bounds": (kind, (">", above) if above is not None else low, None)})


# -- the sections -----------------------------------------------------------------------------------

#: The ModelConfig fields a preset's `model` sets (the vocabulary comes from the tokenizer, the
#: scheme and mask from each variant).
PRESET_MODEL_KEYS = ("n_layer", "d_model", "n_head", "d_ff", "dropout", "train_length")


@dataclass
class EvalSpec:
    """`eval`: what one evaluation cell scores."""
    max_tokens: int = bounded(low=2)  # tokens scored per cell, at most
    batch_tokens: int = bounded(low=1)  # tokens per forward batch


@dataclass
class ResourcesSpec:
    """`resources.<stage>`: what a job of the stage asks the scheduler for; unset: the stage's
    default (lenex.pipeline.resources.STAGE_DEFAULTS)."""
    threads: int | None = bounded(None, 1)
    mem_mb: int | None = bounded(None, 1)
    runtime: int | None = bounded(None, 1)  # minutes
    gpus: int | None = bounded(None, 0)
    nodes: int | None = bounded(None, 1)
    tokens_per_second_per_gpu: float | None = bounded(None, above=0)
    throughput_source: str | None = None
    exclusive: bool | None = None
    signal_lead_s: int | None = bounded(None, 1)


#: The stages a preset's `resources` sizes.
STAGES = ("train", "evaluate", "data")


@dataclass
class StageResources:
    train: ResourcesSpec = field(default_factory=ResourcesSpec)
    evaluate: ResourcesSpec = field(default_factory=ResourcesSpec)
    data: ResourcesSpec = field(default_factory=ResourcesSpec)


@dataclass
class ExperimentSpec:
    """`experiment`: a paper's scale settings (each key is documented in the schema)."""
    seeds: int = bounded(1, 1)
    power_seeds: dict | None = bounded_items(int, 1)
    segments: int | None = bounded(None, 1)
    erf_segments: int | None = bounded(None, 1)
    cache_timing_tokens: int | None = bounded(None, 1)
    large_model: dict | None = None
    large_variants: list | None = None
    train_lengths: dict | None = bounded_items(int, 4)
    epoch_tokens: int | None = field(default=None, metadata={"bounds": (1, None), "nullable": True})  # null: all
    continued: dict | None = None
    hf_checkpoints: dict | None = None
    figure2_multiples: list | None = bounded_items(int, 1)
    attention_pieces: int | None = bounded(None, 1)
    groups: dict | None = None


#: The `experiment` keys a budget group may lay over its paper's.
GROUP_EXPERIMENT_KEYS = ("segments", "erf_segments", "seeds")


@dataclass
class DataSpec:
    """`data`: the one tokenized corpus every paper of a preset reads."""
    tokenizer: str
    seed: int = bounded()
    valid_fraction: float = bounded(above=0, below=0.5)
    test_fraction: float = bounded(above=0, below=0.5)
    corpora: str | None = None


@dataclass
class CrosscheckSpec:
    """`crosscheck`: the fairseq cross-check at this preset, laid over config `crosscheck`."""
    train: dict | None = None
    corpus: str | None = None
    variants: list | None = None
    seeds: list | None = bounded_items(int, 1)
    multiples: list | None = bounded_items(float, above=0)


# -- derived options --------------------------------------------------------------------------------

#: ALiBi's broadest head's slope at any head count, shift 0 (lenex.positions.alibi.alibi_slopes:
#: the geometric sequence of the nearest lower power of two ends at 2^-8, and the slopes added for
#: other head counts lie between its own); a test checks it against alibi_slopes.
ALIBI_SMALLEST_SLOPE = 2.0**-8


@dataclass(frozen=True)
class DerivedOption:
    """A scheme option a preset does not write: `derive(group value, L_tr)` gives it."""
    scheme: str
    group: str  # the key the preset writes: the dimensionless group it keeps
    option: str  # the scheme's Options field it sets
    kind: type  # int: the option must come out whole
    derive: Callable[[float, int], float]
    formula: str
    multiple: int = 1  # an int option must come out a whole multiple of this


#: Sandwich's curve (lenex.positions.sandwich) is read at distance_scale x distance: over a training
#: window it spans the published curve's distances 0 .. distance_scale x L_tr, the group Sandwich's
#: and smoothed Sandwich's option keeps (the receptive-field paper's: its L_tr 512, unscaled).
_CURVE_SPAN = ("distance_scale = curve_span / L_tr (docs/dimensions.md: a training window reads the published curve "
               "up to distance_scale x L_tr = curve_span, the paper's 512)")

DERIVED_OPTIONS = {
    ("xpos", "train_over_base"): DerivedOption(
        "xpos", "train_over_base", "scale_base", int, lambda ratio, length: length / ratio,
        "scale_base B = L_tr / train_over_base (docs/dimensions.md: xPos against RoPE is governed by L_tr / B)"),
    ("alibi", "smallest_slope_x_train"): DerivedOption(
        "alibi", "smallest_slope_x_train", "slope_scale", float,
        lambda product, length: product / (ALIBI_SMALLEST_SLOPE * length),
        "slope_scale = smallest_slope_x_train / (2^-8 x L_tr) (docs/dimensions.md: ALiBi's slope x L_tr)"),
    ("sandwich", "curve_span"): DerivedOption(
        "sandwich", "curve_span", "distance_scale", float, lambda span, length: span / length, _CURVE_SPAN),
    ("smoothed_sandwich", "curve_span"): DerivedOption(
        "smoothed_sandwich", "curve_span", "distance_scale", float, lambda span, length: span / length, _CURVE_SPAN),
    # T5's bucket lengths over L_tr (lenex.positions.t5): distances below num_buckets / 2 have a
    # bucket each, the log buckets end at max_distance (the paper's 16 and 128 at L_tr 512).
    ("t5", "max_distance_over_train"): DerivedOption(
        "t5", "max_distance_over_train", "max_distance", int, lambda share, length: share * length,
        "max_distance = max_distance_over_train x L_tr (docs/dimensions.md: T5's log buckets end at max_distance, "
        "the paper's 128 / 512 = 0.25)"),
    ("t5", "max_exact_over_train"): DerivedOption(
        "t5", "max_exact_over_train", "num_buckets", int, lambda share, length: 2 * share * length,
        "num_buckets = 2 x max_exact_over_train x L_tr (docs/dimensions.md: T5's distances below num_buckets / 2 "
        "have a bucket each, the paper's 16 / 512 = 0.03125)", multiple=2),
}


def derived_of(scheme: str) -> dict[str, DerivedOption]:
    """The derived options of a scheme, by the group key a preset writes."""
    return {d.group: d for (name, _), d in DERIVED_OPTIONS.items() if name == scheme}


def _whole(value: float):
    """An integral float as an int: a derived 4.0 is written as the 4 a preset wrote before."""
    return int(value) if float(value).is_integer() else value


def resolve_positions(positions: dict, train_length: int, source: str, scope: str = "") -> tuple[dict, dict]:
    """(`positions` with every derived group replaced by the option it derives at `train_length`,
    {"positions.<scheme>.<option>": value} of the derived ones). An error names `source` (the
    preset file) first and `scope` (the paper whose L_tr it is) last."""
    resolved, derived = {}, {}
    for scheme, options in (positions or {}).items():
        options, rules, written = dict(options or {}), derived_of(scheme), {}
        for name, value in options.items():  # a derived option takes its group's place
            rule = rules.get(name)
            if rule is None:
                written[name] = value
                continue
            key = f"positions.{scheme}.{name}"
            if rule.option in options:
                raise ValueError(f"{source}: {key}: {rule.option} is derived from {name}; write one of them{scope}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{source}: {key}: {value!r} (must be a number > 0){scope}")
            option = _whole(rule.derive(value, train_length))
            if rule.kind is int and (not isinstance(option, int) or option % rule.multiple):
                whole = "a whole number" if rule.multiple == 1 else f"a whole multiple of {rule.multiple}"
                raise ValueError(f"{source}: {key}: {value!r} at L_tr {train_length} gives {rule.option} "
                                 f"{option:g}, not {whole} ({rule.formula}){scope}")
            written[rule.option] = option
            derived[f"positions.{scheme}.{rule.option}"] = option
        resolved[scheme] = written
    return resolved, derived


def overridden_positions(base: dict, override: dict) -> dict:
    """`base`'s positions without what `override` writes again in another form: a paper that sets
    a derived option's group or the option itself replaces both of the shared block's."""
    kept = {}
    for scheme, options in (base or {}).items():
        options = dict(options or {})
        written = set((override or {}).get(scheme) or {})
        for rule in derived_of(scheme).values():
            if written & {rule.group, rule.option}:
                options.pop(rule.group, None)
                options.pop(rule.option, None)
        kept[scheme] = options
    return kept


# -- one paper's view --------------------------------------------------------------------------------

#: Sections a paper may override; everything else of the preset is shared by all papers.
OVERRIDABLE = ("model", "positions", "train", "eval", "resources", "experiment", "reference_parts")


def deep_merge(base: dict, override: dict) -> dict:
    """A new dict: `base` with `override` laid over it, nested dicts merged key by key."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


@dataclass(frozen=True)
class _Where:
    """What an error names: the preset's file, and the paper whose view it is."""
    source: str  # the preset file
    scope: str  # '' or ' (paper lex)'

    @classmethod
    def of(cls, source: str, paper: str | None) -> "_Where":
        return cls(source, f" (paper {paper})" if paper else "")


def derived_view(values: dict, paper: str | None, source: str | None = None) -> tuple[dict, dict]:
    """(the preset `values` as `paper` sees it, {key path: value} of the options it derives): its
    `papers.<paper>` block merged over the shared sections (`paper` None: the shared sections as no
    paper changes them), the options derived from the groups its `positions` keep written out at
    the view's L_tr (`DERIVED_OPTIONS`). The view has no `papers` key, and a paper's has `paper`
    set, so a header or a plan built from it says which paper's scale it is. An error names
    `source` (the preset's file; default: the preset's name) and the paper."""
    where = _Where.of(source or f"preset {values.get('name')!r}", paper)
    overrides = (values.get("papers") or {}).get(paper) or {} if paper else {}
    bad = sorted(set(overrides) - set(OVERRIDABLE))
    if bad:
        raise ValueError(f"preset {values.get('name')!r}: papers.{paper} may not override {bad[0]!r}; "
                         f"overridable: {', '.join(OVERRIDABLE)}")
    view = {k: v for k, v in values.items() if k != "papers"}
    if "positions" in view and overrides.get("positions"):
        view["positions"] = overridden_positions(view["positions"], overrides["positions"])
    view = deep_merge(view, overrides)
    if paper:
        view["paper"] = paper
    derived = {}
    if view.get("positions"):
        view["positions"], derived = resolve_positions(view["positions"], view["model"]["train_length"], where.source,
                                                       where.scope)
    return view, derived


def position_blocks(values: dict) -> dict[str, dict]:
    """Every `positions` entry of a preset file, shared and per paper, as a variant of its scheme
    with those options ({"papers.<paper>.positions.<scheme>": {position, position_options}}), the
    derived options written out (the shared ones at the shared L_tr, a paper's at its own): what is
    checked against the scheme registry when the preset is read."""
    scopes = {"": (derived_view(values, None)[0].get("positions") or {}, values.get("positions") or {})}
    scopes.update({f"papers.{paper}.": (derived_view(values, paper)[0].get("positions") or {},
                                        (block or {}).get("positions") or {})
                   for paper, block in (values.get("papers") or {}).items()})
    return {f"{scope}positions.{scheme}": {"position": scheme, "position_options": dict(resolved[scheme] or {})}
            for scope, (resolved, written) in scopes.items() for scheme in written}


# -- the typed preset -------------------------------------------------------------------------------

@dataclass
class PresetView:
    """The preset as one paper sees it (`paper` None: the shared sections), typed. `view` is the
    dict `derived_view` builds (the one every rule and job reads), `derived` the options derived
    in it, by key path; `source` the preset's file."""
    name: str
    source: str
    paper: str | None
    model: ModelConfig
    train: TrainConfig
    eval: EvalSpec
    data: DataSpec
    resources: StageResources
    experiment: ExperimentSpec
    positions: dict
    derived: dict
    view: dict

    def resource(self, stage: str, key: str, default):
        """`resources.<stage>.<key>`, or `default` where the preset leaves it unset."""
        value = getattr(getattr(self.resources, stage), key)
        return default if value is None else value


@dataclass
class Preset:
    """A preset file typed: its shared sections and each paper's view; `values` the file's, read
    from `source`."""
    name: str
    description: str
    shared: PresetView
    papers: dict[str, PresetView]
    values: dict
    source: str

    def view_of(self, paper: str | None) -> PresetView:
        """One paper's typed view (None: the shared sections); a paper not typed with the preset
        (one the config does not run) is typed when first asked for."""
        if paper is None:
            return self.shared
        if paper not in self.papers:
            view, derived = derived_view(self.values, paper, self.source)
            self.papers[paper] = type_view(view, derived, paper, self.source)
        return self.papers[paper]


def _located(err: Exception, section: str, where: _Where) -> ValueError:
    """One line naming the file, the key path and (in `where`) the paper: 'train config steps: 0
    (must be >= 1)' of section train becomes '<file>: train.steps: 0 (must be >= 1)'."""
    text = re.sub(r"^(?:model|train) config (\w+): ", r"\1: ", str(err))
    key = re.match(r"^([\w.\[\]]+): ", text)
    if key and not text.startswith(("unknown", "missing")):
        return ValueError(f"{where.source}: {section}.{text}{where.scope}")
    return ValueError(f"{where.source}: {section}: {text}{where.scope}")


def _typed(cls, values: dict, section: str, where: _Where):
    """cls from `values`, its bounds checked; a bad value or key one ValueError naming the file and
    key. A model or a training is built as the trainer builds it (ModelConfig, TrainConfig: their
    own checks and words); a preset's model sets only `PRESET_MODEL_KEYS`."""
    values = dict(values or {})
    unknown = sorted(set(values) - set(PRESET_MODEL_KEYS)) if cls is ModelConfig else []
    if unknown:
        raise ValueError(f"{where.source}: {section}: unknown key {unknown[0]!r}; known: {', '.join(PRESET_MODEL_KEYS)}"
                         f"{where.scope}")
    try:
        if cls in (ModelConfig, TrainConfig):
            return cls.from_dict(values)
        obj = build_dataclass(cls, values, "key")
        check_bounds(obj, "", sep="")
        check_items(obj)
        return obj
    except (ValueError, TypeError) as err:
        raise _located(err, section, where) from None


def check_items(obj) -> None:
    """Enforce the `bounded_items` bounds: every item of a list, every value of a mapping."""
    for f in dataclasses.fields(obj):
        if "item_bounds" not in f.metadata or getattr(obj, f.name) is None:
            continue
        kind, low, high = f.metadata["item_bounds"]
        values = getattr(obj, f.name)
        items = values.items() if isinstance(values, dict) else enumerate(values)
        for key, value in items:
            problem = bound_problem(value, kind, low, high)
            if problem:
                label = f"{f.name}.{key}" if isinstance(values, dict) else f"{f.name}[{key}]"
                raise ValueError(f"{label}: {problem}")


def type_view(view: dict, derived: dict, paper: str | None, source: str) -> PresetView:
    """One view (`derived_view`'s dict) typed; every budget group's model and train as it lays them
    over the view, and the segmented stand-ins' large model, checked too. The sections are typed
    in one pass, in the order their errors are told."""
    where = _Where.of(source, paper)
    experiment = view.get("experiment") or {}
    sections = [(ExperimentSpec, view.get("experiment"), "experiment"), (ModelConfig, view["model"], "model")]
    for group, block in (experiment.get("groups") or {}).items():
        sections += [(ModelConfig, {**view["model"], **(block.get("model") or {})}, f"experiment.groups.{group}.model"),
                     (TrainConfig, {**view["train"], **(block.get("train") or {})}, f"experiment.groups.{group}.train"),
                     (ExperimentSpec, block.get("experiment"), f"experiment.groups.{group}.experiment")]
    if experiment.get("large_model"):
        sections.append((ModelConfig, {**view["model"], **experiment["large_model"]}, "experiment.large_model"))
    resources = view.get("resources") or {}
    sections += [(TrainConfig, view["train"], "train"), (EvalSpec, view.get("eval"), "eval"),
                 (DataSpec, view.get("data"), "data")]
    sections += [(ResourcesSpec, resources.get(stage), f"resources.{stage}") for stage in STAGES]
    typed = {section: _typed(cls, values, section, where) for cls, values, section in sections}
    return PresetView(
        name=view["name"], source=source, paper=paper, model=typed["model"], train=typed["train"], eval=typed["eval"],
        data=typed["data"], resources=StageResources(**{stage: typed[f"resources.{stage}"] for stage in STAGES}),
        experiment=typed["experiment"], positions=dict(view.get("positions") or {}), derived=derived, view=view)


def read_preset(values: dict, source: str, papers) -> Preset:
    """A preset file's values (checked against its schema) typed, with the view of each of
    `papers`: the one read of a preset per DAG build (lenex.pipeline.settings.Settings.preset_spec)."""
    _typed(CrosscheckSpec, values.get("crosscheck"), "crosscheck", _Where.of(source, None))
    view, derived = derived_view(values, None, source)
    preset = Preset(name=values["name"], description=values["description"],
                    shared=type_view(view, derived, None, source), papers={}, values=values, source=source)
    for paper in papers:
        preset.view_of(paper)
    return preset


# -- the schema's bounded fields ---------------------------------------------------------------------

#: Where each dataclass's bounded fields sit in the preset schema, and which of its fields (None:
#: every bounded one).
SCHEMA_SECTIONS = (
    (("definitions", "model"), ModelConfig, PRESET_MODEL_KEYS),
    (("definitions", "train"), TrainConfig, None),
    (("definitions", "eval"), EvalSpec, None),
    (("definitions", "resources"), ResourcesSpec, None),
    (("definitions", "experiment"), ExperimentSpec, None),
    (("definitions", "experiment", "properties", "groups", "additionalProperties", "properties", "experiment"),
     ExperimentSpec, GROUP_EXPERIMENT_KEYS),
    (("properties", "data"), DataSpec, None),
    (("properties", "crosscheck"), CrosscheckSpec, None),
)

_NUMERIC_KEYWORDS = ("type", "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")


def _number_schema(kind: type, low, high, nullable: bool = False) -> dict:
    written = "integer" if kind is int else "number"
    rule = {"type": [written, "null"] if nullable else written}
    if low is not None:
        rule["exclusiveMinimum" if isinstance(low, tuple) else "minimum"] = low[1] if isinstance(low, tuple) else low
    if high is not None:
        rule["exclusiveMaximum" if isinstance(high, tuple) else "maximum"] = high[1] if isinstance(high, tuple) else high
    return rule


def field_schema(f, written: dict) -> dict:
    """A bounded field's schema property: its type and bounds from the dataclass, the rest (its
    description) as the schema writes it."""
    rest = {k: v for k, v in written.items() if k not in _NUMERIC_KEYWORDS + ("items", "additionalProperties")}
    if "item_bounds" in f.metadata:
        kind, low, high = f.metadata["item_bounds"]
        container = "object" if "dict" in str(f.type) else "array"
        inner = "additionalProperties" if container == "object" else "items"
        return {"type": container, inner: _number_schema(kind, low, high), **rest}
    low, high = f.metadata["bounds"]
    return {**_number_schema(field_kind(f), low, high, f.metadata.get("nullable", False)), **rest}


#: Where the schema describes `positions` (its schemes' options).
POSITIONS_SECTION = ("definitions", "positions")


def derived_groups_schema() -> dict:
    """The `positions` schemes that have derived options, each with its groups: a number > 0, its
    formula the description (the scheme's other Options fields pass, as any scheme's do)."""
    schemes = {}
    for (scheme, group), rule in DERIVED_OPTIONS.items():
        entry = schemes.setdefault(scheme, {"type": "object", "properties": {}})
        entry["properties"][group] = {"type": "number", "exclusiveMinimum": 0,
                                      "description": f"derived option: {rule.formula}"}
    return schemes


def bounded_schema(schema: dict) -> dict:
    """`schema` (the preset schema's values) with every bounded field's type and bounds written
    from the dataclasses, a bounded field the schema lacks added, and the derived options' groups
    under `positions` written from `DERIVED_OPTIONS`."""
    schema = json.loads(json.dumps(schema))
    for path, cls, keys in SCHEMA_SECTIONS:
        section = schema
        for part in path:
            section = section[part]
        properties = section.setdefault("properties", {})
        for f in dataclasses.fields(cls):
            if ("bounds" in f.metadata or "item_bounds" in f.metadata) and (keys is None or f.name in keys):
                properties[f.name] = field_schema(f, properties.get(f.name, {}))
    positions = schema
    for part in POSITIONS_SECTION:
        positions = positions[part]
    positions["properties"] = derived_groups_schema()
    return schema


# -- writing the schema ------------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_$][A-Za-z0-9_ ./$-]*")
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
_BLOCK_KEYS = {"properties", "definitions", "allOf"}


def _scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED and value == value.strip():
        return value
    return json.dumps(value, ensure_ascii=False)


def _flow(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_scalar(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    return _scalar(value)


def _is_block(value) -> bool:
    """A mapping written as a block: one that holds properties or definitions (at any depth)."""
    if isinstance(value, dict):
        return bool(_BLOCK_KEYS & set(value)) or any(_is_block(v) for v in value.values())
    if isinstance(value, list):
        return any(_is_block(v) for v in value)
    return False


def _lines(mapping: dict, indent: int) -> list[str]:
    """YAML lines of a schema: a mapping that holds properties as a block, a leaf on one line."""
    pad, out = "  " * indent, []
    for key, value in mapping.items():
        if isinstance(value, dict) and (_is_block(value) or key in _BLOCK_KEYS):
            out.append(f"{pad}{_scalar(key)}:")
            out += _lines(value, indent + 1)
        elif isinstance(value, list) and _is_block(value) or key == "allOf":
            out.append(f"{pad}{_scalar(key)}:")
            out += [f"{pad}  - {_flow(item)}" for item in value]
        else:
            out.append(f"{pad}{_scalar(key)}: {_flow(value)}")
    return out


HEADER = ("# Written by `python -m lenex.experiment.preset_spec --write` from this file and the bounds the\n"
          "# dataclasses of lenex.experiment.preset_spec and lenex.config declare (a test checks it): edit a\n"
          "# description here, a bound there.\n")


def render_schema(schema: dict) -> str:
    return HEADER + "\n".join(_lines(schema, 0)) + "\n"


def main(argv=None) -> int:
    import yaml

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the schema (default: say if it is stale)")
    parser.add_argument("--schema", default=str(SCHEMA))
    args = parser.parse_args(argv)
    path = Path(args.schema)
    text = render_schema(bounded_schema(yaml.safe_load(path.read_text())))
    if args.write:
        path.write_text(text)
        return 0
    if path.read_text() != text:
        print(f"{path}: not what lenex.experiment.preset_spec writes; run it with --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
