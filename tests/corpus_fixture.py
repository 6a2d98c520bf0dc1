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


def scored_model(root, position="xpos", words_per_doc=700):
    """A corpus to score (make_corpus) and an untrained one-layer model of `position` (seed 0),
    saved at root/m.pt: (root, data)."""
    import torch

    from lenex.config import ModelConfig
    from lenex.model import LanguageModel
    from lenex.records.checkpoint import save_checkpoint

    data = make_corpus(root, n_docs=10, words_per_doc=words_per_doc)
    torch.manual_seed(0)
    model = LanguageModel(ModelConfig(n_layer=1, d_model=32, n_head=2, d_ff=64, train_length=32, position=position))
    save_checkpoint(root / "m.pt", model, step=0)
    return root, data
