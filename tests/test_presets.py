"""Per-paper views of a scale preset."""

import pytest
import yaml

from lenex.experiment.preset_spec import deep_merge, position_blocks
from lenex.experiment.presets import (budget_tokens, group_view, model_config, paper_view, scale_budget, variant_model,
                                      variant_tokens)

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BASE = {
    "name": "p", "description": "d",
    "model": {"n_layer": 2, "d_model": 64, "train_length": 64},
    "train": {"steps": 10, "lr": 0.1},
    "data": {"tokenizer": "gpt2"},
    "papers": {"receptive-field": {"model": {"n_layer": 12}, "train": {"steps": 5}, "experiment": {"seeds": 5}}},
}


def test_deep_merge_keeps_unmentioned_keys_and_does_not_mutate():
    merged = deep_merge({"a": {"b": 1, "c": 2}, "d": 3}, {"a": {"c": 9}, "e": 4})
    assert merged == {"a": {"b": 1, "c": 9}, "d": 3, "e": 4}


def test_paper_view_merges_the_papers_block():
    view = paper_view(BASE, "receptive-field")
    assert view["model"] == {"n_layer": 12, "d_model": 64, "train_length": 64}
    assert view["train"] == {"steps": 5, "lr": 0.1}
    assert view["experiment"] == {"seeds": 5}
    assert view["paper"] == "receptive-field" and "papers" not in view
    assert BASE["model"]["n_layer"] == 2  # the preset itself is untouched


def test_paper_without_a_block_sees_the_shared_preset():
    view = paper_view(BASE, "lex")
    assert view["model"] == BASE["model"] and view["train"] == BASE["train"]


def test_data_is_not_overridable():
    preset = {**BASE, "papers": {"lex": {"data": {"tokenizer": "bpe-8192"}}}}
    with pytest.raises(ValueError, match="papers.lex may not override 'data'"):
        paper_view(preset, "lex")


@pytest.mark.parametrize("name", ["tiny", "workstation", "paper"])
def test_every_preset_has_a_view_for_every_paper(name):
    preset = yaml.safe_load((REPO / "config" / "presets" / f"{name}.yaml").read_text())
    for paper in ("lex", "receptive-field", "segmented"):
        view = paper_view(preset, paper)
        assert view["model"]["train_length"] >= 4


GROUPED = {
    "name": "g", "model": {"n_layer": 8, "d_model": 64, "train_length": 64},
    "train": {"steps": 768, "batch_size": 16},
    "experiment": {"segments": 256, "groups": {
        "seeds": {"model": {"n_layer": 2}, "experiment": {"segments": 384}},
        "fix-ltr4": {"train": {"batch_size": 4}},
    }},
}


def test_a_group_lays_its_fields_over_the_papers_view():
    seeds = group_view(GROUPED, "seeds")
    assert (seeds["model"]["n_layer"], seeds["model"]["d_model"]) == (2, 64)
    assert seeds["experiment"]["segments"] == 384 and seeds["train"] == GROUPED["train"]
    assert GROUPED["model"]["n_layer"] == 8  # not mutated
    assert group_view(GROUPED, None) is GROUPED
    assert group_view(GROUPED, "not-sized") is GROUPED  # a group the preset leaves alone


def test_a_group_may_not_change_the_training_length():
    bad = deep_merge(GROUPED, {"experiment": {"groups": {"seeds": {"model": {"train_length": 128}}}}})
    with pytest.raises(ValueError, match=r"experiment.groups.seeds may not change model.train_length \(64 -> 128\)"):
        group_view(bad, "seeds")


def test_the_claims_budget_is_the_smallest_models():
    variants = {"deep": {}, "seed": {"group": "seeds"}, "long": {"group": "fix-ltr4", "train_length_multiple": 4}}
    # every model trains 768 x 16 x 64 = 786,432 tokens: fix-ltr4's batch of 4 at 4 x L_tr is the same
    assert budget_tokens(GROUPED, variants) == 786_432
    # a quarter-length model in the paper's own budget: 768 x 16 x 16 = 196,608
    assert budget_tokens(GROUPED, {**variants, "short": {"train_length_multiple": 0.25}}) == 196_608
    assert budget_tokens({**GROUPED, "experiment": {}}, {}) == 786_432


