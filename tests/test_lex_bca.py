"""LEX evaluation under blockwise causal attention (and the sliding window of Table 5) equals a
dense-mask evaluation: the block-by-block attention the evaluator runs gives the same
perplexity as one L x L masked softmax through a hand-written forward pass.

(Attention alone is checked span by span in tests/test_masks.py::test_planned_attention_equals_dense_mask.)
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lenex.config import ModelConfig
from lenex.scoring.evaluate import evaluate_length, pieces
from lenex.masks import build_mask
from lenex.model import LanguageModel

SMALL = dict(n_layer=2, d_model=32, n_head=4, d_ff=64, vocab_size=53, train_length=8)
BOS = 0


def dense_mask_nll(model, inputs, targets, allowed):
    """Mean NLL from an explicit forward pass with one dense boolean mask (L x L)."""
    cfg, scheme = model.config, model.position
    positions = torch.arange(inputs.shape[1])
    x = model.tok_emb(inputs)
    if scheme.embed(positions) is not None:
        x = x + scheme.embed(positions)
    for block in model.blocks:
        q, k, v = block.attn.heads(block.ln_attn(x))
        q, k = scheme.rotate(q, k, positions, positions)
        logits = q @ k.transpose(-1, -2) / math.sqrt(cfg.head_dim)
        bias = scheme.bias(positions, positions)
        if bias is not None:
            logits = logits + bias
        weights = torch.softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1)
        x = x + block.attn.merge(weights @ v)
        x = x + block.mlp(block.ln_mlp(x))
    logits = model.logits(model.ln_f(x))
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten()).item()


@pytest.mark.parametrize("position", ["xpos", "rope", "alibi", "sinusoidal"])
@pytest.mark.parametrize("mask_name,options", [("blockwise", {"block": 4}), ("sliding", {"window": 8})])
def test_banded_evaluation_equals_a_dense_mask_evaluation(position, mask_name, options):
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(**SMALL, position=position)).eval()
    with torch.no_grad():  # sharper than at initialisation, so cutting context changes the loss
        for block in model.blocks:
            block.attn.qkv.weight.mul_(6)
    length, span = 24, 48  # 3 x L_tr: BCA (blocks of L_tr/2) and the window take the block-by-block path
    tokens = np.random.default_rng(0).integers(1, 53, size=span)
    mask = build_mask(mask_name, options)
    ours = evaluate_length(model, tokens, length, span, mask, BOS, batch_tokens=length)
    inputs, targets = pieces(tokens, length, span, BOS)
    with torch.no_grad():
        dense = dense_mask_nll(model, inputs, targets, mask.dense(length))
        causal = dense_mask_nll(model, inputs, targets, build_mask("causal").dense(length))
    assert ours["nll"] == pytest.approx(dense, abs=2e-6)
    assert abs(ours["nll"] - causal) > 1e-4  # the band really cuts context at this length
