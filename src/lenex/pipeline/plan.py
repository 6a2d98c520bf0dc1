"""What a preset costs before it runs: every job of a paper's tables with its declared
resources, and GPU-hours.

    python -m lenex.pipeline.plan --preset-file config/presets/paper.yaml --paper lex \\
        --targets results/paper/tables/lex/table2.md ... --out-md PLAN.md --out-json PLAN.json

The job list comes from the DAG itself (`snakemake -n --forceall <targets>`), so a paper
whose experiment file adds tables or variants is planned without touching this file.
Training GPU-hours are estimated from the preset's measured throughput
(`resources.train.tokens_per_second_per_gpu`, with its `throughput_source`); every other job
is counted at its declared wall time, an upper bound.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path


from ..cli import run_cli
from ..files import atomic_write_text, read_yaml
from ..presets import paper_view

_RULE = re.compile(r"^(?:local)?rule (\w+):$")
_FIELD = re.compile(r"^\s+(\w+): (.*)$")
_RESOURCE = re.compile(r"(\w+)=(.*?)(?=, \w+=|$)")


@dataclass
class Job:
    rule: str
    output: str = ""
    threads: int = 1
    resources: dict = field(default_factory=dict)

    @property
    def gpus(self) -> int:
        return job_gpus(self.resources)

    @property
    def runtime_minutes(self) -> int:
        return int(self.resources.get("runtime", 0) or 0)


def parse_dry_run(text: str) -> list[Job]:
    """The jobs a `snakemake -n` printout lists: rule, first output, threads, resources."""
    jobs, current = [], None
    for line in text.splitlines():
        rule = _RULE.match(line.strip()) if not line.startswith(" ") else None
        if rule:
            current = Job(rule=rule[1])
            jobs.append(current)
            continue
        found = _FIELD.match(line)
        if current is None or not found:
            if not line.strip():
                current = None
            continue
        key, value = found[1], found[2].strip()
        if key == "output":
            current.output = value.split(", ")[0]
        elif key == "threads":
            current.threads = int(value)
        elif key == "resources":
            current.resources = {k: _number(v) for k, v in _RESOURCE.findall(value)}
    return jobs


def _number(value: str):
    try:
        return int(value)
    except ValueError:
        return value


def job_gpus(resources: dict) -> int:
    """GPUs a job holds: `gpu` (one node), or nodes x the count in `gres=gpu[:type]:N`."""
    if resources.get("gpu"):
        return int(resources["gpu"])
    gres = str(resources.get("gres", ""))
    if gres.startswith("gpu"):
        count = gres.rsplit(":", 1)[-1] if ":" in gres else "1"
        return int(resources.get("nodes", 1) or 1) * int(count)
    return 0


def training_gpu_hours(steps: int, batch_size: int, length: int, tokens_per_second_per_gpu: float) -> float:
    """GPU-hours to train on steps x batch x length tokens at the given per-GPU throughput
    (data parallelism assumed to scale linearly: the GPU-hours do not depend on the GPU count)."""
    if tokens_per_second_per_gpu <= 0:
        raise ValueError(f"tokens_per_second_per_gpu must be positive, got {tokens_per_second_per_gpu}")
    return steps * batch_size * length / tokens_per_second_per_gpu / 3600


def build_plan(jobs: list[Job], preset: dict, paper: str) -> dict:
    train = preset.get("resources", {}).get("train", {})
    rate = train.get("tokens_per_second_per_gpu")
    cfg, length = preset["train"], preset["model"]["train_length"]
    per_training = training_gpu_hours(cfg["steps"], cfg["batch_size"], length, rate) if rate else None
    rows, by_rule = [], {}
    # Sorted: the dry run lists jobs in an order that changes between runs; the plan must not.
    for job in sorted(jobs, key=lambda j: (j.rule, j.output)):
        declared = job.gpus * job.runtime_minutes / 60
        # Training rules: the generic `train*` and a paper's own `<paper>_train` (e.g. receptive_field_train).
        is_training = job.rule.startswith("train") or job.rule.endswith("_train")
        estimate = per_training if is_training and per_training is not None and job.gpus else None
        rows.append({**asdict(job), "gpus": job.gpus, "declared_gpu_hours": declared, "estimated_gpu_hours": estimate})
        # Rules made per job in a loop (lex.smk: lex_eval__<preset>_<variant>_<corpus>) count as one.
        total = by_rule.setdefault(job.rule.split("__")[0], {"jobs": 0, "gpus_per_job": job.gpus, "declared_gpu_hours": 0.0,
                                              "estimated_gpu_hours": 0.0})
        total["jobs"] += 1
        total["declared_gpu_hours"] += declared
        total["estimated_gpu_hours"] += estimate if estimate is not None else declared
    return {
        "preset": preset["name"], "paper": paper, "jobs": rows, "by_rule": by_rule,
        "total_jobs": len(rows),
        "declared_gpu_hours": sum(r["declared_gpu_hours"] for r in rows),
        "estimated_gpu_hours": sum(t["estimated_gpu_hours"] for t in by_rule.values()),
        "training_tokens": cfg["steps"] * cfg["batch_size"] * length,
        "training_gpu_hours_each": per_training,
        "training_jobs": sum(1 for r in rows if r["estimated_gpu_hours"] is not None),
        "throughput": {"tokens_per_second_per_gpu": rate, "source": train.get("throughput_source", "not stated")},
    }


def render_markdown(plan: dict) -> str:
    rate = plan["throughput"]
    each = plan["training_gpu_hours_each"]
    lines = [
        f"# Plan: {plan['paper']} at preset `{plan['preset']}`", "",
        f"{plan['total_jobs']} jobs. Estimated **{plan['estimated_gpu_hours']:,.0f} GPU-hours** "
        f"(declared wall-time bound: {plan['declared_gpu_hours']:,.0f} GPU-hours).", "",
        (f"Each of the {plan['training_jobs']} pretrainings sees {plan['training_tokens']:,} tokens: "
         f"{each:,.1f} GPU-hours at {rate['tokens_per_second_per_gpu']:,.0f} tokens/s per GPU ({rate['source']})."
         if plan["training_jobs"] else
         "No pretraining from scratch here (or no throughput stated), so nothing is estimated from throughput."),
        "Other jobs are counted at their declared runtime x GPUs (an upper bound).", "",
        "| rule | jobs | GPUs each | declared GPU-h | estimated GPU-h |", "|---|---:|---:|---:|---:|",
    ]
    for rule, t in sorted(plan["by_rule"].items()):
        lines.append(f"| {rule} | {t['jobs']} | {t['gpus_per_job']} | {t['declared_gpu_hours']:,.1f} | "
                     f"{t['estimated_gpu_hours']:,.1f} |")
    lines += ["", "| job | threads | GPUs | mem_mb | runtime (min) | nodes |", "|---|---:|---:|---:|---:|---:|"]
    for job in plan["jobs"]:
        res = job["resources"]
        lines.append(f"| {job['rule']}: `{job['output']}` | {job['threads']} | {job['gpus']} | "
                     f"{res.get('mem_mb', '')} | {res.get('runtime', '')} | {res.get('nodes', 1)} |")
    return "\n".join(lines) + "\n"


def dry_run(targets: list[str], directory: str = ".") -> str:
    """The DAG's job list for `targets`, every job included (--forceall), as snakemake prints it."""
    args = [sys.executable, "-m", "snakemake", *targets, "-n", "--forceall", "--nolock", "--cores", "1",
            "--directory", directory]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"snakemake dry run failed: {(done.stderr or done.stdout)[-2000:]}")
    return done.stdout


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset-file", required=True)
    parser.add_argument("--paper", required=True)
    parser.add_argument("--targets", nargs="+", required=True, help="the paper's table targets at this preset")
    parser.add_argument("--dry-run-file", help="read a saved `snakemake -n --forceall` printout instead")
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-json", required=True)
    args = parser.parse_args(argv)
    path = Path(args.preset_file)
    if not path.is_file():
        raise FileNotFoundError(f"preset file not found: {path}")
    preset = paper_view(read_yaml(path), args.paper)  # a duplicate key or a syntax error names file and line
    text = Path(args.dry_run_file).read_text() if args.dry_run_file else dry_run(args.targets)
    jobs = parse_dry_run(text)
    if not jobs:
        raise RuntimeError(f"the dry run of {' '.join(args.targets)} lists no jobs")
    plan = build_plan(jobs, preset, args.paper)
    atomic_write_text(args.out_json, json.dumps(plan, indent=1) + "\n")
    atomic_write_text(args.out_md, render_markdown(plan))


if __name__ == "__main__":
    run_cli(main)
