"""xPos at any length (issue 22): blockwise (BCA) evaluation of a 1-layer model at 131,072 and
1,048,576 positions is finite and equals a float64 reference computed from relative distances
(zeta^((n-m)/B) per pair, never one scale per position) on the last block."""

import math

import pytest
import torch
import torch.nn.functional as F

from lenex.config import ModelConfig
from lenex.masks import build_mask
from lenex.model import LanguageModel
from lenex.model.attention import plan_attention
from lenex.positions import contiguous_positions
from lenex.positions.rope import rotate_half
from lenex.positions.xpos import EXPONENT_LIMIT, xpos_zeta

BLOCK = 128


def _model(seed=0) -> LanguageModel:
    torch.manual_seed(seed)
    cfg = ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, vocab_size=256, train_length=2 * BLOCK,
                      position="xpos")
    model = LanguageModel(cfg).eval()
    with torch.no_grad():  # sharp attention, so a wrong decay would show in the loss
        model.blocks[0].attn.qkv.weight[:64] *= 30
    return model


@torch.no_grad()
def _reference_last_block(model: LanguageModel, idx: torch.Tensor, gamma: float = 0.4) -> torch.Tensor:
    """Float64 NLL of the last block's tokens: BCA lets them see the last two blocks only."""
    model = model.double()
    cfg, layer = model.config, model.blocks[0]
    length, hd = idx.shape[1], cfg.head_dim
    window = idx[:, length - 2 * BLOCK:]
    pos = torch.arange(length - 2 * BLOCK, length, dtype=torch.float64)
    x = model.tok_emb.weight[window]
    q, k, v = layer.attn.heads(layer.ln_attn(x))
    theta = 10000.0 ** (-2 * torch.arange(hd // 2, dtype=torch.float64) / hd)
    angles = torch.cat((pos[:, None] * theta,) * 2, dim=-1)
    q, k = (t * angles.cos() + rotate_half(t) * angles.sin() for t in (q, k))
    zeta = torch.cat((xpos_zeta(hd, gamma, torch.float64),) * 2)
    decay = zeta ** ((pos[:, None, None] - pos[None, :, None]) / 512)  # (Tq, Tk, hd): relative only
    scores = torch.einsum("bhqd,bhkd,qkd->bhqk", q, k, decay) / math.sqrt(hd)
    allowed = build_mask("blockwise", {"block": BLOCK}).allowed(torch.arange(2 * BLOCK), torch.arange(2 * BLOCK))
    attn = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    x = x + layer.attn.merge(attn @ v)
    x = model.ln_f(x + layer.mlp(layer.ln_mlp(x)))
    logits = x @ model.tok_emb.weight.T
    return F.cross_entropy(logits[0, BLOCK:], window[0, BLOCK:], reduction="none")


@pytest.mark.parametrize("length", [131_072, pytest.param(1_048_576, marks=pytest.mark.slow)])
def test_bca_at_long_lengths_is_finite_and_matches_float64(length):
    torch.set_num_threads(1)
    model = _model()
    idx = torch.randint(0, 256, (1, length), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        nll = model.token_nll(idx, idx, mask=build_mask("blockwise", {"block": BLOCK}))
        reference = _reference_last_block(model, idx)
    assert torch.isfinite(nll).all()
    assert torch.allclose(nll[0, -BLOCK:].double(), reference, rtol=1e-4, atol=1e-4)
    # The comparison can tell: another decay (gamma 0.8) moves the reference 10x beyond the tolerance.
    assert (_reference_last_block(model, idx, gamma=0.8) - reference).abs().max() > 1e-3


def test_scales_stay_in_float32_range_at_a_million_positions():
    model = _model()
    positions = contiguous_positions(0, 1_048_576)
    plan = plan_attention(positions, model.position, build_mask("blockwise", {"block": BLOCK}))
    bound = math.exp(EXPONENT_LIMIT)
    for span in (plan[0], plan[len(plan) // 2], plan[-1]):
        for scale in (span.q_scale, span.k_scale):
            assert torch.isfinite(scale).all() and scale.max() <= bound and scale.min() > 0


def test_per_span_scales_match_one_reference_where_both_fit(monkeypatch):
    """The per-span path (forced on a short input) gives the single-reference logits to fp32 rounding."""
    model = _model()
    idx = torch.randint(0, 256, (2, 1024), generator=torch.Generator().manual_seed(2))
    for mask in (build_mask("causal"), build_mask("blockwise", {"block": BLOCK}), build_mask("sliding", {"window": 200})):
        with torch.no_grad():
            whole = model.token_nll(idx, idx, mask=mask)
            monkeypatch.setattr("lenex.positions.xpos.EXPONENT_LIMIT", 0.3)
            model.position.tables.clear()
            per_span = model.token_nll(idx, idx, mask=mask)
            monkeypatch.undo()
            model.position.tables.clear()
        assert plan_attention(contiguous_positions(0, 1024), model.position, mask)[0].q_scale is None
        assert torch.allclose(whole, per_span, atol=2e-5), (mask.name, (whole - per_span).abs().max())
