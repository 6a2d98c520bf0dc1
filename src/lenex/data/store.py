"""The prepared-corpus format, written and read here only.

A prepared corpus is one directory::

    train.bin, valid.bin, test.bin   flat token ids (meta.json's ``dtype``; uint16 for
                                     prepare.py and mix.py), EOT after every document
    meta.json                        written last: tokenizer, vocab_size, eot_token, dtype,
                                     format_version, and per split its file, n_docs,
                                     n_tokens, doc_ids, doc_offsets, groups (+ extras)

``corpus_draft`` builds the whole directory in a temporary sibling and renames it into
place, so a corpus either is complete or does not exist. ``read_meta`` / ``check_corpus``
/ ``load_split`` read it back; a missing, truncated or inconsistent file is one error
naming the file and what is wrong. ``load_split`` (every reader of tokens) also compares
meta.json with its ``meta_sha256`` and the token file with its split's ``sha256`` (once per
process and file state), so a split overwritten in place at the same size, or a meta.json with
shifted offsets, is refused rather than scored; a corpus written before digests has none and is
read as before. A meta.json without ``format_version`` (written before the key existed) reads
as version 1; a newer version than ``FORMAT_VERSION`` is refused.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..digests import DigestMismatch, file_sha256, json_sha256
from ..files import atomic_write, atomic_write_text, read_json, replace_dir

SPLITS = ("train", "valid", "test")
DTYPE = np.uint16
META_FILE = "meta.json"
FORMAT_VERSION = 1
META_KEYS = ("tokenizer", "vocab_size", "dtype", "source", "splits")
SPLIT_KEYS = ("file", "n_docs", "n_tokens", "doc_offsets")  # what reading a split needs
META_DIGEST = "meta_sha256"  # meta.json's own digest (of the rest of it)
SPLIT_DIGEST = "sha256"  # a split entry's: its token file's bytes
_REBUILD = "delete the corpus folder and prepare it again (`snakemake --cores 2 <data dir>/meta.json`)"
_HOW_TO_BUILD = ("build it with `snakemake --cores 1 <data dir>/meta.json` (the prepare "
                 "rule) or `python -m lenex.data.prepare --out <data dir> ...`")


def meta_path(data_dir: str | os.PathLike) -> Path:
    return Path(data_dir) / META_FILE


def token_file(split: str) -> str:
    return f"{split}.bin"


def is_prepared(data_dir: str | os.PathLike) -> bool:
    """True when the directory's meta.json exists: it is written last, so it marks a
    complete corpus (its contents are checked by the readers)."""
    return meta_path(data_dir).is_file()


def read_meta(data_dir: str | os.PathLike, require: tuple[str, ...] = ()) -> dict:
    """meta.json of a prepared corpus, with its format version checked and the keys in
    ``require`` present; the token files are not looked at (see ``check_corpus``)."""
    path = meta_path(data_dir)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: {_HOW_TO_BUILD}")
    meta = read_json(path)
    if not isinstance(meta, dict):
        raise ValueError(f"{path} is not a JSON object; rebuild it")
    version = meta.get("format_version", 1)  # older corpora lack the key: version 1
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"{path}: format_version {version!r} is not a positive integer")
    if version > FORMAT_VERSION:
        raise ValueError(f"{path}: format_version {version} is newer than this lenex reads "
                         f"({FORMAT_VERSION}); update lenex or rebuild the corpus")
    for key in require:
        if key not in meta:
            raise KeyError(f"{path} has no {key!r} entry; rebuild it with lenex.data.prepare")
    return meta


def _checked_split(data_dir: Path, meta: dict, split: str, require: tuple[str, ...] = ()) -> dict:
    """meta.json's entry for ``split`` (with SPLIT_KEYS and ``require``), checked against
    its token file's size."""
    path = meta_path(data_dir)
    if split not in meta["splits"]:
        raise KeyError(f"split {split!r} not in {path}; have {sorted(meta['splits'])}")
    info = meta["splits"][split]
    for key in SPLIT_KEYS + require:
        if key not in info:
            raise KeyError(f"{path}: split {split!r} has no {key!r} entry")
    bin_path = data_dir / info["file"]
    if not bin_path.is_file():
        raise FileNotFoundError(f"{bin_path} not found (named by {path}): {_HOW_TO_BUILD}")
    itemsize = np.dtype(meta["dtype"]).itemsize
    size, expected = bin_path.stat().st_size, info["n_tokens"] * itemsize
    if size != expected:
        raise ValueError(f"{bin_path} is corrupt: {size} bytes, {path} says "
                         f"{info['n_tokens']} tokens x {itemsize} = {expected}; rebuild it")
    offsets = info["doc_offsets"]
    if len(offsets) != info["n_docs"] + 1 or offsets[-1] != info["n_tokens"]:
        raise ValueError(f"{path} is corrupt: doc_offsets of split {split!r} do not "
                         f"match n_docs / n_tokens")
    return info


