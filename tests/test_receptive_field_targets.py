"""Scale rules and job lists of the receptive-field paper (lenex.receptive_field.targets)."""

import pytest
import yaml

from lenex.experiment.presets import paper_view, seed_list
from lenex.receptive_field import targets as plan
from test_workflow import REPO

EXPERIMENT = yaml.safe_load((REPO / "config/experiments/receptive-field.yaml").read_text())


def view(name):
    return paper_view(yaml.safe_load((REPO / f"config/presets/{name}.yaml").read_text()), "receptive-field")


@pytest.mark.parametrize("n_layer, train_length, expected", [
    (12, 512, [40, 80, 100, 120, 160, 320]),  # the paper's own windows
    (3, 32, [10, 20, 25, 30, 40, 80]),
    (6, 64, [10, 20, 25, 30, 40, 80]),
    (12, 128, [10, 20, 25, 30, 40, 80]),
    (6, 128, [20, 40, 50, 60, 80, 160]),
])
def test_windows_keep_the_papers_trf_to_train_length_ratio(n_layer, train_length, expected):
    windows = [plan.scaled_window(w, n_layer, train_length) for w in (40, 80, 100, 120, 160, 320)]
    assert windows == expected
    for paper_w, ours in zip((40, 80, 100, 120, 160, 320), windows):
        assert ours * n_layer / train_length == pytest.approx(paper_w * 12 / 512)


def test_paper_preset_is_the_papers_table7():
    paper = view("paper")
    assert {k: paper["model"][k] for k in ("n_layer", "d_model", "n_head", "train_length")} == \
        {"n_layer": 12, "d_model": 768, "n_head": 12, "train_length": 512}
    assert (paper["train"]["lr"], paper["train"]["batch_size"], paper["train"]["steps"]) == (6e-4, 32, 50000)
    assert paper["resources"]["train"]["gpus"] == 1 and seed_list(paper) == [1]
    assert plan.variant_seeds(paper, EXPERIMENT, "sandwich") == [1, 2, 3, 4, 5]  # Table 3: the paper's five
    # workstation: 3 seeds a model, Table 3's (its budget group `seeds`) the paper's 5
    assert seed_list(view("workstation")) == [1, 2, 3] and len(seed_list(view("tiny"))) < 5
    assert plan.variant_seeds(view("workstation"), EXPERIMENT, "sandwich") == [1, 2, 3, 4, 5]


def test_model_configs_scale_windows_and_train_lengths():
    tiny = view("tiny")
    window = plan.model_config("window-160", EXPERIMENT, tiny)
    assert (window["position"], window["mask"], window["mask_options"]) == ("none", "windowed", {"window": 40})
    fixed = plan.model_config("window-160-ltr2", EXPERIMENT, tiny)
    assert fixed["train_length"] == 64 and fixed["mask_options"] == {"window": 40}  # w kept, L_tr doubled
    assert plan.model_config("alibi-shift-6-ltr4", EXPERIMENT, tiny)["train_length"] == 128
    assert plan.model_config("sinusoidal-ltr-quarter", EXPERIMENT, tiny)["train_length"] == 8
    assert plan.model_config("alibi-shift-m3", EXPERIMENT, tiny)["position_options"] == {"shift": -3}
    with pytest.raises(ValueError, match="unknown variant 'alibi-shift-5'"):
        plan.model_config("alibi-shift-5", EXPERIMENT, tiny)


def test_tables_read_every_model_they_need_at_the_paper_preset():
    paper = view("paper")
    counts = {key: len(plan.table_results("paper", spec, paper, EXPERIMENT)) for key, spec in EXPERIMENT["tables"].items()}
    # 17 models per corpus (Tables 1, 4), 2 per corpus (Table 2), 7 x 3 corpora x 5 seeds (Table 3),
    # 2 x 3 x 5 cache-window evaluations (Table 5).
    assert counts == {"table1": 17, "table2": 4, "table3": 105, "table4": 17, "table5": 30}
    assert plan.last_token_multiples(EXPERIMENT) == [1, 2, 4, 8, 16]
    assert plan.cache_multiples(EXPERIMENT) == [8, 16, 32]
    assert plan.lengths([8, 16, 32], 512) == [4096, 8192, 16384]
    with pytest.raises(ValueError, match="not a whole number"):
        plan.lengths([0.3], 32)


