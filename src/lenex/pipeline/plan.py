"""What a preset costs before it runs: every job of a paper's tables with its declared
resources, and GPU-hours at a GPU preset, CPU-hours at a CPU one.

    python -m lenex.pipeline.plan --preset-file config/presets/paper.yaml --paper lex \\
        --targets results/paper/tables/lex/table2.md ... --out-md PLAN.md --out-json PLAN.json

The job list comes from the DAG itself (`snakemake -n --forceall <targets>`), so a paper
whose experiment file adds tables or variants is planned without touching this file.
Training GPU-hours are estimated from the preset's measured throughput
(`resources.train.tokens_per_second_per_gpu`, with its `throughput_source`); every other job
is counted at its declared wall time, an upper bound.

At a CPU preset (no job holds a GPU) the plan counts CPU-hours instead: the trainings from the cost
model's measurement on this machine (`python -m benchmarks.preset_cost --preset <preset>` writes
benchmarks/results/cpu/preset_cost_<preset>.json: each training shape's throughput, two one-thread
jobs side by side, and how many models of it the paper trains), every other job at its declared
runtime x threads. Without that file the trainings too are counted at their declared bound, and
the page says how to measure them.
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
from ..files import atomic_write_text, read_json, read_yaml
from ..experiment.presets import paper_view

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


def printed_jobs(printout: str) -> list[dict]:
    """{rule, outputs, command} of every job of a `snakemake -n -p` printout, in its order (the
    command "" where it was printed without -p). An update() output is printed with its flag
    ("results/.../lex.md (update)"): the file alone is kept."""
    jobs = []
    for block in re.split(r"\n(?=\[[^\n]*\]\n(?:local)?rule )", printout):
        rule = re.search(r"^(?:local)?rule (\w+):$", block, re.M)
        listed = re.search(r"^\s+output: (.+)$", block, re.M)
        command = re.search(r"^Shell command: (.+)$", block, re.M)
        if rule and listed:
            files = [re.sub(r" \((?:update|temp|protected)\)$", "", f) for f in listed[1].split(", ")]
            jobs.append({"rule": rule[1], "outputs": files, "command": command[1] if command else ""})
    return jobs


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


def training_cpu_hours(groups: list[dict], paper: str) -> tuple[int, float]:
    """(models, CPU-hours) of a paper's trainings by the cost model's groups: each group's models x
    tokens at the throughput of one job, half of what two one-thread jobs side by side measured
    (a job holds one core for all its time)."""
    mine = [g for g in groups if g["paper"] == paper and g["count"]]
    hours = sum(g["count"] * g["tokens"] / (g["tokens_per_s_two_jobs"] / 2) / 3600 for g in mine)
    return sum(g["count"] for g in mine), hours


def is_training(rule: str, output: str = "") -> bool:
    """Whether a job trains a model from scratch: a job of the training rule (`train`, its
    variants `train_multinode` and `<x>_train`; a tokenizer's training is no model's) whose model
    its paper trains from scratch (Paper.trains_from_scratch): continued pretraining runs one epoch,
    not the preset's steps, so it is counted at its declared runtime as the other jobs are."""
    if not ((rule.startswith("train") and rule != "train_tokenizer") or rule.endswith("_train")):
        return False
    found = MODEL_PATH.match(output)
    if not found:
        return True
    from .papers import paper_named

    return paper_named(found["paper"]).trains_from_scratch(found["model"])


#: A checkpoint of the training rule: results/<preset>/models/<paper>/<model>.pt.
MODEL_PATH = re.compile(r"^results/[^/]+/models/(?P<paper>[^/]+)/(?P<model>.+)\.pt$")


def build_cpu_plan(jobs: list[Job], preset: dict, paper: str, cost: dict | None) -> dict:
    """The plan of a CPU preset: CPU-hours, the trainings' from the cost model where it was measured."""
    rows, by_rule = [], {}
    for job in sorted(jobs, key=lambda j: (j.rule, j.output)):
        declared = job.threads * job.runtime_minutes / 60
        rows.append({**asdict(job), "gpus": 0, "declared_cpu_hours": declared})
        total = by_rule.setdefault(job.rule.split("__")[0], {"jobs": 0, "threads_per_job": job.threads,
                                                             "declared_cpu_hours": 0.0})
        total["jobs"] += 1
        total["declared_cpu_hours"] += declared
    trainings = [r for r in rows if is_training(r["rule"], r["output"])]
    models, measured = training_cpu_hours(cost["groups"], paper) if cost and trainings else (None, None)
    others = sum(r["declared_cpu_hours"] for r in rows if not is_training(r["rule"], r["output"]))
    bound = sum(r["declared_cpu_hours"] for r in trainings)
    return {
        "preset": preset["name"], "paper": paper, "device": "cpu", "jobs": rows, "by_rule": by_rule,
        "total_jobs": len(rows), "training_jobs": len(trainings),
        "declared_cpu_hours": others + bound,
        "estimated_cpu_hours": others + (measured if measured is not None else bound),
        "training_cpu_hours": measured, "cost_model_models": models,
        "cost_model": ({"preset": cost.get("preset"), "machine": cost.get("machine"), "seconds": cost.get("seconds")}
                       if cost else None),
    }


