"""A training mixture built from corpora that are already prepared (split and tokenized).

LEX (4.1) trains on a weighted mix of Pile subsets. Offline, the mix is made of the
stand-ins' own splits: each component contributes whole documents of the same split,
drawn in a seeded order without repetition, until its share of the split's tokens
matches its weight. The budget is the largest one that needs no repetition (the
scarcest component, relative to its weight, is used whole), optionally capped.

Components keep their train/valid/test assignment, so a document that is in one
role's test split never enters the mix's train split.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from .store import (DTYPE, SPLITS, CorpusDraft, corpus_draft, corpus_meta, is_prepared, load_split,
                    meta_path, read_meta)

log = logging.getLogger(__name__)


def normalised_weights(weights: dict[str, float]) -> dict[str, float]:
    if not weights:
        raise ValueError("a mix needs at least one component")
    bad = {k: w for k, w in weights.items() if not w > 0}
    if bad:
        raise ValueError(f"mix weights must be positive: {bad}")
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def mix_budget(available: dict[str, int], shares: dict[str, float], cap: int | None = None) -> int:
    """Total tokens of the mix: the largest total at which no component runs out."""
    budget = min(available[k] / shares[k] for k in shares)
    return int(budget if cap is None else min(budget, cap))


def pick_documents(lengths: list[int], target: int, seed: int) -> list[int]:
    """Indices of documents, in a seeded order, until their lengths reach ``target``
    (the document that crosses the target is kept whole; at least one is taken)."""
    order = np.random.default_rng(seed).permutation(len(lengths))
    chosen, total = [], 0
    for i in order.tolist():
        if total >= target and chosen:
            break
        chosen.append(i)
        total += lengths[i]
    return chosen


def build_mix(spec: dict, data_root: str | os.PathLike, out: str | os.PathLike,
              seed: int = 1234, role: str = "mix") -> dict:
    """Write ``out`` (a corpus in lenex.data.store's format, like prepare.py's) from the components named in
    ``spec["components"]`` (role -> weight), read from ``data_root/<role>``."""
    shares = normalised_weights(spec.get("components") or {})
    data_root, out = Path(data_root), Path(out)
    metas = {}
    for name in shares:
        if not is_prepared(data_root / name):
            raise FileNotFoundError(f"{role}: component {name!r} is not prepared "
                                    f"({meta_path(data_root / name)} missing)")
        metas[name] = read_meta(data_root / name, require=("tokenizer", "vocab_size", "eot_token"))
    tokenizers = {m["tokenizer"] for m in metas.values()}
    if len(tokenizers) != 1:
        raise ValueError(f"{role}: components use different tokenizers {sorted(tokenizers)}")
    first = next(iter(metas.values()))

    meta = corpus_meta(first["tokenizer"], first["vocab_size"], first["eot_token"], seed=seed,
                       role=role, source={**spec, "weights": shares}, skipped={}, splits={})
    with corpus_draft(out) as draft:
        for split_index, split in enumerate(SPLITS):
            meta["splits"][split] = _mix_split(draft, split, data_root, shares, seed + split_index,
                                               spec.get("max_tokens", {}).get(split))
        draft.write_meta(meta)
    return meta


def _mix_split(draft: CorpusDraft, split: str, data_root: Path, shares: dict[str, float],
               seed: int, cap: int | None) -> dict:
    parts = {name: load_split(data_root / name, split) for name in shares}
    lengths = {name: np.diff(p.doc_offsets).tolist() for name, p in parts.items()}
    budget = mix_budget({n: sum(ls) for n, ls in lengths.items()}, shares, cap)
    pieces, doc_ids, groups, realised = [], [], set(), {}
    for k, name in enumerate(sorted(shares)):
        chosen = pick_documents(lengths[name], round(shares[name] * budget), seed * 1009 + k)
        offsets = parts[name].doc_offsets
        for i in chosen:  # each document with its trailing EOT, as prepare.py wrote it
            pieces.append(np.asarray(parts[name].tokens[offsets[i]:offsets[i + 1]]))
            doc_ids.append(f"{name}/{parts[name].meta['doc_ids'][i]}")
        groups |= {f"{name}/{g}" for g in parts[name].meta["groups"]}
        realised[name] = int(sum(lengths[name][i] for i in chosen))
    # Interleave components in a seeded order so no window sees one source only by position.
    order = np.random.default_rng(seed).permutation(len(pieces))
    pieces, doc_ids = [pieces[i] for i in order], [doc_ids[i] for i in order]
    flat = np.concatenate(pieces).astype(DTYPE) if pieces else np.empty(0, DTYPE)
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pieces])]).astype(np.int64)
    total = max(int(offsets[-1]), 1)
    log.info("%s: %d docs, %d tokens, shares %s", split, len(pieces), offsets[-1],
             {n: round(t / total, 3) for n, t in realised.items()})
    return draft.write_split(split, flat, offsets, doc_ids, sorted(groups), tokens_by_component=realised)
