"""Where each phenomenon would show: every budget series of the committed points (each sweep's
`points/`, the scale study's `points.jsonl`) forecast by the rule of docs/emergence.md ("Forecasts:
the rule"; lenex.scale_study.forecast), at the claim's models of the `gpu` preset (one GPU-day per
paper) and at the GPU phenomena stage (its plan, scripts/gpu/phenomena-plan.json), with the paper's own point
(the `paper` preset's models and tokens, the paper's cells) as the anchor.

One scale variable: x = log2(training tokens per non-embedding parameter). A claim's x at a preset
is that of the least-trained model it reads (its `scale.variants`, else the variants of the table
rows its cell references name, else the paper's every variant). The target is the region of e the
claim's check holds at for the effect's two cells (`check_leaves`), valued by
lenex.claims.evaluate.thresholds_of, not the paper's full effect. The verdict of the old rule (one
pooled line to the paper's effect, the emergence records) stays beside each series (`says`).
"""
from __future__ import annotations

import math
from pathlib import Path

from ..experiment.presets import budget_tokens, paper_view, variant_model, variant_tokens
from ..files import read_json, read_yaml

PRESETS = ("workstation", "gpu", "paper")


STAGE = "scripts/gpu/phenomena-plan.json"  # the GPU stage's plan (shape, tokens) and the claims it judges


def stage_of(root: str | Path) -> dict:
    """The GPU phenomena stage as the forecasts read it: its x (the plan's tokens over its shape's
    non-embedding parameters), the claims it judges and a line saying what it trains."""
    stage = read_json(Path(root) / STAGE)
    plan, shape = stage["plan"], stage["plan"]["shape"]
    return {"x": model_x(plan["train_tokens"], shape), "claims": [c for ids in stage["claims"].values() for c in ids],
            "what": f"{shape['n_layer']} x {shape['d_model']} (d_ff {shape['d_ff']}), L_tr {plan['train_length']}, "
                    f"{plan['train_tokens']:,} tokens a model"}


def record_files(root: str | Path) -> list[str]:
    """The committed points the forecasts read, relative to `root`, and the stage's plan."""
    root = Path(root)
    points = sorted(str(p.relative_to(root)) for p in root.glob("results/scale-study/sweeps/*/points/*.json"))
    return ["results/scale-study/points.jsonl", STAGE, "config/sweeps.yaml"] + points


def config_files(root: str | Path) -> list[str]:
    """What the predictions read besides the emergence records, relative to `root`: the presets,
    the claims files and the experiment definitions of their papers (the rule's inputs)."""
    claims = sorted((Path(root) / "config" / "claims").glob("*.yaml"))
    return ([f"config/presets/{name}.yaml" for name in PRESETS] + [f"config/claims/{p.name}" for p in claims]
            + [f"config/experiments/{p.name}" for p in claims])


def table_variants(experiment: dict) -> dict[tuple[str, str, str], str]:
    """(table number, dataset, method) -> the variant of that row, from an experiment definition."""
    found = {}
    for table in (experiment.get("tables") or {}).values():
        for section in table.get("sections") or []:
            for row in section.get("rows") or []:
                if "variant" in row:
                    found[(str(table["table"]), section["dataset"], row["method"])] = row["variant"]
    return found


def read_variants(claim: dict, rows: dict[tuple[str, str, str], str]) -> list[str]:
    """The variants a claim reads: its `scale.variants`, else those of the rows its cell references
    name (`table_variants`); sorted, each once."""
    # Imported here: workflow/rules/sweeps.smk imports this module when Snakemake parses the
    # workflow, and the claims' references pull in scipy.stats (about 0.6 s on every start-up).
    from ..claims.evaluate import references
    from ..claims.refs import cell_row, expand

    named = (claim.get("scale") or {}).get("variants")
    if named:
        return sorted(set(named))
    found = set()
    for ref in (r for ref in references(claim.get("check")) for r in expand(ref)):
        row = cell_row(ref)
        if row in rows:
            found.add(rows[row])
    return sorted(found)


