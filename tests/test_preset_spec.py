"""The preset typed once (lenex.experiment.preset_spec): bounds in one place, the schema written
from them, and the options a preset derives from the groups it keeps."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from lenex.experiment.preset_spec import (ALIBI_SMALLEST_SLOPE, DERIVED_OPTIONS, SCHEMA, bounded_schema, main,
                                          position_blocks, read_preset, render_schema, resolve_positions)
from lenex.experiment.presets import model_config, paper_view, shared_view

REPO = Path(__file__).resolve().parents[1]
PAPERS = ("lex", "receptive-field", "segmented")


def preset(name: str) -> dict:
    return yaml.safe_load((REPO / "config" / "presets" / f"{name}.yaml").read_text())


# -- the schema is written from the dataclasses --------------------------------------------------------

def test_the_committed_schema_is_what_the_dataclasses_write():
    """A bound edited in the schema alone, or in a dataclass alone, fails here: run
    `python -m lenex.experiment.preset_spec --write`."""
    committed = yaml.safe_load(SCHEMA.read_text())
    assert bounded_schema(committed) == committed
    assert main(["--schema", str(SCHEMA)]) == 0  # byte for byte the generator's file


def test_a_bound_changed_in_the_schema_alone_is_drift(tmp_path):
    schema = yaml.safe_load(SCHEMA.read_text())
    schema["definitions"]["train"]["properties"]["steps"]["minimum"] = 0
    del schema["definitions"]["eval"]["properties"]["max_tokens"]
    assert bounded_schema(schema) != schema
    fixed = bounded_schema(schema)
    assert fixed["definitions"]["train"]["properties"]["steps"] == {"type": "integer", "minimum": 1}
    assert fixed["definitions"]["eval"]["properties"]["max_tokens"] == {"type": "integer", "minimum": 2}
    stale = tmp_path / "preset.schema.yaml"
    stale.write_text(render_schema(schema))
    assert main(["--schema", str(stale)]) == 1
    assert main(["--schema", str(stale), "--write"]) == 0 and main(["--schema", str(stale)]) == 0


def test_the_written_schema_reads_back_as_itself():
    schema = bounded_schema(yaml.safe_load(SCHEMA.read_text()))
    assert yaml.safe_load(render_schema(schema)) == schema


def test_bounds_only_the_dataclasses_declared_reach_the_schema():
    """The train section's beta and eps bounds were TrainConfig's alone: a preset with beta1 1.5
    passed the schema and failed in the job."""
    train = yaml.safe_load(SCHEMA.read_text())["definitions"]["train"]["properties"]
    assert train["beta1"] == {"type": "number", "minimum": 0, "maximum": 1}
    experiment = yaml.safe_load(SCHEMA.read_text())["definitions"]["experiment"]["properties"]
    assert experiment["epoch_tokens"]["type"] == ["integer", "null"]
    assert experiment["power_seeds"]["additionalProperties"] == {"type": "integer", "minimum": 1}


# -- derived options ----------------------------------------------------------------------------------

def test_the_workstation_derives_the_options_it_wrote_before():
    """Hand-computed: xPos B = L_tr / (L_tr / B) = 256 / 2 = 128; ALiBi slope_scale = slope x L_tr /
    (2^-8 x L_tr): LEX 4 / (256 / 256) = 4, receptive field 2 / (64 / 256) = 8, segmented
    8 / (256 / 256) = 8; at the receptive field's L_tr 64 Sandwich's distance_scale = 512 / 64 = 8,
    T5's max_distance = 0.25 x 64 = 16 and num_buckets = 2 x 0.03125 x 64 = 4: each the value the
    preset wrote by hand before."""
    workstation = preset("workstation")
    lex, rf, segmented = (paper_view(workstation, paper)["positions"] for paper in PAPERS)
    assert lex["xpos"] == {"scale_base": 128} and lex["alibi"] == {"slope_scale": 4}
    assert rf["alibi"] == {"slope_scale": 8} and segmented["alibi"] == {"slope_scale": 8}
    assert rf["xpos"] == {"scale_base": 32}  # L_tr / B = 2 at the receptive field's L_tr 64 (it trains no xPos)
    assert rf["sandwich"] == rf["smoothed_sandwich"] == {"distance_scale": 8}
    assert list(rf["t5"].items()) == [("max_distance", 16), ("num_buckets", 4)]  # in the order written
    spec = read_preset(workstation, "config/presets/workstation.yaml", PAPERS)
    assert spec.papers["lex"].derived == {"positions.xpos.scale_base": 128, "positions.alibi.slope_scale": 4}
    assert spec.papers["receptive-field"].derived == {
        "positions.xpos.scale_base": 32, "positions.alibi.slope_scale": 8, "positions.sandwich.distance_scale": 8,
        "positions.smoothed_sandwich.distance_scale": 8, "positions.t5.max_distance": 16, "positions.t5.num_buckets": 4}


#: What each preset's papers' views held under `positions` when the presets still wrote the
#: options by hand (config/presets/*.yaml at 6d06954), the receptive field's as its models ran.
WRITTEN_BEFORE = {
    "workstation": {
        "lex": {"xpos": {"scale_base": 128}, "alibi": {"slope_scale": 4}},
        "receptive-field": {"xpos": {"scale_base": 32}, "alibi": {"slope_scale": 8}, "sandwich": {"distance_scale": 8},
                            "smoothed_sandwich": {"distance_scale": 8}, "t5": {"max_distance": 16, "num_buckets": 4}},
        "segmented": {"xpos": {"scale_base": 128}, "alibi": {"slope_scale": 8}},
    },
    "tiny": {}, "gpu": {}, "paper": {},
}


@pytest.mark.parametrize("name", sorted(WRITTEN_BEFORE))
def test_every_presets_derived_options_are_the_values_it_wrote_before(name):
    """Byte for byte: a model's config, its identity and its training command are JSON of these,
    so a derived 8 must be the int 8 the preset wrote, not 8.0."""
    for paper in PAPERS:
        positions = paper_view(preset(name), paper).get("positions") or {}
        before = WRITTEN_BEFORE[name].get(paper, {})
        assert json.dumps(positions, sort_keys=True) == json.dumps(before, sort_keys=True), (name, paper)


def test_every_preset_file_is_in_the_table_of_what_it_wrote_before():
    assert sorted(path.stem for path in (REPO / "config" / "presets").glob("*.yaml")) == sorted(WRITTEN_BEFORE)


@pytest.mark.parametrize("positions, length, options, derived", [
    # Sandwich at the paper's L_tr 512 with its own span: the published curve, distance_scale 1
    ({"sandwich": {"curve_span": 512}}, 512, {"sandwich": {"distance_scale": 1}}, {"sandwich.distance_scale": 1}),
    ({"sandwich": {"dbar": 64, "curve_span": 512}}, 128, {"sandwich": {"dbar": 64, "distance_scale": 4}},
     {"sandwich.distance_scale": 4}),
    ({"smoothed_sandwich": {"curve_span": 100}}, 64, {"smoothed_sandwich": {"distance_scale": 1.5625}},
     {"smoothed_sandwich.distance_scale": 1.5625}),
    # T5 at the paper's L_tr 512: its defaults, 128 = 0.25 x 512 and 32 = 2 x 0.03125 x 512
    ({"t5": {"max_distance_over_train": 0.25, "max_exact_over_train": 0.03125}}, 512,
     {"t5": {"max_distance": 128, "num_buckets": 32}}, {"t5.max_distance": 128, "t5.num_buckets": 32}),
    ({"t5": {"num_buckets": 8, "max_distance_over_train": 0.5}}, 96, {"t5": {"num_buckets": 8, "max_distance": 48}},
     {"t5.max_distance": 48}),
])
def test_the_new_groups_derive_their_options_by_hand(positions, length, options, derived):
    resolved, said = resolve_positions(positions, length, "p.yaml")
    assert json.dumps(resolved) == json.dumps(options)  # values, their types and the order written
    assert said == {f"positions.{key}": value for key, value in derived.items()}


def test_t5s_bucket_counts_must_come_out_whole_and_even():
    with pytest.raises(ValueError, match=r"^p.yaml: positions.t5.max_distance_over_train: 0.1 at L_tr 64 gives "
                                         r"max_distance 6.4, not a whole number \(max_distance = .*\)$"):
        resolve_positions({"t5": {"max_distance_over_train": 0.1}}, 64, "p.yaml")
    # 3 buckets would have 1 exact distance, not the 1.5 (= 0.0234375 x 64) the group asks for
    with pytest.raises(ValueError, match=r"^p.yaml: positions.t5.max_exact_over_train: 0.0234375 at L_tr 64 gives "
                                         r"num_buckets 3, not a whole multiple of 2 \(num_buckets = 2 x .*\)$"):
        resolve_positions({"t5": {"max_exact_over_train": 0.0234375}}, 64, "p.yaml")
    with pytest.raises(ValueError, match=r"^p.yaml: positions.t5.max_exact_over_train: num_buckets is derived from "
                                         r"max_exact_over_train; write one of them$"):
        resolve_positions({"t5": {"max_exact_over_train": 0.25, "num_buckets": 4}}, 64, "p.yaml")


def test_the_schema_refuses_a_group_that_is_no_positive_number():
    from lenex.pipeline.settings import validate

    values = copy.deepcopy(preset("workstation"))
    validate(values, SCHEMA, "config/presets/workstation.yaml")
    values["papers"]["receptive-field"]["positions"]["sandwich"]["curve_span"] = 0
    with pytest.raises(ValueError, match="curve_span"):
        validate(values, SCHEMA, "config/presets/workstation.yaml")
    schemes = yaml.safe_load(SCHEMA.read_text())["definitions"]["positions"]["properties"]
    assert {(scheme, group) for scheme, entry in schemes.items() for group in entry["properties"]} == set(DERIVED_OPTIONS)


def test_a_model_config_gets_the_derived_option():
    view = paper_view(preset("workstation"), "lex")
    assert model_config(view, "xpos", {"position": "xpos"})["position_options"] == {"scale_base": 128}
    assert model_config(view, "alibi", {"position": "alibi"})["position_options"] == {"slope_scale": 4}


@pytest.mark.parametrize("name, paper, length", [("tiny", "lex", 64), ("gpu", "lex", 1024), ("paper", "lex", 1024)])
def test_a_preset_that_keeps_no_group_runs_at_the_schemes_defaults(name, paper, length):
    """tiny: L_tr / B = 64 / 512 = 1/8 (docs/dimensions.md, workstation before); gpu and paper
    2 (1024 / 512) without options."""
    from lenex.positions.xpos import XPosOptions

    view = paper_view(preset(name), paper)
    assert "positions" not in view
    assert length / XPosOptions().scale_base == {64: 0.125, 1024: 2.0}[length]


def test_alibis_smallest_slope_is_every_head_counts():
    from lenex.positions import alibi_slopes

    for heads in range(1, 33):
        assert float(alibi_slopes(heads).min()) == ALIBI_SMALLEST_SLOPE, heads


def test_a_derived_option_that_is_no_whole_number_names_the_file_and_key():
    with pytest.raises(ValueError, match=r"^p.yaml: positions.xpos.train_over_base: 3 at L_tr 256 gives scale_base "
                                         r"85.3333, not a whole number \(scale_base B = L_tr / train_over_base .*\) "
                                         r"\(paper lex\)$"):
        resolve_positions({"xpos": {"train_over_base": 3}}, 256, "p.yaml", " (paper lex)")
    with pytest.raises(ValueError, match=r"^p.yaml: positions.alibi.smallest_slope_x_train: 0 \(must be a number > 0\)$"):
        resolve_positions({"alibi": {"smallest_slope_x_train": 0}}, 256, "p.yaml")
    assert resolve_positions({"alibi": {"smallest_slope_x_train": 3}}, 256, "p.yaml")[0] == {"alibi": {"slope_scale": 3}}
    assert resolve_positions({"alibi": {"smallest_slope_x_train": 1, "shift": 2}}, 512, "p")[0] == {
        "alibi": {"shift": 2, "slope_scale": 0.5}}


def test_an_option_and_the_group_it_derives_from_are_not_both_written():
    both = {**preset("tiny"), "positions": {"xpos": {"train_over_base": 2, "scale_base": 64}}}
    with pytest.raises(ValueError, match=r"^preset 'tiny': positions.xpos.train_over_base: scale_base is derived from "
                                         r"train_over_base; write one of them \(paper lex\)$"):
        paper_view(both, "lex")


def test_a_papers_own_option_replaces_the_shared_group():
    values = copy.deepcopy(preset("workstation"))
    values["papers"]["lex"]["positions"] = {"xpos": {"scale_base": 64}}
    assert paper_view(values, "lex")["positions"]["xpos"] == {"scale_base": 64}
    assert paper_view(values, "segmented")["positions"]["xpos"] == {"scale_base": 128}  # the shared group's
    assert shared_view(values)["positions"]["xpos"] == {"scale_base": 128} and "papers" not in shared_view(values)
    assert position_blocks(values)["papers.lex.positions.xpos"] == {"position": "xpos", "position_options": {"scale_base": 64}}
    assert position_blocks(values)["positions.alibi"] == {"position": "alibi", "position_options": {"slope_scale": 4}}


# -- typed once ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tiny", "workstation", "gpu", "paper"])
def test_every_preset_types_with_every_papers_view(name):
    values = preset(name)
    spec = read_preset(values, f"config/presets/{name}.yaml", PAPERS)
    for paper in PAPERS:
        view = spec.papers[paper]
        assert view.view == paper_view(values, paper)
        assert view.model.train_length == view.view["model"]["train_length"]
        assert view.train.steps == view.view["train"]["steps"]
        assert view.resource("train", "gpus", 0) == view.view["resources"].get("train", {}).get("gpus", 0)
        assert view.experiment.seeds == view.view.get("experiment", {}).get("seeds", 1)


def test_a_paper_the_preset_was_not_read_for_is_typed_when_first_asked_for():
    """read_preset types the papers it is given; another paper's view is merged, derived and typed
    on its first `view_of`, kept, and names the preset's file as every view does."""
    values = preset("workstation")
    spec = read_preset(values, "config/presets/workstation.yaml", ("lex",))
    assert set(spec.papers) == {"lex"}
    segmented = spec.view_of("segmented")
    assert segmented is spec.view_of("segmented") and set(spec.papers) == {"lex", "segmented"}
    assert segmented.view == paper_view(values, "segmented") and spec.view_of(None) is spec.shared
    assert {view.source for view in (spec.shared, *spec.papers.values())} == {"config/presets/workstation.yaml"}


