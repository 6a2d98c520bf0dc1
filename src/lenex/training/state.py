"""A training's resumable state (lenex.training.train): the weights, the optimizer and every rank's RNG
streams in `<workdir>/last.pt`, saved by rank 0 and resumed by all, so that an interrupted run
continues bit for bit (on the CPU) where it stopped. The state holds tensors and plain values only
(it is read with `torch.load(weights_only=True)`) and the digest of its content (`content_sha256`),
checked when it is resumed (lenex.training.resume.load_state)."""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from ..digests import payload_sealed
from ..files import atomic_write
from . import distributed, resume

log = logging.getLogger("lenex.training.train")


def batch_seed(seed: int, step: int) -> int:
    return seed * 1_000_003 + step


def rng_state(device: torch.device) -> dict:
    cuda = torch.cuda.get_rng_state(device) if device.type == "cuda" else None
    return {"cpu": torch.get_rng_state(), "cuda": cuda}


def seed_rank(seed: int, rank: int, step: int = 0) -> None:
    # Rank 0 keeps `seed` itself (a single process is unchanged); other ranks get their own
    # dropout streams, derived from (seed, rank, step) so they are reproducible too.
    torch.manual_seed(seed if rank == 0 and step == 0 else batch_seed(seed + 7919 * rank, step))


def restore_rng(state: dict, ctx: distributed.Context, seed: int, step: int) -> None:
    by_rank = state.get("rng_by_rank")
    if by_rank is not None and len(by_rank) == ctx.world_size:
        mine = by_rank[ctx.rank]
    elif by_rank is None and ctx.world_size == 1:  # checkpoints from before distributed training
        mine = {"cpu": state["rng"], "cuda": state.get("cuda_rng")}
    else:
        log.warning("checkpoint was written by %d processes, resuming with %d: dropout streams are "
                    "reseeded, so a run with dropout will not match an uninterrupted one bit for bit",
                    len(by_rank or [None]), ctx.world_size)
        seed_rank(seed, ctx.rank, step)
        return
    torch.set_rng_state(mine["cpu"])
    if mine.get("cuda") is not None and ctx.device.type == "cuda":
        torch.cuda.set_rng_state(mine["cuda"], ctx.device)


def resume_training(workdir: Path, model, optimizer, identity: dict, ctx: distributed.Context, seed: int) -> int:
    last = workdir / "last.pt"
    # Rank 0 alone sets a stale state aside; the others wait, then see the same file (or none).
    state = resume.load_state(last, identity) if ctx.is_main else None
    distributed.barrier(ctx)
    if not ctx.is_main:
        state = resume.load_state(last, identity)
    if state is None:
        return 0
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    restore_rng(state, ctx, seed, int(state["step"]))
    log.info("resumed from %s at step %d", last, state["step"])
    return int(state["step"])


def save_state(workdir: Path, ctx: distributed.Context, identity: dict, step: int, model, optimizer) -> None:
    rng_by_rank = distributed.gather_objects(ctx, rng_state(ctx.device))  # every rank takes part
    if not ctx.is_main:
        return
    state = payload_sealed({"identity": identity, "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "rng": rng_by_rank[0]["cpu"], "cuda_rng": rng_by_rank[0]["cuda"], "rng_by_rank": rng_by_rank,
             "world_size": ctx.world_size})
    atomic_write(workdir / "last.pt", lambda tmp: torch.save(state, tmp))
