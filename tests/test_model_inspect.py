"""The model's look-inside API (`LanguageModel.inspect`, `LayerView`) and its key/value cache step."""

import math

import pytest
import torch

from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel
from lenex.positions import POSITIONS

SCHEMES = sorted(POSITIONS)
# 24 tokens: blockwise (block 4) and sliding (window 5) plans are cut into spans (length > 2 x chunk)
MASKS = [("causal", {}), ("blockwise", {"block": 4}), ("sliding", {"window": 5})]
LENGTH = 24


def _model(position: str, n_layer: int = 2, **options) -> LanguageModel:
    torch.manual_seed(0)
    cfg = ModelConfig(n_layer=n_layer, d_model=32, n_head=4, d_ff=64, vocab_size=53, position=position,
                      position_options=options, train_length=LENGTH)
    model = LanguageModel(cfg).eval()
    if position in ("t5", "kerple"):  # learned biases start at zero or flat: make them matter
        with torch.no_grad():
            for p in model.position.parameters():
                p.add_(torch.rand_like(p))
    return model


def _tokens(batch: int = 2, length: int = LENGTH) -> torch.Tensor:
    return torch.randint(0, 53, (batch, length), generator=torch.Generator().manual_seed(1))


def _views(model, idx, mask=None, positions=None):
    views = []

    def keep(view):  # read inside the callback, as the callers do
        views.append({"layer": view.layer, "input": view.input, "logits": view.logits(),
                      "probabilities": view.probabilities(), "allowed": view.allowed()})

    hidden = model.inspect(idx, keep, positions=positions, mask=mask)
    return views, hidden


def pairwise_logits(model, x, positions):
    """a_ij of layer 0 by hand: every pair (i, j) rotated at its own single positions, q.k/sqrt(d) + bias."""
    block, scheme = model.blocks[0], model.position
    q, k, _ = block.attn.heads(block.ln_attn(x))
    batch, heads, length, head_dim = q.shape
    out = torch.empty(batch, heads, length, length)
    for i in range(length):
        for j in range(length):
            qi, kj = scheme.rotate(q[:, :, i:i + 1], k[:, :, j:j + 1], positions[i:i + 1], positions[j:j + 1])
            a = (qi * kj).sum(-1)[..., 0] / math.sqrt(head_dim)
            bias = scheme.bias(positions[i:i + 1], positions[j:j + 1])
            out[:, :, i, j] = a if bias is None else a + bias.reshape(heads)
    return out


def frozen_logits(model, block, x, positions):
    """The formula lex.resolution used before the look-inside API (kept here as the reference)."""
    q, k, _ = block.attn.heads(block.ln_attn(x))
    q, k = model.position.rotate(q.float(), k.float(), positions, positions)
    logits = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    bias = model.position.bias(positions, positions)
    return logits if bias is None else logits + bias.float()


