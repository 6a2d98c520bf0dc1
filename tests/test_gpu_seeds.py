"""The gpu preset's seeds (benchmarks/gpu_seeds.py, docs/gpu.md "Seeds where a forecast lies near
its threshold"): 'near' by hand, the forms read, a claim's models from its cells, the decision; and
the committed preset and page are the rule's over the committed points."""
import math

import pytest

from benchmarks import gpu_seeds as G
from benchmarks.preset_cost import extra_seeds, model_shape
from lenex.files import read_yaml
from lenex.scale_study.forecast import Estimate
from test_workflow import REPO


def _est(mean, low, high):
    return Estimate(mean, low, high, "h")


def test_near_is_an_interval_holding_a_finite_boundary():
    below_zero = (-math.inf, 0.0)
    assert G.boundaries(below_zero) == [0.0] and G.boundaries((0.0, math.log(1.55))) == [0.0, math.log(1.55)]
    assert G.near(_est(-0.004, -0.032, 0.024), below_zero)  # rf-sandwich's shape: straddles 0
    assert not G.near(_est(-0.016, -0.035, 0.003), (0.0198, math.inf))  # wholly below the boundary
    assert G.near(_est(0.5, 0.4, 0.5), (0.0, 0.5))  # touching the upper end counts
    assert G.near(_est(0.1, None, None), below_zero) is None and G.near(None, below_zero) is None


def _result(separated, linear, power):
    return {"choice": {"chosen": "linear", "separated": separated},
            "targets": {"gpu": {"forms": {"linear": {"estimate": linear}, "power": {"estimate": power}}}}}


def test_the_chosen_form_alone_where_separated_else_every_form():
    region = (0.5, math.inf)
    away, across = _est(0.1, 0.0, 0.2), _est(0.45, 0.4, 0.6)
    assert G.series_near(_result(True, away, across), region) == {"forms": {"linear": False}, "near": False}
    assert G.series_near(_result(False, away, across), region)["near"] is True
    assert G.series_near(_result(False, away, _est(0.3, None, None)), region)["near"] is None


EXPERIMENT = {"tables": {"t3": {"table": 3, "sections": [
    {"dataset": "arxiv", "corpus": "arxiv", "rows": [{"method": "sandwich", "variant": "sandwich"},
                                                     {"method": "alibi", "variant": "alibi"}]},
    {"dataset": "pg22", "rows": [{"method": "sandwich", "variant": "sandwich"}]}]}}}


def test_a_claims_models_are_its_cells_corpus_and_variant():
    claim = {"id": "c", "check": {"all": [{"less": ["t3/arxiv/sandwich@2,4", "t3/arxiv/sandwich@1,1"]},
                                          {"less": ["t3/pg22/sandwich@2", "t3/arxiv/alibi@2"]}]}}
    assert G.cell_models(claim, EXPERIMENT, per_variant=False) == ["arxiv/alibi", "arxiv/sandwich", "pg22/sandwich"]
    assert G.cell_models(claim, EXPERIMENT, per_variant=True) == ["alibi", "sandwich"]
    with pytest.raises(ValueError, match=r"claim 'c': cell t3/arxiv/rope@2 names no row"):
        G.cell_models({"id": "c", "check": {"less": ["t3/arxiv/rope@2", "t3/arxiv/alibi@2"]}}, EXPERIMENT, False)


def test_the_decision_is_the_papers_hours_against_the_bound():
    assert G.paper_decision(18.07, 1.79) == {"now": 18.07, "added": 1.79, "total": pytest.approx(19.86), "fits": True}
    assert not G.paper_decision(19.0, 1.5)["fits"]
    with pytest.raises(ValueError, match="cannot be negative"):
        G.paper_decision(1.0, -0.1)


def test_the_cost_model_counts_the_seeds_power_seeds_add():
    view = {"name": "p", "experiment": {"seeds": 1, "power_seeds": {"arxiv/sandwich": 3, "github/sandwich": 3,
                                                                    "arxiv/alibi": 2}}}
    assert extra_seeds(view, ["sandwich"]) == 4 and extra_seeds(view, ["sandwich", "alibi"]) == 5
    assert extra_seeds({"name": "p", "experiment": {"seeds": 2}}, ["sandwich"]) == 0
    with pytest.raises(ValueError, match="costed as one group"):
        model_shape({}, "segmented", "gpt2")


def test_the_committed_preset_and_page_are_the_rules():
    """The gpu preset's extra seeds are exactly the near claims' models at 3, within the bound, and
    results/gpu/seeds.md is this code's page over the committed points (a new sweep point that
    moves a forecast fails here until the page, and by the rule the preset, follow)."""
    result = G.plan()
    preset = read_yaml(REPO / "config/presets/gpu.yaml")
    named = {(e["paper"], m["model"]) for e in result["claims"].values() for m in e["models"]}
    extra = {(paper, key) for paper, view in preset["papers"].items()
             for key in ((view.get("experiment") or {}).get("power_seeds") or {})}
    fits = {paper for paper, d in result["papers"].items() if d["fits"]}
    assert extra == {(p, m) for p, m in named if p in fits} and not result["unread"]
    assert all(m["seeds"] >= G.SEEDS for e in result["claims"].values() if e["paper"] in fits for m in e["models"])
    assert (REPO / "results/gpu/seeds.md").read_text(encoding="utf-8") == G.page(result)