def claim_budgets(config_dir: Path) -> dict[str, dict]:
    """claim id -> {"paper": its paper, "budgets": preset -> tokens per model of the models it reads}
    (the module's docstring), from config/claims/<paper>.yaml, config/experiments/<paper>.yaml and
    the presets. A variant a claim reads that its paper does not define is an error naming it."""
    presets = {name: read_yaml(config_dir / "presets" / f"{name}.yaml") for name in PRESETS}
    found: dict[str, dict] = {}
    for path in sorted((config_dir / "claims").glob("*.yaml")):
        paper = path.stem
        experiment = read_yaml(config_dir / "experiments" / f"{paper}.yaml")
        variants, rows = experiment["variants"], table_variants(experiment)
        views = {name: paper_view(preset, paper) for name, preset in presets.items()}
        for claim in read_yaml(path)["claims"]:
            named = read_variants(claim, rows)
            unknown = sorted(set(named) - set(variants))
            if unknown:
                raise ValueError(f"{path.name}: claim {claim['id']!r} reads variants {unknown}, which "
                                 f"are not variants of {paper}")
            read = {name: variants[name] for name in named} or variants
            found[claim["id"]] = {"paper": paper, "budgets": {name: budget_tokens(view, read)
                                                              for name, view in views.items()},
                                  "x": {name: least_x(view, read) for name, view in views.items()}}
    return found


def model_x(tokens: float, model: dict) -> float:
    """log2 of training tokens per non-embedding parameter (lenex.experiment.dimensions)."""
    from ..experiment.dimensions import tokens_per_parameter

    return math.log2(tokens_per_parameter(tokens, model["n_layer"], model["d_model"], model["d_ff"]))


def least_x(view: dict, variants: dict) -> float:
    """The smallest x of the variants' models at a preset view: the least-trained model read."""
    return min(model_x(variant_tokens(view, v), variant_model(view, name, v)) for name, v in variants.items())


def says(reading: dict, gpu_tokens: int, paper_tokens: int) -> str:
    """What one emergence record predicted under the old rule (its `pooled` reading: one line over
    every seed's points, crossing the paper's full effect): shows within one GPU-day (the crossing's
    whole interval at or below the gpu preset's tokens), may show (its estimate only), needs more
    than one GPU-day (within or beyond the paper's own budget), does not grow, or predicts no budget."""
    if reading["variable"] != "train_tokens":
        return f"not a budget trend ({reading['variable']}): predicts no budget"
    pooled = reading.get("pooled")
    if pooled is None:
        return "no trend: " + (reading.get("note") or "too few points")
    if pooled["class"] != "grows":
        return f"does not grow ({pooled['class']}): no budget predicted"
    cross = pooled["crossing"]
    if cross is None:
        return "grows, but its line never reaches the paper's effect"
    high = cross.get("high")
    if high is not None and high <= gpu_tokens:
        return "shows within one GPU-day"
    if cross["value"] <= gpu_tokens:
        return "may show within one GPU-day (its interval reaches beyond)"
    where = "within" if cross["value"] <= paper_tokens else "beyond"
    return f"needs more than one GPU-day ({where} the paper's own budget)"



def effect_refs(effect: dict) -> tuple[str, str]:
    """The claim's cell references of an effect's numerator and denominator, from its paper cells
    (table, dataset, method) and its multiples of L_tr."""
    cells = effect["paper"]
    stem = f"t{cells['table']}/{cells['dataset']}/{cells['method']}"
    return f"{stem}@{effect['numerator']}", f"{stem}@{effect['denominator']}"


