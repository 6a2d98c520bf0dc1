"""The language model, its config and its self-describing checkpoints."""

import pytest
import torch
import torch.nn.functional as F

from lenex.checkpoint import load_model, save_checkpoint
from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel

SMALL = dict(n_layer=2, d_model=32, n_head=4, d_ff=64, vocab_size=101, train_length=16)


@pytest.mark.parametrize("position", ["learned", "sinusoidal", "none", "rope", "xpos", "alibi", "sandwich",
                                      "smoothed_sandwich", "kerple", "t5"])
def test_every_scheme_trains_one_step(position):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position=position))
    idx = torch.randint(0, 101, (2, 16))
    logits, loss = model(idx, idx)
    assert logits.shape == (2, 16, 101) and torch.isfinite(loss)
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
