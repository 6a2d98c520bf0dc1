"""Read the token files written by ``lenex.data.prepare``."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

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
    dataset = json.loads(meta_path.read_text())
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
