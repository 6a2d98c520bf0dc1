"""Training: schedule, determinism and exact resume."""

import json

import pytest
import torch
from corpus_fixture import make_corpus

from lenex.records.checkpoint import read_checkpoint
from lenex.config import ModelConfig
from lenex.training.train import TrainConfig, learning_rate, train

MODEL = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="xpos", dropout=0.1)
TRAIN = TrainConfig(steps=12, batch_size=4, micro_batch_size=2, lr=1e-3, warmup=3, log_every=1, checkpoint_every=5)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


def test_schedule_by_hand():
    rates = [learning_rate(s, lr=1.0, warmup=4, total=12) for s in (0, 3, 4, 8, 12, 20)]
    # warmup 1/4 .. 4/4, then linear (power 1) decay over the 8 remaining steps to 0.
    assert rates == pytest.approx([0.25, 1.0, 1.0, 0.5, 0.0, 0.0])
    assert learning_rate(8, lr=1.0, warmup=4, total=12, end_lr=0.1, power=2.0) == pytest.approx(0.9 * 0.25 + 0.1)


def test_same_seed_same_final_loss_bit_for_bit(corpus, tmp_path):
    torch.set_num_threads(1)
    a = train(MODEL, TRAIN, corpus, tmp_path / "a.pt", tmp_path / "wa")
    b = train(MODEL, TRAIN, corpus, tmp_path / "b.pt", tmp_path / "wb")
    assert a["final_loss"] == b["final_loss"]
    assert a["step"] == 12 and a["tokens_seen"] == 12 * 4 * 32
    # The attention kernel is recorded beside the device, in the summary and the checkpoint (auto: CPU's reference).
    assert a["attention_kernel"] == read_checkpoint(tmp_path / "a.pt")["attention_kernel"] == "reference"


def test_resume_after_interruption_gives_the_same_final_loss(corpus, tmp_path):
    torch.set_num_threads(1)
    whole = train(MODEL, TRAIN, corpus, tmp_path / "whole.pt", tmp_path / "w1")
    # Stop after 7 steps: the last checkpoint is at step 5, so 2 steps are redone on resume.
    assert train(MODEL, TRAIN, corpus, tmp_path / "part.pt", tmp_path / "w2", stop_after=7) is None
    assert not (tmp_path / "part.pt").exists()
    resumed = train(MODEL, TRAIN, corpus, tmp_path / "part.pt", tmp_path / "w2")
    assert resumed["final_loss"] == whole["final_loss"]
    a, b = read_checkpoint(tmp_path / "whole.pt")["model"], read_checkpoint(tmp_path / "part.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    steps = [json.loads(line)["step"] for line in (tmp_path / "w2" / "metrics.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 13))  # no duplicated records from the redone steps


def test_loss_decreases_on_real_tokens(corpus, tmp_path):
    cfg = TrainConfig(steps=40, batch_size=8, lr=3e-3, warmup=5, log_every=1, checkpoint_every=100)
    train(MODEL, cfg, corpus, tmp_path / "m.pt", tmp_path / "w")
    losses = [json.loads(line)["loss"] for line in (tmp_path / "w" / "metrics.jsonl").read_text().splitlines()]
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5 - 1.0


def test_unknown_train_key_is_named():
    with pytest.raises(ValueError, match="'learning_rate'"):
        TrainConfig.from_dict({"learning_rate": 1e-3})


def test_missing_corpus_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="meta.json"):
        train(MODEL, TRAIN, tmp_path / "nowhere", tmp_path / "m.pt", tmp_path / "w")