def check_leaves(claim: dict, numerator: str, denominator: str) -> list[tuple[str, float | None, str]]:
    """The comparisons of a claim's check that read these two cells, as forecast.region's leaves
    with the words they came from: e = ln ppl(numerator) - ln ppl(denominator); a threshold word is
    valued by thresholds_of(claim). A leaf under `not` is an error (its region would be the
    complement); none found is an empty list."""
    from ..claims.evaluate import thresholds_of
    from ..claims.refs import expand

    words = thresholds_of(claim)
    found = []

    def walk(check, negated=False):
        kind, args = next(iter(check.items()))
        if kind in ("all", "any"):
            for sub in args:
                walk(sub, negated)
            return
        if kind == "not":
            walk(args, True)
            return
        if kind not in ("less", "at_most", "ratio_at_least", "ratio_below"):
            return
        pairs = list(zip(expand(args[0]), expand(args[1])))
        for a, b in pairs:
            if {a, b} != {numerator, denominator}:
                continue
            if negated:
                raise ValueError(f"claim {claim['id']!r}: a comparison of {a} and {b} under `not` has no region")
            forward = a == numerator
            if kind in ("less", "at_most"):
                found.append(("below_zero" if forward else "above_zero", None, f"{kind} {a} < {b}"))
            else:
                w = words[args[2]]
                leaf = {("ratio_at_least", True): ("at_least", w), ("ratio_below", True): ("below", w),
                        ("ratio_at_least", False): ("below", 1 / w), ("ratio_below", False): ("at_least", 1 / w)}
                found.append((*leaf[(kind, forward)], f"{kind} {a} / {b} {args[2]} = {w:g}"))

    if claim.get("check"):
        walk(claim["check"])
    return found


#: The scale variables a series can be read against: `tokens`, log2 tokens per parameter (model_x);
#: `loss`, the point's final validation loss at L_tr (emergence.record_final_loss), where its training
#: curve is recorded (a point without one is left out).
AXES = ("tokens", "loss")


def series_of(records: list[dict], effect: dict, model: str, axis: str = "tokens") -> dict:
    """{seed: [(x, e)]} of one effect over points of `model` (a record lacking a length or the
    protocol the effect reads is left out), x from each point's own model and tokens, or (`axis`
    "loss") its final validation loss."""
    from .emergence import record_effect, record_final_loss

    if axis not in AXES:
        raise ValueError(f"unknown scale axis {axis!r}; known: {', '.join(AXES)}")
    out: dict = {}
    for r in records:
        if r["phenomenon"] != model:
            continue
        e = record_effect(r, effect)
        x = model_x(r["train_tokens"], r["model_config"]) if axis == "tokens" else record_final_loss(r)
        if e is not None and x is not None:
            out.setdefault(r.get("seed", 1), []).append((x, e))
    return {s: sorted(v) for s, v in sorted(out.items())}


def budget_series(root: Path, config: dict, axis: str = "tokens") -> list[dict]:
    """Every series of the committed points: each sweep's effects over its recorded points (a sweep
    of another variable gives a row that predicts no budget), then the scale study's budget series
    (config/sweeps.yaml `scale_study_effects`, three or more budgets at one tokenizer and shape);
    x on `axis` (series_of: tokens per parameter, or the final validation loss where recorded)."""
    from .points import read_points
    from .emergence_report import scale_study_series

    found = []
    for name, sweep in config["sweeps"].items():
        records = [read_json(p) for p in sorted((root / "results/scale-study/sweeps" / name / "points").glob("*.json"))]
        for effect in sweep["effects"]:
            mine = [r for r in records if r["phenomenon"] == effect["model"]]
            if not mine:
                continue
            found.append({"claim": effect["claim"], "source": f"sweep {name}", "subject": effect["model"],
                          "variable": sweep["variable"]["name"], "effect": effect,
                          "series": series_of(mine, effect, effect["model"], axis)
                          if sweep["variable"]["name"] == "train_tokens" else None})
    points = list(read_points(root / "results/scale-study/points.jsonl").values())
    for effect, where, group in scale_study_series(points, config.get("scale_study_effects", [])):
        found.append({"claim": effect["claim"], "source": "the scale study's budget series",
                      "subject": f"{effect['phenomenon']} / {where['tokenizer']} / {where['shape']}",
                      "variable": "train_tokens", "effect": effect,
                      "series": series_of(group, effect, effect["phenomenon"], axis)})
    return found


