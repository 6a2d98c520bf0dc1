"""scripts/gpu/check.sh, the first thing to run on a new GPU machine (docs/gpu.md): it parses, its
stages' time boxes fit its 8 minutes, and each Python stage runs on the CPU at toy sizes
(`--dry-run`) and records what the GPU run reads."""

import importlib.util
import json
import os
import re
import subprocess

import pytest
import torch

from test_workflow import REPO

SCRIPT = REPO / "scripts/gpu/check.sh"


def _check_module():
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts/gpu/check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_parses_and_its_time_boxes_fit_eight_minutes():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
    text = SCRIPT.read_text()
    boxes = [int(box) for box in re.findall(r"^\s*stage [\w-]+ (\d+) ", text, re.M)]
    assert len(boxes) == 5 and sum(boxes) <= 480
    assert re.search(r"^BUDGET=\$\{LENEX_CHECK_SECONDS:-480\}$", text, re.M)


def test_env_stage_measures_a_peak():
    check = _check_module()
    record = check.stage_env(torch.device("cpu"), True, check.Deadline(30))
    assert record["peak_flops"] > 0 and record["torch"] == torch.__version__


@pytest.mark.slow  # ~6 s: three trainings through lenex.training.train.train
def test_train_eval_stage_trains_and_evaluates_at_eight_training_lengths(tmp_path):
    check = _check_module()
    record = check.stage_train_eval(torch.device("cpu"), True, check.Deadline(60))
    for position in ("alibi", "t5", "rope"):
        row = record["schemes"][position]
        assert "error" not in row, row
        assert row["compile"]["compiled"] is False  # the CPU trains eagerly, and says why
        assert [r["multiple"] for r in row["eval"]] == [1, 2, 4, 8] and all(r["loss"] > 0 for r in row["eval"])


def test_segmented_memory_stage_steps_each_model():
    check = _check_module()
    record = check.stage_segmented_memory(torch.device("cpu"), True, check.Deadline(60))
    assert set(record["models"]) == {"bloom", "bloom (no savings)", "pythia", "gpt2"}
    for row in record["models"].values():
        assert "error" not in row, row
        assert row["estimate_gib"] > 0 and row["loss"] > 0


@pytest.mark.slow  # ~15 s: eleven contenders built and stepped
def test_bench_stage_times_every_scheme_and_hf_gpt2():
    check = _check_module()
    record = check.stage_bench(torch.device("cpu"), True, check.Deadline(120), peak=1e11)
    rows = record["shapes"]["toy"]
    for contender in ["hf_gpt2_sdpa", *check.SCHEMES]:
        assert rows[contender].get("tokens_per_s", 0) > 0, (contender, rows[contender])
        assert rows[contender]["fused_only"] is True  # on the CPU no kernel is refused


@pytest.mark.slow  # ~20 s: the script itself, dry, on the CPU (two of its stages: each is tested above)
def test_the_script_runs_its_stages_and_sums_them_up(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), LENEX_CHECK_DRY_RUN="1", LENEX_CHECK_STAGES="env segmented-memory",
               PYTHON=os.sys.executable, OMP_NUM_THREADS="1")
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    status = {s["stage"]: s["status"] for s in summary["stages"]}
    assert status == {"env": "passed", "cuda-tests": "skipped: dry run", "bench": "skipped: not in LENEX_CHECK_STAGES",
                      "train-eval": "skipped: not in LENEX_CHECK_STAGES", "segmented-memory": "passed"}, summary
    written = {p.name for p in tmp_path.iterdir()}
    assert written == {"env.json", "segmented_memory.json", "check.log", "summary.json"}
    assert json.loads((tmp_path / "env.json").read_text())["dry_run"] is True
