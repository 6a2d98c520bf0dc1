"""Cache-window scoring against the dense sliding-window model and against re-encoding."""

import pytest
import torch

from lenex.scoring.cache_window import score_by_reencoding, score_with_cache
from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel

ALL_SCHEMES = ["learned", "sinusoidal", "none", "rope", "xpos", "alibi", "sandwich", "smoothed_sandwich", "kerple", "t5"]
RELATIVE_SCHEMES = ["none", "rope", "xpos", "alibi", "sandwich", "smoothed_sandwich", "kerple", "t5"]


def _model(position: str, n_layer: int = 2, train_length: int = 32) -> LanguageModel:
    torch.manual_seed(0)
    cfg = ModelConfig(n_layer=n_layer, d_model=32, n_head=4, d_ff=64, vocab_size=53, position=position,
                      train_length=train_length)
    return LanguageModel(cfg).eval()


def _tokens(length: int = 20):
    generator = torch.Generator().manual_seed(1)
    return torch.randint(0, 53, (2, length), generator=generator), torch.randint(0, 53, (2, length), generator=generator)


@pytest.mark.parametrize("position", ALL_SCHEMES)
@pytest.mark.parametrize("chunk", [1, 3])
def test_cache_window_equals_the_sliding_mask_over_the_whole_sequence(position, chunk):
    model, (idx, targets) = _model(position), _tokens()
    expected = model.token_nll(idx, targets, mask=build_mask("sliding", {"window": 5}))
    torch.testing.assert_close(score_with_cache(model, idx, targets, window=5, chunk=chunk), expected)


@pytest.mark.parametrize("position", ["rope", "xpos", "alibi", "learned"])
def test_cache_window_keeps_explicit_positions_with_gaps(position):
    model, (idx, targets) = _model(position), _tokens()
    positions = torch.tensor([0, 1, 2, 5, 6, 7, 8, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 28, 31])
    expected = model.token_nll(idx, targets, positions=positions, mask=build_mask("sliding", {"window": 4}))
    torch.testing.assert_close(score_with_cache(model, idx, targets, window=4, positions=positions, chunk=2), expected)


@pytest.mark.parametrize("position", RELATIVE_SCHEMES)
@pytest.mark.parametrize("chunk", [1, 4, 9])  # 9 > window: a chunk's last queries no longer see its first tokens
def test_one_layer_relative_scheme_cache_equals_reencoding(position, chunk):
    model, (idx, targets) = _model(position, n_layer=1), _tokens()
    reencoded = score_by_reencoding(model, idx, targets, window=6, batch_windows=5)
    torch.testing.assert_close(score_with_cache(model, idx, targets, window=6, chunk=chunk), reencoded)


@pytest.mark.parametrize("position", ["xpos", "alibi"])
def test_chunked_cache_window_is_the_token_by_token_one(position):
    model, (idx, targets) = _model(position), _tokens(40)
    one_by_one = score_with_cache(model, idx, targets, window=7)
    for chunk in (5, 16):
        torch.testing.assert_close(score_with_cache(model, idx, targets, window=7, chunk=chunk), one_by_one)


def test_reencoding_scores_each_token_from_its_own_window():
    model, (idx, targets) = _model("alibi"), _tokens()
    nll = score_by_reencoding(model, idx, targets, window=6)
    t = 13  # token 13 is read with tokens 8..13 only
    alone = model.token_nll(idx[:, t - 5 : t + 1], targets[:, t - 5 : t + 1])[:, -1]
    torch.testing.assert_close(nll[:, t], alone)
    torch.testing.assert_close(nll[:, :6], model.token_nll(idx[:, :6], targets[:, :6]))


@pytest.mark.parametrize("position,n_layer", [("alibi", 2), ("learned", 1)])
def test_cache_differs_from_reencoding_where_the_math_says_so(position, n_layer):
    # Two layers: cached keys saw context beyond the window. Learned positions: renumbering matters.
    model, (idx, targets) = _model(position, n_layer=n_layer), _tokens()
    cached = score_with_cache(model, idx, targets, window=6)
    reencoded = score_by_reencoding(model, idx, targets, window=6)
    torch.testing.assert_close(cached[:, :6], reencoded[:, :6])  # inside the first window both see the prefix
    assert (cached[:, 6:] - reencoded[:, 6:]).abs().max() > 1e-4


def test_bad_window_and_shapes_are_named():
    model, (idx, targets) = _model("alibi"), _tokens()
    with pytest.raises(ValueError, match="cache window"):
        score_with_cache(model, idx, targets, window=0)
    with pytest.raises(ValueError, match="chunk"):
        score_with_cache(model, idx, targets, window=4, chunk=0)
    with pytest.raises(ValueError, match="targets"):
        score_by_reencoding(model, idx, targets[:, :5], window=4)
