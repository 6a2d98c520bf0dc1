"""Training curves (lenex.training.curve): parsing a trainer's metrics.jsonl, the still-falling slope,
bad input, the CLI, and a real tiny training run."""

import json
import math
import subprocess
import sys

import pytest
import torch
from corpus_fixture import make_corpus
from subprocess_env import env_with_venv

from lenex.config import ModelConfig
from lenex.records.checkpoint import read_checkpoint
from lenex.records.checks import check_recorded
from lenex.training.curve import (FORMAT, curve_of, read_records, slope_per_doubling, train_slope_last_doubling,
                                  training_curve, write_curve)
from lenex.training.train import TrainConfig, train

RECORDS = [
    {"step": 4, "loss": 6.0, "lr": 1e-3, "grad_norm": 1.0, "tokens_per_s": 100.0},
    {"step": 8, "loss": 5.0, "lr": 1e-3, "grad_norm": 1.0, "valid_loss": 5.5, "tokens_per_s": 100.0},
    {"step": 12, "loss": 4.5, "lr": 1e-3, "grad_norm": 1.0, "tokens_per_s": 100.0},
    {"step": 16, "loss": 4.0, "lr": 1e-3, "grad_norm": 1.0, "valid_loss": 4.7, "tokens_per_s": 100.0},
]


