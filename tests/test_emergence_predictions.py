"""lenex.scale_study.predictions: what an emergence record predicted under the old rule, by hand;
the budgets and tokens per parameter the presets give (the LEX paper's 50,000 steps of 512 x 1,024
tokens at 24 x 1024); the region a claim's check sets for an effect; a series read from points;
and the page of forecasts."""
import math
from pathlib import Path

import pytest

import yaml

from lenex.scale_study.predictions import (check_leaves, claim_budgets, config_files, effect_refs, loss_rows,
                                           loss_section, page, record_files, rows, says, series_of)

ROOT = Path(__file__).resolve().parents[1]


def _reading(cls="grows", crossing=None, variable="train_tokens", trend=True):
    """An emergence record whose old-rule (`pooled`) reading is `cls` and `crossing`; the rule's own
    class (`class`) is another, which the old rule's reading must not read."""
    pooled = {"class": cls, "crossing": crossing, "trend": {"slope": 0.01, "low": 0.005, "high": 0.015}}
    return {"claim": "lex-alibi-rises-beyond-4x", "source": "sweep lex-budget", "subject": "lex-alibi",
            "variable": variable, "class": "shrinks", "note": "", "pooled": pooled if trend else None,
            "trend": {"slope": -0.01, "low": -0.02, "high": -0.001, "seeds": 3} if trend else None}


@pytest.mark.parametrize("reading, expected", [
    (_reading(crossing={"value": 1e8, "low": 1e7, "high": 5e8}), "shows within one GPU-day"),
    (_reading(crossing={"value": 1e8, "low": 1e7, "high": 5e9}), "may show within one GPU-day"),
    (_reading(crossing={"value": 1e8, "low": 1e7, "high": None}), "may show within one GPU-day"),
    (_reading(crossing={"value": 5e9, "low": 1e9, "high": 1e12}), "needs more than one GPU-day (within the paper's"),
    (_reading(crossing={"value": 5e11, "low": 1e9, "high": 1e12}), "needs more than one GPU-day (beyond the paper's"),
    (_reading(cls="flat"), "does not grow (flat): no budget predicted"),
    (_reading(cls="grows", crossing=None), "grows, but its line never reaches the paper's effect"),
    (_reading(variable="n_head"), "not a budget trend (n_head): predicts no budget"),
    (_reading(cls=None, trend=False), "no trend: too few points"),
])
def test_what_a_reading_predicts_by_hand(reading, expected):
    assert says(reading, gpu_tokens=10 ** 9, paper_tokens=10 ** 10).startswith(expected)


def test_each_claims_budgets_are_its_own_models_tokens_at_the_presets():
    claims = claim_budgets(ROOT / "config")
    lex = claims["lex-alibi-rises-beyond-4x"]
    assert lex["paper"] == "lex"
    assert lex["budgets"]["paper"] == 50_000 * 512 * 1024 and lex["budgets"]["workstation"] == 1024 * 16 * 256
    assert lex["budgets"]["workstation"] < lex["budgets"]["gpu"] < lex["budgets"]["paper"]
    # Table 3's ALiBi and the Delta = 0 slope model: the paper's 50,000 steps of 32 x 512 (not the
    # shorter-L_tr fixes' 32 x 128), at workstation Table 3's group `seeds`, 1,024 steps of 16 x 64.
    rf = claims["rf-alibi-rises-beyond-ltr"]
    assert rf["paper"] == "receptive-field"
    assert rf["budgets"]["paper"] == 50_000 * 32 * 512 and rf["budgets"]["workstation"] == 1024 * 16 * 64
    # It names no scale.variants: its cells (t3/<corpus>/sandwich@m) are Table 3's Sandwich rows.
    assert claims["rf-sandwich-improves-beyond-ltr"]["budgets"] == rf["budgets"]


def _config(tmp, claim_variants):
    for name in ("workstation", "gpu", "paper"):
        (tmp / "presets").mkdir(exist_ok=True)
        (tmp / "presets" / f"{name}.yaml").write_text(yaml.safe_dump(
            {"name": name, "model": {"train_length": 8, "n_layer": 1, "d_model": 4, "d_ff": 8},
             "train": {"steps": 10, "batch_size": 2}}))
    (tmp / "experiments").mkdir()
    rows = [{"method": "s", "variant": "short"}, {"method": "l", "variant": "long"}]
    (tmp / "experiments" / "toy.yaml").write_text(yaml.safe_dump(
        {"variants": {"short": {"train_length_multiple": 1}, "long": {"train_length_multiple": 4}},
         "tables": {"table1": {"table": 1, "sections": [{"dataset": "a", "rows": rows}]}}}))
    (tmp / "claims").mkdir()
    (tmp / "claims" / "toy.yaml").write_text(yaml.safe_dump(
        {"claims": [{"id": "c", "scale": {"variants": claim_variants}}, {"id": "d"},
                    {"id": "e", "check": {"less": ["t1/a/l@1,2", "t1/a/l@4"]}}]}))
    return tmp


