"""Process-group plumbing for data-parallel training under `torchrun` (or `srun` + torchrun).

One process per device. torchrun sets RANK, WORLD_SIZE and LOCAL_RANK; without them the
run is a single process and nothing here touches torch.distributed, so a plain
`python -m lenex.training.train` behaves exactly as before. NCCL on GPUs, gloo on the CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ..device import pick_device


@dataclass(frozen=True)
class Context:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from None


def backend_for(device: torch.device) -> str:
    return "nccl" if device.type == "cuda" else "gloo"


def setup(device_name: str = "auto") -> Context:
    """Join the process group torchrun describes (if any) and pick this rank's device:
    `cuda:LOCAL_RANK` when the device is a GPU, the CPU otherwise."""
    world_size = _env_int("WORLD_SIZE", 1)
    rank, local_rank = _env_int("RANK", 0), _env_int("LOCAL_RANK", 0)
    if not 0 <= rank < world_size:
        raise ValueError(f"RANK {rank} is outside WORLD_SIZE {world_size}")
    device = pick_device(device_name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", local_rank if world_size > 1 else torch.cuda.current_device())
    if device.type == "cuda":
        torch.cuda.set_device(device)
    # Under torchrun (WORLD_SIZE set) the group is joined even for one process, so
    # `--nproc_per_node 1` exercises the same NCCL/gloo path as many.
    if "WORLD_SIZE" in os.environ and not dist.is_initialized():
        kwargs = {"device_id": device} if device.type == "cuda" else {}
        dist.init_process_group(backend=backend_for(device), **kwargs)
        dist.barrier()  # a first collective: a broken backend fails here, not mid-training
    return Context(rank=rank, world_size=world_size, local_rank=local_rank, device=device)


def shutdown(ctx: Context) -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def local_batch(global_batch: int, world_size: int, micro_batch: int) -> tuple[int, int]:
    """(sequences per rank, sequences per forward pass) keeping the global batch: each rank
    takes global_batch / world_size sequences, accumulated in micro-batches of at most
    `micro_batch` (0: no accumulation)."""
    if global_batch % world_size:
        raise ValueError(f"batch_size {global_batch} is not divisible by the {world_size} training processes")
    per_rank = global_batch // world_size
    micro = min(micro_batch or per_rank, per_rank)
    if per_rank % micro:
        raise ValueError(
            f"batch_size {global_batch} over {world_size} processes is {per_rank} sequences per process, "
            f"not divisible by micro_batch_size {micro}"
        )
    return per_rank, micro


def rank_slice(global_batch: int, world_size: int, rank: int) -> slice:
    """This rank's contiguous share of a step's global batch."""
    per_rank = global_batch // world_size
    return slice(rank * per_rank, (rank + 1) * per_rank)


def mean_over_ranks(ctx: Context, value: float) -> float:
    """The mean of a per-rank scalar over all ranks (the value itself for one process)."""
    if not ctx.distributed:
        return value
    tensor = torch.tensor([value], dtype=torch.float64, device=ctx.device)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor.item() / ctx.world_size


def gather_objects(ctx: Context, value) -> list:
    """Every rank's `value`, in rank order, on every rank ([value] for one process)."""
    if not ctx.distributed:
        return [value]
    values = [None] * ctx.world_size
    dist.all_gather_object(values, value)
    return values


def barrier(ctx: Context) -> None:
    if ctx.distributed:
        dist.barrier()
