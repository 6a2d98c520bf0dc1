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


def test_pipeline_copies_only_tracked_files_as_edited(tmp_path):
    """The whole-DAG measurement runs in a copy a fresh clone would have: tracked files (as edited
    in the working tree), no results/ or resources/."""
    from benchmarks.pipeline import fresh_copy

    source = tmp_path / "src"
    (source / "results").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=source, check=True)
    (source / "tracked.txt").write_text("committed\n")
    (source / "results" / "old.json").write_text("{}\n")
    subprocess.run(["git", "add", "tracked.txt"], cwd=source, check=True)
    (source / "tracked.txt").write_text("edited\n")
    fresh_copy(source, tmp_path / "copy")
    assert (tmp_path / "copy" / "tracked.txt").read_text() == "edited\n"
    assert not (tmp_path / "copy" / "results").exists()


def test_pipeline_reads_a_process_own_cpu_not_its_childrens():
    from benchmarks.pipeline import _own_cpu_seconds

    busy = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n"
                             "import subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'])\ntime.sleep(5)"])
    try:
        import time
        deadline = time.time() + 20
        while (_own_cpu_seconds(busy.pid) or 0) < 0.4 and time.time() < deadline:
            time.sleep(0.1)
        assert 0.4 <= _own_cpu_seconds(busy.pid) < 3
    finally:
        busy.kill()
    assert _own_cpu_seconds(busy.pid + 10**7) is None  # no such process


def test_pipeline_table_puts_the_previous_run_under_each_figure():
    from benchmarks.pipeline import table

    now = {"whole": {"command": "snakemake --cores 2", "jobs": 400, "seconds": 550.0, "scheduler_cpu_seconds": 5.0,
                     "noop_rerun_seconds": {"median": 2.0}}}
    before = {"revision": "abc", "result": {"whole": {"command": "snakemake --cores 2", "jobs": 491, "seconds": 748.0,
                                                     "scheduler_cpu_seconds": 192.0, "noop_rerun_seconds": {"median": 3.7}}}}
    lines = table(now, before).splitlines()
    assert lines[0] == "Pipeline cost (previous: abc)"
    assert lines[3].startswith("| whole | this run | 550 | 400 | 5 | 2 |")
    assert lines[4].startswith("|  | previous | 748 | 491 | 192 | 3.7 |")


def test_pipeline_measures_the_start_up_of_every_entry_point_the_rules_call():
    from benchmarks.pipeline import entry_points

    modules = entry_points()
    assert {"lenex.training.train", "lenex.lex.evaluate_model", "lenex.receptive_field.evaluate"} <= set(modules)
    assert "lenex.scoring.evaluate" not in modules  # every LEX cell's job runs lenex.lex.evaluate_model
    assert "lenex.pipeline.launch" not in modules  # how the rules start them, not one of them


LOG = """Building DAG of jobs...
Date: 2026-11-25 12:00:00
Command: /x/bin/snakemake --cores 2 results/workstation/receptive-field.md
[Wed Nov 25 12:00:00 2026]
rule receptive_field_train:
    output: results/workstation/models/receptive-field/arxiv/window-40/seed1.pt
    jobid: 3
[Wed Nov 25 12:00:00 2026]
rule receptive_field_train:
    output: results/workstation/models/receptive-field/arxiv/alibi/seed1.pt
    jobid: 4
[Wed Nov 25 12:01:40 2026]
Finished job 3.
1 of 3 steps (33%) done
[Wed Nov 25 12:01:40 2026]
rule receptive_field_evaluate:
    output: results/workstation/eval/receptive-field/arxiv/window-40/seed1.json
    jobid: 5
[Wed Nov 25 12:02:00 2026]
Finished job 4.
2 of 3 steps (67%) done
[Wed Nov 25 12:02:10 2026]
Finished job 5.
3 of 3 steps (100%) done
"""


def test_budget_estimate_scales_only_the_matching_training_jobs(tmp_path, capsys):
    from benchmarks.budget_estimate import job_seconds, main as estimate_main, scaled_seconds

    jobs = job_seconds(LOG)
    assert [(j["rule"], j["seconds"]) for j in jobs] == [
        ("receptive_field_train", 100), ("receptive_field_train", 120), ("receptive_field_evaluate", 30)]
    cost = scaled_seconds(jobs, [("/window-", 2.0)])
    # 2 x 100 for the window model's training; the other training and the evaluation as run.
    assert cost["measured"] == 250 and cost["estimated"] == 350
    # a log of today's workflow: every paper's models are the `train` rule's
    today = [{**job, "rule": "train"} if job["rule"].endswith("_train") else job for job in jobs]
    assert scaled_seconds(today, [("/window-", 2.0)]) == cost
    log = tmp_path / "run.log"
    log.write_text(LOG)
    estimate_main(["--log", str(log), "--scale", "/window-=2"])
    out = capsys.readouterr().out
    # Wall 130 s for 250 job-s: 0.52 wall s per job-s, so 350 job-s take 182 s = 0.05 h.
    assert "as run: 250 job-s in 0.04 h wall (0.520 wall s per job-s)" in out
    assert "estimated: 350 job-s, 0.05 h wall" in out
    with pytest.raises(SystemExit):
        estimate_main(["--log", str(log), "--scale", "(=2"])


def test_the_goals_are_read_from_the_measurements_and_judged():
    from benchmarks.pipeline import MAKE_TEST, WHOLE_DAG, against_goals

    result = {WHOLE_DAG: {"seconds": 250.0, "noop_dry_run_seconds": {"median": 1.2}}, MAKE_TEST: {"seconds": 470.0}}
    assert against_goals(result) == [["the whole tiny DAG after set-up (s)", "250.0", 240.0, "NO"],
                                      ["no-op rerun, snakemake --cores 2 -n (s)", "1.2", 1.5, "yes"],
                                      ["make test (s)", "470.0", 480.0, "yes"]]
    assert against_goals({WHOLE_DAG: {"error": "failed"}}) == []  # nothing measured, nothing judged


def test_the_docs_quote_the_committed_pipeline_measurement():
    """docs/testing.md's measured block is what the benchmark wrote from the committed JSON, not typed."""
    from benchmarks.pipeline import DOCS_BLOCK, docs_block

    payload = json.loads((REPO / "benchmarks/results/cpu/pipeline.json").read_text())
    page = (REPO / "docs/testing.md").read_text()
    block = page[page.index(DOCS_BLOCK[0]):page.index(DOCS_BLOCK[1]) + len(DOCS_BLOCK[1])]
    assert block == docs_block(payload)


@pytest.mark.slow
def test_the_forked_start_up_section_runs():
    """Each pipeline section imports what it times (the fork server's module moved once, and only a
    full benchmark run found it)."""
    from benchmarks.pipeline import forked_startup

    timed = forked_startup(1, limit=1)
    assert len(timed) == 1 and all(entry["median"] > 0 for entry in timed.values()), timed
