"""The GPU phenomena stage's predictions, from committed records only (docs/gpu-phenomena.md):
`python scripts/gpu/phenomena.py predict` writes scripts/gpu/phenomena-predictions.md.

The rate: the slowest training rate recorded on the H100 at the stage's shape and batch, beside
benchmarks/gpu_cost.py's FLOPs costing (the smaller is used). The effects: each comparison of a
claim's narrowed check, a log ratio of two cells, from the same scheme and protocol at the nearest
measured shape, forecast by the rule of docs/emergence.md (lenex.scale_study.forecast: per-seed fits
on log2(tokens per non-embedding parameter), linear and power forms by held-out error, the paper's
point as anchor, 'cannot extrapolate' beyond one doubling); the old rule's prediction (a line per
seed on log2(tokens / all parameters): `predict_leaf`, `leaf_verdict`) stays beside it.
"""
from __future__ import annotations

import json
import math

import numpy as np

from phenomena import CORPUS, MODELS, PLAN, ROOT, SCALE_POINTS, SHIFT_SWEEP, model_config


def throughput() -> dict:
    """The stage's rate estimate: the lowest tokens/s recorded on the H100 at the plan's shape
    (every scheme and lenex's own peer row), and the FLOPs-costed rate of benchmarks/gpu_cost at the
    plan's own vocabulary; the smaller is used (no credit for the smaller vocabulary at a shape
    whose step is launch-bound, MFU 1-2%)."""
    from benchmarks import gpu_cost

    record = gpu_cost.load_record()
    result, peak = record["result"], record["result"]["peak_flops"]
    shape = PLAN["shape"]
    wanted = [shape["n_layer"], shape["d_model"], shape["n_head"], PLAN["train_length"]]
    name, recorded = next((n, s) for n, s in result["shapes"].items() if s["layers_width_heads_tokens"] == wanted)
    if recorded["batch"] != PLAN["batch_size"]:
        raise ValueError(f"the recorded {name} shape ran at batch {recorded['batch']}, the plan at {PLAN['batch_size']}")
    rates = {f"scheme {k}": v["tokens_per_s"]["median"] for k, v in recorded["schemes"].items()}
    rates["lenex peer"] = recorded["peers"]["lenex"]["tokens_per_s"]["median"]
    slowest = min(rates, key=rates.get)
    vocab = json.loads((CORPUS / "meta.json").read_text())["vocab_size"]
    costed, point = gpu_cost.tokens_per_s({**shape, "vocab": vocab, "train_length": PLAN["train_length"]},
                                          gpu_cost.recorded_points(record, []), peak)
    return {"record": str(gpu_cost.RECORD.relative_to(ROOT)), "gpu": record["machine"]["gpu"], "shape": name,
            "slowest": slowest, "recorded_tokens_per_s": rates[slowest],
            "recorded_mfu": rates[slowest] * gpu_cost.flops_per_token(shape["n_layer"], shape["d_model"],
                                                                      shape["d_ff"], 50257, PLAN["train_length"]) / peak,
            "costed_tokens_per_s": costed, "costed_from": point["what"], "used": min(rates[slowest], costed)}


def _scale_series(phenomenon: str, shape: str = "2x64") -> list[dict]:
    points = [json.loads(line) for line in SCALE_POINTS.read_text().splitlines() if line.strip()]
    return sorted((p for p in points if p["phenomenon"] == phenomenon and p["tokenizer"] == "bpe-4096"
                   and p["shape"] == shape), key=lambda p: p["train_tokens"])


def _shift_series() -> dict[int, list[dict]]:
    by_seed: dict[int, list[dict]] = {}
    for path in sorted(SHIFT_SWEEP.glob("*.json")):
        p = json.loads(path.read_text())
        by_seed.setdefault(p["seed"], []).append(p)
    return {s: sorted(v, key=lambda p: p["train_tokens"]) for s, v in by_seed.items()}


