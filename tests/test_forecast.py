"""lenex.scale_study.forecast against hand-computed values: per-seed fits and their t interval over
seeds, the leave-one-budget-out criterion on series whose answer is obvious, the claim's threshold
as a region, the rule on extrapolation and the interpolation toward the paper's point."""
import math

import pytest

from lenex.scale_study import forecast as F

# Three seeds with slopes 1, 2 and 3 per doubling: e = x, 1 + 2x, 2 + 3x at x = 0, 1, 2.
THREE = {1: [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)],
         2: [(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)],
         3: [(0.0, 2.0), (1.0, 5.0), (2.0, 8.0)]}
T2 = 4.302653  # t(0.975, df 2)


def test_a_slope_per_seed_then_a_t_interval_over_the_seeds():
    fits = F.fit_seeds(THREE, "linear", 1)
    assert [f.slope for f in fits] == pytest.approx([1.0, 2.0, 3.0])
    s = F.slope(fits)
    # mean 2, sd 1 over three seeds: half-width t(0.975, 2) / sqrt(3)
    assert s.mean == pytest.approx(2.0)
    assert s.high - s.mean == pytest.approx(T2 / math.sqrt(3), rel=1e-5)
    assert F.trend_class(s, paper=1.0) == "flat"  # the interval [-0.48, 4.48] holds 0
    # at x = 3 the seeds predict 3, 7 and 11: mean 7, sd 4
    p = F.predict(fits, "linear", 1, 3.0)
    assert p.mean == pytest.approx(7.0) and p.high - 7.0 == pytest.approx(T2 * 4 / math.sqrt(3), rel=1e-5)


def test_one_seed_reads_its_own_line_and_the_power_form_is_a_line_in_log_e():
    # e = 2^x exactly: ln e = x ln 2, so the power form's slope is ln 2 and it predicts 8 at x = 3
    fits = F.fit_seeds({1: [(0.0, 1.0), (1.0, 2.0), (2.0, 4.0)]}, "power", 1)
    assert fits[0].slope == pytest.approx(math.log(2))
    p = F.predict(fits, "power", 1, 3.0)
    assert (p.mean, p.low, p.high) == pytest.approx((8.0, 8.0, 8.0))
    # a negative paper effect: the power form fits -e; two budgets give no interval
    two = F.fit_seeds({1: [(0.0, -1.0), (1.0, -3.0)]}, "power", -1)
    assert F.predict(two, "power", -1, 2.0).mean == pytest.approx(-9.0)
    assert F.slope(two).low is None and F.trend_class(F.slope(two), -1.0) is None
    assert not F.applies("power", {1: [(0.0, 0.5), (1.0, -0.1)]}, 1)
    with pytest.raises(ValueError, match="sign x e > 0"):
        F.to_form("power", -0.1, 1)


def test_the_trend_by_the_rule_is_the_linear_forms_mean_slope_and_its_class():
    t = F.seed_trend(THREE, paper=1.0)
    assert [f.slope for f in t.fits] == pytest.approx([1.0, 2.0, 3.0])
    assert t.slope.mean == pytest.approx(2.0) and t.label == "flat"  # as above: [-0.48, 4.48]
    alike = {s: [(x, e + 0.01 * s) for x, e in THREE[1]] for s in (1, 2, 3)}  # slope 1 in every seed
    assert F.seed_trend(alike, paper=-1.0).label == "shrinks"  # interval [1, 1]: away from a negative paper
    # a seed with one budget is left out; none with two gives no trend
    assert len(F.seed_trend({**THREE, 4: [(0.0, 9.0)]}, paper=1.0).fits) == 3
    assert F.seed_trend({1: [(0.0, 1.0)], 2: [(1.0, 2.0)]}, paper=1.0) is None
    with pytest.raises(ValueError, match="no direction"):
        F.seed_trend(THREE, paper=0.0)


def test_the_criterion_picks_the_form_a_series_obviously_follows():
    power = {1: [(0.0, 1.0), (1.0, 2.0), (2.0, 4.0), (3.0, 8.0)]}
    linear = {1: [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)]}
    errs = {f: F.held_out_errors(power, f, 1) for f in F.FORMS}
    # holding out x = 0 the line through (1, 2), (2, 4), (3, 8) is -4/3 + 3x: error (1 + 4/3)^2
    assert errs["linear"][(1, 0.0)] == pytest.approx(49 / 9)
    assert max(errs["power"].values()) == pytest.approx(0.0, abs=1e-20)
    assert F.choose_form(errs)["chosen"] == "power"
    assert F.choose_form({f: F.held_out_errors(linear, f, 1) for f in F.FORMS})["chosen"] == "linear"
    # a seed of two budgets has nothing to hold out
    assert F.held_out_errors({1: [(0.0, 1.0), (1.0, 2.0)]}, "linear", 1) == {}
    with pytest.raises(ValueError, match="no seed has three budgets"):
        F.choose_form({"linear": {}})


