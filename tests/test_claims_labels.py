"""One label per kind of evidence, on hand-made cells (docs/claims.md): a check whose every cell is an
exact curve of an equation is by construction, never a hold; a comparison reading one measurement of
one model (one seed's ERF, a recent share, a figure's statistic, a timing) is inconclusive, "one
replicate", with the exact reading shown beside it, and no power figure; an ERF compared with a bound
at or above the most it can be (its measured length, or its TRF) cannot fail, while an ERF of a model
that sees the whole window compared with a bound below it can, and stays counted; a claim the paper's
own numbers contradict in part lists where, is checked whole on ours, and leaves the bar."""
import pytest

from lenex.claims.cannot_fail import equations_only, erf_cap, erf_within_cap, why_cannot_fail
from lenex.claims.intervals import ONE_REPLICATE, Sample
from lenex.claims.leaves import CONTRADICTED, HOLDS, INCONCLUSIVE
from lenex.claims.power import claim_power, leaf_power
from lenex.claims.refs import sample
from lenex.claims.render import paper_side, verdict_text
from lenex.claims.summary import against_bar, paper_counts, reason_of, verdict_counts
from lenex.claims.evaluate import evaluate_claim
from test_claims_verdicts import _cell, _ours, seeded


def _figures():
    return {"f2": {"figure": "2", "exact": True, "values": {"rope": 108.0, "xpos": 0.04}},
            "f8": {"figure": "8", "exact": True, "values": {"far": -7.9, "near": -6.0}},
            "f3": {"figure": "3", "values": {"before": 0.30, "after": 0.27}},
            "3": {"paper": "x", "table": "3", "extra": {},
                  "cells": [_cell("a", 1, 20.0, seeded(20.0, 21.0, 22.0))]}}


def test_a_check_of_exact_curves_only_is_by_construction_and_never_a_hold():
    check = {"all": [{"less": ["f2/xpos", "f2/rope"]}, {"less": ["f8/far", "f8/near"]}]}
    record = _ours(check, _figures())
    assert record["verdict"] == "by-construction" and record["outcome"] == HOLDS
    assert all(p["cannot_fail"].startswith("every cell is an exact curve of the paper's equation (Figure 2")
               or p["cannot_fail"].startswith("every cell is an exact curve of the paper's equation (Figure 8")
               for p in record["parts"])
    assert "by construction (from the recorded models): every cell is an exact curve" in record["evidence"]
    # Whatever the combinator: an `any` or a `not` of equation cells is no more evidence about a model.
    assert _ours({"any": [{"less": ["f2/rope", "f2/xpos"]}, {"less": ["f8/far", "f8/near"]}]},
                 _figures())["verdict"] == "by-construction"
    # The equation's own outcome stays visible, a failing one too.
    failing = _ours({"less": ["f2/rope", "f2/xpos"]}, _figures())
    assert failing["verdict"] == "by-construction" and failing["outcome"] == CONTRADICTED
    assert verdict_text(failing) == "by-construction (check: contradicted)"
    counts = verdict_counts([{**record, "on_paper": True}, failing])
    assert counts["by-construction"] == 2 and counts["holds"] == 0
    assert against_bar([{**record, "on_paper": True}])["on_paper"] == 0  # left out of the bar


def test_an_exact_curve_beside_a_model_cell_is_a_comparison_of_the_model():
    assert equations_only(["f2/rope", "t3/d/a@1"], _figures()) is None
    assert equations_only(["f3/before", "f3/after"], _figures()) is None  # a measured figure: not an equation
    record = _ours({"less": ["f2/rope", "t3/d/a@1"]}, {**_figures(), "f2": {**_figures()["f2"], "values": {"rope": 5.0}}})
    assert record["verdict"] == HOLDS and record["test"] == "t over 3 seeds against an exact value"
    assert not any(p.get("cannot_fail") for p in record["parts"])


def _erf_tables(seeds, trf=None, length=256, train_length=64, recent=0.79):
    row = {"corpus": "a", "variant": "m", "erf": sum(seeds.values()) / len(seeds), "erf_seeds": seeds,
           "n_seeds": len(seeds), "trf": trf, "train_length": train_length, "length": length, "recent_share": recent}
    long_ltr = {**row, "variant": "long", "train_length": 128, "erf_seeds": {"1": 100}, "erf": 100.0}
    return {"1": {"table": "1", "cells": [], "extra": {"erf": [row, long_ltr]}},
            "f11": {"figure": "11", "extra": {"erf": [row]}}}


