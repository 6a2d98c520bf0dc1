"""QMSum's stand-in: two-person chat conversations as speaker-tagged transcripts (lenex.data.chitchat),
from the PyPI wheel `chitchat-dataset`; ``min_speakers:`` drops conversations with fewer (default 2)."""
from __future__ import annotations

from . import SOURCES, PyPI


def read(wheel, spec):
    # Imported here, as every reader that is not a Debian stand-in's: building the DAG looks a
    # source up for what it fetches, and never reads.
    from ..chitchat import read_chitchat_wheel

    return read_chitchat_wheel(wheel, spec.get("min_speakers", 2))


SOURCE = SOURCES.register(PyPI(read, fetch="chitchat"), name="chitchat")
