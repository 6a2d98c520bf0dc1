"""The benchmark scripts run end to end (--quick) and their helpers compute what they say.
No timing is asserted: the numbers depend on the machine and its load."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # benchmarks/ is a top-level folder, not part of the installed package

from benchmarks.common import PeakMemory, fit_exponent, markdown_table  # noqa: E402


def test_fit_exponent_recovers_power_laws():
    lengths = [64, 128, 256, 512]
    assert fit_exponent(lengths, [3 * n**2 for n in lengths]) == pytest.approx(2.0)
    assert fit_exponent(lengths, [0.5 * n for n in lengths]) == pytest.approx(1.0)


def test_peak_memory_sees_a_large_allocation():
    with PeakMemory(torch.device("cpu")) as memory:
        block = torch.ones(64 * 2**20 // 4)  # 64 MiB, touched
        del block
    assert memory.bytes >= 48 * 2**20


def test_markdown_table_layout():
    assert markdown_table(["a", "b"], [[1, 0.123456]]).splitlines() == ["| a | b |", "|---|---|", "| 1 | 0.123 |"]


@pytest.mark.slow
def test_quick_run_prints_tables_and_writes_json(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--threads", "1", "--device", "cpu",
                           "--only", "peak,train,eval", "--out", str(tmp_path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    for section in ("peak", "train", "eval"):
        payload = json.loads((tmp_path / f"{section}.json").read_text())
        assert payload["quick"] is True and payload["machine"]["threads"] == 1
        assert f"## {section}" in done.stdout
    train = json.loads((tmp_path / "train.json").read_text())["result"]["shapes"]["tiny"]
    assert set(train["peers"]) >= {"lenex", "hf_gpt2"} and train["ratio_lenex_over_hf"] > 0
    assert train["params"]["lenex"] == train["params"]["hf_gpt2"]  # same shape, same parameter count
    evaluation = json.loads((tmp_path / "eval.json").read_text())["result"]["schemes"]["alibi"]["methods"]
    assert set(evaluation) == {"full causal", "blockwise (BCA)", "sliding window", "cache window", "re-encoding"}


def test_unknown_section_is_named():
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "speed"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2 and "'speed'" in done.stderr


def test_pipeline_reads_snakemakes_job_count_and_refuses_output_without_one():
    from benchmarks.pipeline import _pending_jobs

    assert _pending_jobs("Building DAG of jobs...\nNothing to be done (all requested files are present and up to date).") == 0
    assert _pending_jobs("Job stats:\njob      count\n-----  -------\ntrain        3\ntotal       12\n") == 12
    with pytest.raises(RuntimeError, match="could not read the job count"):
        _pending_jobs("Building DAG of jobs...\n")


def test_memory_exponent_is_withheld_when_a_peak_is_below_a_mebibyte():
    from benchmarks.eval_length import _exponent_text, _memory_exponent

    lengths = [64, 128, 256]
    assert _memory_exponent(lengths, [2**21, 2**23, 2**25]) == pytest.approx(2.0)
    assert _memory_exponent(lengths, [0, 4096, 2**25]) is None
    assert _exponent_text(None).startswith("n/a")
