"""Table 3's statistics: the paired two-sided t-test (against scipy) and seed aggregation."""

import numpy as np
import pytest
from scipy import stats

from lenex.receptive_field.significance import aggregate_seeds, compare, paired_t_test
from lenex.tables.seeds import mean_std

MADE_UP = [
    ([23.1, 23.9, 22.8, 24.0, 23.5], [22.6, 23.1, 22.9, 23.2, 22.7]),
    ([5.27, 5.31, 5.01, 5.44, 5.18], [5.41, 5.47, 5.20, 5.60, 5.36]),
    ([2.88, 2.71, 2.95], [2.90, 2.70, 2.99]),
    ([100.0, 3.0], [1.0, 2.0]),
]


@pytest.mark.parametrize("a, b", MADE_UP)
def test_paired_t_test_matches_scipy(a, b):
    t, p = paired_t_test(a, b)
    expected = stats.ttest_rel(a, b)
    assert t == pytest.approx(expected.statistic, rel=1e-10)
    assert p == pytest.approx(expected.pvalue, rel=1e-8)


def test_constant_differences():
    assert paired_t_test([2.0, 3.0, 4.0], [2.0, 3.0, 4.0]) == (0.0, 1.0)
    assert paired_t_test([3.0, 4.0, 5.0], [2.0, 3.0, 4.0]) == (np.inf, 0.0)
    with pytest.raises(ValueError, match="at least 2"):
        paired_t_test([1.0], [2.0])


def test_markers_say_whether_the_reference_is_significantly_better_or_worse():
    sandwich = [23.0, 23.4, 22.9, 23.8, 23.3]
    assert compare(sandwich, [s + 1.0 + 0.1 * i for i, s in enumerate(sandwich)]) == "better"  # other is higher
    assert compare(sandwich, [s - 0.5 - 0.05 * i for i, s in enumerate(sandwich)]) == "worse"
    assert compare(sandwich, [23.1, 23.2, 23.0, 23.9, 23.1]) is None  # noise: p >= 0.05
    assert compare([1.0], [2.0]) is None  # one seed: no test


def test_aggregate_seeds_gives_mean_sample_std_and_the_test_against_the_reference():
    records = []
    for seed, (ref, other) in enumerate(zip([5.0, 5.2, 5.1], [6.0, 6.3, 6.1]), start=1):
        records.append({"variant": "sandwich", "corpus": "arxiv", "length": 64, "seed": seed, "ppl": ref})
        records.append({"variant": "alibi", "corpus": "arxiv", "length": 64, "seed": seed, "ppl": other})
    out = {r["variant"]: r for r in aggregate_seeds(records, reference="sandwich")}
    assert out["alibi"]["ppl"] == pytest.approx(np.mean([6.0, 6.3, 6.1]))
    assert out["alibi"]["ppl_std"] == pytest.approx(np.std([6.0, 6.3, 6.1], ddof=1))
    assert out["alibi"]["seeds"] == [1, 2, 3] and out["alibi"]["significance"] == "better"
    assert out["sandwich"]["significance"] is None
    assert mean_std([4.0]) == (4.0, None)
    with pytest.raises(ValueError, match="no sandwich results on arxiv at 64"):
        aggregate_seeds([r for r in records if r["variant"] == "alibi"], reference="sandwich")
