"""Write a preset's reference-run page, results/<preset>/REFERENCE.md, from recorded data only:
the runs file (results/<preset>/runs.yaml: each run's paper and title, and for runs older than
the run records their command, wall time and revision), each run's record where it exists
(results/<preset>/runs/<paper>.json from its Snakemake logs, lenex.pipeline.reference_record: command and
wall time; the revision from the raw results' git_rev) and each paper's machine-checked claims
(results/<preset>/claims/<paper>.json): per paper the five verdict counts, the median effect
fraction, the bar, and whether its claims file was fixed before the run it judges (`fixed_before_run`).
No finding is typed by hand: a paper whose claims were not computed says so.

    python -m lenex.pipeline.reference --preset workstation
"""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from ..claims.summary import (BAR_SHARE, PAPER_SIDE, against_bar, fraction_text, median_effect_fraction,
                             paper_counts, untestable_why, verdict_counts)
from ..claims.verdicts import VERDICTS
from ..cli import run_cli
from ..files import atomic_write_text, read_json, read_yaml
from .reference_record import wall_time_text
from ..records.stored import SUFFIX, existing, read_text
from ..tables.formatting import md_escape
from ..tables.raw_results import merge

RUN_KEYS = ("paper", "title", "command", "wall_time", "revision")


def raw_text(root: Path, paper: str) -> str | None:
    """A paper's raw results under `root`/raw as one text: its whole-run file (plain or .xz), else
    its committed parts joined as `merge` joins them (the same lines in the same order); None if neither."""
    whole = existing(root / "raw" / f"{paper}.jsonl")
    if whole:
        return read_text(whole)
    parts = part_files(root).get(paper)
    return merge([str(path) for path in parts.values()]) if parts else None


def raw_revisions(root: Path, paper: str) -> list[str]:
    """The revisions a paper's raw results were computed at (each record's git_rev), in order."""
    text = raw_text(root, paper)
    if text is None:
        return []
    revisions = {}
    for line in text.splitlines():
        rev = json.loads(line).get("git_rev") if line.strip() else None
        if rev:
            revisions[rev] = None
    return list(revisions)


# Whether a paper's claims file was fixed before the run it judges: the revision (and date) at which
# `config/claims/<paper>.yaml` last changed, against the revisions its raw results were computed at
# (`raw_revisions`), by `git merge-base --is-ancestor`. The page shows the answer; "no" is a warning,
# never hidden (docs/claims.md, "Fixed before the run").

SHORT = 7  # the raw results' git_rev length: a fixed width keeps the page the same on every clone


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