def build_plan(jobs: list[Job], preset: dict, paper: str, cost: dict | None = None) -> dict:
    """The plan: GPU-hours where jobs hold GPUs, else CPU-hours (build_cpu_plan, with the cost
    model's measurement `cost` where there is one)."""
    if jobs and not any(job.gpus for job in jobs):
        return build_cpu_plan(jobs, preset, paper, cost)
    train = preset.get("resources", {}).get("train", {})
    rate = train.get("tokens_per_second_per_gpu")
    cfg, length = preset["train"], preset["model"]["train_length"]
    per_training = training_gpu_hours(cfg["steps"], cfg["batch_size"], length, rate) if rate else None
    rows, by_rule = [], {}
    # Sorted: the dry run lists jobs in an order that changes between runs; the plan must not.
    for job in sorted(jobs, key=lambda j: (j.rule, j.output)):
        declared = job.gpus * job.runtime_minutes / 60
        estimate = per_training if is_training(job.rule, job.output) and per_training is not None and job.gpus else None
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


COST_COMMAND = "python -m benchmarks.preset_cost --preset {preset}"


def render_cpu_markdown(plan: dict) -> str:
    if plan["training_cpu_hours"] is not None:
        cost = plan["cost_model"]
        trained = (f"The {plan['training_jobs']} trainings: **{plan['training_cpu_hours']:,.1f} CPU-hours** by the cost "
                   f"model ({plan['cost_model_models']} models as it counts them, each shape's throughput measured "
                   f"on {(cost.get('machine') or {}).get('cpu', 'this machine')} for {cost['seconds']:g} s, two "
                   f"one-thread jobs side by side; `{COST_COMMAND.format(preset=plan['preset'])}`), about "
                   f"{plan['training_cpu_hours'] / 2:,.1f} hours of wall time on `--cores 2`.")
    else:
        trained = ("The trainings are counted at their declared runtime x threads too: the cost model has not "
                   f"measured this preset on this machine (`{COST_COMMAND.format(preset=plan['preset'])}` writes "
                   f"benchmarks/results/cpu/preset_cost_{plan['preset']}.json; then make the plan again).")
    lines = [
        f"# Plan: {plan['paper']} at preset `{plan['preset']}` (CPU)", "",
        f"{plan['total_jobs']} jobs, no GPU. Estimated **{plan['estimated_cpu_hours']:,.1f} CPU-hours** "
        f"(declared bound, runtime x threads: {plan['declared_cpu_hours']:,.1f} CPU-hours).", "",
        trained, "Other jobs are counted at their declared runtime x threads (an upper bound).", "",
        "| rule | jobs | threads each | declared CPU-h |", "|---|---:|---:|---:|",
    ]
    for rule, t in sorted(plan["by_rule"].items()):
        lines.append(f"| {rule} | {t['jobs']} | {t['threads_per_job']} | {t['declared_cpu_hours']:,.1f} |")
    lines += ["", "| job | threads | mem_mb | runtime (min) |", "|---|---:|---:|---:|"]
    for job in plan["jobs"]:
        res = job["resources"]
        lines.append(f"| {job['rule']}: `{job['output']}` | {job['threads']} | {res.get('mem_mb', '')} | "
                     f"{res.get('runtime', '')} |")
    return "\n".join(lines) + "\n"


def render_markdown(plan: dict) -> str:
    if plan.get("device") == "cpu":
        return render_cpu_markdown(plan)
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
    parser.add_argument("--cost", default=None, help="the cost model's measurement of the preset "
                        "(benchmarks/results/cpu/preset_cost_<preset>.json), for a CPU preset's trainings")
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
    cost = read_json(args.cost) if args.cost else None
    plan = build_plan(jobs, preset, args.paper, cost)
    atomic_write_text(args.out_json, json.dumps(plan, indent=0) + "\n")  # one value a line: diffs stay small
    atomic_write_text(args.out_md, render_markdown(plan))


if __name__ == "__main__":
    run_cli(main)
