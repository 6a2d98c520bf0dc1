"""The emergence sweeps' training curves (lenex.scale_study.sweep_curves, docs/curves.md): a point
records its curve, `attach-curve` adds one to a point recorded before, the curves page, and the
final validation loss as a scale variable (emergence.record_final_loss, predictions.series_of)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from subprocess_env import env_with_venv

from lenex.files import read_json
from lenex.scale_study import sweep_curves, sweep_run
from lenex.scale_study import sweeps as sw
from lenex.scale_study.emergence import record_final_loss
from lenex.scale_study.predictions import series_of

METRICS = [{"step": 2, "loss": 7.0}, {"step": 4, "loss": 6.0, "valid_loss": 6.5},
           {"step": 6, "loss": 5.5}, {"step": 8, "loss": 5.0}]


def point(ident="lex-rope__train_tokens-1024__seed1", seed=1, train_tokens=1024, **more):
    """A point record as sweep_run writes it (the fields the curves read)."""
    return {"id": ident, "sweep": "lex-budget", "variable": "train_tokens", "value": train_tokens, "seed": seed,
            "train_tokens": train_tokens, "steps": 8, "tokens_seen": train_tokens, "valid_loss": 5.2,
            "phenomenon": "lex-rope", **more}


def write_metrics(path: Path, records=METRICS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_points_curve_takes_its_tokens_and_final_validation_from_its_record(tmp_path):
    curve = sweep_curves.point_curve(point(), write_metrics(tmp_path / "metrics.jsonl"))
    assert curve["tokens_per_step"] == 128 and [p["tokens"] for p in curve["points"]] == [256, 512, 768, 1024]
    # validations: 6.5 at 512 tokens, the checkpoint's 5.2 at 1024: one doubling, -1.3
    assert curve["points"][-1]["valid_loss"] == 5.2 and curve["summary"]["final_valid_from_checkpoint"]
    assert curve["summary"]["valid_slope_per_doubling"] == pytest.approx(-1.3)
    with pytest.raises(ValueError, match="ends at step 4, but point p trained 8 steps"):
        sweep_curves.point_curve(point(id="p"), write_metrics(tmp_path / "short.jsonl", METRICS[:2]))
    with pytest.raises(ValueError, match="no whole tokens per step"):
        sweep_curves.point_curve(point(tokens_seen=1001), tmp_path / "metrics.jsonl")


def test_the_point_rule_records_the_runs_curve(tmp_path, monkeypatch):
    config = sw.load_sweeps()
    chosen = sw.sweep_points(config, "lex-budget")[0]
    out, work = tmp_path / "sweeps", tmp_path / "work"
    from lenex.scale_study import study

    # the training (rule train's, into the point's workdir) and the scoring, faked
    write_metrics(sw.point_files(chosen, work).workdir / "metrics.jsonl")

    def score_point(p, settings, files, data_dir, device, command, facts):
        assert files == sw.point_files(chosen, work, tmp_path / "models")
        return point(train_tokens=p["train_tokens"], tokens_seen=8 * 128)

    monkeypatch.setattr(study, "score_point", score_point)
    (out / "lex-budget" / "points").mkdir(parents=True)
    record = sweep_run.score_sweep_point(config, "lex-budget", chosen["id"], out, work, tmp_path / "models", "cpu", "cmd")
    written = read_json(out / "lex-budget" / "points" / f"{chosen['id']}.json")
    assert written == record and written["id"] == chosen["id"]
    assert written["training_curve"]["summary"]["final_valid_loss"] == 5.2
    assert [p["step"] for p in written["training_curve"]["points"]] == [2, 4, 6, 8]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "lenex.scale_study.sweep_run", *map(str, args)],
                          capture_output=True, text=True, env=env_with_venv())


def test_attach_curve_adds_the_curve_to_a_committed_point_once(tmp_path):
    out = tmp_path / "sweeps"
    path = out / "lex-budget" / "points" / "lex-rope__train_tokens-1024__seed1.json"
    path.parent.mkdir(parents=True)
    sweep_curves.write_point(path, point())
    before = read_json(path)
    metrics = write_metrics(tmp_path / "metrics.jsonl")
    done = run_cli("attach-curve", "lex-budget", "lex-rope__train_tokens-1024__seed1", metrics, "--out", out)
    assert done.returncode == 0, done.stderr
    after = read_json(path)
    assert {k: v for k, v in after.items() if k != "training_curve"} == before  # nothing else changed
    assert after["training_curve"] == sweep_curves.point_curve(before, metrics)
    assert path.read_text() == json.dumps(after, indent=1, sort_keys=True) + "\n"
    again = run_cli("attach-curve", "lex-budget", "lex-rope__train_tokens-1024__seed1", metrics, "--out", out)
    assert again.returncode == 2 and again.stderr.strip().splitlines() == [
        f"error: {path} has a training curve already (recorded by its run); nothing attached"]
    missing = run_cli("attach-curve", "lex-budget", "nope", metrics, "--out", out)
    assert missing.returncode == 2 and "no such point record (sweep 'lex-budget', point 'nope')" in missing.stderr
    unknown = run_cli("attach-curve", "no-sweep", "nope", metrics, "--out", out)
    assert unknown.returncode == 2 and "no sweep 'no-sweep'; known: " in unknown.stderr
    few = run_cli("attach-curve", "lex-budget", "nope", "--out", out)
    assert few.returncode == 2 and "attach-curve takes 3 name(s), got 2" in few.stderr


def test_the_curves_page_per_sweep_with_and_without_curves(tmp_path):
    out = tmp_path / "sweeps"
    metrics = write_metrics(tmp_path / "metrics.jsonl")
    for seed, tokens in ((1, 1024), (2, 1024), (1, 2048)):
        record = point(f"lex-rope__train_tokens-{tokens}__seed{seed}", seed, tokens, tokens_seen=tokens)
        if (seed, tokens) != (2, 1024):
            record["training_curve"] = sweep_curves.point_curve(record, metrics)
        path = out / "lex-budget" / "points" / f"{record['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        sweep_curves.write_point(path, record)
    sweeps = {"lex-budget": {"variable": {"name": "train_tokens"}}, "rf-heads": {"variable": {"name": "n_head"}}}
    sweep_curves.write(sweeps, out)
    page = (out / "curves.md").read_text()
    assert "## lex-budget\n\n3 points recorded, 2 with a training curve." in page
    assert "## rf-heads\n\n0 points recorded, 0 with a training curve." in page
    # value, then seed; the checkpoint's 5.2 is each curve's final validation loss; the train loss
    # over the last doubling (512, 1024] averages 5.5 and 5.0, over (256, 512] it is 6.0: -0.75
    rows = [line for line in page.splitlines() if line.startswith("| lex-rope")]
    assert rows == [
        "| lex-rope__train_tokens-1024__seed1 | 1024 | 1 | 1,024 | 5.200 | -1.300 (still falling) | -0.750 |",
        "| lex-rope__train_tokens-1024__seed2 | 1024 | 2 | 1,024 | no curve recorded | — | — |",
        "| lex-rope__train_tokens-2048__seed1 | 2048 | 1 | 2,048 | 5.200 | -1.300 (still falling) | -0.750 |"]
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_record_final_loss_and_the_loss_axis():
    with_curve = point(training_curve={"summary": {"final_valid_loss": 4.25}},
                       model_config={"n_layer": 2, "d_model": 64, "d_ff": 256}, ppl={"64": 10.0, "128": 20.0},
                       train_length=64)
    assert record_final_loss(with_curve) == 4.25
    assert record_final_loss(point(valid_loss=None)) is None  # neither a curve nor the point's own validation
    assert record_final_loss(point(valid_loss=4.5)) == 4.5  # a point recorded before curves: its checkpoint's
    assert record_final_loss(point(training_curve={"summary": {"final_valid_loss": None}}, valid_loss=4.5)) is None
    with pytest.raises(ValueError, match="final_valid_loss is nan, not a loss"):
        record_final_loss(point(training_curve={"summary": {"final_valid_loss": math.nan}}))
    with pytest.raises(ValueError, match="valid_loss is -1.0, not a loss"):
        record_final_loss(point(valid_loss=-1.0))
    without = {**with_curve, "seed": 2, "valid_loss": None}
    del without["training_curve"]
    effect = {"numerator": 2, "denominator": 1}
    # x is the final loss where recorded; a point with no validation at all is left out of the loss axis only
    assert series_of([with_curve, without], effect, "lex-rope", axis="loss") == {1: [(4.25, pytest.approx(math.log(2)))]}
    assert set(series_of([with_curve, without], effect, "lex-rope")) == {1, 2}
    assert series_of([with_curve, {**without, "valid_loss": 4.0}], effect, "lex-rope", axis="loss")[2] == [
        (4.0, pytest.approx(math.log(2)))]
    with pytest.raises(ValueError, match="unknown scale axis 'ppl'"):
        series_of([with_curve], effect, "lex-rope", axis="ppl")
