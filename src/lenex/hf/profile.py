"""Extrapolation profile of a Hugging Face causal LM, written as one JSON:

    python -m lenex.hf.profile --name smollm2-135m --source '{"gguf": {...}}' --data DIR \\
        --context-length 256 --max-tokens 4096 --out profile.json

`--data` is the test split re-tokenized with the model's own tokenizer
(`lenex.segmented.retokenize --splits test`). The LEX protocol (`lenex.scoring.evaluate.scored_span`,
`pieces`): every length from 1/4 to 8x the profiled context length C scores the same tokens,
each piece read as [EOT, t_0 .. t_{L-2}]. Three masks per length (`lenex.masks`, LEX defaults):
full causal attention, BCA with blocks of C/2, and a sliding window W = C, each exact through
the model's own forward (`lenex.hf.masked`). Attention resolution (LEX Eq. 3-4,
`lenex.lex.resolution.summarize`) at 1x and 2x C. `check` scores the 1x pieces again with
transformers' own loss (`model(input_ids, labels=input_ids)`); the run fails unless both
perplexities agree to 0.1%. `bca_2x_vs_1x` compares BCA at 2x with BCA at 1x on the same
tokens: the mean difference of their per-token log-losses and its standard error over groups
of C consecutive tokens.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import time

import numpy as np
import torch

from ..cli import add_run_options, run_cli, start_run
from ..data.store import load_split
from ..scoring.evaluate import pieces, scored_span
from ..files import atomic_write_text
from .masked import ScoreRecorder, masked_logits, recording
from ..records.provenance import check_vocabulary_covers
from .models import load_causal_lm
from ..masks import build_mask, default_mask_options
from ..lex.resolution import summarize

log = logging.getLogger("lenex.hf.profile")

MULTIPLES = (0.25, 0.5, 1, 2, 4, 8)
MASKS = ("causal", "blockwise", "sliding")
CHECK_TOLERANCE = 1e-3  # relative, the 0.1%


def profile_lengths(context: int) -> list[int]:
    """1/4 .. 8 x the context length; each must be a whole number of tokens."""
    if context < 4 or context % 4:
        raise ValueError(f"context length {context} must be a positive multiple of 4 (1/4 of it is a length)")
    return [int(m * context) for m in MULTIPLES]


def profile_mask(name: str, context: int):
    """LEX's settings relative to the context C: BCA blocks of C/2, a sliding window W = C."""
    return build_mask(name, default_mask_options(name, context))


