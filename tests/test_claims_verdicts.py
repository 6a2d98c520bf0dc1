"""Verdicts on ours: each predicate kind yields holds, contradicted and inconclusive on hand-made
seeded cells (a paired case an unpaired reading gets wrong among them), the intervals against
hand-computed Student t intervals, the combinators' three-valued rules and Bonferroni levels, and
the claim record's fields."""
import math

import numpy as np
import pytest
from scipy import stats

from lenex.claims import predicates as P
from lenex.claims.combine import evaluate_tree, leaf_specs
from lenex.claims.evaluate import evaluate_claim
from lenex.claims.intervals import EXACT, NO_REPLICATION, ONE_REPLICATE, Estimate, Sample, log_ratio, welch
from lenex.claims.leaves import CONTRADICTED, HOLDS, INCONCLUSIVE, judge

SEEDS = ("1", "2", "3", "4", "5")


def seeded(*values) -> dict:
    return dict(zip(SEEDS, values))


def _cell(method, multiple, paper, seeds=None, pieces=None, variant=None, paper_mark=None):
    ours = None if seeds is None and pieces is None else (
        float(np.mean(list(seeds.values()))) if seeds else float(np.exp(np.mean(pieces["nll"]))))
    cell = {"section": "s", "dataset": "d", "corpus": "d", "row": method, "method": method,
            "variant": variant or method, "mask": "causal", "multiple": multiple, "paper_length": 1,
            "our_length": 1, "paper": paper, "ours": ours, "status": "ok" if ours else "not computed",
            "paper_std": None, "paper_mark": paper_mark, "ours_std": None, "ours_mark": None, "n_seeds": None}
    if seeds:
        cell["ours_seeds"] = seeds
    if pieces:
        cell["ours_pieces"] = pieces
    return cell


def _tables(*cells, reference=None):
    extra = {"significance_reference": reference} if reference else {}
    return {"3": {"paper": "x", "table": "3", "cells": list(cells), "extra": extra}}


def _ours(check, tables, words=None):
    """The claim's record; `explodes` fixed at its default unless `words` say otherwise, so that these
    tests judge the intervals against a known boundary (the paper-derived value of a claim's threshold
    is tests/test_claims_thresholds.py's)."""
    claim = {"id": "c", "statement": "a statement", "source": "T3", "check": check}
    words = {"explodes": P.THRESHOLDS["explodes"], **(words or {})}
    claim["thresholds"] = {w: {"value": v, "why": "a test's own value"} for w, v in words.items()}
    return evaluate_claim(claim, tables)


# Per seed, a and b vary a lot across seeds (30-60) but a is 2% below b in every seed: the paired
# differences are consistent; the unpaired reading sees only the spread across seeds.
PAIRED_A = seeded(29.4, 39.2, 49.0, 58.8, 34.3)
PAIRED_B = seeded(30.0, 40.0, 50.0, 60.0, 35.0)


def test_a_paired_difference_an_unpaired_reading_misses():
    a, b = Sample(np.mean(list(PAIRED_A.values())), PAIRED_A), Sample(np.mean(list(PAIRED_B.values())), PAIRED_B)
    paired = log_ratio(a, b)
    assert paired.test == "paired t over 5 seeds"
    lo, hi = paired.interval(0.05)
    assert hi < 0  # a below b in every seed: ln(0.98) each
    unpaired = welch(np.log(list(PAIRED_A.values())), np.log(list(PAIRED_B.values())), "Welch")
    lo_u, hi_u = unpaired.interval(0.05)
    assert lo_u < 0 < hi_u  # read unpaired, the spread across seeds swallows the 2%
    tables = _tables(_cell("a", 1, 20.0, PAIRED_A), _cell("b", 1, 21.0, PAIRED_B))
    record = _ours({"less": ["t3/d/a@1", "t3/d/b@1"]}, tables)
    assert record["verdict"] == HOLDS and record["on_ours"] is True and record["test"] == "paired t over 5 seeds"
    # The same seeds with the pairing broken (b's seeds shuffled, renamed): Welch, and inconclusive.
    shuffled = dict(zip(("6", "7", "8", "9", "10"), PAIRED_B.values()))
    record = _ours({"less": ["t3/d/a@1", "t3/d/b@1"]}, _tables(_cell("a", 1, 20.0, PAIRED_A), _cell("b", 1, 21.0, shuffled)))
    assert record["verdict"] == INCONCLUSIVE and record["test"] == "Welch t, unpaired (5 and 5 seeds)"


