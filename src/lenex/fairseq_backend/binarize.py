"""Write lenex's prepared token files as a fairseq data directory, once per corpus:
`python -m lenex.fairseq_backend.binarize --data results/<preset>/data/<role> --out DIR`.

fairseq reads `dict.txt` and, per split, an mmap indexed dataset (`<split>.bin` + `.idx`). The
dictionary lists lenex's token ids as the symbols "0" .. "V-1", so fairseq's id of a token is
lenex's id + 4 (its bos, pad, eos and unk come first); one dataset item per document, the
token stream unchanged, so `--sample-break-mode none` sees exactly lenex's concatenated split.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch

from ..cli import run_cli
from ..data.store import load_split, read_meta
from . import json_command, require_fairseq

SPLITS = ("train", "valid", "test")
N_SPECIAL = 4  # fairseq.data.Dictionary: <s>, <pad>, </s>, <unk>


def dictionary_lines(vocab_size: int) -> str:
    """dict.txt: one `symbol count` line per lenex token id, in id order."""
    return "".join(f"{token} 1\n" for token in range(vocab_size))


def fairseq_ids(tokens: np.ndarray) -> np.ndarray:
    return np.asarray(tokens, dtype=np.int64) + N_SPECIAL


def binarize(data_dir, out) -> dict:
    require_fairseq()
    from fairseq.data.indexed_dataset import MMapIndexedDatasetBuilder, best_fitting_int_dtype

    data_dir, out = Path(data_dir), Path(out)
    meta = read_meta(data_dir)
    vocab = int(meta["vocab_size"])
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "dict.txt").write_text(dictionary_lines(vocab))
    dtype = best_fitting_int_dtype(vocab + N_SPECIAL)
    summary = {"source": str(data_dir), "vocab_size": vocab, "n_special": N_SPECIAL, "splits": {}}
    for split in SPLITS:
        if split not in meta["splits"]:
            continue
        data = load_split(data_dir, split)
        builder = MMapIndexedDatasetBuilder(str(tmp / f"{split}.bin"), dtype=dtype)
        offsets = data.doc_offsets
        for start, end in zip(offsets[:-1], offsets[1:]):  # each document with its trailing EOT
            builder.add_item(torch.from_numpy(fairseq_ids(data.tokens[start:end])))
        builder.finalize(str(tmp / f"{split}.idx"))
        summary["splits"][split] = {"documents": int(data.meta["n_docs"]), "tokens": int(data.meta["n_tokens"])}
    (tmp / "lenex-source.json").write_text(json.dumps(summary, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)  # the directory appears whole or not at all
    return summary


main = json_command(__doc__.split("\n")[0], binarize, data="lenex prepared corpus directory (meta.json + .bin)",
                    out="fairseq data directory to write")

if __name__ == "__main__":
    run_cli(main)
