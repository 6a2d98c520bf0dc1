"""How much GPU memory the segmented paper's released models take to continue training.

Pure formulas (no torch), tested against hand computations and a meta-device build:
- `RELEASED`: the architectures of the five checkpoints the paper and the `paper`/`gpu` presets
  fetch (their published configs);
- `parameters`, `counted_as_untied`: the parameter count, and the count the paper's Table 1
  reports, which adds a tied embedding again as an output layer (Bloom-1b1: 1.07B -> "1.45B";
  GPT-2 XL: 1.56B -> "1.64B"), so the preset's `bloom-1b1` is the paper's Bloom;
- `training_bytes`: a continued-pretraining step's peak, in parts: fp32 master weights, their
  gradients and AdamW's two moments (16 bytes a parameter: at the paper's lr of 2e-5 a bf16 weight
  would round most updates away, its 8-bit mantissa resolving 0.4 %), the activations kept for the
  backward pass (every layer's, or with activation checkpointing one layer's input per layer plus
  one layer recomputed), the attention scores of eager attention (Bloom's only implementation in
  transformers), and the logits (whole and upcast to fp32, or one chunk at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30


@dataclass(frozen=True)
class Architecture:
    n_layer: int
    d_model: int
    n_head: int
    d_ff: int
    vocab: int
    tied: bool  # input embedding reused as the output layer


RELEASED = {
    "openai-community/gpt2": Architecture(12, 768, 12, 3072, 50257, tied=True),
    "openai-community/gpt2-xl": Architecture(48, 1600, 25, 6400, 50257, tied=True),
    "EleutherAI/pythia-160m": Architecture(12, 768, 12, 3072, 50304, tied=False),
    "EleutherAI/pythia-1.4b": Architecture(24, 2048, 16, 8192, 50304, tied=False),
    "bigscience/bloom-1b1": Architecture(24, 1536, 16, 6144, 250880, tied=True),
}


def parameters(arch: Architecture) -> int:
    """Weights of the layers (4 d^2 attention + 2 d d_ff feed-forward) and the embedding(s);
    biases, norms and position tables are left out (under 1 % for these models)."""
    layers = arch.n_layer * (4 * arch.d_model ** 2 + 2 * arch.d_model * arch.d_ff)
    return layers + arch.vocab * arch.d_model * (1 if arch.tied else 2)


def counted_as_untied(arch: Architecture) -> int:
    """The parameter count with a tied embedding counted twice (as input and as output layer)."""
    return parameters(arch) + (arch.vocab * arch.d_model if arch.tied else 0)


@dataclass(frozen=True)
class MemorySettings:
    micro_batch: int
    length: int
    activation_checkpointing: bool = False
    loss_chunk_tokens: int | None = None  # None: the whole (tokens x vocab) logits at once
    activation_bytes: int = 2  # bf16 autocast


def training_bytes(arch: Architecture, settings: MemorySettings) -> dict[str, int]:
    """The parts of one training step's peak memory, in bytes (see the module's docstring)."""
    b, t, d = settings.micro_batch, settings.length, arch.d_model
    tokens, act = b * t, settings.activation_bytes
    # Per layer kept for backward: about 16 d values a token (inputs of the norms, q/k/v, attention
    # output, the feed-forward's 4d hidden twice) and the eager attention's scores and probabilities.
    layer_activations = tokens * 16 * d * act
    layer_scores = 2 * b * arch.n_head * t * t * act
    if settings.activation_checkpointing:
        activations = arch.n_layer * tokens * d * act + layer_activations + layer_scores
    else:
        activations = arch.n_layer * (layer_activations + layer_scores)
    rows = tokens if settings.loss_chunk_tokens is None else min(tokens, settings.loss_chunk_tokens)
    # The logits in bf16, their fp32 copy, the fp32 log-softmax and its gradient.
    logits = rows * arch.vocab * (act + 3 * 4)
    return {"weights_grads_adamw": 16 * parameters(arch), "activations": activations, "logits": logits}


def peak_gib(arch: Architecture, settings: MemorySettings) -> float:
    return sum(training_bytes(arch, settings).values()) / GIB