def line_at(xs, ys, x) -> tuple[float, float | None]:
    """(prediction, standard error of the fitted line at x) of a least-squares line; se None with
    fewer than 3 points."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    slope, intercept = np.polyfit(xs, ys, 1)
    pred = float(intercept + slope * x)
    if len(xs) < 3:
        return pred, None
    resid = ys - (intercept + slope * xs)
    s2 = float(resid @ resid) / (len(xs) - 2)
    se = math.sqrt(s2 * (1 / len(xs) + (x - xs.mean()) ** 2 / float(((xs - xs.mean()) ** 2).sum())))
    return pred, se


def predict_leaf(series: list[tuple[str, list[tuple[float, float]]]], x_stage: float) -> dict:
    """A leaf's predicted log effect at the stage's log2(tokens per parameter) `x_stage`, from one
    series per seed [(seed, [(x, effect)])]: a line per seed; with >= 2 seeds the interval is the t
    interval over the seeds' predictions, with one seed the line's own (df = n - 2)."""
    from scipy import stats

    top = min(max(x for x, _ in pts) for _, pts in series)
    low = max(min(x for x, _ in pts) for _, pts in series)
    beyond = x_stage - top
    facts = {"doublings_beyond": beyond, "x_range": [low, top], "seeds": len(series),
             "points": sum(len(p) for _, p in series)}
    if beyond > 1:
        return {**facts, "predicted": None, "why": f"cannot extrapolate: {beyond:.2f} doublings beyond the data"}
    preds = [line_at([x for x, _ in pts], [y for _, y in pts], x_stage) for _, pts in series]
    if len(preds) >= 2:
        values = np.array([p for p, _ in preds])
        half = float(stats.t.ppf(0.975, len(values) - 1)) * float(values.std(ddof=1)) / math.sqrt(len(values))
        return {**facts, "predicted": float(values.mean()), "interval": [values.mean() - half, values.mean() + half],
                "how": f"a line per seed ({len(values)} seeds), t interval over their predictions"}
    (pred, se), n = preds[0], len(series[0][1])
    if se is None:
        return {**facts, "predicted": pred, "interval": None, "how": "one seed, two points: no interval"}
    half = float(stats.t.ppf(0.975, n - 2)) * se
    return {**facts, "predicted": pred, "interval": [pred - half, pred + half],
            "how": f"one seed's line over {n} points (df {n - 2})"}


def leaf_verdict(leaf: dict, rule: str, threshold: float) -> str:
    """The leaf's predicted verdict: its predicted log effect's interval against ln(threshold)."""
    if leaf["predicted"] is None:
        return "cannot extrapolate"
    low, high = leaf["interval"] if leaf.get("interval") else (leaf["predicted"], leaf["predicted"])
    bound = math.log(threshold) if threshold else 0.0
    above = low > bound
    below = high < bound
    if rule in ("ratio_at_least", "less"):  # the effect must exceed the bound
        return "holds" if above else "contradicted" if below else "inconclusive"
    return "holds" if below else "contradicted" if above else "inconclusive"  # ratio_below


def predictions(stage_params: int) -> dict:
    """Every narrowed leaf of the stage's claims with its forecast (docs/emergence.md, "Forecasts:
    the rule": per-seed fits on x = log2(tokens per non-embedding parameter), the linear and power
    forms by held-out error, the paper's point as anchor) and, beside it, the old rule's prediction
    (a line per seed on log2(tokens / all parameters)), whose verdicts this page showed first."""
    from lenex.claims.evaluate import load_claims, thresholds_of
    from lenex.scale_study import forecast as fc
    from lenex.scale_study.predictions import claim_budgets, model_x
    from lenex.scale_study.sweeps import paper_cells_effect

    x_old = math.log2(PLAN["train_tokens"] / stage_params)
    x_stage = model_x(PLAN["train_tokens"], PLAN["shape"])
    lex = {c["id"]: c for c in load_claims(ROOT / "config/claims/lex.yaml")["claims"]}
    rf = {c["id"]: c for c in load_claims(ROOT / "config/claims/receptive-field.yaml")["claims"]}
    paper_x = {claim: scale["x"]["paper"] for claim, scale in claim_budgets(ROOT / "config").items()}

    def point(p, e):
        return math.log2(p["train_tokens"] / p["params"]), model_x(p["train_tokens"], p["model_config"]), e

    def scale_study(phenomenon, num, den):
        pts = _scale_series(phenomenon)
        ok = [p for p in pts if str(num) in p["ratio"] and str(den) in p["ratio"]]
        return [("1", [point(p, math.log(p["ratio"][str(num)] / p["ratio"][str(den)])) for p in ok])], \
            f"scale study {phenomenon} / bpe-4096 / 2x64 (LEX protocol, seed 1)"

    def shift(num):
        series = [(str(s), [point(p, math.log(p["last_token"]["ratio"][str(num)])) for p in pts])
                  for s, pts in _shift_series().items()]
        return series, f"sweep rf-shift-budget, rf-alibi-shift-6 at 8 x 64 (last-token protocol, {len(series)} seeds)"

    def lex_cells(method, num, den):
        return {"paper": "lex", "table": 2, "dataset": "pg22", "method": method, "numerator": 1024 * num,
                "denominator": 1024 * den}

    leaves = []
    t_lex = thresholds_of(lex["lex-absolute-rope-blow-up"])["explodes"]
    for row, phen in (("transformer", "sinusoidal-blowup"), ("roformer", "rope-blowup")):
        for k in (2, 4, 8):
            series, source = scale_study(phen, k, 1)
            leaves.append(("lex-absolute-rope-blow-up", f"t2/pg22/{row}@{k} / @1", "ratio_at_least", t_lex, series, source,
                           lex_cells(row, k, 1)))
    t_alibi = thresholds_of(lex["lex-alibi-rises-beyond-4x"])["explodes"]
    series, source = scale_study("alibi", 8, 4)
    leaves.append(("lex-alibi-rises-beyond-4x", "t2/pg22/alibi@8 / @4", "less", 1.0, series, source, lex_cells("alibi", 8, 4)))
    leaves.append(("lex-alibi-rises-beyond-4x", "t2/pg22/alibi@8 / @4", "ratio_below", t_alibi, series, source,
                   lex_cells("alibi", 8, 4)))
    t_shift = thresholds_of(rf["rf-shift-large-explodes"])["explodes"]
    for k in (2, 4, 8):
        series, source = shift(k)
        leaves.append(("rf-shift-large-explodes", f"t1/arxiv/alibi-shift-delta=6@{k} / @1", "ratio_at_least",
                       t_shift, series, source, {"paper": "sandwich", "table": 1, "dataset": "arxiv",
                                                 "method": "alibi-shift-delta=6", "numerator": 512 * k, "denominator": 512}))
    # A leaf's region of e: `less` reads ppl(@4) < ppl(@8), e > 0; the ratios their own thresholds.
    kinds = {"ratio_at_least": "at_least", "ratio_below": "below", "less": "above_zero"}
    found = []
    for claim, what, rule, threshold, series, source, cells in leaves:
        old = predict_leaf([(s, [(xo, e) for xo, _, e in pts]) for s, pts in series], x_old)
        holds_in = fc.region([(kinds[rule], None if rule == "less" else threshold)])
        paper = paper_cells_effect(cells)
        result = fc.forecast({s: [(xn, e) for _, xn, e in pts] for s, pts in series}, paper, holds_in,
                             {"stage": x_stage}, paper_x[claim])
        found.append({"claim": claim, "comparison": what, "rule": rule, "threshold": threshold, "source": source,
                      "paper": paper, "forecast": result, "verdict": result["targets"]["stage"]["verdict"],
                      "old": {**old, "verdict": leaf_verdict(old, rule, threshold)}})
    return {"x_stage": x_stage, "x_old": x_old, "leaves": found}


def base_verdict(verdict: str) -> str:
    """holds / contradicted / inconclusive / cannot extrapolate, without what qualifies it."""
    return verdict.split(" (")[0].split(":")[0]


def claim_verdict(verdicts: list[str]) -> str:
    if "contradicted" in verdicts:
        return "contradicted"
    if "cannot extrapolate" in verdicts:
        return "cannot extrapolate"
    return "holds" if all(v == "holds" for v in verdicts) else "inconclusive"


def predictions_page() -> str:
    from lenex.model import LanguageModel

    vocab = json.loads((CORPUS / "meta.json").read_text())["vocab_size"]
    params = {n: LanguageModel(model_config(n, PLAN, vocab)).num_parameters() for n in MODELS}
    rate = throughput()
    found = predictions(params["rope"])
    s = PLAN["shape"]
    lines = ["# GPU phenomena stage: what it should show, predicted before its first GPU run", "",
             "Generated by `python scripts/gpu/phenomena.py predict` from committed records only: "
             f"`{rate['record']}` (throughput), `results/scale-study/points.jsonl` and "
             "`results/scale-study/sweeps/rf-shift-budget/points/` (effects), `config/claims/*.yaml` (thresholds). "
             "`tests/test_gpu_phenomena.py` checks that this file is what the script writes.", "",
             "## The shape and budget, and why", "",
             f"- Shape {s['n_layer']} x {s['d_model']}, {s['n_head']} heads, d_ff {s['d_ff']}, L_tr = {PLAN['train_length']}, "
             f"batch {PLAN['batch_size']} x L_tr, vocabulary {vocab} (the carried corpus's BPE); "
             f"{PLAN['train_tokens']:,} training tokens a model "
             f"({PLAN['train_tokens'] // (PLAN['batch_size'] * PLAN['train_length']):,} steps), one seed.",
             f"- Why: the scale variable is tokens per parameter, and a fixed ~40 s per model buys the most of it at the "
             f"smallest shape with a recorded GPU rate: the H100 record's `{rate['shape']}` shape, at its batch, so the "
             "rate needs no extrapolation. It is also the scale study's 2 x 64 shape, so the LEX claims' "
             "forecasts read a series at the very shape. L_tr = 64: 8 x L_tr = 512 fits every carried test piece and "
             "the record's sequence length. The budget is the largest power of two (the grid every committed budget "
             "lies on) whose predicted time is within 40 s.",
             f"- Rate: {rate['used']:,.0f} tokens/s, the slowest rate recorded at that shape ({rate['slowest']}, "
             f"{rate['recorded_tokens_per_s']:,.0f} tokens/s, MFU {rate['recorded_mfu']:.2%} on the {rate['gpu']}, "
             f"eager, reference attention, bf16 autocast, fused AdamW); benchmarks/gpu_cost.py's FLOPs costing at "
             f"vocabulary {vocab} would give {rate['costed_tokens_per_s']:,.0f} (lowest MFU at the nearest recorded "
             f"shape, {rate['costed_from']}), not used: a step at 1-2% MFU is launch-bound, and a smaller "
             "vocabulary is no measured speed-up. No credit is taken for the H200 over the H100 either.", "",
             "| model | position (options) | parameters | tokens per parameter | tokens per non-embedding parameter | "
             "predicted seconds |",
             "|---|---|---:|---:|---:|---:|"]
    for name in MODELS:
        cfg = model_config(name, PLAN, vocab)
        lines.append(f"| {MODELS[name][0]} | {cfg.position} {json.dumps(cfg.position_options, sort_keys=True)} | "
                     f"{params[name]:,} | {PLAN['train_tokens'] / params[name]:.1f} | {2 ** found['x_stage']:.1f} | "
                     f"{PLAN['train_tokens'] / rate['used']:.1f} |")
    total = len(MODELS) * PLAN["train_tokens"] / rate["used"]
    lines += ["", f"Training in all: {total:.0f} s predicted (guard {PLAN['guard_s']:.0f} s a model), plus scoring.", "",
              "## The method", "",
              "Each comparison a claim's narrowed check reads is a log ratio of two cells, e = ln(ppl(a) / ppl(b)), "
              "forecast from the committed records of the same scheme and protocol at the nearest measured shape by "
              "the rule of docs/emergence.md (\"Forecasts: the rule\", fixed after a reviewer had seen the "
              "rf-shift-budget means and before its code ran; lenex.scale_study.forecast). The scale variable is "
              "x = log2(training tokens per non-embedding parameter), on which the stage sits at "
              f"x = {found['x_stage']:.2f} and the paper's own models at the `paper` preset's tokens and shape. Each "
              "seed is fitted alone (the scale study has one seed a point, its line's own interval; the "
              "rf-shift-budget sweep several, a t interval over the seeds' predictions); two forms, linear (e on x) "
              "and power (ln |e| on x, only where every point lies on the paper's side of 0), are compared by "
              "leave-one-budget-out squared error on e, and the lower is used; where that error does not separate "
              "them and their verdicts differ, the verdict is 'inconclusive: the forms disagree'. More than one "
              "doubling beyond the data (the largest budget every seed reached) is 'cannot extrapolate', unless the "
              "stage lies between the data and the paper's point: then it is read on a straight line (in the form's "
              "coordinates) from the fit at the data's edge to the paper's effect, which assumes the paper's models "
              "lie on our curve. A comparison's predicted verdict is its 95% interval against the claim's threshold "
              "(thresholds_of; ln of it); a claim holds if every comparison does, is contradicted if one is, else "
              "inconclusive. The old rule's prediction (a line per seed on log2(tokens / all parameters), the stage "
              f"at {found['x_old']:.2f}, no form compared, no anchor) stays beside each: it is what this page said "
              "before the rule changed. Caveats: the scale study's series were trained on the tiny preset's PG22 "
              "stand-in (Shakespeare + Milton) at batch 16, the sweep on the arXiv stand-in at 8 x 64, and the scale "
              "study's ALiBi with its default slopes where the stage uses the workstation's `lex-alibi` (slopes x 4); "
              "the stage trains at batch 64 on the workstation PG22 stand-in and repeats its "
              f"{json.loads((CORPUS / 'meta.json').read_text())['splits']['train']['n_tokens']:,} carried train tokens "
              f"about {PLAN['train_tokens'] / json.loads((CORPUS / 'meta.json').read_text())['splits']['train']['n_tokens']:.1f} times.", "",
              "## Predicted effects and verdicts", "",
              "| claim | comparison | rule, threshold | measured by | data x; the paper's point (x, ratio) | forms (held-out MSE of e) | "
              "predicted ratio (95%), how | verdict | old rule: ratio (95%), verdict |",
              "|---|---|---|---|---|---|---|---|---|"]

    def ratio(est) -> str:
        if est is None:
            return "—"
        return f"x{math.exp(est.mean):.3f}" + ("" if est.low is None else f" (x{math.exp(est.low):.3f} to x{math.exp(est.high):.3f})")

    for leaf in found["leaves"]:
        f = leaf["forecast"]
        chosen = f["choice"]["chosen"]
        at = f["targets"]["stage"]["forms"][chosen]
        forms = "; ".join(f"{name}: " + (f"{f['choice']['scores'][name]:.3g}" if name in f["choice"]["scores"] else
                                         "no held-out error" if spec["applies"] else "not applicable")
                          for name, spec in f["forms"].items())
        old = leaf["old"]
        old_shown = "—" if old["predicted"] is None else (f"x{math.exp(old['predicted']):.3f}" + (
            f" (x{math.exp(old['interval'][0]):.3f} to x{math.exp(old['interval'][1]):.3f})" if old.get("interval") else ""))
        anchor = f["anchor"]
        lines.append(f"| {leaf['claim']} | {leaf['comparison']} | {leaf['rule']} x{leaf['threshold']:.3g} | {leaf['source']} | "
                     f"{f['data'][0]:.2f} to {f['data'][1]:.2f}; {anchor['x']:.2f}, x{math.exp(anchor['e']):.3f} "
                     f"(the {chosen} form there: {ratio(anchor['forms'][chosen])}) | {forms}; **{chosen}** | "
                     f"{ratio(at['estimate'])}, {at['how']} | {leaf['verdict']} | {old_shown}, {old['verdict']} |")
    lines += ["", "| claim | predicted verdict at this stage | under the old rule |", "|---|---|---|"]
    for claim in dict.fromkeys(leaf["claim"] for leaf in found["leaves"]):
        mine = [leaf for leaf in found["leaves"] if leaf["claim"] == claim]
        lines.append(f"| {claim} | {claim_verdict([base_verdict(leaf['verdict']) for leaf in mine])} | "
                     f"{claim_verdict([leaf['old']['verdict'] for leaf in mine])} |")
    return "\n".join(lines) + "\n"
