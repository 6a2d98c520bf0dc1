"""The power reruns of a preset, planned before any of them runs: for each inconclusive
claim, the seeds its power analysis names (lenex.claims.power), what they cost on this machine,
and whether they are affordable, by a rule fixed here before the plan was first written:

    a claim's rerun is affordable when its extra seeds' jobs, at their measured times, fit one
    recorded part: at most PART_HOURS x PACK of wall time with JOBS_SIDE_BY_SIDE jobs at a time.
    A paper's power part takes its affordable claims cheapest first while the part, every model
    at the most seeds its claims name, still fits; the rest wait for a later part.

PART_HOURS is the reference-run limit (2.5 hours a part); PACK the margin the sweeps' parts keep
(results/scale-study/sweeps/plan.md: jobs run side by side and machines differ from session to
session); the times are the reference run's own jobs (lenex.pipeline.job_times), each model's mean
over its recorded seeds, measured two at a time as a part runs them, plus, once per model, the
pretraining of its seedless parent where the paper has one (segmented): a part runs from a clean
checkout of the plan's commit, where no model of the reference run exists. The affordable claims of a
paper become its preset's `experiment.power_seeds` (each model the most seeds any of them names)
and one recorded part, `power`. A claim whose paper cannot yet add seeds to one model alone is
listed with why it is not run (NOT_BUILT). A paper's rows are decided once, before its part runs:
`--paper P` plans that paper alone and keeps every other paper's rows and seeds as the committed
plan has them (each paper's line says at which revision it was planned).

One round per paper: once a paper is planned, it is never planned again (`refused_replan`).
After its power part its claims' intervals have been looked at twice; adding seeds again until a
verdict comes would be optional stopping, whose error rate is no longer the level a verdict
states. A claim the round could not afford stays inconclusive, with its power figure.

    python -m lenex.pipeline.power_plan --preset workstation   # writes results/<preset>/power/plan.{md,json}
    python -m lenex.pipeline.power_plan --preset workstation --paper receptive-field   # that paper only
"""

from __future__ import annotations

import argparse
import json
from datetime import date
from pathlib import Path

from ..files import atomic_write_text
from ..records.run_facts import git_revision
from .job_times import model_seed_seconds, parent_seconds, run_jobs

PART_HOURS = 2.5
PACK = 0.6
JOBS_SIDE_BY_SIDE = 2
#: Papers whose presets cannot yet add seeds to chosen models (the reason is printed in the plan).
NOT_BUILT: dict[str, str] = {}
BUDGET_JOB_HOURS = PART_HOURS * PACK * JOBS_SIDE_BY_SIDE
# Plans written before the parents were counted (rule without "parents") keep their own page's words.
PARENTS_TEXT = ", and once the pretraining of a model's seedless parent where the paper has one"


def seed_seconds(measured: dict[str, dict[int, float]], model: str) -> float | None:
    """A model's measured seconds per seed (mean over its recorded seeds); None when unmeasured."""
    seeds = measured.get(model)
    return sum(seeds.values()) / len(seeds) if seeds else None


def parents_hours(models, parents: dict[str, float] | None) -> float:
    """The hours of pretraining the seedless parents of `models` (each once) that a clean checkout lacks."""
    return sum((parents or {}).get(m, 0.0) for m in set(models)) / 3600


def claim_entry(paper: str, record: dict, measured: dict[str, dict[int, float]],
                parents: dict[str, float] | None = None) -> dict:
    """One inconclusive claim's line of the plan: its power, models, measured cost (its seeds, and
    its models' parents where the paper has them: `parents`, model -> seconds) and whether it is
    affordable (the module's rule), or why it is not run."""
    power = record["power"]
    entry = {"paper": paper, "id": record["id"], "decides": power["decides"], "needed": power["needed"],
             "n": power["n"], "unit": power["unit"], "models": power.get("models", [])}
    if power["needed"] is None or power["unit"] != "seed":
        return {**entry, "job_hours": None, "affordable": False,
                "why": "no number of seeds decides it" if power["needed"] is None
                else f"decided by more scored {power['unit']}s, not by seeds"}
    more = power["needed"] - power["n"]
    seconds = [seed_seconds(measured, m) for m in entry["models"]]
    if not entry["models"] or None in seconds:
        missing = [m for m, s in zip(entry["models"], seconds) if s is None] or ["its models"]
        why = NOT_BUILT.get(paper, f"no measured job of {missing[0]} in the reference run")
        return {**entry, "job_hours": None, "affordable": False, "why": f"not run: {why}"}
    hours = more * sum(seconds) / 3600 + parents_hours(entry["models"], parents)
    entry["job_hours"] = round(hours, 3)
    if hours > BUDGET_JOB_HOURS:
        return {**entry, "affordable": False,
                "why": f"{hours:.2f} job-hours, over a part's {BUDGET_JOB_HOURS:.1f}"}
    if paper in NOT_BUILT:
        return {**entry, "affordable": True, "run": False, "why": f"affordable, not run: {NOT_BUILT[paper]}"}
    return {**entry, "affordable": True, "run": True, "why": f"{hours:.2f} job-hours, inside a part's "
                                                            f"{BUDGET_JOB_HOURS:.1f}"}


