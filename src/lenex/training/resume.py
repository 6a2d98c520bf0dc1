"""What a training run may resume from: its saved state, keyed on the content it depends on.

A resume state (`<workdir>/last.pt`) records the run's identity: model and train config,
the sha256 of the token files it reads (meta.json and the train/valid .bin files) and of the
checkpoint it starts from. A state whose identity differs from the run's is set aside (renamed
to `last.pt.set-aside`, with a one-line notice saying what changed) and the run starts fresh,
so a corpus re-prepared in place, with other data under the same path, is never mixed into
a model. A state that is not what was saved (unreadable, truncated, its content not matching
the digest it was saved with, or holding objects `torch.load(weights_only=True)` refuses) is
renamed to `last.pt.corrupt` with one line saying so, and the run starts from scratch.

The state holds the weights, the optimizer and every rank's RNG streams, saved by rank 0
(`save_state`) and resumed by all (`resume_training`), so that an interrupted run continues bit
for bit (on the CPU) where it stopped. It holds tensors and plain values only (it is read with
`torch.load(weights_only=True)`) and the digest of its content (`content_sha256`), checked by
`load_state`.
"""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path

import torch

from ..data.store import meta_path as corpus_meta_path, read_meta
from ..digests import file_sha256, payload_digest_error, payload_sealed
from ..files import atomic_write, atomic_write_text
from . import distributed

log = logging.getLogger("lenex.training.train")
SET_ASIDE_SUFFIX = ".set-aside"
CORRUPT_SUFFIX = ".corrupt"


def data_fingerprint(data_dir: str | os.PathLike, splits=("train", "valid")) -> dict:
    """sha256 of a prepared corpus's meta.json and of the token files of `splits` (the ones
    training reads): the same path holding other tokens gives another fingerprint."""
    data_dir = Path(data_dir)
    meta = read_meta(data_dir)
    fingerprint = {"meta.json": file_sha256(corpus_meta_path(data_dir))}
    for split in splits:
        info = meta["splits"][split]
        # The digest meta.json records is the file's (lenex.data.store.load_split compares them
        # when training reads the split), so the file is not read twice.
        fingerprint[info["file"]] = info.get("sha256") or file_sha256(data_dir / info["file"])
    return fingerprint


def differences(saved: dict, current: dict, prefix: str = "") -> list[str]:
    """'key: old -> new' for every leaf that differs between two identity dicts."""
    changed = []
    for key in sorted(set(saved) | set(current), key=str):
        old, new = saved.get(key, "<absent>"), current.get(key, "<absent>")
        if isinstance(old, dict) and isinstance(new, dict):
            changed += differences(old, new, f"{prefix}{key}.")
        elif old != new:
            changed.append(f"{prefix}{key}: {_short(old)} -> {_short(new)}")
    return changed


def _short(value) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 20 else text[:12] + "..."


def set_aside(path: Path, why: str, suffix: str = SET_ASIDE_SUFFIX) -> Path:
    """Rename a state the run must not use out of the way (kept for inspection) with a notice."""
    target = path.with_name(path.name + suffix)
    os.replace(path, target)
    log.warning("set aside %s as %s: %s; training starts fresh", path, target.name, why)
    return target


def load_state(path: Path, identity: dict) -> dict | None:
    """The saved state at `path` when it exists, is readable and was written for `identity`;
    otherwise None (a mismatching or unreadable state is set aside)."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for a truncated, corrupt or unsafe file
        set_aside(path, f"unreadable ({str(err).splitlines()[0][:60]}...)", CORRUPT_SUFFIX)
        return None
    if not isinstance(state, dict):
        set_aside(path, f"not a resume state (a {type(state).__name__})", CORRUPT_SUFFIX)
        return None
    # A state saved before digests carries none and resumes as before (a run interrupted across the
    # upgrade keeps its steps); one that carries a digest must match it.
    why = payload_digest_error(state)
    if why:
        set_aside(path, f"corrupt: {why}", CORRUPT_SUFFIX)
        return None
    saved = state.get("identity")
    if saved != identity:
        changed = differences(saved or {}, identity)
        set_aside(path, "written for another run (" + "; ".join(changed[:4]) +
                  (f"; {len(changed) - 4} more" if len(changed) > 4 else "") + ")")
        return None
    return state


def read_metrics(path: Path) -> list[dict]:
    """The records of a metrics.jsonl; a half-written last line (a run killed mid-write) is
    dropped with a notice, a broken line elsewhere is an error naming the file and line."""
    lines = path.read_text().splitlines() if path.exists() else []
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            if number < len(lines):
                raise ValueError(f"{path}:{number}: not a JSON record ({err.msg}); delete the line or the file") from err
            log.warning("%s:%d: dropped a half-written last line (%r)", path, number, line[:40])
    return records


def truncate_metrics(path: Path, step: int) -> None:
    """Keep the records up to `step` (those the resumed state has already seen)."""
    if path.exists():
        kept = [r for r in read_metrics(path) if r.get("step", 0) <= step]
        atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in kept))


def append_record(handle, record: dict) -> None:
    """One whole line per write, flushed and synced, so a crash leaves at most a partial last line."""
    try:
        handle.write(json.dumps(record) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    except OSError as err:
        if err.errno != errno.ENOSPC:
            raise
        raise OSError(errno.ENOSPC, f"disk full: could not append step {record.get('step')} to {handle.name}: "
                      "free space and rerun (the run resumes from its last saved state)") from None


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
    state = load_state(last, identity) if ctx.is_main else None
    distributed.barrier(ctx)
    if not ctx.is_main:
        state = load_state(last, identity)
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
