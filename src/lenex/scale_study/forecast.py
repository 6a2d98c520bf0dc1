"""Forecasts of a claim's effect at a budget not measured (docs/emergence.md, "Forecasts: the rule").

Small pure functions over numbers. A series is {seed: [(x, e), ...]}: x = log2(training tokens per
non-embedding parameter), e the effect of one model (a log ratio of two perplexities).

- `fit_seeds`: a form fitted to each seed's own points (a seed's points share its initialisation
  and data order, so seeds, not points, are the independent units);
- `predict`, `slope`: the mean over seeds of the seeds' predictions (slopes), a t interval over
  seeds; one seed: its own least-squares interval;
- `seed_trend`: the trend class of a series by the rule (the emergence pages read it too);
- `held_out_errors`, `choose_form`: the leave-one-budget-out criterion on the e scale;
- `region`, `verdict`: the claim's threshold as a region of e, and a predicted interval against it;
- `beyond`, `anchored`, `crossing`: how far a prediction extrapolates, the interpolation toward the
  paper's point, and where the prediction enters the region.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

from .emergence import LEVEL, mean_interval

FORMS = ("linear", "power")
STEP = 1 / 64  # the crossing's grid, in doublings of tokens per parameter


def to_form(form: str, e: float, sign: int) -> float:
    """e in the form's coordinates: itself (linear), ln(sign e) (power); a power value on the
    wrong side of 0 is an error."""
    if form == "linear":
        return e
    if form == "power":
        if sign * e <= 0:
            raise ValueError(f"the power form needs sign x e > 0, got e = {e} with sign {sign}")
        return math.log(sign * e)
    raise ValueError(f"unknown form {form!r}; known: {', '.join(FORMS)}")


def from_form(form: str, z: float, sign: int) -> float:
    return z if form == "linear" else sign * math.exp(z)


def applies(form: str, series: dict, sign: int) -> bool:
    """Whether the form can be fitted to every point of every seed."""
    return form == "linear" or all(sign * e > 0 for points in series.values() for _, e in points)


@dataclass(frozen=True)
class SeedFit:
    seed: object
    intercept: float
    slope: float  # per doubling of tokens per parameter, in the form's coordinates
    n: int
    mean_x: float
    sxx: float
    residual_sd: float | None  # None with two points


def line(xs: list[float], zs: list[float]) -> tuple[float, float, float, float, float | None]:
    """Least squares z = a + b x: (a, b, mean x, Sxx, residual sd or None with two points); needs
    two or more distinct x."""
    n = len(xs)
    if n != len(zs) or len(set(xs)) < 2:
        raise ValueError(f"a line needs two or more distinct x and one z each, got {n} x and {len(zs)} z")
    mx, mz = sum(xs) / n, sum(zs) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (z - mz) for x, z in zip(xs, zs)) / sxx
    a = mz - b * mx
    sd = math.sqrt(sum((z - a - b * x) ** 2 for x, z in zip(xs, zs)) / (n - 2)) if n > 2 else None
    return a, b, mx, sxx, sd


def fit_seeds(series: dict, form: str, sign: int) -> list[SeedFit]:
    """The form fitted to each seed with two or more budgets (others are left out), in seed order."""
    fits = []
    for seed in sorted(series):
        points = series[seed]
        if len({x for x, _ in points}) < 2:
            continue
        xs = [x for x, _ in points]
        a, b, mx, sxx, sd = line(xs, [to_form(form, e, sign) for _, e in points])
        fits.append(SeedFit(seed, a, b, len(points), mx, sxx, sd))
    return fits


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float | None  # None: no interval (one seed with two points)
    high: float | None
    how: str


def _one_line_band(fit: SeedFit, x: float, level: float) -> tuple[float, float] | None:
    if fit.residual_sd is None:
        return None
    half = stats.t.ppf(0.5 + level / 2, fit.n - 2) * fit.residual_sd * math.sqrt(1 / fit.n + (x - fit.mean_x) ** 2 / fit.sxx)
    z = fit.intercept + fit.slope * x
    return z - half, z + half


def predict(fits: list[SeedFit], form: str, sign: int, x: float, level: float = LEVEL) -> Estimate:
    """e at x: with two or more seeds the mean of the seeds' predictions (each back in e) and its t
    interval over seeds; with one, its line's confidence band (df = points - 2) back in e."""
    if not fits:
        raise ValueError("no seed has two budgets: nothing to predict from")
    values = [from_form(form, f.intercept + f.slope * x, sign) for f in fits]
    if len(fits) >= 2:
        p = mean_interval(values, level)
        return Estimate(p.mean, p.low, p.high, f"mean of {len(fits)} seeds' fits, t interval over seeds")
    band = _one_line_band(fits[0], x, level)
    if band is None:
        return Estimate(values[0], None, None, "one seed, two budgets: no interval")
    low, high = sorted(from_form(form, z, sign) for z in band)
    return Estimate(values[0], low, high, f"one seed's fit over {fits[0].n} budgets (df {fits[0].n - 2})")


