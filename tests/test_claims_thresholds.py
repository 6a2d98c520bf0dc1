"""lenex.claims.thresholds: a claim's threshold from the paper's own effects (half the median log
effect of its cells), on hand-computed values; direction; which override wins; the band of a claim
of absence; the paper's own cells below the threshold; the generated docs table; the same values from every preset's cells."""
import math
from statistics import median

import pytest
import yaml

from lenex.claims import predicates as P
from lenex.claims import thresholds as T
from lenex.claims.evaluate import BASIS, evaluate_claim, load_claims, threshold_basis, thresholds_of, words_used
from lenex.claims.render import load_cells
from test_workflow import REPO

SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"
LN = math.log


def test_half_the_median_log_effect_by_hand():
    assert T.derived_value([LN(2), LN(4), LN(8)]) == pytest.approx(2.0)  # median ln 4 -> exp(ln 4 / 2)
    assert T.derived_value([LN(2), LN(8)]) == pytest.approx(2.0)  # even count: the mean of the middle two
    assert T.derived_value([LN(1.31)] * 4 + [LN(100)] * 5) == pytest.approx(10.0)  # the mild cells do not set it
    assert T.derived_value([LN(1.02)], floor=1.25) == 1.25  # never below the word's default
    assert T.derived_value([LN(0.5), LN(0.8), LN(9)]) == 1.0  # a median against the direction: no threshold below 1


def test_the_rule_before_by_hand():  # sqrt of the mildest ratio, rounded down: the table's "old" column
    assert T.mildest_value([LN(36.54 / 15.12), LN(68.86 / 26.68)]) == 1.55
    assert T.mildest_value([LN(4.0), LN(9.0)]) == 2.0


@pytest.mark.parametrize("effects, error", [([], "at least one"), ([float("nan")], "not finite")])
def test_bad_effects_are_an_error(effects, error):
    with pytest.raises(ValueError, match=error):
        T.derived_value(effects)


def test_direction_an_effect_leaf_is_at_least_or_not_below():
    check = {"all": [{"ratio_at_least": ["a", "b", "explodes"]}, {"ratio_below": ["c", "d", "explodes"]},
                     {"not": {"ratio_below": ["e", "f", "explodes"]}}, {"not": {"ratio_at_least": ["g", "h", "explodes"]}},
                     {"ratio_at_least": ["i", "j", "rescues"]}]}
    assert T.effect_pairs(check, "explodes") == [("a", "b"), ("e", "f")]
    assert T.effect_pairs(check, "rescues") == [("i", "j")]


def _cell(method, multiple, paper, dataset="d"):
    return {"section": dataset, "dataset": dataset, "corpus": dataset, "row": method, "method": method,
            "variant": method, "mask": "causal", "multiple": multiple, "paper_length": int(multiple * 512),
            "our_length": int(multiple * 64), "paper": paper, "ours": None, "status": "not computed",
            "paper_std": None, "paper_mark": None, "ours_std": None, "ours_mark": None, "n_seeds": None}


# The paper's x row rises x1.5, x4 and x8 over its L_tr cell; y stays within x1.2; z collapses x9.
TABLES = {"3": {"paper": "x", "table": "3", "extra": {}, "cells": [
    _cell("x", 1, 10.0), _cell("x", 2, 15.0), _cell("x", 4, 40.0), _cell("x", 8, 80.0),
    _cell("y", 1, 10.0), _cell("y", 8, 12.0), _cell("z", 1, 90.0), _cell("z", 2, 10.0)]}}
EXPLODES = {"all": [{"ratio_at_least": [f"t3/d/x@{k}", "t3/d/x@1", "explodes"]} for k in (2, 4, 8)]}
GRADUAL = {"ratio_below": ["t3/d/y@8", "t3/d/y@1", "explodes"]}


def _claim(check, **fields):
    return {"id": "c", "statement": "s", "source": "T3", "check": check, **fields}


def test_a_claim_of_an_effect_derives_its_threshold_from_its_own_cells_and_names_the_milder():
    t = T.claim_thresholds(_claim(EXPLODES), ["explodes"], TABLES)["explodes"]
    assert t.source == "derived" and t.value == pytest.approx(2.0)  # median of ln 1.5, ln 4, ln 8 is ln 4
    assert t.old == 1.22  # the rule before: sqrt(1.5), rounded down
    assert t.paper_below == (("t3/d/x@2", "t3/d/x@1", pytest.approx(1.5)),)
    assert "(3 cells: min x1.5 / median x4 / max x8)" in t.text() and "t3/d/x@2 / t3/d/x@1 (x1.5)" in t.text()
    record = evaluate_claim(_claim(EXPLODES), TABLES)
    # The x1.5 cell fails the paper at x2: the claim is checked as the paper words it, the paper's side
    # says where it fails, and our side still reads every cell.
    assert record["on_paper"] is False and record["paper_fails_on"] == ["t3/d/x@2", "t3/d/x@1"]
    assert record["thresholds_used"]["explodes"]["paper_below"] == [{"refs": ["t3/d/x@2", "t3/d/x@1"], "paper_ratio": 1.5}]
    assert "paper: fails on t3/d/x@2, t3/d/x@1" in record["evidence"] and "t3/d/x@2: paper 15.00" in record["evidence"]


