"""The compiled FlexAttention path, on the CPU: what CUDA runs, short of its fused kernels.

For every position scheme x mask lenex registers, at heads of 16 (the least FlexAttention's CUDA
kernel takes), a one-layer model's loss and gradients through `flex_attend`'s compiled call
(torch.compile with aot_eager, which traces the forward and backward graphs inductor would fuse)
against the reference path. Also: the recompile limit and reaching it, the compiled-graph count,
the plan a model's forward takes, and whether it is fused (`attention_path`).
"""

from __future__ import annotations

import types
from collections import Counter

import pytest
import torch
import torch.nn.attention.flex_attention as flex_module

import lenex.model.flex as flex
import lenex.model.transformer as transformer
from lenex.config import ModelConfig
from lenex.masks import MASKS, build_mask, default_mask_options
from lenex.model import LanguageModel
from lenex.model.attention import PLAN_KINDS, attention_path, model_plan, plan_kind
from lenex.positions import POSITIONS

pytestmark = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")

TRAIN_LENGTH, HEADS, HEAD_DIM = 16, 2, flex.MIN_CUDA_HEAD_DIM
# 4.5 training lengths over tiles of 32: three tile rows, the last one partial.
LENGTH, TILE = 72, 32
# fp32 on both paths; the compiled graph sums in another order than SDPA's kernel.
LOSS_TOLERANCE = 1e-6  # absolute, on a loss of about ln(97) = 4.6 (measured: 0)
GRAD_TOLERANCE = 1e-5  # of the largest |gradient| of each parameter (measured: 1.2e-6 at worst)


def _no_device_check(*args, **kwargs):
    """Stands in for FlexAttention's refusal of a CPU backward (the traced math runs). One function
    for every test: dynamo guards on it, so a new one per test would recompile each graph."""


