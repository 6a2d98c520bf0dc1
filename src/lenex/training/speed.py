"""The trainer at the hardware's pace on CUDA, leaving the CPU path as it was.

On CUDA: TF32 matmuls (bf16 autocast is lenex.device's), `torch.compile` of the model with a
named fall-back, and the step's statistics kept on the device, read by the host only at
`sync points` (log, checkpoint, evaluation and last steps) instead of once per micro-batch.
On the CPU every step is a sync point, so the numbers are those of the eager loop, bit for bit.

The SIGTERM flag travels in the same all-reduce as the step's loss (`StepStats.reduce`), so a
data-parallel run does one collective per step for both, not two.
"""

from __future__ import annotations

import logging
import os
import time

import torch

log = logging.getLogger("lenex.training.train")
COMPILE_ENV = "LENEX_COMPILE"  # "0": never compile; "1": compile on any device (tests, probes)


def configure_device(device: torch.device) -> None:
    """TF32 tensor cores for fp32 matmuls and convolutions on CUDA (what autocast leaves in fp32)."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def compile_choice(device: torch.device, environ=os.environ) -> tuple[bool, str]:
    """(compile or not, why), recorded in the run's summary. CUDA compiles by default; the CPU
    stays eager (its results are the bit-for-bit reference, and compiling costs more than it saves
    on the small CPU models); LENEX_COMPILE=0/1 overrides either."""
    asked = environ.get(COMPILE_ENV, "")
    if asked not in ("", "0", "1"):
        raise ValueError(f"{COMPILE_ENV}={asked!r}: use 0 (eager) or 1 (compile), or leave it unset")
    if asked == "0":
        return False, f"{COMPILE_ENV}=0"
    if asked == "1":
        return True, f"{COMPILE_ENV}=1"
    if device.type == "cuda":
        return True, "cuda default"
    return False, f"{device.type}: eager by default (the reference path)"


class CompiledForward:
    """Calls `module` under torch.compile (`compiler`), falling back to eager `module` the first
    time compiling fails (a missing compiler, an unsupported op), with the reason in `record`."""

    def __init__(self, module: torch.nn.Module, device: torch.device, environ=os.environ, compiler=None):
        self.eager = module
        wanted, why = compile_choice(device, environ)
        inner = getattr(module, "module", module)  # the model inside a DistributedDataParallel wrapper
        if wanted and why == "cuda default" and getattr(inner, "eager_reason", None):
            wanted, why = False, inner.eager_reason  # a model that says it runs eagerly (LENEX_COMPILE=1 overrides)
        self.record = {"compiled": False, "why": why}
        self._compiled = None
        if wanted:
            try:
                self._compiled = (compiler or torch.compile)(module)
                self.record = {"compiled": True, "why": why}
            except Exception as err:  # noqa: BLE001 - any failure means eager, named in the record
                self._fall_back(err)

    def _fall_back(self, err: Exception) -> None:
        self._compiled = None
        self.record = {"compiled": False, "why": f"torch.compile failed: {type(err).__name__}: {str(err)[:300]}"}
        log.warning("torch.compile failed, training eagerly: %s", self.record["why"])

    def no_sync(self):
        return self.eager.no_sync()

    def __call__(self, *args, **kwargs):
        if self._compiled is None:
            return self.eager(*args, **kwargs)
        try:
            return self._compiled(*args, **kwargs)
        except torch.cuda.OutOfMemoryError:
            raise  # not a compiler failure: the eager model would run out of memory too
        except Exception as err:  # noqa: BLE001 - compile errors surface at the first call
            if not _is_compile_error(err):
                raise
            self._fall_back(err)
            return self.eager(*args, **kwargs)


def _is_compile_error(err: Exception) -> bool:
    """A failure of dynamo/inductor itself (worth an eager retry), not of the model's inputs."""
    module = type(err).__module__ or ""
    return module.startswith(("torch._dynamo", "torch._inductor")) or "inductor" in str(err).lower()


def defers_sync(device: torch.device) -> bool:
    """Whether the host reads the step's statistics at sync points only: on CUDA, where a read
    stalls the queue of kernels; the CPU reads every step (the reference path)."""
    return device.type == "cuda"