def test_paired_t_interval_by_hand():
    d = np.log(np.array(list(PAIRED_A.values()))) - np.log(np.array(list(PAIRED_B.values())))
    lo, hi = log_ratio(Sample(1.0, PAIRED_A), Sample(1.0, PAIRED_B)).interval(0.05)
    half = stats.t.ppf(0.975, 4) * d.std(ddof=1) / math.sqrt(5)
    assert (lo, hi) == pytest.approx((d.mean() - half, d.mean() + half))
    # by hand: a 95% interval of 5 values has t(0.975, 4) = 2.776
    assert stats.t.ppf(0.975, 4) == pytest.approx(2.7764, abs=1e-4)
    lo99, hi99 = log_ratio(Sample(1.0, PAIRED_A), Sample(1.0, PAIRED_B)).interval(0.01)
    assert hi99 - lo99 == pytest.approx(2 * stats.t.ppf(0.995, 4) * d.std(ddof=1) / math.sqrt(5))


def test_welch_interval_by_hand():
    a, b = [3.0, 3.2, 3.1], [2.0, 2.6, 2.3, 2.9]
    est = welch(a, b, "w")
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 4
    df = (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 3)
    half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    assert est.df == pytest.approx(df)
    assert est.interval(0.05) == pytest.approx((np.mean(a) - np.mean(b) - half, np.mean(a) - np.mean(b) + half))


def test_pieces_pair_only_over_the_same_scored_tokens():
    a = {"unit": "span", "nll": [3.0, 3.4, 2.9, 3.3], "tokens_sha256": "h"}
    b = {"unit": "span", "nll": [3.1, 3.5, 3.0, 3.45], "tokens_sha256": "h"}
    est = log_ratio(Sample(1.0, pieces=a), Sample(1.0, pieces=b))
    d = np.array(a["nll"]) - np.array(b["nll"])
    assert est.test == "paired t over 4 spans (one model each: evaluation noise only)"
    assert est.effect == pytest.approx(d.mean()) and est.df == 3
    assert est.interval(0.05)[1] == pytest.approx(d.mean() + stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2)
    other = {**b, "tokens_sha256": "other"}
    assert log_ratio(Sample(20.0, pieces=a), Sample(21.0, pieces=other)).test == NO_REPLICATION
    assert log_ratio(Sample(20.0), Sample(21.0)).interval(0.05) is None
    exact = log_ratio(Sample(30.0, exact=True), Sample(60.0, exact=True))
    assert exact.test == EXACT and exact.interval(0.05) == pytest.approx((math.log(0.5), math.log(0.5)))


def _spread(center, rel):
    """Five seeds around `center` whose log spread is about `rel`."""
    return seeded(*(center * math.exp(rel * z) for z in (-1.2, -0.5, 0.0, 0.5, 1.2)))


