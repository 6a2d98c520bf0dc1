"""The trainer's CUDA pace (lenex.training.speed): compile choice and fall-back, sync points, the
device-side step statistics, and the deferred path (run here on the CPU by forcing it) giving
the same logged losses as the reference path and stopping on a non-finite step."""

import json

import pytest
import torch
from corpus_fixture import make_corpus

import lenex.training.train as train_module
from lenex.config import ModelConfig
from lenex.training.distributed import Context
from lenex.training.train import TrainConfig, train
from lenex.training.checks import TrainingDiverged
from lenex.training.speed import CompiledForward, StepStats, compile_choice, is_fused, skip_on_device, sync_point

MODEL = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position="rope", dropout=0.0)
TRAIN = TrainConfig(steps=6, batch_size=4, micro_batch_size=2, lr=1e-3, warmup=2, log_every=2, checkpoint_every=3)


def test_compile_choice_by_device_and_environment():
    assert compile_choice(torch.device("cuda"), {}) == (True, "cuda default")
    assert compile_choice(torch.device("cpu"), {})[0] is False
    assert compile_choice(torch.device("cuda"), {"LENEX_COMPILE": "0"}) == (False, "LENEX_COMPILE=0")
    assert compile_choice(torch.device("cpu"), {"LENEX_COMPILE": "1"}) == (True, "LENEX_COMPILE=1")
    with pytest.raises(ValueError, match="LENEX_COMPILE='yes'"):
        compile_choice(torch.device("cpu"), {"LENEX_COMPILE": "yes"})


def test_a_compiler_that_fails_at_once_is_named():
    def refuses(module):
        raise RuntimeError("no C compiler")

    forward = CompiledForward(torch.nn.Linear(3, 2), torch.device("cpu"), {"LENEX_COMPILE": "1"}, compiler=refuses)
    assert forward.record == {"compiled": False, "why": "torch.compile failed: RuntimeError: no C compiler"}


def test_compile_failure_at_first_call_falls_back_to_eager_and_says_why():
    class DynamoFailure(RuntimeError):
        __module__ = "torch._dynamo.exc"

    def broken(*args, **kwargs):
        raise DynamoFailure("backend exploded")

    model = torch.nn.Linear(3, 2)
    forward = CompiledForward(model, torch.device("cpu"), {"LENEX_COMPILE": "1"}, compiler=lambda m: broken)
    assert forward.record == {"compiled": True, "why": "LENEX_COMPILE=1"}
    x = torch.ones(1, 3)
    assert torch.equal(forward(x), model(x))  # the eager model answered
    assert forward.record["compiled"] is False and "DynamoFailure: backend exploded" in forward.record["why"]


def test_a_model_that_asks_to_run_eagerly_is_not_compiled_unless_forced():
    model = torch.nn.Linear(3, 2)
    model.eager_reason = "runs eagerly: patched per call"
    cuda = torch.device("cuda")  # a device object only: nothing runs on it
    never = lambda m: pytest.fail("compiled")  # noqa: E731
    assert CompiledForward(model, cuda, {}, compiler=never).record == {"compiled": False,
                                                                      "why": "runs eagerly: patched per call"}
    assert CompiledForward(model, cuda, {"LENEX_COMPILE": "1"}, compiler=lambda m: m).record["compiled"] is True


def test_a_model_error_is_not_taken_for_a_compile_failure():
    def wrong(x):
        raise ValueError("bad input shape")

    forward = CompiledForward(torch.nn.Linear(3, 2), torch.device("cpu"), {"LENEX_COMPILE": "1"},
                              compiler=lambda m: wrong)
    with pytest.raises(ValueError, match="bad input shape"):
        forward(torch.ones(1, 3))


def test_sync_points_every_step_unless_deferred():
    assert all(sync_point(s, 100, 10, 50, 0, None, deferred=False) for s in range(1, 101))
    synced = [s for s in range(1, 101) if sync_point(s, 100, 10, 25, 0, 33, deferred=True)]
    assert synced == [10, 20, 25, 30, 33, 40, 50, 60, 70, 75, 80, 90, 100]


def test_step_stats_sum_in_float64_and_keep_the_first_bad_step():
    stats = StepStats(torch.device("cpu"))
    stats.start_step()
    stats.add(torch.tensor(0.25))
    stats.add(torch.tensor(0.5))
    stats.reduce(Context(), stop_requested=True)  # one process: nothing to reduce
    assert stats.mark_non_finite(3, torch.tensor(1.0)).item() == 0.0
    stats.start_step()
    stats.add(torch.tensor(float("nan")))
    assert stats.mark_non_finite(4, torch.tensor(2.0)).item() == 1.0
    stats.start_step()
    stats.add(torch.tensor(1.0))
    stats.mark_non_finite(5, torch.tensor(float("inf")))
    seen = stats.read()
    assert seen["bad_step"] == 4 and seen["bad_grad_norm"] == 2.0 and seen["loss"] == 1.0
    assert stats.loss.dtype == torch.float64


def test_fused_adamw_skips_a_flagged_step():
    param = torch.nn.Parameter(torch.ones(3))
    optimizer = torch.optim.AdamW([param], lr=0.1, fused=True)
    assert is_fused(optimizer)
    param.grad = torch.ones(3)
    skip_on_device(optimizer, torch.tensor(1.0))
    optimizer.step()
    assert torch.equal(param.detach(), torch.ones(3)) and optimizer.state[param]["step"].item() == 0
    skip_on_device(optimizer, torch.tensor(0.0))
    optimizer.step()
    assert param.detach()[0].item() < 1.0
    with pytest.raises(ValueError, match="needs a fused optimizer"):
        skip_on_device(torch.optim.AdamW([param], fused=False), torch.tensor(0.0))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("corpus"))


def _records(workdir):
    return [json.loads(line) for line in (workdir / "metrics.jsonl").read_text().splitlines()]


def test_deferred_sync_logs_the_reference_losses(corpus, tmp_path, monkeypatch):
    torch.set_num_threads(1)
    reference = train(MODEL, TRAIN, corpus, tmp_path / "a.pt", tmp_path / "a", device="cpu")
    assert reference["compile"]["compiled"] is False
    monkeypatch.setattr(train_module, "defers_sync", lambda device: True)
    deferred = train(MODEL, TRAIN, corpus, tmp_path / "b.pt", tmp_path / "b", device="cpu")
    assert [r["loss"] for r in _records(tmp_path / "b")] == [r["loss"] for r in _records(tmp_path / "a")]
    assert deferred["final_loss"] == reference["final_loss"]


def test_deferred_sync_stops_on_a_non_finite_step(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(train_module, "defers_sync", lambda device: True)
    real_add = StepStats.add
    calls = []

    def poisoned(self, loss):  # the third step's loss is NaN
        calls.append(1)
        real_add(self, loss * float("nan") if len(calls) in (5, 6) else loss)

    monkeypatch.setattr(StepStats, "add", poisoned)
    with pytest.raises(TrainingDiverged, match="diverged at step 3: loss = nan.*stopped at step 3"):
        train(MODEL, TRAIN, corpus, tmp_path / "c.pt", tmp_path / "c", device="cpu")
