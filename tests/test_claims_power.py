"""lenex.claims.power: the seeds that would decide an inconclusive claim, against hand-computed
Student t values; which way its leaves lean; the cost of more seeds and of a sweep; and the record
and page line of an inconclusive claim on hand-made seeded cells."""
import pytest

from lenex.claims.power import (claim_power, lean, leaf_power, power_text, replication, seeds_cost,
                                sweep_tokens, units_needed)
from test_claims_verdicts import _cell, _ours, _tables, seeded


def test_units_needed_by_hand():
    # sd = 1, gap = 1, alpha = 0.05. Power 0.5 (t(0.5) = 0): n = 7, since t(0.975, 6) / sqrt(7) =
    # 2.447 / 2.646 = 0.925 <= 1 while t(0.975, 5) / sqrt(6) = 2.571 / 2.449 = 1.05 > 1.
    assert units_needed(1.0, 1.0, 0.05, power=0.5) == 7
    # Power 0.8: n = 10, (2.262 + 0.883) / 3.162 = 0.995 <= 1; n = 9: (2.306 + 0.889) / 3 = 1.065 > 1.
    assert units_needed(1.0, 1.0, 0.05, power=0.8) == 10
    # Half the gap needs about four times the seeds: n = 34 at power 0.8 (by the same search).
    assert units_needed(0.5, 1.0, 0.05, power=0.8) > 3 * 10


def test_units_needed_edges_and_bad_input():
    assert units_needed(0.0, 1.0, 0.05) is None  # on its boundary: no n decides it
    assert units_needed(-0.1, 1.0, 0.05) is None
    assert units_needed(0.1, 0.0, 0.05) == 2  # no spread: the least replicate decides
    assert units_needed(1e-9, 1.0, 0.05) is None  # beyond any run
    with pytest.raises(ValueError, match="sd >= 0"):
        units_needed(1.0, -1.0, 0.05)


def test_lean_reads_the_leafs_own_rule():
    assert lean("less", -0.2, 0.0) == ("holds", pytest.approx(0.2))
    assert lean("less", 0.3, 0.0) == ("contradicted", pytest.approx(0.3))
    assert lean("within", 0.01, 0.05) == ("holds", pytest.approx(0.04))  # inside the band by 0.04
    assert lean("within", -0.08, 0.05) == ("contradicted", pytest.approx(0.03))
    assert lean("less", 0.0, 0.0) == ("neither", 0.0)


def test_replication_parses_paired_tests_only():
    assert replication("paired t over 5 seeds") == (5, "seed")
    assert replication("paired t over 256 segments (one model each: evaluation noise only)") == (256, "segment")
    assert replication("t over 3 seeds against an exact value") == (3, "seed")
    assert replication("Welch t, unpaired (5 and 5 seeds)") is None
    assert replication("exact") is None and replication(None) is None


def _part(effect, se, n=3, rule="less", verdict="inconclusive", interval=None, level=0.95, contra=0.99):
    return {"rule": rule, "effect": effect, "boundary": 0.0, "se": se, "test": f"paired t over {n} seeds",
            "verdict": verdict, "interval": interval or [effect - 5 * se, effect + 5 * se], "level": level,
            "contra_level": contra}


def test_a_claim_is_decided_by_its_cheapest_contradiction_else_by_its_dearest_hold():
    # sd = se * sqrt(3); the contradiction is asked at its Bonferroni level (99%).
    parts = [_part(-0.1, 0.05), _part(0.2, 0.05), _part(0.05, 0.05), _part(0.3, 0.01, verdict="holds")]
    found = claim_power(parts)
    assert found["decides"] == "contradicted" and found["level"] == 0.99
    assert found["needed"] == units_needed(0.2, 0.05 * 3 ** 0.5, 0.01)  # the larger effect is the cheaper
    assert found["leaning"] == {"holds": 1, "contradicted": 2, "significantly_against": 0, "of": 3}
    held = claim_power([_part(-0.1, 0.05), _part(-0.3, 0.05)])
    assert held["decides"] == "holds" and held["needed"] == units_needed(0.1, 0.05 * 3 ** 0.5, 0.05)
    against = leaf_power(_part(0.2, 0.01, interval=[0.1, 0.3]))
    assert against["significantly_against"] is True and against["leans"] == "contradicted"
    assert claim_power([{**_part(0.1, 0.05), "test": "Welch t, unpaired (3 and 3 seeds)"}]) is None


def test_costs_by_hand():
    found = {"needed": 7, "n": 3, "unit": "seed"}
    assert seeds_cost(found, 2, 1000) == ("8 more trainings (2 models x 4 seeds) of at least 1,000 tokens each: "
                                          "at least 8,000 training tokens")
    assert seeds_cost({"needed": 512, "n": 256, "unit": "segment"}, 2, 1000) == "2x the scored tokens (evaluation only)"
    assert seeds_cost({"needed": None, "n": 3, "unit": "seed"}, 2, 1000) is None
    # budget: (1 + 2 + 4 + 8) budgets x 3 seeds x 2 models x 1,000 tokens; heads: 4 x 3 x 2 x 1,000.
    assert sweep_tokens("budget", 2, 1000) == 90_000 and sweep_tokens("heads", 2, 1000) == 24_000
    assert sweep_tokens("corpus", 1, 1000) == 3_000
    with pytest.raises(ValueError, match="unknown sweep 'width'"):
        sweep_tokens("width", 1, 1000)


def test_an_inconclusive_claim_on_seeded_cells_carries_its_power_on_its_page_line():
    # a is 1% below b in seeds 1-2 and 1% above in seed 3: inconclusive, leaning to hold.
    tables = _tables(_cell("a", 1, 20.0, seeded(19.8, 29.7, 40.4)), _cell("b", 1, 21.0, seeded(20.0, 30.0, 40.0)))
    record = _ours({"less": ["t3/d/a@1", "t3/d/b@1"]}, tables)
    assert record["verdict"] == "inconclusive"
    assert record["power"]["decides"] == "holds" and record["power"]["n"] == 3 and record["power"]["needed"] > 3
    assert power_text(record["power"]).startswith(f"hold needs {record['power']['needed']} seeds (now 3) at 95%")


def test_a_claims_models_are_per_corpus_or_per_variant_as_its_paper_trains_them():
    """LEX scores one model of a variant on every corpus: a claim reading two corpora of one variant
    trains one model per seed there, two where each corpus trains its own (receptive-field)."""
    from lenex.claims.evaluate import claim_models

    tables = _tables(_cell("a", 1, 20.0, seeded(19.8, 29.7, 40.4)), _cell("b", 1, 21.0, seeded(20.0, 30.0, 40.0)))
    other = {**tables["3"]["cells"][0], "dataset": "e", "corpus": "e"}
    tables["3"]["cells"].append(other)
    refs = ["t3/d/a@1", "t3/e/a@1", "t3/d/b@1"]
    assert claim_models(refs, tables) == ["d/a", "d/b", "e/a"]
    assert claim_models(refs, tables, per_variant=True) == ["a", "b"]
