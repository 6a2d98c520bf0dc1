"""Emergence sweeps: `python -m lenex.scale_study.sweep_run <command>`.

    plan                      the points, their predicted cost and their parts: results/scale-study/sweeps/plan.json
                              and plan.md (written once, before any point runs; parts are read from it)
    point <sweep> <point>     score one point's trained model, its record (what the Snakemake rule sweep_point calls)
    corpus <corpus>           prepare a corpus for the sweeps (rule sweep_corpus)
    part-record <sweep> <part>  record a part whose points are all recorded (rule sweep_part)
    report [<sweep> ...]      emergence.md and emergence.png of each sweep, from its recorded points
    existing                  the same for the scale study's own budget series: results/scale-study/emergence.md
    predictions               every budget series forecast at one GPU-day and the GPU stage: results/scale-study/sweeps/predictions.md
    curves                    each sweep's final validation loss against budget, per seed: results/scale-study/sweeps/curves.md, .png
    attach-curve <sweep> <point> <metrics.jsonl>
                              add the training curve of its run's metrics to a point recorded before points kept theirs

A point's model is trained by the pipeline's one training rule (its spec: lenex.scale_study.studies) and
scored here with the scale study's code (lenex.scale_study.study.score_point); each point's
record keeps its run's training curve (`training_curve`, lenex.scale_study.sweep_curves; docs/curves.md).
"""
from __future__ import annotations

import argparse
import datetime
import json
import logging
import sys
from pathlib import Path

from ..cli import run_cli
from ..files import atomic_write_text, read_json, read_yaml
from ..records.run_facts import run_facts
from . import predictions
from . import sweep_curves
from . import sweeps as sw
from .emergence_report import read_effect, scale_study_series, seed_effects, write_page
from .points import read_points

log = logging.getLogger("lenex.scale_study.sweeps")
SCALE_POINTS = Path("results/scale-study/points.jsonl")
DOCS = sw.ROOT / "docs" / "emergence.md"  # its plan block is generated with the plan


def plan_record(config: dict, rates: dict, facts: dict) -> dict:
    """What `plan` writes: per sweep its parts and each point's predicted seconds and rate basis."""
    sweeps = {}
    for name in config["sweeps"]:
        plan = sw.sweep_plan(config, name, rates)
        beyond = sw.next_value_seconds(config, name, rates)
        sweeps[name] = {"parts": plan["parts"], "part_seconds": plan["part_seconds"], "cpu_seconds": plan["cpu_seconds"],
                        "next_value": None if beyond is None else {"value": beyond[0], "seconds": beyond[1]},
                        "points": {p["id"]: {"seconds": plan["seconds"][p["id"]], "basis": plan["basis"][p["id"]],
                                             "shape": p["shape"], "train_tokens": p["train_tokens"], "corpus": p["corpus"],
                                             "largest_slope_x_ltr": largest_slope_x_ltr(p["model"])}
                                   for p in plan["points"]}}
    return {"rates": {"/".join(map(str, k)): v for k, v in sorted(rates.items())}, "sweeps": sweeps, **facts}


def largest_slope_x_ltr(model: dict) -> float | None:
    """ALiBi's sharpest head's slope x L_tr (what the head count sets), None for other schemes."""
    if model.get("position") != "alibi":
        return None
    from ..positions.alibi import alibi_slopes

    options = model.get("position_options", {})
    slopes = alibi_slopes(model["n_head"], options.get("shift", 0.0), options.get("same_h"), options.get("slope_scale", 1.0))
    return float(max(slopes)) * model["train_length"]


def _in_config_order(config: dict, record: dict) -> list[tuple[str, dict]]:
    """The plan's sweeps in the config's order (plan.json keeps its keys sorted)."""
    return [(name, record["sweeps"][name]) for name in config["sweeps"] if name in record["sweeps"]]


def effects_table(sweep: dict) -> list[str]:
    """The claims a sweep serves: per effect its model, log-ratio, protocol and the paper's value."""
    lines = ["| claim | model | effect e | protocol | the paper's e | the paper's cells |", "|---|---|---|---|---:|---|"]
    for e in sweep["effects"]:
        cells = e["paper"]
        lines.append(f"| {e['claim']} | {e['model']} | ln ppl({e['numerator']} L_tr) − ln ppl({e['denominator']} L_tr) | "
                     f"{e.get('protocol', 'lex')} | {sw.paper_cells_effect(cells):+.4f} | {cells['paper']} Table "
                     f"{cells['table']}, {cells['dataset']}, {cells['method']}: {cells['numerator']} / {cells['denominator']} |")
    return lines + [""]


