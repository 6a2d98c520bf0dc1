"""The papers' real corpora (config/corpora-real.yaml), read with Hugging Face `datasets` by the
adapter ``corpus:`` names (lenex.data.hub.HUB_READERS), from the hub or a local ``path``."""
from __future__ import annotations

from . import Local


def read(spec, resources_dir):
    from ..hub import HUB_READERS  # here: building the DAG never reads (chitchat.py)

    name = spec.get("corpus")
    if name not in HUB_READERS:
        raise ValueError(f"unknown hub corpus {name!r}; known: {sorted(HUB_READERS)}")
    return HUB_READERS[name](spec)


SOURCE = Local(read)