def token_nll(model, tokens: np.ndarray, length: int, span: int, mask, bos: int, batch_tokens: int) -> np.ndarray:
    """Per-token NLL in the scored span's order (every length yields the same tokens in the same order)."""
    inputs, targets = pieces(tokens, length, span, bos)
    batch = max(1, batch_tokens // length)
    out = [model.token_nll(inputs[i:i + batch], targets[i:i + batch], mask=mask).double().flatten()
           for i in range(0, len(inputs), batch)]
    return torch.cat(out).numpy()


def paired_difference(a: np.ndarray, b: np.ndarray, group: int) -> dict:
    """Mean of a - b (per-token NLL on the same tokens) and its standard error over groups of `group` tokens."""
    if a.shape != b.shape or a.size % group:
        raise ValueError(f"paired tokens must match and split into groups of {group}: {a.shape} vs {b.shape}")
    diffs = (a - b).reshape(-1, group).mean(axis=1)
    se = float(diffs.std(ddof=1) / math.sqrt(len(diffs))) if len(diffs) > 1 else float("nan")
    return {"mean_nll_difference": float(diffs.mean()), "standard_error": se, "groups": int(len(diffs)),
            "group_tokens": group}


def noise_verdict(difference: dict, k: float = 2.0) -> str:
    """'no worse' when the difference is at most k standard errors above zero, else 'worse'."""
    if not np.isfinite(difference["standard_error"]):
        return "undetermined (one group: no noise estimate)"
    return "no worse" if difference["mean_nll_difference"] <= k * difference["standard_error"] else "worse"


@torch.no_grad()
def transformers_ppl(hf_model, tokens: np.ndarray, length: int, span: int, bos: int, batch: int = 1) -> float:
    """Perplexity from transformers' own loss over the same pieces: the sequence [EOT, t_0 .. t_{L-1}]
    with labels = itself scores t_0 .. t_{L-1} (transformers shifts the labels), as lenex does."""
    _, targets = pieces(tokens, length, span, bos)
    seq = torch.cat([torch.full((len(targets), 1), bos, dtype=torch.long), targets], dim=1)
    losses = [(hf_model(input_ids=rows, labels=rows, use_cache=False).loss.double().item(), len(rows))
              for rows in seq.split(batch)]
    # Every batch's loss is a mean over len(rows) * length tokens: weigh it by its rows.
    return math.exp(sum(loss * n for loss, n in losses) / len(seq))


@torch.no_grad()
def resolution(model, tokens: np.ndarray, length: int, mask, bos: int, chunk: int) -> dict:
    """LEX Eq. 3-4 over the pieces of `length` in `tokens`: s[n] by distance per layer and head."""
    inputs, _ = pieces(tokens, length, len(tokens), bos)
    cfg = model.hf.config
    recorder = ScoreRecorder(cfg.num_hidden_layers, cfg.num_attention_heads, length)
    with recording(model.hf, recorder):
        for row in inputs:
            masked_logits(model.hf, row[None], mask, chunk, recorder=recorder)
    summary = summarize(recorder.mean())
    return {"length": length, "mask": mask.name, "texts": int(len(inputs)), "resolution": summary["resolution"],
            "resolution_per_layer": summary["resolution_per_layer"],
            "resolution_of_head_mean_s": summary["resolution_of_head_mean_s"]}


def score_rows(model, tokens, lengths, span: int, context: int, bos: int, batch_tokens: int):
    """One row per length and mask, and the per-token NLL behind each, keyed (length, mask)."""
    rows, nll = [], {}
    table = model.context_length()  # GPT-2's learned positions end there; RoPE models have no such end
    for length in lengths:
        if table is not None and length > table:
            why = f"not computed: positions beyond the learned position table ({table})"
            rows += [{"length": length, "mask": m, "ppl": None, "tokens": 0, "not_computed": why} for m in MASKS]
            continue
        for mask_name in MASKS:
            t0, mask = time.time(), profile_mask(mask_name, context)
            same = next((m for m in MASKS[:MASKS.index(mask_name)]
                         if torch.equal(profile_mask(m, context).dense(length), mask.dense(length))), None)
            # A mask that allows exactly the pairs of one already scored (BCA and sliding up to C) gives
            # its numbers: the same computation, so it is not run twice.
            per_token = nll[length, same] if same else token_nll(model, tokens, length, span, mask, bos,
                                                                  batch_tokens)
            nll[length, mask_name] = per_token
            rows.append({"length": length, "mask": mask_name, "ppl": math.exp(per_token.mean()),
                         "tokens": int(per_token.size), "seconds": round(time.time() - t0, 2),
                         **({"same_pairs_as": same} if same else {})})
            log.info("L=%d %s ppl=%.3f (%.0f s)", length, mask_name, rows[-1]["ppl"], rows[-1]["seconds"])
    return rows, nll


def check_scoring(hf_model, tokens, span: int, context: int, bos: int, batch_tokens: int, rows) -> dict:
    """lenex's causal row at C against transformers' own loss on the same pieces; fails above 0.1%."""
    lenex_ppl = next(r["ppl"] for r in rows if r["length"] == context and r["mask"] == "causal")
    theirs = transformers_ppl(hf_model, tokens, context, span, bos, max(1, batch_tokens // context))
    check = {"length": context, "transformers_ppl": theirs, "lenex_ppl": lenex_ppl, "tolerance": CHECK_TOLERANCE,
             "relative_difference": abs(theirs / lenex_ppl - 1)}
    if check["relative_difference"] > CHECK_TOLERANCE:
        raise RuntimeError(f"check failed: lenex ppl {lenex_ppl:.6f} vs transformers {theirs:.6f} "
                           f"at L={context} differ by more than {CHECK_TOLERANCE:.1%}")
    return check


def run(name, source, data_dir, context: int | str, out, max_tokens=4096, resolution_tokens=2048, batch_tokens=4096,
        split="test", extra=None) -> dict:
    started = time.time()
    model = load_causal_lm(source)
    cfg = model.hf.config
    native = (source.get("context_length") or getattr(cfg, "max_position_embeddings", None)
              or getattr(cfg, "n_positions", None))
    if context == "native":
        if not native:
            raise ValueError(f"{name}: its config states no context length; "
                             "set context_length in config/hf_models.yaml")
        context = int(native)
    model.query_chunk = context  # causal attention at 8x: queries in chunks of C, memory linear in L
    lengths = profile_lengths(context)
    span = lengths[-1]
    check_vocabulary_covers(name, model.config.vocab_size, data_dir)  # a corpus of a larger tokenizer: refused
    data = load_split(data_dir, split)
    bos = int(data.meta["dataset"]["eot_token"])
    tokens, skipped = scored_span(data.documents(), span, max_tokens)
    rows, nll = score_rows(model, tokens, lengths, span, context, bos, batch_tokens)
    check = check_scoring(model.hf, tokens, span, context, bos, batch_tokens, rows)
    if (2 * context, "blockwise") in nll:
        bca = paired_difference(nll[2 * context, "blockwise"], nll[context, "blockwise"], context)
        bca["verdict"] = noise_verdict(bca)
    else:
        bca = {"verdict": "not computed: 2C is beyond the learned position table"}
    res_tokens, _ = scored_span(data.documents(), 2 * context, resolution_tokens)
    res = [resolution(model, res_tokens, k * context, profile_mask(m, context), bos, context)
           for k, m in ((1, "causal"), (2, "causal"), (2, "blockwise")) if (k * context, m) in nll]
    result = {
        "model": name, "context_length": context, "native_context_length": native,
        "context_is_native": native == context, "rows": rows, "check": check,
        "bca_2x_vs_1x": bca, "resolution": res, "source": source, "architecture": cfg.model_type,
        "rope": getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None),
        "parameters": model.num_parameters(), "span": span, "scored_tokens": int(tokens.size),
        "documents_skipped": skipped, "data": str(data_dir), "split": split, "eot_token": bos,
        "mask_options": {m: profile_mask(m, context).options() for m in MASKS}, "protocol": "lex",
        "threads": torch.get_num_threads(), "seconds": round(time.time() - started, 1), **(extra or {}),
    }
    atomic_write_text(out, json.dumps(result, indent=1, default=str) + "\n")
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--source", required=True, help="JSON: {gguf: {package, file}} or {hub: name}")
    parser.add_argument("--data", required=True, help="test split re-tokenized with the model's tokenizer")
    parser.add_argument("--context-length", required=True,
                        help="profiled context length C, or `native` (the entry's context_length, "
                        "else the model config's)")
    parser.add_argument("--max-tokens", type=int, default=4096)
    parser.add_argument("--resolution-tokens", type=int, default=2048)
    parser.add_argument("--batch-tokens", type=int, default=4096)
    add_run_options(parser, device=False)
    args = parser.parse_args(argv)
    start_run(args)
    context = args.context_length if args.context_length == "native" else int(args.context_length)
    run(args.name, json.loads(args.source), args.data, context, args.out, args.max_tokens,
        args.resolution_tokens, args.batch_tokens, extra=json.loads(args.extra))


if __name__ == "__main__":
    run_cli(main)
