"""A byte-level BPE trained on a corpus's *training* split (Hugging Face ``tokenizers``).

Small CPU models spend most of their parameters and time in GPT-2's 50257-wide output
layer; a 4k-8k vocabulary trained on the corpus itself removes that cost.

    python -m lenex.data.bpe --source-spec '{"source": "shakespeare"}' --resources resources \
        --seed 1234 --valid-fraction 0.1 --test-fraction 0.1 --vocab-size 8192 \
        --out results/tiny/tokenizer/pg22-bpe8192.json

then ``python -m lenex.data.prepare ... --tokenizer bpe:<that file>``. The split is the
one ``prepare`` makes (``split_groups`` with the same seed and fractions), so valid and
test documents are never seen by the tokenizer.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from ..cli import run_cli
from ..files import atomic_write_text
from .corpus import read_corpus
from .documents import Document
from .prepare import split_groups

log = logging.getLogger(__name__)

EOT = "<|endoftext|>"
# 256 byte symbols + EOT is the smallest vocabulary that can encode every text;
# uint16 token files cap it at 65536.
MIN_VOCAB = 257
MAX_VOCAB = 65536


def train_bpe(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    """Byte-level BPE (GPT-2's pre-tokenisation regex, no prefix space) with
    ``<|endoftext|>`` as its only special token (id 0). Deterministic: the trainer
    breaks count ties by token ids, never by hash order, so the same texts and size
    give the same JSON (tested across processes)."""
    if not MIN_VOCAB <= vocab_size <= MAX_VOCAB:
        raise ValueError(f"BPE vocab size {vocab_size} out of range [{MIN_VOCAB}, {MAX_VOCAB}] "
                         "(256 bytes + EOT at least; uint16 token files hold 65536 ids)")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOT],
        # every byte is in the alphabet even if the corpus never uses it: no unknowns
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    got = tok.get_vocab_size(with_added_tokens=True)
    if got < vocab_size:
        log.warning("corpus too small for %d tokens: BPE stopped at %d", vocab_size, got)
    return tok


def train_documents(docs: list[Document], seed: int, valid_fraction: float,
                    test_fraction: float) -> list[Document]:
    """The documents ``prepare`` puts in train (same group split, same arguments)."""
    assign = split_groups([d.group for d in docs], seed, valid_fraction, test_fraction)
    train = set(assign["train"])
    return sorted((d for d in docs if d.group in train), key=lambda d: d.doc_id)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Train a byte-level BPE on a corpus's train split.")
    ap.add_argument("--source-spec", required=True, help="JSON corpus spec (a `corpora:` entry)")
    ap.add_argument("--resources", default="resources")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--valid-fraction", type=float, default=0.1)
    ap.add_argument("--test-fraction", type=float, default=0.1)
    ap.add_argument("--vocab-size", type=int, required=True)
    ap.add_argument("--out", required=True, help="tokenizer JSON to write")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        spec = json.loads(args.source_spec)
    except json.JSONDecodeError as e:
        raise ValueError(f"--source-spec is not valid JSON: {e}") from None
    docs = train_documents(read_corpus(spec, args.resources), args.seed,
                           args.valid_fraction, args.test_fraction)
    n_chars = sum(len(d.text) for d in docs)
    log.info("training BPE (vocab %d) on %d train documents, %d characters",
             args.vocab_size, len(docs), n_chars)
    start = time.perf_counter()
    tok = train_bpe((d.text for d in docs), args.vocab_size)
    log.info("trained in %.1f s: %d tokens", time.perf_counter() - start,
             tok.get_vocab_size(with_added_tokens=True))
    atomic_write_text(args.out, tok.to_str(pretty=False))


if __name__ == "__main__":
    run_cli(main)
