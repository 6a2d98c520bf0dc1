"""Decoder-only pre-LayerNorm transformer language model (GPT style)."""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..config import ModelConfig
from ..masks import AttentionMask, build_mask, default_mask_options
from ..positions import PositionScheme, build_position, contiguous_positions
from .attention import Span, additive_mask, attend, plan_attention
from .fused_loss import LogitsWorkspace, TiedGradient, linear_cross_entropy, tied_lookup
from .inspection import CacheSlot, KeyValueCache, LayerView
from .kernels import check_kernel, resolve_kernel


class SelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_head, self.head_dim, self.dropout = cfg.n_head, cfg.head_dim, cfg.dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def heads(self, x):
        """(B, T, D) -> q, k, v as (B, H, T, hd), before any position rotation."""
        batch, length, _ = x.shape
        return self.qkv(x).view(batch, length, 3, self.n_head, self.head_dim).permute(2, 0, 3, 1, 4)

    def merge(self, out):
        """(B, H, T, hd) attention output -> (B, T, D) after the output projection."""
        batch, _, length, _ = out.shape
        return self.proj(out.transpose(1, 2).reshape(batch, length, -1))

    def forward(self, x, positions, scheme: PositionScheme, plan, view: LayerView | None = None,
                cache: CacheSlot | None = None):
        """view: told the rotated q, k (`LanguageModel.inspect`); cache: this layer's keys and values
        of earlier tokens, attended before the new ones (`LanguageModel.step`)."""
        q, k, v = self.heads(x)
        k_pos = positions
        if cache is not None:
            k, v = cache.extend(k, v)
            k_pos = cache.cache.key_positions
        scaled = plan[0].q_scale is not None
        if scaled:  # scales too wide for one reference: attend() applies them per span
            q, k = scheme.rotate_unscaled(q, k, positions, k_pos)
        else:
            q, k = scheme.rotate(q, k, positions, k_pos)
        if view is not None:
            view.record((q, k), exact=not scaled and q.dtype == torch.float32 and k.dtype == torch.float32)
        return self.merge(attend(q, k, v, plan, self.dropout if self.training else 0.0))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln_attn = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln_mlp = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, positions, scheme, plan, view=None, cache=None):
        x = x + self.drop(self.attn(self.ln_attn(x), positions, scheme, plan, view, cache))
        return x + self.drop(self.mlp(self.ln_mlp(x)))


class TiedEmbedding(nn.Embedding):
    """Token embedding whose weight is also the output head. Given a `TiedGradient` slot (fused
    CPU training loss) the lookup's backward adds its rows into the head's gradient in place of
    autograd's zero-filled (V x D) embedding gradient and the sum of the two (see fused_loss)."""

    def forward(self, idx: torch.Tensor, tied: TiedGradient | None = None) -> torch.Tensor:
        return super().forward(idx) if tied is None else tied_lookup(idx, self.weight, tied)


