"""Training throughput: lenex's training step beside Hugging Face GPT-2 and fairseq's
transformer_lm of the same shape, vocabulary and batch, in one process, timed round-robin.

lenex's step is the trainer's: LanguageModel forward/backward, grad-norm clipping and the
optimizer from `lenex.training.train.build_optimizer` (fused AdamW where the build has it). The peers
get the same AdamW (fused where available), the same clipping, dropout 0 like lenex's presets,
and bf16 autocast on GPU like lenex's trainer. Two groups are timed, each round-robin:
  peers:   lenex (learned absolute positions, as GPT-2) / HF GPT-2 / fairseq (if installed)
  schemes: lenex with learned, rope, xpos and alibi positions
Model FLOPs per token = 6 N + 12 n_layer d_model T (PaLM's count, attention included), with N the
parameters minus position tables; the same for every contender of a shape.
"""

from __future__ import annotations

import argparse
import logging
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from tqdm import tqdm

from lenex.config import ModelConfig, TrainConfig
from lenex.device import autocast
from lenex.model import LanguageModel
from lenex.training.train import build_optimizer

from .common import interleaved, markdown_table, summary

log = logging.getLogger("benchmarks.train")

VOCAB = 50257
SHAPES = {  # name: (layers, width, heads, tokens per sequence)
    "tiny": (2, 64, 4, 64),
    "small": (6, 384, 6, 256),
    "paper": (12, 768, 12, 512),
}
CPU_BATCH = {"tiny": 16, "small": 8, "paper": 2}  # the cpu-anchors batches
GPU_BATCH = {"tiny": 64, "small": 32, "paper": 16}
SCHEMES = ["learned", "rope", "xpos", "alibi"]
LR, CLIP = 1e-4, 2.0


def _adamw(params, device):
    try:
        return torch.optim.AdamW(params, lr=LR, fused=True)
    except (RuntimeError, TypeError):
        return torch.optim.AdamW(params, lr=LR)


def _step_fn(model, optimizer, loss_of, device):
    def step():
        with autocast(device):
            loss = loss_of()
        loss.backward()
        loss.item()  # the trainer logs every step's loss: one sync, as in training
        torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP).item()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def lenex_contender(shape: str, position: str, x, y, device):
    layers, width, heads, tokens = SHAPES[shape]
    cfg = ModelConfig(n_layer=layers, d_model=width, n_head=heads, d_ff=4 * width, vocab_size=VOCAB, dropout=0.0,
                      position=position, train_length=tokens)
    model = LanguageModel(cfg).to(device).train()
    optimizer = build_optimizer(model, TrainConfig(lr=LR, grad_clip=CLIP))
    return model, _step_fn(model, optimizer, lambda: model(x, y)[1], device)


def hf_contender(shape: str, x, device):
    from transformers import GPT2Config, GPT2LMHeadModel

    layers, width, heads, tokens = SHAPES[shape]
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=tokens, n_embd=width, n_layer=layers, n_head=heads,
                     n_inner=4 * width, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel._from_config(cfg, attn_implementation="sdpa").to(device).train()
    return model, _step_fn(model, _adamw(model.parameters(), device), lambda: model(input_ids=x, labels=x).loss, device)


def fairseq_contender(shape: str, x, y, device):
    """fairseq's transformer_lm, flags as in cpu-anchors.md; None (with the reason) if fairseq is absent."""
    try:
        from fairseq.data import Dictionary
        from fairseq.models.transformer_lm import TransformerLanguageModel, base_lm_architecture
    except ImportError as err:
        return None, f"fairseq not installed ({err}): run `make setup-fairseq` (the project venv)"
    layers, width, heads, tokens = SHAPES[shape]
    dictionary = Dictionary()
    while len(dictionary) < VOCAB:
        dictionary.add_symbol(f"w{len(dictionary)}")
    args = argparse.Namespace(
        decoder_layers=layers, decoder_embed_dim=width, decoder_ffn_embed_dim=4 * width,
        decoder_attention_heads=heads, decoder_input_dim=width, decoder_output_dim=width,
        share_decoder_input_output_embed=True, decoder_learned_pos=True, decoder_normalize_before=True,
        activation_fn="gelu", dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        tokens_per_sample=tokens, max_target_positions=tokens,
    )
    base_lm_architecture(args)
    task = SimpleNamespace(source_dictionary=dictionary, target_dictionary=dictionary)
    model = TransformerLanguageModel.build_model(args, task).to(device).train()

    def loss_of():
        logits = model(x)[0]
        return F.cross_entropy(logits.float().flatten(0, 1), y.flatten())

    return model, _step_fn(model, _adamw(model.parameters(), device), loss_of, device)


def model_flops_per_token(model: LanguageModel) -> float:
    cfg = model.config
    matmul_params = sum(p.numel() for n, p in model.named_parameters() if not n.startswith("position."))
    return 6 * matmul_params + 12 * cfg.n_layer * cfg.d_model * cfg.train_length


