"""The Hugging Face path (GPT-2, GPT-NeoX/Pythia, Bloom) with tiny random configs, offline."""

import os

import numpy as np
import pytest
import torch

from lenex.records.checkpoint import load_model, save_checkpoint
from lenex.hf.models import bloom_alibi, bloom_alibi_slopes, tiny_random
from lenex.segmented.segments import as_batch, parse_method, sample_segments

ARCHES = ["gpt2", "gpt_neox", "bloom"]


def test_offline():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


@pytest.mark.parametrize("arch", ARCHES)
def test_position_id_path_matches_own_forward_when_contiguous(arch):
    model = tiny_random(arch)
    idx = torch.randint(0, 128, (2, 24), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        own = model.hf(input_ids=idx, use_cache=False).logits
        ours = model.logits(idx, torch.arange(24).expand(2, 24))
    torch.testing.assert_close(ours, own, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ARCHES)
def test_gapped_positions_equal_full_sequence_with_gap_tokens_masked(arch):
    """Tokens at original positions with gaps score exactly as the full sequence in which the
    missing tokens are present but masked out for every query: attention sees only the kept
    tokens, at their original positions (Bloom: ALiBi over original distances)."""
    model = tiny_random(arch)
    full = torch.randint(0, 128, (1, 40), generator=torch.Generator().manual_seed(2))
    kept = torch.tensor(list(range(0, 6)) + list(range(17, 25)) + list(range(33, 40)))
    with torch.no_grad():
        gapped = model.logits(full[:, kept], kept[None])
        mask = torch.zeros_like(full)
        mask[:, kept] = 1
        kwargs = {"attention_mask": mask, "use_cache": False}
        if arch == "bloom":  # Bloom's own builder would renumber the kept tokens: give it 0..39
            from lenex.hf.models import bloom_positions
            with bloom_positions(model.hf, torch.arange(40)[None]):
                reference = model.hf(input_ids=full, **kwargs).logits
        else:
            reference = model.hf(input_ids=full, position_ids=torch.arange(40)[None], **kwargs).logits
        contiguous = model.logits(full[:, kept])  # positions 0..20: the gaps closed
    torch.testing.assert_close(gapped, reference[:, kept], rtol=1e-5, atol=1e-5)
    # Positions matter (Pythia rotates only a quarter of each head, so the effect is small here).
    assert (gapped[:, 6:] - contiguous[:, 6:]).abs().max() > 1e-4


def test_bloom_patched_alibi_uses_original_positions():
    positions = torch.tensor([[3, 4, 9, 20]])
    alibi = bloom_alibi(positions, num_heads=4, dtype=torch.float32).view(4, 4)
    slopes = torch.tensor([2.0 ** (-8 * k / 4) for k in range(1, 5)])  # Bloom's (ALiBi's) slopes
    torch.testing.assert_close(alibi, slopes[:, None] * torch.tensor([0.0, 1, 6, 17])[None])


def test_bloom_slopes_by_hand():
    # A power of two: 2^(-8k/8) = 2^-k for k = 1..8.
    torch.testing.assert_close(bloom_alibi_slopes(8), torch.tensor([2.0 ** -k for k in range(1, 9)]))
    # 12 heads: the 8 above, then the 16-head series 2^(-k/2) at k = 1, 3, 5, 7 (every other one, first four).
    expected = [2.0 ** -k for k in range(1, 9)] + [2.0 ** -0.5, 2.0 ** -1.5, 2.0 ** -2.5, 2.0 ** -3.5]
    torch.testing.assert_close(bloom_alibi_slopes(12), torch.tensor(expected))
    torch.testing.assert_close(bloom_alibi_slopes(1), torch.tensor([2.0 ** -8]))
    assert bloom_alibi_slopes(12).dtype == torch.float32
    with pytest.raises(ValueError, match="num_heads=0"):
        bloom_alibi_slopes(0)


@pytest.mark.parametrize("num_heads", [1, 4, 8, 12, 16, 20, 32, 112])  # 16 / 32 / 112: the Bloom checkpoints' heads
def test_bloom_slopes_match_installed_transformers(num_heads):
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
    build = getattr(bloom, "build_alibi_tensor", None)
    if build is None:
        pytest.skip("this transformers' Bloom module has no build_alibi_tensor to compare with")
    # One row of ones, two tokens: position 1's entry per head is that head's slope.
    theirs = build(torch.ones(1, 2, dtype=torch.long), num_heads, torch.float32).view(num_heads, 2)[:, 1]
    torch.testing.assert_close(bloom_alibi_slopes(num_heads), theirs)
    positions = torch.arange(7)[None]
    ours_tensor = bloom_alibi(positions, num_heads, torch.float32)
    torch.testing.assert_close(ours_tensor, build(torch.ones(1, 7, dtype=torch.long), num_heads, torch.float32))


def test_gpt2_interpolation_and_training_step(tmp_path):
    model = tiny_random("gpt2", n_positions=16)
    old = model.hf.transformer.wpe.weight.detach().clone()
    with pytest.raises(ValueError, match="extend it with extend_positions"):
        model.logits(torch.zeros(1, 4, dtype=torch.long), torch.tensor([[0, 5, 20, 31]]))
    model.extend_positions(32)
    torch.testing.assert_close(model.hf.transformer.wpe.weight[::2], old)
    segment = sample_segments(np.arange(32) % 100, parse_method("chunk-0.25"), 16, np.random.default_rng(0))
    batch = as_batch([segment])
    model.train()
    _, loss = model(batch["x"], batch["y"], positions=batch["positions"], loss_mask=batch["loss_mask"])
    loss.backward()
    assert model.hf.transformer.wpe.weight.grad[batch["positions"][0]].abs().sum() > 0
    save_checkpoint(tmp_path / "m.pt", model, step=1)
    again, payload = load_model(tmp_path / "m.pt")  # dispatched on the file's format
    assert payload["format"] == "lenex-hf-checkpoint-v1" and type(again) is type(model)
    assert payload["step"] == 1 and again.hf.config.n_positions == 32 and not again.training
    model.eval()
    with torch.no_grad():
        torch.testing.assert_close(again.logits(batch["x"], batch["positions"]),
                                   model.logits(batch["x"], batch["positions"]))


def test_unknown_architecture():
    with pytest.raises(ValueError, match="unsupported Hugging Face architecture 'mamba'"):
        tiny_random("mamba")


@pytest.mark.parametrize("arch", ARCHES)
def test_hf_attention_medians(arch):
    from lenex.segmented.attention import median_attention

    model = tiny_random(arch)
    medians = median_attention(model, np.random.default_rng(0).integers(0, 128, (2, 32)), train_length=16)
    assert medians.shape == (2 * 2 * 4 * 16,)  # pieces x layers x heads x queries past L_t
    assert np.all(medians > 0) and np.isfinite(medians).all()


@pytest.mark.parametrize("arch", ARCHES)
def test_hf_inspect_gives_transformers_own_attention_probabilities(arch):
    model = tiny_random(arch)
    idx = torch.randint(0, 128, (1, 12), generator=torch.Generator().manual_seed(0))
    views = []
    model.inspect(idx, views.append)
    assert [view.layer for view in views] == [0, 1]
    with torch.no_grad():
        expected = model.hf(input_ids=idx, attention_mask=torch.ones_like(idx), output_attentions=True).attentions
    for view, weights in zip(views, expected):
        torch.testing.assert_close(view.probabilities(), weights.float(), rtol=0, atol=0)
        torch.testing.assert_close(view.probabilities().sum(-1), torch.ones(1, 4, 12))
    with pytest.raises(ValueError, match="attention probabilities only"):
        views[0].logits()
    with pytest.raises(ValueError, match="do not return a layer's input"):
        views[0].input
    with pytest.raises(ValueError, match="default positions and causal mask only"):
        model.inspect(idx, views.append, positions=torch.arange(12))
