"""Pipeline overhead: how long Snakemake takes to decide what to do.

- a no-op rerun of one paper's whole DAG (LEX Table 2 at the `tiny` preset): a dry run that
  builds the DAG and checks every output's modification time; when nothing is pending this is
  exactly the work of a rerun that does nothing, and the pending-job count says whether it was.
- `snakemake -n` on the `paper` preset (every target of the paper-scale DAG).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from .common import markdown_table, summary

REPO = Path(__file__).resolve().parents[1]
TARGETS = {
    "no-op rerun, LEX Table 2 DAG (tiny, dry run)": ["results/tiny/tables/lex/table2.md"],
    "snakemake -n, paper preset": ["--config", "preset=paper"],
}


def _pending_jobs(output: str) -> int:
    if "Nothing to be done" in output:
        return 0
    match = re.search(r"^total\s+(\d+)", output, flags=re.MULTILINE)
    if match is None:
        raise RuntimeError(f"could not read the job count from snakemake's output:\n{output[-2000:]}")
    return int(match.group(1))


def dry_run(args: list[str], reps: int) -> dict:
    command = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", *args]
    seconds, output = [], ""
    for _ in range(reps):
        start = time.perf_counter()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        seconds.append(time.perf_counter() - start)
        output = done.stdout + done.stderr
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{output[-2000:]}")
    return {"command": " ".join(["snakemake", *command[3:]]), "seconds": summary(seconds),
            "pending_jobs": _pending_jobs(output)}


def run(quick: bool) -> dict:
    """One entry per target; a DAG that does not build is recorded with snakemake's last lines, not raised,
    so the other sections' results are still written."""
    results = {}
    for name, args in TARGETS.items():
        try:
            results[name] = dry_run(args, 1 if quick else 3)
        except RuntimeError as err:
            results[name] = {"error": str(err).splitlines()[0], "detail": str(err)[-1500:]}
    return results


def table(result: dict) -> str:
    rows = [[name, "failed", "", r["error"]] if "error" in r else
            [name, r["seconds"]["median"], r["pending_jobs"], f"`{r['command']}`"] for name, r in result.items()]
    return "Pipeline overhead\n" + markdown_table(["what", "seconds (median)", "pending jobs", "command"], rows)