@pytest.fixture(scope="module", autouse=True)
def fresh_dynamo():
    """Graph counts start from none, and this module's graphs do not outlive it."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def compiled_on_cpu(monkeypatch):
    monkeypatch.setattr(flex, "BLOCK", TILE)
    monkeypatch.setattr(flex, "COMPILED_ON", ("cpu",))
    monkeypatch.setattr(flex, "COMPILE_BACKEND", "aot_eager")
    monkeypatch.setattr(flex_module, "_validate_device", _no_device_check)
    monkeypatch.delenv(flex.RECOMPILE_LIMIT_ENVIRONMENT, raising=False)


def mask_for(name: str):
    options = {"window": TRAIN_LENGTH} if name == "windowed" else default_mask_options(name, TRAIN_LENGTH)
    return build_mask(name, options)


def tiny_model(position: str, mask: str = "causal", dropout: float = 0.0) -> LanguageModel:
    torch.manual_seed(0)
    options = {"interpolate_to": 2048} if position == "learned" else {}  # read beyond L_tr (LEX's protocol)
    cfg = ModelConfig(n_layer=1, d_model=HEADS * HEAD_DIM, n_head=HEADS, d_ff=64, vocab_size=97, position=position,
                      position_options=options, mask=mask, mask_options={"window": TRAIN_LENGTH} if mask == "windowed" else {},
                      train_length=TRAIN_LENGTH, dropout=dropout)
    model = LanguageModel(cfg).train()
    with torch.no_grad():  # learned biases (T5, KERPLE) far from their small init, so they matter
        for parameter in model.position.parameters():
            parameter.normal_(std=1.0)
    return model


def loss_and_grads(model, idx, kernel: str):
    model.zero_grad(set_to_none=True)
    model.attention_kernel = kernel
    before = flex.call_counts()
    loss = model(idx[:, :-1], idx[:, 1:])[1]
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return loss.item(), grads, flex.call_counts() - before


@pytest.mark.parametrize("mask_name", sorted(MASKS))
@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_compiled_flex_forward_and_backward_equal_reference(position, mask_name, compiled_on_cpu):
    model = tiny_model(position, mask_name)
    model.attention_kernel = "flex"
    if mask_name == "causal" and not model.position.adds_bias:
        assert plan_kind(model_plan(model, LENGTH)) == "sdpa"
        pytest.skip("no bias under the causal mask: the flex setting keeps SDPA's is_causal call, no FlexAttention")
    assert plan_kind(model_plan(model, LENGTH)) == "flex"
    idx = torch.randint(0, 97, (2, LENGTH + 1), generator=torch.Generator().manual_seed(1))
    ref_loss, ref_grads, ref_calls = loss_and_grads(model, idx, "reference")
    flex_loss, flex_grads, flex_calls = loss_and_grads(model, idx, "flex")
    assert ref_calls == Counter() and flex_calls == Counter(compiled=1)  # one layer, compiled, never eager
    assert flex.compile_count() >= 1
    assert abs(flex_loss - ref_loss) <= LOSS_TOLERANCE, (flex_loss, ref_loss)
    assert flex_grads.keys() == ref_grads.keys()
    for name, expected in ref_grads.items():
        scale = expected.abs().max().clamp(min=1e-12)
        assert (flex_grads[name] - expected).abs().max() <= GRAD_TOLERANCE * scale, name


def test_a_repeated_call_reuses_its_graph_and_the_limit_is_an_error(compiled_on_cpu, monkeypatch):
    torch._dynamo.reset()
    monkeypatch.setenv(flex.RECOMPILE_LIMIT_ENVIRONMENT, "2")
    model = tiny_model("alibi")
    model.attention_kernel = "flex"
    idx = torch.randint(0, 97, (1, LENGTH + 1), generator=torch.Generator().manual_seed(2))

    def train_step(mask_name):
        model(idx[:, :-1], idx[:, 1:], mask=mask_for(mask_name))[1].backward()

    assert flex.compile_count() == 0
    train_step("causal")
    assert flex.compile_count() == 1
    train_step("causal")  # same score_mod, mask and shape: no new graph
    assert flex.compile_count() == 1
    train_step("blockwise")
    assert flex.compile_count() == 2
    with pytest.raises(RuntimeError, match=r"recompile limit \(2 graphs, 2 held\).*LENEX_FLEX_RECOMPILE_LIMIT"):
        train_step("sliding")  # a third graph: never FlexAttention's unfused path
    assert flex.call_counts()["eager"] == 0
    torch._dynamo.reset()


def test_the_recompile_limit_settings_under_this_torch_and_older_names(monkeypatch):
    import torch._dynamo.config as config

    monkeypatch.delenv(flex.RECOMPILE_LIMIT_ENVIRONMENT, raising=False)
    assert flex.RECOMPILE_LIMIT == 192
    settings = flex._limits()
    assert settings["recompile_limit"] == 192 and settings["fail_on_recompile_limit_hit"] is True
    assert settings["accumulated_recompile_limit"] == max(192, config.accumulated_recompile_limit)
    older = types.SimpleNamespace(cache_size_limit=8, fail_on_cache_limit_hit=False)
    assert flex._first_config(older, "recompile_limit", "cache_size_limit") == "cache_size_limit"
    with pytest.raises(RuntimeError, match="none of the settings fail_on_recompile_limit_hit"):
        flex._first_config(types.SimpleNamespace(), "fail_on_recompile_limit_hit")
    monkeypatch.setenv(flex.RECOMPILE_LIMIT_ENVIRONMENT, "500")
    assert flex._limits()["recompile_limit"] == 500 and flex._limits()["accumulated_recompile_limit"] == 500
    monkeypatch.setenv(flex.RECOMPILE_LIMIT_ENVIRONMENT, "many")
    with pytest.raises(ValueError, match="LENEX_FLEX_RECOMPILE_LIMIT='many'"):
        flex.recompile_limit()


@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_model_plan_is_the_plan_the_forward_attends_through(position, monkeypatch):
    seen = []

    def recording_attend(q, k, v, plan, dropout_p=0.0):
        seen.append(plan)
        return attend(q, k, v, plan, dropout_p)

    attend = transformer.attend
    monkeypatch.setattr(transformer, "attend", recording_attend)
    model = tiny_model(position).eval()
    idx = torch.randint(0, 97, (1, LENGTH))
    # The flex setting under every mask (flex, sdpa or reference plans), the reference one under one.
    for kernel, mask_name in [("reference", "sliding"), *(("flex", name) for name in sorted(MASKS))]:
        model.attention_kernel = kernel
        seen.clear()
        with torch.no_grad():
            model(idx, mask=mask_for(mask_name))
        planned = model_plan(model, LENGTH, mask_for(mask_name))
        assert [plan_kind(p) for p in seen] == [plan_kind(planned)]
        assert len(seen[0]) == len(planned) and plan_kind(planned) in PLAN_KINDS


def test_attention_path_says_which_path_runs_fused(monkeypatch):
    monkeypatch.setattr(flex, "BLOCK", TILE)
    rope, alibi = tiny_model("rope"), tiny_model("alibi")
    rope.attention_kernel = alibi.attention_kernel = "reference"
    # SDPA's CPU flash kernel takes is_causal with no mask; no fused CPU kernel takes an (H, L, L) float mask.
    assert attention_path(rope, LENGTH) | {"compiled_graphs": None} == {
        "plan": "sdpa", "spans": 1, "fused": True, "fallback": None, "compiled_graphs": None,
        "why": "SDPA's fused kernels take every span on cpu in torch.float32"}
    reference = attention_path(alibi, LENGTH)
    assert reference["plan"] == "reference" and reference["fused"] is False
    assert "refuses span 0:72" in reference["why"] and "No available kernel" in reference["why"]
    alibi.attention_kernel = "flex"
    eager = attention_path(alibi, LENGTH)
    assert (eager["plan"], eager["fused"], eager["why"]) == ("flex", False, "FlexAttention runs eagerly on cpu (unfused)")
    monkeypatch.setattr(flex, "COMPILED_ON", ("cpu",))
    monkeypatch.setattr(flex, "COMPILE_BACKEND", "aot_eager")
    assert attention_path(alibi, LENGTH)["why"] == "FlexAttention compiled with aot_eager (traced, not fused)"
    monkeypatch.setattr(flex, "COMPILE_BACKEND", "inductor")
    assert attention_path(alibi, LENGTH)["fused"] is True  # the record only; nothing is compiled here
    monkeypatch.setattr(flex, "COMPILED_ON", ())
    assert attention_path(alibi, LENGTH, compiled_with="inductor")["why"] == \
        "FlexAttention compiled with inductor inside the model's graph on cpu"
    assert attention_path(alibi, LENGTH, compiled_with="aot_eager")["fused"] is False
    rope.attention_kernel = "flex"
    assert attention_path(rope, LENGTH)["fallback"] == "no bias under the causal mask: SDPA's is_causal call"
    dropping = tiny_model("alibi", dropout=0.1)
    dropping.attention_kernel = "flex"
    path = attention_path(dropping, LENGTH)
    assert path["plan"] == "reference" and "dropout" in path["fallback"]


def test_the_fused_probe_leaves_learned_biases_without_gradients():
    model = tiny_model("t5")
    model.attention_kernel = "reference"
    assert attention_path(model, LENGTH)["plan"] == "reference"
    assert all(p.grad is None for p in model.parameters())


def test_heads_below_sixteen_leave_cuda_flex_for_the_reference_path(monkeypatch):
    assert "head dimension 8 is below 16" in flex.kernel_refusal("cuda", 8)
    assert flex.kernel_refusal("cuda", 16) is None
    assert flex.kernel_refusal("cpu", 8) is None  # the CPU lowering takes any head dimension
    monkeypatch.setattr(flex, "COMPILED_ON", ())
    assert flex.kernel_refusal("cuda", 8) is None  # eager FlexAttention on CUDA takes it too