def sync_point(step: int, total: int, log_every: int, checkpoint_every: int, eval_every: int,
               stop_at: int | None, deferred: bool) -> bool:
    """Whether the host reads the step's statistics after `step`: every step unless `deferred`,
    else at log, checkpoint, evaluation, stop and last steps."""
    if not deferred:
        return True
    due = [log_every, checkpoint_every] + ([eval_every] if eval_every else [])
    return step == total or step == stop_at or any(step % every == 0 for every in due)


class StepStats:
    """One step's loss (summed over micro-batches in float64, as the host summed `.item()`s),
    the SIGTERM flag, and the first non-finite step since the last sync, all on the device."""

    def __init__(self, device: torch.device):
        self.device = device
        self.loss = torch.zeros((), dtype=torch.float64, device=device)
        self.stop = torch.zeros((), dtype=torch.float64, device=device)
        self.bad_step = torch.zeros((), dtype=torch.int64, device=device)
        self.bad_values = torch.zeros(2, dtype=torch.float64, device=device)

    def start_step(self) -> None:
        self.loss.zero_()

    def add(self, loss: torch.Tensor) -> None:
        self.loss += loss.detach().to(torch.float64)

    def reduce(self, ctx, stop_requested: bool) -> None:
        """Average the loss over ranks and OR the SIGTERM flags, in one all-reduce (SUM)."""
        if not ctx.distributed:
            return
        import torch.distributed as dist

        self.stop.fill_(1.0 if stop_requested else 0.0)
        both = torch.stack([self.loss, self.stop])
        dist.all_reduce(both, op=dist.ReduceOp.SUM)
        self.loss.copy_(both[0] / ctx.world_size)
        self.stop.copy_(both[1])

    def mark_non_finite(self, step: int, grad_norm: torch.Tensor) -> torch.Tensor:
        """A 0/1 tensor: this step's loss or gradient norm is not finite; the first such step and
        its values are kept until the next sync."""
        values = torch.stack([self.loss, grad_norm.detach().to(torch.float64)])
        bad = ~torch.isfinite(values).all()
        first = bad & (self.bad_step == 0)
        self.bad_step.copy_(torch.where(first, torch.full((), step, dtype=torch.int64, device=self.device), self.bad_step))
        self.bad_values.copy_(torch.where(first, values, self.bad_values))
        return bad.to(torch.float32)

    def read(self) -> dict:
        """The host's view (one device-to-host copy): loss, stop flag, first bad step and values."""
        packed = torch.cat([self.loss.reshape(1), self.stop.reshape(1), self.bad_step.to(torch.float64).reshape(1),
                            self.bad_values]).tolist()
        return {"loss": packed[0], "stop": packed[1] > 0, "bad_step": int(packed[2]),
                "bad_loss": packed[3], "bad_grad_norm": packed[4]}


def is_fused(optimizer: torch.optim.Optimizer) -> bool:
    """Every parameter group runs the fused kernel (the only AdamW that takes `found_inf`)."""
    return all(group.get("fused") for group in optimizer.param_groups)


def skip_on_device(optimizer: torch.optim.Optimizer, bad: torch.Tensor) -> None:
    """Let a fused AdamW skip a non-finite step on the device (its `found_inf` input, as
    GradScaler uses it: no update, no step count), so no host sync keeps a bad step out of the
    weights. Only for a fused optimizer (the others refuse `found_inf`)."""
    if not is_fused(optimizer):
        raise ValueError("skip_on_device needs a fused optimizer; check on the host instead")
    optimizer.found_inf = bad


class IntervalRate:
    """Tokens per second over the steps since the previous reading, not since the run started: a
    cumulative mean carries the first interval's compiling and warm-up into every later record.
    Read it at sync points only (where the host has waited for the device), or the interval's
    clock stops before its kernels do."""

    def __init__(self, clock=time.perf_counter):
        self.clock = clock
        self.since = clock()
        self.tokens = 0

    def add(self, tokens: int) -> None:
        self.tokens += tokens

    def read(self) -> float:
        now = self.clock()
        rate = self.tokens / max(now - self.since, 1e-9)
        self.since, self.tokens = now, 0
        return rate