def plan_markdown(config: dict, record: dict) -> str:
    lines = ["# Emergence sweeps: the plan (python -m lenex.scale_study.sweep_run plan)", "",
             f"Written at {record['git_rev']} on {record['date']}, before any sweep point ran. Cost model: training "
             "tokens / the scale study's measured one-thread tokens/s at the point's shape, L_tr and tokenizer (or the "
             "nearest measured shape scaled by weights per token), plus scoring at a third of training's cost per token. "
             f"Parts: {config['cores']} one-thread points side by side, each part predicted within "
             f"{config['part_hours']} h x {config['margin']['value']} ({config['margin']['why']}).", ""]
    lines += [f"Extended at {e['git_rev']} on {e['date']}, before its points ran: {e['sweep']} "
              f"{', '.join(f'{v:,}' if isinstance(v, int) else str(v) for v in e['values'])} "
              f"(parts {', '.join(e['parts'])})." for e in record.get("extensions", [])]
    lines += [""] if record.get("extensions") else []
    lines += ["| sweep | variable | values | models | seeds | points | CPU hours | parts (predicted wall hours) |",
              "|---|---|---|---|---:|---:|---:|---|"]
    for name, plan in _in_config_order(config, record):
        sweep = config["sweeps"][name]
        parts = ", ".join(f"{p} {s / 3600:.2f}" for p, s in plan["part_seconds"].items())
        lines.append(f"| {name} | {sweep['variable']['name']} | {', '.join(map(str, sw.sweep_values(sweep)))} | "
                     f"{', '.join(sweep['models'])} | {len(config['seeds'])} | {len(plan['points'])} | "
                     f"{plan['cpu_seconds'] / 3600:.2f} | {parts} |")
    total = sum(p["cpu_seconds"] for p in record["sweeps"].values())
    wall = sum(s for p in record["sweeps"].values() for s in p["part_seconds"].values())
    lines += ["", f"All sweeps: {total / 3600:.1f} CPU hours, {wall / 3600:.1f} predicted wall hours in "
              f"{sum(len(p['parts']) for p in record['sweeps'].values())} parts.", ""]
    for name, plan in _in_config_order(config, record):
        cap = config["part_hours"] * config["margin"]["value"]
        beyond = plan["next_value"]
        nxt = [] if beyond is None else [
            f"Twice the largest value, {beyond['value']:,}: its costliest point is predicted at {beyond['seconds'] / 3600:.2f} h, "
            f"{'within' if beyond['seconds'] <= cap * 3600 else 'over'} a part's {cap:.2f} h.", ""]
        why = [config["sweeps"][name]["variable"]["why"], ""] + [
            text for e in config["sweeps"][name].get("extensions", []) for text in (f"Extension: {e['why']}", "")]
        lines += [f"## {name}", "", *why, *nxt, *effects_table(config["sweeps"][name]),
                  "| point | part | shape | train tokens | corpus | largest slope x L_tr | predicted hours | rate |",
                  "|---|---|---|---:|---|---:|---:|---|"]
        part_of = {i: p for p, ids in plan["parts"].items() for i in ids}
        for ident in (p["id"] for p in sw.sweep_points(config, name)):  # the config's order (plan.json sorts keys)
            point = plan["points"][ident]
            slope = "—" if point["largest_slope_x_ltr"] is None else f"{point['largest_slope_x_ltr']:.0f}"
            lines.append(f"| {ident} | {part_of[ident]} | {point['shape']} | {point['train_tokens']:,} | {point['corpus']} | "
                         f"{slope} | {point['seconds'] / 3600:.2f} | {point['basis']} |")
        lines.append("")
    return "\n".join(lines)


def summary_block(config: dict, record: dict) -> str:
    """The plan's summary for docs/emergence.md: each sweep's cost and the command of each part."""
    lines = [BEGIN, f"Generated by `python -m lenex.scale_study.sweep_run plan` at {record['git_rev']} "
             "(results/scale-study/sweeps/plan.md has every point).", "",
             "| sweep | claims | variable | points | predicted CPU hours | parts: predicted wall hours |",
             "|---|---|---|---:|---:|---|"]
    for name, plan in _in_config_order(config, record):
        sweep = config["sweeps"][name]
        claims = ", ".join(dict.fromkeys(e["claim"] for e in sweep["effects"]))
        parts = ", ".join(f"{p} {s / 3600:.2f}" for p, s in plan["part_seconds"].items())
        lines.append(f"| {name} | {claims} | {sweep['variable']['name']} | {len(plan['points'])} | "
                     f"{plan['cpu_seconds'] / 3600:.2f} | {parts} |")
    total = sum(p["cpu_seconds"] for p in record["sweeps"].values())
    wall = sum(s for p in record["sweeps"].values() for s in p["part_seconds"].values())
    lines += ["", f"In all {total / 3600:.1f} CPU hours, {wall / 3600:.1f} predicted wall hours. Each part, resumable "
              "(run the same command again after a cut):", "", "```"]
    lines += [f"snakemake --cores 2 results/scale-study/sweeps/{name}/parts/{part}.json --config sweeps=True"
              for name, plan in _in_config_order(config, record) for part in plan["parts"]]
    return "\n".join(lines + ["```", END])


