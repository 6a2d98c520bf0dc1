"""The `gpu` preset (issue 48): it validates, and the cost model (benchmarks/preset_cost.py --gpu, from the
recorded H100 throughput) puts each paper's training within the day it was sized for; the rates it
states for the plan page are the cost model's; the cost model's formulas by hand."""

import math

import pytest

from benchmarks import gpu_cost
from benchmarks.preset_cost import gpu_costs, gpu_hours
from lenex.files import read_yaml
from lenex.pipeline.settings import Settings
from lenex.experiment.presets import paper_view
from test_workflow import REPO

PRESET = read_yaml(REPO / "config/presets/gpu.yaml")


def test_the_gpu_preset_validates(tmp_path):
    config = read_yaml(REPO / "config/config.yaml")
    settings = Settings(config, REPO, stamps=tmp_path)
    assert settings.preset("gpu")["name"] == "gpu"
    assert {paper: paper_view(PRESET, paper)["resources"]["train"]["gpus"] for paper in config["papers"]} == {
        paper: 1 for paper in config["papers"]}


def test_each_paper_trains_within_a_gpu_day_on_the_recorded_rates():
    hours = gpu_hours("gpu")
    assert set(hours) == {"lex", "receptive-field", "segmented"}
    # Sized for 20 hours of training, the day's rest left to evaluation (the preset's header).
    assert all(0 < h <= 20 for h in hours.values()), hours
    assert all(h <= 24 for h in hours.values())


def test_the_rates_the_preset_states_are_the_cost_models():
    rows = gpu_costs(PRESET)
    for paper in ("lex", "receptive-field", "segmented"):
        stated = paper_view(PRESET, paper)["resources"]["train"]["tokens_per_second_per_gpu"]
        # the rate of the shape most of the paper's models train at (its longer-L_tr fixes are slower)
        rate = max((r for r in rows if r["paper"] == paper), key=lambda r: r["count"])["tokens_per_s_gpu"]
        assert stated == 1000 * math.floor(rate / 1000), paper


def test_flops_per_token_by_hand():
    # 1 layer, d 2, d_ff 8, vocab 10, L 3: 6 x (4 x 4 + 2 x 16 + 20) + 12 x 1 x 2 x 3
    assert gpu_cost.flops_per_token(1, 2, 8, 10, 3) == 6 * 68 + 72
    # GPT-2 small at L 512: within 0.1 % of the benchmark's recorded model FLOPs (798,543,360)
    assert gpu_cost.flops_per_token(12, 768, 3072, 50257, 512) == pytest.approx(798_543_360, rel=1e-3)


def test_a_shape_is_costed_at_the_slowest_rate_of_the_nearest_recorded_shape():
    points = [{"flops": 100.0, "mfu": 0.2, "what": "a fast"}, {"flops": 100.0, "mfu": 0.1, "what": "a slow"},
              {"flops": 1000.0, "mfu": 0.4, "what": "b"}]
    assert gpu_cost.costed_mfu(250.0, points)["what"] == "a slow"  # log distance: 0.92 against 1.39
    assert gpu_cost.costed_mfu(400.0, points)["what"] == "b"
    rate, point = gpu_cost.tokens_per_s({"n_layer": 1, "d_model": 2, "d_ff": 8, "vocab": 10, "train_length": 3},
                                        points, peak=4800.0)
    assert point["what"] == "b" and rate == pytest.approx(0.4 * 4800 / 480)
    with pytest.raises(ValueError, match="no recorded GPU throughput"):
        gpu_cost.costed_mfu(1.0, [])


# The groups docs/dimensions.md names that the gpu preset keeps at the paper's values (its design).
KEPT = {
    "lex": ["L_tr (tokens)", "head dimension", "rotary pairs per octave of wavelength", "first unseen wrap / L_tr",
            "xPos L_tr / B", "ALiBi largest slope × L_tr", "ALiBi smallest slope × L_tr"],
    "receptive-field": ["L_tr (tokens)", "layers of the slope and window models (R)", "ALiBi largest slope × L_tr (Δ = 0)",
                        "ALiBi smallest slope × L_tr at Δ = 6", "w R / L_tr of the paper's w = 40",
                        "w / L_tr of the paper's w = 320", "Table 3 first unseen wrap / L_tr",
                        "Sandwich's curve over L_tr (1 = the paper's)", "T5 max_distance / L_tr"],
}


@pytest.mark.parametrize("paper", sorted(KEPT))
def test_the_gpu_preset_keeps_the_papers_groups(paper):
    from lenex.scale_study.dimensions_report import lex_rows, rf_rows

    experiment = read_yaml(REPO / "config/experiments/receptive-field.yaml")
    columns = {}
    for name in ("paper", "gpu"):
        view = paper_view(read_yaml(REPO / f"config/presets/{name}.yaml"), paper)
        columns[name] = lex_rows(view, None) if paper == "lex" else rf_rows(view, experiment, "every")
    for group in KEPT[paper]:
        assert columns["gpu"][group] == pytest.approx(columns["paper"][group], rel=1e-6), group
    if paper == "lex":  # and closer to the paper than workstation in tokens per parameter
        work = lex_rows(paper_view(read_yaml(REPO / "config/presets/workstation.yaml"), paper), None)
        key = "tokens per non-embedding parameter"
        assert work[key] < columns["gpu"][key] < columns["paper"][key]
