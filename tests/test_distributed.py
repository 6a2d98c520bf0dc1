"""Data-parallel training: torchrun with 2 CPU processes (gloo) against one process."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
import torch
from corpus_fixture import make_corpus

from lenex.records.checkpoint import read_checkpoint
from lenex.config import ModelConfig
from lenex.training.distributed import Context, local_batch, mean_over_ranks, rank_slice
from lenex.training.train import TrainConfig, train

MODEL = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="xpos", dropout=0.0)
# Global batch 4: one process accumulates 2 micro-batches of 2, two processes take 2 each.
TRAIN = TrainConfig(steps=8, batch_size=4, micro_batch_size=2, lr=1e-3, warmup=2, log_every=1, checkpoint_every=3)


def test_local_batch_keeps_the_global_batch():
    assert local_batch(512, 16, 8) == (32, 8)  # paper preset on 16 GPUs: 4 micro-batches each
    assert local_batch(512, 64, 8) == (8, 8)
    assert local_batch(8, 2, 0) == (4, 4)  # no accumulation asked: one forward per rank
    assert local_batch(8, 4, 4) == (2, 2)  # micro-batch larger than a rank's share: the share
    with pytest.raises(ValueError, match="not divisible by the 3 training processes"):
        local_batch(8, 3, 0)


def test_local_batch_error_names_the_micro_batch():
    with pytest.raises(ValueError, match="6 sequences per process, not divisible by micro_batch_size 4"):
        local_batch(12, 2, 4)


def test_rank_slices_tile_the_batch():
    slices = [rank_slice(12, 3, r) for r in range(3)]
    assert [(s.start, s.stop) for s in slices] == [(0, 4), (4, 8), (8, 12)]


def test_single_process_mean_is_the_value():
    assert mean_over_ranks(Context(), 2.5) == 2.5


def _torchrun(nproc, corpus, out, workdir, cfg, stop_after=None, model=MODEL):
    args = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
            "-m", "lenex.training.train", "--model-config", json.dumps(model.to_dict()),
            "--train-config", json.dumps(dataclasses.asdict(cfg)), "--data", str(corpus), "--out", str(out),
            "--workdir", str(workdir), "--device", "cpu", "--threads", "1"]
    if stop_after is not None:
        args += ["--stop-after", str(stop_after)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _losses(workdir):
    return [json.loads(line)["loss"] for line in (workdir / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.mark.slow
def test_two_processes_follow_the_single_process_loss_curve(corpus, tmp_path):
    torch.set_num_threads(1)
    one = train(MODEL, TRAIN, corpus, tmp_path / "one.pt", tmp_path / "w1", device="cpu")
    _torchrun(2, corpus, tmp_path / "two.pt", tmp_path / "w2", TRAIN)
    single, double = _losses(tmp_path / "w1"), _losses(tmp_path / "w2")
    assert len(single) == len(double) == TRAIN.steps  # rank 0 alone wrote the metrics: no duplicates
    assert double == pytest.approx(single, rel=1e-5, abs=1e-6)
    assert single[-1] < single[0]  # it trained: the curves compared are not flat
    two = read_checkpoint(tmp_path / "two.pt")
    assert two["world_size"] == 2 and two["tokens_seen"] == one["tokens_seen"]
    ref = read_checkpoint(tmp_path / "one.pt")["model"]
    assert all(torch.allclose(ref[k], two["model"][k], rtol=1e-4, atol=1e-6) for k in ref)


@pytest.mark.slow
def test_two_processes_resume_exactly_with_dropout(corpus, tmp_path):
    model = dataclasses.replace(MODEL, dropout=0.1)  # each rank's dropout stream must be restored
    _torchrun(2, corpus, tmp_path / "whole.pt", tmp_path / "w1", TRAIN, model=model)
    # Stop after 5 steps: the last checkpoint is at step 3, so steps 4-5 are redone on resume.
    _torchrun(2, corpus, tmp_path / "part.pt", tmp_path / "w2", TRAIN, stop_after=5, model=model)
    assert not (tmp_path / "part.pt").exists()
    state = torch.load(tmp_path / "w2" / "last.pt", weights_only=False)
    assert state["step"] == 3 and len(state["rng_by_rank"]) == 2
    assert not torch.equal(state["rng_by_rank"][0]["cpu"], state["rng_by_rank"][1]["cpu"])
    _torchrun(2, corpus, tmp_path / "part.pt", tmp_path / "w2", TRAIN, model=model)
    assert _losses(tmp_path / "w2") == _losses(tmp_path / "w1")  # bit for bit, one record per step
    a, b = read_checkpoint(tmp_path / "whole.pt")["model"], read_checkpoint(tmp_path / "part.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resume_with_another_world_size_continues_from_the_checkpoint(corpus, tmp_path):
    """A checkpoint from one process resumes under a different world size (here: a forged
    world size of 2 in the file, read by one process): weights and step carry over."""
    torch.set_num_threads(1)
    whole = train(MODEL, TRAIN, corpus, tmp_path / "whole.pt", tmp_path / "w1", device="cpu")
    assert train(MODEL, TRAIN, corpus, tmp_path / "part.pt", tmp_path / "w2", stop_after=4, device="cpu") is None
    last = tmp_path / "w2" / "last.pt"
    state = torch.load(last, weights_only=False)
    state["rng_by_rank"] = state["rng_by_rank"] * 2
    torch.save(state, last)
    resumed = train(MODEL, TRAIN, corpus, tmp_path / "part.pt", tmp_path / "w2", device="cpu")
    # dropout is 0, so reseeding the dropout stream changes nothing: the result is exact
    assert resumed["final_loss"] == whole["final_loss"]


def _child_with_rank(parent: int, rank: int) -> int | None:
    """The pid of torchrun's worker `parent` started with RANK=rank (read from /proc)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = int(open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()[1])
            environ = open(f"/proc/{entry}/environ", "rb").read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and f"RANK={rank}".encode() in environ:
            return int(entry)
    return None


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds torchrun's workers through /proc")
def test_sigterm_on_one_rank_stops_every_rank_at_the_same_step(corpus, tmp_path):
    """The flag travels in the loss all-reduce (lenex.training.speed.StepStats): SIGTERM to rank 1
    alone stops both ranks after the same step, with its state saved, and no collective hangs."""
    import signal
    import time

    cfg = dataclasses.replace(TRAIN, steps=100_000, checkpoint_every=100_000)
    workdir = tmp_path / "w"
    args = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
            "-m", "lenex.training.train", "--model-config", json.dumps(MODEL.to_dict()),
            "--train-config", json.dumps(dataclasses.asdict(cfg)), "--data", str(corpus), "--out",
            str(tmp_path / "m.pt"), "--workdir", str(workdir), "--device", "cpu", "--threads", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    metrics = workdir / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not metrics.exists() or len(metrics.read_text().splitlines()) < 3):
        time.sleep(0.2)
    rank1 = _child_with_rank(proc.pid, 1)
    assert rank1 is not None and proc.poll() is None, "torchrun's rank 1 not found running"
    os.kill(rank1, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)  # a rank left waiting in a collective would hang here
    state = torch.load(workdir / "last.pt", weights_only=False)
    steps_logged = len(metrics.read_text().splitlines())
    assert state["step"] == steps_logged, (state["step"], steps_logged)  # saved after the last step done
    assert "stopped by SIGTERM: state at step" in err