def test_one_seeds_erf_is_one_replicate_and_its_seeds_are_paired_against_the_exact_l_tr():
    one = _erf_tables({"1": 240})
    assert sample("t1/erf/a/m", one) == Sample(240.0, single=True)
    assert sample("t1/ltr/a/m", one) == Sample(64.0, exact=True) and sample("t1/trf/a/m", _erf_tables(
        {"1": 40}, trf=64)) == Sample(64.0, exact=True)
    record = _ours({"less": ["t1/ltr/a/m", "t1/erf/a/m"]}, one)
    assert record["verdict"] == INCONCLUSIVE and record["test"] == ONE_REPLICATE and record["interval"] is None
    assert record["read_as_exact"] == HOLDS and record["power"] is None
    assert verdict_text(record) == ("inconclusive (one replicate; read as exact values: holds); "
                                    "no paired replicate: no n decides it")
    assert reason_of(record) == "inconclusive: one replicate (a measurement of one model has no interval)"
    three = _ours({"less": ["t1/ltr/a/m", "t1/erf/a/m"]}, _erf_tables(seeded(240, 238, 245)))
    assert three["verdict"] == HOLDS and three["test"] == "t over 3 seeds against an exact value"
    assert "read_as_exact" not in three


def test_a_recent_share_a_figure_statistic_and_a_timing_are_one_replicate():
    record = _ours({"value_at_most": ["f11/recent/a/m", "recent"]}, _erf_tables(seeded(240, 238, 245)),
                   words={"recent": 0.77})
    assert record["verdict"] == INCONCLUSIVE and record["test"] == ONE_REPLICATE
    assert record["read_as_exact"] == CONTRADICTED  # 0.79 > 0.77: the reading that once said contradicted
    figure = _ours({"less": ["f3/after", "f3/before"]}, _figures())
    assert figure["test"] == ONE_REPLICATE and figure["read_as_exact"] == HOLDS
    checks = {"5": {"table": "5", "cells": [], "extra": {"cache_window": {"min_speedup": 38.0,
                                                                          "max_abs_diff_vs_sliding_mask": 0.0}}}}
    assert sample("t5/check/min_speedup", checks).single and sample("t5/check/max_abs_diff_vs_sliding_mask", checks).exact
    with pytest.raises(ValueError, match="either computed exactly or one measurement"):
        Sample(1.0, exact=True, single=True)


def test_power_treats_one_replicate_as_unreplicated():
    part = {"rule": "less", "verdict": INCONCLUSIVE, "effect": -1.3, "boundary": 0.0, "test": ONE_REPLICATE,
            "se": None, "interval": None, "level": 0.95, "contra_level": 0.95}
    assert leaf_power(part) is None and claim_power([part]) is None
    # Even were an se recorded beside it, no n is read from a one-replicate test.
    assert leaf_power({**part, "se": 0.1}) is None


def test_an_erf_against_a_bound_at_or_above_its_cap_cannot_fail():
    windowed = _erf_tables(seeded(20, 21, 19), trf=64)
    assert erf_cap("t1/erf/a/m", windowed) == (64.0, "the ERF of a model whose last token sees at most TRF = w·R = 64 "
                                                     "tokens")
    assert erf_cap("t1/erf/a/m", _erf_tables(seeded(20, 21, 19), trf=480))[0] == 256.0  # the measured length is less
    assert "TRF = w·R = 64 tokens, so it cannot exceed 64" in erf_within_cap("at_most", ("t1/erf/a/m", "t1/ltr/a/m"),
                                                                             windowed)
    assert erf_within_cap("less", ("t1/erf/a/m", "t1/ltr/a/m"), windowed) is None  # 64 < 64 can fail
    assert erf_within_cap("less", ("t1/erf/a/m", "t1/ltr/a/long"), windowed) is not None  # 64 < 128 cannot
    record = _ours({"at_most": ["t1/erf/a/m", "t1/ltr/a/m"]}, windowed)
    assert record["verdict"] == "by-construction" and record["outcome"] == HOLDS