def test_each_variant_trains_its_own_groups_budget():
    seeds = deep_merge(GROUPED, {"experiment": {"groups": {"seeds": {"train": {"steps": 256}}}}})
    assert variant_tokens(seeds, {"group": "seeds"}) == 256 * 16 * 64  # 262,144: its group's steps
    assert variant_tokens(seeds, {}) == 768 * 16 * 64
    assert variant_tokens(seeds, {"train_length_multiple": 0.25}) == 768 * 16 * 16


def test_the_scale_budget_gives_each_named_variant_its_tokens_and_shape():
    view = deep_merge(GROUPED, {"experiment": {"large_model": {"n_layer": 4, "d_model": 128}, "large_variants": ["big"]}})
    variants = {"deep": {}, "seed": {"group": "seeds"}, "big": {"position": "rope"}}
    assert variant_model(view, "big", variants["big"])["n_layer"] == 4  # the large stand-ins' size
    assert variant_model(view, "seed", variants["seed"])["n_layer"] == 2  # its group's model
    budget = scale_budget(view, variants, {"seed", "big", "not-a-variant"})
    assert budget == {"tokens": 786_432, "shape": "8x64",
                      "by_variant": {"big": {"tokens": 786_432, "shape": "4x128"},
                                     "seed": {"tokens": 786_432, "shape": "2x64"}}}


SCALED = {**BASE, "positions": {"xpos": {"scale_base": 128}, "alibi": {"slope_scale": 4}},
          "papers": {"receptive-field": {"positions": {"alibi": {"slope_scale": 8}, "t5": {"max_distance": 16}}}}}


def test_the_presets_scheme_options_are_laid_under_each_variants_own():
    lex = paper_view(SCALED, "lex")
    assert model_config(lex, "xpos", {"position": "xpos"})["position_options"] == {"scale_base": 128}
    # the variant's own options win, its other options stay
    own = model_config(lex, "x", {"position": "xpos", "position_options": {"scale_base": 64, "zeta": "scalar"}})
    assert own["position_options"] == {"scale_base": 64, "zeta": "scalar"}
    # what a paper derives (an explicit position_options) is the variant's own too
    assert model_config(lex, "a", {"position": "alibi"}, position_options={"shift": 2})["position_options"] == {
        "slope_scale": 4, "shift": 2}
    # a paper's block is merged over the shared one, scheme by scheme
    rf = paper_view(SCALED, "receptive-field")
    assert model_config(rf, "a", {"position": "alibi"})["position_options"] == {"slope_scale": 8}
    assert model_config(rf, "t", {"position": "t5"})["position_options"] == {"max_distance": 16}
    assert model_config(rf, "x", {"position": "xpos"})["position_options"] == {"scale_base": 128}
    # a scheme the preset scales not, and a preset without `positions`: the config as it was
    assert "position_options" not in model_config(rf, "r", {"position": "rope"})
    assert model_config(paper_view(BASE, "lex"), "x", {"position": "xpos"}) == {**BASE["model"], "position": "xpos"}
    assert SCALED["positions"]["xpos"] == {"scale_base": 128}  # not mutated


def test_every_positions_entry_is_a_variant_to_check():
    assert position_blocks(SCALED) == {
        "positions.xpos": {"position": "xpos", "position_options": {"scale_base": 128}},
        "positions.alibi": {"position": "alibi", "position_options": {"slope_scale": 4}},
        "papers.receptive-field.positions.alibi": {"position": "alibi", "position_options": {"slope_scale": 8}},
        "papers.receptive-field.positions.t5": {"position": "t5", "position_options": {"max_distance": 16}}}
    assert position_blocks(BASE) == {}