def slope(fits: list[SeedFit], level: float = LEVEL) -> Estimate:
    """The slope per doubling: the mean of the seeds' slopes with a t interval over seeds; one seed,
    its least-squares interval (df = points - 2)."""
    if not fits:
        raise ValueError("no seed has two budgets: no slope")
    if len(fits) >= 2:
        p = mean_interval([f.slope for f in fits], level)
        return Estimate(p.mean, p.low, p.high, f"mean of {len(fits)} seeds' slopes, t interval over seeds")
    f = fits[0]
    if f.residual_sd is None:
        return Estimate(f.slope, None, None, "one seed, two budgets: no interval")
    half = stats.t.ppf(0.5 + level / 2, f.n - 2) * f.residual_sd / math.sqrt(f.sxx)
    return Estimate(f.slope, f.slope - half, f.slope + half, f"one seed's fit over {f.n} budgets (df {f.n - 2})")


def trend_class(slope_estimate: Estimate, paper: float) -> str | None:
    """grows / shrinks / flat: the slope's interval against 0, 'grows' toward the paper's side;
    None without an interval."""
    if paper == 0:
        raise ValueError("the paper's effect is 0: no direction to grow toward")
    if slope_estimate.low is None:
        return None
    sign = 1 if paper > 0 else -1
    low, high = sorted((sign * slope_estimate.low, sign * slope_estimate.high))
    return "grows" if low > 0 else "shrinks" if high < 0 else "flat"


@dataclass(frozen=True)
class SeedTrend:
    fits: list[SeedFit]  # the linear form's, one per seed with two or more budgets
    slope: Estimate
    label: str | None  # trend_class: grows / flat / shrinks, None without an interval


def seed_trend(series: dict, paper: float, level: float = LEVEL) -> SeedTrend | None:
    """The trend of e per doubling by the rule: the linear form fitted to each seed alone, the
    mean of the seeds' slopes with its interval (`slope`) and its class (`trend_class`); None when
    no seed has two budgets. The one trend the forecasts and the emergence pages both give."""
    if paper == 0:
        raise ValueError("the paper's effect is 0: no direction to grow toward")
    fits = fit_seeds(series, "linear", 1 if paper > 0 else -1)
    if not fits:
        return None
    estimate = slope(fits, level)
    return SeedTrend(fits, estimate, trend_class(estimate, paper))


def held_out_errors(series: dict, form: str, sign: int) -> dict[tuple, float]:
    """(seed, x) -> squared error on the e scale of the form fitted to that seed's other budgets,
    for every seed with three or more budgets."""
    errors = {}
    for seed in sorted(series):
        points = series[seed]
        if len({x for x, _ in points}) < 3:
            continue
        for i, (x, e) in enumerate(points):
            rest = points[:i] + points[i + 1:]
            a, b, *_ = line([p[0] for p in rest], [to_form(form, p[1], sign) for p in rest])
            errors[(seed, x)] = (e - from_form(form, a + b * x, sign)) ** 2
    return errors


def choose_form(errors: dict[str, dict[tuple, float]], level: float = LEVEL) -> dict:
    """The form with the smaller mean held-out squared error, each form's score, and the paired
    difference (first minus second form, over their common held-out points) with its t interval:
    `separated` when that interval excludes 0. One form scored: it, unseparated."""
    scored = {f: sum(v.values()) / len(v) for f, v in errors.items() if v}
    if not scored:
        raise ValueError("no form has a held-out error: no seed has three budgets")
    chosen = min(scored, key=scored.get)
    difference = None
    if len(scored) == 2:
        first, second = sorted(scored, key=FORMS.index)
        common = sorted(set(errors[first]) & set(errors[second]), key=str)
        if len(common) >= 2:
            difference = mean_interval([errors[first][k] - errors[second][k] for k in common], level)
    separated = bool(difference is not None and (difference.low > 0 or difference.high < 0))
    return {"chosen": chosen, "scores": scored, "difference": difference, "separated": separated}