def test_the_threshold_sets_a_region_and_a_verdict_reads_an_interval_against_it():
    assert F.region([("at_least", 3.11)]) == (pytest.approx(math.log(3.11)), math.inf)
    band = F.region([("above_zero", None), ("below", 1.55)])
    assert band == (0.0, pytest.approx(math.log(1.55)))
    assert F.verdict(F.Estimate(0.2, 0.1, 0.3, ""), band) == "holds"
    assert F.verdict(F.Estimate(-0.2, -0.3, -0.1, ""), band) == "contradicted"
    assert F.verdict(F.Estimate(0.0, -0.1, 0.1, ""), band) == "inconclusive"
    assert F.verdict(F.Estimate(0.2, None, None, ""), band) == "holds"
    with pytest.raises(ValueError, match="leave no e"):
        F.region([("below_zero", None), ("above_zero", None)])


def test_beyond_one_doubling_it_cannot_extrapolate_unless_toward_the_papers_point():
    fits = F.fit_seeds(THREE, "linear", 1)
    assert F.beyond(3.5, 0.0, 2.0) == 1.5 and F.beyond(-0.5, 0.0, 2.0) == 0.5 and F.beyond(1.0, 0.0, 2.0) == 0.0
    assert F.at(fits, "linear", 1, 3.0, (0.0, 2.0), None)[0].mean == pytest.approx(7.0)
    est, how = F.at(fits, "linear", 1, 3.5, (0.0, 2.0), None)
    assert est is None and how == "cannot extrapolate: 1.50 doublings beyond the data"
    # toward the paper's point (x 6, e 20): a straight line from the fit at the edge, x = 2 (mean 5)
    est, how = F.at(fits, "linear", 1, 4.0, (0.0, 2.0), (6.0, 20.0))
    assert how.startswith("interpolation between our data and the paper's point")
    assert est.mean == pytest.approx(12.5)
    # by hand: edge 1 +- 0.5 at x 2, paper 3 at x 4: at x 3 the mean 2 and bounds 1.75, 2.25
    mid = F.anchored(3.0, 2.0, F.Estimate(1.0, 0.5, 1.5, ""), 4.0, 3.0, "linear", 1)
    assert (mid.mean, mid.low, mid.high) == pytest.approx((2.0, 1.75, 2.25))
    # the power form joins them geometrically: sqrt(1 x 4) = 2 half-way
    assert F.anchored(1.0, 0.0, F.Estimate(1.0, None, None, ""), 2.0, 4.0, "power", 1).mean == pytest.approx(2.0)


def test_the_crossing_is_where_the_mean_enters_the_region():
    fits = F.fit_seeds({1: [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]}, "linear", 1)  # e = x, no residual
    found = F.crossing(lambda x: F.predict(fits, "linear", 1, x), 2.0, 3.0, (2.5, math.inf))
    assert found == {"inside_at_start": False, "value": 2.5, "early": 2.5, "late": 2.5}
    never = F.crossing(lambda x: F.predict(fits, "linear", 1, x), 2.0, 3.0, (4.0, math.inf))
    assert never["value"] is None and never["late"] is None


def test_a_whole_forecast_says_when_the_forms_disagree_and_the_criterion_cannot_tell():
    # one seed, curving up: e = 0.1, 0.2, 0.4 (a power law exactly) against a line of the same ends
    series = {1: [(0.0, 0.1), (1.0, 0.2), (2.0, 0.4)]}
    out = F.forecast(series, paper=2.0, holds_in=(math.log(1.5), math.inf), targets={"near": 3.0, "far": 5.0},
                     anchor_x=None)
    # held out, the line misses by 0.1, 0.05 and 0.1 and the power law not at all; the paired
    # difference linear - power, +0.0075 (sd 0.0043, three points), has an interval holding 0: not separated
    choice = out["choice"]
    assert choice["chosen"] == "power" and choice["scores"]["linear"] == pytest.approx(0.0225 / 3)
    assert not choice["separated"] and choice["difference"].mean == pytest.approx(0.0075)
    assert out["class"] == "flat"  # the line's slope 0.15 +- t(0.975, 1) x 0.0289
    near = out["targets"]["near"]
    assert near["forms"]["power"]["estimate"].mean == pytest.approx(0.8)
    assert near["forms"]["power"]["verdict"] == "holds" and near["forms"]["linear"]["verdict"] == "inconclusive"
    assert near["verdict"] == "inconclusive: the forms disagree"
    assert out["targets"]["far"]["verdict"] == "cannot extrapolate"
    # the paper's point (x 4, e 2) placed beyond: x 5 is past it, x 4 is read by the interpolation
    anchored = F.forecast(series, paper=2.0, holds_in=(math.log(1.5), math.inf), targets={"t": 4.0}, anchor_x=4.0)
    t = anchored["targets"]["t"]["forms"]["power"]
    assert t["how"].startswith("interpolation") and t["estimate"].mean == pytest.approx(2.0)
    assert anchored["targets"]["t"]["verdict"].endswith("(by the interpolation toward the paper's point)")
    assert anchored["crossing"]["searched_to"] == 4.0 and anchored["crossing"]["value"] is not None
    assert F.forecast({1: [(0.0, 0.1)]}, 2.0, (0.0, math.inf), {}, None)["note"].startswith("no seed has two")