BEGIN, END = "<!-- plan: begin (generated) -->", "<!-- plan: end -->"


def with_block(text: str, block: str) -> str:
    """`text` with its generated block replaced (both markers must be there, once each)."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ValueError(f"the page needs one {BEGIN!r} and one {END!r} line")
    return text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]


def extend_plan(old: dict, new: dict) -> dict:
    """The plan once more, keeping what the committed plan `old` fixed: its facts (revision, date,
    rates) and every part it had, point for point and with its predicted seconds. Points of new
    parts (a sweep's extension, or a new sweep) are added, each round named with the revision and
    date it was planned at. A recomputation that would move a point of a fixed part is an error:
    a plan is written before its points run and never changed by them."""
    def values_of(ids) -> list:
        values = dict.fromkeys(sw.parse_point_id(i)["value"] for i in sorted(ids, key=lambda i: (len(i), i)))
        return [int(v) if v.isdigit() else v for v in values]

    merged = {**old, "sweeps": dict(old["sweeps"]), "extensions": list(old.get("extensions", []))}
    for name, plan in new["sweeps"].items():
        fixed = old["sweeps"].get(name, {"parts": {}, "part_seconds": {}, "cpu_seconds": 0.0, "points": {}})
        for part, ids in fixed["parts"].items():
            if plan["parts"].get(part) != ids:
                raise ValueError(f"the plan would change part {name}/{part}, fixed at {old['git_rev']}: "
                                 f"{ids} -> {plan['parts'].get(part)}; extend a sweep with new values instead")
        added = {p: ids for p, ids in plan["parts"].items() if p not in fixed["parts"]}
        if not added:
            continue
        new_ids = {i for ids in added.values() for i in ids}
        merged["sweeps"][name] = {
            **fixed, "parts": {**fixed["parts"], **added},
            "part_seconds": {**fixed["part_seconds"], **{p: plan["part_seconds"][p] for p in added}},
            "cpu_seconds": fixed["cpu_seconds"] + sum(plan["points"][i]["seconds"] for i in new_ids),
            "next_value": plan["next_value"],
            "points": {**fixed["points"], **{i: plan["points"][i] for i in sorted(new_ids)}}}
        merged["extensions"].append({"sweep": name, "values": values_of(new_ids),
                                     "parts": sorted(added), "git_rev": new["git_rev"], "date": new["date"]})
    if not merged["extensions"]:
        del merged["extensions"]
    return merged


def write_plan(config: dict, out: Path, scale_points: Path = SCALE_POINTS, docs: Path = DOCS) -> dict:
    rates = sw.measured_rates(list(read_points(scale_points).values()))
    record = plan_record(config, rates, run_facts())
    if (out / "plan.json").exists():
        record = extend_plan(read_json(out / "plan.json"), record)
    atomic_write_text(out / "plan.json", json.dumps(record, indent=1, sort_keys=True) + "\n")
    atomic_write_text(out / "plan.md", plan_markdown(config, record))
    if docs.exists():
        atomic_write_text(docs, with_block(docs.read_text(encoding="utf-8"), summary_block(config, record)))
    return record


def planned_part(out: Path, sweep: str, part: str) -> list[str]:
    """A part's point ids as the committed plan fixed them (an unknown part is one error)."""
    path = out / "plan.json"
    if not path.exists():
        raise ValueError(f"{path} is missing: run `python -m lenex.scale_study.sweep_run plan` first")
    parts = read_json(path)["sweeps"].get(sweep, {}).get("parts")
    if parts is None:
        raise ValueError(f"{path} has no sweep {sweep!r}")
    if part not in parts:
        raise ValueError(f"sweep {sweep!r} has no part {part!r} in {path}; its parts: {', '.join(parts)}")
    return parts[part]


def prepare_corpus(config: dict, corpus: str, work: Path, resources: str) -> Path:
    from .study import prepared_data

    return prepared_data({"corpus": read_yaml(sw.ROOT / config["corpora"])["corpora"][corpus], "data": config["data"]},
                         config["tokenizer"], work / "corpora" / corpus, resources)


def score_sweep_point(config: dict, sweep: str, ident: str, out: Path, work: Path, models: Path, device: str,
                      command: str) -> dict:
    """Score one point's trained model (rule train made it) unless recorded; its record is the scale
    study's, plus the sweep's fields and its training's curve."""
    target = out / sweep / "points" / f"{ident}.json"
    if target.exists():
        return read_json(target)
    from .study import score_point

    point = sw.find_point(config, sweep, ident)
    files = sw.point_files(point, work, models)
    record = score_point(point, sw.point_study(config, point), files, sw.corpus_folder(config, point["corpus"], work),
                         device, command, run_facts())
    record.update({k: point[k] for k in ("sweep", "id", "variable", "value", "seed", "corpus")})
    record["training_curve"] = sweep_curves.point_curve(record, files.workdir / "metrics.jsonl")
    sweep_curves.write_point(target, record)
    return record


def record_part(out: Path, sweep: str, part: str, command: str) -> dict:
    """The part's record: its points, their wall times and revisions (every point must be recorded)."""
    ids = planned_part(out, sweep, part)
    missing = [i for i in ids if not (out / sweep / "points" / f"{i}.json").exists()]
    if missing:
        raise ValueError(f"part {sweep}/{part}: points not recorded yet: {', '.join(missing)}")
    records = [read_json(out / sweep / "points" / f"{i}.json") for i in ids]
    predicted = read_json(out / "plan.json")["sweeps"][sweep]["part_seconds"][part]
    record = {"sweep": sweep, "part": part, "points": ids, "predicted_seconds": predicted,
              "point_wall_seconds": {r["id"]: r["point_wall_s"] for r in records},
              "git_revs": sorted({r["git_rev"] for r in records}), "command": command,
              "finished_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    atomic_write_text(out / sweep / "parts" / f"{part}.json", json.dumps(record, indent=1, sort_keys=True) + "\n")
    return record


def sweep_records(out: Path, sweep: str) -> list[dict]:
    return [read_json(p) for p in sorted((out / sweep / "points").glob("*.json"))]


def report_sweep(config: dict, sweep: str, out: Path) -> None:
    spec = config["sweeps"][sweep]
    setting = config["settings"][spec["setting"]]
    records, variable = sweep_records(out, sweep), spec["variable"]["name"]
    panels = []
    for effect in spec["effects"]:
        reading = read_effect(sw.sweep_values(spec), seed_effects(records, effect),
                              sw.paper_cells_effect(effect["paper"]), variable)
        title = (f"{effect['claim']}: {effect['model']}, ln ppl({effect['numerator']} L_tr) / ppl({effect['denominator']} L_tr), "
                 f"{effect.get('protocol', 'lex')} protocol")
        panels.append((title, variable, reading, {"claim": effect["claim"], "source": f"sweep {sweep}",
                                                  "subject": effect["model"]}))
    intro = [f"Setting `{spec['setting']}`: {setting['why']}; {variable} varied over "
             f"{', '.join(map(str, sw.sweep_values(spec)))} (config/sweeps.yaml). {len(records)} points recorded "
             f"of {len(sw.sweep_points(config, sweep))}. Generated by `python -m lenex.scale_study.sweep_run report {sweep}`."]
    write_page(f"Emergence: {sweep}", intro, panels, out / sweep / "emergence.md", out / sweep / "emergence.png",
               forecasts="../predictions.md")


def report_existing(config: dict, scale_points: Path, out: Path) -> list[str]:
    records = list(read_points(scale_points).values())
    panels, names = [], []
    for effect, where, group in scale_study_series(records, config.get("scale_study_effects", [])):
        spec = {**effect, "model": effect["phenomenon"]}
        by_value = seed_effects(group, spec)
        reading = read_effect(sorted(by_value), by_value, sw.paper_cells_effect(effect["paper"]), "train_tokens")
        name = f"{effect['phenomenon']} / {where['tokenizer']} / {where['shape']}"
        names.append(name)
        panels.append((f"{effect['claim']}: {name}, ln ppl({effect['numerator']} L_tr) / ppl({effect['denominator']} L_tr), "
                       f"{effect.get('protocol', 'lex')} protocol", "train_tokens", reading,
                       {"claim": effect["claim"], "source": "the scale study's budget series", "subject": name}))
    intro = ["The scale study's own budget series read as emergence curves: every phenomenon of "
             "config/sweeps.yaml `scale_study_effects` with three or more budgets at one tokenizer and shape in "
             "results/scale-study/points.jsonl. One seed a point (no interval per point): the trend's interval is "
             "over the budgets alone (one seed's own least-squares line, so the rule and the old pooled line agree), and these are the scale study's schemes at its L_tr, not the workstation's "
             "models. Generated by `python -m lenex.scale_study.sweep_run existing`.", "",
             "Series: " + "; ".join(names) + ".", "",
             "Named but no series (fewer than three budgets measuring the effect at one tokenizer and shape): "
             + (", ".join(sorted({e["phenomenon"] for e in config.get("scale_study_effects", [])}
                                 - {n.split(" / ")[0] for n in names})) or "none") + "."]
    write_page("Emergence in the scale study's budget series", intro, panels, out / "emergence.md", out / "emergence.png",
               forecasts="sweeps/predictions.md")
    return names


def forecast_rows(root: Path, config: dict) -> tuple[list[dict], dict, dict]:
    """(every budget series of the points committed under `root` forecast by predictions.rows, the
    GPU stage, claim id -> its claims-file entry): what predictions.md is built from, and the gpu
    preset's seeds (benchmarks.gpu_seeds) read."""
    from ..claims.emergence import emergence_files
    from ..claims.evaluate import load_claims

    old = [effect for path in emergence_files(root) for effect in read_json(root / path)["effects"]]
    claims = predictions.claim_budgets(root / "config")
    # load_claims, not the bare file: it records what each claim's thresholds derive from (the
    # paper's numbers), which thresholds_of needs for a threshold derived from them
    specs = {c["id"]: c for path in sorted((root / "config" / "claims").glob("*.yaml"))
             for c in load_claims(path)["claims"]}
    stage = predictions.stage_of(root)
    return predictions.rows(predictions.budget_series(root, config), claims, specs, stage, old), stage, specs


def write_predictions(root: Path, out: Path, config: dict) -> None:
    """results/scale-study/sweeps/predictions.md (lenex.scale_study.predictions): every budget series
    of the points committed under `root` forecast at the gpu preset and the GPU stage; the old
    rule's reading from the emergence records beside each."""
    found, stage, _ = forecast_rows(root, config)
    loss = predictions.loss_rows(predictions.budget_series(root, config, axis="loss"))
    atomic_write_text(out / "predictions.md", predictions.page(found, stage, loss))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["plan", "point", "corpus", "part-record", "report", "existing",
                                            "predictions", "curves", "attach-curve"])
    parser.add_argument("names", nargs="*", help="sweep and part / point, or a corpus, or sweeps to report")
    parser.add_argument("--config", default=str(sw.CONFIG))
    parser.add_argument("--out", default=sw.OUT)
    parser.add_argument("--work", default=sw.WORK)
    parser.add_argument("--models", default=sw.MODELS)
    parser.add_argument("--resources", default="resources")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    config, out, work = sw.load_sweeps(args.config), Path(args.out), Path(args.work)
    command = " ".join(["python -m lenex.scale_study.sweep_run", *(argv if argv is not None else sys.argv[1:])])
    need = {"point": 2, "part-record": 2, "corpus": 1, "attach-curve": 3}.get(args.command)
    if need is not None and len(args.names) != need:
        parser.error(f"{args.command} takes {need} name(s), got {len(args.names)}")
    if args.command in ("point", "corpus"):
        import torch

        torch.set_num_threads(args.threads)
    if args.command == "plan":
        write_plan(config, out)
    elif args.command == "corpus":
        prepare_corpus(config, args.names[0], work, args.resources)
    elif args.command == "point":
        sw.find_point(config, *args.names)
        score_sweep_point(config, *args.names, out, work, Path(args.models), args.device, command)
    elif args.command == "part-record":
        record_part(out, *args.names, command)
    elif args.command == "report":
        for sweep in args.names or list(config["sweeps"]):
            if sweep not in config["sweeps"]:
                raise ValueError(f"no sweep {sweep!r}; known: {', '.join(config['sweeps'])}")
            report_sweep(config, sweep, out)
    elif args.command == "predictions":
        write_predictions(sw.ROOT, out, config)
    elif args.command == "curves":
        sweep_curves.write(config["sweeps"], out)
    elif args.command == "attach-curve":
        sweep, ident, metrics = args.names
        if sweep not in config["sweeps"]:
            raise ValueError(f"no sweep {sweep!r}; known: {', '.join(config['sweeps'])}")
        sweep_curves.attach_curve(out, sweep, ident, metrics)
    else:
        report_existing(config, SCALE_POINTS, Path(SCALE_POINTS).parent)


if __name__ == "__main__":
    run_cli(main)