def test_a_budget_groups_seeds_are_the_seeds_its_rows_read():
    """A group's `experiment.seeds` sets how many seeds of its models a `seeds: all` table reads;
    the paper's own `experiment.seeds` those of the rows outside the group."""
    tiny = view("tiny")
    grouped = {**tiny, "experiment": {**tiny["experiment"], "seeds": 2, "groups": {"seeds": {"experiment": {"seeds": 4}}}}}
    table3 = EXPERIMENT["tables"]["table3"]
    paths = plan.table_results("p", table3, grouped, experiment=EXPERIMENT)
    assert sorted({p.split("/")[-2] for p in paths}) == ["seed1", "seed2", "seed3", "seed4"]
    assert len(paths) == 7 * 3 * 4  # 7 schemes x 3 corpora x the group's 4 seeds
    ungrouped = {**table3, "sections": [{**table3["sections"][0], "rows": [{"variant": "alibi-shift-0", "label": "A",
                                                                             "method": "alibi"}]}]}
    assert [p.split("/")[-2] for p in plan.table_results("p", ungrouped, grouped, experiment=EXPERIMENT)] == ["seed1", "seed2"]


def test_windows_note_names_every_window():
    note = plan.windows_note(EXPERIMENT, view("workstation"))
    # w · 12 / 512 = w' · 8 / 64: 40 -> 7.5 (rounds to 8), 320 -> 60; every window below L_tr, so each binds
    assert "R = 8, L_tr = 64" in note and "w 40 → 8" in note and "w 320 → 60" in note


def test_a_variants_budget_group_sizes_its_model_and_samples():
    grouped = {**view("tiny"), "experiment": {**view("tiny")["experiment"], "segments": 8,
                                              "groups": {"seeds": {"model": {"n_layer": 1}, "experiment": {"segments": 3}}}}}
    table3 = plan.variant_view(grouped, EXPERIMENT, "sandwich")
    assert (table3["model"]["n_layer"], table3["experiment"]["segments"]) == (1, 3)
    table1 = plan.variant_view(grouped, EXPERIMENT, "alibi-shift-0")
    assert table1 is grouped
    # the window follows its group's depth: w x R / L_tr stays the paper's
    window = plan.model_config("window-320", EXPERIMENT, plan.variant_view(grouped, EXPERIMENT, "window-320"))
    assert window["mask_options"]["window"] == plan.scaled_window(320, grouped["model"]["n_layer"], grouped["model"]["train_length"])


def test_a_group_no_variant_names_is_one_error():
    typo = {**view("tiny"), "experiment": {**view("tiny")["experiment"], "groups": {"seed": {"model": {"n_layer": 1}}}}}
    with pytest.raises(ValueError, match=r"experiment.groups.seed is named by no receptive-field variant; groups named: .*seeds"):
        plan.variant_view(typo, EXPERIMENT, "alibi")


def test_table1_and_table3_alibi_are_separate_models_of_the_same_scheme():
    """Tables 1/4 (Δ = 0) need the slope models' depth, Table 3 its seeds' budget: two variants."""
    variants = EXPERIMENT["variants"]
    assert variants["alibi-shift-0"]["position"] == variants["alibi"]["position"] == "alibi"
    assert "group" not in variants["alibi-shift-0"] and variants["alibi"]["group"] == "seeds"
    rows = [row["variant"] for row in EXPERIMENT["tables"]["table1"]["sections"][0]["rows"]]
    assert "alibi-shift-0" in rows and "alibi" not in rows


def test_your_own_scheme_trains_in_table3s_budget_group():
    from lenex.experiment.schemes import with_extra_schemes
    merged = with_extra_schemes(EXPERIMENT, {"my-bias": {"position": "alibi", "label": "Mine"}})
    assert merged["variants"]["my-bias"]["group"] == EXPERIMENT["scheme_group"] == EXPERIMENT["variants"]["sandwich"]["group"]
