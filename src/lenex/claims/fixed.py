"""Whether a paper's claims file was fixed before the run it judges: the revision (and date) at which
`config/claims/<paper>.yaml` last changed, against the revisions its raw results were computed at
(each record's git_rev), by `git merge-base --is-ancestor`. The reference page shows the answer;
"no" is a warning, never hidden (docs/claims.md, "Fixed before the run")."""
from __future__ import annotations

import subprocess
from pathlib import Path

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