def rows(found: list[dict], claims: dict[str, dict], claim_specs: dict[str, dict], stage: dict,
         old: list[dict]) -> list[dict]:
    """Each series forecast (forecast.forecast) at the claim's gpu preset x and, for the claims the
    GPU stage judges, the stage's x, anchored at the paper preset's x and the paper's effect; with
    the old rule's reading (an emergence record of the same claim, source and subject) beside it."""
    from . import forecast as fc
    from .sweeps import paper_cells_effect

    out = []
    for item in found:
        claim = item["claim"]
        if claim not in claims:
            raise ValueError(f"a series names claim {claim!r}, which no config/claims file has")
        scale = claims[claim]
        paper = paper_cells_effect(item["effect"]["paper"])
        num, den = effect_refs(item["effect"])
        leaves = check_leaves(claim_specs[claim], num, den)
        row = {**{k: item[k] for k in ("claim", "source", "subject", "variable")}, "paper_e": paper,
               "refs": (num, den), "leaves": leaves, "scale": scale, "result": None, "note": ""}
        previous = [r for r in old if (r["claim"], r["source"], r["subject"]) == (claim, item["source"], item["subject"])]
        row["old"] = says(previous[0], scale["budgets"]["gpu"], scale["budgets"]["paper"]) if previous else None
        if item["series"] is None:
            row["note"] = f"not a budget trend ({item['variable']}): predicts no budget"
        elif not leaves:
            row["note"] = f"the claim's check compares neither way {num} and {den}: no threshold to forecast"
        else:
            targets = {"gpu": scale["x"]["gpu"]}
            if claim in stage["claims"]:
                targets["stage"] = stage["x"]
            holds_in = fc.region([(kind, w) for kind, w, _ in leaves])
            row["region"] = holds_in
            row["result"] = fc.forecast(item["series"], paper, holds_in, targets, scale["x"]["paper"])
            row["note"] = row["result"].get("note", "")
        out.append(row)
    return out


def loss_rows(found: list[dict]) -> list[dict]:
    """Each budget series on the loss axis (budget_series with axis "loss"): the effect's trend per
    nat of in-length validation loss given up (x = minus the loss, so "grows" is toward the paper's
    side as the loss falls), fitted per seed as the token axis is (forecast.seed_trend), with the
    range of loss the points reached. No forecast reads it: the paper's models' loss is on another
    corpus and tokenizer, so their point has no place on this axis."""
    from . import forecast as fc
    from .sweeps import paper_cells_effect

    out = []
    for item in found:
        if not item["series"]:
            continue
        paper = paper_cells_effect(item["effect"]["paper"])
        given_up = {seed: sorted((-loss, e) for loss, e in points) for seed, points in item["series"].items()}
        losses = [loss for points in item["series"].values() for loss, _ in points]
        out.append({**{k: item[k] for k in ("claim", "source", "subject")}, "seeds": len(item["series"]),
                    "points": len(losses), "loss": (min(losses), max(losses)), "trend": fc.seed_trend(given_up, paper)})
    return out


def loss_section(loss: list[dict]) -> list[str]:
    """The loss-axis trends as Markdown lines (loss_rows)."""
    lines = ["", "## The same series on the loss axis", "",
             "x = the final validation loss at L_tr of each point's model (its training curve's last validation, "
             "else the point's own `valid_loss`: the same validation of its final checkpoint), in nats per token. "
             "The slope is the change of e per nat of loss given up (the loss falls as a model trains), fitted per "
             "seed and averaged with a t interval over seeds, as on the token axis; 'grows' is toward the paper's "
             "side as the loss falls. It says whether an effect follows how well a model has learned its text rather "
             "than the tokens alone. No forecast is made on it: the paper's models' loss is on another corpus and "
             "tokenizer, so the paper's point has no place on this axis.", "",
             "| claim | measured by | seeds, points | validation loss (nats) | slope of e per nat given up (95%) | trend |",
             "|---|---|---|---|---|---|"]
    for row in loss:
        trend = row["trend"]
        if trend is None:
            slope, label = "no seed has two budgets", "—"
        else:
            est = trend.slope
            slope = _e(est.mean) + ("" if est.low is None else f" ({_e(est.low)}, {_e(est.high)})")
            label = trend.label or "no interval"
        lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} | {row['seeds']}, {row['points']} | "
                     f"{row['loss'][0]:.3f} to {row['loss'][1]:.3f} | {slope} | {label} |")
    return lines


