"""Tied vocabulary projection + cross-entropy in one pass, without a (tokens x vocab) logits tensor.

With GPT-2's 50,257-word vocabulary the head is most of a small model's work, and on CPU the
plain path (logits, log_softmax, its gradient) writes and reads several (N x V) fp32 tensors,
e.g. 411 MB each for 2048 tokens, plus fresh page faults for every one. Here the loss and both
gradients are computed chunk by chunk in the forward pass, in one reused buffer:

    p = softmax(h W^T),  loss = mean_i w_i (logsumexp_i - logit_i[t_i])
    dL/dh = w (p - onehot(t)) W,   dL/dW = (w (p - onehot(t)))^T h

The backward pass only scales the stored gradients by the incoming scalar. The matmul FLOPs are
the same as the plain path; what is saved is memory traffic and allocation.
"""

from __future__ import annotations

import torch


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, token_weights, chunk):
        grad_hidden = torch.empty_like(hidden)
        grad_weight = None  # made by the first chunk's product: no separate zero-fill pass over (V x D)
        total = torch.zeros((), dtype=torch.float64, device=hidden.device)
        buffer = hidden.new_empty(min(chunk, hidden.shape[0]), weight.shape[0])
        for start in range(0, hidden.shape[0], chunk):
            h, t, w = hidden[start : start + chunk], targets[start : start + chunk], token_weights[start : start + chunk]
            logits = buffer[: h.shape[0]]
            torch.matmul(h, weight.T, out=logits)
            target_logit = logits.gather(1, t[:, None]).squeeze(1)
            row_max = logits.amax(1, keepdim=True)
            unnormalised = logits.sub_(row_max).exp_()  # in place: the buffer now holds exp(logit - max)
            row_sum = unnormalised.sum(1)
            total += ((row_max.squeeze(1) + row_sum.log() - target_logit) * w).sum().double()
            # w (p - onehot): the softmax scale 1/row_sum is folded into the thin (c x D) factors.
            scale = (w / row_sum)[:, None]
            grad_hidden[start : start + h.shape[0]] = (unnormalised @ weight) * scale - weight[t] * w[:, None]
            if grad_weight is None:
                grad_weight = unnormalised.T @ (h * scale)
            else:
                grad_weight.addmm_(unnormalised.T, h * scale)
            grad_weight.index_add_(0, t, h * w[:, None], alpha=-1.0)
        if grad_weight is None:  # no tokens at all
            grad_weight = torch.zeros_like(weight)
        ctx.save_for_backward(grad_hidden, grad_weight)
        return total.to(hidden.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        grad_hidden, grad_weight = ctx.saved_tensors
        return grad_hidden * grad_output, grad_weight * grad_output, None, None, None


def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                         loss_mask: torch.Tensor | None = None, chunk: int = 2048) -> torch.Tensor:
    """Mean (or loss_mask-weighted mean) cross-entropy of `hidden @ weight.T` against `targets`.

    hidden: (N, D); weight: (V, D); targets: (N,) int; loss_mask: (N,) or None.
    Equals F.cross_entropy(hidden @ weight.T, targets) with the same gradients (tested)."""
    if loss_mask is None:
        token_weights = hidden.new_full((hidden.shape[0],), 1.0 / hidden.shape[0])
    else:
        mask = loss_mask.flatten().to(hidden.dtype)
        token_weights = mask / mask.sum()
    return _LinearCrossEntropy.apply(hidden, weight, targets.flatten(), token_weights, chunk)
