"""A small prepared corpus built inside the tests: synthetic documents of real English
words, split and tokenized by the real prepare step (no network)."""

import random

from lenex.data.prepare import prepare

WORDS = (
    "the king and queen of the realm spoke to their people in the hall while the wind "
    "blew over the hills and the rivers ran to the sea where ships sailed at dawn"
).split()


def make_corpus(root, n_docs=10, words_per_doc=900, seed=0):
    texts = root / "texts"
    texts.mkdir(parents=True)
    rng = random.Random(seed)
    for i in range(n_docs):
        words = [rng.choice(WORDS) for _ in range(words_per_doc)]
        (texts / f"book{i:02d}.txt").write_text(" ".join(words) + ".\n")
    out = root / "data"
    prepare({"source": "text_dir", "path": str(texts)}, root / "resources", out, seed=1, valid_fraction=0.2, test_fraction=0.2)
    return out
