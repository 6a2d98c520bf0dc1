"""Tied vocabulary projection + cross-entropy in one pass, without a (tokens x vocab) logits tensor.

With GPT-2's 50,257-word vocabulary the head is most of a small model's work, and on CPU the
plain path (logits, log_softmax, its gradient) writes and reads several (N x V) fp32 tensors,
e.g. 411 MB each for 2048 tokens, plus fresh page faults for every one. Here the loss and both
gradients are computed chunk by chunk in the forward pass, in one reused buffer:

    p = softmax(h W^T),  loss = mean_i w_i (logsumexp_i - logit_i[t_i])
    dL/dh = w (p - onehot(t)) W,   dL/dW = (w (p - onehot(t)))^T h

The backward pass only scales the stored gradients, in place, by the incoming scalar (so it
runs once: a second backward through a retained graph is refused). The matmul FLOPs are the same
as the plain path; what is saved is memory traffic and allocation. The (V x chunk) logits buffer
can be kept between calls (`LogitsWorkspace`): a fresh 200 MB block costs about 50 ms of page
faults on every CPU step, since glibc hands blocks that large back to the kernel when freed.

Tied embeddings (`TiedGradient`, `tied_lookup`): the token lookup's own gradient touches only the
batch's rows, yet autograd's embedding backward zero-fills a whole (V x D) tensor for it and then
adds it to the head's, out of place (154 MB each for GPT-2 at d=768). Here the loss hands its head
gradient to a slot instead of to autograd, and the lookup's backward, which always runs after it
(the lookup feeds everything the loss depends on), adds its rows into it and returns the sum: the
parameter receives one complete dense gradient, so optimizers and DDP see nothing unusual.
"""

from __future__ import annotations

import torch


class LogitsWorkspace:
    """One reusable buffer for the fused loss's (V x chunk) logits, grown when a call needs more."""

    def __init__(self):
        self.tensor: torch.Tensor | None = None

    def get(self, rows: int, columns: int, like: torch.Tensor) -> torch.Tensor:
        """A contiguous (rows x columns) tensor on like's device and dtype, reusing the memory."""
        t = self.tensor
        if t is None or t.numel() < rows * columns or t.dtype != like.dtype or t.device != like.device:
            self.tensor = t = like.new_empty(rows * columns)
        return t[: rows * columns].view(rows, columns)


class TiedGradient:
    """Carries the head's weight gradient from the fused loss's backward to the lookup's."""

    def __init__(self):
        self.grad: torch.Tensor | None = None


class _TiedLookup(torch.autograd.Function):
    @staticmethod
    def forward(ctx, idx, weight, slot):
        ctx.save_for_backward(idx)
        ctx.slot, ctx.shape = slot, weight.shape
        return weight[idx]

    @staticmethod
    def backward(ctx, grad_output):
        (idx,) = ctx.saved_tensors
        grad, ctx.slot.grad = ctx.slot.grad, None
        if grad is None:  # the loss was not the fused one, or did not reach its backward
            grad = grad_output.new_zeros(ctx.shape)
        grad.index_add_(0, idx.flatten(), grad_output.flatten(0, -2))
        return None, grad, None


def tied_lookup(idx: torch.Tensor, weight: torch.Tensor, slot: TiedGradient) -> torch.Tensor:
    """weight[idx], whose weight gradient is the lookup's plus whatever the loss left in `slot`."""
    return _TiedLookup.apply(idx, weight, slot)


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, token_weights, chunk, workspace, tied):
        grad_hidden = torch.empty_like(hidden)
        grad_weight = None  # made by the first chunk's product: no separate zero-fill pass over (V x D)
        total = torch.zeros((), dtype=torch.float64, device=hidden.device)
        workspace = workspace or LogitsWorkspace()
        for start in range(0, hidden.shape[0], chunk):
            h, t, w = hidden[start : start + chunk], targets[start : start + chunk], token_weights[start : start + chunk]
            # Vocabulary-major (V x c) logits: W @ h^T runs ~1.4x faster on CPU than h @ W^T (a
            # transposed right operand with a 50k-wide output), and the gradient products below
            # then need no transposed operand either.
            logits = workspace.get(weight.shape[0], h.shape[0], hidden)
            torch.matmul(weight, h.T, out=logits)
            columns = torch.arange(h.shape[0], device=h.device)
            target_logit = logits[t, columns]
            col_max = logits.amax(0)
            unnormalised = logits.sub_(col_max).exp_()  # in place: the buffer now holds exp(logit - max)
            col_sum = unnormalised.sum(0)
            total += ((col_max + col_sum.log() - target_logit) * w).sum().double()
            # w (p - onehot): the softmax scale 1/col_sum is folded into the thin (c x D) factors.
            scale = (w / col_sum)[:, None]
            grad_hidden[start : start + h.shape[0]] = (unnormalised.T @ weight) * scale - weight[t] * w[:, None]
            if grad_weight is None:
                grad_weight = unnormalised @ (h * scale)
            else:
                grad_weight.addmm_(unnormalised, h * scale)
            grad_weight.index_add_(0, t, h * w[:, None], alpha=-1.0)
        if grad_weight is None:  # no tokens at all
            grad_weight = torch.zeros_like(weight)
        # Kept as attributes, not saved tensors, so that backward can hand them over, to autograd or to
        # the tied lookup's slot, as the only reference: no copy of the (V x D) gradient is needed.
        ctx.grads, ctx.tied = (grad_hidden, grad_weight), tied
        return total.to(hidden.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy supports one backward pass per forward (its stored "
                               "gradients are handed over and scaled in place); recompute the loss to differentiate it again")
        (grad_hidden, grad_weight), ctx.grads = ctx.grads, None
        if grad_output.item() != 1.0:  # a plain loss.backward() passes 1: nothing to scale
            grad_hidden.mul_(grad_output)
            grad_weight.mul_(grad_output)
        if ctx.tied is not None:  # the tied lookup's backward completes and returns it
            ctx.tied.grad = grad_weight
            grad_weight = None
        return grad_hidden, grad_weight, None, None, None, None, None


def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor,
                         loss_mask: torch.Tensor | None = None, chunk: int = 2048,
                         workspace: LogitsWorkspace | None = None, tied: TiedGradient | None = None) -> torch.Tensor:
    """Mean (or loss_mask-weighted mean) cross-entropy of `hidden @ weight.T` against `targets`.

    hidden: (N, D); weight: (V, D); targets: (N,) int; loss_mask: (N,) or None; workspace: a
    buffer kept by the caller between calls (None: a fresh one); tied: the slot of the
    `tied_lookup` that made `hidden`'s inputs from the same weight (None: weight is not tied).
    Equals F.cross_entropy(hidden @ weight.T, targets) with the same gradients (tested)."""
    if loss_mask is None:
        token_weights = hidden.new_full((hidden.shape[0],), 1.0 / hidden.shape[0])
    else:
        mask = loss_mask.flatten().to(hidden.dtype)
        token_weights = mask / mask.sum()
    return _LinearCrossEntropy.apply(hidden, weight, targets.flatten(), token_weights, chunk, workspace, tied)
