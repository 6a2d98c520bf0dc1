"""The flex attention kernel against the reference path, for every position scheme x mask.

What torch 2.13 runs on this CPU (docs/attention-kernels.md): FlexAttention's eager forward
(unfused); its compiled forward (slow to compile: marked slow); no backward (torch refuses it on
CPU). The backward tests here lift that refusal to run FlexAttention's unfused backward, which
checks each score_mod's gradients (learned biases included); CUDA's fused kernels, forward and
backward in bf16, are the `cuda` tests, run by the GPU check script. They build every model and
scheme through `cuda_model` and `cuda_scheme`, at heads of CUDA_HEAD_DIM: FlexAttention's CUDA
kernel refuses head dimensions below 16 (a CPU test checks that no `cuda` test builds its own).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import math
import sys

import pytest
import torch

import lenex.model.flex as flex
from lenex.records.checkpoint import provenance
from lenex.cli import add_run_options, start_run
from lenex.config import ModelConfig
from lenex.masks import MASKS, build_mask, default_mask_options
from lenex.model import LanguageModel, attend, plan_attention
from lenex.model.attention import attention_path
from lenex.model.flex import MIN_CUDA_HEAD_DIM, FlexSpan, block_mask, call_counts, fallback_reason
from lenex.model.kernels import ENVIRONMENT, default_kernel, resolve_kernel, set_default_kernel
from lenex.positions import POSITIONS, PositionScheme, build_position, contiguous_positions
from lenex.positions.alibi import Alibi

pytestmark = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")

TRAIN_LENGTH, HEADS, HEAD_DIM = 16, 4, 8
CUDA_HEAD_DIM = MIN_CUDA_HEAD_DIM  # the `cuda` tests' heads (HEAD_DIM is the CPU tests')
# 4.5 training lengths, not a whole number of the tests' 16-token tiles (a partial last tile). Each new
# (score_mod, mask_mod, length) costs FlexAttention a trace, so the model tests use one length; the
# block-mask layout test covers several.
LENGTH = 72
TILE = 16
CUDA = torch.cuda.is_available()


@pytest.fixture(autouse=True)
def small_tiles(monkeypatch):
    """Tiles of 16 tokens, so lengths of 64-72 have several tile rows and a partial one."""
    monkeypatch.setattr(flex, "BLOCK", TILE)
    yield
    set_default_kernel(None)


def mask_for(name: str):
    options = {"window": TRAIN_LENGTH} if name == "windowed" else default_mask_options(name, TRAIN_LENGTH)
    return build_mask(name, options)


def tiny_model(position: str, mask: str = "causal", layers: int = 1, head_dim: int = HEAD_DIM) -> LanguageModel:
    torch.manual_seed(0)
    # A learned table read beyond L_tr is interpolated to the longest length tested (LEX's protocol).
    options = {"interpolate_to": 2048} if position == "learned" else {}
    cfg = ModelConfig(n_layer=layers, d_model=HEADS * head_dim, n_head=HEADS, d_ff=64, vocab_size=97, position=position,
                      position_options=options, mask=mask, mask_options={"window": TRAIN_LENGTH} if mask == "windowed" else {},
                      train_length=TRAIN_LENGTH)
    model = LanguageModel(cfg)
    with torch.no_grad():  # learned biases (T5, KERPLE) far from their small init, so they matter
        for parameter in model.position.parameters():
            parameter.normal_(std=1.0)
    return model


def allow_cpu_backward(monkeypatch):
    """Let FlexAttention run its unfused backward on CPU (torch refuses it up front; the math runs)."""
    import torch.nn.attention.flex_attention as flex_module

    monkeypatch.setattr(flex_module, "_validate_device", lambda *args, **kwargs: None)


@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_flex_forward_equals_reference(position, mask_name):
    model = tiny_model(position).eval()
    idx = torch.randint(0, 97, (2, LENGTH))
    with torch.no_grad():
        model.attention_kernel = "reference"
        reference = model(idx, mask=mask_for(mask_name))[0]
        model.attention_kernel = "flex"
        fused = model(idx, mask=mask_for(mask_name))[0]
    torch.testing.assert_close(fused, reference, rtol=1e-4, atol=1e-4)


# Backward: every scheme's score_mod (its gradients, learned biases' included) under the causal
# mask, and every mask under ALiBi; the whole scheme x mask product is the CUDA test's.
BACKWARD_CASES = [(position, "causal") for position in sorted(POSITIONS)] + [
    ("alibi", mask_name) for mask_name in sorted(MASKS) if mask_name != "causal"]


@pytest.mark.parametrize("position,mask_name", BACKWARD_CASES)
def test_flex_backward_equals_reference(position, mask_name, monkeypatch):
    allow_cpu_backward(monkeypatch)
    model = tiny_model(position, mask_name, layers=2).train()
    idx = torch.randint(0, 97, (2, LENGTH + 1))
    grads = {}
    for kernel in ("reference", "flex"):
        model.zero_grad(set_to_none=True)
        model.attention_kernel = kernel
        model(idx[:, :-1], idx[:, 1:])[1].backward()
        grads[kernel] = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    assert grads["flex"].keys() == grads["reference"].keys()
    for name, expected in grads["reference"].items():
        torch.testing.assert_close(grads["flex"][name], expected, rtol=1e-4, atol=1e-5, msg=name)


@pytest.mark.parametrize("position", ["alibi", "kerple", "sandwich", "smoothed_sandwich", "t5"])
def test_score_mods_read_batched_positions_with_gaps(position):
    """Segmented training's positions: original ids per sequence (B, T), with gaps."""
    torch.manual_seed(1)
    scheme = build_position(position, {}, d_model=HEADS * HEAD_DIM, n_heads=HEADS, head_dim=HEAD_DIM,
                            train_length=TRAIN_LENGTH)
    with torch.no_grad():
        for parameter in scheme.parameters():
            parameter.normal_(std=1.0)
    length = 40
    positions = torch.sort(torch.randperm(300)[: 2 * length].view(2, length), dim=-1).values
    q, k, v = (torch.randn(2, HEADS, length, HEAD_DIM) for _ in range(3))
    mask = mask_for("sliding")  # masks read indices, not positions: one suffices here
    plan = plan_attention(positions, scheme, mask, "flex")
    assert isinstance(plan[0], FlexSpan)
    expected = attend(q, k, v, plan_attention(positions, scheme, mask, "reference"))
    torch.testing.assert_close(attend(q, k, v, plan), expected, rtol=1e-5, atol=1e-5)


