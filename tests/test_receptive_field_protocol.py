"""The receptive-field paper's last-token protocol (Section 3.4, Figure 3)."""

import numpy as np
import pytest
import torch

from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel
from lenex.receptive_field.last_token import evaluate, last_token_nll, last_token_segments, segment_ends


def _model(**overrides) -> LanguageModel:
    torch.manual_seed(0)
    cfg = ModelConfig(**{"n_layer": 2, "d_model": 32, "n_head": 4, "d_ff": 64, "vocab_size": 61,
                         "position": "alibi", "train_length": 16, **overrides})
    return LanguageModel(cfg).eval()


def test_segment_ends_are_evenly_spread_distinct_and_leave_room_for_the_longest_segment():
    ends = segment_ends(n_tokens=100, span=20, count=9)
    assert ends.tolist() == [19, 28, 37, 46, 55, 64, 73, 82, 91]  # 19 + floor(i * 81 / 9)
    assert segment_ends(100, 20, 81).tolist() == list(range(19, 100))  # every possible end, once
    with pytest.raises(ValueError, match="room for 81 segments of 20 tokens"):
        segment_ends(100, 20, 82)


def test_every_length_scores_the_same_last_tokens_after_ever_fewer_tokens():
    tokens = np.arange(1000, 1300)
    ends = segment_ends(len(tokens), span=64, count=5)
    longest, expected = last_token_segments(tokens, ends, 64)
    for length in (2, 8, 16, 32, 64):
        inputs, targets = last_token_segments(tokens, ends, length)
        assert inputs.shape == (5, length - 1)
        assert torch.equal(targets, expected)  # the same N tokens at every L_ex
        assert torch.equal(inputs, longest[:, 64 - length:])  # the L_ex - 1 tokens just before them
        assert torch.equal(inputs[:, -1] + 1, targets)  # contiguous text: the next token is scored
    with pytest.raises(ValueError, match="fewer than 64 tokens before it"):
        last_token_segments(tokens, [10], 65)


def test_last_token_nll_is_the_full_forward_pass_loss_of_the_last_position():
    model = _model()
    generator = torch.Generator().manual_seed(3)
    inputs, targets = torch.randint(0, 61, (5, 23), generator=generator), torch.randint(0, 61, (5,), generator=generator)
    full = model.token_nll(inputs, torch.cat([inputs[:, 1:], targets[:, None]], 1))[:, -1]
    np.testing.assert_allclose(last_token_nll(model, inputs, targets, batch_tokens=40), full.double().numpy(), rtol=1e-5)


def test_windowed_model_is_scored_with_its_own_window():
    model = _model(position="none", mask="windowed", mask_options={"window": 3})
    generator = torch.Generator().manual_seed(4)
    inputs, targets = torch.randint(0, 61, (2, 30), generator=generator), torch.randint(0, 61, (2,), generator=generator)
    windowed = last_token_nll(model, inputs, targets)  # mask=None: the model's training mask
    np.testing.assert_allclose(windowed, last_token_nll(model, inputs, targets, build_mask("windowed", {"window": 3})))
    assert not np.allclose(windowed, last_token_nll(model, inputs, targets, build_mask("causal")))


def test_evaluate_records_one_length_each_over_the_same_tokens():
    model = _model()
    tokens = np.random.default_rng(0).integers(0, 61, 400)
    records = evaluate(model, tokens, [16, 32, 64], span=128, segments=6, batch_tokens=256)
    assert [r["length"] for r in records] == [16, 32, 64]
    assert len({r["scored_tokens_sha256"] for r in records}) == 1
    assert all(r["tokens"] == 6 and len(r["segment_nll"]) == 6 for r in records)
    assert records[0]["ppl"] == pytest.approx(np.exp(np.mean(records[0]["segment_nll"])), rel=1e-5)