def part_job_hours(entries: list[dict], measured: dict[str, dict[str, dict[int, float]]],
                   parents: dict[str, dict[str, float]] | None = None) -> float:
    """The job-hours of running `entries` together: each model once, at the most seeds they name,
    and each model's parent once (`parents`: paper -> model -> seconds)."""
    more: dict[tuple[str, str], int] = {}
    for e in entries:
        for model in e["models"]:
            key = (e["paper"], model)
            more[key] = max(more.get(key, 0), e["needed"] - e["n"])
    seeds = sum(n * seed_seconds(measured[paper], model) for (paper, model), n in more.items()) / 3600
    return seeds + sum(parents_hours([m for p, m in more if p == paper], (parents or {}).get(paper))
                       for paper in {p for p, _ in more})


def fill_parts(entries: list[dict], measured: dict[str, dict[str, dict[int, float]]],
               parents: dict[str, dict[str, float]] | None = None) -> list[dict]:
    """Each paper's affordable claims in its power part, cheapest first while the part fits; a claim
    that would overfill it keeps `affordable` and waits (`run` false, the reason said)."""
    chosen: dict[str, list[dict]] = {}
    for entry in sorted((e for e in entries if e.get("run")), key=lambda e: (e["job_hours"], e["id"])):
        taken = chosen.setdefault(entry["paper"], [])
        hours = part_job_hours(taken + [entry], measured, parents)
        if hours <= BUDGET_JOB_HOURS:
            taken.append(entry)
        else:
            entry.update(run=False, why=f"affordable alone; waits for a later part (with the cheaper ones the "
                                        f"part would be {hours:.2f} job-hours)")
    return entries


def power_seeds(entries: list[dict]) -> dict[str, dict[str, int]]:
    """paper -> model -> seeds, over the claims to run: each model the most seeds any names."""
    seeds: dict[str, dict[str, int]] = {}
    for entry in entries:
        if entry.get("run"):
            for model in entry["models"]:
                paper = seeds.setdefault(entry["paper"], {})
                paper[model] = max(paper.get(model, 0), entry["needed"])
    return seeds


def plan(claims: dict[str, dict], measured: dict[str, dict[str, dict[int, float]]],
         parents: dict[str, dict[str, float]] | None = None) -> dict:
    """The plan of one preset from its papers' claims documents and measured job times (`parents`:
    paper -> model -> seconds of its seedless parent, where the paper has them)."""
    parents = parents or {}
    entries = [claim_entry(paper, record, measured.get(paper, {}), parents.get(paper))
               for paper, document in sorted(claims.items())
               for record in document["claims"] if record["verdict"] == "inconclusive" and record.get("power")]
    entries = fill_parts(entries, measured, parents)
    parts = {paper: round(part_job_hours([e for e in entries if e.get("run") and e["paper"] == paper], measured,
                                         parents), 3)
             for paper in sorted({e["paper"] for e in entries if e.get("run")})}
    return {"rule": {"part_hours": PART_HOURS, "pack": PACK, "jobs_side_by_side": JOBS_SIDE_BY_SIDE,
                     "budget_job_hours": BUDGET_JOB_HOURS, "parents": True},
            "claims": entries, "power_seeds": power_seeds(entries), "part_job_hours": parts}


def merged(previous: dict | None, fresh: dict, papers: list[str], stamp: dict) -> dict:
    """`fresh`'s rows and seeds for `papers`, `previous`'s for every other paper (decided before)."""
    if previous is None:
        return {**fresh, "planned": {p: stamp for p in sorted({e["paper"] for e in fresh["claims"]} | set(papers))}}
    earlier = previous.get("planned") or {p: {"revision": previous["revision"], "written": previous["written"]}
                                          for p in {e["paper"] for e in previous["claims"]}}
    keep = lambda mapping: {k: v for k, v in mapping.items() if k not in papers}  # noqa: E731
    return {**fresh,
            "claims": [e for e in previous["claims"] if e["paper"] not in papers] + fresh["claims"],
            "power_seeds": {**keep(previous["power_seeds"]), **fresh["power_seeds"]},
            "part_job_hours": {**keep(previous.get("part_job_hours") or {}), **fresh["part_job_hours"]},
            "planned": {**keep(earlier), **{p: stamp for p in papers}}}


