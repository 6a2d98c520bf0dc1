"""Faults a careful user meets (issue 22), each tried in a scratch folder: a resumed run never
mixes data, bad input is one line naming the file/key/value, truncated files are named, and a
killed or interrupted run resumes bit for bit."""

import json
import re
import shutil
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from corpus_fixture import make_corpus

from lenex.records.checkpoint import read_checkpoint
from lenex.config import ModelConfig
from lenex.data.store import load_split
from lenex.training.train import TrainConfig, train
from subprocess_env import env_with_venv

MODEL = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="xpos", vocab_size=50257)
TRAIN = TrainConfig(steps=12, batch_size=4, lr=1e-3, warmup=3, log_every=1, checkpoint_every=5)
SRC = Path(__file__).resolve().parents[1] / "src"


def _weights_equal(a, b) -> bool:
    a, b = read_checkpoint(a)["model"], read_checkpoint(b)["model"]
    return all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Two corpora with the same layout and other words (a preset's data.seed changed)."""
    return make_corpus(tmp_path_factory.mktemp("a")), make_corpus(tmp_path_factory.mktemp("b"), seed=5)


def test_resume_after_the_data_changed_in_place_starts_fresh(corpora, tmp_path, caplog):
    torch.set_num_threads(1)
    old, new = corpora
    data = shutil.copytree(old, tmp_path / "data")
    assert train(MODEL, TRAIN, data, tmp_path / "m.pt", tmp_path / "w", stop_after=7) is None
    shutil.copytree(new, data, dirs_exist_ok=True)  # the pipeline re-prepares the corpus in place
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        resumed = train(MODEL, TRAIN, data, tmp_path / "m.pt", tmp_path / "w")
    notice = [r.getMessage() for r in caplog.records if "set aside" in r.getMessage()]
    assert len(notice) == 1 and "last.pt" in notice[0] and "data_sha256.train.bin" in notice[0], notice
    assert (tmp_path / "w" / "last.pt.set-aside").exists()
    fresh = train(MODEL, TRAIN, new, tmp_path / "fresh.pt", tmp_path / "w_fresh")
    assert resumed["final_loss"] == fresh["final_loss"]
    assert _weights_equal(tmp_path / "m.pt", tmp_path / "fresh.pt")


def test_a_finished_run_leaves_no_state_to_resume(corpora, tmp_path):
    torch.set_num_threads(1)
    train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w")
    assert not (tmp_path / "w" / "last.pt").exists()


def test_another_initial_checkpoint_is_not_resumed(corpora, tmp_path, caplog):
    torch.set_num_threads(1)
    init = tmp_path / "init.pt"
    train(MODEL, TrainConfig(steps=2, batch_size=4, checkpoint_every=5), corpora[0], init, tmp_path / "w0")
    assert train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w", stop_after=7, init_from=init) is None
    train(MODEL, TrainConfig(steps=3, batch_size=4, checkpoint_every=5), corpora[1], init, tmp_path / "w1")
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w", init_from=init)
    assert any("init_from_sha256" in r.getMessage() for r in caplog.records)


def test_truncated_resume_state_is_set_aside(corpora, tmp_path, caplog):
    torch.set_num_threads(1)
    whole = train(MODEL, TRAIN, corpora[0], tmp_path / "whole.pt", tmp_path / "w1")
    assert train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w", stop_after=7) is None
    last = tmp_path / "w" / "last.pt"
    last.write_bytes(last.read_bytes()[:1000])
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        again = train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w")
    assert any(str(last) in r.getMessage() and "unreadable" in r.getMessage() for r in caplog.records)
    assert again["final_loss"] == whole["final_loss"]


def test_half_written_metrics_line_is_dropped_with_a_notice(corpora, tmp_path, caplog):
    torch.set_num_threads(1)
    train(MODEL, TRAIN, corpora[0], tmp_path / "whole.pt", tmp_path / "w1")
    assert train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w", stop_after=7) is None
    metrics = tmp_path / "w" / "metrics.jsonl"
    with metrics.open("a") as handle:
        handle.write('{"step": 8, "lo')  # killed in the middle of a write
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        train(MODEL, TRAIN, corpora[0], tmp_path / "m.pt", tmp_path / "w")
    assert any("metrics.jsonl:8" in r.getMessage() and "half-written" in r.getMessage() for r in caplog.records)
    def losses(path):
        return [(r["step"], r["loss"]) for r in map(json.loads, path.read_text().splitlines())]

    assert losses(metrics) == losses(tmp_path / "w1" / "metrics.jsonl")
    assert [step for step, _ in losses(metrics)] == list(range(1, 13))


def test_truncated_meta_json_names_the_file(corpora, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for path in corpora[0].iterdir():
        (data / path.name).write_bytes(path.read_bytes())
    meta = data / "meta.json"
    meta.write_text(meta.read_text()[:-40])
    with pytest.raises(ValueError, match=rf"{meta}: line \d+ column \d+"):
        load_split(data, "train")


def test_truncated_checkpoint_names_the_file(tmp_path):
    from lenex.records.checkpoint import load_model
    from lenex.model import LanguageModel
    from lenex.records.checkpoint import save_checkpoint

    path = tmp_path / "m.pt"
    save_checkpoint(path, LanguageModel(ModelConfig(n_layer=1, d_model=16, n_head=2, d_ff=16, vocab_size=64)))
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(ValueError, match=rf"{path} is corrupt.*delete it"):
        load_model(path)


BAD_TRAIN = [({"steps": 0}, "steps: 0"), ({"steps": -5}, "steps: -5"), ({"lr": 0}, "lr: 0"),
             ({"batch_size": 0}, "batch_size: 0"), ({"checkpoint_every": 0}, "checkpoint_every: 0")]


@pytest.mark.parametrize("values, named", BAD_TRAIN + [({}, None)])
def test_bad_train_config_at_the_entry_point_is_one_line(values, named, tmp_path):
    """`python -m lenex.training.train` exits 2 with one line naming the key and the value, before any
    data is read (the corpus does not exist: a valid config gets as far as saying so)."""
    _bad_config_exits(tmp_path, {}, values, named)


def test_bad_model_config_at_the_entry_point_is_one_line(tmp_path):
    _bad_config_exits(tmp_path, {"n_layer": 0}, {}, "model config n_layer: 0")


@pytest.mark.parametrize("values, named", [({"log_every": 0}, "log_every: 0 (must be >= 1)"),
                                           ({"steps": 2.5}, "steps: 2.5 is not an integer"),
                                           ({"grad_clip": 0}, "grad_clip: 0 (must be > 0)"),
                                           ({"micro_batch_size": -1}, "micro_batch_size: -1")])
def test_train_config_bounds(values, named):
    with pytest.raises(ValueError, match=re.escape(f"train config {named}")):
        TrainConfig.from_dict(values)


@pytest.mark.parametrize("values, named", [({"dropout": 1.5}, "dropout: 1.5 (must be >= 0 and <= 1)"),
                                           ({"d_model": -1}, "d_model: -1 (must be >= 1)"),
                                           ({"position_options": []}, "position_options: [] is not a mapping")])
def test_model_config_bounds(values, named):
    with pytest.raises(ValueError, match=re.escape(f"model config {named}")):
        ModelConfig.from_dict(values)


def _bad_config_exits(tmp_path, model, train_values, named):
    args = [sys.executable, "-m", "lenex.training.train", "--model-config", json.dumps(model), "--train-config",
            json.dumps(train_values), "--data", str(tmp_path / "none"), "--out", str(tmp_path / "m.pt"),
            "--workdir", str(tmp_path / "w")]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert (named in lines[0]) if named else "meta.json not found" in lines[0]
    assert not (tmp_path / "m.pt").exists()


def _train_args(data, tmp_path, steps):
    train_cfg = {"steps": steps, "batch_size": 4, "lr": 1e-3, "warmup": 3, "log_every": 1, "checkpoint_every": 3}
    return [sys.executable, "-m", "lenex.training.train", "--model-config", json.dumps(MODEL.to_dict()), "--train-config",
            json.dumps(train_cfg), "--data", str(data), "--workdir", str(tmp_path / "w"), "--threads", "1"]


KILL_STEPS = 60  # enough steps after the first saved state (step 3) to kill the run mid-way


@pytest.fixture(scope="module")
def uninterrupted(corpora, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(_train_args(corpora[0], out, KILL_STEPS) + ["--out", str(out / "m.pt")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out / "m.pt"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_or_interrupted_run_reruns_bit_identical(corpora, uninterrupted, tmp_path, sig):
    """kill -9 / Ctrl-C once the first state is saved; the rerun resumes and ends with the same
    weights as an uninterrupted run, and no half-written checkpoint is left."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    args = _train_args(corpora[0], tmp_path, KILL_STEPS) + ["--out", str(tmp_path / "m.pt")]
    # Default SIGINT handling even when pytest runs in the background (where SIGINT is inherited ignored).
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    last, deadline = tmp_path / "w" / "last.pt", time.time() + 300
    while not last.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be interrupted: raise KILL_STEPS"
    proc.send_signal(sig)
    proc.communicate(timeout=60)
    assert proc.returncode != 0 and not (tmp_path / "m.pt").exists()
    assert not [p.name for p in (tmp_path / "w").iterdir() if p.name.endswith(".tmp")]
    rerun = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0 and "resumed from" in rerun.stderr, rerun.stderr
    assert _weights_equal(uninterrupted, tmp_path / "m.pt")


def test_error_line_is_not_glued_to_a_progress_bar(capsys):
    from tqdm import tqdm

    from lenex.cli import run_cli

    def failing(argv):
        bar = tqdm(total=10, desc="train")
        bar.update(3)
        raise ValueError("something named")

    with pytest.raises(SystemExit):
        run_cli(failing)
    assert "\nerror: something named\n" in capsys.readouterr().err


REPO = Path(__file__).resolve().parents[1]


def _scratch_workflow(path: Path) -> Path:
    """The workflow with its own copy of config/ (to break) and code linked from the repository."""
    for name in ("Snakefile", "workflow"):
        (path / name).symlink_to(REPO / name)
    shutil.copytree(REPO / "config", path / "config")
    return path


def _snakemake(workdir, *args):
    env = env_with_venv(PYTHONPATH=str(SRC))
    return subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=300)


def test_unknown_scheme_fails_the_dry_run_and_keeps_the_old_model(tmp_path):
    work = _scratch_workflow(tmp_path)
    spec = work / "config" / "experiments" / "lex.yaml"
    spec.write_text(spec.read_text().replace("xpos: {position: xpos}", "xpos: {position: rotary}"))
    model = work / "results" / "tiny" / "models" / "lex" / "xpos" / "seed1.pt"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"a valid old model")
    for args in (["-n"], ["--cores", "1"]):
        run = _snakemake(work, *args, "results/tiny/models/lex/xpos/seed1.pt")
        assert run.returncode != 0
        said = run.stdout + run.stderr  # Snakemake reports workflow errors on stdout
        assert f"{spec}: variant 'xpos': unknown position scheme 'rotary'; known:" in said, said
    assert model.read_bytes() == b"a valid old model"


@pytest.mark.parametrize("where", ["config.yaml", "presets/tiny.yaml", "experiments/lex.yaml"])
def test_yaml_syntax_error_names_the_file_and_line(tmp_path, where):
    work = _scratch_workflow(tmp_path)
    broken = work / "config" / where
    lines = broken.read_text().splitlines()
    broken.write_text("\n".join(lines + ["oops: [1, 2"]) + "\n")
    run = _snakemake(work, "-n", "results/tiny/tables/lex/table2.md")
    assert run.returncode != 0
    said = run.stdout + run.stderr
    # config.yaml is named as the Snakefile names it (relative), the others by absolute path.
    assert re.search(rf"(^|\s|{re.escape(str(work))}/)config/{where}: line {len(lines) + 2} column \d+: .*not valid YAML",
                     said, re.M), said


def test_evaluator_refuses_a_non_finite_result(corpora, tmp_path):
    from lenex.records.checkpoint import save_checkpoint
    from lenex.model import LanguageModel

    model = LanguageModel(MODEL)
    with torch.no_grad():
        model.ln_f.weight[0] = float("nan")  # e.g. a model "trained" for 0 steps at lr 0 before validation
    save_checkpoint(tmp_path / "m.pt", model)
    out = tmp_path / "L32.json"
    args = [sys.executable, "-m", "lenex.scoring.evaluate", "--checkpoint", str(tmp_path / "m.pt"), "--data", str(corpora[0]),
            "--length", "32", "--span", "64", "--max-tokens", "256", "--out", str(out), "--threads", "1"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 2 and not out.exists()
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {tmp_path / 'm.pt'} on {corpora[0]} at L=32, mask causal: non-finite result (nll = nan)"), last
