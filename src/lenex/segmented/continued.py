"""Continued pretraining of the segmented-sequences paper, compute-equivalent (Section 4.4):

    python -m lenex.segmented.continued --init OOTB.pt --method chunk-0.25 --extend 4 \
        --train-config JSON --data DIR --epoch-tokens N --out M.pt --workdir W

The train split is cut into L_e = extend x L_t pieces, one document per piece (no packing,
remainders dropped, Section 4.1). One epoch samples one sequence per piece; every method
gets the same number of tokens, one epoch's worth of the text (the paper's equation 2,
epochs = L_e / L_t): chunk-α and prefix-α run L_e / L_t epochs of L_t-token sequences;
`full` runs one epoch of whole L_e pieces, with L_e / L_t times fewer sequences per batch,
so its steps and tokens per step equal theirs. Domain adaptation (Section 4.3) is `full`
with extend 1: one epoch at L_t. Training itself is `lenex.training.train` (resumable, seeded per
step) with the segment sampler as its batch source.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
import torch

from ..cli import run_cli
from ..data.store import load_split
from ..data.tokens import document_pieces
from ..records.provenance import add_expect_argument, load_checked
from .segments import SegmentBatches, parse_method
from ..config import TrainConfig
from ..training.train import train
from .models import extended, train_length_of

log = logging.getLogger("lenex.segmented.continued")


def epoch_pieces(pieces: np.ndarray, epoch_tokens: int | None, seed: int) -> np.ndarray:
    """The pieces one epoch covers: all of them, or a seeded subset of epoch_tokens // L_e."""
    if not epoch_tokens:
        return pieces
    count = epoch_tokens // pieces.shape[1]
    if count < 1:
        raise ValueError(f"epoch_tokens {epoch_tokens} is less than one piece of {pieces.shape[1]} tokens")
    if count > len(pieces):
        log.warning("epoch_tokens %d asks for %d pieces of %d; the train split has %d: using all",
                    epoch_tokens, count, pieces.shape[1], len(pieces))
        return pieces
    return pieces[np.sort(np.random.default_rng(seed).permutation(len(pieces))[:count])]


#: `continued:` keys that set how a released model saves memory (HFLanguageModel.save_memory).
MEMORY_OPTIONS = ("activation_checkpointing", "loss_chunk_tokens")


def plan(method_name: str, extend: int, batch_size: int) -> tuple[int, int]:
    """(epochs, sequences per batch) giving every method the same tokens per step and in total."""
    method = parse_method(method_name)
    if extend < 1:
        raise ValueError(f"extend must be a positive whole number, got {extend}")
    if method.kind != "full":
        if extend == 1:
            raise ValueError(f"{method.name} samples from sequences longer than L_t: extend must be at least 2")
        return extend, batch_size
    if batch_size % extend:
        raise ValueError(f"full: batch_size {batch_size} is not divisible by extend {extend} (L_e / L_t)")
    return 1, batch_size // extend


def run(init, method_name: str, extend: int, train_config: dict, data_dir, out, workdir,
        epoch_tokens: int | None = None, device: str = "auto", stop_after: int | None = None, expect=None,
        labels: dict | None = None) -> dict | None:
    base, _ = load_checked(init, data_dir, expect, out)  # the model it claims to be, of the corpus's tokenizer
    train_length = train_length_of(base)
    extended_length = extend * train_length
    settings = dict(train_config)
    warmup_fraction = settings.pop("warmup_fraction", None)
    # Memory options of the released models (lenex.segmented.memory), not TrainConfig fields.
    memory = {key: settings.pop(key) for key in MEMORY_OPTIONS if key in settings}
    epochs, batch = plan(method_name, extend, settings.get("batch_size", 8))
    seed = settings.get("seed", 1)
    pieces = document_pieces(load_split(data_dir, "train"), extended_length).pieces
    pieces = epoch_pieces(pieces, epoch_tokens, seed)
    batches = SegmentBatches(pieces, parse_method(method_name), train_length, batch, seed)
    steps = batches.steps(epochs)
    settings.update(steps=steps, batch_size=batch)
    if settings.get("micro_batch_size", 0) and batch % settings["micro_batch_size"]:
        settings["micro_batch_size"] = 0  # full's smaller batch: no accumulation
    if warmup_fraction is not None:
        settings["warmup"] = int(round(warmup_fraction * steps))
    cfg = TrainConfig.from_dict(settings)
    model = extended(base, extended_length)
    if memory:
        if not hasattr(model, "save_memory"):
            raise ValueError(f"continued: {', '.join(sorted(memory))} apply to the released (Hugging Face) models "
                             f"only, not to {type(model).__name__}")
        model.save_memory(**memory)
    log.info("%s: L_t %d -> L_e %d, %d pieces, %d epochs x %d steps of %d sequences (%d tokens)",
             method_name, train_length, extended_length, len(pieces), epochs, batches.steps_per_epoch, batch,
             steps * batch * (extended_length if method_name == "full" else train_length))
    identity = {"method": method_name, "extend": extend, "init": str(Path(init).resolve()),
                "epoch_tokens": epoch_tokens, "epochs": epochs}
    torch.manual_seed(cfg.seed)
    return train(model.config, cfg, data_dir, out, workdir, stop_after=stop_after, device=device,
                 batches=batches, model_factory=lambda: model, run_identity=identity, labels=labels)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--init", required=True, help="checkpoint to continue from (lenex or lenex-hf format)")
    parser.add_argument("--method", required=True, help="full, chunk-<alpha> or prefix-<alpha>")
    parser.add_argument("--extend", type=int, required=True, help="L_e / L_t (1: domain adaptation at L_t)")
    parser.add_argument("--train-config", required=True, help="JSON: TrainConfig fields (steps are computed), "
                        "optional warmup_fraction, activation_checkpointing and loss_chunk_tokens")
    parser.add_argument("--data", required=True, help="prepared corpus directory (its train split is used)")
    parser.add_argument("--epoch-tokens", type=int, default=0, help="tokens per epoch (0: the whole train split)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--stop-after", type=int, default=None)
    parser.add_argument("--identity", default="{}", help="JSON labels recorded in the checkpoint's identity")
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.threads:
        torch.set_num_threads(args.threads)
    run(args.init, args.method, args.extend, json.loads(args.train_config), args.data, args.out, args.workdir,
        args.epoch_tokens or None, args.device, args.stop_after, args.expect, json.loads(args.identity))


if __name__ == "__main__":
    run_cli(main)