def check_corpus(data_dir: str | os.PathLike) -> dict:
    """meta.json with every key a corpus card reads present (the groups of each split
    too) and every split consistent with its token file."""
    meta = read_meta(data_dir, require=META_KEYS)
    for split in meta["splits"]:
        _checked_split(Path(data_dir), meta, split, require=("groups",))
    return meta


@dataclass
class TokenSplit:
    tokens: np.ndarray       # read-only memmap of meta.json's dtype, EOT after every document
    doc_offsets: np.ndarray  # int64, n_docs + 1: doc i is tokens[o[i]:o[i+1]-1]
    meta: dict               # meta.json's entry for this split (plus "dataset": all of it)

    @property
    def n_docs(self) -> int:
        return len(self.doc_offsets) - 1

    def documents(self) -> Iterator[np.ndarray]:
        """Each document's tokens, without its trailing EOT."""
        for start, end in zip(self.doc_offsets[:-1], self.doc_offsets[1:]):
            yield self.tokens[start:end - 1]


def check_meta_digest(data_dir: str | os.PathLike, meta: dict) -> None:
    """meta.json's content is the content its ``meta_sha256`` was computed from (where it has one)."""
    recorded = meta.get(META_DIGEST)
    if recorded is not None and json_sha256({k: v for k, v in meta.items() if k != META_DIGEST}) != recorded:
        raise DigestMismatch(f"{meta_path(data_dir)} was changed after it was written (its content does not match "
                             f"its {META_DIGEST}): {_REBUILD}")


_verified: dict[tuple, str] = {}  # (path, size, mtime_ns, inode) -> digest already compared in this process


def check_split_digest(data_dir: Path, info: dict) -> None:
    """A split's token file holds the bytes meta.json's digest was computed from (where it has one).
    Hashed once per process and file state (an evaluator reading one split at several lengths)."""
    recorded = info.get(SPLIT_DIGEST)
    if recorded is None:
        return
    path = data_dir / info["file"]
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if _verified.get(key) == recorded:
        return
    if file_sha256(path) != recorded:
        raise DigestMismatch(f"{path} is not the file {meta_path(data_dir)} describes (same size, other content: "
                             f"its sha256 differs from the recorded {recorded[:12]}...): {_REBUILD}")
    _verified[key] = recorded


def load_split(data_dir: str | os.PathLike, split: str) -> TokenSplit:
    """One split of a prepared corpus, memory-mapped read-only, its meta.json and token file
    checked against their digests."""
    data_dir = Path(data_dir)
    dataset = read_meta(data_dir, require=("dtype", "splits"))
    check_meta_digest(data_dir, dataset)
    info = dict(_checked_split(data_dir, dataset, split), dataset=dataset)
    check_split_digest(data_dir, info)
    dtype = np.dtype(dataset["dtype"])
    if info["n_tokens"] == 0:  # np.memmap cannot map an empty file
        tokens = np.zeros(0, dtype=dtype)
        tokens.flags.writeable = False
    else:
        tokens = np.memmap(data_dir / info["file"], dtype=dtype, mode="r")
    offsets = np.asarray(info["doc_offsets"], dtype=np.int64)
    return TokenSplit(tokens=tokens, doc_offsets=offsets, meta=info)