def test_a_full_reach_models_erf_against_l_tr_can_fail_and_stays_counted():
    # A model that attends to every token (no TRF) can still concentrate its gradient on the most
    # recent tokens, as ALiBi with steep slopes does: its ERF of 3 against an L_tr of 64 contradicts.
    local = _erf_tables(seeded(3, 3, 4))
    assert why_cannot_fail("less", ("t1/ltr/a/m", "t1/erf/a/m"), local) is None
    record = _ours({"less": ["t1/ltr/a/m", "t1/erf/a/m"]}, local)
    assert record["verdict"] == CONTRADICTED and not any(p.get("cannot_fail") for p in record["parts"])
    assert _ours({"less": ["t1/ltr/a/m", "t1/erf/a/m"]}, _erf_tables(seeded(240, 238, 245)))["verdict"] == HOLDS


def _paper_fails_tables():
    """The paper's row falls 1 -> 2 -> 4, but rises 4 -> 8; so does ours."""
    cells = [{**_cell("m", k, paper, seeded(v, v + 0.5, v + 1.0)), "dataset": "d"}
             for k, paper, v in ((1, 30.0, 30.0), (2, 28.0, 28.0), (4, 27.0, 26.0), (8, 27.5, 27.0))]
    return {"3": {"paper": "x", "table": "3", "cells": cells, "extra": {}}}


def test_a_claim_its_papers_numbers_contradict_in_part_says_where_instead_of_narrowing():
    claim = {"id": "falls", "statement": "m falls with length", "source": "T3",
             "check": {"all": [{"decreasing": ["t3/d/m@1,2,4"]}, {"less": ["t3/d/m@8", "t3/d/m@4"]}]},
             "paper_fails": {"cells": ["t3/d/m@8", "t3/d/m@4"], "why": "the paper's 27.5 at 8x is above its 27.0 at 4x"}}
    record = evaluate_claim(claim, _paper_fails_tables())
    assert record["on_paper"] is False and record["paper_fails_on"] == ["t3/d/m@8", "t3/d/m@4"]
    assert "paper: fails on t3/d/m@8, t3/d/m@4 (the paper's 27.5 at 8x" in record["evidence"]
    # Ours is checked on the whole statement, the 8x step included; the narrowing this replaces (the
    # parts where the paper holds) is shown beside it.
    assert record["verdict"] == CONTRADICTED and record["where_paper_holds"] == HOLDS
    assert "; on the cells where the paper's numbers hold: holds" in verdict_text(record)
    assert paper_side(record) == "fails on t3/d/m@8, t3/d/m@4"
    assert reason_of(record) == "contradicted only on cells where the paper's own numbers fail too (paper_fails)"
    elsewhere = {**record, "parts": [{**p, "verdict": "contradicted"} for p in record["parts"]]}
    assert reason_of(elsewhere) == "contradicted, no sweep named"  # the falling steps too: not the paper's failure
    # Counted where the paper fails, and out of the bar, which counts the claims the paper's numbers hold.
    assert paper_counts([record])["fails"] == 1 and against_bar([record])["on_paper"] == 0


def test_a_listed_paper_failure_must_be_exactly_where_the_paper_fails():
    check = {"all": [{"decreasing": ["t3/d/m@1,2,4"]}, {"less": ["t3/d/m@8", "t3/d/m@4"]}]}
    base = {"id": "falls", "statement": "m falls with length", "source": "T3", "check": check}
    with pytest.raises(ValueError, match=r"'falls': on the paper's numbers its check fails on t3/d/m@8, t3/d/m@4, "
                                         r"but paper_fails lists t3/d/m@1"):
        evaluate_claim({**base, "paper_fails": {"cells": ["t3/d/m@1"], "why": "a stale listing"}}, _paper_fails_tables())
    holds = {**base, "check": {"decreasing": ["t3/d/m@1,2,4"]}}
    with pytest.raises(ValueError, match="fails on no cell, but paper_fails lists t3/d/m@1, t3/d/m@2"):
        evaluate_claim({**holds, "paper_fails": {"cells": ["t3/d/m@1,2"], "why": "no longer fails"}}, _paper_fails_tables())
    # Unlisted, a failure is still recorded, and said to be unlisted (the claims-file test rejects it).
    record = evaluate_claim(base, _paper_fails_tables())
    assert record["on_paper"] is False and "(not listed under paper_fails)" in record["evidence"]
