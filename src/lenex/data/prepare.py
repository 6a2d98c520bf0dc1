"""Split a corpus by work group, tokenise it and write flat uint16 token files.

    python -m lenex.data.prepare --source-spec '{"source": "shakespeare"}' \
        --resources resources --out results/tiny/data/pg22 --tokenizer gpt2 --seed 1234

Output directory: ``train.bin``, ``valid.bin``, ``test.bin`` (uint16, EOT after every
document) and ``meta.json`` (written last), in the format of ``lenex.data.store``, which
builds it in a temporary sibling directory and renames it into place, so ``out`` either
is complete or does not exist.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from ..cli import run_cli
from .corpus import fetched_record, read_corpus
from .documents import Document
from .mix import build_mix
from .store import DTYPE, SPLITS, CorpusDraft, corpus_draft, corpus_meta
from .tokenizer import get_tokenizer

log = logging.getLogger(__name__)


def split_groups(groups: list[str], seed: int, valid_fraction: float,
                 test_fraction: float) -> dict[str, list[str]]:
    """Deterministic group -> split assignment: shuffle the *sorted* keys with
    ``random.Random(seed)`` (so input order never matters), take test, then valid, then
    train. A positive fraction always gets at least one group; train keeps at least one."""
    order = sorted(set(groups))
    random.Random(seed).shuffle(order)
    n = len(order)
    n_test = max(1, round(n * test_fraction)) if test_fraction > 0 else 0
    n_valid = max(1, round(n * valid_fraction)) if valid_fraction > 0 else 0
    if n_test + n_valid >= n:
        raise ValueError(f"{n} groups cannot fill test ({n_test}) and valid ({n_valid}) "
                         "and still leave one for train; lower the fractions")
    return {"test": order[:n_test], "valid": order[n_test:n_test + n_valid],
            "train": order[n_test + n_valid:]}


def _grow_test(assign: dict[str, list[str]], tokens_per_group: dict[str, int],
               min_test_tokens: int) -> None:
    """Move train groups (in their shuffled order) to test until test is long enough
    to hold the longest evaluation sequence."""
    have = sum(tokens_per_group[g] for g in assign["test"])
    while have < min_test_tokens:
        if len(assign["train"]) <= 1:
            raise ValueError(f"corpus too small: test has {have} tokens < "
                             f"--min-test-tokens {min_test_tokens}")
        group = assign["train"].pop(0)
        assign["test"].append(group)
        have += tokens_per_group[group]


def source_record(spec: dict, resources_dir: str | os.PathLike) -> dict:
    """The spec plus what was fetched (package, version, sha256...) when the source has it."""
    record = dict(spec)
    fetched = fetched_record(spec, resources_dir)
    if fetched is not None:
        record["fetched"] = fetched
    return record


def _write_split(draft: CorpusDraft, split: str, docs: list[Document],
                 token_lists: list[list[int]], eot: int) -> dict:
    lengths = np.array([len(t) + 1 for t in token_lists], dtype=np.int64)  # +1: EOT
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = np.empty(int(offsets[-1]), dtype=DTYPE)
    for start, ids in zip(offsets[:-1], token_lists):
        flat[start:start + len(ids)] = ids
        flat[start + len(ids)] = eot
    info = draft.write_split(split, flat, offsets, [d.doc_id for d in docs],
                             sorted({d.group for d in docs}),
                             non_utf8_doc_ids=[d.doc_id for d in docs if d.encoding != "utf-8"])
    log.info("%s: %d groups, %d docs, %d tokens", split, len(info["groups"]),
             info["n_docs"], info["n_tokens"])
    return info


def drop_short(docs: list[Document], token_lists: list[list[int]], min_tokens: int
               ) -> tuple[list[Document], list[list[int]], dict]:
    """Documents shorter than ``min_tokens`` (the shortest evaluation length) cannot fill
    one evaluation window on their own: skip them and count them, never use them silently."""
    keep = [i for i, ids in enumerate(token_lists) if len(ids) >= min_tokens]
    dropped = sorted(set(range(len(docs))) - set(keep))
    record = {"count": len(dropped), "min_tokens": int(min_tokens),
              "doc_ids": [docs[i].doc_id for i in dropped]}
    if dropped:
        log.warning("skipped %d documents shorter than %d tokens", len(dropped), min_tokens)
    return [docs[i] for i in keep], [token_lists[i] for i in keep], record


def prepare(spec: dict, resources_dir: str | os.PathLike, out: str | os.PathLike,
            tokenizer: str = "gpt2", seed: int = 1234, valid_fraction: float = 0.1,
            test_fraction: float = 0.1, min_test_tokens: int = 0, min_doc_tokens: int = 1,
            role: str = "corpus") -> dict:
    """Build ``out`` (see module docstring) and return its meta.json contents."""
    out = Path(out)
    source = source_record(spec, resources_dir)  # first: a package not at its pin stops it here
    tok = get_tokenizer(tokenizer)
    if tok.vocab_size > np.iinfo(DTYPE).max + 1:
        raise ValueError(f"tokenizer {tok.name!r} has {tok.vocab_size} ids; uint16 holds 65536")
    docs = sorted(read_corpus(spec, resources_dir), key=lambda d: d.doc_id)
    if not docs:
        raise ValueError(f"{role}: the {spec.get('source')!r} source gave no documents")

    batch = 8  # small batches only so that tqdm can show progress on big corpora
    token_lists: list[list[int]] = []
    for i in tqdm(range(0, len(docs), batch), desc=f"tokenize {role}", unit="batch", file=sys.stderr):
        token_lists.extend(tok.encode_batch([d.text for d in docs[i:i + batch]]))
    # Splits are assigned over every document's group *before* short ones are dropped, so
    # the assignment does not depend on the tokenizer (a BPE trained on the train split by
    # lenex.data.bpe sees exactly the groups that land in train here).
    tokens_per_group: dict[str, int] = {}
    for d, ids in zip(docs, token_lists):
        tokens_per_group[d.group] = tokens_per_group.get(d.group, 0) + len(ids) + 1
    assign = split_groups(list(tokens_per_group), seed, valid_fraction, test_fraction)
    initial_train = set(assign["train"])
    _grow_test(assign, tokens_per_group, min_test_tokens)
    moved_to_test = sorted(initial_train - set(assign["train"]))  # tokenizer-dependent: recorded
    split_of = {g: s for s, gs in assign.items() for g in gs}
    docs, token_lists, too_short = drop_short(docs, token_lists, min_doc_tokens)
    if not docs:
        raise ValueError(f"{role}: every document is shorter than {min_doc_tokens} tokens")

    meta = corpus_meta(
        tok.name, tok.vocab_size, tok.eot_token, seed=seed, valid_fraction=valid_fraction,
        test_fraction=test_fraction, min_test_tokens=min_test_tokens, role=role,
        source=source, skipped={"too_short": too_short},
        moved_to_test=moved_to_test, splits={})
    with corpus_draft(out) as draft:
        for split in SPLITS:
            idx = [i for i, d in enumerate(docs) if split_of[d.group] == split]
            meta["splits"][split] = _write_split(
                draft, split, [docs[i] for i in idx], [token_lists[i] for i in idx], tok.eot_token)
        draft.write_meta(meta)  # last: its presence marks the directory as complete
    return meta


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Split, tokenise and write a corpus.")
    ap.add_argument("--source-spec", required=True, help="JSON corpus spec, e.g. "
                    '\'{"source": "shakespeare"}\' (a `corpora:` entry of the config)')
    ap.add_argument("--resources", default="resources")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tokenizer", default="gpt2")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--valid-fraction", type=float, default=0.1)
    ap.add_argument("--test-fraction", type=float, default=0.1)
    ap.add_argument("--min-test-tokens", type=int, default=0)
    ap.add_argument("--min-doc-tokens", type=int, default=1,
                    help="skip (and count) documents shorter than this: the shortest evaluation length")
    ap.add_argument("--role", default="corpus", help="corpus role name, for messages and the card")
    ap.add_argument("--data-root", default=None,
                    help="folder of prepared corpora (a `mix` source reads its components there)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    spec = json.loads(args.source_spec)
    if spec.get("source") == "mix":
        if args.data_root is None:
            raise ValueError("a `mix` corpus needs --data-root (where its components are prepared)")
        build_mix(spec, args.data_root, args.out, seed=args.seed, role=args.role)
        return
    prepare(spec, args.resources, args.out, args.tokenizer, args.seed, args.valid_fraction,
            args.test_fraction, args.min_test_tokens, args.min_doc_tokens, args.role)


if __name__ == "__main__":
    run_cli(main)
