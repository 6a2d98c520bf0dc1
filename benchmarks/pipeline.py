"""Pipeline overhead: how long Snakemake takes when there is (almost) nothing to compute.

- A no-op rerun of one paper's whole DAG: `snakemake --cores 1 results/tiny/lex.md` (every table and
  figure of the LEX paper at the `tiny` preset) after the target is complete. If it is not, it is
  built first, untimed (about ten minutes on 2 cores); each timed rerun must then print
  "Nothing to be done", or the section fails.
- `snakemake -n` on the `paper` preset: every target of the paper-scale DAG (the corpus cards and the
  three whole-paper pages), so the time to build and schedule the largest DAG the pipeline has.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from .common import markdown_table, summary

log = logging.getLogger("benchmarks.pipeline")

REPO = Path(__file__).resolve().parents[1]
WHOLE_PAPER = "results/tiny/lex.md"
NOTHING_TO_DO = "Nothing to be done"


def _pending_jobs(output: str) -> int:
    if NOTHING_TO_DO in output:
        return 0
    match = re.search(r"^total\s+(\d+)", output, flags=re.MULTILINE)
    if match is None:
        raise RuntimeError(f"could not read the job count from snakemake's output:\n{output[-2000:]}")
    return int(match.group(1))


def _snakemake(args: list[str]) -> tuple[float, str]:
    command = [sys.executable, "-m", "snakemake", *args]
    # The rules call `python -m lenex...`: the interpreter running the benchmarks comes first on PATH.
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    if done.returncode:
        raise RuntimeError(f"snakemake {' '.join(args)} failed ({done.returncode}):\n{output[-2000:]}")
    return seconds, output


def noop_rerun(target: str, reps: int, build_cores: int) -> dict:
    entry = {"command": f"snakemake --cores 1 {target}", "dag_jobs": dry_run(["--forceall", target], 1)["pending_jobs"]}
    pending = dry_run([target], 1)["pending_jobs"]
    if pending:
        log.info("%s has %d pending jobs: building it first (untimed)", target, pending)
        entry["built_first"] = {"jobs": pending, "seconds": _snakemake(["--cores", str(build_cores), target])[0]}
    seconds = []
    for _ in range(reps):
        elapsed, output = _snakemake(["--cores", "1", target])
        if NOTHING_TO_DO not in output:
            raise RuntimeError(f"the rerun of {target} did work instead of nothing:\n{output[-2000:]}")
        seconds.append(elapsed)
    return {**entry, "seconds": summary(seconds), "pending_jobs": 0}


def dry_run(args: list[str], reps: int) -> dict:
    seconds, output = [], ""
    for _ in range(reps):
        elapsed, output = _snakemake(["-n", "--cores", "1", *args])
        seconds.append(elapsed)
    return {"command": " ".join(["snakemake -n --cores 1", *args]), "seconds": summary(seconds),
            "pending_jobs": _pending_jobs(output)}


def run(quick: bool, build_cores: int = 2) -> dict:
    """One entry per measurement; one that fails is recorded with snakemake's last lines, not raised,
    so the other sections' results are still written. --quick only dry-runs (nothing is built)."""
    measurements = {
        f"no-op rerun, whole LEX paper ({WHOLE_PAPER})": (
            (lambda: dry_run([WHOLE_PAPER], 1)) if quick else (lambda: noop_rerun(WHOLE_PAPER, 3, build_cores))),
        "snakemake -n, paper preset (all papers)": lambda: dry_run(["--config", "preset=paper"], 1 if quick else 3),
    }
    results = {}
    for name, measure in measurements.items():
        try:
            results[name] = measure()
        except RuntimeError as err:
            results[name] = {"error": str(err).splitlines()[0], "detail": str(err)[-1500:]}
    return results


def table(result: dict) -> str:
    rows = []
    for name, r in result.items():
        if "error" in r:
            rows.append([name, "failed", "", r["error"], ""])
            continue
        built = r.get("built_first")
        note = f"a DAG of {r['dag_jobs']} jobs" if "dag_jobs" in r else ""
        if built:
            note += f"; {built['jobs']} jobs built first in {built['seconds']:.0f} s"
        rows.append([name, r["seconds"]["median"], r["pending_jobs"], f"`{r['command']}`", note])
    return "Pipeline overhead\n" + markdown_table(["what", "seconds (median)", "pending jobs", "command", "note"], rows)
