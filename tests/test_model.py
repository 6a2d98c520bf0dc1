"""The language model, its config and its self-describing checkpoints."""

import pytest
import torch
import torch.nn.functional as F

from lenex.records.checkpoint import load_model, save_checkpoint
from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel
from lenex.model.fused_loss import LogitsWorkspace, TiedGradient, linear_cross_entropy, tied_lookup

SMALL = dict(n_layer=2, d_model=32, n_head=4, d_ff=64, vocab_size=101, train_length=16)


@pytest.mark.parametrize("position", ["learned", "sinusoidal", "none", "rope", "xpos", "alibi", "sandwich",
                                      "smoothed_sandwich", "kerple", "t5"])
def test_every_scheme_trains_one_step(position):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position=position))
    idx = torch.randint(0, 101, (2, 16))
    logits, loss = model(idx, idx)
    assert logits is None and torch.isfinite(loss)  # CPU training takes the fused loss path
    assert model(idx)[0].shape == (2, 16, 101)
    loss.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_token_nll_matches_cross_entropy_of_the_logits():
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="xpos")).eval()
    idx, targets = torch.randint(0, 101, (2, 16)), torch.randint(0, 101, (2, 16))
    logits, _ = model(idx)
    expected = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    torch.testing.assert_close(model.token_nll(idx, targets, vocab_chunk=5), expected)


def test_explicit_contiguous_positions_equal_the_default():
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="alibi")).eval()
    idx = torch.randint(0, 101, (1, 12))
    torch.testing.assert_close(model(idx)[0], model(idx, positions=torch.arange(12))[0])


def test_blockwise_mask_is_identical_to_causal_up_to_the_training_length():
    # BCA with blocks of L_tr/2 lets every query of an L_tr-long input see all earlier tokens.
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="xpos")).eval()
    idx = torch.randint(0, 101, (1, 16))
    blockwise = build_mask("blockwise", {"block": 8})
    torch.testing.assert_close(model(idx)[0], model(idx, mask=blockwise)[0])


def test_learned_positions_refuse_lengths_beyond_the_table():
    model = LanguageModel(ModelConfig(**SMALL, position="learned"))
    with pytest.raises(ValueError, match="20|16"):
        model(torch.randint(0, 101, (1, 20)))


def test_unknown_config_key_and_scheme_are_named():
    with pytest.raises(ValueError, match="'heads'"):
        ModelConfig.from_dict({**SMALL, "heads": 3})
    with pytest.raises(ValueError, match="'rotary'"):
        LanguageModel(ModelConfig(**SMALL, position="rotary"))
    with pytest.raises(ValueError, match="'banded'"):
        LanguageModel(ModelConfig(**SMALL, mask="banded"))


def test_checkpoint_rebuilds_the_model_from_the_file_alone(tmp_path):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="t5")).eval()
    save_checkpoint(tmp_path / "m.pt", model, step=7)
    loaded, payload = load_model(tmp_path / "m.pt")
    idx = torch.randint(0, 101, (1, 16))
    assert payload["step"] == 7 and loaded.config == model.config
    torch.testing.assert_close(loaded(idx)[0], model(idx)[0])


def test_corrupt_checkpoint_gets_one_clear_error(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="bad.pt"):
        load_model(bad)
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        load_model(tmp_path / "missing.pt")


def test_paper_preset_has_the_expected_parameter_count():
    # 24 layers x (4 d^2 + 2 d d_ff weights + biases + 2 LayerNorms) + tied 50257 x d embedding + final LN.
    d, ff, layers, vocab = 1024, 4096, 24, 50257
    per_layer = (3 * d * d + 3 * d) + (d * d + d) + (d * ff + ff) + (ff * d + d) + 2 * 2 * d
    expected = layers * per_layer + vocab * d + 2 * d
    with torch.device("meta"):
        model = LanguageModel(ModelConfig(n_layer=24, d_model=1024, n_head=16, d_ff=4096, train_length=1024, position="xpos"))
    assert model.num_parameters() == expected
    assert 350e6 < expected < 360e6  # "350M-parameter models"


@pytest.mark.parametrize("chunk", [3, 7, 64])
def test_fused_linear_cross_entropy_matches_the_dense_loss_and_gradients(chunk):
    torch.manual_seed(0)
    hidden = torch.randn(10, 8, requires_grad=True)
    weight = torch.randn(23, 8, requires_grad=True)
    targets = torch.randint(0, 23, (10,))
    loss_mask = torch.tensor([1, 1, 0, 1, 0, 1, 1, 1, 1, 0])
    for mask in (None, loss_mask):
        losses = F.cross_entropy(hidden @ weight.T, targets, reduction="none")
        dense = losses.mean() if mask is None else (losses * mask).sum() / mask.sum()
        dense_grads = torch.autograd.grad(dense * 3.0, (hidden, weight))
        fused = linear_cross_entropy(hidden, weight, targets, mask, chunk=chunk)
        fused_grads = torch.autograd.grad(fused * 3.0, (hidden, weight))  # a non-unit upstream gradient
        torch.testing.assert_close(fused, dense)
        for got, expected in zip(fused_grads, dense_grads):
            torch.testing.assert_close(got, expected)


