"""Attention resolution (LEX paper, Sun et al. 2023, Eq. 3-4, 10-11 and section 4.3).

    python -m lenex.lex.resolution --checkpoint M.pt --data DIR --length L --span S --mask blockwise --out R.json

Formulas (pure functions, unit-tested against hand-computed values):
- `attention_resolution(s)`, Eq. 4: R(s) = sum_i e^s[i] (e^s[i] - e^s[i+1]) / (sum_i e^s[i])^2,
  both sums over i = 0..N for s given at distances 0..N+1 (every term of the printed sum is
  defined; the longest distance enters only through its difference).
- `expected_rotary_score(n, head_dim, zeta)`, Eq. 10: g_zeta[n] = sum_i cos(n theta_i) zeta_i^n.

Measurement (section 4.3, Eq. 13): s[n] is the mean pre-softmax attention logit at distance n,
a_ij = <f_q(q_i, i), f_k(k_j, j)> / sqrt(d_head) + bias_ij, read in fp32 from the model's own
attention during its forward pass (`LanguageModel.inspect`): after the position scheme
(rotary/xPos rotation, or the absolute embeddings already in the input) and with the
scheme's additive bias (ALiBi) included, before the mask and the softmax. Only pairs the
evaluation mask allows are averaged (BCA never lets a query see distances of 2 x block or
more). s[n] is averaged over every query position and every text (the LEX-protocol pieces of
the test split); R is computed per layer and head and then averaged over layers and heads.
The JSON also keeps R per layer and R of the head-averaged s per layer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import time

import numpy as np
import torch
from tqdm import tqdm

from ..records.checkpoint import provenance
from ..cli import add_run_options, add_scoring_inputs, run_cli, start_run
from ..data.store import load_split
from ..device import autocast, pick_device
from ..scoring.evaluate import pieces, scored_data_digests, scored_span
from ..files import atomic_write_result
from ..masks import build_mask, default_mask_options
from ..records.provenance import add_expect_argument, load_checked

log = logging.getLogger("lenex.lex.resolution")


def attention_resolution(s) -> float:
    """R(s) of Eq. 4 for s[0..N+1], the expected pre-softmax score by distance: both sums run over
    i = 0..N, so every s[i+1] in the formula is defined. A NaN tail (distances that no query can
    attend, e.g. beyond BCA's reach) is dropped. R is unchanged by adding a constant to s, and
    R <= 1 (the numerator is at most sum e^2s[i] <= (sum e^s[i])^2)."""
    s = np.asarray(s, dtype=np.float64)
    if s.ndim != 1:
        raise ValueError(f"attention resolution needs a 1-D sequence s[n], got shape {s.shape}")
    defined = np.flatnonzero(~np.isnan(s))
    s = s[: defined[-1] + 1] if defined.size else s[:0]
    if s.size < 2 or not np.isfinite(s).all():
        raise ValueError("attention resolution needs finite scores s[n] for at least two distances "
                         "(NaN only as a tail of distances without pairs)")
    e = np.exp(s - s.max())  # shifted: large logits cannot overflow
    return float(np.sum(e[:-1] * (e[:-1] - e[1:])) / e[:-1].sum() ** 2)


def rotary_thetas(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """theta_i = base^(-2i/d) for the d/2 channel pairs i = 0 .. d/2 - 1 (LEX 3.2, Algorithm 1)."""
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"rotary angles need an even head dimension, got {head_dim}")
    return base ** (-2.0 * np.arange(head_dim // 2) / head_dim)


def xpos_zeta_hat(head_dim: int, gamma: float = 0.4) -> np.ndarray:
    """zeta_i = (i / (d/2) + gamma) / (1 + gamma) for i = 0 .. d/2 - 1 (Eq. 11)."""
    return (np.arange(head_dim // 2) / (head_dim / 2) + gamma) / (1 + gamma)


def expected_rotary_score(n, head_dim: int, zeta=1.0, base: float = 10000.0) -> np.ndarray:
    """g_zeta[n] = sum_i cos(n theta_i) zeta_i^n over the d/2 channel pairs (Eq. 10), for an array
    of distances n. zeta: a scalar or one value per pair; xPos's implementation (Eq. 12) uses
    zeta_hat^(1/B), i.e. pass xpos_zeta_hat(d) ** (1 / B)."""
    n = np.asarray(n, dtype=np.float64)[..., None]
    zeta = np.broadcast_to(np.asarray(zeta, dtype=np.float64), (head_dim // 2,))
    return np.sum(np.cos(n * rotary_thetas(head_dim, base)) * zeta ** n, axis=-1)


class DistanceScores:
    """Running sums of a_ij by distance n = i - j over the allowed pairs, per layer and head."""

    def __init__(self, n_layer: int, n_head: int, length: int, allowed: torch.Tensor):
        idx = torch.arange(length, device=allowed.device)
        self.allowed = allowed
        self.distance = (idx[:, None] - idx[None, :])[allowed]
        self.per_text = torch.bincount(self.distance, minlength=length).double()
        self.sums = torch.zeros(n_layer, n_head, length, dtype=torch.float64, device=allowed.device)
        self.texts = 0

    def add(self, layer: int, logits: torch.Tensor) -> None:
        """logits (B, H, L, L) of one layer for B texts."""
        values = logits.double().sum(0)[:, self.allowed]  # (H, pairs)
        self.sums[layer].index_add_(1, self.distance, values)

    def mean(self) -> np.ndarray:
        """s[n] per (layer, head, n); NaN where no allowed pair has distance n."""
        counts = self.per_text * self.texts
        return (self.sums / counts.where(counts > 0, torch.nan)).cpu().numpy()


@torch.no_grad()
def estimate_scores(model, inputs: torch.Tensor, mask, batch: int = 8, progress: bool = False) -> np.ndarray:
    """s[n] (layers, heads, L) of Eq. 13, averaged over the texts `inputs` (n, L) and every query."""
    length = inputs.shape[1]
    mask.check_length(length)
    device = next(model.parameters()).device
    cfg = model.config
    scores = DistanceScores(cfg.n_layer, cfg.n_head, length, mask.dense(length, device=device))
    for start in tqdm(range(0, len(inputs), batch), desc=f"resolution L={length}", unit="batch",
                      mininterval=5, disable=not progress):
        idx = inputs[start:start + batch].to(device)
        with autocast(device):  # the logits themselves are fp32 (LayerView.logits)
            model.inspect(idx, lambda view: scores.add(view.layer, view.logits()), mask=mask)
        scores.texts += len(idx)
    return scores.mean()


def summarize(s: np.ndarray) -> dict:
    """R per layer and head (then averaged), and R of the head-averaged s per layer. A distance
    without pairs is NaN for every layer and head alike (the mask does not depend on them)."""
    per_head = [[attention_resolution(head) for head in layer] for layer in s]
    per_layer_mean_s = [attention_resolution(layer.mean(axis=0)) for layer in s]
    return {
        "resolution": float(np.mean(per_head)),
        "resolution_per_layer": [float(np.mean(layer)) for layer in per_head],
        "resolution_per_head": per_head,
        "resolution_of_head_mean_s": float(np.mean(per_layer_mean_s)),
        "s_mean": [None if np.isnan(v) else float(v) for v in s.mean(axis=(0, 1))],
    }


def run(checkpoint, data_dir, length: int, span: int, out, mask_name="causal", split="test",
        max_tokens=65536, batch_tokens=16384, extra=None, device="auto", expect=None) -> dict:
    model, payload = load_checked(checkpoint, data_dir, expect, out)
    model.to(pick_device(device))
    return score(model, payload, checkpoint, data_dir, length, span, out, mask_name, split, max_tokens,
                 batch_tokens, extra)


def score(model, payload: dict, checkpoint, data_dir, length: int, span: int, out, mask_name="causal",
          split="test", max_tokens=65536, batch_tokens=16384, extra=None) -> dict:
    """R(s) of one cell with a loaded model (load_model, in evaluation mode)."""
    cfg = model.config
    mask = build_mask(mask_name, default_mask_options(mask_name, cfg.train_length))
    mask.check_length(length)
    data = load_split(data_dir, split)
    tokens, skipped = scored_span(data.documents(), span, max_tokens)
    inputs, _ = pieces(tokens, length, span, data.meta["dataset"]["eot_token"])
    started = time.time()
    # The (B, H, L, L) logits of one layer dominate memory: keep them near 2^27 values.
    batch = max(1, min(batch_tokens // length, 2**27 // (cfg.n_head * length * length)))
    s = estimate_scores(model, inputs, mask, batch, progress=True)
    result = summarize(s)
    result.update(
        metric="resolution", length=length, span=span, train_length=cfg.train_length, mask=mask_name,
        mask_options=mask.options(), split=split, texts=int(len(inputs)), tokens=int(inputs.numel()),
        documents_skipped=skipped, scored_tokens_sha256=hashlib.sha256(tokens.astype(np.uint16).tobytes()).hexdigest(),
        logits="q.k/sqrt(d_head) after the position scheme, plus its bias; before mask and softmax",
        averaging="s[n] over texts and queries per layer and head; R per layer and head, then the mean",
        **scored_data_digests(data_dir, data), **provenance(checkpoint, model, payload), seconds=time.time() - started,
        **(extra or {}),
    )
    atomic_write_result(out, result)
    log.info("L=%d mask=%s resolution=%.4f over %d texts", length, mask_name, result["resolution"], len(inputs))
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_scoring_inputs(parser, length_help="text length in tokens")
    parser.add_argument("--span", type=int, required=True, help="scored span (LEX protocol), a multiple of --length")
    parser.add_argument("--mask", default="causal", help="attention mask (blockwise: blocks of L_tr/2)")
    add_run_options(parser)
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    run(args.checkpoint, args.data, args.length, args.span, args.out, args.mask, args.split, args.max_tokens,
        args.batch_tokens, json.loads(args.extra), args.device, args.expect)


if __name__ == "__main__":
    run_cli(main)