class LanguageModel(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.config = cfg
        self.tok_emb = TiedEmbedding(cfg.vocab_size, cfg.d_model)
        self.position = build_position(
            cfg.position,
            cfg.position_options,
            d_model=cfg.d_model,
            n_heads=cfg.n_head,
            head_dim=cfg.head_dim,
            train_length=cfg.train_length,
            module=cfg.position_module,
        )
        self.train_mask = build_mask(cfg.mask, {**default_mask_options(cfg.mask, cfg.train_length), **cfg.mask_options})
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.loss_workspace = LogitsWorkspace()  # reused by the fused CPU loss across steps
        self.attention_kernel: str | None = None  # auto | reference | flex; None: the process default (kernels.py)
        self.apply(self._init_weights)
        # GPT-2 scaling of residual projections keeps the residual stream's variance flat in depth.
        for block in self.blocks:
            for proj in (block.attn.proj, block.mlp[2]):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def hidden(self, idx: torch.Tensor, positions: torch.Tensor | None = None, mask: AttentionMask | None = None,
               tied: TiedGradient | None = None, see=None):
        """Final-layer hidden states (B, T, D). `positions` defaults to 0..T-1 (original ids may have gaps);
        the default is a marked run, for which the position scheme reuses its cached tables. `tied`:
        the fused loss's slot for the head gradient (training on CPU only). `see`: see `inspect`."""
        if positions is None:
            positions = contiguous_positions(0, idx.shape[1], device=idx.device)
        mask = mask or self.train_mask
        x = self.drop(self._embed(idx, positions, tied))
        plan = plan_attention(positions, self.position, mask, self.kernel(idx.device),
                              self.config.dropout if self.training else 0.0)
        for layer, block in enumerate(self.blocks):
            if see is None:
                x = block(x, positions, self.position, plan)
            else:
                view = LayerView(layer, block, x, positions, self.position, mask)
                x = block(x, positions, self.position, plan, view)
                see(view)
        return self.ln_f(x)

    def kernel(self, device) -> str:
        """The attention kernel this model's forward asks for on `device`: reference or flex."""
        return resolve_kernel(None if self.attention_kernel is None else check_kernel(self.attention_kernel), device)

    def _embed(self, idx, positions, tied=None):
        x = self.tok_emb(idx, tied)
        added = self.position.embed(positions)
        return x if added is None else x + added

    def inspect(self, idx: torch.Tensor, see, positions: torch.Tensor | None = None,
                mask: AttentionMask | None = None) -> torch.Tensor:
        """The forward pass of `hidden`, calling `see(view)` after each block with its `LayerView`
        (layer input; attention logits and probabilities on demand). Returns the final hidden states."""
        return self.hidden(idx, positions, mask, see=see)

    def step(self, idx: torch.Tensor, q_pos: torch.Tensor, k_pos: torch.Tensor, allowed: torch.Tensor,
             cache: KeyValueCache, hidden_from: int = 0) -> torch.Tensor:
        """Read the tokens idx (B, T) at positions q_pos (T,) with a key/value cache: each layer attends
        to its cached keys followed by the new ones, at positions k_pos, where `allowed` (T, len(k_pos))
        is True, with the scheme's bias; the cache then keeps its last `cache.keep`. Returns the final
        hidden states of tokens hidden_from.. of the chunk (earlier ones are only read)."""
        cache.key_positions = k_pos
        bias = self.position.bias(q_pos, k_pos)
        plan = [Span(slice(0, q_pos.shape[-1]), slice(0, k_pos.shape[-1]), additive_mask(allowed, bias))]
        x = self.drop(self._embed(idx, q_pos))
        for block, slot in zip(self.blocks, cache.slots):
            x = block(x, q_pos, self.position, plan, cache=slot)
        return self.ln_f(x[:, hidden_from:])

    def new_cache(self, keep: int) -> KeyValueCache:
        """An empty key/value cache for `step` that keeps each layer's last `keep` tokens."""
        return KeyValueCache(len(self.blocks), keep)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden @ self.tok_emb.weight.T  # tied input/output embeddings

    def _fused_loss_applies(self) -> bool:
        # CPU fp32 training only: on GPU the bf16 autocast path is already cheap and keeps its casts.
        weight = self.tok_emb.weight
        return (torch.is_grad_enabled() and weight.device.type == "cpu" and weight.dtype == torch.float32
                and not torch.is_autocast_enabled("cpu"))

    def forward(self, idx, targets=None, positions=None, mask=None, loss_mask=None):
        """(logits, loss). When training on CPU with targets, the loss comes from the fused
        projection + cross-entropy (`fused_loss`), which never builds the logits: logits is None."""
        if targets is not None and self._fused_loss_applies():
            tied = TiedGradient()
            hidden = self.hidden(idx, positions, mask, tied)
            flat_mask = None if loss_mask is None else loss_mask.flatten()
            return None, linear_cross_entropy(hidden.flatten(0, 1), self.tok_emb.weight, targets.flatten(), flat_mask,
                                              workspace=self.loss_workspace, tied=tied)
        hidden = self.hidden(idx, positions, mask)
        logits = self.logits(hidden)
        if targets is None:
            return logits, None
        losses = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
        if loss_mask is None:
            return logits, losses.mean()
        weights = loss_mask.flatten().to(losses.dtype)
        return logits, (losses * weights).sum() / weights.sum()

    @torch.no_grad()
    def token_nll(self, idx, targets, positions=None, mask=None, vocab_chunk: int = 1024) -> torch.Tensor:
        """Per-token negative log-likelihood (B, T). Tokens are projected to the vocabulary
        `vocab_chunk` at a time, so evaluation never holds a (B*T x 50257) logits matrix."""
        hidden = self.hidden(idx, positions, mask).flatten(0, 1)
        flat_targets = targets.flatten()
        out = torch.empty(flat_targets.shape, dtype=torch.float32, device=idx.device)
        for start in range(0, len(flat_targets), vocab_chunk):
            rows = slice(start, start + vocab_chunk)
            out[rows] = F.cross_entropy(self.logits(hidden[rows]).float(), flat_targets[rows], reduction="none")
        return out.view(targets.shape)