# Each predicate kind, on hand-made seeded cells, in all three verdicts. `x` is the cell under
# test; `r` its reference (the other cell, or the row's L_tr column); paper numbers make the paper hold.
KINDS = {
    "less": ({"less": ["t3/d/x@1", "t3/d/r@1"]}, 20.0, 21.0),
    "at_most": ({"at_most": ["t3/d/x@1", "t3/d/r@1"]}, 20.0, 21.0),
    "ratio_at_least": ({"ratio_at_least": ["t3/d/x@1", "t3/d/r@1", "explodes"]}, 60.0, 20.0),
    "ratio_below": ({"ratio_below": ["t3/d/x@1", "t3/d/r@1", "explodes"]}, 20.5, 20.0),
    "comparable": ({"comparable": ["t3/d/x@1", "t3/d/r@1"]}, 20.5, 20.0),
    "flat": ({"flat": ["t3/d/x@1", "t3/d/r@1"]}, 20.1, 20.0),
    "increasing": ({"increasing": ["t3/d/r@1", "t3/d/x@1"]}, 25.0, 20.0),
    "decreasing": ({"decreasing": ["t3/d/r@1", "t3/d/x@1"]}, 15.0, 20.0),
    "nondecreasing": ({"nondecreasing": ["t3/d/r@1", "t3/d/x@1"]}, 25.0, 20.0),
    "mark": ({"mark": ["t3/d/x@1", "better"]}, 25.0, 20.0),
}
# (x's centre as a multiple of r's, the seeds' log spread) giving each verdict, r at 100 with a
# spread of 0.01 on the same seeds (so paired differences vary by x's spread minus r's).
CASES = {
    "less": {HOLDS: (0.8, 0.01), CONTRADICTED: (1.2, 0.01), INCONCLUSIVE: (0.99, 0.2)},
    "at_most": {HOLDS: (0.8, 0.01), CONTRADICTED: (1.2, 0.01), INCONCLUSIVE: (0.99, 0.2)},
    "ratio_at_least": {HOLDS: (2.0, 0.01), CONTRADICTED: (1.05, 0.01), INCONCLUSIVE: (1.25, 0.2)},
    "ratio_below": {HOLDS: (1.05, 0.01), CONTRADICTED: (2.0, 0.01), INCONCLUSIVE: (1.25, 0.2)},
    "comparable": {HOLDS: (1.0, 0.01), CONTRADICTED: (1.5, 0.01), INCONCLUSIVE: (1.0, 0.2)},
    "flat": {HOLDS: (1.0, 0.01), CONTRADICTED: (1.5, 0.01), INCONCLUSIVE: (1.0, 0.2)},
    "increasing": {HOLDS: (1.2, 0.01), CONTRADICTED: (0.8, 0.01), INCONCLUSIVE: (1.01, 0.2)},
    "decreasing": {HOLDS: (0.8, 0.01), CONTRADICTED: (1.2, 0.01), INCONCLUSIVE: (0.99, 0.2)},
    "nondecreasing": {HOLDS: (1.2, 0.01), CONTRADICTED: (0.8, 0.01), INCONCLUSIVE: (1.01, 0.2)},
    "mark": {HOLDS: (1.2, 0.01), CONTRADICTED: (0.8, 0.01), INCONCLUSIVE: (1.01, 0.2)},
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("verdict", [HOLDS, CONTRADICTED, INCONCLUSIVE])
def test_each_predicate_kind_yields_each_verdict_on_seeded_cells(kind, verdict):
    check, paper_x, paper_r = KINDS[kind]
    factor, spread = CASES[kind][verdict]
    mark = "better" if kind == "mark" else None
    tables = _tables(_cell("x", 1, paper_x, _spread(100 * factor, spread), paper_mark=mark),
                     _cell("r", 1, paper_r, _spread(100, 0.01)), reference="r")
    record = _ours(check, tables)
    assert record["on_paper"] is True, kind
    assert record["verdict"] == verdict, (kind, record["interval"], record["test"])
    assert record["on_ours"] is {HOLDS: True, CONTRADICTED: False, INCONCLUSIVE: None}[verdict]
    assert record["test"] == "paired t over 5 seeds" and record["level"] in (0.95,)


def test_value_predicates_on_exact_checks_and_a_figure_without_replication():
    tables = {"5": {"paper": "x", "table": "5", "cells": [], "extra": {"cache_window": {
        "max_abs_diff_vs_sliding_mask": 2e-6, "min_speedup": 0.9}}}, "f3": {"figure": "3", "values": {"a": 0.5}}}
    assert _ours({"value_at_most": ["t5/check/max_abs_diff_vs_sliding_mask", "identical"]}, tables)["verdict"] == HOLDS
    record = _ours({"value_at_most": ["t5/check/max_abs_diff_vs_sliding_mask", "identical"]}, tables)
    assert record["test"] == EXACT and record["interval"] == pytest.approx([math.log(2e-6 / 1e-4)] * 2)
    # A speed-up is a timing, one measurement: no interval, however far it is from 1; read as exact
    # (the rule before) it would be contradicted, and the record says so.
    record = _ours({"value_above": ["t5/check/min_speedup", "faster"]}, tables)
    assert record["verdict"] == INCONCLUSIVE and record["test"] == ONE_REPLICATE and record["interval"] is None
    assert record["read_as_exact"] == CONTRADICTED and "read as exact values, the check would be contradicted" in \
        record["evidence"]
    record = _ours({"value_above": ["f3/a", "faster"]}, {**tables, "f3": {"figure": "3", "values": {"a": 0.5}}})
    assert record["verdict"] == INCONCLUSIVE and record["test"] == ONE_REPLICATE and record["interval"] is None
    # Cells recorded before replication was: no replication recorded, and no exact reading to show.
    bare = [{**_cell(m, 1, 20.0), "ours": v, "status": "ok"} for m, v in (("a", 20.0), ("b", 21.0))]
    record = _ours({"less": ["t3/d/a@1", "t3/d/b@1"]}, _tables(*bare))
    assert record["test"] == NO_REPLICATION and "read_as_exact" not in record


def _leaf(lo, hi, rule="less"):
    """A leaf whose 95% interval is (lo, hi) exactly: a normal-ish t with huge df."""
    mid, se = (lo + hi) / 2, (hi - lo) / 2 / stats.t.ppf(0.975, 1e9)
    return Estimate(mid, "t", se, 1e9)


def test_combinators_on_three_valued_inputs_with_their_levels(monkeypatch):
    import lenex.claims.combine as C

    # Three leaves by name: h holds, c is contradicted, i is inconclusive (at 95%).
    estimates = {"h": _leaf(-0.3, -0.1), "c": _leaf(0.1, 0.3), "i": _leaf(-0.1, 0.1),
                 # holds at 95% but not at 97.5% (Bonferroni over 2): upper bound 0.03 / 1.96 * 2.24 > 0
                 "edge": _leaf(-0.2, -0.005)}
    monkeypatch.setattr(C, "_estimate", lambda rule, refs, boundary, ours, log_scale: estimates[refs[0]])
    leaf = lambda name: ("leaf", "less", (name, "z"), 0.0, "less")  # noqa: E731
    run = lambda tree: evaluate_tree(tree, {}, {}).verdict  # noqa: E731
    assert [run(leaf(n)) for n in "hci"] == [HOLDS, CONTRADICTED, INCONCLUSIVE]
    assert run(("all", [leaf("h"), leaf("h")])) == HOLDS
    assert run(("all", [leaf("h"), leaf("i")])) == INCONCLUSIVE
    assert run(("all", [leaf("h"), leaf("c")])) == CONTRADICTED
    assert run(("any", [leaf("i"), leaf("h")])) == HOLDS
    assert run(("any", [leaf("c"), leaf("i")])) == INCONCLUSIVE
    assert run(("any", [leaf("c"), leaf("c")])) == CONTRADICTED
    assert [run(("not", leaf(n))) for n in "hci"] == [CONTRADICTED, HOLDS, INCONCLUSIVE]
    # Bonferroni: `edge` holds alone and in an all (no correction to hold), not in an any of 2.
    assert run(leaf("edge")) == HOLDS and run(("all", [leaf("edge"), leaf("h")])) == HOLDS
    assert run(("any", [leaf("edge"), leaf("i")])) == INCONCLUSIVE
    # mirrored: contradicted alone and in an any, not in an all of 2 (alpha / 2 to contradict)
    estimates["edge-"] = _leaf(0.005, 0.2)
    assert run(leaf("edge-")) == CONTRADICTED and run(("any", [leaf("edge-"), leaf("c")])) == CONTRADICTED
    assert run(("all", [leaf("edge-"), leaf("h")])) == INCONCLUSIVE
    # not swaps the levels: not(edge-) holds at 95% (a contradiction at alpha_hold), not in an any of 2.
    assert run(("not", leaf("edge-"))) == HOLDS and run(("any", [("not", leaf("edge-")), leaf("i")])) == INCONCLUSIVE
    # the levels recorded: the deciding leaf of an any of 4 that holds is read at 1 - 0.05 / 4
    out = evaluate_tree(("any", [leaf("h"), leaf("i"), leaf("i"), leaf("i")]), {}, {})
    assert out.decider.record()["level"] == pytest.approx(0.9875)
    assert out.decider.record()["adjustment"] == "Bonferroni: alpha = 0.05 / 4"
    # the weakest holding leaf decides an all that holds
    assert evaluate_tree(("all", [leaf("h"), leaf("edge")]), {}, {}).decider.refs[0] == "edge"


def test_a_leaf_records_direction_significance_and_effect_fraction():
    leaf = judge("at_least", ("n", "d"), Estimate(math.log(1.6), EXACT), math.log(1.25), math.log(15.0), 1, 1)
    record = leaf.record()
    assert record["verdict"] == HOLDS and record["direction"] == "same" and record["significant"] is True
    assert record["effect_fraction"] == pytest.approx(math.log(1.6) / math.log(15.0))  # 0.17 of the paper's
    within = judge("within", ("a", "b"), Estimate(0.01, EXACT), math.log1p(0.05), -0.02, 1, 1)
    assert within.direction == "none" and within.effect_fraction is None
    opposite = judge("less", ("a", "b"), Estimate(0.02, EXACT), 0.0, -0.05, 1, 1)
    assert opposite.direction == "opposite" and opposite.verdict == CONTRADICTED


def test_a_claim_record_carries_the_deciding_interval_and_every_part():
    tables = _tables(_cell("x", 1, 60.0, _spread(200, 0.01)), _cell("x", 2, 80.0, _spread(180, 0.01)),
                     _cell("r", 1, 20.0, _spread(100, 0.01)))
    check = {"all": [{"ratio_at_least": ["t3/d/x@1", "t3/d/r@1", "explodes"]},
                     {"ratio_at_least": ["t3/d/x@2", "t3/d/r@1", "explodes"]}]}
    record = _ours(check, tables)
    assert record["verdict"] == HOLDS and len(record["parts"]) == 2
    assert record["parts"][1]["effect"] == pytest.approx(math.log(1.8), abs=1e-3)  # the weaker one decides
    assert record["interval"] == record["parts"][1]["interval"] and record["level"] == 0.95
    assert record["effect_fraction"] == pytest.approx(np.median([math.log(2.0) / math.log(3.0), math.log(1.8) / math.log(4.0)]), abs=1e-3)
    assert record["direction"] == "same" and record["significant"] is True
    # a claim's own threshold: explodes at 3.0 (the paper's mildest 3x) makes ours contradicted
    assert _ours(check, tables, {"explodes": 2.9})["verdict"] == CONTRADICTED


def test_a_mark_is_paired_with_its_tables_reference_row_named_in_the_cells_file():
    cells = (_cell("x", 1, 25.0, _spread(120, 0.01), paper_mark="better"), _cell("r", 1, 20.0, _spread(100, 0.01)))
    record = _ours({"mark": ["t3/d/x@1", "better"]}, _tables(*cells, reference="r"))
    assert record["verdict"] == HOLDS and record["parts"][0]["refs"] == ["t3/d/r@1", "t3/d/x@1"]
    with pytest.raises(ValueError, match="the cells file of Table 3 names no significance reference"):
        _ours({"mark": ["t3/d/x@1", "better"]}, _tables(*cells))
    # a paper-only cells file (ours not computed) needs no reference row: untestable, the cell named
    unrun = _cell("x", 1, 25.0, paper_mark="better")
    assert _ours({"mark": ["t3/d/x@1", "better"]}, _tables(unrun, _cell("r", 1, 20.0)))["verdict"] == "untestable"


def test_an_order_of_values_that_are_not_all_positive_is_read_on_differences():
    # Attention resolutions (LEX Table 3) may be negative: no log scale, the order on differences.
    a = {"1": -16.5, "2": 0.0004, "3": -0.0054}
    b = {"1": -16.0, "2": 0.0104, "3": 0.0046}  # b above a by 0.5, 0.01, 0.01
    tables = _tables(_cell("a", 1, 0.87, a), _cell("b", 1, 0.98, b))
    record = _ours({"less": ["t3/d/a@1", "t3/d/b@1"]}, tables)
    d = np.array([a[s] - b[s] for s in "123"])
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert record["test"] == "paired t over 3 seeds, on differences"
    assert record["interval"] == pytest.approx([d.mean() - half, d.mean() + half])
    assert record["verdict"] == INCONCLUSIVE  # the interval straddles 0 (one seed 0.5 apart, two 0.01)
    assert record["parts"][0]["paper_effect"] == pytest.approx(0.87 - 0.98)  # the paper's on differences too
    # A ratio against a threshold has no meaning there: no interval, inconclusive, said so.
    record = _ours({"ratio_below": ["t3/d/a@1", "t3/d/b@1", "collapses"]}, tables, {"collapses": 1.76})
    assert record["verdict"] == INCONCLUSIVE and record["interval"] is None
    assert "not positive" in record["test"]
