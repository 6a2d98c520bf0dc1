"""Empirical receptive field (receptive-field paper, Section 5.1); measured for every model by
`python -m lenex.receptive_field.evaluate --erf-out ...`.

For the prediction of the last token, g_m is the gradient of its loss with respect to the input
embedding e_m; s_m = ||g_m||_2 / sum_n ||g_n||_2 and c_m = sum_{n >= m} s_n (so c_1 = 1 and c
falls towards the end). The ERF is the number of most recent tokens whose cumulative share first
exceeds 0.99: with m* the last index where c_m > 0.99, ERF = L - m* + 1 (the paper's
"min{m | c_m > 0.99}", counted back from the token being predicted). s is averaged over segments.
A model whose attention is windowed (size w, R layers) cannot see further back than R(w - 1)
tokens, so its ERF never exceeds the theoretical receptive field TRF = w·R.
"""

from __future__ import annotations


import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

THRESHOLD = 0.99


def normalized_gradient(grad_norms) -> np.ndarray:
    """s_m = ||g_m|| / sum_n ||g_n||, over the last axis."""
    norms = np.asarray(grad_norms, dtype=np.float64)
    total = norms.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("every gradient is zero: the loss does not depend on the inputs")
    return norms / total


def cumulative_from_end(s) -> np.ndarray:
    """c_m = sum_{n >= m} s_n (c[0] = 1 for normalized s; non-increasing)."""
    return np.cumsum(np.asarray(s, dtype=np.float64)[..., ::-1], axis=-1)[..., ::-1]


def empirical_receptive_field(c, threshold: float = THRESHOLD) -> int:
    """How many of the most recent tokens it takes for c to pass `threshold`."""
    c = np.asarray(c, dtype=np.float64)
    above = np.flatnonzero(c > threshold)
    if len(above) == 0:
        raise ValueError(f"c never exceeds {threshold}: it is not a cumulative normalized gradient")
    return int(len(c) - above.max())


def theoretical_receptive_field(config) -> int | None:
    """TRF = w·R for windowed attention, None for a model that attends to every earlier token."""
    window = (config.mask_options or {}).get("window")
    return int(window) * config.n_layer if config.mask in ("windowed", "sliding") and window else None


def input_gradient_norms(model, inputs: torch.Tensor, targets: torch.Tensor, mask=None) -> torch.Tensor:
    """||dL/de_m||_2 (B, L) for L = -log p(target | inputs) at the last position of each row.
    Rows are independent, so one backward pass of the summed losses gives every row's gradients."""
    captured = {}

    def leaf(_module, _args, output):
        # Replace the embedding output with a leaf that records its gradient.
        captured["e"] = output.detach().requires_grad_(True)
        return captured["e"]

    handle = model.tok_emb.register_forward_hook(leaf)
    try:
        with torch.enable_grad():
            hidden = model.hidden(inputs, mask=mask)[:, -1]
            loss = F.cross_entropy(model.logits(hidden).float(), targets, reduction="sum")
            (grad,) = torch.autograd.grad(loss, captured["e"])
    finally:
        handle.remove()
    return grad.float().norm(dim=-1)


def measure(model, inputs: torch.Tensor, targets: torch.Tensor, batch: int = 8, mask=None) -> dict:
    """s averaged over segments, its c and the ERF."""
    device = next(model.parameters()).device
    for param in model.parameters():
        param.requires_grad_(False)  # only the input embeddings need gradients
    s_rows = []
    for start in tqdm(range(0, len(inputs), batch), desc="ERF", unit="batch"):
        rows = slice(start, start + batch)
        norms = input_gradient_norms(model, inputs[rows].to(device), targets[rows].to(device), mask)
        s_rows.append(normalized_gradient(norms.cpu().numpy()))
    s = np.concatenate(s_rows).mean(axis=0)
    c = cumulative_from_end(s)
    return {"s": s.tolist(), "c": c.tolist(), "erf": empirical_receptive_field(c), "threshold": THRESHOLD}