def _batch(shape, batch, device):
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(4, VOCAB, (batch, SHAPES[shape][3] + 1), generator=generator)  # >= 4: no fairseq specials
    return tokens[:, :-1].contiguous().to(device), tokens[:, 1:].contiguous().to(device)


def _time_group(contenders: dict, tokens_per_step: int, reps: int, warmup: int, device, label: str) -> dict:
    with tqdm(total=reps * len(contenders), desc=label, unit="step", leave=False) as progress:
        seconds = interleaved(contenders, reps, warmup, device, progress)
    return {name: {"tokens_per_s": summary([tokens_per_step / s for s in values]), "step_seconds": summary(values)}
            for name, values in seconds.items()}


def run(device: torch.device, quick: bool, peak_flops: float, shapes=None, with_fairseq: bool = True) -> dict:
    shapes = shapes or (["tiny"] if quick else list(SHAPES))
    results = {"peak_flops": peak_flops, "shapes": {}}
    for shape in shapes:
        batch = 4 if quick else (GPU_BATCH if device.type == "cuda" else CPU_BATCH)[shape]
        reps = 2 if quick else (10 if device.type == "cuda" else {"tiny": 10, "small": 6, "paper": 5}[shape])
        warmup = 1 if quick else (3 if device.type == "cuda" else 1)
        x, y = _batch(shape, batch, device)
        tokens_per_step = x.numel()
        entry = {"layers_width_heads_tokens": SHAPES[shape], "batch": batch, "tokens_per_step": tokens_per_step}
        # Peers.
        torch.manual_seed(0)
        lenex_model, lenex_step = lenex_contender(shape, "learned", x, y, device)
        flops_per_token = model_flops_per_token(lenex_model)
        hf_model, hf_step = hf_contender(shape, x, device)
        peers = {"lenex": lenex_step, "hf_gpt2": hf_step}
        entry["params"] = {"lenex": lenex_model.num_parameters(), "hf_gpt2": sum(p.numel() for p in hf_model.parameters())}
        fs_model, fs_step = fairseq_contender(shape, x, y, device) if with_fairseq and not quick else (None, "skipped in --quick")
        if fs_model is None:
            entry["fairseq"] = f"skipped: {fs_step}"
            log.warning("fairseq %s", entry["fairseq"])
        else:
            peers["fairseq"] = fs_step
            entry["params"]["fairseq"] = sum(p.numel() for p in fs_model.parameters())
        entry["peers"] = _time_group(peers, tokens_per_step, reps, warmup, device, f"peers {shape}")
        del peers, lenex_step, hf_step, fs_step, hf_model, fs_model
        # Position schemes.
        schemes = {}
        for position in (["learned", "alibi"] if quick else SCHEMES):
            schemes[position] = lenex_contender(shape, position, x, y, device)[1]
        entry["schemes"] = _time_group(schemes, tokens_per_step, reps, warmup, device, f"schemes {shape}")
        del schemes
        entry["model_flops_per_token"] = flops_per_token
        for group in ("peers", "schemes"):
            for name, r in entry[group].items():
                r["mfu"] = r["tokens_per_s"]["median"] * flops_per_token / peak_flops
        base = entry["peers"]["hf_gpt2"]["tokens_per_s"]["median"]
        entry["ratio_lenex_over_hf"] = entry["peers"]["lenex"]["tokens_per_s"]["median"] / base
        if "fairseq" in entry["peers"]:
            entry["ratio_lenex_over_fairseq"] = (entry["peers"]["lenex"]["tokens_per_s"]["median"]
                                                 / entry["peers"]["fairseq"]["tokens_per_s"]["median"])
        learned = entry["schemes"]["learned"]["tokens_per_s"]["median"]
        for name, r in entry["schemes"].items():
            r["relative_to_learned"] = r["tokens_per_s"]["median"] / learned
        results["shapes"][shape] = entry
        log.info("%s: lenex/HF = %.2f", shape, entry["ratio_lenex_over_hf"])
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return results


def table(result: dict) -> str:
    rows = []
    for shape, entry in result["shapes"].items():
        hf = entry["peers"]["hf_gpt2"]["tokens_per_s"]["median"]
        for group in ("peers", "schemes"):
            for name, r in entry[group].items():
                t = r["tokens_per_s"]
                label = name if group == "peers" else f"lenex {name}"
                ratio = t["median"] / hf if group == "peers" else r["relative_to_learned"]
                rows.append([shape, group, label, f"{t['median']:.0f} [{t['min']:.0f}-{t['max']:.0f}]",
                             f"{100 * r['mfu']:.1f}%", f"{ratio:.2f}"])
        if "fairseq" in entry:
            rows.append([shape, "peers", "fairseq", entry["fairseq"], "", ""])
    return (f"Training throughput (MFU against the measured peak {result['peak_flops'] / 1e9:.0f} GFLOP/s; "
            "ratio: peers / HF GPT-2, schemes / lenex learned)\n"
            + markdown_table(["shape", "group", "contender", "tokens/s median [min-max]", "MFU", "ratio"], rows))
