"""lenex.scale_study.predictions: what an emergence reading predicts against one GPU-day, by hand,
and the budgets the presets give (the LEX paper's 50,000 steps of 512 x 1,024 tokens)."""
from pathlib import Path

import pytest

from lenex.scale_study.predictions import claim_papers, page, preset_budgets, rows, says

ROOT = Path(__file__).resolve().parents[1]


def _reading(cls="grows", crossing=None, variable="train_tokens", trend=True):
    return {"claim": "lex-alibi-rises-beyond-4x", "source": "sweep lex-budget", "subject": "lex-alibi",
            "variable": variable, "class": cls, "crossing": crossing, "note": "",
            "trend": {"slope": 0.01, "low": 0.005, "high": 0.015} if trend else None}


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


def test_the_presets_budgets_and_the_claims_papers():
    budgets = preset_budgets(ROOT / "config", ["lex"])["lex"]
    assert budgets["paper"] == 50_000 * 512 * 1024 and budgets["workstation"] == 1024 * 16 * 256
    assert budgets["workstation"] < budgets["gpu"] < budgets["paper"]
    papers = claim_papers(ROOT / "config")
    assert papers["lex-alibi-rises-beyond-4x"] == "lex" and papers["rf-alibi-rises-beyond-ltr"] == "receptive-field"


def test_a_reading_of_an_unknown_claim_is_named_and_a_page_has_a_row_per_reading():
    budgets = {"lex": {"workstation": 4, "gpu": 8, "paper": 16}}
    with pytest.raises(ValueError, match="claim 'nope', which no config/claims file has"):
        rows([{**_reading(), "claim": "nope"}], {}, budgets)
    found = rows([_reading(cls="flat"), _reading(variable="n_head")], {"lex-alibi-rises-beyond-4x": "lex"}, budgets)
    text = page(found)
    assert text.count("| lex-alibi-rises-beyond-4x |") == 2 and "does not grow (flat)" in text