def _e(x: float | None) -> str:
    return "—" if x is None else f"{x:+.3f}"


def _estimate(est) -> str:
    if est is None:
        return "—"
    return _e(est.mean) + ("" if est.low is None else f" ({_e(est.low)}, {_e(est.high)})")


def _tpp(x: float) -> str:
    return f"{2 ** x:.3g}"


def _region(holds_in) -> str:
    lo, hi = holds_in
    if math.isinf(hi):
        return f"e ≥ {lo:+.3f}"
    if math.isinf(lo):
        return f"e < {hi:+.3f}"
    return f"{lo:+.3f} < e < {hi:+.3f}"


def _forms(result: dict) -> str:
    parts = []
    for form, spec in result["forms"].items():
        score = result["choice"]["scores"].get(form)
        parts.append(f"{form}: " + (f"not applicable ({spec['why']})" if not spec["applies"] else
                                    "no held-out error" if score is None else f"held-out MSE {score:.3g}"))
    d = result["choice"].get("difference")
    diff = "" if d is None else f"; linear − power {d.mean:+.3g} ({d.low:+.3g}, {d.high:+.3g})"
    return "; ".join(parts) + diff


def _at(result: dict, target: str) -> str:
    if target not in result["targets"]:
        return "the stage trains no model of this claim"
    t = result["targets"][target]
    chosen = t["forms"][result["choice"]["chosen"]]
    others = "; ".join(f"{f}: {_estimate(v['estimate'])} ({v['how']}), {v['verdict']}"
                       for f, v in t["forms"].items() if f != result["choice"]["chosen"])
    return (f"x = {t['x']:.2f} ({_tpp(t['x'])} tokens/param): {_estimate(chosen['estimate'])}, {chosen['how']}; "
            f"**{t['verdict']}**" + (f" (other form, {others})" if others else ""))


def _short(result: dict, target: str) -> str:
    """The chosen form's e (95%) and the predicted verdict at a target, for the summary table."""
    if target not in result["targets"]:
        return "not trained by the stage"
    t = result["targets"][target]
    return f"{_estimate(t['forms'][result['choice']['chosen']]['estimate'])}: {t['verdict']}"


def _crossing(result: dict) -> str:
    c, (low, high) = result["crossing"], result["data"]
    if c["inside_at_start"]:
        return f"inside the region at the data's largest budget (x = {high:.2f})"
    if c["value"] is None:
        what = "toward the paper's point" if c["searched_to"] > high + 1 else "within one doubling beyond the data"
        return f"does not enter the region {what} (searched to x = {c['searched_to']:.2f}): cannot extrapolate further"
    via = " (by the interpolation toward the paper's point)" if c["value"] > high + 1 else ""
    late = "beyond the search" if c["late"] is None else f"{c['late']:.2f}"
    return f"x = {c['value']:.2f} ({_tpp(c['value'])} tokens/param){via}, interval {c['early']:.2f} to {late}"


def _anchor(result: dict) -> str:
    a = result["anchor"]
    chosen = result["choice"]["chosen"]
    est = a["forms"][chosen]
    where = "within the data" if a["beyond"] == 0 else f"{a['beyond']:.2f} doublings outside the data"
    inside = "" if est.low is None else (" — the paper's e lies in its interval" if est.low <= a["e"] <= est.high
                                         else " — the paper's e lies outside its interval")
    return f"x = {a['x']:.2f} ({where}); paper e {a['e']:+.3f}; the {chosen} form there {_estimate(est)}{inside}"