@pytest.mark.parametrize("change, said", [
    (lambda p: p["eval"].update(max_tokens=1), "config/presets/mine.yaml: eval.max_tokens: 1 (must be >= 2)"),
    (lambda p: p["papers"]["lex"].update(train={"steps": 0}),
     "config/presets/mine.yaml: train.steps: 0 (must be >= 1) (paper lex)"),
    (lambda p: p["model"].update(n_head=3), "config/presets/mine.yaml: model: d_model 64 is not divisible by n_head 3"),
    (lambda p: p["papers"]["segmented"]["experiment"].update(figure2_multiples=[1, 0]),
     "config/presets/mine.yaml: experiment.figure2_multiples[1]: 0 (must be >= 1) (paper segmented)"),
    (lambda p: p["papers"]["segmented"]["experiment"]["large_model"].update(n_head=5),
     "config/presets/mine.yaml: experiment.large_model: d_model 96 is not divisible by n_head 5 (paper segmented)"),
    (lambda p: p["resources"]["train"].update(gpus=-1), "config/presets/mine.yaml: resources.train.gpus: -1 (must be >= 0)"),
    (lambda p: p["data"].update(valid_fraction=0.5), "config/presets/mine.yaml: data.valid_fraction: 0.5 (must be > 0 and < 0.5)"),
])
def test_a_bad_value_the_schema_did_not_see_is_one_line_naming_the_file_and_key(change, said):
    """The typed read checks what no schema can (heads dividing the width, each paper's merged
    sections) and, for values that bypassed the schema, the same bounds it says."""
    values = copy.deepcopy(preset("tiny"))
    change(values)
    with pytest.raises(ValueError) as err:
        read_preset(values, "config/presets/mine.yaml", PAPERS)
    assert str(err.value) == said
