"""scripts/gpu/check.sh, the first thing to run on a new GPU machine (docs/gpu.md): it parses, its
stages' time boxes fit its 8 minutes, each stage's JSON is written after every row and on
SIGTERM, a row error fails its stage, the steady-state readings and the preset's shapes are what
they should be, and each Python stage runs on the CPU at toy sizes (`--dry-run`)."""

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from test_workflow import REPO

SCRIPT = REPO / "scripts/gpu/check.sh"
CHECK = REPO / "scripts/gpu/check.py"


def _check_module():
    spec = importlib.util.spec_from_file_location("gpu_check", CHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _check_module()
CPU = torch.device("cpu")


def test_the_script_parses_and_its_time_boxes_fit_eight_minutes():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
    text = SCRIPT.read_text()
    boxes = dict(re.findall(r"^\s*stage ([\w-]+) (\d+) ", text, re.M))
    assert list(boxes) == list(check.STAGES)
    assert sum(int(box) for box in boxes.values()) <= 480
    assert re.search(r"^BUDGET=\$\{LENEX_CHECK_SECONDS:-480\}$", text, re.M)
    assert "-m pytest" not in text  # the CUDA tests run through `check.py cuda-tests`, which keeps each verdict


# --- the stage record ----------------------------------------------------------------------------

def test_the_json_is_written_after_every_row(tmp_path):
    record = check.StageRecord(tmp_path, "bench", True, shapes={})
    path = tmp_path / "bench.json"
    assert json.loads(path.read_text())["status"] == "running"  # there before the first row
    record.row("a", {"tokens_per_s": 1.0})
    assert json.loads(path.read_text())["rows"] == {"a": {"tokens_per_s": 1.0}}
    record.row("b", {"error": "RuntimeError: boom"})
    written = json.loads(path.read_text())
    assert list(written["rows"]) == ["a", "b"] and written["row_errors"] == 1 and written["status"] == "running"
    record.finish()
    assert json.loads(path.read_text())["status"] == "complete"


def test_an_interrupt_flushes_the_rows_so_far_and_names_the_one_in_flight(tmp_path):
    record = check.StageRecord(tmp_path, "segmented-memory", True)
    record.row("bloom", {"peak_gib": 20.0})
    record.begin("pythia")["length"] = 2048
    stopped = []
    record.on_interrupt.append(lambda: stopped.append(True))
    record.interrupt("SIGTERM")
    written = json.loads((tmp_path / "segmented_memory.json").read_text())
    assert stopped == [True]
    assert written["status"] == "interrupted: SIGTERM"
    assert written["rows"] == {"bloom": {"peak_gib": 20.0},
                               "pythia": {"length": 2048, "interrupted": "SIGTERM while this row ran"}}


SLOW_STAGE = """
import importlib.util, time
spec = importlib.util.spec_from_file_location("gpu_check", {check!r})
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)
record = check.StageRecord({out!r}, "bench", True)
check.flush_on_sigterm(record)
record.row("first", {{"tokens_per_s": 5.0}})
record.begin("second")
print("ready", flush=True)
time.sleep(60)  # a compile that would outlast the box
"""


def test_sigterm_writes_the_stage_json_and_exits_at_once(tmp_path):
    code = SLOW_STAGE.format(check=str(CHECK), out=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    began = time.monotonic()
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=20) == 128 + signal.SIGTERM
    assert time.monotonic() - began < 10  # not the sleep's minute
    written = json.loads((tmp_path / "bench.json").read_text())
    assert written["status"] == "interrupted: SIGTERM"
    assert written["rows"]["first"] == {"tokens_per_s": 5.0}
    assert written["rows"]["second"] == {"interrupted": "SIGTERM while this row ran"}


def test_a_row_predicted_to_outlast_the_box_is_not_started():
    assert check.predict_seconds([], 90) == 90
    assert check.predict_seconds([12.0, 40.0, 20.0], 90) == 40.0  # the longest like row
    deadline = check.Deadline(30)
    assert deadline.refuses(10) is None
    assert deadline.refuses(45).startswith("skipped: predicted 45 s, ")


# --- the summary: a row error fails its stage ----------------------------------------------------

def _judge(exit_code, data):
    return check.judge_stage({"stage": "bench", "exit": exit_code, "seconds": 3, "box": 150}, data)


def test_a_stage_passes_only_with_exit_zero_a_complete_json_and_no_row_error():
    clean = {"stage": "bench", "status": "complete", "rows": {"a": {"tokens_per_s": 1.0}, "b": {"skipped": "box"}}}
    assert _judge(0, clean)["status"] == "passed" and _judge(0, clean)["rows_skipped"] == 1
    erred = {**clean, "rows": {**clean["rows"], "c": {"error": "RuntimeError: x"}}}
    line = _judge(0, erred)
    assert line["status"] == "failed: 1 row error" and line["row_errors"] == 1 and line["errored_rows"] == ["c"]
    assert _judge(124, {**clean, "status": "interrupted: SIGTERM"})["status"] == \
        "failed: stopped at its time box; JSON interrupted: SIGTERM"
    assert _judge(1, None)["status"] == "failed: no JSON written (exit 1)"
    tests = {"stage": "cuda-tests", "status": "complete", "not_run": 2, "rows": {"t::a": {"verdict": "PASSED"}}}
    assert _judge(0, tests)["status"] == "failed: 2 selected tests without a verdict"
    skipped = {"stage": "cuda-tests", "status": "complete", "not_run": 0, "verdicts": {"SKIPPED": 47},
               "rows": {f"t::{i}": {"verdict": "SKIPPED"} for i in range(47)}}
    assert _judge(0, {**skipped, "dry_run": False})["status"] == "failed: 47 cuda tests skipped"
    assert _judge(0, {**skipped, "dry_run": True})["status"] == "passed"  # the CPU rehearsal has no GPU


def test_summary_counts_row_errors_over_the_stages(tmp_path):
    (tmp_path / "stages.jsonl").write_text(
        '{"stage": "env", "exit": 0, "seconds": 1, "box": 25}\n'
        '{"stage": "bench", "exit": 0, "seconds": 9, "box": 150}\n'
        '{"stage": "train-eval", "status": "skipped: not in LENEX_CHECK_STAGES"}\n')
    (tmp_path / "env.json").write_text(json.dumps({"stage": "env", "status": "complete", "rows": {"m": {}}}))
    (tmp_path / "bench.json").write_text(json.dumps({"stage": "bench", "status": "complete", "rows": {
        "lex/rope": {"error": "x"}, "lex/alibi": {"error": "y"}, "lex/t5": {"tokens_per_s": 1.0}}}))
    summary = check.write_summary(tmp_path, 480, 10)
    assert summary["passed"] is False and summary["row_errors"] == 2
    assert [s["status"] for s in summary["stages"]] == ["passed", "failed: 2 row errors",
                                                        "skipped: not in LENEX_CHECK_STAGES"]
    assert json.loads((tmp_path / "summary.json").read_text()) == summary


# --- steady-state readings -----------------------------------------------------------------------

class FakeEvent:
    """An event whose elapsed time is read from a script of milliseconds."""

    def __init__(self, clock):
        self.clock = clock

    def record(self):
        self.at = self.clock["now"]

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return end.at - self.at


def test_median_of_event_times():
    clock = {"now": 0.0}
    pairs = []
    for ms in (5.0, 1.0, 9.0, 3.0):
        start, end = FakeEvent(clock), FakeEvent(clock)
        start.record()
        clock["now"] += ms
        end.record()
        pairs.append((start, end))
    assert check.median_ms(pairs) == 4.0  # (3 + 5) / 2
    assert check.median_ms(pairs[:3]) == 5.0
    with pytest.raises(ValueError, match="no timed steps"):
        check.median_ms([])


class FakeMemory:
    """An allocator whose peak grows with each step, the optimizer's moments arriving at step 1."""

    def __init__(self):
        self.in_use, self.peak, self.resets = 0, 0, []

    def step(self, index):
        transient = 100
        if index == 1:
            self.in_use += 30  # AdamW's moments, allocated by its first step
        self.peak = max(self.peak, self.in_use + transient + (50 if index == 1 else 0))

    def reset(self):
        self.resets.append(self.steps_done)
        self.peak = self.in_use

    def read(self):
        return self.peak * check.GIB


def test_steady_state_resets_the_peak_after_the_warm_up_and_times_only_later_steps():
    clock, memory, durations = {"now": 0.0}, FakeMemory(), [500.0, 80.0, 10.0, 12.0, 11.0, 14.0]
    memory.steps_done = 0

    def step():
        memory.steps_done += 1
        memory.step(memory.steps_done)
        clock["now"] += durations[memory.steps_done - 1]

    result = check.steady_state(step, 2, 4, lambda: FakeEvent(clock), memory, clock=lambda: clock["now"] / 1e3)
    assert memory.resets == [2]  # after AdamW's first step, not before
    # The first step's 180 (with its one-off 50) is not the steady peak: moments 30 + transient 100.
    assert result["peak_gib"] == 130
    assert result["step_ms"] == [10.0, 12.0, 11.0, 14.0] and result["step_ms_median"] == 11.5
    assert result["warmup_seconds"] == pytest.approx(0.58)  # compile and warm-up, apart
    with pytest.raises(ValueError, match="warmup >= 1"):
        check.steady_state(step, 0, 4, lambda: FakeEvent(clock), memory)


def test_split_compile_takes_the_first_interval_apart():
    tokens = 1000
    # 10 steps of 0.1 s after 20 s of compiling, then intervals of 10 steps at 0.1, 0.12, 0.1 s.
    records = [{"step": 10, "tokens_per_s": 10 * tokens / 21.0}, {"step": 20, "tokens_per_s": 10 * tokens / 1.0},
               {"step": 30, "tokens_per_s": 10 * tokens / 1.2}, {"step": 40, "tokens_per_s": 10 * tokens / 1.0}]
    split = check.split_compile(records, tokens)
    assert split["steady_step_seconds"] == pytest.approx(0.1)
    assert split["compile_seconds"] == pytest.approx(20.0)
    assert split["steady_tokens_per_s"] == pytest.approx(10_000)
    with pytest.raises(ValueError, match="at least 2"):
        check.split_compile(records[:1], tokens)


def test_interval_rate_is_per_interval_not_since_the_start():
    from lenex.training.speed import IntervalRate

    now = {"t": 0.0}
    rate = IntervalRate(clock=lambda: now["t"])
    rate.add(1000)
    now["t"] = 10.0  # a first interval slowed by compiling
    assert rate.read() == 100.0
    rate.add(1000)
    now["t"] = 11.0
    assert rate.read() == 1000.0  # a running mean would say 2000 / 11


# --- the preset's shapes -------------------------------------------------------------------------

def test_the_bench_reads_the_gpu_presets_own_shapes():
    shapes = check.preset_shapes(check.read_yaml(check.PRESET))
    # config/presets/gpu.yaml: LEX 12 x 768, 12 heads, d_ff 3072, L 1024, micro-batch 32; the receptive
    # field 12 x 384, 12 heads, d_ff 1536, L 512, batch 32 (no micro-batching).
    assert shapes == {"lex": check.Shape(12, 768, 12, 3072, 1024, 32),
                      "receptive-field": check.Shape(12, 384, 12, 1536, 512, 32)}
    with pytest.raises(ValueError, match=r"^gpu.yaml: model.n_head is missing; the bench reads"):
        check.preset_shapes({"model": {"n_layer": 1, "d_model": 8, "d_ff": 32, "train_length": 4},
                             "train": {"batch_size": 2}, "papers": {"receptive-field": {}}}, "gpu.yaml")


def test_segmented_memory_measures_the_presets_worst_case():
    seg = check.read_yaml(check.PRESET)["papers"]["segmented"]["experiment"]
    cases = {row: (model, length, saved) for row, model, length, saved in check.segmented_cases(seg, dry=False)}
    assert cases["bloom full at 4 L_t"] == ("bloom", 8192, True)  # 4 x L_t 2,048
    assert cases["pythia full at 4 L_t"] == ("pythia", 8192, True)
    assert cases["gpt2 full at 4 L_t"] == ("gpt2", 4096, True)
    assert cases["bloom (no savings)"] == ("bloom", 2048, False)


# --- cuda-tests' verdicts ------------------------------------------------------------------------

def test_pytest_verdict_lines_are_read_plain_and_from_xdist():
    assert check.parse_verdict("tests/t.py::test_a[alibi-causal] PASSED        [  2%]") == \
        ("tests/t.py::test_a[alibi-causal]", "PASSED")
    assert check.parse_verdict("[gw3] [ 40%] FAILED tests/t.py::test_b[t5] ") == ("tests/t.py::test_b[t5]", "FAILED")
    assert check.parse_verdict("tests/t.py::test_c ERROR") == ("tests/t.py::test_c", "ERROR")
    assert check.parse_verdict("E   AssertionError: PASSED") is None
    assert check.parse_selected("collected 60 items / 13 deselected / 47 selected") == 47
    assert check.parse_selected("8 workers [47 items]") == 47
    assert check.parse_selected("collected 3 items") == 3


def test_cuda_tests_stage_records_each_verdict(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text("import pytest\n\n@pytest.mark.cuda\ndef test_ok():\n    pass\n\n"
                      "@pytest.mark.cuda\ndef test_bad():\n    assert False\n\ndef test_not_cuda():\n    pass\n")
    record = check.stage_cuda_tests(tmp_path / "out", CPU, True, check.Deadline(120), tests=[str(sample)])
    rows = {test.split("::")[-1]: row for test, row in record.data["rows"].items()}
    assert rows == {"test_ok": {"verdict": "PASSED"},
                    "test_bad": {"verdict": "FAILED", "error": "FAILED (check.log has its traceback)"}}
    assert record.data["selected"] == 2 and record.data["not_run"] == 0
    assert json.loads((tmp_path / "out/cuda_tests.json").read_text())["row_errors"] == 1


# --- the stages, dry, on the CPU -----------------------------------------------------------------

def test_env_stage_measures_a_peak(tmp_path):
    record = check.stage_env(tmp_path, CPU, True, check.Deadline(30))
    assert record.data["peak_flops"] > 0 and record.data["torch"] == torch.__version__
    assert json.loads((tmp_path / "env.json").read_text())["status"] == "complete"


def test_segmented_memory_stage_steps_each_model(tmp_path):
    record = check.stage_segmented_memory(tmp_path, CPU, True, check.Deadline(120))
    assert set(record.data["rows"]) == {"bloom", "bloom full at 4 L_t", "pythia", "pythia full at 4 L_t", "gpt2",
                                        "gpt2 full at 4 L_t", "bloom (no savings)"}
    for row in record.data["rows"].values():
        assert "error" not in row, row
        assert row["estimate_gib"] > 0 and row["loss"] > 0 and row["timed_steps"] == 2
    assert record.data["rows"]["bloom full at 4 L_t"]["length"] == 64


@pytest.mark.slow  # ~15 s: eleven contenders at two shapes built and stepped
def test_bench_stage_times_every_scheme_and_hf_gpt2_with_its_plan(tmp_path):
    record = check.stage_bench(tmp_path, CPU, True, check.Deadline(300), peak=1e11)
    rows = record.data["rows"]
    assert record.data["shapes"]["lex"]["length"] == 16 and record.data["row_errors"] == 0
    for shape in ("lex", "receptive-field"):
        assert set(rows[f"{shape}/plans"]) == set(check.SCHEMES)
        assert rows[f"{shape}/plans"]["alibi"]["plan"] in ("flex", "sdpa", "reference")
        for contender in [check.HF_GPT2, *check.SCHEMES]:
            row = rows[f"{shape}/{contender}"]
            assert row["tokens_per_s"] > 0 and len(row["step_ms"]) == row["timed_steps"] == 3, row
            assert row["dynamo_graphs"] == 0  # the CPU trains eagerly
        assert rows[f"{shape}/alibi"]["compile"]["compiled"] is False


@pytest.mark.slow  # ~10 s: three trainings through lenex.training.train.train
def test_train_eval_stage_splits_compile_from_steady_steps(tmp_path):
    record = check.stage_train_eval(tmp_path, CPU, True, check.Deadline(120), peak=1e11)
    for position in ("alibi", "t5", "rope"):
        row = record.data["rows"][position]
        assert "error" not in row, row
        assert row["compile"]["compiled"] is False  # the CPU trains eagerly, and says why
        assert row["steady_tokens_per_s"] > 0 and row["trainer_mfu"] > 0
        assert [r["multiple"] for r in row["eval"]] == [1, 2, 4, 8] and all(r["loss"] > 0 for r in row["eval"])


@pytest.mark.slow  # ~30 s: the script itself, dry, on the CPU (two of its stages: each is tested above)
def test_the_script_runs_its_stages_and_sums_them_up(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), LENEX_CHECK_DRY_RUN="1", LENEX_CHECK_STAGES="env segmented-memory",
               PYTHON=sys.executable, OMP_NUM_THREADS="1")
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    summary = json.loads((tmp_path / "summary.json").read_text())
    status = {s["stage"]: s["status"] for s in summary["stages"]}
    assert status == {"env": "passed", "cuda-tests": "skipped: not in LENEX_CHECK_STAGES",
                      "bench": "skipped: not in LENEX_CHECK_STAGES",
                      "train-eval": "skipped: not in LENEX_CHECK_STAGES", "segmented-memory": "passed"}, summary
    assert summary["passed"] is True and summary["row_errors"] == 0
    written = {p.name for p in tmp_path.iterdir()}
    assert written == {"env.json", "segmented_memory.json", "check.log", "stages.jsonl", "summary.json"}
    assert json.loads((tmp_path / "env.json").read_text())["dry_run"] is True


def test_the_tree_sent_to_the_gpu_machine_leaves_room_to_carry():
    """The device tool sends the working tree (at most 64 MiB with what it carries): the tracked
    tree stays within 24 MiB, so 40 MiB are left for carried paths. The GPU stages carry nothing
    today (their corpus is tracked, scripts/gpu/phenomena-corpus, and they need no wheel); the
    claim judge's four wheels (docs/gpu-phenomena.md) or a built venv would travel in that room."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    files = [root / name for name in listed.decode().split("\0") if name]
    size = sum(f.stat().st_size for f in files if f.is_file())
    assert size <= 24 * 2 ** 20, f"the tracked tree is {size / 2 ** 20:.2f} MiB, over 24 MiB"
