"""Empirical receptive field (receptive-field paper, Section 5.1)."""

import numpy as np
import pytest
import torch

from lenex.config import ModelConfig
from lenex.model import LanguageModel
from lenex.receptive_field.erf import (
    cumulative_from_end,
    empirical_receptive_field,
    input_gradient_norms,
    measure,
    normalized_gradient,
    theoretical_receptive_field,
)


def _model(**overrides) -> LanguageModel:
    torch.manual_seed(0)
    cfg = ModelConfig(**{"n_layer": 3, "d_model": 32, "n_head": 4, "d_ff": 64, "vocab_size": 61,
                         "position": "none", "train_length": 32, **overrides})
    return LanguageModel(cfg).eval()


def _batch(rows=3, length=60, seed=5):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 61, (rows, length), generator=generator), torch.randint(0, 61, (rows,), generator=generator)


def test_normalized_gradient_and_its_cumulative_sum_by_hand():
    s = normalized_gradient([1.0, 1.0, 2.0, 4.0])
    np.testing.assert_allclose(s, [0.125, 0.125, 0.25, 0.5])
    np.testing.assert_allclose(cumulative_from_end(s), [1.0, 0.875, 0.75, 0.5])
    with pytest.raises(ValueError, match="every gradient is zero"):
        normalized_gradient([0.0, 0.0])


def test_erf_counts_the_most_recent_tokens_passing_the_threshold():
    c = cumulative_from_end([0.125, 0.125, 0.25, 0.5])  # 1, 0.875, 0.75, 0.5
    assert empirical_receptive_field(c, threshold=0.99) == 4  # only c_1 = 1 passes: all 4 tokens
    assert empirical_receptive_field(c, threshold=0.8) == 3  # c_2 = 0.875: the last 3 tokens
    assert empirical_receptive_field(c, threshold=0.75) == 3  # strictly greater: 0.75 does not pass
    assert empirical_receptive_field(c, threshold=0.4) == 1


def test_cumulative_normalized_gradient_of_a_model_is_monotone_and_ends_at_one():
    result = measure(_model(position="alibi"), *_batch(), batch=2)
    c = np.asarray(result["c"])
    assert len(c) == 60 and c[0] == pytest.approx(1.0) and np.all(np.diff(c) <= 1e-12)
    assert np.all(c > 0) and np.isclose(sum(result["s"]), 1.0)
    assert 1 <= result["erf"] <= 60


@pytest.mark.parametrize("window", [2, 5, 9])
def test_windowed_attention_erf_never_exceeds_w_times_r(window):
    model = _model(mask="windowed", mask_options={"window": window})
    inputs, targets = _batch()
    norms = input_gradient_norms(model, inputs, targets).numpy()
    reach = model.config.n_layer * (window - 1)  # R layers each see w - 1 tokens back
    assert np.all(norms[:, : 60 - 1 - reach] == 0)  # exactly nothing flows from further back
    assert np.all(norms[:, 60 - 1 - reach:] > 0)
    result = measure(model, inputs, targets)
    trf = theoretical_receptive_field(model.config)
    assert trf == window * 3 and result["erf"] <= trf


def test_a_causal_model_sees_the_whole_segment():
    norms = input_gradient_norms(_model(position="alibi"), *_batch()).numpy()
    assert np.all(norms > 0) and theoretical_receptive_field(_model().config) is None


def test_rows_of_a_batch_get_their_own_gradients():
    model = _model(position="sandwich")
    inputs, targets = _batch(rows=3)
    together = input_gradient_norms(model, inputs, targets)
    for row in range(3):
        alone = input_gradient_norms(model, inputs[row:row + 1], targets[row:row + 1])
        torch.testing.assert_close(together[row:row + 1], alone, rtol=1e-4, atol=1e-7)
