"""Emergence curves (issue 49): the analysis's small formulas against hand-computed values."""
import math

import pytest

from lenex.scale_study import emergence as em

T2 = 4.302652729911275  # Student t, 97.5%, df = 2


def test_effect_is_the_log_ratio_of_two_lengths():
    ppl = {"256": 20.0, "1024": 40.0, "2048": 80.0}
    assert em.effect_of(ppl, 8, 4, 256) == pytest.approx(math.log(2))
    with pytest.raises(ValueError, match="no perplexity at 512"):
        em.effect_of(ppl, 2, 1, 256)


def test_paper_effect_and_its_bad_input():
    assert em.paper_effect(32.8, 28.46) == pytest.approx(0.1419289, abs=1e-6)
    with pytest.raises(ValueError, match="positive"):
        em.paper_effect(0.0, 1.0)


def test_mean_interval_over_three_seeds_by_hand():
    point = em.mean_interval([0.1, 0.2, 0.3])  # sd 0.1, se 0.1 / sqrt 3
    assert point.mean == pytest.approx(0.2)
    assert point.high - point.mean == pytest.approx(T2 * 0.1 / math.sqrt(3))
    assert point.seeds == 3
    one = em.mean_interval([0.4])
    assert (one.low, one.high, one.seeds) == (None, None, 1)


def test_trend_by_hand():
    # u = 0..3, y = 0, .3, .3, .6: slope 0.9 / 5 = 0.18, intercept 0.03, SSE 0.018 (df 2)
    trend = em.fit_trend([1, 2, 4, 8], [0.0, 0.3, 0.3, 0.6])
    assert trend.slope == pytest.approx(0.18)
    assert trend.intercept == pytest.approx(0.03)
    assert trend.slope_se == pytest.approx(math.sqrt(0.009 / 5))
    assert trend.slope_low == pytest.approx(0.18 - T2 * math.sqrt(0.0018))
    assert em.classify(trend, paper=0.5) == "flat"  # the interval reaches just below 0


def test_classes_follow_the_papers_side():
    rising = em.fit_trend([1, 1, 2, 2, 4, 4], [0.0, 0.02, 0.1, 0.12, 0.2, 0.22])
    assert em.classify(rising, paper=0.14) == "grows"
    assert em.classify(rising, paper=-0.1) == "shrinks"
    with pytest.raises(ValueError, match="no direction"):
        em.classify(rising, paper=0.0)


def test_crossing_of_an_exact_line():
    # y = 0.2 log2(x) exactly: residual 0, so the interval is the point; 1.0 at log2(x) = 5
    trend = em.fit_trend([1, 2, 4, 8], [0.0, 0.2, 0.4, 0.6])
    cross = em.crossing(trend, 1.0)
    assert cross.value == pytest.approx(32.0)
    assert (cross.low, cross.high) == (pytest.approx(32.0), pytest.approx(32.0))


def test_crossing_interval_contains_the_estimate_and_widens_beyond_the_data():
    trend = em.fit_trend([1, 1, 2, 2, 4, 4], [0.0, 0.02, 0.1, 0.12, 0.2, 0.22])
    # slope 0.1 per doubling, intercept 0.01: 0.51 is reached at log2(x) = 5
    cross = em.crossing(trend, 0.51)
    assert cross.value == pytest.approx(32.0)
    assert cross.low < 32.0 < cross.high
    assert cross.high / 32.0 > 32.0 / cross.low  # farther from the data on the high side


def test_flat_trend_has_no_crossing_and_the_reading_says_so():
    reading = em.emergence([1, 2, 4], [[0.1, -0.1], [0.05, -0.05], [0.1, -0.1]], paper=0.14)
    assert reading["class"] == "flat"
    assert reading["crossing"] is None
    assert [p.seeds for p in reading["points"]] == [2, 2, 2]


def test_trend_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="at least 3 effects"):
        em.fit_trend([1, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="positive values"):
        em.fit_trend([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="at 2 or more values"):
        em.fit_trend([2, 2, 2], [0.1, 0.2, 0.3])