def write_metrics(path, records=RECORDS, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return path


def test_slope_per_doubling_by_hand():
    # 1000 -> 4000 tokens is two doublings; 5.0 -> 4.6 is -0.4: -0.2 a doubling.
    assert slope_per_doubling([1000, 4000], [5.0, 4.6]) == pytest.approx(-0.2)
    # only the last interval counts: 2000 -> 2828.43 (half a doubling), 4.0 -> 3.9
    assert slope_per_doubling([10, 2000, 2000 * math.sqrt(2)], [9.0, 4.0, 3.9]) == pytest.approx(-0.2)
    assert slope_per_doubling([100, 200], [3.0, 3.5]) == pytest.approx(0.5)  # rising
    assert slope_per_doubling([100], [3.0]) is None and slope_per_doubling([], []) is None
    assert slope_per_doubling([100, 100], [3.0, 2.0]) is None  # no interval
    with pytest.raises(ValueError, match="2 token counts for 1 losses"):
        slope_per_doubling([1, 2], [3.0])


def test_curve_of_a_written_metrics_file(tmp_path):
    curve = training_curve(write_metrics(tmp_path / "metrics.jsonl"), tokens_per_step=256)
    assert curve["format"] == FORMAT and curve["tokens_per_step"] == 256 and curve["tokens_per_step_from"] == "argument"
    assert [p["tokens"] for p in curve["points"]] == [1024, 2048, 3072, 4096]
    assert [p["train_loss"] for p in curve["points"]] == [6.0, 5.0, 4.5, 4.0]
    assert [p.get("valid_loss") for p in curve["points"]] == [None, 5.5, None, 4.7]
    s = curve["summary"]
    assert s["final_train_loss"] == 4.0 and s["final_valid_loss"] == 4.7 and s["best_valid_loss"] == 4.7
    assert s["best_valid_tokens"] == 4096 and s["steps"] == 16 and s["tokens"] == 4096 and s["valid_points"] == 2
    # 2048 -> 4096 tokens is one doubling, 5.5 -> 4.7: -0.8 a doubling, still falling
    assert s["valid_slope_per_doubling"] == pytest.approx(-0.8) and s["still_falling"] is True
    assert s["final_valid_from_checkpoint"] is False


def test_the_checkpoints_final_validation_is_the_last_point():
    records = [{"step": 4, "loss": 6.0}, {"step": 8, "loss": 5.0}]
    curve = curve_of(records, 10, "checkpoint x.pt", {"step": 8, "valid_loss": 5.2})
    assert curve["points"][-1] == {"step": 8, "tokens": 80, "train_loss": 5.0, "valid_loss": 5.2}
    assert curve["summary"]["final_valid_from_checkpoint"] is True
    assert curve["summary"]["valid_slope_per_doubling"] is None and curve["summary"]["still_falling"] is None
    # no validation anywhere: no validation numbers, said as None
    bare = curve_of(records, 10, "argument")
    assert bare["summary"]["final_valid_loss"] is None and bare["summary"]["best_valid_loss"] is None


@pytest.mark.parametrize("content, message", [
    ("", "empty metrics file"),
    ("\n\n", "empty metrics file"),
    (json.dumps(RECORDS[0]) + '\n{"step": 8, "lo', r"metrics.jsonl:2: not a JSON record .*half-written last line"),
    ('{"step": 4, "loss": 6.0}\nnot json\n{"step": 8, "loss": 5.0}\n', r"metrics.jsonl:2: not a JSON record"),
    ('{"step": 4, "valid_loss": 6.0}\n', r"metrics.jsonl:1: no field 'loss'"),
    ('{"loss": 6.0}\n', r"metrics.jsonl:1: no field 'step'"),
    ('{"step": 4, "loss": NaN}\n', r"metrics.jsonl:1: loss is nan, not a finite number"),
    ('{"step": 4, "loss": "6"}\n', r"metrics.jsonl:1: loss is '6', not a finite number"),
    ('[1, 2]\n', r"metrics.jsonl:1: not a JSON object"),
    ('{"step": 8, "loss": 6.0}\n{"step": 4, "loss": 5.0}\n', "steps not increasing"),
])
def test_bad_metrics_are_one_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "metrics.jsonl"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        read_records(path)


def test_a_fairseq_metrics_file_is_refused_naming_the_field(tmp_path):
    # lenex.fairseq_backend.train writes train rows {step, loss} and validation rows {step, valid_loss}
    path = write_metrics(tmp_path / "metrics.jsonl", [{"step": 10, "loss": 5.0}, {"step": 10, "valid_loss": 5.1}])
    with pytest.raises(ValueError, match=r"metrics.jsonl:2: no field 'loss'"):
        training_curve(path, tokens_per_step=8)


def test_a_missing_file_and_the_tokens_source_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such metrics file"):
        read_records(tmp_path / "none.jsonl")
    path = write_metrics(tmp_path / "metrics.jsonl")
    with pytest.raises(ValueError, match="either from a checkpoint or as a number"):
        training_curve(path)
    with pytest.raises(ValueError, match="positive whole number"):
        training_curve(path, tokens_per_step=0)


def test_cli_writes_the_curve_and_refuses_bad_input_in_one_line(tmp_path):
    metrics, out = write_metrics(tmp_path / "metrics.jsonl"), tmp_path / "curve.json"
    cmd = [sys.executable, "-m", "lenex.training.curve", str(metrics), str(out), "--tokens-per-step", "256"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env_with_venv())
    assert done.returncode == 0, done.stderr
    curve = json.loads(out.read_text())
    assert curve["summary"]["final_valid_loss"] == 4.7 and "content_sha256" in curve
    check_recorded(curve, str(out))  # what a renderer's read checks: digest, finite numbers
    metrics.write_text('{"step": 4}\n')
    done = subprocess.run(cmd, capture_output=True, text=True, env=env_with_venv())
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"error: {metrics}:1: no field 'loss' (lenex's trainer writes step, loss in every record; "
        "this file is another trainer's?)"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


def test_curve_of_a_real_tiny_training_run(corpus, tmp_path):
    torch.set_num_threads(1)
    model = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="alibi")
    cfg = TrainConfig(steps=12, batch_size=4, lr=3e-3, warmup=2, log_every=4, checkpoint_every=100, eval_every=6)
    summary = train(model, cfg, corpus, tmp_path / "m.pt", tmp_path / "w")
    curve = training_curve(tmp_path / "w" / "metrics.jsonl", checkpoint=tmp_path / "m.pt")
    assert curve["tokens_per_step"] == 4 * 32 and curve["tokens_per_step_from"] == f"checkpoint {tmp_path / 'm.pt'}"
    payload = read_checkpoint(tmp_path / "m.pt")
    assert curve["checkpoint"] == str(tmp_path / "m.pt") and curve["checkpoint_sha256"] == payload["content_sha256"]
    # records at the log interval (4, 8, 12) and the validations (6, 12)
    assert [p["step"] for p in curve["points"]] == [4, 6, 8, 12]
    assert [p["step"] for p in curve["points"] if "valid_loss" in p] == [6, 12]
    assert curve["summary"]["tokens"] == summary["tokens_seen"] == 12 * 4 * 32
    assert curve["summary"]["final_train_loss"] == summary["final_loss"]
    write_curve(curve, tmp_path / "curve.json")
    assert json.loads((tmp_path / "curve.json").read_text())["points"] == curve["points"]
    # a checkpoint of another run (another step) is refused
    other = write_metrics(tmp_path / "other.jsonl", [{"step": 4, "loss": 6.0}])
    with pytest.raises(ValueError, match="ends at step 4, its checkpoint .* at step 12"):
        training_curve(other, checkpoint=tmp_path / "m.pt")


def test_train_slope_is_the_last_doubling_s_mean_loss_minus_the_doubling_before():
    # tokens 40, 80, 120, 160: the last doubling (80, 160] holds 120 and 160 (mean of 4.5 and 4.0 =
    # 4.25), the one before (40, 80] holds 80 (5.0): -0.75 nats over the doubling
    assert train_slope_last_doubling([40, 80, 120, 160], [6.0, 5.0, 4.5, 4.0]) == pytest.approx(-0.75)
    assert curve_of(RECORDS, 10, "argument")["summary"]["train_slope_last_doubling"] == pytest.approx(-0.75)
    # a flat loss has no slope; a run whose records all lie in its last doubling has none to compare
    assert train_slope_last_doubling([100, 200, 300, 400], [3.0, 3.0, 3.0, 3.0]) == pytest.approx(0.0)
    assert train_slope_last_doubling([300, 400], [3.0, 2.0]) is None
    assert train_slope_last_doubling([], []) is None
    with pytest.raises(ValueError, match="3 token counts for 2 losses"):
        train_slope_last_doubling([1, 2, 3], [1.0, 2.0])
