"""Table 5's cache-window inference under the last-token protocol."""

import numpy as np
import torch

from lenex.scoring.cache_window import score_by_reencoding, score_with_cache
from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel
from lenex.receptive_field.cache_eval import cache_last_token_nll, check_against_sliding_mask, time_scoring
from lenex.receptive_field.last_token import last_token_nll


def _model(position, n_layer=2):
    torch.manual_seed(0)
    cfg = ModelConfig(n_layer=n_layer, d_model=32, n_head=4, d_ff=64, vocab_size=53, position=position, train_length=8)
    return LanguageModel(cfg).eval()


def _segments(rows=3, length=41):
    generator = torch.Generator().manual_seed(2)
    return torch.randint(0, 53, (rows, length), generator=generator), torch.randint(0, 53, (rows,), generator=generator)


def test_score_from_reads_every_token_but_scores_only_the_tail():
    model, (idx, _) = _model("alibi"), _segments()
    targets = torch.roll(idx, -1, 1)
    full = score_with_cache(model, idx, targets, window=6, chunk=4)
    tail = score_with_cache(model, idx, targets, window=6, chunk=4, score_from=30)
    assert torch.isnan(tail[:, :30]).all()
    torch.testing.assert_close(tail[:, 30:], full[:, 30:])


def test_cache_window_last_token_equals_the_sliding_mask_for_every_model():
    for position in ("alibi", "sandwich", "sinusoidal"):
        model, (inputs, targets) = _model(position), _segments()
        cached = cache_last_token_nll(model, inputs, targets, window=8, chunk=5, batch_tokens=64)
        dense = last_token_nll(model, inputs, targets, build_mask("sliding", {"window": 8}))
        np.testing.assert_allclose(cached, dense, rtol=1e-5, atol=1e-6)
        assert check_against_sliding_mask(model, inputs, targets, window=8, chunk=5) < 1e-5


def test_one_layer_relative_cache_window_equals_reencoding_the_last_w_tokens():
    for position in ("alibi", "sandwich"):
        model, (inputs, targets) = _model(position, n_layer=1), _segments()
        cached = cache_last_token_nll(model, inputs, targets, window=8, chunk=3, batch_tokens=64)
        reencoded = last_token_nll(model, inputs[:, -8:], targets)  # the last w̄ tokens, positions from 0
        np.testing.assert_allclose(cached, reencoded, rtol=1e-5, atol=1e-6)


def test_two_layers_reach_further_back_than_reencoding():
    model, (inputs, targets) = _model("alibi", n_layer=2), _segments()
    cached = cache_last_token_nll(model, inputs, targets, window=8, chunk=3, batch_tokens=64)
    assert not np.allclose(cached, last_token_nll(model, inputs[:, -8:], targets), atol=1e-5)


def test_generation_timing_scores_the_same_tokens_both_ways():
    model = _model("alibi", n_layer=1)
    timing = time_scoring(model, torch.arange(30) % 53, window=8, scored=21, chunk=4)
    assert timing["cache_seconds"] > 0 and timing["reencode_seconds"] > 0
    assert abs(timing["timed_mean_nll_cache"] - timing["timed_mean_nll_reencode"]) < 1e-5
    reencoded = score_by_reencoding(model, (torch.arange(30) % 53)[None, :-1], (torch.arange(30) % 53)[None, 1:], 8)
    assert abs(float(reencoded[0, 8:].mean()) - timing["timed_mean_nll_reencode"]) < 1e-6