def markdown(document: dict) -> str:
    """The plan as a page: the rule, every inconclusive claim, and what the preset takes from it."""
    rule = document["rule"]
    planned = "; ".join(f"{paper} at {when['revision']} on {when['written']}"
                        for paper, when in sorted(document["planned"].items()))
    lines = [f"# Power reruns at preset `{document['preset']}`: the plan", "",
             f"Planned by `python -m lenex.pipeline.power_plan --preset {document['preset']}` (each paper's rows "
             f"before its power part ran: {planned}). For each inconclusive claim: the seeds "
             "its power analysis names (docs/claims.md, \"Power\"), the jobs those seeds add at the reference run's "
             "measured job times (each model's mean over its recorded seeds" + PARENTS_TEXT * bool(rule.get("parents"))
             + "), and whether they are affordable: at "
             f"most {rule['part_hours']} h x {rule['pack']} of wall with {rule['jobs_side_by_side']} jobs side by "
             f"side, {rule['budget_job_hours']:.1f} job-hours (lenex.pipeline.power_plan).", "",
             "| paper | claim | decides | seeds now | seeds needed | models | job-hours | affordable | why |",
             "|---|---|---|---:|---:|---|---:|---|---|"]
    for e in sorted(document["claims"], key=lambda e: e["paper"]):
        hours = "—" if e["job_hours"] is None else f"{e['job_hours']:.2f}"
        needed = "—" if e["needed"] is None else str(e["needed"])
        models = ", ".join(e["models"][:6]) + (f" (+{len(e['models']) - 6})" if len(e["models"]) > 6 else "")
        lines.append(f"| {e['paper']} | {e['id']} | {e['decides']} | {e['n']} | {needed} | {models} | {hours} | "
                     f"{'yes' if e['affordable'] else 'no'} | {e['why']} |")
    lines += ["", "What the preset takes (`papers.<paper>.experiment.power_seeds`, a recorded part `power`):", ""]
    for paper, seeds in sorted(document["power_seeds"].items()):
        lines.append(f"- {paper}: " + ", ".join(f"{m}: {n}" for m, n in sorted(seeds.items()))
                     + f" ({document['part_job_hours'][paper]:.2f} job-hours)")
    if not document["power_seeds"]:
        lines.append("- nothing: no affordable claim of a paper that can add seeds to one model")
    return "\n".join(lines) + "\n"


def refused_replan(previous: dict | None, papers: list[str]) -> str | None:
    """Why planning `papers` (all, when empty) over the committed plan `previous` is refused: every
    paper gets one power round (the module's docstring); None when it is not."""
    if previous is None:
        return None
    if not papers:
        return ("a committed plan exists: plan only a paper not yet planned (--paper P); a paper already "
                "planned is never planned again (one power round: another would be optional stopping)")
    done = sorted(set(papers) & set(previous.get("planned") or {}))
    if done:
        when = previous["planned"][done[0]]
        return (f"{done[0]}'s power round was planned at {when['revision']} on {when['written']}; a second "
                "round would be optional stopping (docs/claims.md, \"Power reruns\")")
    return None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--results", default="results", help="the results folder (results/<preset>/claims, runs)")
    parser.add_argument("--paper", action="append", default=[], help="plan only this paper (repeatable); the "
                        "others keep the committed plan's rows and seeds")
    args = parser.parse_args(argv)
    root = Path(args.results) / args.preset
    claims = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((root / "claims").glob("*.json"))}
    if not claims:
        parser.error(f"no claims documents under {root / 'claims'}: render the preset's claims first")
    unknown = [p for p in args.paper if p not in claims]
    if unknown:
        parser.error(f"--paper {unknown[0]}: no claims document of it under {root / 'claims'}")
    chosen = {p: d for p, d in claims.items() if not args.paper or p in args.paper}
    jobs = {paper: run_jobs(root / "runs" / paper) for paper in chosen}
    measured = {paper: model_seed_seconds(found, paper) for paper, found in jobs.items()}
    parents = {paper: parent_seconds(found, paper) for paper, found in jobs.items()}
    out = root / "power"
    committed = out / "plan.json"
    previous = json.loads(committed.read_text(encoding="utf-8")) if committed.exists() else None
    if args.paper and previous is None:
        parser.error(f"--paper plans one paper beside a committed plan; there is none at {out / 'plan.json'}")
    refused = refused_replan(previous, args.paper)
    if refused:
        parser.error(refused)
    stamp = {"revision": git_revision(), "written": date.today().isoformat()}
    document = {"preset": args.preset, **merged(previous, plan(chosen, measured, parents), args.paper, stamp)}
    atomic_write_text(out / "plan.json", json.dumps(document, indent=1) + "\n")
    atomic_write_text(out / "plan.md", markdown(document))
    print(f"wrote {out / 'plan.md'}")


if __name__ == "__main__":
    main()