def region(leaves: list[tuple[str, float | None]]) -> tuple[float, float]:
    """The e a comparison holds at, from the check's leaves reading its two cells: ('at_least', w)
    e >= ln w, ('below', w) e < ln w, ('above_zero', None) e > 0, ('below_zero', None) e < 0; their
    intersection (lo, hi). No leaf, or an empty intersection, is an error."""
    lo, hi = -math.inf, math.inf
    for kind, w in leaves:
        if kind == "at_least":
            lo = max(lo, math.log(w))
        elif kind == "below":
            hi = min(hi, math.log(w))
        elif kind == "above_zero":
            lo = max(lo, 0.0)
        elif kind == "below_zero":
            hi = min(hi, 0.0)
        else:
            raise ValueError(f"unknown leaf kind {kind!r}")
    if not leaves or lo >= hi:
        raise ValueError(f"the leaves {leaves} leave no e at which the comparison holds")
    return lo, hi


def verdict(estimate: Estimate, holds_in: tuple[float, float]) -> str:
    """holds: the interval inside the region; contradicted: wholly outside it; else inconclusive.
    No interval: the estimate itself is read."""
    lo, hi = holds_in
    low, high = (estimate.mean, estimate.mean) if estimate.low is None else (estimate.low, estimate.high)
    if lo <= low and high <= hi:
        return "holds"
    if high < lo or low > hi:
        return "contradicted"
    return "inconclusive"


def beyond(x: float, x_low: float, x_high: float) -> float:
    """Doublings of x outside [x_low, x_high] (0 inside)."""
    return x - x_high if x > x_high else x_low - x if x < x_low else 0.0


def anchored(x: float, edge_x: float, edge: Estimate, anchor_x: float, anchor_e: float, form: str,
             sign: int) -> Estimate:
    """Between the data's edge and the paper's point: each of the edge's mean and bounds joined to
    the paper's e by a straight line in the form's coordinates (the linear form's where a bound is
    on the wrong side of 0 for the power form), read at x (edge_x <= x <= anchor_x or the reverse)."""
    if not min(edge_x, anchor_x) <= x <= max(edge_x, anchor_x) or edge_x == anchor_x:
        raise ValueError(f"x = {x} is not between the data's edge {edge_x} and the paper's point {anchor_x}")
    values = [edge.mean] + ([] if edge.low is None else [edge.low, edge.high])
    if form == "power" and (sign * anchor_e <= 0 or any(sign * v <= 0 for v in values)):
        form = "linear"
    f = (x - edge_x) / (anchor_x - edge_x)
    z_anchor = to_form(form, anchor_e, sign)
    mean, *bounds = (from_form(form, (1 - f) * to_form(form, v, sign) + f * z_anchor, sign) for v in values)
    low, high = sorted(bounds) if bounds else (None, None)
    return Estimate(mean, low, high, f"interpolation ({form}) between our data and the paper's point")


def crossing(estimate_at, x_from: float, x_to: float, holds_in: tuple[float, float]) -> dict:
    """Where a prediction `estimate_at(x) -> Estimate` enters the region, searched on a grid of
    STEP doublings from x_from (the data's largest budget) to x_to: `inside_at_start` when its mean
    is inside at x_from; `value` the first x whose mean is inside (None: not by x_to); `early` the
    first x whose interval reaches the region, `late` the first whose interval lies inside it
    (None: not by x_to)."""
    lo, hi = holds_in
    found = {"inside_at_start": False, "value": None, "early": None, "late": None}
    steps = int(round((x_to - x_from) / STEP))
    for i in range(steps + 1):
        x = min(x_from + i * STEP, x_to)  # the last step lands on x_to (rounding never passes it)
        est = estimate_at(x)
        low, high = (est.mean, est.mean) if est.low is None else (est.low, est.high)
        if lo <= est.mean <= hi:
            if i == 0:
                found["inside_at_start"] = True
            found["value"] = x if found["value"] is None else found["value"]
        if found["early"] is None and high >= lo and low <= hi:
            found["early"] = x
        if found["late"] is None and lo <= low and high <= hi:
            found["late"] = x
    return found


def edges(series: dict) -> tuple[float, float]:
    """The data's range of x every seed of the fit reached: (the largest of the seeds' smallest x,
    the smallest of their largest), over seeds with two or more budgets."""
    usable = [p for p in series.values() if len({x for x, _ in p}) >= 2]
    if not usable:
        raise ValueError("no seed has two budgets")
    return max(min(x for x, _ in p) for p in usable), min(max(x for x, _ in p) for p in usable)


