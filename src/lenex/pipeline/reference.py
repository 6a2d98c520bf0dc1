"""Write a preset's reference-run page, results/<preset>/REFERENCE.md, from recorded data only:
the runs file (results/<preset>/runs.yaml: each run's paper and title, and for runs older than
the run records their command, wall time and revision), each run's record where it exists
(results/<preset>/runs/<paper>.json from its Snakemake logs, lenex.pipeline.reference_record: command and
wall time; the revision from the raw results' git_rev) and each paper's machine-checked claims
(results/<preset>/claims/<paper>.json). No finding is typed by hand: a paper whose claims were not
computed says so.

    python -m lenex.pipeline.reference --preset workstation
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..claims.render import BAR_SHARE, against_bar
from ..cli import run_cli
from ..files import atomic_write_text, read_json, read_yaml
from .reference_record import wall_time_text
from ..tables.formatting import md_escape

VERDICT = {True: "holds", False: "fails", None: "untestable"}
RUN_KEYS = ("paper", "title", "command", "wall_time", "revision")


def raw_revisions(path: Path) -> list[str]:
    """The revisions a paper's raw results were computed at (each record's git_rev), in order."""
    if not path.exists():
        return []
    revisions = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        rev = json.loads(line).get("git_rev") if line.strip() else None
        if rev:
            revisions[rev] = None
    return list(revisions)


def recorded_run(root: Path, run: dict) -> dict:
    """A runs.yaml entry with its command, wall time and revision taken from the run's record."""
    record_file = root / "runs" / f"{run.get('paper')}.json"
    if not record_file.exists():
        return run
    record = read_json(record_file)
    revisions = raw_revisions(root / "raw" / f"{run['paper']}.jsonl")
    wall_time = wall_time_text(record) + (f"; {run['conditions'].strip()}" if run.get("conditions") else "")
    return {**run, "command": record["command"], "wall_time": wall_time,
            "revision": ", ".join(f"`{rev}`" for rev in revisions) or "not recorded in its raw results"}


def load_runs(root: Path) -> dict:
    path = root / "runs.yaml"
    runs = read_yaml(path)
    runs["runs"] = [recorded_run(root, run) for run in runs.get("runs", [])]
    for i, run in enumerate(runs["runs"]):
        missing = [k for k in RUN_KEYS if not run.get(k)]
        if missing:
            raise ValueError(f"{path}: run {i + 1} lacks {', '.join(missing)} (and has no runs/<paper>.json record)")
    return runs


def verdict_counts(claims: list[dict], side: str) -> dict[str, int]:
    counts = {name: 0 for name in VERDICT.values()}
    for claim in claims:
        counts[VERDICT[claim[f"on_{side}"]]] += 1
    return counts


def _budget_gap(claim: dict) -> str:
    scale = claim["scale"]
    trained = scale["trained_tokens"]
    if scale["first_seen_tokens"] is None:
        return f"{claim['id']} (the study never sees its phenomenon; its models train {trained:,} tokens)"
    factor = scale["first_seen_tokens"] / trained
    return f"{claim['id']} (first seen at {scale['first_seen_tokens']:,} tokens, {factor:.3g}x the {trained:,} its models train)"


UNTESTABLE_HERE = ("untestable at this scale (the scale study sees the phenomenon only beyond the models' "
                   "budget, or has not run that far)")


def _why(claim: dict) -> str:
    """Why a claim that holds on the paper does not hold on ours, read from its record alone."""
    if "scale" not in claim:
        return ("fail on comparisons the scale study does not measure (orderings and margins between schemes "
                "or lengths)" if claim["on_ours"] is False else "not computed (a cell is missing)")
    if claim["on_ours"] is None:
        return UNTESTABLE_HERE
    if claim["scale"]["first_seen_tokens"] is None:
        return "fail with the models trained beyond every budget the scale study ran, none of which shows their phenomenon"
    return "fail at a budget at which the scale study sees their phenomenon"


