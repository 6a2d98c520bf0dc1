"""Emergence sweeps: config/sweeps.yaml, its points, their cost and their parts.

A sweep varies one variable of one named setting (`train_tokens`, `n_head` at a fixed head
dimension, or `corpus`) over its values, for each of its models and seeds; a point is one model
trained by the pipeline's one training rule (its spec: lenex.scale_study.studies) and scored by the
scale study's own code (lenex.scale_study.study.score_point), recorded as a
scale-study point under results/scale-study/sweeps/<sweep>/points/<point>.json. Points are packed
into parts, each predicted by the cost model to fit `part_hours` x `margin` on `cores` one-thread
jobs side by side; the plan is written before any point runs (docs/emergence.md).
"""
from __future__ import annotations

import re
import statistics
from pathlib import Path

import jsonschema

from ..files import read_yaml
from .points import PointFiles, point_name

# The paper's numbers (pandas), the emergence analysis (scipy) and the scale study (torch) are
# imported where they are used: the workflow imports this module (through sweep_rules) on every
# DAG build, and a no-op rerun of the papers' targets must not pay for torch.

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / "config" / "sweeps.yaml"
SCHEMA = ROOT / "workflow" / "schemas" / "sweeps.schema.yaml"
OUT = "results/scale-study/sweeps"  # per sweep: points/, parts/, emergence.md and .png; plan.md
WORK = "results/scale-study/sweep-work"  # prepared corpora, training state, evaluations (not committed)
MODELS = "results/scale-study/models/sweeps"  # the points' models, <sweep>/<point>.pt (the training rule's layout)
FORWARD_PER_TRAIN = 3  # a training step ~ one forward and a backward of twice its cost: scoring runs ~3x faster
_POINT = re.compile(r"^(?P<model>[A-Za-z0-9_.-]+?)__(?P<variable>train_tokens|n_head|corpus)-(?P<value>[A-Za-z0-9_.-]+)"
                    r"__seed(?P<seed>[0-9]+)$")


def load_sweeps(path: str | Path = CONFIG, root: Path = ROOT) -> dict:
    """The sweeps config, validated against its schema and its cross-references (one error
    naming the first thing wrong)."""
    path = Path(path)
    config = read_yaml(path)
    schema = read_yaml(root / SCHEMA.relative_to(ROOT))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if errors:
        first = min(errors, key=lambda e: [str(p) for p in e.path])
        raise ValueError(f"{path}: {'/'.join(map(str, first.path)) or 'top level'}: {first.message}")
    try:
        check_sweeps(config, claim_ids(root), corpus_names(config, root))
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return config


def claim_ids(root: Path = ROOT) -> set[str]:
    """Every claim id of config/claims/*.yaml."""
    return {claim["id"] for path in sorted((root / "config" / "claims").glob("*.yaml"))
            for claim in read_yaml(path)["claims"]}


def corpus_names(config: dict, root: Path = ROOT) -> set[str]:
    return set(read_yaml(root / config["corpora"])["corpora"])


def check_sweeps(config: dict, claims: set[str], corpora: set[str]) -> None:
    """What the schema cannot say: names that resolve, effects the setting scores, and a variable
    whose values make a sweep (budgets x2 apart, at least four; heads with a head dimension)."""
    for name, setting in config["settings"].items():
        if setting["corpus"] not in corpora:
            raise ValueError(f"settings/{name}/corpus: {setting['corpus']!r} is not in {config['corpora']}")
    for name, sweep in config["sweeps"].items():
        where = f"sweeps/{name}"
        if sweep["setting"] not in config["settings"]:
            raise ValueError(f"{where}/setting: {sweep['setting']!r} is not one of settings ({', '.join(config['settings'])})")
        setting = config["settings"][sweep["setting"]]
        for model in sweep["models"]:
            if model not in config["models"]:
                raise ValueError(f"{where}/models: {model!r} is not one of models ({', '.join(config['models'])})")
        values = sweep_values(sweep)
        if len(set(map(str, values))) != len(values):
            raise ValueError(f"{where}/extensions: a value is measured twice across the sweep's rounds: {values}")
        check_variable({**sweep["variable"], "values": values}, corpora, f"{where}/variable")
        for i, effect in enumerate(sweep["effects"]):
            at = f"{where}/effects/{i}"
            if effect["claim"] not in claims:
                raise ValueError(f"{at}/claim: {effect['claim']!r} is no claim of config/claims/")
            if effect["model"] not in sweep["models"]:
                raise ValueError(f"{at}/model: {effect['model']!r} is not one of the sweep's models")
            if effect.get("protocol", "lex") not in setting["protocols"]:
                raise ValueError(f"{at}/protocol: the setting {sweep['setting']!r} does not score {effect['protocol']!r}")
            for side in ("numerator", "denominator"):
                if effect[side] not in setting["multiples"]:
                    raise ValueError(f"{at}/{side}: {effect[side]} is not one of the setting's multiples {setting['multiples']}")
            paper_cells_effect(effect["paper"], f"{at}/paper")
    for i, effect in enumerate(config.get("scale_study_effects", [])):
        if effect["claim"] not in claims:
            raise ValueError(f"scale_study_effects/{i}/claim: {effect['claim']!r} is no claim of config/claims/")
        paper_cells_effect(effect["paper"], f"scale_study_effects/{i}/paper")


