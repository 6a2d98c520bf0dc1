"""Re-tokenize a prepared corpus for a released model whose tokenizer is not GPT-2's
(Pythia: the GPT-NeoX BPE, Bloom: its 250k vocabulary), for the paper-scale runs:

    python -m lenex.segmented.retokenize --data results/paper/data/arxiv --tokenizer EleutherAI/pythia-1.4b --out DIR

GPT-2's byte-level BPE is lossless, so each document is decoded back to its exact text and
encoded again with the model's own tokenizer (transformers AutoTokenizer: the hub or its
cache). The output has the layout `lenex.data.store.load_split` reads (one .bin per split,
the model's end-of-text token after every document, meta.json), in uint32.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from tqdm import tqdm

from ..cli import run_cli
from ..data.store import load_split, read_meta, write_meta, write_token_file
from ..data.tokenizer import get_tokenizer
from ..hf.models import load_tokenizer

SPLITS = ("train", "valid", "test")


def retokenize(data_dir, tokenizer, out_dir, name: str, splits=SPLITS, eot_token: str | None = None) -> dict:
    """Write `out_dir` from `data_dir`; `tokenizer` is a transformers tokenizer. `eot_token`: the
    document separator (default the tokenizer's end-of-text token)."""
    source = read_meta(data_dir)
    if source["tokenizer"] != "gpt2":
        raise ValueError(f"{data_dir} is tokenized with {source['tokenizer']!r}; re-tokenizing reads GPT-2 tokens")
    gpt2, eot = get_tokenizer("gpt2"), tokenizer.eos_token_id
    if eot_token is not None:
        eot = tokenizer.convert_tokens_to_ids(eot_token)
        if eot is None or eot == tokenizer.unk_token_id and eot_token != tokenizer.unk_token:
            raise ValueError(f"tokenizer {name!r} has no token {eot_token!r}")
    if eot is None:
        raise ValueError(f"tokenizer {name!r} has no end-of-text token")
    meta = {k: v for k, v in source.items() if k != "splits"}
    meta.update(tokenizer=name, vocab_size=len(tokenizer), eot_token=int(eot), dtype="uint32",
                retokenized_from=str(data_dir), splits={})
    for split in splits:
        data = load_split(data_dir, split)
        ids = [tokenizer(gpt2.decode(doc), add_special_tokens=False)["input_ids"] + [eot]
               for doc in tqdm(data.documents(), total=data.n_docs, desc=f"retokenize {split}", mininterval=5)]
        offsets = np.concatenate([[0], np.cumsum([len(d) for d in ids])]).astype(np.int64)
        flat = np.fromiter((t for d in ids for t in d), dtype=np.uint32, count=int(offsets[-1]))
        write_token_file(out_dir, split, flat)
        meta["splits"][split] = {**{k: v for k, v in data.meta.items() if k not in ("dataset",)},
                                 "file": f"{split}.bin", "n_docs": data.n_docs, "n_tokens": int(offsets[-1]),
                                 "doc_offsets": offsets.tolist()}
    write_meta(out_dir, meta)
    return meta


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="prepared corpus directory (GPT-2 tokens)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--tokenizer", help="hub name of the model whose tokenizer to use")
    which.add_argument("--source", help="JSON entry of config/hf_models.yaml: {gguf: {package, file}} or {hub: name}")
    parser.add_argument("--splits", default=",".join(SPLITS), help="comma-separated splits to write")
    parser.add_argument("--eot-token", default=None, help="document separator (default: the tokenizer's EOS)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    source = json.loads(args.source) if args.source else {"hub": args.tokenizer}
    tokenizer = load_tokenizer(source)
    retokenize(args.data, tokenizer, args.out, args.tokenizer or json.dumps(source, sort_keys=True),
               args.splits.split(","), args.eot_token)


if __name__ == "__main__":
    run_cli(main)
