"""How long each job of a recorded run took, read from its Snakemake logs (the reference runs'
`results/<preset>/runs/<paper>/*.snakemake.log`): the measured side of a cost model. A job counts
when its start and its `Finished jobid` both lie in one log (a job cut by a stop and rerun after
it counts once, as the rerun).

`model_seed_seconds` sums, for each model and seed, the jobs whose outputs are that model's files
(`models/<paper>/<model>/seed<s>.pt` and everything under `<paper>/<model>/seed<s>/`): its training
and every evaluation that read it, each measured as it ran (two jobs side by side at `--cores 2`).
`parent_seconds` gives the jobs that make a model's seedless parent, `models/<paper>/pretrained/<model>.pt`
(the segmented paper's pretrained model, which every seed continues from): a part run from a clean
checkout trains it again before any seed.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..records.stored import SUFFIX, read_text
from .reference_record import JOB_STAMP, job_time

_RULE = re.compile(r"^(?:local)?rule (\S+):$")
_FIELD = re.compile(r"^\s+(output|jobid): (.*)$")
_FINISHED = re.compile(r"^Finished jobid: (\d+)")
_SEED = re.compile(r"^seed(\d+)(?:\.pt)?$")
_PARENT = re.compile(r"(?:^|/)models/(?P<paper>[^/]+)/pretrained/(?P<model>[^/]+)\.pt$")


def job_spans(log_text: str) -> list[dict]:
    """Every job that started and finished in one Snakemake log: {jobid, rule, outputs, seconds}."""
    started: dict[str, dict] = {}
    done, stamp, current = [], None, None
    for line in log_text.splitlines():
        if match := JOB_STAMP.match(line):
            stamp, current = job_time(match.group(1)), None
        elif (match := _RULE.match(line)) and stamp is not None:
            current = {"rule": match.group(1), "start": stamp, "outputs": []}
        elif current is not None and (match := _FIELD.match(line)):
            if match.group(1) == "output":
                current["outputs"] = [p.strip() for p in match.group(2).split(",") if p.strip()]
            else:
                started[match.group(2).strip()] = current
                current = None
        elif (match := _FINISHED.match(line)) and stamp is not None and match.group(1) in started:
            job = started.pop(match.group(1))
            done.append({"jobid": int(match.group(1)), "rule": job["rule"], "outputs": job["outputs"],
                         "seconds": (stamp - job["start"]).total_seconds()})
    return done


def model_of_output(path: str, paper: str) -> tuple[str, int] | None:
    """(model, seed) of a model's file or a file under its seed's folder; None for anything else.
    The model is the path between the paper and `seed<s>`: a variant, or `<corpus>/<variant>`."""
    parts = Path(path).parts
    if paper not in parts:
        return None
    start = parts.index(paper) + 1
    for index in range(start + 1, len(parts)):
        if match := _SEED.match(parts[index]):
            return "/".join(parts[start:index]), int(match.group(1))
    return None


def model_seed_seconds(jobs: list[dict], paper: str) -> dict[str, dict[int, float]]:
    """model -> seed -> the seconds of every job whose outputs are that model-seed's files."""
    found: dict[str, dict[int, float]] = {}
    for job in jobs:
        owners = {model_of_output(p, paper) for p in job["outputs"]} - {None}
        if len(owners) == 1:
            model, seed = owners.pop()
            found.setdefault(model, {}).setdefault(seed, 0.0)
            found[model][seed] += job["seconds"]
    return found


def parent_seconds(jobs: list[dict], paper: str) -> dict[str, float]:
    """model -> the seconds of the job that made its seedless parent (`models/<paper>/pretrained/<model>.pt`)."""
    found: dict[str, float] = {}
    for job in jobs:
        for path in job["outputs"]:
            match = _PARENT.search(path)
            if match and match.group("paper") == paper:
                found[match.group("model")] = found.get(match.group("model"), 0.0) + job["seconds"]
    return found


def run_jobs(log_dir: Path) -> list[dict]:
    """Every job of every Snakemake log of one recorded run (committed compressed, `.log.xz`, or plain)."""
    logs = [*Path(log_dir).glob("*.snakemake.log"), *Path(log_dir).glob(f"*.snakemake.log{SUFFIX}")]
    return [job for log in sorted(logs, key=lambda path: path.name.removesuffix(SUFFIX))
            for job in job_spans(read_text(log))]
