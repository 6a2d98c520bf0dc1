"""Read the token files written by ``lenex.data.prepare``."""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ..files import read_json

_HOW_TO_BUILD = ("build it with `snakemake --cores 1 <data dir>/meta.json` (the prepare "
                 "rule) or `python -m lenex.data.prepare --out <data dir> ...`")


@dataclass
class TokenSplit:
    tokens: np.ndarray       # read-only uint16 memmap, EOT after every document
    doc_offsets: np.ndarray  # int64, n_docs + 1: doc i is tokens[o[i]:o[i+1]-1]
    meta: dict               # meta.json's entry for this split (plus "dataset": all of it)

    @property
    def n_docs(self) -> int:
        return len(self.doc_offsets) - 1

    def documents(self) -> Iterator[np.ndarray]:
        """Each document's tokens, without its trailing EOT."""
        for start, end in zip(self.doc_offsets[:-1], self.doc_offsets[1:]):
            yield self.tokens[start:end - 1]


def load_split(data_dir: str | os.PathLike, split: str) -> TokenSplit:
    data_dir = Path(data_dir)
    meta_path = data_dir / "meta.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"{meta_path} not found: {_HOW_TO_BUILD}")
    dataset = read_json(meta_path)
    if split not in dataset["splits"]:
        raise KeyError(f"split {split!r} not in {meta_path}; have {sorted(dataset['splits'])}")
    info = dict(dataset["splits"][split], dataset=dataset)
    bin_path = data_dir / info["file"]
    if not bin_path.is_file():
        raise FileNotFoundError(f"{bin_path} not found: {_HOW_TO_BUILD}")
    dtype = np.dtype(dataset["dtype"])
    expected = info["n_tokens"] * dtype.itemsize
    actual = bin_path.stat().st_size
    if actual != expected:
        raise ValueError(f"{bin_path} is corrupt: {actual} bytes, meta.json says "
                         f"{info['n_tokens']} tokens x {dtype.itemsize} = {expected}; rebuild it")
    offsets = np.asarray(info["doc_offsets"], dtype=np.int64)
    if len(offsets) != info["n_docs"] + 1 or (len(offsets) and offsets[-1] != info["n_tokens"]):
        raise ValueError(f"{meta_path}: doc_offsets of split {split!r} do not match n_tokens")
    if info["n_tokens"] == 0:  # np.memmap cannot map an empty file
        tokens = np.zeros(0, dtype=dtype)
        tokens.flags.writeable = False
    else:
        tokens = np.memmap(bin_path, dtype=dtype, mode="r")
    return TokenSplit(tokens=tokens, doc_offsets=offsets, meta=info)


@dataclass(frozen=True)
class DocumentPieces:
    """Result of ``document_pieces``.

    pieces:           (n_pieces, length) array of the split's dtype, in document order
    doc_index:        (n_pieces,) int64: the document (index into doc_offsets) of each piece
    discarded_tokens: tokens in no piece: every remainder plus every too-short document
    short_docs:       documents shorter than ``length`` (they give no piece at all)
    """
    pieces: np.ndarray
    doc_index: np.ndarray
    discarded_tokens: int
    short_docs: int


def document_pieces(split: TokenSplit, length: int, include_eot: bool = False) -> DocumentPieces:
    """The segmented-sequences evaluation rule (Karypis et al. 2023, section 4.5): one
    document per sequence, no packing; each document is cut from its start into
    non-overlapping pieces of ``length`` tokens and the remainder is discarded, so no
    piece crosses a document boundary. A document's trailing EOT counts as one of its
    tokens only with ``include_eot``."""
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise ValueError(f"piece length must be a positive integer, got {length!r}")
    starts = split.doc_offsets[:-1]
    ends = split.doc_offsets[1:] - (0 if include_eot else 1)
    n_per_doc = (ends - starts) // length
    chunks = [split.tokens[s:s + n * length].reshape(n, length)
              for s, n in zip(starts.tolist(), n_per_doc.tolist()) if n > 0]
    pieces = (np.concatenate(chunks) if chunks
              else np.zeros((0, length), dtype=split.tokens.dtype))
    return DocumentPieces(
        pieces=pieces,
        doc_index=np.repeat(np.arange(split.n_docs, dtype=np.int64), n_per_doc),
        discarded_tokens=int((ends - starts).sum() - n_per_doc.sum() * length),
        short_docs=int((n_per_doc == 0).sum()),
    )
