"""lenex.scale_study.predictions: what an emergence reading predicts against one GPU-day, by hand,
and the budgets the presets give (the LEX paper's 50,000 steps of 512 x 1,024 tokens)."""
from pathlib import Path

import pytest

import yaml

from lenex.scale_study.predictions import claim_budgets, config_files, page, rows, says

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
            {"name": name, "model": {"train_length": 8}, "train": {"steps": 10, "batch_size": 2}}))
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


def test_a_claim_naming_a_variant_its_paper_lacks_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"claim 'c' reads variants \['nope'\], which are not variants of toy"):
        claim_budgets(_config(tmp_path, ["long", "nope"]))


def test_a_reading_of_an_unknown_claim_is_named_and_a_page_has_a_row_per_reading():
    claims = {"lex-alibi-rises-beyond-4x": {"paper": "lex", "budgets": {"workstation": 4, "gpu": 8, "paper": 16}}}
    with pytest.raises(ValueError, match="claim 'nope', which no config/claims file has"):
        rows([{**_reading(), "claim": "nope"}], claims)
    found = rows([_reading(cls="flat"), _reading(variable="n_head")], claims)
    text = page(found)
    assert text.count("| lex-alibi-rises-beyond-4x |") == 2 and "does not grow (flat)" in text
    # a corpus sweep's row gives its paired difference where a trend gives its slope
    corpus = {**_reading(variable="corpus"), "trend": None, "class": "differs", "values": ["pg22", "arxiv"],
              "contrast": {"mean": 0.25, "low": 0.1, "high": 0.4, "seeds": 3}}
    assert "| differs | e(arxiv) − e(pg22) = +0.2500 (+0.1000, +0.4000) | — |" in page(rows([corpus], claims))


def test_the_rules_inputs_are_every_file_the_predictions_read():
    files = config_files(ROOT)
    assert all((ROOT / f).is_file() for f in files)
    assert {"config/presets/gpu.yaml", "config/claims/lex.yaml", "config/experiments/segmented.yaml"} <= set(files)
