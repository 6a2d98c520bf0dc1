"""What a reference run would cost with more training tokens for some of its models, estimated
from the run's own Snakemake log (no new run):

    python -m benchmarks.budget_estimate --log results/workstation/runs/receptive-field/<log> \\
        --scale 'models/receptive-field/[^/]+/(alibi-|window-)=2'

Each job's seconds are its `[date]` stamp at start to the stamp of its `Finished job` line; a
training job whose output path matches a `--scale PATTERN=FACTOR` regex costs FACTOR times its
measured seconds (training time grows with the tokens it sees at a fixed model; evaluation does
not). The estimated wall time keeps the run's measured ratio of wall time to job seconds (how
well its cores were kept busy). Prints job seconds per group and both wall times.
"""

from __future__ import annotations

import argparse
import re
from datetime import datetime
from pathlib import Path

from lenex.pipeline.reference_record import JOB_STAMP, log_part

RULE = re.compile(r"^\s*(?:local)?rule (\w+):\s*$")
OUTPUT = re.compile(r"^\s*output: (.+?)\s*$")
JOBID = re.compile(r"^\s*jobid: (\d+)\s*$")
FINISHED = re.compile(r"^\s*Finished job(?:id:)? (\d+)")


def job_seconds(text: str) -> list[dict]:
    """Every finished job of a Snakemake log: {rule, output, seconds}, in the order they finished."""
    now, pending, started, jobs = None, None, {}, []
    for line in text.splitlines():
        if m := JOB_STAMP.match(line):  # a job's `[date]` line
            now = datetime.strptime(" ".join(m[1].split()), "%a %b %d %H:%M:%S %Y")
        elif m := RULE.match(line):
            pending = {"rule": m[1], "output": ""}
        elif (m := OUTPUT.match(line)) and pending is not None:
            pending["output"] = m[1]
        elif (m := JOBID.match(line)) and pending is not None:
            started[m[1]], pending = (pending, now), None
        elif (m := FINISHED.match(line)) and m[1] in started:
            job, begun = started.pop(m[1])
            jobs.append({**job, "seconds": (now - begun).total_seconds()})
    return jobs


def is_training_rule(rule: str) -> bool:
    """A model's training: the training rule (`train`, `train_multinode`), or in the log of a run made
    before every paper trained through it, a paper's own `<paper>_train` (receptive_field_train)."""
    return rule in ("train", "train_multinode") or rule.endswith("_train")


def scaled_seconds(jobs: list[dict], scales: list[tuple[str, float]]) -> dict:
    """Job seconds as measured and as estimated: a training job (`is_training_rule`) whose output
    matches a pattern is multiplied by its factor (the first pattern that matches)."""
    measured = estimated = 0.0
    groups: dict[str, float] = {}
    for job in jobs:
        training = is_training_rule(job["rule"])
        factor, group = 1.0, "other training jobs" if training else "other jobs"
        if training:
            for pattern, value in scales:
                if re.search(pattern, job["output"]):
                    factor, group = value, f"training matching {pattern} (x{value:g})"
                    break
        measured += job["seconds"]
        estimated += factor * job["seconds"]
        groups[group] = groups.get(group, 0.0) + job["seconds"]
    return {"measured": measured, "estimated": estimated, "groups": groups}


def parse_scale(text: str) -> tuple[str, float]:
    pattern, _, factor = text.rpartition("=")
    try:
        value = float(factor)
        re.compile(pattern)
    except (ValueError, re.error) as err:
        raise argparse.ArgumentTypeError(f"--scale {text!r}: expected REGEX=FACTOR ({err})") from None
    if not pattern or value <= 0:
        raise argparse.ArgumentTypeError(f"--scale {text!r}: expected REGEX=FACTOR with a positive factor")
    return pattern, value


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", required=True, help="a reference run's Snakemake log (one part)")
    parser.add_argument("--scale", type=parse_scale, action="append", default=[], help="REGEX=FACTOR")
    args = parser.parse_args(argv)
    text = Path(args.log).read_text(encoding="utf-8")
    wall = log_part(text, args.log)["wall_s"]
    cost = scaled_seconds(job_seconds(text), args.scale)
    if not cost["measured"]:
        raise ValueError(f"{args.log}: no finished job to measure")
    busy = wall / cost["measured"]
    for group, seconds in cost["groups"].items():
        print(f"{group}: {seconds:,.0f} job-s as run")
    print(f"as run: {cost['measured']:,.0f} job-s in {wall / 3600:.2f} h wall ({busy:.3f} wall s per job-s)")
    print(f"estimated: {cost['estimated']:,.0f} job-s, {cost['estimated'] * busy / 3600:.2f} h wall")


if __name__ == "__main__":
    from lenex.cli import run_cli

    run_cli(main)
