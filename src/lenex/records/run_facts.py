"""Where and when a result was computed: the git revision, the device and the date, recorded
by every evaluation beside its numbers, so a table header says the run's facts (not those of
whoever re-renders it from the raw results, docs/raw-results.md)."""

from __future__ import annotations

import datetime
import platform
import subprocess

NOT_RECORDED = "not recorded"
#: The facts every evaluation records about its run, and every table header ends with.
RUN_FACTS = ("git_rev", "device", "date")


def git_revision() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        # "+dirty" means changed code or config; outputs under results/ do not count (Snakemake
        # deletes a job's old outputs before running it, and tables of reference runs are tracked).
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!results"],
                               capture_output=True, text=True)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def device_name() -> str:
    import torch

    return (f"{platform.machine()} CPU, torch {torch.__version__}"
            + (f", CUDA {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ""))


def run_facts() -> dict:
    """The facts an evaluation records about its own run."""
    return {"git_rev": git_revision(), "device": device_name(),
            "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat()}


def recorded(results: list[dict], key: str) -> str:
    """The distinct values of `key` over the records, in order, joined (several revisions or dates
    mean the cells were computed in several runs), or "not recorded" (results from before lenex
    recorded run facts). A mean over seeds run apart holds a list of its seeds' values
    (lenex.tables.seeds.merged_record): each counts."""
    values = sorted({str(v) for r in results if r.get(key) is not None
                     for v in (r[key] if isinstance(r[key], list) else [r[key]])})
    return ", ".join(values) if values else NOT_RECORDED