def test_override_precedence_words_then_contrast_then_own_cells_then_default():
    lenders = {"boom": EXPLODES}
    words = {"explodes": {"value": 3.5, "why": "the paper's own 'at least 3.5x'"}}
    assert T.claim_thresholds(_claim(EXPLODES, thresholds=words), ["explodes"], TABLES)["explodes"].value == 3.5
    assert T.claim_thresholds(_claim(EXPLODES, thresholds=words), ["explodes"], TABLES)["explodes"].source == "words"
    borrowed = T.claim_thresholds(_claim(GRADUAL, thresholds={"explodes": {"from": "boom", "why": "set against boom"}}),
                                  ["explodes"], TABLES, lenders)["explodes"]
    assert borrowed.source == "borrowed" and borrowed.value == pytest.approx(2.0) and borrowed.lender == "boom"
    contrast = {"collapses": {"cells": [["t3/d/z@1", "t3/d/z@2"]], "why": "set against z's collapse"}}
    got = T.claim_thresholds(_claim({"ratio_below": ["t3/d/y@1", "t3/d/y@8", "collapses"]}, thresholds=contrast),
                             ["collapses"], TABLES)["collapses"]
    assert got.source == "contrast" and got.value == pytest.approx(3.0)  # sqrt(90 / 10)
    default = T.claim_thresholds(_claim(GRADUAL), ["explodes"], TABLES)["explodes"]
    assert default.source == "default" and default.value == P.THRESHOLDS["explodes"]
    # Without the paper's numbers (a hand-made claim evaluated on none), only defaults and the paper's words.
    assert T.claim_thresholds(_claim(EXPLODES), ["explodes"], None)["explodes"].value == P.THRESHOLDS["explodes"]


def test_a_claim_of_absence_takes_the_band_of_the_effect_it_is_set_against():
    # y's x1.2 is read against the x2.0 of the explosion it is set against, not the fixed default.
    claim = _claim(GRADUAL, thresholds={"explodes": {"from": "boom", "why": "set against boom"}})
    t = T.claim_thresholds(claim, ["explodes"], TABLES, {"boom": EXPLODES})["explodes"]
    assert t.value == pytest.approx(2.0) and t.paper_below == ()  # an absence leaf is never measured against it
    # "flat" / "comparable" keep their fixed bands: the rule derives only the words of an effect leaf.
    flat = {"all": [{"flat": ["t3/d/y@1", "t3/d/y@8"]}, *EXPLODES["all"]]}
    got = T.claim_thresholds(_claim(flat), ["flat", "explodes"], TABLES)
    assert got["flat"].source == "default" and got["flat"].value == P.THRESHOLDS["flat"]


def test_borrowing_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="from names no claim of this file: 'nope'"):
        T.claim_thresholds(_claim(GRADUAL, thresholds={"explodes": {"from": "nope", "why": "x" * 10}}),
                           ["explodes"], TABLES, {"boom": EXPLODES})
    with pytest.raises(ValueError, match="asserts no 'explodes' effect"):
        T.claim_thresholds(_claim(GRADUAL, thresholds={"explodes": {"from": "calm", "why": "x" * 10}}),
                           ["explodes"], TABLES, {"calm": GRADUAL})


def test_load_claims_refuses_a_from_naming_no_claim(tmp_path):
    path = tmp_path / "one.yaml"
    claim = {**_claim(GRADUAL, thresholds={"explodes": {"from": "nope", "why": "set against nope"}}),
             "statement": "ALiBi rises gradually"}
    path.write_text(yaml.safe_dump({"paper": "lex", "claims": [claim]}))
    with pytest.raises(ValueError, match="claim 'c': threshold 'explodes': from names no claim"):
        load_claims(path, SCHEMA)


def test_the_docs_table_is_current():  # python -m lenex.claims.threshold_table --write-docs
    from lenex.claims import threshold_table

    text = threshold_table.DOCS.read_text(encoding="utf-8")
    assert threshold_table.docs_with_table(text, threshold_table.table_rows()) == text


@pytest.mark.parametrize("paper", T.PAPERS)
def test_a_claims_thresholds_are_the_same_from_the_bundled_numbers_and_a_presets_cells(paper):
    """A loaded claim derives from the bundled paper numbers, whatever cells it is evaluated on; the
    paper side of a preset's cells files (each leaf's e_paper) is those numbers, so the two agree."""
    cells = sorted((REPO / "results/workstation/tables" / paper).glob("*.cells.json"))
    assert cells, "the committed workstation cells files are missing"
    tables = load_cells(cells)
    for claim in load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)["claims"]:
        if not words_used(claim):
            continue
        lenders = claim[BASIS]["lenders"]
        ours = {w: (t.value, t.paper_below) for w, t in T.claim_thresholds(claim, words_used(claim), tables, lenders).items()}
        bundled = {w: (t.value, t.paper_below) for w, t in threshold_basis(claim, tables).items()}
        assert ours == bundled, claim["id"]
        assert thresholds_of(claim) == {**P.THRESHOLDS, **{w: v for w, (v, _) in bundled.items()}}


def test_no_effect_claim_holds_below_half_the_papers_median():
    """The issue's requirement, on every claims file: each derived threshold is at least
    exp(median / 2) of the paper's log effects it is derived from."""
    for paper in T.PAPERS:
        for claim in load_claims(REPO / "config/claims" / f"{paper}.yaml", SCHEMA)["claims"]:
            for t in threshold_basis(claim).values():
                if t.source in ("derived", "borrowed", "contrast"):
                    assert t.value >= math.exp(median(t.effects) / 2) - 1e-12, claim["id"]
