"""Issue 36, training: a diverged run stops at once keeping its last good state, what can be
checked before step 1 is, SIGTERM saves the state so a resume loses no step, and one trainer
holds a workdir."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from corpus_fixture import make_corpus

from lenex.records.checkpoint import read_checkpoint
from lenex.config import ModelConfig
from lenex.data.store import read_meta
from lenex.training.train import TrainConfig, train

LOCK_NAME = "train.lock"  # lenex.training.guards.LOCK_NAME, spelled out: the tests run against older code too

SRC = Path(__file__).resolve().parents[1] / "src"
MODEL = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="alibi", vocab_size=50257)
ENV = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("c"))


def _train_command(data, tmp_path, **train_values):
    values = {"steps": 60, "batch_size": 4, "lr": 1e-3, "warmup": 3, "log_every": 1, "checkpoint_every": 1000,
              **train_values}
    return [sys.executable, "-m", "lenex.training.train", "--model-config", json.dumps(MODEL.to_dict()), "--train-config",
            json.dumps(values), "--data", str(data), "--workdir", str(tmp_path / "w"), "--threads", "1",
            "--out", str(tmp_path / "m.pt")]


def _no_nan(text: str) -> list[dict]:
    def refuse(constant):
        raise AssertionError(f"non-finite {constant} in metrics.jsonl")

    return [json.loads(line, parse_constant=refuse) for line in text.splitlines()]


def test_diverged_training_stops_at_once_and_keeps_the_last_good_state(corpus, tmp_path):
    """lr 1e30: NaN from step 2 (today every step runs, rc 0, a NaN checkpoint and bare NaN in
    metrics.jsonl). Now: rc 2 at step 2, one line, the state of step 1 untouched, no model."""
    done = subprocess.run(_train_command(corpus, tmp_path, lr=1e30, warmup=0, checkpoint_every=1), env=ENV,
                          capture_output=True, text=True, timeout=300)
    work = tmp_path / "w"
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2, done.stderr
    assert last.startswith("error: training diverged at step 2: loss = nan") or "grad_norm = " in last, last
    assert f"{work / 'metrics.jsonl'}" in last and f"{work / 'last.pt'} (step 1)" in last, last
    assert not (tmp_path / "m.pt").exists()
    assert [r["step"] for r in _no_nan((work / "metrics.jsonl").read_text())] == [1]
    state = torch.load(work / "last.pt", weights_only=False)
    assert state["step"] == 1 and all(torch.isfinite(v).all() for v in state["model"].values())


def test_short_validation_split_is_refused_before_step_one(tmp_path):
    """Today found after the last step and named 'training split'; now before step 1, naming
    the valid split and its file, with no step run."""
    data = make_corpus(tmp_path, n_docs=10, words_per_doc=300)
    splits = read_meta(data)["splits"]
    length = splits["valid"]["n_tokens"] - 1  # valid holds no window of L + 2; train does
    assert splits["train"]["n_tokens"] >= length + 2
    cfg = ModelConfig(**{**MODEL.to_dict(), "train_length": length})
    with pytest.raises(ValueError) as refused:
        train(cfg, TrainConfig(steps=1, batch_size=1), data, tmp_path / "m.pt", tmp_path / "w")
    assert str(refused.value).startswith(f"{data / 'valid.bin'}: the valid split has {length + 1} tokens, fewer than "
                                         f"one training window of {length + 2}"), refused.value
    assert not (tmp_path / "w" / "metrics.jsonl").exists() and not (tmp_path / "m.pt").exists()
    from lenex.training.checks import check_split_sizes

    check_split_sizes(data, length - 1)  # what a DAG-build check calls: one token less fits


@pytest.mark.parametrize("model, train_values, named", [
    ({"n_head": 3, "d_model": 64}, {}, "d_model 64 is not divisible by n_head 3"),
    ({}, {"batch_size": 8, "micro_batch_size": 3}, "micro_batch_size: 3 does not divide batch_size 8"),
    ({"n_layr": 2}, {}, "unknown model config key 'n_layr'"),
])
def test_config_checks_a_dag_build_can_call(model, train_values, named):
    from lenex.training.checks import check_run_configs

    with pytest.raises(ValueError, match=named):
        check_run_configs(model, train_values)


def _wait_for(condition, proc, timeout=300):
    deadline = time.time() + timeout
    while not condition() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)


def _metric_steps(path: Path) -> list[int]:
    return [r["step"] for r in map(json.loads, path.read_text().splitlines())] if path.exists() else []


@pytest.mark.slow
def test_sigterm_saves_the_state_and_a_resume_loses_no_step(corpus, tmp_path):
    """No state is due before step 1000; SIGTERM mid-run saves the state of the last step done
    (today nothing is saved: every step is lost), and the resumed run ends with the weights of an
    uninterrupted one."""
    whole = subprocess.run(_train_command(corpus, tmp_path / "whole"), env=ENV, capture_output=True, text=True,
                           timeout=600)
    assert whole.returncode == 0, whole.stderr
    args = _train_command(corpus, tmp_path)
    metrics = tmp_path / "w" / "metrics.jsonl"
    proc = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: len(_metric_steps(metrics)) >= 5, proc)
    assert proc.poll() is None, "the run finished before SIGTERM: raise its steps"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    done = _metric_steps(metrics)[-1]
    assert proc.returncode == 2 and not (tmp_path / "m.pt").exists(), err
    assert err.strip().splitlines()[-1].startswith(f"error: stopped by SIGTERM: state at step {done} saved in"), err
    assert torch.load(tmp_path / "w" / "last.pt", weights_only=False)["step"] == done
    rerun = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0 and f"at step {done}" in rerun.stderr, rerun.stderr
    assert _metric_steps(metrics) == list(range(1, 61))
    a, b = read_checkpoint(tmp_path / "whole" / "m.pt")["model"], read_checkpoint(tmp_path / "m.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_second_trainer_is_kept_out_of_the_workdir(corpus, tmp_path):
    """An orphaned trainer still runs in the workdir: a rerun beside it is refused with one line
    naming the holder (today it starts, truncating the first one's metrics.jsonl)."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        lock = tmp_path / "w" / LOCK_NAME
        lock.parent.mkdir()
        lock.write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname()}))
        (tmp_path / "w" / "metrics.jsonl").write_text('{"step": 1, "loss": 1.0}\n')
        done = subprocess.run(_train_command(corpus, tmp_path, steps=2), env=ENV, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 2
        said = done.stderr.strip().splitlines()
        assert len(said) == 1 and f"pid {holder.pid} on host {socket.gethostname()}" in said[0], done.stderr
        assert (tmp_path / "w" / "metrics.jsonl").read_text() == '{"step": 1, "loss": 1.0}\n'
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_is_taken_over_with_a_notice(corpus, tmp_path, caplog):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock = tmp_path / "w" / LOCK_NAME
    lock.parent.mkdir()
    lock.write_text(json.dumps({"pid": int(gone.stdout), "host": socket.gethostname()}))
    with caplog.at_level("WARNING", logger="lenex.training.train"):
        assert train(MODEL, TrainConfig(steps=1, batch_size=2), corpus, tmp_path / "m.pt", tmp_path / "w")
    assert any(f"took over {lock}" in r.getMessage() and "no longer runs" in r.getMessage() for r in caplog.records)
    assert not lock.exists()  # released at the end


def test_a_lock_from_another_host_is_stale_once_not_refreshed(tmp_path):
    from lenex.training.guards import STALE_AFTER_S, WorkdirInUse, WorkdirLock

    lock = tmp_path / LOCK_NAME
    lock.write_text(json.dumps({"pid": 1, "host": "node-elsewhere"}))
    with pytest.raises(WorkdirInUse, match="pid 1 on host node-elsewhere"):
        WorkdirLock(tmp_path).acquire()
    old = time.time() - STALE_AFTER_S - 60
    os.utime(lock, (old, old))
    WorkdirLock(tmp_path).acquire().release()
    assert not lock.exists()