def tile_layout(allowed: torch.Tensor, tile: int):
    """(any, all) per tile of a dense (L, L) mask; pairs past the end count as not allowed."""
    tiles = math.ceil(allowed.shape[0] / tile)
    padded = torch.zeros(tiles * tile, tiles * tile, dtype=torch.bool)
    padded[: allowed.shape[0], : allowed.shape[1]] = allowed
    by_tile = padded.view(tiles, tile, tiles, tile).transpose(1, 2).flatten(2)
    return by_tile.any(-1), by_tile.all(-1)


def listed(counts, indices, tiles: int) -> torch.Tensor:
    layout = torch.zeros(tiles, tiles, dtype=torch.bool)
    for row in range(tiles):
        layout[row, indices[0, 0, row, : counts[0, 0, row]].long()] = True
    return layout


@pytest.mark.parametrize("tile", [4, TILE])  # 4: banded masks have full tiles too
@pytest.mark.parametrize("mask_name", sorted(MASKS))
def test_block_mask_lists_exactly_the_tiles_the_mask_touches(mask_name, tile):
    mask = mask_for(mask_name)
    for length in (64, 72, 202):
        if mask_name == "blockwise" and length % mask.block:
            continue
        blocks = block_mask(mask, length, "cpu", block=tile)
        touched, full = tile_layout(mask.dense(length), tile)
        assert full.any() or tile == TILE  # (16-token tiles are never whole inside these bands)
        tiles = touched.shape[0]
        full_listed = listed(blocks.full_kv_num_blocks, blocks.full_kv_indices, tiles)
        partial_listed = listed(blocks.kv_num_blocks, blocks.kv_indices, tiles)
        assert torch.equal(full_listed, full)
        assert torch.equal(partial_listed, touched & ~full)