def why_not_held(claims: list[dict]) -> dict[str, list[str]]:
    """Each claim that holds on the paper but not on ours, grouped by why (`_why`), in a fixed
    order: untestable at this scale (each with its budget gap), failing where the study sees the
    phenomenon, failing beyond every budget it ran, comparisons it does not measure, not computed."""
    order = [UNTESTABLE_HERE, "fail at a budget at which the scale study sees their phenomenon",
             "fail with the models trained beyond every budget the scale study ran, none of which shows their phenomenon",
             "fail on comparisons the scale study does not measure (orderings and margins between schemes or lengths)",
             "not computed (a cell is missing)"]
    groups: dict[str, list[str]] = {what: [] for what in order}
    for c in claims:
        if c["on_paper"] is True and c["on_ours"] is not True:
            why = _why(c)
            groups[why].append(_budget_gap(c) if why == UNTESTABLE_HERE else c["id"])
    return {what: ids for what, ids in groups.items() if ids}


def shortfall(claims: list[dict]) -> list[str]:
    """Lines weighing the gap to the fidelity bar: how many more claims must hold, why each claim
    that holds on the paper does not hold on ours, and how many would if every claim untestable at
    this scale held."""
    bar = against_bar(claims)
    held, testable, needed = bar["hold"], bar["on_paper"], bar["bar"]
    short = max(0, needed - held)
    lines = [f"Against a bar of {float(BAR_SHARE):.0%} of them ({needed} claims): "
             + (f"{short} short." if short else "met."), ""]
    groups = why_not_held(claims)
    if groups:
        lines += [f"Of the {testable - held} that hold on the paper but not on ours:"]
        lines += [f"- {len(ids)} {what}: {', '.join(ids)}" for what, ids in groups.items()]
        untestable = len(groups.get(UNTESTABLE_HERE, []))
        lines += ["", f"Were every claim untestable at this scale to hold, {held + untestable} of {testable} would.", ""]
    return lines


def paper_section(run: dict, claims_doc: dict | None) -> list[str]:
    lines = [f"## {run['title']}", "", f"Tables and figures: [`{run['paper']}.md`]({run['paper']}.md).", ""]
    if claims_doc is None:
        return lines + [
            "Findings: not checked by machine for this run. It predates recorded raw results and "
            "cells files, so its claims cannot be computed from what is committed; the next reference "
            "run of this preset records both (`make tables` then re-derives this page).", ""]
    claims = claims_doc["claims"]
    ours, paper = verdict_counts(claims, "ours"), verdict_counts(claims, "paper")
    bar = against_bar(claims)
    held, testable = bar["hold"], bar["on_paper"]
    lines += [
        f"Findings, from [`claims/{run['paper']}.json`](claims/{run['paper']}.json) (evidence per claim in "
        f"[`claims/{run['paper']}.md`](claims/{run['paper']}.md)): {len(claims)} claims; on ours "
        f"{ours['holds']} hold, {ours['fails']} fail, {ours['untestable']} untestable; on the paper's "
        f"own numbers {paper['holds']} hold. Of the claims that hold on the paper, {held} of {testable} "
        "hold on ours.", "", *shortfall(claims),
        "| claim | source | on the paper | on ours |", "|---|---|---|---|"]
    lines += [f"| {md_escape(c['statement'])} | {md_escape(c['source'])} | {VERDICT[c['on_paper']]} | "
              f"{VERDICT[c['on_ours']]} |" for c in claims]
    return lines + [""]


def reference_page(root: Path) -> str:
    runs = load_runs(root)
    lines = [f"# Reference runs: the `{runs['preset']}` preset, one whole paper per run", "",
             "Each paper was regenerated from scratch (corpora prepared, every model trained, every table "
             f"and figure rendered) by one command on {runs['machine'].strip()}", "",
             "| paper | command | wall time | revision | page |", "|---|---|---|---|---|"]
    lines += [f"| {r['title']} | `{r['command']}` | {r['wall_time'].strip()} | {r['revision'].strip()} | "
              f"[`{r['paper']}.md`]({r['paper']}.md) |" for r in runs["runs"]]
    lines.append("")
    for run in runs["runs"]:
        claims_file = root / "claims" / f"{run['paper']}.json"
        lines += paper_section(run, read_json(claims_file) if claims_file.exists() else None)
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--results", default="results", help="the results folder (default: results)")
    args = parser.parse_args(argv)
    root = Path(args.results) / args.preset
    if not (root / "runs.yaml").exists():
        raise FileNotFoundError(f"{root / 'runs.yaml'} not found: a preset's reference runs are recorded there")
    atomic_write_text(root / "REFERENCE.md", reference_page(root))


if __name__ == "__main__":
    run_cli(main)
