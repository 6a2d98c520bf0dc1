"""Evaluate one model of the receptive-field paper: the last-token protocol (Section 3.4) at
every L_ex of Tables 1-4 and, with --erf-out, the empirical receptive field (Section 5.1).

    python -m lenex.receptive_field.evaluate --checkpoint M.pt --data DIR --train-length 512 \\
        --multiples 1 2 4 8 16 --span-multiple 32 --segments 1000 --out last_token.json \\
        --erf-out erf.json --erf-multiple 4 --erf-segments 64

Lengths are multiples of the preset's L_tr (not of a model's own, which Table 2 lengthens). The
scored tokens are the same for every length and every model of a preset (`span`: the paper's
longest segment); the ERF averages over the first evenly spread `erf_segments` of its own.
"""

from __future__ import annotations

import argparse
import json
import logging

from ..records.checkpoint import provenance
from ..cli import add_run_options, run_cli, start_run
from ..data.store import load_split
from ..device import pick_device
from ..files import atomic_write_result
from ..scoring.evaluate import scored_data_digests
from ..records.provenance import add_expect_argument, load_checked
from .erf import measure, theoretical_receptive_field
from .last_token import evaluate, last_token_segments, segment_ends
from .targets import lengths as to_lengths

log = logging.getLogger("lenex.receptive_field.evaluate")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", required=True, help="prepared corpus directory")
    parser.add_argument("--split", default="test")
    parser.add_argument("--train-length", type=int, required=True, help="the preset's L_tr (lengths are its multiples)")
    parser.add_argument("--multiples", type=float, nargs="+", required=True, help="L_ex / L_tr to score")
    parser.add_argument("--span-multiple", type=float, required=True, help="the paper's longest segment / L_tr")
    parser.add_argument("--segments", type=int, required=True, help="N of Section 3.4")
    parser.add_argument("--batch-tokens", type=int, default=16384)
    parser.add_argument("--erf-out", default=None, help="also measure the ERF into this file")
    parser.add_argument("--erf-multiple", type=float, default=4.0, help="ERF segment / L_tr (paper: 2048 / 512)")
    parser.add_argument("--erf-segments", type=int, default=8, help="segments s_m is averaged over")
    add_run_options(parser, extra_help="JSON merged into every record (variant, corpus, seed ...)")
    add_expect_argument(parser)
    args = parser.parse_args(argv)
    start_run(args)
    extra = json.loads(args.extra)
    model, payload = load_checked(args.checkpoint, args.data, args.expect, args.out)
    model.to(pick_device(args.device))
    cfg = model.config
    data = load_split(args.data, args.split)
    tokens = data.tokens
    span = to_lengths([args.span_multiple], args.train_length)[0]
    records = evaluate(model, tokens, to_lengths(args.multiples, args.train_length), span, args.segments,
                       args.batch_tokens)
    common = {"protocol": "last-token", "split": args.split, "span": span, "train_length": cfg.train_length,
              "base_train_length": args.train_length, "mask": cfg.mask, "mask_options": model.train_mask.options(),
              **scored_data_digests(args.data, data), **provenance(args.checkpoint, model, payload), **extra}
    if args.erf_out:
        length = to_lengths([args.erf_multiple], args.train_length)[0]
        # The paper's L_ex-th token is predicted from the L_ex - 1 before it.
        inputs, targets = last_token_segments(tokens, segment_ends(len(tokens), span, args.erf_segments), length)
        result = measure(model, inputs, targets)
        result.update(length=length, segments=len(inputs), train_length=cfg.train_length,
                      base_train_length=args.train_length, n_layer=cfg.n_layer, mask=cfg.mask,
                      mask_options=model.train_mask.options(), trf=theoretical_receptive_field(cfg),
                      position=cfg.position, steps=payload.get("step"), **extra)
        log.info("ERF %d of %d tokens (TRF %s, L_tr %d)", result["erf"], length, result["trf"], cfg.train_length)
        atomic_write_result(args.erf_out, result, indent=None)
    atomic_write_result(args.out, [{**r, **common} for r in records])


if __name__ == "__main__":
    run_cli(main)