def test_a_claim_reads_its_named_variants_else_its_cells_rows_else_the_papers_fewest(tmp_path):
    claims = claim_budgets(_config(tmp_path, ["long"]))
    assert claims["c"]["budgets"]["paper"] == 10 * 2 * 8 * 4  # scale.variants: long
    assert claims["e"]["budgets"]["paper"] == 10 * 2 * 8 * 4  # its cells: row l of Table 1, long
    assert claims["d"]["budgets"]["paper"] == 10 * 2 * 8      # reads no cell: the fewest, short
    # 1 x (4 x 4^2 + 2 x 4 x 8) = 128 non-embedding parameters: 160 / 128 tokens each, the least trained
    assert claims["d"]["x"]["paper"] == pytest.approx(math.log2(160 / 128))


def test_a_claim_naming_a_variant_its_paper_lacks_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"claim 'c' reads variants \['nope'\], which are not variants of toy"):
        claim_budgets(_config(tmp_path, ["long", "nope"]))


def test_the_paper_point_of_a_claim_is_its_models_tokens_per_non_embedding_parameter():
    claims = claim_budgets(ROOT / "config")
    # LEX: 24 x 1024, d_ff 4096: 24 (4 x 1024^2 + 2 x 1024 x 4096) = 301,989,888; 50,000 x 512 x 1,024 tokens
    assert claims["lex-alibi-rises-beyond-4x"]["x"]["paper"] == pytest.approx(math.log2(26_214_400_000 / 301_989_888))


RF_SHIFT = {"id": "c", "thresholds": {"explodes": {"value": 3.11, "why": "w"}},
            "check": {"all": [{"ratio_at_least": ["t1/arxiv/s6@2", "t1/arxiv/s6@1", "explodes"]},
                              {"any": [{"less": ["t1/arxiv/s6@1,4", "t1/arxiv/s6@2,8"]}]},
                              {"ratio_below": ["t1/arxiv/s0@2", "t1/arxiv/s0@1", "explodes"]}]}}


def test_the_checks_leaves_reading_an_effects_two_cells_set_its_region():
    effect = {"numerator": 2, "denominator": 1, "paper": {"table": 1, "dataset": "arxiv", "method": "s6"}}
    num, den = effect_refs(effect)
    assert (num, den) == ("t1/arxiv/s6@2", "t1/arxiv/s6@1")
    leaves = check_leaves(RF_SHIFT, num, den)
    # the claim's own 3.11 (thresholds_of), and `less [@1, @2]` (expanded from @1,4 / @2,8): e > 0
    assert [(k, w) for k, w, _ in leaves] == [("at_least", 3.11), ("above_zero", None)]
    assert check_leaves(RF_SHIFT, "t1/arxiv/s6@8", "t1/arxiv/s6@1") == []
    # read the other way round, a ratio's bound inverts
    assert [(k, w) for k, w, _ in check_leaves(RF_SHIFT, den, num)][0] == ("below", pytest.approx(1 / 3.11))
    with pytest.raises(ValueError, match="under `not` has no region"):
        check_leaves({"id": "n", "check": {"not": {"less": [den, num]}}}, num, den)


def test_a_series_is_each_seeds_points_on_tokens_per_non_embedding_parameter():
    model = {"n_layer": 2, "d_model": 64, "d_ff": 256}  # 2 (4 x 64^2 + 2 x 64 x 256) = 98,304
    def point(seed, tokens, ppl2):
        return {"phenomenon": "m", "seed": seed, "train_tokens": tokens, "train_length": 64, "model_config": model,
                "last_token": {"ppl": {"64": 10.0, "128": ppl2}}}
    records = [point(2, 98_304 * 8, 20.0), point(1, 98_304 * 4, 10.0), point(1, 98_304 * 2, 5.0),
               {"phenomenon": "other"}]
    found = series_of(records, {"numerator": 2, "denominator": 1, "protocol": "last-token"}, "m")
    assert list(found) == [1, 2]
    assert found[1] == [(1.0, pytest.approx(math.log(0.5))), (2.0, pytest.approx(0.0))]
    assert found[2] == [(3.0, pytest.approx(math.log(2.0)))]