@pytest.mark.parametrize("position", SCHEMES)
@pytest.mark.parametrize("mask_name,options", MASKS)
def test_inspect_matches_the_forward_for_every_scheme_and_mask(position, mask_name, options):
    model, idx, mask = _model(position), _tokens(), build_mask(mask_name, options)
    with torch.no_grad():
        views, hidden = _views(model, idx, mask)
        torch.testing.assert_close(hidden, model.hidden(idx, mask=mask), rtol=0, atol=0)
        assert [v["layer"] for v in views] == [0, 1]
        positions = torch.arange(LENGTH)
        embedded = model.tok_emb(idx)
        if model.position.embed(positions) is not None:
            embedded = embedded + model.position.embed(positions)
        torch.testing.assert_close(views[0]["input"], embedded, rtol=0, atol=0)
        for view, block, after in zip(views, model.blocks, [v["input"] for v in views[1:]] + [None]):
            assert torch.equal(view["logits"], frozen_logits(model, block, view["input"], positions))  # bit for bit
            assert torch.equal(view["allowed"], mask.allowed(positions, positions))
            probs = view["probabilities"]
            torch.testing.assert_close(probs.sum(-1), torch.ones(2, 4, LENGTH))
            assert (probs[..., ~view["allowed"]] == 0).all()
            # The block's own output, rebuilt from the view's weights: they are the forward's attention.
            _, _, v = block.attn.heads(block.ln_attn(view["input"]))
            rebuilt = view["input"] + block.attn.merge(probs @ v)
            rebuilt = rebuilt + block.mlp(block.ln_mlp(rebuilt))
            expected = model.ln_f(rebuilt) if after is None else rebuilt
            torch.testing.assert_close(expected, hidden if after is None else after, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("position", SCHEMES)
def test_logits_equal_a_pair_by_pair_computation(position):
    model, idx = _model(position, n_layer=1), _tokens(length=10)
    with torch.no_grad():
        views, _ = _views(model, idx, build_mask("causal", {}))
        x = views[0]["input"]
        torch.testing.assert_close(views[0]["logits"], pairwise_logits(model, x, torch.arange(10)),
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("position", ["rope", "xpos", "alibi", "learned", "t5"])
def test_logits_follow_explicit_positions_with_gaps(position):
    model, idx = _model(position, n_layer=1), _tokens(length=8)
    positions = torch.tensor([0, 1, 4, 5, 6, 9, 13, 14])
    with torch.no_grad():
        views, hidden = _views(model, idx, positions=positions)
        torch.testing.assert_close(hidden, model.hidden(idx, positions), rtol=0, atol=0)
        torch.testing.assert_close(views[0]["logits"], pairwise_logits(model, views[0]["input"], positions),
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("position", ["rope", "xpos", "alibi", "sinusoidal"])
def test_logits_under_bf16_autocast_are_fp32_from_the_layer_input(position):
    # Layer 0's input (the embeddings) does not depend on autocast, so its fp32 logits must not either.
    model, idx = _model(position), _tokens()
    with torch.no_grad():
        plain, _ = _views(model, idx)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            cast, _ = _views(model, idx)
    assert cast[0]["logits"].dtype == torch.float32
    assert torch.equal(cast[0]["logits"], plain[0]["logits"])
    assert not torch.equal(cast[1]["input"], plain[1]["input"])  # the bf16 forward did run


def test_xpos_span_scaled_forward_still_gives_its_logits():
    # scale_base 1: the scales leave one reference's range beyond ~32 positions, so the forward
    # rotates without scales and attention scales span by span; the view rebuilds whole-sequence logits.
    model, idx = _model("xpos", n_layer=1, scale_base=1), _tokens(length=48)
    assert model.position.span_scale_rows(torch.arange(48)) is not None
    with torch.no_grad():
        views, hidden = _views(model, idx)
        view, block = views[0], model.blocks[0]
        assert torch.equal(view["logits"], frozen_logits(model, block, view["input"], torch.arange(48)))
        _, _, v = block.attn.heads(block.ln_attn(view["input"]))
        rebuilt = view["input"] + block.attn.merge(view["probabilities"] @ v)
        rebuilt = model.ln_f(rebuilt + block.mlp(block.ln_mlp(rebuilt)))
    torch.testing.assert_close(rebuilt, hidden, rtol=1e-4, atol=1e-4)


def test_a_view_reduced_layer_by_layer_needs_no_copy():
    # resolution.py reduces each layer's logits inside the callback; the callback runs before the next layer.
    model, idx = _model("alibi", n_layer=3), _tokens()
    order = []
    model.inspect(idx, lambda view: order.append((view.layer, view.logits().shape)))
    assert order == [(layer, (2, 4, LENGTH, LENGTH)) for layer in range(3)]


@pytest.mark.parametrize("position", SCHEMES)
@pytest.mark.parametrize("chunk", [1, 5])
def test_cache_steps_with_a_full_cache_equal_the_causal_forward(position, chunk):
    model, idx = _model(position), _tokens(length=12)
    cache = model.new_cache(keep=12)
    outputs = []
    with torch.no_grad():
        for start in range(0, 12, chunk):
            end = min(start + chunk, 12)
            allowed = torch.arange(start, end)[:, None] >= torch.arange(end)[None, :]
            outputs.append(model.step(idx[:, start:end], torch.arange(start, end), torch.arange(end), allowed, cache))
        torch.testing.assert_close(torch.cat(outputs, dim=1), model.hidden(idx, mask=build_mask("causal", {})),
                                   rtol=1e-5, atol=1e-5)
    assert cache.slots[0].k.shape == (2, 4, 12, 8)


def test_cache_step_keeps_the_last_tokens_and_returns_the_rows_asked():
    model, idx = _model("rope"), _tokens(length=6)
    cache = model.new_cache(keep=2)
    allowed = torch.ones(3, 3, dtype=torch.bool).tril()
    with torch.no_grad():
        first = model.step(idx[:, :3], torch.arange(3), torch.arange(3), allowed, cache)
        assert [slot.k.shape[2] for slot in cache.slots] == [2, 2]
        tail = model.step(idx[:, :3], torch.arange(3), torch.arange(3), allowed, model.new_cache(0), hidden_from=1)
    torch.testing.assert_close(tail, first[:, 1:], rtol=0, atol=0)


def test_cache_errors_name_the_problem():
    model, idx = _model("rope"), _tokens(length=6)
    with pytest.raises(ValueError, match="non-negative number of tokens, got -1"):
        model.new_cache(-1)
    cache = model.new_cache(4)
    with pytest.raises(ValueError, match="3 keys \\(cached \\+ new\\) but 5 key positions"):
        model.step(idx[:, :3], torch.arange(3), torch.arange(5), torch.ones(3, 5, dtype=torch.bool), cache)