def test_block_masks_are_built_once_per_mask_length_and_device():
    first = flex.cached_block_mask(mask_for("sliding"), 96, "cpu")
    assert flex.cached_block_mask(mask_for("sliding"), 96, "cpu") is first
    assert flex.cached_block_mask(build_mask("sliding", {"window": 8}), 96, "cpu") is not first
    assert flex.cached_block_mask(mask_for("sliding"), 112, "cpu") is not first
    with torch.inference_mode():
        assert flex.cached_block_mask(mask_for("sliding"), 96, "cpu") is not first


def test_banded_block_masks_grow_linearly():
    """The tiles a banded mask lists grow with L (quadratic for causal): what flex computes."""
    for name, per_row in (("sliding", 2), ("blockwise", 2)):
        mask = mask_for(name)
        for length in (256, 1024):
            blocks = block_mask(mask, length, "cpu", block=TILE)
            listed_tiles = int(blocks.kv_num_blocks.sum() + blocks.full_kv_num_blocks.sum())
            assert listed_tiles <= (per_row + 1) * (length // TILE)


@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_every_bias_and_plan_mask_has_last_stride_one(position):
    """CUDA's fused SDPA kernels refuse a mask whose last stride is not 1 (T5's movedim did that)."""
    scheme = build_position(position, {}, d_model=HEADS * HEAD_DIM, n_heads=HEADS, head_dim=HEAD_DIM,
                            train_length=TRAIN_LENGTH)
    for positions in (torch.arange(24), torch.arange(48).view(2, 24) * 2):
        bias = scheme.bias(positions, positions)
        assert bias is None or (bias.is_contiguous() and bias.stride(-1) == 1)
        for mask_name in sorted(MASKS):
            for span in plan_attention(positions, scheme, mask_for(mask_name)):
                assert span.mask is None or (span.mask.is_contiguous() and span.mask.stride(-1) == 1)


def test_additive_mask_is_cast_once_per_plan():
    scheme = build_position("alibi", {}, d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    plan = plan_attention(torch.arange(24), scheme, mask_for("causal"))
    q, k, v = (torch.randn(1, HEADS, 24, HEAD_DIM, dtype=torch.bfloat16) for _ in range(3))
    first = attend(q, k, v, plan)
    cast = plan[0].mask_as(torch.bfloat16)
    assert cast.dtype == torch.bfloat16 and plan[0].mask.dtype == torch.float32
    assert plan[0].mask_as(torch.bfloat16) is cast  # the second layer reuses it
    torch.testing.assert_close(attend(q, k, v, plan), first)


def test_auto_is_flex_on_cuda_and_reference_elsewhere(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert resolve_kernel("auto", "cpu") == "reference"
    assert resolve_kernel("auto", "cuda") == "flex"
    assert resolve_kernel(None, "cuda:0") == "flex"
    assert resolve_kernel("reference", "cuda") == "reference" and resolve_kernel("flex", "cpu") == "flex"
    monkeypatch.setenv(ENVIRONMENT, "reference")
    assert default_kernel() == "reference" and resolve_kernel(None, "cuda") == "reference"
    set_default_kernel("flex")
    assert resolve_kernel(None, "cpu") == "flex"
    with pytest.raises(ValueError, match="'fused'"):
        resolve_kernel("fused", "cpu")
    set_default_kernel(None)
    monkeypatch.setenv(ENVIRONMENT, "fast")
    with pytest.raises(ValueError, match=f"{ENVIRONMENT}='fast'"):
        resolve_kernel(None, "cpu")


def test_entry_points_take_the_kernel_option():
    parser = argparse.ArgumentParser()
    add_run_options(parser)
    start_run(parser.parse_args(["--out", "x.json", "--attention-kernel", "flex"]))
    assert default_kernel() == "flex"
    with pytest.raises(SystemExit):
        parser.parse_args(["--out", "x.json", "--attention-kernel", "fused"])


def test_results_record_the_kernel_that_ran(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    model = tiny_model("alibi")
    assert provenance("model.pt", model, {})["attention_kernel"] == "reference"  # auto on CPU
    model.attention_kernel = "flex"
    assert provenance("model.pt", model, {})["attention_kernel"] == "flex"


class BiasOnly(PositionScheme):
    name = "bias_only_test"

    def bias(self, q_pos, k_pos):
        return (q_pos[:, None] - k_pos[None, :]).abs().float().neg().expand(self.n_heads, -1, -1)


class SteeperAlibi(Alibi):
    """A subclass that changes the bias but not the score_mod it inherits: flex would be wrong."""
    name = "steeper_alibi_test"

    def bias(self, q_pos, k_pos):
        return 2 * super().bias(q_pos, k_pos)


def test_what_falls_back_to_the_reference_path_is_named():
    positions = torch.arange(64)
    byo = BiasOnly(None, d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    causal = mask_for("causal")
    assert "declares no score_mod" in fallback_reason(positions, byo, causal)
    assert not isinstance(plan_attention(positions, byo, causal, "flex")[0], FlexSpan)
    steeper = SteeperAlibi(SteeperAlibi.Options(), d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    assert "declares no score_mod" in fallback_reason(positions, steeper, causal)
    xpos = build_position("xpos", {"scale_base": 1}, d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    assert "per span" in fallback_reason(positions, xpos, causal)
    assert plan_attention(positions, xpos, causal, "flex")[0].q_scale is not None
    alibi = build_position("alibi", {}, d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    assert "dropout" in fallback_reason(positions, alibi, causal, dropout=0.1)
    assert fallback_reason(positions, alibi, causal) is None


def test_causal_without_bias_keeps_sdpa_causal_on_flex():
    rope = build_position("rope", {}, d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    plan = plan_attention(contiguous_positions(0, 64), rope, mask_for("causal"), "flex")
    assert len(plan) == 1 and not isinstance(plan[0], FlexSpan) and plan[0].mask is None


@pytest.mark.slow
def test_compiled_flex_forward_on_cpu_equals_reference():
    """torch.compile of FlexAttention on CPU (a C++ kernel; tens of seconds to compile)."""
    scheme = build_position("alibi", {}, d_model=32, n_heads=HEADS, head_dim=HEAD_DIM, train_length=16)
    positions, mask = contiguous_positions(0, 64), mask_for("blockwise")
    q, k, v = (torch.randn(1, HEADS, 64, HEAD_DIM) for _ in range(3))
    plan = plan_attention(positions, scheme, mask, "flex")
    compiled = torch.compile(torch.nn.attention.flex_attention.flex_attention)
    fused = compiled(q, k, v, score_mod=plan[0].score_mod, block_mask=plan[0].block_mask)
    expected = attend(q, k, v, plan_attention(positions, scheme, mask, "reference"))
    torch.testing.assert_close(fused, expected, rtol=1e-5, atol=1e-5)


# --- CUDA only (scripts/gpu/check.sh: pytest -m cuda tests/test_fused_attention.py) ---------------

def cuda_model(position: str, mask: str, device: str = "cuda") -> LanguageModel:
    """The `cuda` tests' model: 2 layers of HEADS heads of CUDA_HEAD_DIM."""
    return tiny_model(position, mask, layers=2, head_dim=CUDA_HEAD_DIM).to(device)


def cuda_scheme(position: str, device: str = "cuda") -> PositionScheme:
    """The `cuda` tests' position scheme alone, at heads of CUDA_HEAD_DIM."""
    return build_position(position, {}, d_model=HEADS * CUDA_HEAD_DIM, n_heads=HEADS, head_dim=CUDA_HEAD_DIM,
                          train_length=TRAIN_LENGTH).to(device)


def cuda_tests() -> list:
    module = sys.modules[__name__]
    return [test for name, test in vars(module).items() if name.startswith("test_") and callable(test)
            and any(mark.name == "cuda" for mark in getattr(test, "pytestmark", []))]


# What a `cuda` test may not do itself: build a model or scheme, or read the CPU tests' head size.
CUDA_TESTS_MAY_NOT_CALL = {"tiny_model", "build_position", "LanguageModel", "ModelConfig"}


def test_cuda_tests_build_heads_fused_flex_takes():
    """Every `cuda` test builds through cuda_model / cuda_scheme, whose heads are >= 16 for every
    scheme and mask it is parametrized over (checked here on the CPU, before any GPU run)."""
    tests = cuda_tests()
    assert len(tests) == 3  # a new cuda test is checked here too (update the count)
    assert CUDA_HEAD_DIM >= MIN_CUDA_HEAD_DIM
    for test in tests:
        tree = ast.parse(inspect.getsource(test).lstrip())
        called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Name)}
        read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        builds = called & CUDA_TESTS_MAY_NOT_CALL
        assert not builds, f"{test.__name__} builds its own: {builds}"
        assert "HEAD_DIM" not in read, f"{test.__name__} reads HEAD_DIM ({HEAD_DIM}): use CUDA_HEAD_DIM"
        assert called & {"cuda_model", "cuda_scheme"}, f"{test.__name__} builds through neither cuda helper"
        params = {}
        for mark in test.pytestmark:
            if mark.name == "parametrize":
                params[mark.args[0]] = mark.args[1]
        for position in params.get("position", sorted(POSITIONS)):
            assert cuda_scheme(position, "cpu").head_dim >= MIN_CUDA_HEAD_DIM
            for mask_name in params.get("mask_name", ["causal"]):
                model = cuda_model(position, mask_name, "cpu")
                assert model.config.head_dim >= MIN_CUDA_HEAD_DIM, (test.__name__, position, mask_name)
                assert {block.attn.head_dim for block in model.blocks} == {CUDA_HEAD_DIM}


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_cuda_flex_equals_reference_in_bf16(position, mask_name, monkeypatch):
    monkeypatch.setattr(flex, "BLOCK", 128)  # the kernels' own tile
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    model = cuda_model(position, mask_name).train()
    length = 8 * TRAIN_LENGTH * 8 + 40  # beyond L_tr and not a whole number of tiles
    idx = torch.randint(0, 97, (2, length + 1), device="cuda")
    assert model.kernel(idx.device) == "flex"  # what a CUDA run selects
    path = attention_path(model, length)
    takes_flex = mask_name != "causal" or model.position.adds_bias
    assert path["plan"] == ("flex" if takes_flex else "sdpa") and path["fused"], path
    results = {}
    for kernel in ("reference", "flex"):
        model.zero_grad(set_to_none=True)
        model.attention_kernel = kernel
        before = call_counts()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits, _ = model(idx[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), idx[:, 1:].flatten())
        loss.backward()
        calls = call_counts() - before
        assert calls == ({"compiled": 2} if kernel == "flex" and takes_flex else {}), calls  # 2 layers, none eager
        results[kernel] = (logits.float(), {n: p.grad.float() for n, p in model.named_parameters()
                                            if p.grad is not None})
    (ref_logits, ref_grads), (flex_logits, flex_grads) = results["reference"], results["flex"]
    torch.testing.assert_close(flex_logits, ref_logits, rtol=5e-2, atol=5e-2)
    for name, expected in ref_grads.items():
        scale = expected.abs().max().clamp(min=1e-6)
        assert (flex_grads[name] - expected).abs().max() <= 5e-2 * scale, name


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("position", ["alibi", "t5", "kerple", "sandwich", "smoothed_sandwich"])
def test_cuda_flex_plan_builds_no_length_squared_tensor(position):
    length = 4096
    scheme = cuda_scheme(position)
    for mask_name in sorted(MASKS):
        plan = plan_attention(contiguous_positions(0, length, device="cuda"), scheme, mask_for(mask_name),
                              resolve_kernel("auto", "cuda"))
        assert isinstance(plan[0], FlexSpan)
        held = [t for t in vars(plan[0].block_mask).values() if isinstance(t, torch.Tensor)]
        assert max(t.numel() for t in held) < length * length // 64


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("position", ["t5", "kerple"])
def test_cuda_learned_bias_compiles_once(position, monkeypatch):
    """T5 and KERPLE make a new score_mod every forward (their parameters change): the compiled
    FlexAttention must not recompile for each (it would reach the recompile limit, an error)."""
    monkeypatch.setattr(flex, "BLOCK", 128)
    model = cuda_model(position, "blockwise").train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    idx = torch.randint(0, 97, (2, 257), device="cuda")
    graphs = []
    for _ in range(4):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(idx[:, :-1], idx[:, 1:])[1]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        graphs.append(flex.compile_count())
    assert graphs[-1] == graphs[1]
