"""Defects of the verdicts (issue 49), on hand-made cells: comparisons that cannot fail are found
from the recorded model (its reach, an ERF's measured length), marked and not counted; a claim
all of whose comparisons cannot fail is by construction; a fix of an absent failure is untestable;
a helps-claim inside its smallest effect of interest is negligible; a scale study that tried no
budget is not 'every budget tried'; the summary groups what does not hold by measured reason."""
import pytest

from lenex.claims.cannot_fail import erf_within_cap, same_output, why_cannot_fail
from lenex.claims.evaluate import evaluate_claim, evaluate_paper
from lenex.claims.scale import Budget, scale_note
from lenex.claims.summary import non_holding_table, reason_of
from lenex.receptive_field.table import last_token_reach
from test_claims_verdicts import _cell, seeded


def _window_cell(multiple, length, seeds):
    cell = _cell("w", multiple, None, seeds)
    return {**cell, "corpus": "d", "variant": "window-80", "our_length": length}


def _window_tables(reach=120):
    cells = [_window_cell(1, 64, seeded(50.0, 49.0, 51.0)), _window_cell(2, 128, seeded(50.1, 49.1, 51.1)),
             _window_cell(4, 256, seeded(50.1, 49.1, 51.1))]
    return {"3": {"paper": "x", "table": "3", "cells": cells, "extra": {"reach": {"d/window-80": reach}}}}


def test_lengths_past_the_recorded_reach_are_one_output():
    tables = _window_tables()
    assert same_output(("t3/d/w@2", "t3/d/w@4"), tables).startswith("one model output repeated: d window-80's last "
                                                                      "token sees at most 120 tokens")
    assert same_output(("t3/d/w@1", "t3/d/w@2"), tables) is None  # 64 tokens: less than it sees
    assert same_output(("t3/d/w@2", "t3/d/w@4"), _window_tables(reach=200)) is None  # 128 < 200
    assert why_cannot_fail("less", ("t3/d/w@2", "t3/d/w@4"), tables) is None  # an order of one output can fail


def test_the_reach_is_read_from_each_models_recorded_config():
    records = [{"corpus": "a", "variant": "w", "model_config": {"n_layer": 4, "mask_options": {"window": 30}}},
               {"corpus": "a", "variant": "alibi", "protocol": "cache-window", "window": 256,
                "model_config": {"n_layer": 4, "mask_options": {}}},
               {"corpus": "a", "variant": "rope", "model_config": {"n_layer": 4, "mask_options": {}}}]
    assert last_token_reach(records) == {"a/alibi": 1024, "a/w": 120}


def test_an_erf_compared_at_its_measured_length_cannot_fail():
    row = {"corpus": "a", "variant": "m", "erf": 250.0, "erf_seeds": {"1": 249, "2": 251}, "trf": None,
           "train_length": 64, "length": 256}
    tables = {"1": {"table": "1", "cells": [], "extra": {"erf": [row]}},
              "2": {"table": "2", "cells": [], "extra": {"erf": [{**row, "variant": "m2", "train_length": 256}]}}}
    assert "measured on 256 tokens, so it cannot exceed 256" in erf_within_cap("at_most", ("t1/erf/a/m", "t2/ltr/a/m2"),
                                                                             tables)
    assert erf_within_cap("at_most", ("t1/erf/a/m", "t1/ltr/a/m"), tables) is None  # L_tr 64 < 256: a real comparison


def test_comparisons_that_cannot_fail_are_marked_and_not_counted():
    claim = {"id": "flat", "statement": "the window row is flat", "source": "T3",
             "check": {"flat": ["t3/d/w@1,2,4"]}}
    record = evaluate_claim(claim, _window_tables())
    marked = [p for p in record["parts"] if p.get("cannot_fail")]
    assert [p["refs"] for p in marked] == [["t3/d/w@2", "t3/d/w@4"]] and len(record["parts"]) == 3
    assert "1 of 3 comparisons cannot fail and are not counted toward its hold" in record["evidence"]
    only = evaluate_claim({**claim, "check": {"flat": ["t3/d/w@2,4"]}}, _window_tables())
    assert only["verdict"] == "by-construction" and "by construction (from the recorded models)" in only["evidence"]