def at(fits: list[SeedFit], form: str, sign: int, x: float, data: tuple[float, float],
       anchor: tuple[float, float] | None, level: float = LEVEL) -> tuple[Estimate | None, str]:
    """The prediction at x by the rule on extrapolation: the fit within one doubling of the data;
    beyond it, between the data and the paper's point `anchor` (x, e), the interpolation toward
    it; else None, 'cannot extrapolate'. With it, how it was read."""
    x_low, x_high = data
    far = beyond(x, x_low, x_high)
    if far <= 1:
        return predict(fits, form, sign, x, level), ("within the data" if far == 0 else
                                                     f"{far:.2f} doublings beyond the data")
    if anchor is not None:
        edge = x_high if x > x_high else x_low
        if min(edge, anchor[0]) <= x <= max(edge, anchor[0]):
            return (anchored(x, edge, predict(fits, form, sign, edge, level), anchor[0], anchor[1], form, sign),
                    f"interpolation between our data and the paper's point ({far:.2f} doublings beyond the data)")
    return None, f"cannot extrapolate: {far:.2f} doublings beyond the data"


def forecast(series: dict, paper: float, holds_in: tuple[float, float], targets: dict[str, float],
             anchor_x: float | None, level: float = LEVEL) -> dict:
    """The whole forecast of one series (docs/emergence.md, the rule): per form whether it applies,
    its slope and held-out errors; the choice; the trend class; per target x and form the
    prediction and its verdict, and the predicted verdict; each form at the paper's x; the crossing
    of the chosen form into the region."""
    sign = 1 if paper > 0 else -1
    usable = {s: p for s, p in series.items() if len({x for x, _ in p}) >= 2}
    if not usable:
        return {"note": "no seed has two budgets: no forecast", "seeds": len(series)}
    data = edges(usable)
    anchor = None if anchor_x is None else (anchor_x, paper)
    forms: dict[str, dict] = {}
    for form in FORMS:
        if not applies(form, usable, sign):
            wrong = sum(sign * e <= 0 for p in usable.values() for _, e in p)
            forms[form] = {"applies": False, "why": f"{wrong} of {sum(map(len, usable.values()))} points lie on "
                                                    "the other side of 0 from the paper's e"}
            continue
        fits = fit_seeds(usable, form, sign)
        forms[form] = {"applies": True, "fits": fits, "slope": slope(fits, level),
                       "errors": held_out_errors(usable, form, sign)}
    errors = {f: v["errors"] for f, v in forms.items() if v["applies"]}
    if any(errors.values()):
        choice = choose_form(errors, level)
        choice["why"] = ("the held-out errors separate the forms" if choice["separated"] else
                         "only the linear form applies" if len(errors) == 1 else
                         "lower held-out error, but the criterion does not separate the forms")
    else:
        choice = {"chosen": "linear", "scores": {}, "difference": None, "separated": False,
                  "why": "no seed has three budgets: no held-out error; the linear form by default"}
    chosen = choice["chosen"]
    trend = seed_trend(usable, paper, level)
    out = {"seeds": len(usable), "points": sum(len(p) for p in usable.values()), "data": data, "forms": forms,
           "choice": choice, "trend": trend.slope, "class": trend.label, "targets": {}}
    for name, x in targets.items():
        per_form = {}
        for form, spec in forms.items():
            if spec["applies"]:
                est, how = at(spec["fits"], form, sign, x, data, anchor, level)
                per_form[form] = {"estimate": est, "how": how,
                                  "verdict": "cannot extrapolate" if est is None else verdict(est, holds_in)}
        verdicts = {v["verdict"] for v in per_form.values()}
        said = per_form[chosen]["verdict"]
        if not choice["separated"] and len(verdicts) > 1 and "cannot extrapolate" not in verdicts:
            said = "inconclusive: the forms disagree"
        elif per_form[chosen]["how"].startswith("interpolation"):
            said += " (by the interpolation toward the paper's point)"
        out["targets"][name] = {"x": x, "forms": per_form, "verdict": said}
    out["anchor"] = None if anchor_x is None else {
        "x": anchor_x, "e": paper, "beyond": beyond(anchor_x, *data),
        "forms": {f: predict(s["fits"], f, sign, anchor_x, level) for f, s in forms.items() if s["applies"]}}
    fits = forms[chosen]["fits"]
    reach = data[1] + 1 if anchor_x is None or anchor_x <= data[1] + 1 else anchor_x
    out["crossing"] = {**crossing(lambda x: at(fits, chosen, sign, x, data, anchor, level)[0], data[1], reach, holds_in),
                       "searched_to": reach}
    return out