def paper_cells_effect(cells: dict, where: str = "paper") -> float:
    """The paper's effect ln(numerator / denominator) from its printed cells (paper_results.csv);
    a cell the paper does not print is one error naming it."""
    from ..tables.paper_results import paper_value
    from .emergence import paper_effect

    values = []
    for side in ("numerator", "denominator"):
        value = paper_value(_paper_results(), cells["paper"], cells["table"], cells["dataset"], cells["method"], cells[side])
        if value is None:
            raise ValueError(f"{where}/{side}: the paper prints no {cells['method']} at {cells[side]} in "
                             f"{cells['paper']} table {cells['table']} ({cells['dataset']})")
        values.append(value)
    return paper_effect(*values)


_PAPER_RESULTS = []


def _paper_results():
    if not _PAPER_RESULTS:  # read once per process
        from ..tables.paper_results import load_paper_results

        _PAPER_RESULTS.append(load_paper_results())
    return _PAPER_RESULTS[0]


def check_variable(variable: dict, corpora: set[str], where: str) -> None:
    name, values = variable["name"], variable["values"]
    if name == "corpus":
        unknown = [v for v in values if v not in corpora]
        if unknown:
            raise ValueError(f"{where}/values: {unknown[0]!r} is not a corpus of the corpora file")
        return
    if not all(isinstance(v, int) for v in values):
        raise ValueError(f"{where}/values: {name} takes whole numbers, got {values}")
    if name == "n_head" and "head_dim" not in variable:
        raise ValueError(f"{where}: n_head needs head_dim (heads at a fixed head dimension)")
    if name == "train_tokens":
        ordered = sorted(values)
        if len(ordered) < 4 or any(b != 2 * a for a, b in zip(ordered, ordered[1:])):
            raise ValueError(f"{where}/values: budgets must be at least four, each twice the one before, got {values}")


def sweep_rounds(sweep: dict) -> list[list]:
    """A sweep's values by the round that fixed them: the design's own values first, then each
    extension's, in the order they were added (each planned and run as parts of its own)."""
    return [list(sweep["variable"]["values"])] + [list(e["values"]) for e in sweep.get("extensions", [])]


def sweep_values(sweep: dict) -> list:
    """Every value a sweep measures, its extensions' included, in round order."""
    return [value for values in sweep_rounds(sweep) for value in values]


def point_id(model: str, variable: str, value, seed: int) -> str:
    return f"{model}__{variable}-{value}__seed{seed}"


def parse_point_id(text: str) -> dict:
    match = _POINT.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a sweep point (<model>__<variable>-<value>__seed<n>)")
    return match.groupdict()


