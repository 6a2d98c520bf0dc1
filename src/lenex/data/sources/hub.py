"""The papers' real corpora (config/corpora-real.yaml), read with Hugging Face `datasets` by the
adapter ``corpus:`` names (lenex.data.hub.HUB_READERS), from the hub or a local ``path``."""
from __future__ import annotations

from . import SOURCES, Local


def read(spec, resources_dir):
    from ..hub import HUB_READERS  # here: building the DAG never reads (chitchat.py)

    return HUB_READERS[spec.get("corpus")](spec)  # an unknown corpus: one error naming the known ones


SOURCE = SOURCES.register(Local(read), name="hub")
