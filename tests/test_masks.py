"""Masks as index rules, and block-by-block attention against a dense reference."""

import pytest
import torch
import torch.nn.functional as F

from lenex.masks import build_mask, default_mask_options
from lenex.model import attend, plan_attention
from lenex.positions import build_position


def test_blockwise_rule_by_hand():
    # block 2: queries 0-1 | 2-3 | 4-5; query 4 sees keys 2,3 (previous block) and 4 (itself).
    dense = build_mask("blockwise", {"block": 2}).dense(6).int()
    expected = torch.tensor(
        [
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [0, 0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1, 1],
        ]
    )
    assert torch.equal(dense, expected)


@pytest.mark.parametrize("name", ["sliding", "windowed"])
def test_sliding_rule_by_hand(name):
    dense = build_mask(name, {"window": 2}).dense(4).int()
    expected = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]])
    assert torch.equal(dense, expected)


def test_causal_rule_is_lower_triangle():
    assert torch.equal(build_mask("causal").dense(5), torch.ones(5, 5, dtype=torch.bool).tril())


def test_unknown_mask_and_option_name_the_bad_value():
    with pytest.raises(ValueError, match="'diagonal'"):
        build_mask("diagonal")
    with pytest.raises(ValueError, match="^mask 'sliding': unknown option 'width'; known: window$"):
        build_mask("sliding", {"width": 3})
    with pytest.raises(ValueError, match="^mask 'causal': unknown option 'block'; known: none$"):
        build_mask("causal", {"block": 3})
    with pytest.raises(ValueError, match="^mask 'blockwise': missing option 'block'$"):
        build_mask("blockwise")
    with pytest.raises(ValueError, match="^windowed mask: window must be a positive integer, got 0$"):
        build_mask("windowed", {"window": 0})


def test_options_are_recorded_as_used():
    assert build_mask("blockwise", {"block": 8.0}).options() == {"block": 8}
    assert build_mask("sliding", {"window": 5}).options() == {"window": 5}
    assert build_mask("causal").options() == {}


def test_blockwise_refuses_ragged_lengths():
    mask = build_mask("blockwise", {"block": 8})
    with pytest.raises(ValueError, match="length 20 .*block size 8"):
        mask.check_length(20)
    mask.check_length(24)
    mask.check_length(5)  # shorter than one block: plain causal


def test_default_options_follow_the_papers():
    assert default_mask_options("blockwise", 1024) == {"block": 512}
    assert default_mask_options("sliding", 1024) == {"window": 1024}
    assert default_mask_options("windowed", 1024) == {} == default_mask_options("causal", 1024)


def test_a_masks_block_size_is_what_the_mask_declares(monkeypatch):
    """The BCA block size comes from the mask (its `default_options`), not from a list of mask names:
    a mask of its own declares its own."""
    from lenex.masks import MASKS, BlockwiseMask

    monkeypatch.setattr(BlockwiseMask, "default_options", classmethod(lambda cls, train_length: {"block": train_length // 4}))
    assert default_mask_options("blockwise", 1024) == {"block": 256}

    class Quarter(BlockwiseMask):
        name = "quarter"

        @classmethod
        def default_options(cls, train_length):
            return {"block": train_length // 8}

    monkeypatch.setitem(MASKS, "quarter", Quarter)
    assert default_mask_options("quarter", 1024) == {"block": 128}
    with pytest.raises(ValueError, match=r"^unknown attention mask 'quartre'; known: blockwise, causal, quarter, sliding, windowed$"):
        default_mask_options("quartre", 1024)


def _dense_reference(q, k, v, positions, scheme, mask):
    q, k = scheme.rotate(q, k, positions, positions)
    logits = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    bias = scheme.bias(positions, positions)
    if bias is not None:
        logits = logits + bias
    allowed = mask.dense(q.shape[2])
    return torch.softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1) @ v


@pytest.mark.parametrize("position", ["none", "rope", "xpos", "alibi", "sandwich", "t5", "kerple"])
@pytest.mark.parametrize("mask_name,options", [("causal", {}), ("blockwise", {"block": 4}), ("sliding", {"window": 5})])
def test_planned_attention_equals_dense_mask(position, mask_name, options):
    torch.manual_seed(0)
    heads, head_dim, length = 4, 8, 24  # 24 > 2 * chunk: the banded masks take the block-by-block path
    scheme = build_position(position, {}, d_model=heads * head_dim, n_heads=heads, head_dim=head_dim, train_length=16)
    mask = build_mask(mask_name, options)
    q, k, v = (torch.randn(2, heads, length, head_dim) for _ in range(3))
    positions = torch.arange(length)
    plan = plan_attention(positions, scheme, mask)
    if mask.banded:
        assert len(plan) > 1
    rq, rk = scheme.rotate(q, k, positions, positions)
    ours = attend(rq, rk, v, plan)
    reference = _dense_reference(q, k, v, positions, scheme, mask)
    torch.testing.assert_close(ours, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask_name,options", [("blockwise", {"block": 64}), ("sliding", {"window": 64})])
def test_banded_plans_never_build_a_full_matrix(mask_name, options):
    scheme = build_position("alibi", {}, d_model=32, n_heads=4, head_dim=8, train_length=128)
    mask = build_mask(mask_name, options)
    for length in (1024, 4096):
        plan = plan_attention(torch.arange(length), scheme, mask)
        largest = max(span.mask.numel() for span in plan)
        assert largest <= 4 * 64 * 128  # heads x chunk x (chunk + previous block/window)
        assert sum(span.mask.numel() for span in plan) <= 4 * length * 128  # linear in length


def test_causal_without_bias_takes_the_fast_path():
    scheme = build_position("rope", {}, d_model=32, n_heads=4, head_dim=8, train_length=16)
    plan = plan_attention(torch.arange(16), scheme, build_mask("causal"))
    assert len(plan) == 1 and plan[0].mask is None
    q, k, v = (torch.randn(1, 4, 16, 8) for _ in range(3))
    expected = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(attend(q, k, v, plan), expected)