def _helps(a_seeds, b_seeds, extra=None):
    tables = {"3": {"paper": "x", "table": "3", "cells": [_cell("a", 1, 20.0, a_seeds), _cell("b", 1, 21.0, b_seeds)],
                    "extra": {}}}
    claim = {"id": "helps", "statement": "a helps over b", "source": "T3", "check": {"less": ["t3/d/a@1", "t3/d/b@1"]},
             "smallest_effect": {"value": 0.01, "why": "the paper's comparable differences"}, **(extra or {})}
    return claim, tables


def test_a_helps_claim_inside_its_smallest_effect_is_negligible():
    claim, tables = _helps(seeded(20.01, 30.016, 40.02), seeded(20.0, 30.0, 40.0))  # +0.05%, every seed
    record = evaluate_claim(claim, tables)
    assert record["verdict"] == "contradicted" and record["negligible"].startswith("every effect's interval lies")
    claim, tables = _helps(seeded(21.0, 31.5, 42.0), seeded(20.0, 30.0, 40.0))  # +5%: not negligible
    assert "negligible" not in evaluate_claim(claim, tables)


def test_a_fix_of_an_absent_failure_is_untestable():
    claim, tables = _helps(seeded(19.0, 28.5, 38.0), seeded(20.0, 30.0, 40.0))  # a 5% help: holds
    failure = {"id": "fails", "statement": "b fails first", "source": "T3", "check": {"less": ["t3/d/b@1", "t3/d/a@1"]}}
    fix = {**claim, "given": {"claims": ["fails"], "why": "the fix needs the failure"}}
    records = evaluate_paper({"claims": [failure, fix]}, tables)
    assert evaluate_claim(fix, tables)["verdict"] == "holds"
    assert records[1]["verdict"] == "untestable" and "fails is contradicted" in records[1]["evidence"]
    assert reason_of(records[1]) == "untestable: the failure it fixes is absent on ours"


def test_a_study_that_tried_no_budget_does_not_say_every_budget_tried():
    spec = {"phenomena": ["rope-blowup"], "multiples": [8], "threshold": "explodes"}
    note = scale_note(spec, Budget(1_000, "gpt2", ()))
    assert note.why.startswith("contradicted; the scale study has tried no budget of these models")
    assert note.never_seen_budgets == ()


def test_the_summary_groups_what_does_not_hold_by_measured_reason():
    records = [{"id": "c1", "verdict": "contradicted", "sweep": {"variables": ["budget"]}},
               {"id": "c2", "verdict": "contradicted", "sweep": {"variables": ["budget"]}},
               {"id": "i1", "verdict": "inconclusive", "power": {"decides": "holds", "leaning": {"significantly_against": 2}}},
               {"id": "h", "verdict": "holds"}]
    table = non_holding_table([{"paper": "p", "claims": records}])
    assert "| contradicted, not yet measured: a budget sweep would | c1 (p), c2 (p) | 2 |" in table
    assert "| inconclusive, with comparisons significantly against the claim at their own level | i1 (p) | 1 |" in table
    assert not any("h (p)" in line for line in table)


def test_a_given_claim_that_does_not_exist_is_an_error_of_the_claims_file(tmp_path):
    import yaml
    from lenex.claims.evaluate import load_claims
    path = tmp_path / "lex.yaml"
    path.write_text(yaml.safe_dump({"paper": "lex", "claims": [
        {"id": "fix", "statement": "a fix of a failure", "source": "T2", "untestable": {"ours": "none here"},
         "given": {"claims": ["no-such-claim"], "why": "the failure it fixes"}}]}))
    with pytest.raises(ValueError, match="given names no claim of this file: 'no-such-claim'"):
        load_claims(path)