def test_a_page_forecasts_each_series_and_keeps_the_old_rules_reading(monkeypatch):
    claims = {"c": {"paper": "p", "budgets": {"workstation": 4, "gpu": 8, "paper": 16},
                    "x": {"workstation": 0.0, "gpu": 2.5, "paper": 1.0}}}
    effect = {"numerator": 2, "denominator": 1, "paper": {"table": 1, "dataset": "arxiv", "method": "s6"}}
    # three seeds, e = 0.1 x + seed / 100 at x = 0, 1, 2: slope 0.1 in every seed
    series = {s: [(x, 0.1 * x + s / 100) for x in (0.0, 1.0, 2.0)] for s in (1, 2, 3)}
    item = {"claim": "c", "source": "sweep s", "subject": "m", "variable": "train_tokens", "effect": effect,
            "series": series}
    old = [{"claim": "c", "source": "sweep s", "subject": "m", "variable": "train_tokens", "class": "grows",
            "trend": {"slope": 0.1}, "pooled": {"class": "flat", "trend": {"slope": 0.0}, "crossing": None}}]
    stage = {"x": 4.0, "claims": ["c"], "what": "a toy stage"}
    with pytest.raises(ValueError, match="claim 'nope', which no config/claims file has"):
        rows([{**item, "claim": "nope"}], claims, {"c": RF_SHIFT}, stage, old)
    monkeypatch.setattr("lenex.scale_study.sweeps.paper_cells_effect", lambda cells: 2.0)
    found = rows([item], claims, {"c": RF_SHIFT}, stage, old)
    r = found[0]["result"]
    assert r["class"] == "grows" and r["trend"].mean == pytest.approx(0.1)
    assert r["targets"]["gpu"]["forms"]["linear"]["estimate"].mean == pytest.approx(0.27)  # 0.25 + 0.02
    assert r["targets"]["gpu"]["verdict"] == "contradicted"  # far below ln 3.11
    assert r["targets"]["stage"]["verdict"] == "cannot extrapolate"  # two doublings beyond x = 2, the paper's x within
    assert r["anchor"]["forms"]["linear"].mean == pytest.approx(0.12)  # the paper's x = 1: 0.1 + 0.02
    text = page(found, stage)
    assert "| c | sweep s, m | " in text and "Old rule (one pooled line to the paper's full effect): does not grow" in text


def test_the_rules_inputs_are_every_file_the_predictions_read():
    files = config_files(ROOT) + record_files(ROOT)
    assert all((ROOT / f).is_file() for f in files)
    assert "results/scale-study/sweeps/rf-shift-budget/points/rf-alibi-shift-6__train_tokens-2097152__seed1.json" in files
    assert {"config/presets/gpu.yaml", "config/claims/lex.yaml", "config/experiments/segmented.yaml"} <= set(files)


ROPE_BLOW_UP = {"paper": {"paper": "lex", "table": 2, "dataset": "pg22", "method": "roformer", "numerator": 2048,
                          "denominator": 1024}}  # the paper's own effect is positive (RoPE's ppl rises ~x2.6)


def test_the_loss_axis_trend_per_nat_given_up_by_hand():
    # seed 1: e 0.1 at loss 5.0, 0.3 at 4.0; seed 2: 0.2 at 5.2, 0.4 at 4.2: each +0.2 per nat given up
    series = {1: [(4.0, 0.3), (5.0, 0.1)], 2: [(4.2, 0.4), (5.2, 0.2)]}
    found = [{"claim": "lex-absolute-rope-blow-up", "source": "sweep lex-budget", "subject": "lex-rope",
              "effect": ROPE_BLOW_UP, "series": series},
             {"claim": "lex-absolute-rope-blow-up", "source": "sweep lex-corpus", "subject": "lex-rope",
              "effect": ROPE_BLOW_UP, "series": None}]  # not a budget trend: no row
    (row,) = loss_rows(found)
    assert (row["seeds"], row["points"], row["loss"]) == (2, 4, (4.0, 5.2))
    assert row["trend"].slope.mean == pytest.approx(0.2)
    assert row["trend"].label == "grows"  # toward the paper's (positive) side as the loss falls
    line = loss_section([row])[-1]
    assert line == "| lex-absolute-rope-blow-up | sweep lex-budget, lex-rope | 2, 4 | 4.000 to 5.200 | +0.200 (+0.200, +0.200) | grows |"
    # the effect falling as the loss falls is "shrinks", a point per seed no trend
    falling = {1: [(4.0, 0.1), (5.0, 0.3)], 2: [(4.2, 0.2), (5.2, 0.4)]}
    assert loss_rows([{**found[0], "series": falling}])[0]["trend"].label == "shrinks"
    assert loss_rows([{**found[0], "series": {1: [(4.0, 0.1)]}}])[0]["trend"] is None