def repository(path: Path) -> Path | None:
    """The top of the git repository holding `path`, None outside one (or without git)."""
    try:
        done = _git(path, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        return None
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def last_change(repo: Path, relative: str) -> tuple[str, str] | None:
    """(revision, date) of the last commit that changed `relative`, None when none did."""
    done = _git(repo, "log", "-1", "--format=%H %cs", "--", relative)
    if done.returncode != 0 or not done.stdout.strip():
        return None
    revision, date = done.stdout.split()
    return revision[:SHORT], date


def is_ancestor(repo: Path, older: str, newer: str) -> bool | None:
    """Whether `older` is an ancestor of (or equal to) `newer`; None when git knows either not."""
    done = _git(repo, "merge-base", "--is-ancestor", older, newer)
    return {0: True, 1: False}.get(done.returncode)


def fixed_before_run(paper: str, results_root: Path, revisions: list[str]) -> str:
    """One line for the reference page: when the claims file last changed, the raw results'
    revisions, and whether the former predates every one of them."""
    relative = f"config/claims/{paper}.yaml"
    head = f"Fixed before the run: `{relative}`"
    repo = repository(results_root if results_root.exists() else Path.cwd())
    if repo is None:
        return f"{head}: unknown (not in a git repository)."
    changed = last_change(repo, relative)
    if changed is None:
        return f"{head}: WARNING: never committed, so not fixed before any run."
    if not revisions:
        return f"{head} last changed at `{changed[0]}` ({changed[1]}); its raw results record no revision to compare."
    answers = [is_ancestor(repo, changed[0], rev) for rev in revisions]
    listed = ", ".join(f"`{rev}`" for rev in revisions)
    line = f"{head} last changed at `{changed[0]}` ({changed[1]}); the raw results it judges were computed at {listed}; "
    if all(a is True for a in answers):
        return line + "the claims file predates them: yes."
    if any(a is False for a in answers):
        return line + "the claims file predates them: **no — WARNING: it changed after (or beside) the run it judges.**"
    return line + "the claims file predates them: unknown (a revision is not in this clone's history)."


def recorded_run(root: Path, run: dict) -> dict:
    """A runs.yaml entry with its command, wall time and revision taken from the run's record."""
    record_file = root / "runs" / f"{run.get('paper')}.json"
    if not record_file.exists():
        return run
    record = read_json(record_file)
    revisions = raw_revisions(root, run["paper"])
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


def _budget_gap(claim: dict) -> str:
    scale = claim.get("scale") or {}
    quoted = scale.get("quoted")
    if quoted:
        factor = quoted["tokens"] / scale["trained_tokens"]
        return (f"{claim['id']} (the study shows it at `{quoted['key']}`: {quoted['shape']}, {quoted['tokens']:,} "
                f"tokens, {factor:.3g}x the {scale['trained_tokens']:,} its models train)")
    return f"{claim['id']} ({untestable_why(claim)})"


def _never_seen(claim: dict) -> str:
    budgets = claim["scale"]["never_seen_budgets"]
    return f"{claim['id']} (the study ran {', '.join(f'{b:,}' for b in budgets)} tokens)"


UNTESTABLE_HERE = "untestable"
GROUPS = {
    "inconclusive": ("inconclusive (the effect is inside its interval: the seeds or scored tokens that would decide "
                     "each at power 0.8, lenex.claims.power, and how many of its comparisons are significantly against)"),
    "never": "contradicted at every budget tried (the scale study never shows their phenomenon)",
    "contradicted": "contradicted",
    UNTESTABLE_HERE: "untestable (a cell not computed, or at this scale: the study shows the phenomenon only "
                     "beyond the models' budget or shape)",
}


def _decides(claim: dict) -> str:
    """'c (contradiction needs 9 seeds, now 3; 2 of 7 comparisons significantly against)' from its power."""
    power = claim.get("power")
    if not power or power.get("needed") is None:
        return claim["id"]
    word = "contradiction" if power["decides"] == "contradicted" else "hold"
    lean = power["leaning"]
    against = (f"; {lean['significantly_against']} of {lean['of']} comparisons significantly against"
               if lean["significantly_against"] else "")
    return f"{claim['id']} ({word} needs {power['needed']:,} {power['unit']}s, now {power['n']}{against})"


def _swept(claim: dict) -> str:
    """'c (a budget and heads sweep would measure why)' where the claim names its sweep."""
    sweep = claim.get("sweep")
    return f"{claim['id']} (a {' and '.join(sweep['variables'])} sweep would measure why)" if sweep else claim["id"]


def _group(claim: dict) -> str:
    if claim["verdict"] == "contradicted" and (claim.get("scale") or {}).get("never_seen_budgets"):
        return "never"
    return claim["verdict"]


def why_not_held(claims: list[dict]) -> dict[str, list[str]]:
    """Each claim that holds on the paper but not on ours (by-construction ones left out), grouped
    by its verdict in a fixed order: inconclusive, contradicted at every budget tried (with the
    budgets), contradicted, untestable (with why)."""
    groups: dict[str, list[str]] = {key: [] for key in GROUPS}
    for c in claims:
        if c["on_paper"] is True and c["verdict"] not in ("holds", "by-construction"):
            key = _group(c)
            groups[key].append(_budget_gap(c) if key == UNTESTABLE_HERE else _never_seen(c) if key == "never"
                               else _decides(c) if key == "inconclusive" else _swept(c))
    return {GROUPS[key]: ids for key, ids in groups.items() if ids}


def shortfall(claims: list[dict]) -> list[str]:
    """Lines weighing the gap to the fidelity bar: how many more claims must hold, why each claim
    that holds on the paper does not hold on ours, and how many would if every untestable one held."""
    bar = against_bar(claims)
    held, testable, needed = bar["hold"], bar["on_paper"], bar["bar"]
    short = max(0, needed - held)
    lines = [f"Against a bar of {float(BAR_SHARE):.0%} of them ({needed} claims): "
             + (f"{short} short." if short else "met."), ""]
    groups = why_not_held(claims)
    if groups:
        lines += [f"Of the {testable - held} that hold on the paper but not on ours:"]
        lines += [f"- {len(ids)} {what}: {', '.join(ids)}" for what, ids in groups.items()]
        lines += ["", f"Were every untestable claim to hold, {held + bar['untestable']} of {testable} would.", ""]
    return lines


def paper_section(run: dict, claims_doc: dict | None, fixed: str | None = None, claims_name: str | None = None) -> list[str]:
    claims_name = claims_name or f"{run['paper']}.json"
    # An archived run keeps its evidence page compressed beside its claims record.
    evidence_name = f"{run['paper']}.md" + (SUFFIX if claims_name.endswith(SUFFIX) else "")
    lines = [f"## {run['title']}", "", f"Tables and figures: [`{run['paper']}.md`]({run['paper']}.md).", ""]
    if claims_doc is None:
        return lines + [
            "Findings: not checked by machine for this run. It predates recorded raw results and "
            "cells files, so its claims cannot be computed from what is committed; the next reference "
            "run of this preset records both (`make tables` then re-derives this page).", ""]
    claims = claims_doc["claims"]
    ours, paper = verdict_counts(claims), paper_counts(claims)
    bar = against_bar(claims)
    lines += [
        f"Findings, from [`claims/{claims_name}`](claims/{claims_name}) (evidence per claim in "
        f"[`claims/{evidence_name}`](claims/{evidence_name})): {len(claims)} claims; on ours "
        + ", ".join(f"{ours[v]} {v}" for v in VERDICTS)
        + f"; median effect fraction {fraction_text(median_effect_fraction(claims))}; on the paper's own numbers "
        f"{paper['holds']} hold. Of the claims that hold on the paper (by-construction ones excluded), "
        f"{bar['hold']} of {bar['on_paper']} hold on ours.", "", *([fixed, ""] if fixed else []), *shortfall(claims),
        "| claim | source | on the paper | on ours | effect fraction |", "|---|---|---|---|---|"]
    lines += [f"| {md_escape(c['statement'])} | {md_escape(c['source'])} | {PAPER_SIDE[c['on_paper']]} | "
              f"{c['verdict']} | {fraction_text(c.get('effect_fraction'))} |" for c in claims]
    return lines + [""]


def part_files(root: Path) -> dict[str, dict[str, Path]]:
    """paper -> {part name: its raw-results file} of the recorded parts committed under `root`/raw
    (stored compressed, `.jsonl.xz`, or plain `.jsonl`; a part in both forms is an error)."""
    parts: dict[str, dict[str, Path]] = {}
    for path in sorted((root / "raw").glob("*.part-*.jsonl*")):
        stem = path.name.removesuffix(SUFFIX)
        if not stem.endswith(".jsonl"):
            continue
        paper, part = stem.removesuffix(".jsonl").split(".part-", 1)
        if part in parts.get(paper, {}):
            raise ValueError(f"{root / 'raw'}: part {part!r} of {paper} is stored twice ({parts[paper][part].name} "
                             f"and {path.name}); keep the compressed one")
        parts.setdefault(paper, {})[part] = path
    return parts


def committed_parts(root: Path) -> dict[str, list[str]]:
    """paper -> the names of its recorded parts committed under `root`/raw (a run made in parts)."""
    return {paper: sorted(parts) for paper, parts in part_files(root).items()}


def not_run(runs: dict, papers: list[str] | None, files: dict[str, dict[str, Path]] | None = None) -> list[str]:
    """The lines naming the configured `papers` without a reference run at this preset (none
    where every one has run, or where the configured papers are not given); a paper whose run is
    being made in recorded parts is named with the parts committed so far (`files`: `part_files`)."""
    ran, files = {run["paper"] for run in runs["runs"]}, files or {}
    parts = {paper: sorted(named) for paper, named in files.items()}
    missing = [paper for paper in papers or [] if paper not in ran and paper not in parts]
    lines = [f"Being run in recorded parts: `{paper}`, committed so far "
             f"{', '.join(f'[`{part}`](raw/{files[paper][part].name})' for part in names)} (its raw results; "
             "no page or claims until every part is in, docs/raw-results.md)." for paper, names
             in parts.items() if paper not in ran and paper in (papers or [])]
    if missing:
        lines.append(f"Not run at this preset yet: {', '.join(f'`{paper}`' for paper in missing)} (no reference run, "
                     "so no page, raw results or claims of theirs here; `make tables` re-renders only the papers run).")
    return [*lines, ""] if lines else []


def reference_page(root: Path, papers: list[str] | None = None) -> str:
    """The page of the reference runs under `root`; `papers`: the configured papers, those
    without a run named as not run yet."""
    runs = load_runs(root)
    lines = [f"# Reference runs: the `{runs['preset']}` preset, one whole paper per run", "",
             "Each paper was regenerated from scratch (corpora prepared, every model trained, every table "
             f"and figure rendered) by one command on {runs['machine'].strip()}", "",
             "| paper | command | wall time | revision | page |", "|---|---|---|---|---|"]
    lines += [f"| {r['title']} | `{r['command']}` | {r['wall_time'].strip()} | {r['revision'].strip()} | "
              f"[`{r['paper']}.md`]({r['paper']}.md) |" for r in runs["runs"]]
    lines.append("")
    lines += not_run(runs, papers, part_files(root))
    for run in runs["runs"]:
        # An archived run keeps its claims record compressed (lenex.records.stored); a preset's is plain.
        claims_file = existing(root / "claims" / f"{run['paper']}.json")
        fixed = fixed_before_run(run["paper"], root, raw_revisions(root, run["paper"]))
        lines += paper_section(run, json.loads(read_text(claims_file)) if claims_file else None, fixed,
                               Path(claims_file).name if claims_file else f"{run['paper']}.json")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", required=True)
    parser.add_argument("--results", default="results", help="the results folder (default: results)")
    parser.add_argument("--config", default="config/config.yaml",
                        help="the workflow's config, whose `papers` without a run the page names (default: %(default)s)")
    args = parser.parse_args(argv)
    root = Path(args.results) / args.preset
    if not (root / "runs.yaml").exists():
        raise FileNotFoundError(f"{root / 'runs.yaml'} not found: a preset's reference runs are recorded there")
    papers = read_yaml(args.config)["papers"]
    atomic_write_text(root / "REFERENCE.md", reference_page(root, papers))


if __name__ == "__main__":
    run_cli(main)
