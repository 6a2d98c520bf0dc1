"""The preset typed once (lenex.experiment.preset_spec): bounds in one place, the schema written
from them, and the options a preset derives from the groups it keeps."""

import copy
from pathlib import Path

import pytest
import yaml

from lenex.experiment.preset_spec import (ALIBI_SMALLEST_SLOPE, SCHEMA, bounded_schema, main, position_blocks,
                                          read_preset, render_schema, resolve_positions)
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
    8 / (256 / 256) = 8, each the value the preset wrote by hand before."""
    workstation = preset("workstation")
    lex, rf, segmented = (paper_view(workstation, paper)["positions"] for paper in PAPERS)
    assert lex["xpos"] == {"scale_base": 128} and lex["alibi"] == {"slope_scale": 4}
    assert rf["alibi"] == {"slope_scale": 8} and segmented["alibi"] == {"slope_scale": 8}
    assert rf["xpos"] == {"scale_base": 32}  # L_tr / B = 2 at the receptive field's L_tr 64 (it trains no xPos)
    assert all(type(value) is int for value in (lex["xpos"]["scale_base"], lex["alibi"]["slope_scale"]))
    spec = read_preset(workstation, "config/presets/workstation.yaml", PAPERS)
    assert spec.papers["lex"].derived == {"positions.xpos.scale_base": 128, "positions.alibi.slope_scale": 4}
    assert spec.papers["receptive-field"].positions["t5"] == {"max_distance": 16, "num_buckets": 4}  # written, not derived


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
