"""The paper-scale plan: dry-run parsing, GPU counts and GPU-hours by hand."""

import json
import subprocess
import sys

import pytest

from lenex.pipeline.plan import Job, build_plan, job_gpus, parse_dry_run, render_markdown, training_gpu_hours

from test_workflow import scratch_workflow
from subprocess_env import env_with_venv

DRY_RUN = """Building DAG of jobs...
Job stats:
job       count
train         1

[Sun Nov 22 09:12:46 2026]
rule train:
    input: results/p/data/pg22/train.bin, results/p/data/pg22/meta.json
    output: results/p/models/lex/xpos.pt
    log: results/p/logs/train/lex/xpos.log
    jobid: 3
    wildcards: preset=p, paper=lex, variant=xpos
    threads: 64
    resources: tmpdir=/tmp, runtime=1080, gpu=8, mem_mb=128000, mem=128 GB, slurm_extra=--exclusive

[Sun Nov 22 09:12:46 2026]
rule evaluate:
    output: results/p/eval/lex/xpos/pg22/causal/L1024.json
    resources: tmpdir=/tmp, runtime=120, gpu=1, mem_mb=32000

[Sun Nov 22 09:12:46 2026]
localrule render_table:
    output: results/p/tables/lex/table2.md, results/p/tables/lex/table2.tex
    resources: tmpdir=/tmp
This was a dry-run (flag -n).
"""
PRESET = {"name": "p", "model": {"train_length": 1024}, "train": {"steps": 50000, "batch_size": 512},
          "resources": {"train": {"tokens_per_second_per_gpu": 80000, "throughput_source": "measured here"}}}


def test_parse_dry_run_reads_rules_outputs_threads_and_resources():
    jobs = parse_dry_run(DRY_RUN)
    assert [j.rule for j in jobs] == ["train", "evaluate", "render_table"]
    train = jobs[0]
    assert train.output == "results/p/models/lex/xpos.pt" and train.threads == 64
    assert train.resources["gpu"] == 8 and train.resources["mem_mb"] == 128000 and train.runtime_minutes == 1080
    assert train.resources["slurm_extra"] == "--exclusive" and train.resources["mem"] == "128 GB"
    assert jobs[2].output == "results/p/tables/lex/table2.md" and jobs[2].gpus == 0


def test_job_gpus_single_and_multi_node():
    assert job_gpus({"gpu": 8}) == 8
    assert job_gpus({"nodes": 2, "gres": "gpu:8"}) == 16
    assert job_gpus({"nodes": 3, "gres": "gpu:a100:4"}) == 12
    assert job_gpus({"mem_mb": 1000}) == 0


def test_training_gpu_hours_by_hand():
    # 50k steps x 512 x 1024 = 26,214,400,000 tokens / 80,000 tokens/s = 327,680 s = 91.02 h
    assert training_gpu_hours(50000, 512, 1024, 80000) == pytest.approx(91.0222, abs=1e-3)
    with pytest.raises(ValueError, match="must be positive"):
        training_gpu_hours(1, 1, 1, 0)


def test_plan_totals():
    plan = build_plan(parse_dry_run(DRY_RUN), PRESET, "lex")
    # training: estimated 91.02 GPU-h (declared bound 8 GPUs x 18 h = 144); evaluation: 1 GPU x 2 h
    assert plan["by_rule"]["train"]["estimated_gpu_hours"] == pytest.approx(91.0222, abs=1e-3)
    assert plan["by_rule"]["train"]["declared_gpu_hours"] == pytest.approx(144.0)
    assert plan["estimated_gpu_hours"] == pytest.approx(93.0222, abs=1e-3)
    assert plan["declared_gpu_hours"] == pytest.approx(146.0)
    text = render_markdown(plan)
    assert "3 jobs. Estimated **93 GPU-hours**" in text and "measured here" in text


def test_plan_without_throughput_counts_declared_time():
    preset = {**PRESET, "resources": {}}
    plan = build_plan([Job("train", "m.pt", 1, {"gpu": 2, "runtime": 90})], preset, "lex")
    assert plan["training_gpu_hours_each"] is None and plan["estimated_gpu_hours"] == pytest.approx(3.0)
    assert "no throughput stated" in render_markdown(plan)


def test_plan_target_lists_every_job_of_the_paper_dag(tmp_path):
    scratch_workflow(tmp_path)
    env = env_with_venv()  # rules call `python`
    run = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "results/paper/plan/lex.md"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    plan = json.loads((tmp_path / "results/paper/plan/lex.json").read_text())
    trainings = [j for j in plan["jobs"] if j["rule"] == "train"]
    assert trainings and all(j["gpus"] == 8 and j["resources"]["runtime"] == 1080 for j in trainings)
    # LEX's cells at a GPU preset: one job each of the measures' rules, 120 declared minutes apiece
    assert plan["by_rule"]["evaluate"]["jobs"] == 102 and plan["by_rule"]["resolution"]["jobs"] == 9
    assert plan["by_rule"]["evaluate"]["declared_gpu_hours"] == 102 * 2
    assert plan["estimated_gpu_hours"] > 91 * len(trainings)
    assert not [rule for rule in plan["by_rule"] if "__" in rule]


def test_plan_without_pretraining_estimates_nothing_from_throughput():
    """segmented at `paper` fetches released checkpoints: no job trains from scratch."""
    plan = build_plan([Job("segmented_continue", "c.pt", 1, {"gpu": 4, "runtime": 60})], PRESET, "segmented")
    assert plan["training_jobs"] == 0 and plan["estimated_gpu_hours"] == pytest.approx(4.0)
    text = render_markdown(plan)
    assert "No pretraining from scratch here" in text and "pretrainings sees" not in text