def point_model(config: dict, sweep: dict, model: str, value) -> dict:
    """The model of one point: the setting's fields, the scheme's laid over them, and the swept
    field (heads: d_model = heads x head_dim, d_ff keeping the setting's d_ff / d_model)."""
    base = {**config["settings"][sweep["setting"]]["model"], **config["models"][model]}
    variable = sweep["variable"]
    if variable["name"] == "n_head":
        width = value * variable["head_dim"]
        base.update(n_head=value, d_model=width, d_ff=base["d_ff"] * width // base["d_model"])
    return base


def sweep_points(config: dict, name: str) -> list[dict]:
    """Every point of a sweep, in the order value, model, seed: each a point as
    lenex.scale_study.study.score_point takes it, plus the sweep's own fields."""
    sweep = config["sweeps"][name]
    setting, variable = config["settings"][sweep["setting"]], sweep["variable"]["name"]
    points = []
    for value in sweep_values(sweep):
        for model in sweep["models"]:
            fields = point_model(config, sweep, model, value)
            for seed in config["seeds"]:
                ident = point_id(model, variable, value, seed)
                points.append({
                    "key": f"{name}/{ident}", "id": ident, "sweep": name, "phenomenon": model,
                    "variable": variable, "value": value, "seed": seed,
                    "corpus": value if variable == "corpus" else setting["corpus"],
                    "train_tokens": value if variable == "train_tokens" else setting["train_tokens"],
                    "tokenizer": config["tokenizer"], "shape": f"{fields['n_layer']}x{fields['d_model']}",
                    "model": fields, "multiples": sorted(setting["multiples"]), "short_multiples": [],
                    "protocols": setting["protocols"], "last_token": config["last_token"]})
    return points


def find_point(config: dict, name: str, ident: str) -> dict:
    if name not in config["sweeps"]:
        raise ValueError(f"no sweep {name!r}; known: {', '.join(config['sweeps'])}")
    for point in sweep_points(config, name):
        if point["id"] == ident:
            return point
    parse_point_id(ident)
    raise ValueError(f"sweep {name!r} has no point {ident!r}")


def point_study(config: dict, point: dict, root: Path = ROOT) -> dict:
    """The scale-study settings a sweep point trains and scores by (its seed, its corpus inline)."""
    corpora = read_yaml(root / config["corpora"])["corpora"]
    return {"corpus": corpora[point["corpus"]], "data": config["data"], "train": {**config["train"], "seed": point["seed"]},
            "eval": config["eval"], "last_token": config["last_token"]}


def point_files(point: dict, work: str | Path = WORK, models: str | Path = MODELS) -> PointFiles:
    """A sweep point's model (<models>/<sweep>/<point>.pt), training state and scores (under <work>)."""
    name = point_name(point["key"])
    return PointFiles(Path(models) / point["sweep"] / f"{point['id']}.pt", Path(work) / "train" / name,
                      Path(work) / "eval" / name)


def corpus_folder(config: dict, corpus: str, work: str | Path = WORK) -> Path:
    """The folder a sweep corpus is prepared into (its meta.json written last, by lenex.data.prepare)."""
    return Path(work) / "corpora" / corpus / "data" / config["tokenizer"]


# --- the cost model ------------------------------------------------------------------------------

def measured_rates(records: list[dict]) -> dict[tuple, float]:
    """Median training tokens/s of the scale study's points by (n_layer, d_model, L_tr, tokenizer):
    one-thread trainings on this machine, as each point recorded."""
    rates: dict[tuple, list[float]] = {}
    for r in records:
        if r.get("train_tokens_per_s"):
            m = r["model_config"]
            rates.setdefault((m["n_layer"], m["d_model"], r["train_length"], r["tokenizer"]), []).append(r["train_tokens_per_s"])
    return {key: statistics.median(values) for key, values in rates.items()}


def per_token_weights(model: dict, tokenizer: str) -> int:
    """The weights a token passes through (the scale study's estimated_cost for one token)."""
    from .study import estimated_cost

    return estimated_cost({"model": model, "tokenizer": tokenizer, "train_tokens": 1})


def training_rate(model: dict, tokenizer: str, rates: dict[tuple, float]) -> tuple[float, str]:
    """Tokens/s of a model: measured at its shape, L_tr and tokenizer; else the measured shape at the
    same L_tr and tokenizer nearest in weights per token, scaled by their ratio (said in the basis)."""
    key = (model["n_layer"], model["d_model"], model["train_length"], tokenizer)
    if key in rates:
        return rates[key], "measured"
    same = [k for k in rates if k[2:] == key[2:]]
    if not same:
        raise ValueError(f"no scale-study point at L_tr {key[2]} with {tokenizer}: no rate to scale from")
    weights = per_token_weights(model, tokenizer)
    weight_of = {k: per_token_weights({**model, "n_layer": k[0], "d_model": k[1]}, tokenizer) for k in same}
    near = min(same, key=lambda k: abs(weight_of[k] - weights))
    return rates[near] * weight_of[near] / weights, f"scaled from {near[0]}x{near[1]}"


def eval_forward_tokens(point: dict, config: dict) -> int:
    """Tokens a point's scoring passes forward: the LEX protocol scores eval.max_tokens at every
    length; the last-token protocol one k L_tr context per segment at every multiple."""
    from .study import scored_lengths

    length = point["model"]["train_length"]

    tokens = config["eval"]["max_tokens"] * len(scored_lengths(point["multiples"], [], length))
    if "last-token" in point["protocols"]:
        tokens += config["last_token"]["segments"] * sum(k * length for k in {1, *point["multiples"]})
    return tokens


def point_seconds(point: dict, config: dict, rates: dict[tuple, float]) -> float:
    rate, _ = training_rate(point["model"], point["tokenizer"], rates)
    return (point["train_tokens"] + eval_forward_tokens(point, config) / FORWARD_PER_TRAIN) / rate


def makespan(seconds: list[float], cores: int) -> float:
    """Wall time of jobs on `cores` workers, longest first, each to the least loaded (LPT)."""
    loads = [0.0] * cores
    for s in sorted(seconds, reverse=True):
        loads[loads.index(min(loads))] += s
    return max(loads)


def pack_parts(seconds: dict[str, float], cores: int, cap: float) -> list[list[str]]:
    """Points into parts, longest first, each into the first part whose makespan stays within
    `cap` (first-fit decreasing); a point longer than `cap` alone is an error naming it."""
    parts: list[list[str]] = []
    for ident in sorted(seconds, key=lambda i: (-seconds[i], i)):
        if seconds[ident] > cap:
            raise ValueError(f"point {ident} alone is predicted at {seconds[ident] / 3600:.2f} h, over a part's "
                             f"{cap / 3600:.2f} h: lower its value or raise the limit")
        for part in parts:
            if makespan([seconds[i] for i in part + [ident]], cores) <= cap:
                part.append(ident)
                break
        else:
            parts.append([ident])
    return parts


def sweep_plan(config: dict, name: str, rates: dict[tuple, float]) -> dict:
    """A sweep's points with their predicted seconds (and the rate's basis), its parts (p1, p2,
    ... each a list of point ids) with their predicted makespans, and the totals. Each round of
    values (sweep_rounds) is packed into parts of its own, numbered on from the round before: an
    extension never moves a point of a part already fixed."""
    points = sweep_points(config, name)
    seconds = {p["id"]: point_seconds(p, config, rates) for p in points}
    basis = {p["id"]: training_rate(p["model"], p["tokenizer"], rates)[1] for p in points}
    cap = config["part_hours"] * 3600 * config["margin"]["value"]
    parts: dict[str, list[str]] = {}
    for values in sweep_rounds(config["sweeps"][name]):
        round_seconds = {p["id"]: seconds[p["id"]] for p in points if p["value"] in values}
        for part in pack_parts(round_seconds, config["cores"], cap):
            parts[f"p{len(parts) + 1}"] = sorted(part)
    return {"points": points, "seconds": seconds, "basis": basis, "parts": parts,
            "part_seconds": {p: makespan([seconds[i] for i in ids], config["cores"]) for p, ids in parts.items()},
            "cpu_seconds": sum(seconds.values())}


def next_value_seconds(config: dict, name: str, rates: dict[tuple, float]) -> tuple[int, float] | None:
    """For a budget or heads sweep, twice its largest value and the predicted seconds of that
    value's costliest point: what the plan shows to say why the sweep stops where it does."""
    sweep = config["sweeps"][name]
    if sweep["variable"]["name"] == "corpus":
        return None
    larger = 2 * max(sweep_values(sweep))
    trial = {**config, "sweeps": {name: {**sweep, "variable": {**sweep["variable"], "values": [larger]}, "extensions": []}}}
    return larger, max(point_seconds(p, config, rates) for p in sweep_points(trial, name))