def test_fused_loss_reuses_its_workspace_across_sizes_and_refuses_a_second_backward():
    torch.manual_seed(0)
    weight = torch.randn(23, 8, requires_grad=True)
    workspace = LogitsWorkspace()
    for rows in (10, 4, 10):  # grows, then reuses a larger buffer for fewer rows, then the same again
        hidden = torch.randn(rows, 8, requires_grad=True)
        targets = torch.randint(0, 23, (rows,))
        fused = linear_cross_entropy(hidden, weight, targets, chunk=6, workspace=workspace)
        torch.testing.assert_close(fused, F.cross_entropy(hidden @ weight.T, targets))
    assert workspace.tensor.numel() == 23 * 6  # the largest chunk, allocated once
    fused.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="one backward pass per forward"):
        fused.backward()


def test_tied_lookup_gives_the_embedding_gradient_plus_what_the_loss_left():
    torch.manual_seed(0)
    weight = torch.randn(23, 8, requires_grad=True)
    idx = torch.tensor([[1, 5, 5], [0, 22, 1]])
    upstream = torch.randn(2, 3, 8)
    (expected,) = torch.autograd.grad((F.embedding(idx, weight) * upstream).sum(), weight)
    (alone,) = torch.autograd.grad((tied_lookup(idx, weight, TiedGradient()) * upstream).sum(), weight)
    torch.testing.assert_close(alone, expected)  # nothing in the slot: a dense gradient from zeros
    # Through the fused loss: one complete gradient, equal to the untied sum of the two paths.
    targets = torch.tensor([3, 4, 5, 6, 7, 8])
    slot = TiedGradient()
    loss = linear_cross_entropy(tied_lookup(idx, weight, slot).flatten(0, 1) * 2, weight, targets, tied=slot)
    (tied,) = torch.autograd.grad(loss, weight)
    (untied,) = torch.autograd.grad(F.cross_entropy(F.embedding(idx, weight).flatten(0, 1) * 2 @ weight.T, targets), weight)
    torch.testing.assert_close(tied, untied)
    assert slot.grad is None  # handed over, not kept


def test_fused_training_loss_equals_the_loss_of_the_logits():
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="rope"))
    idx, targets = torch.randint(0, 101, (2, 16)), torch.randint(0, 101, (2, 16))
    loss_mask = (torch.arange(16) % 3 > 0).expand(2, 16)
    for mask in (None, loss_mask):
        _, fused = model(idx, targets, loss_mask=mask)
        fused_grads = torch.autograd.grad(fused, list(model.parameters()))
        losses = F.cross_entropy(model(idx)[0].transpose(1, 2), targets, reduction="none")
        dense = losses.mean() if mask is None else (losses * mask).sum() / mask.sum()
        dense_grads = torch.autograd.grad(dense, list(model.parameters()))
        torch.testing.assert_close(fused, dense)
        for got, expected in zip(fused_grads, dense_grads):
            torch.testing.assert_close(got, expected)
    with torch.no_grad():  # evaluation keeps returning the logits
        logits, loss = model(idx, targets)
    torch.testing.assert_close(loss, F.cross_entropy(logits.transpose(1, 2), targets))


@pytest.mark.parametrize("position", ["learned", "rope", "xpos", "alibi", "sandwich", "kerple", "t5"])
@pytest.mark.parametrize("mask", ["causal", "sliding"])
def test_cached_position_tables_and_plans_change_no_number(position, mask):
    # Default positions are a marked run (cached tables, cached plan); explicit ones are computed afresh.
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position=position))
    attention = build_mask(mask, {"window": 4} if mask == "sliding" else {})
    idx = torch.randint(0, 101, (2, 16))
    runs = []
    for positions in (None, None, torch.arange(16)):  # fill the cache, read it, bypass it
        model.zero_grad()
        logits, _ = model(idx, positions=positions, mask=attention)
        F.cross_entropy(logits.flatten(0, 1), idx.flatten()).backward()
        runs.append((logits, [p.grad.clone() for p in model.parameters()]))
    # Banded plans are sliced into spans; with a learned bias (KERPLE, T5) nothing there is cached.
    assert len(model.position.tables) > 0 or (mask == "sliding" and model.position.learned_bias)
    for logits, grads in runs[:2]:
        torch.testing.assert_close(logits, runs[2][0], rtol=0, atol=0)
        for grad, expected in zip(grads, runs[2][1], strict=True):
            torch.testing.assert_close(grad, expected, rtol=0, atol=0)


def test_tables_built_in_inference_mode_do_not_reach_training():
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position="xpos"))
    idx = torch.randint(0, 101, (1, 16))
    with torch.inference_mode():
        model(idx)
    model(idx, idx)[1].backward()  # x * cos saves cos for backward: an inference tensor there would fail