def corpus_meta(tokenizer: str, vocab_size: int, eot_token: int, **fields) -> dict:
    """The head of a new meta.json (format version, tokenizer, dtype) followed by ``fields``
    in their order; ``fields`` should end with ``splits={}``, filled by ``write_split``."""
    return {"format_version": FORMAT_VERSION, "tokenizer": tokenizer, "vocab_size": vocab_size,
            "eot_token": eot_token, "dtype": np.dtype(DTYPE).name, **fields}


def write_token_file(directory: str | os.PathLike, split: str, tokens: np.ndarray) -> str:
    """``<directory>/<split>.bin`` (written atomically); returns its name for meta.json."""
    name = token_file(split)
    atomic_write(Path(directory) / name, lambda tmp: np.asarray(tokens).tofile(tmp))
    return name


def sealed_meta(directory: str | os.PathLike, meta: dict) -> dict:
    """``meta`` with each split's ``sha256`` (of its token file in ``directory``, hashed now: a meta
    derived from another corpus's keeps none of its digests) and, last, its own ``meta_sha256``."""
    body = {k: v for k, v in meta.items() if k != META_DIGEST}
    if isinstance(body.get("splits"), dict):
        body["splits"] = {name: {**{k: v for k, v in info.items() if k != SPLIT_DIGEST},
                                 SPLIT_DIGEST: file_sha256(Path(directory) / info["file"])}
                          for name, info in body["splits"].items()}
    return {**body, META_DIGEST: json_sha256(body)}


def write_meta(directory: str | os.PathLike, meta: dict) -> None:
    """``<directory>/meta.json`` (atomically) with its digests (``sealed_meta``); write it after
    the token files it describes."""
    atomic_write_text(meta_path(directory), json.dumps(sealed_meta(directory, meta), indent=1,
                                                       ensure_ascii=False) + "\n")


class CorpusDraft:
    """A corpus directory being written by ``corpus_draft``."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.meta_written = False

    def write_split(self, split: str, tokens: np.ndarray, doc_offsets: np.ndarray,
                    doc_ids: list[str], groups: list[str], **extra) -> dict:
        """Write ``tokens`` (DTYPE, EOT after every document) as the split's token file and
        return its meta.json entry: file, n_docs, n_tokens, doc_ids, doc_offsets, groups,
        then ``extra``."""
        if tokens.dtype != DTYPE:
            raise TypeError(f"split {split!r}: tokens are {tokens.dtype}, the format is {np.dtype(DTYPE)}")
        if len(doc_offsets) != len(doc_ids) + 1 or int(doc_offsets[-1]) != len(tokens):
            raise ValueError(f"split {split!r}: {len(doc_ids)} documents and {len(tokens)} tokens "
                             f"do not match {len(doc_offsets)} offsets ending at {int(doc_offsets[-1])}")
        return {"file": write_token_file(self.directory, split, tokens), "n_docs": len(doc_ids),
                "n_tokens": len(tokens), "doc_ids": list(doc_ids),
                "doc_offsets": np.asarray(doc_offsets, dtype=np.int64).tolist(),
                "groups": groups, **extra}

    def write_meta(self, meta: dict) -> None:
        write_meta(self.directory, meta)
        self.meta_written = True


@contextmanager
def corpus_draft(out: str | os.PathLike) -> Iterator[CorpusDraft]:
    """Build a corpus in a temporary sibling of ``out``; on success (meta.json written and
    consistent with the token files) it replaces ``out`` whole, on any error it is removed."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        draft = CorpusDraft(tmp)
        yield draft
        if not draft.meta_written:
            raise RuntimeError(f"{out}: the corpus was written without its {META_FILE}")
        check_corpus(tmp)
        replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