def page(found: list[dict], stage: dict, loss: list[dict] | None = None) -> str:
    """The forecasts as Markdown: a summary table, then per claim its threshold and per series the
    forms, the choice, the anchor, the predictions at the gpu preset and the GPU stage, the
    crossing and the old rule's reading."""
    lines = ["# Where each phenomenon would show: forecasts at one GPU-day and at the GPU stage", "",
             "Built by `python -m lenex.scale_study.sweep_run predictions` from the committed points (each sweep's "
             "`points/`, `results/scale-study/points.jsonl`), the presets and the claims, by the rule of "
             "docs/emergence.md (\"Forecasts: the rule\", fixed after a reviewer had seen the rf-shift-budget "
             "means and before this code ran). x = log2(training tokens per non-embedding parameter), the one "
             "scale variable on which our points, the presets' models and the paper's own point are placed. Each "
             "seed is fitted alone and the seeds' predictions averaged (t interval over seeds; one seed: its own "
             "line's interval); the linear form (e on x) and the power form (ln |e| on x) are compared by "
             "leave-one-budget-out squared error on e; the target is the region of e the claim's check holds at; "
             "more than one doubling beyond the data is 'cannot extrapolate' unless it lies toward the paper's "
             "point (then an interpolation between our data and it, which assumes the paper's models lie on our "
             "curve). Intervals 95%.", "",
             f"The GPU phenomena stage (docs/gpu-phenomena.md): {stage['what']}, x = {stage['x']:.2f} "
             f"({_tpp(stage['x'])} tokens per non-embedding parameter); it judges {', '.join(stage['claims'])}.", "",
             "| claim | measured by | chosen form | at one GPU-day (gpu preset): e (95%), verdict | "
             "at the GPU stage: e (95%), verdict |",
             "|---|---|---|---|---|"]
    for row in found:
        r = row["result"]
        if r is None or "targets" not in r:
            lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} | — | {row['note']} | — |")
            continue
        lines.append(f"| {row['claim']} | {row['source']}, {row['subject']} | {r['choice']['chosen']} | "
                     f"{_short(r, 'gpu')} | {_short(r, 'stage')} |")
    for claim in dict.fromkeys(row["claim"] for row in found):
        mine = [row for row in found if row["claim"] == claim]
        scale = mine[0]["scale"]
        lines += ["", f"## {claim}", "",
                  f"Tokens per model (x): workstation {scale['budgets']['workstation']:.3g} ({scale['x']['workstation']:.2f}), "
                  f"gpu {scale['budgets']['gpu']:.3g} ({scale['x']['gpu']:.2f}), paper {scale['budgets']['paper']:.3g} "
                  f"({scale['x']['paper']:.2f}).", ""]
        for row in mine:
            lines += [f"### {row['source']}, {row['subject']}", ""]
            r = row["result"]
            if r is None or "targets" not in r:
                lines += [f"- {row['note'] or 'no forecast'}."]
                if row["old"]:
                    lines.append(f"- Old rule (one pooled line to the paper's full effect): {row['old']}.")
                lines.append("")
                continue
            num, den = row["refs"]
            trend = r["trend"]
            slope = _e(trend.mean) + ("" if trend.low is None else f" ({_e(trend.low)}, {_e(trend.high)})")
            lines += [f"- Effect e = ln ppl({num}) − ln ppl({den}); the check holds at {_region(row['region'])} "
                      f"({'; '.join(w for _, _, w in row['leaves'])}).",
                      f"- Data: {r['seeds']} seed(s), {r['points']} points, x {r['data'][0]:.2f} to {r['data'][1]:.2f} "
                      f"(the range every seed reached). Slope of e per doubling (linear, per seed): {slope}, "
                      f"{trend.how}: **{r['class'] or 'no interval'}**.",
                      f"- Forms: {_forms(r)}. Chosen: **{r['choice']['chosen']}** ({r['choice']['why']}).",
                      f"- The paper's point: {_anchor(r)}.",
                      f"- At one GPU-day (gpu preset): {_at(r, 'gpu')}.",
                      f"- At the GPU stage: {_at(r, 'stage')}.",
                      f"- Enters the region: {_crossing(r)}."]
            if row["old"]:
                lines.append(f"- Old rule (one pooled line to the paper's full effect): {row['old']}.")
            lines.append("")
    if loss:
        lines += loss_section(loss)
    return "\n".join(lines).rstrip("\n") + "\n"
